//! The `fabric` capability: one allow-listed read or dry run to Fabric v4 through the host's
//! client. A create never passes here (see `confirmation::Approval`).

use std::future::Future;
use std::sync::Arc;

use equinix_broker_contract::ChangeType;

use super::call_facts::{CallFacts, CorrelationIds, GuestMeter};
use super::policy_check::{Judge, PolicyCtx};
use crate::approval::Validation;
use crate::bindings::fabric;
use crate::exact_json;
use crate::fabric_client::{ApiRequest, ApiResponse, CreateRoute, FabricClient, Method, RouteClass, SendError};
use crate::oauth::Scope;
use crate::plan::{self, Plan};
use crate::policy::Facts;

/// The `fabric` interface's part of a call: the client, the correlation ids it collected, and
/// the create dry runs Fabric answered 2xx, not yet bound to a stored proposal.
pub(crate) struct FabricCtx {
    pub(super) client: Arc<FabricClient>,
    pub(super) correlation_ids: CorrelationIds,
    pub(super) validations: Vec<Validation>,
}

impl FabricCtx {
    pub(super) fn new(client: Arc<FabricClient>, correlation_ids: CorrelationIds) -> Self {
        FabricCtx { client, correlation_ids, validations: Vec::new() }
    }
}

/// What the `fabric` interface reaches of a call.
pub struct FabricView<'a> {
    pub(super) call: &'a CallFacts,
    pub(super) fabric: &'a mut FabricCtx,
    pub(super) policy: &'a mut PolicyCtx,
    pub(super) meter: &'a mut GuestMeter,
    /// The call has an audit log to record the policy's decisions in.
    pub(super) audited: bool,
}

impl fabric::Host for FabricView<'_> {
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
        let client = self.fabric.client.clone();
        let outcome = match client.route_class(&request) {
            // A dry run is the slow, consequential step worth a progress notification.
            Ok(RouteClass::DryRun(route)) => self.dry_run(&request, route).await,
            Ok(class) => {
                let cancel = self.call.cancel.clone();
                let send = client.send_classified(&request, class, &cancel);
                self.sending().send(None, &request.path, send).await
            }
            Err(refused) => Err(refused),
        };
        if let Err(SendError::Refused(why)) = &outcome {
            tracing::warn!(method = %request.method, path = %request.path, "refused component request: {why}");
        }
        Ok(to_wit(outcome))
    }
}

/// How many of a denied body's metro codes the host asks Fabric about.
const METROS_ASKED: usize = 4;

