//! Where the operator's policy meets a call: the facts of a create body (with the metros the
//! host itself learns for the ports and Cloud Routers it names), the decision at each phase,
//! and its audit record. The component takes no part in any of it.
//!
//! The capabilities reach the policy through [`OperatorPolicy`], a small trait whose one real
//! implementation is the Cedar set of `--policy` ([`PolicyGate`], reread on SIGHUP).

use std::sync::Arc;

use serde_json::Value;

use super::call_facts::{CallFacts, GuestMeter};
use super::decisions::{DecisionRecord, PolicyDecisions};
use crate::fabric_client::{ApiRequest, ApiResponse, FabricClient, Method, SendError};
use crate::policy::{
    Approving, Asking, Decision, Facts, LoadedPolicy, Moment, OperatorPolicy, Requester, Requirement, UNKNOWN_METRO,
};

/// The policy's part of a call: the policy in force, and the decisions made in this call.
pub(crate) struct PolicyCtx {
    pub(super) gate: Arc<dyn OperatorPolicy>,
    pub(super) decisions: PolicyDecisions,
}

impl PolicyCtx {
    pub(super) fn new(gate: Arc<dyn OperatorPolicy>) -> Self {
        PolicyCtx { gate, decisions: PolicyDecisions::default() }
    }
}

/// What judging a create borrows of a call: its facts, the policy, the Fabric client for the
/// host's own lookups, and the guest-time meter those lookups are kept off.
pub(super) struct Judge<'a> {
    pub call: &'a CallFacts,
    pub policy: &'a mut PolicyCtx,
    pub client: &'a Arc<FabricClient>,
    pub(crate) meter: &'a mut GuestMeter,
}

/// What permitted a request, for the form.
pub(super) struct Permit {
    decision: Arc<Decision>,
    policy: Arc<LoadedPolicy>,
}

impl Permit {
    pub(super) fn said(&self) -> String {
        let ids: Vec<String> = self.decision.policies.iter().map(|p| format!("{p:?}")).collect();
        format!("permitted by {} (policy set sha256 {})", ids.join(", "), self.policy.sha256)
    }
}

