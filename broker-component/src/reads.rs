//! The read-only catalog: everything an agent needs to build a correct change spec. Arguments
//! are simple and typed (metro code, name pattern, state, uuid, paging); the component builds
//! Fabric's filters, validates path parameters before any request, and compacts the answers
//! (`raw: true` returns Fabric's full objects). Every answer is paged with `total` and
//! `next_offset`, never truncated silently.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec;
use alloc::vec::Vec;
use serde_json::{Map, Value, json};

use crate::args::{Args, paging_query};
use crate::capability::{FabricRequest, Host, Method};
use crate::fabric_call::{paged, send_json};
use crate::price::{charge_total, eq, product_filter};
use crate::reader::{is_metro_code, is_uuid};
use crate::tool_error::ToolError;

/// Paging and `raw`, shared by every list/search schema.
macro_rules! paging {
    () => {
        r#""offset": {"type": "integer", "minimum": 0, "maximum": 100000, "default": 0, "description": "Index of the first item"},
    "limit": {"type": "integer", "minimum": 1, "maximum": 100, "default": 20, "description": "Page size (1-100)"},
    "raw": {"type": "boolean", "default": false, "description": "Return Fabric's full objects instead of the compact form"}"#
    };
}

macro_rules! name_pattern {
    () => {
        r#""name": {"type": "string", "minLength": 1, "maxLength": 128, "description": "Exact name, or a pattern with * wildcards (e.g. \"DC-*\")"}"#
    };
}

macro_rules! metro {
    () => {
        r#""metro": {"type": "string", "pattern": "^[A-Z0-9]{2,4}$", "description": "Metro code, e.g. DC or SV"}"#
    };
}

macro_rules! id_schema {
    ($key:literal, $what:literal) => {
        concat!(
            r#"{"type": "object", "properties": {""#,
            $key,
            r#"": {"type": "string", "pattern": "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$", "description": "The "#,
            $what,
            r#" uuid"}, "raw": {"type": "boolean", "default": false, "description": "Return Fabric's full object"}}, "required": [""#,
            $key,
            r#""], "additionalProperties": false}"#
        )
    };
}

/// One read tool: name, toolset, description, schema and its function.
pub struct ReadTool {
    pub name: &'static str,
    pub toolset: &'static str,
    pub description: &'static str,
    pub schema: &'static str,
    pub run: fn(&mut dyn Host, &str) -> Result<Value, ToolError>,
}

