//! The tool registry: the component's catalog, checked once at start-up, filtered by the
//! operator's toolsets, with a compiled argument validator per served tool. `tools/list`,
//! `tools/call` and `equinix-mcp tools` all read this one table.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use rmcp::model::{Tool, ToolAnnotations};
use serde_json::Value;

use super::hints::{hints, tool_for_path, without_hints};
use super::toolsets::Selection;
use crate::component::ToolDecl;
use crate::oauth::Scope;
use equinix_broker_contract::{MUTATE_TOOLSET, QUOTE_CHARS, clip};

const MAX_TOOLS: usize = 256;
const MAX_SCHEMA_BYTES: usize = 64 << 10;
const MAX_DESCRIPTION_BYTES: usize = 8 << 10;

pub struct RegisteredTool {
    pub(crate) decl: ToolDecl,
    /// The grant a principal's token must hold to call it.
    pub scope: Scope,
    /// The tool as clients see it (its schema without the host's `x-values-from` hints).
    pub tool: Tool,
    /// The input schema as the component declared it, hints included.
    /// The input schema as declared (an object).
    schema: Value,
    validator: jsonschema::Validator,
    /// Checks successful results' structured content, when the component states an output schema.
    output: Option<jsonschema::Validator>,
}

/// The served tools, in catalog order.
pub struct ToolRegistry {
    served: Vec<RegisteredTool>,
    index: HashMap<String, usize>,
    enabled_toolsets: BTreeSet<String>,
}

/// An argument problem, named by JSON pointer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArgumentError {
    pub path: String,
    pub message: String,
}

/// Initialises the JSON-Schema library (its meta-schemas and regex engine; docs/engineering-log.md, "Warm
/// start") so that checking the catalog at start-up does not pay for it; run on a spare thread
/// while the component loads.
pub(crate) fn warm_up() {
    let schema = serde_json::json!({"type": "object", "properties": {
        "id": {"type": "string", "pattern": "^[0-9a-f-]{36}$"}, "n": {"type": "integer", "maximum": 1}},
        "additionalProperties": false});
    let _ = jsonschema::options().with_draft(jsonschema::Draft::Draft7).build(&schema);
    let _ = jsonschema::draft7::meta::is_valid(&schema);
}

/// Why a catalog is refused. Every variant but [`CatalogError::Selection`] is the component's
/// fault; that one is the operator's.
#[derive(Debug, thiserror::Error)]
pub enum CatalogError {
    #[error("the component declares {0} tools; at most {MAX_TOOLS} are accepted")]
    TooManyTools(usize),
    #[error("the component declares tool {0:?} twice")]
    Twice(String),
    #[error("tool {tool:?} is invalid: {problem}")]
    Row { tool: String, problem: RowProblem },
    /// The operator's `--toolsets` names a toolset the catalog does not have.
    #[error(transparent)]
    Selection(#[from] crate::mcp::toolsets::UnknownToolset),
}

/// What is wrong with one catalog row.
#[derive(Debug, thiserror::Error)]
pub enum RowProblem {
    #[error("a tool name must be 1-128 characters of A-Z a-z 0-9 _ . -")]
    Name,
    #[error("toolset {0:?} must be 1-32 characters of a-z 0-9 _ and not all/default")]
    Toolset(String),
    #[error("read-only tools must not be in the `mutate` toolset, and every other tool must be")]
    ReadOnlyOutsideMutate,
    #[error("the description must be 1-{MAX_DESCRIPTION_BYTES} bytes")]
    Description,
    #[error("the title must be 1-128 bytes")]
    Title,
    #[error("the {part} {problem}")]
    Schema { part: SchemaPart, problem: SchemaProblem },
    /// Quoted and clipped: the name is the component's text.
    #[error(
        "its schema names {0:?} as the tool listing valid values (x-values-from), and the catalog has no such tool"
    )]
    UnknownHint(String),
}

/// Which of a row's schemas.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SchemaPart {
    Input,
    Output,
}

impl std::fmt::Display for SchemaPart {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            SchemaPart::Input => "input schema",
            SchemaPart::Output => "output schema",
        })
    }
}

