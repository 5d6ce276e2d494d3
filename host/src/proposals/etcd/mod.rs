//! The consensus backend: proposals in etcd, whose writes are committed by a majority of its
//! members (Raft) and whose reads are linearizable, so a take that counted is seen by every later
//! read on any member, before and after any election, and a member cut off in a minority serves
//! nothing. Redis replication cannot promise that under a partition (docs/store.md).
//!
//! Each operation that changes state is one etcd transaction that compares what it read (a
//! key's `mod_revision`, or that it is absent) and writes only if nothing changed; a transaction
//! whose comparison failed is retried from a fresh read, so of concurrent takes of one token on
//! any replica exactly one wins. Keys (under `PREFIX`, `equinix-mcp/` unless the URL names one):
//! - `t/<token>`: the token's record as JSON {owner, state: pending|used|evicted, record,
//!   expires_at_ms, outcome}, on a lease that ends [`TOMBSTONE`] after the proposal does;
//! - `p/<principal>/<token>`: the principal's pending tokens (capacity counts per principal),
//!   oldest first by creation; `f/<principal>/<token>`: those that stopped being pending, the
//!   newest [`FINISHED_PER_PRINCIPAL`] kept; `g/<principal>`: rewritten by every put of the
//!   principal, so two puts never both count the same pending set;
//! - `c/<key>`: claimed once keys (on a lease of [`super::ANSWER_MEMORY_MS`]); `n/<key>`: notes
//!   (on a lease of their TTL, whole seconds); `r/<name>/<field>`: the shared records.
//!
//! Principals are written base64url in keys (an issuer's URL holds `/`).

pub mod gateway;

use std::time::Duration;

use anyhow::bail;
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::{Deserialize, Serialize};

use super::life::{FINISHED_PER_PRINCIPAL, Life, Phase, Room, TOMBSTONE, make_room, owned_by};
use super::token::mint_token;
use super::{Backend as _, IndexEntry, IndexKey, Indexed, MAX_INDEXED, NoteKey, SharedRecords, Stored};
use crate::bindings::proposal_store::Taken;
use crate::principal::Principal;
use crate::proposals::{Cause, StoreUnavailable};
use crate::secret::Secret;
use gateway::{Compare, Gateway, Kv, Op};

/// The URL schemes of an etcd store: `etcd://` (plain HTTP to the members), `etcds://` (TLS).
pub const SCHEMES: [&str; 2] = ["etcd://", "etcds://"];

/// How long a server starting waits for the cluster to have a leader before it gives up.
const ELECTION_AT_START: Duration = Duration::from_secs(5);

/// How often a transaction whose comparison failed (another replica changed what it read) is
/// tried again from a fresh read, after a random pause, before the store is reported unavailable.
const RETRIES: usize = 32;

/// A pause before attempt `n` of a transaction another replica's beat: random, growing, so two
/// replicas racing for one principal's keys stop colliding.
async fn backoff(n: usize) {
    let most = 2 * (n as u64).min(10);
    tokio::time::sleep(Duration::from_millis(1 + rand::random::<u64>() % most.max(1))).await;
}

pub fn is_etcd(spec: &str) -> bool {
    SCHEMES.iter().any(|s| spec.starts_with(s))
}

#[derive(Serialize, Deserialize)]
struct Record {
    owner: String,
    state: Phase,
    #[serde(default, skip_serializing_if = "Option::is_none", with = "b64_opt")]
    record: Option<Vec<u8>>,
    expires_at_ms: u64,
    #[serde(default, skip_serializing_if = "Option::is_none", with = "b64_opt")]
    outcome: Option<Vec<u8>>,
    /// The take that made it `used`: a random mark of the call, so a take whose transaction was
    /// applied though its answer was lost (an election, a time-out) knows it won.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    taken_by: Option<String>,
}

impl Record {
    /// The proposal's [`Life`], its bytes moved out of the record: `None` for a pending record
    /// without its bytes (not written by this host).
    fn take_life(&mut self) -> Option<Life> {
        Some(match self.state {
            Phase::Pending => Life::Pending { record: self.record.take()?, expires_at_ms: self.expires_at_ms },
            Phase::Used => Life::Used { outcome: self.outcome.take() },
            Phase::Evicted => Life::Evicted,
        })
    }
}

/// A random mark for one call's writes, to recognise them when the answer to a write was lost.
fn mark() -> String {
    URL_SAFE_NO_PAD.encode(rand::random::<[u8; 12]>())
}