impl FabricView<'_> {
    fn judge(&mut self) -> Judge<'_> {
        Judge { call: self.call, policy: self.policy, client: &self.fabric.client, meter: self.meter }
    }

    fn sending(&mut self) -> Sending<'_> {
        Sending { call: self.call, ids: &self.fabric.correlation_ids, meter: self.meter }
    }

    /// A create dry run: judged by the operator's policy before it is sent (and again with the
    /// metros Fabric's answer names), and recorded as this call's validation of its request
    /// when Fabric answers 2xx.
    async fn dry_run(&mut self, request: &ApiRequest, route: CreateRoute) -> Result<ApiResponse, SendError> {
        let body = request.body.as_deref().unwrap_or_default();
        let tree = exact_json::parse(body).map_err(|why| {
            SendError::Refused(format!("{why}; a create the form could not show is not dry-run either"))
        })?;
        let created = route.change_type();
        // the one reading of the bytes: the form shows it, the policy judges it, the member types
        // are checked on it and the plan reads it beside the dry run
        let value = tree.to_value();
        if let Some(wrong) = equinix_broker_contract::fields::wrong_type(created, &value) {
            // Fabric would refuse it, and the plan could not read it: no dry run, no question
            return Err(SendError::Refused(format!(
                "Fabric's schema for a {} refuses this create body: {wrong}; no dry run was sent",
                created.noun()
            )));
        }
        if !self.call.scopes.allows(Scope::Propose) {
            // a read-only token sends Fabric no create of any kind, whatever the tool is called
            let why = "the principal's access token does not grant proposing changes, so no create dry run is sent";
            return Err(SendError::Refused(why.into()));
        }
        let change_type = created.as_str();
        let request_sha256 = equinix_broker_contract::request_sha256(change_type, body);
        // the policy judges the same reading of the bytes that the form will show
        let facts = self.judge().policed().then(|| Facts::of(created, &tree, &request_sha256));
        // what the policy placed the request in, kept (rather than all its facts) across the dry run
        let placed = match facts {
            Some(_) if !self.audited => {
                let why = "this server has no audit log, so no policy decision can be recorded";
                return Err(SendError::Refused(why.into()));
            }
            Some(facts) => {
                let named: Vec<String> = facts.metros.iter().cloned().collect();
                let facts = self.judge().place(facts, &[]).await.map_err(SendError::Refused)?;
                if let Err(denied) = self.judge().judge("dry_run", change_type, &facts, None).await {
                    return self.denied_dry_run(request, route, denied, &named).await;
                }
                Some((facts.metros, facts.metro_unknown))
            }
            None => None,
        };
        let (client, cancel) = (self.fabric.client.clone(), self.call.cancel.clone());
        // the plan's reads go beside the dry run, not after it: a propose waits for the slower of
        // the two, and reads whose dry run fails are dropped unread
        let reads = PlanReads::start(&client, &cancel, created, &value);
        let send = client.send_classified(request, RouteClass::DryRun(route), &cancel);
        let answer = self.sending().send(Some("Fabric dry run"), &request.path, send).await?;
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
                let mut facts = self
                    .judge()
                    .place(Facts::of(created, &tree, &request_sha256), &[])
                    .await
                    .map_err(SendError::Refused)?;
                facts.metros.extend(named);
                self.judge().judge("dry_run", change_type, &facts, None).await.map_err(SendError::Denied)?;
                metros = facts.metros;
            }
            learned = metros.into_iter().collect();
        }
        let plan = self.plan(reads, created, &value, &request_sha256).await;
        let mut validation = Validation::new(request_sha256, self.call.clock.now_ms(), learned);
        validation.plan = plan;
        self.fabric.validations.push(validation);
        Ok(answer)
    }

    /// The plan of a request Fabric just validated: what its bytes name, resolved by the host's
    /// own reads (at once, each bounded), never from the component's words. Host time.
    async fn plan(
        &mut self,
        reads: PlanReads,
        change_type: ChangeType,
        body: &serde_json::Value,
        request_sha256: &str,
    ) -> Option<Plan> {
        let (answers, over) = self.meter.outside_guest(reads.answers()).await;
        let read_at = crate::audit::rfc3339(self.call.clock.now_ms());
        let input = plan::compose::Input { change_type, body, request_sha256, answers: &answers, over, read_at };
        Some(plan::compose::compose(input))
    }

    /// A dry run the policy denied. When the body names a metro Fabric does not know, Fabric's
    /// own answer is sent back instead: it says the metro does not exist and the component points
    /// the agent at the metro list, where the policy's word on a place that does not exist would
    /// send the agent to the operator. The dry run creates nothing, records no validation, and a
    /// 2xx from it (a metro that exists after all) leaves the denial standing.
    async fn denied_dry_run(
        &mut self,
        request: &ApiRequest,
        route: CreateRoute,
        denied: String,
        named: &[String],
    ) -> Result<ApiResponse, SendError> {
        if !self.names_unknown_metro(named).await {
            return Err(SendError::Denied(denied));
        }
        let (client, cancel) = (self.fabric.client.clone(), self.call.cancel.clone());
        let send = client.send_classified(request, RouteClass::DryRun(route), &cancel);
        let answer = self.sending().send(Some("Fabric dry run"), &request.path, send).await?;
        match answer.status {
            200..=299 => Err(SendError::Denied(denied)),
            _ => Ok(answer),
        }
    }

    /// Whether Fabric refuses one of `metros` (codes as a body names them) as no metro of its.
    /// Only plain metro codes are asked about, and only the first [`METROS_ASKED`]: a body of odd
    /// or countless codes (a hostile component's) keeps its denial and sends nothing.
    async fn names_unknown_metro(&mut self, metros: &[String]) -> bool {
        let codes = metros.iter().filter(|m| m.as_str() != crate::policy::UNKNOWN_METRO);
        for code in codes.take(METROS_ASKED) {
            if code.is_empty() || code.len() > 8 || !code.chars().all(|c| c.is_ascii_alphanumeric()) {
                return false;
            }
            let answer = self.judge().policy_read(format!("/fabric/v4/metros/{code}")).await;
            // only Fabric's plain "no such metro" counts; a fault or a limit leaves the denial alone
            if answer.is_ok_and(|a| matches!(a.status, 400 | 404)) {
                return true;
            }
        }
        false
    }
}

