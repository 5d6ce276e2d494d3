//! Graceful shutdown: on SIGINT/SIGTERM an HTTP server first stops being ready (`/readyz`
//! answers 503 `draining`) while it still serves, long enough for a load balancer's probes to
//! see it and send new calls elsewhere; then new tool calls are refused, calls in flight (a
//! person may be reading a confirmation form) get a grace period to finish, and whatever is
//! still running after it is cancelled through its own cancellation token, so a confirmation
//! reports `call_cancelled` (and is audited) instead of vanishing with the process.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio_util::sync::CancellationToken;
use tokio_util::task::{TaskTracker, task_tracker::TaskTrackerToken};

/// How long cancelled calls get to write their result and audit line after the grace period.
const AFTER_CANCEL: Duration = Duration::from_secs(5);

/// The cancellation of every admitted call, so the end of the grace period can reach each.
type Running = Arc<Mutex<HashMap<u64, CancellationToken>>>;

#[derive(Default)]
pub struct Lifecycle {
    /// Set when shutdown begins: readiness fails from then on, before any call is refused.
    unready: AtomicBool,
    /// Closed when new calls stop being taken.
    calls: TaskTracker,
    running: Running,
    next_id: AtomicU64,
}

/// One admitted call: counted until dropped; `cancel` fires when the client cancels the call or
/// the grace period runs out.
pub(crate) struct InFlight {
    _counted: TaskTrackerToken,
    pub cancel: CancellationToken,
    id: u64,
    running: Running,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.running.lock().unwrap().remove(&self.id);
    }
}

/// What a drain did.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Drained {
    pub in_flight: usize,
    /// Calls still running when the grace period ended (they were cancelled).
    pub cancelled: usize,
}

impl Lifecycle {
    /// Admits a call unless shutdown has begun. `client` is the call's own cancellation.
    pub(crate) fn begin(&self, client: &CancellationToken) -> Option<InFlight> {
        if self.calls.is_closed() {
            return None;
        }
        // A child: the client's cancellation reaches the call, and cancelling it at shutdown
        // leaves the client's own token (which rmcp owns) alone.
        let cancel = client.child_token();
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        self.running.lock().unwrap().insert(id, cancel.clone());
        Some(InFlight { _counted: self.calls.token(), cancel, id, running: self.running.clone() })
    }

    pub(crate) fn in_flight(&self) -> usize {
        self.calls.len()
    }

    /// Whether shutdown has begun (a load balancer should look elsewhere; new calls are still
    /// served until the drain's time is up).
    pub(crate) fn is_draining(&self) -> bool {
        self.unready.load(Ordering::Relaxed) || self.calls.is_closed()
    }

    /// Fails readiness from now on; calls are still taken.
    pub(crate) fn stop_being_ready(&self) {
        self.unready.store(true, Ordering::Relaxed);
    }

    /// Refuses new calls, waits up to `grace` for the running ones, then cancels the rest and
    /// gives them a few seconds to report.
    pub(crate) async fn drain(&self, grace: Duration) -> Drained {
        self.stop_being_ready();
        self.calls.close();
        let in_flight = self.calls.len();
        let mut cancelled = 0;
        if tokio::time::timeout(grace, self.calls.wait()).await.is_err() {
            cancelled = self.calls.len();
            for call in self.running.lock().unwrap().values() {
                call.cancel();
            }
            let _ = tokio::time::timeout(AFTER_CANCEL, self.calls.wait()).await;
        }
        tracing::info!(in_flight, cancelled, "calls drained");
        Drained { in_flight, cancelled }
    }
}

/// Makes a file-size limit (`ulimit -f`) an error instead of death: SIGXFSZ would kill the
/// process mid-write, possibly between a create's audit line and its outcome; with it caught,
/// the write fails with EFBIG and the audit log's rules apply (nothing is approved or sent
/// without its record). Call once, inside the runtime.
pub(crate) fn survive_file_size_limit() {
    #[cfg(target_os = "linux")]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::from_raw(libc::SIGXFSZ)) {
            Ok(mut xfsz) => {
                tokio::spawn(async move {
                    while xfsz.recv().await.is_some() {
                        tracing::error!("a write exceeded the file size limit (SIGXFSZ); the write failed");
                    }
                });
            }
            Err(e) => tracing::warn!("cannot catch SIGXFSZ: {e}"),
        }
    }
}

