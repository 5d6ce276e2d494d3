//! The proposal store on etcd (a real three-member cluster on loopback, Debian's
//! `etcd-server`). Two replicas share it: a proposal made on one is confirmed on the other,
//! concurrent confirms over both create once (capacity and eviction across two handles are the
//! conformance suite's, `store_conformance.rs`); the leader lost costs
//! a confirm the election's pause, and without a quorum every store call fails closed while reads
//! go on, until the members are back and the takes made before are still taken. Partitions, in
//! network namespaces, are `partitions.rs`.

use crate::harness::etcd::EtcdCluster;
use crate::harness::*;
use equinix_fabric_sim::SimConfig;
use serde_json::json;
use tokio::task::block_in_place;

struct Pair {
    sim: equinix_fabric_sim::SimHandle,
    a: HttpServer,
    b: HttpServer,
}

async fn pair(cluster: &EtcdCluster) -> Pair {
    let sim = sim(SimConfig::default()).await;
    let key = base64::Engine::encode(&base64::engine::general_purpose::STANDARD, crate::replicas::rand_key());
    let url = cluster.url();
    let args = ["--toolsets", "metros,mutate", "--proposal-store", &url];
    let env = [("EQUINIX_MCP_STATE_KEY", key.as_str())];
    let a = Launch::serve().against(&sim).args(&args).env(&env).http("127.0.0.1:0").await;
    let b = Launch::serve().against(&sim).args(&args).env(&env).http("127.0.0.1:0").await;
    let said = a.stderr_text();
    assert!(said.contains("etcd: each write committed by a majority of its members"), "{said}");
    Pair { sim, a, b }
}

