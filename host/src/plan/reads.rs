//! What the host reads of Fabric to resolve a create body's references, from the exact bytes
//! alone: each port (and the VLANs in use on it), service profile, network, Cloud Router and
//! service token the body names, each metro code, whether another resource already has the name,
//! and the price, with a filter built here from the bytes. Pure: [`super::resolve`] sends them.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use equinix_broker_contract::ChangeType;
use equinix_broker_contract::body::{MAX_METRO, MAX_UUID, access_points, eq, plain_id, price_filter};

use crate::fabric_client::{ApiRequest, Method};

/// At most this many reads per plan; what is past it is said to be not read.
pub(crate) const MAX_READS: usize = 16;

/// What each read came to: Fabric's JSON answer, or why there is none.
pub(crate) type Answers = std::collections::BTreeMap<Key, Result<Value, NoAnswer>>;

/// Why a read has no answer to resolve with, in words that carry no secret (they are lines of the
/// plan a person reads).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NoAnswer {
    #[error("Fabric did not answer within {0} s")]
    NotWithin(u64),
    /// The host's allow-list or grants refused to send it: their words, shown as data.
    #[error("the host did not send it: {0}")]
    NotSent(String),
    #[error("the call was cancelled")]
    Cancelled,
    #[error("Fabric could not be reached")]
    Unreachable,
    #[error("Fabric did not answer in time")]
    TimedOut,
    #[error("the connection to Fabric broke")]
    Broken,
    #[error("Fabric's answer has {bytes} bytes, over the {limit} read")]
    TooLarge { bytes: usize, limit: usize },
    #[error("Fabric's answer is not JSON")]
    NotJson,
    /// An HTTP error, with `: CODE message` of Fabric's first error when it gave one.
    #[error("Fabric answered HTTP {status}{first_error}")]
    Status { status: u16, first_error: String },
}

/// One thing the plan reads.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Key {
    Port(String),
    /// The link protocols (VLANs) in use on a port.
    PortVlans(String),
    Profile(String),
    Network(String),
    Router(String),
    Token(String),
    Metro(String),
    /// Resources of this kind that already have the body's name.
    SameName,
    Price,
}

impl Key {
    /// The request that reads it, for `change_type`'s `body`.
    pub(crate) fn request(&self, change_type: ChangeType, body: &Value) -> Option<ApiRequest> {
        let get = |path: String| ApiRequest { method: Method::Get, path, query: vec![], body: None };
        Some(match self {
            Key::Port(u) => get(format!("/fabric/v4/ports/{u}")),
            Key::PortVlans(u) => ApiRequest {
                method: Method::Get,
                path: format!("/fabric/v4/ports/{u}/linkProtocols"),
                query: vec![("offset".into(), "0".into()), ("limit".into(), "100".into())],
                body: None,
            },
            Key::Profile(u) => get(format!("/fabric/v4/serviceProfiles/{u}")),
            Key::Network(u) => get(format!("/fabric/v4/networks/{u}")),
            Key::Router(u) => get(format!("/fabric/v4/routers/{u}")),
            Key::Token(u) => get(format!("/fabric/v4/serviceTokens/{u}")),
            Key::Metro(m) => get(format!("/fabric/v4/metros/{m}")),
            Key::SameName => {
                // a service token has no name another one could already hold
                match change_type {
                    ChangeType::ConnectionCreate | ChangeType::NetworkCreate => {}
                    ChangeType::ServiceTokenCreate => return None,
                }
                let name = body["name"].as_str()?;
                let filter = json!({"filter": {"and": [eq("/name", name)]}, "pagination": {"offset": 0, "limit": 20}});
                post(change_type.reads()[0].path.to_string(), &filter)
            }
            Key::Price => post("/fabric/v4/prices/search".into(), &price_filter(body).ok()?),
        })
    }

    /// The id the read asks about, which Fabric's answer must name as its own (`uuid`, or a
    /// metro's `code`): the member and the value.
    pub(crate) fn asked_id(&self) -> Option<(&'static str, &str)> {
        match self {
            Key::Port(u) | Key::Profile(u) | Key::Network(u) | Key::Router(u) | Key::Token(u) => Some(("uuid", u)),
            Key::Metro(code) => Some(("code", code)),
            Key::PortVlans(_) | Key::SameName | Key::Price => None,
        }
    }

    /// How a line names the read it came from.
    pub(crate) fn source(&self, change_type: ChangeType, body: &Value) -> String {
        match self.request(change_type, body) {
            Some(r) => format!("Fabric: {} {}", r.method, r.path),
            None => "not read".into(),
        }
    }
}

fn post(path: String, body: &Value) -> ApiRequest {
    ApiRequest { method: Method::Post, path, query: vec![], body: Some(body.to_string()) }
}

/// The reads a first round's answers call for: the metro of each port read whose answer does not
/// name it (`location.metroName`) and that was not read already, so each port's metro is named
/// as Fabric names it. At most `room` of them.
pub(crate) fn follow_ups(answers: &Answers, room: usize) -> Vec<Key> {
    let mut keys: Vec<Key> = Vec::new();
    for (key, answer) in answers {
        let (Key::Port(_), Ok(port)) = (key, answer) else { continue };
        if port["location"]["metroName"].is_string() {
            continue;
        }
        let Some(code) = port["location"]["metroCode"].as_str().filter(|m| plain_id(m, MAX_METRO)) else { continue };
        let metro = Key::Metro(code.to_string());
        if !answers.contains_key(&metro) && !keys.contains(&metro) {
            keys.push(metro);
        }
    }
    keys.truncate(room);
    keys
}

