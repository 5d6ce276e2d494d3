//! A person's one yes mints at most one approval, and the host bounds the proposal
//! store, whatever the component asks. The probe component does what a hostile one would; every
//! case ends on the simulator's counters and the audit log.

use base64::Engine;
use equinix_fabric_sim::SimConfig;
use rmcp::model::CallToolRequestParams;
use serde_json::{Value, json};

use crate::harness::redis::RedisServer;
use crate::harness::rounds::{accept, first_round_of, retry_of};
use crate::harness::*;
use crate::hostile::rogue;

type Client = rmcp::service::RunningService<rmcp::service::RoleClient, TestClient>;

const PROBE_TOOLSETS: &str = "probe,echo,mutate";

/// The probe's confirm that, on a retry, takes the first of `tokens` it still can.
fn retry_params(tokens: &[&str], body: &Value) -> CallToolRequestParams {
    let args = json!({"tokens": tokens, "body": body});
    CallToolRequestParams::new("rogue_retry").with_arguments(args.as_object().unwrap().clone())
}

fn approvals_minted(entries: &[Value]) -> usize {
    entries.iter().filter(|e| e["event"] == "approval_minted").count()
}

/// The hash the form shows for the probe's create of `body` (which it writes with its keys sorted).
fn form_hash(body: &Value) -> String {
    equinix_broker_contract::request_sha256("connection_create", &equinix_broker_contract::canonical_json(body))
}

/// Two proposals of one body, each bound to its own dry run of the same bytes.
async fn two_proposals_of(client: &Client, body: &Value) -> (String, String) {
    let mut tokens = Vec::new();
    for _ in 0..2 {
        let r = call_on(client, "rogue_propose", json!({"body": body})).await;
        assert!(!is_error(&r), "{:?}", r.structured_content);
        tokens.push(structured(&r)["token"].as_str().unwrap().to_string());
    }
    (tokens[0].clone(), tokens[1].clone())
}

/// The retry's result when the host refused to count the answer: why, naming both proposals.
fn refused_for_another_proposal(out: &Value, asked: &str, taken: &str) {
    assert_eq!(out["token"], taken, "{out}");
    let why = out["refused"].as_str().unwrap_or_else(|| panic!("not refused: {out}"));
    assert!(why.contains(&format!("given about proposal {asked}")) && why.contains(taken), "{why}");
    assert!(out.get("execute").is_none(), "{out}");
}

#[tokio::test]
async fn a_replayed_stateless_retry_creates_nothing_whatever_proposal_the_component_takes() {
    let sim = sim(SimConfig::default()).await;
    let probe = probe_component();
    let args = ["--component", probe.to_str().unwrap(), "--toolsets", PROBE_TOOLSETS];
    let server = Launch::serve().against(&sim).args(&args).client(TestClient::by_hand()).stateless().stdio().await;
    let body = connection_spec("one-yes", 1001);
    let (t1, t2) = two_proposals_of(&server.client, &body).await;
    let (params, sha) = (retry_params(&[&t1, &t2], &body), form_hash(&body));
    let state = first_round_of(&server.client, params.clone(), &sha).await;

    let first = structured(&retry_of(&server.client, params.clone(), &state, accept()).await);
    assert_eq!(
        (first["token"].as_str(), first["status"].as_str()),
        (Some(t1.as_str()), Some("Status::Accepted")),
        "{first}"
    );
    assert!(first["execute"]["status"].as_u64().is_some_and(|s| (200..300).contains(&s)), "{first}");
    // the identical retry again: t1 is spent, so the component takes t2, bound to the same bytes
    let replay = structured(&retry_of(&server.client, params.clone(), &state, accept()).await);
    refused_for_another_proposal(&replay, &t1, &t2);
    // the answer moved to a call about t2 alone is not that call's
    let moved = retry_of(&server.client, retry_params(&[&t2], &body), &state, accept()).await;
    assert!(is_error(&moved));
    assert_eq!(structured(&moved)["error"]["kind"], "invalid_request_state");

    assert_eq!(connection_create_requests(&sim), 1, "one create request reached Fabric");
    assert_eq!(connection_creates(&sim), 1);
    assert_eq!(approvals_minted(&server.audit_entries()), 1, "one approval for one yes");
    server.stop().await;
}

#[tokio::test]
async fn an_answer_replayed_on_another_replica_creates_nothing() {
    let redis = RedisServer::start();
    let sim = sim(SimConfig::default()).await;
    let key = base64::engine::general_purpose::STANDARD.encode([41u8; 32]);
    let (probe, store) = (probe_component(), redis.url(0));
    let args = ["--component", probe.to_str().unwrap(), "--toolsets", PROBE_TOOLSETS, "--proposal-store", &store];
    let env = [("EQUINIX_MCP_STATE_KEY", key.as_str())];
    let a = Launch::serve().against(&sim).args(&args).env(&env).http("127.0.0.1:0").await;
    let b = Launch::serve().against(&sim).args(&args).env(&env).http("127.0.0.1:0").await;
    let (on_a, on_b) =
        (a.connect(None, TestClient::by_hand(), true).await, b.connect(None, TestClient::by_hand(), true).await);
    let body = connection_spec("one-yes-replicas", 1002);
    let (t1, t2) = two_proposals_of(&on_a, &body).await;
    let (params, sha) = (retry_params(&[&t1, &t2], &body), form_hash(&body));
    let state = first_round_of(&on_a, params.clone(), &sha).await;

    let first = structured(&retry_of(&on_a, params.clone(), &state, accept()).await);
    assert!(first["execute"]["status"].as_u64().is_some_and(|s| (200..300).contains(&s)), "{first}");
    // the same retry through the other replica, which shares the store and the state key
    let replay = structured(&retry_of(&on_b, params.clone(), &state, accept()).await);
    refused_for_another_proposal(&replay, &t1, &t2);

    assert_eq!(connection_create_requests(&sim), 1, "one create request reached Fabric");
    let minted = approvals_minted(&a.audit_entries()) + approvals_minted(&b.audit_entries());
    assert_eq!(minted, 1, "one approval for one yes, over both replicas");
}

