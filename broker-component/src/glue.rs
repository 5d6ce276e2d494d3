//! The only file that touches the generated WIT bindings: it adapts the imports to
//! [`crate::capability::Host`] and the `tools` export to the pure dispatcher.

use alloc::string::String;
use alloc::vec::Vec;

use crate::capability::{self as cap, Host};
use crate::catalog;

wit_bindgen::generate!({ world: "broker", path: "../wit" });

use equinix::broker::{clock, confirmation, fabric, proposal_store};
use exports::equinix::broker::tools;

/// The host, reached through the world's imports.
struct Imports;

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
        match fabric::send(&req) {
            Ok(resp) => {
                Ok(cap::FabricResponse { status: resp.status, body: resp.body, correlation_id: resp.correlation_id })
            }
            Err(fabric::Error::Refused(s)) => Err(cap::FabricError::Refused(s)),
            Err(fabric::Error::Cancelled) => Err(cap::FabricError::Cancelled),
            Err(fabric::Error::Unavailable(s)) => Err(cap::FabricError::Unavailable(s)),
            Err(fabric::Error::Timeout) => Err(cap::FabricError::Timeout),
            Err(fabric::Error::Transport(s)) => Err(cap::FabricError::Transport(s)),
        }
    }

    fn now_ms(&mut self) -> u64 {
        clock::now_ms()
    }

    fn confirm(&mut self, p: cap::Prompt) -> cap::ConfirmStatus {
        let prompt = confirmation::Prompt { title: p.title, message: p.message, fields: p.fields };
        match confirmation::confirm(&prompt) {
            confirmation::Status::Accepted => cap::ConfirmStatus::Accepted,
            confirmation::Status::Declined => cap::ConfirmStatus::Declined,
            confirmation::Status::Cancelled => cap::ConfirmStatus::Cancelled,
            confirmation::Status::TimedOut => cap::ConfirmStatus::TimedOut,
            confirmation::Status::Failed => cap::ConfirmStatus::Failed,
            confirmation::Status::CallCancelled => cap::ConfirmStatus::CallCancelled,
            confirmation::Status::UnsupportedByClient => cap::ConfirmStatus::UnsupportedByClient,
        }
    }

    fn unconfirmed_allowed(&mut self) -> bool {
        confirmation::unconfirmed_allowed()
    }

    fn store_put(&mut self, record: Vec<u8>, expires_at_ms: u64, capacity: u32) -> cap::Stored {
        let s = proposal_store::put(&record, expires_at_ms, capacity);
        cap::Stored { token: s.token, evicted: s.evicted }
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
                description: t.description.into(),
                input_schema: t.input_schema.into(),
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
        crate::call_tool(&mut Imports, &name, &arguments)
    }

    fn preview_confirm(token: String) -> Result<String, String> {
        crate::preview_confirm(&mut Imports, &token)
    }
}

export!(Component);
