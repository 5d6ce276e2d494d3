//! The store data of one component call, split by interface as wasmtime's own host crates split
//! theirs: what every capability knows of the call ([`CallFacts`], read-only), one context per
//! interface (each defined beside the interface it serves), and a view per interface that
//! borrows just the parts it uses. What passes from one interface to another is named in the
//! views: a create dry run's [`Validation`](crate::approval::Validation) (fabric → proposal-store), a proposal taken from the
//! store with its binding (proposal-store → confirmation).

use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;
use wasmtime::StoreLimits;

use super::call_facts::{CallFacts, CorrelationIds, GuestMeter, StepReporter, ToolGrant};
use super::clock::ClockView;
use super::confirmation::{Awaiting, ConfirmCtx, ConfirmView};
use super::confirmer::{Confirmer, Fallback, NobodyToAsk};
use super::fabric::{FabricCtx, FabricView};
use super::policy_check::PolicyCtx;
use super::proposal_store::{StoreCtx, StoreView};
use crate::audit::AuditLog;
use crate::audit::events::PolicyDecision;
use crate::clock::Clock;
use crate::fabric_client::FabricClient;
use crate::oauth::Scopes;
use crate::policy::OperatorPolicy;
use crate::principal::Principal;
use crate::proposals::ProposalStore;

/// Everything one component call may use. A fresh one (and a fresh Store) per call; each
/// interface reaches it through its own view.
pub struct CallState {
    pub(crate) limits: StoreLimits,
    pub(crate) meter: GuestMeter,
    call: CallFacts,
    fabric: FabricCtx,
    store: StoreCtx,
    confirm: ConfirmCtx,
    policy: PolicyCtx,
}

/// What a component call came to, besides its result: the question it left waiting, the
/// policy's decisions, and whether a create left.
pub struct Ending {
    pub(crate) awaiting: Option<Awaiting>,
    /// The policy's decisions in this call, for the call's audit record.
    pub decisions: Vec<PolicyDecision>,
    /// A decision this call collected from the approval page, and what became of it.
    pub(crate) page_said: Option<super::PageSaid>,
}

/// What every call of one server is granted behind the imports: the backends the capabilities
/// reach and the operator's settings that shape them.
#[derive(Clone)]
pub struct Grants {
    pub fabric: Arc<FabricClient>,
    pub clock: Clock,
    pub proposals: Arc<ProposalStore>,
    /// Where approvals and creates are recorded before they take effect (none: nothing can be
    /// approved).
    pub audit: Option<Arc<AuditLog>>,
    /// The operator's opt-in to creates without a person's answer (`--allow-unconfirmed-mutations`).
    pub(crate) unconfirmed_allowed: bool,
    /// Guest CPU time each call may use.
    pub(crate) guest_time: Duration,
    /// The operator's policy on what may be proposed (open: everything).
    pub policy: Arc<dyn OperatorPolicy>,
    /// `stdio` or `http`, for the policy's context.
    pub transport: &'static str,
    /// The operator's notifications (none configured: none sent).
    pub notifier: Option<Arc<crate::notify::Notifier>>,
}

impl Grants {
    /// Grants with no audit log and no opt-in: nothing can be approved (reading the catalog,
    /// `equinix-mcp tools`, benchmarks).
    pub fn without_approvals(fabric: Arc<FabricClient>, proposals: Arc<ProposalStore>, guest_time: Duration) -> Self {
        Grants {
            fabric,
            clock: Clock::default(),
            proposals,
            audit: None,
            unconfirmed_allowed: false,
            guest_time,
            policy: Arc::new(crate::policy::PolicyGate::open()),
            transport: "stdio",
            notifier: None,
        }
    }
}

/// What one call brings: who it acts for, who to ask, its cancellation, where to report progress.
pub struct CallContext {
    pub principal: Principal,
    /// What the principal's token grants (everything but for an OAuth principal).
    pub scopes: Scopes,
    pub(crate) confirmer: Arc<dyn Confirmer>,
    /// The road to the approval page, kept for when the operator's policy allows the create only
    /// there and `confirmer` would not send the person there.
    pub(crate) page_instead: Option<Fallback>,
    pub cancel: CancellationToken,
    pub progress: Option<Arc<dyn StepReporter>>,
}

impl CallContext {
    /// A call by the local principal.
    pub fn new(confirmer: Arc<dyn Confirmer>, cancel: CancellationToken) -> Self {
        CallContext {
            principal: Principal::local(),
            scopes: Scopes::ALL,
            confirmer,
            page_instead: None,
            cancel,
            progress: None,
        }
    }

    /// A call with nobody to ask and nothing to cancel it.
    pub(crate) fn unattended() -> Self {
        Self::new(Arc::new(NobodyToAsk), CancellationToken::new())
    }
}

impl CallState {
    /// The store data of one call of `tool`, made by `call`, under `grants`.
    pub(crate) fn new(grants: &Grants, call: CallContext, tool: ToolGrant, correlation_ids: CorrelationIds) -> Self {
        CallState {
            limits: Default::default(),
            meter: GuestMeter::new(grants.guest_time),
            fabric: FabricCtx::new(grants.fabric.clone(), correlation_ids),
            store: StoreCtx::new(grants.proposals.clone()),
            confirm: ConfirmCtx::new(
                call.confirmer,
                call.page_instead,
                grants.audit.clone(),
                grants.unconfirmed_allowed,
                grants.proposals.clone(),
            )
            .notifying(grants.notifier.clone()),
            policy: PolicyCtx::new(grants.policy.clone()),
            call: CallFacts {
                principal: call.principal,
                scopes: call.scopes,
                tool,
                cancel: call.cancel,
                progress: call.progress,
                transport: grants.transport,
                clock: grants.clock.clone(),
            },
        }
    }

    /// A call with nobody to ask and nothing to cancel it (the start-up catalog read, `tools`,
    /// benchmarks): whatever `grants` hold, it can have nothing approved (no audit log, no
    /// opt-in) and may not ask (no `mutate` tool).
    pub fn unattended(grants: &Grants) -> Self {
        let grants = Grants { audit: None, unconfirmed_allowed: false, ..grants.clone() };
        Self::new(&grants, CallContext::unattended(), ToolGrant::default(), CorrelationIds::default())
    }

    pub fn clock_view(&mut self) -> ClockView<'_> {
        ClockView(&self.call.clock)
    }

    pub fn fabric_view(&mut self) -> FabricView<'_> {
        FabricView {
            call: &self.call,
            fabric: &mut self.fabric,
            policy: &mut self.policy,
            meter: &mut self.meter,
            audited: self.confirm.audited(),
        }
    }

    pub fn store_view(&mut self) -> StoreView<'_> {
        StoreView {
            call: &self.call,
            store: &mut self.store,
            validations: &mut self.fabric.validations,
            meter: &mut self.meter,
        }
    }

    pub fn confirm_view(&mut self) -> ConfirmView<'_> {
        ConfirmView {
            call: &self.call,
            confirm: &mut self.confirm,
            redeemed: &self.store.redeemed,
            fabric: &mut self.fabric,
            policy: &mut self.policy,
            meter: &mut self.meter,
        }
    }

    /// Whether this call sent a create to Fabric (what a failed call can then say it did not do).
    pub(crate) fn create_sent(&self) -> bool {
        self.confirm.create_sent
    }

    /// What the call came to, once the component returned (or trapped).
    pub(crate) fn end(self) -> Ending {
        Ending {
            decisions: self.policy.decisions.all(),
            awaiting: self.confirm.awaiting,
            page_said: self.confirm.page_said,
        }
    }
}
