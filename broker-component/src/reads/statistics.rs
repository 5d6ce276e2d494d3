//! The `statistics` toolset: a port's or a connection's traffic over a window — bandwidth in and
//! out (mean and peak, in Mbps and as a share of what the asset carries) from Fabric's
//! statistics, and its packet counts from Fabric's metrics: dropped and erred packets for a
//! port, packets dropped over the rate limit for a connection (Fabric counts errors on ports).

use alloc::format;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;
use serde_json::{Map, Value, json};

use super::requests::{get, unknown_id_hint};
use super::window::{END, HOUR_MS, START, WINDOW, Window, window};
use crate::args::text;
use crate::capability::Host;
use crate::fabric_call::send_json;
use crate::grammar::{Kind, Object, UUID, arguments, opt, req};
use crate::tool::{Output, ToolDef, read};
use crate::tool_error::ToolError;

static PORT_ARGS: Object = arguments(&[req("port_id", UUID, "").from("fabric_search_ports"), WINDOW, START, END]);
static CONNECTION_ARGS: Object = arguments(&[
    req("connection_id", UUID, "").from("fabric_search_connections"),
    opt("view_point", Kind::Enum(&["aSide", "zSide"]), "Which end's view (aSide)"),
    WINDOW,
    START,
    END,
]);

pub(crate) static TOOLS: [ToolDef; 2] = [
    read(
        "fabric_get_port_statistics",
        "statistics",
        "Port traffic",
        "Bandwidth in and out, dropped and erred packets, in a window (last hour).",
        &PORT_ARGS,
        Output::Members(&[("port", "object"), ("window", "object"), ("inbound", "object"), ("outbound", "object")]),
        port_statistics,
    ),
    read(
        "fabric_get_connection_statistics",
        "statistics",
        "Connection traffic",
        "Bandwidth in and out, packets dropped over the rate limit, in a window (last hour).",
        &CONNECTION_ARGS,
        Output::Members(&[
            ("connection", "object"),
            ("window", "object"),
            ("inbound", "object"),
            ("outbound", "object"),
        ]),
        connection_statistics,
    ),
];

/// A non-negative figure to one decimal place (no `f64::round` without std).
fn tenth(x: f64) -> f64 {
    if x.is_finite() && x > 0.0 { ((x * 10.0 + 0.5) as u64) as f64 / 10.0 } else { 0.0 }
}

/// One direction of `bandwidthUtilization`, in Mbps and as a share of `capacity` Mbps.
fn utilisation(direction: &Value, capacity: f64) -> Map<String, Value> {
    let mut out = Map::new();
    for (key, field) in [("mean_mbps", "mean"), ("peak_mbps", "max")] {
        let mbps = direction[field].as_f64().unwrap_or(0.0);
        out.insert(key.into(), json!(tenth(mbps)));
        if capacity > 0.0 {
            let share = if field == "mean" { "mean_percent" } else { "peak_percent" };
            out.insert(share.into(), json!(tenth(mbps * 100.0 / capacity)));
        }
    }
    out
}

/// The sum of a count metric over the window.
fn count(host: &mut dyn Host, path: &str, name: &str, w: &Window) -> Result<u64, ToolError> {
    let query = vec![
        ("name".into(), name.into()),
        ("fromDateTime".into(), w.start.clone()),
        ("toDateTime".into(), w.end.clone()),
    ];
    let answer = send_json(host, get(format!("{path}/metrics"), query))?;
    let points = answer.pointer("/data/0/datapoints").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    Ok(points.iter().filter_map(|p| p["value"].as_f64()).map(|v| if v > 0.0 { v as u64 } else { 0 }).sum())
}

/// The asset (for its name and capacity, and a clear error when it is unknown), its statistics
/// over the window, and its counters: `(member, metric)` for inbound, then outbound.
#[allow(clippy::too_many_arguments)]
fn statistics(
    host: &mut dyn Host,
    args: &Value,
    key: &str,
    collection: &str,
    member: &str,
    objects: &[&Object],
    view_point: Option<&str>,
    counters: &[(&str, String, String)],
) -> Result<Value, ToolError> {
    let w = window(host, args, HOUR_MS)?;
    let id = text(args, key).unwrap_or_default();
    let path = format!("/fabric/v4/{collection}/{id}");
    let asset = send_json(host, get(path.clone(), Vec::new())).map_err(|e| unknown_id_hint(e, key, objects))?;
    let capacity = asset["bandwidth"].as_f64().unwrap_or(0.0);
    let mut query = vec![("startDateTime".into(), w.start.clone()), ("endDateTime".into(), w.end.clone())];
    if let Some(v) = view_point {
        query.push(("viewPoint".into(), v.into()));
    }
    let stats = send_json(host, get(format!("{path}/stats"), query))?;
    let usage = &stats["bandwidthUtilization"];
    let (mut inbound, mut outbound) =
        (utilisation(&usage["inbound"], capacity), utilisation(&usage["outbound"], capacity));
    for (field, rx, tx) in counters {
        inbound.insert((*field).into(), json!(count(host, &path, rx, &w)?));
        outbound.insert((*field).into(), json!(count(host, &path, tx, &w)?));
    }
    let mut about = json!({"uuid": id, "name": asset["name"], "bandwidth_mbps": asset["bandwidth"]});
    if let Some(v) = view_point {
        about["view_point"] = json!(v);
    }
    let mut out = Map::new();
    out.insert(member.into(), about);
    out.insert("window".into(), json!({"start": w.start, "end": w.end, "interval": usage["metricInterval"]}));
    out.insert("inbound".into(), Value::Object(inbound));
    out.insert("outbound".into(), Value::Object(outbound));
    Ok(Value::Object(out))
}

fn port_statistics(host: &mut dyn Host, args: &Value) -> Result<Value, ToolError> {
    let metric = |what: &str, dir: &str| format!("equinix.fabric.port.packets_{what}_{dir}.count");
    let counters = [
        ("dropped_packets", metric("dropped", "rx"), metric("dropped", "tx")),
        ("erred_packets", metric("erred", "rx"), metric("erred", "tx")),
    ];
    statistics(host, args, "port_id", "ports", "port", &[&PORT_ARGS], None, &counters)
}

fn connection_statistics(host: &mut dyn Host, args: &Value) -> Result<Value, ToolError> {
    let view = text(args, "view_point").unwrap_or("aSide");
    let side = if view == "zSide" { "zside" } else { "aside" };
    let metric = |dir: &str| format!("equinix.fabric.connection.packets_dropped_{dir}_{side}_rateexceeded.count");
    let counters = [("dropped_over_rate_limit", metric("rx"), metric("tx"))];
    statistics(host, args, "connection_id", "connections", "connection", &[&CONNECTION_ARGS], Some(view), &counters)
}
