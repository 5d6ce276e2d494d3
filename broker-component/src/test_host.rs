//! A scripted [`Host`] for native unit tests: canned Fabric answers, a fake clock, an in-memory
//! proposal store and a scripted person.

use alloc::collections::{BTreeMap, VecDeque};
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use crate::capability::*;

pub(crate) struct FakeHost {
    pub answers: VecDeque<Result<FabricResponse, FabricError>>,
    pub sent: Vec<FabricRequest>,
    pub now: u64,
    /// Milliseconds the person takes to answer.
    pub(crate) answer_delay: u64,
    pub answer: ConfirmStatus,
    pub unconfirmed_allowed: bool,
    pub delivery: Delivery,
    /// What each `ask` put before the person.
    pub prompts: Vec<(CreateRequest, Prompt)>,
    /// The token each `ask` named.
    pub(crate) asked_tokens: Vec<String>,
    /// The validated hash each `put` bound its record to, by token.
    pub bound: BTreeMap<String, String>,
    /// The requests of the approvals minted so far, by approval id (`None` once executed).
    pub approvals: Vec<Option<CreateRequest>>,
    /// What `execute` sent.
    pub created: Vec<CreateRequest>,
    pub store: BTreeMap<String, Taken>,
    pub minted: u32,
}

impl FakeHost {
    pub(crate) fn new() -> FakeHost {
        FakeHost {
            answers: VecDeque::new(),
            sent: Vec::new(),
            now: 1_700_000_000_000,
            answer_delay: 0,
            answer: ConfirmStatus::Accepted,
            unconfirmed_allowed: false,
            delivery: Delivery::Blocking,
            prompts: Vec::new(),
            asked_tokens: Vec::new(),
            bound: BTreeMap::new(),
            approvals: Vec::new(),
            created: Vec::new(),
            store: BTreeMap::new(),
            minted: 0,
        }
    }

    pub(crate) fn answering(status: u16, body: &str) -> FakeHost {
        let mut host = FakeHost::new();
        host.push(status, body);
        host
    }

    pub(crate) fn push(&mut self, status: u16, body: &str) {
        self.answers.push_back(Ok(FabricResponse {
            status,
            body: body.into(),
            correlation_id: Some("corr-test".into()),
        }));
    }
}

impl Host for FakeHost {
    fn fabric_send(&mut self, request: FabricRequest) -> Result<FabricResponse, FabricError> {
        self.sent.push(request);
        self.answers.pop_front().unwrap_or(Err(FabricError::Unavailable("no scripted answer".into())))
    }
    fn now_ms(&mut self) -> u64 {
        self.now
    }
    fn delivery(&mut self) -> Delivery {
        self.delivery
    }
    /// Mirrors the host's rule: an approval only for accepted, or for an unsupported client
    /// under the operator's opt-in; the first round only records the form.
    fn ask(&mut self, token: &str, request: CreateRequest, context: Prompt) -> Result<Answer, String> {
        self.asked_tokens.push(token.into());
        self.prompts.push((request.clone(), context));
        if self.delivery == Delivery::FirstRound {
            return Ok(Answer { status: ConfirmStatus::InputRequired, approval: None });
        }
        self.now += self.answer_delay;
        let approves = self.answer == ConfirmStatus::Accepted
            || (self.answer == ConfirmStatus::UnsupportedByClient && self.unconfirmed_allowed);
        let approval = approves.then(|| {
            let change = crate::spec::ChangeType::NAMES
                .iter()
                .filter_map(|n| crate::spec::ChangeType::parse(n))
                .find(|c| c.path() == request.path)
                .expect("a create path");
            let request_sha256 = crate::spec::request_sha256(change, &request.body);
            self.approvals.push(Some(request));
            Approval { id: self.approvals.len() as u32 - 1, request_sha256 }
        });
        Ok(Answer { status: self.answer, approval })
    }
    fn execute(&mut self, approval: Approval) -> Result<FabricResponse, FabricError> {
        let request = self.approvals[approval.id as usize].take().expect("an approval executes once");
        self.sent.push(FabricRequest {
            method: Method::Post,
            path: request.path.clone(),
            query: Vec::new(),
            body: Some(request.body.clone()),
        });
        self.created.push(request);
        self.answers.pop_front().unwrap_or(Err(FabricError::Unavailable("no scripted answer".into())))
    }
    fn store_put(
        &mut self,
        record: Vec<u8>,
        validated_sha256: &str,
        _expires_at_ms: u64,
        _capacity: u32,
    ) -> Result<Stored, String> {
        self.minted += 1;
        let token = format!("chg-{:032x}", self.minted);
        self.store.insert(token.clone(), Taken::Found(record));
        self.bound.insert(token.clone(), validated_sha256.into());
        Ok(Stored { token, evicted: Vec::new() })
    }
    fn store_peek(&mut self, token: &str) -> Taken {
        self.store.get(token).cloned().unwrap_or(Taken::Unknown)
    }
    fn store_take(&mut self, token: &str) -> Taken {
        match self.store.get(token).cloned() {
            Some(Taken::Found(r)) => {
                self.store.insert(token.into(), Taken::Used(None));
                Taken::Found(r)
            }
            Some(other) => other,
            None => Taken::Unknown,
        }
    }
    fn store_settle(&mut self, token: &str, outcome: Vec<u8>) {
        if let Some(Taken::Used(_)) = self.store.get(token) {
            self.store.insert(token.into(), Taken::Used(Some(outcome)));
        }
    }
}
