//! The `cloud_routers` toolset: Fabric Cloud Routers, their packages (what each allows) and a
//! router's route table.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec;
use alloc::vec::Vec;
use serde_json::{Map, Value, json};

use super::compact::{one, pick};
use super::requests::{
    AnyCase, get, get_by_id, name_filter, name_fragment, note_empty_name_search, post, unknown_id_hint,
};
use crate::args::{LIMIT, OFFSET, paging, paging_query, text};
use crate::capability::Host;
use crate::fabric_call::{paged, send_json};
use crate::fabric_enums::{PORT_STATES, ROUTE_TYPES, ROUTER_PACKAGES, ROUTER_STATES};
use crate::grammar::{Kind, METRO, METROS_TOOL, Object, TEXT, UUID, arguments, opt, req};
use crate::tool::{Output, ToolDef, read};
use crate::tool_error::ToolError;
use equinix_broker_contract::body::eq;

/// The tool that lists routers (where every `router_id` comes from).
pub(crate) const SEARCH: &str = "fabric_search_cloud_routers";

static SEARCH_ARGS: Object = arguments(&[
    opt("name", TEXT, "Part of the name, any case"),
    opt("metro", METRO, "Metro code").from(METROS_TOOL),
    opt("state", Kind::Enum(ROUTER_STATES), "State"),
    opt("project_id", UUID, "Project uuid (default: your ports' projects)"),
    OFFSET,
    LIMIT,
]);
static GET_ARGS: Object = arguments(&[req("router_id", UUID, "").from(SEARCH)]);
static PACKAGES_ARGS: Object = arguments(&[OFFSET, LIMIT]);
static PACKAGE_ARGS: Object = arguments(&[req("package_code", Kind::Enum(ROUTER_PACKAGES), "Package")]);
static ROUTES_ARGS: Object = arguments(&[
    req("router_id", UUID, "").from(SEARCH),
    opt("prefix", TEXT, "Part of the prefix, e.g. 10.10."),
    opt("type", Kind::Enum(ROUTE_TYPES), "Route type"),
    opt("next_hop", TEXT, "Next hop address"),
    OFFSET,
    LIMIT,
]);

pub(crate) static TOOLS: [ToolDef; 5] = [
    read(
        SEARCH,
        "cloud_routers",
        "Search Cloud Routers",
        "Your Cloud Routers by name, metro, state or project.",
        &SEARCH_ARGS,
        Output::Page("cloud_routers", &[("projects_searched", "array")]),
        search_routers,
    ),
    read(
        "fabric_get_cloud_router",
        "cloud_routers",
        "Get a Cloud Router",
        "The whole Cloud Router object.",
        &GET_ARGS,
        Output::One("cloud_router"),
        get_router,
    ),
    read(
        "fabric_list_cloud_router_packages",
        "cloud_routers",
        "Cloud Router packages",
        "Cloud Router packages and what each allows.",
        &PACKAGES_ARGS,
        Output::Page("packages", &[]),
        list_packages,
    ),
    read(
        "fabric_get_cloud_router_package",
        "cloud_routers",
        "Get a Cloud Router package",
        "One package's limits.",
        &PACKAGE_ARGS,
        Output::One("package"),
        get_package,
    ),
    read(
        "fabric_search_cloud_router_routes",
        "cloud_routers",
        "Cloud Router route table",
        "A router's routes: prefix, next hop, the connection it came by.",
        &ROUTES_ARGS,
        Output::Page("routes", &[]),
        search_routes,
    ),
];

/// The projects the organisation's ports are in: Fabric's router search needs a project.
fn projects_of_ports(host: &mut dyn Host) -> Result<Vec<String>, ToolError> {
    let body = json!({"filter": {"property": "/state", "operator": "=", "values": PORT_STATES},
                      "pagination": {"offset": 0, "limit": 100}});
    let answer = send_json(host, post("/fabric/v4/ports/search", Vec::new(), crate::json::json_text(&body)))?;
    let mut projects: Vec<String> = Vec::new();
    for p in answer["data"].as_array().into_iter().flatten() {
        if let Some(id) = p.pointer("/project/projectId").and_then(Value::as_str)
            && !projects.iter().any(|x| x == id)
        {
            projects.push(id.to_string());
        }
    }
    Ok(projects)
}

