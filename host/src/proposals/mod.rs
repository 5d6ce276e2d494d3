//! The proposal stores behind the `proposal-store` capability: where pending proposals wait for
//! their confirm.
//!
//! Only mechanism lives here (minting tokens, capacity eviction, single use, tombstones); the
//! rules (10-minute TTL, 20 pending, the five confirm checks) are the component's, and they are
//! the same whichever backend holds the records. Keeping the store in the host keeps the
//! component stateless, so every call runs on a fresh instance.
//!
//! Every token belongs to the [`Principal`] that proposed it: another principal is told the
//! token is unknown (it learns nothing about it and cannot consume it), and capacity counts each
//! principal's pending proposals separately, so one client cannot evict another's.
//!
//! Backends: [`memory`] (one process, the default) and [`redis`] (Redis or Valkey, shared by
//! every replica behind a load balancer, one node or a primary Sentinel names; each operation is
//! one atomic Lua script, acknowledged by replicas when the operator asks).

pub mod memory;
mod notes;
pub mod redis;
mod token;

/// What a peek or take found: the WIT's own type, so the store answers the component directly.
pub use crate::bindings::proposal_store::Taken;
use crate::principal::Principal;
pub use memory::MemoryStore;
pub use notes::{MAX_NOTE_BYTES, MAX_NOTES, MAX_SESSIONS};
pub use redis::spec::StoreArgs;
pub use redis::{Cause, RedisStore, StoreUnavailable};

/// The most a component may store per proposal: far more than any proposal a person can be
/// shown (the form is at most 16 KiB), far less than a component could use to fill the host.
pub const MAX_RECORD_BYTES: usize = 64 * 1024;
/// The most a component may record as an attempt's outcome (`settle`); a larger one is not kept.
pub const MAX_OUTCOME_BYTES: usize = 16 * 1024;
/// Pending proposals per principal, whatever capacity a component asks for (the seed's 20): the
/// oldest is evicted beyond it.
pub const PENDING_PER_PRINCIPAL: u32 = 20;

/// How long a used answer is remembered. An answer approves nothing once its proposal's
/// validation is older than the TTL (or lies ahead of this host's clock by more than the skew a
/// replica may have), so after the TTL and that skew a replay could mint nothing anyway; this
/// keeps a margin beyond both.
pub const ANSWER_MEMORY_MS: u64 = 15 * 60 * 1000;

pub enum ProposalStore {
    Memory(MemoryStore),
    Redis(RedisStore),
}

impl Default for ProposalStore {
    fn default() -> Self {
        ProposalStore::Memory(MemoryStore::new())
    }
}

impl ProposalStore {
    /// The in-memory store.
    pub fn new() -> Self {
        Self::default()
    }

    /// `memory`, `redis://HOST:PORT/DB` (also `rediss://`, `valkey://`), or
    /// `redis+sentinel://HOST:PORT,.../MASTER/DB`, with the passwords from the environment or
    /// the files `args` names. A shared store is checked with a PING before the server starts.
    pub async fn open(args: &StoreArgs) -> anyhow::Result<Self> {
        let spec = args.proposal_store.trim();
        if spec.is_empty() || spec == "memory" {
            let set_env = |var: &str| std::env::var(var).is_ok_and(|v| !v.is_empty());
            if args.proposal_store_acks.is_some()
                || args.proposal_store_password_file.is_some()
                || args.sentinel_password_file.is_some()
                || set_env("EQUINIX_MCP_PROPOSAL_STORE_PASSWORD")
                || set_env("EQUINIX_MCP_SENTINEL_PASSWORD")
            {
                anyhow::bail!(
                    "a shared store's setting is given (--proposal-store-acks, a store or Sentinel password), but \
                     --proposal-store is `memory`: name the shared store, or drop the setting"
                );
            }
            return Ok(Self::default());
        }
        if redis::spec::is_shared(spec) {
            let shared = redis::spec::parse(args, |var| std::env::var(var).ok())?;
            return Ok(ProposalStore::Redis(RedisStore::connect(shared).await?));
        }
        anyhow::bail!(
            "--proposal-store {:?}: expected `memory`, `redis://HOST:PORT/DB` or \
             `redis+sentinel://HOST:PORT,HOST:PORT/MASTER/DB`",
            redis::redact(spec)
        )
    }

    /// The shared store, when this is one.
    pub fn redis(&self) -> Option<&RedisStore> {
        match self {
            ProposalStore::Redis(r) => Some(r),
            ProposalStore::Memory(_) => None,
        }
    }

