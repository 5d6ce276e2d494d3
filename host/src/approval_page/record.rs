//! What the approval page keeps in the proposal store (so every replica sharing it sees the same):
//! a record per question put on the page, the one decision a person made about it, and the
//! index from a tool call to its page. All are host notes with a time limit; none is a
//! credential: a page id grants nothing without a signed-in person the rules allow.

use serde::{Deserialize, Serialize};

use super::people::Named;
use super::state::{Decided, Outcome, State};
use crate::approval::{Form, Subject, TTL_MS};
use crate::policy::Facts;
use crate::principal::Principal;
use crate::proposals::{IndexKey, NoteKey, ProposalStore, StoreUnavailable};

pub(crate) use crate::approval::AFTERWARDS_MS;

/// One question put on the page: the host-rendered form and what it is bound to.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PageRecord {
    /// `apv-` and 128 random bits in hex: the link's only part.
    pub id: String,
    /// The form's whole text, exactly as the form elicitation shows it.
    pub form_text: String,
    pub request_sha256: String,
    /// The proposal and the validation it is bound to: a decision counts for these only.
    pub token: String,
    pub validation: String,
    /// The principal that proposed (and whose call asks).
    pub proposer: String,
    pub tool: String,
    pub validated_at_ms: u64,
    pub created_at_ms: u64,
    /// When a decision stops counting: the proposal's TTL on the host's clock.
    pub expires_at_ms: u64,
    /// What the operator's policy judges a person on: the action, the transport, and the facts
    /// the host derived from the bytes when it asked (none without a policy then).
    pub change_type: String,
    pub transport: String,
    pub facts: Option<Facts>,
    /// The plan shown first on the page (none for a proposal validated before plans).
    #[serde(default)]
    pub plan: Option<crate::plan::Plan>,
    /// The reason the agent gave with its proposal: its words, shown quoted as its own.
    #[serde(default)]
    pub agent_reason: String,
    /// The break-glass rules that held when it was put on the page: it is inside a freeze only
    /// their quorum opens, and says so wherever it shows.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub break_glass: Vec<String>,
}

/// What the rules of who may decide judge a question by: who asked, for what, how.
#[derive(Clone, Copy, Debug)]
pub struct Question<'a> {
    pub proposer: &'a str,
    pub change_type: &'a str,
    pub transport: &'a str,
    pub tool: &'a str,
    pub facts: Option<&'a Facts>,
}

/// The longest summary the inbox keeps of a page (the plan's first line is far shorter).
const SUMMARY_CHARS: usize = 300;

/// What the inbox lists of a page: kept in the store's index beside the page, so a list of two
/// hundred reads in one go. A decision made adds who, how and when.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Listed {
    pub id: String,
    /// The plan's summary line (the change type for a proposal validated before plans).
    pub summary: String,
    pub proposer: String,
    pub tool: String,
    pub transport: String,
    pub change_type: String,
    pub facts: Option<Facts>,
    pub created_at_ms: u64,
    pub expires_at_ms: u64,
    /// When Fabric validated the proposal: when it was proposed, as far as the host knows.
    #[serde(default)]
    pub validated_at_ms: u64,
    #[serde(default)]
    pub decision: Option<ListedDecision>,
    /// What became of it after the decision, once an agent's call collected it.
    #[serde(default)]
    pub outcome: Option<Outcome>,
    /// Under a quorum, once someone approved: how far it has come.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub progress: Option<crate::policy::Progress>,
    /// The break-glass rules it is under (see [`PageRecord::break_glass`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub break_glass: Vec<String>,
    /// Under a quorum: who approved so far (they wait for the others, as the proposer does).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub approved_by: Vec<String>,
}

/// A decision as the inbox lists it (no id: that is claimed by the call that collects it).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ListedDecision {
    pub approver: String,
    pub approve: bool,
    pub at_ms: u64,
    #[serde(default)]
    pub reason: String,
    #[serde(default)]
    pub named: Option<Named>,
}

impl ListedDecision {
    pub(crate) fn decided(&self) -> Decided<'_> {
        Decided {
            approver: &self.approver,
            approve: self.approve,
            at_ms: self.at_ms,
            reason: &self.reason,
            named: self.named.as_ref(),
        }
    }
}

