//! `equinix-mcp`: an MCP server for Equinix Fabric whose only route to a mutation is the Safe
//! Mutation Broker.
//!
//! Read in this order: `wit/broker.wit` (everything the component can reach; its companion crate
//! `equinix-broker-contract` holds the names and the one TTL both sides spell alike) and
//! [`bindings`] (the host's types for it), [`component`] (how the sandbox is built and limited),
//! [`capabilities`] (what the host grants behind each import, one module and one view of the call
//! per interface) over its backends [`fabric_client`] (credentials and the Fabric allow-list) and
//! [`proposals`] (memory, Redis or etcd, behind one trait; beside the proposals, a request's
//! approvals and decision), [`policy`] (the operator's Cedar set: what may be proposed, who may
//! approve, how many must), [`plan`] (what a create will do, resolved by the host's own Fabric
//! reads after the dry run, shown first to the person), [`approval`] (the rules of a yes, with no
//! I/O: who may ask, about which proposal, when an answer mints an approval, how the person is
//! reached, who decides on the page), [`approval_page`] (where a signed-in person, or a local
//! approver with their passkey, approves) over [`passkeys`] and [`approvers`] (the people enrolled
//! on this machine), [`notify`] (the notices to the operator's destinations), [`audit`] (the
//! hash-chained log), [`mcp`] (the MCP front; `mcp::reach` holds the ways a person is reached),
//! [`transports`] (stdio and HTTP), [`commands`] (the subcommands). Each concern's flags are a
//! settings group beside its code, which [`cli`] composes. The loopback Fabric simulator behind
//! `--fabric-sim` is a crate of its own, `equinix-fabric-sim`, and so are the benchmarks,
//! `equinix-mcp-bench`; this crate never links the broker natively.
//!
//! Layers point down only, and no module imports one that imports it, from the top: `commands`,
//! `cli`, `transports`, `mcp`, `component`, `capabilities`, `approval_page`, `approvers`,
//! `notify` and `passkeys`, `proposals`, `approval`, `bindings`, `policy` and `audit`, `oauth` and
//! `plan`, `fabric_client`, `exact_json` and `secret`, and the leaves (`clock`, `metrics`,
//! `principal`, `shutdown`, `value_parsers`). `farm-studio look` draws them so; the simulator
//! stands beside them and the client never names it.

pub mod approval;
pub mod approval_page;
pub mod approvers;
pub mod audit;
pub mod bindings;
pub mod capabilities;
pub mod cli;
pub mod clock;
pub mod commands;
pub mod component;
pub mod config_file;
pub mod exact_json;
pub mod fabric_client;
pub mod log_lines;
pub mod mcp;
pub mod metrics;
pub mod notify;
pub mod oauth;
pub mod open_files;
pub mod passkeys;
pub mod plan;
pub mod platform;
pub mod policy;
pub mod principal;
pub mod proposals;
pub mod secret;
pub mod shutdown;
pub mod stdout;
pub mod transports;
pub mod value_parsers;

/// The broker component built from `broker-component/` by `build.rs`.
pub static EMBEDDED_COMPONENT: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/broker.wasm"));
/// [`EMBEDDED_COMPONENT`]'s SHA-256 (lowercase hex), computed by the build.
pub const EMBEDDED_COMPONENT_SHA256: &str = env!("EQUINIX_MCP_COMPONENT_SHA256");

/// Installs the process-wide TLS crypto provider (ring) once; later calls do nothing.
pub fn install_crypto_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}
