//! The policy decisions one call makes and their audit records: made by the policy check,
//! kept on the call's state, written by the MCP layer into the call's own audit line.

use std::sync::Arc;

use serde_json::Value;

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

/// A decision's audit record, borrowed: serialized straight into the call's line.
#[derive(serde::Serialize)]
struct Recorded<'a> {
    phase: &'a str,
    principal: &'a str,
    change_type: &'a str,
    request_sha256: &'a str,
    decision: &'a str,
    policies: &'a [String],
    errors: &'a [String],
    policy_sha256: &'a str,
}

impl DecisionRecord {
    fn recorded(&self) -> Recorded<'_> {
        Recorded {
            phase: self.phase,
            principal: self.principal.as_str(),
            change_type: self.change_type,
            request_sha256: &self.request_sha256,
            decision: if self.decision.allowed { "allow" } else { "deny" },
            policies: &self.decision.policies,
            errors: &self.decision.errors,
            policy_sha256: &self.policy.sha256,
        }
    }

    pub(crate) fn json(&self) -> Value {
        serde_json::to_value(self.recorded()).expect("a record serializes")
    }

    /// [`DecisionRecord::json`] as text.
    pub(crate) fn text(&self) -> String {
        serde_json::to_string(&self.recorded()).expect("a record serializes")
    }
}

/// The policy decisions one call made, shared with the MCP layer, which writes them into the
/// call's own audit record (synced before its result goes out). Kept as they were made (shared
/// with the policy's memo) until the record is written, when they become JSON.
#[derive(Clone, Default)]
pub struct PolicyDecisions(Arc<std::sync::Mutex<Vec<DecisionRecord>>>);

impl PolicyDecisions {
    pub(super) fn push(&self, decision: DecisionRecord) {
        self.0.lock().unwrap().push(decision);
    }

    pub fn all(&self) -> Vec<serde_json::Value> {
        self.0.lock().unwrap().iter().map(DecisionRecord::json).collect()
    }

    /// Each as JSON text, for [`crate::audit::line_with`].
    pub fn texts(&self) -> Vec<String> {
        self.0.lock().unwrap().iter().map(DecisionRecord::text).collect()
    }
}
