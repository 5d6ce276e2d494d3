//! Where valid values come from: the `x-values-from` keyword a component's input schema may give
//! a property (see `wit/broker.wit`, `tools.tool.input-schema`). The registry checks that each
//! names a tool of the catalog, reads it for the next step of a call its schema check refuses,
//! and serves the schema without it.

use rmcp::model::JsonObject;
use serde_json::Value;

use equinix_broker_contract::VALUES_FROM;

/// The deepest tool an `x-values-from` names along `path` in `root` (following `$ref` into
/// `$defs`, array items, and `allOf` branches' `then`).
pub(crate) fn tool_for_path(root: &Value, path: &str) -> Option<String> {
    fn resolve<'a>(root: &'a Value, node: &'a Value) -> &'a Value {
        let mut node = node;
        for _ in 0..8 {
            let Some(r) = node.get("$ref").and_then(Value::as_str).and_then(|r| r.strip_prefix("#/$defs/")) else {
                break;
            };
            match root.get("$defs").and_then(|d| d.get(r)) {
                Some(next) => node = next,
                None => break,
            }
        }
        node
    }
    fn named(node: &Value) -> Option<String> {
        node.get(VALUES_FROM)?.as_str().map(String::from)
    }
    let mut node: &Value = root;
    let mut found = None;
    for segment in path.split('/').skip(1).filter(|s| !s.is_empty()) {
        let key = segment.replace("~1", "/").replace("~0", "~");
        let here = resolve(root, node);
        let branches = here.get("allOf").and_then(Value::as_array).into_iter().flatten();
        // a conditional branch (the propose tool's spec per change type) says more than the
        // plain property it refines
        let next = branches
            .filter_map(|b| b.pointer("/then/properties")?.get(&key))
            .next()
            .or_else(|| here.get("properties").and_then(|p| p.get(&key)))
            .or_else(|| key.parse::<usize>().ok().and(here.get("items")));
        let Some(next) = next else { break };
        found = named(next).or(found);
        node = next;
        found = named(resolve(root, node)).or(found);
    }
    found
}

/// Every `x-values-from` a schema carries (values under `enum`, `const`, `default` and
/// `examples` are data, not schemas).
pub(crate) fn hints(schema: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![schema];
    while let Some(v) = stack.pop() {
        match v {
            Value::Object(m) => {
                if let Some(Value::String(tool)) = m.get(VALUES_FROM) {
                    out.push(tool.clone());
                }
                stack.extend(m.iter().filter(|(k, _)| !DATA_KEYWORDS.contains(&k.as_str())).map(|(_, v)| v));
            }
            Value::Array(items) => stack.extend(items),
            _ => {}
        }
    }
    out
}

/// Keywords whose values are data, not schemas.
const DATA_KEYWORDS: [&str; 4] = ["enum", "const", "default", "examples"];

/// `schema` as clients see it: the `x-values-from` hints are for this registry's next steps, and
/// leaving them out keeps `tools/list` within a model's budget. Values (`enum`, `const`,
/// `default`, `examples`) are data, not schemas, and are left as they are.
pub(crate) fn without_hints(schema: JsonObject) -> JsonObject {
    fn strip(v: &mut Value) {
        match v {
            Value::Object(m) => {
                if m.get(VALUES_FROM).is_some_and(Value::is_string) {
                    m.remove(VALUES_FROM);
                }
                for (key, child) in m.iter_mut() {
                    if !DATA_KEYWORDS.contains(&key.as_str()) {
                        strip(child);
                    }
                }
            }
            Value::Array(items) => items.iter_mut().for_each(strip),
            _ => {}
        }
    }
    let mut root = Value::Object(schema);
    strip(&mut root);
    match root {
        Value::Object(m) => m,
        _ => unreachable!("an object stays an object"),
    }
}
