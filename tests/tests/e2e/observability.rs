//! What an engineer reads when traffic stops, through the binary on the simulator: a
//! port's and a connection's traffic over a window stated simply, the cloud events on an asset,
//! where a service profile is offered, and the connections of a network.

use crate::harness::*;
use equinix_fabric_sim::{FCR_CONNECTIONS, PORTS, PROFILES};
use serde_json::json;

const UNKNOWN: &str = "00000000-0000-4000-8000-000000000000";

#[tokio::test]
async fn traffic_of_a_port_and_a_connection_over_a_window_stated_simply() {
    let server = Launch::serve().args(&["--toolsets", "statistics"]).stdio().await;
    // the failing optic: erred packets in, none out
    let sec = server.ok("fabric_get_port_statistics", json!({"port_id": PORTS[1].0})).await;
    println!("port statistics: {} bytes", sec.to_string().len());
    assert_eq!((sec["port"]["name"].as_str(), sec["window"]["interval"].as_str()), (Some("DC-SEC-01"), Some("PT5M")));
    assert!(sec["inbound"]["erred_packets"].as_u64().unwrap() > 0, "{sec}");
    assert_eq!(sec["outbound"]["erred_packets"], 0, "{sec}");
    let mean = sec["inbound"]["mean_mbps"].as_f64().unwrap();
    assert!(mean > 0.0 && sec["inbound"]["peak_mbps"].as_f64().unwrap() >= mean, "{sec}");
    assert!(sec["inbound"]["mean_percent"].as_f64().unwrap() < 100.0, "{sec}");

    // a day at one o'clock in the morning and one in the afternoon read differently
    let at = |start: &str, end: &str| json!({"port_id": PORTS[0].0, "start": start, "end": end});
    let night = server.ok("fabric_get_port_statistics", at("2026-11-20T01:00:00Z", "2026-11-20T02:00:00Z")).await;
    let day = server.ok("fabric_get_port_statistics", at("2026-11-20T14:00:00Z", "2026-11-20T15:00:00Z")).await;
    let mean = |v: &serde_json::Value| v["inbound"]["mean_mbps"].as_f64().unwrap_or_else(|| panic!("a mean: {v}"));
    assert!(mean(&day) > mean(&night), "{day} {night}");
    assert_eq!(day["window"]["start"], "2026-11-20T14:00:00.000Z");
    let week = server.ok("fabric_get_port_statistics", json!({"port_id": PORTS[0].0, "window": "7d"})).await;
    assert_eq!(week["window"]["interval"], "PT1H", "{week}");

    // the AWS connection runs at its limit and drops the excess; Azure, its BGP down, carries nothing
    let (aws, azure) = (FCR_CONNECTIONS[0].0, FCR_CONNECTIONS[1].0);
    let busy = server.ok("fabric_get_connection_statistics", json!({"connection_id": aws, "window": "24h"})).await;
    assert_eq!(
        (busy["connection"]["bandwidth_mbps"].as_u64(), busy["connection"]["view_point"].as_str()),
        (Some(50), Some("aSide"))
    );
    assert!(busy["inbound"]["dropped_over_rate_limit"].as_u64().unwrap() > 0, "{busy}");
    assert!(busy["inbound"]["peak_percent"].as_f64().unwrap() <= 100.0, "{busy}");
    let silent = server.ok("fabric_get_connection_statistics", json!({"connection_id": azure})).await;
    assert_eq!(
        (silent["inbound"]["mean_mbps"].as_f64(), silent["outbound"]["mean_mbps"].as_f64()),
        (Some(0.0), Some(0.0))
    );
    let far = server.ok("fabric_get_connection_statistics", json!({"connection_id": aws, "view_point": "zSide"})).await;
    assert_eq!(far["connection"]["view_point"], "zSide");
    assert_eq!(far["inbound"]["dropped_over_rate_limit"], 0, "the rate limit bites at the A-side: {far}");

    for (args, path) in [
        (json!({"port_id": PORTS[0].0, "window": "1h", "start": "2026-11-20T01:00:00Z"}), "/window"),
        (json!({"port_id": PORTS[0].0, "end": "2026-11-20T01:00:00Z"}), "/end"),
        (json!({"port_id": PORTS[0].0, "start": "2026-11-20T03:00:00Z", "end": "2026-11-20T02:00:00Z"}), "/start"),
        (json!({"port_id": PORTS[0].0, "start": "last tuesday"}), "/start"),
        (json!({"port_id": PORTS[0].0, "window": "2h"}), "/window"),
    ] {
        let err = server.refused("fabric_get_port_statistics", args.clone()).await;
        assert!(err.to_string().contains(path), "{args}: {err}");
    }
    let err = server.refused("fabric_get_connection_statistics", json!({"connection_id": UNKNOWN})).await;
    assert!(err["next_step"].as_str().unwrap().contains("fabric_search_connections"), "{err}");
    let err = server.refused("fabric_get_port_statistics", json!({"port_id": UNKNOWN})).await;
    assert!(err["next_step"].as_str().unwrap().contains("fabric_search_ports"), "{err}");
    server.stop().await;
}

