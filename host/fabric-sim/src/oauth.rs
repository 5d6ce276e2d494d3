//! `POST /oauth2/v1/token`: Equinix's client-credentials grant, JSON body, with the token API's
//! own snake_case error body.

use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use serde::Deserialize;
use serde_json::json;

use crate::errors::json_response;
use crate::faults::FaultMode;
use crate::state::Sim;

#[derive(Deserialize)]
struct TokenRequest {
    grant_type: Option<String>,
    client_id: Option<String>,
    client_secret: Option<String>,
}

pub(crate) async fn token(State(sim): State<Sim>, headers: HeaderMap, body: Bytes) -> Response {
    let fault = {
        let mut inner = sim.lock();
        inner.stats.token_requests += 1;
        let i = inner.faults.iter().position(|f| f.route == "POST /oauth2/v1/token");
        i.and_then(|i| inner.faults.remove(i))
    };
    if let Some(f) = fault {
        tokio::time::sleep(Duration::from_millis(f.stall_ms)).await;
        if f.mode == FaultMode::Respond {
            return json_response(
                StatusCode::from_u16(f.status).unwrap_or(StatusCode::SERVICE_UNAVAILABLE),
                json!({"error_domain": "apps-fqa", "error_title": "Injected fault", "error_code": "S5000",
                       "developer_message": "Injected token endpoint fault", "error_message": "Injected token endpoint fault"}),
            );
        }
    }
    let mut inner = sim.lock();
    let is_json =
        headers.get("content-type").and_then(|v| v.to_str().ok()).is_some_and(|v| v.starts_with("application/json"));
    let parsed: Option<TokenRequest> = if is_json { serde_json::from_slice(&body).ok() } else { None };
    let ok = parsed.as_ref().is_some_and(|r| {
        r.grant_type.as_deref() == Some("client_credentials")
            && r.client_id.as_deref() == Some(inner.config.client_id.as_str())
            && r.client_secret.as_deref() == Some(inner.config.client_secret.as_str())
    });
    if !ok {
        // the token API's one declared error: 400 with Oauth2TokenErrorResponse (snake_case)
        inner.stats.token_rejections += 1;
        return json_response(
            StatusCode::BAD_REQUEST,
            json!({"error_domain": "apps-fqa", "error_title": "Login Failure", "error_code": "S1006",
                   "developer_message": "Invalid client credentials", "error_message": "Login Failure, please try again."}),
        );
    }
    let token = inner.config.fixed_token.clone().unwrap_or_else(|| format!("simtok-{}", uuid::Uuid::new_v4().simple()));
    let lifetime = inner.config.token_timeout_secs;
    inner.tokens.insert(token.clone(), Instant::now() + Duration::from_secs(lifetime));
    json_response(
        StatusCode::OK,
        json!({"access_token": token, "token_timeout": lifetime.to_string(), "user_name": "sim-user", "token_type": "Bearer"}),
    )
}
