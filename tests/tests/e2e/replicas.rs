//! Two HTTP replicas sharing proposals through a real Redis: propose on one and
//! confirm on the other, the two 2026-07-28 rounds on different replicas, the confirm race and
//! a Redis outage. Capacity, eviction and owners across two handles of one Redis are the
//! conformance suite's (`store_conformance.rs`), not repeated here.

use crate::harness::redis::RedisServer;
use crate::harness::rounds::{first_round, retry};
use crate::harness::*;
use base64::Engine;
use equinix_fabric_sim::SimConfig;
use serde_json::json;

pub(crate) struct Pair {
    pub(crate) sim: equinix_fabric_sim::SimHandle,
    pub(crate) a: HttpServer,
    pub(crate) b: HttpServer,
    pub(crate) redis: RedisServer,
}

/// Two replicas on one simulator and one Redis, with one state key.
pub(crate) async fn pair(extra: &[&str]) -> Pair {
    let redis = RedisServer::start();
    let sim = sim(SimConfig::default()).await;
    let key = base64::engine::general_purpose::STANDARD.encode(rand_key());
    let store = redis.url(0);
    let mut args = vec!["--toolsets", "metros,mutate", "--proposal-store", store.as_str()];
    args.extend_from_slice(extra);
    let env = [("EQUINIX_MCP_STATE_KEY", key.as_str())];
    let a = Launch::serve().against(&sim).args(&args).env(&env).http("127.0.0.1:0").await;
    let b = Launch::serve().against(&sim).args(&args).env(&env).http("127.0.0.1:0").await;
    assert!(a.stderr_text().contains("proposal_store=redis://127.0.0.1:"), "{}", a.stderr_text());
    Pair { sim, a, b, redis }
}

impl Pair {
    /// One client on each replica, each accepting every confirmation form.
    async fn accepting_clients(&self) -> (Client, Client) {
        (
            self.a.connect(None, TestClient::accepting(), false).await,
            self.b.connect(None, TestClient::accepting(), false).await,
        )
    }
}

type Client = rmcp::service::RunningService<rmcp::service::RoleClient, TestClient>;

pub(crate) fn rand_key() -> [u8; 32] {
    let mut k = [0u8; 32];
    for (i, b) in k.iter_mut().enumerate() {
        *b = (i as u8).wrapping_mul(37) ^ (std::process::id() as u8);
    }
    k
}

#[tokio::test]
async fn a_proposal_made_on_one_replica_is_confirmed_on_the_other() {
    let p = pair(&[]).await;
    let on_a = p.a.connect(None, TestClient::plain(), false).await;
    let person = TestClient::accepting();
    let on_b = p.b.connect(None, person.clone(), false).await;
    let proposal = propose_on(&on_a, "replicated", 2001).await;
    let r = call_on(&on_b, "fabric_confirm_change", json!({"confirm_token": proposal["confirm_token"]})).await;
    let out = structured(&r);
    assert_eq!(out["executed"], true, "{out}");
    // the plan A resolved after its dry run travels with the proposal: B shows it, read nothing
    let form = &person.prompt_texts()[0];
    assert!(form.contains("The plan, resolved by equinix-mcp") && form.contains("port \"DC-PRI-01\""), "{form}");
    assert_eq!(connection_creates(&p.sim), 1);
    let replay = call_on(&on_a, "fabric_confirm_change", json!({"confirm_token": proposal["confirm_token"]})).await;
    assert_eq!(structured(&replay)["error"]["kind"], "replayed_token", "the replay on A sees B's take");
    assert_eq!(structured(&replay)["error"]["first_attempt"]["executed"], true, "{:?}", replay.structured_content);
}

#[tokio::test]
async fn the_two_rounds_of_a_2026_confirm_may_land_on_different_replicas() {
    let p = pair(&[]).await;
    let on_a = p.a.connect(None, TestClient::by_hand(), true).await;
    let on_b = p.b.connect(None, TestClient::by_hand(), true).await;
    let proposal = propose_on(&on_b, "two-rounds", 2002).await;
    let token = proposal["confirm_token"].as_str().unwrap();
    let state = first_round(&on_a, token, proposal["request_sha256"].as_str().unwrap()).await;
    let done = retry(&on_b, token, &state, json!({"action": "accept", "content": {"confirm": true}})).await;
    assert_eq!(structured(&done)["executed"], true, "{:?}", done.structured_content);
    assert_eq!(connection_creates(&p.sim), 1);
}

