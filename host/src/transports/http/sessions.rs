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

use crate::principal::{Principal, uncount};

const SESSION_HEADER: &str = "mcp-session-id";
/// How often closed sessions (idle timeout, client gone) are forgotten here.
const SWEEP_EVERY: Duration = Duration::from_secs(15);

/// The limits this layer enforces.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SessionLimits {
    pub(crate) per_principal: usize,
    pub total: usize,
    /// Open `GET /mcp` streams one principal may hold (rmcp keeps a session's first and up to 32
    /// more, each on a connection of its own).
    pub(crate) streams_per_principal: usize,
    pub(crate) max_body_bytes: usize,
    pub(crate) body_read_timeout: Duration,
}

/// Who owns each live session.
pub(crate) struct SessionGuard {
    manager: Arc<LocalSessionManager>,
    state: Mutex<Owners>,
    limits: SessionLimits,
    /// The grant each tool needs (the tool registry's rows).
    tool_scopes: super::scope_check::ToolScopes,
}

/// The live sessions' owners, and the `initialize` requests under way (each will add one).
#[derive(Default)]
struct Owners {
    owners: HashMap<Arc<str>, Principal>,
    opening: HashMap<Principal, usize>,
    streams: HashMap<Principal, usize>,
}

/// One open `GET /mcp` stream, counted against its principal while it lives.
struct StreamSlot {
    guard: Arc<SessionGuard>,
    principal: Principal,
}

impl Drop for StreamSlot {
    fn drop(&mut self) {
        uncount(&mut self.guard.state().streams, &self.principal);
    }
}

/// One session being opened, counted against the caps while it lives.
struct Opening {
    guard: Arc<SessionGuard>,
    principal: Principal,
    released: bool,
}

impl Opening {
    /// Gives the place back, under a lock the caller holds.
    fn release(mut self, state: &mut Owners) {
        self.released = true;
        uncount(&mut state.opening, &self.principal);
    }
}

impl Drop for Opening {
    fn drop(&mut self) {
        if !self.released {
            uncount(&mut self.guard.state().opening, &self.principal);
        }
    }
}

impl SessionGuard {
    pub(crate) fn new(
        manager: Arc<LocalSessionManager>,
        limits: SessionLimits,
        tool_scopes: super::scope_check::ToolScopes,
    ) -> Arc<Self> {
        Arc::new(SessionGuard { manager, state: Mutex::new(Owners::default()), limits, tool_scopes })
    }

    fn state(&self) -> std::sync::MutexGuard<'_, Owners> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Forgets sessions rmcp has closed, every [`SWEEP_EVERY`], until `stop`.
    pub(crate) async fn sweep_until(self: Arc<Self>, stop: tokio_util::sync::CancellationToken) {
        loop {
            tokio::select! {
                _ = tokio::time::sleep(SWEEP_EVERY) => {}
                _ = stop.cancelled() => return,
            }
            self.sweep().await;
        }
    }

