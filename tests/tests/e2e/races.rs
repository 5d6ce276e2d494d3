//! Single use under races and capacity under concurrency.
//! `EQUINIX_MCP_RACE_TRIALS` raises the trial count for the campaign (default 10 here).

use std::collections::HashSet;

use crate::harness::*;
use equinix_fabric_sim as fabric_sim;
use serde_json::{Value, json};

fn spec(name: &str, vlan: u64) -> Value {
    json!({"type": "EVPL_VC", "name": name, "bandwidth": 100,
           "aSide": {"accessPoint": {"type": "COLO", "port": {"uuid": fabric_sim::PORTS[1].0}, "linkProtocol": {"type": "DOT1Q", "vlanTag": vlan}}},
           "zSide": {"accessPoint": {"type": "COLO", "port": {"uuid": fabric_sim::PORTS[4].0}, "linkProtocol": {"type": "DOT1Q", "vlanTag": vlan}}},
           "notifications": [{"type": "ALL", "emails": ["noc@example.com"]}]})
}

#[tokio::test]
async fn eight_concurrent_confirms_of_one_token_create_exactly_once() {
    let trials: u64 = std::env::var("EQUINIX_MCP_RACE_TRIALS").ok().and_then(|v| v.parse().ok()).unwrap_or(10);
    let server = Launch::serve().args(&["--toolsets", "mutate"]).client(TestClient::accepting()).stdio().await;
    let sim = embedded_sim_url(&server).await;
    for trial in 0..trials {
        let p = server
            .call(
                "fabric_propose_change",
                json!({"change_type": "connection_create", "spec": spec(&format!("race-{trial}"), 2 + trial)}),
            )
            .await;
        let token = structured(&p)["confirm_token"].clone();
        let calls = (0..8).map(|_| server.call("fabric_confirm_change", json!({"confirm_token": token})));
        let results = futures_util::future::join_all(calls).await;
        let executed = results.iter().filter(|r| structured(r)["executed"] == true).count();
        let replayed = results.iter().filter(|r| structured(r)["error"]["kind"] == "replayed_token").count();
        assert_eq!((executed, replayed), (1, 7), "trial {trial}");
        assert_eq!(
            creates(&sim, "connections").await,
            trial + 1,
            "trial {trial}: exactly one create reached the simulator"
        );
    }
    eprintln!(
        "CAMPAIGN|single use: 8 concurrent confirms per token|{trials} trials|{trials} creates for {trials} tokens, 0 duplicates"
    );
    server.stop().await;
}

#[tokio::test]
async fn concurrent_proposes_past_capacity_keep_twenty_and_report_each_eviction_once() {
    let server =
        Launch::serve().args(&["--toolsets", "mutate"]).client(TestClient::answering(Answer::Decline)).stdio().await;
    let calls = (0..40u64).map(|i| {
        server.call(
            "fabric_propose_change",
            json!({"change_type": "connection_create", "spec": spec(&format!("cap-{i}"), 200 + i)}),
        )
    });
    let results = futures_util::future::join_all(calls).await;
    let tokens: Vec<String> =
        results.iter().map(|r| structured(r)["confirm_token"].as_str().unwrap().to_string()).collect();
    let mut reported = Vec::new();
    for r in &results {
        reported.extend(
            structured(r)["evicted_proposals"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|t| t.as_str().unwrap().to_string()),
        );
    }
    let unique: HashSet<&String> = reported.iter().collect();
    assert_eq!(reported.len(), 20, "every eviction is reported");
    assert_eq!(unique.len(), 20, "and only once");
    let mut pending = 0;
    for t in &tokens {
        let out = structured(&server.call("fabric_confirm_change", json!({"confirm_token": t})).await);
        if unique.contains(t) {
            assert_eq!(out["error"]["kind"], "evicted_token");
        } else {
            assert_eq!(out["human_confirmation"]["status"], "declined");
            pending += 1;
        }
    }
    assert_eq!(pending, 20, "exactly 20 proposals were pending");
    eprintln!("CAMPAIGN|capacity: 40 concurrent proposes|20 pending|20 evictions, each reported once");
    server.stop().await;
}
