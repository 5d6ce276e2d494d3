//! Bearer-token authentication for the HTTP transport. `--auth-token-file` lists the accepted
//! tokens, one per line, each optionally preceded by a label naming its principal:
//!
//! ```text
//! # comments and blank lines are ignored
//! alice  3f9c0d6e...   (at least 32 characters)
//! bob    7a11be04...
//! 9d2e51c0...          (no label: the principal is `token-` + 12 hex of its SHA-256)
//! ```
//!
//! Tokens with the same label are one principal (that is how to rotate a token without
//! losing pending proposals). Only SHA-256 digests of the tokens are kept in memory, and a
//! presented token is compared with every digest in constant time.
//!
//! With `--oauth-issuer` a token that is not in the file is validated as the issuer's JWT access
//! token (see [`crate::oauth`]).

use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use crate::oauth::{Access, Invalid, ResourceServer};
use crate::principal::Principal;

/// The token file and the tokens last read from it. SIGHUP rereads it: added and removed tokens
/// count from the next request, and a request already admitted keeps its principal. A file that
/// no longer reads or parses leaves the tokens as they were.
pub(crate) struct TokenFile {
    path: Option<PathBuf>,
    tokens: RwLock<Arc<AuthTokens>>,
}

impl TokenFile {
    pub(crate) fn load(path: &Path) -> anyhow::Result<Self> {
        let tokens = RwLock::new(Arc::new(AuthTokens::load(path)?));
        Ok(TokenFile { path: Some(path.to_path_buf()), tokens })
    }

    /// Tokens that never change (tests).
    #[cfg(test)]
    pub fn fixed(tokens: AuthTokens) -> Self {
        TokenFile { path: None, tokens: RwLock::new(Arc::new(tokens)) }
    }

    pub(crate) fn current(&self) -> Arc<AuthTokens> {
        self.tokens.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Rereads the file; returns how many principals it now names.
    pub(crate) fn reload(&self) -> anyhow::Result<usize> {
        let Some(path) = &self.path else { return Ok(self.current().principals()) };
        let fresh = AuthTokens::load(path)?;
        let principals = fresh.principals();
        *self.tokens.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(fresh);
        Ok(principals)
    }
}

/// Shorter tokens are refused when the file is read: a bearer token is the whole secret.
pub(crate) const MIN_TOKEN_CHARS: usize = 32;

pub(crate) struct AuthTokens {
    entries: Vec<([u8; 32], Principal)>,
}

impl AuthTokens {
    /// Reads and checks the token file: owned by the user running the server (or root), not
    /// readable by group or others, well-formed lines. Owner and mode are those of the file that
    /// is read (a symlink is followed, and its target is what must pass), taken from the open
    /// file itself, so the file cannot be swapped between the check and the read.
    pub(crate) fn load(path: &Path) -> anyhow::Result<Self> {
        let text = crate::secret::read_private_file(path, "--auth-token-file")?;
        Self::parse(&text).map_err(|e| anyhow::anyhow!("--auth-token-file {}: {e}", path.display()))
    }

    /// Parses the file's text. Errors name the line, never the token.
    pub(crate) fn parse(text: &str) -> anyhow::Result<Self> {
        let mut entries: Vec<([u8; 32], Principal)> = Vec::new();
        for (n, line) in text.lines().enumerate().map(|(i, l)| (i + 1, l.trim())) {
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let words: Vec<&str> = line.split_whitespace().collect();
            let (label, token) = match words.as_slice() {
                [token] => (None, *token),
                [label, token] => (Some(*label), *token),
                _ => anyhow::bail!("line {n}: expected `TOKEN` or `LABEL TOKEN`, found {} words", words.len()),
            };
            if token.chars().count() < MIN_TOKEN_CHARS {
                anyhow::bail!("line {n}: the token is shorter than {MIN_TOKEN_CHARS} characters");
            }
            if !token.bytes().all(|b| b.is_ascii_graphic()) {
                anyhow::bail!("line {n}: the token must be printable ASCII (it travels in an HTTP header)");
            }
            let digest: [u8; 32] = Sha256::digest(token.as_bytes()).into();
            let principal = match label {
                Some(l) if valid_label(l) => Principal::named(l),
                Some(_) => anyhow::bail!("line {n}: a label is 1-64 characters of A-Z a-z 0-9 . _ @ -"),
                None => Principal::named(&format!("token-{}", &hex::encode(digest)[..12])),
            };
            if entries.iter().any(|(d, _)| *d == digest) {
                anyhow::bail!("line {n}: the same token appears twice");
            }
            entries.push((digest, principal));
        }
        if entries.is_empty() {
            anyhow::bail!("no tokens (one per line, optionally `LABEL TOKEN`)");
        }
        Ok(AuthTokens { entries })
    }

