//! JWT access tokens (RFC 9068 profile, RFC 8725 practices): the compact form, the header
//! rules, and the claims a resource server must check. Pure: the caller finds the key and the
//! time, so every rule unit-tests without a provider.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::Deserialize;
use serde_json::Value;

use super::jwks::{Alg, Key};
use super::scopes::{ScopeNames, Scopes};
use crate::principal::Principal;

/// Longest token read (an Entra ID token with many groups is about 6 KB).
pub(crate) const MAX_TOKEN_BYTES: usize = 16 * 1024;
/// Longest principal claim accepted.
pub(crate) const MAX_SUBJECT_BYTES: usize = 255;

/// Why a token is refused: the `error_description` of an `invalid_token` answer. Never the
/// token, and never a value read from a token that did not verify.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invalid(pub String);

impl Invalid {
    pub(crate) fn new(why: impl Into<String>) -> Self {
        Invalid(why.into())
    }
}

/// A token split and decoded, its signature not yet checked.
#[derive(Debug)]
pub(crate) struct Unverified<'a> {
    pub alg: Alg,
    pub kid: Option<String>,
    signing_input: &'a str,
    signature: Vec<u8>,
    payload: Vec<u8>,
}

/// Whether a presented bearer token is shaped like a JWS at all (three base64url parts).
pub(crate) fn looks_like_jwt(token: &str) -> bool {
    token.split('.').count() == 3 && token.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b))
}

/// Splits and decodes a compact JWS and applies the header rules.
pub(crate) fn parse(token: &str) -> Result<Unverified<'_>, Invalid> {
    if token.len() > MAX_TOKEN_BYTES {
        return Err(Invalid::new(format!("the token is longer than {MAX_TOKEN_BYTES} bytes")));
    }
    let mut parts = token.split('.');
    let (Some(h), Some(p), Some(s), None) = (parts.next(), parts.next(), parts.next(), parts.next()) else {
        return Err(Invalid::new("the token is not a JWT (three base64url parts separated by dots)"));
    };
    let decode = |part: &str, what: &str| {
        URL_SAFE_NO_PAD.decode(part).map_err(|_| Invalid::new(format!("the JWT's {what} is not unpadded base64url")))
    };
    let UniqueKeys(header) = serde_json::from_slice(&decode(h, "header")?)
        .map_err(|e| Invalid::new(format!("the JWT header is not a JSON object: {e}")))?;
    let text = |name: &str| match header.get(name) {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.as_str())),
        Some(_) => Err(Invalid::new(format!("the JWT header's `{name}` is not a string"))),
    };
    let alg = match text("alg")?.ok_or_else(|| Invalid::new("the JWT header has no `alg`"))? {
        "none" => return Err(Invalid::new("the JWT is unsigned (`alg: none`)")),
        name if name.starts_with("HS") => {
            return Err(Invalid::new(
                "the JWT is signed with an HMAC algorithm; only the issuer's public-key signatures are accepted",
            ));
        }
        name => Alg::parse(name).ok_or_else(|| {
            Invalid::new("the JWT's `alg` is not one of RS256/384/512, PS256/384/512, ES256, ES384, EdDSA")
        })?,
    };
    if header.contains_key("crit") {
        // RFC 7515 4.1.11: an extension the recipient does not implement makes the token invalid
        return Err(Invalid::new("the JWT header has a `crit` parameter, and this server implements no extension"));
    }
    if let Some(typ) = text("typ")? {
        // RFC 9068 types access tokens `at+jwt`; Entra ID, Okta and Keycloak send `JWT`.
        // Anything else (an ID token's logout, a DPoP proof) is not an access token.
        let typ = typ.to_ascii_lowercase();
        if !matches!(typ.as_str(), "jwt" | "at+jwt" | "application/at+jwt") {
            return Err(Invalid::new("the JWT's `typ` is not an access token's (`at+jwt` or `JWT`)"));
        }
    }
    let signing_input = &token[..h.len() + 1 + p.len()];
    let kid = text("kid")?.map(str::to_string);
    Ok(Unverified { alg, kid, signing_input, signature: decode(s, "signature")?, payload: decode(p, "payload")? })
}

impl Unverified<'_> {
    /// The claims, once `key` has verified the signature.
    pub(crate) fn verify(self, key: &Key) -> Result<Vec<u8>, Invalid> {
        if !key.accepts(self.alg) || !key.verify(self.alg, self.signing_input.as_bytes(), &self.signature) {
            return Err(Invalid::new("the JWT's signature does not verify with the issuer's key"));
        }
        Ok(self.payload)
    }
}

