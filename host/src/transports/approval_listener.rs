//! The approval page's own loopback listener, for a stdio server (an HTTP server serves the page
//! beside `/mcp`): the same routes, the same hygiene as the other listeners (connection limits,
//! the header deadline, the `Host` check), on 127.0.0.1 or ::1 only, since the page of a stdio
//! server is for the person at this machine.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, bail};
use tokio_util::sync::CancellationToken;

use crate::approval_page::ApprovalPage;

/// Connections the page's listener serves at once: a person's browser or two.
pub const MAX_CONNECTIONS: usize = 32;

/// Serves the approval page on `addr` until `stop` fires; returns the address bound.
pub async fn serve(
    page: Arc<ApprovalPage>,
    addr: SocketAddr,
    hosts: Vec<String>,
    header_read_timeout: Duration,
    stop: CancellationToken,
) -> anyhow::Result<SocketAddr> {
    use super::http::{connections::SlotLimits, host_check, listener};
    if !addr.ip().is_loopback() {
        bail!("--approval-listen {addr}: a stdio server serves its approval page on a loopback address only");
    }
    let listener = listener::bind(addr).with_context(|| format!("binding --approval-listen {addr}"))?;
    let bound = listener.local_addr()?;
    page.set_base(&format!("http://{bound}"))?;
    let app = crate::approval_page::routes::routes(page.clone())
        .layer(axum::middleware::from_fn_with_state(Arc::new(hosts), host_check::require));
    let slots = SlotLimits {
        max_connections: MAX_CONNECTIONS,
        per_principal: MAX_CONNECTIONS,
        unproven_per_peer: MAX_CONNECTIONS,
    };
    let limits = listener::ConnectionLimits { name: "approval", slots, header_read_timeout };
    tokio::spawn(listener::serve(listener, app, limits, None, stop));
    tracing::info!("approval page at {}", page.link("…"));
    Ok(bound)
}
