//! The cloud events Fabric recorded for the seeded assets, newest first: each port, router and
//! connection, route filter and aggregation coming up, both BGP sessions establishing, and then the Azure session going down
//! (hold timer expired), the reset that brought it to `connect`, and its fall back to `idle`.

use serde_json::{Value, json};

use super::policies::{ROUTE_AGGREGATIONS, ROUTE_FILTERS};
use super::routing::{AZURE_BGP_DOWN_AT, CREATED, FCR_CONNECTIONS, ROUTERS, routing_protocol_uuid};
use super::{CONNECTIONS, PORTS, PROJECT_ID};

/// The organisation the seeded estate belongs to (the ports' `account.orgId`).
const ORGANIZATION: &str = "91784";

struct Event {
    time: String,
    kind: String,
    subject: String,
    /// OpenTelemetry severity: (number, text).
    severity: (&'static str, &'static str),
    message: String,
    /// (collection, uuid, type, name, state)
    resource: (&'static str, String, &'static str, String, &'static str),
}

/// `asset` is as Fabric's event types name it (`connection`, `route_filter`).
fn state_event(
    time: &str,
    (collection, asset): (&'static str, &str),
    uuid: &str,
    kind: &'static str,
    name: &str,
    state: &'static str,
) -> Event {
    Event {
        time: time.to_string(),
        kind: format!("equinix.fabric.{asset}.state.{}", state.to_lowercase()),
        subject: format!("/fabric/v4/{collection}/{uuid}"),
        severity: ("9", "INFO"),
        message: format!("{name} is {}", state.to_lowercase()),
        resource: (collection, uuid.to_string(), kind, name.to_string(), state),
    }
}

fn bgp_event(
    connection: usize,
    time: &str,
    status: &str,
    severity: (&'static str, &'static str),
    message: String,
) -> Event {
    let (uuid, name, ..) = FCR_CONNECTIONS[connection];
    let rp = routing_protocol_uuid(connection, "bgp");
    Event {
        time: time.to_string(),
        kind: format!("equinix.fabric.connection_bgpipv4_session.status.{status}"),
        subject: format!("/fabric/v4/connections/{uuid}/routingProtocols/{rp}"),
        severity,
        message,
        resource: ("connections", uuid.to_string(), "IP_VC", name.to_string(), "PROVISIONED"),
    }
}

fn seeded() -> Vec<Event> {
    let mut events = Vec::new();
    for (uuid, name, ..) in PORTS {
        events.push(state_event("2026-01-02T08:00:00Z", ("ports", "port"), uuid, "XF_PORT", name, "ACTIVE"));
    }
    for (uuid, name, _) in CONNECTIONS {
        events.push(state_event(
            "2026-01-05T10:00:00Z",
            ("connections", "connection"),
            uuid,
            "EVPL_VC",
            name,
            "PROVISIONED",
        ));
    }
    for r in ROUTERS {
        let at = if r.state == "PROVISIONED" { CREATED } else { "2026-11-30T16:00:00Z" };
        events.push(state_event(at, ("routers", "router"), r.uuid, "XF_ROUTER", r.name, r.state));
    }
    for (i, (uuid, name, ..)) in FCR_CONNECTIONS.iter().enumerate() {
        events.push(state_event(
            "2026-11-02T09:20:00Z",
            ("connections", "connection"),
            uuid,
            "IP_VC",
            name,
            "PROVISIONED",
        ));
        let peer = format!("169.254.{}.2", FCR_CONNECTIONS[i].5);
        events.push(bgp_event(
            i,
            "2026-11-02T09:25:00Z",
            "established",
            ("9", "INFO"),
            format!("BGP IPv4 session with {peer} established"),
        ));
    }
    for f in ROUTE_FILTERS {
        let asset = ("routeFilters", "route_filter");
        events.push(state_event("2026-11-02T09:30:00Z", asset, f.uuid, f.kind, f.name, "PROVISIONED"));
    }
    for a in ROUTE_AGGREGATIONS {
        let asset = ("routeAggregations", "route_aggregation");
        let kind = "BGP_IPv4_PREFIX_AGGREGATION";
        events.push(state_event("2026-11-02T09:30:00Z", asset, a.uuid, kind, a.name, "PROVISIONED"));
    }
    let azure_peer = format!("169.254.{}.2", FCR_CONNECTIONS[1].5);
    events.push(bgp_event(
        1,
        AZURE_BGP_DOWN_AT,
        "idle",
        ("17", "ERROR"),
        format!(
            "BGP IPv4 session with {azure_peer} went down: hold timer expired (no keepalive from the peer in 90 s)"
        ),
    ));
    events.push(bgp_event(
        1,
        "2026-12-01T06:30:05Z",
        "connect",
        ("9", "INFO"),
        format!("BGP IPv4 session with {azure_peer} reset: connecting"),
    ));
    events.push(bgp_event(
        1,
        "2026-12-01T06:32:05Z",
        "idle",
        ("17", "ERROR"),
        format!(
            "BGP IPv4 session with {azure_peer} went down again: connect retry timer expired, the peer did not answer"
        ),
    ));
    events.sort_by(|a, b| b.time.cmp(&a.time));
    events
}

/// The seeded events as `CloudEvent`s (every scalar a string, as the contract has it).
pub(crate) fn cloud_events() -> Vec<Value> {
    seeded()
        .into_iter()
        .enumerate()
        .map(|(i, e)| {
            let (collection, uuid, kind, name, state) = e.resource;
            json!({
                "spec": "1.0",
                "source": "https://api.equinix.com/fabric/v4",
                "id": format!("e7e7e7e7-0000-4000-8000-{:012}", i + 1),
                "type": e.kind,
                "subject": e.subject,
                "time": e.time,
                "datacontenttype": "application/json",
                "severitynumber": e.severity.0,
                "severitytext": e.severity.1,
                "equinixorganization": ORGANIZATION,
                "equinixproject": PROJECT_ID,
                "authtype": "system",
                "authid": "equinix",
                "data": {
                    "message": e.message,
                    "resource": {"href": format!("/fabric/v4/{collection}/{uuid}"), "uuid": uuid, "type": kind,
                                 "name": name, "state": state},
                    "auth": {"authtype": "system", "authid": "equinix", "name": "Equinix"},
                },
            })
        })
        .collect()
}
