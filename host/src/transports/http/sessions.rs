//! Sessions belong to the principal that opened them. rmcp's session manager knows nothing of
//! principals, so this middleware sits in front of it: it records who initialized each session
//! (from the `Mcp-Session-Id` of the answer), lets only that principal send anything on it (a
//! request, an answer to the server's own request, a stream, a `DELETE`; anyone else gets the
//! same 404 as for an unknown session, and nothing reaches the session), caps the sessions per
//! principal and in all, reads each request body within a deadline, and cancels a tool call whose
//! response stream the client dropped (so a form whose person is gone ends as `call_cancelled`).
//! Session ids are never logged.

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http_body::Frame;
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::streamable_http_server::SessionManager;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use serde_json::{Value, json};

use crate::principal::Principal;

const SESSION_HEADER: &str = "mcp-session-id";
/// How often closed sessions (idle timeout, client gone) are forgotten here.
const SWEEP_EVERY: Duration = Duration::from_secs(15);

/// The limits this layer enforces.
#[derive(Clone, Copy, Debug)]
pub struct SessionLimits {
    pub per_principal: usize,
    pub total: usize,
    pub max_body_bytes: usize,
    pub body_read_timeout: Duration,
}

/// Who owns each live session.
pub struct SessionGuard {
    manager: Arc<LocalSessionManager>,
    owners: Mutex<HashMap<Arc<str>, Principal>>,
    limits: SessionLimits,
}

impl SessionGuard {
    pub fn new(manager: Arc<LocalSessionManager>, limits: SessionLimits) -> Arc<Self> {
        Arc::new(SessionGuard { manager, owners: Mutex::new(HashMap::new()), limits })
    }

    fn owners(&self) -> std::sync::MutexGuard<'_, HashMap<Arc<str>, Principal>> {
        self.owners.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Sessions recorded now (live or not yet swept).
    pub fn len(&self) -> usize {
        self.owners().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Forgets sessions rmcp has closed, every [`SWEEP_EVERY`], until `stop`.
    pub async fn sweep_until(self: Arc<Self>, stop: tokio_util::sync::CancellationToken) {
        loop {
            tokio::select! {
                _ = tokio::time::sleep(SWEEP_EVERY) => {}
                _ = stop.cancelled() => return,
            }
            self.sweep().await;
        }
    }

    async fn sweep(&self) {
        let ids: Vec<Arc<str>> = self.owners().keys().cloned().collect();
        for id in ids {
            if !self.manager.has_session(&id).await.unwrap_or(false) {
                self.owners().remove(&id);
            }
        }
    }
}

fn refusal(status: StatusCode, kind: &str, message: String) -> Response {
    let body = json!({"jsonrpc": "2.0", "id": Value::Null, "error": {"code": -32600, "message": message, "data": {"kind": kind}}});
    let mut response = (status, axum::Json(body)).into_response();
    if status == StatusCode::TOO_MANY_REQUESTS || status == StatusCode::SERVICE_UNAVAILABLE {
        response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("30"));
    }
    response
}

/// The JSON-RPC method and id of a POSTed message (a batch or garbage reads as neither).
fn method_and_id(body: &[u8]) -> (Option<String>, Option<Value>) {
    #[derive(serde::Deserialize)]
    struct Head {
        method: Option<String>,
        id: Option<Value>,
    }
    match serde_json::from_slice::<Head>(body) {
        Ok(h) => (h.method, h.id),
        Err(_) => (None, None),
    }
}

/// The middleware (innermost of ours: the bearer check has already set the principal).
pub async fn guard(State(guard): State<Arc<SessionGuard>>, request: Request, next: Next) -> Response {
    let principal = request.extensions().get::<Principal>().cloned().unwrap_or_default();
    let session: Option<Arc<str>> = request.headers().get(SESSION_HEADER).and_then(|v| v.to_str().ok()).map(Arc::from);
    let method = request.method().clone();
    if let Some(refused) = guard.refuse_foreign(&principal, session.as_deref(), &method) {
        return refused;
    }
    let (parts, body) = request.into_parts();
    let bytes = if method == Method::POST {
        match guard.read_body(body).await {
            Ok(bytes) => bytes,
            Err(refused) => return refused,
        }
    } else {
        Bytes::new()
    };
    let (rpc_method, rpc_id) = if method == Method::POST { method_and_id(&bytes) } else { (None, None) };
    if session.is_none()
        && rpc_method.as_deref() == Some("initialize")
        && let Some(refused) = guard.refuse_beyond_caps(&principal).await
    {
        return refused;
    }
    let request = Request::from_parts(parts, if method == Method::POST { Body::from(bytes) } else { body_of_get() });
    let response = next.run(request).await;
    guard.after(Answered { principal, session, method, rpc_id, rpc_method }, response)
}

/// What the guard knows of a request once it has been answered.
struct Answered {
    principal: Principal,
    session: Option<Arc<str>>,
    method: Method,
    rpc_id: Option<Value>,
    rpc_method: Option<String>,
}

