//! Running it for a team: health and readiness for a load balancer, Prometheus metrics checked
//! by `promtool`, one access-log line per call, JSON logs with fields and no colour codes, and
//! session DELETE answered as MCP clients expect.

use std::path::PathBuf;

use crate::harness::*;
use serde_json::{Value, json};

const TOKEN: &str = "ops-token-0123456789abcdef0123456789";

async fn get(url: &str) -> (u16, String) {
    let r = http().get(url).send().await.unwrap();
    (r.status().as_u16(), r.text().await.unwrap())
}

fn base(server: &HttpServer) -> String {
    server.url.trim_end_matches("/mcp").to_string()
}

/// The broker over HTTP for the one principal `ops`, plus `extra` flags.
async fn team_server(extra: &[&str]) -> HttpServer {
    let tokens = token_file(&[("ops", TOKEN)]);
    let mut args = vec!["--toolsets", "all,mutate", "--auth-token-file", tokens.to_str().unwrap()];
    args.extend_from_slice(extra);
    Launch::serve().args(&args).http("127.0.0.1:0").await
}

/// The metrics address from the server's log line.
fn metrics_url(server: &HttpServer) -> String {
    let text = server.stderr_text();
    let at = text.find("Prometheus metrics at ").expect("the metrics line is logged") + "Prometheus metrics at ".len();
    text[at..].split_whitespace().next().unwrap().to_string()
}

/// The image's health check is the binary asking its own `/healthz`: 0 while the server
/// answers, 1 with the address and the reason once nothing does. A wildcard listen address
/// (the image's `0.0.0.0:8931`) is probed on loopback.
#[tokio::test]
async fn the_healthcheck_command_passes_while_the_server_answers_and_fails_after() {
    let server = team_server(&[]).await;
    let port = server.url.trim_start_matches("http://").split(['/', ':']).nth(1).unwrap().to_string();
    let wildcard = format!("0.0.0.0:{port}");
    let (ok, _, err) = run_to_exit(&["healthcheck"], &[("EQUINIX_MCP_LISTEN", wildcard.as_str())]).await;
    assert!(ok, "{err}");
    let url = format!("{}/healthz", base(&server));
    let (ok, _, err) = run_to_exit(&["healthcheck", "--url", &url], &[]).await;
    assert!(ok, "{err}");
    drop(server);
    let (ok, _, err) = wait::until_some("the server to stop answering", wait::WITHIN, async || {
        let result = run_to_exit(&["healthcheck", "--url", &url], &[]).await;
        (!result.0).then_some(result)
    })
    .await;
    assert!(!ok);
    assert!(err.contains(&format!("equinix-mcp healthcheck: {url}: ")) && err.contains("onnect"), "{err}");
}

#[tokio::test]
async fn health_needs_no_token_and_readiness_ends_when_the_drain_begins() {
    let server = team_server(&["--shutdown-grace-ms", "4000"]).await;
    assert_eq!(get(&format!("{}/healthz", base(&server))).await, (200, "ok\n".into()));
    assert_eq!(get(&format!("{}/readyz", base(&server))).await, (200, "ready\n".into()));
    assert_eq!(get(&server.url).await.0, 401, "the MCP endpoint still needs a token");
    assert_eq!(get(&format!("{}/other", base(&server))).await.0, 401, "and so does every other path");

    // a confirmation the person has not answered keeps the drain open
    let person = TestClient::answering(Answer::Never);
    let client = server.connect(Some(TOKEN), person.clone(), false).await;
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
    wait_until("the form is open", async || !person.prompt_texts().is_empty()).await;
    server.terminate();
    let url = format!("{}/readyz", base(&server));
    let body = wait::until_some("readiness to fail once SIGTERM starts the drain", wait::WITHIN, async || {
        let (status, body) = get(&url).await;
        (status == 503).then_some(body)
    })
    .await;
    assert_eq!(body, "draining\n");
    assert_eq!(get(&format!("{}/healthz", base(&server))).await.0, 200, "still alive while draining");
    pending.abort();
}

