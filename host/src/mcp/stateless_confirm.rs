//! Confirmation for clients on the stateless protocol (2026-07-28): server-to-client requests
//! are not allowed there, so a tool call that asks the person is answered, in its first round,
//! with an `InputRequiredResult` carrying the host-rendered form and a sealed `requestState`.
//! The client retries the same call with the person's answer; the host hands it to the
//! component's question only if that question is byte-for-byte the request of the first round.
//!
//! Nothing here knows a tool by name: the component learns the round from
//! `confirmation.current-delivery`, and the state is bound to the principal, the tool and its exact
//! arguments (for the confirm tool, the token), and seals what the form was about: the request
//! hash it showed, the proposal's token and the validation that proposal is bound to. A retry's
//! answer counts only for a question about that same proposal, and only once: each first round's
//! answer has an id, claimed in the proposal store (shared by every replica when it is Redis) when
//! a retry asks, so a replayed or copied state approves nothing and says why. The state has no
//! lifetime of its own: whether an answer came too late is judged at the retry, by the
//! component's TTL rule and by the host's own (no approval after the binding's 10 minutes).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use futures_util::future::BoxFuture;
use rmcp::model::{
    CallToolResponse, CallToolResult, ElicitRequest, ElicitRequestParams, ElicitResult, InputRequest,
    InputRequiredResult, InputResponses, RequestStateCodec, SealOptions,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};
use tokio_util::sync::CancellationToken;

use super::elicitation::{schema, status_of};
use super::results::ToolError;
use crate::bindings::confirmation::{Delivery, Status};
use crate::capabilities::{Confirmer, Form, PagePending};
use crate::clock::Clock;
use crate::principal::Principal;
use crate::proposals::ProposalStore;

/// The input-request key of the confirmation form.
pub const INPUT_KEY: &str = "confirm";

/// What the sealed `requestState` carries (integrity-protected, readable: no secrets).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Sealed {
    /// The hash the form showed.
    pub request_sha256: String,
    /// The proposal the form was about, and the validation it is bound to.
    pub token: String,
    pub validation: String,
    /// This first round's answer, claimed once by the retry that uses it.
    pub answer: String,
    /// The approval page the round sent the person to, when it sent a link instead of the form.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page: Option<String>,
}

/// The call a sealed state belongs to: who made it, which tool, with which arguments.
#[derive(Clone, Copy)]
pub struct Call<'a> {
    pub principal: &'a Principal,
    pub tool: &'a str,
    pub arguments: &'a Value,
}

impl Call<'_> {
    /// Binds a state to this call (authenticated, not stored in the state).
    ///
    /// The arguments are bound as a JSON value, not as the bytes a client sent: a retry that
    /// reorders keys or escapes a character differently is the same call, and any other value is
    /// not (`1` and `1.0` differ, as they do to the component). The form is the value's text
    /// with every object's keys sorted (`canonical_json`), not serde_json's map order:
    /// `cedar-policy` turns on its `preserve_order`, under which a map keeps the client's order
    /// (the test `the_binding_is_the_arguments_value_whatever_their_key_order` holds it).
    fn associated_data(&self) -> Vec<u8> {
        let text = equinix_broker_contract::canonical_json(self.arguments);
        let arguments = Sha256::digest(text.as_bytes());
        let parts = ["equinix-mcp input round v3", self.principal.as_str(), self.tool, &hex::encode(arguments)];
        serde_json::to_vec(&parts).expect("strings always serialize")
    }
}

/// The sealing key: `EQUINIX_MCP_STATE_KEY` (base64, at least 32 bytes; every HTTP replica must
/// share it) or a random key for this process. A malformed key stops start-up; errors never
/// contain the key.
pub fn codec(configured: Option<&str>) -> anyhow::Result<(RequestStateCodec, &'static str)> {
    use base64::Engine;
    use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD};
    let Some(text) = configured.map(str::trim) else {
        let key: [u8; 32] = rand::random();
        let codec = RequestStateCodec::try_new(key.to_vec())
            .map_err(|e| anyhow::anyhow!("creating the request-state key: {e:?}"))?;
        return Ok((codec, "random per process"));
    };
    let key = [STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD]
        .iter()
        .find_map(|engine| engine.decode(text).ok())
        .ok_or_else(|| anyhow::anyhow!("EQUINIX_MCP_STATE_KEY is not base64 (standard or URL-safe alphabet)"))?;
    if key.len() < RequestStateCodec::MIN_KEY_LENGTH {
        anyhow::bail!(
            "EQUINIX_MCP_STATE_KEY decodes to {} bytes; at least {} are required (e.g. `openssl rand -base64 32`)",
            key.len(),
            RequestStateCodec::MIN_KEY_LENGTH
        );
    }
    let codec =
        RequestStateCodec::try_new(key).map_err(|e| anyhow::anyhow!("EQUINIX_MCP_STATE_KEY is unusable: {e:?}"))?;
    Ok((codec, "EQUINIX_MCP_STATE_KEY"))
}

