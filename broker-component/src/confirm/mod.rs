//! `fabric_confirm_change`: take the token (consumed by the attempt whatever happens), recompile
//! the stored spec and require the bound SHA-256, ask the person through the host, re-check the
//! TTL when the answer arrives, and only with the host's approval send the create. What an
//! approval is and what `ask` answers in each delivery is the WIT's `confirmation` interface;
//! this module decides only whether to use it, ordering its own rules by the delivery:
//! - `blocking`: take, check, ask and wait, re-check the TTL, execute;
//! - `first-round`: peek (nothing is consumed), check, ask;
//! - `answered`: take, check the binding, judge the TTL at the answer (a late answer is
//!   `accepted` with `not_expired = false`, not an expired token), execute.

use alloc::format;
use alloc::string::ToString;
use equinix_broker_contract::MUTATE_TOOLSET;
use equinix_broker_contract::answers::{CONFIRM_TOKEN, HUMAN_CONFIRMATION, NEXT_STEP};
use serde_json::{Value, json};

use crate::capability::{Answer, Approval, ConfirmStatus, CreateRequest, Delivery, Host};
use crate::grammar::{Object, arguments, req, text};
use crate::proposal::{PROPOSE_AGAIN, Proposal};
use crate::propose;
use crate::tool::{BROKER, Output, ToolDef};
use crate::tool_error::ToolError;

mod attempt;
mod create;
mod prompt;
mod redeem;

use attempt::{Attempt, not_executed_message};
use prompt::context;
use redeem::{is_token, redeem, unknown_token};

pub(crate) const NAME: &str = equinix_broker_contract::CONFIRM_TOOL;

pub(crate) const DESCRIPTION: &str = "Execute a proposal once a person approves it: in a form the server shows (form \
elicitation, or the 2026-07-28 input-required round trip), or on the server's approval page (the result is then \
approval_pending with an approval_url to show the person; call again once they decided). Sends exactly the request \
the dry run validated. The token is spent once the person answered; if declined, propose again. The propose result's \
next_step says which applies to this client.";

static ARGS: Object =
    arguments(&[req("confirm_token", text(128), "The confirm_token (chg-<32 hex digits>)").from(propose::NAME)]);

pub(crate) static TOOL: ToolDef = ToolDef {
    name: NAME,
    toolset: MUTATE_TOOLSET,
    title: "Confirm a proposed Fabric create",
    description: DESCRIPTION,
    args: &ARGS,
    schema_extra: None,
    hints: BROKER,
    output: Output::Members(&[
        (CONFIRM_TOKEN, "string"),
        ("executed", "boolean|null"),
        (HUMAN_CONFIRMATION, "object"),
        ("confirm_checks", "object"),
        ("message", "string"),
        (NEXT_STEP, "string"),
        ("change_type", "string"),
        ("request_sha256", "string"),
        ("created", "object"),
        ("correlation_id", "string|null"),
        ("warning", "string"),
    ]),
    run: call,
};

pub(crate) fn call(host: &mut dyn Host, args: &Value) -> Result<Value, ToolError> {
    let token = args["confirm_token"].as_str().unwrap_or_default().to_string();
    if !is_token(&token) {
        return Err(unknown_token(&token));
    }
    let delivery = host.delivery();
    let consumes = delivery.takes_the_proposal();
    let taken = if consumes { host.store_take(&token) } else { host.store_peek(&token) };
    let now = host.now_ms();
    let r = redeem(&token, taken, now)?;
    let attempt = checked_before_asking(host, Attempt::new(&token, consumes, &r), delivery)?;
    let compiled = r.compiled.as_ref().expect("the binding matched, so it compiled");
    let request = CreateRequest { path: compiled.change_type.path().into(), body: compiled.body.clone() };
    let Answer { status, approval } = match host.ask(&token, request, context(&token, &r, now)) {
        Ok(answer) => answer,
        Err(why) => {
            let message = format!("the server refused to ask the person, so nothing was sent: {why}. {PROPOSE_AGAIN}");
            return Err(attempt.failed(host, Some(false), "not_asked", "confirmation_refused", message));
        }
    };
    if status == ConfirmStatus::InputRequired && !consumes {
        // The host sends the form to the client; this result is replaced by its input request.
        drop(approval);
        return Ok(attempt.input_required());
    }
    let (mut attempt, approval) = match approval_to_use(host, attempt, status, approval, &r.proposal) {
        Ok(usable) => usable,
        Err(ended) => return ended,
    };
    if status == ConfirmStatus::UnsupportedByClient {
        attempt.result.insert(
            "warning".into(),
            json!("executed WITHOUT human confirmation: the client cannot show a prompt and the operator set EQUINIX_MCP_ALLOW_UNCONFIRMED_MUTATIONS=true"),
        );
    }
    create::send(host, attempt, approval, status, r.proposal.change_type)
}

/// The checks that stop a confirm before anyone is asked: the stored spec must still compile to
/// the bound request, and (except on a stateless retry, where the person has already answered
/// and the TTL is judged at that answer) the proposal must not have expired.
fn checked_before_asking<'a>(
    host: &mut dyn Host,
    attempt: Attempt<'a>,
    delivery: Delivery,
) -> Result<Attempt<'a>, ToolError> {
    if attempt.checks.request_matches_binding != Some(true) {
        let message = format!(
            "the stored spec no longer compiles to the request the token is bound to; nothing was sent. {PROPOSE_AGAIN}"
        );
        return Err(attempt.stopped_before_asking(host, "binding_mismatch", message));
    }
    if delivery.judges_the_ttl_before_asking() && attempt.checks.not_expired == Some(false) {
        let token = attempt.token;
        let message =
            format!("confirm token {token} expired (proposals live 10 minutes); nothing was sent. {PROPOSE_AGAIN}");
        return Err(attempt.stopped_before_asking(host, "expired_token", message));
    }
    Ok(attempt)
}

/// The approval the answer carried, if it may be used: the TTL is judged again when the answer
/// arrives, and the host must have approved the very request the token is bound to. Otherwise
/// the attempt ends here (`Err` holds its result).
fn approval_to_use<'a>(
    host: &mut dyn Host,
    mut attempt: Attempt<'a>,
    status: ConfirmStatus,
    approval: Option<Approval>,
    proposal: &Proposal,
) -> Result<(Attempt<'a>, Approval), Result<Value, ToolError>> {
    attempt.checks.not_expired = Some(!proposal.expired_at(host.now_ms()));
    match approval {
        Some(a) if attempt.checks.not_expired == Some(true) && a.request_sha256 == proposal.request_sha256 => {
            Ok((attempt, a))
        }
        Some(a) if attempt.checks.not_expired == Some(false) => {
            drop(a);
            let message = format!(
                "the person accepted after the proposal's 10-minute TTL had passed; nothing was sent. {PROPOSE_AGAIN}"
            );
            Err(Ok(attempt.finish(host, Some(false), status.as_str(), message)))
        }
        Some(a) => {
            let message = format!(
                "the host approved request {} but the token is bound to {}; nothing was sent. {PROPOSE_AGAIN}",
                a.request_sha256, proposal.request_sha256
            );
            drop(a);
            Err(Err(attempt.failed(host, Some(false), status.as_str(), "binding_mismatch", message)))
        }
        None => {
            let message = not_executed_message(status);
            Err(Ok(attempt.finish(host, Some(false), status.as_str(), message)))
        }
    }
}
