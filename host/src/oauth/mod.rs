//! The HTTP server as an OAuth 2.1 resource server (MCP authorization, RFC 9728, RFC 8707,
//! RFC 9068): it publishes which issuer signs its tokens, accepts only JWT access tokens that
//! issuer signed for this server's own URL, and maps their scopes to what the principal may do.
//! The token is checked here and goes no further: Fabric is reached with the server's own
//! credentials, and no log line carries it.

pub(crate) mod discovery;
pub(crate) mod issuer_keys;
pub mod jwks;
pub(crate) mod jwt;
pub(crate) mod scopes;
pub(crate) mod settings;
pub(crate) mod verified_cache;

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use reqwest::Url;
use serde_json::{Value, json};

use discovery::Fetcher;
use issuer_keys::IssuerKeys;
use jwks::KeySet;
pub use jwt::{ClaimRules, Invalid, Verified};
pub use scopes::{Scope, ScopeNames, Scopes};
pub use verified_cache::VerifiedCache;

/// A token whose `kid` is unknown makes the keys be fetched again at most this often: a
/// provider rotating keys is picked up at once, a flood of made-up `kid`s costs one fetch.
pub(crate) const UNKNOWN_KID_REFRESH: Duration = Duration::from_secs(10);
/// The keys are also fetched this often, so a key the provider withdrew stops verifying.
pub(crate) const KEYS_REFRESH: Duration = Duration::from_secs(15 * 60);
/// The most clock skew `--oauth-clock-leeway-secs` may tolerate.
pub(crate) const MAX_LEEWAY_SECS: u64 = 300;

/// What a request may do, in its extensions beside its principal: the grants, and for an OAuth
/// principal the resource server that phrases a refusal. Absent: everything (stdio, the local
/// principal, a token-file token).
#[derive(Clone)]
pub(crate) struct Access {
    pub scopes: Scopes,
    pub oauth: Option<Arc<ResourceServer>>,
}

/// The operator's settings (`--oauth-*`, `--public-url`).
#[derive(Clone, Debug)]
pub(crate) struct OAuthSettings {
    pub issuer: String,
    /// This server's MCP endpoint as clients reach it.
    pub public_url: String,
    /// The `aud` every token must carry (default: `public_url`).
    pub audience: Option<String>,
    pub principal_claim: String,
    pub scopes: ScopeNames,
    pub leeway_secs: u64,
}

/// The resource server: the issuer's keys and the rules for its tokens.
pub(crate) struct ResourceServer {
    rules: ClaimRules,
    public_url: Url,
    issuer: String,
    keys: IssuerKeys,
    verified: VerifiedCache,
}

