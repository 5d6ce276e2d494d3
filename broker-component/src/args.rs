//! Tool arguments: the JSON text the host passes, read as an object, and the accessors the
//! tools use once their grammar (`tool::ToolDef::args`) has checked it.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use serde_json::Value;

use crate::grammar::{Field, int, opt};
use crate::tool_error::ToolError;

/// `offset` and `limit` of every list tool.
pub(crate) const OFFSET: Field = opt("offset", int(0, i64::MAX), "Rows to skip");
pub(crate) const LIMIT: Field = opt("limit", int(1, 100), "Page size (20)");

/// Parses the arguments' JSON text; the result is an object.
pub(crate) fn parse(json: &str) -> Result<Value, ToolError> {
    let value: Value =
        serde_json::from_str(json).map_err(|e| ToolError::invalid_argument("/", format!("not valid JSON: {e}")))?;
    if !value.is_object() {
        return Err(ToolError::invalid_argument("/", "expected a JSON object"));
    }
    Ok(value)
}

/// A checked string argument.
pub(crate) fn text<'a>(args: &'a Value, key: &str) -> Option<&'a str> {
    args.get(key).and_then(Value::as_str)
}

/// A checked integer argument.
pub(crate) fn number(args: &Value, key: &str) -> Option<u64> {
    args.get(key).and_then(Value::as_u64)
}

/// `offset` (default 0) and `limit` (default 20).
pub(crate) fn paging(args: &Value) -> (u64, u64) {
    (number(args, "offset").unwrap_or(0), number(args, "limit").unwrap_or(20))
}

/// The query of a paged GET: `offset` and `limit`.
pub(crate) fn paging_query(offset: u64, limit: u64) -> Vec<(String, String)> {
    alloc::vec![("offset".into(), offset.to_string()), ("limit".into(), limit.to_string())]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn non_object_and_bad_json_are_refused() {
        assert_eq!(parse("[1]").err().unwrap().kind, "invalid_arguments");
        assert!(parse("{").err().unwrap().message.contains("not valid JSON"));
    }

    #[test]
    fn paging_has_defaults() {
        assert_eq!(paging(&serde_json::json!({})), (0, 20));
        assert_eq!(paging(&serde_json::json!({"offset": 40, "limit": 5})), (40, 5));
    }
}
