//! The tool table: one row per tool (name, toolset, title, hints, argument grammar, handler),
//! metros and the broker included. The same argument grammar checks every call and produces the
//! JSON Schema the host validates against first, so the two cannot drift apart. `tools/list`,
//! the toolset filter and `equinix-mcp tools` all read this one table through the host.

use alloc::string::String;
use serde_json::Value;

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
    pub run: Handler,
}

impl ToolDef {
    /// The JSON Schema of the arguments.
    pub fn input_schema(&self) -> Value {
        let mut s = grammar::schema(&Kind::Obj(self.args), "");
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_schema_is_a_closed_object_and_every_property_is_described() {
        for t in tools() {
            let schema = t.input_schema();
            assert_eq!(schema["type"], "object", "{}", t.name);
            assert_eq!(schema["additionalProperties"], false, "{}", t.name);
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
    fn read_only_tools_are_never_in_the_mutate_toolset() {
        for t in tools() {
            assert_eq!(t.hints.read_only, t.toolset != "mutate", "{}", t.name);
        }
    }
}