/// The first round's confirmer: it records the form the component asked about and answers
/// `input-required`; the host then sends that form to the client.
#[derive(Default)]
pub struct FirstRound {
    asked: Mutex<Option<Form>>,
}

impl Confirmer for FirstRound {
    fn delivery(&self) -> Delivery {
        Delivery::FirstRound
    }

    fn confirm<'a>(&'a self, form: &'a Form, _cancel: &'a CancellationToken) -> BoxFuture<'a, Result<Status, String>> {
        *self.asked.lock().unwrap_or_else(|p| p.into_inner()) = Some(form.clone());
        Box::pin(async { Ok(Status::InputRequired) })
    }

    fn input_request(&self) -> Option<Form> {
        self.asked.lock().unwrap_or_else(|p| p.into_inner()).take()
    }
}

/// The first round's answer: the form as an input request and the sealed state.
pub fn input_required(codec: &RequestStateCodec, call: &Call, form: &Form) -> Result<CallToolResponse, String> {
    let sealed = codec
        .seal_json_with(
            &Sealed {
                request_sha256: form.request_sha256.clone(),
                token: form.token.clone(),
                validation: form.validation.clone(),
                answer: hex::encode(rand::random::<[u8; 16]>()),
                page: None,
            },
            &SealOptions::new().associated_data(&call.associated_data()),
        )
        .map_err(|e| format!("sealing the confirmation state failed: {e}"))?;
    let params = ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: form.text.clone(),
        requested_schema: schema(),
    };
    let mut requests = BTreeMap::new();
    requests.insert(INPUT_KEY.to_string(), InputRequest::Elicitation(ElicitRequest::new(params)));
    Ok(InputRequiredResult::new(Some(requests), Some(sealed)).into())
}

/// A round whose person goes to the approval page: the link as a URL-mode input request, and
/// the sealed state naming the page (a retry finds the decision through it).
pub fn page_input_required(
    codec: &RequestStateCodec,
    call: &Call,
    pending: &PagePending,
) -> Result<CallToolResponse, String> {
    let sealed = codec
        .seal_json_with(
            &Sealed {
                request_sha256: pending.request_sha256.clone(),
                token: pending.token.clone(),
                validation: pending.validation.clone(),
                answer: String::new(),
                page: Some(pending.id.clone()),
            },
            &SealOptions::new().associated_data(&call.associated_data()),
        )
        .map_err(|e| format!("sealing the confirmation state failed: {e}"))?;
    let params = ElicitRequestParams::UrlElicitationParams {
        meta: None,
        message: format!(
            "equinix-mcp asks a person to approve ONE create on Equinix Fabric (request_sha256 {}). Open the link, sign \
             in, read the exact request and approve or decline it there; then retry this call.",
            pending.request_sha256
        ),
        url: pending.url.clone(),
        elicitation_id: String::new(),
    };
    let mut requests = BTreeMap::new();
    requests.insert(INPUT_KEY.to_string(), InputRequest::Elicitation(ElicitRequest::new(params)));
    Ok(InputRequiredResult::new(Some(requests), Some(sealed)).into())
}

/// Opens a retry's state, bound to this call.
pub fn open(codec: &RequestStateCodec, call: &Call, state: &str) -> Result<Sealed, Box<CallToolResult>> {
    codec.open_json_with(state, &call.associated_data()).map_err(|e| {
        tracing::info!("refused a requestState: {e:?}");
        let message = "the requestState is invalid or belongs to another principal, tool or arguments; nothing was \
                       done. Call the tool again without requestState";
        Box::new(super::results::structured(ToolError::new("invalid_request_state", message).into_value(), true))
    })
}

/// The retry of a round that showed the form: the person's answer, to be claimed in `store`
/// when it is used.
pub fn answer(sealed: Sealed, responses: Option<&InputResponses>, store: Arc<ProposalStore>, clock: Clock) -> Answered {
    let status = responses
        .and_then(|r| r.get(INPUT_KEY))
        .and_then(|v| serde_json::from_value::<ElicitResult>(v.clone()).ok())
        .map(|r| status_of(&r.action, r.content.as_ref()))
        .unwrap_or(Status::Failed);
    Answered { status, sealed, store, clock }
}

/// The retry's confirmer: the answer collected by the first round's form, which counts only for
/// the question it answered (the same request hash, proposal and validation) and only once.
pub struct Answered {
    pub status: Status,
    pub sealed: Sealed,
    store: Arc<ProposalStore>,
    clock: Clock,
}

