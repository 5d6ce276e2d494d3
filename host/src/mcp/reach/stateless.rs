//! Confirmation for clients on the stateless protocol (2026-07-28): server-to-client requests
//! are not allowed there, so a tool call that asks the person is answered, in its first round,
//! with an `InputRequiredResult` carrying the host-rendered form and a sealed `requestState`.
//! The client retries the same call with the person's answer; the host hands it to the
//! component's question only if that question is byte-for-byte the request of the first round.
//!
//! Nothing here knows a tool by name: the component learns the round from
//! `confirmation.current-delivery`, and the state is bound to its call ([`CallKey`]: the
//! principal, the tool and its exact arguments) and seals what the form was about (its
//! [`Subject`]). A retry's answer counts only for a question about that same subject, and only
//! once: each first round's answer has an id, claimed in the proposal store (shared by every
//! replica when it is Redis) when a retry asks, so a replayed or copied state approves nothing and
//! says why. The state has no lifetime of its own: whether an answer came too late is judged at
//! the retry, by the component's TTL rule and by the host's own (no approval after the binding's
//! 10 minutes).

use std::collections::BTreeMap;
use std::sync::Arc;

use futures_util::future::BoxFuture;
use rmcp::model::{
    CallToolResponse, CallToolResult, ElicitRequest, ElicitRequestParams, ElicitResult, InputRequest,
    InputRequiredResult, InputResponses, RequestStateCodec, SealOptions,
};
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

use super::form::{schema, status_of};
use super::page::{LinkBy, link_request};
use crate::approval::{AnsweredOn, CallKey, Form, Once, Subject};
use crate::bindings::confirmation::{Delivery as Answering, Status};
use crate::capabilities::{Confirmer, NotReached, PagePending, Reached, StoreStep};
use crate::clock::Clock;
use crate::mcp::results::ToolError;
use crate::proposals::ProposalStore;

/// The input-request key of the confirmation form.
pub(crate) const INPUT_KEY: &str = "confirm";

/// What the sealed `requestState` carries (integrity-protected, readable: no secrets).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct OpenedState {
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
    /// The hash of the plan the form showed.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub plan_sha256: String,
}

impl OpenedState {
    /// What the first round asked about.
    pub(crate) fn subject(&self) -> Subject {
        Subject {
            token: self.token.clone(),
            validation: self.validation.clone(),
            request_sha256: self.request_sha256.clone(),
            plan_sha256: self.plan_sha256.clone(),
        }
    }

    /// A round about `subject`: its `answer` to be claimed, or the `page` it sent the person to.
    fn asking(subject: &Subject, answer: String, page: Option<String>) -> OpenedState {
        OpenedState {
            request_sha256: subject.request_sha256.clone(),
            token: subject.token.clone(),
            validation: subject.validation.clone(),
            answer,
            page,
            plan_sha256: subject.plan_sha256.clone(),
        }
    }
}

/// The state key: `configured` (base64, at least 32 bytes; every HTTP replica must share it)
/// with where it came from (an environment variable or a flag, for errors and the banner), or a
/// random key for this process. It seals 2026-07-28 confirmation state ([`codec_of`]) and, through
/// a key derived from it, the approval page's sign-in cookie. A malformed key stops start-up;
/// errors never contain the key.
pub(crate) fn state_key(configured: Option<(&str, &'static str)>) -> anyhow::Result<(Vec<u8>, &'static str)> {
    use base64::Engine;
    use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD};
    let Some((text, from)) = configured.map(|(k, from)| (k.trim(), from)) else {
        return Ok((rand::random::<[u8; 32]>().to_vec(), "random per process"));
    };
    let key = [STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD]
        .iter()
        .find_map(|engine| engine.decode(text).ok())
        .ok_or_else(|| anyhow::anyhow!("the state key of {from} is not base64 (standard or URL-safe alphabet)"))?;
    if key.len() < RequestStateCodec::MIN_KEY_LENGTH {
        anyhow::bail!(
            "the state key of {from} decodes to {} bytes; at least {} are required (e.g. `openssl rand -base64 32`)",
            key.len(),
            RequestStateCodec::MIN_KEY_LENGTH
        );
    }
    codec_of(&key).map_err(|e| anyhow::anyhow!("the state key of {from} is unusable: {e}"))?;
    Ok((key, from))
}

