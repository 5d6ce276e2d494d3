//! Tool errors: what the agent reads when a call fails, as JSON that names what was wrong.

use alloc::boxed::Box;
use alloc::format;
use alloc::string::{String, ToString};
use serde_json::{Map, Value, json};

use equinix_broker_contract::answers::{ERROR, ERROR_KIND, ERROR_MESSAGE};
use equinix_broker_contract::{QUOTE_CHARS, clip};

use crate::capability::{FabricError, FabricResponse};

/// A failed tool call. `kind` is a stable machine-readable word; `message` is for people.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolError {
    pub kind: &'static str,
    pub message: String,
    /// Boxed, as is `beside`: an error travels in every `Result` of the tool code, and a map
    /// is large where serde_json keeps insertion order (the host's workspace build).
    pub details: Box<Map<String, Value>>,
    /// Members beside `error` at the top level of the result (e.g. `confirm_checks`, which every
    /// confirm result carries in the same place whether it failed or not).
    pub beside: Box<Map<String, Value>>,
}

impl ToolError {
    pub(crate) fn new(kind: &'static str, message: impl Into<String>) -> Self {
        ToolError { kind, message: message.into(), details: Box::default(), beside: Box::default() }
    }

    /// An argument that does not fit the tool's schema; `path` is a JSON pointer into the arguments.
    /// Both are quoted at most [`QUOTE_CHARS`] characters long: a huge bad value is named, not
    /// echoed.
    pub(crate) fn invalid_argument(path: &str, problem: impl core::fmt::Display) -> Self {
        let path = clip(path, QUOTE_CHARS);
        let problem = clip(&problem.to_string(), QUOTE_CHARS);
        ToolError::new("invalid_arguments", format!("invalid argument at {path}: {problem}"))
            .with("path", Value::String(path))
    }

    pub(crate) fn with(mut self, key: &str, value: Value) -> Self {
        self.details.insert(key.to_string(), value);
        self
    }

    /// Adds `key` at the top level of the error result, beside `error`.
    pub(crate) fn beside(mut self, key: &str, value: Value) -> Self {
        self.beside.insert(key.to_string(), value);
        self
    }

    /// The error for a Fabric request that produced no response.
    pub(crate) fn from_fabric(err: &FabricError) -> Self {
        match err {
            FabricError::Refused(why) => {
                ToolError::new("refused", format!("the host refused the Fabric request: {why}"))
            }
            FabricError::Denied(why) => ToolError::new(
                "policy_denied",
                format!("the operator's policy does not allow this request, so nothing was sent to Fabric: {why}"),
            ),
            FabricError::Cancelled => ToolError::new(
                "cancelled",
                "the call was cancelled before the Fabric request was sent; nothing was sent",
            ),
            FabricError::Unavailable(why) => {
                ToolError::new("fabric_unavailable", format!("Fabric could not be reached; nothing was sent: {why}"))
            }
            FabricError::Timeout => {
                ToolError::new("fabric_timeout", "Fabric did not answer in time; the request may have been processed")
            }
            FabricError::Transport(why) => {
                ToolError::new("fabric_transport", format!("the Fabric response was lost or unreadable: {why}"))
            }
        }
    }

    /// The error for a non-2xx Fabric answer (see `from_fabric_status`).
    pub(crate) fn from_response(r: &FabricResponse) -> Self {
        Self::from_fabric_status(r.status, &r.body, r.correlation_id.as_deref())
    }

    /// The error for a non-2xx Fabric answer: Fabric's error array is passed on intact.
    pub(crate) fn from_fabric_status(status: u16, body: &str, correlation_id: Option<&str>) -> Self {
        let parsed: Option<Value> = serde_json::from_str(body).ok();
        let summary = parsed.as_ref().and_then(first_error_summary);
        let message = match summary {
            Some(s) => format!("Fabric answered HTTP {status}: {s}"),
            None => format!("Fabric answered HTTP {status}"),
        };
        let mut err = ToolError::new("fabric_error", message).with("status", json!(status));
        err = match parsed {
            Some(v) => err.with("fabric_errors", v),
            None => err.with("fabric_body", Value::String(truncate(body, 2048))),
        };
        if let Some(id) = correlation_id {
            err = err.with("correlation_id", Value::String(id.to_string()));
        }
        err
    }

    pub fn to_json(&self) -> String {
        let mut inner = Map::new();
        inner.insert(ERROR_KIND.into(), Value::String(self.kind.into()));
        inner.insert(ERROR_MESSAGE.into(), Value::String(self.message.clone()));
        for (k, v) in self.details.iter() {
            inner.insert(k.clone(), v.clone());
        }
        let mut outer = (*self.beside).clone();
        outer.insert(ERROR.into(), Value::Object(inner));
        crate::json::json_text(&Value::Object(outer))
    }
}

/// "EQ-3142102: Connection has duplicate ..." from the first element of an error array.
fn first_error_summary(v: &Value) -> Option<String> {
    let first = v.as_array()?.first()?;
    let code = first.get("errorCode").and_then(Value::as_str).unwrap_or("?");
    let msg = first.get("errorMessage").and_then(Value::as_str).unwrap_or("");
    Some(format!("{code}: {msg}"))
}

fn truncate(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… ({} bytes in all)", &s[..end], s.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fabric_error_array_is_kept_intact() {
        let body = r#"[{"errorCode":"EQ-3142102","errorMessage":"duplicate VLAN","correlationId":"c1","additionalInfo":[{"property":"/aSide/accessPoint/linkProtocol"}]}]"#;
        let err = ToolError::from_fabric_status(400, body, Some("corr-9"));
        assert_eq!(err.kind, "fabric_error");
        assert_eq!(err.message, "Fabric answered HTTP 400: EQ-3142102: duplicate VLAN");
        let original: Value = serde_json::from_str(body).unwrap();
        assert_eq!(err.details["fabric_errors"], original);
        assert_eq!(err.details["correlation_id"], "corr-9");
    }

    #[test]
    fn non_json_error_body_is_truncated_not_dropped() {
        let body = "x".repeat(5000);
        let err = ToolError::from_fabric_status(502, &body, None);
        let kept = err.details["fabric_body"].as_str().unwrap();
        assert!(kept.starts_with("xxxx") && kept.ends_with("(5000 bytes in all)"));
    }

    #[test]
    fn a_huge_bad_argument_is_quoted_not_echoed() {
        let huge = "x".repeat(1 << 20);
        let err = ToolError::invalid_argument(&alloc::format!("/{huge}"), alloc::format!("got {huge}"));
        assert!(err.to_json().len() < 1000, "{}", err.to_json().len());
        assert!(err.message.contains("more characters"));
    }

    #[test]
    fn json_shape_names_kind_and_path() {
        let text = ToolError::invalid_argument("/limit", "expected an integer").to_json();
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["error"]["kind"], "invalid_arguments");
        assert_eq!(v["error"]["path"], "/limit");
        assert_eq!(v["error"]["message"], "invalid argument at /limit: expected an integer");
    }
}
