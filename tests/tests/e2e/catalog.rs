//! The read-only catalog end to end through the binary on the simulator.

use crate::harness::*;
use equinix_fabric_sim as fabric_sim;
use equinix_fabric_sim::{PORTS, PROFILES, SimConfig};
use serde_json::{Value, json};

/// What is served when the operator names no toolset: the everyday ones.
const DEFAULT: &[(&str, &str)] = &[
    ("fabric_list_metros", "metros"),
    ("fabric_search_ports", "ports"),
    ("fabric_get_port", "ports"),
    ("fabric_list_port_vlans", "ports"),
    ("fabric_search_service_profiles", "service_profiles"),
    ("fabric_get_service_profile", "service_profiles"),
    ("fabric_list_service_profile_metros", "service_profiles"),
    ("fabric_search_connections", "connections"),
    ("fabric_get_connection", "connections"),
    ("fabric_search_cloud_routers", "cloud_routers"),
    ("fabric_get_cloud_router", "cloud_routers"),
    ("fabric_list_cloud_router_packages", "cloud_routers"),
    ("fabric_get_cloud_router_package", "cloud_routers"),
    ("fabric_search_cloud_router_routes", "cloud_routers"),
];

/// The read tools served only when named (or with `all`).
const NAMED: &[(&str, &str)] = &[
    ("fabric_search_networks", "networks"),
    ("fabric_get_network", "networks"),
    ("fabric_list_network_connections", "networks"),
    ("fabric_search_service_tokens", "service_tokens"),
    ("fabric_get_service_token", "service_tokens"),
    ("fabric_search_prices", "pricing"),
    ("fabric_list_routing_protocols", "routing"),
    ("fabric_get_routing_protocol", "routing"),
    ("fabric_list_bgp_actions", "routing"),
    ("fabric_search_connection_routes", "routing"),
    ("fabric_search_route_filters", "route_filters"),
    ("fabric_get_route_filter", "route_filters"),
    ("fabric_list_route_filter_rules", "route_filters"),
    ("fabric_list_connection_route_filters", "route_filters"),
    ("fabric_search_route_aggregations", "route_aggregations"),
    ("fabric_get_route_aggregation", "route_aggregations"),
    ("fabric_list_route_aggregation_rules", "route_aggregations"),
    ("fabric_list_connection_route_aggregations", "route_aggregations"),
    ("fabric_get_port_statistics", "statistics"),
    ("fabric_get_connection_statistics", "statistics"),
    ("fabric_search_events", "events"),
    ("fabric_get_event", "events"),
];

#[tokio::test]
async fn the_everyday_toolsets_are_served_by_default_and_every_read_tool_with_all() {
    for (toolsets, expected) in [(None, DEFAULT.to_vec()), (Some("all"), [DEFAULT, NAMED].concat())] {
        let server = match toolsets {
            None => Launch::serve().stdio().await,
            Some(t) => Launch::serve().args(&["--toolsets", t]).stdio().await,
        };
        let tools = server.client.list_all_tools().await.unwrap();
        let served: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
        assert_eq!(served.len(), expected.len(), "{toolsets:?}: {served:?}");
        for (name, _) in &expected {
            let t = tools.iter().find(|t| t.name == *name).unwrap_or_else(|| panic!("{name} not served"));
            let a = t.annotations.as_ref().unwrap();
            assert_eq!(a.read_only_hint, Some(true), "{name}");
            assert!(t.title.as_deref().is_some_and(|x| !x.is_empty()), "{name} has a title");
            assert!(t.output_schema.is_some(), "{name} has an output schema");
            for (arg, p) in t.input_schema["properties"].as_object().unwrap() {
                assert!(p["description"].as_str().is_some_and(|d| !d.is_empty()), "{name}.{arg} is described");
            }
        }
        server.stop().await;
    }
}