impl Answered {
    /// Why this answer does not answer `form`, if it does not.
    fn mismatch(&self, form: &Form) -> Option<String> {
        let sealed = &self.sealed;
        if form.token != sealed.token {
            return Some(format!(
                "the person's answer in requestState was given about proposal {}, and this retry asks about proposal {}; \
                 an answer counts only for the proposal it was asked about, so nothing was approved",
                sealed.token, form.token
            ));
        }
        if form.validation != sealed.validation || form.request_sha256 != sealed.request_sha256 {
            return Some(format!(
                "the person's answer in requestState was given about request {} as validated then, and this retry asks \
                 about request {} under another validation; nothing was approved",
                sealed.request_sha256, form.request_sha256
            ));
        }
        None
    }
}

impl Confirmer for Answered {
    fn delivery(&self) -> Delivery {
        Delivery::Answered
    }

    fn confirm<'a>(&'a self, form: &'a Form, _cancel: &'a CancellationToken) -> BoxFuture<'a, Result<Status, String>> {
        Box::pin(async move {
            if let Some(why) = self.mismatch(form) {
                tracing::warn!(token = %form.token, "refused a stateless answer: {why}");
                return Err(why);
            }
            match self.store.claim_answer(&self.sealed.answer, self.clock.now_ms()).await {
                Ok(true) => Ok(self.status),
                Ok(false) => {
                    let why = format!(
                        "the person's answer in requestState (answer {}) was already used by an earlier retry; one answer \
                         approves at most once, so nothing was approved. Propose again and ask the person again",
                        self.sealed.answer
                    );
                    tracing::warn!(token = %form.token, "refused a replayed stateless answer");
                    Err(why)
                }
                Err(e) => Err(format!("{e}; the person's answer could not be counted, so nothing was approved")),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn fixed_codec() -> RequestStateCodec {
        RequestStateCodec::try_new(vec![7u8; 32]).unwrap()
    }

    fn form(sha: &str) -> Form {
        Form {
            text: format!("request_sha256: {sha}"),
            request_sha256: sha.into(),
            token: "chg-a".into(),
            validation: "v-1".into(),
            validated_at_ms: 0,
            change_type: "connection_create".into(),
            policy_facts: None,
        }
    }

    fn store() -> Arc<ProposalStore> {
        Arc::new(ProposalStore::new())
    }

    /// The retry's confirmer for `form`'s first round, answered `status`, on `store`.
    fn answered(status: Status, asked: &Form, store: &Arc<ProposalStore>) -> Answered {
        let sealed = Sealed {
            request_sha256: asked.request_sha256.clone(),
            token: asked.token.clone(),
            validation: asked.validation.clone(),
            answer: "answer-1".into(),
            page: None,
        };
        Answered { status, sealed, store: store.clone(), clock: Clock::default() }
    }

    fn accept() -> InputResponses {
        let mut responses = InputResponses::new();
        responses.insert(INPUT_KEY.into(), json!({"action": "accept", "content": {"confirm": true}}));
        responses
    }

    #[test]
    fn the_state_is_bound_to_its_call_and_carries_the_answer() {
        let c = fixed_codec();
        let (me, bob) = (Principal::local(), Principal::named("bob"));
        let args = json!({"confirm_token": "chg-a"});
        let call = Call { principal: &me, tool: "fabric_confirm_change", arguments: &args };
        let CallToolResponse::InputRequired(r) = input_required(&c, &call, &form("abc")).unwrap() else {
            panic!("expected InputRequired")
        };
        assert!(serde_json::to_string(&r.input_requests).unwrap().contains("request_sha256: abc"));
        let state = r.request_state.unwrap();
        let retry = |c: &RequestStateCodec, call: &Call, responses: Option<&InputResponses>| {
            open(c, call, &state).map(|sealed| answer(sealed, responses, store(), Clock::default()))
        };
        let answered = retry(&c, &call, Some(&accept())).ok().unwrap();
        assert_eq!((answered.sealed.request_sha256.as_str(), answered.status), ("abc", Status::Accepted));
        assert_eq!((answered.sealed.token.as_str(), answered.sealed.validation.as_str()), ("chg-a", "v-1"));
        assert_eq!(answered.sealed.answer.len(), 32, "a fresh answer id: {:?}", answered.sealed.answer);

        let reordered = json!({"confirm_token": "chg-a"});
        assert!(retry(&c, &Call { arguments: &reordered, ..call }, Some(&accept())).is_ok());
        let other_args = json!({"confirm_token": "chg-b"});
        for (other, why) in [
            (Call { arguments: &other_args, ..call }, "another token"),
            (Call { principal: &bob, ..call }, "another principal"),
            (Call { tool: "other_tool", ..call }, "another tool"),
        ] {
            assert!(retry(&c, &other, Some(&accept())).is_err(), "{why} cannot reuse the state");
        }
        let other_codec = RequestStateCodec::try_new(vec![9u8; 32]).unwrap();
        assert!(retry(&other_codec, &call, Some(&accept())).is_err(), "forged states are refused");
        assert_eq!(retry(&c, &call, None).ok().unwrap().status, Status::Failed);
    }

    #[test]
    fn the_binding_is_the_arguments_value_whatever_their_key_order() {
        let me = Principal::local();
        let bound = |text: &str| {
            let arguments: Value = serde_json::from_str(text).unwrap();
            Call { principal: &me, tool: "t", arguments: &arguments }.associated_data()
        };
        // the same value, however the client wrote it
        let base = bound(r#"{"b":1,"a":{"d":2,"c":[{"f":1,"e":"A"}]}}"#);
        assert_eq!(base, bound(r#"{"a":{"c":[{"e":"\u0041","f":1}],"d":2},"b":1}"#));
        assert_eq!(base, bound(r#"{ "a" : { "d" : 2, "c" : [ { "f" : 1, "e" : "A" } ] }, "b" : 1 }"#));
        // any other value is another call
        for other in [
            r#"{"b":1.0,"a":{"d":2,"c":[{"f":1,"e":"A"}]}}"#,
            r#"{"b":"1","a":{"d":2,"c":[{"f":1,"e":"A"}]}}"#,
            r#"{"b":1,"a":{"d":2,"c":[{"e":"A","f":1}, 0]}}"#,
            r#"{"b":1,"a":{"d":2,"c":[{"f":1,"e":"a"}]}}"#,
            r#"{"b":1,"a":{"d":2,"c":[{"f":1,"e":"A"}]},"x":null}"#,
        ] {
            assert_ne!(base, bound(other), "{other}");
        }
        // why key order does not matter: the bound text sorts every object's keys itself
        let parsed: Value = serde_json::from_str(r#"{"b":1,"a":{"z":[{"y":1,"x":2}],"w":"\u0041"}}"#).unwrap();
        let text = equinix_broker_contract::canonical_json(&parsed);
        assert_eq!(text, r#"{"a":{"w":"A","z":[{"x":2,"y":1}]},"b":1}"#);
    }

    #[test]
    fn a_configured_key_is_base64_of_at_least_32_bytes_and_errors_hide_it() {
        use base64::Engine;
        let good = base64::engine::general_purpose::STANDARD.encode([3u8; 32]);
        assert_eq!(codec(Some(&good)).unwrap().1, "EQUINIX_MCP_STATE_KEY");
        let url_safe = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode([0xfbu8; 40]);
        assert!(codec(Some(&url_safe)).is_ok());
        let short = base64::engine::general_purpose::STANDARD.encode([3u8; 16]);
        let e = codec(Some(&short)).err().unwrap().to_string();
        assert!(e.contains("16 bytes") && !e.contains(&short), "{e}");
        let e = codec(Some("not base64 at all!")).err().unwrap().to_string();
        assert!(e.contains("not base64") && !e.contains("at all"), "{e}");
        assert_eq!(codec(None).unwrap().1, "random per process");
    }

    #[tokio::test]
    async fn an_answer_counts_once_and_only_for_the_question_it_answered() {
        let ct = CancellationToken::new();
        let asked = form("abc");
        for (other, why) in [
            (form("def"), "another request"),
            (Form { token: "chg-b".into(), ..form("abc") }, "another proposal of the same bytes"),
            (Form { validation: "v-2".into(), ..form("abc") }, "another validation"),
        ] {
            let c = answered(Status::Accepted, &asked, &store());
            let refused = c.confirm(&other, &ct).await.unwrap_err();
            assert!(refused.contains("nothing was approved"), "{why}: {refused}");
        }
        let shared = store();
        let c = answered(Status::Accepted, &asked, &shared);
        assert_eq!(c.confirm(&asked, &ct).await, Ok(Status::Accepted));
        let again = c.confirm(&asked, &ct).await.unwrap_err();
        assert!(again.contains("already used"), "{again}");
        // the same answer presented through another confirmer (another retry, another replica)
        let copied = answered(Status::Accepted, &asked, &shared);
        assert!(copied.confirm(&asked, &ct).await.unwrap_err().contains("already used"));
        let first = FirstRound::default();
        assert_eq!(first.confirm(&asked, &ct).await, Ok(Status::InputRequired));
        assert_eq!(first.input_request(), Some(asked));
        assert_eq!(first.input_request(), None, "taken once");
    }
}
