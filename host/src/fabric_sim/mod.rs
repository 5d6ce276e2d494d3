//! The Fabric simulator: a real HTTP server on loopback speaking the Equinix OAuth token
//! endpoint and the Fabric v4 endpoints this project calls, with spec-shaped error arrays,
//! seeded data, counters and knobs for latency and injected faults. Axum routes ([`routes`])
//! behind middleware ([`middleware`]: stats, latency and faults, the bearer-token check).
//!
//! It runs in-process behind `serve --fabric-sim` (the default way to try the server without
//! credentials) and standalone as `equinix-mcp fabric-sim --listen ADDR`. Its `/_sim/*` routes
//! (stats, faults, knobs) exist for tests and demos; real Fabric has nothing like them.

mod admin;
mod answer;
mod estate;
mod faults;
mod middleware;
mod oauth;
mod prices;
mod routes;
mod search;
mod seed;

use std::collections::{HashMap, VecDeque};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use serde::Serialize;
use serde_json::Value;

use crate::clock::Clock;
pub use answer::{error_array, error_with};
use estate::Estate;
pub use faults::{Fault, FaultMode};
pub use seed::{CONNECTIONS, MY_PORT_METROS, PORTS, PROFILES, PROJECT_ID};

/// The metros every simulator serves, in order.
pub fn seeded_metros() -> Vec<Value> {
    seed::metros()
}

/// The simulator's fixed, obviously fake credentials.
pub const SIM_CLIENT_ID: &str = "sim-client-id";
pub const SIM_CLIENT_SECRET: &str = "sim-client-secret";

/// Knobs of a simulator instance.
#[derive(Clone, Debug)]
pub struct SimConfig {
    pub client_id: String,
    pub client_secret: String,
    /// `token_timeout` handed out with each token, in seconds.
    pub token_timeout_secs: u64,
    /// Added before every Fabric answer.
    pub latency: Duration,
    /// The clock `POST /_sim/clock` moves: the host's own, when the simulator runs in-process.
    pub clock: Option<Clock>,
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
pub const REMEMBERED_REQUESTS: usize = 10_000;

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

struct Inner {
    config: SimConfig,
    tokens: HashMap<String, Instant>,
    stats: Stats,
    faults: VecDeque<Fault>,
    estate: Estate,
}

#[derive(Clone)]
struct Sim {
    inner: Arc<Mutex<Inner>>,
}

/// A running simulator.
pub struct SimHandle {
    pub addr: SocketAddr,
    sim: Sim,
    app: Router,
    task: tokio::task::JoinHandle<()>,
}

impl SimHandle {
    /// `http://127.0.0.1:PORT`, the value for `EQUINIX_API_ENDPOINT`.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The simulator's routes, for a Fabric client in this process to call without a socket.
    pub fn router(&self) -> Router {
        self.app.clone()
    }

    pub fn stats(&self) -> Stats {
        self.sim.inner.lock().unwrap().stats.clone()
    }

    pub fn inject(&self, fault: Fault) {
        self.sim.inner.lock().unwrap().faults.push_back(fault);
    }

    /// Forgets every issued token, as if they all expired at once.
    pub fn expire_tokens(&self) {
        self.sim.inner.lock().unwrap().tokens.clear();
    }
}

impl Drop for SimHandle {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Starts a simulator on `addr` (use port 0 for any free port) in the current tokio runtime.
pub async fn start(addr: SocketAddr, config: SimConfig) -> std::io::Result<SimHandle> {
    let sim = Sim {
        inner: Arc::new(Mutex::new(Inner {
            config,
            tokens: HashMap::new(),
            stats: Stats::default(),
            faults: VecDeque::new(),
            estate: Estate::seeded(),
        })),
    };
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let addr = listener.local_addr()?;
    let app = routes::router(sim.clone());
    let served = app.clone();
    let task = tokio::spawn(async move {
        if let Err(e) = axum::serve(listener, served).await {
            tracing::error!("fabric simulator stopped: {e}");
        }
    });
    Ok(SimHandle { addr, sim, app, task })
}
