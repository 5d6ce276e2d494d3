//! The `route_filters` and `route_aggregations` toolsets: search, get, the rules, and those
//! attached to a connection (with their direction and attachment status).

use alloc::format;
use alloc::vec::Vec;
use serde_json::{Value, json};

use super::compact::pick;
use super::requests::{get, get_by_id, name_fragment, post, unknown_id_hint};
use crate::args::{LIMIT, OFFSET, paging, paging_query, text};
use crate::capability::Host;
use crate::fabric_call::{paged, send_json};
use crate::fabric_enums::{POLICY_STATES, ROUTE_FILTER_TYPES};
use crate::grammar::{Kind, Object, TEXT, UUID, arguments, opt, req};
use crate::tool::{Output, ToolDef, read};
use crate::tool_error::ToolError;
use equinix_broker_contract::body::eq;

const CONNECTIONS: &str = "fabric_search_connections";
const SEARCH_FILTERS: &str = "fabric_search_route_filters";
const SEARCH_AGGREGATIONS: &str = "fabric_search_route_aggregations";

static FILTER_SEARCH_ARGS: Object = arguments(&[
    opt("name", TEXT, "Part of the name, any case"),
    opt("type", Kind::Enum(ROUTE_FILTER_TYPES), "IPv4 or IPv6"),
    opt("state", Kind::Enum(POLICY_STATES), "State"),
    OFFSET,
    LIMIT,
]);
static FILTER_ARGS: Object = arguments(&[req("route_filter_id", UUID, "").from(SEARCH_FILTERS)]);
static FILTER_RULES_ARGS: Object = arguments(&[req("route_filter_id", UUID, "").from(SEARCH_FILTERS), OFFSET, LIMIT]);
static AGGREGATION_SEARCH_ARGS: Object = arguments(&[
    opt("name", TEXT, "Part of the name, any case"),
    opt("state", Kind::Enum(POLICY_STATES), "State"),
    OFFSET,
    LIMIT,
]);
static AGGREGATION_ARGS: Object = arguments(&[req("route_aggregation_id", UUID, "").from(SEARCH_AGGREGATIONS)]);
static AGGREGATION_RULES_ARGS: Object =
    arguments(&[req("route_aggregation_id", UUID, "").from(SEARCH_AGGREGATIONS), OFFSET, LIMIT]);
static CONNECTION_ARGS: Object = arguments(&[req("connection_id", UUID, "").from(CONNECTIONS)]);

pub(crate) static TOOLS: [ToolDef; 8] = [
    read(
        SEARCH_FILTERS,
        "route_filters",
        "Search route filters",
        "BGP prefix filters by name, type or state.",
        &FILTER_SEARCH_ARGS,
        Output::Page("route_filters", &[]),
        search_filters,
    ),
    read(
        "fabric_get_route_filter",
        "route_filters",
        "Get a route filter",
        "The whole route filter object.",
        &FILTER_ARGS,
        Output::One("route_filter"),
        get_filter,
    ),
    read(
        "fabric_list_route_filter_rules",
        "route_filters",
        "Rules of a route filter",
        "Each rule's prefix, match and action.",
        &FILTER_RULES_ARGS,
        Output::Page("rules", &[]),
        filter_rules,
    ),
    read(
        "fabric_list_connection_route_filters",
        "route_filters",
        "Route filters on a connection",
        "Filters attached to a connection: direction and status.",
        &CONNECTION_ARGS,
        Output::Page("route_filters", &[]),
        connection_filters,
    ),
    read(
        SEARCH_AGGREGATIONS,
        "route_aggregations",
        "Search route aggregations",
        "BGP prefix aggregations by name or state.",
        &AGGREGATION_SEARCH_ARGS,
        Output::Page("route_aggregations", &[]),
        search_aggregations,
    ),
    read(
        "fabric_get_route_aggregation",
        "route_aggregations",
        "Get a route aggregation",
        "The whole route aggregation object.",
        &AGGREGATION_ARGS,
        Output::One("route_aggregation"),
        get_aggregation,
    ),
    read(
        "fabric_list_route_aggregation_rules",
        "route_aggregations",
        "Rules of a route aggregation",
        "The prefixes an aggregation summarises to.",
        &AGGREGATION_RULES_ARGS,
        Output::Page("rules", &[]),
        aggregation_rules,
    ),
    read(
        "fabric_list_connection_route_aggregations",
        "route_aggregations",
        "Route aggregations on a connection",
        "Aggregations attached to a connection and their status.",
        &CONNECTION_ARGS,
        Output::Page("route_aggregations", &[]),
        connection_aggregations,
    ),
];

