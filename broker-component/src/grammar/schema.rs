//! The JSON Schema of a grammar: what the check enforces, for clients and models to read.

use alloc::collections::{BTreeMap, BTreeSet};
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use equinix_broker_contract::VALUES_FROM;
use serde_json::{Map, Value, json};

use super::kinds::{Kind, Object, Text};

/// The JSON Schema of `kind`, described by `doc`, with every object inline.
pub fn schema(kind: &Kind, doc: &str) -> Value {
    Schemas::default().of(kind, doc)
}

/// The JSON Schemas of several kinds that share objects: a named object reached from more than
/// one place (a create spec's link protocol, notification, ...) is written once under `$defs`
/// and referred to by `$ref`; an object reached once stays inline, where a reader looks for it.
pub(crate) fn schemas_sharing(kinds: &[(&Kind, &str)]) -> (Vec<Value>, Map<String, Value>) {
    let mut uses = BTreeMap::new();
    for (kind, _) in kinds {
        count_uses(kind, &mut uses);
    }
    let mut schemas =
        Schemas { shared: uses.into_iter().filter(|(_, n)| *n > 1).map(|(k, _)| k).collect(), defs: Map::new() };
    let out = kinds.iter().map(|(kind, doc)| schemas.of(kind, doc)).collect();
    (out, schemas.defs)
}

/// How often each named object is referred to, counting an object's own fields once.
fn count_uses(kind: &Kind, uses: &mut BTreeMap<&'static str, usize>) {
    match kind {
        Kind::Obj(o) if !o.name.is_empty() => {
            let n = uses.entry(o.name).or_insert(0);
            *n += 1;
            if *n == 1 {
                o.fields.iter().for_each(|f| count_uses(&f.kind, uses));
            }
        }
        Kind::Obj(o) => o.fields.iter().for_each(|f| count_uses(&f.kind, uses)),
        Kind::Array { item, .. } => count_uses(item, uses),
        _ => {}
    }
}

#[derive(Default)]
struct Schemas {
    shared: BTreeSet<&'static str>,
    defs: Map<String, Value>,
}

impl Schemas {
    fn of(&mut self, kind: &Kind, doc: &str) -> Value {
        if let Kind::Obj(o) = kind
            && self.shared.contains(o.name)
        {
            if !self.defs.contains_key(o.name) {
                self.defs.insert(o.name.into(), Value::Null);
                let body = self.object(o);
                self.defs.insert(o.name.into(), body);
            }
            let mut r = json!({"$ref": format!("#/$defs/{}", o.name)});
            if !doc.is_empty() {
                r["description"] = json!(doc);
            }
            return r;
        }
        let mut s = match kind {
            Kind::Str { min, max, text } => {
                let mut s = json!({"type": "string"});
                match text {
                    Text::Uuid => s["format"] = json!("uuid"),
                    Text::MetroCode => s["pattern"] = json!("^[A-Z0-9]{2,4}$"),
                    Text::Email => s["format"] = json!("email"),
                    Text::DateTime => s["format"] = json!("date-time"),
                    Text::Any => {
                        if *min > 1 {
                            s["minLength"] = json!(min);
                        }
                        if *max != usize::MAX {
                            s["maxLength"] = json!(max);
                        }
                    }
                }
                s
            }
            Kind::Int { min, max, only: None } if *max == i64::MAX => json!({"type": "integer", "minimum": min}),
            Kind::Int { min, max, only: None } => json!({"type": "integer", "minimum": min, "maximum": max}),
            Kind::Int { only: Some(only), .. } => json!({"enum": only}),
            Kind::Bool => json!({"type": "boolean"}),
            Kind::Enum(allowed) => json!({"enum": allowed}),
            Kind::Array { item, min, max } => {
                let mut a = json!({"type": "array", "items": self.of(item, "")});
                if *min > 0 {
                    a["minItems"] = json!(min);
                }
                a["maxItems"] = json!(max);
                a
            }
            Kind::AnyObject => json!({"type": "object"}),
            Kind::Obj(object) => self.object(object),
        };
        let doc = match (kind, s.get("description").and_then(Value::as_str)) {
            (_, _) if doc.is_empty() => return s,
            (Kind::Obj(_), Some(rule)) if doc.ends_with('.') => format!("{doc} {rule}"),
            (Kind::Obj(_), Some(rule)) => format!("{doc}. {rule}"),
            _ => doc.to_string(),
        };
        s["description"] = json!(doc);
        s
    }

    /// Unknown members are refused by the check at every depth; the schema says so only at the
    /// root (the tool's arguments), which keeps a create spec's schema within a model's budget.
    fn object(&mut self, object: &Object) -> Value {
        let mut properties = Map::new();
        let mut required = Vec::new();
        for f in object.fields {
            let mut p = self.of(&f.kind, &f.description());
            if let Some(tool) = f.values_listed_by() {
                p[VALUES_FROM] = json!(tool);
            }
            if let Some(d) = f.default.and_then(|d| serde_json::from_str::<Value>(d).ok()) {
                p["default"] = d;
            }
            properties.insert(f.name.into(), p);
            if f.required {
                required.push(f.name);
            }
        }
        let mut s = json!({"type": "object", "properties": properties});
        if !required.is_empty() {
            s["required"] = json!(required);
        }
        if !object.rule_doc.is_empty() {
            s["description"] = json!(object.rule_doc);
        }
        s
    }
}
