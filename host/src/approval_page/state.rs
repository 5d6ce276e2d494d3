//! Where a request on the page stands, one state followed to its end and read the same by the
//! page, the inbox, the agent's answer and the notices: waiting → approved, waiting for the agent
//! (until the proposal's time ends) → created | failed | outcome unknown | not sent; or declined;
//! or expired (approved and never collected, or never decided).
//!
//! The decision is the page's note; what became of an approval after it is the [`Outcome`], which
//! the agent's call that collected it writes (by the page's id) as the create leaves and returns.

use serde::{Deserialize, Serialize};

use super::people::Named;
use crate::policy::Progress;

/// What became of an approved request once an agent's call collected it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, tag = "state", rename_all = "snake_case")]
pub enum Outcome {
    /// Collected: the create is on its way to Fabric.
    Sending { at_ms: u64 },
    /// Fabric created it: its uuid and the state Fabric gave.
    Created { at_ms: u64, uuid: String, fabric_state: String },
    /// Fabric refused it (its status and error): nothing was created.
    Failed { at_ms: u64, error: String },
    /// Sent, and no answer came back: it may exist.
    Unknown { at_ms: u64, error: String },
    /// Collected, and nothing was sent (the component let the approval go, or the audit log
    /// could not record the send).
    NotSent { at_ms: u64, why: String },
}

impl Outcome {
    pub fn at_ms(&self) -> u64 {
        match self {
            Outcome::Sending { at_ms }
            | Outcome::Created { at_ms, .. }
            | Outcome::Failed { at_ms, .. }
            | Outcome::Unknown { at_ms, .. }
            | Outcome::NotSent { at_ms, .. } => *at_ms,
        }
    }

    /// The outcome of a create Fabric answered with `status` and `body` (none: no answer).
    pub(crate) fn of_answer(at_ms: u64, answer: Result<(u16, &str), String>) -> Self {
        match answer {
            Ok((status @ 200..=299, body)) => {
                let v: serde_json::Value = serde_json::from_str(body).unwrap_or_default();
                let text = |k: &str| v.get(k).and_then(serde_json::Value::as_str).unwrap_or("").to_string();
                Outcome::Created { at_ms, uuid: text("uuid"), fabric_state: text("state") }.or_named(status)
            }
            Ok((status @ 500.., body)) => Outcome::Unknown { at_ms, error: fabric_error(status, body) },
            Ok((status, body)) => Outcome::Failed { at_ms, error: fabric_error(status, body) },
            Err(why) => Outcome::Unknown { at_ms, error: why },
        }
    }

    fn or_named(self, status: u16) -> Self {
        match self {
            Outcome::Created { at_ms, uuid, fabric_state } if uuid.is_empty() => Outcome::Created {
                at_ms,
                uuid: format!("(Fabric's answer, HTTP {status}, named no uuid)"),
                fabric_state,
            },
            other => other,
        }
    }
}

/// Fabric's error in one line: the status, then each error's code and message (the first three).
pub(crate) fn fabric_error(status: u16, body: &str) -> String {
    let errors: Vec<String> = match serde_json::from_str::<serde_json::Value>(body) {
        Ok(serde_json::Value::Array(all)) => all
            .iter()
            .take(3)
            .map(|e| {
                let text = |k: &str| e.get(k).and_then(serde_json::Value::as_str).unwrap_or("");
                format!("{} {}", text("errorCode"), text("errorMessage")).trim().to_string()
            })
            .filter(|e| !e.is_empty())
            .collect(),
        _ => Vec::new(),
    };
    let said = if errors.is_empty() {
        equinix_broker_contract::clip(body.trim(), 200)
    } else {
        equinix_broker_contract::clip(&errors.join("; "), 400)
    };
    crate::exact_json::visible(&format!("HTTP {status}: {said}"))
}

/// A decision as a state reads it (from the page's note, or from the inbox's listing).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Decided<'a> {
    pub approver: &'a str,
    pub approve: bool,
    pub at_ms: u64,
    pub reason: &'a str,
    pub named: Option<&'a Named>,
}

