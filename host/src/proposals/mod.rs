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
//! A proposal's life (its phases, and what a peek, a take, a settle and a put do to them) is
//! [`life`]'s, the same for every backend, and `--proposal-store` and its password are
//! [`settings`]'s. A backend is one module implementing [`Backend`] (and [`SharedRecords`] when
//! every replica reads it), applying those steps atomically its own way: [`memory`] (one
//! process, the default), [`redis`] (Redis or Valkey, shared by every replica behind a load
//! balancer, one node or a primary Sentinel names; each operation is one atomic Lua script,
//! acknowledged by replicas when the operator asks) and [`etcd`] (a cluster whose majority
//! commits each write, one transaction per operation). Beside the
//! proposals each keeps the approval page's notes and its inbox's two indexes. [`ProposalStore`]
//! holds the rules every backend shares: the note size cap, the failure metric, and the keys
//! (each derived by [`NoteKey`] or `approval::Once`, never typed by a caller).

pub mod ballot;
mod ca_file;
pub(crate) mod etcd;
pub mod life;
pub(crate) mod memory;
mod notes;
pub(crate) mod redis;
pub(crate) mod settings;
mod token;
mod unavailable;

use futures_util::future::BoxFuture;

use crate::approval::Once;
/// What a peek or take found: the WIT's own type, so the store answers the component directly.
pub use crate::bindings::proposal_store::Taken;
use crate::principal::Principal;
pub use memory::MemoryStore;
pub use notes::{IndexEntry, IndexKey, Indexed, MAX_INDEXED, MAX_NOTE_BYTES, MAX_NOTES, MAX_SESSIONS, NoteKey};
pub(crate) use redis::RedisStore;
pub use settings::StoreArgs;
pub(crate) use token::is_token;
pub(crate) use unavailable::{Cause, StoreUnavailable};

/// The most a component may store per proposal: far more than any proposal a person can be
/// shown (the form is at most 16 KiB), far less than a component could use to fill the host.
pub(crate) const MAX_RECORD_BYTES: usize = 64 * 1024;
/// The most a component may record as an attempt's outcome (`settle`); a larger one is not kept.
pub(crate) const MAX_OUTCOME_BYTES: usize = 16 * 1024;
/// Pending proposals per principal, whatever capacity a component asks for (the seed's 20): the
/// oldest is evicted beyond it.
pub(crate) const PENDING_PER_PRINCIPAL: u32 = 20;

/// How long a used answer is remembered. An answer approves nothing once its proposal's
/// validation is older than the TTL (or lies ahead of this host's clock by more than the skew a
/// replica may have), so after the TTL and that skew a replay could mint nothing anyway; this
/// keeps a margin beyond both.
pub(crate) const ANSWER_MEMORY_MS: u64 = 15 * 60 * 1000;

/// A store's result.
pub(crate) type Stored<'a, T> = BoxFuture<'a, Result<T, StoreUnavailable>>;

/// What a backend does. Each operation is atomic on its own: of any number of concurrent takes
/// of one token (or claims of one key, or first writes of one note), on any replica sharing the
/// backend, exactly one wins.
pub(crate) trait Backend: Send + Sync {
    /// How the store is described to people (no password).
    fn describe(&self) -> String;

    /// Proposals awaiting confirmation, where this process can count them.
    fn pending_len(&self) -> Option<usize> {
        None
    }

    /// The records every replica reads, when the backend is shared by replicas.
    fn shared_records(&self) -> Option<&dyn SharedRecords> {
        None
    }

    /// Whether the store answers and takes writes.
    fn ping(&self) -> Stored<'_, ()>;

