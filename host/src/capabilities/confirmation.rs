//! The host side of the `confirmation` interface: `wit/broker.wit` states what it grants and the
//! rules the host keeps for every component; this module is where each is kept. `prepare`
//! refuses what may not be asked and renders the [`Form`] from the request bytes, `ask` puts it
//! before the person through the call's [`Confirmer`] and mints the [`Approval`], and
//! `HostApproval::execute` sends its create once.

use std::sync::Arc;

use equinix_broker_contract::request_sha256;
use serde_json::{Value, json};
use wasmtime::component::Resource;

use super::binding::{Binding, TTL_MS};
use super::call_state::CallState;
use super::fabric::to_wit;
use super::form::{self, Form};
use crate::audit::AuditLog;
pub use crate::bindings::Approval;
use crate::bindings::confirmation::{self, Answer, Context, CreateRequest, Delivery, Status};
use crate::bindings::fabric;
use crate::fabric_client::{ApiResponse, SendError, allow_list};
use crate::oauth::Scope;
use crate::policy::{Approving, Facts};

/// The contract's name of a status, for results, the audit log and metrics.
pub fn status_name(status: Status) -> &'static str {
    equinix_broker_contract::ConfirmStatus::from(status).as_str()
}

impl CallState {
    /// Checks a question before anyone sees it; returns its change type, form and binding.
    fn prepare(
        &self,
        token: &str,
        request: &CreateRequest,
        context: &Context,
    ) -> Result<(&'static str, Form, Binding), String> {
        if self.asked {
            return Err("a tool call may put only one create before the person, and this call already did".into());
        }
        if !self.scopes.allows(Scope::Confirm) {
            return Err("the principal's access token does not grant confirming changes, so nobody is asked".into());
        }
        if !self.tool.may_ask {
            return Err(format!(
                "tool {:?} is not in the `mutate` toolset, so it may not ask the person to approve a create",
                self.tool.name
            ));
        }
        let change_type =
            allow_list::check_create(&request.path, self.fabric.config().mutate_enabled).map_err(|r| r.to_string())?;
        let max = self.fabric.config().max_request_bytes;
        if request.body.len() > max {
            return Err(format!("the create body has {} bytes; at most {max} are sent", request.body.len()));
        }
        let binding = self.bound(token, change_type, &request.body)?;
        let form = form::render(&self.tool.name, change_type, &request.path, &request.body, context)?.about(
            token,
            &binding.id,
            binding.validated_at_ms,
        );
        if self.audit.is_none() {
            return Err("this server has no audit log, so no create can be approved".into());
        }
        Ok((change_type, form, binding))
    }

    /// The binding of `token`, if this call may ask about `body` under it: the call found the
    /// token (took it, unless this is a first round, which never approves), it is bound to a dry
    /// run of exactly these bytes by this principal, and Fabric validated it within the TTL.
    fn bound(&self, token: &str, change_type: &str, body: &str) -> Result<Binding, String> {
        let Some(found) = self.redeemed.iter().find(|r| r.token == token) else {
            return Err(format!(
                "this call did not take proposal {token:?} from the proposal store; only a proposal taken in the \
                 same call can be put before the person"
            ));
        };
        if !found.taken && self.confirmer.delivery() != Delivery::FirstRound {
            return Err(format!(
                "this call only peeked at proposal {token:?}; a proposal is put before the person only once it is taken, \
                 so that it is approved at most once"
            ));
        }
        let Some(binding) = found.binding.clone() else {
            return Err(format!("proposal {token:?} is not bound to a dry run this host validated"));
        };
        let sha = request_sha256(change_type, body);
        if binding.request_sha256 != sha {
            return Err(format!(
                "the request to approve (request_sha256 {sha}) is not the one Fabric validated for proposal {token:?} \
                 ({}); only the validated bytes can be approved",
                binding.request_sha256
            ));
        }
        if binding.principal != self.principal.as_str() {
            return Err(format!("proposal {token:?} was validated for another principal"));
        }
        // a stateless retry carries an answer already given: it is judged when it is minted
        let age = self.clock.now_ms().saturating_sub(binding.validated_at_ms);
        if self.confirmer.delivery() != Delivery::Answered && !binding.fresh_at(self.clock.now_ms()) {
            return Err(format!(
                "Fabric validated this request {} s ago; a person may approve it only within {} minutes of its dry run",
                age / 1000,
                TTL_MS / 60_000
            ));
        }
        Ok(binding)
    }

