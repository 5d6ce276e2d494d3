//! The simulator's seeded estate: metros, and ports in two of them. Ids are fixed so tests and
//! walk-throughs can name them.

use serde_json::{Value, json};

pub const PROJECT_ID: &str = "ac4d34ca-0d9c-4bc2-9aab-1234567abcde";

/// Twelve metros, so listing them takes more than one page at small limits.
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
    ];
    rows.iter()
        .map(|(code, name, region, asn)| {
            json!({
                "href": format!("/fabric/v4/metros/{code}"),
                "type": "XF_METRO",
                "code": code,
                "region": region,
                "name": name,
                "equinixAsn": asn,
                "localVCBandwidthMax": 50000,
                "geoScopes": if *region == "AMER" { json!(["CONUS"]) } else { json!([]) },
                "connectedMetros": [{"href": "/fabric/v4/metros/DC", "code": "DC", "avgLatency": 5.5}],
                "services": ["FABRIC"],
            })
        })
        .collect()
}

/// Metros where the seeded organisation has ports (`presence=MY_PORTS`).
pub const MY_PORT_METROS: &[&str] = &["DC", "SV"];

/// Ports in DC and SV (uuid, name, metro, encapsulation, bandwidth Mbps).
pub const PORTS: &[(&str, &str, &str, &str, u64)] = &[
    ("c4d9350e-783c-83cd-1ce0-306a5c00a600", "DC-PRI-01", "DC", "DOT1Q", 10000),
    ("c4d9350e-783c-83cd-1ce0-306a5c00a601", "DC-SEC-01", "DC", "DOT1Q", 10000),
    ("c4d9350e-783c-83cd-1ce0-306a5c00a602", "DC-QINQ-01", "DC", "QINQ", 1000),
    ("c4d9350e-783c-83cd-1ce0-306a5c00a610", "SV-PRI-01", "SV", "DOT1Q", 10000),
    ("c4d9350e-783c-83cd-1ce0-306a5c00a611", "SV-SEC-01", "SV", "DOT1Q", 1000),
];
