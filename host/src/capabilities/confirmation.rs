//! The host side of the `confirmation` interface: `wit/broker.wit` states what it grants and the
//! rules the host keeps for every component; [`crate::approval`] holds those rules, and this
//! module is the I/O around them. `prepare` gathers what [`approval::admit`] checks (which
//! refuses what may not be asked and renders the [`Form`] from the request bytes) and runs the
//! policy's reads for [`approval::policed`], `ask` puts it before the person through the call's
//! [`Confirmer`] and mints the [`Approval`], and `HostApproval::execute` sends its create once.

use std::sync::Arc;

use wasmtime::component::{Resource, ResourceTable};

use super::call_facts::{CallFacts, GuestMeter};
use super::confirmer::{Confirmer, Fallback, FromPage, PagePending, Reached};
use super::fabric::{FabricCtx, Sending, to_wit};
use super::policy_check::{Judge, PolicyCtx};
use crate::approval::{self, Admitted, Asked, Asker, Binding, Form, Mint, Policed, Redeemed};
use crate::approval_page::state::{Decided, Outcome, State};
use crate::audit::events::{ApprovalEvent, Counted};
use crate::audit::{AuditLog, Event};
pub(crate) use crate::bindings::Approval;
use crate::bindings::confirmation::{self, Answer, Context, CreateRequest, Delivery, Status};
use crate::bindings::fabric;
use crate::fabric_client::{ApiResponse, SendError};
use crate::oauth::Scope;
use crate::policy::{Approving, Facts};
use crate::proposals::ProposalStore;

/// The contract's name of a status, for results, the audit log and metrics.
pub(crate) fn status_name(status: Status) -> &'static str {
    equinix_broker_contract::ConfirmStatus::from(status).as_str()
}

/// The question a call left waiting for its person: what the MCP front sends instead of the
/// component's result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Awaiting {
    /// A 2026-07-28 first round's form, for an input request (boxed: a form with its plan is
    /// far larger than a page's question).
    Input(Box<Form>),
    /// A question on the approval page.
    Page(PagePending),
}

/// The `confirmation` interface's part of a call: who to ask, whether it asked, the approvals it
/// minted (the WIT resources the component holds handles to), and where they are recorded.
pub(crate) struct ConfirmCtx {
    confirmer: Arc<dyn Confirmer>,
    /// The road to the approval page, when the policy may allow the create only there (built
    /// only if it does).
    page_instead: Option<Fallback>,
    asked: bool,
    table: ResourceTable,
    /// Where approvals and creates are recorded before they take effect (none: nothing can be
    /// approved).
    audit: Option<Arc<AuditLog>>,
    /// The operator's opt-in to creates nobody confirmed.
    opt_in: bool,
    /// This call sent a create to Fabric.
    pub(super) create_sent: bool,
    /// The operator's notifications of a create's outcome.
    pub(super) notifier: Option<Arc<crate::notify::Notifier>>,
    /// The question this call left waiting, if it did.
    pub(super) awaiting: Option<Awaiting>,
    /// Where the approval page's records are, to follow a decision made there to its end.
    store: Arc<ProposalStore>,
    /// What the host tells the agent of a decision this call collected from the page.
    pub(super) page_said: Option<PageSaid>,
}

/// A page decision this call collected, and what became of it in the call: the host's own words
/// on the agent's result ([`PageSaid::value`]).
#[derive(Clone, Debug)]
pub(crate) struct PageSaid {
    pub from: FromPage,
    /// The approval came after the proposal's time had ended, so it approved nothing.
    pub late: bool,
    pub outcome: Option<Outcome>,
}