    /// Number of distinct principals.
    pub(crate) fn principals(&self) -> usize {
        let mut names: Vec<&Principal> = self.entries.iter().map(|(_, p)| p).collect();
        names.sort();
        names.dedup();
        names.len()
    }

    /// The principal a presented token authenticates, compared in constant time against every
    /// digest (no early exit, so timing tells nothing about which, or how much, matched).
    pub(crate) fn principal_of(&self, presented: &str) -> Option<Principal> {
        let digest: [u8; 32] = Sha256::digest(presented.as_bytes()).into();
        let mut found = None;
        for (known, principal) in &self.entries {
            if bool::from(digest.ct_eq(known)) {
                found = Some(principal.clone());
            }
        }
        found
    }
}

fn valid_label(l: &str) -> bool {
    (1..=64).contains(&l.len()) && l.bytes().all(|b| b.is_ascii_alphanumeric() || b"._@-".contains(&b))
}

/// Who may use the HTTP server: the token file's tokens, the OAuth issuer's access tokens, or
/// both (a token-file token is tried first; a label and a subject are different principals).
pub(crate) struct Authenticator {
    pub tokens: Option<Arc<TokenFile>>,
    pub oauth: Option<Arc<ResourceServer>>,
}

/// Axum middleware: a request without a valid bearer token gets 401 and never reaches MCP; a
/// valid one carries its [`Principal`] and [`Access`] in the request extensions (rmcp hands them
/// to the tool call as `http::request::Parts`).
pub(crate) async fn require_bearer(
    State(auth): State<Arc<Authenticator>>,
    mut request: Request,
    next: Next,
) -> Response {
    let unhold = |request: &Request| {
        // a refused request proves nothing: its connection is as evictable as a silent one
        if let Some(handle) = request.extensions().get::<super::connections::ConnectionHandle>() {
            handle.unhold();
        }
    };
    if request.headers().get_all(header::AUTHORIZATION).iter().nth(1).is_some() {
        unhold(&request);
        // which one would count is a guess a proxy and this server could make differently
        tracing::warn!(method = %request.method(), path = %request.uri().path(), "refused a request with several Authorization headers");
        crate::metrics::metrics().auth_refusal("several_authorization_headers");
        let body = serde_json::json!({"error": "invalid_request", "message":
            "the request carries several Authorization headers; send exactly one `Authorization: Bearer <token>`"});
        let mut response = (StatusCode::BAD_REQUEST, axum::Json(body)).into_response();
        // RFC 6750 section 3.1: a malformed request is `invalid_request`, with where to sign in
        if let Some(oauth) = &auth.oauth
            && let Ok(value) = HeaderValue::from_str(&format!(
                "Bearer error=\"invalid_request\", resource_metadata=\"{}\"",
                oauth.metadata_url()
            ))
        {
            response.headers_mut().insert(header::WWW_AUTHENTICATE, value);
        }
        return response;
    }
    let presented = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split_once(' '))
        // the scheme is case-insensitive (RFC 9110 11.1)
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .map(|(_, token)| token.trim().to_owned());
    let refusal: Option<Invalid> = match presented {
        None => None,
        Some(token) => {
            let labelled = auth.tokens.as_ref().and_then(|file| file.current().principal_of(&token));
            match (labelled, &auth.oauth) {
                (Some(principal), _) => {
                    request.extensions_mut().insert(principal);
                    return next.run(request).await;
                }
                (None, Some(oauth)) if crate::oauth::jwt::looks_like_jwt(&token) => {
                    match oauth.authenticate(&token).await {
                        Ok(verified) => {
                            let access = Access { scopes: verified.scopes, oauth: Some(oauth.clone()) };
                            request.extensions_mut().insert(verified.principal);
                            request.extensions_mut().insert(access);
                            return next.run(request).await;
                        }
                        Err(invalid) => Some(invalid),
                    }
                }
                (None, Some(_)) => {
                    Some(Invalid("the bearer token is not one of this server's tokens, nor a JWT".into()))
                }
                (None, None) => Some(Invalid("the bearer token is not one of this server's tokens".into())),
            }
        }
    };
    unhold(&request);
    crate::metrics::metrics().auth_refusal(if refusal.is_some() { "invalid_token" } else { "no_token" });
    let reason = refusal.as_ref().map_or("no `Authorization: Bearer <token>` header", |r| r.0.as_str());
    tracing::warn!(method = %request.method(), path = %request.uri().path(), "refused an HTTP request: {reason}");
    let how = match (&auth.tokens, &auth.oauth) {
        (_, Some(oauth)) => format!(
            "sign in with the authorization server named at {} and send its access token for this server as \
             `Authorization: Bearer <token>`",
            oauth.metadata_url()
        ),
        _ => "send a token from the server's --auth-token-file as `Authorization: Bearer <token>`".into(),
    };
    let (error, challenge) = match &auth.oauth {
        Some(oauth) => {
            (if refusal.is_some() { "invalid_token" } else { "unauthorized" }, oauth.challenge(refusal.as_ref()))
        }
        None => ("unauthorized", "Bearer realm=\"equinix-mcp\"".to_string()),
    };
    let body = serde_json::json!({"error": error, "message": format!("{reason}; {how}")});
    let mut response = (StatusCode::UNAUTHORIZED, axum::Json(body)).into_response();
    if let Ok(value) = HeaderValue::from_str(&challenge) {
        response.headers_mut().insert(header::WWW_AUTHENTICATE, value);
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
    const B: &str = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";

    #[test]
    fn labels_name_principals_and_unlabelled_tokens_get_a_digest_name() {
        let t = AuthTokens::parse(&format!("# team\nalice {A}\n\n{B}\n")).unwrap();
        assert_eq!(t.principal_of(A), Some(Principal::named("alice")));
        let b = t.principal_of(B).unwrap();
        assert!(b.as_str().starts_with("token-") && b.as_str().len() == 18, "{b}");
        assert_eq!(t.principal_of("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"), None, "a prefix is not the token");
        assert_eq!(t.principal_of(""), None);
        assert_eq!(t.principals(), 2);
    }

    #[test]
    fn bad_files_are_refused_by_line_without_echoing_the_token() {
        for (text, says) in [
            ("alice short".to_string(), "line 1: the token is shorter"),
            (format!("a b {A}"), "line 1: expected"),
            (format!("{A}\n{A}"), "line 2: the same token appears twice"),
            (format!("bad/label {A}"), "line 1: a label"),
            ("# nothing\n".to_string(), "no tokens"),
        ] {
            let e = AuthTokens::parse(&text).err().unwrap().to_string();
            assert!(e.contains(says), "{e}");
            assert!(!e.contains(A), "the token leaked into the error: {e}");
        }
    }

    #[test]
    fn one_label_on_two_tokens_is_one_principal() {
        let t = AuthTokens::parse(&format!("ops {A}\nops {B}")).unwrap();
        assert_eq!(t.principal_of(A), t.principal_of(B));
        assert_eq!(t.principals(), 1);
    }
}
