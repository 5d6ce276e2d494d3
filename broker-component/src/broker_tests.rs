//! Native tests of the broker's rules: canonicalisation, spec validation, propose and confirm
//! over a scripted host with a fake clock.

use alloc::string::String;
use serde_json::{Value, json};

use crate::call_tool;
use crate::capability::{ConfirmStatus, Delivery, FabricError, Method, Taken};
use crate::spec::{ChangeType, Spec, request_sha256};
use crate::test_host::FakeHost;

const PORT_A: &str = "c4d9350e-783c-83cd-1ce0-306a5c00a600";
const PORT_Z: &str = "c4d9350e-783c-83cd-1ce0-306a5c00a610";

pub fn connection_spec() -> Value {
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

pub fn network_spec() -> Value {
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

pub fn token_spec() -> Value {
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
    assert!(crate::json_text(&out).len() < 1536, "{} bytes", crate::json_text(&out).len());
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

#[test]
fn accepted_confirm_sends_the_same_body_without_dry_run() {
    let mut host = FakeHost::new();
    let p = propose(&mut host);
    host.push(201, r#"{"uuid":"0a1b2c3d-0000-4000-8000-000000000001","href":"/fabric/v4/connections/0a1b2c3d-0000-4000-8000-000000000001","state":"PROVISIONING"}"#);
    let out = confirm(&mut host, p["confirm_token"].as_str().unwrap()).unwrap();
    let create = host.sent.last().unwrap();
    assert!(create.query.is_empty());
    assert_eq!(create.body.as_deref(), p["compiled_request"]["body_canonical"].as_str());
    assert_eq!(out["executed"], true);
    assert_eq!(out["human_confirmation"]["status"], "accepted");
    assert_eq!(out["created"]["uuid"], "0a1b2c3d-0000-4000-8000-000000000001");
    assert!(out["confirm_checks"].as_object().unwrap().values().all(|v| v == true));
    let (request, context) = &host.prompts[0];
    assert_eq!(request.path, "/fabric/v4/connections");
    assert_eq!(
        Some(request.body.as_str()),
        p["compiled_request"]["body_canonical"].as_str(),
        "the person is asked about the exact body"
    );
    assert_eq!(host.created, std::slice::from_ref(request), "the approval sent exactly what was asked about");
    let field = |k: &str| context.fields.iter().find(|(l, _)| l == k).map(|(_, v)| v.clone()).unwrap();
    assert!(field("price").contains("USD"));
    assert!(field("target").contains("agent-test-1"), "{}", field("target"));
}

#[test]
fn each_answer_other_than_accept_executes_nothing_and_consumes_the_token() {
    for status in [
        ConfirmStatus::Declined,
        ConfirmStatus::Cancelled,
        ConfirmStatus::TimedOut,
        ConfirmStatus::Failed,
        ConfirmStatus::CallCancelled,
        ConfirmStatus::UnsupportedByClient,
    ] {
        let mut host = FakeHost::new();
        host.answer = status;
        let token = propose(&mut host)["confirm_token"].as_str().unwrap().to_string();
        let sent_before = host.sent.len();
        let out = confirm(&mut host, &token).unwrap();
        assert_eq!(out["executed"], false, "{status:?}");
        assert_eq!(out["human_confirmation"]["status"], status.as_str());
        assert_eq!(host.sent.len(), sent_before, "{status:?}: nothing sent");
        let replay = confirm(&mut host, &token).unwrap_err();
        assert_eq!(replay["error"]["kind"], "replayed_token", "{status:?}");
        assert_eq!(replay["confirm_checks"]["not_previously_used"], false);
        assert_eq!(replay["confirm_checks"]["not_expired"], Value::Null, "not evaluated, not failed");
        assert_eq!(replay["confirm_checks"]["request_matches_binding"], Value::Null);
        assert_eq!(replay["error"]["first_attempt"]["human_confirmation"]["status"], status.as_str());
        let message = replay["error"]["message"].as_str().unwrap();
        assert!(message.contains("did not execute") && message.contains("fabric_propose_change"), "{message}");
    }
}

#[test]
fn a_replay_of_an_executed_or_unknown_attempt_says_to_look_before_proposing() {
    let mut host = FakeHost::new();
    let token = propose(&mut host)["confirm_token"].as_str().unwrap().to_string();
    host.push(201, r#"{"uuid":"0a1b2c3d-0000-4000-8000-000000000009","state":"PROVISIONING"}"#);
    confirm(&mut host, &token).unwrap();
    let replay = confirm(&mut host, &token).unwrap_err();
    let message = replay["error"]["message"].as_str().unwrap();
    assert!(message.contains("executed") && message.contains("0a1b2c3d-0000-4000-8000-000000000009"), "{message}");
    assert!(message.contains("Do not propose it again") && message.contains("fabric_get_connection"), "{message}");
    assert!(!replay["error"]["next_step"].as_str().unwrap().contains("fabric_propose_change"));

    let token = propose(&mut host)["confirm_token"].as_str().unwrap().to_string();
    host.answers.push_back(Err(FabricError::Timeout));
    confirm(&mut host, &token).unwrap_err();
    let replay = confirm(&mut host, &token).unwrap_err();
    let message = replay["error"]["message"].as_str().unwrap();
    assert!(message.contains("outcome is unknown") && message.contains("fabric_search_connections"), "{message}");
    assert!(message.contains("before proposing again"), "{message}");
}

#[test]
fn unsupported_client_executes_only_with_the_operator_opt_in() {
    let mut host = FakeHost::new();
    host.answer = ConfirmStatus::UnsupportedByClient;
    host.unconfirmed_allowed = true;
    let token = propose(&mut host)["confirm_token"].as_str().unwrap().to_string();
    host.push(201, r#"{"uuid":"0a1b2c3d-0000-4000-8000-000000000002","state":"PROVISIONING"}"#);
    let out = confirm(&mut host, &token).unwrap();
    assert_eq!(out["executed"], true);
    assert_eq!(out["human_confirmation"]["status"], "unsupported_by_client");
    assert!(out["warning"].as_str().unwrap().contains("WITHOUT human confirmation"));
}

#[test]
fn accept_after_the_ttl_is_accepted_but_not_executed() {
    let mut host = FakeHost::new();
    host.answer_delay = 11 * 60 * 1000;
    let token = propose(&mut host)["confirm_token"].as_str().unwrap().to_string();
    let sent_before = host.sent.len();
    let out = confirm(&mut host, &token).unwrap();
    assert_eq!(out["executed"], false);
    assert_eq!(out["human_confirmation"]["status"], "accepted");
    assert_eq!(out["confirm_checks"]["not_expired"], false);
    assert_eq!(host.sent.len(), sent_before);
}

#[test]
fn token_errors_each_have_their_own_kind_and_checks() {
    let mut host = FakeHost::new();
    let unknown = confirm(&mut host, "chg-0123456789abcdef0123456789abcdef").unwrap_err();
    assert_eq!(unknown["error"]["kind"], "unknown_token");
    assert_eq!(unknown["confirm_checks"]["proposal_exists"], false);
    assert_eq!(unknown["confirm_checks"]["not_evicted"], Value::Null);
    assert_eq!(unknown["error"]["confirm_checks"], unknown["confirm_checks"]);
    assert!(unknown["error"]["next_step"].as_str().unwrap().contains("fabric_propose_change"));
    assert!(unknown["error"]["message"].as_str().unwrap().contains("fabric_propose_change"));

    host.store.insert("chg-00000000000000000000000000000e71".into(), Taken::Evicted);
    let evicted = confirm(&mut host, "chg-00000000000000000000000000000e71").unwrap_err();
    assert_eq!(evicted["error"]["kind"], "evicted_token");
    assert_eq!(evicted["confirm_checks"]["not_evicted"], false);
    assert!(evicted["error"]["message"].as_str().unwrap().contains("fabric_propose_change"));

    let token = propose(&mut host)["confirm_token"].as_str().unwrap().to_string();
    host.now += 10 * 60 * 1000;
    let expired = confirm(&mut host, &token).unwrap_err();
    assert_eq!(expired["error"]["kind"], "expired_token");
    assert_eq!(expired["confirm_checks"]["not_expired"], false);
    assert!(expired["error"]["message"].as_str().unwrap().contains("fabric_propose_change"));
    assert!(host.prompts.is_empty(), "nobody is asked about an expired proposal");
    assert_eq!(confirm(&mut host, &token).unwrap_err()["error"]["kind"], "replayed_token");

    for malformed in ["chg-doesnotexist", "chg-short", "not a token at all", "CHG-0123456789ABCDEF0123456789ABCDEF"] {
        let bad = confirm(&mut host, malformed).unwrap_err();
        assert_eq!(bad["error"]["kind"], "unknown_token", "{malformed}");
        assert_eq!(bad["confirm_checks"]["proposal_exists"], false, "{malformed}");
        assert!(bad["error"]["message"].as_str().unwrap().contains("fabric_propose_change"));
    }
    let wrong_type = confirm(&mut host, "x").map(|_| ()).unwrap_err();
    assert_eq!(wrong_type["error"]["kind"], "unknown_token");
    let args = json!({"confirm_token": 7}).to_string();
    let not_a_string: Value =
        serde_json::from_str(&call_tool(&mut host, "fabric_confirm_change", &args).unwrap_err()).unwrap();
    assert_eq!(not_a_string["error"]["kind"], "invalid_arguments");
}

#[test]
fn a_stored_spec_that_no_longer_matches_its_binding_stops_the_create() {
    let mut host = FakeHost::new();
    let token = propose(&mut host)["confirm_token"].as_str().unwrap().to_string();
    let Some(Taken::Found(bytes)) = host.store.get(&token).cloned() else { panic!() };
    let mut record: Value = serde_json::from_slice(&bytes).unwrap();
    record["request_sha256"] = json!("0".repeat(64));
    host.store.insert(token.clone(), Taken::Found(record.to_string().into_bytes()));
    let sent_before = host.sent.len();
    let err = confirm(&mut host, &token).unwrap_err();
    assert_eq!(err["error"]["kind"], "binding_mismatch");
    assert_eq!(err["confirm_checks"]["request_matches_binding"], false);
    assert_eq!(host.sent.len(), sent_before);
    assert!(host.prompts.is_empty());
}

#[test]
fn an_unknown_outcome_is_reported_and_never_retried() {
    let mut host = FakeHost::new();
    let token = propose(&mut host)["confirm_token"].as_str().unwrap().to_string();
    host.answers.push_back(Err(FabricError::Transport("connection closed before message completed".into())));
    let sent_before = host.sent.len();
    let err = confirm(&mut host, &token).unwrap_err();
    assert_eq!(err["error"]["kind"], "outcome_unknown");
    assert!(err["error"]["message"].as_str().unwrap().contains("Search for it"));
    assert_eq!(err["error"]["result"]["executed"], Value::Null);
    assert_eq!(host.sent.len(), sent_before + 1, "exactly one create, no retry");
}

#[test]
fn a_stateless_first_round_asks_without_consuming_and_the_retry_executes() {
    let mut host = FakeHost::new();
    let token = propose(&mut host)["confirm_token"].as_str().unwrap().to_string();
    host.delivery = Delivery::FirstRound;
    let first = confirm(&mut host, &token).unwrap();
    assert_eq!(first["input_required"], true);
    assert_eq!(host.prompts.len(), 1, "the first round puts the request before the person");
    assert!(matches!(host.store.get(&token), Some(Taken::Found(_))), "nothing consumed");
    assert!(host.approvals.is_empty());

    host.delivery = Delivery::Answered;
    host.push(201, r#"{"uuid":"0a1b2c3d-0000-4000-8000-000000000003"}"#);
    let done = confirm(&mut host, &token).unwrap();
    assert_eq!(
        (done["executed"].clone(), done["human_confirmation"]["status"].clone()),
        (json!(true), json!("accepted"))
    );
    assert_eq!(host.prompts[0].0, host.prompts[1].0, "the retry asks about the same request");
}

#[test]
fn stateless_ttl_rules_expired_first_round_and_late_answer() {
    // an expired proposal: no form in the first round, and nothing consumed
    let mut host = FakeHost::new();
    let token = propose(&mut host)["confirm_token"].as_str().unwrap().to_string();
    host.now += 10 * 60 * 1000;
    host.delivery = Delivery::FirstRound;
    let err = confirm(&mut host, &token).unwrap_err();
    assert_eq!(err["error"]["kind"], "expired_token");
    assert!(host.prompts.is_empty());

    // an answer that arrives after the TTL: accepted, not_expired = false, not executed, consumed
    let mut host = FakeHost::new();
    let token = propose(&mut host)["confirm_token"].as_str().unwrap().to_string();
    host.delivery = Delivery::FirstRound;
    confirm(&mut host, &token).unwrap();
    host.now += 10 * 60 * 1000 + 1;
    host.delivery = Delivery::Answered;
    let sent_before = host.sent.len();
    let late = confirm(&mut host, &token).unwrap();
    assert_eq!(late["executed"], false);
    assert_eq!(late["human_confirmation"]["status"], "accepted");
    assert_eq!(late["confirm_checks"]["not_expired"], false);
    assert_eq!(host.sent.len(), sent_before, "nothing sent");
    assert_eq!(confirm(&mut host, &token).unwrap_err()["error"]["kind"], "replayed_token");
}

#[test]
fn a_host_refusal_to_ask_is_reported_and_consumes_the_token() {
    struct Refusing(FakeHost);
    impl crate::capability::Host for Refusing {
        fn fabric_send(
            &mut self,
            r: crate::capability::FabricRequest,
        ) -> Result<crate::capability::FabricResponse, FabricError> {
            self.0.fabric_send(r)
        }
        fn now_ms(&mut self) -> u64 {
            self.0.now_ms()
        }
        fn delivery(&mut self) -> Delivery {
            Delivery::Blocking
        }
        fn ask(
            &mut self,
            _: crate::capability::CreateRequest,
            _: crate::capability::Prompt,
        ) -> Result<crate::capability::Answer, alloc::string::String> {
            Err("the audit log cannot be written".into())
        }
        fn execute(
            &mut self,
            a: crate::capability::Approval,
        ) -> Result<crate::capability::FabricResponse, FabricError> {
            self.0.execute(a)
        }
        fn store_put(&mut self, r: alloc::vec::Vec<u8>, e: u64, c: u32) -> crate::capability::Stored {
            self.0.store_put(r, e, c)
        }
        fn store_peek(&mut self, t: &str) -> Taken {
            self.0.store_peek(t)
        }
        fn store_take(&mut self, t: &str) -> Taken {
            self.0.store_take(t)
        }
        fn store_settle(&mut self, t: &str, o: alloc::vec::Vec<u8>) {
            self.0.store_settle(t, o)
        }
    }
    let mut inner = FakeHost::new();
    let token = propose(&mut inner)["confirm_token"].as_str().unwrap().to_string();
    let mut host = Refusing(inner);
    let args = json!({"confirm_token": token}).to_string();
    let err: Value = serde_json::from_str(&call_tool(&mut host, "fabric_confirm_change", &args).unwrap_err()).unwrap();
    assert_eq!(err["error"]["kind"], "confirmation_refused");
    assert!(err["error"]["message"].as_str().unwrap().contains("audit log"));
    assert_eq!(err["error"]["result"]["human_confirmation"]["status"], "not_asked");
    assert!(err["confirm_checks"].is_object());
    assert!(host.0.created.is_empty());
}

#[test]
fn a_server_error_on_the_create_is_an_unknown_outcome_and_a_client_error_is_a_refusal() {
    let mut host = FakeHost::new();
    let token = propose(&mut host)["confirm_token"].as_str().unwrap().to_string();
    host.push(502, "<html>bad gateway</html>");
    let err = confirm(&mut host, &token).unwrap_err();
    assert_eq!(err["error"]["kind"], "outcome_unknown");

    let mut host = FakeHost::new();
    let token = propose(&mut host)["confirm_token"].as_str().unwrap().to_string();
    host.push(400, r#"[{"errorCode":"EQ-3142102","errorMessage":"duplicate VLAN"}]"#);
    let err = confirm(&mut host, &token).unwrap_err();
    assert_eq!(err["error"]["kind"], "create_rejected");
    assert_eq!(err["error"]["result"]["executed"], false);
    assert_eq!(err["error"]["result"]["fabric_errors"][0]["errorCode"], "EQ-3142102");
}
