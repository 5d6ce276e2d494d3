//! `fabric_confirm_change`: take the token (consumed by the attempt whatever happens), recompile
//! the stored spec and require the bound SHA-256, ask the person through the host, re-check the
//! TTL when the answer arrives, and only with the host's approval send the create. The approval
//! sends exactly the bytes the person was shown; this module decides only whether to use it.
//!
//! The order follows the delivery of the question (`confirmation.current-delivery`):
//! - blocking: take, check, ask and wait, re-check the TTL, execute;
//! - stateless first round: peek (nothing is consumed), check, ask (the host turns the call into
//!   the client's input request);
//! - stateless retry: take, check the binding, read the answer, judge the TTL at the answer (a
//!   late answer is `accepted` with `not_expired = false`, not an expired token), execute.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use serde_json::{Map, Value, json};

use crate::capability::{Answer, ConfirmStatus, CreateRequest, Delivery, FabricError, Host, Prompt, Taken};
use crate::catalog::{BROKER, Output, ToolDef};
use crate::grammar::{Object, arguments, req, text};
use crate::price;
use crate::proposal::{Checks, PROPOSE_AGAIN, Proposal, token_error};
use crate::spec::{ChangeType, Compiled, Spec};
use crate::tool_error::ToolError;

mod redeem;
use redeem::*;

mod prompt;
use prompt::*;

pub const NAME: &str = "fabric_confirm_change";

pub const DESCRIPTION: &str = "Execute a proposal once the person at the MCP client approves it in a form the server \
shows (form elicitation, or the 2026-07-28 input-required round trip). Sends exactly the request the dry run \
validated. The token is spent whatever happens; if declined, propose again. Without such a client nothing runs \
(unsupported_by_client) unless the operator set EQUINIX_MCP_ALLOW_UNCONFIRMED_MUTATIONS=true.";

static ARGS: Object =
    arguments(&[req("confirm_token", text(128), "The confirm_token (chg-<32 hex digits>) from fabric_propose_change")]);

pub static TOOL: ToolDef = ToolDef {
    name: NAME,
    toolset: "mutate",
    title: "Confirm a proposed Fabric create",
    description: DESCRIPTION,
    args: &ARGS,
    schema_extra: None,
    hints: BROKER,
    output: Output::Members(&[
        ("confirm_token", "string"),
        ("executed", "boolean|null"),
        ("human_confirmation", "object"),
        ("confirm_checks", "object"),
        ("message", "string"),
        ("next_step", "string"),
        ("change_type", "string"),
        ("request_sha256", "string"),
        ("created", "object"),
        ("correlation_id", "string|null"),
        ("warning", "string"),
    ]),
    run: call,
};

