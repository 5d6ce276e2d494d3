//! The partition campaign. Every store node and each of two servers in a network
//! namespace of its own ([`Network`]), the test's clients and the simulator in the hub that
//! reaches them all; partitions are packets dropped between namespaces. Through every fault, three
//! workers propose on either server and confirm each token on both servers at once. After each
//! heal, a proposal on each server must confirm on the other within [`HEAL_BOUND`]. At the end
//! every token any confirm consumed is confirmed again on both servers (it must stay consumed),
//! and the simulator's create requests are compared with the confirms that said `executed`.
//!
//! Heavy (about a minute per store): `#[ignore]`d in the test command, run by `.ci/run` after it
//! and by `tests/campaign.sh`.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use equinix_fabric_sim::{SimConfig, SimHandle};
use serde_json::{Value, json};
use tokio::task::block_in_place;

use crate::harness::etcd::EtcdCluster;
use crate::harness::netns::{self, Network};
use crate::harness::*;

/// How soon after a heal a proposal must confirm again on either server: a bound, well above
/// what runs measure (about 1 s on etcd, 11 to 13 s on Sentinel, whose cut-off side must learn
/// the new primary and resynchronise from it), so a busy machine does not fail it.
const HEAL_BOUND: Duration = Duration::from_secs(45);
/// How long each fault holds while the load runs: longer than a server takes to give up on
/// every member it cannot reach (three time-outs), so a fault is felt as failures, not a pause.
const HOLD: Duration = Duration::from_secs(8);
const TOKEN: &str = "campaign-0123456789abcdef0123456789abcdef";
/// A second principal's, so the load's proposals never evict its proposals (a per-principal bound).
const BATCH_TOKEN: &str = "batch-0123456789abcdef0123456789abcdef0";

/// The two servers, their clients, and the simulator they create in.
struct Servers {
    sim: SimHandle,
    // dropping one kills its process
    servers: Vec<HttpServer>,
    clients: Vec<Arc<Client>>,
    vlans: Arc<AtomicU64>,
}

async fn servers(net: &Network, store: &str, extra: &[&str], env: &[(&str, &str)]) -> Servers {
    let sim = equinix_fabric_sim::start("10.77.0.254:0".parse().unwrap(), SimConfig::default()).await.unwrap();
    let key = base64::Engine::encode(&base64::engine::general_purpose::STANDARD, crate::replicas::rand_key());
    let tokens = token_file(&[("campaign", TOKEN), ("batch", BATCH_TOKEN)]);
    let mut servers = Vec::new();
    let mut clients = Vec::new();
    for node in ["s0", "s1"] {
        let ip = net.ip(node);
        let mut args = vec!["--toolsets", "metros,mutate", "--proposal-store", store];
        args.extend(["--auth-token-file", tokens.to_str().unwrap(), "--allowed-host", &ip]);
        args.extend(extra);
        let server = Launch::serve()
            .against(&sim)
            .args(&args)
            .env(&[("EQUINIX_MCP_STATE_KEY", key.as_str())])
            .env(env)
            .in_netns(&net.netns(node))
            .http(&format!("{ip}:0"))
            .await;
        clients.push(Arc::new(server.connect(Some(TOKEN), TestClient::accepting(), false).await));
        servers.push(server);
    }
    Servers { sim, servers, clients, vlans: Arc::new(AtomicU64::new(1500)) }
}

/// Everything the confirms answered.
#[derive(Default)]
struct Ledger {
    /// outcome (`executed` or the error's kind) -> how many confirms answered it
    outcomes: BTreeMap<String, usize>,
    executed: usize,
    /// tokens some confirm said were executed or already used
    consumed: BTreeSet<String>,
    /// every token proposed
    tokens: Vec<String>,
    /// two confirms of one token that both said `executed`
    doubled: usize,
}

impl Ledger {
    fn confirmed(&mut self, token: &str, r: &rmcp::model::CallToolResult) -> bool {
        let out = structured(r);
        let kind = match out["executed"] == true {
            true => "executed".to_string(),
            false => out["error"]["kind"].as_str().unwrap_or("(no kind)").to_string(),
        };
        if kind == "executed" || kind == "replayed_token" {
            self.consumed.insert(token.to_string());
        }
        self.executed += (kind == "executed") as usize;
        *self.outcomes.entry(kind.clone()).or_default() += 1;
        kind == "executed"
    }
}

