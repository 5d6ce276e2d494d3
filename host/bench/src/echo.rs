//! The minimal native rmcp server the round trips are compared with: one `echo` tool over stdio.

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ErrorData, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ServerHandler, ServiceExt};
use std::sync::Arc;

use serde_json::json;

#[derive(Clone)]
struct Echo;

impl ServerHandler for Echo {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("bench-echo", env!("CARGO_PKG_VERSION")))
    }

    async fn list_tools(
        &self,
        _r: Option<PaginatedRequestParams>,
        _c: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let schema = json!({"type": "object"}).as_object().unwrap().clone();
        Ok(ListToolsResult::with_all_items(vec![Tool::new("echo", "echo", Arc::new(schema))]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _c: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        Ok(CallToolResult::structured(json!({"echo": request.arguments})).into())
    }
}

/// `equinix-mcp-bench echo`: serves one `echo` tool over stdio.
pub async fn run() -> anyhow::Result<()> {
    let service = Echo.serve(rmcp::transport::stdio_pipes()).await?;
    service.waiting().await?;
    Ok(())
}
