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

use std::time::Duration;

use ::redis::aio::{ConnectionManager, ConnectionManagerConfig};
use ::redis::{AsyncCommands, Script};

use super::token::mint_token;
use crate::bindings::proposal_store::Taken;
use crate::principal::Principal;

/// The store could not be reached or answered nonsense. The component call that needed it is
/// stopped (a trap): no token is minted, nothing is taken, nothing is sent. Only a shared store
/// fails this way; the memory store always answers.
#[derive(Debug, thiserror::Error)]
#[error("the proposal store ({backend}) is unavailable: {reason}")]
pub struct StoreUnavailable {
    pub backend: String,
    pub reason: String,
}

impl StoreUnavailable {
    /// The memory store refusing a note it has no room for.
    pub fn full(reason: String) -> Self {
        StoreUnavailable { backend: "memory".into(), reason }
    }

    /// Whether the store answered but takes no write (a node demoted to a replica).
    pub fn read_only(&self) -> bool {
        self.reason.contains(READ_ONLY)
    }
}

const PREFIX: &str = "equinix-mcp:";

/// How a refusal to write says the node is a replica now (see [`StoreUnavailable::read_only`]).
const READ_ONLY: &str = "a read-only replica now";

/// A hash field replaced only if it still holds the value read.
const SWAP: &str = r"
if redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[2] then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
return 1
";

type Bytes = Vec<u8>;
/// How long used/evicted tokens are remembered after they stop being pending.
pub const TOMBSTONE: Duration = Duration::from_secs(24 * 3600);
/// How many tokens that stopped being pending (used, evicted, expired) are remembered per
/// principal; beyond it the oldest are forgotten (they then read as unknown). With the host's
/// limits this bounds what one principal keeps in Redis: 20 pending records and 64 finished ones,
/// each at most [`super::MAX_RECORD_BYTES`].
pub const FINISHED_PER_PRINCIPAL: u32 = 64;
/// A store that does not answer within this is treated as down (propose and confirm fail closed).
const RESPONSE_TIMEOUT: Duration = Duration::from_secs(2);
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);

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

pub struct RedisStore {
    connection: ConnectionManager,
    shown: String,
    put: Script,
    take: Script,
    settle: Script,
    swap: Script,
}