/// The drain lasts long enough for a load balancer to see it, and calls made meanwhile
/// are served, not refused.
#[tokio::test]
async fn a_load_balancer_probing_every_2_s_sees_the_drain_before_any_call_is_refused() {
    // a drain well past the prober's second look, so a slow hour cannot make the look late
    let server = team_server(&["--shutdown-drain-ms", "6000"]).await;
    let client = server.connect(Some(TOKEN), TestClient::accepting(), false).await;
    let url = format!("{}/readyz", base(&server));
    // taken before the signal: the server cannot have received it earlier
    let signalled = std::time::Instant::now();
    server.terminate();
    let body = wait::until_some("readiness to fail at the signal", wait::WITHIN, async || {
        let (status, body) = get(&url).await;
        (status == 503).then_some(body)
    })
    .await;
    assert_eq!(body, "draining\n");
    // the load balancer has not looked yet: calls still arrive, and are served
    let read = call_on(&client, "fabric_list_metros", json!({"limit": 1})).await;
    assert!(!is_error(&read), "{:?}", read.structured_content);
    let proposal = propose_on(&client, "during-drain", 2250).await;
    let done = call_on(&client, "fabric_confirm_change", json!({"confirm_token": proposal["confirm_token"]})).await;
    assert_eq!(structured(&done)["executed"], true, "{:?}", done.structured_content);
    // a prober's second look, 2 s after the signal, still finds it draining
    tokio::time::sleep_until((signalled + std::time::Duration::from_secs(2)).into()).await;
    assert_eq!(get(&url).await, (503, "draining\n".into()));
    wait_for_log(&server, "answers 503 draining while calls are still taken", 1).await;
    let mut server = server;
    let exited = tokio::time::timeout(std::time::Duration::from_secs(30), server.child.wait()).await;
    assert!(exited.expect("it exits by itself").unwrap().success());
    assert!(
        signalled.elapsed() >= std::time::Duration::from_secs(3),
        "not before its drain: {:?}",
        signalled.elapsed()
    );
    // on loopback without the flag there is no wait (no load balancer stands in front)
    let plain = team_server(&[]).await;
    plain.terminate();
    let mut plain = plain;
    let exited = tokio::time::timeout(std::time::Duration::from_secs(30), plain.child.wait()).await;
    assert!(exited.expect("it exits by itself").unwrap().success());
    assert!(!plain.stderr_text().contains("answers 503 draining"), "{}", plain.stderr_text());
}

#[tokio::test]
async fn a_session_delete_answers_200_and_the_session_is_gone() {
    let server = Launch::serve().http("127.0.0.1:0").await;
    let init = initialize_message("raw", "0");
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
    let server = team_server(&["--metrics-listen", "127.0.0.1:0"]).await;
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
    // the propose and confirm wrote five audit records, and no record went unsynced
    let records = sample(&text, "equinix_mcp_audit_records_total").expect("audit records counted");
    let syncs = sample(&text, "equinix_mcp_audit_syncs_total").expect("audit syncs counted");
    assert_eq!(records as usize, server.audit_entries().len(), "{text}");
    assert!(records >= 5.0 && (1.0..=records).contains(&syncs), "{records} records, {syncs} syncs");
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
    let server = Launch::serve()
        .args(&["--auth-token-file", tokens.to_str().unwrap(), "--log-format", "json"])
        .http("127.0.0.1:0")
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
    wait::until_some(&format!("{n} access lines"), wait::WITHIN, async || {
        let lines: Vec<Value> = server
            .stderr_text()
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter(|e| e["target"] == "equinix_mcp::access")
            .collect();
        (lines.len() >= n).then_some(lines)
    })
    .await
}

async fn wait_for_log(server: &HttpServer, needle: &str, times: usize) {
    wait_until(needle, async || server.stderr_text().matches(needle).count() >= times).await;
}

#[tokio::test]
async fn https_serves_mcp_and_a_renewed_certificate_is_served_after_sighup() {
    let dir = tempfile::tempdir().unwrap();
    let (cert, key, first) = certificate(dir.path(), "first");
    let tokens = token_file(&[("ops", TOKEN)]);
    let server = Launch::serve()
        .args(&[
            "--auth-token-file",
            tokens.to_str().unwrap(),
            "--tls-cert",
            cert.to_str().unwrap(),
            "--tls-key",
            key.to_str().unwrap(),
        ])
        .http("127.0.0.1:0")
        .await;
    assert!(server.url.starts_with("https://127.0.0.1:"), "{}", server.url);
    let health = server.url.replace("/mcp", "/healthz");
    assert_eq!(trusting(&first).get(&health).send().await.unwrap().status().as_u16(), 200);

    // a real MCP client over HTTPS
    let client = connect_trusting(&server.url, &first, TOKEN, TestClient::plain()).await;
    assert!(!is_error(&call_on(&client, "fabric_list_metros", json!({"limit": 1})).await));

    // plain HTTP to the TLS port gets nowhere
    let plain = server.url.replace("https://", "http://").replace("/mcp", "/healthz");
    assert!(http().get(&plain).send().await.is_err(), "plain HTTP is not served on the TLS port");

    // renew: the new certificate is served to new connections after SIGHUP
    let (renewed_cert, renewed_key, second) = certificate(dir.path(), "second");
    std::fs::copy(&renewed_cert, &cert).unwrap();
    std::fs::copy(&renewed_key, &key).unwrap();
    server.hangup();
    wait_for_log(&server, "TLS certificate reloaded", 1).await;
    assert_eq!(trusting(&second).get(&health).send().await.unwrap().status().as_u16(), 200);
    assert!(trusting(&first).get(&health).send().await.is_err(), "the old certificate is no longer served");
}

