//! What a check found wrong, each problem by its JSON pointer, and the one tool error they make.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use equinix_broker_contract::clip;
use serde_json::{Value, json};

use crate::tool_error::ToolError;

/// One problem with a value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    pub path: String,
    pub message: String,
    /// The read tool that lists valid values here, when the field names one.
    pub see: Option<&'static str>,
}

/// The problems found so far (at most [`Problems::MAX`]: a wholly wrong value is not an essay).
#[derive(Debug, Default)]
pub struct Problems(pub Vec<Problem>);

impl Problems {
    pub(crate) const MAX: usize = 20;

    pub(crate) fn push(&mut self, path: &str, message: impl Into<String>) {
        if self.0.len() < Self::MAX {
            self.0.push(Problem { path: clip(path, 200), message: message.into(), see: None });
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Points the problems from `since` on at `tool`, unless a deeper field already named one.
    pub(super) fn see(&mut self, since: usize, tool: Option<&'static str>) {
        for p in self.0.iter_mut().skip(since) {
            p.see = p.see.or(tool);
        }
    }
}

/// Every problem of a failed check as one tool error: the first named in the message, all of
/// them listed under `problems`.
pub fn to_error(problems: Problems) -> ToolError {
    let list: Vec<Value> = problems.0.iter().map(|p| json!({"path": p.path, "message": p.message})).collect();
    let first =
        problems.0.first().cloned().unwrap_or(Problem { path: "/".into(), message: "is invalid".into(), see: None });
    let more = match list.len() {
        0 | 1 => String::new(),
        n => format!(" (and {} more problems, listed under problems)", n - 1),
    };
    let pointers = problems.0.iter().filter_map(|p| Some((p.path.as_str(), p.see?)));
    ToolError::new("invalid_arguments", format!("invalid argument at {}: {}{more}", first.path, first.message))
        .with("path", json!(first.path))
        .with("problems", Value::Array(list))
        .with("next_step", json!(equinix_broker_contract::next_step(pointers)))
}
