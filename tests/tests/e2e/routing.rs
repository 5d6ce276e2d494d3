//! The Fabric a network engineer runs, through the binary on the simulator: Cloud
//! Routers, their packages and route tables, each connection's routing protocols (which BGP
//! session is down, and why), BGP actions, the routes a connection received and advertised, and
//! a connection from a Cloud Router validated as Fabric validates it.

use crate::harness::*;
use equinix_fabric_sim::{FCR_CONNECTIONS, PROFILES, PROJECT_ID, ROUTERS};
use serde_json::{Value, json};

fn names(page: &Value, key: &str) -> Vec<String> {
    rows(page, key).iter().map(|r| r["name"].as_str().unwrap_or_default().to_string()).collect()
}

#[tokio::test]
async fn cloud_routers_their_packages_and_route_tables_are_found_by_what_an_engineer_knows() {
    let server = Launch::serve().args(&["--toolsets", "cloud_routers"]).stdio().await;
    // no project given: the search covers the projects of the organisation's ports, and says so
    let all = server.ok("fabric_search_cloud_routers", json!({})).await;
    assert_eq!(names(&all, "cloud_routers"), ["DC-FCR-01", "SV-FCR-01", "SV-FCR-02"], "{all}");
    assert_eq!(all["projects_searched"], json!([PROJECT_ID]));
    let dc = server.ok("fabric_search_cloud_routers", json!({"metro": "DC"})).await;
    let router = &rows(&dc, "cloud_routers")[0];
    assert_eq!((router["name"].as_str(), router["package"].as_str()), (Some("DC-FCR-01"), Some("STANDARD")));
    assert_eq!(router["connections_count"], FCR_CONNECTIONS.len());
    let provisioning = server.ok("fabric_search_cloud_routers", json!({"state": "PROVISIONING", "name": "FCR"})).await;
    assert_eq!(names(&provisioning, "cloud_routers"), ["SV-FCR-02"]);
    let given = server.ok("fabric_search_cloud_routers", json!({"project_id": PROJECT_ID, "metro": "SV"})).await;
    assert_eq!(given["total"], 2);
    assert!(given.get("projects_searched").is_none(), "only a search that chose the projects says which");

    let whole = server.ok("fabric_get_cloud_router", json!({"router_id": ROUTERS[0].uuid})).await;
    assert_eq!(whole["cloud_router"]["equinixAsn"], ROUTERS[0].asn);
    let packages = server.ok("fabric_list_cloud_router_packages", json!({})).await;
    let codes: Vec<Value> = rows(&packages, "packages").iter().map(|p| p["code"].clone()).collect();
    assert_eq!(codes, ["LAB", "BASIC", "STANDARD", "ADVANCED", "PREMIUM"]);
    let lab = server.ok("fabric_get_cloud_router_package", json!({"package_code": "LAB"})).await;
    assert_eq!(lab["package"]["vcBandwidthMax"], 50);

    let table = server.ok("fabric_search_cloud_router_routes", json!({"router_id": ROUTERS[0].uuid})).await;
    assert_eq!(table["total"], 4, "{table}");
    let learnt = server
        .ok(
            "fabric_search_cloud_router_routes",
            json!({"router_id": ROUTERS[0].uuid, "type": "IPv4_BGP_ROUTE", "prefix": "10.1"}),
        )
        .await;
    let bgp = rows(&learnt, "routes");
    assert_eq!(bgp.len(), 2, "{learnt}");
    assert!(bgp.iter().all(|r| r["next_hop"] == "169.254.10.2" && r["connection"] == "dc-fcr-to-aws"), "{learnt}");
    assert_eq!(bgp[0]["as_path"], "64512");

    // an id Fabric does not know points to the tool that lists valid ones
    let unknown = "00000000-0000-4000-8000-000000000000";
    let err = server.refused("fabric_search_cloud_router_routes", json!({"router_id": unknown})).await;
    assert!(err["next_step"].as_str().unwrap().contains("fabric_search_cloud_routers"), "{err}");
    let err = server.refused("fabric_get_cloud_router", json!({"router_id": unknown})).await;
    assert_eq!(err["status"], 404, "{err}");
    server.stop().await;
}

