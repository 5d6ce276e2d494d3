//! The rules of a yes, in one place and without I/O: every way a person's answer reaches the host
//! (the blocking form, the 2026-07-28 round trip, URL elicitation to the approval page, a link to
//! the page) ends in these same decisions, and each is tested here with plain data and a clock
//! passed in, as quinn-proto keeps its protocol apart from its sockets.
//!
//! - [`Subject`]: what an answer is about (proposal, validation, request hash), compared whole;
//!   [`CallKey`]: which call a sealed state or a page link belongs to;
//! - [`Once`]: what counts once across replicas, and the one spelling of its store key;
//! - [`rules`]: who may ask ([`may_ask`]), about which proposal ([`bound`]), and when an answer
//!   mints an approval ([`may_mint`]), within [`TTL_MS`] of the dry run, one constant with the
//!   guest's;
//! - [`admit`]: the order of those checks before a question is shown ([`admit()`]), and which road
//!   the operator's policy then lets it take ([`policed`]);
//! - [`road`]: which roads a call's question takes ([`choose`]), chosen once per call;
//! - [`binding`]: what ties a stored proposal to the dry run that validated it;
//! - [`form`]: what the person reads, rendered by the host from the exact bytes;
//! - [`deciders`]: who decides a request on the approval page, and under a quorum which
//!   decisions count.
//!
//! The I/O around them lives with the capabilities (`capabilities::confirmation` asks and mints),
//! the MCP front (`mcp::reach` walks the roads: `reach::form`, `reach::stateless` and
//! `reach::page` put the question before the person) and the approval page.

pub(crate) mod admit;
pub(crate) mod binding;
pub(crate) mod deciders;
pub mod form;
mod once;
pub(crate) mod road;
pub(crate) mod rules;
mod subject;

pub(crate) use admit::{Admitted, Asked, Policed, admit, policed};
pub(crate) use binding::{AFTERWARDS_MS, Binding, Redeemed, TTL_MS, Validation, answerable};
pub(crate) use form::Form;
pub use once::Once;
pub use road::{Call, Declared, Offered, Road, Roads, Round, Sealed, choose};
pub use rules::{Asker, Mint, Question, bound, may_ask, may_mint};
pub use subject::{AnsweredOn, CallKey, Subject};