    /// Stores `record` under a new token owned by `who`, evicting `who`'s oldest pending beyond
    /// `capacity`: the token and the evicted ones.
    fn put<'a>(
        &'a self,
        who: &'a Principal,
        record: Vec<u8>,
        expires_at_ms: u64,
        capacity: u32,
        now_ms: u64,
    ) -> Stored<'a, (String, Vec<String>)>;

    fn peek<'a>(&'a self, who: &'a Principal, token: &'a str) -> Stored<'a, Taken>;

    fn take<'a>(&'a self, who: &'a Principal, token: &'a str) -> Stored<'a, Taken>;

    fn settle<'a>(&'a self, who: &'a Principal, token: &'a str, outcome: Vec<u8>) -> Stored<'a, ()>;

    /// `true` the first time `key` is claimed, `false` while it is remembered
    /// ([`ANSWER_MEMORY_MS`]).
    fn claim<'a>(&'a self, key: &'a str, now_ms: u64) -> Stored<'a, bool>;

    fn note_put<'a>(
        &'a self,
        key: &'a NoteKey<'a>,
        value: &'a [u8],
        ttl_ms: u64,
        only_if_absent: bool,
        now_ms: u64,
    ) -> Stored<'a, bool>;

    fn note_get<'a>(&'a self, key: &'a NoteKey<'a>, now_ms: u64) -> Stored<'a, Option<Vec<u8>>>;

    /// Puts (or moves) `entry`'s member in its index; the index keeps its newest
    /// [`MAX_INDEXED`] and forgets the members past their end.
    fn index_put<'a>(&'a self, entry: IndexEntry<'a>, now_ms: u64) -> Stored<'a, ()>;

    fn index_remove<'a>(&'a self, index: IndexKey, member: &'a str) -> Stored<'a, ()>;

    /// `index`'s live members, newest first, older than `before_ms` when given, at most `limit`.
    fn index_newest(
        &self,
        index: IndexKey,
        before_ms: Option<u64>,
        limit: usize,
        now_ms: u64,
    ) -> Stored<'_, Vec<Indexed>>;
}

/// Small records every replica reads and changes by compare-and-swap (the enrolled passkeys),
/// in named collections of fields.
pub(crate) trait SharedRecords: Send + Sync {
    /// Every value of collection `name`.
    fn values<'a>(&'a self, name: &'a str) -> Stored<'a, Vec<Vec<u8>>>;

    fn get<'a>(&'a self, name: &'a str, field: &'a str) -> Stored<'a, Option<Vec<u8>>>;

    /// Sets `field` unless it has a value: `false` when it had.
    fn put_new<'a>(&'a self, name: &'a str, field: &'a str, value: &'a [u8]) -> Stored<'a, bool>;

    /// Replaces `field`'s value with `new` only if it still holds `old`: `false` when it changed.
    fn swap<'a>(&'a self, name: &'a str, field: &'a str, old: &'a [u8], new: &'a [u8]) -> Stored<'a, bool>;
}

/// The store the server uses, over its backend.
pub struct ProposalStore {
    backend: Box<dyn Backend>,
}

impl Default for ProposalStore {
    fn default() -> Self {
        ProposalStore::over(MemoryStore::new())
    }
}

impl ProposalStore {
    /// The in-memory store.
    pub fn new() -> Self {
        Self::default()
    }