#[tokio::test]
async fn eight_concurrent_confirms_over_both_replicas_create_exactly_once() {
    let p = pair(&[]).await;
    let (on_a, on_b) = p.accepting_clients().await;
    for trial in 0..5u64 {
        let proposal = propose_on(&on_a, &format!("race-{trial}"), 2100 + trial).await;
        let executed = confirm_at_once(&on_a, &on_b, &proposal["confirm_token"], 8).await;
        assert_eq!(executed, 1, "trial {trial}");
        assert_eq!(connection_creates(&p.sim), trial + 1, "trial {trial}");
    }
}

#[tokio::test]
async fn with_redis_down_propose_and_confirm_fail_closed_and_recover_when_it_is_back() {
    let mut p = pair(&[]).await;
    let (on_a, on_b) = p.accepting_clients().await;
    let pending = propose_on(&on_a, "before-outage", 2301).await;
    p.redis.stop();

    let spec = connection_spec("during-outage", 2302);
    let r = call_on(&on_a, "fabric_propose_change", json!({"change_type": "connection_create", "spec": spec})).await;
    assert!(is_error(&r));
    let err = &structured(&r)["error"];
    assert_eq!(err["kind"], "proposal_store_unavailable", "{err}");
    // the store's address is the operator's: in the log, not in what the client is told
    assert!(!err["message"].as_str().unwrap().contains("127.0.0.1"), "{err}");
    assert!(p.a.stderr_text().contains("the proposal store (redis://127.0.0.1:"), "{}", p.a.stderr_text());
    assert!(structured(&r).get("confirm_token").is_none());
    let r = call_on(&on_b, "fabric_confirm_change", json!({"confirm_token": pending["confirm_token"]})).await;
    assert_eq!(structured(&r)["error"]["kind"], "proposal_store_unavailable", "{:?}", r.structured_content);
    assert_eq!(connection_creates(&p.sim), 0, "nothing is sent while the store is down");
    let reads = call_on(&on_a, "fabric_list_metros", json!({"limit": 1})).await;
    assert!(!is_error(&reads), "read-only tools do not need the store");

    p.redis.resume();
    let after = wait::until_some("propose to work again once Redis is back", wait::WITHIN, async || {
        let spec = connection_spec("after-outage", 2303);
        let r =
            call_on(&on_a, "fabric_propose_change", json!({"change_type": "connection_create", "spec": spec})).await;
        (!is_error(&r)).then(|| structured(&r))
    })
    .await;
    let r = call_on(&on_b, "fabric_confirm_change", json!({"confirm_token": after["confirm_token"]})).await;
    assert_eq!(structured(&r)["executed"], true, "{:?}", r.structured_content);
    assert_eq!(connection_creates(&p.sim), 1);
    // the store had no persistence: the proposal made before the outage is gone, and says so
    let r = call_on(&on_b, "fabric_confirm_change", json!({"confirm_token": pending["confirm_token"]})).await;
    assert_eq!(structured(&r)["error"]["kind"], "unknown_token");
    let audited = p.a.audit_entries().into_iter().chain(p.b.audit_entries()).collect::<Vec<_>>();
    assert!(audited.iter().any(|e| e["error_kind"] == "proposal_store_unavailable"), "{audited:?}");

    // the node demoted to a replica (as a failover leaves an old primary): it answers PING but
    // takes no write, and readiness says so instead of "ready"
    let readyz = format!("{}/readyz", p.a.url.trim_end_matches("/mcp"));
    let ready = |url: String| async move {
        let r = http().get(url).send().await.unwrap();
        (r.status().as_u16(), r.text().await.unwrap())
    };
    assert_eq!(ready(readyz.clone()).await, (200, "ready\n".to_string()));
    p.redis.replica_of(Some(free_port()));
    let (status, why) = ready(format!("{readyz}/mutations")).await;
    assert_eq!(status, 503, "{why}");
    assert_eq!(why, "proposal store is a read-only replica\n", "no address to a caller without a token");
    let serving = (200, "ready; creates fail closed: proposal store is a read-only replica\n".to_string());
    assert_eq!(ready(readyz.clone()).await, serving, "reads need no store: still ready to serve");
    // a load balancer probing all along: the outage is one WARN line as it begins, not one a probe
    for _ in 0..5 {
        assert_eq!(ready(readyz.clone()).await, serving);
    }
    // a call's access line, written after every probe's, marks the log as read that far
    let calls = p.a.stderr_text().matches("equinix_mcp::access").count();
    assert!(!is_error(&call_on(&on_a, "fabric_list_metros", json!({"limit": 1})).await));
    wait::until("the call's access line", wait::WITHIN, async || {
        p.a.stderr_text().matches("equinix_mcp::access").count() > calls
    })
    .await;
    let warned = p.a.stderr_text().matches("not ready for mutations").count();
    assert_eq!(warned, 1, "{}", p.a.stderr_text());
    let spec = connection_spec("on-a-replica", 2304);
    let r = call_on(&on_a, "fabric_propose_change", json!({"change_type": "connection_create", "spec": spec})).await;
    let err = &structured(&r)["error"];
    assert_eq!(err["kind"], "proposal_store_unavailable", "{err}");
    assert!(err["message"].as_str().unwrap().contains("read-only replica"), "{err}");
    assert!(!is_error(&call_on(&on_a, "fabric_list_metros", json!({"limit": 1})).await), "reads keep working");
    // a primary again: ready, and proposing works, with no restart
    p.redis.replica_of(None);
    assert_eq!(ready(format!("{readyz}/mutations")).await, (200, "ready\n".to_string()));
    wait::until("the end of the outage to be logged", wait::WITHIN, async || {
        p.a.stderr_text().contains("the proposal store takes writes again")
    })
    .await;
    assert_eq!(ready(readyz).await, (200, "ready\n".to_string()));
    let spec = connection_spec("primary-again", 2305);
    let r = call_on(&on_a, "fabric_propose_change", json!({"change_type": "connection_create", "spec": spec})).await;
    assert!(!is_error(&r), "{:?}", r.structured_content);
    assert_eq!(connection_creates(&p.sim), 1);
}

