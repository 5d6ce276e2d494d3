//! Native tests of the broker's rules: canonicalisation, spec validation, propose and confirm
//! over a scripted host with a fake clock.

use alloc::string::String;
use serde_json::{Value, json};

use crate::call_tool;
use crate::capability::{ConfirmStatus, Delivery, FabricError, Method, Taken};
use crate::spec::{ChangeType, Spec, request_sha256};
use crate::test_host::FakeHost;

mod confirming;

const PORT_A: &str = "c4d9350e-783c-83cd-1ce0-306a5c00a600";
const PORT_Z: &str = "c4d9350e-783c-83cd-1ce0-306a5c00a610";

pub(crate) fn connection_spec() -> Value {
    json!({
        "type": "EVPL_VC",
        "name": "agent-test-1",
        "bandwidth": 1000,
        "aSide": {"accessPoint": {"type": "COLO", "port": {"uuid": PORT_A}, "linkProtocol": {"type": "DOT1Q", "vlanTag": 1001}}},
        "zSide": {"accessPoint": {"type": "COLO", "port": {"uuid": PORT_Z}, "linkProtocol": {"type": "DOT1Q", "vlanTag": 1001}}},
        "project": {"projectId": "ac4d34ca-0d9c-4bc2-9aab-1234567abcde"},
        "notifications": [{"type": "ALL", "emails": ["noc@example.com"]}]
    })
}

fn compiled(change: ChangeType, spec: &Value) -> crate::spec::Compiled {
    Spec::parse(change, spec, "/spec").unwrap().compile()
}

