//! The approval page's flags: its client at the identity provider, how recent a sign-in must be,
//! where the page listens (stdio) and how browsers reach it, where passkeys are kept.
//! [`PageArgs::settings`] builds its [`PageSettings`].

use std::path::PathBuf;

use anyhow::{Context, bail};
use clap::Args;

use super::PageSettings;
use crate::oauth::settings::AuthArgs;

#[derive(Args, Debug, Clone)]
pub struct PageArgs {
    /// Serve the approval page (beside /mcp over HTTP; on --approval-listen for stdio) with this
    /// OpenID Connect client id at the
    /// identity provider: a person signs in there, reads the exact request and approves or
    /// declines it. The client secret comes from EQUINIX_MCP_APPROVAL_CLIENT_SECRET or
    /// --approval-client-secret-file, never a flag; without either the page is a public client
    /// (PKCE only).
    #[arg(long, env = "EQUINIX_MCP_APPROVAL_CLIENT_ID", value_name = "ID")]
    pub(crate) approval_client_id: Option<String>,

    /// The page's identity provider (default: --oauth-issuer).
    #[arg(long, env = "EQUINIX_MCP_APPROVAL_ISSUER", value_name = "URL", requires = "approval_client_id")]
    pub(crate) approval_issuer: Option<String>,

    /// A file (mode 600) holding the page's client secret.
    #[arg(long, env = "EQUINIX_MCP_APPROVAL_CLIENT_SECRET_FILE", value_name = "PATH", requires = "approval_client_id")]
    pub(crate) approval_client_secret_file: Option<PathBuf>,

    /// How recent the person's authentication must be to approve (OpenID `max_age`), in seconds.
    #[arg(long, env = "EQUINIX_MCP_APPROVAL_MAX_AGE_SECS", default_value_t = 300, value_name = "SECS",
          value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub(crate) approval_max_age_secs: u64,

    /// The ID-token claim listing the person's groups.
    #[arg(long, env = "EQUINIX_MCP_APPROVAL_GROUPS_CLAIM", default_value = "groups", value_name = "CLAIM")]
    pub(crate) approval_groups_claim: String,

    /// The scopes the sign-in asks for, space-separated: `openid`, `profile` and `email` (the
    /// page shows people by the name and e-mail these release) and those under which the provider
    /// releases the groups claim (Okta, Dex, Authelia: `groups`; Keycloak and Entra ID release it
    /// without one).
    #[arg(
        long,
        env = "EQUINIX_MCP_APPROVAL_SCOPES",
        default_value = "openid profile email groups",
        value_name = "SCOPES"
    )]
    pub(crate) approval_scopes: String,

    /// A stdio server's approval page listens here, on loopback only. With an identity provider
    /// the default is 127.0.0.1:0 (a free port: the provider must then accept any loopback port
    /// of the redirect URI, RFC 8252 7.3); for local approvers it is 127.0.0.1:8932, and when
    /// that is taken (another server) the page takes a free port and its links carry it.
    #[arg(long, env = "EQUINIX_MCP_APPROVAL_LISTEN", value_name = "ADDR")]
    pub(crate) approval_listen: Option<std::net::SocketAddr>,

    /// Where browsers reach this server, as an origin (https://mcp.example.internal); default:
    /// --public-url's origin, or the address the server listens on.
    #[arg(long, env = "EQUINIX_MCP_APPROVAL_URL", value_name = "URL", requires = "approval_client_id")]
    pub approval_url: Option<String>,

    /// Where the approval page keeps enrolled passkeys when the proposal store is not shared
    /// (default: beside the audit log, AUDIT.passkeys.json); with a Redis store, in Redis.
    #[arg(long, env = "EQUINIX_MCP_PASSKEYS_FILE", value_name = "PATH", requires = "approval_client_id")]
    pub(crate) passkeys_file: Option<PathBuf>,
}

