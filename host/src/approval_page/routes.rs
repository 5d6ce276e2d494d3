//! The page's HTTP routes, behind the same `Host` check as the server's other public routes:
//!
//! - `GET /approve`: the inbox, the changes waiting that the signed-in person may decide
//!   (`GET /approve/sign-in` signs in for it);
//! - `GET /approve/{id}`: signed out, a sign-in link and nothing of the request; signed in, the
//!   request, who may decide and the buttons; afterwards, what was decided;
//! - `GET /approve/{id}/sign-in`: to the identity provider (code flow, PKCE, state, nonce, max_age);
//! - `GET /approve/callback`: back from it; then to the page the sign-in began on, never elsewhere;
//! - `POST /approve/{id}`: a decision, from this page only (session cookie, anti-CSRF token, Origin);
//! - `POST /approve/{id}/challenge`: the challenge a passkey signs to approve with a comment (a
//!   function of the request and the comment; the same checks as a decision, nothing kept);
//! - `GET /approve/page.css`, `GET /approve/passkey.js` (the one script, which asks the browser
//!   for a passkey and puts its answer in the form), `GET /approve/icon.svg` (also at
//!   `/favicon.ico`, where browsers ask unbidden);
//! - `GET /approve/passkeys`, `POST /approve/passkeys`: a signed-in person's passkeys, and adding
//!   one (with a recent sign-in; `GET /approve/passkeys/sign-in` signs in for it).
//!
//! Every answer carries a CSP that runs no script but that file (none inline), fetches from this
//! origin only, with
//! `frame-ancestors 'none'`, `nosniff`, `no-referrer` and `no-store`.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::{ConnectInfo, Path, RawQuery, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::get;

use super::html::{self, View};
use super::respond::{
    MAX_DECISION_BYTES, css, harden, icon, judged, message, only_at, page_response, reason, same_origin, script,
    see_other, unavailable, unknown,
};
use super::{ApprovalPage, PageRecord, Permission, Session, SignInError};
use super::{inbox, local};
use crate::passkeys::{ApprovedWith, Evidence};

pub(crate) fn routes(page: Arc<ApprovalPage>) -> axum::Router {
    axum::Router::new()
        .route("/approve/page.css", get(css))
        .route("/approve/icon.svg", get(icon))
        .route("/favicon.ico", get(icon))
        .route("/approve/passkey.js", get(script))
        .route("/approve/passkeys", get(passkeys_page).post(enroll))
        .route("/approve/passkeys/sign-in", get(passkeys_sign_in))
        .route("/approve/callback", get(callback))
        .route("/approve", get(inbox))
        .route("/approve/sign-in", get(inbox_sign_in))
        .route("/approve/{id}", get(show).post(decide))
        .route("/approve/{id}/sign-in", get(sign_in))
        .route("/approve/{id}/challenge", axum::routing::post(challenge))
        .layer(axum::middleware::from_fn(harden))
        .layer(axum::middleware::from_fn_with_state(page.clone(), local_host_only))
        .with_state(page)
}