mod b64_opt {
    use base64::Engine as _;
    use base64::engine::general_purpose::STANDARD;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &Option<Vec<u8>>, s: S) -> Result<S::Ok, S::Error> {
        match v {
            Some(bytes) => s.serialize_str(&STANDARD.encode(bytes)),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<u8>>, D::Error> {
        let text: Option<String> = Option::deserialize(d)?;
        text.map(|t| STANDARD.decode(t).map_err(serde::de::Error::custom)).transpose()
    }
}

pub struct EtcdStore {
    gateway: Gateway,
    prefix: String,
    /// Puts of one principal on this replica one at a time (striped by principal): they would
    /// only make each other's transactions fail and retry. Across replicas the guard key decides.
    put_locks: [tokio::sync::Mutex<()>; 32],
}

impl EtcdStore {
    /// `etcd://HOST:PORT,HOST:PORT,...[/PREFIX]`: connects and checks the cluster answers with
    /// its quorum (a linearizable read).
    ///
    /// `etcd://USER@HOST:PORT,...` signs in as USER (etcd's authentication) with `password`.
    ///
    /// `ca`: PEM, the only authorities trusted for the members' certificates (`etcds://`).
    pub async fn connect(spec: &str, password: Option<Secret>, ca: Option<Vec<u8>>) -> anyhow::Result<Self> {
        let (scheme, rest) = spec.split_once("://").expect("an etcd:// URL");
        let (authority, prefix) = rest.split_once('/').unwrap_or((rest, ""));
        let (user, hosts) = match authority.rsplit_once('@') {
            Some((user, hosts)) => (Some(user), hosts),
            None => (None, authority),
        };
        let shown = match user {
            Some(user) => {
                format!("{scheme}://{}@{hosts}{}", user.split(':').next().unwrap_or(""), &rest[authority.len()..])
            }
            None => spec.to_string(),
        };
        let login = match (user, password) {
            (Some(user), _) if user.contains(':') => bail!(
                "--proposal-store {shown}: an etcd store takes no password in its URL (it would show in the process \
                 list); set EQUINIX_MCP_PROPOSAL_STORE_PASSWORD or --proposal-store-password-file"
            ),
            (Some(""), _) => bail!("--proposal-store {shown}: the user before `@` is empty"),
            (Some(user), Some(password)) => Some(gateway::Login::new(user.to_string(), password)),
            (Some(user), None) => bail!(
                "--proposal-store {shown}: user {user:?} needs its password: set EQUINIX_MCP_PROPOSAL_STORE_PASSWORD \
                 or --proposal-store-password-file"
            ),
            (None, Some(_)) => bail!(
                "--proposal-store {shown}: a store password is given but no user: name it, etcd://USER@HOST:PORT,..."
            ),
            (None, None) => None,
        };
        let http = if scheme == "etcds" { "https" } else { "http" };
        let authorities = match ca {
            Some(pem) => reqwest::Certificate::from_pem_bundle(&pem)?,
            None => Vec::new(),
        };
        let mut endpoints = Vec::new();
        for host in hosts.split(',').map(str::trim).filter(|h| !h.is_empty()) {
            let with_port = if host.rsplit_once(':').is_some_and(|(_, p)| p.parse::<u16>().is_ok()) {
                host.to_string()
            } else {
                format!("{host}:2379")
            };
            endpoints.push(format!("{http}://{with_port}"));
        }
        if endpoints.is_empty() {
            bail!(
                "--proposal-store {spec}: name the etcd members, e.g. etcd://10.0.0.1:2379,10.0.0.2:2379,10.0.0.3:2379"
            );
        }
        let prefix = match prefix.trim_matches('/') {
            "" => "equinix-mcp/".to_string(),
            p => format!("{p}/"),
        };
        let put_locks = std::array::from_fn(|_| tokio::sync::Mutex::new(()));
        let store =
            EtcdStore { gateway: Gateway::new(endpoints, shown.clone(), login, authorities)?, prefix, put_locks };
        // a cluster may be between leaders as the server starts (an election takes about a second)
        let started = std::time::Instant::now();
        loop {
            match store.ping().await {
                Ok(()) => return Ok(store),
                Err(e) if e.cause == Cause::NoQuorum && started.elapsed() < ELECTION_AT_START => {
                    tokio::time::sleep(Duration::from_millis(200)).await;
                }
                Err(e) if e.reason.contains("user name is empty") => bail!(
                    "the proposal store {shown} requires a user (its authentication is enabled): name it, \
                     etcd://USER@HOST:PORT,..., with its password in EQUINIX_MCP_PROPOSAL_STORE_PASSWORD or \
                     --proposal-store-password-file"
                ),
                Err(e) if e.reason.contains("authentication failed") => {
                    bail!("the proposal store {shown} refused the user's name or password ({})", e.reason)
                }
                Err(e) => bail!("cannot reach the proposal store {shown}: {}", e.reason),
            }
        }
    }

    pub fn describe(&self) -> String {
        format!("{} (shared, etcd: each write committed by a majority of its members)", self.gateway.shown)
    }

    fn key(&self, rest: &str) -> String {
        format!("{}{rest}", self.prefix)
    }

    fn principal(who: &Principal) -> String {
        URL_SAFE_NO_PAD.encode(who.as_str())
    }

    fn token_key(&self, token: &str) -> String {
        self.key(&format!("t/{token}"))
    }

    fn pending_prefix(&self, who: &Principal) -> String {
        self.key(&format!("p/{}/", Self::principal(who)))
    }

    fn finished_prefix(&self, who: &Principal) -> String {
        self.key(&format!("f/{}/", Self::principal(who)))
    }

    fn unreadable(&self, what: &str) -> StoreUnavailable {
        StoreUnavailable {
            backend: self.gateway.shown.clone(),
            reason: format!("{what} does not read as this server writes it"),
            cause: Cause::Down,
        }
    }

    fn contended(&self, what: &str) -> StoreUnavailable {
        StoreUnavailable {
            backend: self.gateway.shown.clone(),
            reason: format!("{what} changed under {RETRIES} attempts in a row"),
            cause: Cause::Down,
        }
    }

    async fn record(&self, token: &str) -> Result<Option<(Record, Kv)>, StoreUnavailable> {
        let Some(kv) = self.gateway.get(&self.token_key(token)).await? else { return Ok(None) };
        let record = serde_json::from_slice(&kv.value).map_err(|_| self.unreadable("a token's record"))?;
        Ok(Some((record, kv)))
    }

    /// Forgets the oldest finished tokens beyond [`FINISHED_PER_PRINCIPAL`]: their records and
    /// their index entries (they then read as unknown, as in the Redis store).
    async fn forget_finished(&self, finished_prefix: &str) -> Result<(), StoreUnavailable> {
        let mut finished = self.gateway.prefixed(finished_prefix).await?;
        // in the order they finished: by revision, then by their order within one transaction
        let order = |kv: &Kv| std::str::from_utf8(&kv.value).ok().and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
        finished.sort_by_key(|kv| (kv.mod_revision, order(kv)));
        let extra = finished.len().saturating_sub(FINISHED_PER_PRINCIPAL as usize);
        let mut ops = Vec::new();
        for kv in &finished[..extra] {
            ops.push(Op::Delete(self.token_key(&kv.key[finished_prefix.len()..])));
            ops.push(Op::Delete(kv.key.clone()));
        }
        if !ops.is_empty() {
            self.gateway.txn(&[], &ops).await?;
        }
        Ok(())
    }

    /// Writes `value` at `key` on a lease of `ttl`, unless (`only_if_absent`) the key exists:
    /// whether it was written.
    async fn put_leased(
        &self,
        key: &str,
        value: &[u8],
        ttl: Duration,
        only_if_absent: bool,
    ) -> Result<bool, StoreUnavailable> {
        let lease = self.gateway.lease(ttl).await?;
        let op = Op::Put { key: key.to_string(), value: value.to_vec(), lease };
        match only_if_absent {
            true => self.gateway.txn(&[Compare::Absent(key)], &[op]).await,
            false => self.gateway.txn(&[], &[op]).await,
        }
    }

    /// An index's members by time (`i/NAME/a/AT/MEMBER`, the value its end and its own value) and
    /// by name (`i/NAME/m/MEMBER`, the value its key by time), each on a lease to its end.
    fn index_prefix(&self, index: IndexKey) -> String {
        self.key(&format!("i/{}/a/", index.key()))
    }

    fn index_member(&self, index: IndexKey, member: &str) -> String {
        self.key(&format!("i/{}/m/{member}", index.key()))
    }

    fn field_key(&self, name: &str, field: &str) -> String {
        self.key(&format!("r/{name}/{field}"))
    }
}

impl super::Backend for EtcdStore {
    fn describe(&self) -> String {
        EtcdStore::describe(self)
    }

    fn shared_records(&self) -> Option<&dyn SharedRecords> {
        Some(self)
    }

    /// A member that knows a leader, then a linearizable read (answered only with the quorum).
    fn ping(&self) -> Stored<'_, ()> {
        Box::pin(async move {
            if !self.gateway.has_leader().await? {
                let reason = "no member that answers knows a leader".to_string();
                return Err(StoreUnavailable { backend: self.gateway.shown.clone(), reason, cause: Cause::NoQuorum });
            }
            self.gateway.get(&self.key("ping")).await.map(|_| ())
        })
    }

    fn put<'a>(
        &'a self,
        who: &'a Principal,
        record: Vec<u8>,
        expires_at_ms: u64,
        capacity: u32,
        now_ms: u64,
    ) -> Stored<'a, (String, Vec<String>)> {
        Box::pin(async move {
            let token = mint_token();
            let life = Duration::from_millis(expires_at_ms.saturating_sub(now_ms)) + TOMBSTONE;
            let lease = self.gateway.lease(life).await?;
            let (pending_prefix, finished_prefix) = (self.pending_prefix(who), self.finished_prefix(who));
            let guard = self.key(&format!("g/{}", Self::principal(who)));
            let encoded = serde_json::to_vec(&Record {
                owner: who.as_str().to_string(),
                state: Phase::Pending,
                record: Some(record),
                expires_at_ms,
                outcome: None,
                taken_by: None,
            })
            .expect("a record serializes");
            let stripe = {
                use std::hash::{Hash, Hasher};
                let mut h = std::collections::hash_map::DefaultHasher::new();
                who.as_str().hash(&mut h);
                (h.finish() % self.put_locks.len() as u64) as usize
            };
            let _one_at_a_time = self.put_locks[stripe].lock().await;
            let mut evicted_before = Vec::new();
            for attempt in 0..RETRIES {
                if attempt > 0 {
                    backoff(attempt).await;
                    // the last transaction may have been applied though it seemed not to be
                    if self.gateway.get(&self.token_key(&token)).await?.is_some() {
                        self.forget_finished(&finished_prefix).await?;
                        return Ok((token, evicted_before));
                    }
                }
                let guard_at = self.gateway.get(&guard).await?.map_or(0, |kv| kv.mod_revision);
                let pending = self.gateway.prefixed(&pending_prefix).await?;
                let mut ops = Vec::new();
                let mut conditions = vec![Compare::ModifiedAt(&guard, guard_at)];
                let mut queue = Vec::new();
                for kv in &pending {
                    let tok = kv.key[pending_prefix.len()..].to_string();
                    let expires: u64 = std::str::from_utf8(&kv.value)
                        .ok()
                        .and_then(|v| v.parse().ok())
                        .ok_or_else(|| self.unreadable("a pending token's expiry"))?;
                    conditions.push(Compare::ModifiedAt(&kv.key, kv.mod_revision));
                    queue.push(((tok, expires), expires));
                }
                let Room { expired, evicted: oldest, .. } = make_room(queue, capacity, now_ms);
                let mut finished: Vec<String> = expired.into_iter().map(|(tok, _)| tok).collect();
                let mut evicted = Vec::new();
                for (tok, expires) in oldest {
                    let tombstone = Record {
                        owner: who.as_str().to_string(),
                        state: Phase::Evicted,
                        record: None,
                        expires_at_ms: expires,
                        outcome: None,
                        taken_by: None,
                    };
                    let value = serde_json::to_vec(&tombstone).expect("a record serializes");
                    ops.push(Op::Put { key: self.token_key(&tok), value, lease });
                    evicted.push(tok.clone());
                    finished.push(tok);
                }
                for (i, tok) in finished.iter().enumerate() {
                    ops.push(Op::Delete(format!("{pending_prefix}{tok}")));
                    // one transaction gives its keys one revision: the value orders them within it
                    let order = i.to_string().into_bytes();
                    ops.push(Op::Put { key: format!("{finished_prefix}{tok}"), value: order, lease });
                }
                ops.push(Op::Put { key: self.token_key(&token), value: encoded.clone(), lease });
                ops.push(Op::Put {
                    key: format!("{pending_prefix}{token}"),
                    value: expires_at_ms.to_string().into(),
                    lease,
                });
                ops.push(Op::Put { key: guard.clone(), value: Vec::new(), lease });
                let applied = match self.gateway.txn(&conditions, &ops).await {
                    Ok(applied) => applied,
                    // the answer lost, not necessarily the write: the token's key says which
                    Err(e) => match self.gateway.get(&self.token_key(&token)).await {
                        Ok(Some(_)) => true,
                        _ => return Err(e),
                    },
                };
                if applied {
                    self.forget_finished(&finished_prefix).await?;
                    return Ok((token, evicted));
                }
                evicted_before = evicted;
            }
            Err(self.contended("the principal's pending proposals"))
        })
    }

    fn peek<'a>(&'a self, who: &'a Principal, token: &'a str) -> Stored<'a, Taken> {
        Box::pin(async move {
            let Some((mut record, _)) = self.record(token).await? else { return Ok(Taken::Unknown) };
            if !owned_by(&record.owner, who) {
                return Ok(Taken::Unknown);
            }
            // what a take would find is what a peek shows; the record read is not written back
            Ok(record.take_life().ok_or_else(|| self.unreadable("a pending record"))?.take().0)
        })
    }

    /// Single use: the take counts once a majority of the members committed it, and only if the
    /// record was still the one read.
    ///
    /// A take whose answer was lost (the member's time-out, an election) reads the record again:
    /// marked as its own, it won; otherwise the store is reported unavailable, and a person's yes
    /// may then be spent without a create, never a create made twice.
    fn take<'a>(&'a self, who: &'a Principal, token: &'a str) -> Stored<'a, Taken> {
        Box::pin(async move {
            let me = mark();
            let mut read = None;
            for attempt in 0..RETRIES {
                if attempt > 0 {
                    backoff(attempt).await;
                }
                let Some((mut record, kv)) = self.record(token).await? else { return Ok(Taken::Unknown) };
                if !owned_by(&record.owner, who) {
                    return Ok(Taken::Unknown);
                }
                if let (Some(bytes), Some(by)) = (read.take(), &record.taken_by)
                    && *by == me
                {
                    return Ok(Taken::Found(bytes));
                }
                let (found, after) = record.take_life().ok_or_else(|| self.unreadable("a pending record"))?.take();
                let bytes = match found {
                    Taken::Found(bytes) => bytes,
                    seen => return Ok(seen),
                };
                // the bytes left with the take: a used record keeps none
                record.state = after.phase();
                record.taken_by = Some(me.clone());
                let value = serde_json::to_vec(&record).expect("a record serializes");
                let ops = [
                    Op::Put { key: kv.key.clone(), value, lease: kv.lease },
                    Op::Delete(format!("{}{token}", self.pending_prefix(who))),
                    Op::Put {
                        key: format!("{}{token}", self.finished_prefix(who)),
                        value: Vec::new(),
                        lease: kv.lease,
                    },
                ];
                match self.gateway.txn(&[Compare::ModifiedAt(&kv.key, kv.mod_revision)], &ops).await {
                    Ok(true) => {
                        // as every store forgets: the oldest finished beyond the limit, now; the
                        // take stands whatever this does
                        if let Err(e) = self.forget_finished(&self.finished_prefix(who)).await {
                            tracing::warn!("the oldest finished proposals were not forgotten after a take: {e}");
                        }
                        return Ok(Taken::Found(bytes));
                    }
                    // applied by an earlier sending of this transaction, or another take won
                    Ok(false) => read = Some(bytes),
                    Err(e) => {
                        let Ok(Some((now, _))) = self.record(token).await else { return Err(e) };
                        return match now.taken_by == Some(me) {
                            true => Ok(Taken::Found(bytes)),
                            false if now.state == Phase::Used => Ok(Taken::Used(now.outcome)),
                            false => Err(e),
                        };
                    }
                }
            }
            Err(self.contended("the token's record"))
        })
    }

    fn settle<'a>(&'a self, who: &'a Principal, token: &'a str, outcome: Vec<u8>) -> Stored<'a, ()> {
        Box::pin(async move {
            for attempt in 0..RETRIES {
                if attempt > 0 {
                    backoff(attempt).await;
                }
                let Some((mut record, kv)) = self.record(token).await? else { return Ok(()) };
                if !owned_by(&record.owner, who) {
                    return Ok(());
                }
                let settled = record.take_life().and_then(|l| l.settle(outcome.clone()));
                let Some(Life::Used { outcome: recorded }) = settled else { return Ok(()) };
                record.outcome = recorded;
                let value = serde_json::to_vec(&record).expect("a record serializes");
                let op = Op::Put { key: kv.key.clone(), value, lease: kv.lease };
                if self.gateway.txn(&[Compare::ModifiedAt(&kv.key, kv.mod_revision)], &[op]).await? {
                    return Ok(());
                }
            }
            Err(self.contended("the token's record"))
        })
    }

    /// Once: the key is written with this call's mark, so a claim whose answer was lost but was
    /// applied still counts as this call's (and as nobody else's).
    fn claim<'a>(&'a self, key: &'a str, _now_ms: u64) -> Stored<'a, bool> {
        Box::pin(async move {
            let ttl = Duration::from_millis(super::ANSWER_MEMORY_MS);
            let (key, me) = (self.key(&format!("c/{key}")), mark());
            match self.put_leased(&key, me.as_bytes(), ttl, true).await {
                Ok(true) => Ok(true),
                Ok(false) => Ok(self.gateway.get(&key).await?.is_some_and(|kv| kv.value == me.as_bytes())),
                Err(e) => match self.gateway.get(&key).await {
                    Ok(Some(kv)) => Ok(kv.value == me.as_bytes()),
                    _ => Err(e),
                },
            }
        })
    }

    fn note_put<'a>(
        &'a self,
        key: &'a NoteKey<'a>,
        value: &'a [u8],
        ttl_ms: u64,
        only_if_absent: bool,
        _now_ms: u64,
    ) -> Stored<'a, bool> {
        Box::pin(async move {
            let key = &key.key();
            let key = self.key(&format!("n/{key}"));
            self.put_leased(&key, value, Duration::from_millis(ttl_ms), only_if_absent).await
        })
    }

    fn note_get<'a>(&'a self, key: &'a NoteKey<'a>, _now_ms: u64) -> Stored<'a, Option<Vec<u8>>> {
        Box::pin(async move {
            let key = &key.key();
            Ok(self.gateway.get(&self.key(&format!("n/{key}"))).await?.map(|kv| kv.value))
        })
    }

    fn index_put<'a>(&'a self, entry: IndexEntry<'a>, now_ms: u64) -> Stored<'a, ()> {
        Box::pin(async move {
            let IndexEntry { index, member, at_ms, until_ms, value } = entry;
            let by_name = self.index_member(index, member);
            let by_time = format!("{}{at_ms:016x}/{member}", self.index_prefix(index));
            let lease = self.gateway.lease(Duration::from_millis(until_ms.saturating_sub(now_ms).max(1))).await?;
            let mut stored = until_ms.to_be_bytes().to_vec();
            stored.extend_from_slice(value);
            for _ in 0..RETRIES {
                let before = self.gateway.get(&by_name).await?;
                let mut ops = Vec::new();
                if let Some(kv) = &before
                    && let Ok(old) = String::from_utf8(kv.value.clone())
                    && old != by_time
                {
                    ops.push(Op::Delete(old));
                }
                ops.push(Op::Put { key: by_time.clone(), value: stored.clone(), lease });
                ops.push(Op::Put { key: by_name.clone(), value: by_time.clone().into_bytes(), lease });
                let unchanged = Compare::ModifiedAt(&by_name, before.as_ref().map_or(0, |kv| kv.mod_revision));
                if self.gateway.txn(&[unchanged], &ops).await? {
                    return Ok(());
                }
            }
            Err(self.contended("an index of the approval page"))
        })
    }

    fn index_remove<'a>(&'a self, index: IndexKey, member: &'a str) -> Stored<'a, ()> {
        Box::pin(async move {
            let by_name = self.index_member(index, member);
            if let Some(kv) = self.gateway.get(&by_name).await? {
                let mut ops = vec![Op::Delete(by_name.clone())];
                if let Ok(old) = String::from_utf8(kv.value) {
                    ops.push(Op::Delete(old));
                }
                self.gateway.txn(&[], &ops).await?;
            }
            Ok(())
        })
    }

    /// Reads the whole index (its members end within the proposal's time and a page's
    /// afterwards), forgetting the oldest beyond [`MAX_INDEXED`].
    fn index_newest(
        &self,
        index: IndexKey,
        before_ms: Option<u64>,
        limit: usize,
        now_ms: u64,
    ) -> Stored<'_, Vec<Indexed>> {
        Box::pin(async move {
            let prefix = self.index_prefix(index);
            let mut all = Vec::new();
            for kv in self.gateway.prefixed(&prefix).await? {
                let rest = &kv.key[prefix.len()..];
                let parsed =
                    rest.split_once('/').and_then(|(at, member)| Some((u64::from_str_radix(at, 16).ok()?, member)));
                let (Some((at_ms, member)), Some((until, value))) = (parsed, kv.value.split_first_chunk::<8>()) else {
                    return Err(self.unreadable("an index entry of the approval page"));
                };
                all.push((at_ms, u64::from_be_bytes(*until), member.to_string(), value.to_vec(), kv.key.clone()));
            }
            all.sort_by_key(|e| std::cmp::Reverse(e.0));
            if all.len() > MAX_INDEXED {
                let ops: Vec<Op> = all[MAX_INDEXED..]
                    .iter()
                    .flat_map(|(_, _, member, _, key)| {
                        [Op::Delete(key.clone()), Op::Delete(self.index_member(index, member))]
                    })
                    .collect();
                self.gateway.txn(&[], &ops).await?;
                all.truncate(MAX_INDEXED);
            }
            Ok(all
                .into_iter()
                .filter(|(at, until, ..)| *until > now_ms && before_ms.is_none_or(|b| *at < b))
                .take(limit)
                .map(|(at_ms, _, member, value, _)| Indexed { at_ms, member, value })
                .collect())
        })
    }
}