impl Decision {
    pub(crate) fn decided(&self) -> Decided<'_> {
        Decided {
            approver: &self.approver,
            approve: self.approve,
            at_ms: self.at_ms,
            reason: &self.reason,
            named: self.named.as_ref(),
        }
    }

    fn listed(&self) -> ListedDecision {
        ListedDecision {
            approver: self.approver.clone(),
            approve: self.approve,
            at_ms: self.at_ms,
            reason: self.reason.clone(),
            named: self.named.clone(),
        }
    }
}

impl Listed {
    /// Where the listed request stands at `now_ms`.
    pub(crate) fn state(&self, now_ms: u64) -> State<'_> {
        let decided = self.decision.as_ref().map(ListedDecision::decided);
        State::of(self.expires_at_ms, decided, self.outcome.as_ref(), now_ms).with_progress(self.progress.as_ref())
    }

    pub(crate) fn question(&self) -> Question<'_> {
        Question {
            proposer: &self.proposer,
            change_type: &self.change_type,
            transport: &self.transport,
            tool: &self.tool,
            facts: self.facts.as_ref(),
        }
    }
}

/// How a decision reached the host.
pub(crate) const METHOD_PAGE: &str = "page";

/// The one decision made about a page (the first written wins, on every replica).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Decision {
    /// Claimed once by the call that uses it (like a stateless round's answer).
    pub id: String,
    pub approve: bool,
    /// `ISSUER#SUBJECT` of the person who signed in.
    pub approver: String,
    pub groups: Vec<String>,
    pub at_ms: u64,
    /// Why (a decline's, required) or the approver's comment (optional): the person's own words.
    #[serde(default)]
    pub reason: String,
    /// The approver's name and e-mail at their sign-in, when their provider gave them.
    #[serde(default)]
    pub named: Option<Named>,
    /// Under a quorum: every approval that made it whole, this approver's last (none when one
    /// approval decides).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub approvals: Vec<Approval>,
    /// The quorums it needed, as the policies write them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub quorum: Vec<String>,
}

/// One person's approval of a request that needs a quorum, kept in its place of the request's
/// ballot until the quorum is whole (see `proposals::ballot`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Approval {
    /// The audit record's `decision_id`.
    pub id: String,
    pub approver: String,
    pub groups: Vec<String>,
    pub at_ms: u64,
    #[serde(default)]
    pub reason: String,
    #[serde(default)]
    pub named: Option<Named>,
    /// `passkey` or `sign_in`.
    pub approved_with: String,
    /// The plan the approver was shown.
    #[serde(default)]
    pub plan_sha256: String,
}

impl crate::proposals::ballot::Vote for Approval {
    fn person(&self) -> &str {
        &self.approver
    }
}

impl Approval {
    pub(crate) fn voter(&self) -> crate::policy::Voter<'_> {
        crate::policy::Voter { person: &self.approver, groups: &self.groups }
    }
}

/// The longest reason or comment kept with a decision.
pub(crate) const MAX_REASON_CHARS: usize = 500;

impl PageRecord {
    /// A record of `form`, asked by `proposer`'s call of `tool` over `transport`.
    pub fn new(form: &Form, proposer: &Principal, tool: &str, transport: &str, now_ms: u64) -> Self {
        PageRecord {
            id: format!("apv-{}", hex::encode(rand::random::<[u8; 16]>())),
            form_text: form.text.clone(),
            request_sha256: form.subject.request_sha256.clone(),
            token: form.subject.token.clone(),
            validation: form.subject.validation.clone(),
            proposer: proposer.as_str().to_string(),
            tool: tool.to_string(),
            validated_at_ms: form.validated_at_ms,
            created_at_ms: now_ms,
            expires_at_ms: form.validated_at_ms.saturating_add(TTL_MS),
            change_type: form.change_type.clone(),
            transport: transport.to_string(),
            facts: form.policy_facts.as_deref().cloned(),
            plan: form.plan.clone(),
            agent_reason: String::new(),
            break_glass: Vec::new(),
        }
    }

