//! The three change types and their specs: one grammar per create request of the Fabric v4
//! contract (4.31), which both checks a spec strictly (unknown fields are errors with their JSON
//! path) and describes it as JSON Schema; the checked spec, normalized, is the wire body.
//!
//! Canonical form: object keys sorted, no insignificant whitespace, integers written without
//! fraction or exponent (the one number normalisation: `1e3` and `1000.0` become `1000`), strings
//! exactly as given. Absent optional fields are omitted, never written as `null`.

use alloc::format;
use alloc::string::String;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use crate::fabric_enums::*;
use crate::grammar::{self, DATE_TIME, EMAIL, Kind, METRO, Object, Problems, TEXT, UUID, child, int, opt, req, text};
use crate::tool_error::ToolError;

/// What the broker can carry: three creates, and no update or delete.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChangeType {
    ConnectionCreate,
    NetworkCreate,
    ServiceTokenCreate,
}

impl ChangeType {
    pub const NAMES: &'static [&'static str] = &["connection_create", "network_create", "service_token_create"];
    pub const ALL: [ChangeType; 3] =
        [ChangeType::ConnectionCreate, ChangeType::NetworkCreate, ChangeType::ServiceTokenCreate];

    pub fn parse(s: &str) -> Option<ChangeType> {
        match s {
            "connection_create" => Some(ChangeType::ConnectionCreate),
            "network_create" => Some(ChangeType::NetworkCreate),
            "service_token_create" => Some(ChangeType::ServiceTokenCreate),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            ChangeType::ConnectionCreate => "connection_create",
            ChangeType::NetworkCreate => "network_create",
            ChangeType::ServiceTokenCreate => "service_token_create",
        }
    }

    /// The create endpoint the compiled body is POSTed to.
    pub fn path(self) -> &'static str {
        match self {
            ChangeType::ConnectionCreate => "/fabric/v4/connections",
            ChangeType::NetworkCreate => "/fabric/v4/networks",
            ChangeType::ServiceTokenCreate => "/fabric/v4/serviceTokens",
        }
    }

    /// The read tools that find what a create of this type made.
    pub fn lookup_tools(self) -> (&'static str, &'static str) {
        match self {
            ChangeType::ConnectionCreate => ("fabric_search_connections", "fabric_get_connection"),
            ChangeType::NetworkCreate => ("fabric_search_networks", "fabric_get_network"),
            ChangeType::ServiceTokenCreate => ("fabric_search_service_tokens", "fabric_get_service_token"),
        }
    }

    /// What a person reads: "Fabric connection".
    pub fn noun(self) -> &'static str {
        match self {
            ChangeType::ConnectionCreate => "Fabric connection",
            ChangeType::NetworkCreate => "Fabric network",
            ChangeType::ServiceTokenCreate => "Fabric service token",
        }
    }
}

const NAME_MAX: usize = 128;

/// Fabric create bodies are a few hundred bytes; free-text fields carry no length of their own
/// in the grammar (Fabric judges them at the dry run), so the whole spec is bounded instead.
pub const MAX_SPEC_BYTES: usize = 16 << 10;

// ---- the grammars (Fabric v4 4.31 request schemas) ----

static UUID_REF: Object = Object { name: "UuidRef", fields: &[req("uuid", UUID, "")], rule: None, rule_doc: "" };
const REF: Kind = Kind::Obj(&UUID_REF);

static PROJECT: Object = Object { name: "Project", fields: &[req("projectId", UUID, "")], rule: None, rule_doc: "" };

static NOTIFICATION: Object = Object {
    name: "Notification",
    fields: &[
        req("type", Kind::Enum(NOTIFICATION_TYPES), "ALL for everything"),
        req("emails", Kind::Array { item: &EMAIL, min: 1, max: 20 }, ""),
        opt("sendInterval", TEXT, "BANDWIDTH_ALERT: how often"),
        opt("registeredUsers", Kind::Array { item: &TEXT, min: 1, max: 20 }, "Portal users"),
    ],
    rule: None,
    rule_doc: "",
};
const NOTIFICATIONS: Kind = Kind::Array { item: &Kind::Obj(&NOTIFICATION), min: 1, max: 10 };

