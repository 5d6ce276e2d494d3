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
use serde::de::{DeserializeOwned, Error as _};
use serde::{Deserialize, Deserializer};
use serde_json::{Value, json};

use crate::fabric_client::root_cause;
use crate::proposals::{Cause, StoreUnavailable};
use crate::secret::Secret;

/// How long one member may take to answer before the next is asked: above an election (1 s
/// with etcd's defaults) and a disk sync, below the time a caller waits for a confirm's store.
pub(crate) const MEMBER_TIMEOUT: Duration = Duration::from_secs(2);

/// How long a request keeps being asked again while the members answer at once that they have
/// no leader (an election: about a second with etcd's defaults, up to twice that when the votes
/// split): long enough that losing a leader costs a confirm a pause, not a failure.
pub(crate) const ELECTION_WAIT: Duration = Duration::from_secs(4);

/// The gRPC codes of etcd's errors this store tells apart.
mod code {
    /// No leader can commit the request now: "no leader", "leader changed", "request timed
    /// out", "server stopped" (and "not capable" before etcd 3.6).
    pub(crate) const UNAVAILABLE: i64 = 14;
    /// A precondition: "not leader" and ("not capable" since etcd 3.6) this member cannot serve
    /// it now, but also "authentication is not enabled", which waiting does not mend.
    pub(crate) const FAILED_PRECONDITION: i64 = 9;
    /// The sign-in token expired or is from before a restart of authentication.
    pub(crate) const UNAUTHENTICATED: i64 = 16;
    /// An error etcd passes on untranslated: raft's own, "proposal dropped" among them (a
    /// leader lost while the write was proposed), which is the one told apart.
    pub(crate) const UNKNOWN: i64 = 2;
}

/// An error answer of the gateway: `{"error", "code", "message"}`.
#[derive(Deserialize)]
struct Failure {
    #[serde(default)]
    code: i64,
    #[serde(default)]
    message: String,
    #[serde(default)]
    error: String,
}

impl Failure {
    fn said(&self) -> &str {
        if self.message.is_empty() { &self.error } else { &self.message }
    }

    /// Whether asking again soon, or another member, may help: no leader can commit it now.
    fn leaderless(&self) -> bool {
        // etcd puts other errors under two of these codes: within them, its words tell
        match self.code {
            code::UNAVAILABLE => true,
            code::FAILED_PRECONDITION => ["not leader", "not capable"].iter().any(|w| self.said().ends_with(w)),
            code::UNKNOWN => self.said().ends_with("proposal dropped"),
            _ => false,
        }
    }
}

/// A range read's answer. The gateway leaves out what is zero or empty (proto3's JSON), and
/// writes 64-bit numbers as decimal strings.
#[derive(Deserialize)]
struct Range {
    #[serde(default)]
    kvs: Vec<RangeKv>,
}

#[derive(Deserialize)]
struct RangeKv {
    #[serde(deserialize_with = "base64_bytes")]
    key: Vec<u8>,
    #[serde(default, deserialize_with = "base64_bytes")]
    value: Vec<u8>,
    #[serde(default, deserialize_with = "int64")]
    mod_revision: i64,
    #[serde(default, deserialize_with = "int64")]
    lease: i64,
}

#[derive(Deserialize)]
struct TxnAnswer {
    #[serde(default)]
    succeeded: bool,
    #[serde(default)]
    header: Header,
    #[serde(default)]
    responses: Vec<TxnResponse>,
}

#[derive(Deserialize, Default)]
struct Header {
    #[serde(default, deserialize_with = "int64")]
    revision: i64,
}

/// One operation's answer inside a transaction's (the others, a put's or a delete's, say nothing
/// the store reads).
#[derive(Deserialize)]
struct TxnResponse {
    response_range: Option<Range>,
    response_txn: Option<TxnAnswer>,
}

#[derive(Deserialize)]
struct LeaseGrant {
    #[serde(rename = "ID", default, deserialize_with = "int64")]
    id: i64,
}

#[derive(Deserialize)]
struct Authenticated {
    #[serde(default)]
    token: String,
}

#[derive(Deserialize)]
struct MemberStatus {
    /// A member id is a uint64: kept as its decimal text ("0" or absent: none).
    #[serde(default, deserialize_with = "uint64_text")]
    leader: String,
}

fn base64_bytes<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
    STANDARD.decode(String::deserialize(d)?).map_err(D::Error::custom)
}

/// A decimal string, as the gateway writes 64-bit numbers, or a JSON number.
#[derive(Deserialize)]
#[serde(untagged)]
enum Number {
    Text(String),
    Signed(i64),
    Unsigned(u64),
}

