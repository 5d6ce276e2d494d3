//! `equinix-mcp`: an MCP server for Equinix Fabric whose only route to a mutation is the Safe
//! Mutation Broker.
//!
//! Read in this order: `wit/broker.wit` (everything the component can reach), [`component`]
//! (how the sandbox is built and limited), [`capabilities`] (what the host grants behind each
//! import), [`fabric_client`] (credentials and the Fabric allow-list), [`mcp`] (the MCP front),
//! [`fabric_sim`] (the loopback Fabric simulator used without credentials and by the tests).

pub mod audit;
pub mod bench;
pub mod build_component;
pub mod capabilities;
pub mod cli;
pub mod component;
pub mod fabric_client;
pub mod fabric_sim;
pub mod http_transport;
pub mod inspect;
pub mod mcp;
pub mod metrics;
pub mod principal;
pub mod secret;
pub mod serve;
pub mod shutdown;
pub mod soak;
pub mod text;
pub mod tools_cmd;

/// The broker component built from `broker-component/` by `build.rs`.
pub static EMBEDDED_COMPONENT: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/broker.wasm"));

/// Installs the process-wide TLS crypto provider (ring) once; later calls do nothing.
pub fn install_crypto_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}
