//! The walking skeleton, end to end through the real binary.

use crate::harness::*;
use equinix_fabric_sim::{self as fabric_sim, SimConfig};
use serde_json::{Value, json};

#[tokio::test]
async fn stdio_client_lists_and_calls_metros_against_the_seeded_simulator() {
    let server = Launch::serve().stdio().await;
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
        let server = Launch::serve().args(extra).stdio().await;
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
    let server = Launch::serve().against(&sim).stdio().await;
    let page = structured(&server.call("fabric_list_metros", json!({"limit": 20})).await);
    assert_eq!(page["returned"], 20, "{}", &page.to_string()[..page.to_string().len().min(300)]);
    assert_eq!(rows(&page, "metros")[19]["name"].as_str().map(str::len), Some(100_000));
    server.stop().await;
}

#[tokio::test]
async fn arguments_are_validated_before_the_component_or_fabric_sees_them() {
    let sim = sim(SimConfig::default()).await;
    let server = Launch::serve().against(&sim).stdio().await;
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
    let server = Launch::serve().against(&sim).stdio().await;
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
mod component;
mod fabric;
