//! The read tools against a fake host: filters sent, compact forms, page sizes.

use super::compact::*;
use crate::fabric_enums::PORT_STATES;
use crate::test_host::FakeHost;
use alloc::format;
use serde_json::{Value, json};

fn run(name: &str, host: &mut FakeHost, args: Value) -> Result<Value, Value> {
    crate::call_tool(host, name, &args.to_string())
        .map(|s| serde_json::from_str(&s).unwrap())
        .map_err(|s| serde_json::from_str(&s).unwrap())
}

#[test]
fn bad_uuids_are_refused_before_any_request() {
    let mut host = FakeHost::answering(200, "{}");
    for (tool, key) in [
        ("fabric_get_port", "port_id"),
        ("fabric_list_port_vlans", "port_id"),
        ("fabric_get_connection", "connection_id"),
        ("fabric_get_service_profile", "profile_id"),
    ] {
        let err = run(tool, &mut host, json!({key: "../../connections"})).unwrap_err();
        assert_eq!(err["error"]["path"], format!("/{key}"), "{tool}");
    }
    assert!(host.sent.is_empty());
}

#[test]
fn port_search_builds_a_filter_and_compacts() {
    let body = r#"{"pagination":{"offset":0,"limit":1,"total":2},"data":[{"uuid":"u1","name":"DC-PRI-01","state":"ACTIVE","location":{"metroCode":"DC"},"encapsulation":{"type":"DOT1Q"},"bandwidth":10000,"extra":1}]}"#;
    let mut host = FakeHost::answering(200, body);
    let out = run("fabric_search_ports", &mut host, json!({"name": "DC-*", "metro": "DC", "limit": 1})).unwrap();
    let sent: Value = serde_json::from_str(host.sent[0].body.as_deref().unwrap()).unwrap();
    assert_eq!(sent["filter"]["and"][0], json!({"property": "/name", "operator": "ILIKE", "values": ["DC-"]}));
    assert_eq!(sent["pagination"], json!({"offset": 0, "limit": 1}));
    assert!(out.get("note").is_none(), "a page with rows needs no note: {out}");
    let port = &crate::fabric_call::objects(&out, "ports")[0];
    assert_eq!(port["encapsulation"], "DOT1Q");
    assert!(port.get("extra").is_none() && !out["columns"].as_array().unwrap().contains(&json!("extra")));
    assert_eq!(out["next_offset"], 1);
}

/// Twenty items as real Fabric answers them (names, uuids, the members the compact forms
/// read), run through each search tool: the page the model reads, in bytes.
fn page_of_twenty(tool: &str, item: impl Fn(usize) -> Value, args: Value) -> usize {
    let data: Vec<Value> = (0..20).map(item).collect();
    let body = json!({"pagination": {"offset": 0, "limit": 20, "total": 57}, "data": data}).to_string();
    let mut host = FakeHost::answering(200, &body);
    let out = crate::call_tool(&mut host, tool, &args.to_string()).unwrap();
    assert_eq!(serde_json::from_str::<Value>(&out).unwrap()["returned"], 20, "{tool}");
    out.len()
}

fn uuid(kind: u32, i: usize) -> String {
    format!("{kind:08x}-1c2d-4e5f-8a9b-{i:012x}")
}

