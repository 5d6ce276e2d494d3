//! Issue 2: the walking skeleton, end to end through the real binary.

mod common;

use std::time::Duration;

use common::*;
use equinix_mcp::fabric_sim::{self, SimConfig};
use serde_json::{Value, json};

#[tokio::test]
async fn stdio_client_lists_and_calls_metros_against_the_seeded_simulator() {
    let server = start_on_embedded_sim(&[], TestClient::plain()).await.unwrap();
    let info = server.client.peer_info().unwrap();
    assert_eq!(info.server_info.as_ref().unwrap().name, "equinix-mcp");

    let tools = server.client.list_all_tools().await.unwrap();
    let metros = tools.iter().find(|t| t.name == "fabric_list_metros").expect("fabric_list_metros is served");
    assert_eq!(metros.annotations.as_ref().and_then(|a| a.read_only_hint), Some(true));
    assert!(tools.iter().all(|t| !t.name.contains("propose")), "mutate tools are not served by default");

    let seeded = fabric_sim::seeded_metros();
    let page = structured(&server.call("fabric_list_metros", json!({"limit": 5})).await);
    assert_eq!(page["total"], seeded.len(), "{page}");
    assert_eq!(page["next_offset"], 5);
    let metros = rows(&page, "metros");
    let codes: Vec<&str> = metros.iter().map(|m| m["code"].as_str().unwrap()).collect();
    let expected: Vec<&str> = seeded.iter().take(5).map(|m| m["code"].as_str().unwrap()).collect();
    assert_eq!(codes, expected);
    assert_eq!(metros[0]["name"], seeded[0]["name"]);

    let near_end = seeded.len() - 3;
    let last = structured(&server.call("fabric_list_metros", json!({"offset": near_end, "limit": 5})).await);
    assert_eq!(last["returned"], 3);
    assert_eq!(last["next_offset"], Value::Null);

    let mine = structured(&server.call("fabric_list_metros", json!({"presence": "MY_PORTS"})).await);
    assert_eq!(mine["total"], fabric_sim::MY_PORT_METROS.len());
    server.stop().await;
}

#[tokio::test]
async fn the_embedded_simulator_answers_alike_in_process_and_over_http() {
    let mut pages = Vec::new();
    for extra in [&[][..], &["--fabric-sim-http"][..]] {
        let server = start_on_embedded_sim(extra, TestClient::plain()).await.unwrap();
        let how = if extra.is_empty() { "(called in process)" } else { "(called over HTTP)" };
        embedded_sim_url(&server).await; // waits for the banner to reach the captured stderr
        assert!(server.stderr_text().contains(how), "banner should say {how}:\n{}", server.stderr_text());
        pages.push(structured(&server.call("fabric_list_metros", json!({"offset": 2, "limit": 4})).await));
        server.stop().await;
    }
    assert_eq!(pages[0]["returned"], 4);
    assert_eq!(pages[0], pages[1]);
}

#[tokio::test]
async fn a_fabric_answer_larger_than_the_components_initial_memory_still_works() {
    // 20 metros with 100 kB names: the component's heap must grow past its 1 MiB initial memory.
    let metros: Vec<Value> = (0..20)
        .map(|i| json!({"code": format!("M{i}"), "name": format!("{i:02}").repeat(50_000), "region": "AMER"}))
        .collect();
    let body = json!({"pagination": {"offset": 0, "limit": 20, "total": 20}, "data": metros}).to_string();
    let sim = sim(SimConfig::default()).await;
    sim.inject(fabric_sim::Fault { body: Some(body), ..fabric_sim::Fault::status("GET /fabric/v4/metros", 200) });
    let server = start_against(&sim, &[], &[], TestClient::plain()).await;
    let page = structured(&server.call("fabric_list_metros", json!({"limit": 20})).await);
    assert_eq!(page["returned"], 20, "{}", &page.to_string()[..page.to_string().len().min(300)]);
    assert_eq!(rows(&page, "metros")[19]["name"].as_str().map(str::len), Some(100_000));
    server.stop().await;
}

