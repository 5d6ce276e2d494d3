//! Two HTTP replicas on a Sentinel-managed store (a primary, two replicas, three
//! Sentinels, all real processes on loopback) while the primary is killed with SIGKILL: during a
//! put, between a take and its create, after a create was sent and before its outcome was
//! recorded, between the two rounds of a 2026-07-28 confirm, and at random moments under
//! concurrent confirms. Each ends on the simulator's counters: no proposal is created twice.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::harness::rounds::{accept, first_round, retry};
use crate::harness::sentinel::{Cluster, PASSWORD};
use crate::harness::*;
use equinix_fabric_sim::{Fault, FaultMode, SimConfig};
use rmcp::model::CallToolResult;
use serde_json::{Value, json};
use tokio::task::block_in_place;

/// How long the replicas may take to confirm again once the Sentinels name the new primary (the
/// issue's bound). It is counted from the naming, not from the kill: how long the Sentinels take
/// to elect a leader is theirs, and a split vote retries only after twice `failover-timeout`.
const BACK_WITHIN: Duration = Duration::from_secs(10);

/// How long a worker of the load keeps calling through a failover: the Sentinels' election
/// (`Cluster::wait_named`'s limit) and then [`BACK_WITHIN`].
const THROUGH_FAILOVER: Duration = Duration::from_secs(40);

/// The two tests run one after the other: each keeps six Redis processes and two servers busy,
/// and on two cores a Sentinel starved of CPU calls a healthy primary down.
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

struct Ha {
    cluster: Cluster,
    sim: equinix_fabric_sim::SimHandle,
    a: HttpServer,
    b: HttpServer,
}

/// The cluster and two `equinix-mcp` replicas that find its primary through the Sentinels, each
/// write acknowledged by one replica (availability chosen over the default of every replica: the
/// servers create again as soon as a new primary is named). A write waits up to 3 s for its
/// replica, so a test can kill the primary while one waits.
async fn ha() -> Ha {
    let h = ha_with(&["--proposal-store-acks", "1"]).await;
    let said = h.a.stderr_text();
    assert!(said.contains("each write acknowledged by 1 replica within"), "{said}");
    // 1 of 2 replicas: a partition could still undo a take, and the operator is told how to close it
    assert!(said.contains("set --proposal-store-acks 2 (and min-replicas-to-write 2)"), "{said}");
    h
}

/// [`ha`] with `extra` arguments for both servers instead of one acknowledgement.
async fn ha_with(extra: &[&str]) -> Ha {
    let cluster = block_in_place(Cluster::start);
    let sim = sim(SimConfig::default()).await;
    let key = base64::Engine::encode(&base64::engine::general_purpose::STANDARD, crate::replicas::rand_key());
    let url = cluster.url();
    let mut args =
        vec!["--toolsets", "metros,mutate", "--proposal-store", &url, "--proposal-store-ack-timeout-ms", "3000"];
    args.extend_from_slice(extra);
    let env = [("EQUINIX_MCP_STATE_KEY", key.as_str()), ("EQUINIX_MCP_PROPOSAL_STORE_PASSWORD", PASSWORD)];
    let a = Launch::serve().against(&sim).args(&args).env(&env).http("127.0.0.1:0").await;
    let b = Launch::serve().against(&sim).args(&args).env(&env).http("127.0.0.1:0").await;
    let said = a.stderr_text();
    assert!(said.contains("proposal_store=redis+sentinel://127.0.0.1:"), "{said}");
    assert!(!said.contains(PASSWORD), "the password never shows");
    Ha { cluster, sim, a, b }
}

