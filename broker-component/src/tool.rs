//! The shape of a tool row: name, toolset, title, hints, argument grammar, output shape and
//! handler. Every tool module writes its rows in these types; the catalog lists them.

use alloc::string::String;
use serde_json::{Value, json};

use crate::capability::Host;
use crate::grammar::{self, Kind, Object, Problems};
use crate::json::json_text;
use crate::tool_error::ToolError;

/// MCP annotations of a tool.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hints {
    pub read_only: bool,
    pub destructive: bool,
    pub idempotent: bool,
    pub open_world: bool,
}

/// Hints of every read-only catalog tool: reads Fabric, changes nothing.
pub(crate) const READ_ONLY: Hints = Hints { read_only: true, destructive: false, idempotent: true, open_world: true };

/// Hints of the broker tools: they lead to a create (never an update or delete), talk to Fabric,
/// and a repeated call is a new proposal or a consumed token.
pub(crate) const BROKER: Hints = Hints { read_only: false, destructive: false, idempotent: false, open_world: true };

/// A tool's handler: the checked arguments in, the result or tool error out.
pub(crate) type Handler = fn(&mut dyn Host, &Value) -> Result<Value, ToolError>;

/// A read-only row (no schema additions).
pub(crate) const fn read(
    name: &'static str,
    toolset: &'static str,
    title: &'static str,
    description: &'static str,
    args: &'static Object,
    output: Output,
    run: Handler,
) -> ToolDef {
    ToolDef { name, toolset, title, description, args, schema_extra: None, hints: READ_ONLY, output, run }
}

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
    pub(crate) schema_extra: Option<fn(&mut Value)>,
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
    pub(crate) fn check(&self, args: &Value) -> Result<Value, ToolError> {
        let mut problems = Problems::default();
        match grammar::check(&Kind::Obj(self.args), args, "", &mut problems) {
            Some(v) if problems.is_empty() => Ok(v),
            _ => Err(grammar::to_error(problems)),
        }
    }

    /// The schema text of the arguments (what the WIT catalog carries).
    pub fn schema_text(&self) -> String {
        json_text(&self.input_schema())
    }

    /// The output schema text.
    pub fn output_text(&self) -> String {
        json_text(&self.output.schema())
    }
}
