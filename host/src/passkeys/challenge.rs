//! The challenge a person's authenticator signs to approve one request: a domain-separated
//! SHA-256 of the approval's identity, so the signature is over this request and no other, and
//! anyone holding the audit record can compute it again.

use sha2::{Digest, Sha256};

/// What the signed challenge is about. Every field comes from the page's record, and each is
/// written into the `page_decision` audit record, so `audit verify` recomputes it from the
/// record alone.
#[derive(Clone, Copy, Debug)]
pub struct ApprovalIdentity<'a> {
    /// The approval page's id (`apv-...`).
    pub page: &'a str,
    /// The proposal's token (`chg-...`).
    pub token: &'a str,
    /// The SHA-256 of the exact request that will be sent.
    pub request_sha256: &'a str,
    /// The dry run the proposal is bound to.
    pub validation: &'a str,
    /// `ISSUER#SUBJECT` (or the label) of who proposed it.
    pub proposer: &'a str,
}

/// Sets this derivation apart from every other use of the same key: a WebAuthn signature over a
/// challenge of another site or purpose can never be one of ours, nor ours another's.
const DOMAIN: &[u8] = b"equinix-mcp passkey approval v1: approve";

/// The 32-byte challenge. Each field is length-prefixed, so no two identities share an encoding.
pub fn challenge(id: &ApprovalIdentity) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update((DOMAIN.len() as u32).to_be_bytes());
    h.update(DOMAIN);
    for field in [id.page, id.token, id.request_sha256, id.validation, id.proposer] {
        h.update((field.len() as u32).to_be_bytes());
        h.update(field.as_bytes());
    }
    h.finalize().into()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id() -> ApprovalIdentity<'static> {
        ApprovalIdentity {
            page: "apv-0123456789abcdef0123456789abcdef",
            token: "chg-a",
            request_sha256: "ab".repeat(32).leak(),
            validation: "val-1",
            proposer: "https://idp.example#alice",
        }
    }

    #[test]
    fn every_field_moves_the_challenge() {
        let base = challenge(&id());
        assert_eq!(base, challenge(&id()), "the same identity gives the same challenge");
        let variants = [
            ApprovalIdentity { page: "apv-ffffffffffffffffffffffffffffffff", ..id() },
            ApprovalIdentity { token: "chg-b", ..id() },
            ApprovalIdentity { request_sha256: "cd", ..id() },
            ApprovalIdentity { validation: "val-2", ..id() },
            ApprovalIdentity { proposer: "https://idp.example#bob", ..id() },
        ];
        for v in variants {
            assert_ne!(challenge(&v), base, "{v:?}");
        }
    }

    #[test]
    fn fields_cannot_slide_into_each_other() {
        let a = ApprovalIdentity { token: "chg-ab", validation: "c", ..id() };
        let b = ApprovalIdentity { token: "chg-a", validation: "bc", ..id() };
        assert_ne!(challenge(&a), challenge(&b));
    }

    #[test]
    fn the_derivation_is_pinned() {
        // a change of the derivation would make every recorded passkey approval fail `audit
        // verify`; the value was computed apart from this code (Python's hashlib, docs/approval-page.md's
        // recipe)
        let c = challenge(&ApprovalIdentity {
            page: "apv-0",
            token: "chg-0",
            request_sha256: "00",
            validation: "v",
            proposer: "p",
        });
        assert_eq!(hex::encode(c), "973280859cc4fcd2796bb18c92ac42a0c7b1525496462762fb3e548f3ecf6c49");
    }
}
