//! The members of the broker tools' answers that the host acts on, named once for both sides: the
//! component writes them and lists them in its tools' output schemas; the host reads them only
//! through [`Proposed`] and [`Confirmed`], never by a path of its own. What they say is a claim
//! of the component's: the host uses them to word what it adds to a result (the agent's next
//! step, the agent's reason kept for the approver), never to decide what a person approved.

use serde_json::Value;

use crate::ConfirmStatus;

/// The token a propose's answer names.
pub const CONFIRM_TOKEN: &str = "confirm_token";
/// What the agent should do next, in a sentence.
pub const NEXT_STEP: &str = "next_step";
/// A confirm's answer: how the person was asked, under `status`.
pub const HUMAN_CONFIRMATION: &str = "human_confirmation";

/// An error answer's envelope, `{"error": {"kind": …, "message": …, …}}`: the component's and
/// the host's alike.
pub const ERROR: &str = "error";
pub const ERROR_KIND: &str = "kind";
pub const ERROR_MESSAGE: &str = "message";

/// An error answer's kind (a metric's label): the host reads no more of it.
pub fn error_kind(answer: &Value) -> Option<&str> {
    answer.get(ERROR)?.get(ERROR_KIND)?.as_str()
}

/// What the host reads of a propose's answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Proposed<'a> {
    pub confirm_token: &'a str,
}

impl<'a> Proposed<'a> {
    /// The answer's token, if it names one (a proposal was stored).
    pub fn read(answer: &'a Value) -> Option<Self> {
        answer.get(CONFIRM_TOKEN).and_then(Value::as_str).map(|confirm_token| Proposed { confirm_token })
    }
}

/// What the host reads of a confirm's answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Confirmed<'a> {
    /// `human_confirmation.status`, where the answer has one.
    pub status: Option<&'a str>,
    /// Whether it says what to do next.
    pub says_next_step: bool,
}

impl<'a> Confirmed<'a> {
    pub fn read(answer: &'a Value) -> Self {
        Confirmed {
            status: answer.get(HUMAN_CONFIRMATION).and_then(|h| h.get("status")).and_then(Value::as_str),
            says_next_step: answer.get(NEXT_STEP).is_some(),
        }
    }

    /// Nobody could be asked, and the component said what the agent can do instead.
    pub fn reached_nobody(&self) -> bool {
        self.status == Some(ConfirmStatus::UnsupportedByClient.as_str()) && self.says_next_step
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const NOBODY: &str = "unsupported_by_client";

    #[test]
    fn an_error_is_read_by_its_kind() {
        assert_eq!(
            error_kind(&json!({ERROR: {ERROR_KIND: "too_many_calls", ERROR_MESSAGE: "wait"}})),
            Some("too_many_calls")
        );
        assert_eq!(error_kind(&json!({ERROR: "flat"})), None);
        assert_eq!(error_kind(&json!({CONFIRM_TOKEN: "chg-1"})), None);
    }

    #[test]
    fn a_propose_is_read_by_its_token_only_when_it_names_one() {
        let answer = json!({CONFIRM_TOKEN: "chg-1", NEXT_STEP: "confirm"});
        assert_eq!(Proposed::read(&answer), Some(Proposed { confirm_token: "chg-1" }));
        assert_eq!(Proposed::read(&json!({CONFIRM_TOKEN: 7})), None);
        assert_eq!(Proposed::read(&json!({"error": {"kind": "x"}})), None);
    }

    #[test]
    fn a_confirm_reached_nobody_only_with_that_status_and_a_next_step() {
        let nobody = json!({HUMAN_CONFIRMATION: {"status": NOBODY}, NEXT_STEP: "enroll"});
        assert!(Confirmed::read(&nobody).reached_nobody());
        let silent = json!({HUMAN_CONFIRMATION: {"status": NOBODY}});
        assert!(!Confirmed::read(&silent).reached_nobody());
        let declined = json!({HUMAN_CONFIRMATION: {"status": "declined"}, NEXT_STEP: "propose again"});
        assert_eq!(Confirmed::read(&declined).status, Some("declined"));
        assert!(!Confirmed::read(&declined).reached_nobody());
    }
}
