//! One confirm attempt's result as it is built up, and how each way it can end is recorded: a
//! consumed token's outcome is settled in the store so a replay can report it.

use alloc::format;
use alloc::string::String;
use serde_json::{Map, Value, json};

use equinix_broker_contract::answers::{CONFIRM_TOKEN, HUMAN_CONFIRMATION, NEXT_STEP};

use super::redeem::Redeemable;
use crate::capability::{ConfirmStatus, Host};
use crate::proposal::{Checks, PROPOSE_AGAIN, token_error};
use crate::tool_error::ToolError;

/// One confirm attempt's result as it is built up.
pub(super) struct Attempt<'a> {
    pub(super) token: &'a str,
    /// Whether this attempt took the token (then its outcome is recorded for replays).
    consumes: bool,
    pub(super) result: Map<String, Value>,
    pub(super) checks: Checks,
}

impl<'a> Attempt<'a> {
    /// An attempt on `token` whose proposal `r` the store gave back; `consumes` when it took the
    /// token (not a stateless first round, which only looks).
    pub(super) fn new(token: &'a str, consumes: bool, r: &Redeemable) -> Self {
        let mut result = Map::new();
        result.insert(CONFIRM_TOKEN.into(), json!(token));
        result.insert("change_type".into(), json!(r.proposal.change_type.as_str()));
        result.insert("request_sha256".into(), json!(r.proposal.request_sha256));
        Attempt { token, consumes, result, checks: r.checks }
    }

    /// A stateless first round's result, which the host replaces by its input request.
    pub(super) fn input_required(mut self) -> Value {
        self.result.insert("input_required".into(), json!(true));
        self.result.insert("confirm_checks".into(), self.checks.to_json());
        Value::Object(self.result)
    }

    /// A token error raised before anyone is asked: recorded as `not_asked` when the token was
    /// taken; a stateless first round only looked, so it records nothing.
    pub(super) fn stopped_before_asking(self, host: &mut dyn Host, kind: &'static str, message: String) -> ToolError {
        let checks = self.checks;
        let v = self.finish(host, Some(false), "not_asked", message.clone());
        token_error(kind, message, checks, PROPOSE_AGAIN).with("result", v)
    }

    /// A confirm that ended in a tool error: the whole result nested, the checks also at the top.
    pub(super) fn failed(
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
    pub(super) fn finish(
        mut self,
        host: &mut dyn Host,
        executed: Option<bool>,
        status: &str,
        message: String,
    ) -> Value {
        self.result.insert("executed".into(), json!(executed));
        self.result.insert(HUMAN_CONFIRMATION.into(), json!({"status": status}));
        self.result.insert("confirm_checks".into(), self.checks.to_json());
        self.result.insert("message".into(), json!(message));
        self.result.insert(NEXT_STEP.into(), json!(next_step(executed, status)));
        let v = Value::Object(self.result);
        if self.consumes {
            host.store_settle(self.token, crate::json::json_text(&v).into_bytes());
        }
        v
    }
}

fn next_step(executed: Option<bool>, status: &str) -> &'static str {
    match executed {
        Some(true) => "Done. Track provisioning with the matching fabric_get_* tool using the created uuid.",
        // proposing again here would end the same way: say what can work instead
        Some(false) if status == ConfirmStatus::UnsupportedByClient.as_str() => {
            "Nothing was created, and this MCP client cannot show the confirmation form, so confirming again \
             here cannot succeed. Confirm from a client that shows forms (Claude Code, VS Code, Cursor), or \
             ask the operator to set up the approval page, which sends the person a link to approve in a browser."
        }
        Some(false) => "Nothing was created. To try again, call fabric_propose_change again and confirm the new token.",
        None => "Search for the resource before proposing again: it may exist.",
    }
}

pub(super) fn not_executed_message(status: ConfirmStatus) -> String {
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