/// What is wrong with a schema.
#[derive(Debug, thiserror::Error)]
pub enum SchemaProblem {
    #[error("exceeds {MAX_SCHEMA_BYTES} bytes")]
    TooLarge,
    #[error("is not JSON: {0}")]
    NotJson(String),
    #[error("is not a JSON object")]
    NotAnObject,
    #[error("must have \"type\": \"object\" at its root")]
    RootNotObject,
    /// Its meta-schema's verdict, or what the compile found.
    #[error("is not a valid JSON Schema: {0}")]
    Invalid(String),
}

impl ToolRegistry {
    /// Checks the whole catalog (a bad row refuses the component) and keeps the selected tools.
    pub fn build(catalog: Vec<ToolDecl>, selection: &Selection) -> Result<Self, CatalogError> {
        if catalog.len() > MAX_TOOLS {
            return Err(CatalogError::TooManyTools(catalog.len()));
        }
        let invalid = |decl: &ToolDecl, problem| CatalogError::Row { tool: decl.name.clone(), problem };
        let mut seen = BTreeSet::new();
        let mut checked = Vec::new();
        let rows = in_two_halves(&catalog, check_decl);
        for (decl, row) in catalog.into_iter().zip(rows) {
            let row = row.map_err(|problem| invalid(&decl, problem))?;
            if !seen.insert(decl.name.clone()) {
                return Err(CatalogError::Twice(decl.name));
            }
            checked.push((decl, row));
        }
        // a hint names a tool of this catalog (served or not), so a next step never sends the
        // model to a tool that does not exist, and no component text reaches it unchecked
        let names: BTreeSet<&str> = checked.iter().map(|(decl, _)| decl.name.as_str()).collect();
        for (decl, row) in &checked {
            if let Some(hint) = hints(&row.input).into_iter().find(|h| !names.contains(h.as_str())) {
                return Err(invalid(decl, RowProblem::UnknownHint(clip(&hint, 128))));
            }
        }
        let all_toolsets: BTreeSet<String> = checked.iter().map(|(decl, _)| decl.toolset.clone()).collect();
        let enabled = selection.resolve(&all_toolsets).map_err(CatalogError::Selection)?;
        // Only a served tool's schemas are compiled (a tool not served is never called): every
        // row's schemas were checked against their draft's meta-schema above, and what only a
        // compile finds (a `$ref` to nowhere) refuses the component when its tool is served.
        let mut served = Vec::new();
        let checked: Vec<_> = checked.into_iter().filter(|(decl, _)| enabled.contains(&decl.toolset)).collect();
        let compiled = in_two_halves(&checked, |(_, row)| row.compile());
        for ((decl, row), compiled) in checked.into_iter().zip(compiled) {
            let compiled = compiled.map_err(|problem| invalid(&decl, problem))?;
            let scope = Scope::of_tool(&decl.name, &decl.toolset);
            served.push(RegisteredTool {
                decl,
                scope,
                tool: row.tool,
                schema: row.input,
                validator: compiled.0,
                output: compiled.1,
            });
        }
        let index = served.iter().enumerate().map(|(i, t)| (t.decl.name.clone(), i)).collect();
        Ok(ToolRegistry { served, index, enabled_toolsets: enabled })
    }

    pub(crate) fn tools(&self) -> impl Iterator<Item = &RegisteredTool> {
        self.served.iter()
    }

    pub fn get(&self, name: &str) -> Option<&RegisteredTool> {
        self.index.get(name).map(|i| &self.served[*i])
    }

    pub(crate) fn enabled_toolsets(&self) -> &BTreeSet<String> {
        &self.enabled_toolsets
    }

    /// The grant a call of `name` needs: its row's, or for a name not served what the broker's
    /// tool of that name would need (a token is refused for its scope before it learns the tool
    /// is not served).
    pub(crate) fn scope_of(&self, name: &str) -> Scope {
        self.get(name).map_or_else(|| Scope::of_tool(name, MUTATE_TOOLSET), |t| t.scope)
    }
}

