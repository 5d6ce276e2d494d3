//! The proposal policy: what is stored per proposal, the TTL and capacity, and the five
//! redemption checks every confirm result and token error carries.

use alloc::string::String;
use alloc::vec::Vec;
use serde_json::{Value, json};

use crate::spec::{ChangeType, Spec};
use crate::tool_error::ToolError;

/// Proposals live for ten minutes: the contract's one value, which the host holds too.
pub(crate) const TTL_MS: u64 = equinix_broker_contract::PROPOSAL_TTL_MS;
/// At most twenty are pending; the oldest is evicted beyond that.
pub(crate) const CAPACITY: u32 = 20;

/// One dry-run-validated proposal awaiting confirmation.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Proposal {
    pub change_type: ChangeType,
    /// The canonical spec the dry run validated (its wire body). Confirm recompiles this.
    pub(crate) canonical_spec: String,
    /// The SHA-256 of the compiled request the token is bound to.
    pub request_sha256: String,
    pub(crate) minted_at_ms: u64,
    pub expires_at_ms: u64,
    pub price_context: Value,
    /// Names of the ports, profiles and networks the request touches, by uuid.
    pub touches: Value,
}

/// The stored form of a proposal, written from borrowed fields (no copy of its JSON trees); the
/// members are in the sorted order a JSON object of them would have.
#[derive(serde::Serialize)]
struct Record<'a> {
    canonical_spec: &'a str,
    change_type: &'static str,
    expires_at_ms: u64,
    minted_at_ms: u64,
    price_context: &'a Value,
    request_sha256: &'a str,
    touches: &'a Value,
    v: u8,
}

impl Proposal {
    pub(crate) fn to_bytes(&self) -> Vec<u8> {
        let record = Record {
            canonical_spec: &self.canonical_spec,
            change_type: self.change_type.as_str(),
            expires_at_ms: self.expires_at_ms,
            minted_at_ms: self.minted_at_ms,
            price_context: &self.price_context,
            request_sha256: &self.request_sha256,
            touches: &self.touches,
            v: 1,
        };
        serde_json::to_vec(&record).expect("a record always serializes")
    }

    pub(crate) fn from_bytes(bytes: &[u8]) -> Option<Proposal> {
        let v: Value = serde_json::from_slice(bytes).ok()?;
        if v.get("v")?.as_u64()? != 1 {
            return None;
        }
        Some(Proposal {
            change_type: ChangeType::parse(v.get("change_type")?.as_str()?)?,
            canonical_spec: v.get("canonical_spec")?.as_str()?.into(),
            request_sha256: v.get("request_sha256")?.as_str()?.into(),
            minted_at_ms: v.get("minted_at_ms")?.as_u64()?,
            expires_at_ms: v.get("expires_at_ms")?.as_u64()?,
            price_context: v.get("price_context")?.clone(),
            // records of an earlier build have none
            touches: v.get("touches").cloned().unwrap_or_else(|| json!({})),
        })
    }

    /// Recompiles the stored spec through today's parser and compiler; `None` if it no longer
    /// parses (then it cannot match its binding).
    pub(crate) fn recompile(&self) -> Option<(Spec, crate::spec::Compiled)> {
        let value: Value = serde_json::from_str(&self.canonical_spec).ok()?;
        let spec = Spec::parse(self.change_type, &value, "/spec").ok()?;
        let compiled = spec.compile();
        Some((spec, compiled))
    }

    pub(crate) fn expired_at(&self, now_ms: u64) -> bool {
        now_ms >= self.expires_at_ms
    }
}

/// The redemption predicates: `Some(true)` passed, `Some(false)` failed, `None` not evaluated
/// (an earlier check already stopped the confirm). In JSON a check that was not evaluated is
/// `null`, never `false`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Checks {
    pub proposal_exists: Option<bool>,
    pub not_evicted: Option<bool>,
    pub not_expired: Option<bool>,
    pub not_previously_used: Option<bool>,
    pub request_matches_binding: Option<bool>,
}

impl Checks {
    pub(crate) fn to_json(self) -> Value {
        json!({
            "proposal_exists": self.proposal_exists,
            "not_evicted": self.not_evicted,
            "not_expired": self.not_expired,
            "not_previously_used": self.not_previously_used,
            "request_matches_binding": self.request_matches_binding,
        })
    }
}

/// What a token error tells the agent to do next.
pub(crate) const PROPOSE_AGAIN: &str =
    "Propose the change again with fabric_propose_change to get a new confirm token.";

/// A token error: its own kind and message, the checks (inside the error and at the top level of
/// the result), and what to do next.
pub(crate) fn token_error(kind: &'static str, message: String, checks: Checks, next_step: &str) -> ToolError {
    ToolError::new(kind, message)
        .with("confirm_checks", checks.to_json())
        .with("next_step", json!(next_step))
        .beside("confirm_checks", checks.to_json())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stored_record_is_the_sorted_json_object_of_its_fields_and_reads_back() {
        let p = Proposal {
            change_type: ChangeType::ConnectionCreate,
            canonical_spec: r#"{"name":"a \"b\"\n","bandwidth":50}"#.into(),
            request_sha256: "ab".repeat(32),
            minted_at_ms: 1_764_000_000_000,
            expires_at_ms: 1_764_000_600_000,
            price_context: json!({"status": "estimated", "monthly_recurring": 123.45, "currency": "USD"}),
            touches: json!({"c4d9350e-783c-83cd-1ce0-306a5c00a600": "DC-PRI-01"}),
        };
        let as_object = json!({
            "v": 1, "change_type": "connection_create", "canonical_spec": p.canonical_spec,
            "request_sha256": p.request_sha256, "minted_at_ms": p.minted_at_ms, "expires_at_ms": p.expires_at_ms,
            "price_context": p.price_context, "touches": p.touches,
        });
        let bytes = p.to_bytes();
        let text = String::from_utf8(bytes.clone()).unwrap();
        assert_eq!(serde_json::from_str::<serde_json::Value>(&text).unwrap(), as_object);
        let keys: alloc::vec::Vec<&String> = as_object.as_object().unwrap().keys().collect();
        let mut sorted = keys.clone();
        sorted.sort();
        let at = |k: &str| text.find(&alloc::format!("\"{k}\":")).unwrap();
        assert!(sorted.windows(2).all(|w| at(w[0]) < at(w[1])), "members in sorted order: {text}");
        assert_eq!(Proposal::from_bytes(&bytes), Some(p));
    }
}