impl ResourceServer {
    /// Checks the settings and reads the issuer's metadata and keys. An issuer that cannot be
    /// read, or publishes no key this server can use, stops the start.
    pub(crate) async fn start(settings: &OAuthSettings) -> anyhow::Result<Arc<ResourceServer>> {
        let issuer_url = discovery::check_url(&settings.issuer, "--oauth-issuer")?;
        let public_url = discovery::check_url(&settings.public_url, "--public-url")?;
        if public_url.as_str() != settings.public_url {
            // clients ask for tokens for the metadata's `resource`: it and the audience must be one string
            anyhow::bail!(
                "--public-url {:?}: give it in its canonical form, {:?} (the audience tokens carry must be \
                 exactly the `resource` clients read from the metadata)",
                settings.public_url,
                public_url.as_str()
            );
        }
        settings.scopes.check().map_err(|e| anyhow::anyhow!("--oauth-scope-*: {e}"))?;
        if settings.leeway_secs > MAX_LEEWAY_SECS {
            anyhow::bail!("--oauth-clock-leeway-secs {} is more than {MAX_LEEWAY_SECS}", settings.leeway_secs);
        }
        if settings.principal_claim.is_empty() {
            anyhow::bail!("--oauth-principal-claim must name a claim");
        }
        let fetcher = Fetcher::new()?;
        let metadata = fetcher
            .discover(&issuer_url, &settings.issuer)
            .await
            .map_err(|e| anyhow::anyhow!("--oauth-issuer {}: {e:#}", settings.issuer))?;
        let keys = fetcher.keys(&metadata.jwks_uri).await.map_err(|e| {
            anyhow::anyhow!("--oauth-issuer {}: reading its keys at {}: {e}", settings.issuer, metadata.jwks_uri)
        })?;
        if keys.keys.is_empty() {
            anyhow::bail!(
                "--oauth-issuer {}: its JWK Set at {} has no key this server can verify with (RSA 2048+, P-256, \
                 P-384 or Ed25519 signing keys; {} skipped)",
                settings.issuer,
                metadata.jwks_uri,
                keys.skipped
            );
        }
        tracing::info!(
            issuer = %settings.issuer,
            metadata = %metadata.source,
            keys = keys.keys.len(),
            skipped = keys.skipped,
            "OAuth: issuer metadata and signing keys read"
        );
        let rules = ClaimRules {
            issuer: settings.issuer.clone(),
            audience: settings.audience.clone().unwrap_or_else(|| settings.public_url.clone()),
            principal_claim: settings.principal_claim.clone(),
            scopes: settings.scopes.clone(),
            leeway_secs: settings.leeway_secs,
        };
        Ok(Arc::new(ResourceServer {
            rules,
            public_url,
            issuer: settings.issuer.clone(),
            keys: IssuerKeys::new(fetcher, metadata.jwks_uri, keys),
            verified: VerifiedCache::default(),
        }))
    }

    /// Fetches the keys again; a failure keeps the ones known.
    async fn refresh_keys(&self, why: &str) {
        // a withdrawn key must stop vouching for the tokens it signed
        self.keys.refresh(why, || self.verified.clear()).await;
    }

    /// Refreshes the keys every [`KEYS_REFRESH`] until `stop`.
    pub(crate) async fn refresh_until(self: Arc<Self>, stop: tokio_util::sync::CancellationToken) {
        loop {
            tokio::select! {
                _ = tokio::time::sleep(KEYS_REFRESH) => {}
                _ = stop.cancelled() => return,
            }
            self.refresh_keys("periodic").await;
        }
    }

