//! The `confirmation` capability: asks the person at the MCP client through the call's
//! [`Confirmer`] (an MCP form elicitation when the client declared it).

use std::future::Future;
use std::pin::Pin;

use tokio_util::sync::CancellationToken;

use super::CallState;
use crate::component::bindings::confirmation::{self, Status};

/// A prompt as the component wrote it.
#[derive(Clone, Debug)]
pub struct Prompt {
    pub title: String,
    pub message: String,
    pub fields: Vec<(String, String)>,
}

pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// How one tool call reaches its person. The MCP front supplies one per call.
pub trait Confirmer: Send + Sync {
    fn confirm<'a>(&'a self, prompt: Prompt, cancel: &'a CancellationToken) -> BoxFuture<'a, Status>;
}

/// For calls with no person behind them (loading the catalog, `inspect`).
pub struct NobodyToAsk;

impl Confirmer for NobodyToAsk {
    fn confirm<'a>(&'a self, _prompt: Prompt, _cancel: &'a CancellationToken) -> BoxFuture<'a, Status> {
        Box::pin(async { Status::UnsupportedByClient })
    }
}

impl confirmation::Host for CallState {
    async fn confirm(&mut self, prompt: confirmation::Prompt) -> wasmtime::Result<Status> {
        let prompt = Prompt { title: prompt.title, message: prompt.message, fields: prompt.fields };
        let confirmer = self.confirmer.clone();
        let cancel = self.cancel.clone();
        if cancel.is_cancelled() {
            return Ok(Status::CallCancelled);
        }
        Ok(self.meter.outside_guest(confirmer.confirm(prompt, &cancel)).await)
    }

    fn unconfirmed_allowed(&mut self) -> wasmtime::Result<bool> {
        Ok(self.unconfirmed_allowed)
    }
}