pub const TOOLS: &[ReadTool] = &[
    ReadTool {
        name: "fabric_search_ports",
        toolset: "ports",
        description: "Search your Fabric ports by name, metro, state or project. Compact rows give uuid, name, state, metro, bandwidth, available bandwidth and encapsulation (DOT1Q/QINQ) — what a connection spec's port access point needs.",
        schema: concat!(
            r#"{"type": "object", "properties": {"#,
            name_pattern!(),
            ",",
            metro!(),
            r#",
    "state": {"type": "string", "enum": ["ACTIVE", "INACTIVE", "PENDING", "PROVISIONING", "DEPROVISIONED"]},
    "project_id": {"type": "string", "pattern": "^[0-9a-fA-F-]{36}$"}, "#,
            paging!(),
            r#"}, "additionalProperties": false}"#
        ),
        run: search_ports,
    },
    ReadTool {
        name: "fabric_get_port",
        toolset: "ports",
        description: "Get one Fabric port by uuid (compact: uuid, name, state, metro, bandwidth, encapsulation).",
        schema: id_schema!("port_id", "port"),
        run: get_port,
    },
    ReadTool {
        name: "fabric_list_port_vlans",
        toolset: "ports",
        description: "List the VLANs in use on a port (its link protocols), so a new connection can pick a free vlanTag and avoid EQ-3142102 duplicate-VLAN errors.",
        schema: concat!(
            r#"{"type": "object", "properties": {"port_id": {"type": "string", "pattern": "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$", "description": "The port uuid"}, "#,
            paging!(),
            r#"}, "required": ["port_id"], "additionalProperties": false}"#
        ),
        run: list_port_vlans,
    },
    ReadTool {
        name: "fabric_search_service_profiles",
        toolset: "service_profiles",
        description: "Search service profiles (cloud providers and private sellers) by name, metro or visibility. Compact rows give uuid, name, type, visibility, metros and supported bandwidths — what a connection spec's SP access point needs.",
        schema: concat!(
            r#"{"type": "object", "properties": {"#,
            name_pattern!(),
            ",",
            metro!(),
            r#",
    "visibility": {"type": "string", "enum": ["PUBLIC", "PRIVATE"]},
    "view_point": {"type": "string", "enum": ["aSide", "zSide"], "default": "aSide"}, "#,
            paging!(),
            r#"}, "additionalProperties": false}"#
        ),
        run: search_profiles,
    },
    ReadTool {
        name: "fabric_get_service_profile",
        toolset: "service_profiles",
        description: "Get one service profile by uuid.",
        schema: id_schema!("profile_id", "service profile"),
        run: get_profile,
    },
    ReadTool {
        name: "fabric_search_connections",
        toolset: "connections",
        description: "Search Fabric connections by name, state or A-side port. Compact rows give uuid, name, type, state, bandwidth, status and both sides (port, VLAN, metro, profile).",
        schema: concat!(
            r#"{"type": "object", "properties": {"#,
            name_pattern!(),
            r#",
    "state": {"type": "string", "enum": ["ACTIVE", "PENDING", "PROVISIONED", "PROVISIONING", "REPROVISIONING", "DEPROVISIONING", "DEPROVISIONED", "FAILED", "DRAFT", "CANCELLED"]},
    "port_id": {"type": "string", "pattern": "^[0-9a-fA-F-]{36}$", "description": "A-side port uuid"}, "#,
            paging!(),
            r#"}, "additionalProperties": false}"#
        ),
        run: search_connections,
    },
    ReadTool {
        name: "fabric_get_connection",
        toolset: "connections",
        description: "Get one Fabric connection by uuid (for example to follow a create from PROVISIONING to PROVISIONED).",
        schema: id_schema!("connection_id", "connection"),
        run: get_connection,
    },
    ReadTool {
        name: "fabric_search_networks",
        toolset: "networks",
        description: "Search Fabric networks (EVPLAN, EPLAN, ...) by name, type, scope or state.",
        schema: concat!(
            r#"{"type": "object", "properties": {"#,
            name_pattern!(),
            r#",
    "type": {"type": "string", "enum": ["EVPLAN", "EPLAN", "IPWAN", "EVPTREE", "EPTREE"]},
    "scope": {"type": "string", "enum": ["REGIONAL", "GLOBAL", "LOCAL"]},
    "state": {"type": "string", "enum": ["ACTIVE", "INACTIVE", "DELETED"]}, "#,
            paging!(),
            r#"}, "additionalProperties": false}"#
        ),
        run: search_networks,
    },
    ReadTool {
        name: "fabric_get_network",
        toolset: "networks",
        description: "Get one Fabric network by uuid.",
        schema: id_schema!("network_id", "network"),
        run: get_network,
    },
    ReadTool {
        name: "fabric_search_service_tokens",
        toolset: "service_tokens",
        description: "Search service tokens by name or state.",
        schema: concat!(
            r#"{"type": "object", "properties": {"#,
            name_pattern!(),
            r#",
    "state": {"type": "string", "enum": ["ACTIVE", "INACTIVE", "EXPIRED", "DELETED"]}, "#,
            paging!(),
            r#"}, "additionalProperties": false}"#
        ),
        run: search_tokens,
    },
    ReadTool {
        name: "fabric_get_service_token",
        toolset: "service_tokens",
        description: "Get one service token by uuid.",
        schema: id_schema!("service_token_id", "service token"),
        run: get_token,
    },
    ReadTool {
        name: "fabric_search_prices",
        toolset: "pricing",
        description: "Rate-card price of a virtual connection: give connection type and bandwidth, and optionally the access point types, metros, port or profile. Returns monthly and one-time charges, currency and term (list prices; account discounts may apply).",
        schema: r#"{"type": "object", "properties": {
    "connection_type": {"type": "string", "enum": ["EVPL_VC", "EPL_VC", "EC_VC", "IP_VC", "ACCESS_EPL_VC", "EVPLAN_VC", "EPLAN_VC", "IPWAN_VC", "EVPTREE_VC", "EPTREE_VC", "IA_VC"]},
    "bandwidth": {"type": "integer", "minimum": 1, "maximum": 100000, "description": "Mbps"},
    "a_side_type": {"type": "string", "enum": ["COLO", "VD", "SP", "CLOUD_ROUTER", "NETWORK"], "default": "COLO"},
    "a_side_metro": {"type": "string", "pattern": "^[A-Z0-9]{2,4}$"},
    "a_side_port_id": {"type": "string", "pattern": "^[0-9a-fA-F-]{36}$"},
    "z_side_type": {"type": "string", "enum": ["COLO", "VD", "SP", "CLOUD_ROUTER", "NETWORK"]},
    "z_side_metro": {"type": "string", "pattern": "^[A-Z0-9]{2,4}$"},
    "z_side_profile_id": {"type": "string", "pattern": "^[0-9a-fA-F-]{36}$"}
  }, "required": ["connection_type", "bandwidth"], "additionalProperties": false}"#,
        run: search_prices,
    },
];