/// The rules for the claims of this server's tokens.
#[derive(Clone, Debug)]
pub struct ClaimRules {
    pub issuer: String,
    pub audience: String,
    pub principal_claim: String,
    pub scopes: ScopeNames,
    /// Clock skew tolerated on `exp`, `nbf` and `iat`, in seconds.
    pub leeway_secs: u64,
}

/// Who a verified token speaks for and what it may do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verified {
    pub principal: Principal,
    pub scopes: Scopes,
    /// `exp`, in seconds since the epoch.
    pub expires_at: u64,
}

/// A JSON object whose keys are each given once: a claim given twice is refused, so this server
/// and any other reader of the token can never see two different values.
pub(crate) struct UniqueKeys(pub(crate) serde_json::Map<String, Value>);

impl<'de> Deserialize<'de> for UniqueKeys {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = UniqueKeys;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<UniqueKeys, A::Error> {
                let mut out = serde_json::Map::new();
                while let Some((key, value)) = map.next_entry::<String, Value>()? {
                    if out.contains_key(&key) {
                        return Err(serde::de::Error::custom(format!("the claim `{key}` is given twice")));
                    }
                    out.insert(key, value);
                }
                Ok(UniqueKeys(out))
            }
        }
        deserializer.deserialize_map(Visit)
    }
}

/// The one rule that names a person from a verified token, for the MCP endpoint's access tokens
/// and the approval page's ID tokens alike: the value of the operator's principal claim
/// (`--oauth-principal-claim`), a string of 1 to [`MAX_SUBJECT_BYTES`] bytes without control
/// characters. A token without it is refused: no other claim (`sub`, `email`) is read in its
/// place, so the person who proposes and the person who signs in to decide are named alike.
/// `token` names the token in the refusal ("the token", "the ID token").
pub(crate) fn principal_claim<'a>(
    claims: &'a serde_json::Map<String, Value>,
    claim: &str,
    token: &str,
) -> Result<&'a str, Invalid> {
    let subject = match claims.get(claim) {
        Some(Value::String(s)) => s.as_str(),
        Some(_) => {
            return Err(Invalid::new(format!("{token}'s `{claim}` claim (the principal claim) is not a string")));
        }
        None => {
            return Err(Invalid::new(format!(
                "{token} has no `{claim}` claim, which names the person here (--oauth-principal-claim); no other \
                 claim is read in its place"
            )));
        }
    };
    if subject.is_empty() || subject.len() > MAX_SUBJECT_BYTES || subject.chars().any(char::is_control) {
        return Err(Invalid::new(format!(
            "{token}'s `{claim}` claim must be 1-{MAX_SUBJECT_BYTES} bytes without control characters"
        )));
    }
    Ok(subject)
}

fn numeric_date(claims: &serde_json::Map<String, Value>, claim: &str) -> Result<Option<f64>, Invalid> {
    match claims.get(claim) {
        None => Ok(None),
        Some(Value::Number(n)) => Ok(n.as_f64()),
        Some(_) => Err(Invalid::new(format!("the `{claim}` claim is not a number of seconds"))),
    }
}