#[test]
fn tls_flags_go_together_and_a_bad_key_is_named_without_its_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let (cert, _, _) = certificate(dir.path(), "c");
    let run = |extra: &[&str]| {
        let mut cmd = std::process::Command::new(binary());
        cmd.args(["serve", "--fabric-sim", "--transport", "http", "--listen", "127.0.0.1:0", "--no-cache"]).args(extra);
        let out = cmd.stdin(std::process::Stdio::null()).output().unwrap();
        assert!(!out.status.success());
        String::from_utf8_lossy(&out.stderr).to_string()
    };
    let alone = run(&["--tls-cert", cert.to_str().unwrap()]);
    assert!(alone.contains("--tls-cert and --tls-key go together"), "{alone}");
    let junk = dir.path().join("junk.key");
    std::fs::write(&junk, "-----BEGIN PRIVATE KEY-----\nbm90IGEga2V5IGF0IGFsbA==\n-----END PRIVATE KEY-----\n")
        .unwrap();
    let bad = run(&["--tls-cert", cert.to_str().unwrap(), "--tls-key", junk.to_str().unwrap()]);
    assert!(bad.contains("--tls-key") || bad.contains("do not make a certificate"), "{bad}");
    assert!(!bad.contains("bm90IGEga2V5"), "the key's bytes are not echoed: {bad}");
}

#[tokio::test]
async fn sighup_rereads_the_token_file_and_calls_in_flight_finish() {
    const ALICE: &str = "alice-token-0123456789abcdef012345678";
    const BOB: &str = "bob-token-0123456789abcdef0123456789ab";
    let tokens = token_file(&[("alice", ALICE)]);
    let server = Launch::serve().args(&["--auth-token-file", tokens.to_str().unwrap()]).http("127.0.0.1:0").await;
    let alice = server.connect(Some(ALICE), TestClient::plain(), false).await;
    assert!(!is_error(&call_on(&alice, "fabric_list_metros", json!({})).await));
    assert!(connect(&server.url, Some(BOB), TestClient::plain(), false).await.is_err(), "bob is unknown");

    // a slow read is in flight when alice's token is removed
    let r = http().post(format!("{}/_sim/latency", server.sim)).json(&json!({"ms": 1500})).send().await.unwrap();
    assert!(r.status().is_success());
    let seen = sim_requests(&server.sim).await;
    let in_flight = tokio::spawn(async move { call_on(&alice, "fabric_list_metros", json!({})).await });
    // admitted: the simulator counts a request when it arrives, before its latency
    wait_until("the slow read to reach Fabric", async || sim_requests(&server.sim).await > seen).await;
    std::fs::write(&tokens, format!("bob {BOB}\n")).unwrap();
    server.hangup();
    wait_for_log(&server, "bearer tokens reloaded", 1).await;
    let finished = in_flight.await.unwrap();
    assert!(!is_error(&finished), "the call admitted before the reload finishes");
    http().post(format!("{}/_sim/latency", server.sim)).json(&json!({"ms": 0})).send().await.unwrap();

    let bob = server.connect(Some(BOB), TestClient::plain(), false).await;
    assert!(!is_error(&call_on(&bob, "fabric_list_metros", json!({})).await), "an added token works at once");
    let refused = http().post(&server.url).bearer_auth(ALICE).json(&json!({})).send().await.unwrap();
    assert_eq!(refused.status().as_u16(), 401, "a removed token is refused from the next request");

    // a broken file is not half-applied: bob keeps working
    std::fs::write(&tokens, "bob short\n").unwrap();
    server.hangup();
    wait_for_log(&server, "the token file was not reloaded", 1).await;
    assert!(!is_error(&call_on(&bob, "fabric_list_metros", json!({})).await));
    assert!(!server.stderr_text().contains(BOB), "no token in the log");
}

/// How many Fabric requests the embedded simulator has seen.
async fn sim_requests(sim_url: &str) -> usize {
    sim_stats(sim_url).await["requests"].as_array().map_or(0, Vec::len)
}