/// Proposes a connection on `client`: its token, or the error's kind.
async fn propose(vlans: &AtomicU64, client: &Client, what: &str) -> Result<Value, String> {
    let vlan = vlans.fetch_add(1, SeqCst);
    let spec = light_connection_spec(&format!("{what}-{vlan}"), vlan);
    let r = call_on(client, "fabric_propose_change", json!({"change_type": "connection_create", "spec": spec})).await;
    match structured(&r).get("confirm_token") {
        Some(token) => Ok(token.clone()),
        None => {
            let error = &structured(&r)["error"];
            let kind = error["kind"].as_str().unwrap_or("(no kind)");
            match kind {
                "proposal_store_unavailable" => Err(kind.to_string()),
                _ => Err(format!("{kind}: {}", error["message"].as_str().unwrap_or(""))),
            }
        }
    }
}

/// Three workers proposing on either server and confirming each token on both at once, until
/// `stop`.
fn load(s: &Servers, ledger: &Arc<Mutex<Ledger>>, stop: &Arc<AtomicBool>) -> Vec<tokio::task::JoinHandle<()>> {
    (0..3)
        .map(|w| {
            let (a, b) = (s.clients[0].clone(), s.clients[1].clone());
            let (ledger, stop, vlans) = (ledger.clone(), stop.clone(), s.vlans.clone());
            tokio::spawn(async move {
                while !stop.load(SeqCst) {
                    let on = if w % 2 == 0 { &a } else { &b };
                    let token = match propose(&vlans, on, "load").await {
                        Ok(token) => token,
                        Err(kind) => {
                            *ledger.lock().unwrap().outcomes.entry(format!("propose: {kind}")).or_default() += 1;
                            tokio::time::sleep(Duration::from_millis(50)).await;
                            continue;
                        }
                    };
                    ledger.lock().unwrap().tokens.push(token.as_str().unwrap().to_string());
                    let args = json!({"confirm_token": token});
                    let (x, y) = tokio::join!(
                        call_on(&a, "fabric_confirm_change", args.clone()),
                        call_on(&b, "fabric_confirm_change", args.clone()),
                    );
                    let mut ledger = ledger.lock().unwrap();
                    let t = token.as_str().unwrap();
                    if ledger.confirmed(t, &x) & ledger.confirmed(t, &y) {
                        ledger.doubled += 1;
                    }
                }
            })
        })
        .collect()
}

/// After a heal: how long until a proposal made on each server confirms on the other.
async fn recovery(s: &Servers, ledger: &Arc<Mutex<Ledger>>, healed: Instant) -> Duration {
    for (on, at) in [(0, 1), (1, 0)] {
        wait::until("a proposal to confirm on the other server after the heal", HEAL_BOUND, async || {
            let Ok(token) = propose(&s.vlans, &s.clients[on], "probe").await else { return false };
            let r = call_on(&s.clients[at], "fabric_confirm_change", json!({"confirm_token": token})).await;
            let t = token.as_str().unwrap().to_string();
            let mut ledger = ledger.lock().unwrap();
            ledger.tokens.push(t.clone());
            ledger.confirmed(&t, &r)
        })
        .await;
    }
    healed.elapsed()
}

/// What the campaign found.
struct Verdict {
    /// proposals whose create Fabric received more than once
    created_twice: usize,
    /// consumed tokens a later confirm executed or found pending again
    unconsumed: usize,
    /// answers outside the documented outcomes
    undocumented: BTreeMap<String, usize>,
    creates: usize,
    executed: usize,
}

/// Confirms every token again on both servers once the faults are over, then compares what
/// Fabric received with what the confirms said.
async fn verdict(s: &Servers, ledger: &Arc<Mutex<Ledger>>) -> Verdict {
    let (tokens, consumed) = {
        let l = ledger.lock().unwrap();
        (l.tokens.clone(), l.consumed.clone())
    };
    let mut unconsumed = 0;
    for token in &tokens {
        for client in &s.clients {
            let r = call_on(client, "fabric_confirm_change", json!({"confirm_token": token})).await;
            let executed = ledger.lock().unwrap().confirmed(token, &r);
            let kind = structured(&r)["error"]["kind"].as_str().unwrap_or("").to_string();
            if consumed.contains(token) && (executed || kind == "evicted_token") {
                unconsumed += 1;
            }
        }
    }
    let l = ledger.lock().unwrap();
    // unknown: a finished token past the store's bound of finished tokens kept per principal
    let documented = ["executed", "replayed_token", "proposal_store_unavailable", "evicted_token", "unknown_token"];
    let undocumented = l
        .outcomes
        .iter()
        .filter(|(k, _)| !documented.contains(&k.trim_start_matches("propose: ")))
        .map(|(k, n)| (k.clone(), *n))
        .collect();
    let names = connection_create_names(&s.sim);
    Verdict {
        created_twice: names.values().filter(|n| **n > 1).count() + l.doubled,
        unconsumed,
        undocumented,
        creates: connection_create_requests(&s.sim),
        executed: l.executed,
    }
}

