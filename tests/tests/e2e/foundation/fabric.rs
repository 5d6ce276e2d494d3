//! The `fabric` import: the allow-list, traps, and the OAuth token's life.

use super::*;

#[tokio::test]
async fn the_fabric_import_refuses_paths_off_the_allow_list_and_sends_nothing() {
    let sim = sim(SimConfig::default()).await;
    let server = Launch::probe().against(&sim).stdio().await;
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
    let server = Launch::serve()
        .args(&["--component", probe.to_str().unwrap(), "--toolsets", "probe,echo", "--guest-time-ms", "300"])
        .stdio()
        .await;
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
async fn a_bad_secret_is_reported_clearly_and_requested_exactly_once() {
    let sim = sim(SimConfig::default()).await;
    let server = Launch::serve().against(&sim).env(&[("EQUINIX_API_CLIENTSECRET", "not-the-secret")]).stdio().await;
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
    let server = Launch::serve().against(&sim).stdio().await;
    assert!(!is_error(&server.call("fabric_list_metros", json!({})).await));
    sim.inject(fabric_sim::Fault::status("GET /fabric/v4/metros", 401));
    assert!(!is_error(&server.call("fabric_list_metros", json!({})).await));
    let stats = sim.stats();
    assert_eq!(stats.token_requests, 2);
    assert_eq!(stats.requests.len(), 3);
    server.stop().await;
}
