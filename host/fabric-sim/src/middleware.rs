//! What every Fabric route goes through, outermost first: the request is recorded, delayed
//! (latency knob, a stall fault), checked for a live bearer token, and answered by a queued fault
//! when one matches. The OAuth and `/_sim` routes stand outside all of it.

use std::time::{Duration, Instant};

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde_json::json;

use crate::answer::{broken_answer, is_dry_run};
use crate::errors::{error_array, error_with, fail, json_response};
use crate::faults::{Fault, FaultMode};
use crate::state::{REMEMBERED_REQUESTS, Seen, Sim};

/// The largest request body the simulator reads.
const MAX_BODY: usize = 16 << 20;

/// The fault chosen for this request, from [`delay`] to [`apply_fault`].
#[derive(Clone)]
struct Chosen(Fault);

/// Records the request (its body too, up to 4 KiB) in the stats.
pub(crate) async fn record(State(sim): State<Sim>, request: Request, next: Next) -> Response {
    let (parts, body) = request.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, MAX_BODY).await else {
        return fail(413, "EQ-3142501", "Invalid input: the body is too large", Some("body")).into_response();
    };
    {
        let mut inner = sim.lock();
        if inner.stats.requests.len() >= REMEMBERED_REQUESTS {
            inner.stats.requests.pop_front();
        }
        inner.stats.requests.push_back(Seen {
            method: parts.method.to_string(),
            path: parts.uri.path().to_string(),
            query: parts.uri.query().unwrap_or("").to_string(),
            correlation_id: parts.headers.get("x-correlation-id").and_then(|v| v.to_str().ok()).map(str::to_owned),
            body: (!bytes.is_empty() && bytes.len() <= 4 << 10).then(|| String::from_utf8_lossy(&bytes).into_owned()),
        });
    }
    next.run(Request::from_parts(parts, Body::from(bytes))).await
}

/// Applies the latency knob, picks the fault queued for this route (a stall waits here).
pub(crate) async fn delay(State(sim): State<Sim>, mut request: Request, next: Next) -> Response {
    let key = format!(
        "{} {}{}",
        request.method(),
        request.uri().path(),
        if is_dry_run(request.uri()) { "?dryRun=true" } else { "" }
    );
    let (latency, fault) = {
        let mut inner = sim.lock();
        let fault = crate::faults::take(&mut inner.faults, &key);
        (inner.config.latency, fault)
    };
    if !latency.is_zero() {
        tokio::time::sleep(latency).await;
    }
    if let Some(f) = fault {
        if f.mode == FaultMode::Stall {
            tokio::time::sleep(Duration::from_millis(f.stall_ms)).await;
        }
        request.extensions_mut().insert(Chosen(f));
    }
    next.run(request).await
}

/// Fabric's 401 for a missing, unknown or expired token (the metros API words it its own way).
pub(crate) async fn require_token(State(sim): State<Sim>, request: Request, next: Next) -> Response {
    let valid = {
        let inner = sim.lock();
        let bearer = request
            .headers()
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "));
        bearer.and_then(|t| inner.tokens.get(t)).is_some_and(|exp| Instant::now() < *exp)
    };
    if valid {
        return next.run(request).await;
    }
    if request.uri().path().starts_with("/fabric/v4/metros") {
        let info = json!([{"reason": "You are unauthorized to perform this operation"}]);
        return json_response(StatusCode::UNAUTHORIZED, error_with("EQ-3036001", "Unauthorized", Some(info)));
    }
    fail(401, "EQ-3000039", "User not found in request or invalid.", None).into_response()
}

/// Answers with the chosen `respond` fault, or breaks the connection after a `drop` fault's
/// request was processed (a create persists, its answer never arrives).
pub(crate) async fn apply_fault(request: Request, next: Next) -> Response {
    let chosen = request.extensions().get::<Chosen>().cloned();
    match chosen {
        Some(Chosen(f)) if f.mode == FaultMode::Respond => {
            let status = StatusCode::from_u16(f.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
            let body = f.body.unwrap_or_else(|| {
                error_array("EQ-3045004", &format!("Injected fault: HTTP {}", f.status), None).to_string()
            });
            let mut response = (status, [("content-type", "application/json")], body).into_response();
            if let Some(secs) = f.retry_after {
                response.headers_mut().insert("retry-after", secs.into());
            }
            response
        }
        Some(Chosen(f)) if f.mode == FaultMode::Drop => broken_answer(next.run(request).await.status()),
        _ => next.run(request).await,
    }
}