/// SIGINT and SIGTERM, caught from the moment [`Signals::catch`] returns. Made before the
/// server says it listens: a supervisor (or a test) that sends SIGTERM as soon as it reads that
/// line must get the drain, not the default action, which kills the process mid-call.
pub(crate) struct Signals {
    #[cfg(unix)]
    interrupt: tokio::signal::unix::Signal,
    #[cfg(unix)]
    terminate: tokio::signal::unix::Signal,
}

impl Signals {
    /// Installs the handlers now (inside the runtime), not at the first poll.
    pub(crate) fn catch() -> anyhow::Result<Self> {
        #[cfg(unix)]
        {
            use anyhow::Context;
            use tokio::signal::unix::{SignalKind, signal};
            Ok(Self {
                interrupt: signal(SignalKind::interrupt()).context("catching SIGINT")?,
                terminate: signal(SignalKind::terminate()).context("catching SIGTERM")?,
            })
        }
        #[cfg(not(unix))]
        Ok(Self {})
    }

    /// Forgets signals already delivered and not yet taken by [`Signals::next`].
    pub(crate) fn forget_pending(&mut self) {
        use futures_util::FutureExt;
        while self.next().now_or_never().is_some() {}
    }

    /// Resolves on the next SIGINT or SIGTERM, naming it.
    pub(crate) async fn next(&mut self) -> &'static str {
        #[cfg(unix)]
        {
            tokio::select! {
                _ = self.interrupt.recv() => "SIGINT",
                _ = self.terminate.recv() => "SIGTERM",
            }
        }
        #[cfg(not(unix))]
        {
            let _ = tokio::signal::ctrl_c().await;
            "Ctrl-C"
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The handlers are in place when `catch` returns, not at the first poll: a SIGTERM sent in
    /// between (the old lazy future's window) would have killed this test process.
    #[cfg(unix)]
    #[tokio::test]
    async fn a_signal_sent_right_after_the_catch_is_caught() {
        let mut signals = Signals::catch().unwrap();
        let sent = std::process::Command::new("kill").args(["-TERM", &std::process::id().to_string()]).status();
        assert!(sent.unwrap().success());
        let caught = tokio::time::timeout(std::time::Duration::from_secs(10), signals.next()).await;
        assert_eq!(caught.expect("the signal reaches the handle"), "SIGTERM");
    }

    #[test]
    fn not_ready_comes_before_refusing_calls() {
        let life = Lifecycle::default();
        assert!(!life.is_draining());
        life.stop_being_ready();
        assert!(life.is_draining(), "readiness fails at once");
        assert!(life.begin(&CancellationToken::new()).is_some(), "while calls are still taken");
    }

    #[tokio::test]
    async fn a_drain_waits_for_calls_that_finish_within_the_grace() {
        let life = std::sync::Arc::new(Lifecycle::default());
        let call = life.begin(&CancellationToken::new()).unwrap();
        // the call ends once the drain has begun (no call is admitted any more), within its grace
        let watching = life.clone();
        let finish = tokio::spawn(async move {
            while !watching.is_draining() {
                tokio::task::yield_now().await;
            }
            drop(call);
        });
        let drained = life.drain(Duration::from_secs(10)).await;
        assert_eq!(drained, Drained { in_flight: 1, cancelled: 0 });
        assert!(life.begin(&CancellationToken::new()).is_none(), "no call is admitted after shutdown began");
        finish.await.unwrap();
    }

    #[tokio::test]
    async fn calls_still_running_after_the_grace_are_cancelled_and_may_report() {
        let life = std::sync::Arc::new(Lifecycle::default());
        let call = life.begin(&CancellationToken::new()).unwrap();
        let cancel = call.cancel.clone();
        let reporter = tokio::spawn(async move {
            cancel.cancelled().await;
            drop(call); // "reports" and ends
        });
        let drained = life.drain(Duration::from_millis(20)).await;
        assert_eq!(drained, Drained { in_flight: 1, cancelled: 1 });
        reporter.await.unwrap();
    }

    #[tokio::test]
    async fn the_clients_cancellation_reaches_the_call() {
        let life = Lifecycle::default();
        let client = CancellationToken::new();
        let call = life.begin(&client).unwrap();
        client.cancel();
        tokio::time::timeout(Duration::from_secs(5), call.cancel.cancelled()).await.unwrap();
    }
}
