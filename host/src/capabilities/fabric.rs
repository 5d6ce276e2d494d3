//! The `fabric` capability: one allow-listed read or dry run to Fabric v4 through the host's
//! client. A create never passes here (see `confirmation::Approval`).

use std::future::Future;

use super::binding::Validation;
use super::call_state::CallState;
use crate::bindings::fabric;
use crate::exact_json;
use crate::fabric_client::{ApiRequest, ApiResponse, Method, RouteClass, SendError, allow_list};
use crate::oauth::Scope;
use crate::policy::Facts;

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
            Ok(RouteClass::DryRun) => self.dry_run(&request).await,
            Ok(class) => {
                let send = client.send_classified(&request, class, &cancel);
                self.reporting(None, &request.path, send).await
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
    /// A create dry run: judged by the operator's policy before it is sent (and again with the
    /// metros Fabric's answer names), and recorded as this call's validation of its request
    /// when Fabric answers 2xx.
    async fn dry_run(&mut self, request: &ApiRequest) -> Result<ApiResponse, SendError> {
        let body = request.body.as_deref().unwrap_or_default();
        let tree = exact_json::parse(body).map_err(|why| {
            SendError::Refused(format!("{why}; a create the form could not show is not dry-run either"))
        })?;
        if !self.scopes.allows(Scope::Propose) {
            // a read-only token sends Fabric no create of any kind, whatever the tool is called
            let why = "the principal's access token does not grant proposing changes, so no create dry run is sent";
            return Err(SendError::Refused(why.into()));
        }
        let change_type = allow_list::check_create(&request.path, true).map_err(|r| SendError::Refused(r.0))?;
        let request_sha256 = equinix_broker_contract::request_sha256(change_type, body);
        // the policy judges the same reading of the bytes that the form will show
        let facts = self.policed().then(|| Facts::of(change_type, &tree, &request_sha256));
        drop(tree);
        // what the policy placed the request in, kept (rather than all its facts) across the dry run
        let placed = match facts {
            Some(_) if self.audit.is_none() => {
                let why = "this server has no audit log, so no policy decision can be recorded";
                return Err(SendError::Refused(why.into()));
            }
            Some(facts) => {
                let facts = self.place(facts, &[]).await.map_err(SendError::Refused)?;
                self.judge("dry_run", change_type, &facts, None).await.map_err(SendError::Denied)?;
                Some((facts.metros, facts.metro_unknown))
            }
            None => None,
        };
        let client = self.fabric.clone();
        let cancel = self.cancel.clone();
        let send = client.send_classified(request, RouteClass::DryRun, &cancel);
        let answer = self.reporting(Some("Fabric dry run"), &request.path, send).await?;
        if !(200..300).contains(&answer.status) {
            return Ok(answer);
        }
        let mut learned = Vec::new();
        if let Some((mut metros, unplaced)) = placed {
            // Fabric's answer can only add to what the host placed itself (the body's metro codes,
            // the ports' and Cloud Routers'); it is read when an access point was left unplaced
            let named = match unplaced {
                true => serde_json::from_str(&answer.body).map(|v| Facts::metros_named(&v)).unwrap_or_default(),
                false => Default::default(),
            };
            if !named.iter().all(|m| metros.contains(m)) {
                let mut facts =
                    self.facts(change_type, body, &request_sha256, &[]).await.map_err(SendError::Refused)?;
                facts.metros.extend(named);
                self.judge("dry_run", change_type, &facts, None).await.map_err(SendError::Denied)?;
                metros = facts.metros;
            }
            learned = metros.into_iter().collect();
        }
        self.validations.push(Validation::new(request_sha256, self.clock.now_ms(), learned));
        Ok(answer)
    }

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
                    Err(SendError::Denied(_)) => "denied",
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
