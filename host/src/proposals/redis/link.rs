//! The connection to the store's primary, and what makes a write count.
//!
//! A single node (`redis://`) is reached through the redis crate's `ConnectionManager`, which
//! reconnects to the same address. A Sentinel store asks the Sentinels which node is the primary
//! and keeps connections to it. It drops them on any sign that the node is gone or demoted (an
//! I/O error, a timeout, `READONLY`, or a Sentinel announcing `+switch-master`), so the next call
//! asks again and follows a failover without a restart. While no primary answers, calls fail at
//! once with the last reason rather than each waiting out a connect timeout ([`RETRY_GAP`]).
//!
//! Redis replication is asynchronous: a write the primary acknowledged can be undone by a
//! failover that promotes a replica it had not reached. So with [`Acks`] set, every write is sent
//! in one pipeline with `WAIT replicas timeout` (one pipeline, so the `WAIT` runs on the
//! connection that made the write; on a new connection it would wait for nothing), and a write
//! fewer replicas acknowledged fails closed: the caller treats it as not done. See
//! `docs/security.md`, "A store failover". Redis runs nothing else from a connection while its
//! `WAIT` blocks, so with acknowledgements on, calls are spread over [`CONNECTIONS`] connections
//! and one call's wait does not hold up the others'.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use ::redis::aio::{ConnectionLike, ConnectionManager, ConnectionManagerConfig, MultiplexedConnection};
use ::redis::sentinel::{SentinelClient, SentinelClientBuilder, SentinelServerType};
use ::redis::{AsyncConnectionConfig, Cmd, ConnectionAddr, FromRedisValue, RedisError, RedisFuture, Value};

use super::spec::{Acks, SentinelTarget, Shared, Target};
use super::{Cause, StoreUnavailable};

/// A store that does not answer within this is treated as down (propose and confirm fail closed).
pub(super) const RESPONSE_TIMEOUT: Duration = Duration::from_secs(2);
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);
/// While no primary answers, how often a call may ask the Sentinels again; calls between fail
/// at once with the last reason.
const RETRY_GAP: Duration = Duration::from_millis(200);
/// Connections to the primary when writes wait for acknowledgements (one otherwise).
const CONNECTIONS: usize = 4;
/// How long a call waits for a lookup of the primary before it fails (the lookup goes on).
const LOOKUP_WAIT: Duration = Duration::from_millis(500);

pub(super) struct Link {
    route: Route,
    acks: Acks,
    pub(super) shown: String,
    /// Which connection the next call takes.
    next: AtomicUsize,
    /// The Sentinel store's `+switch-master` listener, stopped with the store.
    watcher: Option<tokio::task::AbortHandle>,
}

impl Drop for Link {
    fn drop(&mut self) {
        if let Some(watcher) = &self.watcher {
            watcher.abort();
        }
    }
}

enum Route {
    Node(Vec<ConnectionManager>),
    Sentinel(Arc<Followed>),
}

/// The primary a Sentinel store follows.
struct Followed {
    sentinels: tokio::sync::Mutex<SentinelClient>,
    current: Mutex<Current>,
    config: AsyncConnectionConfig,
    pool: usize,
}

#[derive(Default)]
struct Current {
    /// The connections, and the epoch they were made in.
    connections: Option<(Vec<MultiplexedConnection>, u64)>,
    /// Moves on whenever connections are made or dropped, so a lookup begun before the primary
    /// moved does not keep what it found.
    epoch: u64,
    /// When asking for a primary last failed, and why.
    failed: Option<(Instant, String)>,
}

/// One connection for one operation (and its `WAIT`).
#[derive(Clone)]
pub(super) enum Conn {
    Node(ConnectionManager),
    Primary(MultiplexedConnection, u64),
}