impl RegisteredTool {
    /// Every schema violation of `arguments`, each with its JSON pointer.
    pub fn check_arguments(&self, arguments: &Value) -> Result<(), Vec<ArgumentError>> {
        let errors: Vec<ArgumentError> = self
            .validator
            .iter_errors(arguments)
            .take(10)
            .map(|e| {
                let mut path = e.instance_path().to_string();
                let mut message = e.to_string();
                // a missing argument is named at its own path (where the next step's hint and
                // its allowed values are), not at the object that lacks it
                if let jsonschema::error::ValidationErrorKind::Required { property: Value::String(name) } = e.kind() {
                    path = format!("{path}/{}", name.replace('~', "~0").replace('/', "~1"));
                    if path.matches('/').count() == 1
                        && let Some(Value::Array(values)) =
                            self.schema.get("properties").and_then(|p| p.pointer(&format!("/{name}/enum")))
                    {
                        let values: Vec<String> =
                            values.iter().map(|v| v.as_str().map_or_else(|| v.to_string(), String::from)).collect();
                        message = format!("{message}: one of {}", values.join(", "));
                    }
                }
                let path = clip(&path, QUOTE_CHARS);
                ArgumentError {
                    path: if path.is_empty() { "/".into() } else { path },
                    message: clip(&message, QUOTE_CHARS),
                }
            })
            .collect();
        if errors.is_empty() { Ok(()) } else { Err(errors) }
    }

    /// What to do about `errors`: fix them all, and for each path whose schema (or an enclosing
    /// one) names a read tool with `x-values-from`, that tool as where valid values come from.
    /// The host reads this from the schema, so it holds for any component.
    pub(crate) fn next_step(&self, errors: &[ArgumentError]) -> String {
        let named: Vec<(&str, String)> =
            errors.iter().filter_map(|e| Some((e.path.as_str(), tool_for_path(&self.schema, &e.path)?))).collect();
        equinix_broker_contract::next_step(named.iter().map(|(path, tool)| (*path, tool.as_str())))
    }

    /// Whether a successful result fits the tool's output schema (the first problem if not).
    pub(crate) fn check_output(&self, result: &Value) -> Result<(), String> {
        match self.output.as_ref().and_then(|v| v.iter_errors(result).next()) {
            None => Ok(()),
            Some(e) => Err(clip(&format!("{} at {}", e, e.instance_path()), QUOTE_CHARS)),
        }
    }
}

/// `f` of each of `items`, in their order, the second half worked on another thread: checking and
/// compiling the catalog's schemas is most of a start's work after the component's load, and a
/// machine with two cores does it in about half the time. The results are taken in the catalog's
/// order, so the row named when several are wrong is the one it was before.
fn in_two_halves<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let (first, second) = items.split_at(items.len() / 2);
    std::thread::scope(|scope| {
        let later = scope.spawn(|| second.iter().map(&f).collect::<Vec<R>>());
        let mut results: Vec<R> = first.iter().map(&f).collect();
        // a panic on the other thread is this thread's: the catalog is not half checked
        results.extend(later.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)));
        results
    })
}

/// A schema of the catalog: a JSON object whose root is `"type": "object"`, read as draft 7
/// unless it names its draft, and valid under its draft's meta-schema.
fn object_schema(text: &str, part: SchemaPart) -> Result<Value, RowProblem> {
    let wrong = |problem| RowProblem::Schema { part, problem };
    if text.len() > MAX_SCHEMA_BYTES {
        return Err(wrong(SchemaProblem::TooLarge));
    }
    let schema: Value = serde_json::from_str(text).map_err(|e| wrong(SchemaProblem::NotJson(e.to_string())))?;
    let Value::Object(obj) = schema else {
        return Err(wrong(SchemaProblem::NotAnObject));
    };
    if obj.get("type") != Some(&Value::String("object".into())) {
        return Err(wrong(SchemaProblem::RootNotObject));
    }
    let schema = Value::Object(obj);
    let checked = match schema.get("$schema") {
        None => jsonschema::draft7::meta::validate(&schema),
        Some(_) => jsonschema::meta::validate(&schema),
    };
    checked.map_err(|e| wrong(SchemaProblem::Invalid(e.to_string())))?;
    Ok(schema)
}

/// The validator of a checked schema.
fn compile(schema: &Value, part: SchemaPart) -> Result<jsonschema::Validator, RowProblem> {
    // Without a `$schema`, read the schema as draft 7: every keyword our catalog and MCP clients
    // use means the same there, and its meta-schema is far cheaper to load at start-up than
    // 2020-12's. A schema that names its draft gets that draft.
    // Formats are checked too (a tool's `format: uuid` is a promise to the model), with `uuid`
    // added to draft 7's list.
    let mut options = jsonschema::options().should_validate_formats(true).with_format("uuid", is_uuid);
    if schema.get("$schema").is_none() {
        options = options.with_draft(jsonschema::Draft::Draft7);
    }
    options.build(schema).map_err(|e| RowProblem::Schema { part, problem: SchemaProblem::Invalid(e.to_string()) })
}

