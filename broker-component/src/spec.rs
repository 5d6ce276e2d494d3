//! The three change types and their typed specs, parsed strictly from the Fabric v4 request
//! field names (camelCase) and compiled to the canonical wire body.
//!
//! Canonical form: object keys sorted, no insignificant whitespace, integers written without
//! fraction or exponent (the one number normalisation: `1e3` and `1000.0` become `1000`), strings
//! exactly as given. Absent optional fields are omitted, never written as `null`.

use alloc::boxed::Box;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use crate::reader::{Obj, is_metro_code, item, item_int, item_str, object};
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
const EMAIL_MAX: usize = 254;
const CONNECTION_TYPES: &[&str] = &[
    "EVPL_VC",
    "EPL_VC",
    "EC_VC",
    "IP_VC",
    "ACCESS_EPL_VC",
    "EIA_VC",
    "EVPLAN_VC",
    "EPLAN_VC",
    "EVPTREE_VC",
    "EPTREE_VC",
    "IPWAN_VC",
    "IA_VC",
    "MC_VC",
    "IX_VC",
    "IC_VC",
];
const ACCESS_POINT_TYPES: &[&str] = &[
    "VD",
    "VG",
    "SP",
    "IGW",
    "COLO",
    "SUBNET",
    "CLOUD_ROUTER",
    "NETWORK",
    "METAL_NETWORK",
    "VPIC_INTERFACE",
    "APP_LINK",
];
const LINK_PROTOCOLS: &[&str] = &["UNTAGGED", "DOT1Q", "QINQ", "EVPN_VXLAN", "VXLAN"];
const PROFILE_TYPES: &[&str] = &["L2_PROFILE", "L3_PROFILE", "IA_PROFILE", "IX_PROFILE", "IC_PROFILE", "LMAAS_PROFILE"];
const NOTIFICATION_TYPES: &[&str] = &[
    "NOTIFICATION",
    "BANDWIDTH_ALERT",
    "CONNECTION_APPROVAL",
    "PROFILE_LIFECYCLE",
    "ALL",
    "SALES_REP_NOTIFICATIONS",
    "TECHNICAL",
    "ORDERING",
];
const GEO_SCOPES: &[&str] = &["CANADA", "CONUS", "JAPAN", "UK", "AUSTRALIA", "BRAZIL", "SWITZERLAND", "EU"];
const NETWORK_TYPES: &[&str] = &["EVPLAN", "EPLAN", "IPWAN", "EVPTREE", "EPTREE"];
const NETWORK_SCOPES: &[&str] = &["REGIONAL", "GLOBAL", "LOCAL"];
const REGIONS: &[&str] = &["AMER", "APAC", "EMEA"];
const TOKEN_TYPES: &[&str] = &["VC_TOKEN", "EPL_TOKEN"];
const TOKEN_CONNECTION_TYPES: &[&str] =
    &["EVPL_VC", "EPL_VC", "EVPLAN_VC", "EPLAN_VC", "IPWAN_VC", "IP_VC", "EVPTREE_VC", "EPTREE_VC"];
const SELECTOR_TYPES: &[&str] = &["COLO", "VD", "NETWORK"];

