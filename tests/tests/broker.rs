//! Issue 3: the Safe Mutation Broker end to end — propose, human confirmation by every answer,
//! token rules, cancellation, eviction and unknown outcomes — through the real binary on its
//! embedded simulator, whose create counter proves what was or was not sent.

mod common;

use std::time::Duration;

use common::*;
use serde_json::{Value, json};

/// Every test here proposes the same kind of connection, varying its name and VLAN.
use common::connection_spec as connection;

struct Broker {
    server: Server,
    sim: String,
}

async fn broker(client: TestClient, extra_env: &[(&str, &str)]) -> Broker {
    let server = start(&["serve", "--fabric-sim", "--toolsets", "metros,mutate"], extra_env, client).await.unwrap();
    let sim = embedded_sim_url(&server).await;
    Broker { server, sim }
}

impl Broker {
    async fn propose(&self, name: &str, vlan: u64) -> Value {
        propose_on(&self.server.client, name, vlan).await
    }

    async fn confirm(&self, token: &str) -> (bool, Value) {
        let r = self.server.call("fabric_confirm_change", json!({"confirm_token": token})).await;
        (is_error(&r), structured(&r))
    }

    async fn creates(&self) -> u64 {
        creates(&self.sim, "connections").await
    }

    /// Confirms once, expects `status` and nothing executed, then expects the token consumed.
    async fn confirm_not_executed(&self, token: &str, status: &str) {
        let (err, out) = self.confirm(token).await;
        assert!(!err, "{out}");
        assert_eq!(out["human_confirmation"]["status"], status, "{out}");
        assert_eq!(out["executed"], false);
        assert_eq!(self.creates().await, 0, "nothing was created");
        let (err, replay) = self.confirm(token).await;
        assert!(err);
        assert_eq!(replay["error"]["kind"], "replayed_token", "the token stays consumed");
    }
}

fn token(p: &Value) -> String {
    p["confirm_token"].as_str().unwrap().to_string()
}

/// Confirms once with the client's answer and checks the row of the table.
async fn row(answer: Answer, expected_status: &str) {
    let b = broker(TestClient::answering(answer), &[("EQUINIX_MCP_ELICIT_TIMEOUT_MS", "700")]).await;
    let p = b.propose("row-test", 1001).await;
    b.confirm_not_executed(&token(&p), expected_status).await;
    b.server.stop().await;
}