// ---- argument helpers ----

fn uuid_arg(args: &Args, key: &str, required: bool) -> Result<Option<String>, ToolError> {
    match args.opt_string(key, 36)? {
        Some(s) if is_uuid(&s) => Ok(Some(s)),
        Some(s) => Err(ToolError::invalid_argument(
            &format!("/{key}"),
            format!("expected a uuid, got {s:?}; nothing was sent"),
        )),
        None if required => Err(ToolError::invalid_argument(&format!("/{key}"), "is required")),
        None => Ok(None),
    }
}

fn metro_arg(args: &Args, key: &str) -> Result<Option<String>, ToolError> {
    match args.opt_string(key, 4)? {
        Some(m) if is_metro_code(&m) => Ok(Some(m)),
        Some(m) => {
            Err(ToolError::invalid_argument(&format!("/{key}"), format!("expected a metro code such as DC, got {m:?}")))
        }
        None => Ok(None),
    }
}

/// Exact name, or LIKE with `*` turned into `%`.
fn name_filter(property: &str, pattern: &str) -> Value {
    if pattern.contains('*') || pattern.contains('%') {
        json!({"property": property, "operator": "LIKE", "values": [pattern.replace('*', "%")]})
    } else {
        eq(property, pattern)
    }
}

fn search_body(filters: Vec<Value>, offset: u64, limit: u64, filter_required: bool) -> String {
    let mut body = Map::new();
    body.insert("pagination".into(), json!({"offset": offset, "limit": limit}));
    match filters.len() {
        0 if filter_required => {
            body.insert("filter".into(), json!({"property": "/uuid", "operator": "IS NOT NULL", "values": []}));
        }
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

fn compact_vlan(l: &Value) -> Value {
    Value::Object(pick(
        l,
        &[
            ("type", "/type"),
            ("vlan_tag", "/vlanTag"),
            ("vlan_s_tag", "/vlanSTag"),
            ("vlan_c_tag", "/vlanCTag"),
            ("vlan_tag_min", "/vlanTagMin"),
            ("vlan_tag_max", "/vlanTagMax"),
            ("state", "/state"),
            ("connection_uuid", "/connection/uuid"),
            ("connection_name", "/connection/name"),
        ],
    ))
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
    Value::Object(pick(
        t,
        &[
            ("uuid", "/uuid"),
            ("name", "/name"),
            ("type", "/type"),
            ("state", "/state"),
            ("expiration", "/expirationDateTime"),
            ("connection_type", "/connection/type"),
            ("bandwidth_limit_mbps", "/connection/bandwidthLimit"),
            ("port_uuid", "/connection/aSide/accessPointSelectors/0/port/uuid"),
        ],
    ))
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
    arguments: &str,
    key: &str,
    collection: &str,
    result_key: &str,
    compact: fn(&Value) -> Value,
) -> Result<Value, ToolError> {
    let args = Args::parse(arguments, &[key, "raw"])?;
    let id = uuid_arg(&args, key, true)?.unwrap_or_default();
    let raw = args.opt_bool("raw")?.unwrap_or(false);
    let answer = send_json(host, get(format!("/fabric/v4/{collection}/{id}"), Vec::new()))?;
    Ok(one(answer, result_key, raw, compact))
}

fn search_ports(host: &mut dyn Host, arguments: &str) -> Result<Value, ToolError> {
    let args = Args::parse(arguments, &["name", "metro", "state", "project_id", "offset", "limit", "raw"])?;
    let (offset, limit, raw) = args.paging()?;
    let mut filters = Vec::new();
    if let Some(n) = args.opt_string("name", 128)? {
        filters.push(name_filter("/name", &n));
    }
    if let Some(m) = metro_arg(&args, "metro")? {
        filters.push(eq("/location/metroCode", &m));
    }
    if let Some(s) = args.opt_enum("state", &["ACTIVE", "INACTIVE", "PENDING", "PROVISIONING", "DEPROVISIONED"])? {
        filters.push(eq("/state", s));
    }
    if let Some(p) = uuid_arg(&args, "project_id", false)? {
        filters.push(eq("/project/projectId", &p));
    }
    let answer =
        send_json(host, post("/fabric/v4/ports/search", Vec::new(), search_body(filters, offset, limit, true)))?;
    Ok(paged(answer, "ports", offset, raw, compact_port))
}

fn get_port(host: &mut dyn Host, arguments: &str) -> Result<Value, ToolError> {
    get_by_id(host, arguments, "port_id", "ports", "port", compact_port)
}

fn list_port_vlans(host: &mut dyn Host, arguments: &str) -> Result<Value, ToolError> {
    let args = Args::parse(arguments, &["port_id", "offset", "limit", "raw"])?;
    let id = uuid_arg(&args, "port_id", true)?.unwrap_or_default();
    let (offset, limit, raw) = args.paging()?;
    let query = paging_query(offset, limit);
    let answer = send_json(host, get(format!("/fabric/v4/ports/{id}/linkProtocols"), query))?;
    let mut out = paged(answer, "vlans_in_use", offset, raw, compact_vlan);
    out["port_id"] = json!(id);
    Ok(out)
}

fn search_profiles(host: &mut dyn Host, arguments: &str) -> Result<Value, ToolError> {
    let args = Args::parse(arguments, &["name", "metro", "visibility", "view_point", "offset", "limit", "raw"])?;
    let (offset, limit, raw) = args.paging()?;
    let mut filters = Vec::new();
    if let Some(n) = args.opt_string("name", 128)? {
        filters.push(name_filter("/name", &n));
    }
    if let Some(m) = metro_arg(&args, "metro")? {
        filters.push(eq("/metros/code", &m));
    }
    if let Some(v) = args.opt_enum("visibility", &["PUBLIC", "PRIVATE"])? {
        filters.push(eq("/visibility", v));
    }
    let view_point = args.opt_enum("view_point", &["aSide", "zSide"])?.unwrap_or("aSide");
    let query = vec![("viewPoint".to_string(), view_point.to_string())];
    let answer =
        send_json(host, post("/fabric/v4/serviceProfiles/search", query, search_body(filters, offset, limit, false)))?;
    Ok(paged(answer, "service_profiles", offset, raw, compact_profile))
}

fn get_profile(host: &mut dyn Host, arguments: &str) -> Result<Value, ToolError> {
    get_by_id(host, arguments, "profile_id", "serviceProfiles", "service_profile", compact_profile)
}

fn search_connections(host: &mut dyn Host, arguments: &str) -> Result<Value, ToolError> {
    let args = Args::parse(arguments, &["name", "state", "port_id", "offset", "limit", "raw"])?;
    let (offset, limit, raw) = args.paging()?;
    let mut filters = Vec::new();
    if let Some(n) = args.opt_string("name", 128)? {
        filters.push(name_filter("/name", &n));
    }
    let states = [
        "ACTIVE",
        "PENDING",
        "PROVISIONED",
        "PROVISIONING",
        "REPROVISIONING",
        "DEPROVISIONING",
        "DEPROVISIONED",
        "FAILED",
        "DRAFT",
        "CANCELLED",
    ];
    if let Some(s) = args.opt_enum("state", &states)? {
        filters.push(eq("/state", s));
    }
    if let Some(p) = uuid_arg(&args, "port_id", false)? {
        filters.push(eq("/aSide/accessPoint/port/uuid", &p));
    }
    let answer =
        send_json(host, post("/fabric/v4/connections/search", Vec::new(), search_body(filters, offset, limit, false)))?;
    Ok(paged(answer, "connections", offset, raw, compact_connection))
}

fn get_connection(host: &mut dyn Host, arguments: &str) -> Result<Value, ToolError> {
    get_by_id(host, arguments, "connection_id", "connections", "connection", compact_connection)
}

fn search_networks(host: &mut dyn Host, arguments: &str) -> Result<Value, ToolError> {
    let args = Args::parse(arguments, &["name", "type", "scope", "state", "offset", "limit", "raw"])?;
    let (offset, limit, raw) = args.paging()?;
    let mut filters = Vec::new();
    if let Some(n) = args.opt_string("name", 128)? {
        filters.push(name_filter("/name", &n));
    }
    if let Some(t) = args.opt_enum("type", &["EVPLAN", "EPLAN", "IPWAN", "EVPTREE", "EPTREE"])? {
        filters.push(eq("/type", t));
    }
    if let Some(s) = args.opt_enum("scope", &["REGIONAL", "GLOBAL", "LOCAL"])? {
        filters.push(eq("/scope", s));
    }
    if let Some(s) = args.opt_enum("state", &["ACTIVE", "INACTIVE", "DELETED"])? {
        filters.push(eq("/state", s));
    }
    let answer =
        send_json(host, post("/fabric/v4/networks/search", Vec::new(), search_body(filters, offset, limit, false)))?;
    Ok(paged(answer, "networks", offset, raw, compact_network))
}

fn get_network(host: &mut dyn Host, arguments: &str) -> Result<Value, ToolError> {
    get_by_id(host, arguments, "network_id", "networks", "network", compact_network)
}

fn search_tokens(host: &mut dyn Host, arguments: &str) -> Result<Value, ToolError> {
    let args = Args::parse(arguments, &["name", "state", "offset", "limit", "raw"])?;
    let (offset, limit, raw) = args.paging()?;
    let mut filters = Vec::new();
    if let Some(n) = args.opt_string("name", 128)? {
        filters.push(name_filter("/name", &n));
    }
    if let Some(s) = args.opt_enum("state", &["ACTIVE", "INACTIVE", "EXPIRED", "DELETED"])? {
        filters.push(eq("/state", s));
    }
    let query = paging_query(offset, limit);
    let answer =
        send_json(host, post("/fabric/v4/serviceTokens/search", query, search_body(filters, offset, limit, false)))?;
    Ok(paged(answer, "service_tokens", offset, raw, compact_token))
}

fn get_token(host: &mut dyn Host, arguments: &str) -> Result<Value, ToolError> {
    get_by_id(host, arguments, "service_token_id", "serviceTokens", "service_token", compact_token)
}

fn search_prices(host: &mut dyn Host, arguments: &str) -> Result<Value, ToolError> {
    let keys = [
        "connection_type",
        "bandwidth",
        "a_side_type",
        "a_side_metro",
        "a_side_port_id",
        "z_side_type",
        "z_side_metro",
        "z_side_profile_id",
    ];
    let args = Args::parse(arguments, &keys)?;
    let types = [
        "EVPL_VC",
        "EPL_VC",
        "EC_VC",
        "IP_VC",
        "ACCESS_EPL_VC",
        "EVPLAN_VC",
        "EPLAN_VC",
        "IPWAN_VC",
        "EVPTREE_VC",
        "EPTREE_VC",
        "IA_VC",
    ];
    let kind = args
        .opt_enum("connection_type", &types)?
        .ok_or_else(|| ToolError::invalid_argument("/connection_type", "is required"))?;
    let bandwidth = args
        .opt_int("bandwidth", 1, 100_000)?
        .ok_or_else(|| ToolError::invalid_argument("/bandwidth", "is required"))?;
    let ap_types = ["COLO", "VD", "SP", "CLOUD_ROUTER", "NETWORK"];
    let mut and = product_filter(kind, bandwidth);
    and.push(eq("/connection/aSide/accessPoint/type", args.opt_enum("a_side_type", &ap_types)?.unwrap_or("COLO")));
    if let Some(m) = metro_arg(&args, "a_side_metro")? {
        and.push(eq("/connection/aSide/accessPoint/location/metroCode", &m));
    }
    if let Some(p) = uuid_arg(&args, "a_side_port_id", false)? {
        and.push(eq("/connection/aSide/accessPoint/port/uuid", &p));
    }
    if let Some(t) = args.opt_enum("z_side_type", &ap_types)? {
        and.push(eq("/connection/zSide/accessPoint/type", t));
    }
    if let Some(m) = metro_arg(&args, "z_side_metro")? {
        and.push(eq("/connection/zSide/accessPoint/location/metroCode", &m));
    }
    if let Some(p) = uuid_arg(&args, "z_side_profile_id", false)? {
        and.push(eq("/connection/zSide/accessPoint/profile/uuid", &p));
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

    fn run(name: &str, host: &mut FakeHost, args: Value) -> Result<Value, ToolError> {
        let tool = TOOLS.iter().find(|t| t.name == name).unwrap();
        (tool.run)(host, &args.to_string())
    }

    #[test]
    fn every_schema_parses_and_is_closed() {
        for t in TOOLS {
            let v: Value = serde_json::from_str(t.schema).unwrap_or_else(|e| panic!("{}: {e}", t.name));
            assert_eq!(v["additionalProperties"], false, "{}", t.name);
        }
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
            assert_eq!(err.details["path"], format!("/{key}"), "{tool}");
        }
        assert!(host.sent.is_empty());
    }

    #[test]
    fn port_search_builds_a_filter_and_compacts() {
        let body = r#"{"pagination":{"offset":0,"limit":1,"total":2},"data":[{"uuid":"u1","name":"DC-PRI-01","state":"ACTIVE","location":{"metroCode":"DC"},"encapsulation":{"type":"DOT1Q"},"bandwidth":10000,"extra":1}]}"#;
        let mut host = FakeHost::answering(200, body);
        let out = run("fabric_search_ports", &mut host, json!({"name": "DC-*", "metro": "DC", "limit": 1})).unwrap();
        let sent: Value = serde_json::from_str(host.sent[0].body.as_deref().unwrap()).unwrap();
        assert_eq!(sent["filter"]["and"][0], json!({"property": "/name", "operator": "LIKE", "values": ["DC-%"]}));
        assert_eq!(sent["pagination"], json!({"offset": 0, "limit": 1}));
        assert_eq!(out["ports"][0]["encapsulation"], "DOT1Q");
        assert!(out["ports"][0].get("extra").is_none());
        assert_eq!(out["next_offset"], 1);
    }
}
