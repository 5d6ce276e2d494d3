//! The tool table: one row per tool (name, toolset, title, hints, argument grammar, handler),
//! metros and the broker included. The same argument grammar checks every call and produces the
//! JSON Schema the host validates against first, so the two cannot drift apart. `tools/list`,
//! the toolset filter and `equinix-mcp tools` all read this one table through the host.

use alloc::string::String;
use serde_json::{Value, json};

use crate::capability::Host;
use crate::grammar::{self, Kind, Object, Problems};
use crate::tool_error::ToolError;
use crate::{confirm, metros, propose, reads};

/// MCP annotations of a tool.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hints {
    pub read_only: bool,
    pub destructive: bool,
    pub idempotent: bool,
    pub open_world: bool,
}

/// Hints of every read-only catalog tool: reads Fabric, changes nothing.
pub const READ_ONLY: Hints = Hints { read_only: true, destructive: false, idempotent: true, open_world: true };

/// Hints of the broker tools: they lead to a create (never an update or delete), talk to Fabric,
/// and a repeated call is a new proposal or a consumed token.
pub const BROKER: Hints = Hints { read_only: false, destructive: false, idempotent: false, open_world: true };

/// A tool's handler: the checked arguments in, the result or tool error out.
pub type Handler = fn(&mut dyn Host, &Value) -> Result<Value, ToolError>;

/// One row of the catalog.
pub struct ToolDef {
    pub name: &'static str,
    pub toolset: &'static str,
    /// A short human title (MCP `title`).
    pub title: &'static str,
    pub description: &'static str,
    /// The arguments: checked before the handler runs, and the input schema.
    pub args: &'static Object,
    /// Adds what the grammar alone cannot say to the input schema (the propose tool's typed specs).
    pub schema_extra: Option<fn(&mut Value)>,
    pub hints: Hints,
    /// The shape of a successful result.
    pub output: Output,
    pub run: Handler,
}

/// What a successful result holds (its `outputSchema`). No member is `required`: a tool error's
/// structured content is `{"error": ...}` (with the confirm checks, for a confirm), and the
/// official TypeScript SDK checks any structured content against the output schema, error or not.
#[derive(Clone, Copy, Debug)]
pub enum Output {
    /// A page: `columns`, rows under the key, `same`, `returned`, `offset`, `total`,
    /// `next_offset`, and these extra members (the schema names the rows and the extras).
    Page(&'static str, &'static [(&'static str, &'static str)]),
    /// One object under the key.
    One(&'static str),
    /// Named members of these JSON types.
    Members(&'static [(&'static str, &'static str)]),
}

impl Output {
    /// The JSON Schema of the result.
    pub fn schema(self) -> Value {
        let members: alloc::vec::Vec<(&str, Value)> = match self {
            Output::Page(key, extra) => {
                let mut m = alloc::vec![(key, json!({"type": "array"}))];
                m.extend(extra.iter().map(|(k, t)| (*k, json!({"type": t}))));
                m
            }
            Output::One(key) => alloc::vec![(key, json!({"type": "object"}))],
            Output::Members(members) => members.iter().map(|(k, t)| (*k, json!({"type": type_names(t)}))).collect(),
        };
        let properties: serde_json::Map<String, Value> = members.into_iter().map(|(k, v)| (k.into(), v)).collect();
        json!({"type": "object", "properties": properties})
    }
}

/// `"boolean|null"` → `["boolean", "null"]`.
fn type_names(t: &str) -> Value {
    if t.contains('|') { Value::Array(t.split('|').map(|x| json!(x)).collect()) } else { json!(t) }
}

impl ToolDef {
    /// The JSON Schema of the arguments.
    pub fn input_schema(&self) -> Value {
        let mut s = grammar::schema(&Kind::Obj(self.args), "");
        // Every tool's check refuses unknown arguments by name; only the broker's schemas say so
        // too, where a stray field could mean the agent believes it asked for something it did
        // not. On the thirteen reads the keyword would cost the default tools/list its 8 KB budget.
        if !self.hints.read_only {
            s["additionalProperties"] = json!(false);
        }
        if let Some(extra) = self.schema_extra {
            extra(&mut s);
        }
        s
    }

    /// The arguments checked against the grammar (every problem named at once).
    pub fn check(&self, args: &Value) -> Result<Value, ToolError> {
        let mut problems = Problems::default();
        match grammar::check(&Kind::Obj(self.args), args, "", &mut problems) {
            Some(v) if problems.is_empty() => Ok(v),
            _ => Err(grammar::to_error(problems)),
        }
    }
}

/// The whole catalog, in the order `tools/list` shows it.
pub fn tools() -> impl Iterator<Item = &'static ToolDef> {
    core::iter::once(&metros::TOOL).chain(reads::TOOLS.iter()).chain([&propose::TOOL, &confirm::TOOL])
}

/// The row of `name`.
pub fn find(name: &str) -> Option<&'static ToolDef> {
    tools().find(|t| t.name == name)
}

