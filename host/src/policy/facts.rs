//! The `Request` attributes of the policy schema, derived from a create body as the exact-bytes
//! reader gives it (no duplicate key, only plain integers): what the policy judges is what the
//! bytes say, and what the form shows.

use equinix_broker_contract::ChangeType;
use std::collections::BTreeSet;

use serde_json::Value;

use crate::exact_json::Node;

/// What the policy sees of one create request (kept with an approval page's record, so the
/// person deciding there is judged on the same facts).
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Facts {
    pub bandwidth_mbps: Option<i64>,
    pub metros: BTreeSet<String>,
    pub access_point_types: BTreeSet<String>,
    pub connection_type: Option<String>,
    pub name: String,
    pub project_id: Option<String>,
    pub port_uuids: BTreeSet<String>,
    pub profile_uuids: BTreeSet<String>,
    pub router_uuids: BTreeSet<String>,
    pub network_uuids: BTreeSet<String>,
    pub virtual_device_uuids: BTreeSet<String>,
    pub notification_emails: BTreeSet<String>,
    pub network_scope: Option<String>,
    pub token_type: Option<String>,
    pub redundant: bool,
    pub request_sha256: String,
    /// An access point whose metro neither the body nor a lookup can tell (a virtual device, a
    /// service token's side, a profile without a location): it counts as metro [`UNKNOWN_METRO`].
    pub metro_unknown: bool,
    /// What the body holds where a bandwidth belongs but is not an integer: the policy could not
    /// judge it, so the host refuses the request.
    pub unreadable_bandwidth: Option<String>,
    /// The list price the host read from Fabric for the plan (none before the dry run, and for
    /// what Fabric gave no price): `price_known` and the price attributes of the schema.
    #[serde(default)]
    pub price: Option<crate::plan::Priced>,
}

/// The metro of an access point the host cannot place: `["DC"].containsAll(resource.metros)`
/// fails for it, as it should.
pub const UNKNOWN_METRO: &str = "UNKNOWN";

impl Facts {
    /// What the policy read of the request, in words, for a denial: a person can then see which
    /// of it to change (the request's hash and the uuids are left out; the form shows them).
    pub(crate) fn summary(&self, change_type: &str) -> String {
        let mut parts = vec![format!("a {change_type}")];
        if !self.name.is_empty() {
            parts.push(format!("named {:?}", self.name));
        }
        if let Some(mbps) = self.bandwidth_mbps {
            parts.push(format!("bandwidth {mbps} Mbps"));
        }
        if let Some(bandwidth) = &self.unreadable_bandwidth {
            parts.push(format!("a bandwidth that is not a number ({bandwidth})"));
        }
        let metros: Vec<&str> = self.metros.iter().map(String::as_str).collect();
        if !metros.is_empty() {
            parts.push(format!("metros {}", metros.join(", ")));
        }
        if self.metro_unknown {
            parts.push(format!("an access point whose metro is unknown (read as {UNKNOWN_METRO:?})"));
        }
        if !self.access_point_types.is_empty() {
            let types: Vec<&str> = self.access_point_types.iter().map(String::as_str).collect();
            parts.push(format!("access points {}", types.join(", ")));
        }
        for (what, value) in [
            ("type", &self.connection_type),
            ("scope", &self.network_scope),
            ("token type", &self.token_type),
            ("project", &self.project_id),
        ] {
            if let Some(v) = value {
                parts.push(format!("{what} {v}"));
            }
        }
        match self.price.as_ref().and_then(|p| Some((&p.currency, p.monthly_cents?))) {
            Some((currency, cents)) => {
                parts.push(format!("a list price of {currency} {}.{:02} a month", cents / 100, cents % 100))
            }
            None => parts.push("no known price".into()),
        }
        if self.redundant {
            parts.push("redundant".into());
        }
        parts.join(", ")
    }

    /// The facts of a create of `change_type` with `body` (see [`crate::exact_json::parse`]).
    pub fn of(change_type: ChangeType, body: &Node, request_sha256: &str) -> Facts {
        let mut f = Facts { request_sha256: request_sha256.to_string(), ..Facts::default() };
        let text = |v: &Node| v.as_str().map(str::to_string);
        f.name = text(body.get("name")).unwrap_or_default();
        f.project_id = text(body.get("project").get("projectId"));
        match change_type {
            ChangeType::ServiceTokenCreate => {
                f.token_type = text(body.get("type"));
                // `connection` in the v4 create request; `serviceTokenConnections` in older bodies
                let mut connections: Vec<&Node> = vec![body.get("connection")];
                connections.extend(body.get("serviceTokenConnections").items());
                // the limit, and every bandwidth the holder may pick, count
                let mut limits: Vec<&Node> = Vec::new();
                for c in &connections {
                    limits.push(c.get("bandwidthLimit"));
                    limits.extend(c.get("supportedBandwidths").items());
                }
                f.bandwidth_mbps = f.bandwidths(limits);
                f.connection_type = connections.iter().find_map(|c| text(c.get("type")));
            }
            ChangeType::NetworkCreate => {
                f.connection_type = text(body.get("type"));
                f.network_scope = text(body.get("scope"));
            }
            ChangeType::ConnectionCreate => {
                f.connection_type = text(body.get("type"));
                f.bandwidth_mbps = f.bandwidths([body.get("bandwidth")]);
                f.redundant = !body.get("redundancy").get("priority").is_null();
            }
        }
        for n in body.get("notifications").items() {
            f.notification_emails.extend(n.get("emails").items().iter().filter_map(text));
        }
        f.walk(body, None);
        f
    }

