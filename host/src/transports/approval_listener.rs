//! The approval page's own loopback listener, for a stdio server (an HTTP server serves the page
//! beside `/mcp`): the same routes, the same hygiene as the other listeners (connection limits,
//! the header deadline, the `Host` check), on 127.0.0.1 or ::1 only, since the page of a stdio
//! server is for the person at this machine.
//!
//! A local page (local approvers, no identity provider) is at `http://localhost:PORT`, the name
//! WebAuthn binds its passkeys to, on [`LOCAL_PORT`] by default; when that port is taken (the
//! user's other client started a server too) it takes a free one, and its links carry it: a busy
//! port never keeps the server from serving its tools.

use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, bail};
use tokio_util::sync::CancellationToken;

use crate::approval_page::ApprovalPage;

/// Connections the page's listener serves at once: a person's browser or two.
pub const MAX_CONNECTIONS: usize = 32;

/// A local page's port unless `--approval-listen` says otherwise.
pub const LOCAL_PORT: u16 = 8932;

/// Serves the approval page on `addr` (default: 127.0.0.1 on a free port; a local page on both
/// loopbacks, on [`LOCAL_PORT`] or `addr`'s port) until `stop` fires; returns the address bound.
pub async fn serve(
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
        true => bind_local(wanted.port())?,
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

/// A local page's listeners: 127.0.0.1 and ::1 on one port, [`LOCAL_PORT`] or the one given, else
/// a free one. A browser may resolve `localhost` to either address, and whatever answered on the
/// other would be at this page's origin: so both are this server's, or the port is not used.
pub(crate) fn bind_local(wanted: u16) -> anyhow::Result<Vec<tokio::net::TcpListener>> {
    use super::http::listener::bind;
    let pair = |port: u16| -> std::io::Result<Vec<tokio::net::TcpListener>> {
        let v4 = bind(SocketAddr::from((Ipv4Addr::LOCALHOST, port)))?;
        let port = v4.local_addr()?.port();
        match bind(SocketAddr::from((Ipv6Addr::LOCALHOST, port))) {
            Ok(v6) => Ok(vec![v4, v6]),
            // taken: someone else would answer at this page's origin
            Err(e) if e.kind() == std::io::ErrorKind::AddrInUse => Err(e),
            // no IPv6 loopback on this machine: nobody else can answer there either
            Err(_) => Ok(vec![v4]),
        }
    };
    let first = match pair(wanted) {
        Ok(listeners) => return Ok(listeners),
        Err(e) => e,
    };
    // a free port on both loopbacks (one free on 127.0.0.1 is nearly always free on ::1 too)
    for _ in 0..8 {
        if let Ok(listeners) = pair(0) {
            let port = listeners[0].local_addr()?.port();
            if wanted != 0 {
                tracing::info!(
                    "the approval page's port {wanted} is taken ({first}; another server of this user?): it takes \
                     port {port} instead, and its links carry it"
                );
            }
            return Ok(listeners);
        }
    }
    anyhow::bail!("no loopback port is free on both 127.0.0.1 and ::1 for the approval page ({first})")
}
