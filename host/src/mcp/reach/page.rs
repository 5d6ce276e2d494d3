//! Confirmation through the approval page ([`crate::approval_page`]), chosen by what the client
//! declared:
//!
//! - `elicitation.url` (MCP 2025-11-25): [`UrlElicit`] sends an `elicitation/create` in `url`
//!   mode with the page's link, waits (bounded by the elicitation timeout and the call's
//!   cancellation) for the decision, and then tells that client `notifications/elicitation/complete`;
//! - no elicitation at all: [`PageRound`] answers the first call `approval_pending` with the link
//!   and consumes nothing; the same call made again (the same principal, tool and arguments)
//!   finds the decision, and only then is the token taken (approve: one create; decline: none);
//! - 2026-07-28 clients that declared URL elicitation: [`PageRound`] too, the link going out as a
//!   URL-mode input request with a sealed state naming the page; a retry before anyone decided
//!   gets another input request, the one after the decision the result.
//!
//! A client that declared only forms, whose create the operator's policy allows only on the page,
//! gets the same roads with the link written in a form instead: [`UrlElicit`] with
//! [`LinkBy::Form`] (it waits for the decision after the person answers the form), and a 2026-07-28
//! round's input request in form mode.
//!
//! Either way a decision counts only for the proposal and validation it was made about, and only
//! once: its id is claimed in the proposal store, shared by every replica.

use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;
use rmcp::model::{
    ClientResult, CustomNotification, ElicitRequest, ElicitRequestParams, ElicitationAction, ServerNotification,
    ServerRequest,
};
use rmcp::service::{Peer, PeerRequestOptions, RoleServer, ServiceError};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::approval::{AnsweredOn, CallKey, Form, Once};
use crate::approval_page::record::{self, Decision, PageRecord};
use crate::approval_page::{ApprovalPage, people};
use crate::bindings::confirmation::{Delivery as Answering, Status};
use crate::capabilities::{Confirmer, FromPage, NotReached, PagePending, Partly, Reached, StoreStep};
use crate::principal::Principal;
use crate::proposals::StoreUnavailable;

/// How often a waiting call looks for a decision made through another replica.
const POLL: Duration = Duration::from_millis(250);

/// The answer a decision gives, once its id is claimed for `form`; `Err` says why it counts for
/// nothing.
async fn claimed(
    page: &ApprovalPage,
    record: &PageRecord,
    decision: &Decision,
    form: &Form,
) -> Result<Reached, NotReached> {
    if let Some(why) = record.subject().mismatch(&form.subject, AnsweredOn::Page) {
        tracing::warn!(token = %form.subject.token, "refused a page decision: {why}");
        return Err(NotReached::OtherQuestion(why));
    }
    match page.store.claim(Once::PageDecision(&decision.id), page.clock.now_ms()).await {
        Ok(true) => Ok(Reached::Answer {
            status: if decision.approve { Status::Accepted } else { Status::Declined },
            approver: Some(decision.approver.clone()),
            page: Some(Box::new(FromPage {
                id: record.id.clone(),
                decision: decision.clone(),
                expires_at_ms: record.expires_at_ms,
            })),
        }),
        Ok(false) => Err(NotReached::DecisionSpent { page: record.id.clone() }),
        Err(e) => Err(NotReached::store(StoreStep::CountingDecision)(e)),
    }
}

/// How far `record`'s request has come under a quorum, once someone approved (a store that does
/// not answer leaves it unsaid: the page tells the truth).
async fn partly(page: &ApprovalPage, record: &PageRecord) -> Option<Box<Partly>> {
    let requirement = page.requirement(&record.question()).await;
    if requirement.is_empty() {
        return None;
    }
    let notes = page.notes();
    let approvals = notes.approvals(record).await.ok().filter(|a| !a.is_empty())?;
    // whole, with its decision left unwritten: written now, for this call's next round to collect
    if let Ok(Some(_)) = page.settle_whole(record, &requirement, &approvals).await {
        return None;
    }
    let voters: Vec<_> = approvals.iter().map(crate::approval_page::Approval::voter).collect();
    let mut said = Vec::new();
    for a in &approvals {
        let named = match &a.named {
            Some(n) => Some(n.clone()),
            None => people::recall(&page.store, &a.approver, notes.now_ms).await,
        };
        said.push((people::words(&a.approver, named.as_ref(), ""), crate::audit::rfc3339(a.at_ms)));
    }
    Some(Box::new(Partly { progress: requirement.progress(&voters), approvals: said }))
}

/// How a client is given the page's link: in a URL-mode elicitation, or written in a form (a
/// client that declared only forms).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LinkBy {
    Url,
    Form,
}

/// The words that go with the link.
fn link_message(request_sha256: &str, by: LinkBy, url: &str) -> String {
    let open = match by {
        LinkBy::Url => "Open the link".to_string(),
        LinkBy::Form => format!("The operator's policy allows this create only on the approval page: open {url}"),
    };
    format!(
        "equinix-mcp asks a person to approve ONE create on Equinix Fabric (request_sha256 {request_sha256}). {open}, \
         read the exact request and approve or decline it there (the page asks for your sign-in or your passkey)"
    )
}

