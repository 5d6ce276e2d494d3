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
    Denied(String),
    Cancelled,
    Unavailable(String),
    Timeout,
    Transport(String),
}

impl FabricError {
    /// Whether the request may have reached Fabric (so a create's outcome is unknown).
    pub(crate) fn maybe_sent(&self) -> bool {
        matches!(self, FabricError::Timeout | FabricError::Transport(_))
    }
}

/// The person's answer to a confirmation prompt, named as the contract names it.
pub use equinix_broker_contract::ConfirmStatus;

/// How this call's question reaches the person (see `confirmation.current-delivery` in the WIT),
/// as the contract names it, with the rules the host reads from it too.
pub use equinix_broker_contract::Delivery;

/// A create the person is asked to approve; the host renders all of it for them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CreateRequest {
    pub path: String,
    pub body: String,
}

/// Context the component adds to the form (shown as the component's own words).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Prompt {
    pub title: String,
    pub message: String,
    pub fields: Vec<(String, String)>,
}

/// The host's permission to send one create: the request of the `ask` that returned it.
/// Deliberately neither `Clone` nor `Copy`: executing it consumes it.
#[derive(Debug, PartialEq, Eq)]
pub struct Approval {
    /// Which approval of this call the host implementation means.
    pub(crate) id: u32,
    /// The SHA-256 the host computed and showed the person.
    pub request_sha256: String,
}

/// For a host adapter outside the component (the native side of `equinix-mcp-bench`), which
/// stands where `glue.rs` stands inside it. Only the `native-host` feature compiles it: in a
/// native build it makes what the WIT resource guarantees cannot be made, so neither the
/// component nor the shipped host has it.
#[cfg(feature = "native-host")]
impl Approval {
    /// The approval the adapter's `ask` handed out as number `index`.
    pub fn native(index: u32, request_sha256: String) -> Self {
        Approval { id: index, request_sha256 }
    }

    /// Which of the adapter's approvals this is.
    pub fn index(&self) -> u32 {
        self.id
    }
}

/// The person's answer, with the approval when it allows the create.
#[derive(Debug, PartialEq, Eq)]
pub struct Answer {
    pub status: ConfirmStatus,
    pub approval: Option<Approval>,
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
/// `fabric_send` carries reads and dry runs; a create goes only through an [`Approval`].
pub trait Host {
    fn fabric_send(&mut self, request: FabricRequest) -> Result<FabricResponse, FabricError>;
    fn now_ms(&mut self) -> u64;
    fn delivery(&mut self) -> Delivery;
    /// Asks about `request` under the proposal `token` this call took (or peeked, in a first
    /// round). `Err` is the host's reason for not asking at all.
    fn ask(&mut self, token: &str, request: CreateRequest, context: Prompt) -> Result<Answer, String>;
    /// Sends the approved create once.
    fn execute(&mut self, approval: Approval) -> Result<FabricResponse, FabricError>;
    /// Stores `record` bound to this call's validated dry run of `validated_sha256`; `Err` is
    /// the host's reason for storing nothing.
    fn store_put(
        &mut self,
        record: Vec<u8>,
        validated_sha256: &str,
        expires_at_ms: u64,
        capacity: u32,
    ) -> Result<Stored, String>;
    fn store_peek(&mut self, token: &str) -> Taken;
    fn store_take(&mut self, token: &str) -> Taken;
    fn store_settle(&mut self, token: &str, outcome: Vec<u8>);
}
