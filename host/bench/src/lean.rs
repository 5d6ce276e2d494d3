//! A lean MCP client for load rows: a real session (initialize, initialized, tools/call) over
//! streamable HTTP, one keep-alive connection per client, JSON-RPC written and read by hand. A
//! load generator should cost far less than the server it loads, since both share this machine's
//! two cores; the rmcp client costs about as much CPU per call as the server it calls, and
//! reconnects for most calls (docs/engineering-log.md, "Second round").

use std::sync::atomic::{AtomicU64, Ordering};

use anyhow::Context;
use serde_json::{Value, json};

const PROTOCOL: &str = "2025-06-18";

pub struct LeanSession {
    http: reqwest::Client,
    url: String,
    session: String,
    next_id: AtomicU64,
}

/// An `initialize` as a client of [`PROTOCOL`] sends it, and the server's answer as it came.
pub async fn initialize(http: &reqwest::Client, url: &str) -> anyhow::Result<reqwest::Response> {
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": PROTOCOL, "capabilities": {}, "clientInfo": {"name": "bench-lean", "version": "1"}}});
    post(http, url, None, &init).await
}

impl LeanSession {
    pub async fn open(url: &str) -> anyhow::Result<Self> {
        // one connection per client, as separate clients would have
        Self::open_on(reqwest::Client::builder().pool_max_idle_per_host(1).build()?, url).await
    }

    /// A session over `http`'s connections, which many sessions may share (the sessions a
    /// client keeps open between conversations hold no connection of their own).
    pub async fn open_on(http: reqwest::Client, url: &str) -> anyhow::Result<Self> {
        let response = initialize(&http, url).await?.error_for_status()?;
        let session = response
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .context("initialize answered without a session id")?
            .to_string();
        answer(&response.text().await?, 0)?;
        let s = LeanSession { http, url: url.to_string(), session, next_id: AtomicU64::new(1) };
        let done = s.post(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await?;
        anyhow::ensure!(done.status().is_success(), "notifications/initialized: {}", done.status());
        Ok(s)
    }

    /// Ends the session (`DELETE`), as a client that leaves says so.
    pub async fn close(self) -> anyhow::Result<()> {
        let r = self
            .http
            .delete(&self.url)
            .header("mcp-session-id", &self.session)
            .header("mcp-protocol-version", PROTOCOL)
            .send()
            .await?;
        anyhow::ensure!(r.status().is_success(), "DELETE answered {}", r.status());
        Ok(())
    }

    async fn post(&self, body: &Value) -> anyhow::Result<reqwest::Response> {
        post(&self.http, &self.url, Some(&self.session), body).await
    }

    /// A tool's structured content; a tool error is an error.
    pub async fn call(&self, tool: &str, arguments: Value) -> anyhow::Result<Value> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let request = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": tool, "arguments": arguments}});
        let response = self.post(&request).await?.error_for_status()?;
        let mut result = answer(&response.text().await?, id)?;
        anyhow::ensure!(result["isError"] != true, "{tool} failed: {}", result["structuredContent"]);
        Ok(result["structuredContent"].take())
    }
}

/// POSTs one JSON-RPC message; `session` once initialize has answered with one (the protocol
/// version header goes with it).
async fn post(
    http: &reqwest::Client,
    url: &str,
    session: Option<&str>,
    body: &Value,
) -> anyhow::Result<reqwest::Response> {
    let mut request = http.post(url).header("accept", "application/json, text/event-stream").json(body);
    if let Some(session) = session {
        request = request.header("mcp-session-id", session).header("mcp-protocol-version", PROTOCOL);
    }
    Ok(request.send().await?)
}

/// The JSON-RPC result with `id` in a body that is either one JSON message or an SSE stream.
fn answer(body: &str, id: u64) -> anyhow::Result<Value> {
    let messages: Vec<Value> = if body.trim_start().starts_with('{') {
        vec![serde_json::from_str(body)?]
    } else {
        body.lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .filter(|d| !d.trim().is_empty())
            .map(serde_json::from_str)
            .collect::<Result<_, _>>()?
    };
    let mut message = messages.into_iter().find(|m| m["id"] == id).with_context(|| format!("no answer to {id}"))?;
    anyhow::ensure!(message.get("error").is_none(), "error answer: {}", message["error"]);
    Ok(message["result"].take())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_answer_is_found_in_json_and_in_sse_bodies_and_errors_are_errors() {
        assert_eq!(answer(r#"{"jsonrpc":"2.0","id":3,"result":{"a":1}}"#, 3).unwrap(), json!({"a": 1}));
        let sse = "id: 0\nretry: 3000\ndata: \n\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\n\
                   data: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"b\":2}}\n\n";
        assert_eq!(answer(sse, 7).unwrap(), json!({"b": 2}));
        assert!(answer(sse, 8).unwrap_err().to_string().contains("no answer to 8"));
        let error = answer(r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"bad"}}"#, 1).unwrap_err();
        assert!(error.to_string().contains("bad"), "{error}");
    }
}
