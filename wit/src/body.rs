//! What a create body says that both sides read the same way: where its access points are, which
//! ids may go in a path, and the price search built from its bytes. The component computes these
//! for its own answer and the host for the plan it vouches for; each side runs this code on the
//! bytes it holds and never takes the other's result.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use serde_json::{Value, json};

use crate::{ChangeType, PRICED_ACCESS_POINT_TYPES, PRICED_CONNECTION_TYPES};

/// One end of a connection, or the side of a token's connection a selector is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    A,
    Z,
}

impl Side {
    pub const BOTH: [Side; 2] = [Side::A, Side::Z];

    /// The member of the body that holds it.
    pub const fn member(self) -> &'static str {
        match self {
            Side::A => "aSide",
            Side::Z => "zSide",
        }
    }

    /// How a person reads it.
    pub const fn label(self) -> &'static str {
        match self {
            Side::A => "A side",
            Side::Z => "Z side",
        }
    }
}

/// Where a create body holds its access points; each change type names its place
/// ([`ChangeType::access_points_at`]), so a new type answers there and not here.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AccessPointsAt {
    /// A connection's `accessPoint` of each side.
    EachSide,
    /// A service token's `connection.<side>.accessPointSelectors`.
    TokenSelectors,
    /// None: a network is placed by its own location.
    Nowhere,
}

/// The access points of a body, each with its side.
pub fn access_points(change_type: ChangeType, body: &Value) -> Vec<(Side, &Value)> {
    let mut out = Vec::new();
    for side in Side::BOTH {
        match change_type.access_points_at() {
            AccessPointsAt::EachSide => {
                if let Some(ap) = body[side.member()].get("accessPoint").filter(|v| v.is_object()) {
                    out.push((side, ap));
                }
            }
            AccessPointsAt::TokenSelectors => {
                let selectors = body["connection"][side.member()]["accessPointSelectors"].as_array();
                out.extend(selectors.into_iter().flatten().filter(|v| v.is_object()).map(|selector| (side, selector)));
            }
            AccessPointsAt::Nowhere => {}
        }
    }
    out
}

/// Whether `s` is an id that may go in a request path or a search: letters, digits and `-`, at
/// most `max` long.
pub fn plain_id(s: &str, max: usize) -> bool {
    !s.is_empty() && s.len() <= max && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
}

/// The longest uuid and metro code taken as plain ids.
pub const MAX_UUID: usize = 64;
pub const MAX_METRO: usize = 8;

/// One `property = value` row of a search filter (values are strings, as Fabric's schema says).
pub fn eq(property: &str, value: impl ToString) -> Value {
    json!({"property": property, "operator": "=", "values": [value.to_string()]})
}

/// The rows every price search starts with: the product, the connection type, the bandwidth.
pub fn product_filter(connection_type: &str, bandwidth: u64) -> Vec<Value> {
    alloc::vec![
        eq("/type", "VIRTUAL_CONNECTION_PRODUCT"),
        eq("/connection/type", connection_type),
        json!({"property": "/connection/bandwidth", "operator": "IN", "values": [bandwidth.to_string()]}),
    ]
}

/// Why a connection body has no price search.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Unpriced {
    /// Fabric's price search has no prices for this connection type (as the body gives it).
    Type(String),
    /// The body gives no bandwidth in whole Mbps.
    NoBandwidth,
}

impl Unpriced {
    /// In words, with the body's text shown through `show` (the host quotes what it did not write).
    pub fn describe(&self, show: impl Fn(&str) -> String) -> String {
        match self {
            Unpriced::Type(kind) => format!("Fabric's price search has no prices for {} connections", show(kind)),
            Unpriced::NoBandwidth => "the body names no bandwidth in whole Mbps".into(),
        }
    }
}

/// The price search for a connection body, from its bytes alone: only the rows Fabric's
/// `VirtualConnectionPrice` has (the connection and access point types it prices, the A side's
/// port, the Z side's profile, each side's metro). A port is priced where Fabric places it, so an
/// A side with a port gives no metro row, whatever metro the bytes claim for it; an id that is no
/// plain id gives no row.
pub fn price_filter(body: &Value) -> Result<Value, Unpriced> {
    let kind = body["type"].as_str().unwrap_or_default();
    if !PRICED_CONNECTION_TYPES.contains(&kind) {
        return Err(Unpriced::Type(kind.into()));
    }
    let bandwidth = body["bandwidth"].as_u64().ok_or(Unpriced::NoBandwidth)?;
    let mut and = product_filter(kind, bandwidth);
    for (side, ap) in access_points(ChangeType::ConnectionCreate, body) {
        let base = format!("/connection/{}/accessPoint", side.member());
        if let Some(t) = ap["type"].as_str().filter(|t| PRICED_ACCESS_POINT_TYPES.contains(t)) {
            and.push(eq(&format!("{base}/type"), t));
        }
        let id = match side {
            Side::A => "/port/uuid",
            Side::Z => "/profile/uuid",
        };
        let by_port = side == Side::A && ap.pointer(id).is_some();
        if let Some(metro) =
            ap.pointer("/location/metroCode").and_then(Value::as_str).filter(|m| plain_id(m, MAX_METRO))
            && !by_port
        {
            and.push(eq(&format!("{base}/location/metroCode"), metro));
        }
        if let Some(uuid) = ap.pointer(id).and_then(Value::as_str).filter(|u| plain_id(u, MAX_UUID)) {
            and.push(eq(&format!("{base}{id}"), uuid));
        }
    }
    Ok(json!({"filter": {"and": and}}))
}