#[test]
fn a_page_of_twenty_stays_within_two_kilobytes() {
    let project = json!({"projectId": "ac4d34ca-0d9c-4bc2-9aab-1234567abcde"});
    let sizes = [
        (
            "fabric_search_ports",
            page_of_twenty(
                "fabric_search_ports",
                |i| {
                    json!({
            "href": format!("/fabric/v4/ports/{}", uuid(1, i)), "type": "XF_PORT", "uuid": uuid(1, i),
            "name": format!("DC-PRI-{i:02}"), "state": "ACTIVE", "bandwidth": 10000, "availableBandwidth": 10000 - 500 * (i as u64 % 4),
            "location": {"metroCode": "DC", "ibx": "DC6"}, "encapsulation": {"type": "DOT1Q", "tagProtocolId": "0x8100"},
            "redundancy": {"priority": if i % 2 == 0 { "PRIMARY" } else { "SECONDARY" }}, "project": project, "lagEnabled": false})
                },
                json!({}),
            ),
        ),
        (
            "fabric_search_connections",
            page_of_twenty(
                "fabric_search_connections",
                |i| {
                    json!({
            "href": format!("/fabric/v4/connections/{}", uuid(2, i)), "type": "EVPL_VC", "uuid": uuid(2, i),
            "name": format!("dc-to-aws-{i:02}"), "state": "ACTIVE", "bandwidth": 500,
            "operation": {"equinixStatus": "PROVISIONED", "providerStatus": "AVAILABLE"},
            "aSide": {"accessPoint": {"type": "COLO", "port": {"uuid": uuid(1, 0), "name": "DC-PRI-01"},
                      "linkProtocol": {"type": "DOT1Q", "vlanTag": 100 + i}}},
            "zSide": {"accessPoint": {"type": "SP", "profile": {"uuid": uuid(3, 0), "name": "AWS Direct Connect"},
                      "location": {"metroCode": "DC"}}}})
                },
                json!({}),
            ),
        ),
        (
            "fabric_search_service_profiles",
            page_of_twenty(
                "fabric_search_service_profiles",
                |i| {
                    json!({
            "uuid": uuid(3, i), "name": format!("Provider {i:02}"), "type": "L2_PROFILE", "state": "ACTIVE", "visibility": "PUBLIC",
            "metros": [{"code": "DC"}, {"code": "SV"}],
            "accessPointTypeConfigs": [{"supportedBandwidths": [50, 100, 500, 1000]}]})
                },
                json!({}),
            ),
        ),
        (
            "fabric_list_port_vlans",
            page_of_twenty(
                "fabric_list_port_vlans",
                |i| {
                    json!({
            "type": "DOT1Q", "vlanTag": 100 + i, "state": "RESERVED",
            "asset": {"href": "x", "uuid": uuid(2, i), "type": "EVPL_VC", "bandwidth": 500}})
                },
                json!({"port_id": uuid(1, 0)}),
            ),
        ),
        (
            "fabric_search_networks",
            page_of_twenty(
                "fabric_search_networks",
                |i| {
                    json!({
            "uuid": uuid(4, i), "name": format!("net-{i:02}"), "type": "EVPLAN", "scope": "REGIONAL", "state": "ACTIVE",
            "location": {"region": "AMER"}, "operation": {"equinixStatus": "PROVISIONED"}, "connectionsCount": i})
                },
                json!({}),
            ),
        ),
        (
            "fabric_search_service_tokens",
            page_of_twenty(
                "fabric_search_service_tokens",
                |i| {
                    json!({
            "uuid": uuid(5, i), "name": format!("token-{i:02}"), "type": "VC_TOKEN", "state": "ACTIVE",
            "expirationDateTime": "2027-01-01T00:00:00Z", "connection": {"type": "EVPL_VC", "bandwidthLimit": 1000,
            "aSide": {"accessPointSelectors": [{"type": "COLO", "port": {"uuid": uuid(1, 0)}, "linkProtocol": {"type": "DOT1Q", "vlanTag": 700 + i}}]}}})
                },
                json!({}),
            ),
        ),
    ];
    for (tool, bytes) in sizes {
        std::println!("{tool}: a page of 20 is {bytes} bytes");
        assert!(bytes <= 2048, "{tool}: a page of 20 is {bytes} bytes");
    }
}

