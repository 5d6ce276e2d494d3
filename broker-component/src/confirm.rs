//! `fabric_confirm_change`: take the token (consumed on this first attempt whatever happens),
//! recompile the stored spec and require the bound SHA-256, ask the person, re-check the TTL when
//! the answer arrives, and only on `accepted` send the same request without `dryRun`.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use serde_json::{Map, Value, json};

use crate::args::Args;
use crate::capability::{ConfirmStatus, FabricError, FabricRequest, Host, Method, Prompt, Taken};
use crate::price;
use crate::proposal::{Checks, Proposal, token_error};
use crate::spec::{Compiled, Spec};
use crate::tool_error::ToolError;

pub const NAME: &str = "fabric_confirm_change";

pub const DESCRIPTION: &str = "Execute a proposal from fabric_propose_change after the person at the MCP client \
approves it in a confirmation prompt. Takes only the confirm token: what is sent is exactly the request the dry run \
validated. The token is consumed by this call whatever happens; if the person declines or the prompt fails, propose \
again. The result says whether the create executed, the person's answer, and the five confirm checks. Needs an MCP \
client that can show the person a form: form elicitation (protocol 2025-06-18 or later) or the 2026-07-28 \
input-required round trip. With neither, nothing is executed (status unsupported_by_client) unless the operator \
started the server with EQUINIX_MCP_ALLOW_UNCONFIRMED_MUTATIONS=true.";

pub const SCHEMA: &str = r#"{
  "type": "object",
  "properties": {
    "confirm_token": {"type": "string", "pattern": "^chg-[0-9a-f]{32}$", "description": "The confirm_token from fabric_propose_change"}
  },
  "required": ["confirm_token"],
  "additionalProperties": false
}"#;

fn parse(arguments: &str) -> Result<String, ToolError> {
    let args = Args::parse(arguments, &["confirm_token"])?;
    match args.get("confirm_token") {
        Some(Value::String(s)) if is_token(s) => Ok(s.clone()),
        Some(other) => Err(ToolError::invalid_argument(
            "/confirm_token",
            format!("expected a token like chg-<32 hex digits>, got {other}"),
        )),
        None => Err(ToolError::invalid_argument("/confirm_token", "is required")),
    }
}

