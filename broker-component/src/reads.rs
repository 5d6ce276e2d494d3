//! The read-only catalog: everything an agent needs to build a correct change spec. Arguments
//! are simple and typed (metro code, name, state, uuid, paging); the component builds Fabric's
//! filters as each endpoint's contract allows, and compacts the lists (a get tool returns Fabric's
//! whole object). Every list is paged with `total` and `next_offset`, never truncated silently.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec;
use alloc::vec::Vec;
use serde_json::{Map, Value, json};

use crate::args::{LIMIT, OFFSET, number, paging, paging_query, text};
use crate::capability::{FabricRequest, Host, Method};
use crate::catalog::{Output, READ_ONLY, ToolDef};
use crate::fabric_call::{paged, send_json};
use crate::fabric_enums::*;
use crate::grammar::{Field, Kind, METRO, Object, UUID, int, opt, req};
use crate::price::{charge_total, eq, product_filter};
use crate::tool_error::ToolError;

const NAME: Field = opt("name", crate::grammar::TEXT, "Part of the name");
const METRO_ARG: Field = opt("metro", METRO, "Metro code (fabric_list_metros)");

/// `{key}` (a uuid, required): the argument of every get-by-id tool.
macro_rules! by_id {
    ($key:literal, $search:literal) => {
        Object { name: "", fields: &[req($key, UUID, concat!("From ", $search))], rule: None, rule_doc: "" }
    };
}

/// A read-only row.
const fn read(
    name: &'static str,
    toolset: &'static str,
    title: &'static str,
    description: &'static str,
    args: &'static Object,
    output: Output,
    run: crate::catalog::Handler,
) -> ToolDef {
    ToolDef { name, toolset, title, description, args, schema_extra: None, hints: READ_ONLY, output, run }
}

static SEARCH_PORTS: Object = Object {
    name: "",
    fields: &[
        NAME,
        METRO_ARG,
        opt("state", Kind::Enum(PORT_STATES), "State"),
        opt("project_id", UUID, "Project uuid"),
        OFFSET,
        LIMIT,
    ],
    rule: None,
    rule_doc: "",
};
static GET_PORT: Object = by_id!("port_id", "fabric_search_ports");
static PORT_VLANS: Object = Object {
    name: "",
    fields: &[req("port_id", UUID, "From fabric_search_ports"), OFFSET, LIMIT],
    rule: None,
    rule_doc: "",
};
static SEARCH_PROFILES: Object = Object {
    name: "",
    fields: &[
        NAME,
        METRO_ARG,
        opt("visibility", Kind::Enum(PROFILE_VISIBILITIES), "PUBLIC: providers"),
        opt("view_point", Kind::Enum(&["aSide", "zSide"]), "Your end").or("\"aSide\""),
        OFFSET,
        LIMIT,
    ],
    rule: None,
    rule_doc: "",
};
static GET_PROFILE: Object = by_id!("profile_id", "fabric_search_service_profiles");
static SEARCH_CONNECTIONS: Object = Object {
    name: "",
    fields: &[
        NAME,
        opt("state", Kind::Enum(CONNECTION_STATES), "State"),
        opt("port_id", UUID, "A-side port, from fabric_search_ports"),
        OFFSET,
        LIMIT,
    ],
    rule: None,
    rule_doc: "",
};
static GET_CONNECTION: Object = by_id!("connection_id", "fabric_search_connections");
static SEARCH_NETWORKS: Object = Object {
    name: "",
    fields: &[
        NAME,
        opt("type", Kind::Enum(NETWORK_TYPES), "Type"),
        opt("scope", Kind::Enum(NETWORK_SCOPES), "Scope"),
        opt("state", Kind::Enum(NETWORK_STATES), "State"),
        OFFSET,
        LIMIT,
    ],
    rule: None,
    rule_doc: "",
};
static GET_NETWORK: Object = by_id!("network_id", "fabric_search_networks");
static SEARCH_TOKENS: Object = Object {
    name: "",
    fields: &[NAME, opt("state", Kind::Enum(TOKEN_STATES), "State"), OFFSET, LIMIT],
    rule: None,
    rule_doc: "",
};
static GET_TOKEN: Object = by_id!("service_token_id", "fabric_search_service_tokens");
static SEARCH_PRICES: Object = Object {
    name: "",
    fields: &[
        req("connection_type", Kind::Enum(PRICED_CONNECTION_TYPES), "Connection type"),
        req("bandwidth", int(1, 100_000), "Mbps"),
        opt("a_side_type", Kind::Enum(PRICED_ACCESS_POINT_TYPES), "A-side type").or("\"COLO\""),
        opt("a_side_metro", METRO, "From fabric_list_metros"),
        opt("a_side_port_id", UUID, "From fabric_search_ports"),
        opt("z_side_type", Kind::Enum(PRICED_ACCESS_POINT_TYPES), "Z-side type"),
        opt("z_side_metro", METRO, "From fabric_list_metros"),
        opt("z_side_profile_id", UUID, "From fabric_search_service_profiles"),
    ],
    rule: None,
    rule_doc: "",
};