impl ClaimRules {
    /// Checks verified claims at `now` (seconds since the epoch).
    pub(crate) fn check(&self, claims: &[u8], now: u64) -> Result<Verified, Invalid> {
        let UniqueKeys(all) = serde_json::from_slice(claims)
            .map_err(|e| Invalid::new(format!("the JWT's claims are not a JSON object: {e}")))?;
        match all.get("iss").and_then(Value::as_str) {
            Some(iss) if iss == self.issuer => {}
            Some(_) => return Err(Invalid::new("the token was issued by another issuer (`iss`)")),
            None => return Err(Invalid::new("the token has no `iss` claim")),
        }
        let audiences: Vec<&str> = match all.get("aud") {
            Some(Value::String(a)) => vec![a.as_str()],
            Some(Value::Array(many)) => many.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        if !audiences.contains(&self.audience.as_str()) {
            return Err(Invalid::new(format!(
                "the token's audience (`aud`) does not name this server ({}); request it for this resource (RFC 8707)",
                self.audience
            )));
        }
        let now = now as f64;
        let leeway = self.leeway_secs as f64;
        let exp = match numeric_date(&all, "exp")? {
            None => return Err(Invalid::new("the token has no `exp` claim")),
            Some(exp) if now >= exp + leeway => return Err(Invalid::new("the token has expired (`exp`)")),
            Some(exp) => exp,
        };
        if numeric_date(&all, "nbf")?.is_some_and(|nbf| now + leeway < nbf) {
            return Err(Invalid::new("the token is not valid yet (`nbf`)"));
        }
        if numeric_date(&all, "iat")?.is_some_and(|iat| now + leeway < iat) {
            return Err(Invalid::new("the token was issued in the future (`iat`)"));
        }
        // an ID token for the same audience is no access token: it names who signed in, not
        // what a client may do (Keycloak marks its kinds in a `typ` claim)
        // (not `nonce`: some providers copy it into access tokens too)
        if all.contains_key("at_hash") || all.contains_key("c_hash") {
            return Err(Invalid::new("the token is an ID token (`at_hash` or `c_hash`), not an access token"));
        }
        if all.get("typ").and_then(Value::as_str).is_some_and(|t| !t.eq_ignore_ascii_case("bearer")) {
            return Err(Invalid::new("the token's `typ` claim says it is not an access token"));
        }
        let subject = principal_claim(&all, &self.principal_claim, "the token")?;
        let expires_at = exp.max(0.0) as u64;
        Ok(Verified {
            principal: Principal::subject(&self.issuer, subject),
            scopes: self.scopes.granted(&all),
            expires_at,
        })
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::super::jwks::tests::{TestKey, set_of};
    use super::super::scopes::Scope;
    use super::*;
    use serde_json::json;

    pub(crate) const NOW: u64 = 1_800_000_000;

    pub(crate) fn rules() -> ClaimRules {
        ClaimRules {
            issuer: "https://idp.example".into(),
            audience: "https://mcp.example/mcp".into(),
            principal_claim: "sub".into(),
            scopes: ScopeNames::default(),
            leeway_secs: 30,
        }
    }

    pub(crate) fn good_claims() -> Value {
        json!({"iss": "https://idp.example", "aud": "https://mcp.example/mcp", "sub": "alice",
               "exp": NOW + 300, "iat": NOW, "scope": "fabric:read fabric:propose"})
    }

    pub(crate) fn sign(key: &TestKey, header: Value, claims: &Value) -> String {
        let h = URL_SAFE_NO_PAD.encode(header.to_string());
        let p = URL_SAFE_NO_PAD.encode(claims.to_string());
        let sig = URL_SAFE_NO_PAD.encode(key.sign(format!("{h}.{p}").as_bytes()));
        format!("{h}.{p}.{sig}")
    }

    fn check(key: &TestKey, token: &str) -> Result<Verified, Invalid> {
        let set = set_of(&[key]);
        let unverified = parse(token)?;
        let found = set.find(unverified.kid.as_deref(), unverified.alg).ok_or(Invalid::new("no key"))?;
        rules().check(&unverified.verify(found)?, NOW)
    }

    #[test]
    fn a_good_token_names_its_subject_and_scopes() {
        let key = TestKey::ed25519("k1");
        let token = sign(&key, json!({"alg": "EdDSA", "kid": "k1", "typ": "at+jwt"}), &good_claims());
        let v = check(&key, &token).unwrap();
        assert_eq!(v.principal, Principal::subject("https://idp.example", "alice"));
        assert_eq!(v.scopes, Scopes::NONE.with(Scope::Read).with(Scope::Propose));
        assert_eq!(v.expires_at, NOW + 300);
        let ec = TestKey::p256("k2");
        let mut many = good_claims();
        many["aud"] = json!(["other", "https://mcp.example/mcp"]);
        assert!(check(&ec, &sign(&ec, json!({"alg": "ES256", "kid": "k2", "typ": "JWT"}), &many)).is_ok());
    }

    #[test]
    fn header_tricks_are_refused_before_any_key_is_used() {
        let key = TestKey::ed25519("k1");
        for (header, says) in [
            (json!({"alg": "none"}), "unsigned"),
            (json!({"alg": "HS256", "kid": "k1"}), "HMAC"),
            (json!({"alg": "ES512", "kid": "k1"}), "not one of"),
            (json!({"alg": "EdDSA", "kid": "k1", "crit": ["exp"]}), "`crit`"),
            (json!({"alg": "EdDSA", "kid": "k1", "typ": "logout+jwt"}), "`typ`"),
            (json!({"kid": "k1"}), "no `alg`"),
            (json!({"alg": 7, "kid": "k1"}), "`alg` is not a string"),
            (json!({"alg": "EdDSA", "kid": "k1", "crit": null}), "`crit`"),
            (json!({"alg": "EdDSA", "kid": "k1", "typ": null}), "`typ` is not a string"),
            (json!(["EdDSA"]), "not a JSON object"),
        ] {
            let e = check(&key, &sign(&key, header.clone(), &good_claims())).unwrap_err();
            assert!(e.0.contains(says), "{header}: {e:?}");
        }
        for junk in ["", "a.b", "a.b.c.d", "!!.e30.e30", "e30.e30.!!"] {
            assert!(parse(junk).is_err(), "{junk:?}");
        }
        assert!(parse(&"a".repeat(MAX_TOKEN_BYTES + 1)).unwrap_err().0.contains("longer"));
    }

    #[test]
    fn an_altered_or_foreign_signature_is_refused() {
        let (key, other) = (TestKey::ed25519("k1"), TestKey::ed25519("k1"));
        let token = sign(&key, json!({"alg": "EdDSA", "kid": "k1"}), &good_claims());
        let mut claims = good_claims();
        claims["sub"] = json!("mallory");
        let forged_payload = URL_SAFE_NO_PAD.encode(claims.to_string());
        let parts: Vec<&str> = token.split('.').collect();
        let altered = format!("{}.{forged_payload}.{}", parts[0], parts[2]);
        assert!(check(&key, &altered).unwrap_err().0.contains("does not verify"));
        let foreign = sign(&other, json!({"alg": "EdDSA", "kid": "k1"}), &good_claims());
        assert!(check(&key, &foreign).unwrap_err().0.contains("does not verify"));
    }

    #[test]
    fn each_claim_rule_refuses_on_its_own() {
        let key = TestKey::ed25519("k1");
        let cases: Vec<(&str, Value, &str)> = vec![
            ("iss", json!("https://evil.example"), "another issuer"),
            ("iss", Value::Null, "no `iss`"),
            ("aud", json!("https://other.example/mcp"), "audience"),
            ("aud", json!(["a", "b"]), "audience"),
            ("aud", Value::Null, "audience"),
            ("exp", json!(NOW - 31), "expired"),
            ("exp", Value::Null, "no `exp`"),
            ("exp", json!("soon"), "not a number"),
            ("nbf", json!(NOW + 31), "not valid yet"),
            ("iat", json!(NOW + 31), "future"),
            ("sub", Value::Null, "no `sub`"),
            ("sub", json!(42), "not a string"),
            ("sub", json!("a\nb"), "control"),
            ("sub", json!("x".repeat(MAX_SUBJECT_BYTES + 1)), "1-255"),
            ("at_hash", json!("77QmUPtjPfzWtF2AnpK9RQ"), "ID token"),
            ("typ", json!("ID"), "`typ` claim"),
        ];
        for (claim, value, says) in cases {
            let mut claims = good_claims();
            match value {
                Value::Null => {
                    claims.as_object_mut().unwrap().remove(claim);
                }
                v => claims[claim] = v,
            }
            let e = check(&key, &sign(&key, json!({"alg": "EdDSA", "kid": "k1"}), &claims)).unwrap_err();
            assert!(e.0.contains(says), "{claim}: {e:?}");
        }
        // within the leeway both ways
        let mut claims = good_claims();
        claims["exp"] = json!(NOW - 29);
        claims["nbf"] = json!(NOW + 29);
        assert!(check(&key, &sign(&key, json!({"alg": "EdDSA", "kid": "k1"}), &claims)).is_ok());
    }

    #[test]
    fn a_claim_given_twice_is_refused_not_read_either_way() {
        let key = TestKey::ed25519("k1");
        let h = URL_SAFE_NO_PAD.encode(json!({"alg": "EdDSA", "kid": "k1"}).to_string());
        let text =
            r#"{"iss":"https://idp.example","aud":"x","aud":"https://mcp.example/mcp","sub":"a","exp":1900000000}"#;
        let p = URL_SAFE_NO_PAD.encode(text);
        let sig = URL_SAFE_NO_PAD.encode(key.sign(format!("{h}.{p}").as_bytes()));
        let e = check(&key, &format!("{h}.{p}.{sig}")).unwrap_err();
        assert!(e.0.contains("`aud` is given twice"), "{e:?}");
    }
}
