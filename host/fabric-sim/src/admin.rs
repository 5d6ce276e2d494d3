//! `/_sim/*`: the knobs and counters tests and demos use. Real Fabric has nothing like them.

use std::time::Duration;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use serde::Deserialize;
use serde_json::json;

use crate::errors::json_response;
use crate::faults::Fault;
use crate::state::Sim;

pub(crate) async fn stats(State(sim): State<Sim>) -> Response {
    json_response(StatusCode::OK, serde_json::to_value(&sim.lock().stats).unwrap())
}

pub(crate) async fn fault(State(sim): State<Sim>, body: Bytes) -> Response {
    match serde_json::from_slice::<Fault>(&body) {
        Ok(f) => {
            sim.lock().faults.push_back(f);
            json_response(StatusCode::OK, json!({"queued": true}))
        }
        Err(e) => json_response(
            StatusCode::BAD_REQUEST,
            json!({
                "error": format!("bad fault: {e}"),
                "expected": {"route": "POST /fabric/v4/connections", "mode": "respond | drop | stall", "status": 503,
                    "body": "(optional raw body)", "times": 1, "stall_ms": 0, "retry_after": 2},
                "see": "docs/simulator.md, \"The Fabric simulator\": only `route` is required"
            }),
        ),
    }
}

#[derive(Deserialize)]
struct Advance {
    advance_ms: u64,
}

pub(crate) async fn clock(State(sim): State<Sim>, body: Bytes) -> Response {
    let inner = sim.lock();
    let Some(clock) = &inner.config.clock else {
        return json_response(StatusCode::CONFLICT, json!({"error": "this simulator shares no clock with a server"}));
    };
    match serde_json::from_slice::<Advance>(&body) {
        Ok(a) => {
            clock.advance(a.advance_ms);
            json_response(StatusCode::OK, json!({"now_ms": clock.now_ms()}))
        }
        Err(e) => {
            json_response(StatusCode::BAD_REQUEST, json!({"error": format!("expected {{\"advance_ms\": N}}: {e}")}))
        }
    }
}

#[derive(Deserialize)]
struct Latency {
    ms: u64,
}

pub(crate) async fn latency(State(sim): State<Sim>, body: Bytes) -> Response {
    match serde_json::from_slice::<Latency>(&body) {
        Ok(l) => {
            sim.lock().config.latency = Duration::from_millis(l.ms);
            json_response(StatusCode::OK, json!({"latency_ms": l.ms}))
        }
        Err(e) => json_response(StatusCode::BAD_REQUEST, json!({"error": format!("expected {{\"ms\": N}}: {e}")})),
    }
}
