//! The shared backend: proposals in Redis or Valkey, so a propose and its confirm (or the two
//! rounds of a 2026-07-28 confirm) may reach different replicas. Each operation that changes
//! state is one Lua script, which Redis runs atomically: of eight concurrent takes spread over
//! any number of replicas exactly one sees the record.
//!
//! Keys (standalone Redis/Valkey or a primary; the scripts touch keys they compute, so a
//! cluster is not supported):
//! - `equinix-mcp:token:<token>`: hash {owner, state: pending|used|evicted, record,
//!   expires_at_ms, outcome}; expires [`TOMBSTONE`] after the proposal does, so a replay of a
//!   used or evicted token is answered precisely for a day and then forgotten;
//! - `equinix-mcp:pending:<principal>`: sorted set of the principal's pending tokens by mint
//!   order (capacity counts per principal);
//! - `equinix-mcp:finished:<principal>`: sorted set of its tokens that stopped being pending,
//!   the newest [`FINISHED_PER_PRINCIPAL`] of them (older ones are deleted);
//! - `equinix-mcp:seq`: the mint counter that orders them;
//! - `equinix-mcp:answer:<id>`: a stateless first round's answer that a retry has used (see
//!   [`super::ANSWER_MEMORY_MS`]).
//!
//! Where the primary is (one node, or the one the Sentinels name) and when a write counts (once
//! `--proposal-store-acks` replicas hold it) is [`link`]'s; what `--proposal-store` may name is
//! [`spec`]'s.

mod link;
pub(crate) mod spec;

use std::sync::LazyLock;

use ::redis::Cmd;

use super::life::{FINISHED_PER_PRINCIPAL, Phase, TOMBSTONE, owned_by};
use super::token::mint_token;
pub(crate) use super::unavailable::{Cause, StoreUnavailable};
use super::{IndexEntry, IndexKey, Indexed, MAX_INDEXED, NoteKey, SharedRecords, Stored};
use crate::bindings::proposal_store::Taken;
use crate::principal::Principal;

const PREFIX: &str = "equinix-mcp:";

/// A hash field replaced only if it still holds the value read.
const SWAP: &str = r"
if redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[2] then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
return 1
";

type Bytes = Vec<u8>;
/// Records that token `t` stopped being pending (KEYS[fin] the principal's finished tokens,
/// KEYS[seq] the counter) and forgets the oldest finished ones beyond ARGV `keep`, so what a
/// principal's finished tokens keep is bounded whatever the rate of its proposals.
const FINISHED: &str = r#"
local function finished(fin, seq, prefix, keep, tomb, t)
  redis.call('ZADD', fin, redis.call('INCR', seq), t)
  local extra = redis.call('ZCARD', fin) - keep
  if extra > 0 then
    for _, old in ipairs(redis.call('ZRANGE', fin, 0, extra - 1)) do redis.call('DEL', prefix .. old) end
    redis.call('ZREMRANGEBYRANK', fin, 0, extra - 1)
  end
  redis.call('PEXPIRE', fin, tomb)
end
"#;

const PUT: &str = r#"
local now, cap, tomb, keep = tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7]), tonumber(ARGV[9])
for _, t in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  local f = redis.call('HMGET', ARGV[8] .. t, 'state', 'expires_at_ms')
  if f[1] ~= 'pending' or not f[2] or tonumber(f[2]) <= now then
    redis.call('ZREM', KEYS[1], t)
    finished(KEYS[4], KEYS[2], ARGV[8], keep, tomb, t)
  end
end
local evicted = {}
while redis.call('ZCARD', KEYS[1]) >= cap do
  local oldest = redis.call('ZRANGE', KEYS[1], 0, 0)[1]
  redis.call('ZREM', KEYS[1], oldest)
  local k = ARGV[8] .. oldest
  redis.call('HSET', k, 'state', 'evicted')
  redis.call('HDEL', k, 'record')
  redis.call('PEXPIRE', k, tomb)
  table.insert(evicted, oldest)
  finished(KEYS[4], KEYS[2], ARGV[8], keep, tomb, oldest)
end
local life = math.max(tonumber(ARGV[4]) - now, 0) + tomb
redis.call('HSET', KEYS[3], 'owner', ARGV[2], 'state', 'pending', 'record', ARGV[3], 'expires_at_ms', ARGV[4])
redis.call('PEXPIRE', KEYS[3], life)
redis.call('ZADD', KEYS[1], redis.call('INCR', KEYS[2]), ARGV[1])
if redis.call('PTTL', KEYS[1]) < life then redis.call('PEXPIRE', KEYS[1], life) end
return evicted
"#;

