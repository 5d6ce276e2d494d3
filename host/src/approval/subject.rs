//! What an answer is about, and which call it belongs to.
//!
//! A person's answer (a form accepted, a stateless round's answer, a decision on the page) is
//! given about one [`Subject`]: the proposal's token, the validation that proposal is bound to,
//! and the SHA-256 of the request they were shown. It counts for a question about that same
//! subject only; the subject is compared whole, so a new field cannot be forgotten by one path.
//!
//! A [`CallKey`] names one tool call (principal, tool, the arguments' value): a sealed
//! `requestState` is bound to it, and a client with no elicitation finds its page again by it.

use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::principal::Principal;

/// What a question asks about, and what an answer was given about.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Subject {
    /// The proposal (`chg-...`).
    pub token: String,
    /// The id of the dry run the proposal is bound to: the same bytes validated again are
    /// another validation, and an answer about one does not count for the other.
    pub validation: String,
    /// The hash of the exact request the person was shown.
    pub request_sha256: String,
    /// The hash of the plan the person was shown (empty for a proposal validated before plans).
    pub plan_sha256: String,
}

/// Where an answer was given, for the words of a refusal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AnsweredOn {
    /// A 2026-07-28 first round's form; the retry carries the answer in `requestState`.
    StatelessRound,
    /// The approval page.
    Page,
}

impl AnsweredOn {
    /// (what was given, how it was given, who asks now, what counts).
    fn words(self) -> (&'static str, &'static str, &'static str, &'static str) {
        match self {
            AnsweredOn::StatelessRound => (
                "the person's answer in requestState",
                "was given",
                "this retry",
                "an answer counts only for the proposal it was asked about",
            ),
            AnsweredOn::Page => (
                "the decision on the approval page",
                "was made",
                "this call",
                "a decision counts only for the proposal it was made about",
            ),
        }
    }
}

impl Subject {
    /// Why an answer given about `self` on `on` does not answer a question about `asked`, if it
    /// does not: another proposal, or the same proposal's request under another validation or
    /// with other bytes.
    pub(crate) fn mismatch(&self, asked: &Subject, on: AnsweredOn) -> Option<String> {
        if self == asked {
            return None;
        }
        let (answer, given, asker, counts) = on.words();
        if self.token != asked.token {
            return Some(format!(
                "{answer} {given} about proposal {}, and {asker} asks about proposal {}; {counts}, so nothing was approved",
                self.token, asked.token
            ));
        }
        if self.validation == asked.validation && self.request_sha256 == asked.request_sha256 {
            return Some(format!(
                "{answer} {given} about plan {} of this request, and {asker} asks about plan {}: the plan changed between \
                 showing and deciding, so nothing was approved",
                self.plan_sha256, asked.plan_sha256
            ));
        }
        Some(format!(
            "{answer} {given} about request {} as validated then, and {asker} asks about request {} under another \
             validation; nothing was approved",
            self.request_sha256, asked.request_sha256
        ))
    }
}

/// One tool call: its principal, its tool and its arguments' value.
///
/// The arguments are bound as a JSON value, not as the bytes a client sent: a retry that
/// reorders keys or escapes a character differently is the same call, and any other value is not
/// (`1` and `1.0` differ, as they do to the component). The value is read as its text with every
/// object's keys sorted (`canonical_json`), not serde_json's map order: `cedar-policy` turns on
/// its `preserve_order`, under which a map keeps the client's order.
pub struct CallKey {
    principal: String,
    tool: String,
    arguments: String,
}

impl CallKey {
    pub(crate) fn new(principal: &Principal, tool: &str, arguments: &Value) -> Self {
        CallKey {
            principal: principal.as_str().to_string(),
            tool: tool.to_string(),
            arguments: equinix_broker_contract::canonical_json(arguments),
        }
    }

    /// What a sealed `requestState` is bound to (authenticated, not stored in the state).
    pub(crate) fn sealing_data(&self) -> Vec<u8> {
        let arguments = hex::encode(Sha256::digest(self.arguments.as_bytes()));
        let parts = ["equinix-mcp input round v3", &self.principal, &self.tool, &arguments];
        serde_json::to_vec(&parts).expect("strings always serialize")
    }

