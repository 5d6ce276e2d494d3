//! The read-only catalog: everything an agent needs to build a correct change spec. Arguments
//! are simple and typed (metro code, name, state, uuid, paging); the component builds Fabric's
//! filters as each endpoint's contract allows, and compacts the answers (`raw: true` returns
//! Fabric's full objects). Every answer is paged with `total` and `next_offset`, never truncated
//! silently.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec;
use alloc::vec::Vec;
use serde_json::{Map, Value, json};

use crate::args::{LIMIT, OFFSET, RAW, number, paging, paging_query, text};
use crate::capability::{FabricRequest, Host, Method};
use crate::catalog::{READ_ONLY, ToolDef};
use crate::fabric_call::{paged, send_json};
use crate::fabric_enums::*;
use crate::grammar::{Field, Kind, METRO, Object, UUID, int, opt, req};
use crate::price::{charge_total, eq, product_filter};
use crate::tool_error::ToolError;

const NAME: Field = opt(
    "name",
    Kind::Str { min: 1, max: 128, text: crate::grammar::Text::Any },
    "Exact name (no wildcards; see name_contains)",
);
const NAME_CONTAINS: Field = opt(
    "name_contains",
    Kind::Str { min: 1, max: 64, text: crate::grammar::Text::Any },
    "Part of the name (Fabric's partial match, LIKE)",
);
const METRO_ARG: Field = opt("metro", METRO, "Metro code, e.g. DC or SV (fabric_list_metros lists them)");

/// `{key}` (a uuid, required) and `raw`: the arguments of every get-by-id tool.
macro_rules! by_id {
    ($key:literal, $what:literal) => {
        Object { fields: &[req($key, UUID, concat!("The ", $what, " uuid")), RAW], rule: None, rule_doc: "" }
    };
}

/// A read-only row.
const fn read(
    name: &'static str,
    toolset: &'static str,
    title: &'static str,
    description: &'static str,
    args: &'static Object,
    run: crate::catalog::Handler,
) -> ToolDef {
    ToolDef { name, toolset, title, description, args, schema_extra: None, hints: READ_ONLY, run }
}

static SEARCH_PORTS: Object = Object {
    fields: &[
        NAME,
        NAME_CONTAINS,
        METRO_ARG,
        opt("state", Kind::Enum(PORT_STATES), "Port state"),
        opt("project_id", UUID, "Fabric project uuid"),
        OFFSET,
        LIMIT,
        RAW,
    ],
    rule: None,
    rule_doc: "",
};
static GET_PORT: Object = by_id!("port_id", "port");
static PORT_VLANS: Object = Object {
    fields: &[req("port_id", UUID, "The port uuid (fabric_search_ports finds it)"), OFFSET, LIMIT, RAW],
    rule: None,
    rule_doc: "",
};
static SEARCH_PROFILES: Object = Object {
    fields: &[
        NAME,
        opt(
            "name_contains",
            Kind::Str { min: 1, max: 64, text: crate::grammar::Text::Any },
            "Part of the name, any case (Fabric's profile search matches only exact names, so the server pages through \
             the other filters' matches, at most 500, and filters them itself)",
        ),
        METRO_ARG,
        opt("visibility", Kind::Enum(PROFILE_VISIBILITIES), "PUBLIC (providers) or PRIVATE (yours)"),
        opt("view_point", Kind::Enum(&["aSide", "zSide"]), "Which end you stand on").or("\"aSide\""),
        OFFSET,
        LIMIT,
        RAW,
    ],
    rule: None,
    rule_doc: "",
};
static GET_PROFILE: Object = by_id!("profile_id", "service profile");
static SEARCH_CONNECTIONS: Object = Object {
    fields: &[
        NAME,
        NAME_CONTAINS,
        opt("state", Kind::Enum(CONNECTION_STATES), "Connection state"),
        opt("port_id", UUID, "A-side port uuid"),
        OFFSET,
        LIMIT,
        RAW,
    ],
    rule: None,
    rule_doc: "",
};
static GET_CONNECTION: Object = by_id!("connection_id", "connection");
static SEARCH_NETWORKS: Object = Object {
    fields: &[
        NAME,
        NAME_CONTAINS,
        opt("type", Kind::Enum(NETWORK_TYPES), "Network type"),
        opt("scope", Kind::Enum(NETWORK_SCOPES), "Network scope"),
        opt("state", Kind::Enum(NETWORK_STATES), "Network state"),
        OFFSET,
        LIMIT,
        RAW,
    ],
    rule: None,
    rule_doc: "",
};
static GET_NETWORK: Object = by_id!("network_id", "network");
static SEARCH_TOKENS: Object = Object {
    fields: &[NAME, NAME_CONTAINS, opt("state", Kind::Enum(TOKEN_STATES), "Token state"), OFFSET, LIMIT, RAW],
    rule: None,
    rule_doc: "",
};
static GET_TOKEN: Object = by_id!("service_token_id", "service token");
static SEARCH_PRICES: Object = Object {
    fields: &[
        req("connection_type", Kind::Enum(PRICED_CONNECTION_TYPES), "The connection type to price"),
        req("bandwidth", int(1, 100_000), "Mbps"),
        opt("a_side_type", Kind::Enum(PRICED_ACCESS_POINT_TYPES), "A-side access point type").or("\"COLO\""),
        opt("a_side_metro", METRO, "A-side metro code"),
        opt("a_side_port_id", UUID, "A-side port uuid"),
        opt("z_side_type", Kind::Enum(PRICED_ACCESS_POINT_TYPES), "Z-side access point type"),
        opt("z_side_metro", METRO, "Z-side metro code"),
        opt("z_side_profile_id", UUID, "Z-side service profile uuid"),
    ],
    rule: None,
    rule_doc: "",
};