const TAKE: &str = r#"
local f = redis.call('HMGET', KEYS[1], 'owner', 'state', 'record', 'outcome')
if not f[1] or f[1] ~= ARGV[1] then return {'unknown'} end
if f[2] == 'pending' then
  redis.call('HSET', KEYS[1], 'state', 'used')
  redis.call('HDEL', KEYS[1], 'record')
  redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[3]))
  redis.call('ZREM', KEYS[2], ARGV[2])
  finished(KEYS[3], KEYS[4], ARGV[4], tonumber(ARGV[5]), tonumber(ARGV[3]), ARGV[2])
  return {'found', f[3]}
elseif f[2] == 'used' then
  if f[4] then return {'used', f[4]} end
  return {'used'}
end
return {'evicted'}
"#;

const SETTLE: &str = r#"
local f = redis.call('HMGET', KEYS[1], 'owner', 'state')
if f[1] == ARGV[1] and f[2] == 'used' then
  redis.call('HSET', KEYS[1], 'outcome', ARGV[2])
  return 1
end
return 0
"#;

/// An index of the approval page: KEYS[1] members by time, KEYS[2] members by their end, KEYS[3]
/// their values. Puts (or moves) ARGV member at ARGV at, forgets the ended and the oldest beyond
/// the cap, and keeps the three keys as long as their newest member.
const INDEX_PUT: &str = r#"
local member, now, cap = ARGV[1], tonumber(ARGV[5]), tonumber(ARGV[6])
redis.call('ZADD', KEYS[1], ARGV[2], member)
redis.call('ZADD', KEYS[2], ARGV[3], member)
redis.call('HSET', KEYS[3], member, ARGV[4])
local gone = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now)
local extra = redis.call('ZCARD', KEYS[1]) - cap
if extra > 0 then
  for _, m in ipairs(redis.call('ZRANGE', KEYS[1], 0, extra - 1)) do table.insert(gone, m) end
end
for _, m in ipairs(gone) do
  redis.call('ZREM', KEYS[1], m)
  redis.call('ZREM', KEYS[2], m)
  redis.call('HDEL', KEYS[3], m)
end
local life = math.max(tonumber(ARGV[3]) - now, 1)
for i = 1, 3 do
  if redis.call('PTTL', KEYS[i]) < life then redis.call('PEXPIRE', KEYS[i], life) end
end
return 1
"#;

const INDEX_REMOVE: &str = r#"
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('HDEL', KEYS[3], ARGV[1])
return 1
"#;

/// The live members older than ARGV[1] (a score bound), newest first, at most ARGV[3]: member,
/// time, value, flattened.
const INDEX_NEWEST: &str = r#"
local now, limit, out = tonumber(ARGV[2]), tonumber(ARGV[3]), {}
local found = redis.call('ZREVRANGEBYSCORE', KEYS[1], ARGV[1], '-inf', 'WITHSCORES')
for i = 1, #found, 2 do
  local ends = redis.call('ZSCORE', KEYS[2], found[i])
  if ends and tonumber(ends) > now then
    table.insert(out, found[i])
    table.insert(out, found[i + 1])
    table.insert(out, redis.call('HGET', KEYS[3], found[i]) or '')
    if #out >= 3 * limit then break end
  end
end
return out
"#;

fn index_keys(index: IndexKey) -> [String; 3] {
    let name = index.key();
    [format!("{PREFIX}{name}:at"), format!("{PREFIX}{name}:until"), format!("{PREFIX}{name}:value")]
}

pub(crate) struct RedisStore {
    link: link::Link,
}

/// `EVAL script` on `keys` (the arguments follow). The script's text goes with every call, so a
/// primary a failover just promoted, whose script cache is empty, runs it too.
fn eval(script: &str, keys: &[&str]) -> Cmd {
    let mut cmd = ::redis::cmd("EVAL");
    cmd.arg(script).arg(keys.len());
    for key in keys {
        cmd.arg(*key);
    }
    cmd
}

impl RedisStore {
    /// Connects (lazily reconnecting later, and following the Sentinels' primary when it names
    /// them) and checks the primary answers.
    pub(crate) async fn connect(shared: spec::Shared) -> anyhow::Result<Self> {
        let store = RedisStore { link: link::Link::open(shared).await? };
        let answered =
            tokio::time::timeout(link::RESPONSE_TIMEOUT * 2, store.link.read::<String>(&::redis::cmd("PING")))
                .await
                .map_err(|_| "no answer to PING".to_string())
                .and_then(|r| r.map_err(|e| e.reason));
        answered.map_err(|e| anyhow::anyhow!("cannot reach the proposal store {}: {e}", store.link.shown))?;
        if let Some(risk) = store.persistence_risk().await {
            tracing::warn!("proposal store {}: {risk}", store.link.shown);
        }
        if let Some(risk) = store.partition_risk().await {
            tracing::warn!("proposal store {}: {risk}", store.link.shown);
        }
        Ok(store)
    }

