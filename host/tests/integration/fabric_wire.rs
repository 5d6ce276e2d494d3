//! The Fabric client reaches the embedded simulator two ways: over loopback HTTP through reqwest
//! (the path real Fabric takes) and in process (no socket). Every test here runs the same
//! requests through both and expects the same outcome, so the shortcut the server takes with
//! `--fabric-sim` cannot drift from the network client.

use std::time::Duration;

use equinix_fabric_sim::{self as fabric_sim, Fault, FaultMode, PORTS, SimConfig, SimHandle};
use equinix_mcp::fabric_client::{ApiRequest, Credentials, FabricClient, FabricConfig, Method, SendError};
use equinix_mcp::secret::Secret;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

async fn simulator(config: SimConfig) -> SimHandle {
    fabric_sim::start("127.0.0.1:0".parse().unwrap(), config).await.unwrap()
}

/// A network client and an in-process client for `sim`, both built from `tweak`ed settings.
fn both(sim: &SimHandle, tweak: impl Fn(&mut FabricConfig)) -> [(&'static str, FabricClient); 2] {
    let credentials = Credentials {
        client_id: fabric_sim::SIM_CLIENT_ID.into(),
        client_secret: Secret::new(fabric_sim::SIM_CLIENT_SECRET),
    };
    let mut config = FabricConfig::new(sim.base_url(), Some(credentials));
    tweak(&mut config);
    let network = FabricClient::new(config.clone());
    let in_process = FabricClient::in_process(config, sim.router(), sim.base_url());
    assert!(!network.is_in_process() && in_process.is_in_process());
    [("network", network), ("in-process", in_process)]
}

fn get(path: &str, query: &[(&str, &str)]) -> ApiRequest {
    ApiRequest {
        method: Method::Get,
        path: path.into(),
        query: query.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
        body: None,
    }
}

async fn send(client: &FabricClient, req: &ApiRequest) -> Result<(u16, Value, String), SendError> {
    let r = client.send(req, &CancellationToken::new()).await?;
    Ok((r.status, serde_json::from_str(&r.body).unwrap(), r.correlation_id))
}

#[tokio::test]
async fn both_wires_give_the_same_answers_and_the_simulator_sees_the_same_requests() {
    let sim = simulator(SimConfig::default()).await;
    let port = PORTS[0].0;
    let search = ApiRequest {
        method: Method::Post,
        path: "/fabric/v4/ports/search".into(),
        query: vec![],
        body: Some(json!({"filter": {"and": [{"property": "/uuid", "operator": "=", "values": [port]}]}}).to_string()),
    };
    // each request with the query string the simulator must see: form-urlencoded, as reqwest's
    // `.query()` sent it before the in-process wire existed
    let requests = [
        (get("/fabric/v4/metros", &[("offset", "1"), ("limit", "3")]), "offset=1&limit=3"),
        (get("/fabric/v4/metros", &[("presence", "MY_PORTS")]), "presence=MY_PORTS"),
        (get("/fabric/v4/metros", &[("presence", "MY PORTS&x=1/é+")]), "presence=MY+PORTS%26x%3D1%2F%C3%A9%2B"),
        (search, ""),
        (get(&format!("/fabric/v4/ports/{port}"), &[]), ""),
        (get("/fabric/v4/ports/00000000-0000-0000-0000-000000000000", &[]), ""),
    ];
    let mut answers: Vec<Vec<(u16, Value)>> = Vec::new();
    for (wire, client) in both(&sim, |_| {}) {
        let mut mine = Vec::new();
        for (req, query) in &requests {
            let (status, mut body, correlation_id) = send(&client, req).await.unwrap();
            let seen = sim.stats().requests.back().cloned().unwrap();
            assert_eq!(seen.path, req.path, "{wire}");
            assert_eq!(seen.correlation_id.as_deref(), Some(correlation_id.as_str()), "{wire}: header lost");
            assert_eq!(seen.query, *query, "{wire}: query encoded differently");
            // Fabric's error bodies carry their own random correlation id
            if let Some(errors) = body.as_array_mut() {
                errors.iter_mut().for_each(|e| e["correlationId"] = Value::Null);
            }
            mine.push((status, body));
        }
        answers.push(mine);
    }
    assert_eq!(answers[0], answers[1]);
    let statuses: Vec<u16> = answers[0].iter().map(|(s, _)| *s).collect();
    // the contract declares 400, not 404, for an unknown port
    assert_eq!(statuses, [200, 200, 400, 200, 200, 400]);
    assert_eq!(answers[0][0].1["data"].as_array().unwrap().len(), 3);
    assert_eq!(sim.stats().token_requests, 2, "each client fetched its own token through its own wire");
}

#[tokio::test]
async fn both_wires_enforce_the_response_cap() {
    let sim = simulator(SimConfig::default()).await;
    for (wire, client) in both(&sim, |c| c.max_response_bytes = 200) {
        let err = send(&client, &get("/fabric/v4/metros", &[])).await.unwrap_err();
        match err {
            SendError::Transport(why) => assert!(why.contains("exceeded the 200 byte limit"), "{wire}: {why}"),
            other => panic!("{wire}: {other:?}"),
        }
    }
}

#[tokio::test]
async fn both_wires_time_out_a_slow_answer() {
    let sim = simulator(SimConfig { latency: Duration::from_millis(1500), ..Default::default() }).await;
    for (wire, client) in both(&sim, |c| c.request_timeout = Duration::from_millis(150)) {
        let started = std::time::Instant::now();
        let err = send(&client, &get("/fabric/v4/metros", &[])).await.unwrap_err();
        assert!(matches!(err, SendError::Timeout), "{wire}: {err:?}");
        assert!(started.elapsed() < Duration::from_millis(1200), "{wire}: waited for the answer");
    }
}

#[tokio::test]
async fn a_broken_answer_is_asked_again_once_for_a_read_on_both_wires() {
    let sim = simulator(SimConfig::default()).await;
    let drop = |times| Fault { mode: FaultMode::Drop, times, ..Fault::status("GET /fabric/v4/metros", 200) };
    for (wire, client) in both(&sim, |_| {}) {
        sim.inject(drop(1));
        let (status, _, _) = send(&client, &get("/fabric/v4/metros", &[])).await.unwrap();
        assert_eq!(status, 200, "{wire}: the second attempt should have answered");
        sim.inject(drop(2));
        let err = send(&client, &get("/fabric/v4/metros", &[])).await.unwrap_err();
        assert!(matches!(err, SendError::Transport(_)), "{wire}: {err:?}");
    }
}

#[tokio::test]
async fn both_wires_remember_rejected_credentials() {
    let sim = simulator(SimConfig::default()).await;
    for (wire, client) in both(&sim, |c| {
        c.credentials.as_mut().unwrap().client_secret = Secret::new("not-the-secret");
    }) {
        for _ in 0..2 {
            match send(&client, &get("/fabric/v4/metros", &[])).await.unwrap_err() {
                SendError::Unavailable(why) => {
                    assert!(why.contains("rejected the client credentials"), "{wire}: {why}")
                }
                other => panic!("{wire}: {other:?}"),
            }
        }
    }
    assert_eq!(sim.stats().token_rejections, 2, "one rejected attempt per client, never a second");
}

#[tokio::test]
async fn the_token_is_fetched_once_and_reused_until_near_expiry_on_the_servers_clock() {
    // A 60 s token is refreshed 6 s before it expires: by the clock the server's TTL rules use
    // (the simulator's clock knob moves it), so no test waits the seconds out. The clock also
    // runs in real time, so each step keeps seconds of margin for a slow machine.
    for wire in ["network", "in-process"] {
        let sim = simulator(SimConfig { token_timeout_secs: 60, ..Default::default() }).await;
        let clock = equinix_mcp::clock::Clock::default();
        let [network, in_process] = both(&sim, |c| c.clock = clock.clone());
        let client = if wire == "network" { network.1 } else { in_process.1 };
        let metros = get("/fabric/v4/metros", &[("limit", "1")]);
        for _ in 0..3 {
            assert_eq!(send(&client, &metros).await.unwrap().0, 200, "{wire}");
        }
        assert_eq!(sim.stats().token_requests, 1, "{wire}: one fetch for three requests");
        clock.advance(50_000);
        assert_eq!(send(&client, &metros).await.unwrap().0, 200, "{wire}");
        assert_eq!(sim.stats().token_requests, 1, "{wire}: not yet within a tenth of its lifetime");
        clock.advance(5_000);
        assert_eq!(send(&client, &metros).await.unwrap().0, 200, "{wire}");
        assert_eq!(sim.stats().token_requests, 2, "{wire}: refreshed before expiry");
        assert_eq!(sim.stats().requests.len(), 5, "{wire}: no 401 round trips were needed");
    }
}
