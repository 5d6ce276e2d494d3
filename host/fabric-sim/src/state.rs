//! The simulator's configuration and the state every route shares under one lock.

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::estate::Estate;
use crate::faults::Fault;

/// The simulator's fixed, obviously fake credentials.
pub const SIM_CLIENT_ID: &str = "sim-client-id";
pub const SIM_CLIENT_SECRET: &str = "sim-client-secret";

/// A clock the simulator may move forward (`POST /_sim/clock`): a server's own, when it runs the
/// simulator in process, so tests can age what that server keeps without waiting.
pub trait SimClock: Send + Sync + fmt::Debug {
    fn advance(&self, ms: u64);
    fn now_ms(&self) -> u64;
}

/// Knobs of a simulator instance.
#[derive(Clone, Debug)]
pub struct SimConfig {
    pub client_id: String,
    pub client_secret: String,
    /// `token_timeout` handed out with each token, in seconds.
    pub token_timeout_secs: u64,
    /// Added before every Fabric answer.
    pub latency: Duration,
    /// The clock `POST /_sim/clock` moves; without one that route answers 409.
    pub clock: Option<Arc<dyn SimClock>>,
    /// Hand out this bearer token instead of random ones (for secret-leak tests).
    pub fixed_token: Option<String>,
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            client_id: SIM_CLIENT_ID.into(),
            client_secret: SIM_CLIENT_SECRET.into(),
            token_timeout_secs: 3600,
            latency: Duration::ZERO,
            clock: None,
            fixed_token: None,
        }
    }
}

/// How many requests the simulator remembers, so a long-running simulator stays small.
pub(crate) const REMEMBERED_REQUESTS: usize = 10_000;

/// One request the simulator received (Fabric routes only; token requests are counted apart).
#[derive(Clone, Debug, Serialize)]
pub struct Seen {
    pub method: String,
    pub path: String,
    pub query: String,
    pub correlation_id: Option<String>,
    /// The JSON body of a POST, as sent (what the contract tests check against Fabric's models).
    pub body: Option<String>,
}

/// Counters a test reads to prove what reached "Fabric".
#[derive(Clone, Debug, Default, Serialize)]
pub struct Stats {
    pub token_requests: u64,
    pub token_rejections: u64,
    /// The most recent requests (at most [`REMEMBERED_REQUESTS`]); the counters never reset.
    pub requests: VecDeque<Seen>,
    /// Real creates received (not dry runs), by collection (`connections`, ...).
    pub creates: HashMap<String, u64>,
    /// Dry runs received, by collection.
    pub dry_runs: HashMap<String, u64>,
}

pub(crate) struct Inner {
    pub(crate) config: SimConfig,
    /// Issued bearer tokens and when each expires.
    pub(crate) tokens: HashMap<String, Instant>,
    pub(crate) stats: Stats,
    pub(crate) faults: VecDeque<Fault>,
    /// Seeded at its first use, not at start: a server that is never asked anything (a client
    /// that only lists tools) never pays for it, and its start does not wait for it.
    pub(crate) estate: std::cell::LazyCell<Estate>,
}

/// The shared state, cheap to clone into every route.
#[derive(Clone)]
pub(crate) struct Sim {
    pub(crate) inner: Arc<Mutex<Inner>>,
}

impl Sim {
    pub(crate) fn new(config: SimConfig) -> Sim {
        Sim {
            inner: Arc::new(Mutex::new(Inner {
                config,
                tokens: HashMap::new(),
                stats: Stats::default(),
                faults: VecDeque::new(),
                estate: std::cell::LazyCell::new(Estate::seeded),
            })),
        }
    }

    pub(crate) fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap()
    }
}
