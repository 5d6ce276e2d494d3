//! Tool-argument parsing with errors that name the offending JSON path.
//!
//! The host validates arguments against each tool's schema first; these checks repeat the rules
//! that matter for safety (types, ranges, closed objects) so the component never depends on
//! the host having done it.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use serde_json::{Map, Value};

use crate::tool_error::ToolError;

/// A parsed arguments object whose keys are all known.
pub struct Args {
    obj: Map<String, Value>,
}

/// The query of a paged GET: `offset` and `limit`.
pub fn paging_query(offset: u64, limit: u64) -> Vec<(String, String)> {
    alloc::vec![("offset".into(), offset.to_string()), ("limit".into(), limit.to_string())]
}

impl Args {
    /// Parses `json` as an object and rejects keys not in `known`.
    pub fn parse(json: &str, known: &[&str]) -> Result<Args, ToolError> {
        let value: Value =
            serde_json::from_str(json).map_err(|e| ToolError::invalid_argument("", format!("not valid JSON: {e}")))?;
        let Value::Object(obj) = value else {
            return Err(ToolError::invalid_argument("", "expected a JSON object"));
        };
        if let Some(unknown) = obj.keys().find(|k| !known.contains(&k.as_str())) {
            return Err(ToolError::invalid_argument(
                &format!("/{unknown}"),
                format!("unknown argument; expected one of: {}", known.join(", ")),
            ));
        }
        Ok(Args { obj })
    }

    /// The argument's JSON value, for callers that parse it further themselves.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.obj.get(key).filter(|v| !v.is_null())
    }

    /// An optional integer in `min..=max`.
    pub fn opt_int(&self, key: &str, min: u64, max: u64) -> Result<Option<u64>, ToolError> {
        let Some(v) = self.get(key) else {
            return Ok(None);
        };
        match v.as_u64() {
            Some(n) if (min..=max).contains(&n) => Ok(Some(n)),
            _ => Err(ToolError::invalid_argument(
                &format!("/{key}"),
                format!("expected an integer from {min} to {max}, got {v}"),
            )),
        }
    }

    /// An optional non-empty string of at most `max` characters.
    pub fn opt_string(&self, key: &str, max: usize) -> Result<Option<String>, ToolError> {
        let Some(v) = self.get(key) else { return Ok(None) };
        match v.as_str() {
            Some(s) if !s.is_empty() && s.chars().count() <= max => Ok(Some(s.into())),
            _ => Err(ToolError::invalid_argument(
                &format!("/{key}"),
                format!("expected a string of 1 to {max} characters, got {v}"),
            )),
        }
    }

    /// An optional boolean.
    pub fn opt_bool(&self, key: &str) -> Result<Option<bool>, ToolError> {
        let Some(v) = self.get(key) else {
            return Ok(None);
        };
        v.as_bool()
            .map(Some)
            .ok_or_else(|| ToolError::invalid_argument(&format!("/{key}"), format!("expected true or false, got {v}")))
    }

    /// An optional string that must be one of `allowed`.
    pub fn opt_enum(&self, key: &str, allowed: &[&'static str]) -> Result<Option<&'static str>, ToolError> {
        let Some(v) = self.get(key) else {
            return Ok(None);
        };
        let found = v.as_str().and_then(|s| allowed.iter().find(|a| **a == s));
        found.copied().map(Some).ok_or_else(|| {
            ToolError::invalid_argument(&format!("/{key}"), format!("expected one of {}, got {v}", allowed.join(", ")))
        })
    }

    /// `offset` (default 0), `limit` (default 20, at most 100) and `raw` of a list tool.
    pub fn paging(&self) -> Result<(u64, u64, bool), ToolError> {
        Ok((
            self.opt_int("offset", 0, 100_000)?.unwrap_or(0),
            self.opt_int("limit", 1, 100)?.unwrap_or(20),
            self.opt_bool("raw")?.unwrap_or(false),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_argument_is_named() {
        let err = Args::parse(r#"{"limit":5,"lmit":3}"#, &["limit"]).err().unwrap();
        assert_eq!(err.details["path"], "/lmit");
    }

    #[test]
    fn non_object_and_bad_json_are_refused() {
        assert_eq!(Args::parse("[1]", &[]).err().unwrap().kind, "invalid_arguments");
        assert!(Args::parse("{", &[]).err().unwrap().message.contains("not valid JSON"));
    }

    #[test]
    fn integer_range_and_type_are_checked() {
        let a = Args::parse(r#"{"limit":500,"offset":"3","ok":7}"#, &["limit", "offset", "ok"]).unwrap();
        assert!(a.opt_int("limit", 1, 100).unwrap_err().message.contains("from 1 to 100, got 500"));
        assert!(a.opt_int("offset", 0, 10).is_err());
        assert_eq!(a.opt_int("ok", 0, 10).unwrap(), Some(7));
        assert_eq!(a.opt_int("absent", 0, 10).unwrap(), None);
    }

    #[test]
    fn enum_and_bool_are_checked() {
        let a = Args::parse(r#"{"p":"MY_PORTS","q":"x","b":1}"#, &["p", "q", "b"]).unwrap();
        assert_eq!(a.opt_enum("p", &["MY_PORTS"]).unwrap(), Some("MY_PORTS"));
        assert!(a.opt_enum("q", &["MY_PORTS"]).is_err());
        assert!(a.opt_bool("b").is_err());
    }
}
