//! A scripted [`Host`] for native unit tests.

use alloc::collections::VecDeque;
use alloc::string::String;
use alloc::vec::Vec;

use crate::capability::*;

pub struct FakeHost {
    pub answers: VecDeque<Result<FabricResponse, FabricError>>,
    pub sent: Vec<FabricRequest>,
    pub now: u64,
}

impl FakeHost {
    pub fn answering(status: u16, body: &str) -> FakeHost {
        let mut host = FakeHost { answers: VecDeque::new(), sent: Vec::new(), now: 1_700_000_000_000 };
        host.answers.push_back(Ok(FabricResponse {
            status,
            body: body.into(),
            correlation_id: Some("corr-test".into()),
        }));
        host
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
    fn confirm(&mut self, _prompt: Prompt) -> ConfirmStatus {
        ConfirmStatus::Declined
    }
    fn unconfirmed_allowed(&mut self) -> bool {
        false
    }
    fn store_put(&mut self, _record: Vec<u8>, _expires_at_ms: u64, _capacity: u32) -> Stored {
        Stored { token: String::from("chg-test"), evicted: Vec::new() }
    }
    fn store_peek(&mut self, _token: &str) -> Taken {
        Taken::Unknown
    }
    fn store_take(&mut self, _token: &str) -> Taken {
        Taken::Unknown
    }
    fn store_settle(&mut self, _token: &str, _outcome: Vec<u8>) {}
}
