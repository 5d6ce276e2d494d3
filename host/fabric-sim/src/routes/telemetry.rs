//! Statistics and metrics of ports and connections over a window: bandwidth utilisation
//! (`/stats`, the `Statistics` model) and packet counts (`/metrics`, `GetMetricsByAssetResponse`),
//! computed from the seeded traffic curves so that every window reads differently.

use std::collections::HashMap;

use axum::extract::{Path, State};
use axum::http::{StatusCode, Uri};
use axum::response::Response;
use serde_json::{Value, json};

use super::connectivity::with_estate;
use crate::answer::{Answer, query_map, respond};
use crate::errors::{Fail, error_with, json_bytes, not_found, unknown_id};
use crate::estate::{Estate, find_by_uuid};
use crate::instant;
use crate::seed::telemetry::{self, Traffic};
use crate::state::Sim;

/// A port or a connection.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Asset {
    Port,
    Connection,
}

impl Asset {
    fn find<'a>(self, e: &'a Estate, id: &str) -> Result<&'a Value, Fail> {
        match self {
            Asset::Port => e.port(id).ok_or_else(|| unknown_id("EQ-3035202", "Unable to fetch port details", "portId")),
            Asset::Connection => find_by_uuid(&e.connections, id).ok_or_else(|| not_found("connection")),
        }
    }
}

fn bad_query(parameter: &str, reason: &str) -> Fail {
    let info = json!([{"property": parameter, "reason": reason}]);
    Fail(400, error_with("EQ-3040051", "Invalid query parameter", Some(info)))
}

/// The window `[start, end]` in Unix seconds from two query parameters, both required.
fn window(q: &HashMap<String, String>, from: &str, to: &str) -> Result<(i64, i64), Fail> {
    let at = |key: &str| -> Result<i64, Fail> {
        let v = q.get(key).ok_or_else(|| bad_query(key, &format!("{key} is required")))?;
        instant::parse(v).ok_or_else(|| bad_query(key, &format!("{key} must be an ISO 8601 date-time, not {v:?}")))
    };
    let (start, end) = (at(from)?, at(to)?);
    if start >= end {
        return Err(bad_query(from, &format!("{from} must be before {to}")));
    }
    // a day's points over a year at most: Fabric keeps no more
    if end - start > 366 * 86_400 {
        return Err(bad_query(from, "a window is at most a year"));
    }
    Ok((start, end))
}

