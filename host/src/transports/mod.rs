//! How MCP reaches the server: stdin/stdout for one local client, streamable HTTP for a team.

pub mod approval_listener;
pub mod http;
pub mod metrics_listener;
pub mod stdio;