impl PageSaid {
    /// The `page_decision` member the host adds to the result, and for a late approval the
    /// message and next step in its place (the component could only say it got no approval).
    pub(crate) fn value(&self, now_ms: u64) -> serde_json::Value {
        let d = &self.from.decision;
        let state = State::of(self.from.expires_at_ms, Some(d.decided()), self.outcome.as_ref(), now_ms);
        // a late approval expired whatever the clock says now: nothing can collect it again
        let state = if self.late {
            State::Expired { decision: Some(d.decided()), at_ms: self.from.expires_at_ms }
        } else {
            state
        };
        let who = |d: Decided| crate::approval_page::people::words(d.approver, d.named, "");
        let said = state.sentence(&who, &|ms| crate::audit::rfc3339(ms));
        let mut v = serde_json::json!({
            "state": state.name(),
            "decision": if d.approve { "approved" } else { "declined" },
            "by": who(d.decided()),
            "by_id": d.approver,
            "at": crate::audit::rfc3339(d.at_ms),
            "said": said,
        });
        if !d.reason.is_empty() {
            v["reason"] = serde_json::json!(d.reason);
            v["reason_is"] = serde_json::json!("the approver's own words");
        }
        if !d.approvals.is_empty() {
            // under a quorum: each approval that made it whole, the approvers' words their own
            let approvals: Vec<serde_json::Value> = d
                .approvals
                .iter()
                .map(|a| {
                    let mut one = serde_json::json!({
                        "by": crate::approval_page::people::words(&a.approver, a.named.as_ref(), ""),
                        "by_id": a.approver,
                        "groups": a.groups,
                        "at": crate::audit::rfc3339(a.at_ms),
                        "with": a.approved_with,
                    });
                    if !a.reason.is_empty() {
                        one["comment"] = serde_json::json!(a.reason);
                    }
                    one
                })
                .collect();
            v["approvals"] = serde_json::json!(approvals);
            v["quorum"] = serde_json::json!(d.quorum);
        }
        v
    }
}

impl ConfirmCtx {
    pub(super) fn new(
        confirmer: Arc<dyn Confirmer>,
        page_instead: Option<Fallback>,
        audit: Option<Arc<AuditLog>>,
        opt_in: bool,
        store: Arc<ProposalStore>,
    ) -> Self {
        ConfirmCtx {
            confirmer,
            page_instead,
            asked: false,
            table: ResourceTable::new(),
            audit,
            opt_in,
            create_sent: false,
            awaiting: None,
            notifier: None,
            store,
            page_said: None,
        }
    }

    /// Writes what became of the page's request `page` (a store that does not answer is logged:
    /// the create's result reaches the agent whatever the page can show).
    async fn follow(&mut self, page: Option<&str>, outcome: Outcome, now_ms: u64) {
        let Some(id) = page else { return };
        let notes = crate::approval_page::record::Notes { store: &self.store, now_ms };
        if let Err(e) = notes.set_outcome(id, &outcome).await {
            tracing::warn!(page = %id, "the approval page does not show what became of its request: {e}");
        }
        if let Some(said) = self.page_said.as_mut().filter(|s| s.from.id == id) {
            said.outcome = Some(outcome);
        }
    }

    /// With the operator's notifications of a create's outcome.
    pub(super) fn notifying(mut self, notifier: Option<Arc<crate::notify::Notifier>>) -> Self {
        self.notifier = notifier;
        self
    }

    pub(super) fn audited(&self) -> bool {
        self.audit.is_some()
    }
}

/// What the `confirmation` interface reaches of a call: its own part, the proposals the store
/// interface found (an `ask` names one), the Fabric client (a create is checked and sent through
/// it) and the policy.
pub struct ConfirmView<'a> {
    pub(super) call: &'a CallFacts,
    pub(super) confirm: &'a mut ConfirmCtx,
    pub(super) redeemed: &'a [Redeemed],
    pub(super) fabric: &'a mut FabricCtx,
    pub(super) policy: &'a mut PolicyCtx,
    pub(super) meter: &'a mut GuestMeter,
}

/// A question the host may put before the person.
struct Prepared {
    form: Form,
    binding: Binding,
    approval: Approval,
}