#[tokio::test]
async fn an_unreachable_store_stops_start_up_with_its_address() {
    let port = free_port();
    let url = format!("redis://:hunter2@127.0.0.1:{port}/0");
    let (ok, _, stderr) = run_to_exit(&["serve", "--fabric-sim", "--proposal-store", &url], &[]).await;
    assert!(!ok && stderr.contains("cannot reach the proposal store redis://:***@127.0.0.1:"), "{stderr}");
    assert!(!stderr.contains("hunter2"));
    let (ok, _, stderr) = run_to_exit(&["serve", "--fabric-sim", "--proposal-store", "postgres://x"], &[]).await;
    assert!(
        !ok && stderr.contains("expected `memory`, `redis://HOST:PORT/DB`,") && stderr.contains("etcd://"),
        "{stderr}"
    );
    // an etcd cluster nobody answers for, and one named with a password in its URL
    let url = format!("etcd://127.0.0.1:{port}");
    let (ok, _, stderr) = run_to_exit(&["serve", "--fabric-sim", "--proposal-store", &url], &[]).await;
    assert!(!ok && stderr.contains(&format!("cannot reach the proposal store {url}")), "{stderr}");
    let url = format!("etcd://app:hunter2@127.0.0.1:{port}");
    let (ok, _, stderr) = run_to_exit(&["serve", "--fabric-sim", "--proposal-store", &url], &[]).await;
    assert!(!ok && stderr.contains("takes no password in its URL"), "{stderr}");
    assert!(!stderr.contains("hunter2"), "{stderr}");
}

