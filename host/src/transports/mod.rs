//! How MCP reaches the server: stdin/stdout for one local client, streamable HTTP for a team.

pub(crate) mod approval_listener;
pub(crate) mod http;
pub(crate) mod metrics_listener;
pub(crate) mod stdio;
