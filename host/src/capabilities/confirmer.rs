//! How one tool call reaches its person: the MCP front builds one [`Confirmer`] per call for the
//! road `approval::choose` chose (form elicitation, a stateless round, the approval page, or
//! nobody at all), and the `confirmation` capability puts its form before the person through it.

use futures_util::future::BoxFuture;
use tokio_util::sync::CancellationToken;

use crate::approval::{Form, Subject};
use crate::bindings::confirmation::{Delivery as Answering, Status};
use crate::proposals::StoreUnavailable;

/// How one tool call reaches its person.
pub trait Confirmer: Send + Sync {
    /// How the component should order its rules for this call (`confirmation.current-delivery`):
    /// blocking unless the call is a stateless round.
    fn round(&self) -> Answering {
        Answering::Blocking
    }

    /// How an answer this confirmer gives reaches the host: `form` (the client's form or the
    /// stateless round), `page` (the approval page) or `opt_in` (nobody can be asked).
    fn method(&self) -> &'static str;

    /// The approval page whose decision this call would collect, when one was made there before
    /// the call (a round that finds it): what becomes of it is followed on that page.
    fn decided_page(&self) -> Option<String> {
        None
    }

    /// Puts `form` before the person: their answer, or where the question now waits. `Err` says
    /// why the form could not be put before anyone (a limit, the store), or why the answer given
    /// counts for nothing; either way nothing is approved.
    fn confirm<'a>(
        &'a self,
        form: &'a Form,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<Reached, NotReached>>;
}

/// Why a form reached nobody, or why the answer it got counts for nothing. Its words are what
/// the component, and through it the agent, reads: a store's part is always told in the store's
/// fixed words ([`StoreUnavailable::told`]), so its address cannot reach them by this road.
#[derive(Debug, thiserror::Error)]
pub enum NotReached {
    /// A limit on open forms, in its own words.
    #[error("{0}")]
    AtLimit(String),
    /// The answer was given about another question (the words of
    /// [`Subject::mismatch`](crate::approval::Subject::mismatch)).
    #[error("{0}")]
    OtherQuestion(String),
    /// The page's decision approved an earlier call already.
    #[error(
        "the decision on approval page {page} was already used by an earlier call; one decision approves at most \
         once, so nothing was approved. Propose again and ask the person again"
    )]
    DecisionSpent { page: String },
    /// The stateless round's answer approved an earlier retry already.
    #[error(
        "the person's answer in requestState (answer {answer}) was already used by an earlier retry; one answer \
         approves at most once, so nothing was approved. Propose again and ask the person again"
    )]
    AnswerSpent { answer: String },
    /// The proposal store did not answer at `step`.
    #[error("{}{}", .unavailable.told(), .step.said())]
    Store { unavailable: StoreUnavailable, step: StoreStep },
}

/// Where a store that did not answer stopped a form.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StoreStep {
    /// Keeping the question, before anyone was asked.
    Keeping,
    /// Reading the decision made on the page.
    ReadingDecision,
    /// Claiming the page's decision for this call.
    CountingDecision,
    /// Claiming the stateless round's answer for this call.
    CountingAnswer,
}

impl StoreStep {
    fn said(self) -> &'static str {
        match self {
            StoreStep::Keeping => "",
            StoreStep::ReadingDecision => "; the person's decision could not be read, so nothing was approved",
            StoreStep::CountingDecision => "; the person's decision could not be counted, so nothing was approved",
            StoreStep::CountingAnswer => "; the person's answer could not be counted, so nothing was approved",
        }
    }
}

impl NotReached {
    /// A store that did not answer at `step`.
    pub(crate) fn store(step: StoreStep) -> impl FnOnce(StoreUnavailable) -> Self {
        move |unavailable| NotReached::Store { unavailable, step }
    }
}

/// The road a call's plan keeps for when the operator's policy allows its create only on the
/// approval page and the call's own road does not lead there. Nothing is built for it unless the
/// policy refuses the call's road: `method` is what the policy is asked about, and `road` makes
/// the confirmer then. It answers in the same rounds as the road it replaces.
pub struct Fallback {
    pub method: &'static str,
    pub road: Box<dyn FnOnce() -> std::sync::Arc<dyn Confirmer> + Send + Sync>,
}