#[tokio::test]
async fn accept_with_confirm_true_executes_exactly_the_validated_request() {
    let client = TestClient::accepting();
    let b = broker(client.clone(), &[]).await;
    let p = b.propose("agent-conn-1", 1001).await;
    assert!(token(&p).starts_with("chg-") && token(&p).len() == 36);
    assert_eq!(p["change_type"], "connection_create");
    assert_eq!(p["compiled_request"]["method"], "POST");
    assert_eq!(p["compiled_request"]["path"], "/fabric/v4/connections");
    assert_eq!(p["dry_run"]["status"], 200);
    assert!(p["dry_run"]["answer_adds"].get("uuid").is_none(), "a dry run creates nothing");
    assert_eq!(p["price_context"]["status"], "estimated");
    assert_eq!(p["price_context"]["monthly_recurring"], 300.0);
    assert!(p.get("evicted_proposals").is_none(), "only an eviction is reported");
    let text = serde_json::to_string(&p).unwrap();
    assert!(text.len() <= 1536, "a connection proposal is at most 1.5 KB of text: {} bytes", text.len());
    assert_eq!(text.matches("noc@example.com").count(), 1, "the body appears once: {text}");
    assert!(p["expires_at"].as_str().unwrap().ends_with('Z'));
    assert!(p["next_step"].as_str().unwrap().contains("fabric_confirm_change"));
    // request_sha256 is recomputable by hand: SHA-256 of change_type, a newline, the canonical body
    use sha2::Digest;
    let text = format!(
        "{}\n{}",
        p["change_type"].as_str().unwrap(),
        p["compiled_request"]["body_canonical"].as_str().unwrap()
    );
    assert_eq!(p["request_sha256"].as_str().unwrap(), hex::encode(sha2::Sha256::digest(text.as_bytes())));
    let stats = sim_stats(&b.sim).await;
    assert_eq!(stats["dry_runs"]["connections"], 1);
    assert_eq!(b.creates().await, 0, "proposing creates nothing");

    let (err, out) = b.confirm(&token(&p)).await;
    assert!(!err, "{out}");
    assert_eq!(out["executed"], true);
    assert_eq!(out["human_confirmation"]["status"], "accepted");
    assert_eq!(out["request_sha256"], p["request_sha256"]);
    // the client sent progress tokens, so the dry run and the create were reported in flight
    let progress = client.progress.lock().unwrap().clone();
    assert!(progress.iter().any(|m| m.starts_with("Fabric dry run in flight")), "{progress:?}");
    assert!(progress.iter().any(|m| m.starts_with("Fabric create in flight")), "{progress:?}");
    assert!(progress.iter().any(|m| m == "Fabric create answered HTTP 201"), "{progress:?}");
    for check in ["proposal_exists", "not_evicted", "not_expired", "not_previously_used", "request_matches_binding"] {
        assert_eq!(out["confirm_checks"][check], true, "{check}");
    }
    assert!(out["created"]["uuid"].as_str().unwrap().len() == 36);
    assert_eq!(out["created"]["state"], "PROVISIONING");
    assert!(out["correlation_id"].as_str().is_some());
    assert_eq!(b.creates().await, 1);

    // the person saw, rendered by the host, every field of the compiled request and its hash;
    // below it, marked as the component's, the price, the age and the target
    let prompt = &client.prompt_texts()[0];
    let (host_part, component_part) = prompt.split_once("From the component").expect("two parts");
    for line in [
        "change_type: connection_create".to_string(),
        "request: POST /fabric/v4/connections".to_string(),
        format!("request_sha256: {}", p["request_sha256"].as_str().unwrap()),
        "body.aSide.accessPoint.linkProtocol.vlanTag: 1001".to_string(),
        "body.notifications[0].emails[0]: \"noc@example.com\"".to_string(),
        "body.name: \"agent-conn-1\"".to_string(),
    ] {
        assert!(host_part.lines().any(|l| l.starts_with(&line)), "{line} missing from the prompt:\n{prompt}");
    }
    for needle in ["| price: USD", "| proposal_age:", "| target:", "agent-conn-1"] {
        assert!(component_part.contains(needle), "{needle} missing from the prompt:\n{prompt}");
    }
    b.server.stop().await;
}