/// Sending on a call's behalf: the time counted as the host's, the answer's correlation id kept,
/// Fabric's answer counted, and the client told of a slow step when it asked to hear.
pub(super) struct Sending<'a> {
    pub call: &'a CallFacts,
    pub ids: &'a CorrelationIds,
    pub(crate) meter: &'a mut GuestMeter,
}

impl Sending<'_> {
    /// Awaits `send` as host time, telling the client about `step` (when the call has a progress
    /// token) before and after.
    pub(super) async fn send(
        &mut self,
        step: Option<&'static str>,
        path: &str,
        send: impl Future<Output = Result<ApiResponse, SendError>>,
    ) -> Result<ApiResponse, SendError> {
        let progress = self.call.progress.clone().zip(step);
        let ids = self.ids;
        self.meter
            .outside_guest(async {
                if let Some((p, step)) = &progress {
                    p.report(format!("{step} in flight: POST {path}")).await;
                }
                let outcome = send.await;
                if let Ok(r) = &outcome {
                    ids.push(&r.correlation_id);
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

/// The plan's reads of one request, under way on a task of their own beside its dry run; dropped
/// before their answers are taken (the dry run failed, the call ended), they are stopped.
struct PlanReads(tokio::task::JoinHandle<(plan::reads::Answers, usize)>);

impl PlanReads {
    fn start(
        client: &Arc<FabricClient>,
        cancel: &tokio_util::sync::CancellationToken,
        change_type: ChangeType,
        body: &serde_json::Value,
    ) -> Self {
        let (client, cancel, body) = (client.clone(), cancel.clone(), body.clone());
        PlanReads(tokio::spawn(async move { plan::resolve::read_all(&client, &cancel, change_type, &body).await }))
    }

    /// Their answers, and how many reads were over the limit; none if the task failed.
    async fn answers(mut self) -> (plan::reads::Answers, usize) {
        (&mut self.0).await.unwrap_or_else(|e| {
            tracing::warn!("the plan's reads did not finish: {e}");
            (plan::reads::Answers::new(), 0)
        })
    }
}

impl Drop for PlanReads {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// The client's outcome in the WIT's terms, case for case.
pub(super) fn to_wit(outcome: Result<ApiResponse, SendError>) -> Result<fabric::Response, fabric::Error> {
    outcome
        .map(|r| fabric::Response { status: r.status, body: r.body, correlation_id: Some(r.correlation_id) })
        .map_err(|e| match e {
            SendError::Refused(why) => fabric::Error::Refused(why),
            SendError::Denied(why) => fabric::Error::Denied(why),
            SendError::Cancelled => fabric::Error::Cancelled,
            SendError::Unavailable(why) => fabric::Error::Unavailable(why),
            SendError::Timeout => fabric::Error::Timeout,
            SendError::Transport(why) => fabric::Error::Transport(why),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A send that may have reached Fabric must reach the component as one that may have: a
    /// timeout read as "unavailable" would let it retry a create that was made.
    #[test]
    fn each_outcome_reaches_the_component_case_for_case() {
        for e in [
            SendError::Refused("off the allow-list".into()),
            SendError::Denied("the policy".into()),
            SendError::Cancelled,
            SendError::Unavailable("no token".into()),
            SendError::Timeout,
            SendError::Transport("reset".into()),
        ] {
            let said = format!("{e:?}");
            let wit = to_wit(Err(e)).expect_err("an error stays an error");
            assert_eq!(format!("{wit:?}"), said, "the WIT's case and words are the client's");
        }
        let answer = ApiResponse { status: 201, body: "{}".into(), correlation_id: "c-1".into() };
        let r = to_wit(Ok(answer)).expect("an answer stays an answer");
        assert_eq!((r.status, r.body.as_str(), r.correlation_id.as_deref()), (201, "{}", Some("c-1")));
    }
}