    /// What the rules of who may decide judge this record by.
    pub fn question(&self) -> Question<'_> {
        Question {
            proposer: &self.proposer,
            change_type: &self.change_type,
            transport: &self.transport,
            tool: &self.tool,
            facts: self.facts.as_ref(),
        }
    }

    /// What the inbox lists of this record.
    pub(crate) fn listed(&self) -> Listed {
        let summary = match &self.plan {
            Some(plan) => equinix_broker_contract::clip(&plan.summary, SUMMARY_CHARS),
            None => self.change_type.clone(),
        };
        Listed {
            id: self.id.clone(),
            summary,
            proposer: self.proposer.clone(),
            tool: self.tool.clone(),
            transport: self.transport.clone(),
            change_type: self.change_type.clone(),
            facts: self.facts.clone(),
            created_at_ms: self.created_at_ms,
            expires_at_ms: self.expires_at_ms,
            validated_at_ms: self.validated_at_ms,
            decision: None,
            outcome: None,
            progress: None,
            approved_by: Vec::new(),
            break_glass: self.break_glass.clone(),
        }
    }

    /// The hash of the plan the page shows (empty without one).
    pub(crate) fn plan_sha256(&self) -> String {
        self.plan.as_ref().map(crate::plan::Plan::sha256).unwrap_or_default()
    }

    /// What a passkey signs to approve this record's request (with no comment).
    pub(crate) fn identity(&self) -> crate::passkeys::ApprovalIdentity<'_> {
        self.identity_saying("")
    }

    /// What a passkey signs to approve this record's request with the approver's `comment` (as the
    /// decision keeps it): their words are signed with the request.
    pub(crate) fn identity_saying(&self, comment: &str) -> crate::passkeys::ApprovalIdentity<'_> {
        crate::passkeys::ApprovalIdentity {
            page: &self.id,
            token: &self.token,
            request_sha256: &self.request_sha256,
            validation: &self.validation,
            proposer: &self.proposer,
            plan_sha256: self.plan_sha256(),
            comment_sha256: crate::passkeys::ApprovalIdentity::comment_hash(comment),
        }
    }

    /// What a decision on this record is about: the proposal, its validation and the bytes.
    /// The form's text is no part of it: the component's context may change from one call to
    /// the next (the proposal's age, say), and the person must keep the one link they were given.
    pub(crate) fn subject(&self) -> Subject {
        Subject {
            token: self.token.clone(),
            validation: self.validation.clone(),
            request_sha256: self.request_sha256.clone(),
            plan_sha256: self.plan_sha256(),
        }
    }
}

/// Whether `id` has the shape of a page id (anything else is not looked up).
pub(crate) fn is_page_id(id: &str) -> bool {
    id.len() == 36 && id.starts_with("apv-") && id[4..].bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// The page's notes in `store`.
pub struct Notes<'a> {
    pub store: &'a ProposalStore,
    pub now_ms: u64,
}

fn unreadable(what: &str, e: serde_json::Error) -> StoreUnavailable {
    StoreUnavailable::full(format!("the stored {what} does not read: {e}"))
}

