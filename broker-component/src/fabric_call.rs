//! Sending a read request through the `fabric` capability and reading its JSON answer.

use alloc::string::String;
use alloc::vec::Vec;
use serde_json::{Map, Value, json};

use crate::capability::{FabricRequest, Host};
use crate::tool_error::ToolError;

/// Sends `request` and returns the parsed JSON of a 2xx answer; any other outcome is a tool
/// error carrying Fabric's own error array, status and correlation id.
pub(crate) fn send_json(host: &mut (impl Host + ?Sized), request: FabricRequest) -> Result<Value, ToolError> {
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
pub(crate) fn next_offset(pagination: Option<&Value>, offset: u64, returned: usize) -> (Option<u64>, Option<u64>) {
    let total = pagination.and_then(|p| p.get("total")).and_then(Value::as_u64);
    let next = offset + returned as u64;
    match total {
        Some(t) if next < t && returned > 0 => (Some(t), Some(next)),
        Some(t) => (Some(t), None),
        None => (None, None),
    }
}

/// A list answer as an agent gets it: `{columns, same?, key: [[...], ...], returned, offset,
/// total, next_offset}`: the compact items as rows of `columns`, with any column that holds one
/// value in every row given once under `same` (a page of 20 stays small). Takes the answer so
/// the items move instead of being copied.
pub(crate) fn paged(mut answer: Value, key: &str, offset: u64, compact: fn(&Value) -> Value) -> Value {
    let data = match answer.get_mut("data").map(Value::take) {
        Some(Value::Array(items)) => items,
        _ => Vec::new(),
    };
    let (total, next) = next_offset(answer.get("pagination"), offset, data.len());
    let mut out = Map::new();
    out.insert("returned".into(), json!(data.len()));
    let (columns, same, rows) = table(data.iter().map(compact).collect());
    out.insert("columns".into(), columns);
    if !same.is_empty() {
        out.insert("same".into(), Value::Object(same));
    }
    out.insert(key.into(), rows);
    out.insert("offset".into(), json!(offset));
    out.insert("total".into(), json!(total));
    out.insert("next_offset".into(), json!(next));
    Value::Object(out)
}

/// Objects as `columns` (every key, in order of first appearance), the columns whose value is
/// the same non-null value in every row of two or more (`same`), and rows of the other columns
/// (null where an object lacks one).
pub(crate) fn table(items: Vec<Value>) -> (Value, Map<String, Value>, Value) {
    let mut columns: Vec<String> = Vec::new();
    for item in &items {
        for key in item.as_object().into_iter().flat_map(Map::keys) {
            if !columns.iter().any(|c| c == key) {
                columns.push(key.clone());
            }
        }
    }
    let mut same = Map::new();
    if items.len() > 1 {
        columns.retain(|c| {
            let first = items[0].get(c);
            let shared = first.is_some_and(|v| !v.is_null()) && items.iter().all(|i| i.get(c) == first);
            if shared {
                same.insert(c.clone(), first.cloned().unwrap_or(Value::Null));
            }
            !shared
        });
    }
    let rows = items
        .into_iter()
        .map(|mut item| {
            Value::Array(columns.iter().map(|c| item.get_mut(c).map(Value::take).unwrap_or(Value::Null)).collect())
        })
        .collect();
    (json!(columns), same, Value::Array(rows))
}

/// The rows of a page under `key` as objects again (tests read them by column name).
#[cfg(test)]
pub(crate) fn objects(page: &Value, key: &str) -> Vec<Value> {
    let columns: Vec<&str> =
        page["columns"].as_array().map(|c| c.iter().filter_map(Value::as_str).collect()).unwrap_or_default();
    page[key]
        .as_array()
        .map(|rows| {
            rows.iter()
                .map(|r| {
                    let pairs = columns.iter().zip(r.as_array().into_iter().flatten());
                    let mut o: Map<String, Value> =
                        pairs.filter(|(_, v)| !v.is_null()).map(|(c, v)| ((*c).into(), v.clone())).collect();
                    if let Some(same) = page.get("same").and_then(Value::as_object) {
                        o.extend(same.clone());
                    }
                    Value::Object(o)
                })
                .collect()
        })
        .unwrap_or_default()
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
