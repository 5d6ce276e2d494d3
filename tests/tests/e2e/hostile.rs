//! Hostile components are refused at load or trapped per call with
//! a clear error, and the server keeps serving.

use std::time::Instant;

use crate::harness::*;
use equinix_fabric_sim::SimConfig;
use serde_json::json;

fn write_wat(dir: &std::path::Path, name: &str, wat: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, wat::parse_str(wat).unwrap()).unwrap();
    path.to_str().unwrap().to_string()
}

#[tokio::test]
async fn components_importing_anything_outside_the_world_are_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    for import in [
        "wasi:sockets/tcp@0.2.0",
        "wasi:filesystem/types@0.2.0",
        "wasi:http/outgoing-handler@0.2.0",
        "acme:evil/exfiltrate@1.0.0",
    ] {
        let wat = format!(r#"(component (import "{import}" (instance (export "go" (func)))))"#);
        let path = write_wat(dir.path(), "c.wasm", &wat);
        let (ok, stdout, _) = run_to_exit(&["inspect", "--component", &path], &[]).await;
        assert!(!ok, "{import}: inspect must exit non-zero");
        assert!(stdout.contains("REFUSED") && stdout.contains(import), "{import}:\n{stdout}");
        let (ok, _, stderr) = run_to_exit(&["serve", "--fabric-sim", "--component", &path], &[]).await;
        assert!(!ok && stderr.contains(import), "{import}: serve must refuse:\n{stderr}");
    }
}

#[tokio::test]
async fn an_export_with_the_wrong_types_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let wat = r#"(component
        (core module $m (func (export "f") (result i32) i32.const 0))
        (core instance $i (instantiate $m))
        (func $catalog (result u32) (canon lift (core func $i "f")))
        (instance $tools (export "catalog" (func $catalog)))
        (export "equinix:broker/tools@0.3.0" (instance $tools))
    )"#;
    let path = write_wat(dir.path(), "wrong-types.wasm", wat);
    let (ok, _, stderr) = run_to_exit(&["serve", "--fabric-sim", "--component", &path], &[]).await;
    assert!(!ok);
    assert!(stderr.contains("exports do not match the broker world"), "{stderr}");
    let not_a_component = dir.path().join("junk.wasm");
    std::fs::write(&not_a_component, b"\0asm\x0d\0\x01\0 garbage").unwrap();
    let (ok, _, stderr) = run_to_exit(&["inspect", "--component", not_a_component.to_str().unwrap()], &[]).await;
    assert!(!ok && stderr.contains("not a valid WebAssembly component"), "{stderr}");
}

#[tokio::test]
async fn an_invalid_catalog_is_refused_with_the_tool_named() {
    let bad = bad_catalog_component();
    let (ok, _, stderr) = run_to_exit(&["serve", "--fabric-sim", "--component", bad.to_str().unwrap()], &[]).await;
    assert!(!ok);
    assert!(stderr.contains("drop table; --") && stderr.contains("tool name"), "{stderr}");
    // inspect reads the catalog and judges it by the same rules: no ACCEPTED for what serve refuses
    let (ok, stdout, _) = run_to_exit(&["inspect", "--component", bad.to_str().unwrap()], &[]).await;
    assert!(!ok && stdout.contains("REFUSED"), "{stdout}");
    assert!(stdout.contains("has a catalog serve refuses") && stdout.contains("drop table; --"), "{stdout}");
}

/// The probe component with a 300 ms CPU budget and a 16 MiB memory cap.
async fn trap_server() -> Server {
    let probe = probe_component();
    let args = [
        "--component",
        probe.to_str().unwrap(),
        "--toolsets",
        "probe,echo",
        "--guest-time-ms",
        "300",
        "--memory-mib",
        "16",
    ];
    Launch::serve().args(&args).stdio().await
}

#[tokio::test]
async fn traps_are_per_call_and_the_next_call_is_served() {
    let server = trap_server().await;
    for (tool, needle) in
        [("alloc_bomb", "memory"), ("recurse", "stack"), ("spin", "CPU budget"), ("panic", "panicked")]
    {
        let started = Instant::now();
        let r = server.call(tool, json!({})).await;
        assert!(is_error(&r), "{tool}");
        let msg = structured(&r)["error"]["message"].as_str().unwrap().to_string();
        assert!(msg.contains(needle), "{tool}: {msg}");
        assert!(started.elapsed().as_secs() < 10, "{tool} was stopped promptly");
        let r = server.call("swap_echo", json!({"after": tool})).await;
        assert_eq!(structured(&r)["echo"]["after"], tool, "the server keeps serving after {tool}");
    }
    server.stop().await;
}

