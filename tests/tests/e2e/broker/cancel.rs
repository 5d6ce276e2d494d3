//! Cancellation at every moment of a confirm, and the 2026-07-28 stateless confirmation.

use super::*;

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
    wait::until_some("a replay that reports the first attempt's outcome", wait::WITHIN, async || {
        let (err, r) = b.confirm(token).await;
        assert!(err, "a replay is refused: {r}");
        assert_eq!(r["error"]["kind"], "replayed_token");
        (!r["error"]["first_attempt"].is_null()).then_some(r)
    })
    .await
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
    use equinix_mcp::capabilities::CallContext;
    let cli = equinix_mcp::cli::Cli::try_parse_from([
        "equinix-mcp",
        "serve",
        "--fabric-sim",
        "--toolsets",
        "mutate",
        "--cache-dir",
        cache_dir().to_str().unwrap(),
        "--elicit-timeout-ms",
        "1000",
        "--audit-log",
        fresh_audit_path().to_str().unwrap(),
    ])
    .unwrap();
    let Some(equinix_mcp::cli::Command::Serve(args)) = cli.command else { panic!("expected serve") };
    let ready = equinix_mcp::commands::serve::prepare(&args).await.unwrap();
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
        ready.broker.shared().grants.proposals.peek(&equinix_mcp::principal::Principal::local(), &token).await.unwrap(),
        equinix_mcp::proposals::Taken::Found(_)
    ));
}

fn tokio_util_token() -> tokio_util::sync::CancellationToken {
    tokio_util::sync::CancellationToken::new()
}

async fn stateless_broker(client: TestClient) -> Broker {
    let server = Launch::command(&["serve", "--fabric-sim", "--toolsets", "metros,mutate"])
        .client(client)
        .stateless()
        .stdio()
        .await;
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
    let b = stateless_broker(TestClient::by_hand()).await;
    crate::harness::rounds::stateless_round_trips(&b.server.client, &b.sim).await;
    b.server.stop().await;
}