/// Where a question got to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reached {
    /// The answer (from the person, the client or its absence), and who approved when the approval
    /// page says so (`ISSUER#SUBJECT`), with the page's decision.
    Answer { status: Status, approver: Option<String>, page: Option<Box<FromPage>> },
    /// The form goes to the client as an input request; the answer comes with a retry of the call.
    NeedsInput,
    /// The question is on the approval page, and nobody has decided yet.
    AwaitsPage(PagePending),
}

impl Reached {
    /// An answer that names no approver.
    pub(crate) fn status(status: Status) -> Self {
        Reached::Answer { status, approver: None, page: None }
    }
}

/// A decision made on the approval page, as the call that collected it carries it on: where the
/// request stands is followed from here to its end ([`crate::approval_page::state`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FromPage {
    /// The page's id.
    pub id: String,
    pub decision: crate::approval_page::Decision,
    /// When the proposal's time ends.
    pub expires_at_ms: u64,
}

/// A question waiting on the approval page.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PagePending {
    /// The page's id, and its link.
    pub id: String,
    pub url: String,
    pub subject: Subject,
    pub expires_at_ms: u64,
    /// A 2026-07-28 round sends the link in a URL-mode input request (else written in a form:
    /// the client declared only forms).
    pub(crate) by_url: bool,
    /// Under a quorum, once someone approved: how far it has come, and who approved when.
    pub progress: Option<Box<Partly>>,
    /// The break-glass rules it is under: a freeze only their quorum opens.
    pub break_glass: Vec<String>,
}

/// A request partly approved under a quorum, as its agent is told.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Partly {
    pub progress: crate::policy::Progress,
    /// Each approval so far: who (by name where known) and when (RFC 3339).
    pub approvals: Vec<(String, String)>,
}

impl Partly {
    /// "1 of 2 approvals: Alice Example approved at …; waiting for 1 more of netops".
    pub(crate) fn said(&self) -> String {
        let who: Vec<String> = self.approvals.iter().map(|(by, at)| format!("{by} approved at {at}")).collect();
        let p = &self.progress;
        let mut out = format!("{} of {} approvals: {}", p.approvals, p.needed, who.join(", "));
        if !p.missing.is_empty() {
            out.push_str(&format!("; waiting for {}", p.missing));
        }
        out
    }
}

/// For calls with no person behind them (a client that shows no form and no page to send them
/// to, loading the catalog, `inspect`, benchmarks): nobody is asked, and only the operator's
/// opt-in can approve.
pub struct NobodyToAsk;

impl Confirmer for NobodyToAsk {
    fn method(&self) -> &'static str {
        "opt_in"
    }

    fn confirm<'a>(
        &'a self,
        _form: &'a Form,
        _cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<Reached, NotReached>> {
        Box::pin(async { Ok(Reached::status(Status::UnsupportedByClient)) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proposals::Cause;

    #[test]
    fn a_store_that_did_not_answer_is_told_in_fixed_words_never_its_address() {
        let down = || StoreUnavailable {
            backend: "redis://10.0.0.7:6379/0".into(),
            reason: "broken pipe".into(),
            cause: Cause::Down,
        };
        let counting = NotReached::store(StoreStep::CountingDecision)(down()).to_string();
        assert!(counting.starts_with("the proposal store is unavailable: it did not answer"), "{counting}");
        assert!(
            counting.ends_with("the person's decision could not be counted, so nothing was approved"),
            "{counting}"
        );
        let keeping = NotReached::store(StoreStep::Keeping)(down()).to_string();
        assert!(keeping.ends_with(')'), "keeping adds nothing after the reference: {keeping}");
        for told in [counting, keeping] {
            assert!(!told.contains("10.0.0.7") && !told.contains("redis") && !told.contains("broken pipe"), "{told}");
        }
    }

    #[test]
    fn a_spent_answer_names_what_was_spent_and_the_next_step() {
        let page = NotReached::DecisionSpent { page: "pg-1".into() }.to_string();
        assert!(page.starts_with("the decision on approval page pg-1 was already used by an earlier call"), "{page}");
        let answer = NotReached::AnswerSpent { answer: "ab12".into() }.to_string();
        assert!(answer.contains("(answer ab12) was already used by an earlier retry"), "{answer}");
        for told in [page, answer] {
            assert!(told.ends_with("Propose again and ask the person again"), "{told}");
        }
    }
}