impl Link {
    pub(super) async fn open(shared: Shared) -> anyhow::Result<Link> {
        let Shared { target, ca, shown, acks } = shared;
        let certificates = || ::redis::TlsCertificates { client_tls: None, root_cert: ca.clone() };
        // `rediss://` uses rustls, which needs its provider chosen once per process
        crate::install_crypto_provider();
        // a write's WAIT blocks its connection up to the ack timeout: answers may take that long
        let response = RESPONSE_TIMEOUT + acks.timeout;
        let pool = if acks.replicas > 0 { CONNECTIONS } else { 1 };
        let mut watcher = None;
        let route = match target {
            Target::Node { url } => {
                let client = match ca {
                    Some(_) => ::redis::Client::build_with_tls(url.expose(), certificates()),
                    None => ::redis::Client::open(url.expose()),
                }
                .map_err(|e| anyhow::anyhow!("--proposal-store {shown}: {}", super::redact(&e.to_string())))?;
                let config = ConnectionManagerConfig::new()
                    .set_connection_timeout(Some(CONNECT_TIMEOUT))
                    .set_response_timeout(Some(response))
                    .set_number_of_retries(2)
                    .set_max_delay(Duration::from_millis(500));
                let managers = (0..pool)
                    .map(|_| ConnectionManager::new_lazy_with_config(client.clone(), config.clone()))
                    .collect::<Result<_, _>>()
                    .map_err(|e| anyhow::anyhow!("--proposal-store {shown}: {e}"))?;
                Route::Node(managers)
            }
            Target::Sentinel(target) => {
                let certificates = ca.as_ref().map(|_| certificates());
                let sentinels = || {
                    sentinel_client(&target, certificates.clone())
                        .map_err(|e| anyhow::anyhow!("--proposal-store {shown}: {e}"))
                };
                let followed = Arc::new(Followed {
                    sentinels: tokio::sync::Mutex::new(sentinels()?),
                    current: Mutex::default(),
                    config: AsyncConnectionConfig::new()
                        .set_connection_timeout(Some(CONNECT_TIMEOUT))
                        .set_response_timeout(Some(response)),
                    pool,
                });
                // its own Sentinel client, so listening never holds up a lookup
                let listen = watch_switches(Arc::downgrade(&followed), sentinels()?, target.master.clone());
                watcher = Some(tokio::spawn(listen).abort_handle());
                Route::Sentinel(followed)
            }
        };
        Ok(Link { route, acks, shown, next: AtomicUsize::new(0), watcher })
    }

    pub(super) fn acks(&self) -> Acks {
        self.acks
    }

    pub(super) fn follows_sentinels(&self) -> bool {
        matches!(self.route, Route::Sentinel(_))
    }

    /// A connection to the primary.
    pub(super) async fn connection(&self) -> Result<Conn, StoreUnavailable> {
        let turn = self.next.fetch_add(1, Ordering::Relaxed);
        let followed = match &self.route {
            Route::Node(managers) => return Ok(Conn::Node(managers[turn % managers.len()].clone())),
            Route::Sentinel(followed) => followed,
        };
        if let Some(conn) = followed.now(turn) {
            return Ok(conn);
        }
        if let Some(why) = followed.failed_lately() {
            return Err(self.error(Cause::NoPrimary, &why));
        }
        // The lookup runs in a task of its own: a caller that stops waiting (readiness gives up
        // after a second) does not cancel it, so its answer or its failure is still recorded.
        let lookup = tokio::spawn(followed.clone().look_up());
        match tokio::time::timeout(LOOKUP_WAIT, lookup).await {
            Ok(Ok(Ok(()))) => followed.now(turn).ok_or_else(|| self.error(Cause::NoPrimary, "the primary moved again")),
            Ok(Ok(Err(why))) => Err(self.error(Cause::NoPrimary, &why)),
            Ok(Err(e)) => Err(self.error(Cause::NoPrimary, &format!("the lookup of the primary failed: {e}"))),
            Err(_) => Err(self.error(Cause::NoPrimary, "the Sentinels are still being asked for the primary")),
        }
    }

    /// Runs a command that changes nothing.
    pub(super) async fn read<T: FromRedisValue>(&self, cmd: &Cmd) -> Result<T, StoreUnavailable> {
        let mut conn = self.connection().await?;
        let answer = cmd.query_async(&mut conn).await;
        answer.map_err(|e| self.failed(&conn, e))
    }

    /// Runs a command that writes what nothing sent to Fabric depends on (an attempt's outcome,
    /// recorded after its create): not waited for, since losing it in a failover only makes a
    /// replay say "used" without what happened.
    pub(super) async fn write_unacknowledged<T: FromRedisValue>(&self, cmd: &Cmd) -> Result<T, StoreUnavailable> {
        self.read(cmd).await
    }

    /// Runs a command that writes, and counts it only once [`Acks`] replicas hold it.
    pub(super) async fn write<T: FromRedisValue>(&self, cmd: &Cmd) -> Result<T, StoreUnavailable> {
        if self.acks.replicas == 0 {
            return self.read(cmd).await;
        }
        let mut conn = self.connection().await?;
        let mut pipe = ::redis::pipe();
        pipe.add_command(cmd.clone()).cmd("WAIT").arg(self.acks.replicas).arg(self.acks.timeout.as_millis() as u64);
        let (answer, acked): (T, u32) = pipe.query_async(&mut conn).await.map_err(|e| self.failed(&conn, e))?;
        if acked < self.acks.replicas {
            crate::metrics::metrics().store_unacknowledged();
            let why = format!(
                "the write reached {acked} of the {} replicas required within {} ms, so a failover could undo it: it \
                 does not count",
                self.acks.replicas,
                self.acks.timeout.as_millis()
            );
            return Err(self.error(Cause::Unacknowledged, &why));
        }
        Ok(answer)
    }