/// The resident memory of process `pid`, in bytes.
fn rss(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let kib = status.lines().find_map(|l| l.strip_prefix("VmRSS:")).unwrap();
    kib.trim().trim_end_matches("kB").trim().parse::<u64>().unwrap() * 1024
}

#[tokio::test]
async fn the_host_bounds_what_any_component_stores() {
    let r = rogue().await;
    let pid = r.server.pid.expect("the server's pid");
    // eighty 2 MiB records (160 MiB if they were kept), each after a dry run Fabric answered
    // 2xx: none is kept. Not fewer, larger ones: making and copying a record count as guest
    // time, and one of 8 MiB, on a machine the whole suite loaded, once ran past the
    // component's 2 s budget (2.16 s; the other calls took 0.15-0.7 s whole)
    let before = rss(pid);
    for i in 0..80 {
        let body = connection_spec(&format!("huge-{i}"), 1001);
        let (err, out) = r.call("rogue_store", json!({"body": body, "bytes": 2 << 20})).await;
        assert!(!err && out["dry_run"].as_u64().is_some_and(|s| (200..300).contains(&s)), "{out}");
        let why = out["refused"].as_str().unwrap_or_else(|| panic!("stored: {out}"));
        assert!(why.contains("2097152 bytes") && why.contains("at most 65536 bytes per proposal"), "{why}");
    }
    let grown = rss(pid).saturating_sub(before);
    assert!(grown < 64 << 20, "the server grew by {} MiB", grown >> 20);

    // a capacity of 100000 counts as the host's 20
    let mut tokens: Vec<String> = Vec::new();
    for i in 0..25 {
        let body = connection_spec(&format!("small-{i}"), 1001);
        let (err, out) = r.call("rogue_store", json!({"body": body, "bytes": 100, "capacity": 100_000})).await;
        assert!(!err, "{out}");
        let evicted: Vec<&str> = out["evicted"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
        let expected: Vec<&str> = if i < 20 { vec![] } else { vec![tokens[i - 20].as_str()] };
        assert_eq!(evicted, expected, "put {i}: {out}");
        tokens.push(out["token"].as_str().unwrap().to_string());
    }
    assert_eq!(r.call("rogue_peek", json!({"token": tokens[0]})).await.1["seen"], "evicted");
    assert_eq!(r.call("rogue_peek", json!({"token": tokens[5]})).await.1["seen"], json!({"found": 100}));

    // an outcome beyond 16 KiB is not kept; one within it is
    for (token, bytes, kept) in [(&tokens[24], 1 << 20, Value::Null), (&tokens[23], 100, json!(100))] {
        assert_eq!(r.call("rogue_settle", json!({"token": token, "bytes": bytes})).await.1, json!({"found": true}));
        assert_eq!(
            r.call("rogue_peek", json!({"token": token})).await.1["seen"],
            json!({"used": kept}),
            "{bytes} bytes"
        );
    }
    assert!(r.server.stderr_text().contains("did not record an attempt's outcome of more than 16384 bytes"));
    assert_eq!(r.approval_events(), Vec::<String>::new(), "nothing was approved");
    r.ends_with(0).await;
}

#[tokio::test]
async fn a_shared_store_keeps_a_bounded_number_of_each_principals_tokens() {
    let redis = RedisServer::start();
    let (probe, store) = (probe_component(), redis.url(0));
    let args = ["--component", probe.to_str().unwrap(), "--toolsets", PROBE_TOOLSETS, "--proposal-store", &store];
    let server = Launch::serve().args(&args).stdio().await;
    let mut tokens = Vec::new();
    for i in 0..100 {
        let body = connection_spec(&format!("many-{i}"), 1001);
        let out = server.ok("rogue_store", json!({"body": body, "bytes": 1000, "capacity": 100_000})).await;
        tokens.push(out["token"].as_str().unwrap().to_string());
    }
    // 20 pending and the newest 64 finished (here: evicted), then the three sets and the counter
    assert_eq!(redis.dbsize(), 20 + 64 + 3, "keys in Redis");
    let seen = async |token: &str| server.ok("rogue_peek", json!({"token": token})).await["seen"].clone();
    assert_eq!(seen(&tokens[15]).await, "unknown", "forgotten");
    assert_eq!(seen(&tokens[16]).await, "evicted", "remembered");
    assert_eq!(seen(&tokens[99]).await, json!({"found": 1000}));
    let sim = embedded_sim_url(&server).await;
    assert_eq!(creates(&sim, "connections").await, 0);
    assert!(server.audit_entries().iter().all(|e| e["event"] != "approval_minted"));
    server.stop().await;
}