impl Ha {
    /// Cuts the primary off from its replicas, as a partition would: waits until both hold
    /// everything written so far, pauses them (SIGSTOP, so they cannot reconnect) and has the
    /// primary drop their links. What it is sent next reaches no replica, and a `WAIT` for it
    /// blocks; [`Ha::kill_primary`] then loses it. [`Ha::heal`] continues the replicas.
    fn cut_replicas(&self) {
        block_in_place(|| {
            let primary = &self.cluster.nodes[self.cluster.primary()];
            assert_eq!(primary.query("WAIT 2 5000").unwrap(), ["2"], "both replicas in step");
            self.signal_replicas("-STOP");
            let dropped = primary.query("CLIENT KILL TYPE replica").unwrap();
            assert_eq!(dropped, ["2"], "the primary dropped both replica links");
        });
    }

    fn heal(&self) {
        self.signal_replicas("-CONT");
    }

    fn signal_replicas(&self, signal: &str) {
        let primary = self.cluster.primary();
        for (i, node) in self.cluster.nodes.iter().enumerate() {
            if i != primary {
                node.signal(signal);
            }
        }
    }

    /// Kills the primary and returns its index.
    fn kill_primary(&mut self) -> usize {
        block_in_place(|| self.cluster.kill_primary())
    }

    /// Waits for the Sentinels' failover and brings the killed node back as a replica.
    fn after_failover(&mut self, killed: usize) {
        block_in_place(|| {
            let failover = self.cluster.wait_failover(killed);
            let started = Instant::now();
            self.cluster.rejoin(killed);
            eprintln!("failover settled after {failover:?}; node {killed} rejoined in {:?}", started.elapsed());
        });
    }

    /// How many proposal records the primary holds.
    fn token_keys(&self) -> usize {
        let primary = &self.cluster.nodes[self.cluster.primary()];
        primary.query("KEYS equinix-mcp:token:*").map(|keys| keys.len()).unwrap_or(0)
    }

    /// The value of `field` of token `token`'s record on the primary.
    fn token_field(&self, token: &str, field: &str) -> Option<String> {
        let primary = &self.cluster.nodes[self.cluster.primary()];
        primary
            .query(&format!("HGET equinix-mcp:token:{token} {field}"))
            .ok()?
            .into_iter()
            .next()
            .filter(|s| !s.is_empty())
    }

    fn audit(&self) -> Vec<Value> {
        self.a.audit_entries().into_iter().chain(self.b.audit_entries()).collect()
    }
}

/// Calls `tool` until it answers something other than `proposal_store_unavailable`, at most
/// until `deadline`: the replicas serve again by themselves.
///
/// `wait::until_some`'s loop written out: the load's workers call it in spawned tasks, and the
/// future of an async closure is not `Send` for every lifetime `tokio::spawn` asks about.
async fn until_served(client: &Client, tool: &str, args: Value, deadline: Instant) -> CallToolResult {
    loop {
        let r = call_on(client, tool, args.clone()).await;
        if !unavailable(&r) {
            return r;
        }
        assert!(Instant::now() < deadline, "still {:?} {:?} after the primary died", tool, r.structured_content);
        tokio::time::sleep(wait::EVERY).await;
    }
}

fn unavailable(r: &CallToolResult) -> bool {
    structured(r)["error"]["kind"] == "proposal_store_unavailable"
}

