//! The harness's one way to wait: for an event, never for a length of time. Each wait checks its
//! condition, then again every [`EVERY`], until it holds or its bound passes; a test whose event
//! never comes fails naming what it waited for and how long, instead of hanging. A fixed sleep
//! left in a test says beside it why it must be one.

use std::time::{Duration, Instant};

/// How often a condition is checked again (short: each check is a cheap read).
pub const EVERY: Duration = Duration::from_millis(20);

/// The bound most waits use: far beyond what any of these events takes on a loaded machine.
pub const WITHIN: Duration = Duration::from_secs(10);

/// The value `ready` gives within `within`, or `None` when the bound passed first (for a caller
/// that says more than [`until_some`] can about what it found instead).
pub async fn first<T>(within: Duration, mut ready: impl AsyncFnMut() -> Option<T>) -> Option<T> {
    let started = Instant::now();
    loop {
        if let Some(v) = ready().await {
            return Some(v);
        }
        if started.elapsed() >= within {
            return None;
        }
        tokio::time::sleep(EVERY).await;
    }
}

/// Waits until `ready` gives a value, for at most `within`; returns it.
pub async fn until_some<T>(what: &str, within: Duration, ready: impl AsyncFnMut() -> Option<T>) -> T {
    first(within, ready).await.unwrap_or_else(|| panic!("waited {within:?} for {what}, and it never came"))
}

/// Waits until `ready` holds, for at most `within`.
pub async fn until(what: &str, within: Duration, mut ready: impl AsyncFnMut() -> bool) {
    until_some(what, within, async || ready().await.then_some(())).await
}

/// [`until_some`] for a condition that blocks (a Redis or Sentinel query, `/proc`), from a thread
/// that may block.
pub fn until_blocking<T>(what: &str, within: Duration, mut ready: impl FnMut() -> Option<T>) -> T {
    let started = Instant::now();
    loop {
        if let Some(v) = ready() {
            return v;
        }
        assert!(started.elapsed() < within, "waited {within:?} for {what}, and it never came");
        std::thread::sleep(EVERY);
    }
}