impl SessionGuard {
    /// The same 404 as for an unknown session for a request on another principal's session, and
    /// for a `DELETE` of one that is closed, expired or never opened.
    fn refuse_foreign(&self, principal: &Principal, session: Option<&str>, method: &Method) -> Option<Response> {
        let owner = session.and_then(|id| self.owners().get(id).cloned());
        if owner.as_ref().is_some_and(|o| o != principal) {
            tracing::warn!(%principal, %method, "refused a request on another principal's session");
            return Some(refusal(StatusCode::NOT_FOUND, "session_not_found", "Session not found".into()));
        }
        if *method == Method::DELETE && owner.is_none() {
            return Some(refusal(StatusCode::NOT_FOUND, "session_not_found", "Session not found".into()));
        }
        None
    }

    /// A POST's body, read whole within the deadline and the size limit.
    async fn read_body(&self, body: Body) -> Result<Bytes, Response> {
        let limits = self.limits;
        match tokio::time::timeout(limits.body_read_timeout, axum::body::to_bytes(body, limits.max_body_bytes)).await {
            Ok(Ok(bytes)) => Ok(bytes),
            Ok(Err(e)) if is_too_large(&e) => Err(refusal(
                StatusCode::PAYLOAD_TOO_LARGE,
                "body_too_large",
                format!("the request body exceeds {} bytes (--max-request-bytes)", limits.max_body_bytes),
            )),
            Ok(Err(_)) => {
                Err(refusal(StatusCode::BAD_REQUEST, "body_unreadable", "the request body could not be read".into()))
            }
            Err(_) => Err(refusal(
                StatusCode::REQUEST_TIMEOUT,
                "body_timeout",
                format!("the request body did not arrive within {} ms", limits.body_read_timeout.as_millis()),
            )),
        }
    }

    /// An `initialize` beyond the principal's sessions (429) or the server's (503).
    async fn refuse_beyond_caps(&self, principal: &Principal) -> Option<Response> {
        let count = || {
            let owners = self.owners();
            (owners.values().filter(|p| *p == principal).count(), owners.len())
        };
        let (mut mine, mut total) = count();
        if mine >= self.limits.per_principal || total >= self.limits.total {
            // sessions that expired since the last sweep must not count
            self.sweep().await;
            (mine, total) = count();
        }
        if mine >= self.limits.per_principal {
            return Some(refusal(
                StatusCode::TOO_MANY_REQUESTS,
                "too_many_sessions",
                format!(
                    "principal {principal} already holds {mine} sessions, the most this server allows one principal \
                     (--max-sessions-per-principal); close one (DELETE /mcp) or wait until an idle one expires"
                ),
            ));
        }
        if total >= self.limits.total {
            return Some(refusal(
                StatusCode::SERVICE_UNAVAILABLE,
                "too_many_sessions",
                "the server holds the most sessions it allows (--max-sessions); retry later".into(),
            ));
        }
        None
    }

    /// Records who opened a new session and forgets a deleted one; a call's response stream is
    /// watched so the call is cancelled in its session if the stream is dropped before its end.
    fn after(self: Arc<Self>, a: Answered, response: Response) -> Response {
        if a.session.is_none()
            && let Some(id) = response.headers().get(SESSION_HEADER).and_then(|v| v.to_str().ok())
        {
            self.owners().insert(Arc::from(id), a.principal.clone());
        }
        if a.method == Method::DELETE
            && response.status().is_success()
            && let Some(id) = &a.session
        {
            self.owners().remove(id);
            // The session is gone when this answers: 200, which MCP clients read as done (rmcp says
            // 202, and the official Python SDK warns "Session termination failed: 202" on it).
            let (mut parts, body) = response.into_parts();
            parts.status = StatusCode::OK;
            return Response::from_parts(parts, body);
        }
        match (a.session, a.rpc_id, a.rpc_method) {
            (Some(id), Some(rpc_id), Some(_)) if is_event_stream(&response) => {
                let watch = StreamWatch { guard: self, session: id, request_id: rpc_id, ended: false };
                response.map(|body| Body::new(Watched { inner: body, watch: Some(watch) }))
            }
            _ => response,
        }
    }
}

/// GET and DELETE carry no body worth reading; an empty one is passed on.
fn body_of_get() -> Body {
    Body::empty()
}

fn is_too_large(e: &axum::Error) -> bool {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(s) = source {
        if s.to_string().contains("length limit exceeded") {
            return true;
        }
        source = s.source();
    }
    false
}

fn is_event_stream(response: &Response) -> bool {
    response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"))
}

/// Notices a response stream dropped before its end.
struct StreamWatch {
    guard: Arc<SessionGuard>,
    session: Arc<str>,
    request_id: Value,
    ended: bool,
}

impl Drop for StreamWatch {
    fn drop(&mut self) {
        if self.ended {
            return;
        }
        let notice = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": self.request_id, "reason": "the client's connection closed"}});
        let Ok(message) = serde_json::from_value::<ClientJsonRpcMessage>(notice) else {
            return;
        };
        let (manager, session) = (self.guard.manager.clone(), self.session.clone());
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                // the session may be gone already; then so is the call
                let _ = manager.accept_message(&session, message).await;
            });
        }
    }
}

/// A response body that tells its [`StreamWatch`] whether it was read to the end.
struct Watched {
    inner: Body,
    watch: Option<StreamWatch>,
}

impl http_body::Body for Watched {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let polled = Pin::new(&mut self.inner).poll_frame(cx);
        if let Poll::Ready(None) = polled
            && let Some(w) = self.watch.as_mut()
        {
            w.ended = true;
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}
