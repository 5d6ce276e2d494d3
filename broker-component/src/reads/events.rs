//! The `events` toolset: the cloud events Fabric records (state changes, BGP sessions going up
//! and down, with its message), searched by asset, type, severity and window, newest first.

use alloc::format;
use alloc::vec::Vec;
use serde_json::{Value, json};

use super::compact::pick;
use super::requests::{fragment, get_by_id, post};
use super::window::{END, START, WINDOW, stated_window};
use crate::args::{LIMIT, OFFSET, paging, text};
use crate::capability::Host;
use crate::fabric_call::{paged, send_json};
use crate::grammar::{Kind, Object, UUID, arguments, opt, req, text as text_kind};
use crate::time::format_rfc3339_ms;
use crate::tool::{Output, ToolDef, read};
use crate::tool_error::ToolError;

const SEARCH: &str = "fabric_search_events";

/// OpenTelemetry's severity texts, which Fabric's events carry.
const SEVERITIES: &[&str] = &["TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL"];

static SEARCH_ARGS: Object = arguments(&[
    opt("asset_id", UUID, "A connection, port, router, network or token"),
    opt("type", text_kind(64), "Part of the type, e.g. bgp or state"),
    opt("severity", Kind::Enum(SEVERITIES), "Severity"),
    WINDOW,
    START,
    END,
    OFFSET,
    LIMIT,
]);
static GET_ARGS: Object = arguments(&[req("event_id", UUID, "").from(SEARCH)]);

pub(crate) static TOOLS: [ToolDef; 2] = [
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
    // a subject names its asset by path (`/fabric/v4/connections/{id}`, and its routing
    // protocols below it): the id anywhere in it finds both
    if let Some(id) = text(args, "asset_id") {
        and.push(json!({"property": "/subject", "operator": "LIKE", "values": [format!("%{id}%")]}));
    }
    if let Some(kind) = text(args, "type").and_then(fragment) {
        and.push(json!({"property": "/type", "operator": "ILIKE", "values": [format!("%{kind}%")]}));
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
    get_by_id(host, args, "event_id", "cloudevents", "event", &[&GET_ARGS])
}