impl ConfirmView<'_> {
    fn judge(&mut self) -> Judge<'_> {
        Judge { call: self.call, policy: self.policy, client: &self.fabric.client, meter: self.meter }
    }

    /// Checks a question before anyone sees it, in [`approval::admit`]'s order (who asks, the
    /// create, which proposal, the form, the audit log), then the operator's policy on the bytes
    /// about to be shown, which may send the person to the page instead ([`approval::policed`]).
    /// The form, its binding, and the approval it would mint.
    async fn prepare(&mut self, token: &str, request: &CreateRequest, context: &Context) -> Result<Prepared, String> {
        let asked = Asked {
            asker: Asker {
                asked_before: self.confirm.asked,
                may_confirm: self.call.scopes.allows(Scope::Confirm),
                tool: &self.call.tool.name,
                tool_may_ask: self.call.tool.may_ask,
            },
            create: || self.fabric.client.check_create(&request.path, &request.body),
            body: &request.body,
            token,
            principal: self.call.principal.as_str(),
            round: self.confirm.confirmer.round(),
            now_ms: self.call.clock.now_ms(),
            redeemed: self.redeemed,
            context,
            audited: self.confirm.audit.is_some(),
        };
        let Admitted { create, body, binding, mut form } = approval::admit(asked)?;
        let created = create.route().change_type();
        let change_type = created.as_str();
        if self.judge().policed() {
            let mut facts = Facts::of(created, &body, &form.subject.request_sha256);
            // the price the plan shown to the person was read with, never the component's
            facts.price = form.plan.as_ref().and_then(|p| p.priced.clone());
            let facts = self.judge().place(facts, &binding.learned_metros).await?;
            let approving = Approving { method: self.confirm.confirmer.method(), ..Approving::default() };
            let mut own = self.judge().judge("approval", change_type, &facts, Some(&approving)).await;
            // a quorum is met by named people, each deciding on the page: no other road meets it
            if own.is_ok() && approving.method != crate::approval_page::record::METHOD_PAGE {
                let requirement = self.judge().requirement(change_type, &facts).await;
                if !requirement.is_empty() {
                    own = Err(format!(
                        "it needs {}: approvals of named people, each given on the approval page",
                        requirement.needs().join("; ")
                    ));
                }
            }
            let policed = approval::policed(own, async || {
                let page = self.confirm.page_instead.take()?;
                let on_page = Approving { method: page.method, ..Approving::default() };
                let verdict = self.judge().judge("approval", change_type, &facts, Some(&on_page)).await;
                Some((page, verdict))
            });
            let permit = match policed.await? {
                Policed::Own(permit) => permit,
                Policed::Page(permit, page) => {
                    let road = (page.road)();
                    debug_assert_eq!(
                        road.round(),
                        self.confirm.confirmer.round(),
                        "the page's road answers in the rounds of the one it replaces"
                    );
                    self.confirm.confirmer = road;
                    permit
                }
            };
            if let Some(p) = permit {
                form.note_policy(&p.said());
            }
            form.policy_facts = Some(Arc::new(facts));
        }
        let approval = Approval {
            create,
            request_sha256: form.subject.request_sha256.clone(),
            token: token.to_string(),
            status: Status::Accepted,
            method: self.confirm.confirmer.method(),
            approver: None,
            plan: form.plan.clone(),
            page: None,
            policed: form.policy_facts.clone(),
        };
        Ok(Prepared { form, binding, approval })
    }

    /// Appends the event `event` to the audit log and waits until it is on disk.
    async fn record(&mut self, event: Event) -> Result<(), Unrecorded> {
        let Some(log) = self.confirm.audit.clone() else {
            return Err(Unrecorded::NoLog);
        };
        let record = event.at(self.call.clock.now_ms());
        Ok(self.meter.outside_guest(AuditLog::record(log, record)).await?)
    }

    /// What every audit record about `approval` says.
    fn about(&self, approval: &Approval) -> ApprovalEvent {
        ApprovalEvent {
            tool: self.call.tool.name.clone(),
            principal: self.call.principal.as_str().into(),
            change_type: approval.create.route().change_type().as_str().into(),
            request: format!("POST {}", approval.create.route().path()),
            request_sha256: approval.request_sha256.clone(),
            token: approval.token.clone(),
            human_status: status_name(approval.status).into(),
            method: approval.method.into(),
            approver: approval.approver.clone(),
            policy_decisions: self.policy.decisions.all(),
            outcome: None,
            http_status: None,
            correlation_id: None,
            fabric_uuid: None,
            error: None,
            plan_sha256: approval.plan.as_ref().map(crate::plan::Plan::sha256),
            plan: None,
            approvals: match (&self.confirm.page_said, &approval.page) {
                (Some(said), Some(page)) if &said.from.id == page => said
                    .from
                    .decision
                    .approvals
                    .iter()
                    .map(|a| Counted { approver: a.approver.clone(), decision_id: a.id.clone() })
                    .collect(),
                _ => Vec::new(),
            },
            quorum: match (&self.confirm.page_said, &approval.page) {
                (Some(said), Some(page)) if &said.from.id == page => said.from.decision.quorum.clone(),
                _ => Vec::new(),
            },
        }
    }
}