#[tokio::test]
async fn arguments_are_validated_before_the_component_or_fabric_sees_them() {
    let sim = sim(SimConfig::default()).await;
    let server = start_against(&sim, &[], &[], TestClient::plain()).await;
    for (args, path) in [
        (json!({"limit": "five"}), "/limit"),
        (json!({"limit": 0}), "/limit"),
        (json!({"presence": "EVERYWHERE"}), "/presence"),
        (json!({"offset": 1, "colour": "red"}), "/colour"),
    ] {
        let r = server.call("fabric_list_metros", args.clone()).await;
        assert!(is_error(&r), "{args}");
        let err = &structured(&r)["error"];
        assert_eq!(err["kind"], "invalid_arguments", "{args}");
        assert_eq!(err["path"], path, "{args}: {err}");
    }
    assert!(sim.stats().requests.is_empty(), "nothing reached Fabric");
    server.stop().await;
}

#[tokio::test]
async fn fabric_errors_come_back_with_their_codes() {
    let sim = sim(SimConfig::default()).await;
    sim.inject(fabric_sim::Fault::status("GET /fabric/v4/metros", 403));
    let server = start_against(&sim, &[], &[], TestClient::plain()).await;
    let r = server.call("fabric_list_metros", json!({})).await;
    assert!(is_error(&r));
    let err = &structured(&r)["error"];
    assert_eq!(err["kind"], "fabric_error");
    assert_eq!(err["status"], 403);
    assert_eq!(err["fabric_errors"][0]["errorCode"], "EQ-3045004");
    let seen = sim.stats().requests;
    assert_eq!(
        err["correlation_id"].as_str(),
        seen[0].correlation_id.as_deref(),
        "the host's X-CORRELATION-ID is reported"
    );
    server.stop().await;
}

/// The world's imports as `wit/broker.wit` declares them, fully qualified.
fn world_imports() -> Vec<String> {
    let wit = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../wit/broker.wit")).unwrap();
    let package =
        wit.lines().find_map(|l| l.trim().strip_prefix("package ")).unwrap().trim_end_matches(';').to_string();
    let (ns_name, version) = package.split_once('@').unwrap();
    let world = &wit[wit.find("world broker").unwrap()..];
    let mut imports: Vec<String> = world
        .lines()
        .filter_map(|l| l.trim().strip_prefix("import "))
        .map(|i| format!("{ns_name}/{}@{version}", i.trim_end_matches(';')))
        .collect();
    imports.sort();
    imports
}

#[test]
fn embedded_component_imports_exactly_the_world() {
    let surface = equinix_mcp::component::inspect(equinix_mcp::EMBEDDED_COMPONENT).unwrap();
    let mut imports: Vec<String> = surface.imports.iter().map(|i| i.name.clone()).collect();
    imports.sort();
    assert_eq!(imports, world_imports());
    assert!(imports.iter().all(|i| !i.starts_with("wasi:")));
    assert!(surface.verdict.accepted, "{:?}", surface.verdict.problems);
    let exports: Vec<&str> = surface.exports.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(exports, vec!["equinix:broker/tools@0.2.0"]);
    // the create path, read from the types: one import spends an approval, one mints it
    assert!(surface.create_path.holds);
    assert_eq!(surface.create_path.spends_approval, ["equinix:broker/confirmation@0.2.0#[static]approval.execute"]);
    assert_eq!(surface.create_path.mints_approval, ["equinix:broker/confirmation@0.2.0#ask"]);
}

/// A component (in WAT) that also imports a socket interface.
fn forbidden_component(path: &std::path::Path) {
    let wat = r#"(component
        (import "wasi:sockets/tcp@0.2.0" (instance (export "connect" (func (param "port" u16)))))
        (import "equinix:broker/clock@0.2.0" (instance (export "now-ms" (func (result u64)))))
    )"#;
    std::fs::write(path, wat::parse_str(wat).unwrap()).unwrap();
}

#[tokio::test]
async fn a_component_importing_sockets_is_refused_by_inspect_and_serve() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("sockets.wasm");
    forbidden_component(&bad);
    let bad = bad.to_str().unwrap();

    let (ok, stdout, _) = run_to_exit(&["inspect", "--component", bad], &[]).await;
    assert!(!ok, "inspect must exit non-zero");
    assert!(stdout.contains("REFUSED") && stdout.contains("wasi:sockets/tcp@0.2.0"), "{stdout}");

    let (ok, stdout, _) = run_to_exit(&["inspect", "--component", bad, "--json"], &[]).await;
    assert!(!ok);
    let v: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["verdict"]["accepted"], false);
    assert!(v["verdict"]["problems"][0].as_str().unwrap().contains("wasi:sockets/tcp@0.2.0"));

    let (ok, _, stderr) = run_to_exit(&["serve", "--fabric-sim", "--component", bad], &[]).await;
    assert!(!ok, "serve must refuse to start");
    assert!(stderr.contains("refusing component") && stderr.contains("wasi:sockets/tcp@0.2.0"), "{stderr}");
}

