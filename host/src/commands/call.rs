//! `equinix-mcp call TOOL [JSON]`: one read-only tool call from the shell, run by the server's
//! own code with serve's settings, its result printed as JSON. A first answer without an MCP
//! client; a propose or confirm needs a client (or the approval page) that can show a person the
//! request, so those are refused here.

use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, bail};
use rmcp::model::CallToolResponse;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::capabilities::{CallContext, NobodyToAsk};
use crate::cli::{CallArgs, ServeArgs};
use crate::commands::{serve, tools};
use crate::mcp::registry::RegisteredTool;
use crate::outln;

/// Exit status of a call the tool answered with an error (its result is still printed).
const TOOL_ERROR: u8 = 1;

pub async fn run(args: CallArgs) -> anyhow::Result<ExitCode> {
    let arguments: Value = match args.arguments.as_deref() {
        None => Value::Object(Default::default()),
        Some(text) => serde_json::from_str(text).with_context(|| {
            format!(
                "the arguments are not JSON ({} bytes): give one JSON object, such as '{{\"metro\": \"DC\"}}'",
                text.len()
            )
        })?,
    };
    if !arguments.is_object() {
        let given = equinix_broker_contract::json_kind(&arguments);
        bail!("the arguments must be a JSON object, such as '{{\"metro\": \"DC\"}}', not {given}");
    }
    let mut settings = *args.serve;
    // every read toolset, unless the caller narrowed it: one call needs no catalog budget
    settings.toolsets.get_or_insert_with(|| "all".into());
    let ready = serve::prepare(&settings).await?;
    match ready.broker.shared().registry.get(&args.tool) {
        Some(tool) if is_read_only(tool) => {}
        Some(_) => return Err(changes_fabric(&args.tool)),
        // not served as asked: the whole catalog says what it is (only on this path)
        None => return Err(unserved(&settings, &args.tool).await),
    }
    let call = CallContext::new(Arc::new(NobodyToAsk), CancellationToken::new());
    let response = ready.broker.run_tool(&args.tool, arguments, call).await.map_err(|e| anyhow::anyhow!(e.message))?;
    let CallToolResponse::Complete(result) = response else {
        bail!("{} asked for input that `call` cannot give", args.tool);
    };
    let value = result.structured_content.clone().unwrap_or_else(|| {
        let texts: Vec<String> = result.content.iter().filter_map(|c| c.as_text().map(|t| t.text.clone())).collect();
        Value::String(texts.join("\n"))
    });
    let text = match args.compact {
        true => serde_json::to_string(&value)?,
        false => serde_json::to_string_pretty(&value)?,
    };
    outln!("{text}");
    Ok(match result.is_error {
        Some(true) => ExitCode::from(TOOL_ERROR),
        _ => ExitCode::SUCCESS,
    })
}

fn is_read_only(tool: &RegisteredTool) -> bool {
    tool.tool.annotations.as_ref().and_then(|a| a.read_only_hint) == Some(true)
}

fn changes_fabric(name: &str) -> anyhow::Error {
    anyhow::anyhow!(
        "{name} changes Fabric, and `call` has no way to show you the request to approve: propose and confirm from \
         an MCP client (docs/clients.md)"
    )
}

/// Why `name` is not served with these settings: no such tool, a tool that changes Fabric, or
/// one of a toolset the settings leave out.
async fn unserved(settings: &ServeArgs, name: &str) -> anyhow::Error {
    let catalog = match tools::catalog(&settings.component, Some("all,mutate")).await {
        Ok((_, catalog)) => catalog,
        Err(e) => return e,
    };
    let Some(tool) = catalog.get(name) else {
        let names: Vec<&str> = catalog.tools().map(|t| t.decl.name.as_str()).collect();
        return anyhow::anyhow!("no tool is called {name:?}; the tools are: {}", names.join(", "));
    };
    if !is_read_only(tool) {
        return changes_fabric(name);
    }
    anyhow::anyhow!(
        "{name} is in the {:?} toolset, which --toolsets {} leaves out: add it, or leave --toolsets out (every \
         read-only toolset)",
        tool.decl.toolset,
        settings.toolsets.as_deref().unwrap_or_default()
    )
}