#[tokio::test]
async fn toolset_selection_serves_only_the_named_toolsets() {
    let server = Launch::serve().args(&["--toolsets", "ports"]).stdio().await;
    let mut names: Vec<String> =
        server.client.list_all_tools().await.unwrap().into_iter().map(|t| t.name.to_string()).collect();
    names.sort();
    assert_eq!(names, vec!["fabric_get_port", "fabric_list_port_vlans", "fabric_search_ports"]);
    let r = server.client.call_tool(rmcp::model::CallToolRequestParams::new("fabric_list_metros")).await;
    assert!(r.is_err(), "a tool outside the served toolsets is unknown");
    server.stop().await;

    let server = Launch::serve().args(&["--toolsets", "connections,mutate"]).stdio().await;
    let mut names: Vec<String> =
        server.client.list_all_tools().await.unwrap().into_iter().map(|t| t.name.to_string()).collect();
    names.sort();
    assert_eq!(
        names,
        vec!["fabric_confirm_change", "fabric_get_connection", "fabric_propose_change", "fabric_search_connections"]
    );
    server.stop().await;
}

#[tokio::test]
async fn each_read_tool_answers_from_the_seeded_estate() {
    let server = Launch::serve().args(&["--toolsets", "all"]).stdio().await;
    let (dc_pri, ..) = PORTS[0];
    let ports = server.ok("fabric_search_ports", json!({"metro": "DC"})).await;
    assert_eq!(ports["total"], 3);
    assert!(rows(&ports, "ports").iter().all(|p| p["metro"] == "DC"));
    let port = server.ok("fabric_get_port", json!({"port_id": dc_pri})).await;
    assert_eq!(
        (port["port"]["name"].as_str(), port["port"]["encapsulation"]["type"].as_str(), port["port"]["type"].as_str()),
        (Some("DC-PRI-01"), Some("DOT1Q"), Some("XF_PORT")),
        "a get returns Fabric's whole object"
    );

    let vlans = server.ok("fabric_list_port_vlans", json!({"port_id": dc_pri})).await;
    let used: Vec<u64> = rows(&vlans, "vlans_in_use").iter().map(|v| v["vlan_tag"].as_u64().unwrap()).collect();
    assert_eq!(used, vec![100, 101]);

    let profiles = server.ok("fabric_search_service_profiles", json!({"metro": "SV"})).await;
    let names: Vec<String> =
        rows(&profiles, "service_profiles").iter().map(|p| p["name"].as_str().unwrap().to_string()).collect();
    assert_eq!(names, vec!["AWS Direct Connect", "Acme Private Exchange"]);
    let aws = server.ok("fabric_get_service_profile", json!({"profile_id": PROFILES[0].uuid})).await;
    let codes: Vec<&Value> = aws["service_profile"]["metros"].as_array().unwrap().iter().map(|m| &m["code"]).collect();
    assert_eq!(codes, [&json!("DC"), &json!("SV"), &json!("LD")]);

    let conns = server.ok("fabric_search_connections", json!({"port_id": dc_pri})).await;
    assert_eq!(conns["total"], 2);
    let first = rows(&conns, "connections")[0]["uuid"].as_str().unwrap().to_string();
    assert_eq!(rows(&conns, "connections")[0]["a_side"], "DC-PRI-01 VLAN 100", "a side in words, by port name");
    let one = server.ok("fabric_get_connection", json!({"connection_id": first})).await;
    assert_eq!(one["connection"]["state"], "ACTIVE");

    assert_eq!(server.ok("fabric_search_networks", json!({})).await["total"], 0);
    assert_eq!(server.ok("fabric_search_service_tokens", json!({"state": "ACTIVE"})).await["total"], 0);

    let price = server
        .ok("fabric_search_prices", json!({"connection_type": "EVPL_VC", "bandwidth": 1000, "a_side_metro": "DC"}))
        .await;
    assert_eq!(rows(&price, "prices")[0]["monthly_recurring"], 300.0);
    assert_eq!(rows(&price, "prices")[0]["currency"], "USD");
    let none = server.ok("fabric_search_prices", json!({"connection_type": "EVPL_VC", "bandwidth": 777})).await;
    assert_eq!(none["returned"], 0);
    assert!(none["note"].as_str().is_some());
    server.stop().await;
}