/// One fault of the campaign: what it was, how soon confirms worked again after its heal, and
/// what the confirms answered from its start to that moment.
struct Phase {
    what: String,
    recovered: Duration,
    answered: BTreeMap<String, usize>,
}

/// Applies `fault`, holds it [`HOLD`] under the load, `heal`s it, and waits for the recovery.
async fn phase(
    s: &Servers,
    ledger: &Arc<Mutex<Ledger>>,
    what: &str,
    fault: impl FnOnce(),
    heal: impl FnOnce(),
) -> Phase {
    phase_with(s, ledger, what, fault, async {}, heal).await
}

/// [`phase`], with `during` run while the fault holds (the heal waits for it too).
async fn phase_with(
    s: &Servers,
    ledger: &Arc<Mutex<Ledger>>,
    what: &str,
    fault: impl FnOnce(),
    during: impl Future<Output = ()>,
    heal: impl FnOnce(),
) -> Phase {
    let before = ledger.lock().unwrap().outcomes.clone();
    block_in_place(fault);
    tokio::join!(tokio::time::sleep(HOLD), during);
    block_in_place(heal);
    let recovered = recovery(s, ledger, Instant::now()).await;
    let after = ledger.lock().unwrap().outcomes.clone();
    let answered = after
        .into_iter()
        .map(|(k, n)| (k.clone(), n - before.get(&k).copied().unwrap_or(0)))
        .filter(|(_, n)| *n > 0)
        .collect();
    Phase { what: what.to_string(), recovered, answered }
}

fn report(store: &str, phases: &[Phase], v: &Verdict, ledger: &Arc<Mutex<Ledger>>) {
    let l = ledger.lock().unwrap();
    eprintln!("partition campaign, {store}: {} proposals; outcomes {:?}", l.tokens.len(), l.outcomes);
    for p in phases {
        let again = p.recovered.as_secs_f64();
        eprintln!("  {}: confirms on both servers again {again:.1} s after the heal; answers {:?}", p.what, p.answered);
    }
    eprintln!(
        "  created twice: {}, consumed tokens taken again: {}, undocumented answers: {:?}, creates {} for {} executed",
        v.created_twice, v.unconsumed, v.undocumented, v.creates, v.executed
    );
    // rows of tests/campaign.sh's table of figures
    let slowest = phases.iter().map(|p| p.recovered).max().unwrap_or_default().as_secs_f64();
    eprintln!(
        "CAMPAIGN|partitions, {store}: proposals created twice|{}|of {} proposals; {} consumed tokens taken again; confirms again within {slowest:.1} s of each heal",
        v.created_twice,
        l.tokens.len(),
        v.unconsumed
    );
}

fn need_namespaces() {
    if let Err(why) = netns::available() {
        panic!("the partition campaign makes network namespaces (as root, with iproute2 and iptables): {why}");
    }
}

