//! The ID token the approval page's sign-in returns, checked with the resource server's own JWT
//! code ([`crate::oauth::jwt`]: the same header rules, the same key set, the same signature
//! check) and the OpenID Connect rules for an ID token: the issuer, this page as the audience,
//! the nonce of this sign-in, the expiry, and a recent authentication. Pure: the caller brings
//! the key set and the time.

use serde_json::Value;

use crate::oauth::jwks::KeySet;
use crate::oauth::jwt::{self, Invalid, UniqueKeys};

/// Groups read from the token at most, and the longest group name.
pub(crate) const MAX_GROUPS: usize = 200;
const MAX_GROUP_BYTES: usize = 256;

/// What the page's sign-in requires of an ID token.
#[derive(Clone, Debug)]
pub(crate) struct IdTokenRules {
    pub issuer: String,
    /// The page's client id: the token's audience.
    pub client_id: String,
    /// How long ago the person may have authenticated (`auth_time`), in seconds.
    pub(crate) max_age_secs: u64,
    /// The claim listing the person's groups.
    pub(crate) groups_claim: String,
    /// The claim naming the person (with the issuer): the resource server's principal claim, so
    /// the person who signs in here and the principal of their access tokens are one identity.
    pub principal_claim: String,
    pub leeway_secs: u64,
}

/// Who signed in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct SignedIn {
    /// The value of the principal claim (`--oauth-principal-claim`), as on the MCP endpoint.
    pub subject: String,
    pub groups: Vec<String>,
    /// When the person authenticated at the provider, seconds since the epoch.
    pub auth_time: u64,
    /// The name and e-mail the token gave (for reading only: the subject names the person).
    pub named: super::people::Named,
}

impl IdTokenRules {
    /// Verifies `token` with `keys` and checks its claims at `now` (seconds) for `nonce`.
    pub(crate) fn check(&self, keys: &KeySet, token: &str, nonce: &str, now: u64) -> Result<SignedIn, Invalid> {
        let unverified = jwt::parse(token)?;
        let Some(key) = keys.find(unverified.kid.as_deref(), unverified.alg) else {
            return Err(Invalid::new("the ID token's `kid` names no signing key of the issuer"));
        };
        let claims = unverified.verify(key)?;
        self.claims(&claims, nonce, now)
    }

