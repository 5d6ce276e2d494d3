//! The compact forms of Fabric's objects in a page: what an agent needs to pick one, in few
//! bytes (a get returns the whole object).

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use serde_json::{Map, Value, json};

use equinix_broker_contract::body::charge_total;

pub(super) fn compact_port(p: &Value) -> Value {
    Value::Object(pick(
        p,
        &[
            ("uuid", "/uuid"),
            ("name", "/name"),
            ("state", "/state"),
            ("metro", "/location/metroCode"),
            ("ibx", "/location/ibx"),
            ("bandwidth_mbps", "/bandwidth"),
            ("available_bandwidth_mbps", "/availableBandwidth"),
            ("encapsulation", "/encapsulation/type"),
            ("redundancy", "/redundancy/priority"),
            ("project_id", "/project/projectId"),
        ],
    ))
}

/// A VLAN in use and what holds it: Fabric names the holder as `asset` (a connection) or
/// `serviceToken`, with its uuid, type and bandwidth (never a name).
pub(super) fn compact_vlan(l: &Value) -> Value {
    let mut out = pick(
        l,
        &[
            ("type", "/type"),
            ("vlan_tag", "/vlanTag"),
            ("vlan_s_tag", "/vlanSTag"),
            ("vlan_c_tag", "/vlanCTag"),
            ("vlan_tag_min", "/vlanTagMin"),
            ("vlan_tag_max", "/vlanTagMax"),
            ("vni", "/vni"),
            ("state", "/state"),
        ],
    );
    let holder = [("connection", "asset"), ("service_token", "serviceToken")]
        .into_iter()
        .find_map(|(kind, key)| l.get(key).map(|h| (kind, h)));
    // flat, so a page's `same` can carry what every holder shares
    if let Some((kind, h)) = holder {
        out.insert("held_by".into(), json!(kind));
        out.extend(pick(
            h,
            &[("holder_uuid", "/uuid"), ("holder_type", "/type"), ("holder_bandwidth_mbps", "/bandwidth")],
        ));
    }
    Value::Object(out)
}

pub(super) fn compact_profile(p: &Value) -> Value {
    let mut out = pick(
        p,
        &[
            ("uuid", "/uuid"),
            ("name", "/name"),
            ("type", "/type"),
            ("state", "/state"),
            ("visibility", "/visibility"),
            ("supported_bandwidths_mbps", "/accessPointTypeConfigs/0/supportedBandwidths"),
        ],
    );
    if let Some(metros) = p.get("metros").and_then(Value::as_array) {
        out.insert("metros".into(), metros.iter().filter_map(|m| m.get("code").cloned()).collect());
        // what a connection to it must bring: a seller region offered in the chosen metro
        let mut regions: Vec<Value> = Vec::new();
        for r in metros.iter().filter_map(|m| m.get("sellerRegions")?.as_object()).flat_map(|m| m.keys()) {
            if !regions.iter().any(|x| x == r.as_str()) {
                regions.push(json!(r));
            }
        }
        if !regions.is_empty() {
            out.insert("seller_regions".into(), Value::Array(regions));
        }
    }
    let key = p.pointer("/accessPointTypeConfigs/0/authenticationKey");
    if key.and_then(|k| k.get("required")) == Some(&json!(true)) {
        let label = key.and_then(|k| k.get("label")).cloned().unwrap_or(json!("required"));
        out.insert("authentication_key".into(), label);
    }
    Value::Object(out)
}

/// One end of a connection in a few words: "DC-PRI-01 VLAN 100", "AWS Direct Connect in DC",
/// "network <uuid>". Names where Fabric gives them, uuids otherwise; get the connection for the rest.
pub(super) fn side_summary(side: &Value) -> Value {
    if let Some(token) = side.pointer("/serviceToken/uuid").and_then(Value::as_str) {
        return json!(format!("service token {token}"));
    }
    let ap = &side["accessPoint"];
    let named = |key: &str| {
        let o = &ap[key];
        o.get("name").or_else(|| o.get("uuid")).and_then(Value::as_str).map(String::from)
    };
    let lp = &ap["linkProtocol"];
    let vlan = match (lp.get("vlanTag"), lp.get("vlanSTag"), lp.get("vlanCTag")) {
        (Some(t), _, _) => format!(" VLAN {t}"),
        (None, Some(s), Some(c)) => format!(" VLAN {s}.{c}"),
        (None, Some(s), None) => format!(" VLAN {s}"),
        _ => String::new(),
    };
    let metro =
        ap.pointer("/location/metroCode").and_then(Value::as_str).map(|m| format!(" in {m}")).unwrap_or_default();
    let kind = ap.get("type").and_then(Value::as_str).unwrap_or("?");
    let text = match kind {
        "COLO" => named("port").map(|p| format!("{p}{vlan}")),
        "SP" => named("profile").map(|p| format!("{p}{metro}")),
        "NETWORK" => named("network").map(|n| format!("network {n}")),
        "CLOUD_ROUTER" => named("router").map(|r| format!("router {r}")),
        "VD" => named("virtualDevice").map(|d| format!("device {d}")),
        _ => None,
    };
    json!(text.unwrap_or_else(|| format!("{kind}{metro}")))
}