/// The passkeys' and approvers' records: one key per field, changed by compare-and-swap.
impl SharedRecords for EtcdStore {
    fn values<'a>(&'a self, name: &'a str) -> Stored<'a, Vec<Vec<u8>>> {
        Box::pin(async move {
            let kvs = self.gateway.prefixed(&self.key(&format!("r/{name}/"))).await?;
            Ok(kvs.into_iter().map(|kv| kv.value).collect())
        })
    }

    fn get<'a>(&'a self, name: &'a str, field: &'a str) -> Stored<'a, Option<Vec<u8>>> {
        Box::pin(async move { Ok(self.gateway.get(&self.field_key(name, field)).await?.map(|kv| kv.value)) })
    }

    fn put_new<'a>(&'a self, name: &'a str, field: &'a str, value: &'a [u8]) -> Stored<'a, bool> {
        Box::pin(async move {
            let key = self.field_key(name, field);
            let op = Op::Put { key: key.clone(), value: value.to_vec(), lease: 0 };
            self.gateway.txn(&[Compare::Absent(&key)], &[op]).await
        })
    }

    fn swap<'a>(&'a self, name: &'a str, field: &'a str, old: &'a [u8], new: &'a [u8]) -> Stored<'a, bool> {
        Box::pin(async move {
            let key = self.field_key(name, field);
            let op = Op::Put { key: key.clone(), value: new.to_vec(), lease: 0 };
            self.gateway.txn(&[Compare::Holds(&key, old)], &[op]).await
        })
    }
}