pub fn call(host: &mut dyn Host, args: &Value) -> Result<Value, ToolError> {
    let token = args["confirm_token"].as_str().unwrap_or_default().to_string();
    if !is_token(&token) {
        return Err(unknown_token(&token));
    }
    let delivery = host.delivery();
    let consumes = delivery != Delivery::FirstRound;
    let taken = if consumes { host.store_take(&token) } else { host.store_peek(&token) };
    let now = host.now_ms();
    let r = redeem(&token, taken, now)?;
    let mut attempt = Attempt { token: &token, consumes, result: Map::new(), checks: r.checks };
    attempt.result.insert("confirm_token".into(), json!(token));
    attempt.result.insert("change_type".into(), json!(r.proposal.change_type.as_str()));
    attempt.result.insert("request_sha256".into(), json!(r.proposal.request_sha256));

    if attempt.checks.request_matches_binding != Some(true) {
        let message = format!(
            "the stored spec no longer compiles to the request the token is bound to; nothing was sent. {PROPOSE_AGAIN}"
        );
        return Err(attempt.stopped_before_asking(host, "binding_mismatch", message));
    }
    // On a stateless retry the person has already answered: the TTL is judged at that answer.
    if delivery != Delivery::Answered && attempt.checks.not_expired == Some(false) {
        let message =
            format!("confirm token {token} expired (proposals live 10 minutes); nothing was sent. {PROPOSE_AGAIN}");
        return Err(attempt.stopped_before_asking(host, "expired_token", message));
    }
    let compiled = r.compiled.as_ref().expect("the binding matched, so it compiled");
    let request = CreateRequest { path: compiled.change_type.path().into(), body: compiled.body.clone() };
    let Answer { status, approval } = match host.ask(request, context(&token, &r, now)) {
        Ok(answer) => answer,
        Err(why) => {
            let message = format!("the server refused to ask the person, so nothing was sent: {why}. {PROPOSE_AGAIN}");
            return Err(attempt.failed(host, Some(false), "not_asked", "confirmation_refused", message));
        }
    };
    if status == ConfirmStatus::InputRequired && !consumes {
        // The host sends the form to the client; this result is replaced by its input request.
        drop(approval);
        attempt.result.insert("input_required".into(), json!(true));
        attempt.result.insert("confirm_checks".into(), attempt.checks.to_json());
        return Ok(Value::Object(attempt.result));
    }
    let answered = host.now_ms();
    attempt.checks.not_expired = Some(!r.proposal.expired_at(answered));
    let approval = match approval {
        Some(a) if attempt.checks.not_expired == Some(true) && a.request_sha256 == r.proposal.request_sha256 => a,
        Some(a) if attempt.checks.not_expired == Some(false) => {
            drop(a);
            let message = format!(
                "the person accepted after the proposal's 10-minute TTL had passed; nothing was sent. {PROPOSE_AGAIN}"
            );
            return Ok(attempt.finish(host, Some(false), status.as_str(), message));
        }
        Some(a) => {
            let message = format!(
                "the host approved request {} but the token is bound to {}; nothing was sent. {PROPOSE_AGAIN}",
                a.request_sha256, r.proposal.request_sha256
            );
            drop(a);
            return Err(attempt.failed(host, Some(false), status.as_str(), "binding_mismatch", message));
        }
        None => {
            let message = not_executed_message(status);
            return Ok(attempt.finish(host, Some(false), status.as_str(), message));
        }
    };
    if status == ConfirmStatus::UnsupportedByClient {
        attempt.result.insert(
            "warning".into(),
            json!("executed WITHOUT human confirmation: the client cannot show a prompt and the operator set EQUINIX_MCP_ALLOW_UNCONFIRMED_MUTATIONS=true"),
        );
    }
    let noun = r.proposal.change_type.noun();
    let (search, _) = r.proposal.change_type.lookup_tools();
    match host.execute(approval) {
        Ok(resp) if (200..300).contains(&resp.status) => {
            let entity: Value = serde_json::from_str(&resp.body).unwrap_or(Value::Null);
            attempt.result.insert(
                "created".into(),
                json!({"uuid": entity.get("uuid"), "href": entity.get("href"), "state": entity.get("state"), "type": entity.get("type"), "name": entity.get("name")}),
            );
            attempt.result.insert("correlation_id".into(), json!(resp.correlation_id));
            let message = format!("created the {noun}; Fabric answered HTTP {}", resp.status);
            Ok(attempt.finish(host, Some(true), status.as_str(), message))
        }
        Ok(resp) if resp.status >= 500 => {
            // A server error after the request arrived does not say whether the create happened.
            let err = ToolError::from_response(&resp);
            let message = format!(
                "OUTCOME UNKNOWN: {}; the {noun} may or may not have been created. Search for it with {search} (e.g. \
                 by name) before proposing again; the create is never retried automatically.",
                err.message
            );
            attempt.result.insert("correlation_id".into(), json!(resp.correlation_id));
            attempt.result.insert("outcome_unknown".into(), json!(true));
            Err(attempt.failed(host, None, status.as_str(), "outcome_unknown", message))
        }
        Ok(resp) => {
            let err = ToolError::from_response(&resp);
            attempt.result.insert("correlation_id".into(), json!(resp.correlation_id));
            attempt
                .result
                .insert("fabric_errors".into(), err.details.get("fabric_errors").cloned().unwrap_or(Value::Null));
            let message = format!(
                "Fabric refused the create, so nothing was created: {}. Propose again after fixing the cause.",
                err.message
            );
            Err(attempt.failed(host, Some(false), status.as_str(), "create_rejected", message))
        }
        Err(e) if e.maybe_sent() => {
            let message = format!(
                "OUTCOME UNKNOWN: the create was sent but no usable answer came back ({}). The {noun} may or may not \
                 exist. Search for it with {search} (e.g. by name) before proposing again; the create is never retried \
                 automatically.",
                ToolError::from_fabric(&e).message
            );
            attempt.result.insert("outcome_unknown".into(), json!(true));
            Err(attempt.failed(host, None, status.as_str(), "outcome_unknown", message))
        }
        Err(e) => {
            let cancelled = e == FabricError::Cancelled;
            let message = format!("the create was not sent: {}. {PROPOSE_AGAIN}", ToolError::from_fabric(&e).message);
            let status = if cancelled { "call_cancelled" } else { status.as_str() };
            Err(attempt.failed(host, Some(false), status, if cancelled { "cancelled" } else { "not_sent" }, message))
        }
    }
}