const VLAN: Kind = int(2, 4092);

static LINK_PROTOCOL: Object = Object {
    name: "LinkProtocol",
    fields: &[
        req("type", Kind::Enum(LINK_PROTOCOLS), ""),
        opt("vlanTag", VLAN, "DOT1Q: a free VLAN (fabric_list_port_vlans)"),
        opt("vlanSTag", VLAN, ""),
        opt("vlanCTag", VLAN, ""),
    ],
    rule: Some(link_rule),
    rule_doc: "DOT1Q takes vlanTag only; QINQ takes vlanSTag, optionally vlanCTag (outer, inner); UNTAGGED takes no tag.",
};

fn link_rule(m: &Map<String, Value>, path: &str, p: &mut Problems) {
    let has = |k: &str| m.contains_key(k);
    let ok = match m.get("type").and_then(Value::as_str) {
        Some("DOT1Q") => has("vlanTag") && !has("vlanSTag") && !has("vlanCTag"),
        Some("QINQ") => !has("vlanTag") && has("vlanSTag"),
        Some("UNTAGGED") => !has("vlanTag") && !has("vlanSTag") && !has("vlanCTag"),
        _ => true,
    };
    if !ok {
        p.push(path, "DOT1Q takes vlanTag only, QINQ takes vlanSTag (and optionally vlanCTag), UNTAGGED takes no tag");
    }
}

static PROFILE: Object = Object {
    name: "Profile",
    fields: &[opt("type", Kind::Enum(PROFILE_TYPES), ""), req("uuid", UUID, "fabric_search_service_profiles")],
    rule: None,
    rule_doc: "",
};

static LOCATION: Object =
    Object { name: "Location", fields: &[req("metroCode", METRO, "fabric_list_metros")], rule: None, rule_doc: "" };

static VIRTUAL_DEVICE: Object = Object {
    name: "VirtualDevice",
    fields: &[opt("type", Kind::Enum(VIRTUAL_DEVICE_TYPES), ""), req("uuid", UUID, ""), opt("name", TEXT, "")],
    rule: None,
    rule_doc: "",
};

static INTERFACE: Object = Object {
    name: "Interface",
    fields: &[
        opt("type", Kind::Enum(INTERFACE_TYPES), ""),
        opt("id", int(0, 1 << 31), "Interface number"),
        opt("uuid", UUID, ""),
    ],
    rule: Some(id_or_uuid),
    rule_doc: "Give id or uuid.",
};

fn id_or_uuid(m: &Map<String, Value>, path: &str, p: &mut Problems) {
    if !m.contains_key("id") && !m.contains_key("uuid") {
        p.push(path, "needs id or uuid");
    }
}

static PRODUCT_OFFERING: Object =
    Object { name: "ProductOffering", fields: &[opt("id", TEXT, ""), opt("name", TEXT, "")], rule: None, rule_doc: "" };

static ADDRESS: Object = Object {
    name: "Address",
    fields: &[
        opt("id", TEXT, ""),
        opt("streetNr", TEXT, ""),
        opt("streetName", TEXT, ""),
        opt("city", TEXT, ""),
        opt("stateOrProvince", TEXT, ""),
        opt("postCode", TEXT, ""),
        opt("country", TEXT, ""),
    ],
    rule: None,
    rule_doc: "",
};

