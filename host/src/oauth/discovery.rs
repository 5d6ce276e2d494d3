//! Reading the issuer: its metadata (OpenID Connect Discovery, or RFC 8414 at the path-aware
//! well-known URL) and its JWK Set. Every fetch is bounded in time and size, follows no
//! redirect, and goes over HTTPS (plain HTTP only to a loopback address, for a provider on the
//! same machine).

use std::time::Duration;

use reqwest::Url;
use serde_json::Value;

use super::jwks::{JwksError, KeySet};
use crate::fabric_client::root_cause;

/// Largest metadata or JWK Set document read.
pub(crate) const MAX_DOCUMENT_BYTES: usize = 256 * 1024;
/// Time for one fetch, connect included.
pub(crate) const FETCH_TIMEOUT: Duration = Duration::from_secs(5);
/// How long an idle connection to the provider is kept for reuse: less than the shortest keep-alive
/// a provider is known to use, so the client never reuses one the provider is closing.
const IDLE_REUSE: Duration = Duration::from_secs(2);

/// Whether a URL may be used for the issuer, its keys or this server's own address.
pub(crate) fn check_url(url: &str, flag: &str) -> anyhow::Result<Url> {
    let parsed = Url::parse(url).map_err(|e| anyhow::anyhow!("{flag} {url:?} is not an absolute URL: {e}"))?;
    if parsed.query().is_some() || parsed.fragment().is_some() {
        anyhow::bail!("{flag} {url:?} must not have a query or a fragment");
    }
    if !parsed.username().is_empty() || parsed.password().is_some() {
        anyhow::bail!("{flag} must not carry credentials");
    }
    match parsed.scheme() {
        "https" => {}
        "http" if is_loopback(&parsed) => {}
        "http" => anyhow::bail!("{flag} {url:?} must be https (plain http only for a loopback address)"),
        other => anyhow::bail!("{flag} {url:?} has scheme {other:?}; https is required"),
    }
    Ok(parsed)
}

