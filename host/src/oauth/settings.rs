//! Who may call over HTTP: the bearer-token file, or the OAuth 2.1 issuer whose access tokens the
//! server accepts, and how those tokens name principals and grants. [`AuthArgs::oauth`] builds
//! the resource server's [`OAuthSettings`].

use std::path::PathBuf;

use clap::Args;

use super::{OAuthSettings, ScopeNames};

#[derive(Args, Debug, Clone)]
pub struct AuthArgs {
    /// HTTP bearer tokens, one per line as `TOKEN` or `LABEL TOKEN` (the label names the
    /// principal whose proposals the token can see); must not be group/world-readable. Reread
    /// on SIGHUP.
    #[arg(long, env = "EQUINIX_MCP_AUTH_TOKEN_FILE", value_name = "PATH")]
    pub(crate) auth_token_file: Option<PathBuf>,

    /// Accept the OAuth 2.1 access tokens (JWTs) of this issuer, as MCP authorization
    /// describes: its metadata and keys are read at start. Needs --public-url.
    #[arg(long, env = "EQUINIX_MCP_OAUTH_ISSUER", value_name = "URL", requires = "public_url")]
    pub(crate) oauth_issuer: Option<String>,

    /// The canonical URL of this server's MCP endpoint as clients reach it (for example
    /// https://mcp.example.internal/mcp): the audience every access token must carry, and the
    /// `resource` of the Protected Resource Metadata. Its host is an accepted `Host`.
    #[arg(long, env = "EQUINIX_MCP_PUBLIC_URL", value_name = "URL", requires = "oauth_issuer")]
    pub public_url: Option<String>,

    /// The `aud` value tokens must carry, when the provider cannot put --public-url there (Entra
    /// ID puts the application's client id).
    #[arg(long, env = "EQUINIX_MCP_OAUTH_AUDIENCE", value_name = "AUD", requires = "oauth_issuer")]
    pub(crate) oauth_audience: Option<String>,

    /// The claim naming the principal (with the issuer): `sub` by default, `oid` for Entra ID.
    #[arg(long, env = "EQUINIX_MCP_OAUTH_PRINCIPAL_CLAIM", default_value = "sub", value_name = "CLAIM")]
    pub(crate) oauth_principal_claim: String,

    /// The scope that grants the read tools.
    #[arg(long, env = "EQUINIX_MCP_OAUTH_SCOPE_READ", default_value = "fabric:read", value_name = "SCOPE")]
    pub(crate) oauth_scope_read: String,

    /// The scope that grants fabric_propose_change.
    #[arg(long, env = "EQUINIX_MCP_OAUTH_SCOPE_PROPOSE", default_value = "fabric:propose", value_name = "SCOPE")]
    pub(crate) oauth_scope_propose: String,

    /// The scope that grants fabric_confirm_change.
    #[arg(long, env = "EQUINIX_MCP_OAUTH_SCOPE_CONFIRM", default_value = "fabric:confirm", value_name = "SCOPE")]
    pub(crate) oauth_scope_confirm: String,

    /// Put before each scope name where clients ask for it (the metadata's scopes_supported and
    /// the challenges); a token may carry either form. Entra ID: `api://APP-ID/`.
    #[arg(long, env = "EQUINIX_MCP_OAUTH_SCOPE_PREFIX", default_value = "", value_name = "PREFIX")]
    pub(crate) oauth_scope_prefix: String,

    /// Clock skew tolerated on a token's exp, nbf and iat, in seconds (at most 300).
    #[arg(long, env = "EQUINIX_MCP_OAUTH_CLOCK_LEEWAY_SECS", default_value_t = 30, value_name = "SECS")]
    pub(crate) oauth_clock_leeway_secs: u64,
}

impl AuthArgs {
    /// The OAuth settings, when `--oauth-issuer` is given (clap has checked that --public-url is).
    pub(crate) fn oauth(&self) -> Option<OAuthSettings> {
        Some(OAuthSettings {
            issuer: self.oauth_issuer.clone()?,
            public_url: self.public_url.clone()?,
            audience: self.oauth_audience.clone(),
            principal_claim: self.oauth_principal_claim.clone(),
            scopes: ScopeNames {
                read: self.oauth_scope_read.clone(),
                propose: self.oauth_scope_propose.clone(),
                confirm: self.oauth_scope_confirm.clone(),
                request_prefix: self.oauth_scope_prefix.clone(),
            },
            leeway_secs: self.oauth_clock_leeway_secs,
        })
    }
}
