//! The `proposal-store` capability: the WIT interface's calls on the configured store, as the
//! calling principal and on the host's clock.

use super::call_state::CallState;
use crate::bindings::proposal_store as wit_store;

/// An unreachable store stops the call (a trap the host reports as `proposal_store_unavailable`):
/// the WIT has no error case for it on purpose, so a component cannot carry on without its
/// store. `settle` is the exception: it runs after a create may have been sent, and losing the
/// call's result there would hide what happened, so a failed settle is logged and the result
/// stands (a later replay then cannot say what this attempt did).
impl wit_store::Host for CallState {
    async fn put(&mut self, record: Vec<u8>, expires_at_ms: u64, capacity: u32) -> wasmtime::Result<wit_store::Stored> {
        let (store, who, now) = (self.proposals.clone(), self.principal.clone(), self.clock.now_ms());
        let (token, evicted) = self.meter.outside_guest(store.put(&who, record, expires_at_ms, capacity, now)).await?;
        Ok(wit_store::Stored { token, evicted })
    }

    async fn peek(&mut self, token: String) -> wasmtime::Result<wit_store::Taken> {
        let (store, who) = (self.proposals.clone(), self.principal.clone());
        Ok(self.meter.outside_guest(store.peek(&who, &token)).await?)
    }

    async fn take(&mut self, token: String) -> wasmtime::Result<wit_store::Taken> {
        let (store, who) = (self.proposals.clone(), self.principal.clone());
        Ok(self.meter.outside_guest(store.take(&who, &token)).await?)
    }

    async fn settle(&mut self, token: String, outcome: Vec<u8>) -> wasmtime::Result<()> {
        let (store, who) = (self.proposals.clone(), self.principal.clone());
        if let Err(e) = self.meter.outside_guest(store.settle(&who, &token, outcome)).await {
            tracing::error!(token = %token, "{e}; this attempt's outcome is not recorded for replays");
        }
        Ok(())
    }
}