/// Where one request stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum State<'a> {
    /// Nobody has decided; the proposal's time has not ended.
    Waiting {
        until_ms: u64,
    },
    /// Under a quorum: some have approved, more must; the proposal's time has not ended.
    PartlyApproved {
        until_ms: u64,
        progress: &'a Progress,
    },
    /// Approved; the agent's call has not collected it, and may until `until_ms`.
    Approved {
        decision: Decided<'a>,
        until_ms: u64,
    },
    Declined {
        decision: Decided<'a>,
    },
    /// The proposal's time ended with nothing collected: approved (and never collected) or
    /// never decided.
    Expired {
        decision: Option<Decided<'a>>,
        at_ms: u64,
    },
    /// Approved and collected: what became of it.
    Collected {
        decision: Decided<'a>,
        outcome: &'a Outcome,
    },
}

impl<'a> State<'a> {
    /// The state of a request whose proposal's time ends at `until_ms`.
    pub(crate) fn of(until_ms: u64, decision: Option<Decided<'a>>, outcome: Option<&'a Outcome>, now_ms: u64) -> Self {
        match (decision, outcome) {
            (Some(d), _) if !d.approve => State::Declined { decision: d },
            (Some(d), Some(outcome)) => State::Collected { decision: d, outcome },
            (d, None) if now_ms >= until_ms => State::Expired { decision: d, at_ms: until_ms },
            (Some(d), None) => State::Approved { decision: d, until_ms },
            // an outcome with no decision is no page's (a decision is written before any call
            // collects it): the request waits as far as the page can tell
            (None, _) => State::Waiting { until_ms },
        }
    }

    /// A waiting request that some have approved under a quorum (`progress`) is partly approved.
    pub(crate) fn with_progress(self, progress: Option<&'a Progress>) -> Self {
        match (self, progress) {
            (State::Waiting { until_ms }, Some(progress)) if progress.approvals > 0 => {
                State::PartlyApproved { until_ms, progress }
            }
            (state, _) => state,
        }
    }

    /// Whether a person may still decide it.
    pub(crate) fn is_open(&self) -> bool {
        matches!(self, State::Waiting { .. } | State::PartlyApproved { .. })
    }