    pub(crate) fn over(backend: impl Backend + 'static) -> Self {
        ProposalStore { backend: Box::new(backend) }
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
                || args.proposal_store_ca_file.is_some()
                || set_env("EQUINIX_MCP_PROPOSAL_STORE_PASSWORD")
                || set_env("EQUINIX_MCP_SENTINEL_PASSWORD")
            {
                anyhow::bail!(
                    "a shared store's setting is given (--proposal-store-acks, a store or Sentinel password, a CA file), but \
                     --proposal-store is `memory`: name the shared store, or drop the setting"
                );
            }
            return Ok(Self::default());
        }
        if etcd::is_etcd(spec) {
            if args.proposal_store_acks.is_some() || args.sentinel_password_file.is_some() {
                anyhow::bail!(
                    "--proposal-store {spec}: etcd commits each write on a majority of its members, so \
                     --proposal-store-acks and a Sentinel password do not apply; drop them"
                );
            }
            let password = settings::store_password(args, |var| std::env::var(var).ok())?;
            let ca = match &args.proposal_store_ca_file {
                Some(file) => Some(ca_file::read(file, spec.starts_with("etcds://"), "etcds://")?),
                None => None,
            };
            return Ok(ProposalStore::over(etcd::EtcdStore::connect(spec, password, ca).await?));
        }
        if redis::spec::is_shared(spec) {
            let shared = redis::spec::parse(args, |var| std::env::var(var).ok())?;
            return Ok(ProposalStore::over(RedisStore::connect(shared).await?));
        }
        anyhow::bail!(
            "--proposal-store {:?}: expected `memory`, `redis://HOST:PORT/DB`, \
             `redis+sentinel://HOST:PORT,HOST:PORT/MASTER/DB` or `etcd://HOST:PORT,HOST:PORT,HOST:PORT`",
            redis::redact(spec)
        )
    }

    /// The records every replica reads, when replicas share this store.
    pub(crate) fn shared_records(&self) -> Option<&dyn SharedRecords> {
        self.backend.shared_records()
    }

    /// Whether replicas share this store.
    pub(crate) fn is_shared(&self) -> bool {
        self.shared_records().is_some()
    }

    /// How the store is described to people (no password).
    pub(crate) fn describe(&self) -> String {
        self.backend.describe()
    }

    /// Proposals awaiting confirmation, where this process can count them (its memory store).
    pub(crate) fn pending_len(&self) -> Option<usize> {
        self.backend.pending_len()
    }

    /// Whether the store answers (memory always does; Redis a PING within its response timeout).
    pub(crate) async fn ping(&self) -> Result<(), StoreUnavailable> {
        counted(self.backend.ping().await)
    }

    pub async fn put(
        &self,
        who: &Principal,
        record: Vec<u8>,
        expires_at_ms: u64,
        capacity: u32,
        now_ms: u64,
    ) -> Result<(String, Vec<String>), StoreUnavailable> {
        counted(self.backend.put(who, record, expires_at_ms, capacity, now_ms).await)
    }

    pub async fn peek(&self, who: &Principal, token: &str) -> Result<Taken, StoreUnavailable> {
        counted(self.backend.peek(who, token).await)
    }

    /// Single use: of any number of concurrent takes of one token (on any replica), exactly one
    /// sees `Found`.
    pub async fn take(&self, who: &Principal, token: &str) -> Result<Taken, StoreUnavailable> {
        counted(self.backend.take(who, token).await)
    }

    /// Counts `once` as used: `true` the first time, `false` ever after (within
    /// [`ANSWER_MEMORY_MS`]), on every replica sharing the store.
    pub async fn claim(&self, once: Once<'_>, now_ms: u64) -> Result<bool, StoreUnavailable> {
        counted(self.backend.claim(&once.key(), now_ms).await)
    }

    /// Writes the host's own note `key` (the approval page's records and decisions), kept for
    /// `ttl_ms`; with `only_if_absent`, only when no live note has that key. Returns whether it was
    /// written: of any number of concurrent first writes of one key (on any replica), exactly one
    /// is.
    pub async fn note_put(
        &self,
        key: &NoteKey<'_>,
        value: &[u8],
        ttl_ms: u64,
        only_if_absent: bool,
        now_ms: u64,
    ) -> Result<bool, StoreUnavailable> {
        // refused before any backend, and not counted as the store failing
        if value.len() > MAX_NOTE_BYTES {
            let reason = format!("a note of {} bytes is more than the {MAX_NOTE_BYTES} kept", value.len());
            return Err(StoreUnavailable { backend: self.describe(), reason, cause: Cause::Full });
        }
        counted(self.backend.note_put(key, value, ttl_ms, only_if_absent, now_ms).await)
    }

    /// The live note `key`, if any.
    pub async fn note_get(&self, key: &NoteKey<'_>, now_ms: u64) -> Result<Option<Vec<u8>>, StoreUnavailable> {
        counted(self.backend.note_get(key, now_ms).await)
    }

    /// Puts `member` in the approval page's `index` (see [`Backend::index_put`]); a value larger than
    /// a note is refused before any backend.
    pub async fn index_put(
        &self,
        index: IndexKey,
        member: &str,
        at_ms: u64,
        until_ms: u64,
        value: &[u8],
        now_ms: u64,
    ) -> Result<(), StoreUnavailable> {
        if value.len() > MAX_NOTE_BYTES {
            let reason = format!("an index entry of {} bytes is more than the {MAX_NOTE_BYTES} kept", value.len());
            return Err(StoreUnavailable { backend: self.describe(), reason, cause: Cause::Full });
        }
        counted(self.backend.index_put(IndexEntry { index, member, at_ms, until_ms, value }, now_ms).await)
    }

    pub async fn index_remove(&self, index: IndexKey, member: &str) -> Result<(), StoreUnavailable> {
        counted(self.backend.index_remove(index, member).await)
    }

    /// `index`'s live members, newest first (see [`Backend::index_newest`]).
    pub async fn index_newest(
        &self,
        index: IndexKey,
        before_ms: Option<u64>,
        limit: usize,
        now_ms: u64,
    ) -> Result<Vec<Indexed>, StoreUnavailable> {
        counted(self.backend.index_newest(index, before_ms, limit, now_ms).await)
    }

    /// Records what the attempt that took `token` did. Ignored for tokens not taken.
    pub async fn settle(&self, who: &Principal, token: &str, outcome: Vec<u8>) -> Result<(), StoreUnavailable> {
        counted(self.backend.settle(who, token, outcome).await)
    }
}

/// Counts a store that failed in the metrics; a store refusing to keep more (full) is no failure.
fn counted<T>(r: Result<T, StoreUnavailable>) -> Result<T, StoreUnavailable> {
    if r.as_ref().is_err_and(|e| e.cause != Cause::Full) {
        crate::metrics::metrics().store_error();
    }
    r
}
