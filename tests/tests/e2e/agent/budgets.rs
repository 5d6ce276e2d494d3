//! What the model reads: tools/list within budget, results within their output schemas and
//! sizes, errors that name every path and the next step.

use super::*;

/// The wire size of a `tools/list` result.
async fn tools_list_bytes(toolsets: &str) -> (usize, Vec<rmcp::model::Tool>) {
    let server = Launch::serve().args(&["--toolsets", toolsets]).stdio().await;
    let tools = server.client.list_all_tools().await.unwrap();
    server.stop().await;
    (serde_json::to_string(&json!({"tools": tools})).unwrap().len(), tools)
}

#[tokio::test]
async fn tools_list_fits_its_budgets_and_every_tool_has_a_title_and_output_schema() {
    let (default, _) = tools_list_bytes("default").await;
    let (all, tools) = tools_list_bytes("all,mutate").await;
    println!("tools/list: default {default} bytes, all,mutate {all} bytes");
    assert!(default <= 10 * 1024, "default tools/list is {default} bytes (budget 10 KB)");
    assert!(all <= 36 * 1024, "all,mutate tools/list is {all} bytes (budget 36 KB)");
    assert_eq!(tools.len(), 38);
    for t in &tools {
        assert!(t.title.as_deref().is_some_and(|x| !x.is_empty()), "{} has a title", t.name);
        let out = t.output_schema.as_ref().unwrap_or_else(|| panic!("{} has an output schema", t.name));
        assert_eq!(out.get("type"), Some(&json!("object")), "{}", t.name);
        let schema = Value::Object((*t.input_schema).clone());
        let mut undescribed = Vec::new();
        undescribed_properties(&schema, "", &mut undescribed);
        assert!(undescribed.is_empty(), "{}: no description at {undescribed:?}", t.name);
    }
}

/// Every property under `schema` (its `$defs`, nested objects, array items and the typed specs
/// of `allOf`/`then`) that has no description.
fn undescribed_properties(schema: &Value, at: &str, out: &mut Vec<String>) {
    let Some(map) = schema.as_object() else { return };
    for (key, p) in map.get("properties").and_then(Value::as_object).into_iter().flatten() {
        if p["description"].as_str().is_none_or(str::is_empty) {
            out.push(format!("{at}/{key}"));
        }
        undescribed_properties(p, &format!("{at}/{key}"), out);
    }
    for (key, sub) in map {
        match (key.as_str(), sub) {
            ("$defs", Value::Object(defs)) => {
                defs.iter().for_each(|(name, d)| undescribed_properties(d, &format!("/$defs/{name}"), out))
            }
            ("items", s) => undescribed_properties(s, at, out),
            // a branch's members overlay the same members above (described there): only what
            // they hold must be described; an `if` only tests
            ("then" | "else", Value::Object(branch)) => {
                for (key, p) in branch.get("properties").and_then(Value::as_object).into_iter().flatten() {
                    undescribed_properties(p, &format!("{at}/{key}"), out);
                }
            }
            ("allOf" | "anyOf" | "oneOf", Value::Array(list)) => {
                list.iter().for_each(|s| undescribed_properties(s, at, out))
            }
            _ => {}
        }
    }
}

#[test]
fn the_description_walk_finds_what_has_none() {
    let schema = json!({"properties": {"a": {"description": "A"}, "b": {"type": "string"}},
                        "$defs": {"D": {"properties": {"x": {"items": {"properties": {"y": {}}}}}}}});
    let mut out = Vec::new();
    undescribed_properties(&schema, "", &mut out);
    assert_eq!(out, ["/b", "/$defs/D/x", "/$defs/D/x/y"]);
}

/// The bytes of a result as the model reads it (its text content).
fn text_bytes(r: &rmcp::model::CallToolResult) -> usize {
    r.content[0].as_text().expect("a text content").text.len()
}

