//! `equinix-mcp`: an MCP server for Equinix Fabric whose only route to a mutation is the Safe
//! Mutation Broker.
//!
//! Read in this order: `wit/broker.wit` (everything the component can reach) and [`bindings`]
//! (the host's types for it), [`component`] (how the sandbox is built and limited),
//! [`capabilities`] (what the host grants behind each import, one module per interface),
//! [`fabric_client`] (credentials and the Fabric allow-list), [`mcp`] (the MCP front),
//! [`transports`] (stdio and HTTP), [`commands`] (the subcommands). The loopback Fabric simulator
//! behind `--fabric-sim` is a crate of its own, `equinix-fabric-sim`.
//!
//! Layers point down only: `commands` → `transports` → `mcp` → `component` → `capabilities` →
//! `fabric_client`, `bindings` and the leaves (`clock`, `metrics`, `audit`, `principal`,
//! `secret`, `text`, `shutdown`); the simulator stands beside them and the client never names it.

pub mod audit;
pub mod bindings;
pub mod capabilities;
pub mod cli;
pub mod clock;
pub mod commands;
pub mod component;
pub mod fabric_client;
pub mod mcp;
pub mod metrics;
pub mod principal;
pub mod secret;
pub mod shutdown;
pub mod text;
pub mod transports;

/// The broker component built from `broker-component/` by `build.rs`.
pub static EMBEDDED_COMPONENT: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/broker.wasm"));

/// Installs the process-wide TLS crypto provider (ring) once; later calls do nothing.
pub fn install_crypto_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}
