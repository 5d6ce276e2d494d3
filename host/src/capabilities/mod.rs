//! What the host grants behind each import of the `broker` world, one module per interface
//! (`clock`, `fabric`, `confirmation`, `proposal_store`), each implemented on its own view of the
//! per-call [`CallState`] and linked by [`add_to_linker`]. [`Confirmer`] is how a call reaches its
//! person; the rules the confirmation keeps are [`crate::approval`]'s.

mod call_facts;
mod call_state;
mod clock;
pub(crate) mod confirmation;
mod confirmer;
mod decisions;
mod fabric;
mod policy_check;
mod proposal_store;

use wasmtime::component::{HasData, Linker};

pub(crate) use crate::clock::Clock;
pub use crate::proposals::ProposalStore;
pub(crate) use call_facts::{CorrelationIds, GuestMeter, StepReporter, ToolGrant};
pub use call_state::{CallContext, CallState, Ending, Grants};
pub(crate) use clock::ClockView;
pub(crate) use confirmation::PageSaid;
pub(crate) use confirmation::{Awaiting, ConfirmView};
pub use confirmer::{Confirmer, Fallback, FromPage, NobodyToAsk, NotReached, PagePending, Partly, Reached, StoreStep};
pub(crate) use fabric::FabricView;
pub(crate) use proposal_store::StoreView;

use crate::bindings::{
    clock as wit_clock, confirmation as wit_confirmation, fabric as wit_fabric, proposal_store as wit_store,
};

struct FabricData;
impl HasData for FabricData {
    type Data<'a> = FabricView<'a>;
}

struct ClockData;
impl HasData for ClockData {
    type Data<'a> = ClockView<'a>;
}

struct StoreData;
impl HasData for StoreData {
    type Data<'a> = StoreView<'a>;
}

struct ConfirmationData;
impl HasData for ConfirmationData {
    type Data<'a> = ConfirmView<'a>;
}

/// Links the `broker` world's four imports, each to its interface's view of the call: nothing
/// else is linked, so a component importing anything more cannot be instantiated.
pub(crate) fn add_to_linker(linker: &mut Linker<CallState>) -> wasmtime::Result<()> {
    wit_fabric::add_to_linker::<CallState, FabricData>(linker, CallState::fabric_view)?;
    wit_clock::add_to_linker::<CallState, ClockData>(linker, CallState::clock_view)?;
    wit_store::add_to_linker::<CallState, StoreData>(linker, CallState::store_view)?;
    wit_confirmation::add_to_linker::<CallState, ConfirmationData>(linker, CallState::confirm_view)?;
    Ok(())
}
