//! Every record the audit log holds, as types: written through them and read back through them
//! (`audit verify`), so a field renamed on one side is renamed on the other. A record is
//! [`Record::Event`] (named by its `event` member) or [`Record::Call`] (one mutating tool call,
//! which names no event). The chain's `seq` and `prev` come before these members
//! ([`super::chain`]); the members keep the order and the names of the records earlier versions
//! wrote, so those logs read back as the same types.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One record, its time first.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(untagged)]
// a record is made, written and dropped one at a time: its size never adds up
#[allow(clippy::large_enum_variant)]
pub(crate) enum Record {
    Event(Stamped),
    Call(Call),
}

/// An event with the time it was written.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct Stamped {
    pub ts: String,
    #[serde(flatten)]
    pub event: Event,
}

/// What happened, named by the record's `event` member.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
// as a record: made, written and dropped one at a time
#[allow(clippy::large_enum_variant)]
pub(crate) enum Event {
    /// A process opened the log: the first record of every process's writing.
    AuditLogOpened(Opened),
    /// The file at the log's path was replaced (a rotation): the new file's first record.
    AuditLogReopened(Reopened),
    /// Another process that shares the log crashed inside a record, never acknowledged: cut off.
    AuditLogTailCut(TailCut),
    /// An approval was minted after a person's yes (or the operator's opt-in).
    ApprovalMinted(ApprovalEvent),
    /// Its create is about to leave.
    CreateSending(ApprovalEvent),
    /// Its create did not leave (the `create_sending` record could not be written).
    CreateNotSent(ApprovalEvent),
    /// What Fabric answered the create.
    CreateOutcome(ApprovalEvent),
    /// The component dropped the approval unused.
    ApprovalDiscarded(ApprovalEvent),
    /// A person decided on the approval page.
    PageDecision(PageDecision),
    /// A decision that lost to another one made first.
    PageDecisionNotKept(PageDecisionNotKept),
    PasskeyEnrolled(PasskeyEnrolled),
    PasskeyEnrollmentNotKept(PasskeyNotKept),
    PasskeyRevoked(PasskeyRevoked),
    /// A notice was sent to the operator's destinations (webhook, Slack, Teams): what each came to.
    Notification(Notification),
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct Opened {
    /// This process (pid and a random suffix).
    pub instance: String,
    pub chain: String,
    /// `equinix-mcp VERSION`.
    pub server: String,
    /// Bytes a crash left after the last complete record, cut off at start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub torn_tail_cut: Option<TornTail>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct TornTail {
    pub bytes: u64,
    pub sha256: String,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct TailCut {
    /// The process that found and cut it.
    pub instance: String,
    pub torn_tail_cut: TornTail,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct Reopened {
    pub reason: String,
    pub instance: String,
    pub chain: String,
    /// The last record's hash in the file before (what this file's first `prev` names).
    pub previous_file_head: String,
}

/// What every record about one approval says, and what its create came to.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct ApprovalEvent {
    pub tool: String,
    pub principal: String,
    pub change_type: String,
    /// `POST /fabric/v4/...`.
    pub request: String,
    pub request_sha256: String,
    pub token: String,
    /// `accepted`, or `unsupported_by_client` under the operator's opt-in.
    pub human_status: String,
    /// `form`, `page` or `opt_in`.
    pub method: String,
    /// Who approved on the approval page; null for the other methods.
    pub approver: Option<String>,
    pub policy_decisions: Vec<PolicyDecision>,
    /// `executed`, `rejected`, `unknown` or `not_sent` (`create_outcome`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) http_status: Option<u16>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub correlation_id: Option<String>,
    /// The created resource's uuid (null when Fabric's 2xx named none); absent for other answers.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "present")]
    pub fabric_uuid: Option<Value>,
    /// Why the create was not sent, or got no answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The hash of the plan the person was shown (absent for proposals validated before plans).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan_sha256: Option<String>,
    /// The plan itself, in the `approval_minted` record (`audit verify` checks its hash).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<crate::plan::Plan>,
    /// Under a quorum: every approval that made it whole, each a `page_decision` record of its
    /// own (by its `decision_id`), on whichever replica it was given.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub approvals: Vec<Counted>,
    /// The quorums they met, as the policies write them (a break-glass one says so).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub quorum: Vec<String>,
}

/// One approval a quorum counted.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Counted {
    pub approver: String,
    pub decision_id: String,
}

/// One decision of the operator's policy.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PolicyDecision {
    /// `dry_run` or `approval`.
    pub phase: String,
    pub principal: String,
    pub change_type: String,
    pub request_sha256: String,
    /// `allow` or `deny`.
    pub decision: String,
    pub policies: Vec<String>,
    pub errors: Vec<String>,
    pub policy_sha256: String,
}