    /// Whether a network partition could undo a counted take: the Sentinels can promote a replica
    /// that did not acknowledge it while the old primary, cut off with the replicas that did,
    /// keeps serving the servers that still reach it.
    async fn partition_risk(&self) -> Option<String> {
        let acks = self.link.acks().replicas;
        if !self.link.follows_sentinels() {
            return None;
        }
        let replicas = self.link.replica_count().await?;
        (replicas > acks).then(|| {
            format!(
                "the primary has {replicas} replicas and each write waits for {acks}: a partition that leaves the \
                 primary with {acks} of them while the Sentinels promote another can undo a counted take; set \
                 --proposal-store-acks {replicas} (and min-replicas-to-write {replicas}) to close that"
            )
        })
    }

    /// Whether the primary persists in a way that can bring it back with older data after a crash
    /// (a snapshot, or an AOF synced once a second): a token taken since would be pending again.
    /// `None` when it cannot tell (`CONFIG` refused) or the persistence is safe.
    async fn persistence_risk(&self) -> Option<String> {
        // one parameter per CONFIG GET: Redis before 7 takes no more
        let mut pairs = std::collections::HashMap::new();
        for name in ["save", "appendonly", "appendfsync"] {
            let got: std::collections::HashMap<String, String> =
                self.link.read(::redis::cmd("CONFIG").arg("GET").arg(name)).await.ok()?;
            pairs.extend(got);
        }
        let aof = pairs.get("appendonly").is_some_and(|v| v == "yes");
        let fsync_always = pairs.get("appendfsync").is_some_and(|v| v == "always");
        let snapshots = pairs.get("save").is_some_and(|v| !v.trim().is_empty());
        let how = match (aof, fsync_always, snapshots) {
            (true, true, _) | (false, _, false) => return None,
            (true, false, _) => "an append-only file synced less than on every write (appendfsync)",
            (false, _, true) => "snapshots (save)",
        };
        Some(format!(
            "it persists with {how}: restarted after a crash, it can hold a token as pending that was taken and \
             created since, which could then be confirmed again; use `appendonly yes` with `appendfsync always`, or no \
             persistence (docs/store.md, \"Highly available with Sentinel\")"
        ))
    }

    pub(crate) fn describe(&self) -> String {
        let acks = self.link.acks();
        let kind = if self.link.follows_sentinels() { "shared, primary named by Sentinel" } else { "shared" };
        match acks.replicas {
            0 => format!("{} ({kind})", self.link.shown),
            n => format!(
                "{} ({kind}; each write acknowledged by {n} replica{} within {} ms)",
                self.link.shown,
                if n == 1 { "" } else { "s" },
                acks.timeout.as_millis()
            ),
        }
    }
}

impl super::Backend for RedisStore {
    fn describe(&self) -> String {
        RedisStore::describe(self)
    }

    fn shared_records(&self) -> Option<&dyn SharedRecords> {
        Some(self)
    }

