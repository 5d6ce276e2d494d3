//! The three change types and their specs: one grammar per create request of the Fabric v4
//! contract (4.31), which both checks a spec strictly (unknown fields are errors with their JSON
//! path) and describes it as JSON Schema; the checked spec, normalized, is the wire body.
//!
//! Canonical form: object keys sorted, no insignificant whitespace, integers written without
//! fraction or exponent (the one number normalisation: `1e3` and `1000.0` become `1000`), strings
//! exactly as given. Absent optional fields are omitted, never written as `null`.

use alloc::format;
use alloc::string::String;
use serde_json::Value;

use crate::grammar::{self, Kind, Object, Problems};
use crate::tool_error::ToolError;

mod grammars;
use grammars::{CONNECTION, NETWORK, SERVICE_TOKEN};

#[cfg(test)]
mod tests;

/// What the broker can carry: the contract's change types (the host names the same ones).
pub use equinix_broker_contract::ChangeType;

/// The grammar of a create's request body, by its change type.
pub(crate) trait Grammar {
    fn grammar(self) -> &'static Object;
}

/// Fabric create bodies are a few hundred bytes; free-text fields carry no length of their own
/// in the grammar (Fabric judges them at the dry run), so the whole spec is bounded instead.
pub(crate) const MAX_SPEC_BYTES: usize = 16 << 10;

/// A checked spec of one change type; its normalized JSON is the wire body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Spec {
    pub change_type: ChangeType,
    /// Private with `canonical`, so the body read and the bytes sent and hashed cannot drift apart.
    body: Value,
    /// `body` as canonical JSON text, written once when the size limit is checked.
    canonical: String,
}

impl Grammar for ChangeType {
    /// The grammar of this create's request body.
    fn grammar(self) -> &'static Object {
        match self {
            ChangeType::ConnectionCreate => &CONNECTION,
            ChangeType::NetworkCreate => &NETWORK,
            ChangeType::ServiceTokenCreate => &SERVICE_TOKEN,
        }
    }
}

impl Spec {
    /// Checks `spec` for `change_type`; an error names every problem with its JSON path under
    /// `base` (e.g. `/spec`).
    pub fn parse(change_type: ChangeType, spec: &Value, base: &str) -> Result<Spec, ToolError> {
        let mut problems = Problems::default();
        let body = match grammar::check(&Kind::Obj(change_type.grammar()), spec, base, &mut problems) {
            Some(body) if problems.is_empty() => body,
            _ => return Err(grammar::to_error(problems)),
        };
        let text = canonical(&body);
        let size = text.len();
        if size > MAX_SPEC_BYTES {
            return Err(ToolError::invalid_argument(
                base,
                format!("the spec is {size} bytes as canonical JSON; at most {MAX_SPEC_BYTES} are accepted"),
            ));
        }
        Ok(Spec { change_type, body, canonical: text })
    }

    pub fn change_type(&self) -> ChangeType {
        self.change_type
    }

    pub(crate) fn body(&self) -> &Value {
        &self.body
    }

    /// Compiles to the exact request the create sends.
    pub fn compile(&self) -> Compiled {
        let sha = request_sha256(self.change_type, &self.canonical);
        Compiled { change_type: self.change_type, body: self.canonical.clone(), request_sha256: sha }
    }

    fn str_at(&self, pointer: &str) -> Option<&str> {
        self.body.pointer(pointer).and_then(Value::as_str)
    }

    /// A human-readable target for the prompt ("EVPL_VC connection \"x\", 1000 Mbps").
    pub(crate) fn target(&self) -> String {
        let b = &self.body;
        match self.change_type {
            ChangeType::ConnectionCreate => format!(
                "{} connection {:?}, {} Mbps",
                self.str_at("/type").unwrap_or("?"),
                self.str_at("/name").unwrap_or("?"),
                b["bandwidth"]
            ),
            ChangeType::NetworkCreate => format!(
                "{} {} network {:?}",
                self.str_at("/scope").unwrap_or("?"),
                self.str_at("/type").unwrap_or("?"),
                self.str_at("/name").unwrap_or("?")
            ),
            ChangeType::ServiceTokenCreate => format!(
                "{} service token {} for {} connections, expiring {}",
                self.str_at("/type").unwrap_or("?"),
                self.str_at("/name").map(|n| format!("{n:?}")).unwrap_or_else(|| "(unnamed)".into()),
                self.str_at("/connection/type").unwrap_or("?"),
                self.str_at("/expirationDateTime").unwrap_or("?")
            ),
        }
    }
}

/// The compiled request: what the dry run validated and what a confirm would send.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Compiled {
    pub change_type: ChangeType,
    /// The spec's body as canonical JSON text: the bytes sent and hashed.
    pub body: String,
    pub request_sha256: String,
}

/// Canonical JSON text: sorted keys, no whitespace (the contract's `canonical_json`, which sorts
/// whatever order serde_json's map keeps).
pub(crate) fn canonical(v: &Value) -> String {
    equinix_broker_contract::canonical_json(v)
}

/// The hash the token is bound to, as the contract defines it for an approval.
pub(crate) fn request_sha256(change_type: ChangeType, body: &str) -> String {
    equinix_broker_contract::request_sha256(change_type.as_str(), body)
}