/// Three etcd members and two servers, each in its own namespace: the leader cut off from the
/// other members, the leader with one server split from the majority with the other, one server
/// cut from every member, the leader SIGKILLed and restarted. Nothing is created twice, no
/// consumed token is taken again, every answer is a documented one, and confirms work again on
/// both servers within [`HEAL_BOUND`] of each heal.
#[test]
#[ignore = "campaign: run by .ci/run after the test command, and by tests/campaign.sh"]
fn etcd_partitions_create_nothing_twice_and_heal() {
    need_namespaces();
    let net = Network::new(&["e0", "e1", "e2", "s0", "s1"]);
    let members = ["e0", "e1", "e2"];
    net.run_in_hub(|| async {
        let hosts = members.iter().map(|m| (net.ip(m), Some(net.netns(m)))).collect();
        let mut cluster = block_in_place(|| EtcdCluster::start_on(hosts));
        let s = servers(&net, &cluster.url(), &[], &[]).await;
        let ledger = Arc::new(Mutex::new(Ledger::default()));
        let stop = Arc::new(AtomicBool::new(false));
        let workers = load(&s, &ledger, &stop);
        let leader = || members[block_in_place(|| cluster.leader()).expect("a leader")];
        let others = |l: &str| members.iter().copied().filter(|m| *m != l).collect::<Vec<_>>();
        let mut phases = Vec::new();
        tokio::time::sleep(Duration::from_secs(1)).await;

        let l = leader();
        let what = "the leader cut off from the other members";
        phases.push(phase(&s, &ledger, what, || net.split(&[l], &others(l)), || net.heal()).await);

        let l = leader();
        let majority: Vec<&str> = others(l).into_iter().chain(["s1"]).collect();
        let what = "the leader and server 0 split from the other members and server 1";
        phases.push(phase(&s, &ledger, what, || net.split(&[l, "s0"], &majority), || net.heal()).await);

        let what = "server 1 cut from every member";
        phases.push(phase(&s, &ledger, what, || net.split(&["s1"], &members), || net.heal()).await);

        let l = members.iter().position(|m| *m == leader()).unwrap();
        let cluster = std::sync::Mutex::new(&mut cluster);
        let what = "the leader SIGKILLed, then restarted on its data";
        let (kill, resume) = (|| cluster.lock().unwrap().kill(l), || cluster.lock().unwrap().resume(l));
        phases.push(phase(&s, &ledger, what, kill, resume).await);

        stop.store(true, SeqCst);
        for w in workers {
            w.await.unwrap();
        }
        let v = verdict(&s, &ledger).await;
        report("etcd, 3 members", &phases, &v, &ledger);
        assert_eq!(v.created_twice, 0, "a proposal was created twice");
        assert_eq!(v.unconsumed, 0, "a consumed token was taken again");
        assert!(v.undocumented.is_empty(), "undocumented answers: {:?}", v.undocumented);
        assert_eq!(v.creates, v.executed, "every create is a confirm that said executed");
        let outcomes = ledger.lock().unwrap().outcomes.clone();
        assert!(
            outcomes.get("proposal_store_unavailable").is_some_and(|n| *n > 0),
            "the faults were felt: {outcomes:?}"
        );
    });
}

/// What the Sentinel campaign found beyond the common verdict.
struct Undone {
    /// proposals proposed before the split and confirmed during it on the cut-off side
    batch: usize,
    /// of those, how many the confirms on the cut-off side said were executed
    executed_during: usize,
    /// of those, how many a confirm on the other side after the heal took again (a second create
    /// request sent)
    taken_again: usize,
}

/// Three Redis nodes and three Sentinels, each in its own namespace, and two servers with
/// `--proposal-store-acks acks`: proposals made, then the primary, one replica, one Sentinel and
/// server 0 split from the other replica, two Sentinels and server 1 (which promote that
/// replica); the proposals confirmed on server 0 during the split; after the heal, confirmed again
/// on server 1.
async fn sentinel_campaign(net: &Network, acks: &str) -> (Verdict, Vec<Phase>, Undone, Arc<Mutex<Ledger>>) {
    use crate::harness::sentinel::{Cluster, PASSWORD};
    const BATCH: usize = 16;
    let at = |n: &str| (net.ip(n), Some(net.netns(n)));
    let cluster = block_in_place(|| Cluster::start_on([at("r0"), at("r1"), at("r2")], [at("q0"), at("q1"), at("q2")]));
    let args = ["--proposal-store-acks", acks, "--proposal-store-ack-timeout-ms", "1000"];
    let s = servers(net, &cluster.url(), &args, &[("EQUINIX_MCP_PROPOSAL_STORE_PASSWORD", PASSWORD)]).await;
    let ledger = Arc::new(Mutex::new(Ledger::default()));
    let stop = Arc::new(AtomicBool::new(false));
    let workers = load(&s, &ledger, &stop);

    let mut batch_clients = Vec::new();
    for server in &s.servers {
        batch_clients.push(Arc::new(server.connect(Some(BATCH_TOKEN), TestClient::accepting(), false).await));
    }
    let mut batch = Vec::new();
    for _ in 0..BATCH {
        batch.push(propose(&s.vlans, &batch_clients[1], "batch").await.expect("a proposal before the split"));
    }
    block_in_place(|| {
        let primary = &cluster.nodes[cluster.primary()];
        assert_eq!(primary.query("WAIT 2 5000").unwrap(), ["2"], "both replicas hold the proposals");
    });
    let executed_during = Arc::new(Mutex::new(BTreeSet::new()));
    let during = async {
        // on the cut-off side, at once
        let calls = batch.iter().map(|token| {
            let (client, ledger, executed) = (batch_clients[0].clone(), ledger.clone(), executed_during.clone());
            let token = token.clone();
            async move {
                let r = call_on(&client, "fabric_confirm_change", json!({"confirm_token": token})).await;
                let t = token.as_str().unwrap();
                ledger.lock().unwrap().tokens.push(t.to_string());
                if ledger.lock().unwrap().confirmed(t, &r) {
                    executed.lock().unwrap().insert(t.to_string());
                }
            }
        });
        futures_util::future::join_all(calls).await;
        // the majority's Sentinels promote their replica before the heal
        block_in_place(|| cluster.wait_named_by(0, &[1, 2]));
    };
    let cut_off = ["r0", "r1", "q0", "s0"];
    let majority = ["r2", "q1", "q2", "s1"];
    let what = "the primary, a replica, a Sentinel and server 0 split from the rest";
    let phases = vec![phase_with(&s, &ledger, what, || net.split(&cut_off, &majority), during, || net.heal()).await];

    let executed_during = executed_during.lock().unwrap().clone();
    for token in &batch {
        let r = call_on(&batch_clients[1], "fabric_confirm_change", json!({"confirm_token": token})).await;
        ledger.lock().unwrap().confirmed(token.as_str().unwrap(), &r);
    }
    // a second create request for a proposal is a take undone (the simulator refuses it only
    // because the first took its VLAN; Fabric would see a new connection)
    let names = connection_create_names(&s.sim);
    let taken_again = names.iter().filter(|(name, n)| name.starts_with("batch-") && **n > 1).count();
    drop(batch_clients);
    stop.store(true, SeqCst);
    for w in workers {
        w.await.unwrap();
    }
    let v = verdict(&s, &ledger).await;
    drop(s);
    drop(cluster);
    (v, phases, Undone { batch: BATCH, executed_during: executed_during.len(), taken_again }, ledger)
}

