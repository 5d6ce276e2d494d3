//! The official create examples parse as specs and compile to the same body; the broker's enums
//! are the contract's.

use super::*;

/// The official request examples of the three create endpoints (Fabric v4 4.31), and why the few
/// that do not parse are wrong themselves.
const EXAMPLES_REFUSED: &[(&str, &str)] = &[
    ("Colo2Colo-Dot1q2Dot1q-WithGeoScope", "expected a uuid"),
    ("Vd2Colo-WithGeoScope", "expected a uuid"),
    ("Colo2ServiceToken", "expected a uuid"),
    ("Connection-Colo2Sp-GenericDryRunCreate", "expected a uuid"),
    ("Colo2Sp-Generic-WithGeoScope", "expected an array"),
    ("IX2Sp-PublicPeering_VC", "/bandwidth: is required"),
    ("Vd2Colo-vlanTag", "unknown field"),
    ("Colo2Sp-LMaaS-Primary", "unknown field"),
    ("NetworkDryRunCreate", "expected a uuid"),
    // a VXLAN VNI in vlanTag: the contract's SimplifiedLinkProtocol caps vlanTag at 4092 (the SDK refuses it too)
    ("AsideTokenWithVxlan", "expected an integer from 2 to 4092"),
    ("ZsideTokenWithDot1Q", "expected an integer, got a string"),
    ("ZsideTokenWithVxlan", "expected an integer, got a string"),
    // the contract lets a token omit its connection type; the broker asks for it, so the person sees it
    ("AsideFCRWithZsidePortBasedToken", "/spec/connection/type: is required"),
];

#[test]
fn the_official_create_examples_parse_as_specs_and_compile_to_the_same_body() {
    let text = std::fs::read_to_string(repo().join("tests/contract/create-examples.json")).unwrap();
    let examples: Value = serde_json::from_str(&text).unwrap();
    let mut wrong = Vec::new();
    let mut parsed = 0;
    for e in examples["examples"].as_array().unwrap() {
        let name = e["name"].as_str().unwrap();
        let endpoint = e["endpoint"].as_str().unwrap();
        let change = ChangeType::ALL
            .into_iter()
            .find(|c| c.path().rsplit('/').next() == Some(endpoint))
            .unwrap_or_else(|| panic!("{name}: no change type creates at {endpoint:?}"));
        let excused = EXAMPLES_REFUSED
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, why)| *why)
            // the IBM examples give additionalInfo values as numbers and booleans; the contract says strings
            .or_else(|| name.to_lowercase().contains("ibm").then_some("expected a string"));
        match (Spec::parse(change, &e["value"], "/spec"), excused) {
            (Ok(spec), None) => {
                parsed += 1;
                // the compiled body says what the example says (numbers as integers)
                let same: Value = serde_json::from_str(&spec.compile().body).unwrap();
                let original: Value = serde_json::from_str(&serde_json::to_string(&e["value"]).unwrap()).unwrap();
                if !equivalent(&same, &original) {
                    wrong.push(format!("{name}: compiles to another body"));
                }
            }
            (Ok(_), Some(why)) => wrong.push(format!("{name}: listed as refused ({why}) but parses")),
            (Err(err), Some(why)) if err.to_json().contains(why) => {}
            (Err(err), _) => wrong.push(format!("{name}: {}", err.to_json())),
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert!(parsed >= 84, "only {parsed} of the official examples parse");
}

#[test]
fn each_enum_the_broker_uses_is_the_contracts() {
    use equinix_broker_component::fabric_enums as ours;
    let lists: &[(&str, &[&str])] = &[
        ("ConnectionType", ours::CONNECTION_TYPES),
        ("AccessPointType", ours::ACCESS_POINT_TYPES),
        ("SimplifiedNotification.type", ours::NOTIFICATION_TYPES),
        ("PortState", ours::PORT_STATES),
        ("LinkProtocolType", ours::LINK_PROTOCOLS),
        ("ServiceTokenConnection.type", ours::TOKEN_CONNECTION_TYPES),
        ("AccessPointSelector.type", ours::SELECTOR_TYPES),
        ("NetworkType", ours::NETWORK_TYPES),
        ("NetworkScope", ours::NETWORK_SCOPES),
        ("NetworkState", ours::NETWORK_STATES),
        ("ServiceTokenState", ours::TOKEN_STATES),
        ("ServiceTokenType", ours::TOKEN_TYPES),
        ("GeoScopeType", ours::GEO_SCOPES),
        ("PeeringType", ours::PEERING_TYPES),
        ("Presence", ours::PRESENCES),
        ("ServiceProfileTypeEnum", ours::PROFILE_TYPES),
        ("ServiceProfileVisibilityEnum", ours::PROFILE_VISIBILITIES),
        ("VirtualConnectionPriceConnectionType", ours::PRICED_CONNECTION_TYPES),
        ("VirtualConnectionPriceAccessPointType", ours::PRICED_ACCESS_POINT_TYPES),
        ("ConnectionState", ours::CONNECTION_STATES),
        ("CloudRouterAccessPointState", ours::ROUTER_STATES),
        ("RouterPackageCode", ours::ROUTER_PACKAGES),
        ("RouteTableEntryType", ours::ROUTE_TYPES),
        ("ConnectionRouteTableEntry.state", ours::CONNECTION_ROUTE_STATES),
        ("RouteFiltersBaseType", ours::ROUTE_FILTER_TYPES),
        ("RouteFilterState", ours::POLICY_STATES),
        ("RouteAggregationState", ours::POLICY_STATES),
    ];
    let names: Vec<&str> = lists.iter().map(|(n, _)| *n).collect();
    let python = repo().join("target/contract-venv/bin/python");
    assert!(python.exists(), "run .ci/install-contract-sdk first");
    let out = std::process::Command::new(python)
        .args([repo().join("tests/contract/check.py").to_str().unwrap(), "--enums", &names.join(",")])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let sdk: BTreeMap<String, Vec<String>> = serde_json::from_slice(&out.stdout).unwrap();
    for (name, list) in lists {
        let mut theirs: Vec<&str> = sdk[*name].iter().map(String::as_str).filter(|v| !v.is_empty()).collect();
        if *name == "ConnectionState" {
            // real Fabric answers these too (Equinix's own examples, the Go SDK): kept on purpose
            theirs.extend(["PROVISIONED", "REPROVISIONING"]);
        }
        let mut ours: Vec<&str> = list.to_vec();
        theirs.sort();
        ours.sort();
        assert_eq!(ours, theirs, "{name} differs from the contract");
    }
}

/// JSON equality with numbers compared by value (`1000` and `1000.0` alike).
fn equivalent(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(p, q)| equivalent(p, q)),
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| equivalent(v, w)))
        }
        _ => a == b,
    }
}