#[tokio::test]
async fn paging_walks_every_page_without_losing_rows() {
    let server = Launch::serve().stdio().await;
    let mut offset = json!(0);
    let mut seen = Vec::new();
    let mut pages = 0;
    while let Some(o) = offset.as_u64() {
        let page = server.ok("fabric_search_ports", json!({"limit": 2, "offset": o})).await;
        seen.extend(rows(&page, "ports").iter().map(|p| p["uuid"].as_str().unwrap().to_string()));
        assert_eq!(page["total"], PORTS.len());
        offset = page["next_offset"].clone();
        pages += 1;
    }
    assert_eq!(pages, 3);
    let expected: Vec<String> = PORTS.iter().map(|p| p.0.to_string()).collect();
    assert_eq!(seen, expected);
    server.stop().await;
}

#[tokio::test]
async fn fabric_errors_come_back_as_tool_errors_and_bad_uuids_send_nothing() {
    let sim = sim(SimConfig::default()).await;
    let server = Launch::serve().against(&sim).args(&["--toolsets", "all"]).stdio().await;
    // an unknown id answers as the contract declares: 400 for ports, profiles and tokens, 404
    // for connections and networks
    let unknown = "00000000-0000-4000-8000-000000000000";
    for (tool, key, status, code) in [
        ("fabric_get_port", "port_id", 400, "EQ-3035202"),
        ("fabric_get_service_profile", "profile_id", 400, "EQ-3045811"),
        ("fabric_get_service_token", "service_token_id", 400, "EQ-3034016"),
        ("fabric_get_connection", "connection_id", 404, "EQ-3045811"),
        ("fabric_get_network", "network_id", 404, "EQ-3045811"),
    ] {
        let r = server.call(tool, json!({key: unknown})).await;
        assert!(is_error(&r), "{tool}");
        let err = &structured(&r)["error"];
        assert_eq!(
            (err["status"].as_u64(), err["fabric_errors"][0]["errorCode"].as_str()),
            (Some(status), Some(code)),
            "{tool}"
        );
    }
    let before = sim.stats().requests.len();
    for (tool, key) in
        [("fabric_get_port", "port_id"), ("fabric_list_port_vlans", "port_id"), ("fabric_get_network", "network_id")]
    {
        let r = server.call(tool, json!({key: "../../connections/x"})).await;
        assert!(is_error(&r), "{tool}");
        assert_eq!(structured(&r)["error"]["kind"], "invalid_arguments");
    }
    assert_eq!(sim.stats().requests.len(), before, "the simulator saw nothing for bad uuids");
    server.stop().await;
}

#[tokio::test]
async fn an_agent_builds_a_connection_from_what_the_catalog_finds() {
    let b = Launch::serve().args(&["--toolsets", "all,mutate"]).client(TestClient::accepting()).stdio().await;
    let sim_url = embedded_sim_url(&b).await;
    // 1. a DOT1Q port in DC with bandwidth to spare
    let ports = b.ok("fabric_search_ports", json!({"metro": "DC", "state": "ACTIVE"})).await;
    let port = rows(&ports, "ports").into_iter().find(|p| p["encapsulation"] == "DOT1Q").unwrap();
    let port_id = port["uuid"].as_str().unwrap();
    // 2. a free VLAN on it
    let vlans = b.ok("fabric_list_port_vlans", json!({"port_id": port_id})).await;
    let used: Vec<u64> = rows(&vlans, "vlans_in_use").iter().filter_map(|v| v["vlan_tag"].as_u64()).collect();
    let vlan = (100..4092).find(|v| !used.contains(v)).unwrap();
    // 3. a provider profile in that metro, and what it requires
    let profiles = b.ok("fabric_search_service_profiles", json!({"metro": "DC", "name": "aws"})).await;
    let profile = rows(&profiles, "service_profiles")[0].clone();
    assert_eq!(profile["name"], "AWS Direct Connect");
    assert_eq!(profile["authentication_key"], "AWS Account ID", "{profile}");
    assert!(profile["seller_regions"].as_array().unwrap().contains(&json!("us-east-1")), "{profile}");
    // 4. propose: the dry run refuses what the profile does not accept, as Fabric would
    let mut spec = json!({
        "type": "EVPL_VC", "name": "agent-to-aws", "bandwidth": 500,
        "aSide": {"accessPoint": {"type": "COLO", "port": {"uuid": port_id}, "linkProtocol": {"type": "DOT1Q", "vlanTag": vlan}}},
        "zSide": {"accessPoint": {"type": "SP", "profile": {"type": "L2_PROFILE", "uuid": profile["uuid"]}, "location": {"metroCode": "DC"}}},
        "notifications": [{"type": "ALL", "emails": ["noc@example.com"]}]
    });
    let r = b.call("fabric_propose_change", json!({"change_type": "connection_create", "spec": spec})).await;
    assert_eq!(structured(&r)["error"]["fabric_errors"][0]["errorCode"], "EQ-3142308", "{:?}", r.structured_content);
    spec["zSide"]["accessPoint"]["authenticationKey"] = json!("123456789012");
    spec["zSide"]["accessPoint"]["sellerRegion"] = json!("us-east-1");
    let p = b.ok("fabric_propose_change", json!({"change_type": "connection_create", "spec": spec})).await;
    assert_eq!(p["price_context"]["monthly_recurring"], 250.0);
    let out = b.ok("fabric_confirm_change", json!({"confirm_token": p["confirm_token"]})).await;
    assert_eq!(out["executed"], true, "{out}");
    // 5. the new connection is visible to the read tools, with the VLAN now in use
    let found = b.ok("fabric_search_connections", json!({"name": "agent-to-aws"})).await;
    assert_eq!(found["total"], 1);
    let found = rows(&found, "connections");
    assert_eq!(found[0]["uuid"], out["created"]["uuid"]);
    assert_eq!(found[0]["z_side"], "AWS Direct Connect in DC");
    let vlans = b.ok("fabric_list_port_vlans", json!({"port_id": port_id})).await;
    assert!(rows(&vlans, "vlans_in_use").iter().any(|v| v["vlan_tag"] == vlan));
    assert_eq!(creates(&sim_url, "connections").await, 1);
    b.stop().await;
}