impl Judge<'_> {
    /// Whether a policy is in force for this call.
    pub(super) fn policed(&self) -> bool {
        self.policy.gate.current().is_some()
    }

    /// `facts` with `known` metros and those of every port and Cloud Router the body names
    /// (asked of Fabric once per process); an access point the host cannot place counts as
    /// metro `UNKNOWN`. `Err`: something the policy needs could not be learned or read.
    pub(super) async fn place(&mut self, mut facts: Facts, known: &[String]) -> Result<Facts, String> {
        if let Some(value) = &facts.unreadable_bandwidth {
            return Err(format!(
                "the create body carries the bandwidth {value}, which is not an integer, so the operator's policy cannot \
                 judge it"
            ));
        }
        facts.metros.extend(known.iter().cloned());
        if facts.metro_unknown {
            facts.metros.insert(UNKNOWN_METRO.to_string());
        }
        let mut learned = Vec::with_capacity(facts.port_uuids.len() + facts.router_uuids.len());
        let named =
            facts.port_uuids.iter().map(|u| ("ports", u)).chain(facts.router_uuids.iter().map(|u| ("routers", u)));
        for (collection, uuid) in named {
            learned.push(self.metro_of(collection, uuid).await?);
        }
        facts.metros.extend(learned);
        Ok(facts)
    }

    /// The metro of a port or Cloud Router, from memory or from Fabric. One Fabric does not show
    /// (404) is refused here rather than left to the dry run: a rule on metros is never judged
    /// without it.
    async fn metro_of(&mut self, collection: &str, uuid: &str) -> Result<String, String> {
        if let Some(m) = self.policy.gate.remembered_metro(uuid) {
            return Ok(m);
        }
        let answer = self.policy_read(format!("/fabric/v4/{collection}/{uuid}")).await;
        let noun = if collection == "ports" { "port" } else { "Cloud Router" };
        let unknown = |why: String| format!("the operator's policy needs the metro of {noun} {uuid:?}, and {why}");
        let answer = answer.map_err(|e| unknown(format!("it could not be read: {e:?}")))?;
        match answer.status {
            200..=299 => {
                let body: Value = serde_json::from_str(&answer.body).unwrap_or_default();
                let metro =
                    body["location"]["metroCode"].as_str().ok_or_else(|| unknown("Fabric did not say it".into()))?;
                self.policy.gate.remember_metro(uuid, metro);
                Ok(metro.to_string())
            }
            404 => Err(unknown("Fabric knows no such object (HTTP 404)".into())),
            status => Err(unknown(format!("reading it answered HTTP {status}"))),
        }
    }

    /// A read the host makes of Fabric for the policy itself (never the component's), counted as
    /// host time.
    pub(super) async fn policy_read(&mut self, path: String) -> Result<ApiResponse, SendError> {
        let request = ApiRequest { method: Method::Get, path, query: vec![], body: None };
        let (client, cancel) = (self.client.clone(), self.call.cancel.clone());
        self.meter.outside_guest(client.send(&request, &cancel)).await
    }

    pub(super) fn current(&self) -> Option<Arc<LoadedPolicy>> {
        self.policy.gate.current()
    }

    /// The quorums the request of `facts` needs now (none without a policy), evaluated on a task of
    /// its own as [`Self::judge`] evaluates.
    pub(super) async fn requirement(&mut self, change_type: &'static str, facts: &Facts) -> Requirement {
        let Some(policy) = self.current().filter(|p| p.quorum_rules() > 0) else {
            return Requirement::default();
        };
        let who = Requester {
            action: change_type.into(),
            principal: self.call.principal.as_str().into(),
            transport: self.call.transport.into(),
            tool: self.call.tool.name.clone(),
        };
        let at = Moment::at(self.call.clock.now_ms());
        self.meter.outside_guest(policy.requirement_on_task(who, facts.clone(), at)).await
    }

    /// The policy's decision on `facts` at `phase`, audited: what permitted it (`None` without a
    /// policy), or why it is denied.
    pub(super) async fn judge(
        &mut self,
        phase: &'static str,
        change_type: &'static str,
        facts: &Facts,
        approving: Option<&Approving>,
    ) -> Result<Option<Permit>, String> {
        let Some(policy) = self.policy.gate.current() else {
            return Ok(None);
        };
        // A decision already made on everything it depends on needs no evaluation (nor a task).
        let at = Moment::at(self.call.clock.now_ms());
        let asking = Asking {
            action: change_type,
            principal: self.call.principal.as_str(),
            phase,
            transport: self.call.transport,
            tool: &self.call.tool.name,
            approving,
            at,
        };
        let decision = match policy.recall(&asking, facts) {
            Some(decision) => decision,
            None => {
                // Cedar guards its recursion by the stack it has left, as `stacker` reads it from the
                // thread; a capability runs on the component's fiber, where that reading is wrong. A task
                // of its own runs on a worker's stack, and usually on this worker, next (tokio's LIFO
                // slot): cheaper than the blocking pool's hop or a fresh stack per decision.
                let (action, principal, transport, tool) = (
                    change_type.to_string(),
                    self.call.principal.as_str().to_string(),
                    self.call.transport,
                    self.call.tool.name.clone(),
                );
                let (judged, owned, approving) = (policy.clone(), facts.clone(), approving.cloned());
                let evaluate = tokio::spawn(async move {
                    let approving = approving.as_ref();
                    let asking =
                        Asking { action: &action, principal: &principal, phase, transport, tool: &tool, approving, at };
                    judged.decide(&asking, &owned)
                });
                self.meter
                    .outside_guest(evaluate)
                    .await
                    .map_err(|e| format!("the operator's policy could not be evaluated: {e}"))?
            }
        };
        crate::metrics::metrics().policy_decision(phase, decision.allowed);
        // recorded in the call's own audit line, synced before the call's result goes out, and in
        // an approval's `approval_minted` line, synced before the component holds the approval: at
        // no fsync of its own
        self.policy.decisions.push(DecisionRecord {
            phase,
            principal: self.call.principal.clone(),
            change_type,
            request_sha256: facts.request_sha256.clone(),
            decision: decision.clone(),
            policy: policy.clone(),
        });
        if decision.allowed {
            return Ok(Some(Permit { decision, policy }));
        }
        tracing::warn!(principal = %self.call.principal, tool = %self.call.tool.name, phase, "policy denied {change_type}: {}", decision.explain());
        let again = match policy.reads_time() {
            true => match self.next_allowed(&policy, phase, change_type, facts, approving).await {
                Some(at) => {
                    format!(" The policy allows it again from {}: propose it again then.", crate::audit::rfc3339(at))
                }
                None => " The policy does not allow it at any time within the next month.".into(),
            },
            false => String::new(),
        };
        Err(format!(
            "{}. The policy judged {}.{again} To go on, change what the operator's rules do not allow, or ask the \
             operator; `equinix-mcp policy schema` lists what a policy can read",
            decision.explain(),
            facts.summary(change_type)
        ))
    }

    /// When `policy` next allows what it just denied, from now on (a freeze window's end).
    pub(super) async fn next_allowed(
        &mut self,
        policy: &Arc<LoadedPolicy>,
        phase: &'static str,
        change_type: &'static str,
        facts: &Facts,
        approving: Option<&Approving>,
    ) -> Option<u64> {
        let now = self.call.clock.now_ms();
        let (principal, transport, tool) =
            (self.call.principal.as_str().to_string(), self.call.transport, self.call.tool.name.clone());
        let (policy, facts, approving) = (policy.clone(), facts.clone(), approving.cloned());
        // on a task of its own, as every evaluation (Cedar reads the stack it has left)
        let found = tokio::spawn(async move {
            let asking = Asking {
                action: change_type,
                principal: &principal,
                phase,
                transport,
                tool: &tool,
                approving: approving.as_ref(),
                at: Moment::at(now),
            };
            policy.next_allowed(&asking, &facts, now)
        });
        self.meter.outside_guest(found).await.ok().flatten()
    }
}
