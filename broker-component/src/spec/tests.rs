//! Specs parse strictly and compile to one canonical body.

use super::grammars::*;
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

#[test]
fn a_connection_from_a_cloud_router_must_be_an_ip_vc() {
    let spec = |kind: &str| {
        serde_json::json!({"type": kind, "name": "r", "bandwidth": 50,
            "aSide": {"accessPoint": {"type": "CLOUD_ROUTER", "router": {"uuid": "7c2a5f3e-0b1d-4c6e-9a8f-3d2e1f0a5b01"}}},
            "zSide": {"accessPoint": {"type": "SP", "profile": {"uuid": "9f4b3a7e-1c2d-4e5f-8a9b-0c1d2e3f4a01"}}},
            "notifications": [{"type": "ALL", "emails": ["noc@example.com"]}]})
    };
    let problems = |kind: &str| {
        let mut p = grammar::Problems::default();
        grammar::check(&Kind::Obj(&CONNECTION), &spec(kind), "/spec", &mut p);
        p
    };
    assert!(problems("IP_VC").is_empty());
    assert_eq!(problems("IPWAN_VC").0.len(), 1, "an IPWAN_VC goes to a network");
    let wrong = problems("EVPL_VC").0;
    assert_eq!(wrong.len(), 1, "{wrong:?}");
    assert_eq!(wrong[0].path, "/spec/type");
    assert!(wrong[0].message.contains("IP_VC"), "{wrong:?}");
    let mut from_port = spec("IP_VC");
    from_port["aSide"] =
        serde_json::json!({"accessPoint": {"type": "COLO", "port": {"uuid": "c4d9350e-783c-83cd-1ce0-306a5c00a600"}}});
    let mut p = grammar::Problems::default();
    grammar::check(&Kind::Obj(&CONNECTION), &from_port, "/spec", &mut p);
    assert!(p.0.iter().any(|x| x.path == "/spec/type" && x.message.contains("not COLO")), "{:?}", p.0);
}
