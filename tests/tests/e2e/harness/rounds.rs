//! The 2026-07-28 stateless confirmation driven round by round, so one client can answer
//! accept, decline, tamper with the state, replay it and retry too late. Shared by the stdio and
//! HTTP tests: the rules must not depend on the transport.

use std::collections::BTreeMap;

use rmcp::model::{CallToolRequestParams, CallToolResponse, CallToolResult, InputResponses, ProtocolVersion};
use rmcp::service::{RoleClient, RunningService};
use serde_json::{Value, json};

use super::{TestClient, advance_clock, confirm_request, creates, is_error, propose_on, structured};

type Client = RunningService<RoleClient, TestClient>;

/// The first round of the confirm of `token`: must be `input_required` with a form showing the
/// request hash.
pub async fn first_round(client: &Client, token: &str, request_sha256: &str) -> String {
    first_round_of(client, confirm_request(token), request_sha256).await
}

/// The first round of any call that asks (a component's own confirm tool): the sealed state.
pub async fn first_round_of(client: &Client, call: CallToolRequestParams, request_sha256: &str) -> String {
    let r = client.call_tool_once(call).await.unwrap();
    let CallToolResponse::InputRequired(ir) = r else { panic!("expected input_required, got {r:?}") };
    let form = serde_json::to_value(ir.input_requests.as_ref().unwrap()).unwrap();
    assert!(form.to_string().contains(request_sha256), "the form shows the hash: {form}");
    ir.request_state.expect("a sealed requestState")
}

/// The retry of the confirm of `token` carrying `answer` (a raw elicitation result) and `state`.
pub async fn retry(client: &Client, token: &str, state: &str, answer: Value) -> CallToolResult {
    retry_of(client, confirm_request(token), state, answer).await
}

/// The retry of any call carrying `answer` and `state`, as a client (or a proxy, or an SDK's
/// transport retry) sends it.
pub async fn retry_of(
    client: &Client,
    mut params: CallToolRequestParams,
    state: &str,
    answer: Value,
) -> CallToolResult {
    params.request_state = Some(state.to_string());
    let mut responses: InputResponses = BTreeMap::new();
    responses.insert("confirm".into(), answer);
    params.input_responses = Some(responses);
    match client.call_tool_once(params).await.unwrap() {
        CallToolResponse::Complete(r) => r,
        other => panic!("expected a complete result, got {other:?}"),
    }
}

pub fn accept() -> Value {
    json!({"action": "accept", "content": {"confirm": true}})
}