type Client = rmcp::service::RunningService<rmcp::service::RoleClient, TestClient>;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_failover_at_each_point_of_a_confirm_never_creates_twice() {
    let _alone = ONE_AT_A_TIME.lock().await;
    let mut h = ha().await;
    let on_a = h.a.connect(None, TestClient::accepting(), false).await;
    let on_b = h.b.connect(None, TestClient::accepting(), false).await;
    let readyz = format!("{}/readyz", h.a.url.trim_end_matches("/mcp"));
    let ready = |url: String| async move {
        let r = http().get(url).send().await.unwrap();
        (r.status().as_u16(), r.text().await.unwrap())
    };
    assert_eq!(ready(readyz.clone()).await, (200, "ready\n".to_string()));

    // The first failover falls during a put (a propose on A) and between a take and its create (a
    // confirm on B): both reach the primary only, and it dies while they wait for a replica.
    let proposal = propose_on(&on_a, "take-undone", 4003).await;
    let token = proposal["confirm_token"].as_str().unwrap().to_string();
    h.cut_replicas();
    let tokens_before = h.token_keys();
    let put = tokio::spawn(call_in_background(
        &on_a,
        "fabric_propose_change",
        json!({"change_type": "connection_create", "spec": connection_spec("during-put", 4001)}),
    ));
    let confirm = tokio::spawn(call_in_background(&on_b, "fabric_confirm_change", json!({"confirm_token": token})));
    wait_for("the put and the take on the primary", || {
        h.token_keys() > tokens_before && h.token_field(&token, "state").as_deref() == Some("used")
    })
    .await;
    let killed = h.kill_primary();
    h.heal();
    let r = put.await.unwrap();
    assert!(unavailable(&r), "a put no replica holds mints no token: {:?}", r.structured_content);
    // the primary died while the write waited for its replica (not after the wait gave up)
    let lost = |r: &CallToolResult| !structured(r)["error"]["message"].as_str().unwrap().contains("does not count");
    assert!(lost(&r), "{:?}", r.structured_content);
    assert!(structured(&r).get("confirm_token").is_none());
    let r = confirm.await.unwrap();
    assert!(unavailable(&r), "a take no replica holds sends nothing: {:?}", r.structured_content);
    assert!(lost(&r), "{:?}", r.structured_content);
    let said = structured(&r)["error"]["message"].as_str().unwrap().to_string();
    assert!(said.contains("no create was sent to Fabric"), "{said}");
    assert!(!said.contains("127.0.0.1") && !said.contains("sentinel") && !said.contains("script"), "{said}");
    assert_eq!(connection_creates(&h.sim), 0, "nothing was sent");
    // at once: readiness for mutations says why, the server stays ready to serve (reads keep
    // working), a store call fails without waiting
    let (status, why) = ready(format!("{readyz}/mutations")).await;
    assert_eq!(status, 503, "{why}");
    assert!(why.starts_with("proposal store "), "{why}");
    assert!(!why.contains("127.0.0.1") && !why.contains(PASSWORD), "{why}");
    let (status, said) = ready(readyz.clone()).await;
    assert_eq!((status, said.starts_with("ready; creates fail closed: proposal store ")), (200, true), "{said}");
    assert!(!is_error(&call_on(&on_b, "fabric_list_metros", json!({"limit": 1})).await), "reads need no store");
    let asked = Instant::now();
    let spec = connection_spec("x", 4009);
    let r = call_on(&on_b, "fabric_propose_change", json!({"change_type": "connection_create", "spec": spec})).await;
    if unavailable(&r) {
        assert!(asked.elapsed() < Duration::from_secs(1), "answered in {:?}", asked.elapsed());
    }
    // the new primary never saw the take: the token is pending again, and confirms once
    block_in_place(|| h.cluster.wait_named(killed));
    let back_by = Instant::now() + BACK_WITHIN;
    assert_eq!(h.token_field(&token, "state").as_deref(), Some("pending"), "the failover undid the take");
    let r = until_served(&on_a, "fabric_confirm_change", json!({"confirm_token": token}), back_by).await;
    assert_eq!(structured(&r)["executed"], true, "{:?}", r.structured_content);
    assert_eq!(connection_creates(&h.sim), 1, "one take counted, one create");
    let r = call_on(&on_b, "fabric_confirm_change", json!({"confirm_token": token})).await;
    assert_eq!(structured(&r)["error"]["kind"], "replayed_token", "{:?}", r.structured_content);
    let spec = connection_spec("after-put", 4002);
    let args = json!({"change_type": "connection_create", "spec": spec});
    assert!(!is_error(&until_served(&on_b, "fabric_propose_change", args, back_by).await));
    assert_eq!(ready(readyz.clone()).await, (200, "ready\n".to_string()), "ready again with no restart");
    h.after_failover(killed);

    // The second falls after a create was sent and before its outcome was recorded (a confirm on
    // A, its create held by Fabric), and between the two rounds of a 2026-07-28 confirm.
    let proposal = propose_on(&on_b, "outcome-lost", 4004).await;
    let token = proposal["confirm_token"].as_str().unwrap().to_string();
    let stateless_a = h.a.connect(None, TestClient::by_hand(), true).await;
    let stateless_b = h.b.connect(None, TestClient::by_hand(), true).await;
    let two_rounds = propose_on(&stateless_a, "two-rounds", 4005).await;
    let second = two_rounds["confirm_token"].as_str().unwrap();
    let state = first_round(&stateless_a, second, two_rounds["request_sha256"].as_str().unwrap()).await;
    h.sim.inject(Fault { mode: FaultMode::Stall, stall_ms: 1500, ..Fault::status("POST /fabric/v4/connections", 201) });
    let sent_before = connection_create_requests(&h.sim);
    let confirm = tokio::spawn(call_in_background(&on_a, "fabric_confirm_change", json!({"confirm_token": token})));
    wait_for("the create to reach Fabric", || connection_create_requests(&h.sim) > sent_before).await;
    // the test ends after this failover: the killed node is not brought back
    let killed = h.kill_primary();
    let r = confirm.await.unwrap();
    assert_eq!(structured(&r)["executed"], true, "the create's result stands: {:?}", r.structured_content);
    assert_eq!(connection_creates(&h.sim), 2);
    block_in_place(|| h.cluster.wait_named(killed));
    let back_by = Instant::now() + BACK_WITHIN;
    let r = until_served(&on_b, "fabric_confirm_change", json!({"confirm_token": token}), back_by).await;
    let out = structured(&r);
    assert_eq!(out["error"]["kind"], "replayed_token", "the acknowledged take survived: {out}");
    let what = "the retry to be served after the primary died";
    let done = wait::until_some(what, back_by.saturating_duration_since(Instant::now()), async || {
        let r = retry(&stateless_b, second, &state, accept()).await;
        (!unavailable(&r)).then_some(r)
    })
    .await;
    assert_eq!(structured(&done)["executed"], true, "{:?}", done.structured_content);
    assert_eq!(connection_creates(&h.sim), 3);

    // the audit logs account for every create
    let audit = h.audit();
    let sent = audit.iter().filter(|e| e["event"] == "create_sending").count();
    let executed = audit.iter().filter(|e| e["event"] == "create_outcome" && e["outcome"] == "executed").count();
    assert_eq!((sent, executed), (3, 3), "{audit:?}");
    assert!(audit.iter().any(|e| e["error_kind"] == "proposal_store_unavailable"), "the refusals are audited");
}

