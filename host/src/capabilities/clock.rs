//! The `clock` capability: the host's wall-clock milliseconds ([`crate::clock::Clock`]).

use crate::bindings::clock;
use crate::clock::Clock;

/// What the `clock` interface reaches of a call: its clock, and nothing else.
pub struct ClockView<'a>(pub(super) &'a Clock);

impl clock::Host for ClockView<'_> {
    fn now_ms(&mut self) -> wasmtime::Result<u64> {
        Ok(self.0.now_ms())
    }
}