#[tokio::test]
async fn inspect_accepts_the_embedded_component_and_shows_both_sides() {
    let (ok, stdout, _) = run_to_exit(&["inspect"], &[]).await;
    assert!(ok);
    let sha = equinix_mcp::component::sha256_hex(equinix_mcp::EMBEDDED_COMPONENT);
    assert!(stdout.contains(&sha) && stdout.contains("ACCEPTED"));
    for import in world_imports() {
        assert!(stdout.contains(&import), "{import} missing from:\n{stdout}");
    }
    assert!(stdout.contains("POST /fabric/v4/connections") && stdout.contains("never: PUT, PATCH, DELETE"));
    // the invariant, stated from the types
    let section = &stdout[stdout.find("create path (read from the import types)").expect("a create path section")..];
    for needle in [
        "only equinix:broker/confirmation@0.2.0#[static]approval.execute sends a create",
        "own<approval>",
        "only equinix:broker/confirmation@0.2.0#ask returns an approval",
        "cannot create without a human's yes",
    ] {
        assert!(section.contains(needle), "{needle} missing from:\n{section}");
    }
    let (_, json_out, _) = run_to_exit(&["inspect", "--json"], &[]).await;
    let v: Value = serde_json::from_str(&json_out).unwrap();
    assert_eq!(v["create_path"]["holds"], true);
    let ask = v["imports"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|i| i["functions"].as_array().unwrap())
        .find(|f| f["name"] == "ask");
    assert!(ask.unwrap()["signature"].as_str().unwrap().contains("option<own<approval>>"), "{ask:?}");
}

#[tokio::test]
async fn a_component_built_for_broker_0_1_0_is_refused_naming_both_versions() {
    let dir = tempfile::tempdir().unwrap();
    let old = dir.path().join("old.wasm");
    let wat = r#"(component
        (import "equinix:broker/clock@0.1.0" (instance (export "now-ms" (func (result u64)))))
        (import "equinix:broker/fabric@0.1.0" (instance (export "send" (func (param "path" string)))))
    )"#;
    std::fs::write(&old, wat::parse_str(wat).unwrap()).unwrap();
    let old = old.to_str().unwrap();
    let (ok, stdout, _) = run_to_exit(&["inspect", "--component", old], &[]).await;
    assert!(!ok, "inspect must exit non-zero");
    assert!(
        stdout.contains("REFUSED")
            && stdout.contains("equinix:broker@0.1.0")
            && stdout.contains("equinix:broker@0.2.0"),
        "{stdout}"
    );
    let (ok, _, stderr) = run_to_exit(&["serve", "--fabric-sim", "--component", old], &[]).await;
    assert!(!ok, "serve must refuse to start");
    assert!(stderr.contains("equinix:broker@0.1.0") && stderr.contains("requires equinix:broker@0.2.0"), "{stderr}");
}

#[tokio::test]
async fn swapping_the_component_serves_its_catalog_without_rebuilding() {
    let probe = probe_component();
    let server =
        start_on_embedded_sim(&["--component", probe.to_str().unwrap(), "--toolsets", "echo"], TestClient::plain())
            .await
            .unwrap();
    let names: Vec<String> =
        server.client.list_all_tools().await.unwrap().into_iter().map(|t| t.name.to_string()).collect();
    assert_eq!(names, vec!["swap_echo"]);
    let r = structured(&server.call("swap_echo", json!({"hello": "world"})).await);
    assert_eq!(r, json!({"echo": {"hello": "world"}, "component": "probe"}));
    let sha = equinix_mcp::component::sha256_hex(&std::fs::read(&probe).unwrap());
    assert!(server.stderr_text().contains(&sha), "the banner names the running component");
    server.stop().await;
}

#[tokio::test]
async fn a_pinned_sha256_that_does_not_match_refuses_to_start() {
    let probe = probe_component();
    let wrong = "0".repeat(64);
    let (ok, _, stderr) = run_to_exit(
        &["serve", "--fabric-sim", "--component", probe.to_str().unwrap(), "--component-sha256", &wrong],
        &[],
    )
    .await;
    assert!(!ok);
    assert!(stderr.contains("pins") && stderr.contains(&wrong), "{stderr}");
}