    /// How many replicas the primary streams to, if it says.
    pub(super) async fn replica_count(&self) -> Option<u32> {
        match self.read::<Value>(&::redis::cmd("ROLE")).await.ok()? {
            Value::Array(parts) => match parts.get(2)? {
                Value::Array(replicas) => Some(replicas.len() as u32),
                _ => None,
            },
            _ => None,
        }
    }

    /// The store's answer to `ROLE`: the primary, and how many replicas it streams to.
    pub(super) async fn role(&self) -> Result<(), StoreUnavailable> {
        let answer: Value = self.read(&::redis::cmd("ROLE")).await?;
        let Value::Array(parts) = answer else {
            return Err(self.error(Cause::Down, "ROLE answered with no role"));
        };
        match (parts.first(), parts.get(2)) {
            (Some(Value::BulkString(role)), Some(Value::Array(replicas))) if role.as_slice() == b"master" => {
                let have = replicas.len() as u32;
                if have < self.acks.replicas {
                    let why = format!(
                        "the primary has {have} connected replicas and each write needs {} to acknowledge it, so every \
                         write would fail closed (start replicas, or lower --proposal-store-acks)",
                        self.acks.replicas
                    );
                    return Err(self.error(Cause::FewReplicas, &why));
                }
                Ok(())
            }
            (Some(Value::BulkString(role)), _) if role.as_slice() != b"master" => {
                if let Route::Sentinel(followed) = &self.route {
                    followed.forget(None);
                }
                Err(self.error(Cause::ReadOnly, &format!("{READ_ONLY} (ROLE {})", String::from_utf8_lossy(role))))
            }
            _ => Err(self.error(Cause::Down, "ROLE answered with no role")),
        }
    }

    /// The error for a failed command; a Sentinel store forgets a connection that may be to a
    /// node no longer the primary.
    fn failed(&self, conn: &Conn, e: RedisError) -> StoreUnavailable {
        // a script that writes nothing runs on a replica too; its WAIT then says what the node is
        let said = e.to_string();
        let read_only = e.code() == Some("READONLY")
            || said.contains("read only replica")
            || said.contains("cannot be used with replica instances");
        if let (Route::Sentinel(followed), Conn::Primary(_, epoch)) = (&self.route, conn)
            && (read_only
                || e.is_io_error()
                || e.is_timeout()
                || e.is_connection_dropped()
                || e.is_unrecoverable_error())
        {
            followed.forget(Some(*epoch));
        }
        if read_only {
            let why = format!("{e} ({READ_ONLY}: a failover demoted it?)");
            return self.error(Cause::ReadOnly, &why);
        }
        // the primary's own min-replicas-to-write refused the write before it was made
        if e.code() == Some("NOREPLICAS") || said.contains("NOREPLICAS") {
            return self.error(Cause::FewReplicas, &said);
        }
        self.error(Cause::Down, &said)
    }

    pub(super) fn error(&self, cause: Cause, why: &str) -> StoreUnavailable {
        let hint = match (cause, self.follows_sentinels()) {
            (Cause::ReadOnly, false) => "; point the servers at the primary, or name the Sentinels",
            (Cause::ReadOnly, true) => "; the next call asks the Sentinels for the primary again",
            _ => "",
        };
        StoreUnavailable { backend: self.shown.clone(), reason: super::redact(&format!("{why}{hint}")), cause }
    }
}

/// How a node's refusal to write reads (see [`Cause::ReadOnly`]).
const READ_ONLY: &str = "the node is a read-only replica now";

impl Followed {
    fn now(&self, turn: usize) -> Option<Conn> {
        let current = self.current.lock().unwrap();
        current.connections.as_ref().map(|(c, e)| Conn::Primary(c[turn % c.len()].clone(), *e))
    }

    /// Why asking for a primary failed, if it did less than [`RETRY_GAP`] ago.
    fn failed_lately(&self) -> Option<String> {
        let current = self.current.lock().unwrap();
        current.failed.as_ref().filter(|(at, _)| at.elapsed() < RETRY_GAP).map(|(_, why)| why.clone())
    }

    /// Drops the connections (only those of `epoch`, when given, so a late error does not drop
    /// newer ones).
    fn forget(&self, epoch: Option<u64>) {
        let mut current = self.current.lock().unwrap();
        if epoch.is_none() || current.connections.as_ref().map(|(_, e)| *e) == epoch {
            current.connections = None;
            current.epoch += 1;
        }
    }

