//! The approval page's own loopback listener, for a stdio server (an HTTP server serves the page
//! beside `/mcp`): the same routes, the same hygiene as the other listeners (connection limits,
//! the header deadline, the `Host` check), on 127.0.0.1 or ::1 only, since the page of a stdio
//! server is for the person at this machine.
//!
//! A local page (local approvers, no identity provider) is at `http://localhost:PORT`, the name
//! WebAuthn binds its passkeys to, on [`LOCAL_PORT`] by default; when that port is taken (the
//! user's other client started a server too) it takes a free one, and its links carry it: a busy
//! port never keeps the server from serving its tools.

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, bail};
use tokio_util::sync::CancellationToken;

use crate::approval_page::ApprovalPage;

/// Connections the page's listener serves at once: a person's browser or two.
pub(crate) const MAX_CONNECTIONS: usize = 32;

/// A local page's port unless `--approval-listen` says otherwise.
pub(crate) const LOCAL_PORT: u16 = 8932;

/// Serves the approval page on `addr` (default: 127.0.0.1 on a free port; a local page on both
/// loopbacks, on [`LOCAL_PORT`] or `addr`'s port) until `stop` fires; returns the address bound.
pub(crate) async fn serve(
    page: Arc<ApprovalPage>,
    addr: Option<SocketAddr>,
    hosts: Vec<String>,
    header_read_timeout: Duration,
    stop: CancellationToken,
) -> anyhow::Result<SocketAddr> {
    use super::http::{connections::SlotLimits, host_check, listener};
    let local = page.is_local();
    let port = if local { LOCAL_PORT } else { 0 };
    let wanted = addr.unwrap_or(SocketAddr::from((Ipv4Addr::LOCALHOST, port)));
    if !wanted.ip().is_loopback() {
        bail!("--approval-listen {wanted}: a stdio server serves its approval page on a loopback address only");
    }
    let listeners = match local {
        true => crate::approvers::loopback::bind_both(wanted.port())?,
        false => vec![listener::bind(wanted).with_context(|| format!("binding --approval-listen {wanted}"))?],
    };
    let bound = listeners[0].local_addr()?;
    // WebAuthn takes a host name, never an IP address: a local page is at localhost
    let base = match local {
        true => format!("http://localhost:{}", bound.port()),
        false => format!("http://{bound}"),
    };
    page.set_base(&base)?;
    let app = crate::approval_page::routes::routes(page.clone())
        .layer(axum::middleware::from_fn_with_state(Arc::new(hosts), host_check::require));
    let slots = SlotLimits {
        max_connections: MAX_CONNECTIONS,
        per_principal: MAX_CONNECTIONS,
        unproven_per_peer: MAX_CONNECTIONS,
    };
    let on: Vec<String> = listeners.iter().filter_map(|l| l.local_addr().ok()).map(|a| a.to_string()).collect();
    for listener in listeners {
        let limits = listener::ConnectionLimits { name: "approval", slots, header_read_timeout };
        tokio::spawn(listener::serve(listener, app.clone(), limits, None, stop.clone()));
    }
    tracing::info!("approval page at {base}/approve/ (listening on {})", on.join(" and "));
    Ok(bound)
}
