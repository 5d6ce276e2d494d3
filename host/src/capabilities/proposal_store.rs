//! The `proposal-store` capability: the WIT interface's calls on the configured store, as the
//! calling principal and on the host's clock. `put` binds each record to one of this call's
//! validations; `peek` and `take` hand the component its own bytes and keep the binding for
//! this call's `ask` (see [`crate::approval::binding`]). The host bounds what any component can keep:
//! [`MAX_RECORD_BYTES`] a record, [`MAX_OUTCOME_BYTES`] an outcome, [`PENDING_PER_PRINCIPAL`]
//! pending per principal, none pending past its validation's TTL.

use std::sync::Arc;

use super::call_facts::{CallFacts, GuestMeter};
use crate::approval::{Binding, Redeemed, TTL_MS, Validation};
use crate::bindings::proposal_store as wit_store;
use crate::oauth::Scope;
use crate::proposals::{MAX_OUTCOME_BYTES, MAX_RECORD_BYTES, PENDING_PER_PRINCIPAL, ProposalStore};

/// The `proposal-store` interface's part of a call: the store, and the proposals this call found
/// in it (peeked or taken), with their bindings.
pub(crate) struct StoreCtx {
    proposals: Arc<ProposalStore>,
    pub(super) redeemed: Vec<Redeemed>,
}

impl StoreCtx {
    pub(super) fn new(proposals: Arc<ProposalStore>) -> Self {
        StoreCtx { proposals, redeemed: Vec::new() }
    }
}

/// What the `proposal-store` interface reaches of a call: its store, and the validations the
/// `fabric` interface recorded (a `put` binds one).
pub struct StoreView<'a> {
    pub(super) call: &'a CallFacts,
    pub(super) store: &'a mut StoreCtx,
    pub(super) validations: &'a mut Vec<Validation>,
    pub(super) meter: &'a mut GuestMeter,
}

/// An unreachable store stops the call (a trap the host reports as `proposal_store_unavailable`):
/// the WIT has no error case for it on purpose, so a component cannot carry on without its
/// store. `settle` is the exception: it runs after a create may have been sent, and losing the
/// call's result there would hide what happened, so a failed settle is logged and the result
/// stands (a later replay then cannot say what this attempt did).
impl wit_store::Host for StoreView<'_> {
    async fn put(
        &mut self,
        record: Vec<u8>,
        validated_sha256: String,
        expires_at_ms: u64,
        capacity: u32,
    ) -> wasmtime::Result<Result<wit_store::Stored, String>> {
        if !self.call.scopes.allows(Scope::Propose) {
            let why = "the principal's access token does not grant proposing changes, so no proposal is stored";
            tracing::warn!(tool = %self.call.tool.name, "refused to store a proposal: {why}");
            return Ok(Err(why.into()));
        }
        if record.len() > MAX_RECORD_BYTES {
            let why = format!(
                "the proposal record has {} bytes; the host keeps at most {MAX_RECORD_BYTES} bytes per proposal, so \
                 nothing was stored",
                record.len()
            );
            tracing::warn!(tool = %self.call.tool.name, "refused to store a proposal: {why}");
            return Ok(Err(why));
        }
        let Some(at) = self.validations.iter().position(|v| v.request_sha256 == validated_sha256) else {
            let why = format!(
                "no create dry run of request {validated_sha256:?} was answered 2xx by Fabric in this call (or its \
                 validation is already bound to a stored proposal), so there is nothing to store a proposal for"
            );
            tracing::warn!(tool = %self.call.tool.name, "refused to store a proposal: {why}");
            return Ok(Err(why));
        };
        let binding = Binding::new(self.validations.remove(at), self.call.principal.as_str());
        let (store, who, now) = (self.store.proposals.clone(), self.call.principal.clone(), self.call.clock.now_ms());
        // nothing can be approved once the validation is older than the TTL, so nothing is kept
        // pending longer, and no component holds more than the seed's 20 pending per principal
        let expires_at_ms = expires_at_ms.min(binding.validated_at_ms.saturating_add(TTL_MS));
        let capacity = capacity.clamp(1, PENDING_PER_PRINCIPAL);
        let stored = binding.wrap(&record);
        let (token, evicted) = self.meter.outside_guest(store.put(&who, stored, expires_at_ms, capacity, now)).await?;
        Ok(Ok(wit_store::Stored { token, evicted }))
    }

    async fn peek(&mut self, token: String) -> wasmtime::Result<wit_store::Taken> {
        let (store, who) = (self.store.proposals.clone(), self.call.principal.clone());
        let taken = self.meter.outside_guest(store.peek(&who, &token)).await?;
        Ok(self.redeem(token, taken, false))
    }

    async fn take(&mut self, token: String) -> wasmtime::Result<wit_store::Taken> {
        let (store, who) = (self.store.proposals.clone(), self.call.principal.clone());
        let taken = self.meter.outside_guest(store.take(&who, &token)).await?;
        Ok(self.redeem(token, taken, true))
    }

    async fn settle(&mut self, token: String, outcome: Vec<u8>) -> wasmtime::Result<()> {
        if outcome.len() > MAX_OUTCOME_BYTES {
            // the WIT gives settle no error: a replay of this token says it was used, without
            // what happened
            tracing::warn!(
                tool = %self.call.tool.name, %token, bytes = outcome.len(),
                "did not record an attempt's outcome of more than {MAX_OUTCOME_BYTES} bytes"
            );
            return Ok(());
        }
        let (store, who) = (self.store.proposals.clone(), self.call.principal.clone());
        if let Err(e) = self.meter.outside_guest(store.settle(&who, &token, outcome)).await {
            tracing::error!(token = %token, "{e}; this attempt's outcome is not recorded for replays");
        }
        Ok(())
    }
}

impl StoreView<'_> {
    /// What the component sees of a found record (its own bytes), remembering the binding.
    fn redeem(&mut self, token: String, taken: wit_store::Taken, consumed: bool) -> wit_store::Taken {
        let wit_store::Taken::Found(stored) = taken else {
            return taken;
        };
        let (binding, record) = match Binding::unwrap(&stored) {
            Some((b, record)) => (Some(b), record.to_vec()),
            None => (None, stored),
        };
        match self.store.redeemed.iter_mut().find(|r| r.token == token) {
            Some(r) => r.taken |= consumed,
            None => self.store.redeemed.push(Redeemed { token, binding, taken: consumed }),
        }
        wit_store::Taken::Found(record)
    }
}