pub static TOOLS: [ToolDef; 12] = [
    read(
        "fabric_search_ports",
        "ports",
        "Search Fabric ports",
        "Search your Fabric ports by name, metro, state or project. Compact rows give uuid, name, state, metro, bandwidth, available bandwidth and encapsulation (DOT1Q/QINQ) — what a connection spec's port access point needs.",
        &SEARCH_PORTS,
        search_ports,
    ),
    read(
        "fabric_get_port",
        "ports",
        "Get a Fabric port",
        "Get one Fabric port by uuid (compact: uuid, name, state, metro, bandwidth, encapsulation).",
        &GET_PORT,
        get_port,
    ),
    read(
        "fabric_list_port_vlans",
        "ports",
        "List a port's VLANs in use",
        "List the VLANs in use on a port (its link protocols) and what holds each (a connection or a service token, by uuid, type and bandwidth), so a new connection can pick a free vlanTag and avoid EQ-3142102 duplicate-VLAN errors.",
        &PORT_VLANS,
        list_port_vlans,
    ),
    read(
        "fabric_search_service_profiles",
        "service_profiles",
        "Search service profiles",
        "Search service profiles (cloud providers and private sellers) by exact name, part of the name, metro or visibility. Compact rows give uuid, name, type, visibility, metros and supported bandwidths — what a connection spec's SP access point needs.",
        &SEARCH_PROFILES,
        search_profiles,
    ),
    read(
        "fabric_get_service_profile",
        "service_profiles",
        "Get a service profile",
        "Get one service profile by uuid.",
        &GET_PROFILE,
        get_profile,
    ),
    read(
        "fabric_search_connections",
        "connections",
        "Search Fabric connections",
        "Search Fabric connections by name, state or A-side port. Compact rows give uuid, name, type, state, bandwidth, status and both sides (port, VLAN, metro, profile).",
        &SEARCH_CONNECTIONS,
        search_connections,
    ),
    read(
        "fabric_get_connection",
        "connections",
        "Get a Fabric connection",
        "Get one Fabric connection by uuid (for example to follow a create from PROVISIONING to PROVISIONED).",
        &GET_CONNECTION,
        get_connection,
    ),
    read(
        "fabric_search_networks",
        "networks",
        "Search Fabric networks",
        "Search Fabric networks (EVPLAN, EPLAN, ...) by name, type, scope or state.",
        &SEARCH_NETWORKS,
        search_networks,
    ),
    read(
        "fabric_get_network",
        "networks",
        "Get a Fabric network",
        "Get one Fabric network by uuid.",
        &GET_NETWORK,
        get_network,
    ),
    read(
        "fabric_search_service_tokens",
        "service_tokens",
        "Search service tokens",
        "Search service tokens by name or state.",
        &SEARCH_TOKENS,
        search_tokens,
    ),
    read(
        "fabric_get_service_token",
        "service_tokens",
        "Get a service token",
        "Get one service token by uuid.",
        &GET_TOKEN,
        get_token,
    ),
    read(
        "fabric_search_prices",
        "pricing",
        "Price a virtual connection",
        "Rate-card price of a virtual connection: give connection type and bandwidth, and optionally the access point types, metros, port or profile. Returns monthly and one-time charges, currency and term (list prices; account discounts may apply).",
        &SEARCH_PRICES,
        search_prices,
    ),
];

