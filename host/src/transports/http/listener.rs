//! The HTTP accept loop, with the connection hygiene axum's `serve` does not offer: a cap on
//! concurrent connections (one over the cap is closed at once), a deadline for a request's
//! headers that also bounds an idle keep-alive connection, and a graceful close on shutdown.
//! HTTP/1.1 only: every MCP client speaks it, and it keeps the header deadline in force from the
//! first byte of a connection (HTTP/2 would need its own idle rules).

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tower::ServiceExt;

use super::tls::TlsFiles;

/// Limits of the connection layer.
#[derive(Clone, Copy, Debug)]
pub struct ConnectionLimits {
    /// Connections served at once; more are closed on accept.
    pub max_connections: usize,
    /// Time allowed for a request's headers, and for the next request on an idle connection.
    pub header_read_timeout: Duration,
}

/// How long open connections get to finish after the shutdown signal.
const CLOSE_GRACE: Duration = Duration::from_secs(5);

/// Serves `router` on `listener` (over TLS when `tls` is given) until `shutdown`, then closes
/// connections gracefully.
pub async fn serve(
    listener: TcpListener,
    router: axum::Router,
    limits: ConnectionLimits,
    tls: Option<Arc<TlsFiles>>,
    shutdown: CancellationToken,
) {
    let slots = Arc::new(Semaphore::new(limits.max_connections));
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
        let Ok(slot) = slots.clone().try_acquire_owned() else {
            if !refused_logged {
                tracing::warn!(
                    max = limits.max_connections,
                    "connection limit reached; closing new connections until some end"
                );
                refused_logged = true;
            }
            drop(stream);
            continue;
        };
        refused_logged = false;
        let _ = stream.set_nodelay(true);
        let service = router.clone();
        let shutdown = shutdown.clone();
        let acceptor = tls.as_ref().map(|t| t.acceptor());
        connections.spawn(async move {
            match acceptor {
                None => serve_connection(stream, peer, service, limits, shutdown).await,
                // the handshake gets the header deadline too: a silent client holds nothing long
                Some(acceptor) => match tokio::time::timeout(limits.header_read_timeout, acceptor.accept(stream)).await
                {
                    Ok(Ok(tls_stream)) => serve_connection(tls_stream, peer, service, limits, shutdown).await,
                    Ok(Err(e)) => tracing::debug!(%peer, "TLS handshake failed: {e}"),
                    Err(_) => tracing::debug!(%peer, "TLS handshake timed out"),
                },
            }
            drop(slot);
        });
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
    shutdown: CancellationToken,
) where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let service = TowerToHyperService::new(
        router.map_request(|req: axum::http::Request<hyper::body::Incoming>| req.map(axum::body::Body::new)),
    );
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
