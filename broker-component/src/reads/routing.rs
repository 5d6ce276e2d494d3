//! The `routing` toolset: each connection's routing protocols (BGP session state, peers, ASNs,
//! BFD, direct addresses, why a session is down), the BGP actions taken on them, and the routes
//! a connection received and advertised.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use serde_json::{Value, json};

use super::compact::{one, pick};
use super::requests::{get, post, unknown_id_hint};
use super::routers::{compact_route, route_search_body};
use crate::args::{LIMIT, OFFSET, paging, paging_query, text};
use crate::capability::Host;
use crate::fabric_call::{paged, send_json};
use crate::fabric_enums::CONNECTION_ROUTE_STATES;
use crate::grammar::{Kind, Object, TEXT, UUID, arguments, opt, req};
use crate::tool::{Output, ToolDef, read};
use crate::tool_error::ToolError;
use equinix_broker_contract::body::eq;

const CONNECTIONS: &str = "fabric_search_connections";
const PROTOCOLS: &str = "fabric_list_routing_protocols";

static PROTOCOLS_ARGS: Object = arguments(&[req("connection_id", UUID, "").from(CONNECTIONS), OFFSET, LIMIT]);
static PROTOCOL_ARGS: Object = arguments(&[
    req("connection_id", UUID, "").from(CONNECTIONS),
    req("routing_protocol_id", UUID, "").from(PROTOCOLS),
]);
static ACTIONS_ARGS: Object = arguments(&[
    req("connection_id", UUID, "").from(CONNECTIONS),
    req("routing_protocol_id", UUID, "").from(PROTOCOLS),
    OFFSET,
    LIMIT,
]);
static ROUTES_ARGS: Object = arguments(&[
    req("connection_id", UUID, "").from(CONNECTIONS),
    req("direction", Kind::Enum(&["received", "advertised"]), "Learnt from the peer, or sent to it"),
    opt("prefix", TEXT, "Part of the prefix"),
    opt("state", Kind::Enum(CONNECTION_ROUTE_STATES), "State"),
    OFFSET,
    LIMIT,
]);

pub(crate) static TOOLS: [ToolDef; 4] = [
    read(
        PROTOCOLS,
        "routing",
        "Routing protocols of a connection",
        "BGP and direct peering of a connection: session state and why, peers, ASNs, BFD.",
        &PROTOCOLS_ARGS,
        Output::Page("routing_protocols", &[]),
        list_protocols,
    ),
    read(
        "fabric_get_routing_protocol",
        "routing",
        "Get a routing protocol",
        "The whole routing protocol object.",
        &PROTOCOL_ARGS,
        Output::One("routing_protocol"),
        get_protocol,
    ),
    read(
        "fabric_list_bgp_actions",
        "routing",
        "BGP actions",
        "Resets and clears done on a BGP session, and their results.",
        &ACTIONS_ARGS,
        Output::Page("bgp_actions", &[]),
        list_actions,
    ),
    read(
        "fabric_search_connection_routes",
        "routing",
        "Routes of a connection",
        "Routes a connection received from or advertised to its peer.",
        &ROUTES_ARGS,
        Output::Page("routes", &[("direction", "string")]),
        search_routes,
    ),
];

fn list_protocols(host: &mut dyn Host, args: &Value) -> Result<Value, ToolError> {
    let id = text(args, "connection_id").unwrap_or_default();
    let (offset, limit) = paging(args);
    let path = format!("/fabric/v4/connections/{id}/routingProtocols");
    let answer = send_json(host, get(path, paging_query(offset, limit)))
        .map_err(|e| unknown_id_hint(e, "connection_id", &[&PROTOCOLS_ARGS]))?;
    Ok(paged(answer, "routing_protocols", offset, compact_protocol))
}

