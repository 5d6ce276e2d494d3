//! The page's HTTP routes, behind the same `Host` check as the server's other public routes:
//!
//! - `GET /approve/{id}`: signed out, a sign-in link and nothing of the request; signed in, the
//!   request, who may decide and the buttons; afterwards, what was decided;
//! - `GET /approve/{id}/sign-in`: to the identity provider (code flow, PKCE, state, nonce, max_age);
//! - `GET /approve/callback`: back from it; then to the page the sign-in began on, never elsewhere;
//! - `POST /approve/{id}`: a decision, from this page only (session cookie, anti-CSRF token, Origin);
//! - `GET /approve/page.css`.
//!
//! Every answer carries a CSP with no script at all and `frame-ancestors 'none'`, `nosniff`,
//! `no-referrer` and `no-store`.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::{ConnectInfo, Path, RawQuery, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::get;

use super::html::{self, View};
use super::{ApprovalPage, Permission};

/// The largest decision body read.
const MAX_DECISION_BYTES: usize = 4096;

const CSP: &str = "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; \
                   base-uri 'none'";

pub fn routes(page: Arc<ApprovalPage>) -> axum::Router {
    axum::Router::new()
        .route("/approve/page.css", get(css))
        .route("/approve/callback", get(callback))
        .route("/approve/{id}", get(show).post(decide))
        .route("/approve/{id}/sign-in", get(sign_in))
        .layer(axum::middleware::from_fn(harden))
        .with_state(page)
}

async fn harden(request: Request, next: Next) -> Response {
    let mut response = next.run(request).await;
    let h = response.headers_mut();
    h.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(CSP));
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    h.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

fn page_response(status: StatusCode, body: String) -> Response {
    (status, [(header::CONTENT_TYPE, "text/html; charset=utf-8")], body).into_response()
}

fn message(status: StatusCode, title: &str, text: &str) -> Response {
    page_response(status, html::message(title, text))
}

fn see_other(location: &str) -> Response {
    (StatusCode::SEE_OTHER, [(header::LOCATION, location.to_string())]).into_response()
}

/// The cookies' names: `__Host-` (Secure, host-only, path /) wherever cookies are Secure.
fn cookie_name(page: &ApprovalPage, which: &str) -> String {
    if page.secure_cookies() { format!("__Host-equinix-mcp-{which}") } else { format!("equinix-mcp-{which}") }
}

fn set_cookie(page: &ApprovalPage, which: &str, value: &str, max_age_secs: u64) -> HeaderValue {
    let secure = if page.secure_cookies() { "; Secure" } else { "" };
    let text =
        format!("{}={value}; Path=/; HttpOnly; SameSite=Lax; Max-Age={max_age_secs}{secure}", cookie_name(page, which));
    HeaderValue::from_str(&text).expect("cookie values are base64url")
}

fn cookie(page: &ApprovalPage, headers: &HeaderMap, which: &str) -> Option<String> {
    let name = cookie_name(page, which);
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(n, _)| *n == name)
        .map(|(_, v)| v.to_string())
}

async fn css() -> Response {
    ([(header::CONTENT_TYPE, "text/css; charset=utf-8")], html::CSS).into_response()
}

async fn show(State(page): State<Arc<ApprovalPage>>, Path(id): Path<String>, headers: HeaderMap) -> Response {
    let notes = page.notes();
    let record = match notes.record(&id).await {
        Ok(Some(r)) => r,
        Ok(None) => return unknown(),
        Err(e) => return unavailable(&e.to_string()),
    };
    let session = match cookie(&page, &headers, "session") {
        Some(c) => page.session(&c).await,
        None => None,
    };
    let Some(session) = session else {
        return page_response(StatusCode::OK, html::signed_out(&record.id));
    };
    let decision = match notes.decision(&record.id).await {
        Ok(d) => d,
        Err(e) => return unavailable(&e.to_string()),
    };
    let permission = page.permission(&session, &record);
    let view = View {
        record: &record,
        session: &session,
        decision: decision.as_ref(),
        permission: &permission,
        now_ms: notes.now_ms,
    };
    page_response(StatusCode::OK, view.render())
}

fn unknown() -> Response {
    message(
        StatusCode::NOT_FOUND,
        "No such approval",
        "This link names no request waiting for approval: it expired, or it never existed.",
    )
}

fn unavailable(why: &str) -> Response {
    tracing::warn!("approval page: {why}");
    message(
        StatusCode::SERVICE_UNAVAILABLE,
        "Try again shortly",
        "The server cannot reach its proposal store right now.",
    )
}

async fn sign_in(State(page): State<Arc<ApprovalPage>>, Path(id): Path<String>) -> Response {
    match page.notes().record(&id).await {
        Ok(Some(_)) => {}
        Ok(None) => return unknown(),
        Err(e) => return unavailable(&e.to_string()),
    }
    match page.begin_sign_in(&id) {
        Ok((sealed, url)) => {
            let mut response = see_other(url.as_str());
            response.headers_mut().insert(header::SET_COOKIE, set_cookie(&page, "signin", &sealed, 600));
            response
        }
        Err(e) => unavailable(&e),
    }
}

/// What the identity provider sends back (RFC 6749 4.1.2).
#[derive(Default)]
struct Callback {
    code: Option<String>,
    state: Option<String>,
    error: Option<String>,
}

