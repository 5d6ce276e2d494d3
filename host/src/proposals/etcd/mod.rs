//! The consensus backend: proposals in etcd, whose writes are committed by a majority of its
//! members (Raft) and whose reads are linearizable, so a take that counted is seen by every later
//! read on any member, before and after any election, and a member cut off in a minority serves
//! nothing. Redis replication cannot promise that under a partition (docs/store.md).
//!
//! Each operation that changes state is one etcd transaction that compares what it read (a
//! key's `mod_revision`, or that it is absent) and writes only if nothing changed; a transaction
//! whose comparison failed is retried from a fresh read, so of concurrent takes of one token on
//! any replica exactly one wins. A put first writes its proposal and reads the principal's others
//! in one transaction, then moves out of the pending set what must go, each under a comparison of
//! its own: one principal's puts run at once on every replica, a token leaves the pending set
//! once (evicted, expired or taken), and each put reports exactly the evictions it made.
//!
//! Keys (under `PREFIX`, `equinix-mcp/` unless the URL names one):
//! - `t/<token>`: the token's record as JSON {owner, state: pending|used|evicted, record,
//!   expires_at_ms, outcome}, on a lease that ends [`TOMBSTONE`] after the proposal does;
//! - `p/<principal>/<token>`: the principal's pending tokens (capacity counts per principal),
//!   oldest first by creation; `f/<principal>/<token>`: those that stopped being pending, the
//!   newest [`FINISHED_PER_PRINCIPAL`] kept;
//! - `c/<key>`: claimed once keys (on a lease of [`super::ANSWER_MEMORY_MS`]); `n/<key>`: notes
//!   (on a lease of their TTL, whole seconds); `r/<name>/<field>`: the shared records.
//!
//! Principals are written base64url in keys (an issuer's URL holds `/`).

pub(crate) mod gateway;

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
pub(crate) const SCHEMES: [&str; 2] = ["etcd://", "etcds://"];

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

pub(crate) fn is_etcd(spec: &str) -> bool {
    SCHEMES.iter().any(|s| spec.starts_with(s))
}

#[derive(Clone, Serialize, Deserialize)]
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
    /// The put that evicted it: a random mark of the call, so a put whose evictions were applied
    /// though their answer was lost reports them, and only its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    evicted_by: Option<String>,
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

    pub(crate) fn serialize<S: Serializer>(v: &Option<Vec<u8>>, s: S) -> Result<S::Ok, S::Error> {
        match v {
            Some(bytes) => s.serialize_str(&STANDARD.encode(bytes)),
            None => s.serialize_none(),
        }
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<u8>>, D::Error> {
        let text: Option<String> = Option::deserialize(d)?;
        text.map(|t| STANDARD.decode(t).map_err(serde::de::Error::custom)).transpose()
    }
}

pub(crate) struct EtcdStore {
    gateway: Gateway,
    prefix: String,
    /// The lease the records put in one minute share (see [`EtcdStore::lease_until`]).
    lease: std::sync::Mutex<Option<SharedLease>>,
    /// What this replica's takes left in each token's record, so the settle that follows on the
    /// same replica writes without reading it again (its revision still compared).
    taken: std::sync::Mutex<std::collections::HashMap<String, (Record, Kv)>>,
}

/// A lease that ends at the end of a minute: every record whose life ends within that minute
/// goes on it, so a put grants a lease once a minute rather than once per proposal, and a record
/// lives at most a minute past its tombstone.
#[derive(Clone, Copy)]
struct SharedLease {
    minute: u64,
    id: i64,
}

/// Takes remembered for their settles at most (the oldest forgotten first beyond it; a settle
/// that finds none reads the record).
const TAKEN_KEPT: usize = 1024;