/// The codec sealing 2026-07-28 confirmation state with `key`.
pub(crate) fn codec_of(key: &[u8]) -> anyhow::Result<RequestStateCodec> {
    RequestStateCodec::try_new(key.to_vec()).map_err(|e| anyhow::anyhow!("{e:?}"))
}

/// The first round's confirmer: the form goes to the client as an input request, and the
/// component hears `input-required`.
pub(crate) struct FirstRound;

impl Confirmer for FirstRound {
    fn round(&self) -> Answering {
        Answering::FirstRound
    }

    fn method(&self) -> &'static str {
        "form"
    }

    fn confirm<'a>(
        &'a self,
        _form: &'a Form,
        _cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<Reached, NotReached>> {
        Box::pin(async { Ok(Reached::NeedsInput) })
    }
}

/// The confirmation state could not be sealed (rmcp's codec: its words); the round is not sent.
#[derive(Debug, thiserror::Error)]
#[error("sealing the confirmation state failed: {0}")]
pub(crate) struct NotSealed(String);

/// The first round's answer: the form as an input request and the sealed state.
pub(crate) fn input_required(
    codec: &RequestStateCodec,
    call: &CallKey,
    form: &Form,
) -> Result<CallToolResponse, NotSealed> {
    let state = OpenedState::asking(&form.subject, hex::encode(rand::random::<[u8; 16]>()), None);
    let params = ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: form.text.clone(),
        requested_schema: schema(),
    };
    ask(codec, call, &state, params)
}

/// A round whose person goes to the approval page: the link as a URL-mode input request, and
/// the sealed state naming the page (a retry finds the decision through it).
pub(crate) fn page_input_required(
    codec: &RequestStateCodec,
    call: &CallKey,
    pending: &PagePending,
) -> Result<CallToolResponse, NotSealed> {
    let state = OpenedState::asking(&pending.subject, String::new(), Some(pending.id.clone()));
    let by = if pending.by_url { LinkBy::Url } else { LinkBy::Form };
    let then = match by {
        LinkBy::Url => "; then retry this call.",
        LinkBy::Form => ". Then retry this call (whatever this form says: the decision on the page is what counts).",
    };
    let params = link_request(&pending.subject.request_sha256, by, pending.url.clone(), String::new(), then);
    ask(codec, call, &state, params)
}

/// A round's answer: `params` as the input request, and `state` sealed to this call.
fn ask(
    codec: &RequestStateCodec,
    call: &CallKey,
    state: &OpenedState,
    params: ElicitRequestParams,
) -> Result<CallToolResponse, NotSealed> {
    let sealed = codec
        .seal_json_with(state, &SealOptions::new().associated_data(&call.sealing_data()))
        .map_err(|e| NotSealed(e.to_string()))?;
    let mut requests = BTreeMap::new();
    requests.insert(INPUT_KEY.to_string(), InputRequest::Elicitation(ElicitRequest::new(params)));
    Ok(InputRequiredResult::new(Some(requests), Some(sealed)).into())
}

/// Opens a retry's state, bound to this call.
pub(crate) fn open(codec: &RequestStateCodec, call: &CallKey, state: &str) -> Result<OpenedState, Box<CallToolResult>> {
    codec.open_json_with(state, &call.sealing_data()).map_err(|e| {
        tracing::info!("refused a requestState: {e:?}");
        let message = "the requestState is invalid or belongs to another principal, tool or arguments; nothing was \
                       done. Call the tool again without requestState";
        Box::new(crate::mcp::results::structured(ToolError::new("invalid_request_state", message).into_value(), true))
    })
}