async fn callback(State(page): State<Arc<ApprovalPage>>, RawQuery(query): RawQuery, headers: HeaderMap) -> Response {
    let mut callback = Callback::default();
    for (k, v) in form_urlencoded::parse(query.unwrap_or_default().as_bytes()) {
        match k.as_ref() {
            "code" => callback.code = Some(v.into_owned()),
            "state" => callback.state = Some(v.into_owned()),
            "error" => callback.error = Some(v.into_owned()),
            _ => {}
        }
    }
    if let Some(error) = callback.error {
        let text = format!("The identity provider answered: {}.", equinix_broker_contract::clip(&error, 80));
        return message(StatusCode::FORBIDDEN, "Sign-in failed", &text);
    }
    let (Some(code), Some(state)) = (callback.code, callback.state) else {
        return message(StatusCode::BAD_REQUEST, "Sign-in failed", "The answer carries no code or no state.");
    };
    let Some(browser) = cookie(&page, &headers, "signin") else {
        return message(StatusCode::FORBIDDEN, "Sign-in failed", "This browser did not begin this sign-in.");
    };
    match page.finish_sign_in(&state, &code, &browser).await {
        Ok((session, page_id)) => {
            let mut response = see_other(&format!("/approve/{page_id}"));
            let h = response.headers_mut();
            h.append(header::SET_COOKIE, set_cookie(&page, "session", &session, super::SESSION_MS / 1000));
            h.append(header::SET_COOKIE, set_cookie(&page, "signin", "", 0));
            response
        }
        Err(why) => {
            tracing::warn!("approval page: a sign-in failed: {why}");
            message(StatusCode::FORBIDDEN, "Sign-in failed", &why)
        }
    }
}

/// Whether the request comes from this page itself. A browser that sends `Sec-Fetch-Site` says it
/// (`same-origin`); with the page's `Referrer-Policy: no-referrer` such a browser sends `Origin:
/// null` on the page's own form, so `null` is accepted beside it. A browser without fetch
/// metadata must send the page's own `Origin`. A request with neither (no browser) still needs the
/// session and its anti-CSRF token.
fn same_origin(page: &ApprovalPage, headers: &HeaderMap) -> bool {
    let text = |name| headers.get(name).map(|v: &HeaderValue| v.to_str().unwrap_or("\u{0}"));
    match (text("sec-fetch-site"), text(header::ORIGIN.as_str())) {
        (Some(site), origin) => site == "same-origin" && origin.is_none_or(|o| o == "null" || o == page.origin()),
        (None, Some(origin)) => origin == page.origin(),
        (None, None) => true,
    }
}

async fn decide(State(page): State<Arc<ApprovalPage>>, Path(id): Path<String>, request: Request) -> Response {
    let peer = request.extensions().get::<ConnectInfo<SocketAddr>>().map(|c| c.0.to_string()).unwrap_or_default();
    let headers = request.headers().clone();
    if !same_origin(&page, &headers) {
        tracing::warn!(%peer, "approval page: refused a cross-site decision");
        return message(StatusCode::FORBIDDEN, "Refused", "A decision can only be made from the approval page itself.");
    }
    let Some(session) = cookie(&page, &headers, "session") else {
        return message(StatusCode::UNAUTHORIZED, "Sign in first", "Open the approval link and sign in to decide.");
    };
    let Some(session) = page.session(&session).await else {
        return message(
            StatusCode::UNAUTHORIZED,
            "Sign in first",
            "Your session ended; open the approval link and sign in again.",
        );
    };
    let body = match axum::body::to_bytes(request.into_body(), MAX_DECISION_BYTES).await {
        Ok(b) => b,
        Err(_) => {
            return message(StatusCode::PAYLOAD_TOO_LARGE, "Refused", "The decision is larger than a decision can be.");
        }
    };
    let mut csrf = None;
    let mut decision = None;
    for (k, v) in form_urlencoded::parse(&body) {
        match k.as_ref() {
            "csrf" => csrf = Some(v.into_owned()),
            "decision" => decision = Some(v.into_owned()),
            _ => {}
        }
    }
    use subtle::ConstantTimeEq;
    if !csrf.is_some_and(|c| bool::from(c.as_bytes().ct_eq(session.csrf.as_bytes()))) {
        tracing::warn!(%peer, "approval page: refused a decision without this session's anti-CSRF token");
        return message(
            StatusCode::FORBIDDEN,
            "Refused",
            "The decision does not carry this page's anti-forgery token.",
        );
    }
    let approve = match decision.as_deref() {
        Some("approve") => true,
        Some("decline") => false,
        _ => return message(StatusCode::BAD_REQUEST, "Refused", "A decision is `approve` or `decline`."),
    };
    let record = match page.notes().record(&id).await {
        Ok(Some(r)) => r,
        Ok(None) => return unknown(),
        Err(e) => return unavailable(&e.to_string()),
    };
    let (rule, policies) = match page.permission(&session, &record) {
        Permission::Permitted(why, policies) => (why, policies),
        Permission::Refused(why) => {
            crate::metrics::metrics().page_decision("refused");
            tracing::warn!(approver = %session.approver, page = %record.id, "approval page: refused a decision: {why}");
            return message(StatusCode::FORBIDDEN, "You may not decide this request", &why);
        }
    };
    match page.decide(&session, &record, approve, &peer, &rule, &policies).await {
        Ok(true) => {
            page.decided.notify_waiters();
            see_other(&format!("/approve/{}", record.id))
        }
        Ok(false) => message(
            StatusCode::CONFLICT,
            "Already decided",
            "Someone decided this request first; reload the page to see what.",
        ),
        Err(why) => message(StatusCode::CONFLICT, "Not decided", &why),
    }
}
