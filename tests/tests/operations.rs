//! Running it for a team: health and readiness for a load balancer, Prometheus metrics checked
//! by `promtool`, one access-log line per call, JSON logs with fields and no colour codes, and
//! session DELETE answered as MCP clients expect.

mod common;

use std::path::PathBuf;
use std::time::Duration;

use common::http::{HttpServer, token_file};
use common::*;
use serde_json::{Value, json};

const TOKEN: &str = "ops-token-0123456789abcdef0123456789";

async fn get(url: &str) -> (u16, String) {
    let r = http().get(url).send().await.unwrap();
    (r.status().as_u16(), r.text().await.unwrap())
}

fn base(server: &HttpServer) -> String {
    server.url.trim_end_matches("/mcp").to_string()
}

/// The metrics address from the server's log line.
fn metrics_url(server: &HttpServer) -> String {
    let text = server.stderr_text();
    let at = text.find("Prometheus metrics at ").expect("the metrics line is logged") + "Prometheus metrics at ".len();
    text[at..].split_whitespace().next().unwrap().to_string()
}

#[tokio::test]
async fn health_needs_no_token_and_readiness_ends_when_the_drain_begins() {
    let tokens = token_file(&[("ops", TOKEN)]);
    let server = HttpServer::start(
        "127.0.0.1:0",
        &["--toolsets", "all,mutate", "--auth-token-file", tokens.to_str().unwrap(), "--shutdown-grace-ms", "4000"],
        &[],
    )
    .await;
    assert_eq!(get(&format!("{}/healthz", base(&server))).await, (200, "ok\n".into()));
    assert_eq!(get(&format!("{}/readyz", base(&server))).await, (200, "ready\n".into()));
    assert_eq!(get(&server.url).await.0, 401, "the MCP endpoint still needs a token");
    assert_eq!(get(&format!("{}/other", base(&server))).await.0, 401, "and so does every other path");

    // a confirmation the person has not answered keeps the drain open
    let client = server.connect(Some(TOKEN), TestClient::answering(Answer::Never), false).await;
    let p = structured(
        &call_on(
            &client,
            "fabric_propose_change",
            json!({"change_type": "connection_create", "spec": connection_spec("held", 2200)}),
        )
        .await,
    );
    let pending = tokio::spawn(async move {
        call_on(&client, "fabric_confirm_change", json!({"confirm_token": p["confirm_token"]})).await
    });
    wait_until("the form is open", async || server.stderr_text().contains("tool=fabric_propose_change")).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    server.terminate();
    let url = format!("{}/readyz", base(&server));
    let mut seen = Vec::new();
    for _ in 0..40 {
        let (status, body) = get(&url).await;
        seen.push(status);
        if status == 503 {
            assert_eq!(body, "draining\n");
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(seen.last(), Some(&503), "readiness fails once SIGTERM starts the drain: {seen:?}");
    assert_eq!(get(&format!("{}/healthz", base(&server))).await.0, 200, "still alive while draining");
    pending.abort();
}

#[tokio::test]
async fn a_session_delete_answers_200_and_the_session_is_gone() {
    let server = HttpServer::start("127.0.0.1:0", &[], &[]).await;
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}});
    let r = http()
        .post(&server.url)
        .header("Accept", "application/json, text/event-stream")
        .json(&init)
        .send()
        .await
        .unwrap();
    let session = r.headers()["mcp-session-id"].to_str().unwrap().to_string();
    let deleted = http().delete(&server.url).header("Mcp-Session-Id", &session).send().await.unwrap();
    assert_eq!(deleted.status().as_u16(), 200, "the official Python SDK expects 200 or 204");
    let again = http().delete(&server.url).header("Mcp-Session-Id", &session).send().await.unwrap();
    assert_eq!(again.status().as_u16(), 404, "the session is gone");
}

fn promtool() -> PathBuf {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/tools/promtool");
    assert!(path.exists(), "{} is missing: run .ci/install-promtool (the README's test command does)", path.display());
    path
}

