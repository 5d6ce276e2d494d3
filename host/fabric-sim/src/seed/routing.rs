//! The seeded Cloud Routers and what runs on them: packages, two connections from the DC router
//! to cloud providers with their routing protocols (the BGP session to AWS is up, the one to
//! Azure is down, with Fabric's reason), the router's route table, the routes each connection
//! receives and advertises, and the BGP actions taken on them.

use serde_json::{Value, json};

use super::{PROFILES, PROJECT_ID};

/// A seeded Cloud Router.
pub struct SeedRouter {
    pub uuid: &'static str,
    pub name: &'static str,
    pub metro: &'static str,
    pub package: &'static str,
    pub state: &'static str,
    pub asn: u64,
}

/// Two routers in DC and SV that take connections, one in SV still being provisioned.
pub const ROUTERS: &[SeedRouter] = &[
    SeedRouter {
        uuid: "7c2a5f3e-0b1d-4c6e-9a8f-3d2e1f0a5b01",
        name: "DC-FCR-01",
        metro: "DC",
        package: "STANDARD",
        state: "PROVISIONED",
        asn: 30000,
    },
    SeedRouter {
        uuid: "7c2a5f3e-0b1d-4c6e-9a8f-3d2e1f0a5b02",
        name: "SV-FCR-01",
        metro: "SV",
        package: "LAB",
        state: "PROVISIONED",
        asn: 30001,
    },
    SeedRouter {
        uuid: "7c2a5f3e-0b1d-4c6e-9a8f-3d2e1f0a5b03",
        name: "SV-FCR-02",
        metro: "SV",
        package: "BASIC",
        state: "PROVISIONING",
        asn: 30002,
    },
];

/// Each package's limits: (code, description, connections per router, Mbps per connection,
/// IPv4 routes, IPv6 routes, route filters).
pub(crate) const PACKAGES: &[(&str, &str, u64, u64, u64, u64, bool)] = &[
    ("LAB", "Lab: for testing, 50 Mbps connections", 10, 50, 50, 50, false),
    ("BASIC", "Basic: up to 1 Gbps connections, 100 routes", 10, 1000, 100, 100, true),
    ("STANDARD", "Standard: up to 10 Gbps connections, 4,000 routes", 10, 10000, 4000, 4000, true),
    ("ADVANCED", "Advanced: up to 10 Gbps connections, 5,000 routes", 10, 10000, 5000, 5000, true),
    ("PREMIUM", "Premium: up to 10 Gbps connections, 10,000 routes", 10, 10000, 10000, 10000, true),
];

/// The connections from DC-FCR-01 to a provider: (uuid, name, provider profile index, Mbps,
/// whether its BGP session is up, its link network's third octet).
pub const FCR_CONNECTIONS: &[(&str, &str, usize, u64, bool, u8)] = &[
    ("22222222-3333-4444-8555-000000000201", "dc-fcr-to-aws", 0, 50, true, 10),
    ("22222222-3333-4444-8555-000000000202", "dc-fcr-to-azure", 1, 50, false, 20),
];

/// When the seeded estate was set up, and when the Azure session went down.
pub(super) const CREATED: &str = "2026-11-02T09:00:00Z";
pub const AZURE_BGP_DOWN_AT: &str = "2026-12-01T06:12:09Z";

fn changelog(at: &str) -> Value {
    json!({"createdBy": "sim-user", "createdDateTime": at, "updatedDateTime": at})
}

pub(crate) fn packages() -> Vec<Value> {
    PACKAGES
        .iter()
        .map(|(code, description, vcs, mbps, v4, v6, filters)| {
            json!({
                "href": format!("/fabric/v4/routerPackages/{code}"),
                "type": "ROUTER_PACKAGE",
                "code": code,
                "description": description,
                "totalIPv4RoutesMax": v4,
                "totalIPv6RoutesMax": v6,
                "routeFilterSupported": filters,
                "vcCountMax": vcs,
                "crCountMax": 3,
                "vcBandwidthMax": mbps,
                "changeLog": {"createdDateTime": "2024-01-01T00:00:00Z", "updatedDateTime": "2024-01-01T00:00:00Z"},
            })
        })
        .collect()
}

pub(crate) fn routers() -> Vec<Value> {
    ROUTERS
        .iter()
        .map(|r| {
            let connections = FCR_CONNECTIONS.len() * usize::from(r.uuid == ROUTERS[0].uuid);
            json!({
                "href": format!("/fabric/v4/routers/{}", r.uuid),
                "uuid": r.uuid,
                "name": r.name,
                "type": "XF_ROUTER",
                "state": r.state,
                "equinixAsn": r.asn,
                "connectionsCount": connections,
                "location": {"metroCode": r.metro, "metroHref": format!("/fabric/v4/metros/{}", r.metro)},
                "package": {"code": r.package, "href": format!("/fabric/v4/routerPackages/{}", r.package), "type": "ROUTER_PACKAGE"},
                "order": {"purchaseOrderNumber": "PO-FCR", "termLength": 1},
                "project": {"projectId": PROJECT_ID},
                "account": {"accountNumber": 270848, "orgId": 91784},
                "notifications": [{"type": "ALL", "emails": ["noc@example.com"]}],
                "changeLog": changelog(CREATED),
            })
        })
        .collect()
}

