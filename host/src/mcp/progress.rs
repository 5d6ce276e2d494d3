//! Progress notifications for slow Fabric steps (a dry run or a create in flight), sent only when
//! the client asked for progress with a progress token.

use std::sync::atomic::{AtomicU32, Ordering};

use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::service::{Peer, RoleServer};

pub(crate) struct Progress {
    peer: Peer<RoleServer>,
    token: ProgressToken,
    step: AtomicU32,
}

impl Progress {
    pub(crate) fn new(peer: Peer<RoleServer>, token: ProgressToken) -> Self {
        Progress { peer, token, step: AtomicU32::new(0) }
    }

    /// Sends the next step; a failure to notify never affects the call.
    pub(crate) async fn send(&self, message: String) {
        let step = self.step.fetch_add(1, Ordering::Relaxed) + 1;
        let param = ProgressNotificationParam::new(self.token.clone(), step as f64).with_message(message);
        if let Err(e) = self.peer.notify_progress(param).await {
            tracing::debug!("progress notification not delivered: {e}");
        }
    }
}

impl crate::capabilities::StepReporter for Progress {
    fn report(&self, message: String) -> futures_util::future::BoxFuture<'_, ()> {
        Box::pin(self.send(message))
    }
}
