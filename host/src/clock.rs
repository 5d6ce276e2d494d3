//! The host's clocks: wall-clock milliseconds (the TTL rules) and a monotonic reading (deadlines
//! that must not jump with the wall clock, such as a token's refresh). In simulator mode the
//! simulator can move both forward, so those rules are testable without waiting; nothing else
//! ever does.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// System time plus an offset that only the simulator's clock knob changes.
#[derive(Clone, Debug, Default)]
pub struct Clock {
    offset_ms: Arc<AtomicU64>,
}

impl Clock {
    pub fn now_ms(&self) -> u64 {
        let system = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0);
        system + self.offset_ms.load(Ordering::Relaxed)
    }

    /// The monotonic clock, moved forward by the same offset.
    pub(crate) fn monotonic(&self) -> Instant {
        Instant::now() + Duration::from_millis(self.offset_ms.load(Ordering::Relaxed))
    }

    /// Moves this clock forward (simulator knob; never wired up against real Fabric).
    pub fn advance(&self, ms: u64) {
        self.offset_ms.fetch_add(ms, Ordering::Relaxed);
    }
}
