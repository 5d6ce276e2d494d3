//! The host capabilities the broker logic uses, as plain Rust types and one trait.
//!
//! The WIT glue (`glue.rs`, wasm only) implements [`Host`] over the generated imports; native
//! unit tests implement it with fakes. Nothing outside `glue.rs` touches the bindings.

use alloc::string::String;
use alloc::vec::Vec;

/// HTTP method of a Fabric request; there is no update or delete by construction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    Get,
    Post,
}

impl Method {
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Post => "POST",
        }
    }
}

/// One Fabric v4 request, relative to the host's base URL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FabricRequest {
    pub method: Method,
    pub path: String,
    pub query: Vec<(String, String)>,
    pub body: Option<String>,
}

/// Fabric's answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FabricResponse {
    pub status: u16,
    pub body: String,
    pub correlation_id: Option<String>,
}

/// Why no answer is available (see `wit/broker.wit` for each case's guarantee).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FabricError {
    Refused(String),
    Cancelled,
    Unavailable(String),
    Timeout,
    Transport(String),
}

impl FabricError {
    /// Whether the request may have reached Fabric (so a create's outcome is unknown).
    pub fn maybe_sent(&self) -> bool {
        matches!(self, FabricError::Timeout | FabricError::Transport(_))
    }
}

/// The person's answer to a confirmation prompt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConfirmStatus {
    Accepted,
    Declined,
    Cancelled,
    TimedOut,
    Failed,
    CallCancelled,
    UnsupportedByClient,
}

impl ConfirmStatus {
    /// The name used in tool results (`human_confirmation.status`).
    pub fn as_str(self) -> &'static str {
        match self {
            ConfirmStatus::Accepted => "accepted",
            ConfirmStatus::Declined => "declined",
            ConfirmStatus::Cancelled => "cancelled",
            ConfirmStatus::TimedOut => "timed_out",
            ConfirmStatus::Failed => "failed",
            ConfirmStatus::CallCancelled => "call_cancelled",
            ConfirmStatus::UnsupportedByClient => "unsupported_by_client",
        }
    }
}

/// A prompt for the person at the MCP client.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Prompt {
    pub title: String,
    pub message: String,
    pub fields: Vec<(String, String)>,
}

/// The state of a proposal token in the host's store.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Taken {
    Found(Vec<u8>),
    Used(Option<Vec<u8>>),
    Evicted,
    Unknown,
}

/// What storing a proposal did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stored {
    pub token: String,
    pub evicted: Vec<String>,
}

/// Everything the broker may ask of its host: the four imports of the `broker` world.
pub trait Host {
    fn fabric_send(&mut self, request: FabricRequest) -> Result<FabricResponse, FabricError>;
    fn now_ms(&mut self) -> u64;
    fn confirm(&mut self, prompt: Prompt) -> ConfirmStatus;
    fn unconfirmed_allowed(&mut self) -> bool;
    fn store_put(&mut self, record: Vec<u8>, expires_at_ms: u64, capacity: u32) -> Stored;
    fn store_peek(&mut self, token: &str) -> Taken;
    fn store_take(&mut self, token: &str) -> Taken;
    fn store_settle(&mut self, token: &str, outcome: Vec<u8>);
}
