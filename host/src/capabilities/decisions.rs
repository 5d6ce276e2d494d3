//! The policy decisions one call makes and their audit records: made by the policy check,
//! kept on the call's state, written into the approval's records and, once the call ends, into
//! the call's own record by the MCP layer.

use std::sync::Arc;

use crate::audit::events::PolicyDecision;
use crate::policy::{Decision, LoadedPolicy};
use crate::principal::Principal;

/// One decision as the audit records it.
pub(crate) struct DecisionRecord {
    pub(super) phase: &'static str,
    pub(super) principal: Principal,
    pub(super) change_type: &'static str,
    pub(super) request_sha256: String,
    pub(super) decision: Arc<Decision>,
    pub(super) policy: Arc<LoadedPolicy>,
}

impl DecisionRecord {
    fn record(&self) -> PolicyDecision {
        PolicyDecision {
            phase: self.phase.into(),
            principal: self.principal.as_str().into(),
            change_type: self.change_type.into(),
            request_sha256: self.request_sha256.clone(),
            decision: if self.decision.allowed { "allow" } else { "deny" }.into(),
            policies: self.decision.policies.clone(),
            errors: self.decision.errors.clone(),
            policy_sha256: self.policy.sha256.clone(),
        }
    }
}

/// The policy decisions one call made, which the call's audit records carry (an approval's
/// records, synced before the component holds the approval, and the call's own record, synced
/// before its result goes out). Kept as they were made (shared with the policy's memo) until a
/// record is written.
#[derive(Default)]
pub(crate) struct PolicyDecisions(Vec<DecisionRecord>);

impl PolicyDecisions {
    pub(super) fn push(&mut self, decision: DecisionRecord) {
        self.0.push(decision);
    }

    pub(crate) fn all(&self) -> Vec<PolicyDecision> {
        self.0.iter().map(DecisionRecord::record).collect()
    }
}
