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
use super::server::CONFIRM_TOOL;
use crate::capabilities::confirmation::{BoxFuture, Confirmer, Prompt};
use crate::component::bindings::confirmation::Status;
use crate::principal::Principal;

/// The input-request key of the confirmation form.
pub const INPUT_KEY: &str = "confirm";

/// What the sealed `requestState` carries (integrity-protected, readable: no secrets).
#[derive(Serialize, Deserialize)]
pub struct Sealed {
    pub token: String,
    pub request_sha256: String,
}

/// Binds a sealed state to the tool, the principal and the token it was minted for.
pub fn associated_data(principal: &Principal, token: &str) -> Vec<u8> {
    format!("equinix-mcp|{CONFIRM_TOOL}|{principal}|{token}").into_bytes()
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

/// The first round: the form and the sealed state, from the component's preview.
pub fn first_round(
    codec: &RequestStateCodec,
    principal: &Principal,
    token: &str,
    preview: &Value,
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
    // The answer is worth nothing once the proposal has expired, so neither is the state.
    let ttl = preview["expires_in_ms"]
        .as_u64()
        .map(std::time::Duration::from_millis)
        .ok_or("the component's preview has no expires_in_ms")?;
    let sealed = codec
        .seal_json_with(
            &Sealed { token: token.into(), request_sha256: sha.into() },
            &SealOptions::new().associated_data(&associated_data(principal, token)).ttl(ttl),
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
    principal: &Principal,
    token: &str,
    state: &str,
    responses: Option<&InputResponses>,
) -> Result<(Sealed, Status), CallToolResult> {
    let sealed: Sealed = codec.open_json_with(state, &associated_data(principal, token)).map_err(|e| {
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

    fn fixed_codec() -> RequestStateCodec {
        RequestStateCodec::try_new(vec![7u8; 32]).unwrap()
    }

    fn preview() -> Value {
        json!({"title": "Create Fabric connection?", "message": "m", "fields": [["request_sha256", "abc"], ["body.name", "x"]], "request_sha256": "abc", "expires_in_ms": 60_000})
    }

    #[test]
    fn the_state_is_bound_to_its_token_and_carries_the_answer() {
        let c = fixed_codec();
        let CallToolResponse::InputRequired(r) = first_round(&c, &me(), "chg-a", &preview()).unwrap() else {
            panic!("expected InputRequired")
        };
        let state = r.request_state.unwrap();
        let mut responses = InputResponses::new();
        responses.insert(INPUT_KEY.into(), json!({"action": "accept", "content": {"confirm": true}}));
        let (sealed, status) = answer(&c, &me(), "chg-a", &state, Some(&responses)).ok().unwrap();
        assert_eq!((sealed.request_sha256.as_str(), status), ("abc", Status::Accepted));
        assert!(answer(&c, &me(), "chg-b", &state, Some(&responses)).is_err(), "another token cannot reuse the state");
        let bob = Principal::named("bob");
        assert!(answer(&c, &bob, "chg-a", &state, Some(&responses)).is_err(), "another principal cannot use it");
        assert!(answer(&codec_other(), &me(), "chg-a", &state, Some(&responses)).is_err(), "forged states are refused");
        let (_, missing) = answer(&c, &me(), "chg-a", &state, None).ok().unwrap();
        assert_eq!(missing, Status::Failed);
    }

    fn me() -> Principal {
        Principal::local()
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