/// A routing protocol in one row: for BGP each family's session state (and since when), its
/// peers and ASNs; for DIRECT the interface addresses; and Fabric's first error, which says
/// why a session is down.
fn compact_protocol(p: &Value) -> Value {
    let mut out = pick(
        p,
        &[
            ("uuid", "/uuid"),
            ("type", "/type"),
            ("state", "/state"),
            ("customer_asn", "/customerAsn"),
            ("equinix_asn", "/equinixAsn"),
            ("bfd", "/bfd/enabled"),
            ("direct_ipv4", "/directIpv4/equinixIfaceIp"),
            ("direct_ipv6", "/directIpv6/equinixIfaceIp"),
        ],
    );
    for (family, key) in [("ipv4", "bgpIpv4"), ("ipv6", "bgpIpv6")] {
        let Some(s) = p.get(key) else { continue };
        out.extend(pick(
            s,
            &[
                (&format!("bgp_{family}_status"), "/operation/operationalStatus"),
                (&format!("bgp_{family}_since"), "/operation/opStatusChangedAt"),
                (&format!("bgp_{family}_enabled"), "/enabled"),
                (&format!("{family}_customer_peer"), "/customerPeerIp"),
                (&format!("{family}_equinix_peer"), "/equinixPeerIp"),
            ],
        ));
    }
    if let Some(e) = p.pointer("/operation/errors/0") {
        let code = e["errorCode"].as_str().unwrap_or("?");
        let mut why = format!("{code}: {}", e["errorMessage"].as_str().unwrap_or(""));
        if let Some(details) = e["details"].as_str() {
            why.push_str(&format!(" ({details})"));
        }
        out.insert("error".into(), json!(why));
    }
    Value::Object(out)
}

fn protocol_path(args: &Value) -> String {
    let connection = text(args, "connection_id").unwrap_or_default();
    let protocol = text(args, "routing_protocol_id").unwrap_or_default();
    format!("/fabric/v4/connections/{connection}/routingProtocols/{protocol}")
}

fn get_protocol(host: &mut dyn Host, args: &Value) -> Result<Value, ToolError> {
    let answer = send_json(host, get(protocol_path(args), Vec::new()))
        .map_err(|e| unknown_id_hint(e, "routing_protocol_id", &[&PROTOCOL_ARGS]))?;
    Ok(one(answer, "routing_protocol"))
}

fn list_actions(host: &mut dyn Host, args: &Value) -> Result<Value, ToolError> {
    let (offset, limit) = paging(args);
    let path = format!("{}/actions", protocol_path(args));
    let answer = send_json(host, get(path, paging_query(offset, limit)))
        .map_err(|e| unknown_id_hint(e, "routing_protocol_id", &[&ACTIONS_ARGS]))?;
    Ok(paged(answer, "bgp_actions", offset, compact_action))
}

fn compact_action(a: &Value) -> Value {
    Value::Object(pick(
        a,
        &[
            ("uuid", "/uuid"),
            ("type", "/type"),
            ("state", "/state"),
            ("description", "/description"),
            ("created", "/changelog/createdDateTime"),
        ],
    ))
}

fn search_routes(host: &mut dyn Host, args: &Value) -> Result<Value, ToolError> {
    let id = text(args, "connection_id").unwrap_or_default();
    let direction = text(args, "direction").unwrap_or("received");
    let (offset, limit) = paging(args);
    let mut and = Vec::new();
    if let Some(p) = text(args, "prefix") {
        and.push(json!({"property": "/prefix", "operator": "LIKE", "values": [p]}));
    }
    if let Some(s) = text(args, "state") {
        and.push(eq("/state", s));
    }
    let path = format!("/fabric/v4/connections/{id}/{direction}Routes/search");
    let answer = send_json(host, post(&path, Vec::new(), route_search_body(and, offset, limit)))
        .map_err(|e| unknown_id_hint(e, "connection_id", &[&ROUTES_ARGS]))?;
    let mut out = paged(answer, "routes", offset, compact_route);
    out["direction"] = json!(direction);
    Ok(out)
}