#[tokio::test]
async fn every_page_of_20_and_every_get_of_a_seeded_object_fits_its_budget() {
    use equinix_fabric_sim::{FCR_CONNECTIONS, PORTS, PROFILES, ROUTE_AGGREGATIONS, ROUTE_FILTERS, ROUTERS, routing};
    let server = Launch::serve().args(&["--toolsets", "all"]).stdio().await;
    let (aws, azure) = (FCR_CONNECTIONS[0].0, FCR_CONNECTIONS[1].0);
    let (router, bgp) = (ROUTERS[0].uuid, routing::routing_protocol_uuid(1, "bgp"));
    let page = |extra: Value| {
        let mut args = json!({"limit": 20});
        args.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        args
    };
    let lists = [
        ("fabric_list_metros", page(json!({}))),
        ("fabric_search_ports", page(json!({}))),
        ("fabric_list_port_vlans", page(json!({"port_id": PORTS[0].0}))),
        ("fabric_search_service_profiles", page(json!({}))),
        ("fabric_list_service_profile_metros", page(json!({"profile_id": PROFILES[0].uuid}))),
        ("fabric_search_connections", page(json!({}))),
        ("fabric_search_cloud_routers", page(json!({}))),
        ("fabric_list_cloud_router_packages", page(json!({}))),
        ("fabric_search_cloud_router_routes", page(json!({"router_id": router}))),
        ("fabric_list_routing_protocols", page(json!({"connection_id": aws}))),
        ("fabric_list_bgp_actions", page(json!({"connection_id": azure, "routing_protocol_id": bgp}))),
        ("fabric_search_connection_routes", page(json!({"connection_id": aws, "direction": "received"}))),
        ("fabric_search_route_filters", page(json!({}))),
        ("fabric_list_route_filter_rules", page(json!({"route_filter_id": ROUTE_FILTERS[0].uuid}))),
        ("fabric_list_connection_route_filters", json!({"connection_id": aws})),
        ("fabric_search_route_aggregations", page(json!({}))),
        ("fabric_list_route_aggregation_rules", page(json!({"route_aggregation_id": ROUTE_AGGREGATIONS[0].uuid}))),
        ("fabric_list_connection_route_aggregations", json!({"connection_id": azure})),
        ("fabric_search_events", page(json!({}))),
    ];
    let mut over = Vec::new();
    for (tool, args) in lists {
        let r = server.call(tool, args.clone()).await;
        assert!(!is_error(&r), "{tool}: {:?}", r.structured_content);
        let (bytes, returned) = (text_bytes(&r), structured(&r)["returned"].as_u64().unwrap_or_default());
        println!("page {tool}: {returned} rows, {bytes} bytes");
        if bytes > 2048 {
            over.push(format!("{tool}: {bytes} bytes for {returned} rows"));
        }
    }
    let gets = [
        ("fabric_get_port", json!({"port_id": PORTS[0].0})),
        ("fabric_get_service_profile", json!({"profile_id": PROFILES[0].uuid})),
        ("fabric_get_connection", json!({"connection_id": azure})),
        ("fabric_get_cloud_router", json!({"router_id": router})),
        ("fabric_get_cloud_router_package", json!({"package_code": "STANDARD"})),
        ("fabric_get_routing_protocol", json!({"connection_id": azure, "routing_protocol_id": bgp})),
        ("fabric_get_route_filter", json!({"route_filter_id": ROUTE_FILTERS[0].uuid})),
        ("fabric_get_route_aggregation", json!({"route_aggregation_id": ROUTE_AGGREGATIONS[0].uuid})),
        ("fabric_get_event", json!({"event_id": "e7e7e7e7-0000-4000-8000-000000000003"})),
        ("fabric_get_port_statistics", json!({"port_id": PORTS[1].0, "window": "30d"})),
        ("fabric_get_connection_statistics", json!({"connection_id": aws, "window": "30d"})),
    ];
    for (tool, args) in gets {
        let r = server.call(tool, args.clone()).await;
        assert!(!is_error(&r), "{tool}: {:?}", r.structured_content);
        let bytes = text_bytes(&r);
        println!("get {tool}: {bytes} bytes");
        if bytes > 4096 {
            over.push(format!("{tool}: {bytes} bytes"));
        }
    }
    assert!(over.is_empty(), "over budget (a page of 20: 2 KB, a get: 4 KB): {over:?}");
    server.stop().await;
}