/// The FCR connections as Fabric answers them (`IP_VC`, a `CLOUD_ROUTER` A-side).
pub(crate) fn connections() -> Vec<Value> {
    let router = &ROUTERS[0];
    FCR_CONNECTIONS
        .iter()
        .map(|(uuid, name, profile, bandwidth, up, _)| {
            let p = &PROFILES[*profile];
            let mut z = json!({"type": "SP", "profile": {"type": "L2_PROFILE", "uuid": p.uuid, "name": p.name,
                                                          "href": format!("/fabric/v4/serviceProfiles/{}", p.uuid)},
                               "location": {"metroCode": router.metro}});
            if p.auth_key.is_some() {
                z["authenticationKey"] = json!("xxxxxxxx-1234");
            }
            if let Some(region) = p.seller_regions.first() {
                z["sellerRegion"] = json!(region);
            }
            json!({
                "href": format!("/fabric/v4/connections/{uuid}"),
                "type": "IP_VC",
                "uuid": uuid,
                "name": name,
                "state": "ACTIVE",
                "bandwidth": bandwidth,
                "aSide": {"accessPoint": {"type": "CLOUD_ROUTER", "router": {"uuid": router.uuid, "name": router.name,
                                          "href": format!("/fabric/v4/routers/{}", router.uuid)}}},
                "zSide": {"accessPoint": z},
                "operation": {"equinixStatus": "PROVISIONED", "providerStatus": "AVAILABLE",
                              "operationalStatus": if *up { "UP" } else { "DOWN" },
                              "opStatusChangedAt": if *up { CREATED } else { AZURE_BGP_DOWN_AT }},
                "changeLog": {"createdBy": "sim-user", "createdDateTime": CREATED},
                "notifications": [{"type": "ALL", "emails": ["noc@example.com"]}],
                "project": {"projectId": PROJECT_ID},
            })
        })
        .collect()
}

/// The uuid of the routing protocol `kind` ("direct" or "bgp") of FCR connection `i`.
pub fn routing_protocol_uuid(i: usize, kind: &str) -> String {
    let n = if kind == "bgp" { 2 } else { 1 };
    format!("33333333-4444-4555-8666-0000000002{i}{n}")
}

/// The routing protocols of each FCR connection, by connection uuid: a DIRECT one for the link
/// addresses and a BGP one; Azure's session is down and says why.
pub(crate) fn routing_protocols() -> Vec<(String, Vec<Value>)> {
    FCR_CONNECTIONS
        .iter()
        .enumerate()
        .map(|(i, (uuid, _, profile, _, up, octet))| {
            let peer_asn = if *profile == 0 { 64512 } else { 12076 };
            let direct = json!({
                "type": "DIRECT",
                "uuid": routing_protocol_uuid(i, "direct"),
                "href": format!("/fabric/v4/connections/{uuid}/routingProtocols/{}", routing_protocol_uuid(i, "direct")),
                "name": format!("direct-{octet}"),
                "state": "PROVISIONED",
                "directIpv4": {"equinixIfaceIp": format!("169.254.{octet}.1/30")},
                "connection": {"uuid": uuid},
                "project": {"projectId": PROJECT_ID},
                "changelog": changelog(CREATED),
            });
            let (status, changed) = if *up { ("UP", CREATED) } else { ("DOWN", AZURE_BGP_DOWN_AT) };
            let mut bgp = json!({
                "type": "BGP",
                "uuid": routing_protocol_uuid(i, "bgp"),
                "href": format!("/fabric/v4/connections/{uuid}/routingProtocols/{}", routing_protocol_uuid(i, "bgp")),
                "name": format!("bgp-{octet}"),
                "state": "PROVISIONED",
                "bgpIpv4": {"customerPeerIp": format!("169.254.{octet}.2"), "equinixPeerIp": format!("169.254.{octet}.1"),
                            "enabled": true, "outboundASPrependCount": 0, "routesMax": 100,
                            "operation": {"operationalStatus": status, "opStatusChangedAt": changed}},
                "customerAsn": peer_asn,
                "equinixAsn": ROUTERS[0].asn,
                "bfd": {"enabled": !up, "interval": "300"},
                "connection": {"uuid": uuid},
                "project": {"projectId": PROJECT_ID},
                "changelog": changelog(CREATED),
            });
            if !up {
                bgp["operation"] = json!({"errors": [{
                    "errorCode": "EQ-3041140",
                    "errorMessage": "BGP IPv4 session is down",
                    "details": format!("No BGP OPEN from the customer peer 169.254.{octet}.2 since {changed}: the hold timer expired; check the peer's BGP configuration and ASN ({peer_asn})"),
                }]});
            }
            (uuid.to_string(), vec![direct, bgp])
        })
        .collect()
}

