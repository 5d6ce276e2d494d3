//! Who a call acts for. Proposals belong to the principal that made them: only the same
//! principal can see, preview or confirm them, whatever session or connection it uses.
//!
//! - stdio: the one local user ([`Principal::local`]);
//! - HTTP without authentication (127.0.0.1 / ::1 only): every client is that same local
//!   user, so any client on the machine may confirm any proposal;
//! - HTTP with `--auth-token-file`: the label of the bearer token the request carried;
//! - HTTP with `--oauth-issuer`: the issuer and the subject of the access token
//!   ([`Principal::subject`]).

use std::cmp::Ordering;
use std::collections::HashMap;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

/// A principal's identity is its id alone; `shown` is how logs name it when that differs.
#[derive(Clone, Debug)]
pub struct Principal {
    id: Arc<str>,
    shown: Option<Arc<str>>,
}

impl Principal {
    /// The single principal of stdio and of unauthenticated loopback HTTP.
    pub fn local() -> Self {
        Principal::named("local")
    }

    pub fn named(label: &str) -> Self {
        Principal { id: Arc::from(label), shown: None }
    }

    /// The subject `subject` of `issuer`'s tokens. Its id is `ISSUER#SUBJECT`: a token label
    /// cannot contain `:` or `/`, so no label is ever the same principal as a subject, and two
    /// issuers' subjects never meet. Logs show the subject.
    pub fn subject(issuer: &str, subject: &str) -> Self {
        Principal { id: Arc::from(format!("{issuer}#{subject}")), shown: Some(Arc::from(subject)) }
    }

    /// The identity: what proposals, sessions, limits, audit records and policies are keyed to.
    pub(crate) fn as_str(&self) -> &str {
        &self.id
    }
}

impl Default for Principal {
    fn default() -> Self {
        Principal::local()
    }
}

impl PartialEq for Principal {
    fn eq(&self, other: &Self) -> bool {
        self.id == other.id
    }
}

impl Eq for Principal {}

impl Hash for Principal {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.id.hash(state)
    }
}

impl PartialOrd for Principal {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Principal {
    fn cmp(&self, other: &Self) -> Ordering {
        self.id.cmp(&other.id)
    }
}

impl fmt::Display for Principal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.shown.as_deref().unwrap_or(&self.id))
    }
}

/// One less of `principal`'s in `counts` (none left: no entry), for the tables that count what
/// each principal holds.
pub(crate) fn uncount(counts: &mut HashMap<Principal, usize>, principal: &Principal) {
    if let Some(n) = counts.get_mut(principal) {
        *n -= 1;
        if *n == 0 {
            counts.remove(principal);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_subject_is_keyed_by_its_issuer_and_shown_by_itself() {
        let a = Principal::subject("https://idp.example", "alice");
        assert_eq!(a.as_str(), "https://idp.example#alice");
        assert_eq!(a.to_string(), "alice");
        assert_ne!(a, Principal::named("alice"), "a label and a subject are different principals");
        assert_ne!(a, Principal::subject("https://other.example", "alice"));
        assert_eq!(a, Principal::subject("https://idp.example", "alice"));
    }
}
