//! The only file that touches the generated WIT bindings: it adapts the imports to
//! [`crate::capability::Host`] and the `tools` export to the pure dispatcher.
//!
//! Part of the guest's runtime shim, where `unsafe` is allowed: the canonical ABI's glue that
//! wit-bindgen generates is `unsafe`, and nothing written by hand here is.
#![allow(unsafe_code)]

use alloc::string::String;
use alloc::vec::Vec;

use crate::capability::{self as cap, Host};
use crate::catalog;

// the world's bindings, generated from wit/ by .ci/guest-bindings (what wit_bindgen::generate!
// would expand to, without compiling the generator into every build)
include!("../../wit/guest/broker.rs");

use equinix::broker::{clock, confirmation, fabric, proposal_store};
use exports::equinix::broker::tools;

/// The host, reached through the world's imports. Holds the approvals of this call: the
/// capability layer names them by index so the pure logic never touches a binding.
#[derive(Default)]
struct Imports {
    approvals: Vec<Option<confirmation::Approval>>,
}

impl Host for Imports {
    fn fabric_send(&mut self, r: cap::FabricRequest) -> Result<cap::FabricResponse, cap::FabricError> {
        let req = fabric::Request {
            method: match r.method {
                cap::Method::Get => fabric::Method::Get,
                cap::Method::Post => fabric::Method::Post,
            },
            path: r.path,
            query: r.query,
            body: r.body,
        };
        fabric_result(fabric::send(&req))
    }

    fn now_ms(&mut self) -> u64 {
        clock::now_ms()
    }

    fn delivery(&mut self) -> cap::Delivery {
        match confirmation::current_delivery() {
            confirmation::Delivery::Blocking => cap::Delivery::Blocking,
            confirmation::Delivery::FirstRound => cap::Delivery::FirstRound,
            confirmation::Delivery::Answered => cap::Delivery::Answered,
        }
    }

    fn ask(&mut self, token: &str, request: cap::CreateRequest, context: cap::Prompt) -> Result<cap::Answer, String> {
        let request = confirmation::CreateRequest { path: request.path, body: request.body };
        let context = confirmation::Context { title: context.title, message: context.message, fields: context.fields };
        let answer = confirmation::ask(token, &request, &context)?;
        let status = match answer.status {
            confirmation::Status::Accepted => cap::ConfirmStatus::Accepted,
            confirmation::Status::Declined => cap::ConfirmStatus::Declined,
            confirmation::Status::Cancelled => cap::ConfirmStatus::Cancelled,
            confirmation::Status::TimedOut => cap::ConfirmStatus::TimedOut,
            confirmation::Status::Failed => cap::ConfirmStatus::Failed,
            confirmation::Status::CallCancelled => cap::ConfirmStatus::CallCancelled,
            confirmation::Status::UnsupportedByClient => cap::ConfirmStatus::UnsupportedByClient,
            confirmation::Status::InputRequired => cap::ConfirmStatus::InputRequired,
        };
        let approval = answer.approval.map(|handle| {
            let request_sha256 = handle.request_sha256();
            self.approvals.push(Some(handle));
            cap::Approval { id: self.approvals.len() as u32 - 1, request_sha256 }
        });
        Ok(cap::Answer { status, approval })
    }

    fn execute(&mut self, approval: cap::Approval) -> Result<cap::FabricResponse, cap::FabricError> {
        let handle = self
            .approvals
            .get_mut(approval.id as usize)
            .and_then(Option::take)
            .ok_or_else(|| cap::FabricError::Refused("this approval was already used".into()))?;
        fabric_result(confirmation::Approval::execute(handle))
    }

    fn store_put(
        &mut self,
        record: Vec<u8>,
        validated_sha256: &str,
        expires_at_ms: u64,
        capacity: u32,
    ) -> Result<cap::Stored, String> {
        let s = proposal_store::put(&record, validated_sha256, expires_at_ms, capacity)?;
        Ok(cap::Stored { token: s.token, evicted: s.evicted })
    }

    fn store_peek(&mut self, token: &str) -> cap::Taken {
        taken(proposal_store::peek(token))
    }

    fn store_take(&mut self, token: &str) -> cap::Taken {
        taken(proposal_store::take(token))
    }

    fn store_settle(&mut self, token: &str, outcome: Vec<u8>) {
        proposal_store::settle(token, &outcome)
    }
}

fn fabric_result(r: Result<fabric::Response, fabric::Error>) -> Result<cap::FabricResponse, cap::FabricError> {
    match r {
        Ok(resp) => {
            Ok(cap::FabricResponse { status: resp.status, body: resp.body, correlation_id: resp.correlation_id })
        }
        Err(fabric::Error::Refused(s)) => Err(cap::FabricError::Refused(s)),
        Err(fabric::Error::Denied(s)) => Err(cap::FabricError::Denied(s)),
        Err(fabric::Error::Cancelled) => Err(cap::FabricError::Cancelled),
        Err(fabric::Error::Unavailable(s)) => Err(cap::FabricError::Unavailable(s)),
        Err(fabric::Error::Timeout) => Err(cap::FabricError::Timeout),
        Err(fabric::Error::Transport(s)) => Err(cap::FabricError::Transport(s)),
    }
}

fn taken(t: proposal_store::Taken) -> cap::Taken {
    match t {
        proposal_store::Taken::Found(r) => cap::Taken::Found(r),
        proposal_store::Taken::Used(o) => cap::Taken::Used(o),
        proposal_store::Taken::Evicted => cap::Taken::Evicted,
        proposal_store::Taken::Unknown => cap::Taken::Unknown,
    }
}

struct Component;

impl tools::Guest for Component {
    fn catalog() -> Vec<tools::Tool> {
        catalog::tools()
            .map(|t| tools::Tool {
                name: t.name.into(),
                toolset: t.toolset.into(),
                title: t.title.into(),
                description: t.description.into(),
                input_schema: t.schema_text(),
                output_schema: Some(t.output_text()),
                hints: tools::Hints {
                    read_only: t.hints.read_only,
                    destructive: t.hints.destructive,
                    idempotent: t.hints.idempotent,
                    open_world: t.hints.open_world,
                },
            })
            .collect()
    }

    fn call(name: String, arguments: String) -> Result<String, String> {
        crate::call_tool(&mut Imports::default(), &name, &arguments)
    }
}

export!(Component);