    /// How the store is described to people (no password).
    pub fn describe(&self) -> String {
        match self {
            ProposalStore::Memory(_) => "memory (this process)".into(),
            ProposalStore::Redis(r) => r.describe(),
        }
    }

    /// Proposals awaiting confirmation, where this process can count them (its memory store).
    pub fn pending_len(&self) -> Option<usize> {
        match self {
            ProposalStore::Memory(m) => Some(m.pending_len()),
            ProposalStore::Redis(_) => None,
        }
    }

    /// Whether the store answers (memory always does; Redis a PING within its response timeout).
    pub async fn ping(&self) -> Result<(), StoreUnavailable> {
        match self {
            ProposalStore::Memory(_) => Ok(()),
            ProposalStore::Redis(r) => counted(r.ping().await),
        }
    }

    pub async fn put(
        &self,
        who: &Principal,
        record: Vec<u8>,
        expires_at_ms: u64,
        capacity: u32,
        now_ms: u64,
    ) -> Result<(String, Vec<String>), StoreUnavailable> {
        match self {
            ProposalStore::Memory(m) => Ok(m.put(who, record, expires_at_ms, capacity, now_ms)),
            ProposalStore::Redis(r) => counted(r.put(who, record, expires_at_ms, capacity, now_ms).await),
        }
    }

    pub async fn peek(&self, who: &Principal, token: &str) -> Result<Taken, StoreUnavailable> {
        match self {
            ProposalStore::Memory(m) => Ok(m.peek(who, token)),
            ProposalStore::Redis(r) => counted(r.peek(who, token).await),
        }
    }

    /// Single use: of any number of concurrent takes of one token (on any replica), exactly one
    /// sees `Found`.
    pub async fn take(&self, who: &Principal, token: &str) -> Result<Taken, StoreUnavailable> {
        match self {
            ProposalStore::Memory(m) => Ok(m.take(who, token)),
            ProposalStore::Redis(r) => counted(r.take(who, token).await),
        }
    }

    /// Counts the person's answer `answer` (a stateless first round's, by its id) as used:
    /// `true` the first time, `false` ever after (within [`ANSWER_MEMORY_MS`]), on every replica
    /// sharing the store.
    pub async fn claim_answer(&self, answer: &str, now_ms: u64) -> Result<bool, StoreUnavailable> {
        match self {
            ProposalStore::Memory(m) => Ok(m.claim_answer(answer, now_ms)),
            ProposalStore::Redis(r) => counted(r.claim_answer(answer).await),
        }
    }

    /// Writes the host's own note `key` (the approval page's records and decisions), kept for
    /// `ttl_ms`; with `only_if_absent`, only when no live note has that key. Returns whether it was
    /// written: of any number of concurrent first writes of one key (on any replica), exactly one
    /// is.
    pub async fn note_put(
        &self,
        key: &str,
        value: &[u8],
        ttl_ms: u64,
        only_if_absent: bool,
        now_ms: u64,
    ) -> Result<bool, StoreUnavailable> {
        // refused before either backend, and not counted as the store failing
        if value.len() > MAX_NOTE_BYTES {
            let reason = format!("a note of {} bytes is more than the {MAX_NOTE_BYTES} kept", value.len());
            return Err(StoreUnavailable { backend: self.describe(), reason, cause: Cause::Full });
        }
        match self {
            ProposalStore::Memory(m) => {
                m.notes.put(key, value, ttl_ms, only_if_absent, now_ms).map_err(StoreUnavailable::full)
            }
            ProposalStore::Redis(r) => counted(r.note_put(key, value, ttl_ms, only_if_absent).await),
        }
    }

    /// The live note `key`, if any.
    pub async fn note_get(&self, key: &str, now_ms: u64) -> Result<Option<Vec<u8>>, StoreUnavailable> {
        match self {
            ProposalStore::Memory(m) => Ok(m.notes.get(key, now_ms)),
            ProposalStore::Redis(r) => counted(r.note_get(key).await),
        }
    }

    /// Records what the attempt that took `token` did. Ignored for tokens not taken.
    pub async fn settle(&self, who: &Principal, token: &str, outcome: Vec<u8>) -> Result<(), StoreUnavailable> {
        match self {
            ProposalStore::Memory(m) => {
                m.settle(who, token, outcome);
                Ok(())
            }
            ProposalStore::Redis(r) => counted(r.settle(who, token, outcome).await),
        }
    }
}

/// Counts a failed store operation in the metrics.
fn counted<T>(r: Result<T, StoreUnavailable>) -> Result<T, StoreUnavailable> {
    if r.is_err() {
        crate::metrics::metrics().store_error();
    }
    r
}