impl RedisStore {
    /// Connects (lazily reconnecting later) and checks the server answers a PING.
    pub async fn connect(url: &str) -> anyhow::Result<Self> {
        let shown = redact(url);
        let url = url.replacen("valkey://", "redis://", 1).replacen("valkeys://", "rediss://", 1);
        let client = ::redis::Client::open(url.as_str())
            .map_err(|e| anyhow::anyhow!("--proposal-store {shown}: {}", redact(&e.to_string())))?;
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(CONNECT_TIMEOUT))
            .set_response_timeout(Some(RESPONSE_TIMEOUT))
            .set_number_of_retries(2)
            .set_max_delay(Duration::from_millis(500));
        let connection = ConnectionManager::new_lazy_with_config(client, config)
            .map_err(|e| anyhow::anyhow!("--proposal-store {shown}: {e}"))?;
        let store = RedisStore {
            connection,
            shown: shown.clone(),
            put: Script::new(&format!("{FINISHED}{PUT}")),
            take: Script::new(&format!("{FINISHED}{TAKE}")),
            settle: Script::new(SETTLE),
            swap: Script::new(SWAP),
        };
        let mut c = store.connection.clone();
        let pong: Result<String, _> = tokio::time::timeout(RESPONSE_TIMEOUT + CONNECT_TIMEOUT, c.ping())
            .await
            .map_err(|_| "no answer to PING".to_string())
            .and_then(|r| r.map_err(|e| e.to_string()));
        pong.map_err(|e| anyhow::anyhow!("cannot reach the proposal store {shown}: {e}"))?;
        Ok(store)
    }

    pub fn describe(&self) -> String {
        format!("{} (shared)", self.shown)
    }

    /// Whether the store answers and takes writes: a node a failover demoted to a replica answers
    /// PING but refuses every write, so its `ROLE` is asked too.
    pub async fn ping(&self) -> Result<(), StoreUnavailable> {
        let mut c = self.connection.clone();
        let role = ::redis::cmd("ROLE");
        match tokio::time::timeout(RESPONSE_TIMEOUT, role.query_async::<::redis::Value>(&mut c)).await {
            Ok(Ok(::redis::Value::Array(parts))) => match parts.first() {
                Some(::redis::Value::BulkString(role)) if role.as_slice() == b"master" => Ok(()),
                Some(::redis::Value::BulkString(role)) => Err(self.unavailable(format!(
                    "it is {READ_ONLY} (ROLE {}; a failover demoted it?), so it takes no write; point the servers at \
                     the primary",
                    String::from_utf8_lossy(role)
                ))),
                _ => Err(self.unavailable("ROLE answered with no role")),
            },
            Ok(Ok(_)) => Err(self.unavailable("ROLE answered with no role")),
            Ok(Err(e)) => Err(self.unavailable(e)),
            Err(_) => Err(self.unavailable("no answer to ROLE")),
        }
    }

    fn unavailable(&self, e: impl std::fmt::Display) -> StoreUnavailable {
        let text = e.to_string();
        // Redis's own words for a write to a replica say nothing of what to do
        let reason = if text.contains("READONLY") || text.contains("read only replica") {
            format!("{text} (the node is {READ_ONLY}: a failover demoted it?; point the servers at the primary)")
        } else {
            text
        };
        StoreUnavailable { backend: self.shown.clone(), reason: redact(&reason) }
    }

    pub async fn put(
        &self,
        who: &Principal,
        record: Vec<u8>,
        expires_at_ms: u64,
        capacity: u32,
        now_ms: u64,
    ) -> Result<(String, Vec<String>), StoreUnavailable> {
        let token = mint_token();
        let mut c = self.connection.clone();
        let evicted: Vec<String> = self
            .put
            .key(pending_key(who))
            .key(format!("{PREFIX}seq"))
            .key(token_key(&token))
            .key(finished_key(who))
            .arg(&token)
            .arg(who.as_str())
            .arg(record)
            .arg(expires_at_ms)
            .arg(now_ms)
            .arg(capacity.max(1))
            .arg(TOMBSTONE.as_millis() as u64)
            .arg(format!("{PREFIX}token:"))
            .arg(FINISHED_PER_PRINCIPAL)
            .invoke_async(&mut c)
            .await
            .map_err(|e| self.unavailable(e))?;
        Ok((token, evicted))
    }

    pub async fn peek(&self, who: &Principal, token: &str) -> Result<Taken, StoreUnavailable> {
        let mut c = self.connection.clone();
        let (owner, state, record, outcome): (Option<String>, Option<String>, Option<Bytes>, Option<Bytes>) =
            ::redis::cmd("HMGET")
                .arg(token_key(token))
                .arg(&["owner", "state", "record", "outcome"])
                .query_async(&mut c)
                .await
                .map_err(|e| self.unavailable(e))?;
        if owner.as_deref() != Some(who.as_str()) {
            return Ok(Taken::Unknown);
        }
        Ok(match (state.as_deref(), record) {
            (Some("pending"), Some(record)) => Taken::Found(record),
            (Some("used"), _) => Taken::Used(outcome),
            (Some("evicted"), _) => Taken::Evicted,
            _ => Taken::Unknown,
        })
    }

    pub async fn take(&self, who: &Principal, token: &str) -> Result<Taken, StoreUnavailable> {
        let mut c = self.connection.clone();
        let reply: Vec<Vec<u8>> = self
            .take
            .key(token_key(token))
            .key(pending_key(who))
            .key(finished_key(who))
            .key(format!("{PREFIX}seq"))
            .arg(who.as_str())
            .arg(token)
            .arg(TOMBSTONE.as_millis() as u64)
            .arg(format!("{PREFIX}token:"))
            .arg(FINISHED_PER_PRINCIPAL)
            .invoke_async(&mut c)
            .await
            .map_err(|e| self.unavailable(e))?;
        let mut parts = reply.into_iter();
        Ok(match (parts.next().as_deref(), parts.next()) {
            (Some(b"found"), Some(record)) => Taken::Found(record),
            (Some(b"used"), outcome) => Taken::Used(outcome),
            (Some(b"evicted"), _) => Taken::Evicted,
            (Some(b"unknown"), _) => Taken::Unknown,
            _ => return Err(self.unavailable("the take script answered something unexpected")),
        })
    }

    pub async fn claim_answer(&self, answer: &str) -> Result<bool, StoreUnavailable> {
        let mut c = self.connection.clone();
        let set: Option<String> = ::redis::cmd("SET")
            .arg(format!("{PREFIX}answer:{answer}"))
            .arg(1)
            .arg("NX")
            .arg("PX")
            .arg(super::ANSWER_MEMORY_MS)
            .query_async(&mut c)
            .await
            .map_err(|e| self.unavailable(e))?;
        Ok(set.is_some())
    }

    pub async fn note_put(
        &self,
        key: &str,
        value: &[u8],
        ttl_ms: u64,
        only_if_absent: bool,
    ) -> Result<bool, StoreUnavailable> {
        let mut c = self.connection.clone();
        let mut set = ::redis::cmd("SET");
        set.arg(format!("{PREFIX}note:{key}")).arg(value).arg("PX").arg(ttl_ms.max(1));
        if only_if_absent {
            set.arg("NX");
        }
        let done: Option<String> = set.query_async(&mut c).await.map_err(|e| self.unavailable(e))?;
        Ok(done.is_some())
    }

    pub async fn note_get(&self, key: &str) -> Result<Option<Vec<u8>>, StoreUnavailable> {
        let mut c = self.connection.clone();
        ::redis::cmd("GET")
            .arg(format!("{PREFIX}note:{key}"))
            .query_async(&mut c)
            .await
            .map_err(|e| self.unavailable(e))
    }

    /// Every value of the hash `name` (a few hundred small records at most: see `passkeys::store`).
    pub async fn hash_values(&self, name: &str) -> Result<Vec<Vec<u8>>, StoreUnavailable> {
        let mut c = self.connection.clone();
        ::redis::cmd("HVALS").arg(format!("{PREFIX}{name}")).query_async(&mut c).await.map_err(|e| self.unavailable(e))
    }

    /// `field` of the hash `name`.
    pub async fn hash_get(&self, name: &str, field: &str) -> Result<Option<Vec<u8>>, StoreUnavailable> {
        let mut c = self.connection.clone();
        ::redis::cmd("HGET")
            .arg(format!("{PREFIX}{name}"))
            .arg(field)
            .query_async(&mut c)
            .await
            .map_err(|e| self.unavailable(e))
    }

    /// Sets `field` of hash `name` to `value` unless it has one. `false`: it had.
    pub async fn hash_put_new(&self, name: &str, field: &str, value: &[u8]) -> Result<bool, StoreUnavailable> {
        let mut c = self.connection.clone();
        c.hset_nx(format!("{PREFIX}{name}"), field, value).await.map_err(|e| self.unavailable(e))
    }

    /// Replaces `field` of hash `name` with `new` only if it still holds `old` (one Lua script, so
    /// two replicas changing one record never both win). `false`: it changed meanwhile.
    pub async fn hash_swap(&self, name: &str, field: &str, old: &[u8], new: &[u8]) -> Result<bool, StoreUnavailable> {
        let mut c = self.connection.clone();
        let swapped: i64 = self
            .swap
            .key(format!("{PREFIX}{name}"))
            .arg(field)
            .arg(old)
            .arg(new)
            .invoke_async(&mut c)
            .await
            .map_err(|e| self.unavailable(e))?;
        Ok(swapped == 1)
    }

    pub async fn settle(&self, who: &Principal, token: &str, outcome: Vec<u8>) -> Result<(), StoreUnavailable> {
        let mut c = self.connection.clone();
        let _: i64 = self
            .settle
            .key(token_key(token))
            .arg(who.as_str())
            .arg(outcome)
            .invoke_async(&mut c)
            .await
            .map_err(|e| self.unavailable(e))?;
        Ok(())
    }
}

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
pub fn redact(text: &str) -> String {
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