/// Everything to read for `change_type`'s `body`, in a fixed order, at most [`MAX_READS`]; and
/// how many were left unread.
pub(crate) fn of(change_type: ChangeType, body: &Value) -> (Vec<Key>, usize) {
    let mut keys: Vec<Key> = Vec::new();
    let mut seen = BTreeSet::new();
    let mut want = |key: Key| {
        if seen.insert(key.clone()) {
            keys.push(key);
        }
    };
    for (_, ap) in access_points(change_type, body) {
        let id = |pointer: &str| {
            ap.pointer(pointer).and_then(Value::as_str).filter(|u| plain_id(u, MAX_UUID)).map(String::from)
        };
        if let Some(u) = id("/port/uuid") {
            want(Key::Port(u.clone()));
            if ap.get("linkProtocol").is_some_and(Value::is_object) {
                want(Key::PortVlans(u));
            }
        }
        for (pointer, key) in [
            ("/profile/uuid", Key::Profile as fn(String) -> Key),
            ("/network/uuid", Key::Network),
            ("/router/uuid", Key::Router),
        ] {
            if let Some(u) = id(pointer) {
                want(key(u));
            }
        }
        if let Some(m) = ap.pointer("/location/metroCode").and_then(Value::as_str).filter(|m| plain_id(m, MAX_METRO)) {
            want(Key::Metro(m.to_string()));
        }
    }
    // what else this change type's body references, beyond its access points and its name
    let (service_tokens, own_location, price) = match change_type {
        ChangeType::ConnectionCreate => (true, false, true),
        ChangeType::NetworkCreate => (false, true, false),
        ChangeType::ServiceTokenCreate => (false, false, false),
    };
    if service_tokens {
        for side in ["aSide", "zSide"] {
            if let Some(u) =
                body[side].pointer("/serviceToken/uuid").and_then(Value::as_str).filter(|u| plain_id(u, MAX_UUID))
            {
                want(Key::Token(u.to_string()));
            }
        }
    }
    if own_location
        && let Some(m) = body.pointer("/location/metroCode").and_then(Value::as_str).filter(|m| plain_id(m, MAX_METRO))
    {
        want(Key::Metro(m.to_string()));
    }
    if body["name"].is_string() && Key::SameName.request(change_type, body).is_some() {
        want(Key::SameName);
    }
    if price && price_filter(body).is_ok() {
        want(Key::Price);
    }
    let over = keys.len().saturating_sub(MAX_READS);
    keys.truncate(MAX_READS);
    (keys, over)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn connection() -> Value {
        json!({
            "type": "EVPL_VC", "name": "to-aws", "bandwidth": 500,
            "aSide": {"accessPoint": {"type": "COLO", "port": {"uuid": "c4d9350e-783c-83cd-1ce0-306a5c00a600"},
                                      "linkProtocol": {"type": "DOT1Q", "vlanTag": 300}}},
            "zSide": {"accessPoint": {"type": "SP", "profile": {"uuid": "9f4b3a7e-1c2d-4e5f-8a9b-0c1d2e3f4a01"},
                                      "location": {"metroCode": "SV"}}},
            "project": {"projectId": "ac4d"}
        })
    }

    #[test]
    fn a_connection_reads_its_port_vlans_profile_metro_name_and_price() {
        let (keys, over) = of(ChangeType::ConnectionCreate, &connection());
        assert_eq!(over, 0);
        assert_eq!(
            keys,
            vec![
                Key::Port("c4d9350e-783c-83cd-1ce0-306a5c00a600".into()),
                Key::PortVlans("c4d9350e-783c-83cd-1ce0-306a5c00a600".into()),
                Key::Profile("9f4b3a7e-1c2d-4e5f-8a9b-0c1d2e3f4a01".into()),
                Key::Metro("SV".into()),
                Key::SameName,
                Key::Price,
            ]
        );
        let price = Key::Price.request(ChangeType::ConnectionCreate, &connection()).unwrap();
        assert_eq!(price.path, "/fabric/v4/prices/search");
        let filter: Value = serde_json::from_str(price.body.as_deref().unwrap()).unwrap();
        assert!(
            filter.to_string().contains("\"500\"")
                && filter.to_string().contains("/connection/zSide/accessPoint/profile/uuid")
        );
    }

    #[test]
    fn ids_that_are_no_plain_ids_are_never_put_in_a_path_and_reads_are_bounded() {
        let mut body = connection();
        body["aSide"]["accessPoint"]["port"]["uuid"] = json!("../connections/x");
        body["zSide"]["accessPoint"]["location"]["metroCode"] = json!("SV?x=1");
        let (keys, _) = of(ChangeType::ConnectionCreate, &body);
        assert!(!keys.iter().any(|k| matches!(k, Key::Port(_) | Key::Metro(_))), "{keys:?}");
        let selectors: Vec<Value> =
            (0..40).map(|i| json!({"type": "COLO", "port": {"uuid": format!("p-{i}")}})).collect();
        let token = json!({"type": "VC_TOKEN", "connection": {"aSide": {"accessPointSelectors": selectors}}});
        let (keys, over) = of(ChangeType::ServiceTokenCreate, &token);
        assert_eq!((keys.len(), over), (MAX_READS, 40 - MAX_READS));
    }

    #[test]
    fn an_unpriced_type_has_no_price_read_and_says_why() {
        let mut body = connection();
        body["type"] = json!("IPWAN_SOMETHING");
        assert!(price_filter(&body).unwrap_err().describe(|s| s.into()).contains("no prices for IPWAN_SOMETHING"));
        assert!(!of(ChangeType::ConnectionCreate, &body).0.contains(&Key::Price));
    }
}