// ---- filters ----

/// The name filters of an endpoint whose contract allows LIKE (a partial match): `name` exact,
/// `name_contains` as LIKE with the fragment itself (the contract documents no wildcard).
fn name_filters(args: &Value, filters: &mut Vec<Value>) -> Result<(), ToolError> {
    if let Some(n) = text(args, "name") {
        if n.contains('*') || n.contains('%') {
            return Err(ToolError::invalid_argument(
                "/name",
                "is an exact name; for a partial match give name_contains (without wildcards)",
            ));
        }
        filters.push(eq("/name", n));
    }
    if let Some(c) = text(args, "name_contains") {
        filters.push(json!({"property": "/name", "operator": "LIKE", "values": [c]}));
    }
    Ok(())
}

/// A search body: the filters (one, or `and` of several), paging.
fn search_body(filters: Vec<Value>, offset: u64, limit: u64) -> String {
    let mut body = Map::new();
    body.insert("pagination".into(), json!({"offset": offset, "limit": limit}));
    match filters.len() {
        0 => {}
        1 => {
            body.insert("filter".into(), filters.into_iter().next().unwrap());
        }
        _ => {
            body.insert("filter".into(), json!({"and": filters}));
        }
    }
    crate::json_text(&Value::Object(body))
}

fn post(path: &str, query: Vec<(String, String)>, body: String) -> FabricRequest {
    FabricRequest { method: Method::Post, path: path.into(), query, body: Some(body) }
}

fn get(path: String, query: Vec<(String, String)>) -> FabricRequest {
    FabricRequest { method: Method::Get, path, query, body: None }
}

/// Copies the fields at JSON pointers into a flat object, skipping absent ones.
fn pick(v: &Value, fields: &[(&str, &str)]) -> Map<String, Value> {
    let mut out = Map::new();
    for (key, pointer) in fields {
        if let Some(x) = v.pointer(pointer).filter(|x| !x.is_null()) {
            out.insert((*key).to_string(), x.clone());
        }
    }
    out
}

// ---- compact forms ----

fn compact_port(p: &Value) -> Value {
    Value::Object(pick(
        p,
        &[
            ("uuid", "/uuid"),
            ("name", "/name"),
            ("state", "/state"),
            ("metro", "/location/metroCode"),
            ("ibx", "/location/ibx"),
            ("bandwidth_mbps", "/bandwidth"),
            ("available_bandwidth_mbps", "/availableBandwidth"),
            ("encapsulation", "/encapsulation/type"),
            ("redundancy", "/redundancy/priority"),
            ("project_id", "/project/projectId"),
        ],
    ))
}

/// A VLAN in use and what holds it: Fabric names the holder as `asset` (a connection) or
/// `serviceToken`, with its uuid, type and bandwidth (never a name).
fn compact_vlan(l: &Value) -> Value {
    let mut out = pick(
        l,
        &[
            ("type", "/type"),
            ("vlan_tag", "/vlanTag"),
            ("vlan_s_tag", "/vlanSTag"),
            ("vlan_c_tag", "/vlanCTag"),
            ("vlan_tag_min", "/vlanTagMin"),
            ("vlan_tag_max", "/vlanTagMax"),
            ("vni", "/vni"),
            ("state", "/state"),
        ],
    );
    let holder = [("connection", "asset"), ("service_token", "serviceToken")]
        .into_iter()
        .find_map(|(kind, key)| l.get(key).map(|h| (kind, h)));
    if let Some((kind, h)) = holder {
        let mut held = pick(h, &[("uuid", "/uuid"), ("type", "/type"), ("bandwidth_mbps", "/bandwidth")]);
        held.insert("kind".into(), json!(kind));
        out.insert("held_by".into(), Value::Object(held));
    }
    Value::Object(out)
}