/// One confirm attempt's result as it is built up.
struct Attempt<'a> {
    token: &'a str,
    /// Whether this attempt took the token (then its outcome is recorded for replays).
    consumes: bool,
    result: Map<String, Value>,
    checks: Checks,
}

impl Attempt<'_> {
    /// A token error raised before anyone is asked: recorded as `not_asked` when the token was
    /// taken; a stateless first round only looked, so it records nothing.
    fn stopped_before_asking(self, host: &mut dyn Host, kind: &'static str, message: String) -> ToolError {
        let checks = self.checks;
        let v = self.finish(host, Some(false), "not_asked", message.clone());
        token_error(kind, message, checks, PROPOSE_AGAIN).with("result", v)
    }

    /// A confirm that ended in a tool error: the whole result nested, the checks also at the top.
    fn failed(
        self,
        host: &mut dyn Host,
        executed: Option<bool>,
        status: &str,
        kind: &'static str,
        message: String,
    ) -> ToolError {
        let checks = self.checks.to_json();
        let v = self.finish(host, executed, status, message.clone());
        ToolError::new(kind, message).with("result", v).beside("confirm_checks", checks)
    }

    /// Completes the result, records it as the token's outcome (so a replay can report it) when
    /// this attempt took the token, and returns it.
    fn finish(mut self, host: &mut dyn Host, executed: Option<bool>, status: &str, message: String) -> Value {
        self.result.insert("executed".into(), json!(executed));
        self.result.insert("human_confirmation".into(), json!({"status": status}));
        self.result.insert("confirm_checks".into(), self.checks.to_json());
        self.result.insert("message".into(), json!(message));
        self.result.insert("next_step".into(), json!(next_step(executed)));
        let v = Value::Object(self.result);
        if self.consumes {
            host.store_settle(self.token, crate::json_text(&v).into_bytes());
        }
        v
    }
}

fn next_step(executed: Option<bool>) -> &'static str {
    match executed {
        Some(true) => "Done. Track provisioning with the matching fabric_get_* tool using the created uuid.",
        Some(false) => "Nothing was created. To try again, call fabric_propose_change again and confirm the new token.",
        None => "Search for the resource before proposing again: it may exist.",
    }
}

fn not_executed_message(status: ConfirmStatus) -> String {
    let why = match status {
        ConfirmStatus::Declined => "the person declined (or accepted without setting confirm to true)",
        ConfirmStatus::Cancelled => "the person cancelled the prompt",
        ConfirmStatus::TimedOut => "nobody answered the prompt in time",
        ConfirmStatus::Failed => "the confirmation prompt failed, or the answer was for another request",
        ConfirmStatus::CallCancelled => "the tool call was cancelled while the prompt was open",
        ConfirmStatus::UnsupportedByClient => {
            "this MCP client cannot show a confirmation form (form elicitation), so nobody could approve it"
        }
        ConfirmStatus::InputRequired => "the answer was still outstanding",
        ConfirmStatus::Accepted => "the server gave no approval for it",
    };
    format!("not executed: {why}. The token is consumed; propose again to retry.")
}
