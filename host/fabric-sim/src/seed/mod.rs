//! The simulator's seeded estate. Ids are fixed so tests and walk-throughs can name them, and
//! the data is consistent across endpoints: the seeded connections use VLANs on the seeded
//! ports, and those VLANs are what `linkProtocols` reports.

use serde_json::{Value, json};

pub(crate) mod events;
pub(crate) mod policies;
pub mod routing;
pub(crate) mod telemetry;

pub const PROJECT_ID: &str = "ac4d34ca-0d9c-4bc2-9aab-1234567abcde";

/// Twenty-six metros: a default page of 20 is full and listing them all takes two pages.
pub fn metros() -> Vec<Value> {
    let rows = [
        ("DC", "Ashburn", "AMER", 64512),
        ("SV", "Silicon Valley", "AMER", 64513),
        ("NY", "New York", "AMER", 64514),
        ("CH", "Chicago", "AMER", 64515),
        ("DA", "Dallas", "AMER", 64516),
        ("LD", "London", "EMEA", 64517),
        ("AM", "Amsterdam", "EMEA", 64518),
        ("FR", "Frankfurt", "EMEA", 64519),
        ("PA", "Paris", "EMEA", 64520),
        ("SG", "Singapore", "APAC", 64521),
        ("TY", "Tokyo", "APAC", 64522),
        ("SY", "Sydney", "APAC", 64523),
        ("AT", "Atlanta", "AMER", 64524),
        ("LA", "Los Angeles", "AMER", 64525),
        ("SE", "Seattle", "AMER", 64526),
        ("TR", "Toronto", "AMER", 64527),
        ("MI", "Miami", "AMER", 64528),
        ("SP", "Sao Paulo", "AMER", 64529),
        ("MD", "Madrid", "EMEA", 64530),
        ("ZH", "Zurich", "EMEA", 64531),
        ("ML", "Milan", "EMEA", 64532),
        ("DX", "Dubai", "EMEA", 64533),
        ("HK", "Hong Kong", "APAC", 64534),
        ("OS", "Osaka", "APAC", 64535),
        ("ME", "Melbourne", "APAC", 64536),
        ("MB", "Mumbai", "APAC", 64537),
    ];
    rows.iter()
        .map(|(code, name, region, asn)| {
            let neighbours: Vec<Value> = rows
                .iter()
                .filter(|(c, _, r, _)| r == region && c != code)
                .take(2)
                .map(|(c, ..)| json!({"href": format!("/fabric/v4/metros/{c}"), "code": c, "avgLatency": 5.5}))
                .collect();
            json!({
                "href": format!("/fabric/v4/metros/{code}"),
                "type": "XF_METRO",
                "code": code,
                "region": region,
                "name": name,
                "equinixAsn": asn,
                "localVCBandwidthMax": 50000,
                "geoScopes": if *region == "AMER" { json!(["CONUS"]) } else { json!([]) },
                "connectedMetros": neighbours,
                "services": [{"type": "ETHERNET_IP_SERVICE"}, {"type": "TIME_SERVICE"}],
            })
        })
        .collect()
}

/// Metros where the seeded organisation has ports (`presence=MY_PORTS`).
pub const MY_PORT_METROS: &[&str] = &["DC", "SV"];

/// Ports in DC and SV: (uuid, name, metro, encapsulation, bandwidth Mbps).
pub const PORTS: &[(&str, &str, &str, &str, u64)] = &[
    ("c4d9350e-783c-83cd-1ce0-306a5c00a600", "DC-PRI-01", "DC", "DOT1Q", 10000),
    ("c4d9350e-783c-83cd-1ce0-306a5c00a601", "DC-SEC-01", "DC", "DOT1Q", 10000),
    ("c4d9350e-783c-83cd-1ce0-306a5c00a602", "DC-QINQ-01", "DC", "QINQ", 1000),
    ("c4d9350e-783c-83cd-1ce0-306a5c00a610", "SV-PRI-01", "SV", "DOT1Q", 10000),
    ("c4d9350e-783c-83cd-1ce0-306a5c00a611", "SV-SEC-01", "SV", "DOT1Q", 1000),
];

/// The seeded ports, each placed as Fabric places a port (`SimplifiedLocation`: its metro's code
/// and name) and up. Their used and available bandwidth are the estate's to count
/// ([`crate::estate::Estate::recount_ports`]).
pub(crate) fn ports() -> Vec<Value> {
    let metros = metros();
    PORTS
        .iter()
        .map(|(uuid, name, metro, encapsulation, bandwidth)| {
            let metro_name = metros.iter().find(|m| m["code"] == *metro).map(|m| m["name"].clone());
            json!({
                "href": format!("/fabric/v4/ports/{uuid}"),
                "type": "XF_PORT",
                "uuid": uuid,
                "name": name,
                "state": "ACTIVE",
                "operation": {"operationalStatus": "UP", "opStatusChangedAt": "2026-01-05T09:00:00Z"},
                "location": {"metroCode": metro, "metroName": metro_name, "metroHref": format!("/fabric/v4/metros/{metro}"),
                             "ibx": format!("{metro}1")},
                "encapsulation": {"type": encapsulation, "tagProtocolId": "0x8100"},
                "bandwidth": bandwidth,
                "availableBandwidth": bandwidth,
                "usedBandwidth": 0,
                "redundancy": {"priority": if name.contains("PRI") { "PRIMARY" } else { "SECONDARY" }},
                "lagEnabled": false,
                "project": {"projectId": PROJECT_ID},
                "account": {"accountNumber": 270848, "orgId": 91784},
            })
        })
        .collect()
}