fn compact_profile(p: &Value) -> Value {
    let mut out = pick(
        p,
        &[
            ("uuid", "/uuid"),
            ("name", "/name"),
            ("type", "/type"),
            ("state", "/state"),
            ("visibility", "/visibility"),
            ("supported_bandwidths_mbps", "/accessPointTypeConfigs/0/supportedBandwidths"),
        ],
    );
    if let Some(metros) = p.get("metros").and_then(Value::as_array) {
        out.insert("metros".into(), metros.iter().filter_map(|m| m.get("code").cloned()).collect());
        // what a connection to it must bring: a seller region offered in the chosen metro
        let mut regions: Vec<Value> = Vec::new();
        for r in metros.iter().filter_map(|m| m.get("sellerRegions")?.as_object()).flat_map(|m| m.keys()) {
            if !regions.iter().any(|x| x == r.as_str()) {
                regions.push(json!(r));
            }
        }
        if !regions.is_empty() {
            out.insert("seller_regions".into(), Value::Array(regions));
        }
    }
    let key = p.pointer("/accessPointTypeConfigs/0/authenticationKey");
    if key.and_then(|k| k.get("required")) == Some(&json!(true)) {
        let label = key.and_then(|k| k.get("label")).cloned().unwrap_or(json!("required"));
        out.insert("authentication_key".into(), label);
    }
    Value::Object(out)
}

fn compact_side(side: &Value) -> Value {
    Value::Object(pick(
        side,
        &[
            ("type", "/accessPoint/type"),
            ("port_uuid", "/accessPoint/port/uuid"),
            ("link_protocol", "/accessPoint/linkProtocol/type"),
            ("vlan_tag", "/accessPoint/linkProtocol/vlanTag"),
            ("vlan_s_tag", "/accessPoint/linkProtocol/vlanSTag"),
            ("metro", "/accessPoint/location/metroCode"),
            ("profile_uuid", "/accessPoint/profile/uuid"),
            ("network_uuid", "/accessPoint/network/uuid"),
            ("router_uuid", "/accessPoint/router/uuid"),
            ("virtual_device_uuid", "/accessPoint/virtualDevice/uuid"),
            ("service_token_uuid", "/serviceToken/uuid"),
        ],
    ))
}

fn compact_connection(c: &Value) -> Value {
    let mut out = pick(
        c,
        &[
            ("uuid", "/uuid"),
            ("name", "/name"),
            ("type", "/type"),
            ("state", "/state"),
            ("bandwidth_mbps", "/bandwidth"),
            ("equinix_status", "/operation/equinixStatus"),
            ("provider_status", "/operation/providerStatus"),
        ],
    );
    out.insert("a_side".into(), compact_side(&c["aSide"]));
    out.insert("z_side".into(), compact_side(&c["zSide"]));
    Value::Object(out)
}

fn compact_network(n: &Value) -> Value {
    Value::Object(pick(
        n,
        &[
            ("uuid", "/uuid"),
            ("name", "/name"),
            ("type", "/type"),
            ("scope", "/scope"),
            ("state", "/state"),
            ("region", "/location/region"),
            ("equinix_status", "/operation/equinixStatus"),
            ("connections_count", "/connectionsCount"),
        ],
    ))
}

fn compact_token(t: &Value) -> Value {
    let mut out = pick(
        t,
        &[
            ("uuid", "/uuid"),
            ("name", "/name"),
            ("type", "/type"),
            ("state", "/state"),
            ("expiration", "/expirationDateTime"),
            ("connection_type", "/connection/type"),
            ("bandwidth_limit_mbps", "/connection/bandwidthLimit"),
        ],
    );
    for (key, side) in [("a_side", "aSide"), ("z_side", "zSide")] {
        if let Some(sel) = t.pointer(&format!("/connection/{side}/accessPointSelectors/0")) {
            let picked = pick(
                sel,
                &[
                    ("type", "/type"),
                    ("port_uuid", "/port/uuid"),
                    ("vlan_tag", "/linkProtocol/vlanTag"),
                    ("vlan_s_tag", "/linkProtocol/vlanSTag"),
                    ("virtual_device_uuid", "/virtualDevice/uuid"),
                    ("network_uuid", "/network/uuid"),
                ],
            );
            out.insert(key.into(), Value::Object(picked));
        }
    }
    Value::Object(out)
}