impl Notes<'_> {
    fn ttl(&self, record: &PageRecord) -> u64 {
        record.expires_at_ms.saturating_add(AFTERWARDS_MS).saturating_sub(self.now_ms).max(1)
    }

    /// Puts `record` on the page (and in the inbox until it is decided or its time is up).
    pub async fn put(&self, record: &PageRecord, call: Option<&str>) -> Result<(), StoreUnavailable> {
        let bytes = serde_json::to_vec(record).expect("a record serializes");
        let ttl = self.ttl(record);
        self.store.note_put(&NoteKey::PageRecord(&record.id), &bytes, ttl, false, self.now_ms).await?;
        if let Some(call) = call {
            self.store.note_put(&NoteKey::PageOfCall(call), record.id.as_bytes(), ttl, false, self.now_ms).await?;
        }
        let listed = serde_json::to_vec(&record.listed()).expect("a listing serializes");
        // kept past its end, so the inbox can say it expired with nobody deciding
        let (at, until) = (record.created_at_ms, record.expires_at_ms.saturating_add(AFTERWARDS_MS));
        self.store.index_put(IndexKey::Waiting, &record.id, at, until, &listed, self.now_ms).await
    }

    /// Takes `record` out of the inbox: its question no longer waits (another page asks it again).
    pub(crate) async fn superseded(&self, record: &PageRecord) -> Result<(), StoreUnavailable> {
        self.store.index_remove(IndexKey::Waiting, &record.id).await
    }

    /// Up to `limit` of the inbox's waiting pages, newest first, put before `before_ms` if given.
    pub(crate) async fn waiting(&self, before_ms: Option<u64>, limit: usize) -> Result<Vec<Listed>, StoreUnavailable> {
        self.listed(IndexKey::Waiting, before_ms, limit).await
    }

    /// Up to `limit` of the latest decisions, newest first.
    pub(crate) async fn decided(&self, limit: usize) -> Result<Vec<Listed>, StoreUnavailable> {
        self.listed(IndexKey::Decided, None, limit).await
    }

    async fn listed(
        &self,
        index: IndexKey,
        before: Option<u64>,
        limit: usize,
    ) -> Result<Vec<Listed>, StoreUnavailable> {
        let found = self.store.index_newest(index, before, limit, self.now_ms).await?;
        found.iter().map(|e| serde_json::from_slice(&e.value).map_err(|e| unreadable("inbox entry", e))).collect()
    }

    pub async fn record(&self, id: &str) -> Result<Option<PageRecord>, StoreUnavailable> {
        if !is_page_id(id) {
            return Ok(None);
        }
        match self.store.note_get(&NoteKey::PageRecord(id), self.now_ms).await? {
            Some(bytes) => serde_json::from_slice(&bytes).map(Some).map_err(|e| unreadable("page record", e)),
            None => Ok(None),
        }
    }

    /// The page the call whose page index is `call` opened, if it is still kept.
    pub(crate) async fn of_call(&self, call: &str) -> Result<Option<PageRecord>, StoreUnavailable> {
        match self.store.note_get(&NoteKey::PageOfCall(call), self.now_ms).await? {
            Some(id) => self.record(&String::from_utf8_lossy(&id)).await,
            None => Ok(None),
        }
    }

    pub(crate) async fn decision(&self, id: &str) -> Result<Option<Decision>, StoreUnavailable> {
        match self.store.note_get(&NoteKey::PageDecision(id), self.now_ms).await? {
            Some(bytes) => serde_json::from_slice(&bytes).map(Some).map_err(|e| unreadable("decision", e)),
            None => Ok(None),
        }
    }

    /// Writes `decision` unless one was made already: `true` when this one is the decision.
    /// The inbox follows: the page leaves the waiting ones and joins the latest decisions (kept
    /// as long as the page says what happened). A failure there is logged, not returned: the
    /// decision is made, and a list a little behind misleads nobody (the page tells the truth).
    pub async fn decide(&self, record: &PageRecord, decision: &Decision) -> Result<bool, StoreUnavailable> {
        let bytes = serde_json::to_vec(decision).expect("a decision serializes");
        let written = self.ballot(record).close(&bytes).await?;
        if written && let Err(e) = self.list_decision(record, decision).await {
            tracing::warn!(page = %record.id, "the inbox does not show this decision yet: {e}");
        }
        Ok(written)
    }

    async fn list_decision(&self, record: &PageRecord, decision: &Decision) -> Result<(), StoreUnavailable> {
        self.store.index_remove(IndexKey::Waiting, &record.id).await?;
        self.list_decided(record, decision, None).await
    }

    async fn list_decided(
        &self,
        record: &PageRecord,
        decision: &Decision,
        outcome: Option<&Outcome>,
    ) -> Result<(), StoreUnavailable> {
        let listed = Listed { decision: Some(decision.listed()), outcome: outcome.cloned(), ..record.listed() };
        let bytes = serde_json::to_vec(&listed).expect("a listing serializes");
        let until = self.ttl(record).saturating_add(self.now_ms);
        self.store.index_put(IndexKey::Decided, &record.id, decision.at_ms, until, &bytes, self.now_ms).await
    }

    /// The request's ballot: its approvals under a quorum, and its decision.
    pub(crate) fn ballot<'b>(&'b self, record: &'b PageRecord) -> crate::proposals::ballot::Ballot<'b> {
        crate::proposals::ballot::Ballot {
            store: self.store,
            page: &record.id,
            ttl_ms: self.ttl(record),
            now_ms: self.now_ms,
        }
    }

    /// The approvals kept of `record`'s request under a quorum, in their order.
    pub(crate) async fn approvals(&self, record: &PageRecord) -> Result<Vec<Approval>, StoreUnavailable> {
        self.ballot(record).votes().await
    }

    /// Lists `record` in the inbox as partly approved by `approvals`, `progress` so far (it still
    /// waits).
    pub(crate) async fn list_progress(
        &self,
        record: &PageRecord,
        approvals: &[Approval],
        progress: &crate::policy::Progress,
    ) -> Result<(), StoreUnavailable> {
        let approved_by = approvals.iter().map(|a| a.approver.clone()).collect();
        let listed = Listed { progress: Some(progress.clone()), approved_by, ..record.listed() };
        let bytes = serde_json::to_vec(&listed).expect("a listing serializes");
        let until = record.expires_at_ms.saturating_add(AFTERWARDS_MS);
        self.store.index_put(IndexKey::Waiting, &record.id, record.created_at_ms, until, &bytes, self.now_ms).await
    }

    /// What became of page `id`'s approved request after an agent's call collected it.
    pub(crate) async fn outcome(&self, id: &str) -> Result<Option<Outcome>, StoreUnavailable> {
        match self.store.note_get(&NoteKey::PageOutcome(id), self.now_ms).await? {
            Some(bytes) => serde_json::from_slice(&bytes).map(Some).map_err(|e| unreadable("outcome", e)),
            None => Ok(None),
        }
    }

    /// Records what became of page `id`'s approved request, and lists it so in the inbox.
    pub(crate) async fn set_outcome(&self, id: &str, outcome: &Outcome) -> Result<(), StoreUnavailable> {
        let Some(record) = self.record(id).await? else { return Ok(()) };
        let bytes = serde_json::to_vec(outcome).expect("an outcome serializes");
        self.store.note_put(&NoteKey::PageOutcome(id), &bytes, self.ttl(&record), false, self.now_ms).await?;
        match self.decision(id).await? {
            Some(decision) => self.list_decided(&record, &decision, Some(outcome)).await,
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn form() -> Form {
        Form {
            text: "request_sha256: abc".into(),
            subject: Subject {
                token: "chg-a".into(),
                validation: "v-1".into(),
                request_sha256: "abc".into(),
                plan_sha256: String::new(),
            },
            validated_at_ms: 1000,
            change_type: "connection_create".into(),
            policy_facts: None,
            plan: None,
        }
    }

    #[tokio::test]
    async fn one_decision_per_page_and_a_call_finds_its_page() {
        let store = ProposalStore::new();
        let notes = Notes { store: &store, now_ms: 2000 };
        let record = PageRecord::new(&form(), &Principal::named("ops"), "fabric_confirm_change", "http", 2000);
        assert!(is_page_id(&record.id), "{}", record.id);
        assert_eq!(record.expires_at_ms, 1000 + TTL_MS);
        let call = crate::approval::CallKey::new(
            &Principal::named("ops"),
            "t",
            &serde_json::json!({"confirm_token": "chg-a"}),
        )
        .page_index();
        notes.put(&record, Some(&call)).await.unwrap();
        assert_eq!(notes.of_call(&call).await.unwrap(), Some(record.clone()));
        assert_eq!(notes.record(&record.id).await.unwrap(), Some(record.clone()));
        assert_eq!(notes.record("apv-../../etc").await.unwrap(), None);
        let decision = |approve| Decision {
            id: "d".into(),
            approve,
            approver: "i#alice".into(),
            groups: vec![],
            at_ms: 2,
            reason: String::new(),
            named: None,
            approvals: vec![],
            quorum: vec![],
        };
        assert_eq!(notes.waiting(None, 10).await.unwrap(), [record.listed()], "in the inbox while it waits");
        assert!(notes.decide(&record, &decision(false)).await.unwrap());
        assert!(notes.waiting(None, 10).await.unwrap().is_empty(), "decided, it no longer waits");
        let decided = notes.decided(10).await.unwrap();
        assert_eq!(decided.len(), 1);
        assert_eq!(decided[0].decision.as_ref().map(|d| (d.approve, d.approver.as_str())), Some((false, "i#alice")));
        assert!(!notes.decide(&record, &decision(true)).await.unwrap(), "the first decision stands");
        assert_eq!(notes.decision(&record.id).await.unwrap(), Some(decision(false)));
        assert_eq!(record.subject(), form().subject, "a record is about its form's subject");
        // without a quorum, what is kept reads as an earlier build wrote it (replicas upgrade in turn)
        for kept in [
            serde_json::to_value(&record).unwrap(),
            serde_json::to_value(decision(true)).unwrap(),
            serde_json::to_value(record.listed()).unwrap(),
        ] {
            for new in ["break_glass", "approvals", "quorum", "approved_by", "progress"] {
                assert!(kept.get(new).is_none(), "{new} in {kept}");
            }
        }
        let older = Form { text: "request_sha256: abc\n| proposal age: 2 min".into(), ..form() };
        assert_eq!(record.subject(), older.subject, "the component's words may change, the link stays");
    }
}
