//! `equinix-mcp approvers add NAME`: the person at this machine enrolls a passkey through a
//! one-time link the command serves on loopback. The link carries 128 random bits, answers one
//! enrollment, and lasts a few minutes; the page it opens asks the browser for a passkey with user
//! verification required; the answer must come from the page itself (its origin), on the
//! loopback name WebAuthn needs (`localhost`).

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::Context;
use axum::extract::{Path as UrlPath, Request, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use subtle::ConstantTimeEq;
use tokio::sync::oneshot;
use webauthn_rs::prelude::PasskeyRegistration;

use super::{html, respond};
use crate::approvers::{check_name, principal};
use crate::passkeys::{Ceremony, Enrollment, MAX_ANSWER_BYTES, PasskeyStore};

/// The one enrollment a link may make.
struct Link {
    name: String,
    token: String,
    origin: String,
    ceremony: Ceremony,
    options: String,
    /// Taken by the first answer (used once, whatever it comes to).
    state: Mutex<Option<PasskeyRegistration>>,
    store: PasskeyStore,
    done: Mutex<Option<oneshot::Sender<Result<Enrollment, String>>>>,
}

/// Serves the enrollment of `name` on `listen` (loopback), tells `show` the link, and waits until
/// the browser enrolled a passkey (or the link expired after `valid`): the enrollment kept in
/// `store`.
pub(crate) async fn run(
    name: &str,
    store: PasskeyStore,
    listen: SocketAddr,
    valid: Duration,
    show: impl FnOnce(&str),
) -> anyhow::Result<Enrollment> {
    check_name(name)?;
    if !listen.ip().is_loopback() {
        anyhow::bail!("--listen {listen}: the enrollment page is for the person at this machine, on loopback only");
    }
    // both loopbacks, so nothing else answers at the link's origin
    let listeners = crate::approvers::loopback::bind_both(listen.port())
        .with_context(|| format!("binding port {} on loopback", listen.port()))?;
    let port = listeners[0].local_addr()?.port();
    // WebAuthn takes a host name, never an IP address: the page is at localhost
    let origin = format!("http://localhost:{port}");
    let ceremony = Ceremony::new(&origin).map_err(anyhow::Error::msg)?;
    let who = principal(name);
    let mine = store.all().await.map_err(anyhow::Error::msg)?.into_iter().filter(|e| e.principal == who);
    let exclude = mine.filter_map(|e| URL_SAFE_NO_PAD.decode(&e.credential_id).ok()).collect();
    let (options, state) = ceremony.begin_enrollment(&who, name, exclude).map_err(anyhow::Error::msg)?;
    let (done, finished) = oneshot::channel();
    let link = Arc::new(Link {
        name: name.to_string(),
        token: hex::encode(rand::random::<[u8; 16]>()),
        origin: origin.clone(),
        ceremony,
        options: serde_json::to_string(&options)?,
        state: Mutex::new(Some(state)),
        store,
        done: Mutex::new(Some(done)),
    });
    let app = axum::Router::new()
        .route("/approve/page.css", get(respond::css))
        .route("/approve/passkey.js", get(respond::script))
        .route("/enroll/{token}", get(page).post(answer))
        .layer(axum::middleware::from_fn(respond::harden))
        .layer(axum::middleware::from_fn_with_state(format!("localhost:{port}"), host_only))
        .with_state(link.clone());
    let stop = tokio_util::sync::CancellationToken::new();
    let servers: Vec<_> = listeners
        .into_iter()
        .map(|listener| {
            let (stop, app) = (stop.clone(), app.clone());
            tokio::spawn(async move {
                let _ = axum::serve(listener, app).with_graceful_shutdown(stop.cancelled_owned()).await;
            })
        })
        .collect();
    show(&format!("{origin}/enroll/{}", link.token));
    let outcome = tokio::time::timeout(valid, finished).await;
    stop.cancel();
    for server in servers {
        let _ = server.await;
    }
    match outcome {
        Ok(Ok(result)) => result.map_err(anyhow::Error::msg),
        Ok(Err(_)) => anyhow::bail!("the enrollment page stopped before an answer came"),
        Err(_) => anyhow::bail!("the link expired after {} seconds, unused: run the command again", valid.as_secs()),
    }
}

async fn host_only(State(want): State<String>, request: Request, next: axum::middleware::Next) -> Response {
    respond::only_at(&want, request, next).await
}

fn mine(link: &Link, token: &str) -> bool {
    bool::from(token.as_bytes().ct_eq(link.token.as_bytes()))
}

fn say(status: StatusCode, title: &str, text: &str) -> Response {
    respond::page_response(status, html::message(title, text))
}

async fn page(State(link): State<Arc<Link>>, UrlPath(token): UrlPath<String>) -> Response {
    if !mine(&link, &token) {
        return say(StatusCode::NOT_FOUND, "No such enrollment", "This link names no enrollment.");
    }
    if link.state.lock().unwrap_or_else(|p| p.into_inner()).is_none() {
        return say(StatusCode::GONE, "Used", "This link was used; run `equinix-mcp approvers add` again.");
    }
    let action = format!("/enroll/{}", link.token);
    respond::page_response(StatusCode::OK, html::enroll_page(&link.name, &action, &link.options))
}

async fn answer(State(link): State<Arc<Link>>, UrlPath(token): UrlPath<String>, request: Request) -> Response {
    if !mine(&link, &token) {
        return say(StatusCode::NOT_FOUND, "No such enrollment", "This link names no enrollment.");
    }
    let headers: HeaderMap = request.headers().clone();
    if let Err(why) = respond::from_origin(&link.origin, &headers) {
        return say(
            StatusCode::FORBIDDEN,
            "Refused",
            &format!("An enrollment is accepted only from its own page: {why}."),
        );
    }
    // used once, whatever the answer comes to
    let Some(state) = link.state.lock().unwrap_or_else(|p| p.into_inner()).take() else {
        return say(StatusCode::GONE, "Used", "This link was used; run `equinix-mcp approvers add` again.");
    };
    let outcome = enroll(&link, state, request).await;
    let page = match &outcome {
        Ok(e) => say(
            StatusCode::OK,
            "Enrolled",
            &format!(
                "{} is an approver on this machine (passkey {}). You may close this page.",
                link.name, e.credential_id
            ),
        ),
        Err(why) => say(StatusCode::FORBIDDEN, "Not enrolled", why),
    };
    if let Some(done) = link.done.lock().unwrap_or_else(|p| p.into_inner()).take() {
        let _ = done.send(outcome);
    }
    page.into_response()
}

async fn enroll(link: &Link, state: PasskeyRegistration, request: Request) -> Result<Enrollment, String> {
    let body = axum::body::to_bytes(request.into_body(), 4 * MAX_ANSWER_BYTES)
        .await
        .map_err(|_| "the answer is larger than a passkey's".to_string())?;
    let fields: Vec<(String, String)> = form_urlencoded::parse(&body).into_owned().collect();
    let Some((_, credential)) = fields.iter().find(|(k, v)| k == "credential" && !v.is_empty()) else {
        return Err("the form carries no passkey: add one in a browser that runs the page's script".into());
    };
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64);
    let enrollment = link.ceremony.finish_enrollment(credential, &state, &principal(&link.name), now)?;
    link.store.insert(enrollment.clone()).await?;
    Ok(enrollment)
}
