//! The MCP front: a hand-written rmcp `ServerHandler` serving the component's catalog.

pub mod fairness;
pub mod hints;
pub mod progress;
pub mod reach;
pub mod registry;
pub mod results;
pub mod server;
pub mod shared;
pub mod toolsets;

pub use registry::ToolRegistry;
pub(crate) use server::McpServer;
pub use toolsets::Selection;
