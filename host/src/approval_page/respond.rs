//! What every page of this server answers with: the hardening headers and the CSP, the HTML
//! response, the few messages, the origin check of a form, and the decision judged and recorded
//! once its approver is known. The team's routes (`routes`), the local approvers' (`local`) and
//! the enrollment page of `approvers add` answer through these.

use axum::extract::Request;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::html;
use super::record::MAX_REASON_CHARS;
use super::{ApprovalPage, NotDecided, PageRecord, Permission, Session};
use crate::passkeys::{ApprovedWith, Evidence};

/// The largest decision body read (an assertion, URL-encoded, is most of it).
pub(crate) const MAX_DECISION_BYTES: usize = 4 * crate::passkeys::MAX_ANSWER_BYTES;

// `connect-src 'self'`: the inbox's script reads the inbox again, from this origin only
const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; \
                   form-action 'self'; \
                   frame-ancestors 'none'; base-uri 'none'";

pub(crate) async fn harden(request: Request, next: Next) -> Response {
    let mut response = next.run(request).await;
    let h = response.headers_mut();
    h.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(CSP));
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    h.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

pub(crate) fn page_response(status: StatusCode, body: String) -> Response {
    (status, [(header::CONTENT_TYPE, "text/html; charset=utf-8")], body).into_response()
}

pub(crate) fn message(status: StatusCode, title: &str, text: &str) -> Response {
    page_response(status, html::message(title, text))
}

pub(crate) fn see_other(location: &str) -> Response {
    (StatusCode::SEE_OTHER, [(header::LOCATION, location.to_string())]).into_response()
}

pub(crate) async fn css() -> Response {
    ([(header::CONTENT_TYPE, "text/css; charset=utf-8")], html::CSS).into_response()
}

pub(crate) async fn icon() -> Response {
    ([(header::CONTENT_TYPE, "image/svg+xml")], html::ICON).into_response()
}

pub(crate) async fn script() -> Response {
    ([(header::CONTENT_TYPE, "text/javascript; charset=utf-8")], html::SCRIPT).into_response()
}

pub(crate) fn unknown() -> Response {
    message(
        StatusCode::NOT_FOUND,
        "No such approval",
        "This link names no request waiting for approval: it expired, or it never existed.",
    )
}

/// A store that did not answer: the browser is told, in fixed words, to try again shortly; `why`
/// (the store's own error, where it is and what it said) goes to the operator's log only.
pub(crate) fn unavailable(why: impl std::fmt::Display) -> Response {
    tracing::warn!("approval page: {why}");
    message(
        StatusCode::SERVICE_UNAVAILABLE,
        "Try again shortly",
        "The server cannot reach its proposal store right now.",
    )
}

/// Whether the request comes from this page itself. A browser that sends `Sec-Fetch-Site` says it
/// (`same-origin`); with the page's `Referrer-Policy: no-referrer` such a browser sends `Origin:
/// null` on the page's own form, so `null` is accepted beside it. A browser without fetch
/// metadata must send the page's own `Origin`. A request with neither is no browser's (every
/// browser that can make a passkey sends one of them on a POST), so it is refused: the page decides
/// only for a person at a browser. These headers stop other sites, not other programs on this
/// machine, which may send any header: against those the passkey's signature is bound to this
/// page's exact origin, and a team page's decision needs the session's cookie and anti-CSRF token.
/// `Err`: why not, in words for the refusal.
pub(crate) fn same_origin(page: &ApprovalPage, headers: &HeaderMap) -> Result<(), NotFromThePage> {
    from_origin(&page.origin(), headers)
}

/// Why a POST is not taken as the page's own (what the browser's headers say, clipped).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum NotFromThePage {
    #[error("the browser says it was sent from a {site} page (Origin {sent}), not from this page ({origin})")]
    BrowserSaysElsewhere { site: String, sent: String, origin: String },
    #[error("it was sent from {sent}, not from this page ({origin})")]
    OtherOrigin { sent: String, origin: String },
    #[error(
        "it names neither Origin nor Sec-Fetch-Site, which every browser that can make a passkey sends: the page \
         takes it only from itself, in a browser"
    )]
    NoBrowser,
}

/// [`same_origin`] for a page at `origin` (the enrollment page of `approvers add` too).
pub(crate) fn from_origin(origin: &str, headers: &HeaderMap) -> Result<(), NotFromThePage> {
    let text = |name| headers.get(name).map(|v: &HeaderValue| v.to_str().unwrap_or("\u{0}"));
    let shown = |s: &str| equinix_broker_contract::clip(s, 80);
    match (text("sec-fetch-site"), text(header::ORIGIN.as_str())) {
        (Some("same-origin"), sent) if sent.is_none_or(|o| o == "null" || o == origin) => Ok(()),
        (Some(site), sent) => Err(NotFromThePage::BrowserSaysElsewhere {
            site: shown(site),
            sent: shown(sent.unwrap_or("none")),
            origin: origin.into(),
        }),
        (None, Some(sent)) if sent == origin => Ok(()),
        (None, Some(sent)) => Err(NotFromThePage::OtherOrigin { sent: shown(sent), origin: origin.into() }),
        (None, None) => Err(NotFromThePage::NoBrowser),
    }
}