/// `tool` called with `args` on `client`'s connection, as a task can own it.
fn call_in_background(client: &Client, tool: &str, args: Value) -> impl Future<Output = CallToolResult> + use<> {
    let peer = client.peer().clone();
    let Value::Object(args) = args else { panic!("arguments are an object") };
    let params = rmcp::model::CallToolRequestParams::new(tool.to_string()).with_arguments(args);
    async move { peer.call_tool(params).await.unwrap() }
}

/// Waits until `done` (blocking calls on the cluster) holds.
async fn wait_for(what: &str, done: impl Fn() -> bool) {
    wait::until(what, wait::WITHIN, async || block_in_place(&done)).await
}

/// What one worker's proposal ended in.
#[derive(Debug, Default)]
struct Tally {
    proposed: usize,
    executed: usize,
    /// Confirms that ended on another documented result (a replay of a take that counted late).
    other: BTreeMap<String, usize>,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn random_failovers_under_concurrent_confirms_never_create_twice() {
    const PROPOSALS: usize = 200;
    const FAILOVERS: usize = 3;
    const WORKERS: usize = 6;
    let _alone = ONE_AT_A_TIME.lock().await;
    let h = Arc::new(Mutex::new(ha().await));
    let (a, b) = {
        let h = h.lock().unwrap();
        (h.a.url.clone(), h.b.url.clone())
    };
    let creates = || connection_creates(&h.lock().unwrap().sim);
    let seed = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().subsec_nanos() as u64;
    eprintln!("random failovers: seed {seed}");
    let failovers = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let next = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let started = Instant::now();
    let mut workers = Vec::new();
    for w in 0..WORKERS {
        let url = if w % 2 == 0 { a.clone() } else { b.clone() };
        let other = if w % 2 == 0 { b.clone() } else { a.clone() };
        let (failovers, next) = (failovers.clone(), next.clone());
        workers.push(tokio::spawn(async move {
            let on = connect(&url, None, TestClient::accepting(), false).await.unwrap();
            let confirm_on = connect(&other, None, TestClient::accepting(), false).await.unwrap();
            let mut tally = Tally::default();
            loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let enough = i >= PROPOSALS && failovers.load(std::sync::atomic::Ordering::SeqCst) >= FAILOVERS;
                if enough || started.elapsed() > Duration::from_secs(90) {
                    return tally;
                }
                let spec = light_connection_spec(&format!("load-{i}"), 1500 + i as u64);
                let args = json!({"change_type": "connection_create", "spec": spec});
                let r = until_served(&on, "fabric_propose_change", args, Instant::now() + THROUGH_FAILOVER).await;
                assert!(!is_error(&r), "{:?}", r.structured_content);
                tally.proposed += 1;
                let token = structured(&r)["confirm_token"].clone();
                let by = Instant::now() + THROUGH_FAILOVER;
                let r = until_served(&confirm_on, "fabric_confirm_change", json!({"confirm_token": token}), by).await;
                let out = structured(&r);
                if out["executed"] == true {
                    tally.executed += 1;
                } else {
                    // a take that failed closed and then reached the replicas anyway: used, with
                    // nothing sent for it (checked below against the simulator)
                    let kind = out["error"]["kind"].as_str().unwrap_or("?").to_string();
                    assert_eq!(kind, "replayed_token", "{out}");
                    assert!(out["error"]["first_attempt"].is_null(), "{out}");
                    *tally.other.entry(kind).or_default() += 1;
                }
            }
        }));
    }
    // the killer: SIGKILL the primary at random moments, and time how long until a confirm works
    let mut rng = seed;
    let mut back_after = Vec::new();
    for _ in 0..FAILOVERS {
        rng = rng.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        // a sleep: the kill comes at a random moment of the load (seeded), not after an event
        tokio::time::sleep(Duration::from_millis(300 + (rng >> 33) % 1500)).await;
        let executed_before = creates();
        let killed = block_in_place(|| h.lock().unwrap().cluster.kill_primary());
        let died = Instant::now();
        let elected = block_in_place(|| h.lock().unwrap().cluster.wait_named(killed));
        let named = Instant::now();
        // back: more creates than the confirms in flight at the kill (one per worker) could make,
        // so at least one take counted after it
        let what = format!("a confirm to work after the new primary was named (seed {seed})");
        wait::until(&what, BACK_WITHIN, async || creates() > executed_before + WORKERS as u64).await;
        back_after.push((died.elapsed(), elected, named.elapsed()));
        block_in_place(|| {
            let mut h = h.lock().unwrap();
            h.cluster.wait_failover(killed);
            h.cluster.rejoin(killed);
        });
        failovers.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }
    let mut total = Tally::default();
    for w in workers {
        let t = w.await.unwrap();
        total.proposed += t.proposed;
        total.executed += t.executed;
        for (k, n) in t.other {
            *total.other.entry(k).or_default() += n;
        }
    }
    // each: (kill to a confirm working, kill to the new primary named, named to a confirm working)
    eprintln!("random failovers: {total:?}, confirms again after {back_after:?} (seed {seed})");
    assert!(total.proposed >= PROPOSALS, "{total:?}");
    // no proposal created twice: each create request's name once, and the creates are the
    // confirms that said so
    let h = h.lock().unwrap();
    let names = connection_create_names(&h.sim);
    let twice: Vec<_> = names.iter().filter(|(_, n)| **n > 1).collect();
    assert!(twice.is_empty(), "created twice: {twice:?} (seed {seed})");
    assert_eq!(connection_creates(&h.sim) as usize, total.executed, "(seed {seed})");
    assert_eq!(names.len(), total.executed);
    let audit = h.audit();
    let executed = audit.iter().filter(|e| e["event"] == "create_outcome" && e["outcome"] == "executed").count();
    let sent = audit.iter().filter(|e| e["event"] == "create_sending").count();
    assert_eq!((sent, executed), (total.executed, total.executed), "the audit logs account for every create");
}