fn int64<'de, D: Deserializer<'de>>(d: D) -> Result<i64, D::Error> {
    match Number::deserialize(d)? {
        Number::Text(t) => t.parse().map_err(|_| D::Error::custom(format!("{t:?} is not a 64-bit number"))),
        Number::Signed(n) => Ok(n),
        Number::Unsigned(n) => i64::try_from(n).map_err(D::Error::custom),
    }
}

fn uint64_text<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    Ok(match Number::deserialize(d)? {
        Number::Text(t) => t,
        Number::Signed(n) => n.to_string(),
        Number::Unsigned(n) => n.to_string(),
    })
}

/// One key as a range read it.
#[derive(Debug, Clone)]
pub(crate) struct Kv {
    pub key: String,
    pub value: Vec<u8>,
    pub(crate) mod_revision: i64,
    pub(crate) lease: i64,
}

/// A condition of a transaction.
pub(crate) enum Compare<'a> {
    /// The key does not exist.
    Absent(&'a str),
    /// The key was last written at this revision (0: absent).
    ModifiedAt(&'a str, i64),
    /// The key holds this value.
    Holds(&'a str, &'a [u8]),
}

/// An operation of a transaction.
pub(crate) enum Op {
    Put {
        key: String,
        value: Vec<u8>,
        lease: i64,
    },
    Delete(String),
    /// Every key beginning with this prefix, oldest first (by creation), as the transaction sees
    /// them after its operations before this one.
    Range(String),
    /// `then`, only if `key` was last written at `mod_revision`: a transaction inside this one,
    /// whose outcome the answer tells apart from its siblings'.
    IfUnchanged {
        key: String,
        mod_revision: i64,
        then: Vec<Op>,
    },
}

/// What a transaction answered: whether its conditions held, the revision it was applied at (the
/// `mod_revision` of every key it wrote), what its ranges read and which of its guarded parts
/// were applied, each in the order of the branch that ran.
#[derive(Debug, Default)]
pub(crate) struct Applied {
    pub(crate) succeeded: bool,
    pub(crate) revision: i64,
    pub(crate) ranges: Vec<Vec<Kv>>,
    pub(crate) guarded: Vec<bool>,
}

/// A user of etcd's authentication: its password, and the token etcd gave for it (a simple
/// token expires after its TTL unused; a member that no longer knows it says so, and the server
/// authenticates again).
pub(crate) struct Login {
    pub user: String,
    pub password: Secret,
    token: tokio::sync::Mutex<Option<Secret>>,
}

impl Login {
    pub(crate) fn new(user: String, password: Secret) -> Self {
        Login { user, password, token: Default::default() }
    }
}

pub(crate) struct Gateway {
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

impl Gateway {
    /// `authorities`: when given, the only ones trusted for the members' certificates.
    pub(crate) fn new(
        endpoints: Vec<String>,
        shown: String,
        login: Option<Login>,
        authorities: Vec<reqwest::Certificate>,
    ) -> anyhow::Result<Self> {
        // reqwest's rustls needs its provider chosen once per process, as the Redis link does:
        // a store opened in a process that made no other TLS client before would panic here
        crate::install_crypto_provider();
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
        match self.decode::<Authenticated>("/v3/auth/authenticate", answer)?.token {
            t if t.is_empty() => Err(self.error(Cause::Down, "etcd's authenticate answered no token".into())),
            t => {
                *token = Some(Secret::new(&t));
                Ok(Some(Secret::new(t)))
            }
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
    async fn call<T: DeserializeOwned>(&self, path: &str, body: &Value) -> Result<T, StoreUnavailable> {
        let started = std::time::Instant::now();
        let mut token = self.token(false).await?;
        let mut renewed = false;
        loop {
            match self.round(path, body, token.as_ref()).await {
                // a token expired (its TTL unused) or from before a restart of auth: once more
                Err((e, Again::SignIn)) if self.login.is_some() && !renewed => {
                    tracing::debug!("etcd: {}; signing in again", e.reason);
                    renewed = true;
                    token = self.token(true).await?;
                }
                Err((e, Again::Soon)) if started.elapsed() < ELECTION_WAIT => {
                    tracing::debug!("etcd: {}; asking again", e.reason);
                    tokio::time::sleep(Duration::from_millis(100 + rand::random::<u64>() % 150)).await;
                }
                Err((e, _)) => return Err(e),
                Ok(v) => return self.decode(path, v),
            }
        }
    }

    /// `answer` as the `T` that `path` answers; an answer of another shape is the store's
    /// fault, named, never read as zero or empty.
    fn decode<T: DeserializeOwned>(&self, path: &str, answer: Value) -> Result<T, StoreUnavailable> {
        serde_json::from_value(answer).map_err(|e| self.error(Cause::Down, format!("{path} answered unreadably: {e}")))
    }

    /// One pass over the members. An error comes with what asking again may help: soon, when
    /// every member that was reached answered at once that it has no leader; after signing in
    /// again, when one refused the token.
    async fn round(
        &self,
        path: &str,
        body: &Value,
        token: Option<&Secret>,
    ) -> Result<Value, (StoreUnavailable, Again)> {
        use std::sync::atomic::Ordering::Relaxed;
        let mut said = Vec::new();
        let mut electing = false;
        let mut timed_out = false;
        let mut signed_out = false;
        let first = self.preferred.load(Relaxed);
        for n in 0..self.endpoints.len() {
            let at = (first + n) % self.endpoints.len();
            let endpoint = &self.endpoints[at];
            let answer = match self.post(endpoint, path, body, token).send().await {
                Ok(a) => a,
                Err(e) => {
                    // a member that does not answer in time may be cut off from the leader
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
            let Ok(failure) = Failure::deserialize(&value) else {
                // not the gateway's error shape: its own words, for the operator's log, clipped
                let words = equinix_broker_contract::clip(&value.to_string(), 200);
                said.push(format!("{endpoint}: HTTP {status}: {words}"));
                continue;
            };
            electing |= failure.leaderless();
            signed_out |= failure.code == code::UNAUTHENTICATED;
            said.push(format!("{endpoint}: HTTP {status}: {}", failure.said()));
        }
        // no leader now: a member said it has none, or one was cut off past its time-out
        let cause = if electing || timed_out { Cause::NoQuorum } else { Cause::Down };
        let again = match () {
            () if signed_out => Again::SignIn,
            // a member said an election is under way: asked again within ELECTION_WAIT, even when
            // another took its time-out meanwhile (a follower holds a request while it has no
            // leader: on a busy machine past MEMBER_TIMEOUT, and a lost leader was then a failure)
            () if electing => Again::Soon,
            () => Again::No,
        };
        Err((self.error(cause, said.join("; ")), again))
    }

    /// Whether some member knows a leader (`/v3/maintenance/status`, answered by the member
    /// itself without the quorum, so a cluster without one is told at once rather than after a
    /// read's time-out).
    pub(crate) async fn has_leader(&self) -> Result<bool, StoreUnavailable> {
        let mut said = Vec::new();
        let token = self.token(false).await?;
        for endpoint in &self.endpoints {
            match self.post(endpoint, "/v3/maintenance/status", &json!({}), token.as_ref()).send().await {
                Ok(answer) if answer.status().is_success() => match answer.json::<MemberStatus>().await {
                    Ok(status) if !status.leader.is_empty() && status.leader != "0" => return Ok(true),
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
    pub(crate) async fn get(&self, key: &str) -> Result<Option<Kv>, StoreUnavailable> {
        let answer: Range = self.call("/v3/kv/range", &json!({"key": b64(key.as_bytes())})).await?;
        Ok(kvs(answer).into_iter().next())
    }

    /// Every key beginning with `prefix`, oldest first (by creation).
    pub(crate) async fn prefixed(&self, prefix: &str) -> Result<Vec<Kv>, StoreUnavailable> {
        let body = json!({
            "key": b64(prefix.as_bytes()),
            "range_end": b64(&prefix_end(prefix)),
            "sort_order": "ASCEND",
            "sort_target": "CREATE",
        });
        Ok(kvs(self.call("/v3/kv/range", &body).await?))
    }

    /// A lease of `ttl` (rounded up to whole seconds, at least one): keys put with it are deleted
    /// when it ends.
    pub(crate) async fn lease(&self, ttl: Duration) -> Result<i64, StoreUnavailable> {
        let secs = ttl.as_millis().div_ceil(1000).max(1) as u64;
        let answer: LeaseGrant = self.call("/v3/lease/grant", &json!({"TTL": secs.to_string()})).await?;
        match answer.id {
            0 => Err(self.error(Cause::Down, "the lease grant answered no lease".into())),
            id => Ok(id),
        }
    }

    /// Applies `ops` if every one of `conditions` holds, atomically (one etcd transaction):
    /// whether they held.
    pub(crate) async fn txn(&self, conditions: &[Compare<'_>], ops: &[Op]) -> Result<bool, StoreUnavailable> {
        Ok(self.transaction(conditions, ops, &[]).await?.succeeded)
    }

    /// Applies `success` if every one of `conditions` holds and `failure` if not, atomically
    /// (one etcd transaction, one commit): what it answered.
    pub(crate) async fn transaction(
        &self,
        conditions: &[Compare<'_>],
        success: &[Op],
        failure: &[Op],
    ) -> Result<Applied, StoreUnavailable> {
        let compare: Vec<Value> = conditions
            .iter()
            .map(|c| match c {
                Compare::Absent(key) => {
                    json!({"key": b64(key.as_bytes()), "target": "CREATE", "create_revision": "0", "result": "EQUAL"})
                }
                Compare::ModifiedAt(key, rev) => modified_at(key, *rev),
                Compare::Holds(key, value) => {
                    json!({"key": b64(key.as_bytes()), "target": "VALUE", "value": b64(value), "result": "EQUAL"})
                }
            })
            .collect();
        let body = json!({"compare": compare, "success": ops_json(success), "failure": ops_json(failure)});
        let answer: TxnAnswer = self.call("/v3/kv/txn", &body).await?;
        let mut applied =
            Applied { succeeded: answer.succeeded, revision: answer.header.revision, ..Applied::default() };
        for response in answer.responses {
            if let Some(range) = response.response_range {
                applied.ranges.push(kvs(range));
            } else if let Some(inner) = response.response_txn {
                applied.guarded.push(inner.succeeded);
            }
        }
        Ok(applied)
    }
}

fn modified_at(key: &str, rev: i64) -> Value {
    json!({"key": b64(key.as_bytes()), "target": "MOD", "mod_revision": rev.to_string(), "result": "EQUAL"})
}

fn ops_json(ops: &[Op]) -> Vec<Value> {
    ops.iter()
        .map(|op| match op {
            Op::Put { key, value, lease } => json!({"request_put": {
                "key": b64(key.as_bytes()), "value": b64(value), "lease": lease.to_string()
            }}),
            Op::Delete(key) => json!({"request_delete_range": {"key": b64(key.as_bytes())}}),
            Op::Range(prefix) => json!({"request_range": {
                "key": b64(prefix.as_bytes()),
                "range_end": b64(&prefix_end(prefix)),
                "sort_order": "ASCEND",
                "sort_target": "CREATE",
            }}),
            Op::IfUnchanged { key, mod_revision, then } => json!({"request_txn": {
                "compare": [modified_at(key, *mod_revision)], "success": ops_json(then),
            }}),
        })
        .collect()
}

fn kvs(answer: Range) -> Vec<Kv> {
    let kv = |kv: RangeKv| Kv {
        key: String::from_utf8_lossy(&kv.key).into_owned(),
        value: kv.value,
        mod_revision: kv.mod_revision,
        lease: kv.lease,
    };
    answer.kvs.into_iter().map(kv).collect()
}

/// What may come of asking a failed request again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Again {
    No,
    /// Soon: an election is under way.
    Soon,
    /// After signing in again.
    SignIn,
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
        member_reading(leaderless, r#"{"kvs":[{"key":"aw==","value":"dg==","mod_revision":"7"}]}"#).await
    }

    /// [`member`], with `read` as its answer once it has a leader.
    async fn member_reading(leaderless: usize, read: &'static str) -> (String, Arc<AtomicUsize>) {
        member_answering(move |n| match n < leaderless {
            true => ("503 Service Unavailable", r#"{"error":"etcdserver: leader changed","code":14}"#),
            false => ("200 OK", read),
        })
        .await
    }

    /// A member on loopback whose `n`th request gets `answer(n)`: a status line and a body.
    async fn member_answering(
        answer: impl Fn(usize) -> (&'static str, &'static str) + Send + Sync + Copy + 'static,
    ) -> (String, Arc<AtomicUsize>) {
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
                    let (status, body) = answer(n);
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

    /// One member says an election is under way while another does not answer within its
    /// time-out: the election is still waited for (it was a failure at once, and a leader lost
    /// on a busy machine failed a confirm).
    #[tokio::test]
    async fn an_election_is_waited_for_while_another_member_does_not_answer() {
        crate::install_crypto_provider();
        let (electing, asked) = member(1).await;
        let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let silent_url = format!("http://{}", silent.local_addr().unwrap());
        tokio::spawn(async move {
            let mut held = Vec::new();
            while let Ok((socket, _)) = silent.accept().await {
                held.push(socket);
            }
        });
        let gateway = Gateway::new(vec![electing, silent_url], "etcd://test".into(), None, Vec::new()).unwrap();
        let started = std::time::Instant::now();
        let kv = gateway.get("k").await.unwrap().expect("the key, once a leader is elected");
        assert_eq!((kv.value, asked.load(Ordering::SeqCst)), (b"v".to_vec(), 2));
        assert!(started.elapsed() >= MEMBER_TIMEOUT, "the silent member was asked in between");
    }

    /// etcd's errors are told apart by their gRPC code, not their words.
    #[test]
    fn errors_are_classified_by_code() {
        let failure = |v: Value| serde_json::from_value::<Failure>(v).unwrap();
        for (answer, leaderless) in [
            (json!({"error": "etcdserver: no leader", "code": 14, "message": "etcdserver: no leader"}), true),
            (json!({"error": "etcdserver: request timed out", "code": 14}), true),
            (json!({"message": "etcdserver: not capable", "code": 9}), true),
            (json!({"message": "etcdserver: not leader", "code": 9}), true),
            (json!({"message": "etcdserver: authentication is not enabled", "code": 9}), false),
            (json!({"message": "etcdserver: proposal dropped", "code": 2}), true),
            (json!({"message": "some other raft error", "code": 2}), false),
            (json!({"message": "etcdserver: invalid auth token", "code": 16}), false),
            (json!({"message": "etcdserver: no leader, in words only"}), false),
            (json!({"message": "etcdserver: request is too large", "code": 3}), false),
        ] {
            assert_eq!(failure(answer.clone()).leaderless(), leaderless, "{answer}");
        }
    }

    /// A malformed answer is an error that names it, never a zero revision or an empty list.
    #[test]
    fn answers_are_read_by_their_shape() {
        let range = |v: Value| serde_json::from_value::<Range>(v);
        let kvs = kvs(range(json!({"kvs": [{"key": "aw==", "mod_revision": "7", "lease": "12"}]})).unwrap());
        assert_eq!((kvs[0].key.as_str(), kvs[0].value.len(), kvs[0].mod_revision, kvs[0].lease), ("k", 0, 7, 12));
        assert!(range(json!({})).unwrap().kvs.is_empty(), "no keys: the gateway leaves `kvs` out");
        let e = range(json!({"kvs": [{"key": "aw==", "mod_revision": "seven"}]})).err().unwrap().to_string();
        assert!(e.contains("\"seven\" is not a 64-bit number"), "{e}");
        assert!(range(json!({"kvs": [{"key": "not base64!"}]})).is_err());
        assert!(serde_json::from_value::<LeaseGrant>(json!({"ID": {}})).is_err());
    }

    /// A member on loopback whose error answer is not in the gateway's shape (its code no
    /// number): the operator's log gets its own words, clipped, and no class is made up for it.
    #[tokio::test]
    async fn an_error_answer_in_no_known_shape_is_told_in_its_own_words_clipped() {
        const ODD: &str = concat!(
            r#"{"code":"fourteen","message":"#,
            r#""odd words "#,
            // spaces past the 200 characters kept, then the end that the clip leaves out
            "                                                                                                                                                                                                  ",
            r#"tail"}"#
        );
        let (url, _) = member_answering(|_| ("500 Internal Server Error", ODD)).await;
        let gateway = Gateway::new(vec![url], "etcd://test".into(), None, Vec::new()).unwrap();
        let e = gateway.get("k").await.unwrap_err();
        assert_eq!(e.cause, Cause::Down, "not read as an election: {e}");
        assert!(e.reason.contains("HTTP 500") && e.reason.contains("\"code\":\"fourteen\""), "{e}");
        assert!(!e.reason.contains("tail"), "clipped: {e}");
    }

    /// A member on loopback that answers a read with a revision that is no number (a hostile or
    /// broken member): the read fails and says what was wrong; no key with revision 0 is made up,
    /// which a compare-and-swap would take for "absent".
    #[tokio::test]
    async fn a_member_answering_a_malformed_revision_is_refused_not_read_as_zero() {
        let (url, _) = member_reading(0, r#"{"kvs":[{"key":"aw==","value":"dg==","mod_revision":"seven"}]}"#).await;
        let gateway = Gateway::new(vec![url], "etcd://test".into(), None, Vec::new()).unwrap();
        let e = gateway.get("k").await.unwrap_err();
        assert_eq!(e.cause, Cause::Down, "{e}");
        assert!(e.reason.contains("/v3/kv/range answered unreadably") && e.reason.contains("\"seven\""), "{e}");
    }

    #[test]
    fn a_prefix_range_ends_after_every_key_that_begins_with_it() {
        assert_eq!(prefix_end("equinix-mcp/p/"), b"equinix-mcp/p0");
        assert_eq!(prefix_end("a\u{7f}"), b"a\x80");
    }
}