fn round(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// One direction's utilisation: the mean and peak of each interval, and of the whole window.
fn direction(peak: f64, ends: &[i64], step: i64, capacity: f64) -> Value {
    let metrics: Vec<(i64, f64, f64)> = ends
        .iter()
        .map(|t| {
            let mean = peak * telemetry::share(t - step / 2);
            (*t, round(mean), round((mean * 1.2).min(capacity.max(mean))))
        })
        .collect();
    let n = metrics.len().max(1) as f64;
    let mean = round(metrics.iter().map(|m| m.1).sum::<f64>() / n);
    let max = metrics.iter().map(|m| m.2).fold(0.0, f64::max);
    let rows: Vec<Value> = metrics
        .iter()
        .map(|(t, mean, max)| json!({"intervalEndTimestamp": instant::format(*t), "max": max, "mean": mean}))
        .collect();
    json!({"max": max, "mean": mean, "metrics": rows})
}

/// `GET /ports/{id}/stats` and `GET /connections/{id}/stats` (this one with `viewPoint`): the
/// bandwidth in and out over the window, as the chosen end sees it.
pub(super) async fn stats(State(sim): State<Sim>, Path(id): Path<String>, uri: Uri, asset: Asset) -> Response {
    let q = query_map(&uri);
    respond(with_estate(&sim, |e| -> Answer {
        let found = asset.find(e, &id)?;
        let capacity = found["bandwidth"].as_f64().unwrap_or(0.0);
        let (start, end) = window(&q, "startDateTime", "endDateTime")?;
        let Traffic { peak_mbps: (peak_in, peak_out), .. } = telemetry::traffic(&id);
        let (mut inbound, mut outbound) = (*peak_in, *peak_out);
        let mut body = json!({"startDateTime": instant::format(start), "endDateTime": instant::format(end)});
        if asset == Asset::Connection {
            let view = q.get("viewPoint").ok_or_else(|| bad_query("viewPoint", "viewPoint is required"))?;
            match view.as_str() {
                "aSide" => {}
                // what enters at one end leaves at the other
                "zSide" => std::mem::swap(&mut inbound, &mut outbound),
                other => return Err(bad_query("viewPoint", &format!("viewPoint is aSide or zSide, not {other:?}"))),
            }
            body["viewPoint"] = json!(view);
        }
        let (step, name) = telemetry::interval(end - start);
        let ends: Vec<i64> = telemetry::interval_ends(start, end, step).collect();
        body["bandwidthUtilization"] = json!({
            "unit": "Mbps",
            "metricInterval": name,
            "inbound": direction(inbound, &ends, step, capacity),
            "outbound": direction(outbound, &ends, step, capacity),
        });
        Ok((StatusCode::OK, json_bytes(&body)))
    }))
}

/// The count metrics each asset offers, and how to read one from its traffic: (name, per five
/// minutes).
fn counter(asset: Asset, name: &str, t: &Traffic) -> Option<f64> {
    let per_5m = match (asset, name.strip_prefix("equinix.fabric.")?) {
        (Asset::Port, "port.packets_dropped_rx.count") => t.dropped.0,
        (Asset::Port, "port.packets_dropped_tx.count") => t.dropped.1,
        (Asset::Port, "port.packets_erred_rx.count") => t.erred.0,
        (Asset::Port, "port.packets_erred_tx.count") => t.erred.1,
        // a seeded connection's rate limit bites on its A-side only
        (Asset::Connection, "connection.packets_dropped_rx_aside_rateexceeded.count") => t.dropped.0,
        (Asset::Connection, "connection.packets_dropped_tx_aside_rateexceeded.count") => t.dropped.1,
        (
            Asset::Connection,
            "connection.packets_dropped_rx_zside_rateexceeded.count"
            | "connection.packets_dropped_tx_zside_rateexceeded.count",
        ) => 0.0,
        _ => return None,
    };
    Some(per_5m)
}

/// `GET /ports/{id}/metrics` and `GET /connections/{id}/metrics`: one count metric by `name`
/// over `fromDateTime`..`toDateTime`, a data point per interval.
pub(super) async fn metrics(State(sim): State<Sim>, Path(id): Path<String>, uri: Uri, asset: Asset) -> Response {
    let q = query_map(&uri);
    respond(with_estate(&sim, |e| -> Answer {
        let found = asset.find(e, &id)?;
        let name = q.get("name").ok_or_else(|| bad_query("name", "name is required"))?;
        let traffic = telemetry::traffic(&id);
        let per_5m = counter(asset, name, traffic)
            .ok_or_else(|| bad_query("name", &format!("{name} is not a metric of this asset")))?;
        let (start, end) = window(&q, "fromDateTime", "toDateTime")?;
        let (step, interval) = telemetry::interval(end - start);
        let points: Vec<Value> = telemetry::interval_ends(start, end, step)
            .map(|t| {
                // counts follow the traffic curve, scaled from five minutes to the interval
                let value = (per_5m * (step / 300) as f64 * telemetry::share(t - step / 2)).round();
                json!({"startDateTime": instant::format(t - step), "endDateTime": instant::format(t), "value": value})
            })
            .collect();
        let metric = json!({
            "type": "COUNTER",
            "name": name,
            "unit": "count",
            "interval": interval,
            "resource": {"href": found["href"], "uuid": id, "type": found["type"], "name": found["name"],
                         "state": found["state"]},
            "datapoints": points,
        });
        let body = json!({"pagination": {"offset": 0, "limit": 1, "total": 1}, "data": [metric]});
        Ok((StatusCode::OK, json_bytes(&body)))
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_reads_as_fabric_reads_it() {
        let q = |pairs: &[(&str, &str)]| pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        let ok = window(&q(&[("a", "2026-12-01T10:00:00Z"), ("b", "2026-12-01T11:00:00.000000+0000")]), "a", "b");
        assert_eq!(ok.ok(), Some((1_796_119_200, 1_796_122_800)));
        for pairs in [
            vec![("a", "1970-01-01T00:00:00Z"), ("b", "9999-12-31T23:59:59Z")],
            vec![("b", "2026-12-01T11:00:00Z")],
            vec![("a", "soon"), ("b", "2026-12-01T11:00:00Z")],
            vec![("a", "2026-12-01T11:00:00Z"), ("b", "2026-12-01T10:00:00Z")],
        ] {
            assert!(window(&q(&pairs), "a", "b").is_err(), "{pairs:?}");
        }
    }

    #[test]
    fn utilisation_follows_the_day_and_never_exceeds_what_the_asset_carries() {
        let (step, _) = telemetry::interval(3_600);
        let at = |start: i64| {
            let ends: Vec<i64> = telemetry::interval_ends(start, start + 3_600, step).collect();
            direction(49.0, &ends, step, 50.0)
        };
        let afternoon = at(1_764_594_000); // 13:00 UTC
        let night = at(1_764_550_800); // 01:00 UTC
        assert_eq!(afternoon["metrics"].as_array().unwrap().len(), 12);
        assert!(afternoon["mean"].as_f64() > night["mean"].as_f64(), "{afternoon} {night}");
        assert!(afternoon["max"].as_f64().unwrap() <= 50.0, "{afternoon}");
    }

    #[test]
    fn a_window_reads_the_intervals_it_overlaps() {
        let ends = |start: i64, end: i64| telemetry::interval_ends(start, end, 300).collect::<Vec<_>>();
        assert_eq!(ends(3_600, 7_200).len(), 12, "an hour on the grid: twelve intervals");
        assert_eq!(ends(3_660, 3_840), [3_900], "three minutes inside one interval read it");
        assert_eq!(ends(3_660, 3_960), [3_900, 4_200], "straddling two reads both");
    }
}
