//! Confirmation for clients on the stateless protocol (2026-07-28): server-to-client requests
//! are not allowed there, so `fabric_confirm_change` answers its first round with an
//! `InputRequiredResult` carrying the form and a sealed `requestState` that binds the token and
//! the request SHA-256. The retry carries the person's answer; only then does the component take
//! (consume) the token, and the answer counts only for the request it was shown.

use std::collections::BTreeMap;
use std::sync::Arc;

use rmcp::model::{
    CallToolResponse, CallToolResult, ElicitRequest, ElicitRequestParams, ElicitResult, InputRequest,
    InputRequiredResult, InputResponses, RequestStateCodec, SealOptions,
};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::elicitation::{render, schema, status_of};
use crate::capabilities::confirmation::{BoxFuture, Confirmer, Prompt};
use crate::component::bindings::confirmation::Status;

/// The input-request key of the confirmation form.
pub const INPUT_KEY: &str = "confirm";

/// What the sealed `requestState` carries (integrity-protected, readable: no secrets).
#[derive(Serialize, Deserialize)]
pub struct Sealed {
    pub token: String,
    pub request_sha256: String,
}

/// Binds a sealed state to the tool and the token it was minted for.
pub fn associated_data(token: &str) -> Vec<u8> {
    format!("equinix-mcp|fabric_confirm_change|{token}").into_bytes()
}

/// The first round: the form and the sealed state, from the component's preview.
pub fn first_round(
    codec: &RequestStateCodec,
    token: &str,
    preview: &Value,
    ttl: std::time::Duration,
) -> Result<CallToolResponse, String> {
    let fields: Vec<(String, String)> = preview["fields"]
        .as_array()
        .ok_or("the component's preview has no fields")?
        .iter()
        .filter_map(|f| Some((f.get(0)?.as_str()?.to_string(), f.get(1)?.as_str()?.to_string())))
        .collect();
    let prompt = Prompt {
        title: preview["title"].as_str().unwrap_or("Confirm").to_string(),
        message: preview["message"].as_str().unwrap_or("").to_string(),
        fields,
    };
    let sha = preview["request_sha256"].as_str().ok_or("the component's preview has no request_sha256")?;
    let sealed = codec
        .seal_json_with(
            &Sealed { token: token.into(), request_sha256: sha.into() },
            &SealOptions::new().associated_data(&associated_data(token)).ttl(ttl),
        )
        .map_err(|e| format!("sealing the confirmation state failed: {e}"))?;
    let form =
        ElicitRequestParams::FormElicitationParams { meta: None, message: render(&prompt), requested_schema: schema() };
    let mut requests = BTreeMap::new();
    requests.insert(INPUT_KEY.to_string(), InputRequest::Elicitation(ElicitRequest::new(form)));
    Ok(InputRequiredResult::new(Some(requests), Some(sealed)).into())
}

/// The retry: opens the state (bound to this token) and reads the person's answer.
pub fn answer(
    codec: &RequestStateCodec,
    token: &str,
    state: &str,
    responses: Option<&InputResponses>,
) -> Result<(Sealed, Status), CallToolResult> {
    let sealed: Sealed = codec.open_json_with(state, &associated_data(token)).map_err(|e| {
        tracing::info!("refused a confirmation requestState: {e:?}");
        CallToolResult::structured_error(json!({"error": {
            "kind": "invalid_request_state",
            "message": "the confirmation state is invalid, expired or belongs to another token; call fabric_confirm_change again without requestState",
        }}))
    })?;
    let status = responses
        .and_then(|r| r.get(INPUT_KEY))
        .and_then(|v| serde_json::from_value::<ElicitResult>(v.clone()).ok())
        .map(|r| status_of(&r.action, r.content.as_ref()))
        .unwrap_or(Status::Failed);
    Ok((sealed, status))
}

/// A confirmer whose answer was collected in the first round; it only counts for the request
/// whose hash was sealed.
pub struct PreAnswered {
    pub status: Status,
    pub request_sha256: String,
}

impl Confirmer for PreAnswered {
    fn confirm<'a>(&'a self, prompt: Prompt, _cancel: &'a CancellationToken) -> BoxFuture<'a, Status> {
        let shown = prompt.fields.iter().find(|(k, _)| k == "request_sha256").map(|(_, v)| v.as_str());
        let status = if shown == Some(self.request_sha256.as_str()) {
            self.status
        } else {
            tracing::warn!("the answered prompt was for another request; treating the answer as failed");
            Status::Failed
        };
        Box::pin(async move { status })
    }
}

pub fn pre_answered(sealed: Sealed, status: Status) -> Arc<dyn Confirmer> {
    Arc::new(PreAnswered { status, request_sha256: sealed.request_sha256 })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn codec() -> RequestStateCodec {
        RequestStateCodec::try_new(vec![7u8; 32]).unwrap()
    }

    fn preview() -> Value {
        json!({"title": "Create Fabric connection?", "message": "m", "fields": [["request_sha256", "abc"], ["body.name", "x"]], "request_sha256": "abc"})
    }

    #[test]
    fn the_state_is_bound_to_its_token_and_carries_the_answer() {
        let c = codec();
        let CallToolResponse::InputRequired(r) =
            first_round(&c, "chg-a", &preview(), std::time::Duration::from_secs(60)).unwrap()
        else {
            panic!("expected InputRequired")
        };
        let state = r.request_state.unwrap();
        let mut responses = InputResponses::new();
        responses.insert(INPUT_KEY.into(), json!({"action": "accept", "content": {"confirm": true}}));
        let (sealed, status) = answer(&c, "chg-a", &state, Some(&responses)).ok().unwrap();
        assert_eq!((sealed.request_sha256.as_str(), status), ("abc", Status::Accepted));
        assert!(answer(&c, "chg-b", &state, Some(&responses)).is_err(), "another token cannot reuse the state");
        assert!(answer(&codec_other(), "chg-a", &state, Some(&responses)).is_err(), "forged states are refused");
        let (_, missing) = answer(&c, "chg-a", &state, None).ok().unwrap();
        assert_eq!(missing, Status::Failed);
    }

    fn codec_other() -> RequestStateCodec {
        RequestStateCodec::try_new(vec![9u8; 32]).unwrap()
    }

    #[tokio::test]
    async fn an_answer_counts_only_for_the_request_it_was_shown() {
        let c = PreAnswered { status: Status::Accepted, request_sha256: "abc".into() };
        let ct = CancellationToken::new();
        let same =
            Prompt { title: "t".into(), message: "m".into(), fields: vec![("request_sha256".into(), "abc".into())] };
        let other = Prompt { fields: vec![("request_sha256".into(), "def".into())], ..same.clone() };
        assert_eq!(c.confirm(same, &ct).await, Status::Accepted);
        assert_eq!(c.confirm(other, &ct).await, Status::Failed);
    }
}