#[test]
fn a_port_search_without_filters_asks_for_every_state() {
    let mut host = FakeHost::answering(200, r#"{"pagination":{"total":0},"data":[]}"#);
    run("fabric_search_ports", &mut host, json!({})).unwrap();
    let sent: Value = serde_json::from_str(host.sent[0].body.as_deref().unwrap()).unwrap();
    assert_eq!(sent["filter"]["operator"], "=");
    assert_eq!(sent["filter"]["property"], "/state");
    assert_eq!(sent["filter"]["values"].as_array().unwrap().len(), PORT_STATES.len());
    assert!(!host.sent[0].body.as_deref().unwrap().contains("IS NOT NULL"));
}

#[test]
fn profile_names_are_matched_by_the_server_never_sent_as_like() {
    let page = r#"{"pagination":{"offset":0,"limit":100,"total":2},"data":[{"uuid":"u1","name":"AWS Direct Connect"},{"uuid":"u2","name":"Azure"}]}"#;
    let mut host = FakeHost::answering(200, page);
    let out = run("fabric_search_service_profiles", &mut host, json!({"name": "aws*", "metro": "DC"})).unwrap();
    assert_eq!(crate::fabric_call::objects(&out, "service_profiles")[0]["uuid"], "u1");
    assert_eq!((out["total"].clone(), out["returned"].clone()), (json!(1), json!(1)));
    let body = host.sent[0].body.as_deref().unwrap();
    assert!(!body.contains("LIKE") && body.contains("/metros/code"), "{body}");
}

#[test]
fn a_vlan_names_its_holder_as_fabric_does() {
    let asset = json!({"type": "DOT1Q", "vlanTag": 100, "state": "RESERVED",
        "asset": {"href": "h", "uuid": "c-1", "type": "EVPL_VC", "bandwidth": 50}});
    let v = compact_vlan(&asset);
    assert_eq!(
        (&v["held_by"], &v["holder_uuid"], &v["holder_type"], &v["holder_bandwidth_mbps"]),
        (&json!("connection"), &json!("c-1"), &json!("EVPL_VC"), &json!(50))
    );
    let token = json!({"type": "DOT1Q", "vlanTag": 101, "serviceToken": {"uuid": "t-1", "type": "VC_TOKEN"}});
    assert_eq!(compact_vlan(&token)["held_by"], "service_token");
}

/// The connection search's contract has no `ILIKE` it spells the same as the others: a name is
/// looked for as typed, in lower case and in upper case, and an empty answer says so.
#[test]
fn connection_names_are_matched_as_typed_lower_or_upper_case() {
    let empty = r#"{"pagination":{"offset":0,"limit":20,"total":0},"data":[]}"#;
    let mut host = FakeHost::answering(200, empty);
    let out = run("fabric_search_connections", &mut host, json!({"name": "DC-FCR"})).unwrap();
    let sent: Value = serde_json::from_str(host.sent[0].body.as_deref().unwrap()).unwrap();
    let like = |v: &str| json!({"property": "/name", "operator": "LIKE", "values": [v]});
    assert_eq!(sent["filter"], json!({"or": [like("DC-FCR"), like("dc-fcr")]}));
    let note = out["note"].as_str().unwrap();
    assert!(note.contains("\"DC-FCR\" as typed, in lower case or in upper case") && note.contains("port_id"), "{note}");

    // a name in one case is looked for once, and the note names every case matched
    let mut host = FakeHost::answering(200, empty);
    run("fabric_search_connections", &mut host, json!({"name": "to-aws"})).unwrap();
    let sent: Value = serde_json::from_str(host.sent[0].body.as_deref().unwrap()).unwrap();
    assert_eq!(sent["filter"], json!({"or": [like("to-aws"), like("TO-AWS")]}));
    let mut host = FakeHost::answering(200, empty);
    run("fabric_search_connections", &mut host, json!({"name": "42"})).unwrap();
    let sent: Value = serde_json::from_str(host.sent[0].body.as_deref().unwrap()).unwrap();
    assert_eq!(sent["filter"], like("42"));
}

/// Only an empty first page of a search by name gets the note: not a later page, not a search
/// without a name.
#[test]
fn only_an_empty_search_by_name_says_how_names_match() {
    let empty = r#"{"pagination":{"offset":0,"limit":20,"total":0},"data":[]}"#;
    let mut host = FakeHost::answering(200, empty);
    let out = run("fabric_search_ports", &mut host, json!({"name": "nope"})).unwrap();
    assert!(out["note"].as_str().unwrap().contains("\"nope\" in any case"), "{out}");
    let mut host = FakeHost::answering(200, empty);
    let out = run("fabric_search_ports", &mut host, json!({"state": "ACTIVE"})).unwrap();
    assert!(out.get("note").is_none(), "{out}");
    // a metro without your ports says where the metros with them are listed
    let mut host = FakeHost::answering(200, empty);
    let out = run("fabric_search_ports", &mut host, json!({"metro": "XX"})).unwrap();
    assert!(out["note"].as_str().unwrap().contains("presence MY_PORTS"), "{out}");
    let mut host = FakeHost::answering(200, r#"{"pagination":{"offset":40,"limit":20,"total":3},"data":[]}"#);
    let out = run("fabric_search_networks", &mut host, json!({"name": "x", "offset": 40})).unwrap();
    assert!(out.get("note").is_none(), "{out}");
}