    /// The operator's policy on the bytes about to be put before the person (the metros the
    /// dry run learned come with the binding), for the way this call's answer comes: what the
    /// form says of it and the facts it judged, or why they may not be asked.
    async fn approvable(
        &mut self,
        change_type: &'static str,
        body: &str,
        binding: &Binding,
    ) -> Result<(Option<String>, Option<Facts>), String> {
        if !self.policed() {
            return Ok((None, None));
        }
        // `bound` checked that the binding's hash is this body's
        let facts = self.facts(change_type, body, &binding.request_sha256, &binding.learned_metros).await?;
        let approving = Approving { method: self.confirmer.method(), ..Approving::default() };
        match self.judge("approval", change_type, &facts, Some(&approving)).await {
            Ok(permit) => Ok((permit.map(|p| p.said()), Some(facts))),
            Err(why) => Err(format!("the operator's policy does not allow this create: {why}")),
        }
    }

    /// Appends `entry` to the audit log and waits until it is on disk.
    async fn record(&mut self, entry: Value) -> Result<(), String> {
        let Some(log) = self.audit.clone() else {
            return Err("this server has no audit log".into());
        };
        self.meter.outside_guest(AuditLog::record(log, entry)).await
    }

    /// An audit entry about `approval`.
    fn approval_entry(&self, event: &str, approval: &Approval) -> Value {
        json!({
            "ts": crate::audit::rfc3339(self.clock.now_ms()),
            "event": event,
            "tool": self.tool.name,
            "principal": self.principal.as_str(),
            "change_type": approval.change_type,
            "request": format!("POST {}", approval.path),
            "request_sha256": approval.request_sha256,
            "token": approval.token,
            "human_status": status_name(approval.status),
            "method": approval.method,
            "approver": approval.approver,
            "policy_decisions": self.decisions.all(),
        })
    }
}

impl confirmation::Host for CallState {
    fn current_delivery(&mut self) -> wasmtime::Result<Delivery> {
        Ok(self.confirmer.delivery())
    }

    async fn ask(
        &mut self,
        token: String,
        request: CreateRequest,
        context: Context,
    ) -> wasmtime::Result<Result<Answer, String>> {
        let prepared = self.prepare(&token, &request, &context);
        self.asked = true;
        let prepared = match prepared {
            Ok((change_type, mut form, binding)) => match self.approvable(change_type, &request.body, &binding).await {
                Ok((verdict, facts)) => {
                    verdict.inspect(|v| form.note_policy(v));
                    form.policy_facts = facts.map(Arc::new);
                    Ok((change_type, form, binding))
                }
                Err(why) => Err(why),
            },
            Err(why) => Err(why),
        };
        let (change_type, form, binding) = match prepared {
            Ok(p) => p,
            Err(why) => {
                tracing::warn!(tool = %self.tool.name, "refused to ask the person: {why}");
                return Ok(Err(why));
            }
        };
        let (confirmer, cancel) = (self.confirmer.clone(), self.cancel.clone());
        let status = if cancel.is_cancelled() {
            Status::CallCancelled
        } else {
            // while a person reads the form, no sync should wait for this call's record
            let _away = self.audit.as_ref().map(AuditLog::away);
            match self.meter.outside_guest(confirmer.confirm(&form, &cancel)).await {
                Ok(status) => status,
                Err(why) => {
                    tracing::warn!(tool = %self.tool.name, principal = %self.principal, "no form shown: {why}");
                    return Ok(Err(why));
                }
            }
        };
        crate::metrics::metrics().confirmation(status_name(status));
        let approves =
            status == Status::Accepted || (status == Status::UnsupportedByClient && self.unconfirmed_allowed);
        if !approves {
            return Ok(Ok(Answer { status, approval: None }));
        }
        if !binding.fresh_at(self.clock.now_ms()) {
            tracing::warn!(tool = %self.tool.name, %token, "the answer came after the proposal's TTL: no approval");
            return Ok(Ok(Answer { status, approval: None }));
        }
        let method = if status == Status::UnsupportedByClient { "opt_in" } else { confirmer.method() };
        let approval = Approval {
            change_type,
            path: request.path,
            body: request.body,
            request_sha256: form.request_sha256,
            token,
            status,
            method,
            approver: confirmer.approver(),
        };
        if let Err(e) = self.record(self.approval_entry("approval_minted", &approval)).await {
            tracing::error!("no approval minted: the audit log failed: {e}");
            return Ok(Err(format!(
                "the person's answer was {} but the audit log could not record the approval ({e}), so nothing can be \
                 created",
                status_name(status)
            )));
        }
        let handle = self.table.push(approval)?;
        Ok(Ok(Answer { status, approval: Some(handle) }))
    }
}