#[tokio::test]
async fn results_fit_their_output_schemas_and_pages_stay_small() {
    let server = Launch::serve().args(&["--toolsets", "all,mutate"]).client(TestClient::accepting()).stdio().await;
    let tools = server.client.list_all_tools().await.unwrap();
    let (port, profile) = (equinix_fabric_sim::PORTS[0].0, equinix_fabric_sim::PROFILES[0].uuid);
    let connection = fabric_sim::CONNECTIONS[0].0;
    let calls = [
        ("fabric_list_metros", json!({})),
        ("fabric_search_ports", json!({})),
        ("fabric_get_port", json!({"port_id": port})),
        ("fabric_list_port_vlans", json!({"port_id": port})),
        ("fabric_search_service_profiles", json!({})),
        ("fabric_get_service_profile", json!({"profile_id": profile})),
        ("fabric_search_connections", json!({})),
        ("fabric_get_connection", json!({"connection_id": connection})),
        ("fabric_search_networks", json!({})),
        ("fabric_search_service_tokens", json!({})),
        ("fabric_search_prices", json!({"connection_type": "EVPL_VC", "bandwidth": 1000})),
        (
            "fabric_propose_change",
            json!({"change_type": "connection_create", "spec": connection_spec("schema-check", 1234)}),
        ),
    ];
    let mut token = Value::Null;
    for (tool, args) in calls {
        let r = server.call(tool, args).await;
        assert!(!is_error(&r), "{tool}: {:?}", r.structured_content);
        let v = structured(&r);
        check_output(&tools, tool, &v);
        if tool == "fabric_propose_change" {
            token = v["confirm_token"].clone();
        }
    }
    let out = structured(&server.call("fabric_confirm_change", json!({"confirm_token": token})).await);
    check_output(&tools, "fabric_confirm_change", &out);
    // errors too: official clients (the TypeScript SDK) check any structured content, error or not
    let replay = server.call("fabric_confirm_change", json!({"confirm_token": token})).await;
    assert!(is_error(&replay));
    check_output(&tools, "fabric_confirm_change", &structured(&replay));
    let bad = server.call("fabric_propose_change", json!({"change_type": "connection_create", "spec": {}})).await;
    assert!(is_error(&bad));
    check_output(&tools, "fabric_propose_change", &structured(&bad));
    let network = structured(&server.call("fabric_search_networks", json!({})).await);
    check_output(&tools, "fabric_search_networks", &network);

    // a page of 20 metros, as the model reads it
    let r = server.call("fabric_list_metros", json!({"limit": 20})).await;
    let text = r.content[0].as_text().unwrap().text.clone();
    assert_eq!(structured(&r)["returned"], 20);
    println!("a page of 20 metros: {} bytes", text.len());
    assert!(text.len() <= 2048, "a page of 20 is {} bytes: {text}", text.len());
    server.stop().await;
}

fn check_output(tools: &[rmcp::model::Tool], name: &str, result: &Value) {
    let tool = tools.iter().find(|t| t.name == name).unwrap();
    let schema = Value::Object((*tool.output_schema.clone().unwrap()).clone());
    let validator = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = validator.iter_errors(result).map(|e| format!("{e} at {}", e.instance_path())).collect();
    assert!(errors.is_empty(), "{name}: {errors:?}\n{result}");
}

#[tokio::test]
async fn argument_errors_name_every_path_and_the_tool_to_call_next() {
    let server = Launch::serve().args(&["--toolsets", "all,mutate"]).stdio().await;
    // checked by the host against the schema
    let r = server.call("fabric_search_ports", json!({"metro": "dc", "limit": 0})).await;
    let err = &structured(&r)["error"];
    let paths: Vec<&str> = err["problems"].as_array().unwrap().iter().filter_map(|p| p["path"].as_str()).collect();
    assert!(paths.contains(&"/metro") && paths.contains(&"/limit"), "{err}");
    assert!(err["next_step"].as_str().unwrap().contains("fabric_list_metros"), "{err}");
    for metro in ["Washington", "dc"] {
        let r = server.call("fabric_search_service_profiles", json!({"metro": metro})).await;
        assert!(structured(&r)["error"]["next_step"].as_str().unwrap().contains("fabric_list_metros"), "{metro}");
    }
    // a spec with several problems: all of them at once, and where valid values come from
    let mut spec = connection_spec("two-problems", 1300);
    spec["aSide"]["accessPoint"]["port"]["uuid"] = json!("not-a-uuid");
    spec["zSide"]["accessPoint"]["linkProtocol"]["vlanTag"] = json!(9000);
    spec["notifications"][0]["emails"] = json!([]);
    let r = server.call("fabric_propose_change", json!({"change_type": "connection_create", "spec": spec})).await;
    let err = &structured(&r)["error"];
    let paths: Vec<&str> = err["problems"].as_array().unwrap().iter().filter_map(|p| p["path"].as_str()).collect();
    for want in [
        "/spec/aSide/accessPoint/port/uuid",
        "/spec/zSide/accessPoint/linkProtocol/vlanTag",
        "/spec/notifications/0/emails",
    ] {
        assert!(paths.contains(&want), "{want} in {paths:?}");
    }
    let next = err["next_step"].as_str().unwrap();
    assert!(next.contains("fabric_search_ports") && next.contains("fabric_list_port_vlans"), "{next}");
    // an unknown member deep in the spec is named with what is allowed there
    let mut spec = connection_spec("unknown-member", 1301);
    spec["aSide"]["accessPoint"]["colour"] = json!("red");
    let r = server.call("fabric_propose_change", json!({"change_type": "connection_create", "spec": spec})).await;
    let err = &structured(&r)["error"];
    assert_eq!(err["path"], "/spec/aSide/accessPoint/colour", "{err}");
    assert!(err["message"].as_str().unwrap().contains("allowed here"), "{err}");
    // an id Fabric does not know points to the search that lists real ones
    let r = server.call("fabric_get_port", json!({"port_id": "00000000-0000-4000-8000-000000000000"})).await;
    assert!(structured(&r)["error"]["next_step"].as_str().unwrap().contains("fabric_search_ports"));
    server.stop().await;
}