#[tokio::test]
async fn the_events_on_a_connection_explain_why_its_bgp_session_is_down() {
    let server = Launch::serve().args(&["--toolsets", "events"]).stdio().await;
    let azure = FCR_CONNECTIONS[1].0;
    let on_it = server.ok("fabric_search_events", json!({"asset_id": azure})).await;
    let events = rows(&on_it, "events");
    assert_eq!(on_it["total"], 5, "{on_it}");
    // newest first: down again after the reset, connecting, down, established, provisioned
    let kinds: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap_or_default()).collect();
    assert_eq!(kinds[0], "connection_bgpipv4_session.status.idle", "{on_it}");
    assert_eq!(kinds[4], "connection.state.provisioned", "{on_it}");
    let errors = server.ok("fabric_search_events", json!({"asset_id": azure, "severity": "ERROR"})).await;
    assert_eq!(errors["total"], 2, "{errors}");
    let first_down = &rows(&errors, "events")[1];
    let whole = server.ok("fabric_get_event", json!({"event_id": first_down["id"]})).await;
    let message = whole["event"]["data"]["message"].as_str().unwrap();
    assert!(message.contains("hold timer expired"), "{message}");
    assert_eq!(whole["event"]["time"], equinix_fabric_sim::routing::AZURE_BGP_DOWN_AT);

    // by type, across assets; a window narrows to what happened in it
    let bgp = server.ok("fabric_search_events", json!({"type": "BGP"})).await;
    assert_eq!(bgp["total"], 5, "{bgp}");
    let morning = json!({"type": "bgp", "start": "2026-12-01T06:00:00Z", "end": "2026-12-01T06:20:00Z"});
    let morning = server.ok("fabric_search_events", morning).await;
    assert_eq!(morning["total"], 1, "{morning}");
    let page = server.ok("fabric_search_events", json!({"limit": 20})).await;
    let text = serde_json::to_string(&page).unwrap();
    println!("a page of 20 events: {} bytes", text.len());
    assert_eq!(page["returned"], 20, "{page}");

    let err = server.refused("fabric_get_event", json!({"event_id": UNKNOWN})).await;
    assert!(err["next_step"].as_str().unwrap().contains("fabric_search_events"), "{err}");
    server.stop().await;
}

#[tokio::test]
async fn where_a_profile_is_offered_and_the_connections_of_a_network() {
    let server = Launch::serve()
        .args(&["--toolsets", "service_profiles,networks,mutate"])
        .client(TestClient::accepting())
        .stdio()
        .await;
    let aws = &PROFILES[0];
    let metros = server.ok("fabric_list_service_profile_metros", json!({"profile_id": aws.uuid})).await;
    let codes: Vec<String> = rows(&metros, "metros").iter().map(|m| m["code"].as_str().unwrap().to_string()).collect();
    assert_eq!(codes, aws.metros, "{metros}");
    assert_eq!(rows(&metros, "metros")[0]["name"], "Ashburn", "{metros}");
    assert!(metros.to_string().contains("us-east-1"), "seller regions are named: {metros}");
    let err = server.refused("fabric_list_service_profile_metros", json!({"profile_id": UNKNOWN})).await;
    assert!(err["next_step"].as_str().unwrap().contains("fabric_search_service_profiles"), "{err}");

    // a network with a connection on it, both made through the broker
    let spec = json!({"type": "EVPLAN", "name": "lab-net", "scope": "REGIONAL", "location": {"region": "AMER"},
                      "notifications": [{"type": "ALL", "emails": ["noc@example.com"]}], "project": {"projectId": equinix_fabric_sim::PROJECT_ID}});
    let proposal = server.ok("fabric_propose_change", json!({"change_type": "network_create", "spec": spec})).await;
    let done = server.ok("fabric_confirm_change", json!({"confirm_token": proposal["confirm_token"]})).await;
    let network = done["created"]["uuid"].as_str().unwrap_or_else(|| panic!("{done}")).to_string();
    let empty = server.ok("fabric_list_network_connections", json!({"network_id": network})).await;
    assert_eq!(empty["total"], 0, "{empty}");
    let mut spec = connection_spec("onto-the-network", 1400);
    spec["type"] = json!("EVPLAN_VC");
    spec["zSide"] = json!({"accessPoint": {"type": "NETWORK", "network": {"uuid": network}}});
    let proposal = server.ok("fabric_propose_change", json!({"change_type": "connection_create", "spec": spec})).await;
    server.ok("fabric_confirm_change", json!({"confirm_token": proposal["confirm_token"]})).await;
    let on_it = server.ok("fabric_list_network_connections", json!({"network_id": network})).await;
    assert_eq!(rows(&on_it, "connections")[0]["name"], "onto-the-network", "{on_it}");
    let err = server.refused("fabric_list_network_connections", json!({"network_id": UNKNOWN})).await;
    assert_eq!(err["status"], 404, "{err}");
    server.stop().await;
}