    /// Validates a bearer token.
    pub(crate) async fn authenticate(&self, token: &str) -> Result<Verified, Invalid> {
        let now = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).unwrap_or_default().as_secs();
        // a token too long to be one is refused by the parse, before it is hashed
        if token.len() <= jwt::MAX_TOKEN_BYTES
            && let Some(known) = self.verified.get(token, now, self.rules.leeway_secs)
        {
            return Ok(known);
        }
        let unverified = jwt::parse(token)?;
        let (kid, alg) = (unverified.kid.clone(), unverified.alg);
        // before the keys: a refresh that clears the cache in between makes this one not count
        let mut generation = self.verified.generation();
        let (keys, fetched) = self.keys.for_token(kid.as_deref(), alg, || self.verified.clear()).await;
        if fetched {
            generation = self.verified.generation();
        }
        let verified = finish(unverified, &keys, &self.rules, now)?;
        self.verified.put(token, &verified, generation, now, self.rules.leeway_secs);
        Ok(verified)
    }

    pub(crate) fn scope_names(&self) -> &ScopeNames {
        &self.rules.scopes
    }

    /// This server's Protected Resource Metadata document (RFC 9728 section 2).
    pub(crate) fn metadata(&self) -> Value {
        json!({
            "resource": self.public_url.as_str(),
            "authorization_servers": [self.issuer],
            "scopes_supported": self.rules.scopes.all(),
            "bearer_methods_supported": ["header"],
            "resource_name": "equinix-mcp",
        })
    }

    /// Where the metadata is (RFC 9728 section 3.1: the well-known prefix before the resource's
    /// path).
    pub(crate) fn metadata_url(&self) -> String {
        let mut url = self.public_url.clone();
        url.set_path(&format!("/.well-known/oauth-protected-resource{}", self.resource_path()));
        url.to_string()
    }

    /// The paths the metadata is served at: the bare well-known one and the one under the
    /// resource's path (and `/mcp`'s, when a proxy serves this server under another path).
    pub(crate) fn metadata_paths(&self) -> Vec<String> {
        let mut paths = vec!["/.well-known/oauth-protected-resource".to_string()];
        for resource_path in [self.resource_path(), "/mcp"] {
            let path = format!("/.well-known/oauth-protected-resource{resource_path}");
            if !paths.contains(&path) {
                paths.push(path);
            }
        }
        paths
    }

    /// The resource's path as the well-known URL carries it: none for a bare origin (RFC 9728
    /// section 3.1 drops only a slash right after the host).
    fn resource_path(&self) -> &str {
        match self.public_url.path() {
            "/" => "",
            path => path,
        }
    }

    /// The `Host` value clients use to reach `--public-url`.
    pub(crate) fn public_host(&self) -> Option<String> {
        let host = self.public_url.host_str()?;
        Some(match self.public_url.port() {
            Some(port) => format!("{host}:{port}"),
            None => host.to_string(),
        })
    }

    /// The origin of `--public-url` (a page served behind it sends this `Origin`).
    pub(crate) fn public_origin(&self) -> String {
        self.public_url.origin().ascii_serialization()
    }

    /// `WWW-Authenticate` for a request with no token, or a refused one (RFC 6750 section 3,
    /// RFC 9728 section 5.1): where the metadata is, and the scope reads need.
    pub(crate) fn challenge(&self, invalid: Option<&Invalid>) -> String {
        let mut value = format!("Bearer resource_metadata=\"{}\"", self.metadata_url());
        if let Some(Invalid(why)) = invalid {
            value.push_str(&format!(", error=\"invalid_token\", error_description=\"{}\"", quoted(why)));
        }
        value.push_str(&format!(", scope=\"{}\"", self.rules.scopes.requested(Scope::Read)));
        value
    }

    /// `WWW-Authenticate` for a call beyond the token's scopes (RFC 6750 section 3.1): the
    /// scopes it holds plus the one the call needs, so a client can ask for all at once.
    pub(crate) fn insufficient_scope(&self, held: Scopes, needed: Scope) -> String {
        let names = &self.rules.scopes;
        let wanted: Vec<String> =
            Scope::ALL.into_iter().filter(|s| held.allows(*s) || *s == needed).map(|s| names.requested(s)).collect();
        format!(
            "Bearer error=\"insufficient_scope\", scope=\"{}\", resource_metadata=\"{}\", error_description=\"{}\"",
            wanted.join(" "),
            self.metadata_url(),
            quoted(&format!("this call needs the scope {}", names.requested(needed)))
        )
    }
}

/// What each request costs once the keys are known: the whole check of `token` against `keys`
/// and `rules` at `now` (seconds since the epoch). The middleware runs the same steps, fetching
/// the keys again in between when the token names one it does not know.
pub fn validate(keys: &KeySet, rules: &ClaimRules, token: &str, now: u64) -> Result<Verified, Invalid> {
    finish(jwt::parse(token)?, keys, rules, now)
}

fn finish(unverified: jwt::Unverified<'_>, keys: &KeySet, rules: &ClaimRules, now: u64) -> Result<Verified, Invalid> {
    let Some(key) = keys.find(unverified.kid.as_deref(), unverified.alg) else {
        return Err(Invalid(
            match unverified.kid {
                Some(_) => "the JWT's `kid` names no signing key of the issuer (keys fetched again at most every 10 s)",
                None => "the JWT has no `kid` and the issuer has several keys for its algorithm",
            }
            .into(),
        ));
    };
    let claims = unverified.verify(key)?;
    rules.check(&claims, now)
}

/// Text for a quoted-string of an auth-param: printable ASCII without `"` or `\`.
fn quoted(text: &str) -> String {
    text.chars().map(|c| if c.is_ascii_graphic() && c != '"' && c != '\\' || c == ' ' { c } else { '\'' }).collect()
}