pub static TOOLS: [ToolDef; 12] = [
    read(
        "fabric_search_ports",
        "ports",
        "Search ports",
        "Your ports by name, metro, state or project.",
        &SEARCH_PORTS,
        Output::Page("ports", &[]),
        search_ports,
    ),
    read("fabric_get_port", "ports", "Get a port", "The whole port object.", &GET_PORT, Output::One("port"), get_port),
    read(
        "fabric_list_port_vlans",
        "ports",
        "VLANs in use on a port",
        "VLANs in use on a port, and what holds each.",
        &PORT_VLANS,
        Output::Page("vlans_in_use", &[]),
        list_port_vlans,
    ),
    read(
        "fabric_search_service_profiles",
        "service_profiles",
        "Search service profiles",
        "Service profiles and what a connection to each needs.",
        &SEARCH_PROFILES,
        Output::Page("service_profiles", &[]),
        search_profiles,
    ),
    read(
        "fabric_get_service_profile",
        "service_profiles",
        "Get a service profile",
        "The whole profile object.",
        &GET_PROFILE,
        Output::One("service_profile"),
        get_profile,
    ),
    read(
        "fabric_search_connections",
        "connections",
        "Search connections",
        "Connections by name, state or A-side port.",
        &SEARCH_CONNECTIONS,
        Output::Page("connections", &[]),
        search_connections,
    ),
    read(
        "fabric_get_connection",
        "connections",
        "Get a connection",
        "The whole connection object.",
        &GET_CONNECTION,
        Output::One("connection"),
        get_connection,
    ),
    read(
        "fabric_search_networks",
        "networks",
        "Search networks",
        "Networks by name, type, scope or state.",
        &SEARCH_NETWORKS,
        Output::Page("networks", &[]),
        search_networks,
    ),
    read(
        "fabric_get_network",
        "networks",
        "Get a network",
        "The whole network object.",
        &GET_NETWORK,
        Output::One("network"),
        get_network,
    ),
    read(
        "fabric_search_service_tokens",
        "service_tokens",
        "Search service tokens",
        "Service tokens by name or state.",
        &SEARCH_TOKENS,
        Output::Page("service_tokens", &[]),
        search_tokens,
    ),
    read(
        "fabric_get_service_token",
        "service_tokens",
        "Get a service token",
        "The whole token object.",
        &GET_TOKEN,
        Output::One("service_token"),
        get_token,
    ),
    read(
        "fabric_search_prices",
        "pricing",
        "Price a connection",
        "List price of a virtual connection.",
        &SEARCH_PRICES,
        Output::Page("prices", &[]),
        search_prices,
    ),
];

// ---- filters ----

/// The name to match, as the fragment Fabric's LIKE (a partial match) takes: `*` wildcards an
/// agent may add are dropped (the contract documents none).
fn name_fragment(args: &Value) -> Option<String> {
    text(args, "name").map(|n| n.replace(['*', '%'], "")).filter(|n| !n.is_empty())
}

