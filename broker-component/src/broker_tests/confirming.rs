//! Confirming: every answer of the person, the token rules, stateless rounds and outcomes.

use super::*;

#[test]
pub(super) fn accepted_confirm_sends_the_same_body_without_dry_run() {
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
    // the proposal is bound to the dry run of these bytes, and the question names its token
    let token = p["confirm_token"].as_str().unwrap();
    assert_eq!(host.bound[token], p["request_sha256"].as_str().unwrap());
    assert_eq!(host.asked_tokens, [token]);
}

#[test]
pub(super) fn a_denied_dry_run_mints_no_token_and_says_policy_denied() {
    let mut host = FakeHost::new();
    host.answers.push_back(Err(FabricError::Denied("forbidden by \"at-most-1-gbps\"".into())));
    let args = serde_json::json!({"change_type": "connection_create", "spec": connection_spec()}).to_string();
    let err: Value = serde_json::from_str(&call_tool(&mut host, "fabric_propose_change", &args).unwrap_err()).unwrap();
    assert_eq!(err["error"]["kind"], "policy_denied", "{err}");
    assert!(err["error"]["message"].as_str().unwrap().contains("at-most-1-gbps"), "{err}");
    assert!(host.store.is_empty(), "no proposal stored");
}

#[test]
pub(super) fn each_answer_other_than_accept_executes_nothing_and_consumes_the_token() {
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
        // a client that cannot show the form is not sent round the same loop again
        let next = out["next_step"].as_str().unwrap();
        let loops = next.contains("confirm the new token");
        assert_eq!(loops, status != ConfirmStatus::UnsupportedByClient, "{status:?}: {next}");
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
pub(super) fn a_replay_of_an_executed_or_unknown_attempt_says_to_look_before_proposing() {
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
pub(super) fn unsupported_client_executes_only_with_the_operator_opt_in() {
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
pub(super) fn accept_after_the_ttl_is_accepted_but_not_executed() {
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
pub(super) fn token_errors_each_have_their_own_kind_and_checks() {
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
pub(super) fn a_stored_spec_that_no_longer_matches_its_binding_stops_the_create() {
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
pub(super) fn an_unknown_outcome_is_reported_and_never_retried() {
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
pub(super) fn a_stateless_first_round_asks_without_consuming_and_the_retry_executes() {
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
pub(super) fn stateless_ttl_rules_expired_first_round_and_late_answer() {
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
pub(super) fn a_host_refusal_to_ask_is_reported_and_consumes_the_token() {
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
            _: &str,
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
        fn store_put(
            &mut self,
            r: alloc::vec::Vec<u8>,
            v: &str,
            e: u64,
            c: u32,
        ) -> Result<crate::capability::Stored, alloc::string::String> {
            self.0.store_put(r, v, e, c)
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
pub(super) fn a_server_error_on_the_create_is_an_unknown_outcome_and_a_client_error_is_a_refusal() {
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