#[cfg(test)]
mod tests {
    //! A take or a claim whose answer is lost after it was applied: a member on loopback that
    //! keeps keys as etcd does (revisions, compares of MOD and CREATE) and, when told to, applies
    //! a transaction and then closes the connection without answering.
    use super::*;
    use base64::engine::general_purpose::STANDARD;
    use serde_json::{Value, json};
    use std::collections::BTreeMap;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{Arc, Mutex};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    #[derive(Default)]
    struct Keys {
        kv: BTreeMap<Vec<u8>, (Vec<u8>, i64)>,
        revision: i64,
    }

    fn bytes(v: &Value) -> Vec<u8> {
        v.as_str().map(|s| STANDARD.decode(s).unwrap()).unwrap_or_default()
    }

    fn answer(keys: &Mutex<Keys>, path: &str, body: &Value) -> Value {
        let mut keys = keys.lock().unwrap();
        match path {
            "/v3/maintenance/status" => json!({"leader": "1", "member_id": "1"}),
            "/v3/lease/grant" => json!({"ID": "7"}),
            "/v3/kv/range" => {
                let key = bytes(&body["key"]);
                let end = bytes(&body["range_end"]);
                let kvs: Vec<Value> = keys
                    .kv
                    .iter()
                    .filter(|(k, _)| if end.is_empty() { **k == key } else { **k >= key && **k < end })
                    .map(|(k, (v, rev))| {
                        json!({"key": STANDARD.encode(k), "value": STANDARD.encode(v), "mod_revision": rev.to_string()})
                    })
                    .collect();
                json!({"kvs": kvs})
            }
            "/v3/kv/txn" => {
                let holds = body["compare"].as_array().unwrap().iter().all(|c| {
                    let at = keys.kv.get(&bytes(&c["key"])).map_or(0, |(_, rev)| *rev);
                    match c["target"].as_str() {
                        Some("MOD") => at.to_string() == c["mod_revision"].as_str().unwrap(),
                        Some("CREATE") => at == 0,
                        other => panic!("compare {other:?} not kept by this member"),
                    }
                });
                if holds {
                    keys.revision += 1;
                    let revision = keys.revision;
                    for op in body["success"].as_array().unwrap() {
                        if let Some(put) = op.get("request_put") {
                            keys.kv.insert(bytes(&put["key"]), (bytes(&put["value"]), revision));
                        } else {
                            keys.kv.remove(&bytes(&op["request_delete_range"]["key"]));
                        }
                    }
                }
                json!({"succeeded": holds})
            }
            other => panic!("{other} not kept by this member"),
        }
    }