/// A person's decision on the approval page.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct PageDecision {
    /// `approve` or `decline`.
    pub decision: String,
    /// Always `page`.
    pub method: String,
    pub approver: String,
    pub approver_groups: Vec<String>,
    pub proposer: String,
    pub tool: String,
    pub token: String,
    pub validation: String,
    pub request_sha256: String,
    pub page: String,
    pub decision_id: String,
    /// Why the person could decide.
    pub rule: String,
    pub policy_ids: Vec<String>,
    pub peer: String,
    /// An approval's `passkey` or `sign_in`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approved_with: Option<String>,
    /// The assertion of a passkey approval, whole.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub passkey: Option<Evidence>,
    /// The hash of the plan the page showed, which a passkey's challenge covers beside the
    /// request's (absent for pages of proposals validated before plans).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan_sha256: Option<String>,
    /// The plan the page showed, whole.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<crate::plan::Plan>,
    /// The person's reason (a decline's) or comment (an approval's), in their words.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
    /// The quorums the request needed when this person decided (`"rule": 2 of netops`): each
    /// approval under one is a record of its own, and the one that made it whole decided.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub quorum: Vec<String>,
}

/// What the audit record keeps of a passkey approval: enough for anyone with the enrolled public
/// key to check the signature again (`passkeys::offline`).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Evidence {
    pub credential_id: String,
    pub(crate) rp_id: String,
    pub origin: String,
    pub counter: u32,
    pub user_verified: bool,
    /// The browser's answer as received: authenticator data, client data and signature.
    pub assertion: webauthn_rs::prelude::PublicKeyCredential,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct PageDecisionNotKept {
    pub page: String,
    pub decision_id: String,
    pub approver: String,
    pub reason: String,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct PasskeyEnrolled {
    pub credential_id: String,
    pub principal: String,
    pub(crate) rp_id: String,
    pub origin: String,
    pub algorithm: String,
    /// The COSE public key as webauthn-rs writes it.
    pub public_key: Value,
    pub peer: String,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct PasskeyNotKept {
    pub credential_id: String,
    pub principal: String,
    pub reason: String,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct Notification {
    /// What the notice was of: `change_waiting`, `change_approved`, ... (not `event`, which names
    /// the record's own kind)
    pub notice: String,
    /// The delivery's id, sent in `x-equinix-mcp-delivery`.
    pub delivery: String,
    pub request_sha256: String,
    /// What each destination's delivery came to.
    pub destinations: Vec<Delivered>,
}

/// One destination's delivery of a notice.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct Delivered {
    /// `webhook HOST`, `slack` or `teams` (never a secret URL).
    pub destination: String,
    /// `delivered`, `failed`, or `dropped` (never tried: the queue of notices was full).
    pub outcome: String,
    pub attempts: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) http_status: Option<u16>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct PasskeyRevoked {
    pub credential_id: String,
    pub principal: String,
    pub(crate) revoked_at: String,
    pub(crate) revoked_by: String,
    pub reason: String,
}

/// One call of a mutating tool (or of any tool the policy judged): what its result said.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct Call {
    pub ts: String,
    pub started: String,
    pub tool: String,
    /// `ok` or `error`.
    pub outcome: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confirm_token: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub change_type: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_sha256: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evicted_proposals: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub human_status: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub executed: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fabric_uuid: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub correlation_id: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome_unknown: Option<Value>,
    /// A tool error's kind and message (null when the error named none).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "present")]
    pub error_kind: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "present")]
    pub error: Option<Value>,
    pub principal: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub policy_decisions: Vec<PolicyDecision>,
}