/// A local page answers only at `localhost:PORT`: its passkeys are bound to that name, and a page
/// loaded under any other name (a rebinding one, or a bare IP) is no page of this server.
async fn local_host_only(State(page): State<Arc<ApprovalPage>>, request: Request, next: Next) -> Response {
    match page.local_host() {
        Some(want) => only_at(&want, request, next).await,
        None => next.run(request).await,
    }
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

/// The signed-in person of `headers`' session cookie, with the cookie's store key; `Err`: the
/// answer to give when the store that keeps the sessions did not answer.
async fn signed_in(page: &ApprovalPage, headers: &HeaderMap) -> Result<Option<(Session, String)>, Response> {
    let Some(cookie) = cookie(page, headers, "session") else { return Ok(None) };
    match page.session(&cookie).await {
        Ok(Some(session)) => Ok(Some((session, super::hashed(&cookie)))),
        Ok(None) => Ok(None),
        Err(e) => Err(unavailable(&e)),
    }
}

async fn show(State(page): State<Arc<ApprovalPage>>, Path(id): Path<String>, headers: HeaderMap) -> Response {
    let notes = page.notes();
    let record = match notes.record(&id).await {
        Ok(Some(r)) => r,
        Ok(None) => return unknown(),
        Err(e) => return unavailable(&e),
    };
    if page.is_local() {
        return local::show(&page, &record).await;
    }
    let (session, _) = match signed_in(&page, &headers).await {
        Ok(Some(signed)) => signed,
        Ok(None) => return page_response(StatusCode::OK, html::signed_out(&record.id)),
        Err(unavailable) => return unavailable,
    };
    let decision = match notes.decision(&record.id).await {
        Ok(d) => d,
        Err(e) => return unavailable(&e),
    };
    if !page.may_read(&session, &record.question(), decision.as_ref()) {
        tracing::warn!(approver = %session.approver, page = %record.id, "approval page: refused to show a request to someone who may not decide it");
        return message(
            StatusCode::FORBIDDEN,
            "Not yours to read",
            &format!(
                "You are signed in as {}. A request's page is shown to the person who proposed it and to those who \
                 may decide it, and you are neither; the link alone grants nothing.",
                session.approver
            ),
        );
    }
    let mine = match page.passkeys.active_of(&session.approver).await {
        Ok(m) => m,
        Err(e) => return unavailable(&e),
    };
    let (permission, passkey_request) = if mine.is_empty() {
        (with_passkey_hint(&page, &session, &record), None)
    } else {
        let options = page.passkeys.request_options(&page.origin(), &mine, &record.identity());
        match options {
            Ok(o) => (page.permission(&session, &record.question(), ApprovedWith::Passkey), Some(o)),
            Err(why) => (Permission::Refused(format!("your passkey cannot be used here: {why}")), None),
        }
    };
    let (outcome, proposer) = match page.followed(&record).await {
        Ok(found) => found,
        Err(e) => return unavailable(&e),
    };
    let (quorum, permission) = match page.quorum_view(&session, &record, decision.as_ref(), permission).await {
        Ok(found) => found,
        Err(e) => return unavailable(&e),
    };
    let view = View {
        record: &record,
        session: &session,
        decision: decision.as_ref(),
        outcome: outcome.as_ref(),
        proposer: proposer.as_ref(),
        permission: &permission,
        now_ms: notes.now_ms,
        passkey_request: passkey_request.as_deref(),
        local: false,
        approvals: &quorum.approvals,
        progress: quorum.progress.as_ref(),
        quorum_note: quorum.note.as_deref(),
    };
    page_response(StatusCode::OK, view.render())
}

/// The permission of a person with no passkey; when only a passkey would do, says so and where
/// to enroll one.
fn with_passkey_hint(page: &ApprovalPage, session: &Session, record: &PageRecord) -> Permission {
    match page.permission(session, &record.question(), ApprovedWith::SignIn) {
        Permission::Refused(why) => match page.permission(session, &record.question(), ApprovedWith::Passkey) {
            Permission::Permitted(..) => Permission::Refused(format!(
                "the operator's policy needs your passkey for this request, and you have none enrolled; add one at \
                 /approve/passkeys, then come back ({why})"
            )),
            Permission::Refused(_) => Permission::Refused(why),
        },
        permitted => permitted,
    }
}

async fn sign_in(State(page): State<Arc<ApprovalPage>>, Path(id): Path<String>) -> Response {
    if page.is_local() {
        return local::no_sign_in();
    }
    match page.notes().record(&id).await {
        Ok(Some(_)) => {}
        Ok(None) => return unknown(),
        Err(e) => return unavailable(&e),
    }
    match page.begin_sign_in(&id) {
        Ok((sealed, url)) => {
            let mut response = see_other(url.as_str());
            response.headers_mut().insert(header::SET_COOKIE, set_cookie(&page, "signin", &sealed, 600));
            response
        }
        Err(_) => local::no_sign_in(),
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
    if page.is_local() {
        return local::no_sign_in();
    }
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
            let mut response = see_other(&super::return_path(&page_id));
            let h = response.headers_mut();
            h.append(header::SET_COOKIE, set_cookie(&page, "session", &session, super::SESSION_MS / 1000));
            h.append(header::SET_COOKIE, set_cookie(&page, "signin", "", 0));
            response
        }
        Err(SignInError::Store(e)) => unavailable(&e),
        Err(why) => {
            tracing::warn!("approval page: a sign-in failed: {why}");
            let status = match &why {
                SignInError::Provider(p) if p.is_a_broken_answer() => StatusCode::BAD_GATEWAY,
                _ => StatusCode::FORBIDDEN,
            };
            message(status, "Sign-in failed", &why.to_string())
        }
    }
}

/// A form posted to the page by a signed-in person: who, their session's store key, where from,
/// and the form's fields.
struct Posted {
    session: Session,
    key: String,
    peer: String,
    fields: Vec<(String, String)>,
}

impl Posted {
    fn field(&self, name: &str) -> Option<&str> {
        self.fields.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str()).filter(|v| !v.is_empty())
    }
}