fn report_undone(store: &str, u: &Undone) {
    eprintln!(
        "  {} proposals confirmed on the cut-off side during the split: {} executed there, {} taken again after the heal",
        u.batch, u.executed_during, u.taken_again
    );
    eprintln!(
        "CAMPAIGN|partitions, {store}: takes undone by the heal|{} of {}|confirmed on the cut-off side during the split, each a second create request after it",
        u.taken_again, u.executed_during
    );
}

/// [`sentinel_campaign`] in namespaces of its own, reported as `store`.
fn sentinel_run(acks: &str, store: &str) -> (Verdict, Undone) {
    need_namespaces();
    let net = Network::new(&["r0", "r1", "r2", "q0", "q1", "q2", "s0", "s1"]);
    net.run_in_hub(|| async {
        let (v, phases, undone, ledger) = sentinel_campaign(&net, acks).await;
        report(store, &phases, &v, &ledger);
        report_undone(store, &undone);
        (v, undone)
    })
}

/// With one acknowledgement the cut-off primary keeps taking tokens its replica on the same side
/// acknowledges; the other side promotes its replica, and the heal replaces the old primary's
/// data: the takes made there are undone, and confirmed again they send a second create.
/// Reported, as docs/store.md says: Redis replication cannot promise a take under a partition.
#[test]
#[ignore = "campaign: run by .ci/run after the test command, and by tests/campaign.sh"]
fn sentinel_with_one_acknowledgement_loses_takes_to_a_partition() {
    let (v, undone) = sentinel_run("1", "Redis Sentinel, 1 acknowledgement");
    // (every one in the runs so far; one whose WAIT timed out on a busy machine would fail closed)
    assert!(undone.executed_during > 0, "the cut-off side took tokens");
    assert_eq!(undone.taken_again, undone.executed_during, "the heal undid every take made on the cut-off side");
    assert!(v.created_twice > 0, "and a second create request was sent");
}

/// With two acknowledgements the cut-off primary (one replica on its side) and the promoted one
/// (none on its side) take no write during the split: every confirm fails closed, nothing is
/// created twice, and after the heal each proposal confirms once.
#[test]
#[ignore = "campaign: run by .ci/run after the test command, and by tests/campaign.sh"]
fn sentinel_with_two_acknowledgements_fails_closed_in_a_partition() {
    let (v, undone) = sentinel_run("2", "Redis Sentinel, 2 acknowledgements");
    assert_eq!(undone.executed_during, 0, "no take counts without two replicas");
    assert_eq!((v.created_twice, v.unconsumed, undone.taken_again), (0, 0, 0));
    assert!(v.undocumented.is_empty(), "undocumented answers: {:?}", v.undocumented);
    assert_eq!(v.creates, v.executed, "every create is a confirm that said executed");
}