static ACCESS_POINT: Object = Object {
    name: "AccessPoint",
    fields: &[
        req(
            "type",
            Kind::Enum(ACCESS_POINT_TYPES),
            "COLO: your port; SP: a provider's service profile; VD: a virtual device",
        ),
        opt("port", REF, "fabric_search_ports"),
        opt("linkProtocol", Kind::Obj(&LINK_PROTOCOL), ""),
        opt("profile", Kind::Obj(&PROFILE), ""),
        opt("location", Kind::Obj(&LOCATION), "SP: the provider's metro"),
        opt("virtualDevice", Kind::Obj(&VIRTUAL_DEVICE), ""),
        opt("interface", Kind::Obj(&INTERFACE), ""),
        opt("network", REF, ""),
        opt("router", REF, ""),
        opt("sellerRegion", TEXT, "SP: e.g. us-east-1"),
        opt("authenticationKey", TEXT, "SP: e.g. the AWS account id"),
        opt("peeringType", Kind::Enum(PEERING_TYPES), "SP: Azure"),
        opt("role", Kind::Enum(ROLES), "Tree networks"),
        opt("providerConnectionId", TEXT, ""),
        opt("productOffering", Kind::Obj(&PRODUCT_OFFERING), "LMaaS"),
        opt("bandwidthCommit", int(0, 100_000), "LMaaS: Mbps"),
        opt("address", Kind::Obj(&ADDRESS), "LMaaS"),
    ],
    rule: Some(access_point_rule),
    rule_doc: "By type: COLO needs port (and linkProtocol on a tagged port); SP needs profile; VD needs virtualDevice; NETWORK \
needs network; CLOUD_ROUTER needs router.",
};

/// What each access point type cannot do without (Fabric refuses it at the dry run otherwise).
const NEEDS: &[(&str, &[&str])] = &[
    ("COLO", &["port"]),
    ("SP", &["profile"]),
    ("VD", &["virtualDevice"]),
    ("NETWORK", &["network"]),
    ("CLOUD_ROUTER", &["router"]),
];

fn access_point_rule(m: &Map<String, Value>, path: &str, p: &mut Problems) {
    needs_by_type(m, path, p, NEEDS);
}

fn needs_by_type(m: &Map<String, Value>, path: &str, p: &mut Problems, needs: &[(&str, &[&str])]) {
    let kind = m.get("type").and_then(Value::as_str).unwrap_or_default();
    for (_, fields) in needs.iter().filter(|(t, _)| *t == kind) {
        for f in fields.iter().filter(|f| !m.contains_key(**f)) {
            p.push(&child(path, f), format!("is required for a {kind} access point"));
        }
    }
}

static ADDITIONAL_INFO: Object = Object {
    name: "AdditionalInfo",
    fields: &[
        req("key", TEXT, ""),
        req("value", Kind::Str { min: 0, max: usize::MAX, text: grammar::Text::Any }, "A string, even for numbers"),
    ],
    rule: None,
    rule_doc: "",
};
const ADDITIONAL_INFOS: Kind = Kind::Array { item: &Kind::Obj(&ADDITIONAL_INFO), min: 1, max: 50 };

static SIDE: Object = Object {
    name: "Side",
    fields: &[
        opt("accessPoint", Kind::Obj(&ACCESS_POINT), ""),
        opt("serviceToken", REF, "Instead of accessPoint"),
        opt("additionalInfo", ADDITIONAL_INFOS, "Some providers need these"),
    ],
    rule: Some(side_rule),
    rule_doc: "Needs an accessPoint or a serviceToken.",
};

fn side_rule(m: &Map<String, Value>, path: &str, p: &mut Problems) {
    if !m.contains_key("accessPoint") && !m.contains_key("serviceToken") {
        p.push(path, "needs an accessPoint or a serviceToken");
    }
}

static ORDER: Object = Object {
    name: "Order",
    fields: &[
        opt("purchaseOrderNumber", TEXT, ""),
        opt("customerReferenceNumber", TEXT, ""),
        opt("billingTier", TEXT, ""),
        opt("orderNumber", TEXT, ""),
        opt("termLength", Kind::Int { min: 1, max: 36, only: Some(&[1, 12, 24, 36]) }, "Months"),
        opt("contractedBandwidth", int(0, 100_000), "Mbps"),
    ],
    rule: None,
    rule_doc: "",
};

static REDUNDANCY: Object = Object {
    name: "Redundancy",
    fields: &[opt("group", UUID, "The primary's group"), opt("priority", Kind::Enum(PRIORITIES), "")],
    rule: None,
    rule_doc: "",
};

