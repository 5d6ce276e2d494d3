//! `GET /healthz` and `GET /readyz` for load balancers and orchestrators: answered without a
//! bearer token, before the session guard, and saying nothing beyond "ok" or why not ready.

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;

use crate::mcp::McpServer;

/// How long readiness waits for the proposal store before calling it unreachable.
const STORE_PING: std::time::Duration = std::time::Duration::from_secs(1);

pub fn routes(broker: McpServer) -> axum::Router {
    axum::Router::new().route("/healthz", get(healthz)).route("/readyz", get(readyz)).with_state(broker)
}

/// Alive: the process answers HTTP.
async fn healthz() -> Response {
    (StatusCode::OK, "ok\n").into_response()
}

/// Ready: the component is loaded (the server only listens once it is), the proposal store
/// answers, and shutdown has not begun.
async fn readyz(State(broker): State<McpServer>) -> Response {
    let shared = broker.shared();
    if shared.lifecycle.is_draining() {
        return (StatusCode::SERVICE_UNAVAILABLE, "draining\n").into_response();
    }
    match tokio::time::timeout(STORE_PING, shared.grants.proposals.ping()).await {
        Ok(Ok(())) => (StatusCode::OK, "ready\n").into_response(),
        // why, in words that name no address (the answer needs no token); the log has the rest
        Ok(Err(e)) => {
            tracing::warn!("not ready: {e}");
            (StatusCode::SERVICE_UNAVAILABLE, format!("{}\n", e.cause.readiness())).into_response()
        }
        Err(_) => (StatusCode::SERVICE_UNAVAILABLE, "proposal store unreachable\n").into_response(),
    }
}
