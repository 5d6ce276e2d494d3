//! The `events` toolset: the cloud events Fabric records (state changes, BGP sessions going up
//! and down, with its message), searched by asset, type, severity and window, newest first.

use alloc::format;
use alloc::vec::Vec;
use serde_json::{Value, json};

use super::compact::{one, pick};
use super::requests::{get, post, unknown_id_hint};
use super::window::{END, START, WINDOW, stated_window};
use crate::args::{LIMIT, OFFSET, paging, text};
use crate::capability::Host;
use crate::fabric_call::{paged, send_json};
use crate::grammar::{Kind, Object, TEXT, UUID, arguments, opt, req};
use crate::time::format_rfc3339_ms;
use crate::tool::{Output, ToolDef, read};
use crate::tool_error::ToolError;

const SEARCH: &str = "fabric_search_events";

/// OpenTelemetry's severity texts, which Fabric's events carry.
const SEVERITIES: &[&str] = &["TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL"];

static SEARCH_ARGS: Object = arguments(&[
    opt("asset_id", UUID, "A connection, port, router, network or token"),
    opt("type", TEXT, "Part of the type, e.g. bgp or state"),
    opt("severity", Kind::Enum(SEVERITIES), "Severity"),
    WINDOW,
    START,
    END,
    OFFSET,
    LIMIT,
]);
static GET_ARGS: Object = arguments(&[req("event_id", TEXT, "").from(SEARCH)]);

pub static TOOLS: [ToolDef; 2] = [
    read(
        SEARCH,
        "events",
        "Search events",
        "An asset's events, newest first: state changes, BGP sessions up and down.",
        &SEARCH_ARGS,
        Output::Page("events", &[]),
        search_events,
    ),
    read(
        "fabric_get_event",
        "events",
        "Get an event",
        "The whole event, with its message.",
        &GET_ARGS,
        Output::One("event"),
        get_event,
    ),
];

/// A like-pattern matching `s` anywhere.
fn anywhere(s: &str) -> Value {
    json!([format!("%{}%", s.replace('%', ""))])
}

/// The search body: an `and` of the criteria, always with a bound on `/time` (the window, or
/// up to now) so the filter this search requires is never empty.
fn search_events(host: &mut dyn Host, args: &Value) -> Result<Value, ToolError> {
    let (offset, limit) = paging(args);
    let mut and = Vec::new();
    match stated_window(host, args)? {
        Some(w) => and.push(json!({"property": "/time", "operator": "BETWEEN", "values": [w.start, w.end]})),
        None => {
            let now = format_rfc3339_ms(host.now_ms());
            and.push(json!({"property": "/time", "operator": "<=", "values": [now]}));
        }
    }
    if let Some(id) = text(args, "asset_id") {
        and.push(json!({"property": "/subject", "operator": "LIKE", "values": anywhere(id)}));
    }
    if let Some(kind) = text(args, "type") {
        and.push(json!({"property": "/type", "operator": "ILIKE", "values": anywhere(kind)}));
    }
    if let Some(severity) = text(args, "severity") {
        and.push(json!({"property": "/severitytext", "operator": "=", "values": [severity]}));
    }
    let body = json!({"filter": {"and": and}, "pagination": {"offset": offset, "limit": limit}});
    let answer = send_json(host, post("/fabric/v4/cloudevents/search", Vec::new(), crate::json::json_text(&body)))?;
    Ok(paged(answer, "events", offset, compact_event))
}

/// An event in a page: its id, when and what (the type without Fabric's common prefix: it names
/// the kind of asset and the new state), in about 100 bytes so a page of 20 stays within 2 KB;
/// its severity, message, subject and resource are in the whole event.
fn compact_event(e: &Value) -> Value {
    let mut out = pick(e, &[("id", "/id"), ("time", "/time")]);
    if let Some(kind) = e["type"].as_str() {
        out.insert("type".into(), json!(kind.strip_prefix("equinix.fabric.").unwrap_or(kind)));
    }
    Value::Object(out)
}

fn get_event(host: &mut dyn Host, args: &Value) -> Result<Value, ToolError> {
    let id = text(args, "event_id").unwrap_or_default();
    let answer = send_json(host, get(format!("/fabric/v4/cloudevents/{id}"), Vec::new()))
        .map_err(|e| unknown_id_hint(e, "event_id", &[&GET_ARGS]))?;
    Ok(one(answer, "event"))
}