    /// The member's URL, its keys, and the switch that makes it lose its next transaction's answer.
    async fn member() -> (String, Arc<Mutex<Keys>>, Arc<AtomicBool>) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("etcd://{}", listener.local_addr().unwrap());
        let (keys, lose) = (Arc::new(Mutex::new(Keys::default())), Arc::new(AtomicBool::new(false)));
        let (k, l) = (keys.clone(), lose.clone());
        tokio::spawn(async move {
            while let Ok((mut socket, _)) = listener.accept().await {
                let (keys, lose) = (k.clone(), l.clone());
                tokio::spawn(async move {
                    let mut seen = Vec::new();
                    let mut buf = [0u8; 8192];
                    let (head, length) = loop {
                        match socket.read(&mut buf).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => seen.extend_from_slice(&buf[..n]),
                        }
                        let Some(end) = seen.windows(4).position(|w| w == b"\r\n\r\n") else { continue };
                        let head = String::from_utf8_lossy(&seen[..end]).to_lowercase();
                        let length = head
                            .lines()
                            .find_map(|l| l.strip_prefix("content-length:").map(|n| n.trim().parse().unwrap()))
                            .unwrap_or(0);
                        if seen.len() >= end + 4 + length {
                            break (head, end + 4);
                        }
                    };
                    let path = head.split_whitespace().nth(1).unwrap().to_string();
                    let body: Value = serde_json::from_slice(&seen[length..]).unwrap();
                    let value = answer(&keys, &path, &body);
                    if path == "/v3/kv/txn" && lose.swap(false, Ordering::SeqCst) {
                        return; // applied, and the connection closed with no answer
                    }
                    let text = value.to_string();
                    let reply =
                        format!("HTTP/1.1 200 OK\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{text}", text.len());
                    let _ = socket.write_all(reply.as_bytes()).await;
                });
            }
        });
        (url, keys, lose)
    }

    #[tokio::test]
    async fn a_take_or_a_claim_applied_but_unanswered_counts_as_the_callers_and_only_once() {
        crate::install_crypto_provider();
        let (url, keys, lose) = member().await;
        let store = EtcdStore::connect(&url, None, None).await.unwrap();
        let who = Principal::named("dana");
        let (token, _) = store.put(&who, b"the request".to_vec(), u64::MAX / 2, 20, 0).await.unwrap();

        lose.store(true, Ordering::SeqCst);
        assert!(matches!(store.take(&who, &token).await.unwrap(), Taken::Found(b) if b == b"the request"));
        assert!(!lose.load(Ordering::SeqCst), "the take's answer was lost");
        assert!(matches!(store.take(&who, &token).await.unwrap(), Taken::Used(None)), "and it counted once");

        lose.store(true, Ordering::SeqCst);
        assert!(store.claim("decision", 0).await.unwrap(), "the claim whose answer was lost is this call's");
        assert!(!lose.load(Ordering::SeqCst));
        assert!(!store.claim("decision", 0).await.unwrap(), "and nobody else's");
        assert!(keys.lock().unwrap().revision >= 3);
    }
}