    /// Whether the store answers and takes writes: a node a failover demoted to a replica answers
    /// PING but refuses every write, and a primary with fewer replicas than each write needs would
    /// refuse them all, so its `ROLE` is asked.
    fn ping(&self) -> Stored<'_, ()> {
        Box::pin(async move { self.link.role().await })
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
            let keys = [&pending_key(who), &format!("{PREFIX}seq"), &token_key(&token), &finished_key(who)];
            let mut cmd = eval(&PUT_SCRIPT, &keys.map(String::as_str));
            cmd.arg(&token)
                .arg(who.as_str())
                .arg(record)
                .arg(expires_at_ms)
                .arg(now_ms)
                .arg(capacity.max(1))
                .arg(TOMBSTONE.as_millis() as u64)
                .arg(format!("{PREFIX}token:"))
                .arg(FINISHED_PER_PRINCIPAL);
            let evicted: Vec<String> = self.link.write(&cmd).await?;
            Ok((token, evicted))
        })
    }

    fn peek<'a>(&'a self, who: &'a Principal, token: &'a str) -> Stored<'a, Taken> {
        Box::pin(async move {
            let mut cmd = ::redis::cmd("HMGET");
            cmd.arg(token_key(token)).arg(&["owner", "state", "record", "outcome"]);
            let (owner, state, record, outcome): (Option<String>, Option<String>, Option<Bytes>, Option<Bytes>) =
                self.link.read(&cmd).await?;
            if !owner.is_some_and(|owner| owned_by(&owner, who)) {
                return Ok(Taken::Unknown);
            }
            Ok(match (state.as_deref().and_then(Phase::named), record) {
                (Some(Phase::Pending), Some(record)) => Taken::Found(record),
                (Some(Phase::Used), _) => Taken::Used(outcome),
                (Some(Phase::Evicted), _) => Taken::Evicted,
                _ => Taken::Unknown,
            })
        })
    }

    /// Single use: the take counts (and the record is handed over) only once the replicas the
    /// operator requires hold it, so no failover can make the token pending again after a create.
    fn take<'a>(&'a self, who: &'a Principal, token: &'a str) -> Stored<'a, Taken> {
        Box::pin(async move {
            let keys = [&token_key(token), &pending_key(who), &finished_key(who), &format!("{PREFIX}seq")];
            let mut cmd = eval(&TAKE_SCRIPT, &keys.map(String::as_str));
            cmd.arg(who.as_str())
                .arg(token)
                .arg(TOMBSTONE.as_millis() as u64)
                .arg(format!("{PREFIX}token:"))
                .arg(FINISHED_PER_PRINCIPAL);
            let reply: Vec<Vec<u8>> = self.link.write(&cmd).await?;
            let mut parts = reply.into_iter();
            Ok(match (parts.next().as_deref(), parts.next()) {
                (Some(b"found"), Some(record)) => Taken::Found(record),
                (Some(b"used"), outcome) => Taken::Used(outcome),
                (Some(b"evicted"), _) => Taken::Evicted,
                (Some(b"unknown"), _) => Taken::Unknown,
                _ => return Err(self.link.error(Cause::Down, "the take script answered something unexpected")),
            })
        })
    }

    fn settle<'a>(&'a self, who: &'a Principal, token: &'a str, outcome: Vec<u8>) -> Stored<'a, ()> {
        Box::pin(async move {
            let mut cmd = eval(SETTLE, &[&token_key(token)]);
            cmd.arg(who.as_str()).arg(outcome);
            let _: i64 = self.link.write_unacknowledged(&cmd).await?;
            Ok(())
        })
    }

    fn claim<'a>(&'a self, key: &'a str, _now_ms: u64) -> Stored<'a, bool> {
        Box::pin(async move {
            let mut cmd = ::redis::cmd("SET");
            cmd.arg(format!("{PREFIX}answer:{key}")).arg(1).arg("NX").arg("PX").arg(super::ANSWER_MEMORY_MS);
            let set: Option<String> = self.link.write(&cmd).await?;
            Ok(set.is_some())
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
            let mut cmd = ::redis::cmd("SET");
            cmd.arg(format!("{PREFIX}note:{key}")).arg(value).arg("PX").arg(ttl_ms.max(1));
            if only_if_absent {
                cmd.arg("NX");
            }
            let done: Option<String> = self.link.write(&cmd).await?;
            Ok(done.is_some())
        })
    }

    fn note_get<'a>(&'a self, key: &'a NoteKey<'a>, _now_ms: u64) -> Stored<'a, Option<Vec<u8>>> {
        Box::pin(async move {
            let key = &key.key();
            self.link.read(::redis::cmd("GET").arg(format!("{PREFIX}note:{key}"))).await
        })
    }

    fn index_put<'a>(&'a self, entry: IndexEntry<'a>, now_ms: u64) -> Stored<'a, ()> {
        Box::pin(async move {
            let keys = index_keys(entry.index);
            let mut cmd = eval(INDEX_PUT, &keys.each_ref().map(String::as_str));
            cmd.arg(entry.member).arg(entry.at_ms).arg(entry.until_ms).arg(entry.value).arg(now_ms).arg(MAX_INDEXED);
            let _: i64 = self.link.write(&cmd).await?;
            Ok(())
        })
    }

    fn index_remove<'a>(&'a self, index: IndexKey, member: &'a str) -> Stored<'a, ()> {
        Box::pin(async move {
            let keys = index_keys(index);
            let mut cmd = eval(INDEX_REMOVE, &keys.each_ref().map(String::as_str));
            cmd.arg(member);
            let _: i64 = self.link.write(&cmd).await?;
            Ok(())
        })
    }

    fn index_newest(
        &self,
        index: IndexKey,
        before_ms: Option<u64>,
        limit: usize,
        now_ms: u64,
    ) -> Stored<'_, Vec<Indexed>> {
        Box::pin(async move {
            let keys = index_keys(index);
            let mut cmd = eval(INDEX_NEWEST, &keys.each_ref().map(String::as_str));
            cmd.arg(before_ms.map_or("+inf".to_string(), |b| format!("({b}"))).arg(now_ms).arg(limit.max(1));
            let flat: Vec<Vec<u8>> = self.link.read(&cmd).await?;
            let unexpected = || self.link.error(Cause::Down, "the index script answered something unexpected");
            let mut found = Vec::with_capacity(flat.len() / 3);
            for entry in flat.chunks(3) {
                let [member, at, value] = entry else { return Err(unexpected()) };
                // Redis writes a score as a double: a whole number of ms below 2^53 reads back exactly
                let at_ms = std::str::from_utf8(at).ok().and_then(|a| a.parse::<f64>().ok()).map(|a| a as u64);
                let (Some(at_ms), Ok(member)) = (at_ms, String::from_utf8(member.clone())) else {
                    return Err(unexpected());
                };
                found.push(Indexed { at_ms, member, value: value.clone() });
            }
            Ok(found)
        })
    }
}

