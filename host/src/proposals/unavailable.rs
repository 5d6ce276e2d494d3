//! How a store fails, whatever the backend: the error every operation may return, and its cause
//! in the words readiness uses.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

/// The store could not be reached or answered nonsense. The component call that needed it is
/// stopped (a trap): no token is minted, nothing is taken, nothing is sent. Only a shared store
/// fails this way; the memory store always answers.
#[derive(Debug, thiserror::Error)]
#[error("the proposal store ({backend}) is unavailable: {reason}")]
pub struct StoreUnavailable {
    pub backend: String,
    pub reason: String,
    pub cause: Cause,
}

/// Why the store could not be used, as readiness reports it (in words that name no address).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cause {
    /// No answer, or an error answer.
    Down,
    /// The Sentinels name no primary that answers (during a failover, or all of it down).
    NoPrimary,
    /// The node answers but takes no write: a failover demoted it.
    ReadOnly,
    /// The primary has fewer replicas than each write must reach.
    FewReplicas,
    /// A write reached fewer replicas than required in time, so it does not count.
    Unacknowledged,
    /// The store refused to keep more (too large, or full).
    Full,
    /// The consensus store's members that answer are not a majority (a partition, or too many
    /// down): it takes no write and serves no read.
    NoQuorum,
}

impl Cause {
    /// What `/readyz` says (no address, no secret: it answers without a token).
    pub(crate) fn readiness(self) -> &'static str {
        match self {
            Cause::Down | Cause::Full => "proposal store unreachable",
            Cause::NoPrimary => "proposal store has no primary (a failover under way?)",
            Cause::ReadOnly => "proposal store is a read-only replica",
            Cause::FewReplicas | Cause::Unacknowledged => "proposal store has too few replicas to acknowledge writes",
            Cause::NoQuorum => "proposal store has no quorum",
        }
    }
}

impl Cause {
    /// What a client is told (fixed words: never an address, a script hash or the backend's own
    /// error text, which stay in the operator's log).
    fn told(self) -> &'static str {
        match self {
            Cause::Down => "it did not answer",
            Cause::Full => "it refused to keep more",
            Cause::NoPrimary => "it has no primary (a failover under way?)",
            Cause::ReadOnly => "the node reached is a read-only replica (a failover under way?)",
            Cause::FewReplicas => "its primary has too few replicas to acknowledge writes",
            Cause::Unacknowledged => "a write reached too few replicas in time, so it does not count",
            Cause::NoQuorum => "its cluster has no quorum (a partition, or too many members down)",
        }
    }
}

impl StoreUnavailable {
    /// What a client or a browser is told: the cause in fixed words and a reference. The backend
    /// and its own words (addresses, a script's hash, a server's error) are logged under that
    /// reference, for the operator only.
    pub(crate) fn told(&self) -> String {
        let reference = URL_SAFE_NO_PAD.encode(rand::random::<[u8; 6]>());
        tracing::error!(reference = %reference, "{self}");
        format!(
            "the proposal store is unavailable: {} (the server's log has the details under reference {reference})",
            self.cause.told()
        )
    }

    /// The memory store refusing a note it has no room for.
    pub(crate) fn full(reason: String) -> Self {
        StoreUnavailable { backend: "memory".into(), reason, cause: Cause::Full }
    }
}
