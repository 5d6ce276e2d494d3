//! The streamable HTTP transport: the catalog and broker over `--transport http`,
//! elicitation on legacy sessions, the 2026-07-28 stateless confirmation, bearer tokens and
//! principals, the exposure rules, the body cap and graceful shutdown.

use std::sync::Arc;
use std::time::Duration;

use crate::harness::*;
use serde_json::json;

const ALICE: &str = "alice-0123456789abcdef0123456789abcdef";
const BOB: &str = "bob-0123456789abcdef0123456789abcdef00";

#[tokio::test]
async fn the_catalog_and_the_broker_work_over_streamable_http() {
    let server = Launch::serve().args(&["--toolsets", "all,mutate"]).http("127.0.0.1:0").await;
    assert!(server.url.starts_with("http://127.0.0.1:") && server.url.ends_with("/mcp"), "{}", server.url);
    let client = TestClient::accepting();
    let service = server.connect(None, client.clone(), false).await;
    let tools = service.list_all_tools().await.unwrap();
    assert!(tools.iter().any(|t| t.name == "fabric_propose_change"));
    let metros = call_on(&service, "fabric_list_metros", json!({"limit": 2})).await;
    assert_eq!(structured(&metros)["next_offset"], 2);

    let p = propose_on(&service, "over-http", 3600).await;
    let c = call_on(&service, "fabric_confirm_change", json!({"confirm_token": p["confirm_token"]})).await;
    assert_eq!(structured(&c)["executed"], true, "{:?}", c.structured_content);
    assert_eq!(client.prompt_texts().len(), 1, "the person was asked over the legacy HTTP session");
    assert_eq!(creates(&server.sim, "connections").await, 1);
    let _ = service.cancel().await;
}

#[tokio::test]
async fn a_2026_client_confirms_statelessly_over_http() {
    let server = Launch::serve().args(&["--toolsets", "metros,mutate"]).http("127.0.0.1:0").await;
    let service = server.connect(None, TestClient::by_hand(), true).await;
    crate::harness::rounds::stateless_round_trips(&service, &server.sim).await;
    let _ = service.cancel().await;
}

#[tokio::test]
async fn beyond_127_0_0_1_the_server_needs_tokens_and_host_names_and_refuses_requests_without_a_token() {
    // 127.0.0.2 stands in for a non-loopback interface: only 127.0.0.1 and ::1 go unauthenticated
    let (ok, _, stderr) =
        run_to_exit(&["serve", "--fabric-sim", "--transport", "http", "--listen", "127.0.0.2:0"], &[]).await;
    assert!(!ok && stderr.contains("--auth-token-file"), "{stderr}");
    let tokens = token_file(&[("alice", ALICE)]);
    let tokens = tokens.to_str().unwrap();
    let (ok, _, stderr) = run_to_exit(
        &["serve", "--fabric-sim", "--transport", "http", "--listen", "127.0.0.2:0", "--auth-token-file", tokens],
        &[],
    )
    .await;
    assert!(!ok && stderr.contains("--allowed-host"), "{stderr}");

    let server = Launch::serve()
        .args(&["--toolsets", "metros", "--auth-token-file", tokens, "--allowed-host", "127.0.0.2"])
        .http("127.0.0.2:0")
        .await;
    assert!(server.url.starts_with("http://127.0.0.2:"), "{}", server.url);
    let init = initialize_message("curl", "0");
    for auth in [None, Some("Bearer not-a-token"), Some(&*format!("Bearer {}", &ALICE[..ALICE.len() - 1]))] {
        let mut req = http().post(&server.url).header("accept", "application/json, text/event-stream").json(&init);
        if let Some(a) = auth {
            req = req.header("authorization", a);
        }
        let r = req.send().await.unwrap();
        assert_eq!(r.status(), 401, "{auth:?}");
        assert!(r.headers()["www-authenticate"].to_str().unwrap().starts_with("Bearer"));
        let body: serde_json::Value = r.json().await.unwrap();
        assert!(body["message"].as_str().unwrap().contains("Authorization: Bearer"), "{body}");
    }
    assert!(connect(&server.url, None, TestClient::plain(), false).await.is_err(), "an rmcp client without a token");
    let service = server.connect(Some(ALICE), TestClient::plain(), false).await;
    let metros = call_on(&service, "fabric_list_metros", json!({"limit": 1})).await;
    assert!(!is_error(&metros));
    let log = server.stderr_text();
    assert!(log.contains("refused an HTTP request") && !log.contains(ALICE), "tokens never reach the log");
    let _ = service.cancel().await;
}