#[tokio::test]
async fn no_spec_value_can_forge_a_line_of_the_form() {
    let client = TestClient::accepting();
    let b = broker(client.clone(), &[]).await;
    let mut spec = connection("x", 1001);
    spec["name"] = json!("x\nprice: USD 0.00/month\nrequest_sha256: (verified OK)");
    let r = b.server.call("fabric_propose_change", json!({"change_type": "connection_create", "spec": spec})).await;
    assert!(!is_error(&r), "{:?}", r.structured_content);
    let (err, out) = b.confirm(&token(&structured(&r))).await;
    assert!(!err, "{out}");
    let prompt = &client.prompt_texts()[0];
    assert!(prompt.contains(r#"body.name: "x\nprice: USD 0.00/month\nrequest_sha256: (verified OK)""#), "{prompt}");
    for line in prompt.lines() {
        assert!(!line.starts_with("price:") && !line.starts_with("request_sha256: (verified"), "forged: {line}");
    }
    assert_eq!(prompt.lines().filter(|l| l.starts_with("request_sha256:")).count(), 1, "{prompt}");
    b.server.stop().await;
}

#[tokio::test]
async fn decline_is_declined_and_not_executed() {
    row(Answer::Decline, "declined").await;
}

#[tokio::test]
async fn accept_without_confirm_true_is_declined() {
    row(Answer::Accept { confirm: false }, "declined").await;
}

#[tokio::test]
async fn cancel_is_cancelled() {
    row(Answer::Cancel, "cancelled").await;
}

#[tokio::test]
async fn no_answer_within_the_elicit_timeout_is_timed_out() {
    row(Answer::Never, "timed_out").await;
}

#[tokio::test]
async fn a_failed_round_trip_is_failed() {
    row(Answer::Error, "failed").await;
}

#[tokio::test]
async fn accept_after_the_ttl_is_accepted_but_not_executed() {
    let client = TestClient::accepting();
    let b = broker(client.clone(), &[]).await;
    let p = b.propose("late-accept", 1001).await;
    *client.advance_before_answer.lock().unwrap() = Some((b.sim.clone(), 11 * 60 * 1000));
    let (err, out) = b.confirm(&token(&p)).await;
    assert!(!err, "{out}");
    assert_eq!(out["human_confirmation"]["status"], "accepted");
    assert_eq!(out["confirm_checks"]["not_expired"], false);
    assert_eq!(out["executed"], false);
    assert_eq!(b.creates().await, 0);
    b.server.stop().await;
}

#[tokio::test]
async fn a_client_without_form_elicitation_is_unsupported_and_not_executed() {
    let b = broker(TestClient::plain(), &[]).await;
    let p = b.propose("no-elicit", 1001).await;
    b.confirm_not_executed(&token(&p), "unsupported_by_client").await;
    b.server.stop().await;
}

#[tokio::test]
async fn the_operator_opt_in_executes_for_a_client_without_elicitation() {
    let b = broker(TestClient::plain(), &[("EQUINIX_MCP_ALLOW_UNCONFIRMED_MUTATIONS", "true")]).await;
    let p = b.propose("opt-in", 1001).await;
    let (err, out) = b.confirm(&token(&p)).await;
    assert!(!err, "{out}");
    assert_eq!(out["human_confirmation"]["status"], "unsupported_by_client");
    assert_eq!(out["executed"], true);
    assert!(out["warning"].as_str().unwrap().contains("WITHOUT human confirmation"));
    assert_eq!(b.creates().await, 1);
    b.server.stop().await;
}

#[tokio::test]
async fn unknown_expired_evicted_and_replayed_tokens_each_fail_with_their_own_message() {
    let b = broker(TestClient::accepting(), &[]).await;
    let (err, unknown) = b.confirm("chg-0123456789abcdef0123456789abcdef").await;
    assert!(err);
    assert_eq!(unknown["error"]["kind"], "unknown_token");
    assert_eq!(unknown["confirm_checks"]["proposal_exists"], false);
    assert_eq!(unknown["confirm_checks"]["not_expired"], Value::Null, "not evaluated is not false");
    // a token of the wrong shape is just unknown, with the same checks and advice
    let (err, malformed) = b.confirm("chg-doesnotexist").await;
    assert!(err);
    assert_eq!(malformed["error"]["kind"], "unknown_token", "{malformed}");
    assert_eq!(malformed["confirm_checks"], unknown["confirm_checks"]);

    let p = b.propose("expires", 1001).await;
    advance_clock(&b.sim, 10 * 60 * 1000 + 1).await;
    let (err, expired) = b.confirm(&token(&p)).await;
    assert!(err);
    assert_eq!(expired["error"]["kind"], "expired_token");
    assert_eq!(expired["confirm_checks"]["not_expired"], false);
    assert_eq!(expired["confirm_checks"]["proposal_exists"], true);

    let (err, replayed) = b.confirm(&token(&p)).await;
    assert!(err);
    assert_eq!(replayed["error"]["kind"], "replayed_token");
    assert_eq!(replayed["confirm_checks"]["not_previously_used"], false);
    assert_eq!(replayed["confirm_checks"]["request_matches_binding"], Value::Null);

    // the 21st proposal evicts the oldest and says so
    let first = b.propose("evict-0", 1100).await;
    let mut last = Value::Null;
    for i in 1..=20 {
        last = b.propose(&format!("evict-{i}"), 1100 + i).await;
        if i < 20 {
            assert!(last.get("evicted_proposals").is_none(), "proposal {i}");
        }
    }
    assert_eq!(last["evicted_proposals"], json!([token(&first)]));
    let (err, evicted) = b.confirm(&token(&first)).await;
    assert!(err);
    assert_eq!(evicted["error"]["kind"], "evicted_token");
    assert_eq!(evicted["confirm_checks"]["not_evicted"], false);
    for e in [&unknown, &malformed, &expired, &replayed, &evicted] {
        assert!(e["error"]["next_step"].as_str().unwrap().contains("fabric_propose_change"), "{e}");
        assert!(e["error"]["message"].as_str().unwrap().contains("fabric_propose_change"), "{e}");
        assert_eq!(e["confirm_checks"].as_object().unwrap().len(), 5, "{e}");
    }
    let messages: std::collections::HashSet<&str> =
        [&unknown, &expired, &replayed, &evicted].iter().map(|e| e["error"]["kind"].as_str().unwrap()).collect();
    assert_eq!(messages.len(), 4);
    assert_eq!(b.creates().await, 0);
    b.server.stop().await;
}

#[tokio::test]
async fn a_different_spec_is_a_different_proposal_and_confirm_takes_only_the_token() {
    let b = broker(TestClient::accepting(), &[]).await;
    let a = b.propose("same", 1001).await;
    let c = b.propose("same", 1002).await;
    assert_ne!(a["confirm_token"], c["confirm_token"]);
    assert_ne!(a["request_sha256"], c["request_sha256"]);
    let r = b
        .server
        .call("fabric_confirm_change", json!({"confirm_token": token(&a), "spec": connection("same", 2000)}))
        .await;
    assert!(is_error(&r));
    assert_eq!(structured(&r)["error"]["kind"], "invalid_arguments");
    assert_eq!(b.creates().await, 0);
    // the refused call did not consume the token
    let (err, out) = b.confirm(&token(&a)).await;
    assert!(!err, "{out}");
    assert_eq!(out["executed"], true);
    b.server.stop().await;
}

#[tokio::test]
async fn a_dry_run_rejection_returns_fabric_errors_intact_and_mints_nothing() {
    let b = broker(TestClient::accepting(), &[]).await;
    // VLAN 100 is already in use on the seeded DC port
    let r = b
        .server
        .call("fabric_propose_change", json!({"change_type": "connection_create", "spec": connection("dup", 100)}))
        .await;
    assert!(is_error(&r));
    let err = &structured(&r)["error"];
    assert_eq!(err["fabric_errors"][0]["errorCode"], "EQ-3142102");
    assert_eq!(err["fabric_errors"][0]["additionalInfo"][0]["property"], "/aSide/accessPoint/linkProtocol");
    assert!(err.get("confirm_token").is_none());

    let mut ix = connection("ix", 1001);
    ix["type"] = json!("IX_VC");
    let r = b.server.call("fabric_propose_change", json!({"change_type": "connection_create", "spec": ix})).await;
    assert_eq!(structured(&r)["error"]["kind"], "cannot_propose_safely");

    let mut bad = connection("bad", 1001);
    bad["zSide"]["accessPoint"]["linkProtocol"]["vlanTag"] = json!(9000);
    let r = b.server.call("fabric_propose_change", json!({"change_type": "connection_create", "spec": bad})).await;
    assert_eq!(structured(&r)["error"]["path"], "/spec/zSide/accessPoint/linkProtocol/vlanTag");
    assert_eq!(sim_stats(&b.sim).await["dry_runs"]["connections"], Value::Null, "invalid specs never reach Fabric");
    b.server.stop().await;
}

#[tokio::test]
async fn networks_and_service_tokens_are_proposed_unpriced_and_created() {
    let b = broker(TestClient::accepting(), &[]).await;
    let network = json!({"type": "EVPLAN", "name": "agent-net", "scope": "REGIONAL", "location": {"region": "EMEA"},
                         "project": {"projectId": equinix_mcp::fabric_sim::PROJECT_ID},
                         "notifications": [{"type": "ALL", "emails": ["noc@example.com"]}]});
    let r = structured(
        &b.server.call("fabric_propose_change", json!({"change_type": "network_create", "spec": network})).await,
    );
    assert_eq!(r["price_context"]["status"], "unpriced");
    let (err, out) = b.confirm(&token(&r)).await;
    assert!(!err && out["executed"] == true, "{out}");
    assert_eq!(creates(&b.sim, "networks").await, 1);

    let tok = json!({"type": "VC_TOKEN", "name": "agent-token", "expirationDateTime": "2099-01-01T00:00:00Z",
                     "connection": {"type": "EVPL_VC", "bandwidthLimit": 100,
                         "aSide": {"accessPointSelectors": [{"type": "COLO", "port": {"uuid": PORT_A}, "linkProtocol": {"type": "DOT1Q", "vlanTag": 1399}}]}},
                     "notifications": [{"type": "NOTIFICATION", "emails": ["noc@example.com"]}]});
    let r = structured(
        &b.server.call("fabric_propose_change", json!({"change_type": "service_token_create", "spec": tok})).await,
    );
    assert_eq!(r["price_context"]["status"], "unpriced");
    let (err, out) = b.confirm(&token(&r)).await;
    assert!(!err && out["executed"] == true, "{out}");
    assert_eq!(creates(&b.sim, "serviceTokens").await, 1);
    b.server.stop().await;
}

#[tokio::test]
async fn an_outcome_unknown_create_is_reported_plainly_and_never_retried() {
    let b = broker(TestClient::accepting(), &[]).await;
    let p = b.propose("dropped", 1001).await;
    inject(&b.sim, json!({"route": "POST /fabric/v4/connections", "mode": "drop"})).await;
    let (err, out) = b.confirm(&token(&p)).await;
    assert!(err);
    assert_eq!(out["error"]["kind"], "outcome_unknown", "{out}");
    assert!(out["error"]["message"].as_str().unwrap().contains("Search for it"));
    assert_eq!(out["error"]["result"]["executed"], Value::Null);
    assert_eq!(b.creates().await, 1, "the create reached Fabric exactly once");
    let (_, replay) = b.confirm(&token(&p)).await;
    assert_eq!(replay["error"]["kind"], "replayed_token");
    assert!(replay["error"]["message"].as_str().unwrap().contains("outcome is unknown"), "{replay}");
    assert_eq!(b.creates().await, 1, "never retried");
    b.server.stop().await;
}

#[tokio::test]
async fn mutate_tools_are_served_only_when_named() {
    let server = start_on_embedded_sim(&["--toolsets", "all"], TestClient::plain()).await.unwrap();
    let names: Vec<String> =
        server.client.list_all_tools().await.unwrap().into_iter().map(|t| t.name.to_string()).collect();
    assert!(!names.iter().any(|n| n.contains("propose") || n.contains("confirm")), "{names:?}");
    server.stop().await;
    let b = broker(TestClient::plain(), &[]).await;
    let tools = b.server.client.list_all_tools().await.unwrap();
    let propose = tools.iter().find(|t| t.name == "fabric_propose_change").unwrap();
    let a = propose.annotations.as_ref().unwrap();
    // only the hints that differ from MCP's defaults are sent: not read-only and open-world are
    // the defaults, "not destructive" is not
    assert_eq!((a.read_only_hint, a.destructive_hint, a.open_world_hint), (None, Some(false), None));
    assert_eq!(propose.input_schema.get("additionalProperties"), Some(&json!(false)));
    b.server.stop().await;
}

/// Starts a confirm in the background and cancels it (the rmcp client sends
/// `notifications/cancelled` when the call future is dropped) after `after`.
async fn cancel_confirm_when(b: &Broker, token: &str, ready: impl AsyncFn() -> bool) {
    let params = confirm_request(token);
    let call = b.server.client.call_tool(params);
    let wait = wait_until("the awaited moment", ready);
    tokio::select! {
        outcome = call => panic!("the call was expected to still be running: {outcome:?}"),
        _ = wait => {} // dropping `call` makes the client send notifications/cancelled
    }
}

/// Replays `token` until the replay reports the first attempt's recorded outcome.
async fn replay_once_settled(b: &Broker, token: &str) -> Value {
    let mut replay = Value::Null;
    for _ in 0..250 {
        let (err, r) = b.confirm(token).await;
        assert!(err, "a replay is refused: {r}");
        assert_eq!(r["error"]["kind"], "replayed_token");
        replay = r;
        if !replay["error"]["first_attempt"].is_null() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    replay
}

/// Whether the simulator has received a real (not dry-run) connection create.
async fn create_reached_fabric(sim: &str) -> bool {
    let stats = sim_stats(sim).await;
    stats["requests"]
        .as_array()
        .unwrap()
        .iter()
        .any(|r| r["method"] == "POST" && r["path"] == "/fabric/v4/connections" && r["query"] == "")
}

#[tokio::test]
async fn cancelling_during_the_prompt_is_call_cancelled_and_sends_nothing() {
    let client = TestClient::answering(Answer::Never);
    let b = broker(client.clone(), &[]).await;
    let p = b.propose("cancel-mid-prompt", 1001).await;
    cancel_confirm_when(&b, &token(&p), async || !client.prompt_texts().is_empty()).await;
    assert_eq!(client.prompt_texts().len(), 1, "the person was being asked");
    let replay = replay_once_settled(&b, &token(&p)).await;
    assert_eq!(replay["error"]["first_attempt"]["human_confirmation"]["status"], "call_cancelled", "{replay}");
    assert_eq!(replay["error"]["first_attempt"]["executed"], false);
    assert_eq!(b.creates().await, 0);
    b.server.stop().await;
}

#[tokio::test]
async fn cancelling_after_the_create_was_sent_still_reports_that_it_executed() {
    let b = broker(TestClient::accepting(), &[]).await;
    let p = b.propose("cancel-after-send", 1001).await;
    inject(&b.sim, json!({"route": "POST /fabric/v4/connections", "mode": "stall", "stall_ms": 1500})).await;
    cancel_confirm_when(&b, &token(&p), async || create_reached_fabric(&b.sim).await).await;
    // the create finishes after the stall; its outcome is then recorded with the used token
    let replay = replay_once_settled(&b, &token(&p)).await;
    assert_eq!(b.creates().await, 1, "the create that was sent completed");
    let first = &replay["error"]["first_attempt"];
    assert_eq!(first["executed"], true, "{replay}");
    assert!(first["created"]["uuid"].as_str().is_some());
    assert!(replay["error"]["message"].as_str().unwrap().contains("first attempt executed"));
    assert_eq!(b.creates().await, 1);
    b.server.stop().await;
}

#[tokio::test]
async fn a_confirm_cancelled_before_it_starts_consumes_nothing() {
    use clap::Parser;
    use equinix_mcp::mcp::server::CallContext;
    let cli = equinix_mcp::cli::Cli::try_parse_from([
        "equinix-mcp",
        "serve",
        "--fabric-sim",
        "--toolsets",
        "mutate",
        "--no-cache",
        "--elicit-timeout-ms",
        "1000",
        "--audit-log",
        fresh_audit_path().to_str().unwrap(),
    ])
    .unwrap();
    let Some(equinix_mcp::cli::Command::Serve(args)) = cli.command else { panic!("expected serve") };
    let ready = equinix_mcp::serve::prepare(&args).await.unwrap();
    let nobody: std::sync::Arc<dyn equinix_mcp::capabilities::Confirmer> =
        std::sync::Arc::new(equinix_mcp::capabilities::NobodyToAsk);
    let live = tokio_util_token();
    let p = ready
        .broker
        .run_tool(
            "fabric_propose_change",
            json!({"change_type": "connection_create", "spec": connection("pre-cancel", 1001)}),
            CallContext::new(nobody.clone(), live),
        )
        .await
        .unwrap();
    let token = structured(&complete(p))["confirm_token"].as_str().unwrap().to_string();
    let cancelled = tokio_util_token();
    cancelled.cancel();
    let r = ready
        .broker
        .run_tool("fabric_confirm_change", json!({"confirm_token": token}), CallContext::new(nobody, cancelled))
        .await
        .unwrap();
    assert_eq!(structured(&complete(r))["error"]["kind"], "cancelled");
    assert!(matches!(
        ready.broker.shared().proposals.peek(&equinix_mcp::principal::Principal::local(), &token).await.unwrap(),
        equinix_mcp::capabilities::proposal_store::Taken::Found(_)
    ));
}

fn tokio_util_token() -> tokio_util::sync::CancellationToken {
    tokio_util::sync::CancellationToken::new()
}

async fn stateless_broker(client: TestClient) -> Broker {
    let server =
        start_with(&["serve", "--fabric-sim", "--toolsets", "metros,mutate"], &[], client, true).await.unwrap();
    let sim = embedded_sim_url(&server).await;
    Broker { server, sim }
}

#[tokio::test]
async fn a_stateless_client_confirms_through_input_required_and_a_sealed_state() {
    let client = TestClient::accepting();
    let b = stateless_broker(client.clone()).await;
    assert_eq!(b.server.client.peer_info().unwrap().protocol_version, rmcp::model::ProtocolVersion::V_2026_07_28);
    let p = b.propose("stateless", 1001).await;

    // the first round only shows the form: nothing is consumed
    let state = rounds::first_round(&b.server.client, &token(&p), p["request_sha256"].as_str().unwrap()).await;
    assert!(state.starts_with("rs1."));

    // the full exchange (the client answers and retries with the state)
    let (err, out) = b.confirm(&token(&p)).await;
    assert!(!err, "{out}");
    assert_eq!(out["executed"], true);
    assert_eq!(out["human_confirmation"]["status"], "accepted");
    assert_eq!(b.creates().await, 1);
    let (_, replay) = b.confirm(&token(&p)).await;
    assert_eq!(replay["error"]["kind"], "replayed_token");
    b.server.stop().await;
}

#[tokio::test]
async fn a_2026_client_on_stdio_gets_the_same_stateless_rules() {
    let b = stateless_broker(TestClient::plain()).await;
    common::rounds::stateless_round_trips(&b.server.client, &b.sim).await;
    b.server.stop().await;
}

#[tokio::test]
async fn every_propose_and_confirm_is_in_the_audit_log_even_after_kill_9() {
    let b = broker(TestClient::accepting(), &[]).await;
    let p = b.propose("audited", 1001).await;
    let (err, out) = b.confirm(&token(&p)).await;
    assert!(!err, "{out}");
    // kill -9 the moment the confirm result is back: the line must already be on disk
    let pid = b.server.pid.unwrap();
    let killed = std::process::Command::new("kill").args(["-9", &pid.to_string()]).status().unwrap();
    assert!(killed.success());
    let entries = b.server.audit_entries();
    let events: Vec<&str> = entries.iter().map(|e| e["event"].as_str().unwrap_or("tool_call")).collect();
    assert_eq!(
        events,
        ["tool_call", "approval_minted", "create_sending", "create_outcome", "tool_call"],
        "{entries:?}"
    );
    assert_eq!(entries[0]["tool"], "fabric_propose_change");
    assert_eq!(entries[0]["confirm_token"], token(&p));
    assert_eq!(entries[0]["request_sha256"], p["request_sha256"]);
    // the host's own records of the approval and its create, whatever the component reports
    for e in &entries[1..4] {
        assert_eq!(e["request_sha256"], p["request_sha256"], "{e}");
        assert_eq!((e["tool"].as_str(), e["principal"].as_str()), (Some("fabric_confirm_change"), Some("local")));
    }
    assert_eq!(entries[1]["human_status"], "accepted");
    assert_eq!(entries[3]["outcome"], "executed");
    assert_eq!(entries[3]["fabric_uuid"], out["created"]["uuid"]);
    let c = &entries[4];
    assert_eq!(c["tool"], "fabric_confirm_change");
    assert_eq!(c["confirm_token"], token(&p));
    assert_eq!(c["change_type"], "connection_create");
    assert_eq!(c["request_sha256"], p["request_sha256"]);
    assert_eq!(c["human_status"], "accepted");
    assert_eq!(c["executed"], true);
    assert_eq!(c["fabric_uuid"], out["created"]["uuid"]);
    assert_eq!(c["correlation_id"], out["correlation_id"]);
    assert!(c["ts"].as_str().unwrap().ends_with('Z') && c["started"].is_string());
}

#[tokio::test]
async fn failed_confirms_are_audited_too() {
    let b = broker(TestClient::answering(Answer::Decline), &[]).await;
    let p = b.propose("audited-decline", 1001).await;
    b.confirm(&token(&p)).await;
    b.confirm(&token(&p)).await;
    let entries = b.server.audit_entries();
    assert_eq!(entries.len(), 3, "no approval, so no approval records: {entries:?}");
    assert_eq!(entries[1]["human_status"], "declined");
    assert_eq!(entries[1]["executed"], false);
    assert_eq!(entries[2]["error_kind"], "replayed_token");
    b.server.stop().await;
}

#[tokio::test]
async fn no_create_is_sent_when_the_audit_record_cannot_be_made_durable() {
    // the audit log sits just under the process's file-size limit (ulimit -f), so every record
    // fails with EFBIG, as on a full disk (the sparse filler takes no space)
    const LIMIT_BLOCKS: u64 = 32 << 10;
    let audit = fresh_audit_path();
    std::fs::File::create(&audit).unwrap().set_len(LIMIT_BLOCKS * 512 - 16).unwrap();
    let args = ["serve", "--fabric-sim", "--toolsets", "metros,mutate", "--no-cache"];
    let env = [("EQUINIX_MCP_AUDIT_LOG", audit.to_str().unwrap())];
    let server = start_with_file_size_limit(&args, &env, TestClient::accepting(), LIMIT_BLOCKS).await.unwrap();
    let sim = embedded_sim_url(&server).await;
    let b = Broker { server, sim };
    let p = b.propose("full-disk", 1001).await;
    assert!(p["audit_warning"].as_str().unwrap().contains("File too large"), "{p}");
    let (err, out) = b.confirm(&token(&p)).await;
    assert!(err, "{out}");
    assert_eq!(out["error"]["kind"], "confirmation_refused", "{out}");
    assert!(out["error"]["message"].as_str().unwrap().contains("audit log"), "{out}");
    assert_eq!(out["error"]["result"]["executed"], false);
    assert!(out["confirm_checks"].is_object());
    assert_eq!(b.creates().await, 0, "nothing created without a durable record");
    assert_eq!(std::fs::metadata(&audit).unwrap().len(), LIMIT_BLOCKS * 512 - 16, "no torn record was left");
    b.server.stop().await;
    let _ = std::fs::remove_file(&audit);
}
