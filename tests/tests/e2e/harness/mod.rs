//! The one end-to-end harness: spawn the real `equinix-mcp` binary ([`launch`], [`process`]),
//! drive it with a real MCP client ([`client`]), run or reach the Fabric simulator ([`sim`]),
//! propose from the simulator's seeded estate ([`fixtures`]), start Redis ([`redis`]) and the
//! identity provider ([`oidc`]), show what any of those processes printed when a test fails
//! ([`printed`]), and wait for an event with a bound ([`wait`]).

pub mod account;
pub mod browser;
pub mod client;
pub mod etcd;
pub mod fixtures;
pub mod launch;
pub mod netns;
pub mod oidc;
pub mod printed;
pub mod process;
pub mod redis;
pub mod rounds;
pub mod sentinel;
pub mod sim;
pub mod tls;
pub mod wait;
pub mod webdriver;

pub use account::*;
pub use browser::*;
pub use client::*;
pub use fixtures::*;
pub use launch::*;
pub use oidc::*;
pub use process::*;
pub use sim::*;
pub use tls::*;
