//! The JSON types Fabric's request schemas (v4 4.31: `ConnectionPostRequest`, `Network`'s post
//! request, `ServiceToken`) give the members of a create body that the host reads: the bandwidth
//! it prices and fits, the VLANs it checks, the names and ids it resolves. A body whose member has
//! another type is no request Fabric takes, and a plan could not read it: the host refuses it
//! before any dry run, and the simulator answers it with Fabric's 400. Members not listed here are
//! the component's grammar's and Fabric's business; none is listed that either would read as
//! another type.

use alloc::format;
use alloc::string::String;

use serde_json::Value;

use crate::ChangeType;

/// The type a member must have.
#[derive(Debug)]
pub enum Shape {
    /// A JSON integer literal (`500`; not `500.0` nor `"500"`).
    Int,
    Text,
    Bool,
    /// An object whose listed members have these shapes.
    Obj(&'static [(&'static str, Shape)]),
    /// An array of items of this shape.
    List(&'static Shape),
}

use Shape::{Bool, Int, List, Obj, Text};

const UUID_REF: Shape = Obj(&[("uuid", Text)]);
const TYPED_REF: Shape = Obj(&[("uuid", Text), ("type", Text)]);
const LINK_PROTOCOL: Shape = Obj(&[("type", Text), ("vlanTag", Int), ("vlanSTag", Int), ("vlanCTag", Int)]);
const INTERFACE: Shape = Obj(&[("type", Text), ("id", Int), ("uuid", Text)]);
const NOTIFICATIONS: Shape = List(&Obj(&[("type", Text), ("emails", List(&Text))]));
const PROJECT: Shape = Obj(&[("projectId", Text)]);

const ACCESS_POINT: Shape = Obj(&[
    ("type", Text),
    ("port", UUID_REF),
    ("profile", TYPED_REF),
    ("location", Obj(&[("metroCode", Text)])),
    ("linkProtocol", LINK_PROTOCOL),
    ("network", UUID_REF),
    ("router", UUID_REF),
    ("virtualDevice", TYPED_REF),
    ("interface", INTERFACE),
    ("sellerRegion", Text),
    ("authenticationKey", Text),
    ("peeringType", Text),
]);
const SIDE: Shape = Obj(&[("accessPoint", ACCESS_POINT), ("serviceToken", UUID_REF)]);

const CONNECTION: Shape = Obj(&[
    ("type", Text),
    ("name", Text),
    ("bandwidth", Int),
    ("aSide", SIDE),
    ("zSide", SIDE),
    ("redundancy", Obj(&[("priority", Text), ("group", Text)])),
    ("notifications", NOTIFICATIONS),
    ("order", Obj(&[("purchaseOrderNumber", Text)])),
    ("project", PROJECT),
]);

const NETWORK: Shape = Obj(&[
    ("type", Text),
    ("name", Text),
    ("scope", Text),
    ("location", Obj(&[("metroCode", Text), ("region", Text)])),
    ("notifications", NOTIFICATIONS),
    ("project", PROJECT),
]);

const SELECTOR: Shape = Obj(&[
    ("type", Text),
    ("port", UUID_REF),
    ("linkProtocol", LINK_PROTOCOL),
    ("network", UUID_REF),
    ("virtualDevice", TYPED_REF),
    ("interface", INTERFACE),
]);
const TOKEN_SIDE: Shape = Obj(&[("accessPointSelectors", List(&SELECTOR))]);

const SERVICE_TOKEN: Shape = Obj(&[
    ("type", Text),
    ("name", Text),
    ("description", Text),
    ("expirationDateTime", Text),
    (
        "connection",
        Obj(&[
            ("type", Text),
            ("bandwidthLimit", Int),
            ("supportedBandwidths", List(&Int)),
            ("allowRemoteConnection", Bool),
            ("allowCustomBandwidth", Bool),
            ("aSide", TOKEN_SIDE),
            ("zSide", TOKEN_SIDE),
        ]),
    ),
    ("notifications", NOTIFICATIONS),
    ("project", PROJECT),
]);

/// The shape of `change_type`'s create body.
pub const fn shape(change_type: ChangeType) -> &'static Shape {
    match change_type {
        ChangeType::ConnectionCreate => &CONNECTION,
        ChangeType::NetworkCreate => &NETWORK,
        ChangeType::ServiceTokenCreate => &SERVICE_TOKEN,
    }
}

/// A member whose type is not the schema's: where (a JSON pointer), what it must be, what it is.
#[derive(Debug, PartialEq, Eq)]
pub struct WrongType {
    pub pointer: String,
    pub expected: &'static str,
    pub got: &'static str,
}