/// The checks every form posted to the page passes first: from the page's own origin, by a
/// signed-in person, no larger than a decision can be, carrying the session's anti-CSRF token.
/// `what` names the form in the refusals ("a decision", "a passkey").
async fn posted(page: &ApprovalPage, request: Request, what: &str) -> Result<Posted, Response> {
    let peer = request.extensions().get::<ConnectInfo<SocketAddr>>().map(|c| c.0.to_string()).unwrap_or_default();
    let headers = request.headers().clone();
    if let Err(why) = same_origin(page, &headers) {
        tracing::warn!(%peer, "approval page: refused {what} not sent from the page: {why}");
        return Err(message(
            StatusCode::FORBIDDEN,
            "Refused",
            &format!("The page accepts {what} only from itself: {why}."),
        ));
    }
    let Some((session, key)) = signed_in(page, &headers).await? else {
        return Err(message(
            StatusCode::UNAUTHORIZED,
            "Sign in first",
            &format!("You are not signed in, or your session ended; sign in on the page to send {what}."),
        ));
    };
    let Ok(body) = axum::body::to_bytes(request.into_body(), MAX_DECISION_BYTES).await else {
        return Err(message(StatusCode::PAYLOAD_TOO_LARGE, "Refused", &format!("This is larger than {what} can be.")));
    };
    let fields: Vec<(String, String)> = form_urlencoded::parse(&body).into_owned().collect();
    let posted = Posted { session, key, peer, fields };
    use subtle::ConstantTimeEq;
    if !posted.field("csrf").is_some_and(|c| bool::from(c.as_bytes().ct_eq(posted.session.csrf.as_bytes()))) {
        tracing::warn!(peer = %posted.peer, "approval page: refused {what} without this session's anti-CSRF token");
        return Err(message(
            StatusCode::FORBIDDEN,
            "Refused",
            &format!("It does not carry this page's anti-forgery token, so {what} was refused."),
        ));
    }
    Ok(posted)
}

async fn decide(State(page): State<Arc<ApprovalPage>>, Path(id): Path<String>, request: Request) -> Response {
    if page.is_local() {
        return local::decide(&page, &id, request).await;
    }
    let posted = match posted(&page, request, "a decision").await {
        Ok(p) => p,
        Err(refused) => return refused,
    };
    let (session, peer) = (&posted.session, &posted.peer);
    let (decision, assertion) = (posted.field("decision"), posted.field("assertion"));
    let approve = match decision {
        Some("approve") => true,
        Some("decline") => false,
        _ => return message(StatusCode::BAD_REQUEST, "Refused", "A decision is `approve` or `decline`."),
    };
    let reason = match reason(approve, posted.field("reason")) {
        Ok(r) => r,
        Err(refused) => return *refused,
    };
    let record = match page.notes().record(&id).await {
        Ok(Some(r)) => r,
        Ok(None) => return unknown(),
        Err(e) => return unavailable(&e),
    };
    let evidence = match passkey_answer(&page, session, &record, (approve, &reason), assertion).await {
        Ok(e) => e,
        Err(why) => {
            crate::metrics::metrics().page_decision("refused");
            tracing::warn!(approver = %session.approver, page = %record.id, "approval page: refused a passkey: {why}");
            return message(StatusCode::FORBIDDEN, "Your passkey did not approve this request", &why);
        }
    };
    judged(&page, session, &record, (approve, &reason), peer, evidence).await
}

/// The challenge a passkey signs to approve page `id` with the comment the form carries (the
/// page's own options sign none): a pure function of the request and the comment, so nothing is
/// kept. Asked for by the page's script, from the page, by whoever may read it.
async fn challenge(State(page): State<Arc<ApprovalPage>>, Path(id): Path<String>, request: Request) -> Response {
    let comment = if page.is_local() {
        match local::posted_comment(&page, request).await {
            Ok(c) => c,
            Err(refused) => return refused,
        }
    } else {
        let posted = match posted(&page, request, "a passkey's challenge").await {
            Ok(p) => p,
            Err(refused) => return refused,
        };
        match reason(true, posted.field("reason")) {
            Ok(c) => c,
            Err(refused) => return *refused,
        }
    };
    let record = match page.notes().record(&id).await {
        Ok(Some(r)) => r,
        Ok(None) => return unknown(),
        Err(e) => return unavailable(&e),
    };
    let signed = crate::passkeys::challenge::challenge(&record.identity_saying(&comment));
    let body = serde_json::json!({"challenge": base64::Engine::encode(&base64::engine::general_purpose::URL_SAFE_NO_PAD, signed)});
    ([(header::CONTENT_TYPE, "application/json")], body.to_string()).into_response()
}