static MARKETPLACE_SUBSCRIPTION: Object = Object {
    name: "MarketplaceSubscription",
    fields: &[req("type", Kind::Enum(MARKETPLACES), ""), req("uuid", UUID, "")],
    rule: None,
    rule_doc: "",
};

static END_CUSTOMER: Object = Object {
    name: "EndCustomer",
    fields: &[opt("isDisclosed", Kind::Bool, ""), opt("name", TEXT, ""), opt("mdmId", TEXT, "")],
    rule: None,
    rule_doc: "",
};

/// `ConnectionPostRequest`.
pub static CONNECTION: Object = Object {
    name: "Connection",
    fields: &[
        req("type", Kind::Enum(CONNECTION_TYPES), "EVPL_VC: port or device to a provider or port"),
        req("name", text(NAME_MAX), ""),
        req("bandwidth", int(0, 100_000), "Mbps"),
        req("aSide", Kind::Obj(&SIDE), ""),
        req("zSide", Kind::Obj(&SIDE), ""),
        req("notifications", NOTIFICATIONS, ""),
        opt("project", Kind::Obj(&PROJECT), ""),
        opt("order", Kind::Obj(&ORDER), ""),
        opt("redundancy", Kind::Obj(&REDUNDANCY), ""),
        opt("geoScope", Kind::Enum(GEO_SCOPES), ""),
        opt("additionalInfo", ADDITIONAL_INFOS, "Some providers need these"),
        opt("marketplaceSubscription", Kind::Obj(&MARKETPLACE_SUBSCRIPTION), ""),
        opt("endCustomer", Kind::Obj(&END_CUSTOMER), ""),
    ],
    rule: None,
    rule_doc: "",
};

static NETWORK_LOCATION: Object = Object {
    name: "NetworkLocation",
    fields: &[opt("region", Kind::Enum(REGIONS), ""), opt("metroCode", METRO, "")],
    rule: None,
    rule_doc: "",
};

/// `NetworkPostRequest`.
pub static NETWORK: Object = Object {
    name: "Network",
    fields: &[
        req("type", Kind::Enum(NETWORK_TYPES), ""),
        req("name", text(NAME_MAX), ""),
        req("scope", Kind::Enum(NETWORK_SCOPES), ""),
        opt("location", Kind::Obj(&NETWORK_LOCATION), ""),
        opt("project", Kind::Obj(&PROJECT), ""),
        req("notifications", NOTIFICATIONS, ""),
    ],
    rule: Some(network_rule),
    rule_doc: "A REGIONAL network needs location.region.",
};

fn network_rule(m: &Map<String, Value>, path: &str, p: &mut Problems) {
    let regional = m.get("scope").and_then(Value::as_str) == Some("REGIONAL");
    if regional && m.get("location").and_then(|l| l.get("region")).is_none() {
        p.push(&child(path, "location"), "a REGIONAL network needs location.region (AMER, APAC or EMEA)");
    }
}

static SELECTOR_NETWORK: Object = Object {
    name: "SelectorNetwork",
    fields: &[
        req("uuid", UUID, ""),
        opt("type", Kind::Enum(NETWORK_TYPES), ""),
        opt("scope", Kind::Enum(NETWORK_SCOPES), ""),
        opt("name", text(NAME_MAX), ""),
    ],
    rule: None,
    rule_doc: "",
};

static SELECTOR_INTERFACE: Object = Object {
    name: "SelectorInterface",
    fields: &[
        opt("type", Kind::Enum(SELECTOR_INTERFACE_TYPES), ""),
        opt("id", int(0, 1 << 31), ""),
        opt("uuid", UUID, ""),
    ],
    rule: Some(id_or_uuid),
    rule_doc: "Give id or uuid.",
};

