//! The challenge a person's authenticator signs to approve one request: a domain-separated
//! SHA-256 of the approval's identity, so the signature is over this request and no other, and
//! anyone holding the audit record can compute it again.

use sha2::{Digest, Sha256};

/// What the signed challenge is about. Every field comes from the page's record, and each is
/// written into the `page_decision` audit record, so `audit verify` recomputes it from the
/// record alone.
#[derive(Clone, Debug)]
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
    /// The SHA-256 of the plan the page showed (empty for a page of a proposal validated before
    /// plans, whose challenge is the first version's).
    pub plan_sha256: String,
    /// The SHA-256 (hex) of the approver's comment as the decision keeps it (empty: no comment,
    /// and the challenge is the second version's).
    pub comment_sha256: String,
}

impl ApprovalIdentity<'_> {
    /// The hash a comment is signed by: of its text as the decision keeps it; none for no comment.
    pub(crate) fn comment_hash(comment: &str) -> String {
        if comment.is_empty() { String::new() } else { hex::encode(Sha256::digest(comment.as_bytes())) }
    }
}

/// Sets this derivation apart from every other use of the same key: a WebAuthn signature over a
/// challenge of another site or purpose can never be one of ours, nor ours another's.
const DOMAIN: &[u8] = b"equinix-mcp passkey approval v1: approve";
/// The same, for an identity that names the plan the person was shown: what they read is signed
/// beside what will be sent.
const DOMAIN_WITH_PLAN: &[u8] = b"equinix-mcp passkey approval v2: approve the plan and the request";
/// The same, for an approval that carries the approver's comment: their words are signed too.
const DOMAIN_WITH_COMMENT: &[u8] =
    b"equinix-mcp passkey approval v3: approve the plan and the request, with the approver's comment";

/// The 32-byte challenge. Each field is length-prefixed, so no two identities share an encoding.
pub(crate) fn challenge(id: &ApprovalIdentity) -> [u8; 32] {
    let mut h = Sha256::new();
    let (domain, tail): (&[u8], &[&str]) = match (id.plan_sha256.as_str(), id.comment_sha256.as_str()) {
        ("", "") => (DOMAIN, &[]),
        (plan, "") => (DOMAIN_WITH_PLAN, &[plan]),
        (plan, comment) => (DOMAIN_WITH_COMMENT, &[plan, comment]),
    };
    h.update((domain.len() as u32).to_be_bytes());
    h.update(domain);
    for field in
        [id.page, id.token, id.request_sha256, id.validation, id.proposer].into_iter().chain(tail.iter().copied())
    {
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
            plan_sha256: String::new(),
            comment_sha256: String::new(),
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
            ApprovalIdentity { plan_sha256: "cd".repeat(32), ..id() },
            ApprovalIdentity { comment_sha256: ApprovalIdentity::comment_hash("ok"), ..id() },
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
            plan_sha256: String::new(),
            comment_sha256: String::new(),
        });
        assert_eq!(hex::encode(c), "973280859cc4fcd2796bb18c92ac42a0c7b1525496462762fb3e548f3ecf6c49");
        // with a plan: the second domain, the plan's hash last (computed the same way)
        let c = challenge(&ApprovalIdentity {
            page: "apv-0",
            token: "chg-0",
            request_sha256: "00",
            validation: "v",
            proposer: "p",
            plan_sha256: "11".into(),
            comment_sha256: String::new(),
        });
        assert_eq!(hex::encode(c), "f3922d9acda93136980917de50227d787ae0289e6708449bc6222226e1b354e2");
        // with a comment: the third domain, the comment's hash after the plan's (computed the same way)
        let c = challenge(&ApprovalIdentity {
            page: "apv-0",
            token: "chg-0",
            request_sha256: "00",
            validation: "v",
            proposer: "p",
            plan_sha256: "11".into(),
            comment_sha256: "22".into(),
        });
        assert_eq!(hex::encode(c), "b7ac0b0cdb1613ca3ec45d26ff05c5f4efdc6afec3f321c9c93d38118b9256e5");
    }
}
