//! How the simulator answers: pages, searches, gets by uuid, and the request helpers every route
//! shares (query, paging, JSON bodies, dry-run flag).

use std::collections::HashMap;

use axum::body::{Body, Bytes};
use axum::http::{StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use serde_json::{Value, json};

use crate::errors::{Fail, bytes_response, error_with, fail, json_bytes, metro_fail};
use crate::{estate, search};

/// What a route answers: a status and JSON bytes, or Fabric's error.
pub(crate) type Answer = Result<(StatusCode, Vec<u8>), Fail>;

pub(crate) fn respond(answer: Answer) -> Response {
    match answer {
        Ok((status, body)) => bytes_response(status, body),
        Err(f) => f.into_response(),
    }
}

/// An answer whose body breaks off: the client sees the status line, then a dead connection.
pub(crate) fn broken_answer(status: StatusCode) -> Response {
    let stream = futures_util::stream::once(async {
        Err::<Bytes, std::io::Error>(std::io::Error::other("simulated connection drop"))
    });
    (status, [("content-type", "application/json")], Body::from_stream(stream)).into_response()
}

/// Whether the request asks for a dry run.
pub(crate) fn is_dry_run(uri: &Uri) -> bool {
    uri.query().unwrap_or("").split('&').any(|kv| kv.eq_ignore_ascii_case("dryRun=true"))
}

pub(crate) fn query_map(uri: &Uri) -> HashMap<String, String> {
    uri.query()
        .unwrap_or("")
        .split('&')
        .filter(|kv| !kv.is_empty())
        .map(|kv| {
            let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
            (decode(k), decode(v))
        })
        .collect()
}

/// A query component as a form encoder wrote it: `+` for a space, `%XX` for a byte; a `%` not
/// followed by two hex digits stays as it is.
fn decode(s: &str) -> String {
    let b = s.as_bytes();
    let hex = |i: usize| b.get(i).and_then(|c| (*c as char).to_digit(16));
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match (b[i], hex(i + 1), hex(i + 2)) {
            (b'+', ..) => out.push(b' '),
            (b'%', Some(hi), Some(lo)) => {
                out.push((hi * 16 + lo) as u8);
                i += 2;
            }
            (c, ..) => out.push(c),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A request's JSON body (`null` when empty); malformed JSON is Fabric's 400.
pub(crate) fn json_body(body: &Bytes) -> Result<Value, Fail> {
    if body.is_empty() {
        return Ok(Value::Null);
    }
    serde_json::from_slice(body)
        .map_err(|e| fail(400, "EQ-3142501", &format!("Invalid input: malformed JSON body: {e}"), Some("body")))
}

/// Paging from query parameters; bad values are a 400 with Fabric's codes.
pub(crate) fn paging(q: &HashMap<String, String>) -> Result<(usize, usize), Fail> {
    let offset = match q.get("offset") {
        None => 0,
        Some(v) => v.parse::<usize>().map_err(|_| {
            metro_fail("Invalid Query Parameter", Some("offset"), "offset must be a non-negative integer")
        })?,
    };
    let limit = match q.get("limit") {
        None => 20,
        Some(v) => v.parse::<usize>().ok().filter(|n| (1..=100).contains(n)).ok_or_else(|| {
            metro_fail("Invalid Query Parameter", Some("limit"), "limit must be an integer from 1 to 100")
        })?,
    };
    Ok((offset, limit))
}

/// Paging from a search body's `pagination`.
fn body_paging(body: &Value) -> Result<(usize, usize), Fail> {
    let p = &body["pagination"];
    let offset = p["offset"].as_u64().unwrap_or(0) as usize;
    let limit = p["limit"].as_u64().unwrap_or(20) as usize;
    if !(1..=100).contains(&limit) {
        return Err(fail(400, "EQ-3142501", "Invalid input", Some("/pagination/limit")));
    }
    Ok((offset, limit))
}

/// One page of `items` as Fabric's JSON, written straight from the estate without copying it.
pub(crate) fn page<V: std::borrow::Borrow<Value>>(items: &[V], offset: usize, limit: usize) -> Vec<u8> {
    #[derive(Serialize)]
    struct Page<'a> {
        data: Vec<&'a Value>,
        pagination: Value,
    }
    let total = items.len();
    let data = items.iter().skip(offset).take(limit).map(|v| v.borrow()).collect();
    let mut pagination = json!({"offset": offset, "limit": limit, "total": total});
    if offset.saturating_add(limit) < total {
        pagination["next"] = json!(format!("?offset={}&limit={limit}", offset + limit));
    }
    json_bytes(&Page { data, pagination })
}

/// A `POST .../search` over `items` with `endpoint`'s filter rules.
pub(crate) fn search(items: &[Value], body: &Value, endpoint: &search::Endpoint, required: bool) -> Answer {
    let (offset, limit) = body_paging(body)?;
    let refuse = |property: &str, reason: &str| {
        let info = json!([{"property": property, "reason": reason}]);
        Fail(400, error_with(endpoint.error_code, endpoint.error_message, Some(info)))
    };
    let filter = body.get("filter");
    if required && filter.is_none() {
        return Err(refuse("filter", "filter is required"));
    }
    if let Some(f) = filter {
        endpoint.check(f).map_err(|(property, reason)| refuse(&property, &reason))?;
    }
    let mut hits = Vec::new();
    for item in items {
        let keep = match filter {
            None => true,
            Some(f) => search::matches(item, f).map_err(|e| refuse("filter", &e))?,
        };
        if keep {
            hits.push(item);
        }
    }
    Ok((StatusCode::OK, page(&hits, offset, limit)))
}

/// `GET .../{id}`: the object with that uuid, or `missing`.
pub(crate) fn by_uuid(items: &[Value], id: &str, missing: impl FnOnce() -> Fail) -> Answer {
    estate::find_by_uuid(items, id).map(|v| (StatusCode::OK, json_bytes(v))).ok_or_else(missing)
}

#[cfg(test)]
mod tests {
    use super::decode;

    #[test]
    fn a_query_component_decodes_as_a_form_encoder_wrote_it() {
        for (raw, decoded) in [
            ("2026-12-01T10%3A00%3A00.000000%2B0000", "2026-12-01T10:00:00.000000+0000"),
            ("a+b", "a b"),
            ("caf%C3%A9", "café"),
            ("100%", "100%"),
            ("%4", "%4"),
            ("%zz", "%zz"),
            ("%", "%"),
        ] {
            assert_eq!(decode(raw), decoded, "{raw}");
        }
    }
}