/// The passkeys' records, as Redis hashes.
impl SharedRecords for RedisStore {
    /// Every value of the hash `name` (a few hundred small records at most: see `passkeys::store`).
    fn values<'a>(&'a self, name: &'a str) -> Stored<'a, Vec<Vec<u8>>> {
        Box::pin(async move { self.link.read(::redis::cmd("HVALS").arg(format!("{PREFIX}{name}"))).await })
    }

    /// `field` of the hash `name`.
    fn get<'a>(&'a self, name: &'a str, field: &'a str) -> Stored<'a, Option<Vec<u8>>> {
        Box::pin(async move { self.link.read(::redis::cmd("HGET").arg(format!("{PREFIX}{name}")).arg(field)).await })
    }

    /// Sets `field` of hash `name` to `value` unless it has one. `false`: it had.
    fn put_new<'a>(&'a self, name: &'a str, field: &'a str, value: &'a [u8]) -> Stored<'a, bool> {
        Box::pin(async move {
            self.link.write(::redis::cmd("HSETNX").arg(format!("{PREFIX}{name}")).arg(field).arg(value)).await
        })
    }

    /// Replaces `field` of hash `name` with `new` only if it still holds `old` (one Lua script, so
    /// two replicas changing one record never both win). `false`: it changed meanwhile.
    fn swap<'a>(&'a self, name: &'a str, field: &'a str, old: &'a [u8], new: &'a [u8]) -> Stored<'a, bool> {
        Box::pin(async move {
            let mut cmd = eval(SWAP, &[&format!("{PREFIX}{name}")]);
            cmd.arg(field).arg(old).arg(new);
            let swapped: i64 = self.link.write(&cmd).await?;
            Ok(swapped == 1)
        })
    }
}

/// The put and take scripts with the helper they call.
static PUT_SCRIPT: LazyLock<String> = LazyLock::new(|| format!("{FINISHED}{PUT}"));
static TAKE_SCRIPT: LazyLock<String> = LazyLock::new(|| format!("{FINISHED}{TAKE}"));

fn token_key(token: &str) -> String {
    format!("{PREFIX}token:{token}")
}

fn pending_key(who: &Principal) -> String {
    format!("{PREFIX}pending:{who}")
}

fn finished_key(who: &Principal) -> String {
    format!("{PREFIX}finished:{who}")
}

/// The URL without its password (`redis://user:secret@host` shows as `redis://user:***@host`).
pub(crate) fn redact(text: &str) -> String {
    let Some(scheme_end) = text.find("://").map(|i| i + 3) else {
        return text.to_string();
    };
    let rest = &text[scheme_end..];
    let authority_end = rest.find('/').unwrap_or(rest.len());
    match rest[..authority_end].rfind('@') {
        Some(at) => {
            let user = rest[..at].split(':').next().unwrap_or("");
            format!("{}{user}:***{}", &text[..scheme_end], &rest[at..])
        }
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_never_show() {
        assert_eq!(redact("redis://:hunter2@10.0.0.5:6379/2"), "redis://:***@10.0.0.5:6379/2");
        assert_eq!(redact("rediss://app:hunter2@cache/0"), "rediss://app:***@cache/0");
        assert_eq!(redact("redis://127.0.0.1:6379/0"), "redis://127.0.0.1:6379/0");
    }
}