    /// Asks the Sentinels for the primary and connects to it (one lookup at a time), recording
    /// the connections or why there are none.
    async fn look_up(self: Arc<Self>) -> Result<(), String> {
        let mut sentinels = self.sentinels.lock().await;
        let began = {
            let current = self.current.lock().unwrap();
            // the lookup before this one may have just found it, or just failed
            if current.connections.is_some() {
                return Ok(());
            }
            if let Some((at, why)) = &current.failed
                && at.elapsed() < RETRY_GAP
            {
                return Err(why.clone());
            }
            current.epoch
        };
        let found = tokio::time::timeout(CONNECT_TIMEOUT * 2, async {
            let client = sentinels.async_get_client().await?;
            let mut connections = Vec::with_capacity(self.pool);
            for _ in 0..self.pool {
                connections.push(client.get_multiplexed_async_connection_with_config(&self.config).await?);
            }
            Ok::<_, RedisError>(connections)
        })
        .await;
        let mut current = self.current.lock().unwrap();
        let why = match found {
            Ok(Ok(_)) if current.epoch != began => "the primary moved while it was looked up".to_string(),
            Ok(Ok(connections)) => {
                current.epoch += 1;
                current.connections = Some((connections, current.epoch));
                current.failed = None;
                return Ok(());
            }
            Ok(Err(e)) => format!("no primary found through the Sentinels: {}", super::redact(&e.to_string())),
            Err(_) => "no primary found through the Sentinels within 4 s".to_string(),
        };
        current.failed = Some((Instant::now(), why.clone()));
        Err(why)
    }
}

/// Listens on a Sentinel for `+switch-master` of `master` and drops the connections to the old
/// primary the moment a failover ends, so the first call after it goes to the new one instead
/// of failing on a dead connection. Reconnects (to any Sentinel) when its link breaks; aborted
/// with the store (see `Drop for Link`).
async fn watch_switches(followed: Weak<Followed>, mut sentinels: SentinelClient, master: String) {
    use futures_util::StreamExt;
    loop {
        let listened = async {
            let client = sentinels.async_get_sentinel_client().await?;
            let mut pubsub = client.get_async_pubsub().await?;
            pubsub.subscribe("+switch-master").await?;
            let mut messages = pubsub.on_message();
            while let Some(message) = messages.next().await {
                let Some(f) = followed.upgrade() else { return Ok(()) };
                let payload: String = message.get_payload().unwrap_or_default();
                if payload.split(' ').next() == Some(master.as_str()) {
                    tracing::info!("proposal store: the Sentinels moved the primary ({payload})");
                    f.forget(None);
                }
            }
            Ok::<_, RedisError>(())
        };
        if let Err(e) = listened.await {
            tracing::debug!("proposal store: no Sentinel to listen to for failovers: {e}");
        }
        if followed.strong_count() == 0 {
            return;
        }
        tokio::time::sleep(RETRY_GAP * 5).await;
    }
}

/// `certificates`: the only authorities trusted for the Sentinels' and the data nodes'.
fn sentinel_client(
    target: &SentinelTarget,
    certificates: Option<::redis::TlsCertificates>,
) -> Result<SentinelClient, RedisError> {
    let addresses = target.sentinels.iter().map(|(host, port)| match target.tls {
        true => ConnectionAddr::TcpTls { host: host.clone(), port: *port, insecure: false, tls_params: None },
        false => ConnectionAddr::Tcp(host.clone(), *port),
    });
    let mut builder = SentinelClientBuilder::new(addresses, &target.master, SentinelServerType::Master)?
        .set_client_to_redis_db(target.db);
    if target.tls {
        builder = builder
            .set_client_to_redis_tls_mode(::redis::TlsMode::Secure)
            .set_client_to_sentinel_tls_mode(::redis::TlsMode::Secure);
    }
    if let Some(certificates) = certificates {
        builder = builder
            .set_client_to_redis_certificates(certificates.clone())
            .set_client_to_sentinel_certificates(certificates);
    }
    if let Some(user) = &target.username {
        builder = builder.set_client_to_redis_username(user);
    }
    if let Some(password) = &target.password {
        builder = builder.set_client_to_redis_password(password.expose());
    }
    if let Some(password) = &target.sentinel_password {
        builder = builder.set_client_to_sentinel_password(password.expose());
    }
    builder.build()
}

impl ConnectionLike for Conn {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        match self {
            Conn::Node(c) => c.req_packed_command(cmd),
            Conn::Primary(c, _) => c.req_packed_command(cmd),
        }
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a ::redis::Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        match self {
            Conn::Node(c) => c.req_packed_commands(pipeline, offset, count),
            Conn::Primary(c, _) => c.req_packed_commands(pipeline, offset, count),
        }
    }

    fn get_db(&self) -> i64 {
        match self {
            Conn::Node(c) => c.get_db(),
            Conn::Primary(c, _) => c.get_db(),
        }
    }
}
