//! The grammars of the three create requests (Fabric v4 4.31): one object table per request schema, with the rules across fields that the schema words in its descriptions.

use alloc::format;
use alloc::string::String;
use serde_json::{Map, Value};

use crate::fabric_enums::*;
use crate::grammar::{
    self, DATE_TIME, EMAIL, Kind, METRO, METROS_TOOL, Object, Problems, TEXT, UUID, child, int, opt, req, text,
};

const NAME_MAX: usize = 128;

// ---- the grammars (Fabric v4 4.31 request schemas) ----

pub(super) static UUID_REF: Object =
    Object { name: "UuidRef", fields: &[req("uuid", UUID, "Its uuid")], rule: None, rule_doc: "" };
pub(super) const REF: Kind = Kind::Obj(&UUID_REF);

pub(super) static PROJECT: Object =
    Object { name: "Project", fields: &[req("projectId", UUID, "Fabric project id")], rule: None, rule_doc: "" };

pub(super) static NOTIFICATION: Object = Object {
    name: "Notification",
    fields: &[
        req("type", Kind::Enum(NOTIFICATION_TYPES), "ALL for everything"),
        req("emails", Kind::Array { item: &EMAIL, min: 1, max: 20 }, "Who is told"),
        opt("sendInterval", TEXT, "BANDWIDTH_ALERT: how often"),
        opt("registeredUsers", Kind::Array { item: &TEXT, min: 1, max: 20 }, "Portal users"),
    ],
    rule: None,
    rule_doc: "",
};
pub(super) const NOTIFICATIONS: Kind = Kind::Array { item: &Kind::Obj(&NOTIFICATION), min: 1, max: 10 };

pub(super) const VLAN: Kind = int(2, 4092);

pub(super) static LINK_PROTOCOL: Object = Object {
    name: "LinkProtocol",
    fields: &[
        req("type", Kind::Enum(LINK_PROTOCOLS), "The port's tagging"),
        opt("vlanTag", VLAN, "DOT1Q: a free VLAN").from("fabric_list_port_vlans"),
        opt("vlanSTag", VLAN, "QINQ: outer tag"),
        opt("vlanCTag", VLAN, "QINQ: inner tag"),
    ],
    rule: Some(link_rule),
    rule_doc: "DOT1Q takes vlanTag only; QINQ takes vlanSTag, optionally vlanCTag (outer, inner); UNTAGGED takes no tag.",
};

