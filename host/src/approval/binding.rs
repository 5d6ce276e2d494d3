//! What ties an approval to its proposal, kept by the host whatever the component does: a
//! [`Validation`] is a create dry run this call sent and Fabric answered 2xx; `put` binds one to
//! the record it stores (a [`Binding`], kept in the store beside the component's bytes), and
//! `ask` asks only about the request bound to a token taken in the same call.
//!
//! The binding travels inside the stored record as an envelope the component never sees: the
//! store backends keep bytes and single use, so a Redis store shared by replicas carries the
//! binding, and its atomic `take`, with no change of its own.

use serde::{Deserialize, Serialize};

/// How long after Fabric validated a request a person may still approve it: the proposal's TTL,
/// one constant for the guest's rule and the host's.
pub(crate) const TTL_MS: u64 = equinix_broker_contract::PROPOSAL_TTL_MS;
/// How long after the TTL what the approval page keeps of a request (its record, decisions and
/// the agent's reason) stays readable, so the page can still say what happened.
pub(crate) const AFTERWARDS_MS: u64 = 15 * 60 * 1000;
/// How far ahead of this host's clock a binding's validation may lie (another replica's clock).
const SKEW_MS: u64 = 60 * 1000;

/// Marks a record the host bound; the line after it is the binding, the rest the component's.
const ENVELOPE: &[u8] = b"equinix-mcp binding 1\n";

/// Whether an answer about a request Fabric validated at `validated_at_ms` may still count at
/// `now_ms`: validated no more than the TTL ago, and not in the future beyond a replica's clock
/// skew (such a validation would be fresh forever). Every path's answers are judged by it: the
/// form's, the round trip's, the page's decisions.
pub(crate) fn answerable(validated_at_ms: u64, now_ms: u64) -> bool {
    validated_at_ms <= now_ms.saturating_add(SKEW_MS) && now_ms.saturating_sub(validated_at_ms) <= TTL_MS
}

/// A create dry run of this call that Fabric answered 2xx.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Validation {
    /// Names this validation alone (128 random bits, hex): two dry runs of the same bytes are two
    /// validations, and an answer given about one does not count for the other.
    pub id: String,
    pub request_sha256: String,
    pub validated_at_ms: u64,
    /// Metros the host learned for the request's access points (from Fabric's answer), for the
    /// policy's second look at `ask`.
    pub(crate) learned_metros: Vec<String>,
    /// What the host resolved the request into after the dry run, for the person.
    pub plan: Option<crate::plan::Plan>,
}

/// A validation bound to one stored record.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Binding {
    /// The validation's id (empty in records an earlier version bound).
    #[serde(default)]
    pub id: String,
    pub request_sha256: String,
    pub principal: String,
    pub validated_at_ms: u64,
    #[serde(default)]
    pub(crate) learned_metros: Vec<String>,
    /// The plan of the validation (stored with the proposal, so every replica shows the same).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<crate::plan::Plan>,
}

impl Validation {
    /// A validation of `request_sha256` at `validated_at_ms`, with a fresh id.
    pub(crate) fn new(request_sha256: String, validated_at_ms: u64, learned_metros: Vec<String>) -> Self {
        Validation {
            id: hex::encode(rand::random::<[u8; 16]>()),
            request_sha256,
            validated_at_ms,
            learned_metros,
            plan: None,
        }
    }
}

impl Binding {
    pub(crate) fn new(v: Validation, principal: &str) -> Self {
        Binding {
            id: v.id,
            request_sha256: v.request_sha256,
            principal: principal.to_string(),
            validated_at_ms: v.validated_at_ms,
            learned_metros: v.learned_metros,
            plan: v.plan,
        }
    }

    /// Whether a person may still approve at `now_ms` (see [`answerable`]).
    pub(crate) fn fresh_at(&self, now_ms: u64) -> bool {
        answerable(self.validated_at_ms, now_ms)
    }

    /// The stored bytes: the envelope, this binding, the component's record.
    pub(crate) fn wrap(&self, record: &[u8]) -> Vec<u8> {
        let line = serde_json::to_vec(self).expect("a binding serializes");
        let mut out = Vec::with_capacity(ENVELOPE.len() + line.len() + 1 + record.len());
        out.extend_from_slice(ENVELOPE);
        out.extend_from_slice(&line);
        out.push(b'\n');
        out.extend_from_slice(record);
        out
    }

    /// The binding and the component's record of stored bytes; `None` for bytes no host of
    /// this version bound (they are never asked about).
    pub(crate) fn unwrap(stored: &[u8]) -> Option<(Binding, &[u8])> {
        let rest = stored.strip_prefix(ENVELOPE)?;
        let end = rest.iter().position(|&b| b == b'\n')?;
        let binding = serde_json::from_slice(&rest[..end]).ok()?;
        Some((binding, &rest[end + 1..]))
    }
}

/// A proposal this call found in the store, with its binding.
#[derive(Clone, Debug)]
pub struct Redeemed {
    pub token: String,
    pub binding: Option<Binding>,
    /// Taken (consumed) rather than peeked.
    pub taken: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_binding_round_trips_and_foreign_bytes_carry_none() {
        let b = Binding {
            id: "cd".repeat(16),
            request_sha256: "ab".repeat(32),
            principal: "alice".into(),
            validated_at_ms: 7,
            learned_metros: vec!["DC".into()],
            plan: None,
        };
        let record = b"{\"component\":\"bytes\n with a newline\"}";
        let stored = b.wrap(record);
        let (back, rest) = Binding::unwrap(&stored).unwrap();
        assert_eq!((back, rest), (b.clone(), &record[..]));
        assert!(Binding::unwrap(record).is_none());
        assert!(Binding::unwrap(b"equinix-mcp binding 1\n{\"request_sha256\":1}\nx").is_none());
        assert!(b.fresh_at(7 + TTL_MS) && !b.fresh_at(8 + TTL_MS));
        let ahead = Binding { validated_at_ms: 1_000_000 + SKEW_MS + 1, ..b };
        assert!(!ahead.fresh_at(1_000_000), "a validation in the future is never fresh");
    }
}