/// The retry of a round that showed the form: the person's answer, to be claimed in `store`
/// when it is used.
pub(crate) fn answer(
    sealed: OpenedState,
    responses: Option<&InputResponses>,
    store: Arc<ProposalStore>,
    clock: Clock,
) -> Answered {
    let status = responses
        .and_then(|r| r.get(INPUT_KEY))
        .and_then(|v| serde_json::from_value::<ElicitResult>(v.clone()).ok())
        .map(|r| status_of(&r.action, r.content.as_ref()))
        .unwrap_or(Status::Failed);
    Answered { status, sealed, store, clock }
}

/// The retry's confirmer: the answer collected by the first round's form, which counts only for
/// the question it answered (the same request hash, proposal and validation) and only once.
pub(crate) struct Answered {
    pub status: Status,
    pub sealed: OpenedState,
    store: Arc<ProposalStore>,
    clock: Clock,
}

impl Confirmer for Answered {
    fn round(&self) -> Answering {
        Answering::Answered
    }

    fn method(&self) -> &'static str {
        "form"
    }

    fn confirm<'a>(
        &'a self,
        form: &'a Form,
        _cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<Reached, NotReached>> {
        Box::pin(async move {
            if let Some(why) = self.sealed.subject().mismatch(&form.subject, AnsweredOn::StatelessRound) {
                tracing::warn!(token = %form.subject.token, "refused a stateless answer: {why}");
                return Err(NotReached::OtherQuestion(why));
            }
            match self.store.claim(Once::StatelessAnswer(&self.sealed.answer), self.clock.now_ms()).await {
                Ok(true) => Ok(Reached::status(self.status)),
                Ok(false) => {
                    tracing::warn!(token = %form.subject.token, "refused a replayed stateless answer");
                    Err(NotReached::AnswerSpent { answer: self.sealed.answer.clone() })
                }
                Err(e) => Err(NotReached::store(StoreStep::CountingAnswer)(e)),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::principal::Principal;
    use serde_json::json;

    fn fixed_codec() -> RequestStateCodec {
        RequestStateCodec::try_new(vec![7u8; 32]).unwrap()
    }

    fn form(sha: &str) -> Form {
        Form {
            text: format!("request_sha256: {sha}"),
            subject: Subject {
                token: "chg-a".into(),
                validation: "v-1".into(),
                request_sha256: sha.into(),
                plan_sha256: String::new(),
            },
            validated_at_ms: 0,
            change_type: "connection_create".into(),
            policy_facts: None,
            plan: None,
        }
    }

    fn store() -> Arc<ProposalStore> {
        Arc::new(ProposalStore::new())
    }

    /// The retry's confirmer for `form`'s first round, answered `status`, on `store`.
    fn answered(status: Status, asked: &Form, store: &Arc<ProposalStore>) -> Answered {
        let sealed = OpenedState {
            request_sha256: asked.subject.request_sha256.clone(),
            token: asked.subject.token.clone(),
            validation: asked.subject.validation.clone(),
            answer: "answer-1".into(),
            page: None,
            plan_sha256: asked.subject.plan_sha256.clone(),
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
        let call = CallKey::new(&me, "fabric_confirm_change", &args);
        let CallToolResponse::InputRequired(r) = input_required(&c, &call, &form("abc")).unwrap() else {
            panic!("expected InputRequired")
        };
        assert!(serde_json::to_string(&r.input_requests).unwrap().contains("request_sha256: abc"));
        let state = r.request_state.unwrap();
        let retry = |c: &RequestStateCodec, call: &CallKey, responses: Option<&InputResponses>| {
            open(c, call, &state).map(|sealed| answer(sealed, responses, store(), Clock::default()))
        };
        let answered = retry(&c, &call, Some(&accept())).ok().unwrap();
        assert_eq!((answered.sealed.request_sha256.as_str(), answered.status), ("abc", Status::Accepted));
        assert_eq!(answered.sealed.subject(), form("abc").subject);
        assert_eq!(answered.sealed.answer.len(), 32, "a fresh answer id: {:?}", answered.sealed.answer);

        let reordered = json!({"confirm_token": "chg-a"});
        let same = CallKey::new(&me, "fabric_confirm_change", &reordered);
        assert!(retry(&c, &same, Some(&accept())).is_ok());
        let other_args = json!({"confirm_token": "chg-b"});
        for (other, why) in [
            (CallKey::new(&me, "fabric_confirm_change", &other_args), "another token"),
            (CallKey::new(&bob, "fabric_confirm_change", &args), "another principal"),
            (CallKey::new(&me, "other_tool", &args), "another tool"),
        ] {
            assert!(retry(&c, &other, Some(&accept())).is_err(), "{why} cannot reuse the state");
        }
        let other_codec = RequestStateCodec::try_new(vec![9u8; 32]).unwrap();
        assert!(retry(&other_codec, &call, Some(&accept())).is_err(), "forged states are refused");
        assert_eq!(retry(&c, &call, None).ok().unwrap().status, Status::Failed);
    }

    #[test]
    fn a_configured_key_is_base64_of_at_least_32_bytes_and_errors_hide_it() {
        use base64::Engine;
        let good = base64::engine::general_purpose::STANDARD.encode([3u8; 32]);
        fn env(key: &str) -> Option<(&str, &'static str)> {
            Some((key, "EQUINIX_MCP_STATE_KEY"))
        }
        assert_eq!(state_key(env(&good)).unwrap(), (vec![3u8; 32], "EQUINIX_MCP_STATE_KEY"));
        let url_safe = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode([0xfbu8; 40]);
        assert_eq!(state_key(Some((&url_safe, "--state-key-file"))).unwrap().1, "--state-key-file");
        let short = base64::engine::general_purpose::STANDARD.encode([3u8; 16]);
        let e = state_key(env(&short)).err().unwrap().to_string();
        assert!(e.contains("16 bytes") && e.contains("EQUINIX_MCP_STATE_KEY") && !e.contains(&short), "{e}");
        let e = state_key(env("not base64 at all!")).err().unwrap().to_string();
        assert!(e.contains("not base64") && !e.contains("at all"), "{e}");
        let (random, from) = state_key(None).unwrap();
        assert_eq!((random.len(), from), (32, "random per process"));
    }

    #[tokio::test]
    async fn an_answer_counts_once_and_only_for_the_question_it_answered() {
        let ct = CancellationToken::new();
        let asked = form("abc");
        let with = |subject: Subject| Form { subject, ..form("abc") };
        for (other, why) in [
            (form("def"), "another request"),
            (with(Subject { token: "chg-b".into(), ..asked.subject.clone() }), "another proposal of the same bytes"),
            (with(Subject { validation: "v-2".into(), ..asked.subject.clone() }), "another validation"),
        ] {
            let c = answered(Status::Accepted, &asked, &store());
            let refused = c.confirm(&other, &ct).await.unwrap_err();
            assert!(matches!(refused, NotReached::OtherQuestion(_)), "{why}: {refused:?}");
            assert!(refused.to_string().contains("nothing was approved"), "{why}: {refused}");
        }
        let shared = store();
        let c = answered(Status::Accepted, &asked, &shared);
        assert_eq!(c.confirm(&asked, &ct).await.unwrap(), Reached::status(Status::Accepted));
        let again = c.confirm(&asked, &ct).await.unwrap_err();
        assert!(matches!(again, NotReached::AnswerSpent { .. }), "{again:?}");
        assert!(again.to_string().contains("already used"), "{again}");
        // the same answer presented through another confirmer (another retry, another replica)
        let copied = answered(Status::Accepted, &asked, &shared);
        assert!(copied.confirm(&asked, &ct).await.unwrap_err().to_string().contains("already used"));
        assert_eq!(FirstRound.confirm(&asked, &ct).await.unwrap(), Reached::NeedsInput);
    }
}