#[tokio::test]
async fn a_create_with_an_unknown_outcome_is_reported_and_audited_and_its_replay_says_so() {
    use equinix_fabric_sim::{Fault, FaultMode};
    let p = pair(&[]).await;
    let (on_a, on_b) = p.accepting_clients().await;
    let proposal = propose_on(&on_a, "dropped-answer", 2401).await;
    p.sim.inject(Fault { mode: FaultMode::Drop, ..Fault::status("POST /fabric/v4/connections", 201) });
    let r = call_on(&on_b, "fabric_confirm_change", json!({"confirm_token": proposal["confirm_token"]})).await;
    assert_eq!(structured(&r)["error"]["kind"], "outcome_unknown", "{:?}", r.structured_content);
    let audited = p.b.audit_entries();
    assert!(audited.iter().any(|e| e["error_kind"] == "outcome_unknown"), "{audited:?}");
    let replay = call_on(&on_a, "fabric_confirm_change", json!({"confirm_token": proposal["confirm_token"]})).await;
    assert_eq!(structured(&replay)["error"]["kind"], "replayed_token");
    assert!(structured(&replay)["error"]["first_attempt"].is_object(), "the other replica recorded what happened");
}

/// The binding travels with the proposal through Redis, so the replica that confirms
/// judges the same bytes with the metros the proposing replica learned; each judges by its own
/// copy of the operator's policy.
#[tokio::test]
async fn a_policy_is_judged_on_both_replicas_of_a_shared_store() {
    let policy = crate::policy::policy_file(&crate::policy::readme_policy());
    let p = pair(&["--policy", policy.to_str().unwrap()]).await;
    let (on_a, on_b) = p.accepting_clients().await;
    let proposal = propose_on(&on_a, "policed-replica", 2301).await;
    let done =
        structured(&call_on(&on_b, "fabric_confirm_change", json!({"confirm_token": proposal["confirm_token"]})).await);
    assert_eq!(done["executed"], true, "{done}");
    let minted = p.b.audit_entries().into_iter().find(|e| e["event"] == "approval_minted").unwrap();
    let approval = &minted["policy_decisions"][0];
    assert_eq!((approval["phase"].as_str(), approval["decision"].as_str()), (Some("approval"), Some("allow")));
    assert_eq!(approval["request_sha256"], proposal["request_sha256"]);
    let mut fast = connection_spec("too-fast", 2302);
    fast["bandwidth"] = json!(10_000);
    let denied = structured(
        &call_on(&on_b, "fabric_propose_change", json!({"change_type": "connection_create", "spec": fast})).await,
    );
    assert_eq!(denied["error"]["kind"], "policy_denied", "{denied}");
    assert_eq!(connection_creates(&p.sim), 1);
}

/// A store that persists with snapshots can come back from a crash with a token pending
/// that was taken since; the server says so as it starts (it cannot refuse: the operator may
/// have reasons, and `CONFIG` may be closed to it).
#[tokio::test]
async fn a_store_that_can_restart_with_older_data_is_named_at_start() {
    let snapshots = RedisServer::start_with(vec!["--save".into(), "3600 1".into()], None);
    let sim = sim(SimConfig::default()).await;
    let store = snapshots.url(0);
    let server = Launch::serve().against(&sim).args(&["--proposal-store", &store]).http("127.0.0.1:0").await;
    let said = server.stderr_text();
    assert!(said.contains("it persists with snapshots (save)") && said.contains("appendfsync always"), "{said}");
    // the tests' own stores keep nothing, and are not warned about
    let p = pair(&[]).await;
    assert!(!p.a.stderr_text().contains("it persists with"), "{}", p.a.stderr_text());
}

