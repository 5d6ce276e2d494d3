//! OAuth2 client credentials against Equinix's token endpoint.
//!
//! Equinix takes a JSON body (not form-encoded) and states the lifetime in `token_timeout`, a
//! string of seconds. Five failed attempts lock the account, so a rejection of the credentials
//! is remembered and never retried by this process.

use std::time::{Duration, Instant};

use axum::http::{HeaderMap, HeaderValue, header};
use serde::Deserialize;
use tokio::sync::Mutex;

use super::SendError;
use super::wire::{Outgoing, Wire};
use crate::clock::Clock;
use crate::secret::Secret;

/// Client id and secret (`EQUINIX_API_CLIENTID`, `EQUINIX_API_CLIENTSECRET`).
#[derive(Clone, Debug)]
pub struct Credentials {
    pub client_id: String,
    pub client_secret: Secret,
}

/// Equinix's token endpoint, under the API base URL.
const TOKEN_PATH: &str = "/oauth2/v1/token";

/// A token answer is a few hundred bytes; anything near this is not one.
const MAX_TOKEN_RESPONSE_BYTES: usize = 64 << 10;

/// Lifetime assumed when the token endpoint does not say (Equinix's own clients do the same).
const DEFAULT_LIFETIME: Duration = Duration::from_secs(3600);

struct Bearer {
    token: Secret,
    refresh_after: Instant,
}

#[derive(Default)]
struct State {
    current: Option<Bearer>,
    /// Set once the endpoint rejected the credentials: the explanation, repeated to every caller.
    rejected: Option<String>,
}

/// Fetches and caches bearer tokens; concurrent callers share one fetch. A token is refreshed
/// by the host's monotonic clock, which the simulator's clock knob moves too.
pub(crate) struct TokenSource {
    wire: Wire,
    credentials: Option<Credentials>,
    clock: Clock,
    state: Mutex<State>,
}

#[derive(Deserialize)]
struct TokenResponse {
    access_token: String,
    #[serde(default)]
    token_timeout: Option<serde_json::Value>,
}

impl TokenSource {
    pub(crate) fn new(wire: Wire, credentials: Option<Credentials>, clock: Clock) -> Self {
        TokenSource { wire, credentials, clock, state: Mutex::new(State::default()) }
    }

    /// A valid bearer token, fetched when there is none or the current one is near expiry.
    pub(crate) async fn bearer(&self) -> Result<Secret, SendError> {
        let mut state = self.state.lock().await;
        if let Some(why) = &state.rejected {
            return Err(SendError::Unavailable(why.clone()));
        }
        if let Some(b) = &state.current
            && self.clock.monotonic() < b.refresh_after
        {
            return Ok(b.token.clone());
        }
        state.current = None;
        let creds = self.credentials.as_ref().ok_or_else(|| {
            SendError::Unavailable(
                "no Fabric credentials: set EQUINIX_API_CLIENTID and EQUINIX_API_CLIENTSECRET, \
                 or run with --fabric-sim"
                    .into(),
            )
        })?;
        match self.fetch(creds).await {
            Ok(bearer) => {
                let token = bearer.token.clone();
                state.current = Some(bearer);
                Ok(token)
            }
            Err(Fetch::Rejected(why)) => {
                tracing::error!("{why}");
                state.rejected = Some(why.clone());
                Err(SendError::Unavailable(why))
            }
            Err(Fetch::Failed(why)) => Err(SendError::Unavailable(why)),
        }
    }

    /// Drops `used` if it is still the cached token (Fabric said 401 to it).
    pub(crate) async fn invalidate(&self, used: &Secret) {
        let mut state = self.state.lock().await;
        if state.current.as_ref().is_some_and(|b| &b.token == used) {
            state.current = None;
        }
    }