/// `{"uuid": ...}` references.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ref {
    pub uuid: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LinkProtocol {
    pub kind: &'static str,
    pub vlan_tag: Option<u64>,
    pub vlan_s_tag: Option<u64>,
    pub vlan_c_tag: Option<u64>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Profile {
    pub kind: Option<&'static str>,
    pub uuid: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AccessPoint {
    pub kind: &'static str,
    pub port: Option<Ref>,
    pub link_protocol: Option<LinkProtocol>,
    pub profile: Option<Profile>,
    pub metro_code: Option<String>,
    pub network: Option<Ref>,
    pub router: Option<Ref>,
    pub seller_region: Option<String>,
    pub authentication_key: Option<String>,
    pub peering_type: Option<&'static str>,
    pub role: Option<&'static str>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConnectionSide {
    pub access_point: Option<AccessPoint>,
    pub service_token: Option<Ref>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Notification {
    pub kind: &'static str,
    pub emails: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Order {
    pub purchase_order_number: Option<String>,
    pub customer_reference_number: Option<String>,
    pub term_length: Option<u64>,
    pub billing_tier: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Redundancy {
    pub priority: Option<&'static str>,
    pub group: Option<String>,
}

/// POST /fabric/v4/connections (`ConnectionPostRequest`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConnectionSpec {
    pub kind: &'static str,
    pub name: String,
    pub bandwidth: u64,
    pub a_side: ConnectionSide,
    pub z_side: ConnectionSide,
    pub notifications: Vec<Notification>,
    pub project_id: Option<String>,
    pub order: Option<Order>,
    pub redundancy: Option<Redundancy>,
    pub geo_scope: Option<&'static str>,
}

/// POST /fabric/v4/networks (`NetworkPostRequest`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NetworkSpec {
    pub kind: &'static str,
    pub name: String,
    pub scope: &'static str,
    pub region: Option<&'static str>,
    pub metro_code: Option<String>,
    pub project_id: Option<String>,
    pub notifications: Vec<Notification>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Selector {
    pub kind: &'static str,
    pub port: Option<Ref>,
    pub link_protocol: Option<LinkProtocol>,
    pub network: Option<Ref>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TokenConnection {
    pub kind: &'static str,
    pub bandwidth_limit: Option<u64>,
    pub supported_bandwidths: Option<Vec<u64>>,
    pub allow_remote_connection: Option<bool>,
    pub allow_custom_bandwidth: Option<bool>,
    pub a_side: Option<Vec<Selector>>,
    pub z_side: Option<Vec<Selector>>,
}

/// POST /fabric/v4/serviceTokens (`ServiceToken`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServiceTokenSpec {
    pub kind: &'static str,
    pub name: Option<String>,
    pub description: Option<String>,
    pub expiration_date_time: String,
    pub connection: TokenConnection,
    pub notifications: Vec<Notification>,
    pub project_id: Option<String>,
}

/// A parsed spec of any change type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Spec {
    Connection(Box<ConnectionSpec>),
    Network(NetworkSpec),
    ServiceToken(ServiceTokenSpec),
}

impl Spec {
    /// Parses `spec` for `change_type`; errors name the JSON path under `base` (e.g. `/spec`).
    pub fn parse(change_type: ChangeType, spec: &Value, base: &str) -> Result<Spec, ToolError> {
        let mut o = object(spec, base)?;
        let parsed = match change_type {
            ChangeType::ConnectionCreate => Spec::Connection(Box::new(connection(&mut o)?)),
            ChangeType::NetworkCreate => Spec::Network(network(&mut o)?),
            ChangeType::ServiceTokenCreate => Spec::ServiceToken(service_token(&mut o)?),
        };
        o.finish()?;
        Ok(parsed)
    }

    pub fn change_type(&self) -> ChangeType {
        match self {
            Spec::Connection(_) => ChangeType::ConnectionCreate,
            Spec::Network(_) => ChangeType::NetworkCreate,
            Spec::ServiceToken(_) => ChangeType::ServiceTokenCreate,
        }
    }

    /// The wire body as a JSON value.
    pub fn to_wire(&self) -> Value {
        match self {
            Spec::Connection(c) => connection_wire(c),
            Spec::Network(n) => network_wire(n),
            Spec::ServiceToken(t) => token_wire(t),
        }
    }

    /// Compiles to the exact request the create sends.
    pub fn compile(&self) -> Compiled {
        let wire = self.to_wire();
        let body = canonical(&wire);
        let sha = request_sha256(self.change_type(), &body);
        Compiled { change_type: self.change_type(), body, wire, request_sha256: sha }
    }

    /// A human-readable target for the prompt ("EVPL_VC connection \"x\", 1000 Mbps").
    pub fn target(&self) -> String {
        match self {
            Spec::Connection(c) => alloc::format!("{} connection {:?}, {} Mbps", c.kind, c.name, c.bandwidth),
            Spec::Network(n) => alloc::format!("{} {} network {:?}", n.scope, n.kind, n.name),
            Spec::ServiceToken(t) => alloc::format!(
                "{} service token {} for {} connections, expiring {}",
                t.kind,
                t.name.as_deref().map(|n| alloc::format!("{n:?}")).unwrap_or_else(|| "(unnamed)".into()),
                t.connection.kind,
                t.expiration_date_time
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

// ---- parsing ----

fn name(o: &mut Obj<'_>) -> Result<String, ToolError> {
    o.req_str("name", NAME_MAX)
}

fn project(o: &mut Obj<'_>) -> Result<Option<String>, ToolError> {
    o.opt_obj("project", |p| p.req_uuid("projectId"))
}

fn notifications(o: &mut Obj<'_>) -> Result<Vec<Notification>, ToolError> {
    o.req_array("notifications", 1, 10, |v, p| {
        item(v, p, |n| {
            let kind = n.req_enum("type", NOTIFICATION_TYPES)?;
            let emails = n.req_array("emails", 1, 20, |e, ep| {
                let s = item_str(e, ep, EMAIL_MAX)?;
                if s.contains('@') { Ok(s) } else { Err(ToolError::invalid_argument(ep, "expected an email address")) }
            })?;
            Ok(Notification { kind, emails })
        })
    })
}

fn reference(o: &mut Obj<'_>, key: &'static str) -> Result<Option<Ref>, ToolError> {
    o.opt_obj(key, |r| Ok(Ref { uuid: r.req_uuid("uuid")? }))
}

fn link_protocol(o: &mut Obj<'_>) -> Result<Option<LinkProtocol>, ToolError> {
    let path = o.path_of("linkProtocol");
    let lp = o.opt_obj("linkProtocol", |l| {
        Ok(LinkProtocol {
            kind: l.req_enum("type", LINK_PROTOCOLS)?,
            vlan_tag: l.opt_int("vlanTag", 2, 4092)?,
            vlan_s_tag: l.opt_int("vlanSTag", 2, 4092)?,
            vlan_c_tag: l.opt_int("vlanCTag", 2, 4092)?,
        })
    })?;
    if let Some(l) = &lp {
        let ok = match l.kind {
            "DOT1Q" => l.vlan_tag.is_some() && l.vlan_s_tag.is_none() && l.vlan_c_tag.is_none(),
            "QINQ" => l.vlan_tag.is_none() && l.vlan_s_tag.is_some(),
            "UNTAGGED" => l.vlan_tag.is_none() && l.vlan_s_tag.is_none() && l.vlan_c_tag.is_none(),
            _ => true,
        };
        if !ok {
            return Err(ToolError::invalid_argument(
                &path,
                "DOT1Q takes vlanTag only, QINQ takes vlanSTag (and optionally vlanCTag), UNTAGGED takes no tag",
            ));
        }
    }
    Ok(lp)
}

fn access_point(o: &mut Obj<'_>) -> Result<AccessPoint, ToolError> {
    Ok(AccessPoint {
        kind: o.req_enum("type", ACCESS_POINT_TYPES)?,
        port: reference(o, "port")?,
        link_protocol: link_protocol(o)?,
        profile: o.opt_obj("profile", |p| {
            Ok(Profile { kind: p.opt_enum("type", PROFILE_TYPES)?, uuid: p.req_uuid("uuid")? })
        })?,
        metro_code: o.opt_obj("location", |l| metro(l))?,
        network: reference(o, "network")?,
        router: reference(o, "router")?,
        seller_region: o.opt_str("sellerRegion", 64)?,
        authentication_key: o.opt_str("authenticationKey", 256)?,
        peering_type: o.opt_enum("peeringType", &["PRIVATE", "MICROSOFT", "PUBLIC", "MANUAL"])?,
        role: o.opt_enum("role", &["LEAF", "ROOT"])?,
    })
}

fn metro(l: &mut Obj<'_>) -> Result<String, ToolError> {
    let path = l.path_of("metroCode");
    let code = l.req_str("metroCode", 4)?;
    if is_metro_code(&code) {
        Ok(code)
    } else {
        Err(ToolError::invalid_argument(&path, "expected a metro code such as \"DC\" or \"SV\""))
    }
}

fn side(o: &mut Obj<'_>, key: &'static str) -> Result<ConnectionSide, ToolError> {
    let path = o.path_of(key);
    let s = o.req_obj(key, |s| {
        Ok(ConnectionSide {
            access_point: s.opt_obj("accessPoint", access_point)?,
            service_token: reference(s, "serviceToken")?,
        })
    })?;
    if s.access_point.is_none() && s.service_token.is_none() {
        return Err(ToolError::invalid_argument(&path, "needs an accessPoint or a serviceToken"));
    }
    Ok(s)
}

fn connection(o: &mut Obj<'_>) -> Result<ConnectionSpec, ToolError> {
    Ok(ConnectionSpec {
        kind: o.req_enum("type", CONNECTION_TYPES)?,
        name: name(o)?,
        bandwidth: o.req_int("bandwidth", 0, 100_000)?,
        a_side: side(o, "aSide")?,
        z_side: side(o, "zSide")?,
        notifications: notifications(o)?,
        project_id: project(o)?,
        order: o.opt_obj("order", |r| {
            let path = r.path_of("termLength");
            let term = r.opt_int("termLength", 1, 36)?;
            if term.is_some_and(|t| ![1, 12, 24, 36].contains(&t)) {
                return Err(ToolError::invalid_argument(&path, "expected 1, 12, 24 or 36"));
            }
            Ok(Order {
                purchase_order_number: r.opt_str("purchaseOrderNumber", 64)?,
                customer_reference_number: r.opt_str("customerReferenceNumber", 64)?,
                term_length: term,
                billing_tier: r.opt_str("billingTier", 32)?,
            })
        })?,
        redundancy: o.opt_obj("redundancy", |r| {
            Ok(Redundancy { priority: r.opt_enum("priority", &["PRIMARY", "SECONDARY"])?, group: r.opt_uuid("group")? })
        })?,
        geo_scope: o.opt_enum("geoScope", GEO_SCOPES)?,
    })
}

fn network(o: &mut Obj<'_>) -> Result<NetworkSpec, ToolError> {
    let kind = o.req_enum("type", NETWORK_TYPES)?;
    let name = name(o)?;
    let scope = o.req_enum("scope", NETWORK_SCOPES)?;
    let location_path = o.path_of("location");
    let location = o.opt_obj("location", |l| {
        let region = l.opt_enum("region", REGIONS)?;
        let metro_code = l.opt_str("metroCode", 4)?;
        Ok((region, metro_code))
    })?;
    let (region, metro_code) = location.unwrap_or((None, None));
    if scope == "REGIONAL" && region.is_none() {
        return Err(ToolError::invalid_argument(
            &location_path,
            "a REGIONAL network needs location.region (AMER, APAC or EMEA)",
        ));
    }
    Ok(NetworkSpec { kind, name, scope, region, metro_code, project_id: project(o)?, notifications: notifications(o)? })
}

fn selectors(o: &mut Obj<'_>, key: &'static str) -> Result<Option<Vec<Selector>>, ToolError> {
    o.opt_obj(key, |s| {
        s.req_array("accessPointSelectors", 1, 10, |v, p| {
            item(v, p, |sel| {
                Ok(Selector {
                    kind: sel.req_enum("type", SELECTOR_TYPES)?,
                    port: reference(sel, "port")?,
                    link_protocol: link_protocol(sel)?,
                    network: reference(sel, "network")?,
                })
            })
        })
    })
}

fn service_token(o: &mut Obj<'_>) -> Result<ServiceTokenSpec, ToolError> {
    let kind = o.req_enum("type", TOKEN_TYPES)?;
    let name = o.opt_str("name", NAME_MAX)?;
    let description = o.opt_str("description", 512)?;
    let exp_path = o.path_of("expirationDateTime");
    let expiration_date_time = o.req_str("expirationDateTime", 40)?;
    if crate::time::parse_rfc3339_ms(&expiration_date_time).is_none() {
        return Err(ToolError::invalid_argument(
            &exp_path,
            "expected an RFC 3339 date-time such as 2026-12-18T06:43:49.980Z",
        ));
    }
    let conn_path = o.path_of("connection");
    let connection = o.req_obj("connection", |c| {
        Ok(TokenConnection {
            kind: c.req_enum("type", TOKEN_CONNECTION_TYPES)?,
            bandwidth_limit: c.opt_int("bandwidthLimit", 0, 100_000)?,
            supported_bandwidths: c.opt_array("supportedBandwidths", 1, 20, |v, p| item_int(v, p, 1, 100_000))?,
            allow_remote_connection: c.opt_bool("allowRemoteConnection")?,
            allow_custom_bandwidth: c.opt_bool("allowCustomBandwidth")?,
            a_side: selectors(c, "aSide")?,
            z_side: selectors(c, "zSide")?,
        })
    })?;
    if connection.a_side.is_some() == connection.z_side.is_some() {
        return Err(ToolError::invalid_argument(&conn_path, "needs exactly one of aSide or zSide"));
    }
    Ok(ServiceTokenSpec {
        kind,
        name,
        description,
        expiration_date_time,
        connection,
        notifications: notifications(o)?,
        project_id: project(o)?,
    })
}

// ---- compiling ----

/// Builds an object from optional fields, skipping absent ones.
struct Wire(Map<String, Value>);

impl Wire {
    fn new() -> Self {
        Wire(Map::new())
    }
    fn put(mut self, key: &str, v: impl Into<Value>) -> Self {
        self.0.insert(key.to_string(), v.into());
        self
    }
    fn opt(self, key: &str, v: Option<impl Into<Value>>) -> Self {
        match v {
            Some(v) => self.put(key, v),
            None => self,
        }
    }
    fn done(self) -> Value {
        Value::Object(self.0)
    }
}

fn ref_wire(r: &Ref) -> Value {
    json!({"uuid": r.uuid})
}

fn link_wire(l: &LinkProtocol) -> Value {
    Wire::new()
        .put("type", l.kind)
        .opt("vlanTag", l.vlan_tag)
        .opt("vlanSTag", l.vlan_s_tag)
        .opt("vlanCTag", l.vlan_c_tag)
        .done()
}

fn notifications_wire(n: &[Notification]) -> Value {
    Value::Array(n.iter().map(|n| json!({"type": n.kind, "emails": n.emails})).collect())
}

fn project_wire(p: &Option<String>) -> Option<Value> {
    p.as_ref().map(|id| json!({"projectId": id}))
}

fn access_point_wire(a: &AccessPoint) -> Value {
    Wire::new()
        .put("type", a.kind)
        .opt("port", a.port.as_ref().map(ref_wire))
        .opt("linkProtocol", a.link_protocol.as_ref().map(link_wire))
        .opt("profile", a.profile.as_ref().map(|p| Wire::new().opt("type", p.kind).put("uuid", p.uuid.clone()).done()))
        .opt("location", a.metro_code.as_ref().map(|m| json!({"metroCode": m})))
        .opt("network", a.network.as_ref().map(ref_wire))
        .opt("router", a.router.as_ref().map(ref_wire))
        .opt("sellerRegion", a.seller_region.clone())
        .opt("authenticationKey", a.authentication_key.clone())
        .opt("peeringType", a.peering_type)
        .opt("role", a.role)
        .done()
}

fn side_wire(s: &ConnectionSide) -> Value {
    Wire::new()
        .opt("accessPoint", s.access_point.as_ref().map(access_point_wire))
        .opt("serviceToken", s.service_token.as_ref().map(ref_wire))
        .done()
}

fn connection_wire(c: &ConnectionSpec) -> Value {
    Wire::new()
        .put("type", c.kind)
        .put("name", c.name.clone())
        .put("bandwidth", c.bandwidth)
        .put("aSide", side_wire(&c.a_side))
        .put("zSide", side_wire(&c.z_side))
        .put("notifications", notifications_wire(&c.notifications))
        .opt("project", project_wire(&c.project_id))
        .opt(
            "order",
            c.order.as_ref().map(|o| {
                Wire::new()
                    .opt("purchaseOrderNumber", o.purchase_order_number.clone())
                    .opt("customerReferenceNumber", o.customer_reference_number.clone())
                    .opt("termLength", o.term_length)
                    .opt("billingTier", o.billing_tier.clone())
                    .done()
            }),
        )
        .opt(
            "redundancy",
            c.redundancy.as_ref().map(|r| Wire::new().opt("priority", r.priority).opt("group", r.group.clone()).done()),
        )
        .opt("geoScope", c.geo_scope)
        .done()
}

fn network_wire(n: &NetworkSpec) -> Value {
    let location = if n.region.is_some() || n.metro_code.is_some() {
        Some(Wire::new().opt("region", n.region).opt("metroCode", n.metro_code.clone()).done())
    } else {
        None
    };
    Wire::new()
        .put("type", n.kind)
        .put("name", n.name.clone())
        .put("scope", n.scope)
        .opt("location", location)
        .opt("project", project_wire(&n.project_id))
        .put("notifications", notifications_wire(&n.notifications))
        .done()
}

fn selectors_wire(s: &[Selector]) -> Value {
    let list: Vec<Value> = s
        .iter()
        .map(|s| {
            Wire::new()
                .put("type", s.kind)
                .opt("port", s.port.as_ref().map(ref_wire))
                .opt("linkProtocol", s.link_protocol.as_ref().map(link_wire))
                .opt("network", s.network.as_ref().map(ref_wire))
                .done()
        })
        .collect();
    json!({"accessPointSelectors": list})
}

fn token_wire(t: &ServiceTokenSpec) -> Value {
    let c = &t.connection;
    let connection = Wire::new()
        .put("type", c.kind)
        .opt("bandwidthLimit", c.bandwidth_limit)
        .opt("supportedBandwidths", c.supported_bandwidths.clone())
        .opt("allowRemoteConnection", c.allow_remote_connection)
        .opt("allowCustomBandwidth", c.allow_custom_bandwidth)
        .opt("aSide", c.a_side.as_deref().map(selectors_wire))
        .opt("zSide", c.z_side.as_deref().map(selectors_wire))
        .done();
    Wire::new()
        .put("type", t.kind)
        .opt("name", t.name.clone())
        .opt("description", t.description.clone())
        .put("expirationDateTime", t.expiration_date_time.clone())
        .put("connection", connection)
        .put("notifications", notifications_wire(&t.notifications))
        .opt("project", project_wire(&t.project_id))
        .done()
}
