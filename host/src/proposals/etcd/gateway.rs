//! etcd's v3 API over its JSON gateway (the client port's `/v3/...`), with the `reqwest` client
//! already in the tree: no gRPC stack, and the same TLS as the Fabric client. Keys and values are
//! base64 in JSON, revisions and lease ids decimal strings.
//!
//! Every request goes to the first member that answers; a member that cannot reach the leader
//! (cut off in a minority, or during an election) answers with an error or not at all within
//! [`MEMBER_TIMEOUT`], and the next member is asked. Reads are etcd's default, linearizable: a
//! member answers them only with the quorum, so no replica reads a state a majority has left.

use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Value, json};

use crate::fabric_client::root_cause;
use crate::proposals::{Cause, StoreUnavailable};
use crate::secret::Secret;

/// How long one member may take to answer before the next is asked: above an election (1 s
/// with etcd's defaults) and a disk sync, below the time a caller waits for a confirm's store.
pub const MEMBER_TIMEOUT: Duration = Duration::from_secs(2);

/// How long a request keeps being asked again while the members answer at once that they have
/// no leader (an election: about a second with etcd's defaults, up to twice that when the votes
/// split): long enough that losing a leader costs a confirm a pause, not a failure.
pub const ELECTION_WAIT: Duration = Duration::from_secs(4);

/// etcd's words for "no leader to commit this now" (an election, or a member in a minority).
const NO_LEADER_WORDS: [&str; 5] = ["no leader", "leader changed", "timed out", "not capable", "proposal dropped"];

/// One key as a range read it.
#[derive(Debug, Clone)]
pub struct Kv {
    pub key: String,
    pub value: Vec<u8>,
    pub mod_revision: i64,
    pub lease: i64,
}

