//! Route filters and route aggregations through the binary on the simulator: found
//! by name, type and state, their rules, and which of them sit on a connection in which
//! direction and with what status.

use crate::harness::*;
use equinix_fabric_sim::{FCR_CONNECTIONS, ROUTE_AGGREGATIONS, ROUTE_FILTERS};
use serde_json::{Value, json};

fn column(page: &Value, key: &str, field: &str) -> Vec<Value> {
    rows(page, key).iter().map(|r| r[field].clone()).collect()
}

const UNKNOWN: &str = "00000000-0000-4000-8000-000000000000";

#[tokio::test]
async fn route_filters_their_rules_and_where_they_are_attached() {
    let server = Launch::serve().args(&["--toolsets", "route_filters"]).stdio().await;
    let all = server.ok("fabric_search_route_filters", json!({})).await;
    assert_eq!(all["total"], ROUTE_FILTERS.len(), "{all}");
    let v6 = server.ok("fabric_search_route_filters", json!({"type": "BGP_IPv6_PREFIX_FILTER"})).await;
    assert_eq!(column(&v6, "route_filters", "name"), ["v6-deny-default"]);
    let named = server.ok("fabric_search_route_filters", json!({"name": "AWS"})).await;
    let filter = &rows(&named, "route_filters")[0];
    assert_eq!((filter["name"].as_str(), filter["rules_count"].as_u64()), (Some("aws-inbound-v4"), Some(2)));
    assert_eq!(filter["connections_count"], 1);
    let none = server.ok("fabric_search_route_filters", json!({"state": "DEPROVISIONED"})).await;
    assert_eq!(none["total"], 0, "{none}");

    let id = ROUTE_FILTERS[0].uuid;
    let whole = server.ok("fabric_get_route_filter", json!({"route_filter_id": id})).await;
    assert_eq!(whole["route_filter"]["notMatchedRuleAction"], "DENY");
    let rules = server.ok("fabric_list_route_filter_rules", json!({"route_filter_id": id})).await;
    assert_eq!(column(&rules, "rules", "prefix"), ["10.10.0.0/16", "10.11.0.0/16"]);
    assert_eq!(column(&rules, "rules", "prefix_match"), ["orlonger", "orlonger"]);
    let second = server.ok("fabric_list_route_filter_rules", json!({"route_filter_id": id, "offset": 1})).await;
    assert_eq!((second["returned"].as_u64(), second["total"].as_u64()), (Some(1), Some(2)), "{second}");

    let (aws, azure) = (FCR_CONNECTIONS[0].0, FCR_CONNECTIONS[1].0);
    let on_aws = server.ok("fabric_list_connection_route_filters", json!({"connection_id": aws})).await;
    let on_aws = rows(&on_aws, "route_filters");
    assert_eq!((on_aws[0]["uuid"].as_str(), on_aws[0]["direction"].as_str()), (Some(id), Some("INBOUND")));
    assert_eq!(on_aws[0]["attachment_status"], "ATTACHED");
    let on_azure = server.ok("fabric_list_connection_route_filters", json!({"connection_id": azure})).await;
    assert_eq!(column(&on_azure, "route_filters", "attachment_status"), ["PENDING_BGP_CONFIGURATION"]);

    for (tool, args, next) in [
        ("fabric_get_route_filter", json!({"route_filter_id": UNKNOWN}), "fabric_search_route_filters"),
        ("fabric_list_route_filter_rules", json!({"route_filter_id": UNKNOWN}), "fabric_search_route_filters"),
        ("fabric_list_connection_route_filters", json!({"connection_id": UNKNOWN}), "fabric_search_connections"),
    ] {
        let r = server.call(tool, args).await;
        assert!(is_error(&r), "{tool}");
        let err = &structured(&r)["error"];
        assert_eq!(err["status"], 404, "{tool}: {err}");
        assert!(err["next_step"].as_str().unwrap().contains(next), "{tool}: {err}");
    }
    server.stop().await;
}

#[tokio::test]
async fn route_aggregations_their_rules_and_where_they_are_attached() {
    let server = Launch::serve().args(&["--toolsets", "route_aggregations"]).stdio().await;
    let all = server.ok("fabric_search_route_aggregations", json!({"state": "PROVISIONED"})).await;
    assert_eq!(all["total"], ROUTE_AGGREGATIONS.len(), "{all}");
    let none = server.ok("fabric_search_route_aggregations", json!({"state": "PROVISIONING"})).await;
    assert_eq!(none["total"], 0, "{none}");
    let lab = server.ok("fabric_search_route_aggregations", json!({"name": "lab"})).await;
    assert_eq!(column(&lab, "route_aggregations", "name"), ["lab-summary"]);

    let id = ROUTE_AGGREGATIONS[0].uuid;
    let whole = server.ok("fabric_get_route_aggregation", json!({"route_aggregation_id": id})).await;
    assert_eq!(whole["route_aggregation"]["type"], "BGP_IPv4_PREFIX_AGGREGATION");
    let rules = server.ok("fabric_list_route_aggregation_rules", json!({"route_aggregation_id": id})).await;
    assert_eq!(column(&rules, "rules", "prefix"), ["10.10.0.0/15"]);

    let (aws, azure) = (FCR_CONNECTIONS[0].0, FCR_CONNECTIONS[1].0);
    let on_azure = server.ok("fabric_list_connection_route_aggregations", json!({"connection_id": azure})).await;
    assert_eq!(column(&on_azure, "route_aggregations", "uuid"), [id]);
    let on_aws = server.ok("fabric_list_connection_route_aggregations", json!({"connection_id": aws})).await;
    assert_eq!(on_aws["total"], 0, "{on_aws}");

    let r = server.call("fabric_list_route_aggregation_rules", json!({"route_aggregation_id": UNKNOWN})).await;
    let err = &structured(&r)["error"];
    assert!(err["next_step"].as_str().unwrap().contains("fabric_search_route_aggregations"), "{err}");
    server.stop().await;
}
