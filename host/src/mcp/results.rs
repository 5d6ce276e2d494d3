//! Tool results as clients get them: structured content plus the same JSON as text, and the one
//! shape of a host-made tool error, `{"error": {"kind", "message", ...}}`.

use equinix_broker_contract::answers::{ERROR, ERROR_KIND, ERROR_MESSAGE};
use rmcp::model::{CallToolResponse, CallToolResult, ErrorData};
use serde_json::{Map, Value};

use super::registry::RegisteredTool;

/// The largest tool result passed on to the client.
pub(crate) const MAX_RESULT_BYTES: usize = 16 << 20;

/// A tool error the host reports itself (the component's own errors arrive as JSON).
#[derive(Debug)]
pub(crate) struct ToolError {
    error: Map<String, Value>,
}

impl ToolError {
    pub(crate) fn new(kind: &str, message: impl Into<String>) -> Self {
        let mut error = Map::new();
        error.insert(ERROR_KIND.into(), Value::String(kind.into()));
        error.insert(ERROR_MESSAGE.into(), Value::String(message.into()));
        ToolError { error }
    }

    /// Adds a member beside `kind` and `message`.
    pub(crate) fn with(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.error.insert(key.into(), value.into());
        self
    }

    pub(crate) fn into_value(self) -> Value {
        let mut outer = Map::new();
        outer.insert(ERROR.into(), Value::Object(self.error));
        Value::Object(outer)
    }

    /// As a result that keeps only what fits `tool`'s output schema (see [`for_tool`]).
    pub(crate) fn for_tool(self, tool: &RegisteredTool) -> CallToolResponse {
        for_tool(tool, self.into_value(), true).into()
    }

    /// As a result of no particular tool.
    pub(crate) fn result(self) -> CallToolResponse {
        structured(self.into_value(), true).into()
    }
}

/// `value` as structured content plus its JSON text (for clients that read only text). rmcp's
/// own constructors format the text through `Display`, the slower path; the text is always
/// re-serialized from `value`, never a component's own text, so the two can never disagree.
pub(crate) fn structured(value: Value, is_error: bool) -> CallToolResult {
    let text = serde_json::to_string(&value).expect("a JSON value always serializes");
    let content = vec![rmcp::model::ContentBlock::text(text)];
    let mut result = if is_error { CallToolResult::error(content) } else { CallToolResult::success(content) };
    result.structured_content = Some(value);
    result
}

/// A tool's result. An error keeps its structured content only where that fits the tool's
/// output schema: the official TypeScript SDK checks any structured content against it, error
/// or not, and a component may declare members an error does not have (the text says it all).
pub(crate) fn for_tool(tool: &RegisteredTool, value: Value, is_error: bool) -> CallToolResult {
    let mut result = structured(value, is_error);
    if is_error && result.structured_content.as_ref().is_some_and(|v| tool.check_output(v).is_err()) {
        result.structured_content = None;
    }
    result
}

/// A component's successful answer: a JSON object within the size cap that fits the output
/// schema the component declared (clients rely on it). Anything else is the component's failure.
pub(crate) fn component_result(tool: &RegisteredTool, text: &str) -> Result<Value, ToolError> {
    let value = component_json(text)?;
    tool.check_output(&value).map(|()| value).map_err(|why| {
        ToolError::new(
            "component_failed",
            format!("the component's result does not fit the output schema it declared for this tool: {why}"),
        )
    })
}

/// Parses a component's JSON answer; anything else is reported, never passed through.
pub(crate) fn component_json(text: &str) -> Result<Value, ToolError> {
    if text.len() > MAX_RESULT_BYTES {
        let message = format!("the component returned {} bytes; the limit is {MAX_RESULT_BYTES}", text.len());
        return Err(ToolError::new("component_failed", message));
    }
    match serde_json::from_str::<Value>(text) {
        Ok(v @ Value::Object(_)) => Ok(v),
        Ok(_) => Err(ToolError::new("component_failed", "the component returned JSON that is not an object")),
        Err(e) => Err(ToolError::new("component_failed", format!("the component returned invalid JSON: {e}"))),
    }
}

/// `ok`, `error` or `input_required`, and an error's kind (for the access log and metrics).
pub(crate) fn outcome_of(result: Result<&CallToolResponse, &ErrorData>) -> (&'static str, Option<String>) {
    match result {
        Err(e) => ("error", Some(equinix_broker_contract::clip(&format!("protocol_error {}", e.code.0), 40))),
        Ok(CallToolResponse::Complete(r)) if r.is_error == Some(true) => {
            // the structured content when there is one, else the text read as JSON
            let read;
            let value = match &r.structured_content {
                Some(v) => Some(v),
                None => {
                    let text = r.content.first().and_then(|c| c.as_text()).map(|t| t.text.as_str()).unwrap_or("");
                    read = serde_json::from_str::<Value>(text).ok();
                    read.as_ref()
                }
            };
            let kind = value.and_then(equinix_broker_contract::answers::error_kind);
            ("error", Some(equinix_broker_contract::clip(kind.unwrap_or("unknown"), 40)))
        }
        Ok(CallToolResponse::Complete(_)) => ("ok", None),
        Ok(_) => ("input_required", None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tool_error_has_one_shape() {
        let v = ToolError::new("too_many_calls", "wait").with("retry_after_ms", 50).into_value();
        assert_eq!(
            v,
            serde_json::json!({"error": {"kind": "too_many_calls", "message": "wait", "retry_after_ms": 50}})
        );
        assert_eq!(component_json("[1]").unwrap_err().into_value()["error"]["kind"], "component_failed");
        assert!(
            component_json("{").unwrap_err().into_value()["error"]["message"]
                .as_str()
                .unwrap()
                .contains("invalid JSON")
        );
    }
}