#[tokio::test]
async fn proposals_belong_to_the_principal_of_the_token_not_to_the_session() {
    let tokens = token_file(&[("alice", ALICE), ("bob", BOB)]);
    let server = Launch::serve()
        .args(&["--toolsets", "metros,mutate", "--auth-token-file", tokens.to_str().unwrap()])
        .http("127.0.0.1:0")
        .await;
    let alice = server.connect(Some(ALICE), TestClient::accepting(), false).await;
    let bob = server.connect(Some(BOB), TestClient::accepting(), false).await;
    let bob_2026 = server.connect(Some(BOB), TestClient::by_hand(), true).await;
    let p = propose_on(&alice, "alices", 1601).await;
    let token = p["confirm_token"].clone();

    for (who, client) in [("bob", &bob), ("bob on 2026-07-28", &bob_2026)] {
        let r = call_on(client, "fabric_confirm_change", json!({"confirm_token": token})).await;
        assert!(is_error(&r), "{who} confirmed alice's proposal");
        assert_eq!(structured(&r)["error"]["kind"], "unknown_token", "{who}");
    }
    assert_eq!(creates(&server.sim, "connections").await, 0);

    // bob filling his own 20 slots evicts none of alice's
    for i in 0..21 {
        let q = propose_on(&bob, &format!("bobs-{i}"), 1700 + i).await;
        assert!(!q["evicted_proposals"].to_string().contains(token.as_str().unwrap()));
    }

    // alice on a second session (another connection, same token) confirms it
    let alice_again = server.connect(Some(ALICE), TestClient::accepting(), false).await;
    let r = call_on(&alice_again, "fabric_confirm_change", json!({"confirm_token": token})).await;
    assert_eq!(structured(&r)["executed"], true, "{:?}", r.structured_content);
    assert_eq!(creates(&server.sim, "connections").await, 1);
    for s in [alice, bob, bob_2026, alice_again] {
        let _ = s.cancel().await;
    }
}

#[tokio::test]
async fn an_oversize_request_body_gets_413_and_nothing_else_happens() {
    let server =
        Launch::serve().args(&["--toolsets", "metros", "--max-request-bytes", "65536"]).http("127.0.0.1:0").await;
    let big = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "fabric_list_metros", "arguments": {"padding": "x".repeat(100_000)}}});
    let r = http()
        .post(&server.url)
        .header("accept", "application/json, text/event-stream")
        .json(&big)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 413);
    let service = server.connect(None, TestClient::plain(), false).await;
    assert!(!is_error(&call_on(&service, "fabric_list_metros", json!({"limit": 1})).await), "the server still serves");
    let _ = service.cancel().await;
}

#[tokio::test]
async fn sigterm_lets_a_confirmation_in_flight_finish_and_refuses_new_calls() {
    let mut server = Launch::serve().args(&["--toolsets", "metros,mutate"]).http("127.0.0.1:0").await;
    let read = Arc::new(tokio::sync::Semaphore::new(0));
    let client = TestClient::answering(Answer::AcceptWhen(read.clone()));
    let service = server.connect(None, client.clone(), false).await;
    let p = propose_on(&service, "draining", 1801).await;
    let confirming = {
        let peer = service.peer().clone();
        let token = p["confirm_token"].clone();
        tokio::spawn(async move { peer.call_tool(confirm_request(token)).await })
    };
    wait_until("the confirmation prompt", async || !client.prompt_texts().is_empty()).await;
    server.terminate();
    // a call made during the drain is refused, and says so
    let refused = wait::until_some("new calls to be refused once shutdown began", wait::WITHIN, async || {
        let r = call_on(&service, "fabric_list_metros", json!({"limit": 1})).await;
        is_error(&r).then_some(r)
    })
    .await;
    assert_eq!(structured(&refused)["error"]["kind"], "shutting_down");
    // the person, still reading through the drain, now accepts
    read.add_permits(1);
    let done = confirming.await.unwrap().expect("the confirmation in flight got its result");
    assert_eq!(structured(&done)["executed"], true, "{:?}", done.structured_content);
    assert_eq!(creates(&server.sim, "connections").await, 1);
    let status = tokio::time::timeout(Duration::from_secs(20), server.child.wait()).await.unwrap().unwrap();
    assert!(status.success(), "{status:?}\n{}", server.stderr_text());
    assert!(server.stderr_text().contains("SIGTERM: shutting down"));
}

