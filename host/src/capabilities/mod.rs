//! What the host grants behind each import of the `broker` world, one module per interface
//! (`clock`, `fabric`, `confirmation`, `proposal_store`), over the per-call [`CallState`] they
//! all reach. [`Confirmer`] is how a call reaches its person, [`Form`] what that person reads,
//! [`binding`] what ties an approval to the dry run and proposal it is for.

pub mod binding;
mod call_state;
mod clock;
pub mod confirmation;
mod confirmer;
mod decisions;
mod fabric;
pub mod form;
mod policy_check;
mod proposal_store;

pub use crate::clock::Clock;
pub use crate::proposals::ProposalStore;
pub use binding::TTL_MS;
pub use call_state::{CallContext, CallState, CorrelationIds, Grants, GuestMeter, StepReporter, ToolGrant};
pub use confirmer::{Confirmer, NobodyToAsk, PagePending};
pub use decisions::PolicyDecisions;
pub use form::Form;