    async fn fetch(&self, creds: &Credentials) -> Result<Bearer, Fetch> {
        let body = serde_json::json!({
            "grant_type": "client_credentials",
            "client_id": creds.client_id,
            "client_secret": creds.client_secret.expose(),
        });
        let started = self.clock.monotonic();
        let mut headers = HeaderMap::new();
        headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
        let out = Outgoing {
            method: axum::http::Method::POST,
            target: TOKEN_PATH.into(),
            headers,
            body: Some(serde_json::to_string(&body).expect("a JSON value always serializes")),
        };
        let answer = self.wire.exchange(out, MAX_TOKEN_RESPONSE_BYTES).await.map_err(|e| {
            Fetch::Failed(match e {
                SendError::Timeout => "the token endpoint did not answer in time".to_string(),
                SendError::Unavailable(why) => format!("no token from the token endpoint: {why}"),
                SendError::Transport(why) | SendError::Refused(why) | SendError::Denied(why) => {
                    format!("the token response was lost: {why}")
                }
                SendError::Cancelled => "the token request was cancelled".to_string(),
            })
        })?;
        let status = answer.status;
        let text = String::from_utf8_lossy(&answer.body).into_owned();
        if matches!(status, 400 | 401 | 403) {
            return Err(Fetch::Rejected(format!(
                "the Equinix token endpoint rejected the client credentials (HTTP {}{}); not retrying, \
                 because 5 failed attempts lock the account: fix EQUINIX_API_CLIENTID / \
                 EQUINIX_API_CLIENTSECRET and restart equinix-mcp",
                status,
                error_summary(&text).map(|s| format!(", {s}")).unwrap_or_default()
            )));
        }
        if !(200..300).contains(&status) {
            return Err(Fetch::Failed(format!("the token endpoint answered HTTP {status}")));
        }
        let parsed: TokenResponse = serde_json::from_str(&text)
            .map_err(|e| Fetch::Failed(format!("the token response is not the expected JSON: {e}")))?;
        let lifetime = parse_lifetime(parsed.token_timeout.as_ref());
        Ok(Bearer { token: Secret::new(parsed.access_token), refresh_after: started + lifetime - margin(lifetime) })
    }
}

enum Fetch {
    Rejected(String),
    Failed(String),
}

/// `token_timeout` is documented as a string of seconds; accept a number too.
fn parse_lifetime(v: Option<&serde_json::Value>) -> Duration {
    let secs = match v {
        Some(serde_json::Value::String(s)) => s.split_whitespace().next().and_then(|n| n.parse::<u64>().ok()),
        Some(serde_json::Value::Number(n)) => n.as_u64(),
        _ => None,
    };
    secs.filter(|s| *s > 0).map(Duration::from_secs).unwrap_or(DEFAULT_LIFETIME)
}

/// Refresh a tenth of the lifetime early, at most a minute.
fn margin(lifetime: Duration) -> Duration {
    (lifetime / 10).min(Duration::from_secs(60))
}

/// "S1006: Login Failure" from either casing Equinix uses for token errors; never the raw body.
fn error_summary(body: &str) -> Option<String> {
    let v: serde_json::Value = serde_json::from_str(body).ok()?;
    let field = |a: &str, b: &str| v.get(a).or_else(|| v.get(b)).and_then(|x| x.as_str()).map(str::to_owned);
    let code = field("errorCode", "error_code");
    let msg = field("errorMessage", "error_message");
    let s = match (code, msg) {
        (Some(c), Some(m)) => format!("{c}: {m}"),
        (Some(c), None) => c,
        (None, Some(m)) => m,
        (None, None) => return None,
    };
    Some(s.chars().take(200).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn lifetime_is_read_from_token_timeout_in_any_form() {
        assert_eq!(parse_lifetime(Some(&json!("3600"))), Duration::from_secs(3600));
        assert_eq!(parse_lifetime(Some(&json!("3599 (60 minutes)"))), Duration::from_secs(3599));
        assert_eq!(parse_lifetime(Some(&json!(120))), Duration::from_secs(120));
        assert_eq!(parse_lifetime(Some(&json!("soon"))), DEFAULT_LIFETIME);
        assert_eq!(parse_lifetime(None), DEFAULT_LIFETIME);
    }

    #[test]
    fn refresh_margin_is_a_tenth_capped_at_a_minute() {
        assert_eq!(margin(Duration::from_secs(3600)), Duration::from_secs(60));
        assert_eq!(margin(Duration::from_secs(10)), Duration::from_secs(1));
    }

    #[test]
    fn token_errors_are_summarised_in_both_casings() {
        assert_eq!(
            error_summary(r#"{"errorCode":"S1006","errorMessage":"Login Failure"}"#).unwrap(),
            "S1006: Login Failure"
        );
        assert_eq!(error_summary(r#"{"error_code":"S1006","error_message":"x"}"#).unwrap(), "S1006: x");
        assert_eq!(error_summary("<html>"), None);
    }
}