/// Loads and stores run without bounds checks (4 GiB of address space is reserved per memory,
/// with guard pages): an access past the memory still traps, in that call alone.
#[tokio::test]
async fn a_wild_read_or_write_past_the_memory_traps_and_the_next_call_is_served() {
    let server = trap_server().await;
    let r = server.call("wild_access", json!({"address": 1024, "write": true})).await;
    assert!(!is_error(&r), "inside its memory the probe may write and read back: {r:?}");
    assert_eq!(structured(&r)["value"], 0x5eed);
    // beyond the initial memory (below the 16 MiB cap), at 2 GiB, and straddling the 4 GiB end
    for (address, write) in [(20u64 << 20, false), (2 << 30, true), ((4 << 30) - 4, false), ((4 << 30) - 8, true)] {
        let r = server.call("wild_access", json!({"address": address, "write": write})).await;
        assert!(is_error(&r), "{address:#x} (write {write}) must trap: {r:?}");
        let msg = structured(&r)["error"]["message"].as_str().unwrap().to_string();
        assert!(msg.contains("out of bounds"), "{address:#x}: {msg}");
        let r = server.call("swap_echo", json!({"after": address})).await;
        assert_eq!(structured(&r)["echo"]["after"], address, "the server keeps serving after {address:#x}");
    }
    server.stop().await;
}

#[tokio::test]
async fn a_ten_megabyte_request_body_is_refused_and_nothing_is_sent() {
    let sim = sim(SimConfig::default()).await;
    let server = Launch::probe().against(&sim).stdio().await;
    let r = structured(
        &server
            .call("raw_fabric", json!({"method": "POST", "path": "/fabric/v4/ports/search", "body_bytes": 10 << 20}))
            .await,
    );
    assert!(r["refused"].as_str().unwrap().contains("exceeds"), "{r}");
    assert!(sim.stats().requests.is_empty());
    server.stop().await;
}

/// Campaign: latency of a normal call right after each kind of trap, against the same call on a
/// healthy server (median of 30). Prints figures; asserts nothing about time.
#[tokio::test]
#[ignore = "campaign: run by tests/campaign.sh"]
async fn campaign_next_call_latency_after_traps() {
    let server = trap_server().await;
    async fn median_echo(server: &Server) -> f64 {
        let mut times = Vec::new();
        for _ in 0..30 {
            let t = Instant::now();
            server.call("swap_echo", json!({})).await;
            times.push(t.elapsed().as_secs_f64() * 1e3);
        }
        times.sort_by(|a, b| a.partial_cmp(b).unwrap());
        times[15]
    }
    let idle = median_echo(&server).await;
    eprintln!("CAMPAIGN|baseline: echo call on a healthy server|median {idle:.3} ms|-");
    for tool in ["panic", "spin", "alloc_bomb", "recurse"] {
        let t = Instant::now();
        let r = server.call(tool, json!({})).await;
        let trap_ms = t.elapsed().as_secs_f64() * 1e3;
        assert!(is_error(&r));
        let after = median_echo(&server).await;
        eprintln!(
            "CAMPAIGN|trap: {tool}|stopped in {trap_ms:.1} ms, tool error|next call median {after:.3} ms ({:.2}x baseline)",
            after / idle
        );
    }
    server.stop().await;
}

/// A swapped-in component cannot create without the person's yes to the exact bytes,
/// whatever it tries. Each case counts what reached the simulator, checks that the server still
/// serves, and that the refusal is named.
pub(crate) struct Rogue {
    pub(crate) server: Server,
    pub(crate) sim: equinix_fabric_sim::SimHandle,
    pub(crate) client: TestClient,
}

pub(crate) async fn rogue() -> Rogue {
    let sim = sim(SimConfig::default()).await;
    let probe = probe_component();
    let client = TestClient::accepting();
    let args = ["--component", probe.to_str().unwrap(), "--toolsets", "probe,echo,mutate"];
    let server = Launch::serve().against(&sim).args(&args).client(client.clone()).stdio().await;
    Rogue { server, sim, client }
}

impl Rogue {
    pub(crate) async fn call(&self, tool: &str, args: serde_json::Value) -> (bool, serde_json::Value) {
        let r = self.server.call(tool, args).await;
        (is_error(&r), structured(&r))
    }

    /// The server still serves, and `creates` connections reached the simulator.
    pub(crate) async fn ends_with(self, creates: u64) {
        assert_eq!(connection_creates(&self.sim), creates);
        assert_eq!(connection_create_requests(&self.sim), creates as usize, "create requests sent");
        let (err, echo) = self.call("swap_echo", json!({"still": "serving"})).await;
        assert!(!err && echo["echo"]["still"] == "serving", "{echo}");
        self.server.stop().await;
    }

    pub(crate) fn approval_events(&self) -> Vec<String> {
        self.server.audit_entries().iter().filter_map(|e| e["event"].as_str().map(String::from)).collect()
    }
}

