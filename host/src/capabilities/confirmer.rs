//! How one tool call reaches its person: the MCP front builds one [`Confirmer`] per call for the
//! delivery `approval::choose` chose (form elicitation, a stateless round, the approval page, or
//! nobody at all), and the `confirmation` capability puts its form before the person through it.

use futures_util::future::BoxFuture;
use tokio_util::sync::CancellationToken;

use crate::approval::{Form, Subject};
use crate::bindings::confirmation::{Delivery as Answering, Status};

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
    /// why the form could not be put before anyone (a limit, the store), and nobody was asked.
    fn confirm<'a>(&'a self, form: &'a Form, cancel: &'a CancellationToken) -> BoxFuture<'a, Result<Reached, String>>;
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
    pub fn status(status: Status) -> Self {
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
    pub fn said(&self) -> String {
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
    ) -> BoxFuture<'a, Result<Reached, String>> {
        Box::pin(async { Ok(Reached::status(Status::UnsupportedByClient)) })
    }
}