pub(super) fn link_rule(m: &Map<String, Value>, path: &str, p: &mut Problems) {
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

pub(super) static PROFILE: Object = Object {
    name: "Profile",
    fields: &[
        opt("type", Kind::Enum(PROFILE_TYPES), "Profile type"),
        req("uuid", UUID, "").from("fabric_search_service_profiles"),
    ],
    rule: None,
    rule_doc: "",
};

pub(super) static LOCATION: Object =
    Object { name: "Location", fields: &[req("metroCode", METRO, "").from(METROS_TOOL)], rule: None, rule_doc: "" };

pub(super) static VIRTUAL_DEVICE: Object = Object {
    name: "VirtualDevice",
    fields: &[
        opt("type", Kind::Enum(VIRTUAL_DEVICE_TYPES), "Device kind"),
        req("uuid", UUID, "Device uuid"),
        opt("name", TEXT, "Device name"),
    ],
    rule: None,
    rule_doc: "",
};

pub(super) static INTERFACE: Object = Object {
    name: "Interface",
    fields: &[
        opt("type", Kind::Enum(INTERFACE_TYPES), "Interface kind"),
        opt("id", int(0, 1 << 31), "Interface number"),
        opt("uuid", UUID, "Interface uuid"),
    ],
    rule: Some(id_or_uuid),
    rule_doc: "Give id or uuid.",
};

pub(super) fn id_or_uuid(m: &Map<String, Value>, path: &str, p: &mut Problems) {
    if !m.contains_key("id") && !m.contains_key("uuid") {
        p.push(path, "needs id or uuid");
    }
}

pub(super) static PRODUCT_OFFERING: Object = Object {
    name: "ProductOffering",
    fields: &[opt("id", TEXT, "Offering id"), opt("name", TEXT, "Offering name")],
    rule: None,
    rule_doc: "",
};

pub(super) static ADDRESS: Object = Object {
    name: "Address",
    fields: &[
        opt("id", TEXT, "Address id"),
        opt("streetNr", TEXT, "Street number"),
        opt("streetName", TEXT, "Street"),
        opt("city", TEXT, "City"),
        opt("stateOrProvince", TEXT, "State or province"),
        opt("postCode", TEXT, "Postcode"),
        opt("country", TEXT, "Country code"),
    ],
    rule: None,
    rule_doc: "",
};

pub(super) static ACCESS_POINT: Object = Object {
    name: "AccessPoint",
    fields: &[
        req(
            "type",
            Kind::Enum(ACCESS_POINT_TYPES),
            "COLO: your port; SP: a provider's service profile; VD: a virtual device",
        ),
        opt("port", REF, "").from("fabric_search_ports"),
        opt("linkProtocol", Kind::Obj(&LINK_PROTOCOL), "COLO: the VLAN"),
        opt("profile", Kind::Obj(&PROFILE), "SP: the provider's profile"),
        opt("location", Kind::Obj(&LOCATION), "SP: the provider's metro"),
        opt("virtualDevice", Kind::Obj(&VIRTUAL_DEVICE), "VD: the device"),
        opt("interface", Kind::Obj(&INTERFACE), "VD: its interface"),
        opt("network", REF, "").from("fabric_search_networks"),
        opt("router", REF, "").from("fabric_search_cloud_routers"),
        opt("sellerRegion", TEXT, "SP: e.g. us-east-1"),
        opt("authenticationKey", TEXT, "SP: e.g. the AWS account id"),
        opt("peeringType", Kind::Enum(PEERING_TYPES), "SP: Azure"),
        opt("role", Kind::Enum(ROLES), "Tree networks"),
        opt("providerConnectionId", TEXT, "The provider's id for it"),
        opt("productOffering", Kind::Obj(&PRODUCT_OFFERING), "LMaaS"),
        opt("bandwidthCommit", int(0, 100_000), "LMaaS: Mbps"),
        opt("address", Kind::Obj(&ADDRESS), "LMaaS"),
    ],
    rule: Some(access_point_rule),
    rule_doc: "By type: COLO needs port (and linkProtocol on a tagged port); SP needs profile; VD needs virtualDevice; NETWORK \
needs network; CLOUD_ROUTER needs router.",
};

/// What each access point type cannot do without (Fabric refuses it at the dry run otherwise).
pub(super) const NEEDS: &[(&str, &[&str])] = &[
    ("COLO", &["port"]),
    ("SP", &["profile"]),
    ("VD", &["virtualDevice"]),
    ("NETWORK", &["network"]),
    ("CLOUD_ROUTER", &["router"]),
];

pub(super) fn access_point_rule(m: &Map<String, Value>, path: &str, p: &mut Problems) {
    needs_by_type(m, path, p, NEEDS);
}

pub(super) fn needs_by_type(m: &Map<String, Value>, path: &str, p: &mut Problems, needs: &[(&str, &[&str])]) {
    let kind = m.get("type").and_then(Value::as_str).unwrap_or_default();
    for (_, fields) in needs.iter().filter(|(t, _)| *t == kind) {
        for f in fields.iter().filter(|f| !m.contains_key(**f)) {
            p.push(&child(path, f), format!("is required for a {kind} access point"));
        }
    }
}

pub(super) static ADDITIONAL_INFO: Object = Object {
    name: "AdditionalInfo",
    fields: &[
        req("key", TEXT, "Name"),
        req("value", Kind::Str { min: 0, max: usize::MAX, text: grammar::Text::Any }, "A string, even for numbers"),
    ],
    rule: None,
    rule_doc: "",
};
pub(super) const ADDITIONAL_INFOS: Kind = Kind::Array { item: &Kind::Obj(&ADDITIONAL_INFO), min: 1, max: 50 };

pub(super) static SIDE: Object = Object {
    name: "Side",
    fields: &[
        opt("accessPoint", Kind::Obj(&ACCESS_POINT), ""),
        opt("serviceToken", REF, "Instead of accessPoint"),
        opt("additionalInfo", ADDITIONAL_INFOS, "Some providers need these"),
    ],
    rule: Some(side_rule),
    rule_doc: "Needs an accessPoint or a serviceToken.",
};

pub(super) fn side_rule(m: &Map<String, Value>, path: &str, p: &mut Problems) {
    if !m.contains_key("accessPoint") && !m.contains_key("serviceToken") {
        p.push(path, "needs an accessPoint or a serviceToken");
    }
}

pub(super) static ORDER: Object = Object {
    name: "Order",
    fields: &[
        opt("purchaseOrderNumber", TEXT, "PO number"),
        opt("customerReferenceNumber", TEXT, "Your reference"),
        opt("billingTier", TEXT, "Billing tier"),
        opt("orderNumber", TEXT, "Order number"),
        opt("termLength", Kind::Int { min: 1, max: 36, only: Some(&[1, 12, 24, 36]) }, "Months"),
        opt("contractedBandwidth", int(0, 100_000), "Mbps"),
    ],
    rule: None,
    rule_doc: "",
};

pub(super) static REDUNDANCY: Object = Object {
    name: "Redundancy",
    fields: &[opt("group", UUID, "The primary's group"), opt("priority", Kind::Enum(PRIORITIES), "Role in the pair")],
    rule: None,
    rule_doc: "",
};

pub(super) static MARKETPLACE_SUBSCRIPTION: Object = Object {
    name: "MarketplaceSubscription",
    fields: &[req("type", Kind::Enum(MARKETPLACES), "Marketplace"), req("uuid", UUID, "Subscription uuid")],
    rule: None,
    rule_doc: "",
};

pub(super) static END_CUSTOMER: Object = Object {
    name: "EndCustomer",
    fields: &[
        opt("isDisclosed", Kind::Bool, "Show their name"),
        opt("name", TEXT, "Their name"),
        opt("mdmId", TEXT, "Their MDM id"),
    ],
    rule: None,
    rule_doc: "",
};

/// `ConnectionPostRequest`.
pub(crate) static CONNECTION: Object = Object {
    name: "Connection",
    fields: &[
        req("type", Kind::Enum(CONNECTION_TYPES), "EVPL_VC: ports and devices; IP_VC: from a Cloud Router"),
        req("name", text(NAME_MAX), "Your name for it"),
        req("bandwidth", int(0, 100_000), "Mbps"),
        req("aSide", Kind::Obj(&SIDE), "Where it starts"),
        req("zSide", Kind::Obj(&SIDE), "Where it ends"),
        req("notifications", NOTIFICATIONS, "Who is told"),
        opt("project", Kind::Obj(&PROJECT), "Fabric project"),
        opt("order", Kind::Obj(&ORDER), "Order details"),
        opt("redundancy", Kind::Obj(&REDUNDANCY), "One of a pair"),
        opt("geoScope", Kind::Enum(GEO_SCOPES), "Geographic scope"),
        opt("additionalInfo", ADDITIONAL_INFOS, "Some providers need these"),
        opt("marketplaceSubscription", Kind::Obj(&MARKETPLACE_SUBSCRIPTION), "Bought in a marketplace"),
        opt("endCustomer", Kind::Obj(&END_CUSTOMER), "A reseller's customer"),
    ],
    rule: Some(connection_rule),
    rule_doc: "By type: IP_VC needs router (a CLOUD_ROUTER A-side), as does IPWAN_VC to a network.",
};

/// A connection from a Cloud Router is Fabric's `IP_VC`, or an `IPWAN_VC` to an IP-WAN network,
/// and an `IP_VC` comes from a Cloud Router (every official FCR example); anything else is
/// refused at the dry run, so say so before one is sent.
pub(super) fn connection_rule(m: &Map<String, Value>, path: &str, p: &mut Problems) {
    let side = |s: &str| m.get(s).and_then(|s| s.pointer("/accessPoint/type")).and_then(Value::as_str);
    let kind = m.get("type").and_then(Value::as_str);
    let at = child(path, "type");
    match (side("aSide"), kind) {
        (Some("CLOUD_ROUTER"), Some("IP_VC") | None) => {}
        (Some("CLOUD_ROUTER"), Some("IPWAN_VC")) if side("zSide") == Some("NETWORK") => {}
        (Some("CLOUD_ROUTER"), Some(_)) => {
            p.push(&at, "a connection from a Cloud Router is an IP_VC (an IPWAN_VC to an IP-WAN network)")
        }
        (Some(other), Some("IP_VC")) => {
            p.push(&at, format!("an IP_VC comes from a Cloud Router (a CLOUD_ROUTER A-side), not {other}"))
        }
        _ => {}
    }
}

pub(super) static NETWORK_LOCATION: Object = Object {
    name: "NetworkLocation",
    fields: &[
        opt("region", Kind::Enum(REGIONS), "REGIONAL: its region"),
        opt("metroCode", METRO, "").from(METROS_TOOL),
    ],
    rule: None,
    rule_doc: "",
};

/// `NetworkPostRequest`.
pub(crate) static NETWORK: Object = Object {
    name: "Network",
    fields: &[
        req("type", Kind::Enum(NETWORK_TYPES), "Network type"),
        req("name", text(NAME_MAX), "Your name for it"),
        req("scope", Kind::Enum(NETWORK_SCOPES), "How far it spans"),
        opt("location", Kind::Obj(&NETWORK_LOCATION), "Where it is"),
        opt("project", Kind::Obj(&PROJECT), "Fabric project"),
        req("notifications", NOTIFICATIONS, "Who is told"),
    ],
    rule: Some(network_rule),
    rule_doc: "A REGIONAL network needs location.region.",
};

pub(super) fn network_rule(m: &Map<String, Value>, path: &str, p: &mut Problems) {
    let regional = m.get("scope").and_then(Value::as_str) == Some("REGIONAL");
    if regional && m.get("location").and_then(|l| l.get("region")).is_none() {
        p.push(&child(path, "location"), "a REGIONAL network needs location.region (AMER, APAC or EMEA)");
    }
}

pub(super) static SELECTOR_NETWORK: Object = Object {
    name: "SelectorNetwork",
    fields: &[
        req("uuid", UUID, "Network uuid"),
        opt("type", Kind::Enum(NETWORK_TYPES), "Network type"),
        opt("scope", Kind::Enum(NETWORK_SCOPES), "Network scope"),
        opt("name", text(NAME_MAX), "Network name"),
    ],
    rule: None,
    rule_doc: "",
};

pub(super) static SELECTOR_INTERFACE: Object = Object {
    name: "SelectorInterface",
    fields: &[
        opt("type", Kind::Enum(SELECTOR_INTERFACE_TYPES), "Interface kind"),
        opt("id", int(0, 1 << 31), "Interface number"),
        opt("uuid", UUID, "Interface uuid"),
    ],
    rule: Some(id_or_uuid),
    rule_doc: "Give id or uuid.",
};

pub(super) static SELECTOR: Object = Object {
    name: "Selector",
    fields: &[
        req("type", Kind::Enum(SELECTOR_TYPES), "What the holder connects from"),
        opt("port", REF, "").from("fabric_search_ports"),
        opt("linkProtocol", Kind::Obj(&LINK_PROTOCOL), "COLO: the VLAN"),
        opt("network", Kind::Obj(&SELECTOR_NETWORK), "NETWORK: the network"),
        opt("virtualDevice", Kind::Obj(&VIRTUAL_DEVICE), "VD: the device"),
        opt("interface", Kind::Obj(&SELECTOR_INTERFACE), "VD: its interface"),
        opt("hideAssetInfo", Kind::Bool, "Deprecated"),
    ],
    rule: Some(selector_rule),
    rule_doc: "By type: COLO needs port; VD needs virtualDevice; NETWORK needs network.",
};

pub(super) fn selector_rule(m: &Map<String, Value>, path: &str, p: &mut Problems) {
    needs_by_type(m, path, p, &[("COLO", &["port"]), ("VD", &["virtualDevice"]), ("NETWORK", &["network"])]);
}

pub(super) static TOKEN_SIDE: Object = Object {
    name: "TokenSide",
    fields: &[req(
        "accessPointSelectors",
        Kind::Array { item: &Kind::Obj(&SELECTOR), min: 1, max: 10 },
        "Where the holder may connect",
    )],
    rule: None,
    rule_doc: "",
};

pub(super) static TOKEN_CONNECTION: Object = Object {
    name: "TokenConnection",
    fields: &[
        req("type", Kind::Enum(TOKEN_CONNECTION_TYPES), "Connection type"),
        opt("bandwidthLimit", int(0, 100_000), "Mbps"),
        opt("supportedBandwidths", Kind::Array { item: &int(1, 100_000), min: 1, max: 20 }, "Mbps"),
        opt("allowRemoteConnection", Kind::Bool, "From other metros too"),
        opt("allowCustomBandwidth", Kind::Bool, "Holder picks the bandwidth"),
        opt("aSide", Kind::Obj(&TOKEN_SIDE), "An a-side token: you are the A end"),
        opt("zSide", Kind::Obj(&TOKEN_SIDE), "A z-side token: you are the Z end"),
    ],
    rule: Some(one_token_side),
    rule_doc: "Exactly one of aSide or zSide.",
};

pub(super) fn one_token_side(m: &Map<String, Value>, path: &str, p: &mut Problems) {
    if m.contains_key("aSide") == m.contains_key("zSide") {
        p.push(path, "needs exactly one of aSide or zSide");
    }
}

pub(super) static ACCOUNT: Object = Object {
    name: "Account",
    fields: &[req("accountNumber", int(1, i64::MAX), "Account number")],
    rule: None,
    rule_doc: "",
};

/// `ServiceToken` (the create request).
pub(crate) static SERVICE_TOKEN: Object = Object {
    name: "ServiceToken",
    fields: &[
        req("type", Kind::Enum(TOKEN_TYPES), "Token type"),
        opt("name", text(NAME_MAX), "Your name for it"),
        opt("description", TEXT, "Free text"),
        req("expirationDateTime", DATE_TIME, "When it expires"),
        req("connection", Kind::Obj(&TOKEN_CONNECTION), ""),
        req("notifications", NOTIFICATIONS, "Who is told"),
        opt("project", Kind::Obj(&PROJECT), "Fabric project"),
        opt("account", Kind::Obj(&ACCOUNT), "Your account"),
    ],
    rule: None,
    rule_doc: "",
};
