//! The MCP front: a hand-written rmcp `ServerHandler` serving the component's catalog.

pub(crate) mod fairness;
pub(crate) mod hints;
pub(crate) mod progress;
pub(crate) mod reach;
pub(crate) mod registry;
pub(crate) mod results;
pub(crate) mod server;
pub(crate) mod shared;
pub(crate) mod toolsets;

pub use registry::ToolRegistry;
pub(crate) use server::McpServer;
pub use toolsets::Selection;
