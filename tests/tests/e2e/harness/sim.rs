//! The Fabric simulator as tests use it: one in this process (its counters readable), or the
//! server's embedded one through its `/_sim` routes.

use equinix_fabric_sim::{self as fabric_sim, SimConfig, SimHandle};
use serde_json::{Value, json};

use super::launch::Server;

/// A simulator in this test process, so the test can read its counters.
pub async fn sim(config: SimConfig) -> SimHandle {
    fabric_sim::start("127.0.0.1:0".parse().unwrap(), config).await.unwrap()
}

/// Environment pointing the server at `sim` with the simulator's credentials.
pub fn sim_env(sim: &SimHandle) -> Vec<(String, String)> {
    vec![
        ("EQUINIX_API_ENDPOINT".into(), sim.base_url()),
        ("EQUINIX_API_CLIENTID".into(), fabric_sim::SIM_CLIENT_ID.into()),
        ("EQUINIX_API_CLIENTSECRET".into(), fabric_sim::SIM_CLIENT_SECRET.into()),
    ]
}

/// The embedded simulator's base URL, read from the server's banner.
pub async fn embedded_sim_url(server: &Server) -> String {
    let what = "the simulator's address in the server's banner";
    super::wait::until_some(what, super::wait::WITHIN, async || {
        let text = server.stderr_text();
        let at = text.find("simulator at ")?;
        Some(text[at + "simulator at ".len()..].split([' ', '\n']).next().unwrap().to_string())
    })
    .await
}

/// Moves the embedded simulator's (and so the server's) clock forward.
pub async fn advance_clock(sim_url: &str, ms: u64) {
    let r = http().post(format!("{sim_url}/_sim/clock")).json(&json!({"advance_ms": ms})).send().await.unwrap();
    assert!(r.status().is_success());
}

/// The embedded simulator's counters.
pub async fn sim_stats(sim_url: &str) -> Value {
    http().get(format!("{sim_url}/_sim/stats")).send().await.unwrap().json().await.unwrap()
}

/// Real creates the simulator received for `collection` (`connections`, ...).
pub async fn creates(sim_url: &str, collection: &str) -> u64 {
    sim_stats(sim_url).await["creates"][collection].as_u64().unwrap_or(0)
}

/// Real connection creates an in-process simulator completed.
pub fn connection_creates(sim: &SimHandle) -> u64 {
    sim.stats().creates.get("connections").copied().unwrap_or(0)
}

/// How many create requests (not dry runs) `sim` received for each connection name: a name seen
/// twice is a proposal created twice.
pub fn connection_create_names(sim: &SimHandle) -> std::collections::BTreeMap<String, usize> {
    let mut names = std::collections::BTreeMap::new();
    let stats = sim.stats();
    let creates = stats.requests.iter().filter(|r| r.method == "POST" && r.path == "/fabric/v4/connections");
    for seen in creates.filter(|r| r.query.is_empty()) {
        let body: Value = serde_json::from_str(seen.body.as_deref().unwrap()).unwrap();
        *names.entry(body["name"].as_str().unwrap().to_string()).or_default() += 1;
    }
    names
}

/// Connection create requests (not dry runs) an in-process simulator received, completed or not.
pub fn connection_create_requests(sim: &SimHandle) -> usize {
    sim.stats()
        .requests
        .iter()
        .filter(|r| r.method == "POST" && r.path == "/fabric/v4/connections" && r.query.is_empty())
        .count()
}

/// Queues a fault in the embedded simulator.
pub async fn inject(sim_url: &str, fault: Value) {
    let r = http().post(format!("{sim_url}/_sim/faults")).json(&fault).send().await.unwrap();
    assert!(r.status().is_success());
}

/// An HTTP client for the simulator's admin routes.
pub fn http() -> reqwest::Client {
    equinix_mcp::install_crypto_provider();
    reqwest::Client::new()
}