#[tokio::test]
async fn a_confirmation_still_waiting_after_the_grace_period_is_cancelled_and_audited() {
    let mut server =
        Launch::serve().args(&["--toolsets", "metros,mutate", "--shutdown-grace-ms", "300"]).http("127.0.0.1:0").await;
    let client = TestClient::answering(Answer::Never);
    let service = server.connect(None, client.clone(), false).await;
    let p = propose_on(&service, "abandoned", 1802).await;
    let peer = service.peer().clone();
    let token = p["confirm_token"].clone();
    tokio::spawn(async move {
        let _ = peer.call_tool(confirm_request(token)).await;
    });
    wait_until("the confirmation prompt", async || !client.prompt_texts().is_empty()).await;
    server.terminate();
    let status = tokio::time::timeout(Duration::from_secs(20), server.child.wait()).await.unwrap().unwrap();
    assert!(status.success(), "{status:?}\n{}", server.stderr_text());
    assert_eq!(executed_in_audit(&server), 0);
    let entries = server.audit_entries();
    let confirm = entries.iter().find(|e| e["tool"] == "fabric_confirm_change").expect("the confirm was audited");
    assert_eq!(confirm["human_status"], "call_cancelled", "{confirm}");
    assert_eq!(confirm["executed"], false);
}

/// The embedded simulator dies with the server; its last word is the audit log, which records
/// whether a create was executed.
fn executed_in_audit(server: &HttpServer) -> usize {
    server.audit_entries().iter().filter(|e| e["executed"] == true).count()
}

#[tokio::test]
async fn a_malformed_state_key_or_a_readable_token_file_stops_start_up() {
    let short = "c2hvcnQ="; // "short"
    let (ok, _, stderr) = run_to_exit(&["serve", "--fabric-sim"], &[("EQUINIX_MCP_STATE_KEY", short)]).await;
    assert!(!ok && stderr.contains("EQUINIX_MCP_STATE_KEY decodes to 5 bytes"), "{stderr}");
    let (ok, _, stderr) = run_to_exit(&["serve", "--fabric-sim"], &[("EQUINIX_MCP_STATE_KEY", "%%%")]).await;
    assert!(!ok && stderr.contains("not base64") && !stderr.contains("%%%"), "{stderr}");

    let tokens = token_file(&[("alice", ALICE)]);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&tokens, std::fs::Permissions::from_mode(0o644)).unwrap();
    }
    let (ok, _, stderr) = run_to_exit(
        &["serve", "--fabric-sim", "--transport", "http", "--auth-token-file", tokens.to_str().unwrap()],
        &[],
    )
    .await;
    assert!(!ok && stderr.contains("chmod 600") && !stderr.contains(ALICE), "{stderr}");
}

#[tokio::test]
async fn the_banner_warns_when_unconfirmed_mutations_are_allowed() {
    let server = Launch::serve()
        .args(&["--toolsets", "mutate"])
        .env(&[("EQUINIX_MCP_ALLOW_UNCONFIRMED_MUTATIONS", "true")])
        .http("127.0.0.1:0")
        .await;
    assert!(server.stderr_text().contains("WARNING: EQUINIX_MCP_ALLOW_UNCONFIRMED_MUTATIONS=true"));
}
