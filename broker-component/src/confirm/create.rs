//! Sending the approved create and reading what came back: created, refused, or an outcome
//! nobody can know (a server error or a lost answer), which is never retried.

use alloc::format;
use serde_json::{Value, json};

use super::attempt::Attempt;
use crate::capability::{Approval, ConfirmStatus, FabricError, Host};
use crate::proposal::PROPOSE_AGAIN;
use crate::spec::ChangeType;
use crate::tool_error::ToolError;

/// Executes `approval` (the person's answer was `status`) and ends `attempt` with what happened.
pub(super) fn send(
    host: &mut dyn Host,
    mut attempt: Attempt,
    approval: Approval,
    status: ConfirmStatus,
    change_type: ChangeType,
) -> Result<Value, ToolError> {
    let noun = change_type.noun();
    let (search, _) = change_type.lookup_tools();
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