    fn claims(&self, claims: &[u8], nonce: &str, now: u64) -> Result<SignedIn, Invalid> {
        let UniqueKeys(all) = serde_json::from_slice(claims)
            .map_err(|e| Invalid::new(format!("the ID token's claims are not a JSON object: {e}")))?;
        if all.get("iss").and_then(Value::as_str) != Some(self.issuer.as_str()) {
            return Err(Invalid::new("the ID token was not issued by the approval page's issuer (`iss`)"));
        }
        let audiences: Vec<&str> = match all.get("aud") {
            Some(Value::String(a)) => vec![a.as_str()],
            Some(Value::Array(many)) => many.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        if !audiences.contains(&self.client_id.as_str()) {
            return Err(Invalid::new("the ID token is not for the approval page's client (`aud`)"));
        }
        // the party the token was issued to must be this page: named by `azp` whenever the token
        // has one (a token issued to another client that lists this page among its audiences is
        // that client's), and required when there are several audiences (OIDC Core 3.1.3.7)
        match all.get("azp") {
            Some(Value::String(azp)) if *azp == self.client_id => {}
            Some(_) => return Err(Invalid::new("the ID token was issued to another client (`azp`), not this page")),
            None if audiences.len() > 1 => {
                return Err(Invalid::new("the ID token names several audiences and not this page as `azp`"));
            }
            None => {}
        }
        if all.get("nonce").and_then(Value::as_str) != Some(nonce) {
            return Err(Invalid::new("the ID token's `nonce` is not this sign-in's"));
        }
        let date = |name: &str| match all.get(name) {
            Some(Value::Number(n)) => n.as_f64().map(Some).ok_or(()),
            None => Ok(None),
            Some(_) => Err(()),
        };
        let (now_f, leeway) = (now as f64, self.leeway_secs as f64);
        match date("exp") {
            Ok(Some(exp)) if now_f < exp + leeway => {}
            Ok(Some(_)) => return Err(Invalid::new("the ID token has expired (`exp`)")),
            _ => return Err(Invalid::new("the ID token has no numeric `exp`")),
        }
        match date("iat") {
            Ok(Some(iat)) if iat <= now_f + leeway => {}
            Ok(Some(_)) => return Err(Invalid::new("the ID token was issued in the future (`iat`)")),
            _ => return Err(Invalid::new("the ID token has no numeric `iat`")),
        }
        let auth_time = match date("auth_time") {
            Ok(Some(t)) if t >= 0.0 => t,
            _ => return Err(Invalid::new("the ID token does not say when the person authenticated (`auth_time`)")),
        };
        if auth_time > now_f + leeway {
            return Err(Invalid::new("the ID token's `auth_time` lies in the future"));
        }
        if now_f - auth_time > (self.max_age_secs + self.leeway_secs) as f64 {
            return Err(Invalid::new(format!(
                "the person authenticated {} s ago; approving needs a sign-in within the last {} s",
                (now_f - auth_time) as u64,
                self.max_age_secs
            )));
        }
        // the person is named by the same claim as on the MCP endpoint, never by `sub` in its place:
        // under a provider with pairwise `sub` values the page would otherwise see another person
        let subject = jwt::principal_claim(&all, &self.principal_claim, "the ID token")?.to_string();
        let groups = match all.get(&self.groups_claim) {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(items)) if items.len() <= MAX_GROUPS => {
                let mut groups = Vec::with_capacity(items.len());
                for item in items {
                    match item.as_str() {
                        Some(g) if g.len() <= MAX_GROUP_BYTES => groups.push(g.to_string()),
                        _ => {
                            return Err(Invalid::new(format!(
                                "the ID token's `{}` claim holds something other than group names of at most \
                                 {MAX_GROUP_BYTES} bytes",
                                self.groups_claim
                            )));
                        }
                    }
                }
                groups
            }
            Some(_) => {
                return Err(Invalid::new(format!(
                    "the ID token's `{}` claim is not a list of at most {MAX_GROUPS} group names",
                    self.groups_claim
                )));
            }
        };
        Ok(SignedIn { subject, groups, auth_time: auth_time as u64, named: super::people::Named::of_claims(&all) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oauth::jwks::tests::{TestKey, set_of};
    use crate::oauth::jwt::tests::sign;
    use serde_json::json;

    fn rules() -> IdTokenRules {
        IdTokenRules {
            issuer: "https://idp.example".into(),
            client_id: "approval-page".into(),
            max_age_secs: 300,
            groups_claim: "groups".into(),
            principal_claim: "sub".into(),
            leeway_secs: 30,
        }
    }

    const NOW: u64 = 1_800_000_000;

    fn claims() -> Value {
        json!({
            "iss": "https://idp.example", "aud": "approval-page", "sub": "alice", "nonce": "n-1",
            "exp": NOW + 300, "iat": NOW - 10, "auth_time": NOW - 20, "groups": ["netops"],
        })
    }

    fn check_with(change: impl FnOnce(&mut Value)) -> Result<SignedIn, Invalid> {
        let key = TestKey::ed25519("k1");
        let mut c = claims();
        change(&mut c);
        let token = sign(&key, json!({"alg": "EdDSA", "kid": "k1", "typ": "JWT"}), &c);
        rules().check(&set_of(&[&key]), &token, "n-1", NOW)
    }

    #[test]
    fn a_fresh_token_for_this_page_names_the_person_and_groups() {
        let signed = check_with(|_| {}).unwrap();
        let named = super::super::people::Named::default();
        assert_eq!(
            signed,
            SignedIn { subject: "alice".into(), groups: vec!["netops".into()], auth_time: NOW - 20, named }
        );
        let with_names = check_with(|c| {
            c["name"] = json!("Alice Doe");
            c["email"] = json!("alice@example.com");
        })
        .unwrap();
        assert_eq!(with_names.named.text(), "Alice Doe (alice@example.com)", "the name is read, the subject names");
        assert_eq!(with_names.subject, "alice");
        assert_eq!(
            check_with(|c| c.as_object_mut().unwrap().remove("groups").map(drop).unwrap()).unwrap().groups.len(),
            0
        );
    }

    #[test]
    fn every_rule_refuses_by_name() {
        for (change, says) in [
            (Box::new(|c: &mut Value| c["iss"] = json!("https://other.example")) as Box<dyn FnOnce(&mut Value)>, "iss"),
            (Box::new(|c: &mut Value| c["aud"] = json!("mcp-server")), "aud"),
            (Box::new(|c: &mut Value| c["aud"] = json!(["approval-page", "other"])), "azp"),
            (Box::new(|c: &mut Value| c["nonce"] = json!("n-2")), "nonce"),
            (Box::new(|c: &mut Value| c["exp"] = json!(NOW - 31)), "exp"),
            (Box::new(|c: &mut Value| c["iat"] = json!(NOW + 100)), "iat"),
            (Box::new(|c: &mut Value| c["auth_time"] = json!(NOW - 400)), "within the last 300 s"),
            (Box::new(|c: &mut Value| drop(c.as_object_mut().unwrap().remove("auth_time"))), "auth_time"),
            (Box::new(|c: &mut Value| c["sub"] = json!("")), "sub"),
            (Box::new(|c: &mut Value| drop(c.as_object_mut().unwrap().remove("sub"))), "no `sub` claim"),
            (Box::new(|c: &mut Value| c["azp"] = json!("another-client")), "issued to another client"),
            (Box::new(|c: &mut Value| c["azp"] = json!(7)), "azp"),
            (Box::new(|c: &mut Value| c["groups"] = json!("netops")), "groups"),
            (Box::new(|c: &mut Value| c["groups"] = json!([1])), "groups"),
        ] {
            let e = check_with(change).unwrap_err();
            assert!(e.0.contains(says), "{says}: {e:?}");
        }
        let mut azp = claims();
        azp["aud"] = json!(["approval-page", "other"]);
        azp["azp"] = json!("approval-page");
        assert!(check_with(|c| *c = azp).is_ok(), "several audiences with this page as azp");
    }

    #[test]
    fn the_person_is_named_by_the_principal_claim_alone() {
        // a provider with pairwise `sub` values: the stable id is `oid`, as on the MCP endpoint
        let key = TestKey::ed25519("k1");
        let oid = IdTokenRules { principal_claim: "oid".into(), ..rules() };
        let mut c = claims();
        c["sub"] = json!("pairwise-for-this-page");
        c["oid"] = json!("alice-object-id");
        let token = sign(&key, json!({"alg": "EdDSA", "kid": "k1"}), &c);
        assert_eq!(oid.check(&set_of(&[&key]), &token, "n-1", NOW).unwrap().subject, "alice-object-id");
        // without the claim: refused, never read from `sub` instead
        let without = sign(&key, json!({"alg": "EdDSA", "kid": "k1"}), &claims());
        let e = oid.check(&set_of(&[&key]), &without, "n-1", NOW).unwrap_err();
        assert!(e.0.contains("has no `oid` claim") && e.0.contains("no other claim is read"), "{e:?}");
        // the access tokens' rule is the same function: the same words for the same fault
        let access = crate::oauth::jwt::principal_claim(&serde_json::Map::new(), "oid", "the ID token").unwrap_err();
        assert_eq!(access, e);
        // one audience with this page's `azp` passes
        let mut mine = claims();
        mine["azp"] = json!("approval-page");
        assert!(check_with(|c| *c = mine).is_ok());
    }

    #[test]
    fn another_key_or_an_unsigned_token_is_refused() {
        let (key, other) = (TestKey::ed25519("k1"), TestKey::ed25519("k1"));
        let token = sign(&other, json!({"alg": "EdDSA", "kid": "k1"}), &claims());
        assert!(rules().check(&set_of(&[&key]), &token, "n-1", NOW).unwrap_err().0.contains("signature"));
        let none = sign(&key, json!({"alg": "none", "kid": "k1"}), &claims());
        assert!(rules().check(&set_of(&[&key]), &none, "n-1", NOW).is_err());
    }
}
