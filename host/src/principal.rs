//! Who a call acts for. Proposals belong to the principal that made them: only the same
//! principal can see, preview or confirm them, whatever session or connection it uses.
//!
//! - stdio: the one local user ([`Principal::local`]);
//! - HTTP without `--auth-token-file` (127.0.0.1 / ::1 only): every client is that same local
//!   user, so any client on the machine may confirm any proposal;
//! - HTTP with `--auth-token-file`: the label of the bearer token the request carried.

use std::fmt;
use std::sync::Arc;

#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Principal(Arc<str>);

impl Principal {
    /// The single principal of stdio and of unauthenticated loopback HTTP.
    pub fn local() -> Self {
        Principal(Arc::from("local"))
    }

    pub fn named(label: &str) -> Self {
        Principal(Arc::from(label))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl Default for Principal {
    fn default() -> Self {
        Principal::local()
    }
}

impl fmt::Display for Principal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}
