//! The tool table: one row per tool with its toolset, hints and schema. `tools/list`, the
//! toolset filter and `equinix-mcp tools` all read this one table through the host.

use crate::{confirm, metros, propose};

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

/// One row of the catalog.
#[derive(Clone, Copy, Debug)]
pub struct ToolDef {
    pub name: &'static str,
    pub toolset: &'static str,
    pub description: &'static str,
    pub input_schema: &'static str,
    pub hints: Hints,
}

/// Hints of the broker tools: they lead to a create (never an update or delete), talk to Fabric,
/// and a repeated call is a new proposal or a consumed token.
pub const BROKER: Hints = Hints { read_only: false, destructive: false, idempotent: false, open_world: true };

/// The whole catalog: metros, the read tools of [`crate::reads`], then the broker.
pub fn tools() -> impl Iterator<Item = ToolDef> {
    let reads = crate::reads::TOOLS.iter().map(|t| ToolDef {
        name: t.name,
        toolset: t.toolset,
        description: t.description,
        input_schema: t.schema,
        hints: READ_ONLY,
    });
    core::iter::once(METROS).chain(reads).chain(BROKER_TOOLS.iter().copied())
}

const METROS: ToolDef = ToolDef {
    name: metros::NAME,
    toolset: "metros",
    description: metros::DESCRIPTION,
    input_schema: metros::SCHEMA,
    hints: READ_ONLY,
};

const BROKER_TOOLS: &[ToolDef] = &[
    ToolDef {
        name: propose::NAME,
        toolset: "mutate",
        description: propose::DESCRIPTION,
        input_schema: propose::SCHEMA,
        hints: BROKER,
    },
    ToolDef {
        name: confirm::NAME,
        toolset: "mutate",
        description: confirm::DESCRIPTION,
        input_schema: confirm::SCHEMA,
        hints: BROKER,
    },
];

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    #[test]
    fn every_schema_is_a_closed_object_and_names_are_valid() {
        for t in tools() {
            let schema: Value = serde_json::from_str(t.input_schema).expect(t.name);
            assert_eq!(schema["type"], "object", "{}", t.name);
            assert_eq!(schema["additionalProperties"], false, "{}", t.name);
            assert!(!t.hints.destructive, "no tool may delete or update: {}", t.name);
            assert!(t.name.len() <= 128 && t.name.bytes().all(|b| b.is_ascii_alphanumeric() || b"_.-".contains(&b)));
            assert!(!t.toolset.is_empty() && !t.description.is_empty());
        }
    }

    #[test]
    fn read_only_tools_are_never_in_the_mutate_toolset() {
        for t in tools() {
            assert_eq!(t.hints.read_only, t.toolset != "mutate", "{}", t.name);
        }
    }
}
