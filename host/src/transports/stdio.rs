//! MCP over stdin/stdout: one client, the local user.

use std::time::Duration;

use anyhow::Context;
use rmcp::ServiceExt;

use crate::mcp::McpServer;

/// MCP over stdin/stdout until the client closes it, or until SIGINT/SIGTERM (then calls in
/// flight get the grace period, see [`crate::shutdown`]).
pub async fn serve(broker: &McpServer, grace: Duration) -> anyhow::Result<()> {
    let service = broker.clone().serve(rmcp::transport::stdio_pipes()).await.context("starting MCP over stdio")?;
    let cancel = service.cancellation_token();
    let mut waiting = std::pin::pin!(service.waiting());
    tokio::select! {
        ended = &mut waiting => { ended.context("serving MCP over stdio")?; }
        signal = crate::shutdown::signal() => {
            tracing::info!(in_flight = broker.shared().lifecycle.in_flight(), "{signal}: shutting down");
            broker.shared().lifecycle.drain(grace).await;
            cancel.cancel();
            let _ = tokio::time::timeout(Duration::from_secs(5), waiting).await;
        }
    }
    Ok(())
}
