//! How one tool call reaches its person: the MCP front supplies a [`Confirmer`] per call (form
//! elicitation, a stateless round, or nobody at all).

use futures_util::future::BoxFuture;
use tokio_util::sync::CancellationToken;

use super::form::Form;
use crate::bindings::confirmation::{Delivery, Status};

/// How one tool call reaches its person. The MCP front supplies one per call.
pub trait Confirmer: Send + Sync {
    /// How the answer is delivered (blocking unless the call is a stateless round).
    fn delivery(&self) -> Delivery {
        Delivery::Blocking
    }

    /// Shows `form` and returns the person's answer; `Err` says why the form could not be shown
    /// at all (a limit), and nobody was asked.
    fn confirm<'a>(&'a self, form: &'a Form, cancel: &'a CancellationToken) -> BoxFuture<'a, Result<Status, String>>;

    /// A form this call asked about whose answer the client still has to send (a stateless first
    /// round); taken once, after the component returned.
    fn input_request(&self) -> Option<Form> {
        None
    }

    /// The approval page this call opened and nobody has decided yet (a client with no
    /// elicitation); taken once, after the component returned.
    fn page_pending(&self) -> Option<PagePending> {
        None
    }

    /// How the answer this confirmer gives reaches the host: `form` (the client's form or the
    /// stateless round), `page` (the approval page) or `opt_in` (nobody can be asked).
    fn method(&self) -> &'static str {
        "form"
    }

    /// Who approved, when the approval page says so (`ISSUER#SUBJECT`).
    fn approver(&self) -> Option<String> {
        None
    }
}

/// A question waiting on the approval page.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PagePending {
    /// The page's id, and its link.
    pub id: String,
    pub url: String,
    pub token: String,
    pub validation: String,
    pub request_sha256: String,
    pub expires_at_ms: u64,
    /// Whether the call is a 2026-07-28 round (the link goes in an input request) rather than a
    /// client with no elicitation (the link goes in the result).
    pub stateless: bool,
}

/// For calls with no person behind them (loading the catalog, `inspect`, benchmarks).
pub struct NobodyToAsk;

impl Confirmer for NobodyToAsk {
    fn method(&self) -> &'static str {
        "opt_in"
    }

    fn confirm<'a>(&'a self, _form: &'a Form, _cancel: &'a CancellationToken) -> BoxFuture<'a, Result<Status, String>> {
        Box::pin(async { Ok(Status::UnsupportedByClient) })
    }
}