impl core::fmt::Display for WrongType {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "`{}` must be {}, not {}", self.pointer, self.expected, self.got)
    }
}

/// The first member of `body` whose type is not what Fabric's schema for `change_type` says, in
/// the schema's order. `null` is taken as absent, as Fabric takes it.
pub fn wrong_type(change_type: ChangeType, body: &Value) -> Option<WrongType> {
    walk(shape(change_type), body, &mut String::new())
}

fn walk(shape: &Shape, value: &Value, at: &mut String) -> Option<WrongType> {
    let wrong = |expected| Some(WrongType { pointer: at.clone(), expected, got: kind(value) });
    match shape {
        Int if value.is_i64() || value.is_u64() => None,
        Int => wrong("an integer"),
        Text if value.is_string() => None,
        Text => wrong("a string"),
        Bool if value.is_boolean() => None,
        Bool => wrong("true or false"),
        Obj(members) => {
            let Some(object) = value.as_object() else { return wrong("an object") };
            for (name, member) in members.iter() {
                let Some(v) = object.get(*name).filter(|v| !v.is_null()) else { continue };
                let len = at.len();
                at.push('/');
                at.push_str(name);
                let found = walk(member, v, at);
                at.truncate(len);
                if found.is_some() {
                    return found;
                }
            }
            None
        }
        List(item) => {
            let Some(items) = value.as_array() else { return wrong("an array") };
            for (i, v) in items.iter().enumerate() {
                let len = at.len();
                at.push_str(&format!("/{i}"));
                let found = walk(item, v, at);
                at.truncate(len);
                if found.is_some() {
                    return found;
                }
            }
            None
        }
    }
}

/// A value's JSON type, a fraction told apart from an integer.
fn kind(value: &Value) -> &'static str {
    match value {
        Value::Number(n) if !n.is_i64() && !n.is_u64() => "a number with a fraction or an exponent",
        other => crate::json_kind(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;
    use serde_json::json;

    fn connection() -> Value {
        json!({"type": "EVPL_VC", "name": "n", "bandwidth": 500,
               "aSide": {"accessPoint": {"type": "COLO", "port": {"uuid": "p"},
                                         "linkProtocol": {"type": "DOT1Q", "vlanTag": 300}}},
               "zSide": {"accessPoint": {"type": "SP", "profile": {"uuid": "s"}, "location": {"metroCode": "SV"}}},
               "notifications": [{"type": "ALL", "emails": ["a@b.c"]}]})
    }

    #[test]
    fn a_well_typed_body_passes_and_each_wrong_member_is_named_by_its_pointer() {
        assert_eq!(wrong_type(ChangeType::ConnectionCreate, &connection()), None);
        for (pointer, value, expected, got) in [
            ("/bandwidth", json!("500"), "an integer", "a string"),
            ("/bandwidth", json!(500.0), "an integer", "a number with a fraction or an exponent"),
            ("/aSide/accessPoint/linkProtocol/vlanTag", json!("300"), "an integer", "a string"),
            ("/zSide/accessPoint/location/metroCode", json!(7), "a string", "a number"),
            ("/notifications/0/emails/0", json!(["x"]), "a string", "an array"),
            ("/name", json!({"x": 1}), "a string", "an object"),
        ] {
            let mut body = connection();
            *body.pointer_mut(pointer).unwrap() = value;
            let found = wrong_type(ChangeType::ConnectionCreate, &body).unwrap_or_else(|| panic!("{pointer}"));
            assert_eq!(found, WrongType { pointer: pointer.into(), expected, got });
        }
        let mut nulled = connection();
        nulled["zSide"]["accessPoint"]["location"] = Value::Null;
        assert_eq!(wrong_type(ChangeType::ConnectionCreate, &nulled), None, "null is absent");
        let token = json!({"type": "VC_TOKEN", "connection": {"bandwidthLimit": "100", "supportedBandwidths": [50]}});
        let found = wrong_type(ChangeType::ServiceTokenCreate, &token).unwrap();
        assert_eq!(found.to_string(), "`/connection/bandwidthLimit` must be an integer, not a string");
        let token = json!({"type": "VC_TOKEN", "connection": {"supportedBandwidths": [50, "100"]}});
        assert_eq!(
            wrong_type(ChangeType::ServiceTokenCreate, &token).unwrap().pointer,
            "/connection/supportedBandwidths/1"
        );
        assert_eq!(wrong_type(ChangeType::NetworkCreate, &json!({"location": "DC"})).unwrap().pointer, "/location");
    }
}