static SELECTOR: Object = Object {
    name: "Selector",
    fields: &[
        req("type", Kind::Enum(SELECTOR_TYPES), ""),
        opt("port", REF, "fabric_search_ports"),
        opt("linkProtocol", Kind::Obj(&LINK_PROTOCOL), ""),
        opt("network", Kind::Obj(&SELECTOR_NETWORK), ""),
        opt("virtualDevice", Kind::Obj(&VIRTUAL_DEVICE), ""),
        opt("interface", Kind::Obj(&SELECTOR_INTERFACE), ""),
        opt("hideAssetInfo", Kind::Bool, "Deprecated"),
    ],
    rule: Some(selector_rule),
    rule_doc: "By type: COLO needs port; VD needs virtualDevice; NETWORK needs network.",
};

fn selector_rule(m: &Map<String, Value>, path: &str, p: &mut Problems) {
    needs_by_type(m, path, p, &[("COLO", &["port"]), ("VD", &["virtualDevice"]), ("NETWORK", &["network"])]);
}

static TOKEN_SIDE: Object = Object {
    name: "TokenSide",
    fields: &[req("accessPointSelectors", Kind::Array { item: &Kind::Obj(&SELECTOR), min: 1, max: 10 }, "")],
    rule: None,
    rule_doc: "",
};

static TOKEN_CONNECTION: Object = Object {
    name: "TokenConnection",
    fields: &[
        req("type", Kind::Enum(TOKEN_CONNECTION_TYPES), ""),
        opt("bandwidthLimit", int(0, 100_000), "Mbps"),
        opt("supportedBandwidths", Kind::Array { item: &int(1, 100_000), min: 1, max: 20 }, "Mbps"),
        opt("allowRemoteConnection", Kind::Bool, ""),
        opt("allowCustomBandwidth", Kind::Bool, ""),
        opt("aSide", Kind::Obj(&TOKEN_SIDE), "An a-side token: you are the A end"),
        opt("zSide", Kind::Obj(&TOKEN_SIDE), "A z-side token: you are the Z end"),
    ],
    rule: Some(one_token_side),
    rule_doc: "Exactly one of aSide or zSide.",
};

fn one_token_side(m: &Map<String, Value>, path: &str, p: &mut Problems) {
    if m.contains_key("aSide") == m.contains_key("zSide") {
        p.push(path, "needs exactly one of aSide or zSide");
    }
}

static ACCOUNT: Object =
    Object { name: "Account", fields: &[req("accountNumber", int(1, i64::MAX), "")], rule: None, rule_doc: "" };

/// `ServiceToken` (the create request).
pub static SERVICE_TOKEN: Object = Object {
    name: "ServiceToken",
    fields: &[
        req("type", Kind::Enum(TOKEN_TYPES), ""),
        opt("name", text(NAME_MAX), ""),
        opt("description", TEXT, ""),
        req("expirationDateTime", DATE_TIME, ""),
        req("connection", Kind::Obj(&TOKEN_CONNECTION), ""),
        req("notifications", NOTIFICATIONS, ""),
        opt("project", Kind::Obj(&PROJECT), ""),
        opt("account", Kind::Obj(&ACCOUNT), ""),
    ],
    rule: None,
    rule_doc: "",
};

/// A checked spec of one change type; its normalized JSON is the wire body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Spec {
    pub change_type: ChangeType,
    pub body: Value,
}

impl ChangeType {
    /// The grammar of this create's request body.
    pub fn grammar(self) -> &'static Object {
        match self {
            ChangeType::ConnectionCreate => &CONNECTION,
            ChangeType::NetworkCreate => &NETWORK,
            ChangeType::ServiceTokenCreate => &SERVICE_TOKEN,
        }
    }
}

impl Spec {
    /// Checks `spec` for `change_type`; an error names every problem with its JSON path under
    /// `base` (e.g. `/spec`).
    pub fn parse(change_type: ChangeType, spec: &Value, base: &str) -> Result<Spec, ToolError> {
        let mut problems = Problems::default();
        let body = match grammar::check(&Kind::Obj(change_type.grammar()), spec, base, &mut problems) {
            Some(body) if problems.is_empty() => body,
            _ => return Err(grammar::to_error(problems)),
        };
        let size = canonical(&body).len();
        if size > MAX_SPEC_BYTES {
            return Err(ToolError::invalid_argument(
                base,
                format!("the spec is {size} bytes as canonical JSON; at most {MAX_SPEC_BYTES} are accepted"),
            ));
        }
        Ok(Spec { change_type, body })
    }