/// The tool names `equinix-mcp tools` reads from the component it loads (what actually runs).
async fn tools_run(cache: &std::path::Path, extra: &[&str]) -> (Vec<String>, String) {
    let mut args = vec!["tools", "--json", "--toolsets", "all,mutate", "--cache-dir", cache.to_str().unwrap()];
    args.extend_from_slice(extra);
    let (ok, stdout, stderr) = run_to_exit(&args, &[]).await;
    assert!(ok, "{stderr}");
    let v: Value = serde_json::from_str(&stdout).unwrap();
    let names = v["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().to_string()).collect();
    (names, stderr)
}

/// The one entry of `dir` whose name starts with `sha`.
fn entry_of(dir: &std::path::Path, sha: &str) -> std::path::PathBuf {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.file_name().unwrap().to_str().unwrap().starts_with(sha))
        .unwrap()
}

#[tokio::test]
async fn a_damaged_or_planted_cache_entry_never_runs_in_place_of_the_pinned_component() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let embedded = equinix_mcp::component::sha256_hex(equinix_mcp::EMBEDDED_COMPONENT);
    let probe = probe_component();
    let probe_sha = equinix_mcp::component::sha256_hex(&std::fs::read(&probe).unwrap());
    let (broker_tools, _) = tools_run(&cache, &[]).await;
    assert!(broker_tools.contains(&"fabric_confirm_change".to_string()));
    tools_run(&cache, &["--component", probe.to_str().unwrap()]).await;
    let (ours, theirs) = (entry_of(&cache, &embedded), entry_of(&cache, &probe_sha));
    let good = std::fs::read(&ours).unwrap();

    // 64 flipped bytes in the code: detected before loading, recompiled, rewritten
    let mut flipped = good.clone();
    let at = flipped.len() / 2;
    flipped[at..at + 64].iter_mut().for_each(|b| *b ^= 0xff);
    std::fs::write(&ours, &flipped).unwrap();
    let (names, stderr) = tools_run(&cache, &[]).await;
    assert_eq!(names, broker_tools);
    assert!(stderr.contains("does not match its recorded SHA-256"), "{stderr}");
    assert_eq!(std::fs::read(&ours).unwrap(), good, "the entry was rewritten from the .wasm");

    // another component's code planted under our name, without a header: refused
    let planted = std::fs::read(&theirs).unwrap();
    let header_end = planted.iter().enumerate().filter(|(_, b)| **b == b'\n').nth(2).unwrap().0 + 1;
    std::fs::write(&ours, &planted[header_end..]).unwrap();
    let (names, stderr) = tools_run(&cache, &[]).await;
    assert_eq!(names, broker_tools, "a planted .cwasm never runs");
    assert!(stderr.contains("no header"), "{stderr}");

    // a consistent plant (our name in its header, its own digest right) is what someone who can
    // write the user's files could make; a pinned component is compiled from its bytes anyway
    let text = String::from_utf8_lossy(&planted[..header_end]).replace(&probe_sha, &embedded);
    let mut consistent = text.into_bytes();
    consistent.extend_from_slice(&planted[header_end..]);
    std::fs::write(&ours, &consistent).unwrap();
    let (names, _) = tools_run(&cache, &["--component-sha256", &embedded]).await;
    assert_eq!(names, broker_tools, "the pin describes the code that runs");
}

