//! The `fabric` capability: one allow-listed read or dry run to Fabric v4 through the host's
//! client. A create never passes here (see `confirmation::Approval`).

use std::future::Future;

use super::call_state::CallState;
use crate::bindings::fabric;
use crate::fabric_client::{ApiRequest, ApiResponse, Method, RouteClass, SendError};

impl fabric::Host for CallState {
    async fn send(&mut self, req: fabric::Request) -> wasmtime::Result<Result<fabric::Response, fabric::Error>> {
        let request = ApiRequest {
            method: match req.method {
                fabric::Method::Get => Method::Get,
                fabric::Method::Post => Method::Post,
            },
            path: req.path,
            query: req.query,
            body: req.body,
        };
        let client = self.fabric.clone();
        let cancel = self.cancel.clone();
        let outcome = match client.route_class(&request) {
            // A dry run is the slow, consequential step worth a progress notification.
            Ok(class) => {
                let step = (class == RouteClass::DryRun).then_some("Fabric dry run");
                let send = client.send_classified(&request, class, &cancel);
                self.reporting(step, &request.path, send).await
            }
            Err(refused) => Err(refused),
        };
        if let Err(SendError::Refused(why)) = &outcome {
            tracing::warn!(method = %request.method, path = %request.path, "refused component request: {why}");
        }
        Ok(to_wit(outcome))
    }
}

impl CallState {
    /// Awaits `send` as host time, telling the client about `step` (when the call has a progress
    /// token) before and after.
    pub(super) async fn reporting(
        &mut self,
        step: Option<&'static str>,
        path: &str,
        send: impl Future<Output = Result<ApiResponse, SendError>>,
    ) -> Result<ApiResponse, SendError> {
        let progress = self.progress.clone().zip(step);
        self.meter
            .outside_guest(async {
                if let Some((p, step)) = &progress {
                    p.report(format!("{step} in flight: POST {path}")).await;
                }
                let outcome = send.await;
                if let Ok(r) = &outcome {
                    self.correlation_ids.push(&r.correlation_id);
                }
                crate::metrics::metrics().fabric_answer(match &outcome {
                    Ok(r) => crate::metrics::status_class(r.status),
                    Err(SendError::Timeout) => "timeout",
                    Err(SendError::Transport(_)) => "transport",
                    Err(SendError::Refused(_)) => "refused",
                    Err(SendError::Cancelled) => "cancelled",
                    Err(SendError::Unavailable(_)) => "unavailable",
                });
                if let Some((p, step)) = &progress {
                    let how = match &outcome {
                        Ok(r) => format!("answered HTTP {}", r.status),
                        Err(e) => format!("failed: {e:?}"),
                    };
                    p.report(format!("{step} {how}")).await;
                }
                outcome
            })
            .await
    }
}

/// The client's outcome in the WIT's terms (its errors already are).
pub(super) fn to_wit(outcome: Result<ApiResponse, SendError>) -> Result<fabric::Response, fabric::Error> {
    outcome.map(|r| fabric::Response { status: r.status, body: r.body, correlation_id: Some(r.correlation_id) })
}