    /// The state's name, as the agent's answer, the inbox's filter and the notices spell it.
    pub(crate) fn name(&self) -> &'static str {
        match self {
            State::Waiting { .. } => "waiting",
            State::PartlyApproved { .. } => "partly_approved",
            State::Approved { .. } => "approved",
            State::Declined { .. } => "declined",
            State::Expired { .. } => "expired",
            State::Collected { outcome, .. } => match outcome {
                Outcome::Sending { .. } => "sending",
                Outcome::Created { .. } => "created",
                Outcome::Failed { .. } => "failed",
                Outcome::Unknown { .. } => "outcome_unknown",
                Outcome::NotSent { .. } => "not_sent",
            },
        }
    }

    /// Whether nothing more will happen to the request.
    pub(crate) fn is_final(&self) -> bool {
        !matches!(
            self,
            State::Waiting { .. }
                | State::PartlyApproved { .. }
                | State::Approved { .. }
                | State::Collected { outcome: Outcome::Sending { .. }, .. }
        )
    }

    /// The state in one sentence (or two), naming people through `who` and times through `at`.
    /// The decision, if one was made.
    pub(crate) fn decision(&self) -> Option<Decided<'a>> {
        match *self {
            State::Waiting { .. } | State::PartlyApproved { .. } | State::Expired { decision: None, .. } => None,
            State::Approved { decision, .. }
            | State::Declined { decision }
            | State::Expired { decision: Some(decision), .. }
            | State::Collected { decision, .. } => Some(decision),
        }
    }

    pub(crate) fn sentence(&self, who: &dyn Fn(Decided) -> String, at: &dyn Fn(u64) -> String) -> String {
        let decided = |d: &Decided| {
            let verb = if d.approve { "Approved" } else { "Declined" };
            format!("{verb} by {} at {}", who(*d), at(d.at_ms))
        };
        match self {
            State::Waiting { until_ms } => {
                format!("Waiting for a decision, until {}.", at(*until_ms))
            }
            State::PartlyApproved { until_ms, progress } => {
                format!("Partly approved: {}, until {}.", progress.said(), at(*until_ms))
            }
            State::Approved { decision, until_ms } => format!(
                "{}. Waiting for the agent to collect the approval and send the create, until {}.",
                decided(decision),
                at(*until_ms)
            ),
            State::Declined { decision } => format!("{}. Nothing will be created.", decided(decision)),
            State::Expired { decision: Some(d), at_ms } => format!(
                "{}, and expired at {} before the agent collected it. Nothing was created: ask the agent to propose \
                 again.",
                decided(d),
                at(*at_ms)
            ),
            State::Expired { decision: None, at_ms } => {
                format!("Expired at {}: nobody decided in time. Nothing was created.", at(*at_ms))
            }
            State::Collected { decision, outcome } => {
                let then = match outcome {
                    Outcome::Sending { at_ms } => {
                        format!("The agent collected it at {} and the create is on its way to Fabric.", at(*at_ms))
                    }
                    Outcome::Created { at_ms, uuid, fabric_state } => {
                        let state =
                            if fabric_state.is_empty() { String::new() } else { format!(", state {fabric_state}") };
                        format!("Created on Fabric at {}: uuid {uuid}{state}.", at(*at_ms))
                    }
                    Outcome::Failed { at_ms, error } => {
                        format!("Fabric refused the create at {} ({error}). Nothing was created.", at(*at_ms))
                    }
                    Outcome::Unknown { at_ms, error } => format!(
                        "The create was sent at {} and no answer came back ({error}): it may exist. Check Fabric for \
                         it before anyone proposes it again.",
                        at(*at_ms)
                    ),
                    Outcome::NotSent { at_ms, why } => {
                        format!("Collected at {}, and nothing was sent: {why}.", at(*at_ms))
                    }
                };
                format!("{}. {then}", decided(decision))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decision(approve: bool) -> Decided<'static> {
        Decided {
            approve,
            approver: "i#bob",
            at_ms: 60_000,
            reason: if approve { "" } else { "wrong metro" },
            named: None,
        }
    }

    #[test]
    fn one_state_follows_a_request_to_its_end() {
        let (r, yes, no) = (600_000, decision(true), decision(false));
        let who = |d: Decided| d.approver.to_string();
        let at = |ms: u64| format!("{}s", ms / 1000);
        let created = Outcome::of_answer(70_000, Ok((201, r#"{"uuid":"c-1","state":"PROVISIONING"}"#)));
        let failed = Outcome::of_answer(
            70_000,
            Ok((400, r#"[{"errorCode":"EQ-3142501","errorMessage":"Invalid argument value"}]"#)),
        );
        let unknown = Outcome::of_answer(70_000, Err("timed out after 30 s".into()));
        let cases: Vec<(State, &str, &str)> = vec![
            (State::of(r, None, None, 1), "waiting", "until 600s"),
            (State::of(r, Some(yes), None, 61_000), "approved", "Waiting for the agent to collect"),
            (State::of(r, Some(no), None, 61_000), "declined", "Declined by i#bob at 60s"),
            (State::of(r, Some(no), None, 700_000), "declined", "Nothing will be created"),
            (State::of(r, Some(yes), None, 600_000), "expired", "before the agent collected it"),
            (State::of(r, None, None, 600_000), "expired", "nobody decided in time"),
            (State::of(r, Some(yes), Some(&created), 700_000), "created", "uuid c-1, state PROVISIONING"),
            (State::of(r, Some(yes), Some(&failed), 700_000), "failed", "HTTP 400: EQ-3142501 Invalid argument"),
            (State::of(r, Some(yes), Some(&unknown), 70_000), "outcome_unknown", "it may exist"),
        ];
        for (state, name, says) in cases {
            assert_eq!(state.name(), name, "{state:?}");
            let sentence = state.sentence(&who, &at);
            assert!(sentence.contains(says), "{name}: {sentence}");
        }
        assert!(!State::of(r, Some(yes), None, 61_000).is_final());
        assert!(State::of(r, Some(yes), Some(&created), 61_000).is_final());
        assert!(!State::of(r, Some(yes), Some(&Outcome::Sending { at_ms: 1 }), 61_000).is_final());
        assert_eq!(Outcome::of_answer(1, Ok((502, "<html>bad gateway</html>"))).at_ms(), 1);
        let no_uuid = Outcome::of_answer(1, Ok((201, "{}")));
        assert!(matches!(&no_uuid, Outcome::Created { uuid, .. } if uuid.contains("named no uuid")), "{no_uuid:?}");
    }
}