/// The elicitation that gives the person the link to page `id`, its message ending with `then`.
pub(crate) fn link_request(
    request_sha256: &str,
    by: LinkBy,
    url: String,
    id: String,
    then: &str,
) -> ElicitRequestParams {
    let message = format!("{}{then}", link_message(request_sha256, by, &url));
    match by {
        LinkBy::Url => ElicitRequestParams::UrlElicitationParams { meta: None, message, url, elicitation_id: id },
        LinkBy::Form => {
            ElicitRequestParams::FormElicitationParams { meta: None, message, requested_schema: super::form::schema() }
        }
    }
}

/// For a client with no elicitation: the page opened by an earlier identical call, and its
/// decision, looked up before the component runs (so it knows whether to take the token).
pub(crate) struct PageRound {
    page: Arc<ApprovalPage>,
    principal: Principal,
    tool: String,
    /// How a 2026-07-28 round's input request carries the link.
    link_by: LinkBy,
    /// The call's page index, under which a client with no elicitation finds its page again;
    /// none for a 2026-07-28 round, whose sealed state names the page.
    call: Option<String>,
    earlier: Option<(PageRecord, Option<Decision>)>,
}

impl PageRound {
    pub(crate) async fn for_call(
        page: Arc<ApprovalPage>,
        principal: &Principal,
        tool: &str,
        call: &CallKey,
    ) -> Result<Self, StoreUnavailable> {
        let call = call.page_index();
        let notes = page.notes();
        let earlier = match notes.of_call(&call).await? {
            Some(r) => {
                let decision = notes.decision(&r.id).await?;
                Some((r, decision))
            }
            None => None,
        };
        let (principal, tool) = (principal.clone(), tool.to_string());
        Ok(PageRound { page, principal, tool, link_by: LinkBy::Url, call: Some(call), earlier })
    }

    /// For a 2026-07-28 first round: no page yet, so nothing to look up.
    pub(crate) fn first_round(page: Arc<ApprovalPage>, principal: Principal, tool: String, link_by: LinkBy) -> Self {
        PageRound { page, principal, tool, link_by, call: None, earlier: None }
    }

    /// For a 2026-07-28 retry: the page its sealed state names, and its decision. A page of
    /// another principal, or one no longer kept, counts as none.
    pub(crate) async fn for_state(
        page: Arc<ApprovalPage>,
        principal: &Principal,
        tool: &str,
        id: Option<&str>,
        link_by: LinkBy,
    ) -> Result<Self, StoreUnavailable> {
        let notes = page.notes();
        let earlier = match id {
            Some(id) => match notes.record(id).await? {
                Some(r) if r.proposer == principal.as_str() => {
                    let decision = notes.decision(&r.id).await?;
                    Some((r, decision))
                }
                _ => None,
            },
            None => None,
        };
        let (principal, tool) = (principal.clone(), tool.to_string());
        Ok(PageRound { page, principal, tool, link_by, call: None, earlier })
    }

    fn decided(&self) -> Option<(&PageRecord, &Decision)> {
        self.earlier.as_ref().and_then(|(r, d)| d.as_ref().map(|d| (r, d)))
    }

    async fn open(&self, form: &Form) -> Result<Reached, NotReached> {
        let now = self.page.clock.now_ms();
        let record = match &self.earlier {
            // the same question as before: the same page, so the link the person has still works
            Some((r, None)) if r.subject() == form.subject => r.clone(),
            _ => {
                if let Some((old, None)) = &self.earlier
                    && let Err(e) = self.page.notes().superseded(old).await
                {
                    tracing::warn!(page = %old.id, "the inbox still lists a page another one replaces: {e}");
                }
                let mut r = PageRecord::new(form, &self.principal, &self.tool, self.page.transport, now);
                r.agent_reason = people::agent_reason(&self.page.store, &r.proposer, &r.token, now).await;
                r.break_glass = self.page.requirement(&r.question()).await.break_glass;
                self.page.notes().put(&r, self.call.as_deref()).await.map_err(NotReached::store(StoreStep::Keeping))?;
                self.page.waiting(&r);
                r
            }
        };
        let progress = partly(&self.page, &record).await;
        Ok(Reached::AwaitsPage(PagePending {
            id: record.id.clone(),
            url: self.page.link(&record.id),
            subject: record.subject(),
            expires_at_ms: record.expires_at_ms,
            by_url: self.link_by == LinkBy::Url,
            progress,
            break_glass: record.break_glass.clone(),
        }))
    }
}

impl Confirmer for PageRound {
    fn round(&self) -> Answering {
        if self.decided().is_some() { Answering::Answered } else { Answering::FirstRound }
    }

    fn method(&self) -> &'static str {
        record::METHOD_PAGE
    }

    fn decided_page(&self) -> Option<String> {
        self.decided().map(|(record, _)| record.id.clone())
    }

    fn confirm<'a>(
        &'a self,
        form: &'a Form,
        _cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<Reached, NotReached>> {
        Box::pin(async move {
            match self.decided() {
                Some((record, decision)) => claimed(&self.page, record, decision, form).await,
                None => self.open(form).await,
            }
        })
    }
}