/// On a single node: a write no replica acknowledges in time does not count, so a
/// propose mints no token; readiness and the metrics say why. (A take that does not count is
/// the failover tests'.)
#[tokio::test]
async fn writes_that_too_few_replicas_acknowledge_fail_closed() {
    let acks =
        ["--proposal-store-acks", "1", "--proposal-store-ack-timeout-ms", "50", "--metrics-listen", "127.0.0.1:0"];
    let p = pair(&acks).await;
    let client = p.a.connect(None, TestClient::accepting(), false).await;
    let spec = connection_spec("unacknowledged", 2601);
    let r = call_on(&client, "fabric_propose_change", json!({"change_type": "connection_create", "spec": spec})).await;
    let err = &structured(&r)["error"];
    assert_eq!(err["kind"], "proposal_store_unavailable", "{err}");
    let said = err["message"].as_str().unwrap();
    assert!(said.contains("a write reached too few replicas in time, so it does not count"), "{said}");
    // the client gets the cause and a reference; the store's address and its own words are the
    // operator's, in the log under that reference
    assert!(!said.contains("127.0.0.1") && !said.contains("redis") && !said.contains("WAIT"), "{said}");
    let reference = said.split("reference ").nth(1).and_then(|r| r.split(')').next()).expect("a reference");
    let logged = p.a.stderr_text();
    let line = logged.lines().find(|l| l.contains(reference)).unwrap_or_else(|| panic!("{reference} in {logged}"));
    assert!(line.contains("reached 0 of the 1 replicas required within 50 ms") && line.contains("redis://"), "{line}");
    assert!(structured(&r).get("confirm_token").is_none());
    let readyz = format!("{}/readyz/mutations", p.a.url.trim_end_matches("/mcp"));
    let answer = http().get(readyz).send().await.unwrap();
    assert_eq!(answer.status().as_u16(), 503);
    assert_eq!(answer.text().await.unwrap(), "proposal store has too few replicas to acknowledge writes\n");
    let said = p.a.stderr_text();
    let at = said.find("Prometheus metrics at ").expect("the metrics line is logged") + "Prometheus metrics at ".len();
    let metrics_url = said[at..].split_whitespace().next().unwrap().to_string();
    let metrics = http().get(metrics_url).send().await.unwrap().text().await.unwrap();
    assert!(metrics.contains("equinix_mcp_proposal_store_unacknowledged_writes_total 1"), "{metrics}");
    assert_eq!(connection_creates(&p.sim), 0);
}

/// `rediss://`: a Redis that speaks TLS, its authority given in `--proposal-store-ca-file`. Without
/// the file the start is refused (the certificate is not trusted); a CA file with `redis://` and
/// one that holds no certificate are refused naming the file. With it, two replicas share the
/// store: a proposal made on one creates once over both.
#[tokio::test]
async fn a_tls_redis_is_trusted_through_the_ca_file_and_not_without_it() {
    let dir = fresh_path("redis-tls", "d");
    std::fs::create_dir_all(&dir).unwrap();
    let (cert, key, _) = certificate(&dir, "redis");
    let (redis, tls_port) = RedisServer::start_tls(&cert, &key);
    let sim = sim(SimConfig::default()).await;
    let tls_url = format!("rediss://127.0.0.1:{tls_port}/0");
    let ca = cert.to_str().unwrap();
    let refused = async |args: &[&str]| {
        Launch::serve().against(&sim).args(&["--toolsets", "metros,mutate"]).args(args).refused().await
    };
    let said = refused(&["--proposal-store", &tls_url]).await;
    assert!(said.contains("cannot reach the proposal store") && said.contains("certificate"), "{said}");
    let said = refused(&["--proposal-store", &redis.url(0), "--proposal-store-ca-file", ca]).await;
    assert!(said.contains("write rediss://"), "{said}");
    let said = refused(&["--proposal-store", &tls_url, "--proposal-store-ca-file", key.to_str().unwrap()]).await;
    assert!(said.contains("no PEM certificate") && said.contains("redis.key"), "{said}");
    // a store whose certificate another authority signed (a store put in its place) is refused
    let (other, _, _) = certificate(&dir, "other");
    let said = refused(&["--proposal-store", &tls_url, "--proposal-store-ca-file", other.to_str().unwrap()]).await;
    assert!(said.contains("cannot reach the proposal store") && said.contains("certificate"), "{said}");

    let state_key = base64::engine::general_purpose::STANDARD.encode(rand_key());
    let args = ["--toolsets", "metros,mutate", "--proposal-store", &tls_url, "--proposal-store-ca-file", ca];
    let env = [("EQUINIX_MCP_STATE_KEY", state_key.as_str())];
    let a = Launch::serve().against(&sim).args(&args).env(&env).http("127.0.0.1:0").await;
    let b = Launch::serve().against(&sim).args(&args).env(&env).http("127.0.0.1:0").await;
    let (on_a, on_b) =
        (a.connect(None, TestClient::accepting(), false).await, b.connect(None, TestClient::accepting(), false).await);
    let proposal = propose_on(&on_a, "redis-tls-1", 2821).await;
    assert_eq!(confirm_at_once(&on_a, &on_b, &proposal["confirm_token"], 4).await, 1);
    assert_eq!(connection_creates(&sim), 1);
    assert!(redis.dbsize() > 0, "the proposals are in this Redis");
}