/// A condition of a transaction.
pub enum Compare<'a> {
    /// The key does not exist.
    Absent(&'a str),
    /// The key was last written at this revision (0: absent).
    ModifiedAt(&'a str, i64),
    /// The key holds this value.
    Holds(&'a str, &'a [u8]),
}

/// A write of a transaction.
pub enum Op {
    Put { key: String, value: Vec<u8>, lease: i64 },
    Delete(String),
}

/// A user of etcd's authentication: its password, and the token etcd gave for it (a simple
/// token expires after its TTL unused; a member that no longer knows it says so, and the server
/// authenticates again).
pub struct Login {
    pub user: String,
    pub password: Secret,
    token: tokio::sync::Mutex<Option<Secret>>,
}

impl Login {
    pub fn new(user: String, password: Secret) -> Self {
        Login { user, password, token: Default::default() }
    }
}

pub struct Gateway {
    http: reqwest::Client,
    endpoints: Vec<String>,
    login: Option<Login>,
    /// The member that answered last, asked first: a member cut off costs one time-out, not one
    /// per request.
    preferred: std::sync::atomic::AtomicUsize,
    /// How the store is shown (the endpoints, no credentials).
    pub shown: String,
}

fn b64(bytes: &[u8]) -> String {
    STANDARD.encode(bytes)
}

/// The end of the range of keys that begin with `prefix` (etcd's `range_end`).
fn prefix_end(prefix: &str) -> Vec<u8> {
    let mut end = prefix.as_bytes().to_vec();
    while let Some(last) = end.pop() {
        if last < 0xff {
            end.push(last + 1);
            return end;
        }
    }
    vec![0]
}

fn number(v: &Value) -> i64 {
    match v {
        Value::String(s) => s.parse().unwrap_or(0),
        Value::Number(n) => n.as_i64().unwrap_or(0),
        _ => 0,
    }
}

impl Gateway {
    /// `authorities`: when given, the only ones trusted for the members' certificates.
    pub fn new(
        endpoints: Vec<String>,
        shown: String,
        login: Option<Login>,
        authorities: Vec<reqwest::Certificate>,
    ) -> anyhow::Result<Self> {
        let mut http = reqwest::Client::builder().timeout(MEMBER_TIMEOUT);
        if !authorities.is_empty() {
            http = http.tls_certs_only(authorities);
        }
        let http = http.build()?;
        Ok(Gateway { http, endpoints, login, preferred: Default::default(), shown })
    }

    /// The token to send, authenticating first when there is none (or `again`: the one sent was
    /// refused). The password goes only to `/v3/auth/authenticate`, and neither it nor the token
    /// is ever in an error.
    async fn token(&self, again: bool) -> Result<Option<Secret>, StoreUnavailable> {
        let Some(login) = &self.login else { return Ok(None) };
        let mut token = login.token.lock().await;
        if again {
            *token = None;
        }
        if let Some(t) = token.as_ref() {
            return Ok(Some(Secret::new(t.expose())));
        }
        let body = json!({"name": login.user, "password": login.password.expose()});
        let answer = self.round("/v3/auth/authenticate", &body, None).await.map_err(|(e, _)| e)?;
        match answer["token"].as_str().filter(|t| !t.is_empty()) {
            Some(t) => {
                *token = Some(Secret::new(t));
                Ok(Some(Secret::new(t)))
            }
            None => Err(self.error(Cause::Down, "etcd's authenticate answered no token".into())),
        }
    }

    /// A POST of `body` to `path` on `endpoint`, with the sign-in token when there is one.
    fn post(&self, endpoint: &str, path: &str, body: &Value, token: Option<&Secret>) -> reqwest::RequestBuilder {
        let request = self.http.post(format!("{endpoint}{path}")).json(body);
        match token {
            Some(token) => request.header(reqwest::header::AUTHORIZATION, token.expose()),
            None => request,
        }
    }

    fn error(&self, cause: Cause, reason: String) -> StoreUnavailable {
        StoreUnavailable { backend: self.shown.clone(), reason, cause }
    }

    /// POSTs `body` to `path` on the first member that answers it; while every member answers
    /// at once that it has no leader, asks again for up to [`ELECTION_WAIT`].
    ///
    /// A write asked again may have been applied the first time (etcd's "leader changed" does
    /// not say): every transaction of the store compares what it read, so a second application
    /// fails its comparison instead of writing twice, and the caller reads what happened.
    async fn call(&self, path: &str, body: &Value) -> Result<Value, StoreUnavailable> {
        let started = std::time::Instant::now();
        let mut token = self.token(false).await?;
        let mut renewed = false;
        loop {
            match self.round(path, body, token.as_ref()).await {
                // a token expired (its TTL unused) or from before a restart of auth: once more
                Err((e, _)) if self.login.is_some() && !renewed && e.reason.contains("invalid auth token") => {
                    renewed = true;
                    token = self.token(true).await?;
                }
                Err((e, true)) if started.elapsed() < ELECTION_WAIT => {
                    tracing::debug!("etcd: {}; asking again", e.reason);
                    tokio::time::sleep(Duration::from_millis(100 + rand::random::<u64>() % 150)).await;
                }
                Err((e, _)) => return Err(e),
                Ok(v) => return Ok(v),
            }
        }
    }

    /// One pass over the members. An error comes with whether asking again soon may help: every
    /// member that was reached answered at once that it has no leader.
    async fn round(&self, path: &str, body: &Value, token: Option<&Secret>) -> Result<Value, (StoreUnavailable, bool)> {
        use std::sync::atomic::Ordering::Relaxed;
        let mut said = Vec::new();
        let mut no_quorum = false;
        let mut electing = false;
        let mut timed_out = false;
        let first = self.preferred.load(Relaxed);
        for n in 0..self.endpoints.len() {
            let at = (first + n) % self.endpoints.len();
            let endpoint = &self.endpoints[at];
            let answer = match self.post(endpoint, path, body, token).send().await {
                Ok(a) => a,
                Err(e) => {
                    // a member that does not answer in time may be cut off from the leader
                    no_quorum |= e.is_timeout();
                    timed_out |= e.is_timeout();
                    // the innermost cause ("invalid peer certificate: UnknownIssuer", a refused
                    // connection), not reqwest's "error sending request", for the operator's log
                    said.push(format!("{endpoint}: {}", root_cause(&e.without_url())));
                    continue;
                }
            };
            let status = answer.status();
            let value: Value = match answer.json().await {
                Ok(v) => v,
                Err(e) => {
                    said.push(format!("{endpoint}: HTTP {status}, unreadable answer: {e}"));
                    continue;
                }
            };
            if status.is_success() {
                self.preferred.store(at, Relaxed);
                return Ok(value);
            }
            let message = value["message"].as_str().or(value["error"].as_str()).unwrap_or("").to_string();
            let leaderless = NO_LEADER_WORDS.iter().any(|w| message.contains(w));
            no_quorum |= leaderless;
            electing |= leaderless;
            said.push(format!("{endpoint}: HTTP {status}: {message}"));
        }
        let cause = if no_quorum { Cause::NoQuorum } else { Cause::Down };
        // members that took their time-out each already cost MEMBER_TIMEOUT: no second pass
        Err((self.error(cause, said.join("; ")), electing && !timed_out))
    }

    /// Whether some member knows a leader (`/v3/maintenance/status`, answered by the member
    /// itself without the quorum, so a cluster without one is told at once rather than after a
    /// read's time-out).
    pub async fn has_leader(&self) -> Result<bool, StoreUnavailable> {
        let mut said = Vec::new();
        let token = self.token(false).await?;
        for endpoint in &self.endpoints {
            match self.post(endpoint, "/v3/maintenance/status", &json!({}), token.as_ref()).send().await {
                Ok(answer) if answer.status().is_success() => match answer.json::<Value>().await {
                    // a member id is a uint64: read as text, not as a signed number
                    Ok(status) if status["leader"].as_str().is_some_and(|l| !l.is_empty() && l != "0") => {
                        return Ok(true);
                    }
                    Ok(_) => said.push(format!("{endpoint}: no leader")),
                    Err(e) => said.push(format!("{endpoint}: unreadable status: {e}")),
                },
                Ok(answer) => said.push(format!("{endpoint}: HTTP {}", answer.status())),
                Err(e) => said.push(format!("{endpoint}: {}", root_cause(&e.without_url()))),
            }
        }
        match said.iter().any(|s| s.ends_with("no leader")) {
            true => Ok(false),
            false => Err(self.error(Cause::Down, said.join("; "))),
        }
    }

    /// The key `key`, if it exists.
    pub async fn get(&self, key: &str) -> Result<Option<Kv>, StoreUnavailable> {
        let answer = self.call("/v3/kv/range", &json!({"key": b64(key.as_bytes())})).await?;
        Ok(kvs(&answer).into_iter().next())
    }

    /// Every key beginning with `prefix`, oldest first (by creation).
    pub async fn prefixed(&self, prefix: &str) -> Result<Vec<Kv>, StoreUnavailable> {
        let body = json!({
            "key": b64(prefix.as_bytes()),
            "range_end": b64(&prefix_end(prefix)),
            "sort_order": "ASCEND",
            "sort_target": "CREATE",
        });
        Ok(kvs(&self.call("/v3/kv/range", &body).await?))
    }

    /// A lease of `ttl` (rounded up to whole seconds, at least one): keys put with it are deleted
    /// when it ends.
    pub async fn lease(&self, ttl: Duration) -> Result<i64, StoreUnavailable> {
        let secs = ttl.as_millis().div_ceil(1000).max(1) as u64;
        let answer = self.call("/v3/lease/grant", &json!({"TTL": secs.to_string()})).await?;
        match number(&answer["ID"]) {
            0 => Err(self.error(Cause::Down, format!("the lease grant answered no lease: {answer}"))),
            id => Ok(id),
        }
    }

    /// Applies `ops` if every one of `conditions` holds, atomically (one etcd transaction):
    /// whether they held.
    pub async fn txn(&self, conditions: &[Compare<'_>], ops: &[Op]) -> Result<bool, StoreUnavailable> {
        let compare: Vec<Value> = conditions
            .iter()
            .map(|c| match c {
                Compare::Absent(key) => {
                    json!({"key": b64(key.as_bytes()), "target": "CREATE", "create_revision": "0", "result": "EQUAL"})
                }
                Compare::ModifiedAt(key, rev) => {
                    json!({"key": b64(key.as_bytes()), "target": "MOD", "mod_revision": rev.to_string(), "result": "EQUAL"})
                }
                Compare::Holds(key, value) => {
                    json!({"key": b64(key.as_bytes()), "target": "VALUE", "value": b64(value), "result": "EQUAL"})
                }
            })
            .collect();
        let success: Vec<Value> = ops
            .iter()
            .map(|op| match op {
                Op::Put { key, value, lease } => json!({"request_put": {
                    "key": b64(key.as_bytes()), "value": b64(value), "lease": lease.to_string()
                }}),
                Op::Delete(key) => json!({"request_delete_range": {"key": b64(key.as_bytes())}}),
            })
            .collect();
        let answer = self.call("/v3/kv/txn", &json!({"compare": compare, "success": success})).await?;
        Ok(answer["succeeded"].as_bool().unwrap_or(false))
    }
}

fn kvs(answer: &Value) -> Vec<Kv> {
    let decode = |v: &Value| v.as_str().and_then(|s| STANDARD.decode(s).ok()).unwrap_or_default();
    answer["kvs"]
        .as_array()
        .map(|kvs| {
            kvs.iter()
                .map(|kv| Kv {
                    key: String::from_utf8_lossy(&decode(&kv["key"])).into_owned(),
                    value: decode(&kv["value"]),
                    mod_revision: number(&kv["mod_revision"]),
                    lease: number(&kv["lease"]),
                })
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// A member on loopback that answers "leader changed" to its first `leaderless` requests, then
    /// a read of one key; counts the requests.
    async fn member(leaderless: usize) -> (String, Arc<AtomicUsize>) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let asked = Arc::new(AtomicUsize::new(0));
        let counted = asked.clone();
        tokio::spawn(async move {
            loop {
                let Ok((mut socket, _)) = listener.accept().await else { return };
                let n = counted.fetch_add(1, Ordering::SeqCst);
                tokio::spawn(async move {
                    let mut seen = Vec::new();
                    let mut buf = [0u8; 4096];
                    // the request's head and its (small) body
                    while !seen.windows(4).any(|w| w == b"\r\n\r\n") || !seen.ends_with(b"}") {
                        match socket.read(&mut buf).await {
                            Ok(0) | Err(_) => return,
                            Ok(k) => seen.extend_from_slice(&buf[..k]),
                        }
                    }
                    let (status, body) = match n < leaderless {
                        true => ("503 Service Unavailable", r#"{"error":"etcdserver: leader changed","code":14}"#),
                        false => ("200 OK", r#"{"kvs":[{"key":"aw==","value":"dg==","mod_revision":"7"}]}"#),
                    };
                    let answer = format!(
                        "HTTP/1.1 {status}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                        body.len()
                    );
                    let _ = socket.write_all(answer.as_bytes()).await;
                });
            }
        });
        (url, asked)
    }

    #[tokio::test]
    async fn an_election_is_waited_for_and_a_cluster_that_stays_leaderless_is_no_quorum() {
        crate::install_crypto_provider();
        let (url, asked) = member(3).await;
        let gateway = Gateway::new(vec![url], "etcd://test".into(), None, Vec::new()).unwrap();
        let kv = gateway.get("k").await.unwrap().expect("the key, once a leader is elected");
        assert_eq!((kv.value, kv.mod_revision, asked.load(Ordering::SeqCst)), (b"v".to_vec(), 7, 4));

        let (url, asked) = member(usize::MAX).await;
        let gateway = Gateway::new(vec![url], "etcd://test".into(), None, Vec::new()).unwrap();
        let started = std::time::Instant::now();
        let e = gateway.get("k").await.unwrap_err();
        assert_eq!(e.cause, Cause::NoQuorum, "{e}");
        assert!(e.reason.contains("leader changed"), "{e}");
        assert!(started.elapsed() >= ELECTION_WAIT && asked.load(Ordering::SeqCst) > 3);
    }

    #[test]
    fn a_prefix_range_ends_after_every_key_that_begins_with_it() {
        assert_eq!(prefix_end("equinix-mcp/p/"), b"equinix-mcp/p0");
        assert_eq!(prefix_end("a\u{7f}"), b"a\x80");
    }
}
