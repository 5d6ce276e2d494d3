//! The simulator's rate card for POST /fabric/v4/prices/search: virtual connections priced by
//! bandwidth; anything else matches nothing.

use serde_json::{Value, json};

/// (bandwidth Mbps, monthly USD).
const RATE_CARD: &[(u64, f64)] = &[
    (50, 60.0),
    (100, 120.0),
    (200, 180.0),
    (500, 250.0),
    (1000, 300.0),
    (2000, 450.0),
    (5000, 800.0),
    (10000, 1200.0),
];

/// Values of `property` in an `and` filter.
fn values<'a>(filter: &'a Value, property: &str) -> Option<&'a Vec<Value>> {
    filter["and"].as_array()?.iter().find(|f| f["property"] == property)?["values"].as_array()
}

/// `Ok(data)` rows for a price-search body, or `Err(message)` for a malformed filter.
pub(crate) fn search(body: &Value) -> Result<Vec<Value>, String> {
    let filter = body.get("filter").ok_or("filter is required")?;
    if !filter["and"].is_array() {
        return Err("filter.and must be an array of expressions".into());
    }
    let product = values(filter, "/type").and_then(|v| v.first()).and_then(Value::as_str).ok_or("/type is required")?;
    if product != "VIRTUAL_CONNECTION_PRODUCT" {
        return Ok(Vec::new());
    }
    // one rate card for every connection type the search accepts (the contract tests check that
    // callers ask only for the types `VirtualConnectionPriceConnectionType` lists)
    let kind = values(filter, "/connection/type").and_then(|v| v.first()).cloned().unwrap_or(json!("EVPL_VC"));
    let bandwidths: Vec<u64> = values(filter, "/connection/bandwidth")
        .map(|v| v.iter().filter_map(|b| b.as_str().and_then(|s| s.parse().ok()).or_else(|| b.as_u64())).collect())
        .unwrap_or_default();
    Ok(bandwidths
        .iter()
        .filter_map(|bw| RATE_CARD.iter().find(|(b, _)| b == bw))
        .map(|(bw, price)| {
            json!({
                "type": "VIRTUAL_CONNECTION_PRODUCT",
                "code": "ECX00015.PROD",
                "name": "Equinix Fabric Virtual Connection Product",
                "account": {"accountNumber": 270848},
                "charges": [{"type": "MONTHLY_RECURRING", "price": price}, {"type": "NON_RECURRING", "price": 0.0}],
                "currency": "USD",
                "termLength": 1,
                "catgory": "COUNTRY",
                "connection": {"type": kind, "bandwidth": bw},
            })
        })
        .collect())
}