/// A seeded service profile: what it offers and what a connection to it must bring, as real
/// profiles state it (`accessPointTypeConfigs[].authenticationKey.required`, the seller regions of
/// each metro), so a dry run refuses what Fabric would.
pub struct SeedProfile {
    pub uuid: &'static str,
    pub name: &'static str,
    pub visibility: &'static str,
    pub metros: &'static [&'static str],
    /// The label of the required authentication key, if one is required.
    pub(crate) auth_key: Option<&'static str>,
    /// Seller regions offered in every metro (empty: no region to choose).
    pub seller_regions: &'static [&'static str],
}

/// Two public providers and one private profile.
pub const PROFILES: &[SeedProfile] = &[
    SeedProfile {
        uuid: "9f4b3a7e-1c2d-4e5f-8a9b-0c1d2e3f4a01",
        name: "AWS Direct Connect",
        visibility: "PUBLIC",
        metros: &["DC", "SV", "LD"],
        auth_key: Some("AWS Account ID"),
        seller_regions: &["us-east-1", "us-west-1", "eu-west-2"],
    },
    SeedProfile {
        uuid: "9f4b3a7e-1c2d-4e5f-8a9b-0c1d2e3f4a02",
        name: "Azure ExpressRoute",
        visibility: "PUBLIC",
        metros: &["DC", "AM"],
        auth_key: Some("Service Key"),
        seller_regions: &[],
    },
    SeedProfile {
        uuid: "9f4b3a7e-1c2d-4e5f-8a9b-0c1d2e3f4a03",
        name: "Acme Private Exchange",
        visibility: "PRIVATE",
        metros: &["SV"],
        auth_key: None,
        seller_regions: &[],
    },
];

/// The bandwidths every seeded profile offers, in Mbps.
pub(crate) const PROFILE_BANDWIDTHS: &[u64] = &[50, 100, 200, 500, 1000, 2000, 5000, 10000];

pub(crate) fn profiles() -> Vec<Value> {
    PROFILES
        .iter()
        .map(|p| {
            let mut config = json!({"type": "COLO", "supportedBandwidths": PROFILE_BANDWIDTHS,
                                    "allowRemoteConnections": true, "allowCustomBandwidth": false});
            if let Some(label) = p.auth_key {
                config["authenticationKey"] = json!({"required": true, "label": label, "description": format!("The {label} the provider issued")});
            }
            let metros: Vec<Value> = p
                .metros
                .iter()
                .map(|m| {
                    let regions: serde_json::Map<String, Value> =
                        p.seller_regions.iter().map(|r| (r.to_string(), json!(r))).collect();
                    let mut metro = json!({"code": m, "name": m});
                    if !regions.is_empty() {
                        metro["sellerRegions"] = Value::Object(regions);
                    }
                    metro
                })
                .collect();
            json!({
                "href": format!("/fabric/v4/serviceProfiles/{}", p.uuid),
                "type": "L2_PROFILE",
                "uuid": p.uuid,
                "name": p.name,
                "state": "ACTIVE",
                "visibility": p.visibility,
                "description": format!("{} (simulated)", p.name),
                "accessPointTypeConfigs": [config],
                "metros": metros,
                "project": {"projectId": PROJECT_ID},
            })
        })
        .collect()
}

/// Network Edge virtual devices a connection or token may start from: (uuid, name, metro,
/// interfaces 1..=n).
pub(crate) const VIRTUAL_DEVICES: &[(&str, &str, &str, u64)] = &[
    ("5f8e2b1a-6c3d-4e7f-9a0b-1c2d3e4f5a61", "DC-EDGE-01", "DC", 8),
    ("5f8e2b1a-6c3d-4e7f-9a0b-1c2d3e4f5a62", "SV-EDGE-01", "SV", 8),
];

/// Two existing connections from DC-PRI-01 to SV-PRI-01, VLANs 100 and 101 (uuid, name, VLAN),
/// so a VLAN search has answers.
pub const CONNECTIONS: &[(&str, &str, u64)] = &[
    ("11111111-2222-4333-8444-000000000100", "existing-to-aws", 100),
    ("11111111-2222-4333-8444-000000000101", "existing-to-sv", 101),
];

pub(crate) fn connections() -> Vec<Value> {
    CONNECTIONS
        .iter()
        .map(|(uuid, name, vlan)| {
            json!({
                "href": format!("/fabric/v4/connections/{uuid}"),
                "type": "EVPL_VC",
                "uuid": uuid,
                "name": name,
                "state": "ACTIVE",
                "bandwidth": 500,
                "aSide": {"accessPoint": {"type": "COLO", "port": {"uuid": PORTS[0].0, "href": format!("/fabric/v4/ports/{}", PORTS[0].0), "name": PORTS[0].1},
                                          "linkProtocol": {"type": "DOT1Q", "vlanTag": vlan}}},
                "zSide": {"accessPoint": {"type": "COLO", "port": {"uuid": PORTS[3].0, "href": format!("/fabric/v4/ports/{}", PORTS[3].0), "name": PORTS[3].1},
                                          "linkProtocol": {"type": "DOT1Q", "vlanTag": vlan}}},
                "operation": {"equinixStatus": "PROVISIONED", "providerStatus": "AVAILABLE"},
                "changeLog": {"createdBy": "sim-user", "createdDateTime": "2026-01-05T10:00:00Z"},
                "notifications": [{"type": "ALL", "emails": ["noc@example.com"]}],
                "project": {"projectId": PROJECT_ID},
            })
        })
        .collect()
}