/// A metro a profile is offered in: the largest connection there and its seller regions.
pub(super) fn compact_service_metro(m: &Value) -> Value {
    let mut out = pick(m, &[("code", "/code"), ("name", "/name"), ("vc_bandwidth_max_mbps", "/vcBandwidthMax")]);
    if let Some(regions) = m.get("sellerRegions").and_then(Value::as_object).filter(|r| !r.is_empty()) {
        out.insert("seller_regions".into(), regions.keys().map(|k| json!(k)).collect());
    }
    Value::Object(out)
}

pub(super) fn compact_connection(c: &Value) -> Value {
    let mut out = pick(
        c,
        &[
            ("uuid", "/uuid"),
            ("name", "/name"),
            ("type", "/type"),
            ("state", "/state"),
            ("bandwidth_mbps", "/bandwidth"),
            ("equinix_status", "/operation/equinixStatus"),
            ("provider_status", "/operation/providerStatus"),
        ],
    );
    out.insert("a_side".into(), side_summary(&c["aSide"]));
    out.insert("z_side".into(), side_summary(&c["zSide"]));
    Value::Object(out)
}

pub(super) fn compact_network(n: &Value) -> Value {
    Value::Object(pick(
        n,
        &[
            ("uuid", "/uuid"),
            ("name", "/name"),
            ("type", "/type"),
            ("scope", "/scope"),
            ("state", "/state"),
            ("region", "/location/region"),
            ("equinix_status", "/operation/equinixStatus"),
            ("connections_count", "/connectionsCount"),
        ],
    ))
}

pub(super) fn compact_token(t: &Value) -> Value {
    let mut out = pick(
        t,
        &[
            ("uuid", "/uuid"),
            ("name", "/name"),
            ("type", "/type"),
            ("state", "/state"),
            ("expiration", "/expirationDateTime"),
            ("connection_type", "/connection/type"),
            ("bandwidth_limit_mbps", "/connection/bandwidthLimit"),
        ],
    );
    // flat columns: tokens on one port share its uuid, which a page then gives once under `same`
    for (prefix, side) in [("a_side", "aSide"), ("z_side", "zSide")] {
        if let Some(sel) = t.pointer(&format!("/connection/{side}/accessPointSelectors/0")) {
            for (key, pointer) in [
                ("type", "/type"),
                ("port_uuid", "/port/uuid"),
                ("vlan_tag", "/linkProtocol/vlanTag"),
                ("vlan_s_tag", "/linkProtocol/vlanSTag"),
                ("virtual_device_uuid", "/virtualDevice/uuid"),
                ("network_uuid", "/network/uuid"),
            ] {
                if let Some(v) = sel.pointer(pointer).filter(|v| !v.is_null()) {
                    out.insert(format!("{prefix}_{key}"), v.clone());
                }
            }
        }
    }
    Value::Object(out)
}

pub(super) fn compact_price(p: &Value) -> Value {
    let mut out = pick(
        p,
        &[
            ("product_code", "/code"),
            ("currency", "/currency"),
            ("term_length_months", "/termLength"),
            ("connection_type", "/connection/type"),
            ("bandwidth_mbps", "/connection/bandwidth"),
        ],
    );
    out.insert("monthly_recurring".into(), json!(charge_total(p, "MONTHLY_RECURRING")));
    out.insert("non_recurring".into(), json!(charge_total(p, "NON_RECURRING")));
    Value::Object(out)
}

/// One object, as Fabric answers it (a single object is affordable whole).
pub(super) fn one(answer: Value, key: &str) -> Value {
    let mut out = Map::new();
    out.insert(key.into(), answer);
    Value::Object(out)
}

/// Copies the fields at JSON pointers into a flat object, skipping absent ones.
pub(super) fn pick(v: &Value, fields: &[(&str, &str)]) -> Map<String, Value> {
    let mut out = Map::new();
    for (key, pointer) in fields {
        if let Some(x) = v.pointer(pointer).filter(|x| !x.is_null()) {
            out.insert((*key).to_string(), x.clone());
        }
    }
    out
}