/// For a client that declared URL elicitation (or, with [`LinkBy::Form`], one whose form must
/// send the person to the page): the link through `elicitation/create`, then the wait for the
/// decision.
pub(crate) struct UrlElicit {
    pub page: Arc<ApprovalPage>,
    pub(crate) fairness: Arc<crate::mcp::fairness::Fairness>,
    pub peer: Peer<RoleServer>,
    pub timeout: Duration,
    pub principal: Principal,
    pub tool: String,
    pub(crate) link_by: LinkBy,
}

impl UrlElicit {
    async fn ask(&self, form: &Form, cancel: &CancellationToken) -> Result<Reached, NotReached> {
        let started = tokio::time::Instant::now();
        let now = self.page.clock.now_ms();
        let mut record = PageRecord::new(form, &self.principal, &self.tool, self.page.transport, now);
        record.agent_reason = people::agent_reason(&self.page.store, &record.proposer, &record.token, now).await;
        record.break_glass = self.page.requirement(&record.question()).await.break_glass;
        self.page.notes().put(&record, None).await.map_err(NotReached::store(StoreStep::Keeping))?;
        self.page.waiting(&record);
        let reached = self.link_and_wait(&record, form, cancel, started).await;
        // however the wait ended, no call looks at this page again (a decided page left the
        // inbox already; an undecided one leaves it now, and the next call opens its own)
        if let Err(e) = self.page.notes().superseded(&record).await {
            tracing::warn!(page = %record.id, "the inbox still lists a page no call waits on: {e}");
        }
        reached
    }

    async fn link_and_wait(
        &self,
        record: &PageRecord,
        form: &Form,
        cancel: &CancellationToken,
        started: tokio::time::Instant,
    ) -> Result<Reached, NotReached> {
        let then = match self.link_by {
            LinkBy::Url => ".",
            LinkBy::Form => ". Then answer this form (confirm or not: the decision on the page is what counts).",
        };
        let params =
            link_request(&record.request_sha256, self.link_by, self.page.link(&record.id), record.id.clone(), then);
        let request = ServerRequest::ElicitRequest(ElicitRequest::new(params));
        let handle =
            match self.peer.send_request_with_option(request, PeerRequestOptions::with_timeout(self.timeout)).await {
                Ok(h) => h,
                Err(e) => {
                    tracing::warn!("could not send the approval link: {e}");
                    return Ok(Reached::status(Status::Failed));
                }
            };
        let answer = tokio::select! {
            answer = handle.await_response() => answer,
            _ = cancel.cancelled() => return Ok(Reached::status(Status::CallCancelled)),
        };
        match answer {
            Ok(ClientResult::ElicitResult(r)) => match r.action {
                ElicitationAction::Accept => {}
                ElicitationAction::Decline => return Ok(Reached::status(Status::Declined)),
                ElicitationAction::Cancel => return Ok(Reached::status(Status::Cancelled)),
                _ => return Ok(Reached::status(Status::Failed)),
            },
            Ok(_) => return Ok(Reached::status(Status::Failed)),
            Err(ServiceError::Timeout { .. }) => return Ok(Reached::status(Status::TimedOut)),
            Err(ServiceError::TransportClosed | ServiceError::TransportSend(_)) => {
                return Ok(Reached::status(Status::CallCancelled));
            }
            Err(e) => {
                tracing::info!("the approval link's elicitation failed: {e}");
                return Ok(Reached::status(Status::Failed));
            }
        }
        // the person went to the page: wait for what they decide there
        let deadline = started + self.timeout;
        let decision = loop {
            let woken = self.page.decided.notified();
            match self.page.notes().decision(&record.id).await {
                Ok(Some(d)) => break d,
                Ok(None) => {}
                Err(e) => return Err(NotReached::store(StoreStep::ReadingDecision)(e)),
            }
            tokio::select! {
                _ = woken => {}
                _ = tokio::time::sleep(POLL) => {}
                _ = tokio::time::sleep_until(deadline) => return Ok(Reached::status(Status::TimedOut)),
                _ = cancel.cancelled() => return Ok(Reached::status(Status::CallCancelled)),
            }
        };
        let reached = claimed(&self.page, record, &decision, form).await?;
        if self.link_by == LinkBy::Url {
            let complete = CustomNotification::new(
                "notifications/elicitation/complete",
                Some(json!({"elicitationId": record.id})),
            );
            if let Err(e) = self.peer.send_notification(ServerNotification::CustomNotification(complete)).await {
                tracing::info!("could not tell the client the approval is complete: {e}");
            }
        }
        Ok(reached)
    }
}

impl Confirmer for UrlElicit {
    fn method(&self) -> &'static str {
        record::METHOD_PAGE
    }

    fn confirm<'a>(
        &'a self,
        form: &'a Form,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<Reached, NotReached>> {
        Box::pin(async move {
            let _open = self.fairness.begin_confirmation(&self.principal)?;
            self.ask(form, cancel).await
        })
    }
}
