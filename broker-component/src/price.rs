//! The price context of a proposal: a rate-card estimate for connections from
//! POST /fabric/v4/prices/search, or an honest "unpriced" with the reason. A price failure never
//! blocks a proposal.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use serde_json::{Value, json};

use crate::capability::{FabricRequest, Host, Method};
use crate::fabric_call::send_json;
use crate::fabric_enums::{PRICED_ACCESS_POINT_TYPES, PRICED_CONNECTION_TYPES};
use crate::spec::{ChangeType, Spec};

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

/// The price-search filter for a connection body, or why it cannot be priced: only the rows the
/// price schema has (`VirtualConnectionPrice`: a connection type and access point type it
/// prices, the a-side's port and metro, the z-side's profile and metro).
pub fn connection_filter(body: &Value) -> Result<Value, String> {
    let kind = body["type"].as_str().unwrap_or_default();
    if !PRICED_CONNECTION_TYPES.contains(&kind) {
        return Err(format!("the rate card has no prices for {kind} connections"));
    }
    let bandwidth = body["bandwidth"].as_u64().unwrap_or_default();
    let mut and = product_filter(kind, bandwidth);
    for side in ["aSide", "zSide"] {
        let Some(ap) = body[side].get("accessPoint") else { continue };
        let base = format!("/connection/{side}/accessPoint");
        if let Some(t) = ap["type"].as_str().filter(|t| PRICED_ACCESS_POINT_TYPES.contains(t)) {
            and.push(eq(&format!("{base}/type"), t));
        }
        if let Some(metro) = ap.pointer("/location/metroCode").and_then(Value::as_str) {
            and.push(eq(&format!("{base}/location/metroCode"), metro));
        }
        let id = if side == "aSide" { "/port/uuid" } else { "/profile/uuid" };
        if let Some(uuid) = ap.pointer(id).and_then(Value::as_str) {
            and.push(eq(&format!("{base}{id}"), uuid));
        }
    }
    Ok(json!({"filter": {"and": and}}))
}

/// Computes the price context for `spec`.
pub fn price_context(host: &mut dyn Host, spec: &Spec) -> Value {
    match spec.change_type {
        ChangeType::ConnectionCreate => {}
        ChangeType::NetworkCreate => {
            return unpriced(
                "Fabric has no price product for networks; the connections attached to it are priced when they are created",
            );
        }
        ChangeType::ServiceTokenCreate => {
            return unpriced(
                "Fabric has no price product for service tokens; a connection created with the token is priced as a virtual connection",
            );
        }
    }
    let filter = match connection_filter(spec.body()) {
        Ok(f) => f,
        Err(why) => return unpriced(why),
    };
    let request = FabricRequest {
        method: Method::Post,
        path: "/fabric/v4/prices/search".into(),
        query: Vec::new(),
        body: Some(crate::json::json_text(&filter)),
    };
    let answer = match send_json(host, request) {
        Ok(a) => a,
        Err(e) => return with_filter(unpriced(format!("the price search failed: {}", e.message)), filter),
    };
    let Some(row) = answer.get("data").and_then(Value::as_array).and_then(|d| d.first()) else {
        return with_filter(unpriced("no rate-card price matched this connection"), filter);
    };
    let priced = json!({
        "status": "estimated",
        "source": "rate card: POST /fabric/v4/prices/search (list price; account discounts and port packages may lower it)",
        "monthly_recurring": charge_total(row, "MONTHLY_RECURRING"),
        "non_recurring": charge_total(row, "NON_RECURRING"),
        "currency": row.get("currency").cloned().unwrap_or(Value::Null),
        "term_length_months": row.get("termLength").cloned().unwrap_or(json!(1)),
        "product_code": row.get("code").cloned().unwrap_or(Value::Null),
        "filter": filter,
    });
    crate::json::discard(answer);
    priced
}

/// The price context as a propose result shows it: the figures, or why there are none (the
/// search filter stays in the stored proposal).
pub fn lean(mut price: Value) -> Value {
    if let Some(o) = price.as_object_mut() {
        crate::json::discard((o.remove("filter"), o.remove("source")));
    }
    price
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
