//! The approval page as an OpenID Connect relying party: the authorization code flow with PKCE
//! (S256), `state` and `nonce`, `max_age` for a recent authentication, and the code redeemed at
//! the provider's token endpoint over the reqwest client the resource server already uses.
//!
//! Written here rather than taken from the `openidconnect` crate: the flow is one redirect and
//! one POST, and the ID token must be checked with the very JWT and key-set code that checks
//! access tokens ([`super::id_token`]), so a security reviewer reads one verifier, not two; the
//! crate would add a second JOSE stack (and its build time) for what these 200 lines do.

use std::time::SystemTime;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use reqwest::Url;
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::id_token::{IdTokenRules, SignedIn};
use crate::oauth::discovery::{self, Fetcher};
use crate::oauth::issuer_keys::IssuerKeys;
use crate::oauth::jwt;
use crate::secret::Secret;

/// The longest token response read.
const MAX_TOKEN_RESPONSE_BYTES: usize = 64 * 1024;

/// Why the identity provider signed nobody in. The words name no code, token or secret.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ProviderFailed {
    #[error("the identity provider's token endpoint did not answer: {0}")]
    Unreachable(String),
    #[error("reading the token response failed: {0}")]
    Unreadable(String),
    #[error("the token response is larger than {MAX_TOKEN_RESPONSE_BYTES} bytes")]
    TooLarge,
    #[error("the identity provider's token response has no id_token")]
    NoIdToken,
    #[error("the identity provider refused the sign-in code: HTTP {status} ({error})")]
    Refused { status: u16, error: String },
    #[error("the ID token was refused: {0}")]
    IdToken(String),
}

impl ProviderFailed {
    /// Whether the provider did not answer as OpenID Connect says it must (the browser is told
    /// 502: the provider, not the person, is at fault), rather than refused this sign-in (403).
    pub(crate) fn is_a_broken_answer(&self) -> bool {
        matches!(
            self,
            ProviderFailed::Unreachable(_)
                | ProviderFailed::Unreadable(_)
                | ProviderFailed::TooLarge
                | ProviderFailed::NoIdToken
        )
    }
}

/// One sign-in's secrets, kept server-side until its callback.
pub(crate) struct Started {
    pub state: String,
    pub nonce: String,
    pub verifier: String,
    pub url: Url,
}

pub(crate) struct RelyingParty {
    rules: IdTokenRules,
    client_secret: Option<Secret>,
    /// What the authorization request asks for (`--approval-scopes`).
    scopes: String,
    authorization_endpoint: Url,
    token_endpoint: Url,
    /// The issuer's keys, kept as the resource server keeps its issuer's.
    keys: IssuerKeys,
}

fn random_text() -> String {
    URL_SAFE_NO_PAD.encode(rand::random::<[u8; 32]>())
}

impl RelyingParty {
    /// Reads the issuer's metadata and keys; an issuer without them stops the start.
    pub(crate) async fn start(
        rules: IdTokenRules,
        client_secret: Option<Secret>,
        scopes: String,
    ) -> anyhow::Result<Self> {
        let issuer_url = discovery::check_url(&rules.issuer, "--approval-issuer")?;
        let fetcher = Fetcher::new()?;
        let metadata = fetcher
            .discover(&issuer_url, &rules.issuer)
            .await
            .map_err(|e| anyhow::anyhow!("--approval-issuer {}: {e:#}", rules.issuer))?;
        let missing = |what: &str| anyhow::anyhow!("--approval-issuer {}: its metadata has no {what}", rules.issuer);
        let authorization_endpoint =
            metadata.authorization_endpoint.ok_or_else(|| missing("authorization_endpoint"))?;
        let token_endpoint = metadata.token_endpoint.ok_or_else(|| missing("token_endpoint"))?;
        let keys = fetcher
            .keys(&metadata.jwks_uri)
            .await
            .map_err(|e| anyhow::anyhow!("--approval-issuer {}: reading its keys: {e}", rules.issuer))?;
        if keys.keys.is_empty() {
            anyhow::bail!("--approval-issuer {}: its JWK Set has no key this server can verify with", rules.issuer);
        }
        Ok(RelyingParty {
            rules,
            client_secret,
            scopes,
            authorization_endpoint,
            token_endpoint,
            keys: IssuerKeys::new(fetcher, metadata.jwks_uri, keys),
        })
    }

    pub(crate) fn issuer(&self) -> &str {
        &self.rules.issuer
    }

    /// A new sign-in: where to send the browser, and what its callback must match.
    pub(crate) fn begin(&self, redirect_uri: &str) -> Started {
        let (state, nonce, verifier) = (random_text(), random_text(), random_text());
        let challenge = URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()));
        let mut url = self.authorization_endpoint.clone();
        url.query_pairs_mut()
            .append_pair("response_type", "code")
            .append_pair("client_id", &self.rules.client_id)
            .append_pair("redirect_uri", redirect_uri)
            .append_pair("scope", &self.scopes)
            .append_pair("state", &state)
            .append_pair("nonce", &nonce)
            .append_pair("code_challenge", &challenge)
            .append_pair("code_challenge_method", "S256")
            .append_pair("max_age", &self.rules.max_age_secs.to_string());
        Started { state, nonce, verifier, url }
    }

    /// Redeems `code` and checks the ID token; `Err` says why the sign-in failed (never a code,
    /// a token or a secret).
    pub(crate) async fn finish(
        &self,
        code: &str,
        redirect_uri: &str,
        verifier: &str,
        nonce: &str,
    ) -> Result<SignedIn, ProviderFailed> {
        let (body, request) = {
            let mut form = form_urlencoded::Serializer::new(String::new());
            form.append_pair("grant_type", "authorization_code")
                .append_pair("code", code)
                .append_pair("redirect_uri", redirect_uri)
                .append_pair("code_verifier", verifier);
            let request = self.keys.fetcher().client().post(self.token_endpoint.clone());
            let request = match &self.client_secret {
                Some(secret) => request.basic_auth(&self.rules.client_id, Some(secret.expose())),
                None => {
                    form.append_pair("client_id", &self.rules.client_id);
                    request
                }
            };
            (form.finish(), request)
        };
        let response = request
            .header(reqwest::header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .header(reqwest::header::ACCEPT, "application/json")
            .body(body)
            .send()
            .await
            .map_err(|e| ProviderFailed::Unreachable(crate::fabric_client::root_cause(&e.without_url())))?;
        let status = response.status();
        let body = response.bytes().await.map_err(|e| ProviderFailed::Unreadable(e.without_url().to_string()))?;
        if body.len() > MAX_TOKEN_RESPONSE_BYTES {
            return Err(ProviderFailed::TooLarge);
        }
        let parsed: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        if !status.is_success() {
            let error = parsed.get("error").and_then(Value::as_str).unwrap_or("no error code");
            return Err(ProviderFailed::Refused {
                status: status.as_u16(),
                error: equinix_broker_contract::clip(error, 80),
            });
        }
        let Some(id_token) = parsed.get("id_token").and_then(Value::as_str) else {
            return Err(ProviderFailed::NoIdToken);
        };
        self.check(id_token, nonce).await.map_err(|jwt::Invalid(why)| ProviderFailed::IdToken(why))
    }

    async fn check(&self, token: &str, nonce: &str) -> Result<SignedIn, jwt::Invalid> {
        let now = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).unwrap_or_default().as_secs();
        let unverified = jwt::parse(token)?;
        let (keys, _) = self.keys.for_token(unverified.kid.as_deref(), unverified.alg, || {}).await;
        self.rules.check(&keys, token, nonce, now)
    }
}
