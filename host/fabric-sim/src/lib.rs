//! The Fabric simulator: a real HTTP server on loopback speaking the Equinix OAuth token
//! endpoint and the Fabric v4 endpoints equinix-mcp calls, with spec-shaped error arrays, a
//! seeded estate, counters and knobs for latency and injected faults. It knows nothing of MCP,
//! WebAssembly or the server that calls it: it is "Fabric", checked against Equinix's own
//! contract by the contract tests.
//!
//! Axum routes ([`routes`]) over the estate ([`estate`], seeded by [`seed`]) behind middleware
//! ([`middleware`]: stats, latency and faults, the bearer-token check). It runs in process behind
//! `equinix-mcp serve --fabric-sim` (the default way to try the server without credentials) and
//! standalone as `equinix-mcp fabric-sim --listen ADDR`. Its `/_sim/*` routes (stats, faults,
//! knobs) exist for tests and demos; real Fabric has nothing like them.

#![forbid(unsafe_code)]

mod admin;
mod answer;
mod errors;
mod estate;
mod faults;
mod instant;
mod middleware;
mod oauth;
mod prices;
mod routes;
mod search;
mod seed;
mod server;
mod state;

pub use faults::{Fault, FaultMode};
pub use seed::policies::{ROUTE_AGGREGATIONS, ROUTE_FILTERS};
pub use seed::routing::{self, FCR_CONNECTIONS, ROUTERS};
pub use seed::{CONNECTIONS, MY_PORT_METROS, PORTS, PROFILES, PROJECT_ID, metros as seeded_metros};
pub use server::{SimHandle, Unstarted, start};
pub use state::{SIM_CLIENT_ID, SIM_CLIENT_SECRET, SimClock, SimConfig};
