//! MCP over stdin/stdout: one client, the local user.

use std::time::Duration;

use anyhow::Context;
use rmcp::ServiceExt;

use crate::mcp::McpServer;

/// MCP over stdin/stdout until the client closes it, or until SIGINT/SIGTERM (then calls in
/// flight get the grace period, see [`crate::shutdown`]).
pub(crate) async fn serve(broker: &McpServer, grace: Duration) -> anyhow::Result<()> {
    use std::io::IsTerminal;
    if std::io::stdin().is_terminal() {
        // a person ran it by hand: MCP's JSON-RPC on a terminal is no way in
        eprintln!("{}", on_a_terminal(&this_command()));
    }
    // Before the client's `initialize` a signal keeps its default action and ends the process:
    // stdin may be a terminal or a socket, read by a thread no return could stop.
    let started = broker.clone().serve(rmcp::transport::stdio_pipes()).await;
    let mut signals = crate::shutdown::Signals::catch()?;
    let service = match started {
        Ok(service) => service,
        Err(e) if e.to_string().contains("connection closed") => anyhow::bail!(
            "the input closed before an MCP client sent `initialize` ({e}): over stdio, equinix-mcp is started by \
             an MCP client (docs/clients.md)"
        ),
        Err(e) => return Err(e).context("starting MCP over stdio"),
    };
    let cancel = service.cancellation_token();
    let mut waiting = std::pin::pin!(service.waiting());
    tokio::select! {
        ended = &mut waiting => { ended.context("serving MCP over stdio")?; }
        signal = signals.next() => {
            tracing::info!(in_flight = broker.shared().lifecycle.in_flight(), "{signal}: shutting down");
            broker.shared().lifecycle.drain(grace).await;
            cancel.cancel();
            let _ = tokio::time::timeout(Duration::from_secs(5), waiting).await;
        }
    }
    Ok(())
}

/// What a person who started the stdio server in a terminal reads: what it is, and how to reach
/// it instead. `command` is how this binary was started.
fn on_a_terminal(command: &str) -> String {
    format!(
        "equinix-mcp speaks MCP over stdin and stdout, for an MCP client to start; typing here does nothing \
         useful (Ctrl-D or Ctrl-C ends it).\n\
         Connect a client instead, for example Claude Code:\n  \
         claude mcp add equinix-sim -- {command}\n\
         or its plugin, with skills (in Claude Code: /plugin marketplace add <your clone>, then \
         /plugin install equinix-mcp@equinix-mcp).\n\
         Call one read-only tool from the shell: equinix-mcp call fabric_list_metros --fabric-sim\n\
         List the tools it serves: equinix-mcp tools --toolsets all,mutate\n\
         Serve over HTTP for browser-based or remote clients: add --transport http (docs/clients.md)."
    )
}

/// This process's command line with the binary's absolute path, as a client should run it
/// (arguments with spaces or quotes in single quotes).
fn this_command() -> String {
    let exe = std::env::current_exe().map(|p| p.display().to_string()).unwrap_or_else(|_| "equinix-mcp".into());
    let quote = |a: String| match a.contains([' ', '\'', '"']) {
        true => format!("'{}'", a.replace('\'', r"'\''")),
        false => a,
    };
    std::iter::once(exe).chain(std::env::args().skip(1)).map(quote).collect::<Vec<_>>().join(" ")
}