#[test]
fn key_order_and_whitespace_do_not_change_the_hash() {
    let a = compiled(ChangeType::ConnectionCreate, &connection_spec());
    let reordered: Value = serde_json::from_str(
        r#"{ "notifications":[{"emails":["noc@example.com"],"type":"ALL"}], "zSide":{"accessPoint":{"linkProtocol":{"vlanTag":1001,"type":"DOT1Q"},"port":{"uuid":"c4d9350e-783c-83cd-1ce0-306a5c00a610"},"type":"COLO"}},
            "project" : {"projectId":"ac4d34ca-0d9c-4bc2-9aab-1234567abcde"},
            "bandwidth": 1e3, "name":"agent-test-1","type":"EVPL_VC",
            "aSide":{"accessPoint":{"type":"COLO","linkProtocol":{"type":"DOT1Q","vlanTag":1001.0},"port":{"uuid":"c4d9350e-783c-83cd-1ce0-306a5c00a600"}}} }"#,
    )
    .unwrap();
    let b = compiled(ChangeType::ConnectionCreate, &reordered);
    assert_eq!(a, b);
    // compact: the only spaces in the body are inside string values (there are none here)
    assert!(!a.body.contains(' ') && !a.body.contains('\n'), "{}", a.body);
    assert!(a.body.starts_with(r#"{"aSide":"#), "keys are sorted: {}", a.body);
    assert_eq!(a.request_sha256, request_sha256(ChangeType::ConnectionCreate, &a.body));
    // recompiling the canonical body is a fixed point
    let again = compiled(ChangeType::ConnectionCreate, &serde_json::from_str(&a.body).unwrap());
    assert_eq!(again, a);
}

#[test]
fn every_field_change_changes_the_hash() {
    let base = compiled(ChangeType::ConnectionCreate, &connection_spec()).request_sha256;
    let edits: &[(&str, Value)] = &[
        ("/name", json!("agent-test-2")),
        ("/bandwidth", json!(500)),
        ("/aSide/accessPoint/linkProtocol/vlanTag", json!(1002)),
        ("/zSide/accessPoint/port/uuid", json!("c4d9350e-783c-83cd-1ce0-306a5c00a611")),
        ("/notifications/0/emails/0", json!("other@example.com")),
        ("/type", json!("EPL_VC")),
    ];
    for (pointer, value) in edits {
        let mut spec = connection_spec();
        *spec.pointer_mut(pointer).unwrap() = value.clone();
        let h = compiled(ChangeType::ConnectionCreate, &spec).request_sha256;
        assert_ne!(h, base, "changing {pointer} must change the hash");
    }
    // the same body under another change type is another request
    let body = compiled(ChangeType::ConnectionCreate, &connection_spec()).body;
    assert_ne!(request_sha256(ChangeType::NetworkCreate, &body), base);
}

fn error_path(change: ChangeType, spec: Value) -> String {
    let err = Spec::parse(change, &spec, "/spec").unwrap_err();
    assert_eq!(err.kind, "invalid_arguments");
    err.details["path"].as_str().unwrap().into()
}

#[test]
fn connection_spec_errors_name_the_json_path() {
    let mut s = connection_spec();
    s["aSide"]["accessPoint"]["linkProtocol"]["vlanTag"] = json!(5000);
    assert_eq!(error_path(ChangeType::ConnectionCreate, s), "/spec/aSide/accessPoint/linkProtocol/vlanTag");
    let mut s = connection_spec();
    s["zSide"]["accessPoint"]["prot"] = json!({"uuid": PORT_Z});
    assert_eq!(error_path(ChangeType::ConnectionCreate, s), "/spec/zSide/accessPoint/prot");
    let mut s = connection_spec();
    s["bandwidth"] = json!("1000");
    assert_eq!(error_path(ChangeType::ConnectionCreate, s), "/spec/bandwidth");
    let mut s = connection_spec();
    s.as_object_mut().unwrap().remove("notifications");
    assert_eq!(error_path(ChangeType::ConnectionCreate, s), "/spec/notifications");
    let mut s = connection_spec();
    s["aSide"]["accessPoint"]["port"]["uuid"] = json!("not-a-uuid");
    assert_eq!(error_path(ChangeType::ConnectionCreate, s), "/spec/aSide/accessPoint/port/uuid");
    let mut s = connection_spec();
    s["notifications"][0]["emails"][0] = json!("nobody");
    assert_eq!(error_path(ChangeType::ConnectionCreate, s), "/spec/notifications/0/emails/0");
    let mut s = connection_spec();
    s["aSide"]["accessPoint"]["linkProtocol"] = json!({"type": "QINQ", "vlanTag": 5});
    assert_eq!(error_path(ChangeType::ConnectionCreate, s), "/spec/aSide/accessPoint/linkProtocol");
}

pub(crate) fn network_spec() -> Value {
    json!({"type": "EVPLAN", "name": "agent-net-1", "scope": "REGIONAL", "location": {"region": "EMEA"},
           "project": {"projectId": "ac4d34ca-0d9c-4bc2-9aab-1234567abcde"},
           "notifications": [{"type": "ALL", "emails": ["noc@example.com"]}]})
}

#[test]
fn network_spec_errors_name_the_json_path() {
    assert!(Spec::parse(ChangeType::NetworkCreate, &network_spec(), "/spec").is_ok());
    let mut s = network_spec();
    s.as_object_mut().unwrap().remove("location");
    assert_eq!(error_path(ChangeType::NetworkCreate, s), "/spec/location");
    let mut s = network_spec();
    s["scope"] = json!("PLANETARY");
    assert_eq!(error_path(ChangeType::NetworkCreate, s), "/spec/scope");
    let mut s = network_spec();
    s["bandwidth"] = json!(10);
    assert_eq!(error_path(ChangeType::NetworkCreate, s), "/spec/bandwidth");
}

pub(crate) fn token_spec() -> Value {
    json!({"type": "VC_TOKEN", "name": "agent-token-1", "expirationDateTime": "2027-01-18T06:43:49.980Z",
           "connection": {"type": "EVPL_VC", "bandwidthLimit": 50, "allowRemoteConnection": false,
               "aSide": {"accessPointSelectors": [{"type": "COLO", "port": {"uuid": PORT_A}, "linkProtocol": {"type": "DOT1Q", "vlanTag": 1399}}]}},
           "notifications": [{"type": "NOTIFICATION", "emails": ["noc@example.com"]}]})
}

#[test]
fn service_token_spec_errors_name_the_json_path() {
    let c = compiled(ChangeType::ServiceTokenCreate, &token_spec());
    assert!(c.body.contains(r#""connection":{"aSide""#), "the key is `connection`: {}", c.body);
    let mut s = token_spec();
    s["expirationDateTime"] = json!("next tuesday");
    assert_eq!(error_path(ChangeType::ServiceTokenCreate, s), "/spec/expirationDateTime");
    let mut s = token_spec();
    s["connection"]["aSide"]["accessPointSelectors"][0]["type"] = json!("SP");
    assert_eq!(error_path(ChangeType::ServiceTokenCreate, s), "/spec/connection/aSide/accessPointSelectors/0/type");
    let mut s = token_spec();
    s["serviceTokenConnection"] = s["connection"].clone();
    assert_eq!(error_path(ChangeType::ServiceTokenCreate, s), "/spec/serviceTokenConnection");
}

// ---- propose / confirm over the scripted host ----

const PRICE: &str = r#"{"pagination":{"offset":0,"limit":20,"total":1},"data":[{"type":"VIRTUAL_CONNECTION_PRODUCT","code":"ECX00015.PROD","currency":"USD","termLength":1,"charges":[{"type":"MONTHLY_RECURRING","price":300}]}]}"#;

fn propose(host: &mut FakeHost) -> Value {
    host.push(200, &connection_spec().to_string());
    host.push(200, PRICE);
    let args = json!({"change_type": "connection_create", "spec": connection_spec()}).to_string();
    serde_json::from_str(&call_tool(host, "fabric_propose_change", &args).unwrap()).unwrap()
}

fn confirm(host: &mut FakeHost, token: &str) -> Result<Value, Value> {
    let args = json!({"confirm_token": token}).to_string();
    call_tool(host, "fabric_confirm_change", &args)
        .map(|s| serde_json::from_str(&s).unwrap())
        .map_err(|s| serde_json::from_str(&s).unwrap())
}

#[test]
fn propose_runs_the_dry_run_on_the_exact_body_then_prices_and_stores() {
    let mut host = FakeHost::new();
    let out = propose(&mut host);
    let dry = &host.sent[0];
    assert_eq!((dry.method, dry.path.as_str()), (Method::Post, "/fabric/v4/connections"));
    assert_eq!(dry.query, [("dryRun".into(), "true".into())]);
    assert_eq!(dry.body.as_deref(), out["compiled_request"]["body_canonical"].as_str());
    assert_eq!(host.sent[1].path, "/fabric/v4/prices/search");
    assert_eq!(out["price_context"]["status"], "estimated");
    assert_eq!(out["price_context"]["monthly_recurring"], 300.0);
    assert!(out.get("evicted_proposals").is_none(), "said only when something was evicted");
    assert_eq!(out["expires_at"], crate::time::format_rfc3339_ms(host.now + 600_000));
    let body = out["compiled_request"]["body_canonical"].as_str().unwrap();
    assert_eq!(out["request_sha256"], request_sha256(ChangeType::ConnectionCreate, body));
    // the body once: not as an object, not echoed back by the dry run
    assert!(out["compiled_request"].get("body").is_none() && out.get("validated_entity").is_none());
    assert_eq!(out["dry_run"]["answer_adds"], json!({}), "the echo adds nothing here");
    assert!(crate::json::json_text(&out).len() < 1536, "{} bytes", crate::json::json_text(&out).len());
}

#[test]
fn names_come_from_the_dry_run_answer_and_only_the_missing_ones_are_read() {
    let mut host = FakeHost::new();
    let mut answer = connection_spec();
    answer["aSide"]["accessPoint"]["port"]["name"] = json!("DC-PRI-01");
    answer["uuid"] = json!("11111111-2222-3333-4444-555555555555"); // the new connection's own
    host.push(200, &answer.to_string());
    host.push(200, PRICE);
    host.push(200, &json!({"uuid": PORT_Z, "name": "DC-SEC-02"}).to_string());
    let args = json!({"change_type": "connection_create", "spec": connection_spec()}).to_string();
    let out: Value = serde_json::from_str(&call_tool(&mut host, "fabric_propose_change", &args).unwrap()).unwrap();
    assert_eq!(out["touches"], json!({PORT_A: "DC-PRI-01", PORT_Z: "DC-SEC-02"}));
    // each name said once: `touches` has the port's, so the dry run's additions leave it out
    assert_eq!(out["dry_run"]["answer_adds"], json!({"uuid": "11111111-2222-3333-4444-555555555555"}));
    let gets: alloc::vec::Vec<&str> =
        host.sent.iter().filter(|r| r.method == Method::Get).map(|r| r.path.as_str()).collect();
    assert_eq!(gets, [alloc::format!("/fabric/v4/ports/{PORT_Z}")], "no GET for a name the answer gave");
}

#[test]
fn a_dry_run_rejection_is_returned_intact_and_mints_nothing() {
    let mut host = FakeHost::answering(
        400,
        r#"[{"errorCode":"EQ-3142102","errorMessage":"duplicate VLAN","additionalInfo":[{"property":"/aSide/accessPoint/linkProtocol"}]}]"#,
    );
    let args = json!({"change_type": "connection_create", "spec": connection_spec()}).to_string();
    let err: Value = serde_json::from_str(&call_tool(&mut host, "fabric_propose_change", &args).unwrap_err()).unwrap();
    assert_eq!(err["error"]["kind"], "fabric_error");
    assert_eq!(err["error"]["fabric_errors"][0]["additionalInfo"][0]["property"], "/aSide/accessPoint/linkProtocol");
    assert!(host.store.is_empty());
    assert_eq!(host.sent.len(), 1, "no price search after a failed dry run");
}

#[test]
fn dry_run_not_supported_is_cannot_propose_safely() {
    let mut host = FakeHost::answering(
        400,
        r#"[{"errorCode":"EQ-3142411","errorMessage":"Dry run is not supported for this connection type"}]"#,
    );
    let args = json!({"change_type": "connection_create", "spec": connection_spec()}).to_string();
    let err: Value = serde_json::from_str(&call_tool(&mut host, "fabric_propose_change", &args).unwrap_err()).unwrap();
    assert_eq!(err["error"]["kind"], "cannot_propose_safely");
    assert!(host.store.is_empty());
}

#[test]
fn a_price_failure_never_blocks_the_proposal() {
    let mut host = FakeHost::new();
    host.push(200, &connection_spec().to_string());
    host.push(500, r#"[{"errorCode":"EQ-3038030","errorMessage":"Internal Server Error"}]"#);
    let args = json!({"change_type": "connection_create", "spec": connection_spec()}).to_string();
    let out: Value = serde_json::from_str(&call_tool(&mut host, "fabric_propose_change", &args).unwrap()).unwrap();
    assert_eq!(out["price_context"]["status"], "unpriced");
    assert!(out["price_context"]["reason"].as_str().unwrap().contains("EQ-3038030"));
    assert!(out["confirm_token"].as_str().unwrap().starts_with("chg-"));
}

#[test]
fn networks_and_tokens_are_honestly_unpriced() {
    let mut host = FakeHost::answering(201, &network_spec().to_string());
    let args = json!({"change_type": "network_create", "spec": network_spec()}).to_string();
    let out: Value = serde_json::from_str(&call_tool(&mut host, "fabric_propose_change", &args).unwrap()).unwrap();
    assert_eq!(out["price_context"]["status"], "unpriced");
    assert_eq!(host.sent.len(), 1, "no price search for a network");
}