impl Call {
    /// The record of a call of `tool` by `principal`, from its result (or tool error) JSON.
    pub(crate) fn of(
        tool: &str,
        principal: &str,
        started_ms: u64,
        finished_ms: u64,
        result: &Value,
        is_error: bool,
    ) -> Call {
        // Tool errors nest the confirm result under error.result; read both places.
        let body = if is_error { result["error"].get("result").unwrap_or(&Value::Null) } else { result };
        let field = |pointer: &str| -> Option<Value> {
            body.pointer(pointer).or_else(|| result.pointer(pointer)).filter(|v| !v.is_null()).cloned()
        };
        Call {
            ts: super::rfc3339(finished_ms),
            started: super::rfc3339(started_ms),
            tool: tool.to_string(),
            outcome: if is_error { "error" } else { "ok" }.to_string(),
            confirm_token: field("/confirm_token"),
            change_type: field("/change_type"),
            request_sha256: field("/request_sha256"),
            expires_at: field("/expires_at"),
            evicted_proposals: field("/evicted_proposals"),
            human_status: field("/human_confirmation/status"),
            executed: field("/executed"),
            fabric_uuid: field("/created/uuid"),
            correlation_id: field("/correlation_id"),
            outcome_unknown: field("/outcome_unknown"),
            error_kind: is_error.then(|| result["error"]["kind"].clone()),
            error: is_error.then(|| result["error"]["message"].clone()),
            principal: principal.to_string(),
            policy_decisions: Vec::new(),
        }
    }
}

/// A member that is there, even as null (absent is `None`, through `default`).
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

impl Event {
    /// This event at `ms` since the epoch.
    pub(crate) fn at(self, ms: u64) -> Record {
        Record::Event(Stamped { ts: super::rfc3339(ms), event: self })
    }
}

impl Record {
    /// The record as the one line the chain links.
    pub(crate) fn line(&self) -> String {
        serde_json::to_string(self).expect("an audit record serializes")
    }