    /// The facts of a body written as a `json!` value, read from its bytes as the host reads it
    /// (request hash `ab`).
    #[cfg(test)]
    pub(crate) fn of_json(change_type: &str, body: &Value) -> Facts {
        let text = body.to_string();
        let change_type = ChangeType::parse(change_type).expect("a change type of the contract");
        Facts::of(change_type, &crate::exact_json::parse(&text).expect("a body the form can show"), "ab")
    }

    /// Every `metroCode` anywhere in `v`: what Fabric's answer (any JSON, not a body the form
    /// shows) says a request touches.
    pub(crate) fn metros_named(v: &Value) -> BTreeSet<String> {
        fn collect(v: &Value, out: &mut BTreeSet<String>) {
            match v {
                Value::Object(m) => m.iter().for_each(|(k, v)| {
                    if k == "metroCode"
                        && let Some(code) = v.as_str()
                    {
                        out.insert(code.to_string());
                    }
                    collect(v, out)
                }),
                Value::Array(items) => items.iter().for_each(|v| collect(v, out)),
                _ => {}
            }
        }
        let mut metros = BTreeSet::new();
        collect(v, &mut metros);
        metros
    }

    /// The largest of `values` that are present (absent: none), noting one that is not an integer.
    fn bandwidths<'a: 'b, 'b>(&mut self, values: impl IntoIterator<Item = &'b Node<'a>>) -> Option<i64> {
        let mut largest = None;
        for v in values.into_iter().filter(|v| !v.is_null()) {
            match v.as_i64() {
                Some(n) => largest = largest.max(Some(n)),
                None => self.unreadable_bandwidth = Some(v.shown()),
            }
        }
        largest
    }

    /// Whether an access point (or a token's selector) says, or lets the host learn, its metro.
    fn placed(ap: &Node) -> bool {
        let has = |k: &str| ap.get(k).get("uuid").as_str().is_some();
        ap.get("location").get("metroCode").as_str().is_some()
            || has("port")
            || has("router")
            // a network spans metros: it has none to place
            || has("network")
            || ap.get("type").as_str() == Some("NETWORK")
    }

    /// Collects metros, access point types and the uuids of what the body names, wherever they
    /// sit (a connection's sides, a token's selectors).
    fn walk(&mut self, v: &Node, key: Option<&str>) {
        match v {
            Node::Object(members) => {
                if matches!(key, Some("accessPoint" | "accessPointSelectors")) && !Self::placed(v) {
                    self.metro_unknown = true;
                }
                // a side reached through a service token: the token's port is not in the body
                if matches!(key, Some("aSide" | "zSide")) && v.has("serviceToken") {
                    self.metro_unknown = true;
                }
                if let Some(t) = v.get("type").as_str()
                    && matches!(key, Some("accessPoint" | "accessPointSelectors"))
                {
                    self.access_point_types.insert(t.to_string());
                }
                let uuid = v.get("uuid").as_str().map(str::to_string);
                let set = match key {
                    Some("port") => Some(&mut self.port_uuids),
                    Some("profile") => Some(&mut self.profile_uuids),
                    Some("router") => Some(&mut self.router_uuids),
                    Some("network") => Some(&mut self.network_uuids),
                    Some("virtualDevice") => Some(&mut self.virtual_device_uuids),
                    _ => None,
                };
                if let (Some(set), Some(uuid)) = (set, uuid) {
                    set.insert(uuid);
                }
                for m in members {
                    if m.key == "metroCode"
                        && let Some(code) = m.value.as_str()
                    {
                        self.metros.insert(code.to_string());
                    }
                    self.walk(&m.value, Some(m.key.as_ref()));
                }
            }
            // an array's items stand where the array does (`accessPointSelectors: [{type}]`)
            Node::Array(items) => items.iter().for_each(|v| self.walk(v, key)),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_connection_body_gives_every_attribute() {
        let body = json!({
            "type": "EVPL_VC", "name": "dc-to-aws", "bandwidth": 500,
            "project": {"projectId": "p-1"}, "redundancy": {"priority": "PRIMARY"},
            "aSide": {"accessPoint": {"type": "COLO", "port": {"uuid": "port-1"}, "linkProtocol": {"type": "DOT1Q", "vlanTag": 10}}},
            "zSide": {"accessPoint": {"type": "SP", "profile": {"uuid": "prof-1"}, "location": {"metroCode": "SV"}}},
            "notifications": [{"type": "ALL", "emails": ["a@x.test", "b@x.test"]}]
        });
        let f = Facts::of_json("connection_create", &body);
        assert_eq!(f.bandwidth_mbps, Some(500));
        assert_eq!(f.metros, BTreeSet::from(["SV".to_string()]));
        assert_eq!(f.access_point_types, BTreeSet::from(["COLO".to_string(), "SP".to_string()]));
        assert_eq!(f.port_uuids, BTreeSet::from(["port-1".to_string()]));
        assert_eq!(f.profile_uuids, BTreeSet::from(["prof-1".to_string()]));
        assert_eq!(f.notification_emails.len(), 2);
        assert_eq!(
            (f.connection_type.as_deref(), f.project_id.as_deref(), f.redundant),
            (Some("EVPL_VC"), Some("p-1"), true)
        );
        assert!(!f.metro_unknown && f.unreadable_bandwidth.is_none());
    }

    /// Fabric decodes escapes in keys and strings, so the policy must see them decoded too, while
    /// the form shows them as sent.
    #[test]
    fn escaped_keys_and_values_count_as_what_they_decode_to() {
        let body = r#"{"type":"EVPL_VC","b\u0061ndwidth":5000,"name":"\u0070rod",
            "aSide":{"accessPoint":{"type":"COLO","location":{"metr\u006fCode":"L\u0044"}}},
            "zSide":{"acc\u0065ssPoint":{"type":"VD","virtualDevice":{"uuid":"vd-1"}}}}"#;
        let f = Facts::of(ChangeType::ConnectionCreate, &crate::exact_json::parse(body).unwrap(), "ab");
        assert_eq!((f.bandwidth_mbps, f.name.as_str()), (Some(5000), "prod"));
        assert_eq!(f.metros, BTreeSet::from(["LD".to_string()]));
        assert!(f.metro_unknown, "the escaped `accessPoint` is an access point the host cannot place");
        assert_eq!(f.virtual_device_uuids, BTreeSet::from(["vd-1".to_string()]));
    }

    #[test]
    fn what_the_policy_cannot_judge_is_marked() {
        let vd = json!({"type": "EVPL_VC", "bandwidth": 50,
            "aSide": {"accessPoint": {"type": "VD", "virtualDevice": {"uuid": "vd-1"}}},
            "zSide": {"accessPoint": {"type": "COLO", "port": {"uuid": "port-1"}}}});
        assert!(Facts::of_json("connection_create", &vd).metro_unknown);
        let token_side = json!({"type": "EVPL_VC", "bandwidth": 50, "aSide": {"accessPoint": {"type": "COLO", "port": {"uuid": "p"}}},
            "zSide": {"serviceToken": {"uuid": "tok-1"}}});
        assert!(Facts::of_json("connection_create", &token_side).metro_unknown);
        let text = json!({"type": "EVPL_VC", "bandwidth": "10000"});
        let f = Facts::of_json("connection_create", &text);
        assert_eq!((f.bandwidth_mbps, f.unreadable_bandwidth.as_deref()), (None, Some("\"10000\"")));
        let custom = json!({"type": "VC_TOKEN", "connection": {"type": "EVPL_VC", "bandwidthLimit": 50, "supportedBandwidths": [50, 10000]}});
        assert_eq!(Facts::of_json("service_token_create", &custom).bandwidth_mbps, Some(10000));
    }

    #[test]
    fn a_token_counts_its_largest_limit_and_its_selectors() {
        let single = json!({"type": "VC_TOKEN", "connection": {"type": "EVPL_VC", "bandwidthLimit": 50,
            "aSide": {"accessPointSelectors": [{"type": "COLO", "port": {"uuid": "port-1"}}]}}});
        let f = Facts::of_json("service_token_create", &single);
        assert_eq!((f.bandwidth_mbps, f.connection_type.as_deref()), (Some(50), Some("EVPL_VC")));
        assert_eq!(f.port_uuids, BTreeSet::from(["port-1".to_string()]));
        let body = json!({"type": "VC_TOKEN", "serviceTokenConnections": [
            {"type": "EVPL_VC", "bandwidthLimit": 100, "aSide": {"accessPointSelectors": [{"type": "COLO", "port": {"uuid": "port-2"}}]}},
            {"type": "EVPL_VC", "bandwidthLimit": 2000, "aSide": {"accessPointSelectors": [{"type": "COLO", "port": {"uuid": "port-3"}}]}}]});
        let f = Facts::of_json("service_token_create", &body);
        assert_eq!(f.bandwidth_mbps, Some(2000));
        assert_eq!(f.token_type.as_deref(), Some("VC_TOKEN"));
        assert_eq!(f.access_point_types, BTreeSet::from(["COLO".to_string()]));
        assert_eq!(f.port_uuids.len(), 2);
        let network = json!({"type": "EVPLAN", "scope": "REGIONAL", "name": "n", "location": {"region": "AMER"}});
        let f = Facts::of_json("network_create", &network);
        assert_eq!((f.bandwidth_mbps, f.network_scope.as_deref()), (None, Some("REGIONAL")));
    }
}