    async fn sweep(&self) {
        let ids: Vec<Arc<str>> = self.state().owners.keys().cloned().collect();
        for id in ids {
            if !self.manager.has_session(&id).await.unwrap_or(false) {
                self.state().owners.remove(&id);
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
pub(crate) async fn guard(State(guard): State<Arc<SessionGuard>>, request: Request, next: Next) -> Response {
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
    if let Some(access) = parts.extensions.get::<crate::oauth::Access>()
        && let Some(refused) = super::scope_check::refuse(access, &bytes, &*guard.tool_scopes)
    {
        return refused;
    }
    let (rpc_method, rpc_id) = if method == Method::POST { method_and_id(&bytes) } else { (None, None) };
    let opening = match session.is_none() && rpc_method.as_deref() == Some("initialize") {
        true => match guard.reserve(&principal).await {
            Ok(place) => Some(place),
            Err(refused) => return refused,
        },
        false => None,
    };
    let request = Request::from_parts(parts, if method == Method::POST { Body::from(bytes) } else { body_of_get() });
    let stream = match method == Method::GET && session.is_some() {
        true => match guard.open_stream(&principal) {
            Ok(slot) => Some(slot),
            Err(refused) => return *refused,
        },
        false => None,
    };
    let answered = Answered { principal, session, method, rpc_id, rpc_method, opening };
    let response = match answered.opening.is_some() {
        // rmcp creates the session before it answers: the answer is recorded even if the client
        // drops the connection meanwhile, so no session escapes the caps
        true => {
            let guard = guard.clone();
            let recorded = tokio::spawn(async move {
                let response = next.run(request).await;
                guard.after(answered, response)
            });
            match recorded.await {
                Ok(response) => response,
                Err(_) => refusal(StatusCode::INTERNAL_SERVER_ERROR, "internal", "the initialize failed".into()),
            }
        }
        false => {
            let response = next.run(request).await;
            guard.after(answered, response)
        }
    };
    match stream {
        Some(slot) if response.status().is_success() => {
            response.map(|body| Body::new(Watched { inner: body, watch: None, _stream: Some(slot) }))
        }
        _ => response,
    }
}

/// What the guard knows of a request once it has been answered.
struct Answered {
    principal: Principal,
    session: Option<Arc<str>>,
    method: Method,
    rpc_id: Option<Value>,
    rpc_method: Option<String>,
    /// The place an `initialize` held; the session it opened takes it over.
    opening: Option<Opening>,
}

impl SessionGuard {
    /// The same 404 as for an unknown session for a request on another principal's session, and
    /// for a `DELETE` of one that is closed, expired or never opened.
    fn refuse_foreign(&self, principal: &Principal, session: Option<&str>, method: &Method) -> Option<Response> {
        let owner = session.and_then(|id| self.state().owners.get(id).cloned());
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

    /// A place for one more session of `principal`, or why not: beyond the principal's sessions
    /// (429) or the server's (503). The place is counted from here until the `initialize` is
    /// answered (then the session itself counts), so a burst of them cannot all pass one count.
    async fn reserve(self: &Arc<Self>, principal: &Principal) -> Result<Opening, Response> {
        let mut swept = false;
        loop {
            let mine = {
                let mut state = self.state();
                let opening = state.opening.get(principal).copied().unwrap_or(0);
                let mine = state.owners.values().filter(|p| *p == principal).count() + opening;
                let total = state.owners.len() + state.opening.values().sum::<usize>();
                if mine < self.limits.per_principal && total < self.limits.total {
                    *state.opening.entry(principal.clone()).or_default() += 1;
                    return Ok(Opening { guard: self.clone(), principal: principal.clone(), released: false });
                }
                mine
            };
            if !swept {
                // sessions that expired since the last sweep must not count
                self.sweep().await;
                swept = true;
                continue;
            }
            if mine >= self.limits.per_principal {
                return Err(refusal(
                    StatusCode::TOO_MANY_REQUESTS,
                    "too_many_sessions",
                    format!(
                        "principal {principal} already holds {mine} sessions, the most this server allows one \
                         principal (--max-sessions-per-principal); close one (DELETE /mcp) or wait until an idle one \
                         expires"
                    ),
                ));
            }
            return Err(refusal(
                StatusCode::SERVICE_UNAVAILABLE,
                "too_many_sessions",
                "the server holds the most sessions it allows (--max-sessions); retry later".into(),
            ));
        }
    }

    /// A place for one more `GET /mcp` stream of `principal`, or 429 beyond its share.
    fn open_stream(self: &Arc<Self>, principal: &Principal) -> Result<StreamSlot, Box<Response>> {
        let mut state = self.state();
        let open = state.streams.get(principal).copied().unwrap_or(0);
        if open >= self.limits.streams_per_principal {
            drop(state);
            crate::metrics::metrics().http_limit("mcp", "principal_streams");
            tracing::warn!(%principal, open, "refused a stream beyond the principal's share (--max-streams-per-principal)");
            return Err(Box::new(refusal(
                StatusCode::TOO_MANY_REQUESTS,
                "too_many_streams",
                format!(
                    "principal {principal} already holds {open} open GET /mcp streams, the most this server allows \
                     one principal (--max-streams-per-principal); close one first"
                ),
            )));
        }
        *state.streams.entry(principal.clone()).or_default() += 1;
        Ok(StreamSlot { guard: self.clone(), principal: principal.clone() })
    }

    /// Records who opened a new session and forgets a deleted one; a call's response stream is
    /// watched so the call is cancelled in its session if the stream is dropped before its end.
    fn after(self: Arc<Self>, a: Answered, response: Response) -> Response {
        if let Some(opening) = a.opening {
            // the session takes the place over under the same lock: never counted twice
            let mut state = self.state();
            if let Some(id) = response.headers().get(SESSION_HEADER).and_then(|v| v.to_str().ok()) {
                state.owners.insert(Arc::from(id), a.principal.clone());
            }
            opening.release(&mut state);
        }
        if a.method == Method::DELETE
            && response.status().is_success()
            && let Some(id) = &a.session
        {
            self.state().owners.remove(id);
            // The session is gone when this answers: 200, which MCP clients read as done (rmcp says
            // 202, and the official Python SDK warns "Session termination failed: 202" on it).
            let (mut parts, body) = response.into_parts();
            parts.status = StatusCode::OK;
            return Response::from_parts(parts, body);
        }
        match (a.session, a.rpc_id, a.rpc_method) {
            (Some(id), Some(rpc_id), Some(_)) if is_event_stream(&response) => {
                let watch = StreamWatch { guard: self, session: id, request_id: rpc_id, ended: false };
                response.map(|body| Body::new(Watched { inner: body, watch: Some(watch), _stream: None }))
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

/// A response body that tells its [`StreamWatch`] whether it was read to the end, and holds a
/// principal's stream place until it is dropped.
struct Watched {
    inner: Body,
    watch: Option<StreamWatch>,
    _stream: Option<StreamSlot>,
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
