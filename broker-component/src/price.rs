//! The price context of a proposal: a rate-card estimate for connections from
//! POST /fabric/v4/prices/search, or an honest "unpriced" with the reason. A price failure never
//! blocks a proposal.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use serde_json::{Value, json};

use crate::capability::{FabricRequest, Host, Method};
use crate::fabric_call::send_json;
use crate::spec::{ConnectionSide, ConnectionSpec, Spec};

fn unpriced(reason: impl Into<String>) -> Value {
    json!({"status": "unpriced", "reason": reason.into()})
}

/// One `property = value` row of a search filter (values are strings, as Fabric's schema says).
pub(crate) fn eq(property: &str, value: impl ToString) -> Value {
    json!({"property": property, "operator": "=", "values": [value.to_string()]})
}

/// The rows every price search starts with: the product, the connection type, the bandwidth.
pub(crate) fn product_filter(connection_type: &str, bandwidth: u64) -> Vec<Value> {
    alloc::vec![
        eq("/type", "VIRTUAL_CONNECTION_PRODUCT"),
        eq("/connection/type", connection_type),
        json!({"property": "/connection/bandwidth", "operator": "IN", "values": [bandwidth.to_string()]}),
    ]
}

/// The sum of a rate-card row's charges of one type (`MONTHLY_RECURRING`, `NON_RECURRING`).
pub(crate) fn charge_total(row: &Value, charge_type: &str) -> f64 {
    row.get("charges")
        .and_then(Value::as_array)
        .map(|cs| {
            cs.iter()
                .filter(|c| c.get("type").and_then(Value::as_str) == Some(charge_type))
                .filter_map(|c| c.get("price").and_then(Value::as_f64))
                .sum()
        })
        .unwrap_or(0.0)
}

/// The price-search filter for a connection spec.
pub fn connection_filter(c: &ConnectionSpec) -> Value {
    let mut and = product_filter(c.kind, c.bandwidth);
    for (name, side) in [("aSide", &c.a_side), ("zSide", &c.z_side)] {
        side_filter(&mut and, name, side);
    }
    json!({"filter": {"and": and}})
}

fn side_filter(and: &mut Vec<Value>, name: &str, side: &ConnectionSide) {
    let Some(ap) = &side.access_point else { return };
    let base = format!("/connection/{name}/accessPoint");
    and.push(eq(&format!("{base}/type"), ap.kind));
    if let Some(port) = &ap.port {
        and.push(eq(&format!("{base}/port/uuid"), &port.uuid));
    }
    if let Some(metro) = &ap.metro_code {
        and.push(eq(&format!("{base}/location/metroCode"), metro));
    }
    if let Some(profile) = &ap.profile {
        and.push(eq(&format!("{base}/profile/uuid"), &profile.uuid));
    }
}

/// Computes the price context for `spec`.
pub fn price_context(host: &mut impl Host, spec: &Spec) -> Value {
    let c = match spec {
        Spec::Connection(c) => c,
        Spec::Network(_) => {
            return unpriced(
                "Fabric has no price product for networks; the connections attached to it are priced when they are created",
            );
        }
        Spec::ServiceToken(_) => {
            return unpriced(
                "Fabric has no price product for service tokens; a connection created with the token is priced as a virtual connection",
            );
        }
    };
    let filter = connection_filter(c);
    let request = FabricRequest {
        method: Method::Post,
        path: "/fabric/v4/prices/search".into(),
        query: Vec::new(),
        body: Some(crate::json_text(&filter)),
    };
    let answer = match send_json(host, request) {
        Ok(a) => a,
        Err(e) => return with_filter(unpriced(format!("the price search failed: {}", e.message)), filter),
    };
    let Some(row) = answer.get("data").and_then(Value::as_array).and_then(|d| d.first()) else {
        return with_filter(unpriced("no rate-card price matched this connection"), filter);
    };
    json!({
        "status": "estimated",
        "source": "rate card: POST /fabric/v4/prices/search (list price; account discounts and port packages may lower it)",
        "monthly_recurring": charge_total(row, "MONTHLY_RECURRING"),
        "non_recurring": charge_total(row, "NON_RECURRING"),
        "currency": row.get("currency").cloned().unwrap_or(Value::Null),
        "term_length_months": row.get("termLength").cloned().unwrap_or(json!(1)),
        "product_code": row.get("code").cloned().unwrap_or(Value::Null),
        "filter": filter,
    })
}

fn with_filter(mut v: Value, filter: Value) -> Value {
    v["filter"] = filter;
    v
}

/// One line for the confirmation prompt.
pub fn summary(price: &Value) -> String {
    match price.get("status").and_then(Value::as_str) {
        Some("estimated") => format!(
            "{} {} per month + {} one-time, term {} month(s) (rate-card estimate)",
            price["currency"].as_str().unwrap_or("?"),
            price["monthly_recurring"],
            price["non_recurring"],
            price["term_length_months"]
        ),
        _ => format!("unpriced: {}", price.get("reason").and_then(Value::as_str).unwrap_or("no estimate")),
    }
}
