//! The `fabric` capability: one allow-listed request to Fabric v4 through the host's client.

use super::CallState;
use crate::component::bindings::fabric;
use crate::fabric_client::{ApiRequest, Method, RouteClass, SendError};

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
        // Dry runs and creates are the slow, consequential steps worth a progress notification.
        let class = client.route_class(&request);
        let step = match class {
            Ok(RouteClass::DryRun) => Some("Fabric dry run"),
            Ok(RouteClass::Create) => Some("Fabric create"),
            _ => None,
        };
        let progress = self.progress.clone().zip(step);
        let outcome = self
            .meter
            .outside_guest(async {
                if let Some((p, step)) = &progress {
                    p.report(format!("{step} in flight: POST {}", request.path)).await;
                }
                let outcome = match &class {
                    Ok(class) => client.send_classified(&request, *class, &cancel).await,
                    Err(refused) => Err(refused.clone()),
                };
                if let Some((p, step)) = &progress {
                    let how = match &outcome {
                        Ok(r) => format!("answered HTTP {}", r.status),
                        Err(e) => format!("failed: {e:?}"),
                    };
                    p.report(format!("{step} {how}")).await;
                }
                outcome
            })
            .await;
        if let Err(SendError::Refused(why)) = &outcome {
            tracing::warn!(method = %request.method, path = %request.path, "refused component request: {why}");
        }
        Ok(match outcome {
            Ok(r) => Ok(fabric::Response { status: r.status, body: r.body, correlation_id: Some(r.correlation_id) }),
            Err(SendError::Refused(s)) => Err(fabric::Error::Refused(s)),
            Err(SendError::Cancelled) => Err(fabric::Error::Cancelled),
            Err(SendError::Unavailable(s)) => Err(fabric::Error::Unavailable(s)),
            Err(SendError::Timeout) => Err(fabric::Error::Timeout),
            Err(SendError::Transport(s)) => Err(fabric::Error::Transport(s)),
        })
    }
}