/// A policy search's body: an `and` of the filters (this search takes no bare expression and
/// no empty `and`), none without one, and paging.
fn search(
    host: &mut dyn Host,
    args: &Value,
    collection: &str,
    key: &str,
    compact: fn(&Value) -> Value,
) -> Result<Value, ToolError> {
    let (offset, limit) = paging(args);
    let mut and = Vec::new();
    if let Some(fragment) = name_fragment(args) {
        // this contract offers ILIKE: a name is found whatever its case
        and.push(json!({"property": "/name", "operator": "ILIKE", "values": [fragment]}));
    }
    for (arg, property) in [("type", "/type"), ("state", "/state")] {
        if let Some(v) = text(args, arg) {
            and.push(eq(property, v));
        }
    }
    let mut body = json!({"pagination": {"offset": offset, "limit": limit}});
    if !and.is_empty() {
        body["filter"] = json!({"and": and});
    }
    let path = format!("/fabric/v4/{collection}/search");
    let answer = send_json(host, post(&path, Vec::new(), crate::json::json_text(&body)))?;
    Ok(paged(answer, key, offset, compact))
}

fn compact_policy(p: &Value) -> Value {
    Value::Object(pick(
        p,
        &[
            ("uuid", "/uuid"),
            ("name", "/name"),
            ("type", "/type"),
            ("state", "/state"),
            ("not_matched", "/notMatchedRuleAction"),
            ("rules_count", "/rulesCount"),
            ("connections_count", "/connectionsCount"),
        ],
    ))
}

fn compact_rule(r: &Value) -> Value {
    Value::Object(pick(
        r,
        &[
            ("uuid", "/uuid"),
            ("name", "/name"),
            ("prefix", "/prefix"),
            ("prefix_match", "/prefixMatch"),
            ("action", "/action"),
            ("state", "/state"),
        ],
    ))
}

fn compact_attachment(a: &Value) -> Value {
    Value::Object(pick(
        a,
        &[
            ("uuid", "/uuid"),
            ("type", "/type"),
            ("direction", "/direction"),
            ("attachment_status", "/attachmentStatus"),
        ],
    ))
}

/// A policy's rules.
fn rules(host: &mut dyn Host, args: &Value, key: &str, path: &str, objects: &[&Object]) -> Result<Value, ToolError> {
    let (offset, limit) = paging(args);
    let id = text(args, key).unwrap_or_default();
    let answer = send_json(host, get(format!("/fabric/v4/{}", path.replace("{id}", id)), paging_query(offset, limit)))
        .map_err(|e| unknown_id_hint(e, key, objects))?;
    Ok(paged(answer, "rules", offset, compact_rule))
}

/// The policies attached to a connection.
fn attached(host: &mut dyn Host, args: &Value, collection: &str, key: &str) -> Result<Value, ToolError> {
    let id = text(args, "connection_id").unwrap_or_default();
    let answer = send_json(host, get(format!("/fabric/v4/connections/{id}/{collection}"), Vec::new()))
        .map_err(|e| unknown_id_hint(e, "connection_id", &[&CONNECTION_ARGS]))?;
    Ok(paged(answer, key, 0, compact_attachment))
}

fn search_filters(host: &mut dyn Host, args: &Value) -> Result<Value, ToolError> {
    search(host, args, "routeFilters", "route_filters", compact_policy)
}

fn get_filter(host: &mut dyn Host, args: &Value) -> Result<Value, ToolError> {
    get_by_id(host, args, "route_filter_id", "routeFilters", "route_filter", &[&FILTER_ARGS])
}

fn filter_rules(host: &mut dyn Host, args: &Value) -> Result<Value, ToolError> {
    rules(host, args, "route_filter_id", "routeFilters/{id}/routeFilterRules", &[&FILTER_RULES_ARGS])
}

fn connection_filters(host: &mut dyn Host, args: &Value) -> Result<Value, ToolError> {
    attached(host, args, "routeFilters", "route_filters")
}

fn search_aggregations(host: &mut dyn Host, args: &Value) -> Result<Value, ToolError> {
    search(host, args, "routeAggregations", "route_aggregations", compact_policy)
}

fn get_aggregation(host: &mut dyn Host, args: &Value) -> Result<Value, ToolError> {
    get_by_id(host, args, "route_aggregation_id", "routeAggregations", "route_aggregation", &[&AGGREGATION_ARGS])
}

fn aggregation_rules(host: &mut dyn Host, args: &Value) -> Result<Value, ToolError> {
    rules(
        host,
        args,
        "route_aggregation_id",
        "routeAggregations/{id}/routeAggregationRules",
        &[&AGGREGATION_RULES_ARGS],
    )
}

fn connection_aggregations(host: &mut dyn Host, args: &Value) -> Result<Value, ToolError> {
    attached(host, args, "routeAggregations", "route_aggregations")
}