    pub fn change_type(&self) -> ChangeType {
        self.change_type
    }

    /// Compiles to the exact request the create sends.
    pub fn compile(&self) -> Compiled {
        let body = canonical(&self.body);
        let sha = request_sha256(self.change_type, &body);
        Compiled { change_type: self.change_type, body, wire: self.body.clone(), request_sha256: sha }
    }

    fn str_at(&self, pointer: &str) -> Option<&str> {
        self.body.pointer(pointer).and_then(Value::as_str)
    }

    /// A human-readable target for the prompt ("EVPL_VC connection \"x\", 1000 Mbps").
    pub fn target(&self) -> String {
        let b = &self.body;
        match self.change_type {
            ChangeType::ConnectionCreate => format!(
                "{} connection {:?}, {} Mbps",
                self.str_at("/type").unwrap_or("?"),
                self.str_at("/name").unwrap_or("?"),
                b["bandwidth"]
            ),
            ChangeType::NetworkCreate => format!(
                "{} {} network {:?}",
                self.str_at("/scope").unwrap_or("?"),
                self.str_at("/type").unwrap_or("?"),
                self.str_at("/name").unwrap_or("?")
            ),
            ChangeType::ServiceTokenCreate => format!(
                "{} service token {} for {} connections, expiring {}",
                self.str_at("/type").unwrap_or("?"),
                self.str_at("/name").map(|n| format!("{n:?}")).unwrap_or_else(|| "(unnamed)".into()),
                self.str_at("/connection/type").unwrap_or("?"),
                self.str_at("/expirationDateTime").unwrap_or("?")
            ),
        }
    }
}

/// The compiled request: what the dry run validated and what a confirm would send.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Compiled {
    pub change_type: ChangeType,
    /// The canonical JSON text of `wire`: the bytes sent and hashed.
    pub body: String,
    pub wire: Value,
    pub request_sha256: String,
}

/// Canonical JSON text: sorted keys (serde_json's map is ordered by key without the
/// `preserve_order` feature), no whitespace.
pub fn canonical(v: &Value) -> String {
    crate::json_text(v)
}

/// SHA-256 over `change_type`, a newline, and the canonical body, in lowercase hex. By hand:
/// `printf '%s\n%s' connection_create "$BODY" | sha256sum`.
pub fn request_sha256(change_type: ChangeType, body: &str) -> String {
    let mut h = Sha256::new();
    h.update(change_type.as_str().as_bytes());
    h.update(b"\n");
    h.update(body.as_bytes());
    let digest = h.finalize();
    let mut out = String::with_capacity(64);
    for b in digest {
        out.push(char::from_digit((b >> 4) as u32, 16).unwrap());
        out.push(char::from_digit((b & 15) as u32, 16).unwrap());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(o: &Object) -> alloc::vec::Vec<&'static str> {
        o.fields.iter().map(|f| f.name).collect()
    }

    #[test]
    fn each_create_grammar_has_the_contract_required_fields() {
        let required =
            |o: &Object| -> alloc::vec::Vec<&str> { o.fields.iter().filter(|f| f.required).map(|f| f.name).collect() };
        assert_eq!(required(&CONNECTION), ["type", "name", "bandwidth", "aSide", "zSide", "notifications"]);
        assert_eq!(required(&NETWORK), ["type", "name", "scope", "notifications"]);
        assert!(names(&ACCESS_POINT).contains(&"virtualDevice") && names(&ACCESS_POINT).contains(&"interface"));
        assert!(names(&SELECTOR).contains(&"virtualDevice") && names(&SELECTOR_NETWORK).contains(&"type"));
    }
}
