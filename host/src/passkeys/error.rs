//! Why a passkey was not enrolled or did not approve: what the page matches on, worded as the
//! person reads it.

use super::ceremony::CeremonyError;
use super::store::StoreError;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum PasskeyError {
    /// The page has no relying party (its origin is none WebAuthn takes), or WebAuthn refused the
    /// browser's answer: its words.
    #[error(transparent)]
    Ceremony(#[from] CeremonyError),
    /// The passkeys' store, or a change to a passkey's record refused as it stands.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A record not in its form, or a serializer's failure: its words.
    #[error("{0}")]
    Unavailable(String),
    #[error("no enrollment was begun in this session, or it took over 5 minutes; reload the page")]
    NoEnrollmentBegun,
    #[error("this enrollment was answered already; reload the page to add another passkey")]
    AnsweredAlready,
    #[error("this server has no audit log, so no passkey can be enrolled")]
    NoAuditLog,
    #[error("the audit log could not record the enrollment ({0}); nothing was enrolled")]
    NotRecorded(String),
    #[error("the browser's answer is not a WebAuthn assertion: {0}")]
    NotAnAssertion(String),
    #[error("the answer was made with a passkey that is not enrolled on this server")]
    NotEnrolled,
    #[error("the answer was made with a passkey of {owner}, and you are signed in as {approver}")]
    SomeoneElses { owner: String, approver: String },
    #[error("this passkey was revoked ({by}: {reason})")]
    Revoked { by: String, reason: String },
    #[error("this passkey was enrolled for {enrolled} and the page is now at {page}; enroll it again")]
    OtherOrigin { enrolled: String, page: String },
}

/// The words, for the callers that still pass errors on as text.
impl From<PasskeyError> for String {
    fn from(e: PasskeyError) -> String {
        e.to_string()
    }
}

/// What a serializer answered instead (its own words).
pub(super) fn unavailable(e: impl std::fmt::Display) -> PasskeyError {
    PasskeyError::Unavailable(e.to_string())
}

/// The proposal store's outage, as the passkeys' store tells it (fixed words, never the
/// store's own).
impl From<crate::proposals::StoreUnavailable> for PasskeyError {
    fn from(e: crate::proposals::StoreUnavailable) -> Self {
        PasskeyError::Store(e.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_from_the_store_reads_in_its_own_words_and_matches_as_the_stores() {
        let counter = "the passkey's signature counter did not move on: a replayed answer, or a cloned authenticator";
        let e: PasskeyError = StoreError::Refused(counter.into()).into();
        assert_eq!(e.to_string(), counter, "no prefix in front of what the person reads");
        assert!(matches!(e, PasskeyError::Store(StoreError::Refused(_))));
        let someone = PasskeyError::SomeoneElses { owner: "bob".into(), approver: "alice".into() };
        assert_eq!(String::from(someone), "the answer was made with a passkey of bob, and you are signed in as alice");
    }

    /// A store call's `?` tells the store's fixed words and a reference, never where the store is
    /// or what it said (which reached the browser before).
    #[test]
    fn a_store_outage_reads_in_fixed_words_without_the_stores_address() {
        let down = || crate::proposals::StoreUnavailable {
            backend: "redis://store.internal:6379/0".into(),
            reason: "Connection refused (os error 111)".into(),
            cause: crate::proposals::Cause::Down,
        };
        for said in [PasskeyError::from(down()).to_string(), StoreError::from(down()).to_string()] {
            assert!(said.starts_with("the proposal store is unavailable: it did not answer"), "{said}");
            assert!(
                said.contains("reference") && !said.contains("store.internal") && !said.contains("refused"),
                "{said}"
            );
        }
    }
}