/// Whether the price of `body` leaves out a metro code the bytes give for the A side, because the
/// A side names a port (Fabric prices the port where it is).
pub fn priced_by_port(body: &Value) -> bool {
    let ap = &body["aSide"]["accessPoint"];
    ap.pointer("/port/uuid").is_some() && ap.pointer("/location/metroCode").is_some()
}

/// The sum of a rate-card row's charges of one type (`MONTHLY_RECURRING`, `NON_RECURRING`); a
/// charge without a number counts for nothing.
pub fn charge_total(row: &Value, charge_type: &str) -> f64 {
    row["charges"]
        .as_array()
        .map(|cs| cs.iter().filter(|c| c["type"] == charge_type).filter_map(|c| c["price"].as_f64()).sum())
        .unwrap_or(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn connection() -> Value {
        json!({
            "type": "EVPL_VC", "name": "to-aws", "bandwidth": 500,
            "aSide": {"accessPoint": {"type": "COLO", "port": {"uuid": "c4d9350e-783c-83cd-1ce0-306a5c00a600"},
                                      "location": {"metroCode": "LD"}}},
            "zSide": {"accessPoint": {"type": "SP", "profile": {"uuid": "9f4b3a7e-1c2d-4e5f-8a9b-0c1d2e3f4a01"},
                                      "location": {"metroCode": "SV"}}}
        })
    }

    fn rows(filter: &Value) -> Vec<(String, String)> {
        let rows = filter["filter"]["and"].as_array().unwrap();
        rows.iter().map(|r| (r["property"].as_str().unwrap().into(), r["values"][0].as_str().unwrap().into())).collect()
    }

    #[test]
    fn a_port_is_priced_where_fabric_places_it_and_the_profile_side_by_its_metro() {
        let rows = rows(&price_filter(&connection()).unwrap());
        let has = |p: &str, v: &str| rows.iter().any(|(rp, rv)| rp == p && rv == v);
        assert!(has("/connection/bandwidth", "500") && has("/connection/type", "EVPL_VC"), "{rows:?}");
        assert!(has("/connection/aSide/accessPoint/port/uuid", "c4d9350e-783c-83cd-1ce0-306a5c00a600"));
        assert!(!rows.iter().any(|(p, _)| p == "/connection/aSide/accessPoint/location/metroCode"), "{rows:?}");
        assert!(has("/connection/zSide/accessPoint/location/metroCode", "SV") && priced_by_port(&connection()));
    }

    #[test]
    fn ids_that_are_no_plain_ids_give_no_row_and_unpriced_bodies_say_why() {
        let mut body = connection();
        body["zSide"]["accessPoint"]["profile"]["uuid"] = json!("x\"},{\"property\":\"/type");
        body["zSide"]["accessPoint"]["location"]["metroCode"] = json!("SV?x=1");
        let rows = rows(&price_filter(&body).unwrap());
        assert!(!rows.iter().any(|(p, _)| p.starts_with("/connection/zSide") && !p.ends_with("/type")), "{rows:?}");
        body["bandwidth"] = json!(500.5);
        assert_eq!(price_filter(&body), Err(Unpriced::NoBandwidth));
        body["type"] = json!("MC_VC");
        let why = price_filter(&body).unwrap_err();
        assert_eq!(why.describe(|s| format!("<{s}>")), "Fabric's price search has no prices for <MC_VC> connections");
    }

    #[test]
    fn a_token_has_its_selectors_as_access_points_and_a_network_none() {
        let token = json!({"connection": {"aSide": {"accessPointSelectors": [{"type": "COLO"}, 3]},
                                          "zSide": {"accessPointSelectors": [{"type": "NETWORK"}]}}});
        let sides: Vec<Side> =
            access_points(ChangeType::ServiceTokenCreate, &token).into_iter().map(|(s, _)| s).collect();
        assert_eq!(sides, [Side::A, Side::Z]);
        assert!(access_points(ChangeType::ConnectionCreate, &token).is_empty());
        assert!(access_points(ChangeType::NetworkCreate, &connection()).is_empty());
        assert_eq!(
            charge_total(
                &json!({"charges": [{"type": "NON_RECURRING", "price": 1.5},
            {"type": "NON_RECURRING", "price": "2"}, {"type": "MONTHLY_RECURRING", "price": 9}]}),
                "NON_RECURRING"
            ),
            1.5
        );
    }
}