impl PageArgs {
    /// The page's settings, when `--approval-client-id` is given; the provider, the principal
    /// claim and the leeway default to the OAuth sign-in's (`auth`).
    pub(crate) fn settings(&self, auth: &AuthArgs) -> anyhow::Result<Option<PageSettings>> {
        let Some(client_id) = self.approval_client_id.clone() else { return Ok(None) };
        if let (Some(page), Some(endpoint)) = (&self.approval_issuer, &auth.oauth_issuer)
            && page != endpoint
        {
            // a person is ISSUER#CLAIM: under two issuers the proposer and the approver could never
            // be the same principal, and "not the proposer" would let anyone approve their own change
            bail!(
                "--approval-issuer {page} differs from --oauth-issuer {endpoint}: the page must sign people in with \
                 the provider that issues the MCP endpoint's tokens, so one person is one principal on both (drop \
                 --approval-issuer to use --oauth-issuer's)"
            );
        }
        let issuer = self.approval_issuer.clone().or_else(|| auth.oauth_issuer.clone()).context(
            "--approval-client-id needs the page's identity provider: --approval-issuer, or --oauth-issuer to use the \
             same",
        )?;
        let client_secret = crate::secret::from_env_or_file(
            std::env::var("EQUINIX_MCP_APPROVAL_CLIENT_SECRET").ok(),
            self.approval_client_secret_file.as_deref(),
            "EQUINIX_MCP_APPROVAL_CLIENT_SECRET",
            "--approval-client-secret-file",
        )?;
        let base_url = self.approval_url.clone().or_else(|| {
            let public = reqwest::Url::parse(auth.public_url.as_deref()?).ok()?;
            Some(public.origin().ascii_serialization())
        });
        Ok(Some(PageSettings {
            issuer,
            client_id,
            client_secret,
            max_age_secs: self.approval_max_age_secs,
            groups_claim: self.approval_groups_claim.clone(),
            scopes: scopes(&self.approval_scopes)?,
            principal_claim: auth.oauth_principal_claim.clone(),
            leeway_secs: auth.oauth_clock_leeway_secs,
            base_url,
            passkeys_file: self.passkeys_file.clone(),
        }))
    }
}

/// `--approval-scopes` as the sign-in sends it: `openid` among them, each a scope token.
fn scopes(text: &str) -> anyhow::Result<String> {
    let scopes: Vec<&str> = text.split_whitespace().collect();
    if !scopes.contains(&"openid") {
        bail!("--approval-scopes {text:?} must include `openid`: the page signs people in with OpenID Connect");
    }
    if let Some(bad) = scopes.iter().find(|s| !s.bytes().all(|b| b.is_ascii_graphic() && b != b'"' && b != b'\\')) {
        bail!("--approval-scopes: {bad:?} is no scope (printable ASCII without quotes or backslashes, RFC 6749 3.3)");
    }
    Ok(scopes.join(" "))
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    #[derive(Parser)]
    struct Both {
        #[command(flatten)]
        page: super::PageArgs,
        #[command(flatten)]
        auth: super::AuthArgs,
    }

    #[test]
    fn the_page_signs_people_in_with_the_mcp_endpoints_issuer_or_not_at_all() {
        let parse = |extra: &[&str]| {
            let oauth = ["--oauth-issuer", "https://idp.example", "--public-url", "https://mcp.example/mcp"];
            let args = ["serve", "--approval-client-id", "page"].iter().chain(&oauth).chain(extra);
            Both::try_parse_from(args).unwrap()
        };
        let other = parse(&["--approval-issuer", "https://other.example"]);
        let e = other.page.settings(&other.auth).unwrap_err().to_string();
        assert!(e.contains("differs from --oauth-issuer") && e.contains("one person is one principal"), "{e}");
        let same = parse(&["--approval-issuer", "https://idp.example"]);
        assert_eq!(same.page.settings(&same.auth).unwrap().unwrap().issuer, "https://idp.example");
        let default = parse(&["--oauth-principal-claim", "oid"]);
        let settings = default.page.settings(&default.auth).unwrap().unwrap();
        assert_eq!((settings.issuer.as_str(), settings.principal_claim.as_str()), ("https://idp.example", "oid"));
    }

    #[test]
    fn the_scopes_include_openid_and_are_scope_tokens() {
        assert_eq!(super::scopes("  openid   groups ").unwrap(), "openid groups");
        assert!(super::scopes("profile groups").unwrap_err().to_string().contains("must include `openid`"));
        assert!(super::scopes("openid gr\"oups").is_err());
    }
}