fn is_loopback(url: &Url) -> bool {
    let Some(host) = url.host_str() else { return false };
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost") || bare.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// What this server uses of the issuer's metadata.
#[derive(Clone, Debug)]
pub(crate) struct IssuerMetadata {
    /// Where it was read.
    pub source: String,
    pub jwks_uri: Url,
    /// Where a browser signs in and where a code is redeemed (the approval page's sign-in).
    pub authorization_endpoint: Option<Url>,
    pub token_endpoint: Option<Url>,
}

/// The HTTP client for the issuer.
#[derive(Clone)]
pub(crate) struct Fetcher {
    client: reqwest::Client,
}

impl Fetcher {
    pub(crate) fn new() -> anyhow::Result<Self> {
        crate::install_crypto_provider();
        let client = reqwest::Client::builder()
            .connect_timeout(FETCH_TIMEOUT)
            .timeout(FETCH_TIMEOUT)
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(concat!("equinix-mcp/", env!("CARGO_PKG_VERSION")))
            // a connection left idle is not reused once the provider may be closing it (Node's
            // servers close after 5 s): a sign-in's code, usable once, must not meet a closing socket
            .pool_idle_timeout(IDLE_REUSE)
            .build()?;
        Ok(Fetcher { client })
    }

    /// One document, as bytes: a 200 within the size limit, or why not.
    async fn get(&self, url: &Url) -> Result<Vec<u8>, String> {
        let mut response = self
            .client
            .get(url.clone())
            .header(reqwest::header::ACCEPT, "application/json")
            .send()
            .await
            .map_err(|e| root_cause(&e.without_url()))?;
        if response.status() != reqwest::StatusCode::OK {
            return Err(format!("HTTP {}", response.status()));
        }
        if response.content_length().is_some_and(|n| n > MAX_DOCUMENT_BYTES as u64) {
            return Err(format!("the document is larger than {MAX_DOCUMENT_BYTES} bytes"));
        }
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(|e| root_cause(&e.without_url()))? {
            if body.len() + chunk.len() > MAX_DOCUMENT_BYTES {
                return Err(format!("the document is larger than {MAX_DOCUMENT_BYTES} bytes"));
            }
            body.extend_from_slice(&chunk);
        }
        Ok(body)
    }

    /// The issuer's metadata: OpenID Connect Discovery first (every provider docs/sign-in.md covers
    /// serves it), then RFC 8414. The document must name exactly this issuer (RFC 8414 3.3:
    /// otherwise another issuer's keys could be substituted).
    pub(crate) async fn discover(&self, issuer: &Url, issuer_text: &str) -> anyhow::Result<IssuerMetadata> {
        let trimmed = issuer_text.trim_end_matches('/');
        let path = issuer.path().trim_end_matches('/');
        let mut origin = issuer.clone();
        origin.set_path("");
        let candidates = [
            format!("{trimmed}/.well-known/openid-configuration"),
            format!("{}/.well-known/oauth-authorization-server{path}", origin.as_str().trim_end_matches('/')),
        ];
        let mut failures = Vec::new();
        for candidate in candidates {
            let url = Url::parse(&candidate)?;
            let document = match self.get(&url).await {
                Ok(d) => d,
                Err(why) => {
                    failures.push(format!("{candidate}: {why}"));
                    continue;
                }
            };
            let metadata: Value = match serde_json::from_slice(&document) {
                Ok(m) => m,
                Err(e) => {
                    // a web server's fallback page is no metadata: try the other well-known path
                    failures.push(format!("{candidate}: not JSON ({e})"));
                    continue;
                }
            };
            let named = metadata.get("issuer").and_then(Value::as_str).unwrap_or_default();
            if named != issuer_text {
                anyhow::bail!(
                    "the metadata at {candidate} is for issuer {named:?}, not {issuer_text:?}: give --oauth-issuer \
                     exactly as the provider writes it (a trailing slash counts)"
                );
            }
            let jwks = metadata
                .get("jwks_uri")
                .and_then(Value::as_str)
                .ok_or_else(|| anyhow::anyhow!("the issuer metadata at {candidate} has no `jwks_uri`"))?;
            let jwks_uri = check_url(jwks, "the issuer's jwks_uri")?;
            let endpoint = |name: &str| -> anyhow::Result<Option<Url>> {
                match metadata.get(name).and_then(Value::as_str) {
                    Some(url) => Ok(Some(check_url(url, &format!("the issuer's {name}"))?)),
                    None => Ok(None),
                }
            };
            let authorization_endpoint = endpoint("authorization_endpoint")?;
            let token_endpoint = endpoint("token_endpoint")?;
            return Ok(IssuerMetadata { source: candidate, jwks_uri, authorization_endpoint, token_endpoint });
        }
        anyhow::bail!("no issuer metadata for {issuer_text}: {}", failures.join("; "))
    }

    /// The HTTP client itself (the approval page redeems its codes with it).
    pub(crate) fn client(&self) -> &reqwest::Client {
        &self.client
    }

    pub(crate) async fn keys(&self, jwks_uri: &Url) -> Result<KeySet, JwksError> {
        let document = self.get(jwks_uri).await.map_err(JwksError::Fetch)?;
        KeySet::parse(&document)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_must_be_https_except_on_loopback() {
        assert!(check_url("https://idp.example/realms/x", "--oauth-issuer").is_ok());
        assert!(check_url("http://127.0.0.1:8080", "--oauth-issuer").is_ok());
        assert!(check_url("http://[::1]:8080", "--oauth-issuer").is_ok());
        assert!(check_url("http://localhost:8080", "--oauth-issuer").is_ok());
        for (bad, says) in [
            ("http://idp.example", "must be https"),
            ("ftp://idp.example", "https is required"),
            ("https://idp.example/?tenant=x", "query"),
            ("https://user:pw@idp.example", "credentials"),
            ("idp.example", "absolute URL"),
        ] {
            let e = check_url(bad, "--oauth-issuer").unwrap_err().to_string();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }
}