/// `--config FILE` holds serve's settings; the environment wins over it, a flag over
/// both; a mistake in it stops the start naming the file, the line and the key.
#[tokio::test]
async fn a_config_file_sets_serve_and_flags_then_the_environment_win() {
    let file = fresh_path("team", "toml");
    std::fs::write(&file, "# the team's settings\ntoolsets = \"ports\"\nelicit-timeout-ms = 60000\n").unwrap();
    let config = ["--config", file.to_str().unwrap()];
    // the banner, once the server's stderr has been read that far
    let toolsets = async |server: &Server| {
        wait::until_some("the banner's toolsets", wait::WITHIN, async || {
            let said = server.stderr_text();
            let at = said.find(" toolsets=")? + " toolsets=".len();
            said[at..].split_whitespace().next().map(str::to_string)
        })
        .await
    };
    let server = Launch::serve().args(&config).stdio().await;
    assert_eq!(toolsets(&server).await, "ports");
    assert!(server.call("fabric_search_ports", json!({})).await.is_error != Some(true));
    drop(server);
    let env = [("EQUINIX_MCP_TOOLSETS", "connections")];
    let server = Launch::serve().args(&config).env(&env).stdio().await;
    assert_eq!(toolsets(&server).await, "connections", "the environment wins over the file");
    drop(server);
    let server = Launch::serve().args(&config).env(&env).args(&["--toolsets", "metros"]).stdio().await;
    assert_eq!(toolsets(&server).await, "metros", "a flag wins over both");
    drop(server);
    // the file named by EQUINIX_MCP_CONFIG instead of the flag
    let named = [("EQUINIX_MCP_CONFIG", file.to_str().unwrap())];
    let server = Launch::serve().env(&named).stdio().await;
    assert_eq!(toolsets(&server).await, "ports");
    drop(server);

    for (text, said) in [
        ("toolsets = \"ports\"\n\nlisten-address = \"0.0.0.0:1\"\n", "line 3: `listen-address` is not a setting"),
        ("elicit-timeout-ms = -5\n", "line 1: `elicit-timeout-ms`: invalid value '-5'"),
        ("client-secret = \"s3cret-in-a-file\"\n", "secrets are not kept in the config file"),
        ("toolsets = [\"ports\"\n", "TOML parse error"),
    ] {
        std::fs::write(&file, text).unwrap();
        let (ok, _, stderr) = Launch::serve().args(&config).run_to_exit().await;
        assert!(!ok, "{text} starts");
        assert!(stderr.contains(file.to_str().unwrap()) && stderr.contains(said), "{text}: {stderr}");
        assert!(!stderr.contains("s3cret"), "{stderr}");
    }
    // the file's settings are checked together as flags are: one that needs another
    std::fs::write(&file, "audit-signing-key = \"/nowhere/key.pem\"\n").unwrap();
    let (ok, _, stderr) = Launch::serve().args(&config).run_to_exit().await;
    assert!(!ok && stderr.contains("--audit-checkpoints"), "{stderr}");
    let missing = fresh_path("absent", "toml");
    let (ok, _, stderr) = Launch::serve().args(&["--config", missing.to_str().unwrap()]).run_to_exit().await;
    assert!(!ok && stderr.contains(missing.to_str().unwrap()) && stderr.contains("No such file"), "{stderr}");
}

/// Under the unit's `RUST_LOG=info`, a call leaves its one access line and the MCP
/// library's per-request INFO lines stay off (they speak when RUST_LOG names `rmcp`).
#[tokio::test]
async fn at_rust_log_info_a_call_leaves_one_line_and_the_library_stays_quiet() {
    // a 2026-07-28 client: rmcp serves each of its requests as a session of its own
    let server = Launch::serve().env(&[("RUST_LOG", "info")]).http("127.0.0.1:0").await;
    let client = server.connect(None, TestClient::plain(), true).await;
    for _ in 0..3 {
        let r = call_on(&client, "fabric_list_metros", json!({})).await;
        assert!(!is_error(&r));
    }
    wait_for_log(&server, "equinix_mcp::access", 3).await;
    let text = server.stderr_text();
    let library: Vec<&str> = text.lines().filter(|l| l.contains(" INFO ") && l.contains(" rmcp::")).collect();
    assert!(library.is_empty(), "the library's INFO lines: {library:?}");
    let loud = Launch::serve().env(&[("RUST_LOG", "info,rmcp=info")]).http("127.0.0.1:0").await;
    let client = loud.connect(None, TestClient::plain(), true).await;
    let _ = call_on(&client, "fabric_list_metros", json!({})).await;
    wait_for_log(&loud, "rmcp::service: Service initialized as server", 1).await;
}