/// `promtool check metrics` on `text`: the exposition Prometheus itself would lint.
fn promtool_check(text: &str) {
    use std::io::Write;
    let mut child = std::process::Command::new(promtool())
        .args(["check", "metrics"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(text.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success() && said.trim().is_empty(), "promtool check metrics: {said}\n{text}");
}

fn sample(text: &str, series: &str) -> Option<f64> {
    text.lines().find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
}

#[tokio::test]
async fn metrics_count_calls_confirmations_answers_and_creates_and_pass_promtool() {
    let tokens = token_file(&[("ops", TOKEN)]);
    let server = HttpServer::start(
        "127.0.0.1:0",
        &["--toolsets", "all,mutate", "--auth-token-file", tokens.to_str().unwrap(), "--metrics-listen", "127.0.0.1:0"],
        &[],
    )
    .await;
    let metrics = metrics_url(&server);
    assert!(metrics.starts_with("http://127.0.0.1:"), "{metrics}");
    let client = server.connect(Some(TOKEN), TestClient::accepting(), false).await;
    assert!(!is_error(&call_on(&client, "fabric_list_metros", json!({})).await));
    let unknown = call_on(&client, "fabric_get_port", json!({"port_id": "00000000-0000-4000-8000-000000000000"})).await;
    assert!(is_error(&unknown));
    let p = structured(
        &call_on(
            &client,
            "fabric_propose_change",
            json!({"change_type": "connection_create", "spec": connection_spec("metered", 2300)}),
        )
        .await,
    );
    let out =
        structured(&call_on(&client, "fabric_confirm_change", json!({"confirm_token": p["confirm_token"]})).await);
    assert_eq!(out["executed"], true, "{out}");

    let r = http().get(&metrics).send().await.unwrap();
    assert!(r.headers()["content-type"].to_str().unwrap().starts_with("text/plain; version=0.0.4"));
    let text = r.text().await.unwrap();
    promtool_check(&text);
    for (series, at_least) in [
        ("equinix_mcp_tool_calls_total{tool=\"fabric_list_metros\",outcome=\"ok\"}", 1.0),
        ("equinix_mcp_tool_calls_total{tool=\"fabric_get_port\",outcome=\"error\"}", 1.0),
        ("equinix_mcp_tool_calls_total{tool=\"fabric_confirm_change\",outcome=\"ok\"}", 1.0),
        ("equinix_mcp_confirmations_total{status=\"accepted\"}", 1.0),
        ("equinix_mcp_fabric_answers_total{class=\"2xx\"}", 3.0),
        ("equinix_mcp_fabric_answers_total{class=\"4xx\"}", 1.0),
        ("equinix_mcp_creates_total{outcome=\"executed\"}", 1.0),
        ("equinix_mcp_tool_call_duration_seconds_count{tool=\"fabric_propose_change\"}", 1.0),
    ] {
        let value = sample(&text, series).unwrap_or_else(|| panic!("{series} missing:\n{text}"));
        assert!(value >= at_least, "{series} = {value}");
    }
    assert_eq!(sample(&text, "equinix_mcp_pending_proposals"), Some(0.0), "the one proposal was confirmed");
    assert_eq!(sample(&text, "equinix_mcp_component_traps_total"), Some(0.0));
    // a Prometheus server asking for OpenMetrics gets it
    let om = http().get(&metrics).header("Accept", "application/openmetrics-text; version=1.0.0").send().await.unwrap();
    assert!(om.headers()["content-type"].to_str().unwrap().starts_with("application/openmetrics-text"));
    assert!(om.text().await.unwrap().ends_with("# EOF\n"));
    // the MCP port does not serve them
    assert_eq!(get(&format!("{}/metrics", base(&server))).await.0, 401);
}

#[tokio::test]
async fn every_call_leaves_one_access_line_and_json_logs_carry_fields_without_colour() {
    let tokens = token_file(&[("ops", TOKEN)]);
    let server =
        HttpServer::start("127.0.0.1:0", &["--auth-token-file", tokens.to_str().unwrap(), "--log-format", "json"], &[])
            .await;
    let client = server.connect(Some(TOKEN), TestClient::plain(), false).await;
    assert!(!is_error(&call_on(&client, "fabric_list_metros", json!({"limit": 2})).await));
    assert!(is_error(&call_on(&client, "fabric_search_ports", json!({"metro": "dc"})).await));
    let lines = wait_for_access_lines(&server, 2).await;
    let text = server.stderr_text();
    assert!(!text.contains('\u{1b}'), "no ANSI escapes when stderr is not a terminal");
    assert!(!text.contains(TOKEN), "no bearer token in the log");
    let events: Vec<Value> =
        text.lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"))).collect();
    let banner = events.iter().find(|e| e["fields"]["message"] == "equinix-mcp ready").expect("the banner is an event");
    assert_eq!(banner["fields"]["transport"], "http");
    assert!(banner["fields"]["component"].as_str().unwrap().starts_with("sha256:"));
    assert!(banner["fields"]["fabric"].as_str().unwrap().starts_with("simulator at http://127.0.0.1:"));

    let (ok, bad) = (&lines[0]["fields"], &lines[1]["fields"]);
    assert_eq!(
        (ok["tool"].as_str(), ok["principal"].as_str(), ok["outcome"].as_str()),
        (Some("fabric_list_metros"), Some("ops"), Some("ok"))
    );
    assert!(ok["duration_ms"].as_u64().is_some());
    assert!(!ok["correlation_ids"].as_str().unwrap().is_empty(), "Fabric's correlation id: {ok}");
    assert_eq!((bad["outcome"].as_str(), bad["error_kind"].as_str()), (Some("error"), Some("invalid_arguments")));
    assert_eq!(lines[0]["level"], "INFO");
}

async fn wait_for_access_lines(server: &HttpServer, n: usize) -> Vec<Value> {
    for _ in 0..100 {
        let lines: Vec<Value> = server
            .stderr_text()
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter(|e| e["target"] == "equinix_mcp::access")
            .collect();
        if lines.len() >= n {
            return lines;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("fewer than {n} access lines:\n{}", server.stderr_text());
}
