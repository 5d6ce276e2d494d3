//! Starting a simulator and the handle its owner keeps.

use std::net::SocketAddr;

use axum::Router;

use crate::faults::Fault;
use crate::state::{Sim, SimConfig, Stats};

/// A running simulator; dropping it stops the listener.
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
        self.sim.lock().stats.clone()
    }

    pub fn inject(&self, fault: Fault) {
        self.sim.lock().faults.push_back(fault);
    }

    /// Forgets every issued token, as if they all expired at once.
    pub fn expire_tokens(&self) {
        self.sim.lock().tokens.clear();
    }
}

impl Drop for SimHandle {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Starts a simulator on `addr` (use port 0 for any free port) in the current tokio runtime.
pub async fn start(addr: SocketAddr, config: SimConfig) -> std::io::Result<SimHandle> {
    Unstarted::new(config).start(addr).await
}

/// A simulator's routes, made before it listens: all of its start that is work, none of it I/O,
/// so a server can make it on another thread while it does something else. (Its estate is seeded
/// at the first request that reads it.)
pub struct Unstarted {
    sim: Sim,
    app: Router,
}

impl Unstarted {
    pub fn new(config: SimConfig) -> Unstarted {
        let sim = Sim::new(config);
        let app = crate::routes::router(sim.clone());
        Unstarted { sim, app }
    }

    /// Listens on `addr` in the current tokio runtime.
    pub async fn start(self, addr: SocketAddr) -> std::io::Result<SimHandle> {
        let Unstarted { sim, app } = self;
        let listener = tokio::net::TcpListener::bind(addr).await?;
        let addr = listener.local_addr()?;
        let served = app.clone();
        let task = tokio::spawn(async move {
            if let Err(e) = axum::serve(listener, served).await {
                tracing::error!("fabric simulator stopped: {e}");
            }
        });
        Ok(SimHandle { addr, sim, app, task })
    }
}