/// A decision whose approver is known (and their passkey checked): judged by the rule or the
/// operator's policy, then recorded once.
pub(crate) async fn judged(
    page: &ApprovalPage,
    session: &Session,
    record: &PageRecord,
    (approve, reason): (bool, &str),
    peer: &str,
    evidence: Option<Evidence>,
) -> Response {
    let with = if evidence.is_some() { ApprovedWith::Passkey } else { ApprovedWith::SignIn };
    let (rule, policies) = match page.permission(session, &record.question(), with) {
        Permission::Permitted(why, policies) => (why, policies),
        Permission::Refused(why) => {
            crate::metrics::metrics().page_decision("refused");
            tracing::warn!(approver = %session.approver, page = %record.id, "approval page: refused a decision: {why}");
            return message(StatusCode::FORBIDDEN, "You may not decide this request", &why);
        }
    };
    match page.decide(session, record, (approve, reason), peer, (&rule, &policies), evidence.as_ref()).await {
        Ok(true) => {
            page.decided.notify_waiters();
            see_other(&format!("/approve/{}", record.id))
        }
        Ok(false) => message(StatusCode::CONFLICT, "Already decided", &already_decided(page, session, record).await),
        Err(NotDecided::Store(e)) => unavailable(e),
        Err(why @ NotDecided::NotAudited(_)) => {
            message(StatusCode::INTERNAL_SERVER_ERROR, "Not decided", &why.to_string())
        }
        Err(why) => message(StatusCode::CONFLICT, "Not decided", &why.to_string()),
    }
}

/// The reason a decision carries (`reason` of the form), checked: one a decline must give, an
/// approval may; at most [`MAX_REASON_CHARS`] characters, its invisible characters shown.
/// `Err`: the refusal, naming what was wrong.
pub(crate) fn reason(approve: bool, given: Option<&str>) -> Result<String, Box<Response>> {
    let text = given.map(str::trim).unwrap_or_default();
    if !approve && text.is_empty() {
        return Err(Box::new(message(
            StatusCode::BAD_REQUEST,
            "Say why",
            "A decline needs a reason: write it in the box above Decline, so the proposer and the agent learn why.",
        )));
    }
    let chars = text.chars().count();
    if chars > MAX_REASON_CHARS {
        return Err(Box::new(message(
            StatusCode::BAD_REQUEST,
            "Too long",
            &format!("The reason is {chars} characters long; at most {MAX_REASON_CHARS} are kept with a decision."),
        )));
    }
    Ok(crate::exact_json::visible(text))
}

/// What a person whose decision came second is told: who decided first ("you" when it was them),
/// what, when and why, and where the request stands; never a blank.
async fn already_decided(page: &ApprovalPage, session: &Session, record: &PageRecord) -> String {
    let notes = page.notes();
    let Ok(Some(first)) = notes.decision(&record.id).await else {
        return "Someone decided this request first; reload the page to see what.".into();
    };
    let outcome = notes.outcome(&record.id).await.ok().flatten();
    let state = super::state::State::of(record.expires_at_ms, Some(first.decided()), outcome.as_ref(), notes.now_ms);
    let who = |d: super::state::Decided| super::people::words(d.approver, d.named, &session.approver);
    let reason = match first.reason.is_empty() {
        true => String::new(),
        false => format!(" Their words: \"{}\".", first.reason),
    };
    format!(
        "Your decision was recorded and not kept: this request was decided first. {}{reason}",
        state.sentence(&who, &super::html::at)
    )
}

/// Middleware for a page bound to one name: a request whose one `Host` is not `want`
/// (`localhost:PORT`) gets 421 before anything is read.
pub(crate) async fn only_at(want: &str, request: Request, next: Next) -> Response {
    let mut hosts = request.headers().get_all(header::HOST).iter();
    let named = match (hosts.next().map(|h| h.to_str()), hosts.next()) {
        (Some(Ok(host)), None) => host.eq_ignore_ascii_case(want),
        _ => false,
    };
    if named {
        return next.run(request).await;
    }
    tracing::warn!(path = %request.uri().path(), "refused a request not addressed to {want}");
    let text = format!("this page answers only at http://{want} (the name its passkeys are bound to)\n");
    (StatusCode::MISDIRECTED_REQUEST, text).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        pairs.iter().map(|(k, v)| (header::HeaderName::from_static(k), HeaderValue::from_static(v))).collect()
    }

    #[test]
    fn a_post_counts_only_from_the_page_itself_in_a_browser() {
        let page = "http://localhost:8932";
        for ok in [
            headers(&[("sec-fetch-site", "same-origin"), ("origin", "null")]),
            headers(&[("sec-fetch-site", "same-origin"), ("origin", "http://localhost:8932")]),
            headers(&[("sec-fetch-site", "same-origin")]),
            headers(&[("origin", "http://localhost:8932")]),
        ] {
            assert_eq!(from_origin(page, &ok), Ok(()), "{ok:?}");
        }
        let other_port = headers(&[("origin", "http://localhost:8933")]);
        let why = from_origin(page, &other_port).unwrap_err();
        assert_eq!(why, NotFromThePage::OtherOrigin { sent: "http://localhost:8933".into(), origin: page.into() });
        assert!(why.to_string().contains("sent from http://localhost:8933"), "{why}");
        let cross = headers(&[("sec-fetch-site", "same-site"), ("origin", "http://localhost:8933")]);
        assert!(from_origin(page, &cross).unwrap_err().to_string().contains("same-site"));
        let forged = headers(&[("sec-fetch-site", "same-origin"), ("origin", "http://evil.example")]);
        assert!(matches!(from_origin(page, &forged), Err(NotFromThePage::BrowserSaysElsewhere { .. })));
        // no browser: neither header
        let why = from_origin(page, &HeaderMap::new()).unwrap_err();
        assert_eq!(why, NotFromThePage::NoBrowser);
        assert!(why.to_string().contains("neither Origin nor Sec-Fetch-Site"), "{why}");
    }
}