impl confirmation::Host for ConfirmView<'_> {
    fn current_delivery(&mut self) -> wasmtime::Result<Delivery> {
        Ok(self.confirm.confirmer.round())
    }

    async fn ask(
        &mut self,
        token: String,
        request: CreateRequest,
        context: Context,
    ) -> wasmtime::Result<Result<Answer, String>> {
        let prepared = self.prepare(&token, &request, &context).await;
        self.confirm.asked = true;
        let Prepared { form, binding, mut approval } = match prepared {
            Ok(p) => p,
            Err(why) => {
                tracing::warn!(tool = %self.call.tool.name, "refused to ask the person: {why}");
                // a decision already made on the page that this call would have collected: the
                // page says it came to nothing, and why
                if let Some(page) = self.confirm.confirmer.decided_page() {
                    let now = self.call.clock.now_ms();
                    let not_sent = Outcome::NotSent { at_ms: now, why: format!("the server refused it: {why}") };
                    self.confirm.follow(Some(&page), not_sent, now).await;
                }
                return Ok(Err(why));
            }
        };
        let (confirmer, cancel) = (self.confirm.confirmer.clone(), self.call.cancel.clone());
        let reached = if cancel.is_cancelled() {
            Reached::status(Status::CallCancelled)
        } else {
            // while a person reads the form, no sync should wait for this call's record
            let _away = self.confirm.audit.as_ref().map(AuditLog::away);
            match self.meter.outside_guest(confirmer.confirm(&form, &cancel)).await {
                Ok(reached) => reached,
                Err(not) => {
                    // said once: a store's words carry a fresh log reference each time they are told
                    let why = not.to_string();
                    tracing::warn!(tool = %self.call.tool.name, principal = %self.call.principal, "no form shown: {why}");
                    return Ok(Err(why));
                }
            }
        };
        // a question left on the page is counted by the MCP front, which knows what its client is
        // told (an input request, or approval_pending)
        let left_on_page = matches!(reached, Reached::AwaitsPage(_));
        let (status, approver, from_page) = match reached {
            Reached::Answer { status, approver, page } => (status, approver, page),
            Reached::NeedsInput => {
                self.confirm.awaiting = Some(Awaiting::Input(Box::new(form)));
                (Status::InputRequired, None, None)
            }
            Reached::AwaitsPage(pending) => {
                self.confirm.awaiting = Some(Awaiting::Page(pending));
                (Status::InputRequired, None, None)
            }
        };
        let page = from_page.as_ref().map(|p| p.id.clone());
        self.confirm.page_said = from_page.map(|from| PageSaid { from: *from, late: false, outcome: None });
        if !left_on_page {
            crate::metrics::metrics().confirmation(status_name(status));
        }
        match approval::may_mint(status, self.confirm.opt_in, &binding, self.call.clock.now_ms()) {
            Mint::Nothing => return Ok(Ok(Answer { status, approval: None })),
            Mint::TooLate => {
                tracing::warn!(tool = %self.call.tool.name, %token, "the answer came after the proposal's TTL: no approval");
                if let Some(said) = self.confirm.page_said.as_mut() {
                    said.late = true;
                }
                return Ok(Ok(Answer { status, approval: None }));
            }
            Mint::Approval { opt_in } => {
                approval.status = status;
                approval.approver = approver;
                approval.page = page;
                if opt_in {
                    approval.method = "opt_in";
                }
            }
        }
        let minted = ApprovalEvent { plan: approval.plan.clone(), ..self.about(&approval) };
        if let Err(e) = self.record(Event::ApprovalMinted(minted)).await {
            tracing::error!("no approval minted: the audit log failed: {e}");
            let why = format!("the audit log could not record the approval ({})", e.told());
            let now = self.call.clock.now_ms();
            self.confirm.follow(approval.page.as_deref(), Outcome::NotSent { at_ms: now, why }, now).await;
            return Ok(Err(format!(
                "the person's answer was {} but the audit log could not record the approval ({}), so nothing can be \
                 created",
                status_name(status),
                e.told()
            )));
        }
        let handle = self.confirm.table.push(approval)?;
        Ok(Ok(Answer { status, approval: Some(handle) }))
    }
}

/// Why an event is not in the audit log. Its Display names the file, for the operator's log; the
/// component, the agent and the approval page are told [`Unrecorded::told`], which does not.
#[derive(Debug, thiserror::Error)]
enum Unrecorded {
    #[error("this server has no audit log")]
    NoLog,
    #[error(transparent)]
    Failed(#[from] crate::audit::NotRecorded),
}

impl Unrecorded {
    fn told(&self) -> &str {
        match self {
            Unrecorded::NoLog => "this server has no audit log",
            Unrecorded::Failed(e) => e.reason(),
        }
    }
}

impl confirmation::HostApproval for ConfirmView<'_> {
    fn request_sha256(&mut self, approval: Resource<Approval>) -> wasmtime::Result<String> {
        Ok(self.confirm.table.get(&approval)?.request_sha256.clone())
    }

