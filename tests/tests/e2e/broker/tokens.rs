//! Token rules: unknown, expired, evicted and replayed tokens, dry-run refusals, other change
//! types, unknown outcomes, and which toolsets serve the broker.

use super::*;

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
                         "project": {"projectId": equinix_fabric_sim::PROJECT_ID},
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
    let server = Launch::serve().args(&["--toolsets", "all"]).stdio().await;
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