/// The name filter of an endpoint whose contract allows LIKE.
fn name_filters(args: &Value, filters: &mut Vec<Value>) -> Result<(), ToolError> {
    if let Some(fragment) = name_fragment(args) {
        filters.push(json!({"property": "/name", "operator": "LIKE", "values": [fragment]}));
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
    // flat, so a page's `same` can carry what every holder shares
    if let Some((kind, h)) = holder {
        out.insert("held_by".into(), json!(kind));
        out.extend(pick(
            h,
            &[("holder_uuid", "/uuid"), ("holder_type", "/type"), ("holder_bandwidth_mbps", "/bandwidth")],
        ));
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

/// One end of a connection in a few words: "DC-PRI-01 VLAN 100", "AWS Direct Connect in DC",
/// "network <uuid>". Names where Fabric gives them, uuids otherwise; get the connection for the rest.
fn side_summary(side: &Value) -> Value {
    if let Some(token) = side.pointer("/serviceToken/uuid").and_then(Value::as_str) {
        return json!(format!("service token {token}"));
    }
    let ap = &side["accessPoint"];
    let named = |key: &str| {
        let o = &ap[key];
        o.get("name").or_else(|| o.get("uuid")).and_then(Value::as_str).map(String::from)
    };
    let lp = &ap["linkProtocol"];
    let vlan = match (lp.get("vlanTag"), lp.get("vlanSTag"), lp.get("vlanCTag")) {
        (Some(t), _, _) => format!(" VLAN {t}"),
        (None, Some(s), Some(c)) => format!(" VLAN {s}.{c}"),
        (None, Some(s), None) => format!(" VLAN {s}"),
        _ => String::new(),
    };
    let metro =
        ap.pointer("/location/metroCode").and_then(Value::as_str).map(|m| format!(" in {m}")).unwrap_or_default();
    let kind = ap.get("type").and_then(Value::as_str).unwrap_or("?");
    let text = match kind {
        "COLO" => named("port").map(|p| format!("{p}{vlan}")),
        "SP" => named("profile").map(|p| format!("{p}{metro}")),
        "NETWORK" => named("network").map(|n| format!("network {n}")),
        "CLOUD_ROUTER" => named("router").map(|r| format!("router {r}")),
        "VD" => named("virtualDevice").map(|d| format!("device {d}")),
        _ => None,
    };
    json!(text.unwrap_or_else(|| format!("{kind}{metro}")))
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
    out.insert("a_side".into(), side_summary(&c["aSide"]));
    out.insert("z_side".into(), side_summary(&c["zSide"]));
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
    // flat columns: tokens on one port share its uuid, which a page then gives once under `same`
    for (prefix, side) in [("a_side", "aSide"), ("z_side", "zSide")] {
        if let Some(sel) = t.pointer(&format!("/connection/{side}/accessPointSelectors/0")) {
            for (key, pointer) in [
                ("type", "/type"),
                ("port_uuid", "/port/uuid"),
                ("vlan_tag", "/linkProtocol/vlanTag"),
                ("vlan_s_tag", "/linkProtocol/vlanSTag"),
                ("virtual_device_uuid", "/virtualDevice/uuid"),
                ("network_uuid", "/network/uuid"),
            ] {
                if let Some(v) = sel.pointer(pointer).filter(|v| !v.is_null()) {
                    out.insert(format!("{prefix}_{key}"), v.clone());
                }
            }
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

/// One object, as Fabric answers it (a single object is affordable whole).
fn one(answer: Value, key: &str) -> Value {
    let mut out = Map::new();
    out.insert(key.into(), answer);
    Value::Object(out)
}

// ---- the tools ----

fn get_by_id(
    host: &mut dyn Host,
    args: &Value,
    key: &str,
    collection: &str,
    result_key: &str,
) -> Result<Value, ToolError> {
    let id = text(args, key).unwrap_or_default();
    let answer = send_json(host, get(format!("/fabric/v4/{collection}/{id}"), Vec::new()))
        .map_err(|e| unknown_id_hint(e, key, &GET_IDS))?;
    Ok(one(answer, result_key))
}

/// The get tools' id arguments, each described by the search tool that lists valid ids.
static GET_IDS: [&Object; 6] = [&GET_PORT, &GET_PROFILE, &GET_CONNECTION, &GET_NETWORK, &GET_TOKEN, &PORT_VLANS];

/// A refused id (Fabric answers 400 or 404 for one it does not know) points to the search tool
/// named in the argument's description.
fn unknown_id_hint(e: ToolError, key: &str, objects: &[&Object]) -> ToolError {
    let status = e.details.get("status").and_then(Value::as_u64);
    let search = objects
        .iter()
        .flat_map(|o| o.fields.iter())
        .find(|f| f.name == key)
        .and_then(|f| crate::grammar::tool_named_in(f.doc));
    match (status, search) {
        (Some(400 | 404), Some(tool)) => {
            let step = format!("Check {key}: {tool} lists the ones you can read.");
            e.with("next_step", json!(step))
        }
        _ => e,
    }
}

fn search_ports(host: &mut dyn Host, args: &Value) -> Result<Value, ToolError> {
    let (offset, limit) = paging(args);
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
    Ok(paged(answer, "ports", offset, compact_port))
}

fn get_port(host: &mut dyn Host, args: &Value) -> Result<Value, ToolError> {
    get_by_id(host, args, "port_id", "ports", "port")
}

fn list_port_vlans(host: &mut dyn Host, args: &Value) -> Result<Value, ToolError> {
    let id = text(args, "port_id").unwrap_or_default();
    let (offset, limit) = paging(args);
    // The contract declares no paging here, but Fabric's own `next` links page with these.
    let query = paging_query(offset, limit);
    let answer = send_json(host, get(format!("/fabric/v4/ports/{id}/linkProtocols"), query))
        .map_err(|e| unknown_id_hint(e, "port_id", &GET_IDS))?;
    let mut out = paged(answer, "vlans_in_use", offset, compact_vlan);
    out["port_id"] = json!(id);
    Ok(out)
}

/// How many profiles a search by name reads at most (five pages of 100).
const PROFILE_SCAN: u64 = 500;

fn search_profiles(host: &mut dyn Host, args: &Value) -> Result<Value, ToolError> {
    let (offset, limit) = paging(args);
    // The profile search takes `=` only (its contract's own error says so): names are matched
    // here over the other filters' results.
    let mut filters = Vec::new();
    if let Some(m) = text(args, "metro") {
        filters.push(eq("/metros/code", m));
    }
    if let Some(v) = text(args, "visibility") {
        filters.push(eq("/visibility", v));
    }
    let view_point = text(args, "view_point").unwrap_or("aSide");
    let query = vec![("viewPoint".to_string(), view_point.to_string())];
    let Some(fragment) = name_fragment(args).map(|n| n.to_lowercase()) else {
        let body = search_body(filters, offset, limit);
        let answer = send_json(host, post("/fabric/v4/serviceProfiles/search", query, body))?;
        return Ok(paged(answer, "service_profiles", offset, compact_profile));
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
    let mut out = paged(answer, "service_profiles", offset, compact_profile);
    out["scanned"] = json!(scanned);
    if scanned < total {
        out["note"] = json!(format!(
            "only the first {scanned} of {total} profiles were searched for the name; add metro or visibility to narrow"
        ));
    }
    Ok(out)
}

fn get_profile(host: &mut dyn Host, args: &Value) -> Result<Value, ToolError> {
    get_by_id(host, args, "profile_id", "serviceProfiles", "service_profile")
}

fn search_connections(host: &mut dyn Host, args: &Value) -> Result<Value, ToolError> {
    let (offset, limit) = paging(args);
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
    Ok(paged(answer, "connections", offset, compact_connection))
}

fn get_connection(host: &mut dyn Host, args: &Value) -> Result<Value, ToolError> {
    get_by_id(host, args, "connection_id", "connections", "connection")
}

fn search_networks(host: &mut dyn Host, args: &Value) -> Result<Value, ToolError> {
    let (offset, limit) = paging(args);
    let mut filters = Vec::new();
    name_filters(args, &mut filters)?;
    for (key, property) in [("type", "/type"), ("scope", "/scope"), ("state", "/state")] {
        if let Some(v) = text(args, key) {
            filters.push(eq(property, v));
        }
    }
    let body = search_body(filters, offset, limit);
    let answer = send_json(host, post("/fabric/v4/networks/search", Vec::new(), body))?;
    Ok(paged(answer, "networks", offset, compact_network))
}

fn get_network(host: &mut dyn Host, args: &Value) -> Result<Value, ToolError> {
    get_by_id(host, args, "network_id", "networks", "network")
}

fn search_tokens(host: &mut dyn Host, args: &Value) -> Result<Value, ToolError> {
    let (offset, limit) = paging(args);
    let mut filters = Vec::new();
    name_filters(args, &mut filters)?;
    if let Some(s) = text(args, "state") {
        filters.push(eq("/state", s));
    }
    let query = paging_query(offset, limit);
    let body = search_body(filters, offset, limit);
    let answer = send_json(host, post("/fabric/v4/serviceTokens/search", query, body))?;
    Ok(paged(answer, "service_tokens", offset, compact_token))
}

fn get_token(host: &mut dyn Host, args: &Value) -> Result<Value, ToolError> {
    get_by_id(host, args, "service_token_id", "serviceTokens", "service_token")
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
    let mut out = paged(answer, "prices", 0, compact_price);
    if out["returned"] == 0 {
        // what was asked, so the agent can see which criterion to relax
        out["filter"] = filter["filter"].clone();
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
        let out = run("fabric_search_ports", &mut host, json!({"name": "DC-*", "metro": "DC", "limit": 1})).unwrap();
        let sent: Value = serde_json::from_str(host.sent[0].body.as_deref().unwrap()).unwrap();
        assert_eq!(sent["filter"]["and"][0], json!({"property": "/name", "operator": "LIKE", "values": ["DC-"]}));
        assert_eq!(sent["pagination"], json!({"offset": 0, "limit": 1}));
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
}
