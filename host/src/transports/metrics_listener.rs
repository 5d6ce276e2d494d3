//! The metrics listener (`--metrics-listen`): `/metrics` on an address of its own, with the
//! hygiene of `/mcp`'s listener and limits of its own.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use tokio_util::sync::CancellationToken;

use crate::metrics::{PendingCount, metrics, scrape};

/// Where `/metrics` is served.
#[derive(clap::Args, Debug, Clone)]
pub struct MetricsArgs {
    /// Serve Prometheus metrics at http://ADDR/metrics (a bare port means 127.0.0.1:PORT). Off
    /// unless given; keep it off the public interface (it needs no token).
    #[arg(long, env = "EQUINIX_MCP_METRICS_LISTEN", value_name = "ADDR", value_parser = parse_metrics_listen)]
    pub(crate) metrics_listen: Option<SocketAddr>,
}

/// `PORT` (loopback) or `IP:PORT`.
fn parse_metrics_listen(text: &str) -> Result<SocketAddr, String> {
    if let Ok(port) = text.parse::<u16>() {
        return Ok(SocketAddr::from(([127, 0, 0, 1], port)));
    }
    text.parse().map_err(|_| format!("{text:?}: expected PORT or IP:PORT (e.g. 9464 or 127.0.0.1:9464)"))
}

/// Connections the metrics listener serves at once: a scraper or two, with room to spare.
pub(crate) const MAX_CONNECTIONS: usize = 16;

/// Serves `GET /metrics` on `addr` until `stop` fires, with the hygiene of `/mcp`'s listener
/// and limits of its own: at most [`MAX_CONNECTIONS`] connections (a new one closes the oldest
/// that has not sent a valid request), the header deadline, a `Host` check (`hosts`: the
/// loopback names and `--allowed-host`; IP literals pass) and no request bodies.
pub(crate) async fn serve(
    addr: SocketAddr,
    pending: PendingCount,
    hosts: Vec<String>,
    header_read_timeout: Duration,
    stop: CancellationToken,
) -> anyhow::Result<SocketAddr> {
    use super::http::{connections::SlotLimits, host_check, listener};
    let listener = listener::bind(addr).with_context(|| format!("binding --metrics-listen {addr}"))?;
    let bound = listener.local_addr()?;
    let app = axum::Router::new()
        .route("/metrics", axum::routing::get(scrape))
        .fallback(|| async { (StatusCode::NOT_FOUND, "metrics are at /metrics\n") })
        .with_state(pending)
        .layer(axum::middleware::from_fn(no_body))
        .layer(axum::middleware::from_fn(scraper_holds))
        .layer(axum::middleware::from_fn_with_state(Arc::new(hosts), host_check::require));
    // a scraper's address holds at most half the slots once its request passed the Host check,
    // so a scraper elsewhere always finds room
    let slots = SlotLimits {
        max_connections: MAX_CONNECTIONS,
        per_principal: MAX_CONNECTIONS / 2,
        unproven_per_peer: MAX_CONNECTIONS,
    };
    let limits = listener::ConnectionLimits { name: "metrics", slots, header_read_timeout };
    tokio::spawn(listener::serve(listener, app, limits, None, stop));
    tracing::info!("Prometheus metrics at http://{bound}/metrics");
    Ok(bound)
}

/// A request that passed the Host check holds its connection for its address (a scrape in
/// progress is never closed to make room); beyond the address's half of the slots, 429.
async fn scraper_holds(request: axum::extract::Request, next: axum::middleware::Next) -> Response {
    use super::http::connections::ConnectionHandle;
    let Some(handle) = request.extensions().get::<ConnectionHandle>().cloned() else {
        return next.run(request).await;
    };
    let scraper = crate::principal::Principal::named(&format!(
        "scraper {}",
        handle.peer().map(|p| p.to_string()).unwrap_or_default()
    ));
    if handle.hold(&scraper).is_err() {
        metrics().http_limit("metrics", "principal_connections");
        let mut refused = (StatusCode::TOO_MANY_REQUESTS, "this address holds its share of the metrics connections\n")
            .into_response();
        refused.headers_mut().insert(header::CONNECTION, axum::http::HeaderValue::from_static("close"));
        return refused;
    }
    next.run(request).await
}

/// A scrape carries no body: a request announcing one is answered 413 without reading it.
async fn no_body(request: axum::extract::Request, next: axum::middleware::Next) -> Response {
    let headers = request.headers();
    let announced = headers.contains_key(header::TRANSFER_ENCODING)
        || headers.get(header::CONTENT_LENGTH).is_some_and(|v| v.as_bytes() != b"0");
    if announced {
        let mut refused =
            (StatusCode::PAYLOAD_TOO_LARGE, "the metrics endpoint takes no request body\n").into_response();
        refused.headers_mut().insert(header::CONNECTION, axum::http::HeaderValue::from_static("close"));
        return refused;
    }
    next.run(request).await
}
