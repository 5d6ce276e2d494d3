//! The `clock` capability: the host's wall-clock milliseconds ([`crate::clock::Clock`]).

use super::call_state::CallState;
use crate::bindings::clock;

impl clock::Host for CallState {
    fn now_ms(&mut self) -> wasmtime::Result<u64> {
        Ok(self.clock.now_ms())
    }
}