/// The BGP actions taken on each routing protocol, by routing protocol uuid: Azure's session was
/// reset once after it went down.
pub(crate) fn bgp_actions() -> Vec<(String, Vec<Value>)> {
    let azure = routing_protocol_uuid(1, "bgp");
    vec![(
        azure.clone(),
        vec![json!({
            "href": format!("/fabric/v4/connections/{}/routingProtocols/{azure}/actions/44444444-5555-4666-8777-000000000001", FCR_CONNECTIONS[1].0),
            "uuid": "44444444-5555-4666-8777-000000000001",
            "type": "RESET_BGPIPV4",
            "state": "SUCCEEDED",
            "description": "BGP IPv4 session reset; the session did not come back",
            "changelog": changelog("2026-12-01T06:30:00Z"),
        })],
    )]
}

/// One route of the router's table.
fn route(kind: &str, prefix: &str, next_hop: Option<&str>, connection: usize) -> Value {
    let (uuid, name, ..) = FCR_CONNECTIONS[connection];
    let mut r = json!({
        "type": kind,
        "protocolType": if kind.contains("BGP") { "BGP" } else { "DIRECT" },
        "state": "ACTIVE",
        "prefix": prefix,
        "connection": {"uuid": uuid, "name": name, "href": format!("/fabric/v4/connections/{uuid}")},
        "changeLog": changelog(CREATED),
    });
    if let Some(hop) = next_hop {
        r["nextHop"] = json!(hop);
        r["MED"] = json!(100);
        r["localPreference"] = json!(100);
        r["asPath"] = json!(["64512"]);
    }
    r
}

/// DC-FCR-01's route table: its two link networks and what the AWS session taught it (nothing
/// from Azure: that session is down).
pub(crate) fn router_routes() -> Vec<(String, Vec<Value>)> {
    let table = vec![
        route("IPv4_DIRECT_ROUTE", "169.254.10.0/30", None, 0),
        route("IPv4_DIRECT_ROUTE", "169.254.20.0/30", None, 1),
        route("IPv4_BGP_ROUTE", "10.10.0.0/16", Some("169.254.10.2"), 0),
        route("IPv4_BGP_ROUTE", "10.11.0.0/16", Some("169.254.10.2"), 0),
    ];
    ROUTERS
        .iter()
        .map(|r| (r.uuid.to_string(), if r.uuid == ROUTERS[0].uuid { table.clone() } else { vec![] }))
        .collect()
}

/// A route a connection received or advertised.
fn connection_route(prefix: &str, next_hop: &str, state: &str, connection: usize) -> Value {
    let (uuid, name, ..) = FCR_CONNECTIONS[connection];
    json!({
        "type": "IPv4_BGP_ROUTE",
        "protocolType": "BGP",
        "state": state,
        "prefix": prefix,
        "nextHop": next_hop,
        "MED": 100,
        "localPreference": 100,
        "asPath": ["64512"],
        "connection": {"uuid": uuid, "name": name, "href": format!("/fabric/v4/connections/{uuid}")},
        "changeLog": changelog(if state == "ACTIVE" { CREATED } else { AZURE_BGP_DOWN_AT }),
    })
}

/// Routes each FCR connection received, by connection uuid: AWS's VPC ranges; Azure's last
/// announcement, withdrawn when its session went down.
pub(crate) fn received_routes() -> Vec<(String, Vec<Value>)> {
    vec![
        (
            FCR_CONNECTIONS[0].0.to_string(),
            vec![
                connection_route("10.10.0.0/16", "169.254.10.2", "ACTIVE", 0),
                connection_route("10.11.0.0/16", "169.254.10.2", "ACTIVE", 0),
            ],
        ),
        (FCR_CONNECTIONS[1].0.to_string(), vec![connection_route("10.20.0.0/16", "169.254.20.2", "INACTIVE", 1)]),
    ]
}

/// Routes each FCR connection advertised, by connection uuid: to Azure what AWS taught the router
/// (not delivered while the session is down), to AWS the Azure link network.
pub(crate) fn advertised_routes() -> Vec<(String, Vec<Value>)> {
    vec![
        (FCR_CONNECTIONS[0].0.to_string(), vec![connection_route("169.254.20.0/30", "169.254.10.1", "ACTIVE", 0)]),
        (
            FCR_CONNECTIONS[1].0.to_string(),
            vec![
                connection_route("10.10.0.0/16", "169.254.20.1", "INACTIVE", 1),
                connection_route("10.11.0.0/16", "169.254.20.1", "INACTIVE", 1),
            ],
        ),
    ]
}
