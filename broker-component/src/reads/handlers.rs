//! The read tools' handlers: Fabric's filters as each endpoint's contract allows, one request
//! (or a few pages for the profile search), and the compact page or whole object back.

use alloc::format;
use alloc::string::ToString;
use alloc::vec;
use alloc::vec::Vec;
use serde_json::{Value, json};

use super::arguments::GET_IDS;
use super::compact::*;
use super::requests::*;
use crate::args::{number, paging, paging_query, text};
use crate::capability::Host;
use crate::fabric_call::{paged, send_json};
use crate::fabric_enums::*;
use crate::tool_error::ToolError;
use equinix_broker_contract::body::{eq, product_filter};

pub(super) fn search_ports(host: &mut dyn Host, args: &Value) -> Result<Value, ToolError> {
    let (offset, limit) = paging(args);
    let mut filters = Vec::new();
    name_filters(args, &mut filters, AnyCase::Ilike)?;
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
    let mut out = paged(answer, "ports", offset, compact_port);
    note_empty_name_search(&mut out, args, AnyCase::Ilike, "leave name out and search by metro or state");
    if let Some(metro) = text(args, "metro")
        && out.get("note").is_none()
        && out["returned"] == json!(0)
        && offset == 0
    {
        out["note"] = json!(format!(
            "you have no port in metro {metro:?}: fabric_list_metros with presence MY_PORTS lists the metros \
             where you do"
        ));
    }
    Ok(out)
}

pub(super) fn get_port(host: &mut dyn Host, args: &Value) -> Result<Value, ToolError> {
    get_by_id(host, args, "port_id", "ports", "port", &GET_IDS)
}

pub(super) fn list_port_vlans(host: &mut dyn Host, args: &Value) -> Result<Value, ToolError> {
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
pub(super) const PROFILE_SCAN: u64 = 500;

pub(super) fn search_profiles(host: &mut dyn Host, args: &Value) -> Result<Value, ToolError> {
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
    note_empty_name_search(&mut out, args, AnyCase::Ilike, "leave name out and search by metro or visibility");
    if scanned < total {
        out["note"] = json!(format!(
            "only the first {scanned} of {total} profiles were searched for the name; add metro or visibility to narrow"
        ));
    }
    Ok(out)
}

pub(super) fn get_profile(host: &mut dyn Host, args: &Value) -> Result<Value, ToolError> {
    get_by_id(host, args, "profile_id", "serviceProfiles", "service_profile", &GET_IDS)
}

/// Where a profile is offered: each metro with the largest connection and its seller regions.
pub(super) fn profile_metros(host: &mut dyn Host, args: &Value) -> Result<Value, ToolError> {
    let (offset, limit) = paging(args);
    let id = text(args, "profile_id").unwrap_or_default();
    let path = format!("/fabric/v4/serviceProfiles/{id}/metros");
    let answer = send_json(host, get(path, paging_query(offset, limit)))
        .map_err(|e| unknown_id_hint(e, "profile_id", &[&super::arguments::PROFILE_METROS]))?;
    Ok(paged(answer, "metros", offset, compact_service_metro))
}

pub(super) fn search_connections(host: &mut dyn Host, args: &Value) -> Result<Value, ToolError> {
    let (offset, limit) = paging(args);
    let mut filters = Vec::new();
    name_filters(args, &mut filters, AnyCase::Variants)?;
    if let Some(s) = text(args, "state") {
        filters.push(eq("/state", s));
    }
    if let Some(p) = text(args, "port_id") {
        filters.push(eq("/aSide/accessPoint/port/uuid", p));
    }
    if let Some(r) = text(args, "router_id") {
        filters.push(eq("/aSide/accessPoint/router/uuid", r));
    }
    let body = search_body(filters, offset, limit);
    let answer = send_json(host, post("/fabric/v4/connections/search", Vec::new(), body))?;
    let mut out = paged(answer, "connections", offset, compact_connection);
    note_empty_name_search(&mut out, args, AnyCase::Variants, "leave name out and search by port_id or router_id");
    Ok(out)
}

pub(super) fn get_connection(host: &mut dyn Host, args: &Value) -> Result<Value, ToolError> {
    get_by_id(host, args, "connection_id", "connections", "connection", &GET_IDS)
}

pub(super) fn search_networks(host: &mut dyn Host, args: &Value) -> Result<Value, ToolError> {
    let (offset, limit) = paging(args);
    let mut filters = Vec::new();
    name_filters(args, &mut filters, AnyCase::Ilike)?;
    for (key, property) in [("type", "/type"), ("scope", "/scope"), ("state", "/state")] {
        if let Some(v) = text(args, key) {
            filters.push(eq(property, v));
        }
    }
    let body = search_body(filters, offset, limit);
    let answer = send_json(host, post("/fabric/v4/networks/search", Vec::new(), body))?;
    let mut out = paged(answer, "networks", offset, compact_network);
    note_empty_name_search(&mut out, args, AnyCase::Ilike, "leave name out and search by type, scope or state");
    Ok(out)
}

pub(super) fn get_network(host: &mut dyn Host, args: &Value) -> Result<Value, ToolError> {
    get_by_id(host, args, "network_id", "networks", "network", &GET_IDS)
}

/// The connections with a side on a network (the contract pages these itself).
pub(super) fn network_connections(host: &mut dyn Host, args: &Value) -> Result<Value, ToolError> {
    let id = text(args, "network_id").unwrap_or_default();
    let answer = send_json(host, get(format!("/fabric/v4/networks/{id}/connections"), Vec::new()))
        .map_err(|e| unknown_id_hint(e, "network_id", &GET_IDS))?;
    Ok(paged(answer, "connections", 0, compact_connection))
}

pub(super) fn search_tokens(host: &mut dyn Host, args: &Value) -> Result<Value, ToolError> {
    let (offset, limit) = paging(args);
    let mut filters = Vec::new();
    name_filters(args, &mut filters, AnyCase::Ilike)?;
    if let Some(s) = text(args, "state") {
        filters.push(eq("/state", s));
    }
    let query = paging_query(offset, limit);
    let body = search_body(filters, offset, limit);
    let answer = send_json(host, post("/fabric/v4/serviceTokens/search", query, body))?;
    let mut out = paged(answer, "service_tokens", offset, compact_token);
    note_empty_name_search(&mut out, args, AnyCase::Ilike, "leave name out and search by state");
    Ok(out)
}

pub(super) fn get_token(host: &mut dyn Host, args: &Value) -> Result<Value, ToolError> {
    get_by_id(host, args, "service_token_id", "serviceTokens", "service_token", &GET_IDS)
}

pub(super) fn search_prices(host: &mut dyn Host, args: &Value) -> Result<Value, ToolError> {
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
    let answer = send_json(host, post("/fabric/v4/prices/search", Vec::new(), crate::json::json_text(&filter)))?;
    let mut out = paged(answer, "prices", 0, compact_price);
    if out["returned"] == 0 {
        // what was asked, so the agent can see which criterion to relax
        out["filter"] = filter["filter"].clone();
        out["note"] = json!("no rate-card price matched; try another bandwidth or fewer criteria");
    }
    Ok(out)
}