/// The default on Sentinel (each write acknowledged by both replicas, with the docs'
/// `min-replicas-to-write 2` on the nodes): one node lost stops creates, not reads. Both servers
/// stay ready to serve (`/readyz` 200, saying why creates fail), `/readyz/mutations` answers 503,
/// a confirm fails closed without spending its token or creating; once the node is back, the same
/// token confirms once, with no restart.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn with_the_default_acknowledgements_a_lost_node_stops_creates_not_reads() {
    let _alone = ONE_AT_A_TIME.lock().await;
    let mut h = ha_with(&[]).await;
    assert!(h.a.stderr_text().contains("each write acknowledged by 2 replicas"), "{}", h.a.stderr_text());
    for node in &h.cluster.nodes {
        node.query("CONFIG SET min-replicas-to-write 2").unwrap();
    }
    let on_a = h.a.connect(None, TestClient::accepting(), false).await;
    let proposal = propose_on(&on_a, "node-lost", 4011).await;
    let killed = h.kill_primary();
    block_in_place(|| h.cluster.wait_named(killed));
    let ready = |url: String| async move {
        let r = http().get(url).send().await.unwrap();
        (r.status().as_u16(), r.text().await.unwrap())
    };
    let why = "proposal store has too few replicas to acknowledge writes";
    for server in [&h.a, &h.b] {
        let base = server.url.trim_end_matches("/mcp").to_string();
        let what = "readiness for mutations to say the new primary has too few replicas";
        wait::until(what, BACK_WITHIN, async || {
            ready(format!("{base}/readyz/mutations")).await == (503, format!("{why}\n"))
        })
        .await;
        assert_eq!(ready(format!("{base}/readyz")).await, (200, format!("ready; creates fail closed: {why}\n")));
    }
    assert!(!is_error(&call_on(&on_a, "fabric_list_metros", json!({"limit": 1})).await), "reads keep working");
    let token = proposal["confirm_token"].clone();
    let r = call_on(&on_a, "fabric_confirm_change", json!({"confirm_token": token})).await;
    assert!(unavailable(&r), "{:?}", r.structured_content);
    let said = structured(&r)["error"]["message"].as_str().unwrap().to_string();
    assert!(said.contains("too few replicas") && said.contains("no create was sent"), "{said}");
    assert_eq!(connection_creates(&h.sim), 0);

    h.after_failover(killed);
    let mutations = format!("{}/readyz/mutations", h.a.url.trim_end_matches("/mcp"));
    wait::until("creates to be possible again", BACK_WITHIN, async || ready(mutations.clone()).await.0 == 200).await;
    let r = call_on(&on_a, "fabric_confirm_change", json!({"confirm_token": token})).await;
    assert_eq!(structured(&r)["executed"], true, "the refused take spent nothing: {:?}", r.structured_content);
    assert_eq!(connection_creates(&h.sim), 1);
}