fn compact_price(p: &Value) -> Value {
    let mut out = pick(
        p,
        &[
            ("product_code", "/code"),
            ("currency", "/currency"),
            ("term_length_months", "/termLength"),
            ("connection_type", "/connection/type"),
            ("bandwidth_mbps", "/connection/bandwidth"),
        ],
    );
    out.insert("monthly_recurring".into(), json!(charge_total(p, "MONTHLY_RECURRING")));
    out.insert("non_recurring".into(), json!(charge_total(p, "NON_RECURRING")));
    Value::Object(out)
}

/// One object, compacted unless `raw`.
fn one(answer: Value, key: &str, raw: bool, compact: fn(&Value) -> Value) -> Value {
    let item = if raw { answer } else { compact(&answer) };
    let mut out = Map::new();
    out.insert(key.into(), item);
    Value::Object(out)
}

// ---- the tools ----

fn get_by_id(
    host: &mut dyn Host,
    args: &Value,
    key: &str,
    collection: &str,
    result_key: &str,
    compact: fn(&Value) -> Value,
) -> Result<Value, ToolError> {
    let id = text(args, key).unwrap_or_default();
    let raw = args.get("raw").and_then(Value::as_bool).unwrap_or(false);
    let answer = send_json(host, get(format!("/fabric/v4/{collection}/{id}"), Vec::new()))?;
    Ok(one(answer, result_key, raw, compact))
}

fn search_ports(host: &mut dyn Host, args: &Value) -> Result<Value, ToolError> {
    let (offset, limit, raw) = paging(args);
    let mut filters = Vec::new();
    name_filters(args, &mut filters)?;
    if let Some(m) = text(args, "metro") {
        filters.push(eq("/location/metroCode", m));
    }
    if let Some(s) = text(args, "state") {
        filters.push(eq("/state", s));
    }
    if let Some(p) = text(args, "project_id") {
        filters.push(eq("/project/projectId", p));
    }
    if filters.is_empty() {
        // The port search requires a filter; "every state" is the contract's way to say all.
        filters.push(json!({"property": "/state", "operator": "=", "values": PORT_STATES}));
    }
    let answer = send_json(host, post("/fabric/v4/ports/search", Vec::new(), search_body(filters, offset, limit)))?;
    Ok(paged(answer, "ports", offset, raw, compact_port))
}

fn get_port(host: &mut dyn Host, args: &Value) -> Result<Value, ToolError> {
    get_by_id(host, args, "port_id", "ports", "port", compact_port)
}

fn list_port_vlans(host: &mut dyn Host, args: &Value) -> Result<Value, ToolError> {
    let id = text(args, "port_id").unwrap_or_default();
    let (offset, limit, raw) = paging(args);
    // The contract declares no paging here, but Fabric's own `next` links page with these.
    let query = paging_query(offset, limit);
    let answer = send_json(host, get(format!("/fabric/v4/ports/{id}/linkProtocols"), query))?;
    let mut out = paged(answer, "vlans_in_use", offset, raw, compact_vlan);
    out["port_id"] = json!(id);
    Ok(out)
}

/// How many profiles a `name_contains` search reads at most (five pages of 100).
const PROFILE_SCAN: u64 = 500;