#[tokio::test]
async fn a_vlan_says_what_holds_it_and_a_tokens_vlan_is_taken() {
    let b = Launch::serve().args(&["--toolsets", "all,mutate"]).client(TestClient::accepting()).stdio().await;
    let dc_pri = PORTS[0].0;
    let token = json!({"type": "VC_TOKEN", "name": "t-holds-700", "expirationDateTime": "2031-01-01T00:00:00Z",
        "connection": {"type": "EVPL_VC", "aSide": {"accessPointSelectors": [{"type": "COLO", "port": {"uuid": dc_pri},
            "linkProtocol": {"type": "DOT1Q", "vlanTag": 700}}]}},
        "notifications": [{"type": "ALL", "emails": ["noc@example.com"]}]});
    let p = b.ok("fabric_propose_change", json!({"change_type": "service_token_create", "spec": token})).await;
    let created = b.ok("fabric_confirm_change", json!({"confirm_token": p["confirm_token"]})).await;
    let vlans = b.ok("fabric_list_port_vlans", json!({"port_id": dc_pri})).await;
    let held = |tag: u64| rows(&vlans, "vlans_in_use").into_iter().find(|v| v["vlan_tag"] == tag).unwrap();
    assert_eq!(held(100)["held_by"], "connection");
    assert_eq!(held(100)["holder_uuid"], fabric_sim::CONNECTIONS[0].0);
    let token_vlan = held(700);
    assert_eq!(
        (&token_vlan["held_by"], &token_vlan["holder_uuid"], &token_vlan["holder_type"]),
        (&json!("service_token"), &created["created"]["uuid"], &json!("VC_TOKEN"))
    );
    // a connection on the token's VLAN is refused by the dry run
    let spec = json!({"type": "EVPL_VC", "name": "clash", "bandwidth": 50,
        "aSide": {"accessPoint": {"type": "COLO", "port": {"uuid": dc_pri}, "linkProtocol": {"type": "DOT1Q", "vlanTag": 700}}},
        "zSide": {"accessPoint": {"type": "COLO", "port": {"uuid": PORTS[3].0}, "linkProtocol": {"type": "DOT1Q", "vlanTag": 700}}},
        "notifications": [{"type": "ALL", "emails": ["noc@example.com"]}]});
    let r = b.call("fabric_propose_change", json!({"change_type": "connection_create", "spec": spec})).await;
    assert_eq!(structured(&r)["error"]["fabric_errors"][0]["errorCode"], "EQ-3142102", "{:?}", r.structured_content);
    b.stop().await;
}