/// The passkey a decision carries, checked; `None` for a decision made by sign-in alone, which a
/// person with a passkey may do only to decline.
async fn passkey_answer(
    page: &ApprovalPage,
    session: &Session,
    record: &PageRecord,
    (approve, comment): (bool, &str),
    assertion: Option<&str>,
) -> Result<Option<Evidence>, String> {
    let Some(answer) = assertion else {
        if !approve {
            return Ok(None);
        }
        let mine = page.passkeys.active_of(&session.approver).await?;
        if mine.is_empty() {
            return Ok(None);
        }
        return Err(
            "you have a passkey enrolled, so approving takes it: press Approve on the page in a browser that runs its \
             script, and use your authenticator"
                .into(),
        );
    };
    if !approve {
        return Err("a decline carries no passkey".into());
    }
    let signed = record.identity_saying(comment);
    let evidence = page.passkeys.check(&page.origin(), &session.approver, answer, &signed).await.map_err(|why| {
        match comment.is_empty() {
            true => why.to_string(),
            false => format!("{why} (the passkey signs the comment with the request: was it changed after signing?)"),
        }
    })?;
    Ok(Some(evidence))
}

/// The inbox of the signed-in person (see [`super::inbox`]).
async fn inbox(State(page): State<Arc<ApprovalPage>>, RawQuery(query): RawQuery, headers: HeaderMap) -> Response {
    if page.is_local() {
        return inbox::none_here();
    }
    let (session, _) = match signed_in(&page, &headers).await {
        Ok(Some(signed)) => signed,
        Ok(None) => return page_response(StatusCode::OK, inbox::signed_out()),
        Err(unavailable) => return unavailable,
    };
    match inbox::read(&page, &session, inbox::before(query.as_deref()), inbox::state(query.as_deref())).await {
        Ok(listed) => inbox::response(&listed, &session, page.clock.now_ms()),
        Err(e) => unavailable(&e),
    }
}

async fn inbox_sign_in(State(page): State<Arc<ApprovalPage>>) -> Response {
    page_sign_in(&page, super::INBOX_PAGE)
}

async fn passkeys_sign_in(State(page): State<Arc<ApprovalPage>>) -> Response {
    page_sign_in(&page, super::PASSKEYS_PAGE)
}

/// To the identity provider, returning to `to` (one of [`super::INBOX_PAGE`], [`super::PASSKEYS_PAGE`]).
fn page_sign_in(page: &ApprovalPage, to: &str) -> Response {
    if page.is_local() {
        return local::no_sign_in();
    }
    match page.begin_sign_in(to) {
        Ok((sealed, url)) => {
            let mut response = see_other(url.as_str());
            response.headers_mut().insert(header::SET_COOKIE, set_cookie(page, "signin", &sealed, 600));
            response
        }
        Err(_) => local::no_sign_in(),
    }
}

/// A person's passkeys, and the way to add one.
async fn passkeys_page(State(page): State<Arc<ApprovalPage>>, headers: HeaderMap) -> Response {
    if page.is_local() {
        return local::no_sign_in();
    }
    let (session, key) = match signed_in(&page, &headers).await {
        Ok(Some(signed)) => signed,
        Ok(None) => return page_response(StatusCode::OK, html::passkeys_signed_out()),
        Err(unavailable) => return unavailable,
    };
    let all = match page.passkeys.all().await {
        Ok(a) => a,
        Err(e) => return unavailable(&e),
    };
    let mine: Vec<_> = all.into_iter().filter(|e| e.principal == session.approver).collect();
    let adding = if !page.recently_signed_in(&session) {
        html::Adding::SignInAgain(page.max_age_secs())
    } else {
        let shown = session.subject.clone();
        match page.passkeys.begin_enrollment(&page.origin(), &key, &session.approver, &shown).await {
            Ok(options) => html::Adding::Options(options),
            Err(why) => html::Adding::Unavailable(why.to_string()),
        }
    };
    page_response(StatusCode::OK, html::passkeys(&session, &mine, &adding))
}

/// Adding a passkey: the browser's answer to the options the page gave.
async fn enroll(State(page): State<Arc<ApprovalPage>>, request: Request) -> Response {
    if page.is_local() {
        return local::no_sign_in();
    }
    let posted = match posted(&page, request, "a passkey").await {
        Ok(p) => p,
        Err(refused) => return refused,
    };
    let session = &posted.session;
    if !page.recently_signed_in(session) {
        return message(
            StatusCode::FORBIDDEN,
            "Sign in again",
            &format!(
                "Adding a passkey needs a sign-in within the last {} s; sign in again on /approve/passkeys.",
                page.max_age_secs()
            ),
        );
    }
    let Some(credential) = posted.field("credential") else {
        return message(
            StatusCode::BAD_REQUEST,
            "No passkey",
            "The form carries no passkey: add one in a browser that runs the page's script.",
        );
    };
    let (key, peer) = (&posted.key, &posted.peer);
    match page.passkeys.finish_enrollment(&page.origin(), key, &session.approver, credential, peer).await {
        Ok(_) => see_other("/approve/passkeys"),
        Err(why) => {
            tracing::warn!(approver = %session.approver, "approval page: refused an enrollment: {why}");
            message(StatusCode::FORBIDDEN, "The passkey was not added", &why.to_string())
        }
    }
}