fn search_profiles(host: &mut dyn Host, args: &Value) -> Result<Value, ToolError> {
    let (offset, limit, raw) = paging(args);
    // The profile search takes `=` only (its contract's own error says so): exact names go to
    // Fabric, partial ones are matched here over the other filters' results.
    let mut filters = Vec::new();
    if let Some(n) = text(args, "name") {
        if n.contains('*') || n.contains('%') {
            return Err(ToolError::invalid_argument(
                "/name",
                "is an exact name; for a partial match give name_contains (without wildcards)",
            ));
        }
        filters.push(eq("/name", n));
    }
    if let Some(m) = text(args, "metro") {
        filters.push(eq("/metros/code", m));
    }
    if let Some(v) = text(args, "visibility") {
        filters.push(eq("/visibility", v));
    }
    let view_point = text(args, "view_point").unwrap_or("aSide");
    let query = vec![("viewPoint".to_string(), view_point.to_string())];
    let Some(fragment) = text(args, "name_contains").map(str::to_lowercase) else {
        let body = search_body(filters, offset, limit);
        let answer = send_json(host, post("/fabric/v4/serviceProfiles/search", query, body))?;
        return Ok(paged(answer, "service_profiles", offset, raw, compact_profile));
    };
    let mut matched = Vec::new();
    let (mut scanned, mut total) = (0u64, u64::MAX);
    while scanned < total.min(PROFILE_SCAN) {
        let body = search_body(filters.clone(), scanned, 100);
        let mut answer = send_json(host, post("/fabric/v4/serviceProfiles/search", query.clone(), body))?;
        total = answer.pointer("/pagination/total").and_then(Value::as_u64).unwrap_or(0);
        let page = match answer.get_mut("data").map(Value::take) {
            Some(Value::Array(items)) => items,
            _ => Vec::new(),
        };
        if page.is_empty() {
            break;
        }
        scanned += page.len() as u64;
        matched.extend(
            page.into_iter().filter(|p| p["name"].as_str().is_some_and(|n| n.to_lowercase().contains(&fragment))),
        );
    }
    let count = matched.len() as u64;
    let data: Vec<Value> = matched.into_iter().skip(offset as usize).take(limit as usize).collect();
    let answer = json!({"pagination": {"total": count}, "data": data});
    let mut out = paged(answer, "service_profiles", offset, raw, compact_profile);
    out["scanned"] = json!(scanned);
    if scanned < total {
        out["note"] = json!(format!(
            "only the first {scanned} of {total} profiles were searched for the name; add metro or visibility to narrow"
        ));
    }
    Ok(out)
}

fn get_profile(host: &mut dyn Host, args: &Value) -> Result<Value, ToolError> {
    get_by_id(host, args, "profile_id", "serviceProfiles", "service_profile", compact_profile)
}

fn search_connections(host: &mut dyn Host, args: &Value) -> Result<Value, ToolError> {
    let (offset, limit, raw) = paging(args);
    let mut filters = Vec::new();
    name_filters(args, &mut filters)?;
    if let Some(s) = text(args, "state") {
        filters.push(eq("/state", s));
    }
    if let Some(p) = text(args, "port_id") {
        filters.push(eq("/aSide/accessPoint/port/uuid", p));
    }
    let body = search_body(filters, offset, limit);
    let answer = send_json(host, post("/fabric/v4/connections/search", Vec::new(), body))?;
    Ok(paged(answer, "connections", offset, raw, compact_connection))
}

fn get_connection(host: &mut dyn Host, args: &Value) -> Result<Value, ToolError> {
    get_by_id(host, args, "connection_id", "connections", "connection", compact_connection)
}

fn search_networks(host: &mut dyn Host, args: &Value) -> Result<Value, ToolError> {
    let (offset, limit, raw) = paging(args);
    let mut filters = Vec::new();
    name_filters(args, &mut filters)?;
    for (key, property) in [("type", "/type"), ("scope", "/scope"), ("state", "/state")] {
        if let Some(v) = text(args, key) {
            filters.push(eq(property, v));
        }
    }
    let body = search_body(filters, offset, limit);
    let answer = send_json(host, post("/fabric/v4/networks/search", Vec::new(), body))?;
    Ok(paged(answer, "networks", offset, raw, compact_network))
}

fn get_network(host: &mut dyn Host, args: &Value) -> Result<Value, ToolError> {
    get_by_id(host, args, "network_id", "networks", "network", compact_network)
}

fn search_tokens(host: &mut dyn Host, args: &Value) -> Result<Value, ToolError> {
    let (offset, limit, raw) = paging(args);
    let mut filters = Vec::new();
    name_filters(args, &mut filters)?;
    if let Some(s) = text(args, "state") {
        filters.push(eq("/state", s));
    }
    let query = paging_query(offset, limit);
    let body = search_body(filters, offset, limit);
    let answer = send_json(host, post("/fabric/v4/serviceTokens/search", query, body))?;
    Ok(paged(answer, "service_tokens", offset, raw, compact_token))
}