#[tokio::test]
async fn the_fabric_import_refuses_paths_off_the_allow_list_and_sends_nothing() {
    let sim = sim(SimConfig::default()).await;
    let probe = probe_component();
    let server =
        start_against(&sim, &["--component", probe.to_str().unwrap(), "--toolsets", "probe"], &[], TestClient::plain())
            .await;
    for (method, path, query) in [
        ("GET", "/fabric/v4/routers", json!([])),
        ("GET", "/fabric/v4/ports/../connections", json!([])),
        ("GET", "/fabric/v4/connections/abc%2F..%2Fdelete", json!([])),
        ("POST", "/fabric/v4/connections", json!([["dryRun", "true"]])),
        ("POST", "/fabric/v4/connections", json!([])),
        ("GET", "/fabric/v4/metros", json!([["dryRun", "true"]])),
    ] {
        let r = structured(&server.call("raw_fabric", json!({"method": method, "path": path, "query": query})).await);
        let refused = r["refused"].as_str().unwrap_or_else(|| panic!("{method} {path} was not refused: {r}"));
        assert!(refused.contains(path), "{refused}");
    }
    let create = structured(&server.call("raw_fabric", json!({"method": "POST", "path": "/fabric/v4/networks"})).await);
    assert!(create["refused"].as_str().unwrap().contains("`mutate`"), "{create}");
    let stats = sim.stats();
    assert!(stats.requests.is_empty(), "the simulator saw {:?}", stats.requests);
    assert_eq!(stats.token_requests, 0, "not even a token was fetched");

    // the same component reaches an allowed path, through the same import
    let ok = structured(&server.call("raw_fabric", json!({"method": "GET", "path": "/fabric/v4/metros"})).await);
    assert_eq!(ok["status"], 200);
    assert_eq!(sim.stats().requests.len(), 1);
    server.stop().await;
}

#[tokio::test]
async fn a_trapping_component_call_is_a_tool_error_and_the_server_keeps_serving() {
    let probe = probe_component();
    let server = start_on_embedded_sim(
        &["--component", probe.to_str().unwrap(), "--toolsets", "probe,echo", "--guest-time-ms", "300"],
        TestClient::plain(),
    )
    .await
    .unwrap();
    let r = server.call("panic", json!({})).await;
    assert!(is_error(&r));
    assert!(structured(&r)["error"]["message"].as_str().unwrap().contains("panicked"), "{:?}", r);

    let r = server.call("spin", json!({})).await;
    assert!(is_error(&r));
    assert!(structured(&r)["error"]["message"].as_str().unwrap().contains("CPU budget"), "{:?}", r);

    let r = server.call("swap_echo", json!({"still": "alive"})).await;
    assert_eq!(structured(&r)["echo"]["still"], "alive");
    server.stop().await;
}

#[tokio::test]
async fn the_token_is_fetched_once_and_reused_until_near_expiry() {
    // A 4 s token is refreshed 0.4 s before it expires.
    let sim = sim(SimConfig { token_timeout_secs: 4, ..Default::default() }).await;
    let server = start_against(&sim, &[], &[], TestClient::plain()).await;
    for _ in 0..3 {
        assert!(!is_error(&server.call("fabric_list_metros", json!({"limit": 1})).await));
    }
    assert_eq!(sim.stats().token_requests, 1);
    tokio::time::sleep(Duration::from_millis(3800)).await;
    assert!(!is_error(&server.call("fabric_list_metros", json!({"limit": 1})).await));
    assert_eq!(sim.stats().token_requests, 2, "refreshed before expiry");
    assert_eq!(sim.stats().requests.len(), 4, "no 401 round trips were needed");
    server.stop().await;
}

#[tokio::test]
async fn a_bad_secret_is_reported_clearly_and_requested_exactly_once() {
    let sim = sim(SimConfig::default()).await;
    let server = start_against(&sim, &[], &[("EQUINIX_API_CLIENTSECRET", "not-the-secret")], TestClient::plain()).await;
    for _ in 0..3 {
        let r = server.call("fabric_list_metros", json!({})).await;
        assert!(is_error(&r));
        let msg = structured(&r)["error"]["message"].as_str().unwrap().to_string();
        assert!(msg.contains("rejected the client credentials") && msg.contains("S1006"), "{msg}");
        assert!(!msg.contains("not-the-secret"));
    }
    let stats = sim.stats();
    assert_eq!(stats.token_requests, 1, "a rejected secret is never retried (5 failures lock the account)");
    assert!(stats.requests.is_empty());
    assert!(!server.stderr_text().contains("not-the-secret"));
    server.stop().await;
}

#[tokio::test]
async fn an_expired_token_mid_flight_is_refreshed_once_for_a_read() {
    let sim = sim(SimConfig::default()).await;
    let server = start_against(&sim, &[], &[], TestClient::plain()).await;
    assert!(!is_error(&server.call("fabric_list_metros", json!({})).await));
    sim.inject(fabric_sim::Fault::status("GET /fabric/v4/metros", 401));
    assert!(!is_error(&server.call("fabric_list_metros", json!({})).await));
    let stats = sim.stats();
    assert_eq!(stats.token_requests, 2);
    assert_eq!(stats.requests.len(), 3);
    server.stop().await;
}