async fn get(url: String) -> (u16, String) {
    let r = http().get(url).send().await.unwrap();
    (r.status().as_u16(), r.text().await.unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_replicas_share_an_etcd_store_and_concurrent_confirms_create_once() {
    let cluster = block_in_place(EtcdCluster::start);
    let p = pair(&cluster).await;
    let on_a = p.a.connect(None, TestClient::accepting(), false).await;
    let person = TestClient::accepting();
    let on_b = p.b.connect(None, person.clone(), false).await;

    let proposal = propose_on(&on_a, "etcd-1", 2501).await;
    let r = call_on(&on_b, "fabric_confirm_change", json!({"confirm_token": proposal["confirm_token"]})).await;
    assert_eq!(structured(&r)["executed"], true, "{:?}", r.structured_content);
    let form = &person.prompt_texts()[0];
    assert!(
        form.contains("The plan, resolved by equinix-mcp") && form.contains("port \"DC-PRI-01\""),
        "the plan A resolved: {form}"
    );
    let r = call_on(&on_a, "fabric_confirm_change", json!({"confirm_token": proposal["confirm_token"]})).await;
    assert_eq!(structured(&r)["error"]["kind"], "replayed_token", "{:?}", r.structured_content);
    assert_eq!(structured(&r)["error"]["first_attempt"]["executed"], true, "the outcome was settled");
    // a hostile client's tokens that spell other keys of the store reach nothing
    for hostile in
        ["chg-../g/x", "../t/chg-0", "chg-\u{0}", &format!("{}/", proposal["confirm_token"].as_str().unwrap())]
    {
        let r = call_on(&on_a, "fabric_confirm_change", json!({"confirm_token": hostile})).await;
        let kind = structured(&r)["error"]["kind"].clone();
        assert!(kind == "unknown_token" || kind == "invalid_arguments", "{hostile:?}: {:?}", r.structured_content);
    }
    assert_eq!(connection_creates(&p.sim), 1);

    for trial in 0..3u64 {
        let proposal = propose_on(&on_a, &format!("etcd-race-{trial}"), 2510 + trial).await;
        let executed = confirm_at_once(&on_a, &on_b, &proposal["confirm_token"], 8).await;
        assert_eq!(executed, 1, "trial {trial}");
    }
    assert_eq!(connection_creates(&p.sim), 4);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_lost_leader_costs_a_confirm_a_pause_and_without_a_quorum_every_store_call_fails_closed() {
    let mut cluster = block_in_place(EtcdCluster::start);
    let p = pair(&cluster).await;
    let on_a = p.a.connect(None, TestClient::accepting(), false).await;
    let on_b = p.b.connect(None, TestClient::accepting(), false).await;
    let taken = propose_on(&on_a, "etcd-quorum-1", 2601).await;
    let waiting = propose_on(&on_a, "etcd-quorum-2", 2602).await;

    // the leader lost: the others elect one and commit; the confirm waits for the election
    let leader = block_in_place(|| cluster.leader()).expect("a leader");
    let other = (leader + 1) % 3;
    block_in_place(|| cluster.kill(leader));
    let r = call_on(&on_b, "fabric_confirm_change", json!({"confirm_token": taken["confirm_token"]})).await;
    assert_eq!(structured(&r)["executed"], true, "{:?}", r.structured_content);

    // two lost: no quorum, so nothing is read or written; reads of Fabric go on
    block_in_place(|| cluster.kill(other));
    let base = p.a.url.trim_end_matches("/mcp").to_string();
    let why = "proposal store has no quorum";
    wait::until("readiness to say the store has no quorum", wait::WITHIN, async || {
        get(format!("{base}/readyz/mutations")).await == (503, format!("{why}\n"))
    })
    .await;
    assert_eq!(get(format!("{base}/readyz")).await, (200, format!("ready; creates fail closed: {why}\n")));
    assert!(!is_error(&call_on(&on_a, "fabric_list_metros", json!({"limit": 1})).await), "reads need no store");
    let r = call_on(&on_b, "fabric_confirm_change", json!({"confirm_token": waiting["confirm_token"]})).await;
    assert_eq!(structured(&r)["error"]["kind"], "proposal_store_unavailable", "{:?}", r.structured_content);
    let said = structured(&r)["error"]["message"].as_str().unwrap().to_string();
    assert!(said.contains("no create was sent") && !said.contains("127.0.0.1"), "{said}");
    let spec = connection_spec("etcd-no-quorum", 2603);
    let r = call_on(&on_a, "fabric_propose_change", json!({"change_type": "connection_create", "spec": spec})).await;
    assert_eq!(structured(&r)["error"]["kind"], "proposal_store_unavailable", "{:?}", r.structured_content);
    assert_eq!(connection_creates(&p.sim), 1);

    // the members back: the take made before stays taken, the waiting proposal confirms once
    block_in_place(|| {
        cluster.resume(leader);
        cluster.resume(other);
        cluster.until_quorum();
    });
    wait::until("creates to be possible again", wait::WITHIN, async || {
        get(format!("{base}/readyz/mutations")).await.0 == 200
    })
    .await;
    let r = call_on(&on_a, "fabric_confirm_change", json!({"confirm_token": taken["confirm_token"]})).await;
    assert_eq!(structured(&r)["error"]["kind"], "replayed_token", "{:?}", r.structured_content);
    let r = call_on(&on_b, "fabric_confirm_change", json!({"confirm_token": waiting["confirm_token"]})).await;
    assert_eq!(structured(&r)["executed"], true, "{:?}", r.structured_content);
    assert_eq!(connection_creates(&p.sim), 2);
}

/// The leader stopped (SIGSTOP: to the others, a leader cut off from them) while both replicas
/// confirm the same tokens at once, a new leader elected, the old one continued: every confirm
/// answers a documented outcome, no proposal is created twice, and the creates are exactly the
/// confirms that said `executed`.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_leader_cut_off_while_both_replicas_confirm_creates_nothing_twice() {
    const PROPOSALS: usize = 24;
    let cluster = std::sync::Arc::new(block_in_place(EtcdCluster::start));
    let p = pair(&cluster).await;
    let on_a = std::sync::Arc::new(p.a.connect(None, TestClient::accepting(), false).await);
    let on_b = std::sync::Arc::new(p.b.connect(None, TestClient::accepting(), false).await);
    let next = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    // the load goes on until the fault is over and at least PROPOSALS were made (at most a minute)
    let fault_over = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let started = std::time::Instant::now();
    let workers: Vec<_> = (0..3)
        .map(|w| {
            let (on_a, on_b, next, fault_over) = (on_a.clone(), on_b.clone(), next.clone(), fault_over.clone());
            tokio::spawn(async move {
                let mut executed = 0usize;
                let mut outcomes = std::collections::BTreeMap::<String, usize>::new();
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    let enough = i >= PROPOSALS && fault_over.load(std::sync::atomic::Ordering::SeqCst);
                    if enough || started.elapsed() > std::time::Duration::from_secs(60) {
                        return (executed, outcomes);
                    }
                    let on = if w % 2 == 0 { &on_a } else { &on_b };
                    let spec = light_connection_spec(&format!("etcd-cut-{i}"), 2700 + i as u64);
                    let r =
                        call_on(on, "fabric_propose_change", json!({"change_type": "connection_create", "spec": spec}))
                            .await;
                    let Some(token) = structured(&r).get("confirm_token").cloned() else {
                        let kind = structured(&r)["error"]["kind"].as_str().unwrap_or("?").to_string();
                        assert_eq!(kind, "proposal_store_unavailable", "a propose fails closed or works");
                        *outcomes.entry(format!("propose {kind}")).or_default() += 1;
                        continue;
                    };
                    // both replicas confirm the same token at once
                    let (x, y) = tokio::join!(
                        call_on(&on_a, "fabric_confirm_change", json!({"confirm_token": token})),
                        call_on(&on_b, "fabric_confirm_change", json!({"confirm_token": token})),
                    );
                    let mut this = 0;
                    for r in [x, y] {
                        let out = structured(&r);
                        if out["executed"] == true {
                            this += 1;
                            *outcomes.entry("executed".into()).or_default() += 1;
                        } else {
                            let kind = out["error"]["kind"].as_str().unwrap_or("?").to_string();
                            let documented = ["replayed_token", "proposal_store_unavailable"];
                            assert!(documented.contains(&kind.as_str()), "{out}");
                            *outcomes.entry(kind).or_default() += 1;
                        }
                    }
                    assert!(this <= 1, "one token executed twice");
                    executed += this;
                }
            })
        })
        .collect();

    // the fault, while the load runs: stop the leader until another is elected, then continue it
    tokio::time::sleep(std::time::Duration::from_millis(400)).await;
    let old = block_in_place(|| cluster.leader()).expect("a leader");
    block_in_place(|| cluster.signal(old, "-STOP"));
    let stopped = std::time::Instant::now();
    let made_before = next.load(std::sync::atomic::Ordering::SeqCst);
    let elected = wait::until_some("another member to lead", std::time::Duration::from_secs(20), async || {
        block_in_place(|| cluster.leader()).filter(|l| *l != old)
    })
    .await;
    let election = stopped.elapsed();
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    block_in_place(|| {
        cluster.signal(old, "-CONT");
        cluster.until_quorum();
    });
    let made_during = next.load(std::sync::atomic::Ordering::SeqCst) - made_before;
    fault_over.store(true, std::sync::atomic::Ordering::SeqCst);

    let mut executed = 0;
    let mut outcomes = std::collections::BTreeMap::<String, usize>::new();
    for w in workers {
        let (e, o) = w.await.unwrap();
        executed += e;
        for (k, n) in o {
            *outcomes.entry(k).or_default() += n;
        }
    }
    eprintln!(
        "leader {old} stopped, member {elected} elected after {election:?}, {made_during} proposals begun meanwhile; \
         outcomes {outcomes:?}"
    );
    // the workers stop only once the fault is over, so calls were in flight all through it
    let names = connection_create_names(&p.sim);
    assert!(names.values().all(|n| *n == 1), "created twice: {names:?}");
    assert_eq!(connection_creates(&p.sim) as usize, executed, "{outcomes:?}");
    assert!(executed >= PROPOSALS / 2, "most proposals were confirmed: {outcomes:?}");
    drop((on_a, on_b));
}

/// An etcd cluster with its authentication on: the server signs in as the URL's user with the
/// password from a private file (or the environment) and works across two replicas; no user, a
/// wrong password, a password in the URL and a user without rights on the server's keys each
/// stop the start with an error that says which, and no password is ever printed. A token that
/// expired unused (a TTL of one second here) is replaced by signing in again.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_etcd_cluster_with_authentication_takes_a_user_and_its_password_from_a_file() {
    const PASSWORD: &str = "etcd-user-password-5d2a";
    let cluster = block_in_place(|| EtcdCluster::start_with_args(&["--auth-token-ttl", "1"]));
    block_in_place(|| cluster.enable_auth("mcp", PASSWORD, "equinix-mcp/"));
    let sim = sim(SimConfig::default()).await;
    let plain = cluster.url();
    let with_user = plain.replacen("etcd://", "etcd://mcp@", 1);
    let starts = async |url: &str, env: &[(&str, &str)]| {
        let stderr = Launch::serve()
            .against(&sim)
            .args(&["--toolsets", "metros,mutate", "--proposal-store", url])
            .env(env)
            .refused()
            .await;
        assert!(!stderr.contains(PASSWORD) && !stderr.contains("not-the-password"), "{stderr}");
        stderr
    };
    let said = starts(&plain, &[]).await;
    assert!(said.contains("requires a user") && said.contains("etcd://USER@"), "{said}");
    let said = starts(&with_user, &[("EQUINIX_MCP_PROPOSAL_STORE_PASSWORD", "not-the-password")]).await;
    assert!(said.contains("refused the user's name or password"), "{said}");
    let said = starts(&plain.replacen("etcd://", &format!("etcd://mcp:{PASSWORD}@"), 1), &[]).await;
    assert!(said.contains("takes no password in its URL"), "{said}");
    let said = starts(&with_user, &[]).await;
    assert!(said.contains("needs its password"), "{said}");
    let said = starts(&format!("{with_user}/elsewhere"), &[("EQUINIX_MCP_PROPOSAL_STORE_PASSWORD", PASSWORD)]).await;
    assert!(said.contains("permission denied"), "a user with no rights on the prefix: {said}");

    let file = fresh_path("etcd-password", "txt");
    std::fs::write(&file, format!("{PASSWORD}\n")).unwrap();
    std::fs::set_permissions(&file, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    let key = base64::Engine::encode(&base64::engine::general_purpose::STANDARD, crate::replicas::rand_key());
    let args = ["--toolsets", "metros,mutate", "--proposal-store", &with_user];
    let env =
        [("EQUINIX_MCP_STATE_KEY", key.as_str()), ("EQUINIX_MCP_PROPOSAL_STORE_PASSWORD_FILE", file.to_str().unwrap())];
    let a = Launch::serve().against(&sim).args(&args).env(&env).http("127.0.0.1:0").await;
    let b = Launch::serve().against(&sim).args(&args).env(&env).http("127.0.0.1:0").await;
    let on_a = a.connect(None, TestClient::accepting(), false).await;
    let on_b = b.connect(None, TestClient::accepting(), false).await;
    let proposal = propose_on(&on_a, "etcd-auth-1", 2801).await;
    // both servers' tokens expire unused
    tokio::time::sleep(std::time::Duration::from_millis(2500)).await;
    let r = call_on(&on_b, "fabric_confirm_change", json!({"confirm_token": proposal["confirm_token"]})).await;
    assert_eq!(structured(&r)["executed"], true, "{:?}", r.structured_content);
    let r = call_on(&on_a, "fabric_confirm_change", json!({"confirm_token": proposal["confirm_token"]})).await;
    assert_eq!(structured(&r)["error"]["kind"], "replayed_token", "{:?}", r.structured_content);
    assert_eq!(connection_creates(&sim), 1);
    for server in [&a, &b] {
        let said = server.stderr_text();
        assert!(said.contains("proposal_store=etcd://mcp@127.0.0.1:") && !said.contains(PASSWORD), "{said}");
    }
}

/// `etcds://`: the members' client ports over TLS, their CA given in `--proposal-store-ca-file`.
/// Without it, or with another authority's, the start is refused (the certificate is not
/// trusted); a CA file with `etcd://`, and one that holds no certificate, are refused naming the
/// file.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_etcd_cluster_over_tls_is_trusted_through_the_ca_file_and_not_without_it() {
    let dir = fresh_path("etcd-tls", "d");
    std::fs::create_dir_all(&dir).unwrap();
    let (cert, key, _) = certificate(&dir, "etcd");
    let cluster = block_in_place(|| EtcdCluster::start_tls(cert.clone(), key.clone()));
    let sim = sim(SimConfig::default()).await;
    let refused = async |args: &[&str]| {
        Launch::serve().against(&sim).args(&["--toolsets", "metros,mutate"]).args(args).refused().await
    };
    let said = refused(&["--proposal-store", &cluster.tls_url()]).await;
    assert!(said.contains("cannot reach the proposal store") && said.contains("certificate"), "{said}");
    let ca = cert.to_str().unwrap();
    let said = refused(&["--proposal-store", &cluster.url(), "--proposal-store-ca-file", ca]).await;
    assert!(said.contains("write etcds://"), "{said}");
    let said =
        refused(&["--proposal-store", &cluster.tls_url(), "--proposal-store-ca-file", key.to_str().unwrap()]).await;
    assert!(said.contains("no PEM certificate") && said.contains("etcd.key"), "{said}");
    // a store whose certificate another authority signed (a store put in its place) is refused
    let (other, _, _) = certificate(&dir, "other");
    let said =
        refused(&["--proposal-store", &cluster.tls_url(), "--proposal-store-ca-file", other.to_str().unwrap()]).await;
    assert!(said.contains("cannot reach the proposal store") && said.contains("certificate"), "{said}");

    let key = base64::Engine::encode(&base64::engine::general_purpose::STANDARD, crate::replicas::rand_key());
    let url = cluster.tls_url();
    let args = ["--toolsets", "metros,mutate", "--proposal-store", &url, "--proposal-store-ca-file", ca];
    let env = [("EQUINIX_MCP_STATE_KEY", key.as_str())];
    let a = Launch::serve().against(&sim).args(&args).env(&env).http("127.0.0.1:0").await;
    let b = Launch::serve().against(&sim).args(&args).env(&env).http("127.0.0.1:0").await;
    let on_a = a.connect(None, TestClient::accepting(), false).await;
    let on_b = b.connect(None, TestClient::accepting(), false).await;
    let proposal = propose_on(&on_a, "etcd-tls-1", 2811).await;
    assert_eq!(confirm_at_once(&on_a, &on_b, &proposal["confirm_token"], 4).await, 1);
    assert_eq!(connection_creates(&sim), 1);
}