fn search_routers(host: &mut dyn Host, args: &Value) -> Result<Value, ToolError> {
    let (offset, limit) = paging(args);
    let given = text(args, "project_id").map(|p| vec![p.to_string()]);
    let projects = match given.clone() {
        Some(p) => p,
        None => projects_of_ports(host)?,
    };
    if projects.is_empty() {
        return Err(ToolError::new(
            "project_needed",
            "Fabric's Cloud Router search needs a project, and none of your ports names one",
        )
        .with("next_step", json!("Call again with project_id (the project your Cloud Routers are in).")));
    }
    let operator = if projects.len() == 1 { "=" } else { "IN" };
    let mut and = vec![json!({"property": "/project/projectId", "operator": operator, "values": projects.clone()})];
    if let Some(fragment) = name_fragment(args) {
        and.push(name_filter(&fragment, AnyCase::Ilike));
    }
    for (key, property) in [("metro", "/location/metroCode"), ("state", "/state")] {
        if let Some(v) = text(args, key) {
            and.push(eq(property, v));
        }
    }
    let body = json!({"filter": {"and": and}, "pagination": {"offset": offset, "limit": limit}});
    let answer = send_json(host, post("/fabric/v4/routers/search", Vec::new(), crate::json::json_text(&body)))?;
    let mut out = paged(answer, "cloud_routers", offset, compact_router);
    note_empty_name_search(&mut out, args, AnyCase::Ilike, "leave name out and search by metro or state");
    if given.is_none() {
        out["projects_searched"] = json!(projects);
    }
    Ok(out)
}

fn compact_router(r: &Value) -> Value {
    Value::Object(pick(
        r,
        &[
            ("uuid", "/uuid"),
            ("name", "/name"),
            ("state", "/state"),
            ("metro", "/location/metroCode"),
            ("package", "/package/code"),
            ("equinix_asn", "/equinixAsn"),
            ("connections_count", "/connectionsCount"),
            ("project_id", "/project/projectId"),
        ],
    ))
}

fn get_router(host: &mut dyn Host, args: &Value) -> Result<Value, ToolError> {
    get_by_id(host, args, "router_id", "routers", "cloud_router", &[&GET_ARGS])
}

fn list_packages(host: &mut dyn Host, args: &Value) -> Result<Value, ToolError> {
    let (offset, limit) = paging(args);
    let answer = send_json(host, get("/fabric/v4/routerPackages".into(), paging_query(offset, limit)))?;
    Ok(paged(answer, "packages", offset, compact_package))
}

fn compact_package(p: &Value) -> Value {
    Value::Object(pick(
        p,
        &[
            ("code", "/code"),
            ("description", "/description"),
            ("connections_max", "/vcCountMax"),
            ("connection_mbps_max", "/vcBandwidthMax"),
            ("ipv4_routes_max", "/totalIPv4RoutesMax"),
            ("ipv6_routes_max", "/totalIPv6RoutesMax"),
            ("route_filters", "/routeFilterSupported"),
        ],
    ))
}

fn get_package(host: &mut dyn Host, args: &Value) -> Result<Value, ToolError> {
    let code = text(args, "package_code").unwrap_or_default();
    let answer = send_json(host, get(format!("/fabric/v4/routerPackages/{code}"), Vec::new()))?;
    Ok(one(answer, "package"))
}

fn search_routes(host: &mut dyn Host, args: &Value) -> Result<Value, ToolError> {
    let id = text(args, "router_id").unwrap_or_default();
    let (offset, limit) = paging(args);
    let mut and = Vec::new();
    if let Some(p) = text(args, "prefix") {
        and.push(json!({"property": "/prefix", "operator": "LIKE", "values": [p]}));
    }
    for (key, property) in [("type", "/type"), ("next_hop", "/nextHop")] {
        if let Some(v) = text(args, key) {
            and.push(eq(property, v));
        }
    }
    let body = route_search_body(and, offset, limit);
    let answer = send_json(host, post(&format!("/fabric/v4/routers/{id}/routes/search"), Vec::new(), body))
        .map_err(|e| unknown_id_hint(e, "router_id", &[&ROUTES_ARGS]))?;
    Ok(paged(answer, "routes", offset, compact_route))
}

/// A route search's body: the filters as an `and` (these searches take no bare expression),
/// none at all without one, and paging.
pub(super) fn route_search_body(and: Vec<Value>, offset: u64, limit: u64) -> String {
    let mut body = Map::new();
    if !and.is_empty() {
        body.insert("filter".into(), json!({"and": and}));
    }
    body.insert("pagination".into(), json!({"offset": offset, "limit": limit}));
    crate::json::json_text(&Value::Object(body))
}

/// A route of a router's table, or one a connection received or advertised.
pub(super) fn compact_route(r: &Value) -> Value {
    let mut out = pick(
        r,
        &[
            ("prefix", "/prefix"),
            ("next_hop", "/nextHop"),
            ("type", "/type"),
            ("state", "/state"),
            ("med", "/MED"),
            ("local_preference", "/localPreference"),
            ("connection", "/connection/name"),
            ("connection_id", "/connection/uuid"),
        ],
    );
    if let Some(path) = r.get("asPath").and_then(Value::as_array) {
        let hops: Vec<&str> = path.iter().filter_map(Value::as_str).collect();
        out.insert("as_path".into(), json!(hops.join(" ")));
    }
    Value::Object(out)
}
