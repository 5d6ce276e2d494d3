//! Building the read tools' Fabric requests: search bodies (filters, paging), GETs and POSTs,
//! a get by id, and the next step for an id Fabric does not know.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use serde_json::{Map, Value, json};

use super::compact::one;
use crate::args::text;
use crate::capability::{FabricRequest, Host, Method};
use crate::fabric_call::send_json;
use crate::grammar::Object;
use crate::tool_error::ToolError;

/// The name to match, as the fragment Fabric's LIKE (a partial match) takes: `*` wildcards an
/// agent may add are dropped (the contract documents none).
pub(crate) fn name_fragment(args: &Value) -> Option<String> {
    text(args, "name").and_then(fragment)
}

/// Text to match as a part, without the wildcards an agent may add (`*`, `%`): `None` when
/// nothing is left.
pub(crate) fn fragment(s: &str) -> Option<String> {
    Some(s.replace(['*', '%'], "")).filter(|f| !f.is_empty())
}

/// How a search endpoint's contract lets a name be matched the way a person types it, whatever
/// its case.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AnyCase {
    /// `ILIKE`, where the contract lists it.
    Ilike,
    /// The connection search's contract spells its case-insensitive operator `ILKE`, a word no
    /// other Fabric search takes: rather than bet on either spelling, `LIKE` the name as typed,
    /// in lower case and in upper case (`or` is the contract's own).
    Variants,
}

/// The name filter, if a name was given.
pub(crate) fn name_filters(args: &Value, filters: &mut Vec<Value>, how: AnyCase) -> Result<(), ToolError> {
    if let Some(fragment) = name_fragment(args) {
        filters.push(name_filter(&fragment, how));
    }
    Ok(())
}

/// A filter matching names that contain `fragment`.
pub(crate) fn name_filter(fragment: &str, how: AnyCase) -> Value {
    if how == AnyCase::Ilike {
        return json!({"property": "/name", "operator": "ILIKE", "values": [fragment]});
    }
    let mut forms: Vec<String> = Vec::new();
    for form in [String::from(fragment), fragment.to_lowercase(), fragment.to_uppercase()] {
        if !forms.contains(&form) {
            forms.push(form);
        }
    }
    let mut like: Vec<Value> =
        forms.into_iter().map(|f| json!({"property": "/name", "operator": "LIKE", "values": [f]})).collect();
    if like.len() == 1 { like.remove(0) } else { json!({"or": like}) }
}

/// An empty first page of a search by name says how names are matched and what to try, so an
/// agent does not read "no such name" into a name typed another way.
pub(crate) fn note_empty_name_search(out: &mut Value, args: &Value, how: AnyCase, instead: &str) {
    let Some(fragment) = name_fragment(args) else { return };
    if out["returned"] != json!(0) || out["offset"] != json!(0) {
        return;
    }
    let matched = match how {
        AnyCase::Ilike => "in any case",
        AnyCase::Variants => "as typed, in lower case or in upper case",
    };
    out["note"] = json!(format!(
        "no name contains \"{fragment}\" {matched} (a name matches when it contains the text; wildcards are \
         not needed); try a shorter part, or {instead}"
    ));
}

/// A search body: the filters (one, or `and` of several), paging.
pub(crate) fn search_body(filters: Vec<Value>, offset: u64, limit: u64) -> String {
    let mut body = Map::new();
    body.insert("pagination".into(), json!({"offset": offset, "limit": limit}));
    match filters.len() {
        0 => {}
        1 => {
            body.insert("filter".into(), filters.into_iter().next().unwrap());
        }
        _ => {
            body.insert("filter".into(), json!({"and": filters}));
        }
    }
    crate::json::json_text(&Value::Object(body))
}

pub(crate) fn post(path: &str, query: Vec<(String, String)>, body: String) -> FabricRequest {
    FabricRequest { method: Method::Post, path: path.into(), query, body: Some(body) }
}

pub(crate) fn get(path: String, query: Vec<(String, String)>) -> FabricRequest {
    FabricRequest { method: Method::Get, path, query, body: None }
}

pub(crate) fn get_by_id(
    host: &mut dyn Host,
    args: &Value,
    key: &str,
    collection: &str,
    result_key: &str,
    objects: &[&Object],
) -> Result<Value, ToolError> {
    let id = text(args, key).unwrap_or_default();
    let answer = send_json(host, get(format!("/fabric/v4/{collection}/{id}"), Vec::new()))
        .map_err(|e| unknown_id_hint(e, key, objects))?;
    Ok(one(answer, result_key))
}

/// A refused id (Fabric answers 400 or 404 for one it does not know) points to the search tool
/// that lists valid ones for the argument.
pub(crate) fn unknown_id_hint(e: ToolError, key: &str, objects: &[&Object]) -> ToolError {
    let status = e.details.get("status").and_then(Value::as_u64);
    let search = objects.iter().flat_map(|o| o.fields.iter()).find(|f| f.name == key).and_then(|f| f.values_from);
    match (status, search) {
        (Some(400 | 404), Some(tool)) => {
            let step = format!("Check {key}: {tool} lists the ones you can read.");
            e.with("next_step", json!(step))
        }
        _ => e,
    }
}
