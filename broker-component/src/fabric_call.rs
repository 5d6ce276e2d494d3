//! Sending a read request through the `fabric` capability and reading its JSON answer.

use alloc::vec::Vec;
use serde_json::{Map, Value, json};

use crate::capability::{FabricRequest, Host};
use crate::tool_error::ToolError;

/// Sends `request` and returns the parsed JSON of a 2xx answer; any other outcome is a tool
/// error carrying Fabric's own error array, status and correlation id.
pub fn send_json(host: &mut (impl Host + ?Sized), request: FabricRequest) -> Result<Value, ToolError> {
    let response = host.fabric_send(request).map_err(|e| ToolError::from_fabric(&e))?;
    if !(200..300).contains(&response.status) {
        return Err(ToolError::from_response(&response));
    }
    serde_json::from_str(&response.body).map_err(|e| {
        ToolError::new(
            "bad_fabric_response",
            alloc::format!("Fabric answered HTTP {} with a body that is not JSON: {e}", response.status),
        )
    })
}

/// `offset` of the next page, or `None` on the last one, from Fabric's `pagination` object.
/// Fabric's own `next` link comes in several shapes, so it is computed from the numbers.
pub fn next_offset(pagination: Option<&Value>, offset: u64, returned: usize) -> (Option<u64>, Option<u64>) {
    let total = pagination.and_then(|p| p.get("total")).and_then(Value::as_u64);
    let next = offset + returned as u64;
    match total {
        Some(t) if next < t && returned > 0 => (Some(t), Some(next)),
        Some(t) => (Some(t), None),
        None => (None, None),
    }
}

/// A list answer as an agent gets it: `{key: [...], returned, offset, total, next_offset}`, each
/// item through `compact` unless `raw`. Takes the answer so the items move instead of being copied.
pub fn paged(mut answer: Value, key: &str, offset: u64, raw: bool, compact: fn(&Value) -> Value) -> Value {
    let data = match answer.get_mut("data").map(Value::take) {
        Some(Value::Array(items)) => items,
        _ => Vec::new(),
    };
    let (total, next) = next_offset(answer.get("pagination"), offset, data.len());
    let items: Vec<Value> = if raw { data } else { data.iter().map(compact).collect() };
    let mut out = Map::new();
    out.insert("returned".into(), json!(items.len()));
    out.insert(key.into(), Value::Array(items));
    out.insert("offset".into(), json!(offset));
    out.insert("total".into(), json!(total));
    out.insert("next_offset".into(), json!(next));
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn next_offset_comes_from_total() {
        let p = json!({"offset": 0, "limit": 2, "total": 5});
        assert_eq!(next_offset(Some(&p), 0, 2), (Some(5), Some(2)));
        assert_eq!(next_offset(Some(&p), 4, 1), (Some(5), None));
        assert_eq!(next_offset(None, 0, 2), (None, None));
        // an empty page never points further, even when total claims more
        assert_eq!(next_offset(Some(&p), 2, 0), (Some(5), None));
    }
}
