//! What the host grants behind each import of the `broker` world, one module per interface.
//! [`CallState`] is the per-call store data every implementation reaches.

pub mod clock;
pub mod confirmation;
pub mod fabric;
pub mod proposal_store;

use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;
use wasmtime::StoreLimits;
use wasmtime::component::ResourceTable;

use crate::audit::AuditLog;
pub use crate::clock::Clock;
use crate::fabric_client::FabricClient;
use crate::principal::Principal;
pub use confirmation::{Confirmer, Form, NobodyToAsk};
pub use proposal_store::ProposalStore;

/// Everything one component call may use. A fresh one (and a fresh Store) per call.
pub struct CallState {
    pub limits: StoreLimits,
    pub fabric: Arc<FabricClient>,
    pub clock: Clock,
    pub proposals: Arc<ProposalStore>,
    pub confirmer: Arc<dyn Confirmer>,
    pub cancel: CancellationToken,
    pub unconfirmed_allowed: bool,
    pub meter: GuestMeter,
    /// Where to report slow steps, when the client asked to hear about them.
    pub progress: Option<Arc<dyn StepReporter>>,
    /// Whose proposals this call may see and create.
    pub principal: Principal,
    /// The tool this call runs, as the host knows it.
    pub tool: ToolGrant,
    /// Where approvals and creates are recorded before they take effect (none: nothing can be
    /// approved).
    pub audit: Option<Arc<AuditLog>>,
    /// This call's approvals (the WIT resources the component holds handles to).
    pub table: ResourceTable,
    /// Whether the component already asked the person in this call (once per call).
    pub asked: bool,
    /// Fabric's correlation ids of this call's answers, for the access log.
    pub correlation_ids: CorrelationIds,
}

/// The correlation ids one call collected (at most [`CorrelationIds::MAX`]).
#[derive(Clone, Default)]
pub struct CorrelationIds(Arc<std::sync::Mutex<Vec<String>>>);

impl CorrelationIds {
    pub const MAX: usize = 8;

    pub fn push(&self, id: &str) {
        let mut ids = self.0.lock().unwrap();
        if !id.is_empty() && ids.len() < Self::MAX {
            ids.push(crate::text::clip(id, 64));
        }
    }

    pub fn joined(&self) -> String {
        self.0.lock().unwrap().join(",")
    }
}

/// Hears about a call's slow steps ("Fabric dry run in flight"); the MCP layer turns them into
/// progress notifications. Reporting never affects the call.
pub trait StepReporter: Send + Sync {
    fn report(&self, message: String) -> std::pin::Pin<Box<dyn Future<Output = ()> + Send + '_>>;
}

/// What the host lets the running tool do beyond its imports' plain rules.
#[derive(Clone, Debug, Default)]
pub struct ToolGrant {
    pub name: String,
    /// Only tools of the `mutate` toolset may ask the person to approve a create.
    pub may_ask: bool,
}

impl CallState {
    /// A call with nobody to ask and nothing to cancel it: the start-up catalog read and the
    /// benchmarks.
    pub fn unattended(
        fabric: Arc<FabricClient>,
        clock: Clock,
        proposals: Arc<ProposalStore>,
        guest_time: Duration,
    ) -> Self {
        CallState {
            limits: Default::default(),
            fabric,
            clock,
            proposals,
            confirmer: Arc::new(NobodyToAsk),
            cancel: CancellationToken::new(),
            unconfirmed_allowed: false,
            meter: GuestMeter::new(guest_time),
            progress: None,
            principal: Default::default(),
            tool: ToolGrant::default(),
            audit: None,
            table: ResourceTable::new(),
            asked: false,
            correlation_ids: Default::default(),
        }
    }
}

/// Guest time of one call: wall time minus time spent waiting in host imports, so the CPU
/// deadline covers the component's own work and not Fabric's latency or a person's minutes.
pub struct GuestMeter {
    started: Instant,
    in_host: Duration,
    budget: Duration,
}

impl GuestMeter {
    pub fn new(budget: Duration) -> Self {
        GuestMeter { started: Instant::now(), in_host: Duration::ZERO, budget }
    }

    pub fn guest_time(&self) -> Duration {
        self.started.elapsed().saturating_sub(self.in_host)
    }

    pub fn over_budget(&self) -> bool {
        self.guest_time() > self.budget
    }

    pub fn budget(&self) -> Duration {
        self.budget
    }

    /// Awaits `f`, counting its time as host time.
    pub async fn outside_guest<F: Future>(&mut self, f: F) -> F::Output {
        let t = Instant::now();
        let out = f.await;
        self.in_host += t.elapsed();
        out
    }
}
