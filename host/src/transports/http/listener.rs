//! The HTTP accept loop, with the connection hygiene axum's `serve` does not offer: a cap on
//! concurrent connections shared out so that nobody can lock the team out (see
//! [`super::connections`]), a deadline for a request's headers that also bounds an idle
//! keep-alive connection, and a graceful close on shutdown. The `/mcp` and the metrics
//! listeners both run it, each with its own table.
//! HTTP/1.1 only: every MCP client speaks it, and it keeps the header deadline in force from the
//! first byte of a connection (HTTP/2 would need its own idle rules).

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tower::ServiceExt;

use super::connections::{Admitted, Connections, Refused, SlotLimits};
use super::tls::TlsFiles;

/// Limits of the connection layer.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ConnectionLimits {
    /// The listener's name in metrics (`mcp`, `metrics`).
    pub name: &'static str,
    pub slots: SlotLimits,
    /// Time allowed for a request's headers, and for the next request on an idle connection.
    pub(crate) header_read_timeout: Duration,
}

/// The kernel's queue of connections not yet accepted (capped by `net.core.somaxconn`). A
/// connection that finds it full has its SYN dropped and waits a second for the retransmission,
/// before any of the sharing rules can see it, so it is as deep as the kernel allows: a burst of
/// sockets from one address then costs a token holder nothing (`TcpListener::bind`, std's and
/// tokio's alike, asks for 128).
const ACCEPT_QUEUE: u32 = 4096;

/// Binds a listening socket on `addr` with the deep accept queue above.
pub(crate) fn bind(addr: SocketAddr) -> std::io::Result<TcpListener> {
    let socket = match addr {
        SocketAddr::V4(_) => tokio::net::TcpSocket::new_v4()?,
        SocketAddr::V6(_) => tokio::net::TcpSocket::new_v6()?,
    };
    // as std and tokio do on Unix: a restarted server can bind while old connections linger
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    socket.listen(ACCEPT_QUEUE)
}

/// How long open connections get to finish after the shutdown signal.
const CLOSE_GRACE: Duration = Duration::from_secs(5);

/// Serves `router` on `listener` (over TLS when `tls` is given) until `shutdown`, then closes
/// connections gracefully.
pub(crate) async fn serve(
    listener: TcpListener,
    router: axum::Router,
    limits: ConnectionLimits,
    tls: Option<Arc<TlsFiles>>,
    shutdown: CancellationToken,
) {
    let table = Connections::new(limits.slots);
    let connections = TaskTracker::new();
    let mut refused_logged = false;
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                Err(e) => {
                    // EMFILE and friends: back off instead of spinning.
                    tracing::warn!("accepting a connection failed: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            _ = shutdown.cancelled() => break,
        };
        let metrics = crate::metrics::metrics();
        let admitted = match table.admit(peer.ip()) {
            Ok(a) => {
                if a.made_room {
                    metrics.http_limit(limits.name, "unproven_closed");
                }
                a
            }
            Err(Refused::Full) => {
                metrics.http_limit(limits.name, "full");
                if !refused_logged {
                    tracing::warn!(
                        max = limits.slots.max_connections,
                        "connection limit reached, every slot held by a principal or just opened; closing new \
                         connections until some end"
                    );
                    refused_logged = true;
                }
                drop(stream);
                continue;
            }
        };
        refused_logged = false;
        let made_room = admitted.made_room;
        let _ = stream.set_nodelay(true);
        let service = router.clone();
        let shutdown = shutdown.clone();
        let acceptor = tls.as_ref().map(|t| t.acceptor());
        connections.spawn(async move {
            let evicted = admitted.evicted.clone();
            let served = async {
                match acceptor {
                    None => serve_connection(stream, peer, service, limits, &admitted, shutdown).await,
                    // the handshake gets the header deadline too: a silent client holds nothing long
                    Some(acceptor) => {
                        match tokio::time::timeout(limits.header_read_timeout, acceptor.accept(stream)).await {
                            Ok(Ok(tls)) => serve_connection(tls, peer, service, limits, &admitted, shutdown).await,
                            Ok(Err(e)) => tracing::debug!(%peer, "TLS handshake failed: {e}"),
                            Err(_) => tracing::debug!(%peer, "TLS handshake timed out"),
                        }
                    }
                }
            };
            tokio::select! {
                _ = served => {}
                // closed to make room: it never sent a valid request
                _ = evicted.cancelled() => tracing::debug!(%peer, "closed an unproven connection to make room"),
            }
            drop(admitted);
        });
        if made_room {
            // Under a flood, let the connection just admitted be read before admitting more: the
            // next one from its address would close the oldest of that address that is not
            // sending a request, and a token holder's request should be under way by then.
            tokio::task::yield_now().await;
        }
    }
    connections.close();
    if tokio::time::timeout(CLOSE_GRACE, connections.wait()).await.is_err() {
        tracing::warn!("connections still open {CLOSE_GRACE:?} after shutdown; closing them");
    }
}

async fn serve_connection<S>(
    stream: S,
    peer: SocketAddr,
    router: axum::Router,
    limits: ConnectionLimits,
    admitted: &Admitted,
    shutdown: CancellationToken,
) where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let handle = admitted.handle.clone();
    let service =
        TowerToHyperService::new(tower::service_fn(move |req: axum::http::Request<hyper::body::Incoming>| {
            let (router, handle) = (router.clone(), handle.clone());
            async move {
                // from the request's head to its response's head the connection is sending a request
                let _busy = handle.busy();
                let mut req = req.map(axum::body::Body::new);
                req.extensions_mut().insert(handle);
                // the approval page records the address a decision came from
                req.extensions_mut().insert(axum::extract::ConnectInfo(peer));
                router.oneshot(req).await
            }
        }));
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder.timer(TokioTimer::new()).header_read_timeout(limits.header_read_timeout).keep_alive(true);
    let conn = builder.serve_connection(TokioIo::new(stream), service);
    let mut conn = std::pin::pin!(conn);
    tokio::select! {
        result = conn.as_mut() => {
            if let Err(e) = result {
                tracing::debug!(%peer, "connection ended: {e}");
            }
        }
        _ = shutdown.cancelled() => {
            conn.as_mut().graceful_shutdown();
            // keep polling until the in-flight response is written
            let _ = conn.as_mut().await;
        }
    }
}
