//! What every capability knows of a call, and may not change: who it acts for, its grants, its
//! tool, its cancellation and clock ([`CallFacts`]); where its slow steps and correlation ids
//! are reported; and the meter that keeps host time off the guest's CPU budget.

use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::future::BoxFuture;
use tokio_util::sync::CancellationToken;

use crate::clock::Clock;
use crate::oauth::Scopes;
use crate::principal::Principal;

/// What every capability of one call knows of it, and none may change.
pub(crate) struct CallFacts {
    /// Whose proposals this call may see and create.
    pub principal: Principal,
    /// What the principal may do: storing a proposal needs the propose grant, asking the person
    /// to approve a create the confirm grant, whatever the component's tools are called.
    pub scopes: Scopes,
    /// The tool this call runs, as the host knows it.
    pub tool: ToolGrant,
    pub cancel: CancellationToken,
    /// Where to report slow steps, when the client asked to hear about them.
    pub progress: Option<Arc<dyn StepReporter>>,
    /// `stdio` or `http`, for the policy's context.
    pub transport: &'static str,
    pub clock: Clock,
}

/// The correlation ids one call collected (at most [`CorrelationIds::MAX`]).
#[derive(Clone, Default)]
pub(crate) struct CorrelationIds(Arc<std::sync::Mutex<Vec<String>>>);

impl CorrelationIds {
    pub(crate) const MAX: usize = 8;

    pub(crate) fn push(&self, id: &str) {
        let mut ids = self.0.lock().unwrap();
        if !id.is_empty() && ids.len() < Self::MAX {
            ids.push(equinix_broker_contract::clip(id, 64));
        }
    }

    pub(crate) fn joined(&self) -> String {
        self.0.lock().unwrap().join(",")
    }
}

/// Hears about a call's slow steps ("Fabric dry run in flight"); the MCP layer turns them into
/// progress notifications. Reporting never affects the call.
pub trait StepReporter: Send + Sync {
    fn report(&self, message: String) -> BoxFuture<'_, ()>;
}

/// What the host lets the running tool do beyond its imports' plain rules.
#[derive(Clone, Debug, Default)]
pub(crate) struct ToolGrant {
    pub name: String,
    /// Only tools of the `mutate` toolset may ask the person to approve a create.
    pub may_ask: bool,
}

/// Guest time of one call: wall time minus time spent waiting in host imports, so the CPU
/// deadline covers the component's own work and not Fabric's latency or a person's minutes.
pub(crate) struct GuestMeter {
    started: Instant,
    in_host: Duration,
    budget: Duration,
}

impl GuestMeter {
    pub(crate) fn new(budget: Duration) -> Self {
        GuestMeter { started: Instant::now(), in_host: Duration::ZERO, budget }
    }

    pub(crate) fn guest_time(&self) -> Duration {
        self.started.elapsed().saturating_sub(self.in_host)
    }

    pub(crate) fn over_budget(&self) -> bool {
        self.guest_time() > self.budget
    }

    pub(crate) fn budget(&self) -> Duration {
        self.budget
    }

    /// Awaits `f`, counting its time as host time.
    pub(crate) async fn outside_guest<F: Future>(&mut self, f: F) -> F::Output {
        let t = Instant::now();
        let out = f.await;
        self.in_host += t.elapsed();
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_keeps_at_most_eight_correlation_ids_each_clipped_and_none_empty() {
        let ids = CorrelationIds::default();
        ids.push("");
        ids.push(&"x".repeat(100));
        for i in 0..10 {
            ids.push(&format!("id-{i}"));
        }
        let joined = ids.joined();
        let kept: Vec<&str> = joined.split(',').collect();
        assert_eq!(kept.len(), CorrelationIds::MAX, "{joined}");
        assert!(kept[0].starts_with("xxxx") && kept[0].chars().count() < 100, "clipped: {}", kept[0]);
        assert_eq!(kept[1..], ["id-0", "id-1", "id-2", "id-3", "id-4", "id-5", "id-6"]);
    }

    /// The guest's budget is not spent while the host waits (Fabric, a person): whatever the
    /// machine's load, guest time is what passed minus the time in the host.
    #[tokio::test]
    async fn time_in_the_host_is_not_the_guests() {
        let outer = Instant::now();
        let mut meter = GuestMeter::new(Duration::from_millis(100));
        let waited = Duration::from_millis(200);
        meter.outside_guest(tokio::time::sleep(waited)).await;
        assert!(meter.guest_time() + waited <= outer.elapsed(), "{:?}", meter.guest_time());
    }
}