    /// A record of a log, its chain link ignored; `None` for a line no version wrote.
    #[cfg(test)]
    pub fn read(record: &Value) -> Option<Record> {
        Record::deserialize(record).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Logs the previous version wrote (seeded simulator, passkeys by Chromium's virtual
    /// authenticator, signed checkpoints, a rotation): `host/tests/integration/audit_fixture.rs`
    /// checks that `audit verify` still passes them.
    const WRITTEN_BEFORE: [&str; 5] = [
        include_str!("testdata/audit.jsonl"),
        include_str!("testdata/page-decisions.jsonl"),
        include_str!("testdata/discarded.jsonl"),
        include_str!("testdata/rotated.1.jsonl"),
        include_str!("testdata/rotated.jsonl"),
    ];

    #[test]
    fn every_record_an_earlier_version_wrote_reads_as_its_type_and_writes_back_byte_for_byte() {
        let mut seen = std::collections::BTreeSet::new();
        for log in WRITTEN_BEFORE {
            for line in log.lines() {
                // the record's own members: the line without the chain's `"seq":N,"prev":"HASH",`
                let at = line.find(",\"prev\":\"").unwrap_or_else(|| panic!("no link: {line}")) + 9;
                let unlinked = format!("{{{}", &line[at + 64 + 2..]);
                let record: Value = serde_json::from_str(line).unwrap();
                let typed = Record::read(&record).unwrap_or_else(|| panic!("does not read: {line}"));
                seen.insert(match &typed {
                    Record::Event(Stamped { event, .. }) => format!("{event:?}").split('(').next().unwrap().to_string(),
                    Record::Call(_) => "Call".into(),
                });
                assert_eq!(typed.line(), unlinked, "a record of an earlier version does not write back the same");
            }
        }
        let expected = [
            "ApprovalDiscarded",
            "ApprovalMinted",
            "AuditLogOpened",
            "AuditLogReopened",
            "Call",
            "CreateOutcome",
            "CreateSending",
            "PageDecision",
            "PageDecisionNotKept",
            "PasskeyEnrolled",
            "PasskeyRevoked",
        ];
        assert_eq!(seen.into_iter().collect::<Vec<_>>(), expected, "the fixtures cover these kinds");
    }

    #[test]
    fn the_challenge_verified_offline_is_the_one_the_page_asked_to_sign() {
        // a page_decision as the page writes it, from its record
        let line = include_str!("testdata/audit.jsonl").lines().find(|l| l.contains("\"page_decision\"")).unwrap();
        let Some(Record::Event(Stamped { event: Event::PageDecision(decision), .. })) =
            Record::read(&serde_json::from_str(line).unwrap())
        else {
            panic!("{line}")
        };
        let record = crate::approval_page::PageRecord {
            id: decision.page.clone(),
            form_text: String::new(),
            request_sha256: decision.request_sha256.clone(),
            token: decision.token.clone(),
            validation: decision.validation.clone(),
            proposer: decision.proposer.clone(),
            tool: decision.tool.clone(),
            validated_at_ms: 0,
            created_at_ms: 0,
            expires_at_ms: 0,
            change_type: "connection_create".into(),
            transport: "http".into(),
            facts: None,
            plan: None,
            agent_reason: String::new(),
            break_glass: vec![],
        };
        use crate::passkeys::challenge::challenge;
        assert_eq!(challenge(&crate::passkeys::offline::identity(&decision)), challenge(&record.identity()));
    }

    #[test]
    fn calls_pick_the_confirm_fields_from_results_and_errors() {
        let ok = json!({"confirm_token": "chg-1", "change_type": "connection_create", "request_sha256": "ab",
                        "human_confirmation": {"status": "accepted"}, "executed": true,
                        "created": {"uuid": "u-1"}, "correlation_id": "c-1"});
        let e = Call::of("fabric_confirm_change", "alice", 1_000, 2_000, &ok, false);
        assert_eq!(
            (e.executed, e.fabric_uuid, e.human_status),
            (Some(json!(true)), Some(json!("u-1")), Some(json!("accepted")))
        );
        let err = json!({"error": {"kind": "outcome_unknown", "message": "m", "result": {"confirm_token": "chg-2", "executed": null, "outcome_unknown": true}}});
        let e = Call::of("fabric_confirm_change", "alice", 1_000, 2_000, &err, true);
        assert_eq!(e.confirm_token, Some(json!("chg-2")));
        assert_eq!(e.executed, None, "null is left out");
        assert_eq!(e.outcome_unknown, Some(json!(true)));
        assert_eq!(e.error_kind, Some(json!("outcome_unknown")));
    }

    #[test]
    fn records_keep_the_member_order_earlier_versions_wrote() {
        let call = Call::of("t", "alice", 0, 0, &json!({"confirm_token": "chg-1"}), false);
        assert_eq!(
            Record::Call(call).line(),
            r#"{"ts":"1970-01-01T00:00:00Z","started":"1970-01-01T00:00:00Z","tool":"t","outcome":"ok","confirm_token":"chg-1","principal":"alice"}"#
        );
        let opened = Event::AuditLogOpened(Opened {
            instance: "1-ab".into(),
            chain: "c".into(),
            server: "equinix-mcp 0.1.0".into(),
            torn_tail_cut: None,
        });
        assert_eq!(
            opened.at(0).line(),
            r#"{"ts":"1970-01-01T00:00:00Z","event":"audit_log_opened","instance":"1-ab","chain":"c","server":"equinix-mcp 0.1.0"}"#
        );
    }

    #[test]
    fn every_event_reads_back_as_itself_and_a_call_as_a_call() {
        let event = Event::PageDecisionNotKept(PageDecisionNotKept {
            page: "apv-1".into(),
            decision_id: "d".into(),
            approver: "i#a".into(),
            reason: "r".into(),
        })
        .at(5);
        let back = Record::read(&serde_json::from_str::<Value>(&event.line()).unwrap()).unwrap();
        assert_eq!(back.line(), event.line());
        assert!(matches!(back, Record::Event(_)));
        let call = Record::Call(Call::of("t", "p", 0, 0, &json!({}), false));
        let back = Record::read(&serde_json::from_str::<Value>(&call.line()).unwrap()).unwrap();
        assert!(matches!(back, Record::Call(_)) && back.line() == call.line());
        // the chain's members are no part of the record
        let linked = json!({"seq": 3, "prev": "00", "ts": "t", "event": "page_decision_not_kept", "page": "p",
                            "decision_id": "d", "approver": "a", "reason": "r"});
        assert!(matches!(
            Record::read(&linked),
            Some(Record::Event(Stamped { event: Event::PageDecisionNotKept(_), .. }))
        ));
    }
}