    /// The key under which the page this call opened is found again when the agent calls the
    /// same tool the same way (a client with no elicitation).
    pub(crate) fn page_index(&self) -> String {
        let parts = ["equinix-mcp approval call v1", &self.principal, &self.tool, &self.arguments];
        hex::encode(Sha256::digest(serde_json::to_vec(&parts).expect("strings serialize")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn subject() -> Subject {
        Subject {
            token: "chg-a".into(),
            validation: "v-1".into(),
            request_sha256: "abc".into(),
            plan_sha256: "p1".into(),
        }
    }

    #[test]
    fn an_answer_answers_only_its_own_subject() {
        let asked = subject();
        assert_eq!(subject().mismatch(&asked, AnsweredOn::Page), None);
        for (other, why) in [
            (Subject { token: "chg-b".into(), ..subject() }, "another proposal of the same bytes"),
            (Subject { validation: "v-2".into(), ..subject() }, "another validation"),
            (Subject { request_sha256: "def".into(), ..subject() }, "other bytes"),
            (Subject { plan_sha256: "p2".into(), ..subject() }, "another plan of the same bytes"),
        ] {
            for on in [AnsweredOn::Page, AnsweredOn::StatelessRound] {
                let refused = other.mismatch(&asked, on).unwrap_or_else(|| panic!("{why} was taken as an answer"));
                assert!(refused.contains("nothing was approved"), "{why}: {refused}");
            }
        }
        let page = Subject { token: "chg-b".into(), ..subject() }.mismatch(&asked, AnsweredOn::Page).unwrap();
        assert!(page.starts_with("the decision on the approval page was made about proposal chg-b"), "{page}");
        let round = Subject { validation: "v-2".into(), ..subject() }.mismatch(&asked, AnsweredOn::StatelessRound);
        assert!(round.unwrap().contains("requestState was given about request abc as validated then"));
        let replanned = Subject { plan_sha256: "p2".into(), ..subject() }.mismatch(&asked, AnsweredOn::Page).unwrap();
        assert!(replanned.contains("about plan p2") && replanned.contains("the plan changed"), "{replanned}");
    }

    #[test]
    fn a_call_key_is_the_arguments_value_whatever_their_key_order() {
        let me = Principal::local();
        let key = |text: &str| {
            let k = CallKey::new(&me, "fabric_confirm_change", &serde_json::from_str(text).unwrap());
            (k.sealing_data(), k.page_index())
        };
        // the same value, however the client wrote it
        let base = key(r#"{"b":1,"a":{"d":2,"c":[{"f":1,"e":"A"}]}}"#);
        assert_eq!(base, key(r#"{"a":{"c":[{"e":"\u0041","f":1}],"d":2},"b":1}"#));
        assert_eq!(base, key(r#"{ "a" : { "d" : 2, "c" : [ { "f" : 1, "e" : "A" } ] }, "b" : 1 }"#));
        // any other value is another call
        for other in [
            r#"{"b":1.0,"a":{"d":2,"c":[{"f":1,"e":"A"}]}}"#,
            r#"{"b":"1","a":{"d":2,"c":[{"f":1,"e":"A"}]}}"#,
            r#"{"b":1,"a":{"d":2,"c":[{"e":"A","f":1}, 0]}}"#,
            r#"{"b":1,"a":{"d":2,"c":[{"f":1,"e":"a"}]}}"#,
            r#"{"b":1,"a":{"d":2,"c":[{"f":1,"e":"A"}]},"x":null}"#,
        ] {
            let (sealing, index) = key(other);
            assert!(sealing != base.0 && index != base.1, "{other}");
        }
        let args = json!({"confirm_token": "chg-a"});
        let other_principal = CallKey::new(&Principal::named("bob"), "fabric_confirm_change", &args);
        let other_tool = CallKey::new(&me, "fabric_propose_change", &args);
        let mine = CallKey::new(&me, "fabric_confirm_change", &args);
        for other in [other_principal, other_tool] {
            assert_ne!(other.sealing_data(), mine.sealing_data());
            assert_ne!(other.page_index(), mine.page_index());
        }
    }

    #[test]
    fn the_derivations_are_pinned() {
        // replicas of different versions share sealed states and page indexes: a change of
        // either derivation must be a deliberate one (values from the previous version's code)
        let key = CallKey::new(&Principal::local(), "t", &json!({"confirm_token": "chg-a"}));
        assert_eq!(
            String::from_utf8(key.sealing_data()).unwrap(),
            r#"["equinix-mcp input round v3","local","t","1e36c2b4dbea370d635237a36cc1ab98f01d75e58c2e03ef66c155400f9f86ff"]"#
        );
        assert_eq!(key.page_index(), "cf0f755b515b98188e7b960368db656a28ca7b8e405523fbcf5b3a89c6dd764d");
    }
}