/// Accept, replayed retry, decline, tampered state, another token's state, retry after the TTL.
pub async fn stateless_round_trips(client: &Client, sim: &str) {
    assert_eq!(client.peer_info().unwrap().protocol_version, ProtocolVersion::V_2026_07_28);
    let before = creates(sim, "connections").await;

    // accept: executes exactly once
    let p = propose_on(client, "mrtr-accept", 1501).await;
    let (token, sha) = (p["confirm_token"].as_str().unwrap(), p["request_sha256"].as_str().unwrap());
    let state = first_round(client, token, sha).await;
    let again = first_round(client, token, sha).await;
    assert!(!again.is_empty(), "looking again does not consume the token");
    let done = retry(client, token, &state, accept()).await;
    let out = structured(&done);
    assert!(!is_error(&done), "{out}");
    assert_eq!(
        (out["executed"].clone(), out["human_confirmation"]["status"].clone()),
        (json!(true), json!("accepted"))
    );
    assert_eq!(creates(sim, "connections").await, before + 1);

    // the same retry again: the token is spent, nothing more is sent
    let replay = retry(client, token, &state, accept()).await;
    assert!(is_error(&replay));
    assert_eq!(structured(&replay)["error"]["kind"], "replayed_token");

    // decline: consumed, nothing sent
    let p = propose_on(client, "mrtr-decline", 1502).await;
    let (token, sha) = (p["confirm_token"].as_str().unwrap(), p["request_sha256"].as_str().unwrap());
    let state = first_round(client, token, sha).await;
    let declined = retry(client, token, &state, json!({"action": "decline"})).await;
    let out = structured(&declined);
    assert_eq!(
        (out["executed"].clone(), out["human_confirmation"]["status"].clone()),
        (json!(false), json!("declined"))
    );

    // the other answers of the table: each consumes the token and sends nothing
    for (vlan, answer, status) in [
        (1510, json!({"action": "accept", "content": {"confirm": false}}), "declined"),
        (1511, json!({"action": "cancel"}), "cancelled"),
        (1512, json!({"garbled": true}), "failed"),
    ] {
        let p = propose_on(client, &format!("mrtr-{status}"), vlan).await;
        let (token, sha) = (p["confirm_token"].as_str().unwrap(), p["request_sha256"].as_str().unwrap());
        let state = first_round(client, token, sha).await;
        let out = structured(&retry(client, token, &state, answer).await);
        assert_eq!(
            (out["executed"].clone(), out["human_confirmation"]["status"].clone()),
            (json!(false), json!(status)),
            "{out}"
        );
        let replay = retry(client, token, &state, accept()).await;
        assert_eq!(structured(&replay)["error"]["kind"], "replayed_token", "{status}: the token is consumed");
    }
    assert_eq!(creates(sim, "connections").await, before + 1);

    // a tampered state and another token's state: one generic error, the token stays pending
    let p = propose_on(client, "mrtr-tamper", 1503).await;
    let (token, sha) = (p["confirm_token"].as_str().unwrap().to_string(), p["request_sha256"].as_str().unwrap());
    let state = first_round(client, &token, sha).await;
    let mut tampered = state.clone().into_bytes();
    let at = tampered.len() / 2;
    tampered[at] = if tampered[at] == b'A' { b'B' } else { b'A' };
    let tampered = String::from_utf8(tampered).unwrap();
    let other = propose_on(client, "mrtr-other", 1504).await;
    let other_token = other["confirm_token"].as_str().unwrap();
    let other_state = first_round(client, other_token, other["request_sha256"].as_str().unwrap()).await;
    for (forged, why) in [(tampered.as_str(), "tampered"), (other_state.as_str(), "another token's")] {
        let r = retry(client, &token, forged, accept()).await;
        assert!(is_error(&r), "{why} state accepted");
        assert_eq!(structured(&r)["error"]["kind"], "invalid_request_state", "{why}");
    }
    assert_eq!(creates(sim, "connections").await, before + 1, "nothing sent for forged states");
    first_round(client, &token, sha).await;

    // an answer that arrives after the proposal's TTL: accepted, not_expired = false, nothing sent,
    // the token consumed; the sealed state's own age decides nothing
    advance_clock(sim, 10 * 60 * 1000 + 1).await;
    let late = retry(client, &token, &state, accept()).await;
    let out = structured(&late);
    assert!(!is_error(&late), "{out}");
    assert_eq!(
        (
            out["executed"].clone(),
            out["human_confirmation"]["status"].clone(),
            out["confirm_checks"]["not_expired"].clone()
        ),
        (json!(false), json!("accepted"), json!(false)),
        "{out}"
    );
    assert_eq!(creates(sim, "connections").await, before + 1);
    let replay = retry(client, &token, &state, accept()).await;
    assert_eq!(structured(&replay)["error"]["kind"], "replayed_token", "the late answer consumed the token");

    // an expired proposal: expired_token in the first round, and no form
    let p = propose_on(client, "mrtr-expired", 1505).await;
    let token = p["confirm_token"].as_str().unwrap();
    advance_clock(sim, 10 * 60 * 1000 + 1).await;
    let r = client.call_tool_once(confirm_request(token)).await.unwrap();
    let CallToolResponse::Complete(r) = r else { panic!("an expired proposal shows no form: {r:?}") };
    assert!(is_error(&r));
    assert_eq!(structured(&r)["error"]["kind"], "expired_token");
    assert_eq!(structured(&r)["confirm_checks"]["not_expired"], false);
    assert_eq!(creates(sim, "connections").await, before + 1);
}
