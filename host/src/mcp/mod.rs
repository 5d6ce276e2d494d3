//! The MCP front: a hand-written rmcp `ServerHandler` serving the component's catalog.

pub mod elicitation;
pub mod fairness;
pub mod hints;
pub mod page_confirm;
pub mod progress;
pub mod reach;
pub mod registry;
pub mod results;
pub mod server;
pub mod shared;
pub mod stateless_confirm;
pub mod toolsets;

pub use registry::ToolRegistry;
pub use server::McpServer;
pub use toolsets::Selection;