#[tokio::test]
async fn routing_protocols_say_which_bgp_session_is_down_and_why() {
    let server = Launch::serve().args(&["--toolsets", "routing"]).stdio().await;
    let (aws, azure) = (FCR_CONNECTIONS[0].0, FCR_CONNECTIONS[1].0);
    let up = server.ok("fabric_list_routing_protocols", json!({"connection_id": aws})).await;
    let up = rows(&up, "routing_protocols");
    let bgp = up.iter().find(|p| p["type"] == "BGP").expect("a BGP protocol");
    assert_eq!((bgp["bgp_ipv4_status"].as_str(), bgp["customer_asn"].as_u64()), (Some("UP"), Some(64512)));
    assert_eq!(bgp["ipv4_customer_peer"], "169.254.10.2");
    let direct = up.iter().find(|p| p["type"] == "DIRECT").expect("a DIRECT protocol");
    assert_eq!(direct["direct_ipv4"], "169.254.10.1/30");

    let down = server.ok("fabric_list_routing_protocols", json!({"connection_id": azure})).await;
    let down = rows(&down, "routing_protocols");
    let bgp = down.iter().find(|p| p["type"] == "BGP").expect("a BGP protocol");
    assert_eq!(bgp["bgp_ipv4_status"], "DOWN");
    let why = bgp["error"].as_str().expect("a down session says why");
    assert!(why.contains("hold timer expired") && why.contains("169.254.20.2"), "{why}");
    let id = bgp["uuid"].clone();
    let whole =
        server.ok("fabric_get_routing_protocol", json!({"connection_id": azure, "routing_protocol_id": id})).await;
    assert_eq!(whole["routing_protocol"]["bgpIpv4"]["operation"]["operationalStatus"], "DOWN");
    let actions =
        server.ok("fabric_list_bgp_actions", json!({"connection_id": azure, "routing_protocol_id": id})).await;
    let actions = rows(&actions, "bgp_actions");
    assert_eq!((actions[0]["type"].as_str(), actions[0]["state"].as_str()), (Some("RESET_BGPIPV4"), Some("SUCCEEDED")));

    let received =
        server.ok("fabric_search_connection_routes", json!({"connection_id": aws, "direction": "received"})).await;
    assert_eq!((received["total"].as_u64(), received["direction"].as_str()), (Some(2), Some("received")));
    let withdrawn = server
        .ok(
            "fabric_search_connection_routes",
            json!({"connection_id": azure, "direction": "advertised", "state": "INACTIVE"}),
        )
        .await;
    assert_eq!(withdrawn["total"], 2, "{withdrawn}");
    let none = server
        .ok(
            "fabric_search_connection_routes",
            json!({"connection_id": azure, "direction": "advertised", "state": "ACTIVE"}),
        )
        .await;
    assert_eq!(none["total"], 0, "nothing reaches Azure while its session is down: {none}");

    let unknown = "00000000-0000-4000-8000-000000000000";
    let err = server.refused("fabric_list_routing_protocols", json!({"connection_id": unknown})).await;
    assert!(err["next_step"].as_str().unwrap().contains("fabric_search_connections"), "{err}");
    let err = server
        .refused("fabric_get_routing_protocol", json!({"connection_id": aws, "routing_protocol_id": unknown}))
        .await;
    assert!(err["next_step"].as_str().unwrap().contains("fabric_list_routing_protocols"), "{err}");
    server.stop().await;
}

fn from_router(router: &str, kind: &str, bandwidth: u64, name: &str) -> Value {
    json!({"change_type": "connection_create", "spec": {
        "type": kind, "name": name, "bandwidth": bandwidth,
        "aSide": {"accessPoint": {"type": "CLOUD_ROUTER", "router": {"uuid": router}}},
        "zSide": {"accessPoint": {"type": "SP", "profile": {"type": "L2_PROFILE", "uuid": PROFILES[0].uuid},
                  "location": {"metroCode": "DC"}, "authenticationKey": "123456789012", "sellerRegion": "us-east-1"}},
        "notifications": [{"type": "ALL", "emails": ["noc@example.com"]}]}})
}

#[tokio::test]
async fn a_connection_from_a_cloud_router_is_validated_as_fabric_does_and_shows_up_on_it() {
    let server = Launch::serve()
        .args(&["--toolsets", "cloud_routers,connections,mutate"])
        .client(TestClient::accepting())
        .stdio()
        .await;
    // Fabric's dry run refuses these, and says why
    for (router, bandwidth, says) in [
        (ROUTERS[2].uuid, 50, "SV-FCR-02 is PROVISIONING"),
        (ROUTERS[1].uuid, 100, "LAB package allows connections of at most 50 Mbps"),
        ("00000000-0000-4000-8000-000000000000", 50, "does not exist"),
    ] {
        let err = server.refused("fabric_propose_change", from_router(router, "IP_VC", bandwidth, "refused")).await;
        let text = err.to_string();
        assert!(text.contains(says) && text.contains("no token was minted"), "{says}: {err}");
    }
    // the wrong type is refused before any dry run, naming the member (the simulator refuses it
    // too: the contract suite sends it there directly)
    let err = server.refused("fabric_propose_change", from_router(ROUTERS[0].uuid, "EVPL_VC", 50, "refused")).await;
    assert_eq!((err["kind"].as_str(), err["path"].as_str()), (Some("invalid_arguments"), Some("/spec/type")), "{err}");
    assert!(err["message"].as_str().unwrap().contains("is an IP_VC"), "{err}");
    let proposal = server.ok("fabric_propose_change", from_router(ROUTERS[0].uuid, "IP_VC", 50, "fcr-to-aws-2")).await;
    let done = server.ok("fabric_confirm_change", json!({"confirm_token": proposal["confirm_token"]})).await;
    assert_eq!(done["executed"], true, "{done}");
    let router = server.ok("fabric_get_cloud_router", json!({"router_id": ROUTERS[0].uuid})).await;
    assert_eq!(router["cloud_router"]["connectionsCount"], FCR_CONNECTIONS.len() + 1);
    let on_it = server.ok("fabric_search_connections", json!({"router_id": ROUTERS[0].uuid})).await;
    let mut found = names(&on_it, "connections");
    found.sort();
    assert_eq!(found, ["dc-fcr-to-aws", "dc-fcr-to-azure", "fcr-to-aws-2"]);
    server.stop().await;
}