/// The 8-4-4-4-12 hex form.
fn is_uuid(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 36
        && b.iter()
            .enumerate()
            .all(|(i, c)| if [8, 13, 18, 23].contains(&i) { *c == b'-' } else { c.is_ascii_hexdigit() })
}

/// A catalog row that passed: the tool as served, its schemas as declared.
struct Checked {
    tool: Tool,
    /// Each an object ([`object_schema`]).
    input: Value,
    output: Option<Value>,
}

impl Checked {
    /// The validators of a served row's input and output.
    fn compile(&self) -> Result<(jsonschema::Validator, Option<jsonschema::Validator>), RowProblem> {
        let output = self.output.as_ref().map(|o| compile(o, SchemaPart::Output)).transpose()?;
        Ok((compile(&self.input, SchemaPart::Input)?, output))
    }
}

fn check_decl(d: &ToolDecl) -> Result<Checked, RowProblem> {
    let name_ok =
        (1..=128).contains(&d.name.len()) && d.name.bytes().all(|b| b.is_ascii_alphanumeric() || b"_.-".contains(&b));
    if !name_ok {
        return Err(RowProblem::Name);
    }
    let toolset_ok = (1..=32).contains(&d.toolset.len())
        && d.toolset.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
        && !["all", "default"].contains(&d.toolset.as_str());
    if !toolset_ok {
        return Err(RowProblem::Toolset(d.toolset.clone()));
    }
    if d.read_only == (d.toolset == MUTATE_TOOLSET) {
        return Err(RowProblem::ReadOnlyOutsideMutate);
    }
    if d.description.is_empty() || d.description.len() > MAX_DESCRIPTION_BYTES {
        return Err(RowProblem::Description);
    }
    if d.title.is_empty() || d.title.len() > 128 {
        return Err(RowProblem::Title);
    }
    let input = object_schema(&d.input_schema, SchemaPart::Input)?;
    let output = d.output_schema.as_deref().map(|o| object_schema(o, SchemaPart::Output)).transpose()?;
    // Only the hints that differ from MCP's defaults (readOnly false, destructive true,
    // idempotent false, openWorld true), and none that a read-only tool makes moot: tools/list
    // stays small.
    let mut annotations = ToolAnnotations::new();
    if d.read_only {
        annotations = annotations.read_only(true);
    } else {
        if !d.destructive {
            annotations = annotations.destructive(false);
        }
        if d.idempotent {
            annotations = annotations.idempotent(true);
        }
    }
    if !d.open_world {
        annotations = annotations.open_world(false);
    }
    // the served copies: object_schema took only objects
    let served = |schema: &Value| schema.as_object().cloned().unwrap_or_default();
    let mut tool = Tool::new(d.name.clone(), d.description.clone(), Arc::new(without_hints(served(&input))))
        .with_title(d.title.clone())
        .with_annotations(annotations);
    if let Some(schema) = &output {
        tool = tool.with_raw_output_schema(Arc::new(served(schema)));
    }
    Ok(Checked { tool, input, output })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decl(name: &str, toolset: &str, schema: &str) -> ToolDecl {
        ToolDecl {
            name: name.into(),
            toolset: toolset.into(),
            title: "t".into(),
            description: "d".into(),
            input_schema: schema.into(),
            output_schema: None,
            read_only: toolset != MUTATE_TOOLSET,
            destructive: false,
            idempotent: true,
            open_world: true,
        }
    }

    const OBJ: &str =
        r#"{"type":"object","properties":{"limit":{"type":"integer","maximum":100}},"additionalProperties":false}"#;

    #[test]
    fn selection_filters_the_served_tools() {
        let cat = vec![decl("a", "metros", OBJ), decl("b", "ports", OBJ), decl("c", "mutate", OBJ)];
        let r = ToolRegistry::build(cat.clone(), &Selection::parse(Some("ports"))).unwrap();
        assert_eq!(r.tools().map(|t| t.decl.name.as_str()).collect::<Vec<_>>(), vec!["b"]);
        let r = ToolRegistry::build(cat, &Selection::parse(None)).unwrap();
        assert!(r.get("c").is_none() && r.get("a").is_some());
    }

    /// The rows are checked and compiled in two halves at once, and the row named is still the
    /// first wrong one in the catalog's order, whichever half finds it first.
    #[test]
    fn the_first_wrong_row_is_named_whichever_half_it_is_in() {
        let wrong = r#"{"type":"object","properties":{"a":{"type":7}}}"#;
        let nowhere = r##"{"type":"object","properties":{"a":{"$ref":"#/definitions/nowhere"}}}"##;
        let named = |rows: Vec<ToolDecl>| match ToolRegistry::build(rows, &Selection::parse(None)) {
            Err(CatalogError::Row { tool, .. }) => tool,
            other => panic!("{:?}", other.map(|r| r.tools().count())),
        };
        let rows = |bad: &[(usize, &str)]| -> Vec<ToolDecl> {
            (0..6)
                .map(|i| {
                    let schema = bad.iter().find(|(at, _)| *at == i).map_or(OBJ, |(_, s)| s);
                    decl(&format!("t{i}"), "metros", schema)
                })
                .collect()
        };
        for schema in [wrong, nowhere] {
            assert_eq!(named(rows(&[(1, schema), (4, schema)])), "t1");
            assert_eq!(named(rows(&[(4, schema)])), "t4");
            assert_eq!(named(rows(&[(0, schema), (5, schema)])), "t0");
        }
        // a row wrong in its check comes before a later one wrong only in its compile
        assert_eq!(named(rows(&[(2, nowhere), (4, wrong)])), "t4");
        assert_eq!(in_two_halves(&[1, 2, 3, 4, 5], |n| n * 10), [10, 20, 30, 40, 50]);
        assert!(in_two_halves(&[] as &[u8], |n| *n).is_empty());
    }

    #[test]
    fn invalid_catalog_rows_are_refused_by_name() {
        let refused = |rows: Vec<ToolDecl>| ToolRegistry::build(rows, &Selection::parse(None)).err().unwrap();
        fn input(p: &RowProblem) -> Option<&SchemaProblem> {
            match p {
                RowProblem::Schema { part: SchemaPart::Input, problem } => Some(problem),
                _ => None,
            }
        }
        type Is = fn(&RowProblem) -> bool;
        let cases: [(ToolDecl, Is, &str); 5] = [
            (decl("bad name!", "metros", OBJ), |p| matches!(p, RowProblem::Name), "tool name"),
            (decl("x", "metros", "[1]"), |p| matches!(input(p), Some(SchemaProblem::NotAnObject)), "not a JSON object"),
            (
                decl("x", "metros", r#"{"type":"array"}"#),
                |p| matches!(input(p), Some(SchemaProblem::RootNotObject)),
                "at its root",
            ),
            (
                decl("x", "metros", r#"{"type":"object","properties":{"a":{"type":7}}}"#),
                |p| matches!(input(p), Some(SchemaProblem::Invalid(_))),
                "the input schema is not a valid JSON Schema",
            ),
            (decl("x", "all", OBJ), |p| matches!(p, RowProblem::Toolset(t) if t == "all"), "toolset \"all\""),
        ];
        for (d, is, needle) in cases {
            let name = d.name.clone();
            let err = refused(vec![d]);
            assert!(matches!(&err, CatalogError::Row { tool, problem } if *tool == name && is(problem)), "{err:?}");
            assert!(err.to_string().contains(needle), "{err}");
        }
        let mut sneaky = decl("x", "metros", OBJ);
        sneaky.read_only = false;
        let err = refused(vec![sneaky]);
        assert!(matches!(err, CatalogError::Row { problem: RowProblem::ReadOnlyOutsideMutate, .. }), "{err:?}");
        let err = refused(vec![decl("x", "metros", OBJ), decl("x", "ports", OBJ)]);
        assert!(matches!(&err, CatalogError::Twice(name) if name == "x") && err.to_string().contains("twice"), "{err}");
        let err = ToolRegistry::build(vec![decl("x", "metros", OBJ)], &Selection::parse(Some("nope"))).err().unwrap();
        assert!(matches!(err, CatalogError::Selection(_)), "the operator's mistake: {err:?}");
    }

    #[test]
    fn every_row_is_checked_against_its_meta_schema_and_a_served_one_compiled() {
        let nowhere = r##"{"type":"object","properties":{"a":{"$ref":"#/$defs/Nope"}}}"##;
        let bad_regex = r#"{"type":"object","properties":{"a":{"type":"string","pattern":"(["}}}"#;
        // not served: its schema is valid JSON Schema, and it is never called, so never compiled
        let r = ToolRegistry::build(
            vec![decl("a", "metros", OBJ), decl("b", "ports", nowhere)],
            &Selection::parse(Some("metros")),
        );
        assert_eq!(r.unwrap().tools().map(|t| t.decl.name.as_str()).collect::<Vec<_>>(), ["a"]);
        // served, it refuses the component by name
        let err =
            ToolRegistry::build(vec![decl("b", "ports", nowhere)], &Selection::parse(Some("ports"))).err().unwrap();
        assert!(
            matches!(&err, CatalogError::Row { problem: RowProblem::Schema { part: SchemaPart::Input, problem: SchemaProblem::Invalid(why) }, .. } if why.contains("Nope")),
            "{err:?}"
        );
        assert!(err.to_string().contains("tool \"b\" is invalid"), "{err}");
        // what the meta-schema forbids refuses it, served or not
        for selection in [Some("metros"), Some("ports")] {
            let rows = vec![decl("a", "metros", OBJ), decl("b", "ports", bad_regex)];
            let err = ToolRegistry::build(rows, &Selection::parse(selection)).err().unwrap().to_string();
            assert!(err.contains("tool \"b\" is invalid: the input schema is not a valid JSON Schema"), "{err}");
        }
    }

    #[test]
    fn next_step_names_the_tool_a_schema_hint_points_to_and_clients_never_see_the_hint() {
        let schema = r##"{"type":"object","properties":{
            "metro":{"type":"string","pattern":"^[A-Z]{2}$","description":"Metro code","x-values-from":"fabric_list_metros"},
            "spec":{"type":"object"}, "enum_of_objects":{"enum":[{"x-values-from":"data, not a hint"}]},
            "other":{"type":"string","description":"prose naming fabric_search_networks is no hint"}},
          "allOf":[{"if":{"properties":{"k":{"const":"a"}}},"then":{"properties":{"spec":{"type":"object",
            "properties":{"sides":{"type":"array","items":{"$ref":"#/$defs/Side"}}}}}}}],
          "$defs":{"Side":{"type":"object","properties":{"port":{"x-values-from":"fabric_search_ports","type":"object",
            "properties":{"uuid":{"type":"string","format":"uuid"}}}}}}}"##;
        let listers = [decl("fabric_list_metros", "metros", OBJ), decl("fabric_search_ports", "ports", OBJ)];
        let r = ToolRegistry::build(
            [decl("a", "metros", schema)].into_iter().chain(listers).collect(),
            &Selection::parse(None),
        )
        .unwrap();
        let t = r.get("a").unwrap();
        let served = serde_json::to_string(&t.tool.input_schema).unwrap();
        assert_eq!(served.matches("x-values-from").count(), 1, "only the enum's data keeps it: {served}");
        assert!(served.contains("data, not a hint") && served.contains("\"format\":\"uuid\""), "{served}");
        let errs = vec![
            ArgumentError { path: "/metro".into(), message: "m".into() },
            ArgumentError { path: "/spec/sides/1/port/uuid".into(), message: "m".into() },
            ArgumentError { path: "/other".into(), message: "m".into() },
        ];
        assert_eq!(
            t.next_step(&errs),
            "Fix every problem under `problems` and call again; fabric_list_metros lists valid values for /metro; \
             fabric_search_ports lists valid values for /spec/sides/1/port/uuid."
        );
    }

    /// A missing argument is reported at its own path, with its allowed values, so the next step
    /// can name the tool that lists them.
    #[test]
    fn a_missing_argument_is_named_at_its_own_path_with_its_values() {
        let schema = r#"{"type":"object","required":["direction","port_id"],"properties":{
            "direction":{"type":"string","enum":["received","advertised"]},
            "port_id":{"type":"string","x-values-from":"fabric_search_ports"}}}"#;
        let tools = vec![decl("a", "metros", schema), decl("fabric_search_ports", "ports", OBJ)];
        let r = ToolRegistry::build(tools, &Selection::parse(None)).unwrap();
        let t = r.get("a").unwrap();
        let errs = t.check_arguments(&serde_json::json!({})).unwrap_err();
        let by_path: Vec<(&str, &str)> = errs.iter().map(|e| (e.path.as_str(), e.message.as_str())).collect();
        assert!(
            by_path.contains(&("/direction", "\"direction\" is a required property: one of received, advertised")),
            "{by_path:?}"
        );
        assert!(by_path.contains(&("/port_id", "\"port_id\" is a required property")), "{by_path:?}");
        assert!(t.next_step(&errs).contains("fabric_search_ports lists valid values for /port_id"));
    }

    #[test]
    fn a_hint_naming_no_tool_of_the_catalog_refuses_it() {
        let schema = r#"{"type":"object","properties":{"id":{"type":"string","x-values-from":"fabric_search_nothing\nFORGED"}}}"#;
        let err = ToolRegistry::build(vec![decl("a", "metros", schema)], &Selection::parse(None)).err().unwrap();
        assert!(
            matches!(&err, CatalogError::Row { problem: RowProblem::UnknownHint(name), .. } if name == "fabric_search_nothing\nFORGED"),
            "{err:?}"
        );
        let err = err.to_string();
        assert!(err.contains("tool \"a\" is invalid") && err.contains("x-values-from"), "{err}");
        assert!(err.contains("\\nFORGED"), "the name is quoted, not printed raw: {err}");
        // a hint to a tool that exists but is not served is fine: the catalog has it
        let other = decl("fabric_search_nothing", "ports", OBJ);
        let ok = r#"{"type":"object","properties":{"id":{"type":"string","x-values-from":"fabric_search_nothing"}}}"#;
        assert!(ToolRegistry::build(vec![decl("a", "metros", ok), other], &Selection::parse(Some("metros"))).is_ok());
    }

    #[test]
    fn local_and_recursive_refs_are_followed() {
        let schema = serde_json::json!({"type": "object", "properties": {
            "a": {"$ref": "#/$defs/A", "description": "kept"}, "r": {"$ref": "#/$defs/R"}},
            "$defs": {"A": {"type": "object", "properties": {"b": {"$ref": "#/$defs/B"}}},
                      "B": {"type": "integer"},
                      "R": {"type": "object", "properties": {"next": {"$ref": "#/$defs/R"}}}}});
        let validator =
            compile(&object_schema(&schema.to_string(), SchemaPart::Input).unwrap(), SchemaPart::Input).unwrap();
        assert!(validator.is_valid(&serde_json::json!({"a": {"b": 1}, "r": {"next": {"next": {}}}})));
        assert!(!validator.is_valid(&serde_json::json!({"a": {"b": "x"}})));
        assert!(!validator.is_valid(&serde_json::json!({"r": {"next": {"next": 5}}})));
    }

    #[test]
    fn arguments_are_checked_with_paths() {
        let r = ToolRegistry::build(vec![decl("a", "metros", OBJ)], &Selection::parse(None)).unwrap();
        let t = r.get("a").unwrap();
        assert!(t.check_arguments(&serde_json::json!({"limit": 5})).is_ok());
        let errs = t.check_arguments(&serde_json::json!({"limit": "5"})).unwrap_err();
        assert_eq!(errs[0].path, "/limit");
        assert_eq!(t.next_step(&errs), "Fix every problem under `problems` and call again.");
        assert!(t.check_arguments(&serde_json::json!({"extra": 1})).is_err());
        let uuid = r#"{"type":"object","properties":{"id":{"type":"string","format":"uuid"}}}"#;
        let r = ToolRegistry::build(vec![decl("u", "metros", uuid)], &Selection::parse(None)).unwrap();
        let u = r.get("u").unwrap();
        assert!(u.check_arguments(&serde_json::json!({"id": "c4d9350e-783c-83cd-1ce0-306a5c00a600"})).is_ok());
        assert_eq!(u.check_arguments(&serde_json::json!({"id": "c4d9350e"})).unwrap_err()[0].path, "/id");
        // a huge bad value comes back as a short quote
        let huge = "x".repeat(1 << 20);
        let errs = t.check_arguments(&serde_json::json!({"limit": huge.clone(), huge.clone(): 1})).unwrap_err();
        for e in &errs {
            assert!(e.message.len() < 400 && e.path.len() < 400, "{} / {}", e.path.len(), e.message.len());
        }
    }
}
