//! `GET /healthz`, `GET /readyz` and `GET /readyz/mutations` for load balancers and orchestrators:
//! answered without a bearer token, before the session guard, and saying nothing beyond "ok" or
//! why not ready.

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;

use crate::mcp::McpServer;

/// How long readiness waits for the proposal store before calling it unreachable.
const STORE_PING: std::time::Duration = std::time::Duration::from_secs(1);

pub(crate) fn routes(broker: McpServer) -> axum::Router {
    axum::Router::new()
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .route("/readyz/mutations", get(mutations))
        .with_state(broker)
}

/// Alive: the process answers HTTP.
async fn healthz() -> Response {
    (StatusCode::OK, "ok\n").into_response()
}

/// Ready to serve: the component is loaded (the server only listens once it is) and shutdown has
/// not begun. A proposal store that cannot take writes does not fail it: reads need no store,
/// and every replica shares the store, so a load balancer that pulled one for it would pull them
/// all. The body says it (`ready; creates fail closed: ...`); `/readyz/mutations` answers 503.
async fn readyz(State(broker): State<McpServer>) -> Response {
    ready(&broker, false).await
}

/// Ready to propose and confirm: [`readyz`], and the proposal store takes writes.
async fn mutations(State(broker): State<McpServer>) -> Response {
    ready(&broker, true).await
}

async fn ready(broker: &McpServer, needs_store: bool) -> Response {
    if broker.shared().lifecycle.is_draining() {
        return (StatusCode::SERVICE_UNAVAILABLE, "draining\n").into_response();
    }
    match (store_ready(broker).await, needs_store) {
        (Ok(()), _) => (StatusCode::OK, "ready\n").into_response(),
        (Err(why), false) => (StatusCode::OK, format!("ready; creates fail closed: {why}\n")).into_response(),
        (Err(why), true) => (StatusCode::SERVICE_UNAVAILABLE, format!("{why}\n")).into_response(),
    }
}

/// Whether the proposal store takes writes; why not, in words that name no address (the answer
/// needs no token; the log has the rest, once per state: see [`noted`]).
async fn store_ready(broker: &McpServer) -> Result<(), &'static str> {
    let (state, detail) = match tokio::time::timeout(STORE_PING, broker.shared().grants.proposals.ping()).await {
        Ok(Ok(())) => (Ok(()), String::new()),
        Ok(Err(e)) => (Err(e.cause.readiness()), e.to_string()),
        Err(_) => (Err("proposal store unreachable"), format!("no answer within {} s", STORE_PING.as_secs())),
    };
    noted(state, &detail);
    state
}

/// What the probes last found of the store: a load balancer probes every few seconds, and an
/// outage is logged once, as it begins (and as its cause changes), with one line when it ends.
static LAST_STATE: std::sync::Mutex<Option<&'static str>> = std::sync::Mutex::new(None);

fn noted(state: Result<(), &'static str>, detail: &str) {
    let mut last = LAST_STATE.lock().unwrap_or_else(|p| p.into_inner());
    match (state, *last) {
        (Ok(()), Some(_)) => tracing::info!("the proposal store takes writes again"),
        (Err(now), before) if before != Some(now) => tracing::warn!("not ready for mutations: {detail}"),
        _ => {}
    }
    *last = state.err();
}
