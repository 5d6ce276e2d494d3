//! The Safe Mutation Broker end to end — propose, human confirmation by every answer,
//! token rules, cancellation, eviction and unknown outcomes — through the real binary on its
//! embedded simulator, whose create counter proves what was or was not sent.

use crate::harness::*;
use serde_json::{Value, json};

/// Every test here proposes the same kind of connection, varying its name and VLAN.
use crate::harness::connection_spec as connection;

struct Broker {
    server: Server,
    sim: String,
}

async fn broker(client: TestClient, extra_env: &[(&str, &str)]) -> Broker {
    let server = Launch::command(&["serve", "--fabric-sim", "--toolsets", "metros,mutate"])
        .env(extra_env)
        .client(client)
        .stdio()
        .await;
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

mod audit;
mod cancel;
mod tokens;