fn is_token(s: &str) -> bool {
    s.len() == 36 && s.starts_with("chg-") && s[4..].bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// The proposal behind a token that `take` or `peek` found, with its evaluated checks.
pub struct Redeemable {
    pub proposal: Proposal,
    pub spec: Option<Spec>,
    pub compiled: Option<Compiled>,
    pub checks: Checks,
}

/// Turns a store answer into a redeemable proposal or the token error for it.
pub fn redeem(token: &str, taken: Taken, now: u64) -> Result<Redeemable, ToolError> {
    let record = match taken {
        Taken::Found(bytes) => bytes,
        Taken::Unknown => {
            return Err(token_error(
                "unknown_token",
                format!(
                    "confirm token {token} is unknown to this server: it was never proposed here, or the server restarted since"
                ),
                Checks::default(),
            ));
        }
        Taken::Evicted => {
            return Err(token_error(
                "evicted_token",
                format!("confirm token {token} was evicted: more than 20 proposals were made after it"),
                Checks { proposal_exists: true, ..Checks::default() },
            ));
        }
        Taken::Used(outcome) => {
            let first = outcome.and_then(|o| serde_json::from_slice::<Value>(&o).ok());
            let said = first.as_ref().map(describe_outcome).unwrap_or_else(|| "its outcome was not recorded".into());
            let mut err = token_error(
                "replayed_token",
                format!(
                    "confirm token {token} was already used: a token is consumed by its first confirm attempt ({said})"
                ),
                Checks { proposal_exists: true, not_evicted: true, ..Checks::default() },
            );
            if let Some(f) = first {
                err = err.with("first_attempt", f);
            }
            return Err(err);
        }
    };
    let Some(proposal) = Proposal::from_bytes(&record) else {
        return Err(token_error(
            "corrupt_proposal",
            format!("the stored proposal for {token} cannot be read by this component"),
            Checks { proposal_exists: true, not_evicted: true, not_previously_used: true, ..Checks::default() },
        ));
    };
    let recompiled = proposal.recompile();
    let matches = recompiled.as_ref().is_some_and(|(_, c)| c.request_sha256 == proposal.request_sha256);
    let checks = Checks {
        proposal_exists: true,
        not_evicted: true,
        not_expired: !proposal.expired_at(now),
        not_previously_used: true,
        request_matches_binding: matches,
    };
    let (spec, compiled) = match recompiled {
        Some((s, c)) => (Some(s), Some(c)),
        None => (None, None),
    };
    Ok(Redeemable { proposal, spec, compiled, checks })
}

fn describe_outcome(v: &Value) -> String {
    let status = v["human_confirmation"]["status"].as_str().unwrap_or("unknown");
    match v["executed"].as_bool() {
        Some(true) => format!(
            "it executed after the person's answer {status}: uuid {}, correlation id {}",
            v["created"]["uuid"].as_str().unwrap_or("?"),
            v["correlation_id"].as_str().unwrap_or("?")
        ),
        Some(false) => format!("it did not execute; the person's answer was {status}"),
        None => format!("the create was sent after the answer {status} but its outcome is unknown"),
    }
}

/// The prompt the person sees: every field of the compiled request, the price and the age.
pub fn prompt(token: &str, r: &Redeemable, now: u64) -> Prompt {
    let p = &r.proposal;
    let change = p.change_type;
    let target = r.spec.as_ref().map(Spec::target).unwrap_or_else(|| "(the stored spec no longer parses)".into());
    let mut fields: Vec<(String, String)> = alloc::vec![
        ("change_type".into(), change.as_str().into()),
        ("target".into(), target.clone()),
        ("request".into(), format!("POST {} (without dryRun)", change.path())),
        ("price".into(), price::summary(&p.price_context)),
        ("proposal_age".into(), duration(now.saturating_sub(p.minted_at_ms))),
        ("expires_in".into(), duration(p.expires_at_ms.saturating_sub(now))),
        ("request_sha256".into(), p.request_sha256.clone()),
        ("confirm_token".into(), token.into()),
    ];
    if let Ok(body) = serde_json::from_str::<Value>(&p.canonical_spec) {
        flatten("body", &body, &mut fields);
    }
    Prompt {
        title: format!("Create {}?", change.noun()),
        message: format!(
            "An AI agent asks to CREATE a billable {}: {target}. Fabric's dry run accepted this exact request when it \
             was proposed. Accept with confirm = true only if you want it created now; decline or cancel and nothing \
             is created.",
            change.noun()
        ),
        fields,
    }
}

fn flatten(prefix: &str, v: &Value, out: &mut Vec<(String, String)>) {
    match v {
        Value::Object(m) => m.iter().for_each(|(k, v)| flatten(&format!("{prefix}.{k}"), v, out)),
        Value::Array(a) => a.iter().enumerate().for_each(|(i, v)| flatten(&format!("{prefix}[{i}]"), v, out)),
        Value::String(s) => out.push((prefix.into(), s.clone())),
        other => out.push((prefix.into(), other.to_string())),
    }
}

fn duration(ms: u64) -> String {
    let s = ms / 1000;
    if s >= 60 { format!("{}m {:02}s", s / 60, s % 60) } else { format!("{s}s") }
}

pub fn call(host: &mut impl Host, arguments: &str) -> Result<Value, ToolError> {
    let token = parse(arguments)?;
    let taken = host.store_take(&token);
    let now = host.now_ms();
    let r = redeem(&token, taken, now)?;
    let mut result = Map::new();
    result.insert("confirm_token".into(), json!(token));
    result.insert("change_type".into(), json!(r.proposal.change_type.as_str()));
    result.insert("request_sha256".into(), json!(r.proposal.request_sha256));

    let mut checks = r.checks;
    if !checks.request_matches_binding {
        let message = "the stored spec no longer compiles to the request the token is bound to; nothing was sent";
        return Err(stopped_before_asking(host, &token, result, checks, "binding_mismatch", message.into()));
    }
    if !checks.not_expired {
        let message = format!("confirm token {token} expired (proposals live 10 minutes); nothing was sent");
        return Err(stopped_before_asking(host, &token, result, checks, "expired_token", message));
    }

    let status = host.confirm(prompt(&token, &r, now));
    let answered = host.now_ms();
    checks.not_expired = !r.proposal.expired_at(answered);
    let unconfirmed = status == ConfirmStatus::UnsupportedByClient && host.unconfirmed_allowed();
    let approved = status == ConfirmStatus::Accepted || unconfirmed;
    if !approved || !checks.not_expired {
        let message = if approved {
            "the person accepted after the proposal's 10-minute TTL had passed; nothing was sent. Propose again."
                .to_string()
        } else {
            not_executed_message(status)
        };
        return Ok(finish(host, &token, result, Some(false), status.as_str(), checks, message));
    }
    if unconfirmed {
        result.insert(
            "warning".into(),
            json!("executed WITHOUT human confirmation: the client cannot show a prompt and the operator set EQUINIX_MCP_ALLOW_UNCONFIRMED_MUTATIONS=true"),
        );
    }

    let compiled = r.compiled.as_ref().expect("binding matched, so it compiled");
    let create = FabricRequest {
        method: Method::Post,
        path: compiled.change_type.path().into(),
        query: Vec::new(),
        body: Some(compiled.body.clone()),
    };
    match host.fabric_send(create) {
        Ok(resp) if (200..300).contains(&resp.status) => {
            let entity: Value = serde_json::from_str(&resp.body).unwrap_or(Value::Null);
            result.insert(
                "created".into(),
                json!({"uuid": entity.get("uuid"), "href": entity.get("href"), "state": entity.get("state"), "type": entity.get("type"), "name": entity.get("name")}),
            );
            result.insert("correlation_id".into(), json!(resp.correlation_id));
            let message =
                format!("created the {}; Fabric answered HTTP {}", r.proposal.change_type.noun(), resp.status);
            Ok(finish(host, &token, result, Some(true), status.as_str(), checks, message))
        }
        Ok(resp) if resp.status >= 500 => {
            // A server error after the request arrived does not say whether the create happened.
            let err = ToolError::from_response(&resp);
            let message = format!(
                "OUTCOME UNKNOWN: {}; the {} may or may not have been created. Search for it (e.g. by name) \
                 before proposing again; the create is never retried automatically.",
                err.message,
                r.proposal.change_type.noun()
            );
            result.insert("correlation_id".into(), json!(resp.correlation_id));
            result.insert("outcome_unknown".into(), json!(true));
            let v = finish(host, &token, result, None, status.as_str(), checks, message.clone());
            Err(ToolError::new("outcome_unknown", message).with("result", v))
        }
        Ok(resp) => {
            let err = ToolError::from_response(&resp);
            result.insert("correlation_id".into(), json!(resp.correlation_id));
            result.insert("fabric_errors".into(), err.details.get("fabric_errors").cloned().unwrap_or(Value::Null));
            let message = format!(
                "Fabric refused the create, so nothing was created: {}. Propose again after fixing the cause.",
                err.message
            );
            let v = finish(host, &token, result, Some(false), status.as_str(), checks, message.clone());
            Err(ToolError::new("create_rejected", message).with("result", v))
        }
        Err(e) if e.maybe_sent() => {
            let message = format!(
                "OUTCOME UNKNOWN: the create was sent but no usable answer came back ({}). The {} may or may not \
                 exist. Search for it (e.g. by name) before proposing again; the create is never retried automatically.",
                ToolError::from_fabric(&e).message,
                r.proposal.change_type.noun()
            );
            result.insert("outcome_unknown".into(), json!(true));
            let v = finish(host, &token, result, None, status.as_str(), checks, message.clone());
            Err(ToolError::new("outcome_unknown", message).with("result", v))
        }
        Err(e) => {
            let cancelled = e == FabricError::Cancelled;
            let message = format!("the create was not sent: {}", ToolError::from_fabric(&e).message);
            let status = if cancelled { "call_cancelled" } else { status.as_str() };
            let v = finish(host, &token, result, Some(false), status, checks, message.clone());
            Err(ToolError::new(if cancelled { "cancelled" } else { "not_sent" }, message).with("result", v))
        }
    }
}

/// A token error raised after the take and before anyone is asked: recorded as `not_asked`.
fn stopped_before_asking(
    host: &mut impl Host,
    token: &str,
    result: Map<String, Value>,
    checks: Checks,
    kind: &'static str,
    message: String,
) -> ToolError {
    let v = finish(host, token, result, Some(false), "not_asked", checks, message.clone());
    token_error(kind, message, checks).with("result", v)
}

/// Completes a result, records it as the token's outcome (so a replay can report it), returns it.
fn finish(
    host: &mut impl Host,
    token: &str,
    mut result: Map<String, Value>,
    executed: Option<bool>,
    status: &str,
    checks: Checks,
    message: String,
) -> Value {
    result.insert("executed".into(), json!(executed));
    result.insert("human_confirmation".into(), json!({"status": status}));
    result.insert("confirm_checks".into(), checks.to_json());
    result.insert("message".into(), json!(message));
    result.insert("next_step".into(), json!(next_step(executed)));
    let v = Value::Object(result);
    host.store_settle(token, crate::json_text(&v).into_bytes());
    v
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
        ConfirmStatus::Failed => "the confirmation prompt failed",
        ConfirmStatus::CallCancelled => "the tool call was cancelled while the prompt was open",
        ConfirmStatus::UnsupportedByClient => {
            "this MCP client cannot show a confirmation form (form elicitation), so nobody could approve it"
        }
        ConfirmStatus::Accepted => "it was accepted",
    };
    format!("not executed: {why}. The token is consumed; propose again to retry.")
}

/// The prompt for a pending token without consuming it (stateless confirmation, first round).
pub fn preview(host: &mut impl Host, token: &str) -> Result<Value, ToolError> {
    if !is_token(token) {
        return Err(ToolError::invalid_argument("/confirm_token", "expected a token like chg-<32 hex digits>"));
    }
    let taken = host.store_peek(token);
    let now = host.now_ms();
    let r = redeem(token, taken, now)?;
    let p = prompt(token, &r, now);
    Ok(json!({
        "title": p.title,
        "message": p.message,
        "fields": p.fields,
        "request_sha256": r.proposal.request_sha256,
        "expires_in_ms": r.proposal.expires_at_ms.saturating_sub(now),
        "confirm_checks": r.checks.to_json(),
    }))
}