impl EtcdStore {
    /// `etcd://HOST:PORT,HOST:PORT,...[/PREFIX]`: connects and checks the cluster answers with
    /// its quorum (a linearizable read).
    ///
    /// `etcd://USER@HOST:PORT,...` signs in as USER (etcd's authentication) with `password`.
    ///
    /// `ca`: PEM, the only authorities trusted for the members' certificates (`etcds://`).
    pub(crate) async fn connect(spec: &str, password: Option<Secret>, ca: Option<Vec<u8>>) -> anyhow::Result<Self> {
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
        let store = EtcdStore {
            gateway: Gateway::new(endpoints, shown.clone(), login, authorities)?,
            prefix,
            lease: Default::default(),
            taken: Default::default(),
        };
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

    pub(crate) fn describe(&self) -> String {
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

    /// Keeps what a take wrote for the settle that follows it here (a full map is emptied: a
    /// settle that finds nothing reads the record, as another replica's would).
    fn remember_taken(&self, token: &str, record: Record, kv: Kv) {
        let mut taken = self.taken.lock().unwrap_or_else(|p| p.into_inner());
        if taken.len() >= TAKEN_KEPT {
            taken.clear();
        }
        taken.insert(token.to_string(), (record, kv));
    }

    async fn record(&self, token: &str) -> Result<Option<(Record, Kv)>, StoreUnavailable> {
        let Some(kv) = self.gateway.get(&self.token_key(token)).await? else { return Ok(None) };
        let record = serde_json::from_slice(&kv.value).map_err(|_| self.unreadable("a token's record"))?;
        Ok(Some((record, kv)))
    }

    /// What forgets the oldest finished tokens beyond [`FINISHED_PER_PRINCIPAL`] once those whose
    /// entries are `finishing` have finished too (each then the newest, whether it had finished
    /// before or not): their records and their index entries (they then read as unknown, as
    /// in the Redis store), each only if its entry is still the one `finished` read (a token that
    /// finished again since is not forgotten by mistake; two writers that both forget one entry
    /// forget it once). The newest finished are never among them, so writers that each forget
    /// their own oldest never leave fewer than the limit.
    fn forget_ops(&self, finished_prefix: &str, mut finished: Vec<Kv>, finishing: &[String]) -> Vec<Op> {
        finished.retain(|kv| !finishing.contains(&kv.key));
        // in the order they finished: by revision, then by their order within one transaction
        let order = |kv: &Kv| std::str::from_utf8(&kv.value).ok().and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
        finished.sort_by_key(|kv| (kv.mod_revision, order(kv)));
        let extra =
            (finished.len() + finishing.len()).saturating_sub(FINISHED_PER_PRINCIPAL as usize).min(finished.len());
        finished
            .drain(..extra)
            .map(|kv| Op::IfUnchanged {
                then: vec![Op::Delete(self.token_key(&kv.key[finished_prefix.len()..])), Op::Delete(kv.key.clone())],
                key: kv.key,
                mod_revision: kv.mod_revision,
            })
            .collect()
    }

    /// A lease that outlives `until_ms` by at most a minute, shared by every record put in the
    /// same minute (granted again when the one kept is for another minute, or etcd no longer
    /// knows it: `fresh`).
    async fn lease_until(&self, until_ms: u64, now_ms: u64, fresh: bool) -> Result<i64, StoreUnavailable> {
        let minute = until_ms.div_ceil(60_000);
        let kept = *self.lease.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(lease) = kept.filter(|l| l.minute == minute && !fresh) {
            return Ok(lease.id);
        }
        let id = self.gateway.lease(Duration::from_millis((minute * 60_000).saturating_sub(now_ms))).await?;
        *self.lease.lock().unwrap_or_else(|p| p.into_inner()) = Some(SharedLease { minute, id });
        Ok(id)
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

    /// Two transactions, neither waiting for the principal's other puts: the first writes the
    /// proposal and reads the principal's pending and finished tokens (one commit); the second,
    /// only when some must go, moves each one out of the pending set under a comparison of its
    /// own (expired first, then the oldest beyond `capacity`) and forgets the oldest finished.
    ///
    /// Puts of one principal at once may each count the others': each then evicts enough that
    /// when it returns no more than `capacity` pending were made before it, a token evicted by
    /// two of them is evicted once (the second comparison fails), and each reports exactly the
    /// evictions it made.
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
            let until = expires_at_ms.saturating_add(TOMBSTONE.as_millis() as u64);
            let (pending_prefix, finished_prefix) = (self.pending_prefix(who), self.finished_prefix(who));
            let (record_key, pending_key) = (self.token_key(&token), format!("{pending_prefix}{token}"));
            let encoded = serde_json::to_vec(&Record {
                owner: who.as_str().to_string(),
                state: Phase::Pending,
                record: Some(record),
                expires_at_ms,
                outcome: None,
                taken_by: None,
                evicted_by: None,
            })
            .expect("a record serializes");
            let reads = [Op::Range(pending_prefix.clone()), Op::Range(finished_prefix.clone())];
            let mut fresh_lease = false;
            let (written, lease) = loop {
                let lease = self.lease_until(until, now_ms, fresh_lease).await?;
                let writes = [
                    Op::Put { key: record_key.clone(), value: encoded.clone(), lease },
                    Op::Put { key: pending_key.clone(), value: expires_at_ms.to_string().into(), lease },
                    Op::Range(pending_prefix.clone()),
                    Op::Range(finished_prefix.clone()),
                ];
                // a fresh token is absent: a failed comparison is an earlier sending, applied
                match self.gateway.transaction(&[Compare::Absent(&record_key)], &writes, &reads).await {
                    Ok(applied) => break (applied, lease),
                    Err(e) if !fresh_lease && e.reason.contains("requested lease not found") => fresh_lease = true,
                    // the answer lost, not necessarily the write: the token's key says which
                    Err(e) => match self.gateway.get(&record_key).await {
                        Ok(Some(_)) => {
                            let pending = self.gateway.prefixed(&pending_prefix).await?;
                            let finished = self.gateway.prefixed(&finished_prefix).await?;
                            let applied = gateway::Applied {
                                succeeded: true,
                                ranges: vec![pending, finished],
                                ..Default::default()
                            };
                            break (applied, lease);
                        }
                        _ => return Err(e),
                    },
                }
            };
            let [pending, finished]: [Vec<Kv>; 2] =
                written.ranges.try_into().map_err(|_| self.unreadable("a put's answer"))?;
            let mut queue = Vec::new();
            for kv in pending.into_iter().filter(|kv| kv.key != pending_key) {
                let expires: u64 = std::str::from_utf8(&kv.value)
                    .ok()
                    .and_then(|v| v.parse().ok())
                    .ok_or_else(|| self.unreadable("a pending token's expiry"))?;
                queue.push(((kv, expires), expires));
            }
            let Room { expired, evicted, .. } = make_room(queue, capacity, now_ms);
            let me = mark();
            let (mut ops, mut evicting, mut finishing) = (Vec::new(), Vec::new(), Vec::new());
            let leaving =
                expired.into_iter().map(|(kv, _)| (kv, None)).chain(evicted.into_iter().map(|(kv, e)| (kv, Some(e))));
            for (i, (kv, evicted_at)) in leaving.enumerate() {
                let tok = kv.key[pending_prefix.len()..].to_string();
                // one transaction gives its keys one revision: the value orders them within it
                let mut then = vec![
                    Op::Delete(kv.key.clone()),
                    Op::Put { key: format!("{finished_prefix}{tok}"), value: i.to_string().into_bytes(), lease },
                ];
                if let Some(expires_at_ms) = evicted_at {
                    let tombstone = Record {
                        owner: who.as_str().to_string(),
                        state: Phase::Evicted,
                        record: None,
                        expires_at_ms,
                        outcome: None,
                        taken_by: None,
                        evicted_by: Some(me.clone()),
                    };
                    let value = serde_json::to_vec(&tombstone).expect("a record serializes");
                    then.push(Op::Put { key: self.token_key(&tok), value, lease });
                }
                finishing.push(format!("{finished_prefix}{tok}"));
                evicting.push((ops.len(), evicted_at.map(|_| tok)));
                ops.push(Op::IfUnchanged { key: kv.key, mod_revision: kv.mod_revision, then });
            }
            ops.extend(self.forget_ops(&finished_prefix, finished, &finishing));
            if ops.is_empty() {
                return Ok((token, Vec::new()));
            }
            let evicted_tokens = || evicting.iter().filter_map(|(_, t)| t.clone());
            match self.gateway.transaction(&[], &ops, &[]).await {
                Ok(applied) => {
                    let made = |at: usize| applied.guarded.get(at).copied().unwrap_or(false);
                    let evicted = evicting.iter().filter(|(at, _)| made(*at)).filter_map(|(_, t)| t.clone());
                    Ok((token, evicted.collect()))
                }
                // the answer lost: the tombstones marked with this put's mark are its evictions
                // (what it did not apply, the principal's next put does). The proposal is stored
                // whatever this finds: its token is the caller's, not an error.
                Err(e) => {
                    let mut evicted = Vec::new();
                    for tok in evicted_tokens() {
                        match self.record(&tok).await {
                            Ok(Some((r, _))) if r.evicted_by.as_deref() == Some(me.as_str()) => evicted.push(tok),
                            Ok(_) => {}
                            Err(read) => {
                                tracing::warn!("a put's evictions may go unreported: {e}; then {read}");
                                break;
                            }
                        }
                    }
                    Ok((token, evicted))
                }
            }
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
            let finished_prefix = self.finished_prefix(who);
            let finished_key = format!("{finished_prefix}{token}");
            for attempt in 0..RETRIES {
                if attempt > 0 {
                    backoff(attempt).await;
                }
                // the principal's finished tokens beside the record: a take forgets the oldest
                // beyond the limit in its own transaction
                let (record, finished) = tokio::join!(self.record(token), self.gateway.prefixed(&finished_prefix));
                let Some((mut record, kv)) = record? else { return Ok(Taken::Unknown) };
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
                let mut ops = vec![
                    Op::Put { key: kv.key.clone(), value: value.clone(), lease: kv.lease },
                    Op::Delete(format!("{}{token}", self.pending_prefix(who))),
                    Op::Put { key: finished_key.clone(), value: Vec::new(), lease: kv.lease },
                ];
                ops.extend(self.forget_ops(&finished_prefix, finished?, std::slice::from_ref(&finished_key)));
                match self.gateway.transaction(&[Compare::ModifiedAt(&kv.key, kv.mod_revision)], &ops, &[]).await {
                    Ok(applied) if applied.succeeded => {
                        self.remember_taken(token, record, Kv { value, mod_revision: applied.revision, ..kv });
                        return Ok(Taken::Found(bytes));
                    }
                    // applied by an earlier sending of this transaction, or another take won
                    Ok(_) => read = Some(bytes),
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
            // the record as this replica's take left it, if it did: its revision is compared all
            // the same, and a record written since is read again
            let mut remembered = self.taken.lock().unwrap_or_else(|p| p.into_inner()).remove(token);
            for attempt in 0..RETRIES {
                if attempt > 1 {
                    backoff(attempt).await;
                }
                let read = match remembered.take() {
                    Some(kept) => Some(kept),
                    None => self.record(token).await?,
                };
                let Some((mut record, kv)) = read else { return Ok(()) };
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
    use std::sync::atomic::{AtomicUsize, Ordering};
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
            "/v3/kv/range" => range(&keys, body),
            "/v3/kv/txn" => {
                keys.revision += 1;
                let revision = keys.revision;
                let mut answer = txn(&mut keys, body, revision);
                answer["header"] = json!({"revision": revision.to_string()});
                answer
            }
            other => panic!("{other} not kept by this member"),
        }
    }

    /// Keys in key order (the store's own keys are created in that order in these tests).
    fn range(keys: &Keys, body: &Value) -> Value {
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

    /// A transaction (or one inside another), its writes at `revision`.
    fn txn(keys: &mut Keys, body: &Value, revision: i64) -> Value {
        let holds = body["compare"].as_array().into_iter().flatten().all(|c| {
            let at = keys.kv.get(&bytes(&c["key"])).map_or(0, |(_, rev)| *rev);
            match c["target"].as_str() {
                Some("MOD") => at.to_string() == c["mod_revision"].as_str().unwrap(),
                Some("CREATE") => at == 0,
                other => panic!("compare {other:?} not kept by this member"),
            }
        });
        let branch = if holds { &body["success"] } else { &body["failure"] };
        let mut responses = Vec::new();
        for op in branch.as_array().into_iter().flatten() {
            if let Some(put) = op.get("request_put") {
                keys.kv.insert(bytes(&put["key"]), (bytes(&put["value"]), revision));
                responses.push(json!({"response_put": {}}));
            } else if let Some(delete) = op.get("request_delete_range") {
                keys.kv.remove(&bytes(&delete["key"]));
                responses.push(json!({"response_delete_range": {}}));
            } else if let Some(r) = op.get("request_range") {
                responses.push(json!({"response_range": range(keys, r)}));
            } else {
                responses.push(json!({"response_txn": txn(keys, &op["request_txn"], revision)}));
            }
        }
        json!({"succeeded": holds, "responses": responses})
    }

    /// The member's URL, its keys, and the switch that makes it lose a transaction's answer: `n`
    /// loses the `n`th transaction's from now (0: none).
    async fn member() -> (String, Arc<Mutex<Keys>>, Arc<AtomicUsize>) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("etcd://{}", listener.local_addr().unwrap());
        let (keys, lose) = (Arc::new(Mutex::new(Keys::default())), Arc::new(AtomicUsize::new(0)));
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
                    let countdown = |n: usize| Some(n.saturating_sub(1));
                    if path == "/v3/kv/txn" && lose.fetch_update(Ordering::SeqCst, Ordering::SeqCst, countdown) == Ok(1)
                    {
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

        lose.store(1, Ordering::SeqCst);
        assert!(matches!(store.take(&who, &token).await.unwrap(), Taken::Found(b) if b == b"the request"));
        assert_eq!(lose.load(Ordering::SeqCst), 0, "the take's answer was lost");
        assert!(matches!(store.take(&who, &token).await.unwrap(), Taken::Used(None)), "and it counted once");

        lose.store(1, Ordering::SeqCst);
        assert!(store.claim("decision", 0).await.unwrap(), "the claim whose answer was lost is this call's");
        assert_eq!(lose.load(Ordering::SeqCst), 0);
        assert!(!store.claim("decision", 0).await.unwrap(), "and nobody else's");
        assert!(keys.lock().unwrap().revision >= 3);
    }

    #[tokio::test]
    async fn a_put_whose_evictions_were_applied_but_unanswered_reports_them_and_only_once() {
        crate::install_crypto_provider();
        let (url, _keys, lose) = member().await;
        let store = EtcdStore::connect(&url, None, None).await.unwrap();
        let who = Principal::named("erin");
        let (first, evicted) = store.put(&who, b"first".to_vec(), u64::MAX / 2, 1, 0).await.unwrap();
        assert!(evicted.is_empty());
        // the second put's own transaction is answered; the one that evicts the first is not
        lose.store(2, Ordering::SeqCst);
        let (second, evicted) = store.put(&who, b"second".to_vec(), u64::MAX / 2, 1, 1).await.unwrap();
        assert_eq!(lose.load(Ordering::SeqCst), 0, "the eviction's answer was lost");
        assert_eq!(evicted, std::slice::from_ref(&first), "its mark on the tombstone names the eviction as its own");
        assert!(matches!(store.take(&who, &first).await.unwrap(), Taken::Evicted));
        // the next put evicts the second, and reports only that
        let (_, evicted) = store.put(&who, b"third".to_vec(), u64::MAX / 2, 1, 2).await.unwrap();
        assert_eq!(evicted, [second]);
    }
}