impl confirmation::HostApproval for CallState {
    fn request_sha256(&mut self, approval: Resource<Approval>) -> wasmtime::Result<String> {
        Ok(self.table.get(&approval)?.request_sha256.clone())
    }

    async fn execute(
        &mut self,
        approval: Resource<Approval>,
    ) -> wasmtime::Result<Result<fabric::Response, fabric::Error>> {
        // Taking it out of the table is what makes it single use.
        let approval = self.table.delete(approval)?;
        if let Err(e) = self.record(self.approval_entry("create_sending", &approval)).await {
            tracing::error!("create not sent: the audit log failed: {e}");
            crate::metrics::metrics().create("not_sent");
            let mut entry = self.approval_entry("create_not_sent", &approval);
            entry["error"] = json!(format!("the audit log failed: {e}"));
            let _ = self.record(entry).await;
            return Ok(Err(fabric::Error::Refused(format!(
                "the audit log could not record the create before sending it ({e}); nothing was sent"
            ))));
        }
        let (client, cancel) = (self.fabric.clone(), self.cancel.clone());
        self.create_sent = true;
        let send = client.send_create(&approval.path, &approval.body, &cancel);
        let outcome = self.reporting(Some("Fabric create"), &approval.path, send).await;
        let mut entry = self.approval_entry("create_outcome", &approval);
        crate::metrics::metrics().create(describe_outcome(&mut entry, &outcome));
        if let Err(e) = self.record(entry).await {
            // The create has left: its result must reach the caller whatever the log does.
            tracing::error!(request_sha256 = %approval.request_sha256, "the create's outcome is not in the audit log: {e}");
        }
        Ok(to_wit(outcome))
    }

    async fn drop(&mut self, approval: Resource<Approval>) -> wasmtime::Result<()> {
        let approval = self.table.delete(approval)?;
        if let Err(e) = self.record(self.approval_entry("approval_discarded", &approval)).await {
            tracing::error!("an unused approval is not in the audit log: {e}");
        }
        Ok(())
    }
}

/// What a create's outcome adds to its audit entry; returns the outcome's name.
fn describe_outcome(entry: &mut Value, outcome: &Result<ApiResponse, SendError>) -> &'static str {
    let name = match outcome {
        Ok(r) => match r.status {
            200..=299 => "executed",
            500.. => "unknown",
            _ => "rejected",
        },
        Err(SendError::Timeout | SendError::Transport(_)) => "unknown",
        Err(_) => "not_sent",
    };
    entry["outcome"] = json!(name);
    match outcome {
        Ok(r) => {
            entry["http_status"] = json!(r.status);
            entry["correlation_id"] = json!(r.correlation_id);
            if (200..300).contains(&r.status) {
                let uuid = serde_json::from_str::<Value>(&r.body).ok().and_then(|v| v.get("uuid").cloned());
                entry["fabric_uuid"] = uuid.unwrap_or(Value::Null);
            }
        }
        Err(e) => {
            entry["error"] = json!(format!("{e:?}"));
        }
    }
    name
}