/// The schema text of a tool (what the WIT catalog carries).
pub fn schema_text(t: &ToolDef) -> String {
    crate::json_text(&t.input_schema())
}

/// The output schema text of a tool.
pub fn output_text(t: &ToolDef) -> String {
    crate::json_text(&t.output.schema())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_schema_is_an_object_and_every_property_is_described() {
        for t in tools() {
            let schema = t.input_schema();
            assert_eq!(schema["type"], "object", "{}", t.name);
            let closed = schema.get("additionalProperties") == Some(&json!(false));
            assert_eq!(closed, !t.hints.read_only, "{}", t.name);
            let unknown = t.check(&json!({"no_such_argument": 1})).unwrap_err();
            assert!(format!("{unknown:?}").contains("/no_such_argument"), "{}: {unknown:?}", t.name);
            for (key, p) in schema["properties"].as_object().unwrap() {
                assert!(
                    p["description"].as_str().is_some_and(|d| !d.is_empty()),
                    "{}.{key} has no description",
                    t.name
                );
            }
            assert!(!t.hints.destructive, "no tool may delete or update: {}", t.name);
            assert!(t.name.len() <= 128 && t.name.bytes().all(|b| b.is_ascii_alphanumeric() || b"_.-".contains(&b)));
            assert!(!t.toolset.is_empty() && !t.description.is_empty() && !t.title.is_empty());
        }
    }

    #[test]
    fn argument_errors_name_every_path_and_where_valid_values_come_from() {
        let ports = find("fabric_search_ports").unwrap();
        let err = ports.check(&json!({"metro": "Washington", "project_id": "p", "limit": 0})).unwrap_err();
        let text = err.to_json();
        for path in ["/metro", "/project_id", "/limit"] {
            assert!(text.contains(&format!("\"path\":\"{path}\"")), "{path}: {text}");
        }
        let next = err.details["next_step"].as_str().unwrap();
        assert!(next.contains("fabric_list_metros lists valid values for /metro"), "{next}");
        assert!(err.message.contains("uppercase metro code"), "{}", err.message);

        let propose = find("fabric_propose_change").unwrap();
        let spec = json!({"type": "EVPL_VC", "name": "n", "bandwidth": 50, "notifications": [],
            "aSide": {"accessPoint": {"type": "COLO", "port": {"uuid": "x"}, "linkProtocol": {"type": "DOT1Q", "vlanTag": 1}}},
            "zSide": {"accessPoint": {"type": "SP", "profile": {}, "location": {"metroCode": "dc"}}}});
        let checked = propose.check(&json!({"change_type": "connection_create", "spec": spec})).unwrap();
        let err = crate::propose::parse(&checked).unwrap_err();
        let next = err.details["next_step"].as_str().unwrap();
        for tool in
            ["fabric_search_ports", "fabric_list_port_vlans", "fabric_search_service_profiles", "fabric_list_metros"]
        {
            assert!(next.contains(tool), "{tool}: {next}");
        }
        assert_eq!(err.details["problems"].as_array().unwrap().len(), 5, "{}", err.to_json());
    }

    #[test]
    fn read_only_tools_are_never_in_the_mutate_toolset() {
        for t in tools() {
            assert_eq!(t.hints.read_only, t.toolset != "mutate", "{}", t.name);
        }
    }
}
