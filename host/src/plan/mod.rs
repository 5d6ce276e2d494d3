//! The plan a person reads before the bytes: what the exact request will do, one meaning per
//! line, each value saying where it came from (the exact bytes, or the host's own Fabric read).
//! The host builds it after the dry run, from the body an approval would send and never from the
//! component's words ([`reads`] says what to read, [`resolve`] reads it, [`compose`] writes the
//! lines); it is stored with the proposal's binding (so every replica shows the same one), and
//! its hash joins the request's in what a person decides, signs and the audit log keeps.

pub mod compose;
pub(crate) mod reads;
pub mod resolve;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// Where a value the plan shows came from.
pub(crate) const FROM_BYTES: &str = "the exact bytes";

/// A value from Fabric (its text is cut to this many characters, then its invisible characters
/// escaped, then quoted where it is a name).
pub(crate) const MAX_VALUE_CHARS: usize = 120;

/// What one create will do, as the host resolved it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Plan {
    pub change_type: String,
    /// The request the plan is about.
    pub request_sha256: String,
    /// When the host read Fabric for it (RFC 3339, the host's clock).
    pub read_at: String,
    /// The first line: the action and the resource (`+ create connection "to-aws" (billable)`).
    pub summary: String,
    pub lines: Vec<Line>,
    /// What the host checked at read time.
    pub checks: Vec<Check>,
    /// The list price the host read from Fabric for it, as figures the operator's policy reads
    /// (none: Fabric gave none, or the change has no price of its own).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priced: Option<Priced>,
}

/// A list price as the policy reads it: whole cents, so a rule compares sums without rounding.
/// A charge Fabric did not give is absent, never zero.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Priced {
    pub currency: String,
    pub(crate) monthly_cents: Option<i64>,
    pub(crate) one_time_cents: Option<i64>,
    pub(crate) term_months: Option<i64>,
}

/// One meaning: its label, its value (already made visible and bounded), and where it came from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Line {
    pub label: String,
    pub value: String,
    pub from: String,
}

/// A check made at read time: `ok`, `FAILED`, or `not checked` (with why, in `from`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Check {
    pub verdict: String,
    pub what: String,
    pub from: String,
}

pub(crate) const OK: &str = "ok";
pub(crate) const FAILED: &str = "FAILED";
pub(crate) const NOT_CHECKED: &str = "not checked";

impl Plan {
    /// The plan's SHA-256: of its JSON text, whose members are in this type's order.
    pub fn sha256(&self) -> String {
        let text = serde_json::to_string(self).expect("a plan serializes");
        hex::encode(Sha256::digest(text.as_bytes()))
    }

    /// The plan as the form and the page show it, first, before the exact bytes.
    pub fn text(&self) -> String {
        let mut text = format!(
            "The plan, resolved by equinix-mcp from the exact bytes and its own Fabric reads at {}:\n{}\n",
            self.read_at, self.summary
        );
        for line in &self.lines {
            text.push_str(&format!("  {}: {}   [{}]\n", line.label, line.value, line.from));
        }
        if !self.checks.is_empty() {
            text.push_str("Checked at read time:\n");
            for check in &self.checks {
                text.push_str(&format!("  {}: {}   [{}]\n", check.verdict, check.what, check.from));
            }
        }
        text.push_str(&format!("plan_sha256: {}\n", self.sha256()));
        text
    }

    /// The checks that failed, for a summary line.
    pub fn failed(&self) -> usize {
        self.checks.iter().filter(|c| c.verdict == FAILED).count()
    }
}

/// A text from Fabric (or any text not the host's) as one visible, bounded value.
pub(crate) fn shown(s: &str) -> String {
    crate::exact_json::visible(&equinix_broker_contract::clip(s, MAX_VALUE_CHARS))
}

/// A name from Fabric, quoted: its quotes and backslashes escaped, so no name can pose as the
/// text around it.
pub(crate) fn quoted(s: &str) -> String {
    format!("\"{}\"", shown(&s.replace('\\', "\\\\").replace('"', "\\\"")))
}

/// A uuid as a person compares it: its last 12 characters after an ellipsis (the whole uuid is
/// in the exact bytes below).
pub(crate) fn short_uuid(uuid: &str) -> String {
    let clean = shown(uuid);
    match clean.char_indices().rev().nth(11) {
        Some((at, _)) if at > 0 => format!("…{}", &clean[at..]),
        _ => clean,
    }
}