#[tokio::test]
async fn a_read_tool_of_a_swapped_component_cannot_create_even_with_mutate_on() {
    let r = rogue().await;
    let (err, out) = r.call("rogue_read_create", json!({"body": connection_spec("read-create", 1001)})).await;
    assert!(!err, "{out}");
    assert!(out["send"]["refused"].as_str().unwrap().contains("only by executing an approval"), "{out}");
    assert!(out["ask"]["refused"].as_str().unwrap().contains("not in the `mutate` toolset"), "{out}");
    assert!(r.client.prompt_texts().is_empty(), "nobody was asked");
    assert!(r.approval_events().is_empty());
    r.ends_with(0).await;
}

#[tokio::test]
async fn a_component_cannot_show_one_body_and_send_another() {
    let r = rogue().await;
    let shown = connection_spec("shown-to-the-person", 1001);
    let sent = connection_spec("sent-instead", 1002);
    let (err, out) = r.call("rogue_switch", json!({"shown": shown, "sent": sent})).await;
    assert!(!err, "{out}");
    assert!(out["send_other_body"]["refused"].as_str().unwrap().contains("approval"), "{out}");
    // the approval sends the bytes the person saw, and nothing else
    assert_eq!(out["execute"]["status"], 201, "{out}");
    let created: serde_json::Value = serde_json::from_str(out["execute"]["body"].as_str().unwrap()).unwrap();
    assert_eq!(created["name"], "shown-to-the-person");
    let prompt = &r.client.prompt_texts()[0];
    assert!(prompt.contains("body.name: \"shown-to-the-person\"") && !prompt.contains("sent-instead"), "{prompt}");
    // the component's own words are shown as its words, below the host's rendering of the request
    let (host_part, component_part) = prompt.split_once("From the component").unwrap();
    assert!(component_part.contains("| price: USD 0.00/month") && !host_part.contains("USD 0.00/month"), "{prompt}");
    // the host's own price line is the plan's, from Fabric's price search
    let host_prices: Vec<&str> = host_part.lines().filter(|l| l.contains("price:")).collect();
    assert_eq!(host_prices.len(), 1, "{prompt}");
    assert!(host_prices[0].starts_with("  price: USD 300.00 per month"), "{prompt}");
    // the host audited the approval and the create, whatever the component reports
    assert_eq!(r.approval_events(), ["approval_minted", "create_sending", "create_outcome"]);
    let outcome = r.server.audit_entries().into_iter().find(|e| e["event"] == "create_outcome").unwrap();
    assert_eq!((outcome["outcome"].as_str(), outcome["tool"].as_str()), (Some("executed"), Some("rogue_switch")));
    assert_eq!(outcome["fabric_uuid"], created["uuid"]);
    r.ends_with(1).await;
}

#[tokio::test]
async fn an_approval_is_spent_once() {
    let r = rogue().await;
    let (err, out) = r.call("rogue_double_spend", json!({"body": connection_spec("twice", 1001)})).await;
    assert!(err, "the second spend must not succeed: {out}");
    assert_eq!(out["error"]["kind"], "component_failed");
    assert!(out["error"]["message"].as_str().unwrap().contains("a resource handle it does not hold"), "{out}");
    assert_eq!(r.approval_events(), ["approval_minted", "create_sending", "create_outcome"]);
    r.ends_with(1).await;
}

#[tokio::test]
async fn an_approval_dies_with_the_call_that_minted_it() {
    let r = rogue().await;
    let (err, out) = r.call("rogue_stash", json!({"body": connection_spec("kept", 1001)})).await;
    assert!(!err, "{out}");
    let (err, later) = r.call("rogue_use_stash", json!({"stash": out["stash"]})).await;
    assert!(err, "an approval from an earlier call must not be usable: {later}");
    assert!(later["error"]["message"].as_str().unwrap().contains("a resource handle it does not hold"), "{later}");
    assert_eq!(r.approval_events(), ["approval_minted"], "minted once, never sent");
    r.ends_with(0).await;
}

#[tokio::test]
async fn a_component_that_never_asks_cannot_create() {
    let r = rogue().await;
    for handle in [0, 1, 2] {
        let (err, out) =
            r.call("rogue_forge", json!({"body": connection_spec("forged", 1001), "handle": handle})).await;
        assert!(err, "a made-up approval must not work: {out}");
        assert!(out["error"]["message"].as_str().unwrap().contains("a resource handle it does not hold"), "{out}");
    }
    assert!(r.client.prompt_texts().is_empty(), "nobody was asked");
    assert!(r.approval_events().is_empty());
    r.ends_with(0).await;
}

#[tokio::test]
async fn a_call_may_put_only_one_question_before_the_person() {
    let r = rogue().await;
    let (err, out) = r.call("rogue_ask_twice", json!({"body": connection_spec("twice-asked", 1001)})).await;
    assert!(!err, "{out}");
    assert_eq!(out["first"]["approved"], true, "{out}");
    assert!(out["second"]["refused"].as_str().unwrap().contains("only one create"), "{out}");
    assert_eq!(r.client.prompt_texts().len(), 1);
    // the unused approval is gone with the call, and the log says so
    assert_eq!(r.approval_events(), ["approval_minted", "approval_discarded"]);
    r.ends_with(0).await;
}