fn get_token(host: &mut dyn Host, args: &Value) -> Result<Value, ToolError> {
    get_by_id(host, args, "service_token_id", "serviceTokens", "service_token", compact_token)
}

fn search_prices(host: &mut dyn Host, args: &Value) -> Result<Value, ToolError> {
    let kind = text(args, "connection_type").unwrap_or_default();
    let bandwidth = number(args, "bandwidth").unwrap_or_default();
    let mut and = product_filter(kind, bandwidth);
    and.push(eq("/connection/aSide/accessPoint/type", text(args, "a_side_type").unwrap_or("COLO")));
    for (key, property) in [
        ("a_side_metro", "/connection/aSide/accessPoint/location/metroCode"),
        ("a_side_port_id", "/connection/aSide/accessPoint/port/uuid"),
        ("z_side_type", "/connection/zSide/accessPoint/type"),
        ("z_side_metro", "/connection/zSide/accessPoint/location/metroCode"),
        ("z_side_profile_id", "/connection/zSide/accessPoint/profile/uuid"),
    ] {
        if let Some(v) = text(args, key) {
            and.push(eq(property, v));
        }
    }
    let filter = json!({"filter": {"and": and}});
    let answer = send_json(host, post("/fabric/v4/prices/search", Vec::new(), crate::json_text(&filter)))?;
    let mut out = paged(answer, "prices", 0, false, compact_price);
    out["filter"] = filter["filter"].clone();
    if out["returned"] == 0 {
        out["note"] = json!("no rate-card price matched; try another bandwidth or fewer criteria");
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_host::FakeHost;

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
        let out =
            run("fabric_search_ports", &mut host, json!({"name_contains": "DC-", "metro": "DC", "limit": 1})).unwrap();
        let sent: Value = serde_json::from_str(host.sent[0].body.as_deref().unwrap()).unwrap();
        assert_eq!(sent["filter"]["and"][0], json!({"property": "/name", "operator": "LIKE", "values": ["DC-"]}));
        assert_eq!(sent["pagination"], json!({"offset": 0, "limit": 1}));
        assert_eq!(out["ports"][0]["encapsulation"], "DOT1Q");
        assert!(out["ports"][0].get("extra").is_none());
        assert_eq!(out["next_offset"], 1);
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
    fn wildcard_names_are_refused_and_profiles_never_get_like() {
        let mut host = FakeHost::answering(200, "{}");
        let err = run("fabric_search_ports", &mut host, json!({"name": "DC-*"})).unwrap_err();
        assert!(err["error"]["message"].as_str().unwrap().contains("name_contains"), "{err}");
        assert!(host.sent.is_empty());
        let page = r#"{"pagination":{"offset":0,"limit":100,"total":2},"data":[{"uuid":"u1","name":"AWS Direct Connect"},{"uuid":"u2","name":"Azure"}]}"#;
        let mut host = FakeHost::answering(200, page);
        let out =
            run("fabric_search_service_profiles", &mut host, json!({"name_contains": "aws", "metro": "DC"})).unwrap();
        assert_eq!(out["service_profiles"][0]["uuid"], "u1");
        assert_eq!((out["total"].clone(), out["returned"].clone()), (json!(1), json!(1)));
        let body = host.sent[0].body.as_deref().unwrap();
        assert!(!body.contains("LIKE") && body.contains("/metros/code"), "{body}");
    }

    #[test]
    fn a_vlan_names_its_holder_as_fabric_does() {
        let asset = json!({"type": "DOT1Q", "vlanTag": 100, "state": "RESERVED",
            "asset": {"href": "h", "uuid": "c-1", "type": "EVPL_VC", "bandwidth": 50}});
        assert_eq!(
            compact_vlan(&asset)["held_by"],
            json!({"kind": "connection", "uuid": "c-1", "type": "EVPL_VC", "bandwidth_mbps": 50})
        );
        let token = json!({"type": "DOT1Q", "vlanTag": 101, "serviceToken": {"uuid": "t-1", "type": "VC_TOKEN"}});
        assert_eq!(compact_vlan(&token)["held_by"]["kind"], "service_token");
    }
}