    async fn execute(
        &mut self,
        approval: Resource<Approval>,
    ) -> wasmtime::Result<Result<fabric::Response, fabric::Error>> {
        // Taking it out of the table is what makes it single use.
        let approval = self.confirm.table.delete(approval)?;
        if let Err(why) = self.still_allowed(&approval).await {
            crate::metrics::metrics().create("not_sent");
            let not_sent = ApprovalEvent { error: Some(why.clone()), ..self.about(&approval) };
            if let Err(e) = self.record(Event::CreateNotSent(not_sent)).await {
                tracing::error!("a create the policy stopped is not in the audit log: {e}");
            }
            let now = self.call.clock.now_ms();
            self.confirm.follow(approval.page.as_deref(), Outcome::NotSent { at_ms: now, why: why.clone() }, now).await;
            return Ok(Err(fabric::Error::Refused(format!("nothing was sent: {why}"))));
        }
        if let Err(e) = self.record(Event::CreateSending(self.about(&approval))).await {
            tracing::error!("create not sent: the audit log failed: {e}");
            crate::metrics::metrics().create("not_sent");
            let not_sent = ApprovalEvent { error: Some(format!("the audit log failed: {e}")), ..self.about(&approval) };
            let _ = self.record(Event::CreateNotSent(not_sent)).await;
            let told = e.told();
            let (now, why) = (self.call.clock.now_ms(), format!("the audit log could not record the create ({told})"));
            self.confirm.follow(approval.page.as_deref(), Outcome::NotSent { at_ms: now, why }, now).await;
            return Ok(Err(fabric::Error::Refused(format!(
                "the audit log could not record the create before sending it ({told}); nothing was sent"
            ))));
        }
        let now = self.call.clock.now_ms();
        self.confirm.follow(approval.page.as_deref(), Outcome::Sending { at_ms: now }, now).await;
        let (client, cancel) = (self.fabric.client.clone(), self.call.cancel.clone());
        self.confirm.create_sent = true;
        let send = client.send_create(&approval.create, &cancel);
        let path = approval.create.route().path();
        let mut sending = Sending { call: self.call, ids: &self.fabric.correlation_ids, meter: self.meter };
        let outcome = sending.send(Some("Fabric create"), path, send).await;
        let mut entry = self.about(&approval);
        let outcome_name = describe_outcome(&mut entry, &outcome);
        crate::metrics::metrics().create(outcome_name);
        self.notify_outcome(&approval, outcome_name);
        let now = self.call.clock.now_ms();
        let answer = match &outcome {
            Ok(r) => Ok((r.status, r.body.as_str())),
            Err(e) => Err(format!("{e:?}")),
        };
        let followed = match answer {
            // refused before it left: nothing was sent, and the page says so
            Err(why) if outcome_name == "not_sent" => Outcome::NotSent { at_ms: now, why },
            answer => Outcome::of_answer(now, answer),
        };
        self.confirm.follow(approval.page.as_deref(), followed, now).await;
        if let Err(e) = self.record(Event::CreateOutcome(entry)).await {
            // The create has left: its result must reach the caller whatever the log does.
            tracing::error!(request_sha256 = %approval.request_sha256, "the create's outcome is not in the audit log: {e}");
        }
        Ok(to_wit(outcome))
    }

    async fn drop(&mut self, approval: Resource<Approval>) -> wasmtime::Result<()> {
        let approval = self.confirm.table.delete(approval)?;
        if let Err(e) = self.record(Event::ApprovalDiscarded(self.about(&approval))).await {
            tracing::error!("an unused approval is not in the audit log: {e}");
        }
        let (now, why) =
            (self.call.clock.now_ms(), "the component let the approval go without sending the create".into());
        self.confirm.follow(approval.page.as_deref(), Outcome::NotSent { at_ms: now, why }, now).await;
        Ok(())
    }
}

