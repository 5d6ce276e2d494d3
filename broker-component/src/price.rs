//! The price context of a proposal: a rate-card estimate for connections from
//! POST /fabric/v4/prices/search, or an honest "unpriced" with the reason. A price failure never
//! blocks a proposal.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use serde_json::{Value, json};

use equinix_broker_contract::body::{charge_total, price_filter};

use crate::capability::{FabricRequest, Host, Method};
use crate::fabric_call::send_json;
use crate::spec::{ChangeType, Spec};

fn unpriced(reason: impl Into<String>) -> Value {
    json!({"status": "unpriced", "reason": reason.into()})
}

/// Computes the price context for `spec`.
pub(crate) fn price_context(host: &mut dyn Host, spec: &Spec) -> Value {
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
    let filter = match price_filter(spec.body()) {
        Ok(f) => f,
        Err(why) => return unpriced(why.describe(|s| s.into())),
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
pub(crate) fn lean(mut price: Value) -> Value {
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
pub(crate) fn summary(price: &Value) -> String {
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
