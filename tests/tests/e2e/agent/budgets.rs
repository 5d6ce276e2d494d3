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
        for (arg, p) in t.input_schema["properties"].as_object().unwrap() {
            assert!(p["description"].as_str().is_some_and(|d| !d.is_empty()), "{}.{arg} is described", t.name);
        }
    }
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