impl ConfirmView<'_> {
    /// The operator's policy judged again, at the time of the create, just before it is sent
    /// (as it judged the request when the person was asked, on the same facts and method): a
    /// change approved before a freeze window is not created inside it. `Err` says why, and when
    /// the policy allows it again.
    async fn still_allowed(&mut self, approval: &Approval) -> Result<(), String> {
        let Some(facts) = approval.policed.clone() else { return Ok(()) };
        let approving = Approving { method: approval.method, ..Approving::default() };
        let change_type = approval.create.route().change_type().as_str();
        if let Err(why) = self.judge().judge("approval", change_type, &facts, Some(&approving)).await {
            return Err(format!("at the time of the create, {why}"));
        }
        // the quorum as the policy asks it now (a reload, or a rule of the time, may ask more)
        let requirement = self.judge().requirement(change_type, &facts).await;
        if requirement.is_empty() {
            return Ok(());
        }
        let decision = self
            .confirm
            .page_said
            .as_ref()
            .filter(|said| approval.page.as_ref() == Some(&said.from.id))
            .map(|said| &said.from.decision);
        let mut voters: Vec<crate::policy::Voter> = match decision {
            Some(d) if d.approvals.is_empty() => vec![crate::policy::Voter { person: &d.approver, groups: &d.groups }],
            Some(d) => d.approvals.iter().map(crate::approval_page::Approval::voter).collect(),
            None => Vec::new(),
        };
        // the proposer never counts, whoever let them decide their own request before
        voters.retain(|v| v.person != self.call.principal.as_str());
        if requirement.met_by(&voters) {
            return Ok(());
        }
        let mut why = format!(
            "at the time of the create, it needs {}, and it has {}",
            requirement.needs().join("; "),
            requirement.progress(&voters).said()
        );
        // a freeze that began after the approval: when the policy lets an ordinary approval through
        if requirement.is_break_glass()
            && let Some(policy) = self.judge().current()
        {
            let on_page = Approving { method: approval.method, ..Approving::default() };
            let next = self.judge().next_allowed(&policy, "approval", change_type, &facts, Some(&on_page)).await;
            why.push_str(&match next {
                Some(at) => {
                    format!(". The policy allows it again from {}: propose it again then", crate::audit::rfc3339(at))
                }
                None => ". The policy does not allow it at any time within the next month".into(),
            });
        }
        Err(why)
    }

    /// Tells the operator's destinations what became of an approved create (never waits).
    fn notify_outcome(&self, approval: &Approval, outcome: &'static str) {
        let Some(notifier) = &self.confirm.notifier else { return };
        let event = match outcome {
            "executed" => "change_executed",
            "unknown" => "change_outcome_unknown",
            _ => "change_failed",
        };
        notifier.notify(crate::notify::Notice {
            event,
            key: format!("{event} {} {}", approval.token, approval.request_sha256),
            change_type: approval.create.route().change_type().as_str().into(),
            summary: approval.plan.as_ref().map(|p| p.summary.clone()),
            approval_url: None,
            proposer: self.call.principal.as_str().into(),
            approver: approval.approver.clone(),
            policy: None,
            outcome: Some(outcome.into()),
            state: match outcome {
                "executed" => "created",
                "unknown" => "outcome_unknown",
                "not_sent" => "not_sent",
                _ => "failed",
            },
            reason: self.confirm.page_said.as_ref().map(|s| s.from.decision.reason.clone()).filter(|r| !r.is_empty()),
            progress: None,
            break_glass: Vec::new(),
            request_sha256: approval.request_sha256.clone(),
            at: crate::audit::rfc3339(self.call.clock.now_ms()),
        });
    }
}

/// What a create's outcome adds to its audit record; returns the outcome's name.
fn describe_outcome(entry: &mut ApprovalEvent, outcome: &Result<ApiResponse, SendError>) -> &'static str {
    let name = match outcome {
        Ok(r) => match r.status {
            200..=299 => "executed",
            500.. => "unknown",
            _ => "rejected",
        },
        Err(SendError::Timeout | SendError::Transport(_)) => "unknown",
        Err(_) => "not_sent",
    };
    entry.outcome = Some(name.into());
    match outcome {
        Ok(r) => {
            entry.http_status = Some(r.status);
            entry.correlation_id = Some(r.correlation_id.clone());
            if (200..300).contains(&r.status) {
                let uuid = serde_json::from_str::<serde_json::Value>(&r.body).ok().and_then(|v| v.get("uuid").cloned());
                entry.fabric_uuid = Some(uuid.unwrap_or(serde_json::Value::Null));
            }
        }
        Err(e) => entry.error = Some(format!("{e:?}")),
    }
    name
}
