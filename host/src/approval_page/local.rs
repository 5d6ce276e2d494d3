//! The page of a local server, whose approvers are people enrolled on this machine
//! (`crate::approvers`): no sign-in, and approving takes an enrolled approver's passkey, whose
//! assertion over the request (after the authenticator verified them) names who approved. A
//! decline needs no passkey (it creates nothing) and is recorded as made by someone at this
//! machine unless a passkey came with it.

use std::net::SocketAddr;

use axum::extract::{ConnectInfo, Request};
use axum::http::StatusCode;
use axum::response::Response;

use super::html::View;
use super::respond::{MAX_DECISION_BYTES, judged, message, page_response, reason, same_origin, unavailable, unknown};
use super::{ApprovalPage, PageRecord, Permission, Session};
use crate::approvers::PREFIX;
use crate::passkeys::Evidence;

/// The session a local decision is judged and recorded under: the approver the passkey named.
fn session_of(principal: &str) -> Session {
    Session {
        approver: principal.to_string(),
        subject: principal.strip_prefix(PREFIX).unwrap_or(principal).to_string(),
        groups: Vec::new(),
        auth_time: 0,
        csrf: String::new(),
        expires_at_ms: u64::MAX,
        named: Default::default(),
    }
}

/// Who declines with no passkey: someone at this machine (whoever can reach its loopback page).
const SOMEONE_HERE: &str = "local";

pub(super) fn no_sign_in() -> Response {
    message(StatusCode::NOT_FOUND, "No sign-in here", super::LOCAL_SIGNS_NOBODY_IN)
}

/// The request, and the Approve button that asks for any enrolled approver's passkey.
pub(super) async fn show(page: &ApprovalPage, record: &PageRecord) -> Response {
    let notes = page.notes();
    let decision = match notes.decision(&record.id).await {
        Ok(d) => d,
        Err(e) => return unavailable(&e),
    };
    let approvers = match crate::approvers::enrolled(&page.passkeys.store).await {
        Ok(a) => a,
        Err(e) => return unavailable(&e),
    };
    let (permission, request) = if approvers.is_empty() {
        let command = page.enroll_command().unwrap_or_else(|| "equinix-mcp approvers add NAME".into());
        let why =
            format!("no approver is enrolled on this machine: in a terminal, run `{command}`, then reload this page");
        (Permission::Refused(why), None)
    } else {
        match page.passkeys.request_options(&page.origin(), &approvers, &record.identity()) {
            Ok(o) => (
                Permission::Permitted("an approver enrolled on this machine, with their passkey".into(), vec![]),
                Some(o),
            ),
            Err(why) => (Permission::Refused(format!("the passkeys cannot be used here: {why}")), None),
        }
    };
    let session = session_of(SOMEONE_HERE);
    let (outcome, proposer) = match page.followed(record).await {
        Ok(found) => found,
        Err(e) => return unavailable(&e),
    };
    // the approver is known once their passkey names them: the quorum is shown, and judged on the post
    let (quorum, _) = match page.quorum_view(&session, record, decision.as_ref(), permission.clone()).await {
        Ok(found) => found,
        Err(e) => return unavailable(&e),
    };
    let view = View {
        record,
        session: &session,
        decision: decision.as_ref(),
        outcome: outcome.as_ref(),
        proposer: proposer.as_ref(),
        permission: &permission,
        now_ms: notes.now_ms,
        passkey_request: request.as_deref(),
        local: true,
        approvals: &quorum.approvals,
        progress: quorum.progress.as_ref(),
        quorum_note: None,
    };
    page_response(StatusCode::OK, view.render())
}

/// A decision posted to the local page.
pub(super) async fn decide(page: &ApprovalPage, id: &str, request: Request) -> Response {
    let peer = request.extensions().get::<ConnectInfo<SocketAddr>>().map(|c| c.0.to_string()).unwrap_or_default();
    if let Err(why) = same_origin(page, request.headers()) {
        tracing::warn!(%peer, "approval page: refused a decision not sent from the page: {why}");
        return message(
            StatusCode::FORBIDDEN,
            "Refused",
            &format!("The page accepts a decision only from itself: {why}."),
        );
    }
    let Ok(body) = axum::body::to_bytes(request.into_body(), MAX_DECISION_BYTES).await else {
        return message(StatusCode::PAYLOAD_TOO_LARGE, "Refused", "This is larger than a decision can be.");
    };
    let fields: Vec<(String, String)> = form_urlencoded::parse(&body).into_owned().collect();
    let field = |name: &str| fields.iter().find(|(k, v)| k == name && !v.is_empty()).map(|(_, v)| v.as_str());
    let approve = match field("decision") {
        Some("approve") => true,
        Some("decline") => false,
        _ => return message(StatusCode::BAD_REQUEST, "Refused", "A decision is `approve` or `decline`."),
    };
    let reason = match reason(approve, field("reason")) {
        Ok(r) => r,
        Err(refused) => return *refused,
    };
    let record = match page.notes().record(id).await {
        Ok(Some(r)) => r,
        Ok(None) => return unknown(),
        Err(e) => return unavailable(&e),
    };
    let (session, evidence) = match (approve, field("assertion")) {
        (true, None) => {
            let why = "approving takes an enrolled approver's passkey: press Approve on the page in a browser that runs \
                       its script, and use your authenticator";
            return refused(&record, why);
        }
        (_, Some(answer)) => {
            match checked(page, &record.identity_saying(if approve { &reason } else { "" }), answer).await {
                Ok((principal, evidence)) => (session_of(&principal), Some(evidence)),
                Err(why) => return refused(&record, &why),
            }
        }
        (false, None) => (session_of(SOMEONE_HERE), None),
    };
    judged(page, &session, &record, (approve, &reason), &peer, evidence).await
}

/// A local approver's passkey over this record's request: whose, and the evidence.
async fn checked(
    page: &ApprovalPage,
    signed: &crate::passkeys::ApprovalIdentity<'_>,
    answer: &str,
) -> Result<(String, Evidence), String> {
    let (principal, evidence) = page.passkeys.check_any(&page.origin(), answer, signed).await?;
    if !principal.starts_with(PREFIX) {
        return Err(format!("the answer was made with a passkey of {principal}, who is no approver on this machine"));
    }
    Ok((principal, evidence))
}

/// The comment a request for a passkey's challenge carries, from this page only (see [`decide`]'s
/// checks): `Err` is the refusal.
pub(super) async fn posted_comment(page: &ApprovalPage, request: Request) -> Result<String, Response> {
    if let Err(why) = same_origin(page, request.headers()) {
        return Err(message(
            StatusCode::FORBIDDEN,
            "Refused",
            &format!("The page asks for this only from itself: {why}."),
        ));
    }
    let Ok(body) = axum::body::to_bytes(request.into_body(), MAX_DECISION_BYTES).await else {
        return Err(message(StatusCode::PAYLOAD_TOO_LARGE, "Refused", "This is larger than a decision can be."));
    };
    let given = form_urlencoded::parse(&body).find(|(k, _)| k == "reason").map(|(_, v)| v.into_owned());
    reason(true, given.as_deref()).map_err(|refused| *refused)
}

fn refused(record: &PageRecord, why: &str) -> Response {
    crate::metrics::metrics().page_decision("refused");
    tracing::warn!(page = %record.id, "approval page: refused a passkey: {why}");
    message(StatusCode::FORBIDDEN, "Your passkey did not approve this request", why)
}
