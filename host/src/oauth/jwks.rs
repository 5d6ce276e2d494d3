//! The issuer's signing keys (RFC 7517 JWK Set) and the signature algorithms this server
//! accepts. Keys are checked when the set is read; a key this server cannot use (another `use`,
//! an unknown type or curve, a short RSA modulus) is skipped, not fatal: providers publish
//! encryption keys and keys for algorithms they are retiring in the same set.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ring::signature::{self, RsaPublicKeyComponents, UnparsedPublicKey};
use serde_json::Value;

/// Most keys one set may hold (providers publish a handful; more is a misconfiguration or an
/// attack on the time it takes to find one).
pub(crate) const MAX_KEYS: usize = 64;

/// The asymmetric JWS algorithms accepted (RFC 7518, RFC 8037). `none` and the HMAC ones never:
/// a resource server holding a shared secret could mint tokens itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Alg {
    Rs256,
    Rs384,
    Rs512,
    Ps256,
    Ps384,
    Ps512,
    Es256,
    Es384,
    EdDsa,
}

impl Alg {
    pub(crate) fn parse(name: &str) -> Option<Alg> {
        Some(match name {
            "RS256" => Alg::Rs256,
            "RS384" => Alg::Rs384,
            "RS512" => Alg::Rs512,
            "PS256" => Alg::Ps256,
            "PS384" => Alg::Ps384,
            "PS512" => Alg::Ps512,
            "ES256" => Alg::Es256,
            "ES384" => Alg::Es384,
            // RFC 9864 names the Ed25519 case of EdDSA on its own
            "EdDSA" | "Ed25519" => Alg::EdDsa,
            _ => return None,
        })
    }

    fn fits(self, key: &Material) -> bool {
        matches!(
            (self, key),
            (Alg::Rs256 | Alg::Rs384 | Alg::Rs512 | Alg::Ps256 | Alg::Ps384 | Alg::Ps512, Material::Rsa { .. })
                | (Alg::Es256, Material::P256(_))
                | (Alg::Es384, Material::P384(_))
                | (Alg::EdDsa, Material::Ed25519(_))
        )
    }
}

/// A public key's bytes, as ring takes them.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Material {
    Rsa {
        n: Vec<u8>,
        e: Vec<u8>,
    },
    /// The uncompressed point (0x04, x, y).
    P256(Vec<u8>),
    P384(Vec<u8>),
    Ed25519(Vec<u8>),
}

/// One usable signing key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Key {
    pub kid: Option<String>,
    /// The key's own `alg`, when it names one: then only that algorithm may use it.
    alg: Option<Alg>,
    material: Material,
}

impl Key {
    /// Whether a token signed with `alg` may be checked with this key.
    pub(crate) fn accepts(&self, alg: Alg) -> bool {
        self.alg.is_none_or(|a| a == alg) && alg.fits(&self.material)
    }

    /// Checks `signature` over `message`; the caller has checked [`Key::accepts`].
    pub(crate) fn verify(&self, alg: Alg, message: &[u8], signature: &[u8]) -> bool {
        let rsa = |params: &'static signature::RsaParameters| match &self.material {
            Material::Rsa { n, e } => RsaPublicKeyComponents { n, e }.verify(params, message, signature).is_ok(),
            _ => false,
        };
        let point = |params: &'static dyn signature::VerificationAlgorithm, bytes: &[u8]| {
            UnparsedPublicKey::new(params, bytes).verify(message, signature).is_ok()
        };
        match (alg, &self.material) {
            (Alg::Rs256, _) => rsa(&signature::RSA_PKCS1_2048_8192_SHA256),
            (Alg::Rs384, _) => rsa(&signature::RSA_PKCS1_2048_8192_SHA384),
            (Alg::Rs512, _) => rsa(&signature::RSA_PKCS1_2048_8192_SHA512),
            (Alg::Ps256, _) => rsa(&signature::RSA_PSS_2048_8192_SHA256),
            (Alg::Ps384, _) => rsa(&signature::RSA_PSS_2048_8192_SHA384),
            (Alg::Ps512, _) => rsa(&signature::RSA_PSS_2048_8192_SHA512),
            (Alg::Es256, Material::P256(p)) => point(&signature::ECDSA_P256_SHA256_FIXED, p),
            (Alg::Es384, Material::P384(p)) => point(&signature::ECDSA_P384_SHA384_FIXED, p),
            (Alg::EdDsa, Material::Ed25519(x)) => point(&signature::ED25519, x),
            _ => false,
        }
    }
}

/// Why an issuer's JWK Set gave no keys: fetching it, or reading it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum JwksError {
    /// The document could not be had (its transport's root cause, an HTTP status, its size).
    #[error("{0}")]
    Fetch(String),
    #[error("the JWK Set is not JSON: {0}")]
    NotJson(String),
    #[error("the JWK Set has no `keys` array")]
    NoKeysArray,
    #[error("the JWK Set holds {0} keys, more than the {MAX_KEYS} accepted")]
    TooManyKeys(usize),
}

/// The keys of one JWK Set document.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KeySet {
    pub keys: Vec<Key>,
    /// Keys in the document this server cannot use.
    pub skipped: usize,
}

impl KeySet {
    /// Reads a JWK Set. Errors name what is wrong with the document; a key that is merely not
    /// for us is counted in `skipped`.
    pub fn parse(document: &[u8]) -> Result<KeySet, JwksError> {
        let value: Value = serde_json::from_slice(document).map_err(|e| JwksError::NotJson(e.to_string()))?;
        let Some(keys) = value.get("keys").and_then(Value::as_array) else {
            return Err(JwksError::NoKeysArray);
        };
        if keys.len() > MAX_KEYS {
            return Err(JwksError::TooManyKeys(keys.len()));
        }
        let mut set = KeySet::default();
        for jwk in keys {
            match read_key(jwk) {
                Some(key) => set.keys.push(key),
                None => set.skipped += 1,
            }
        }
        Ok(set)
    }

    /// The key a token's header names: by `kid` when it has one, else the only key that fits
    /// the algorithm (a set of several such keys and no `kid` is ambiguous, so none).
    pub(crate) fn find(&self, kid: Option<&str>, alg: Alg) -> Option<&Key> {
        match kid {
            Some(kid) => self.keys.iter().find(|k| k.kid.as_deref() == Some(kid) && k.accepts(alg)),
            None => {
                let mut fitting = self.keys.iter().filter(|k| k.accepts(alg));
                let first = fitting.next();
                if fitting.next().is_some() { None } else { first }
            }
        }
    }
}

fn bytes(jwk: &Value, field: &str) -> Option<Vec<u8>> {
    URL_SAFE_NO_PAD.decode(jwk.get(field)?.as_str()?).ok()
}

fn read_key(jwk: &Value) -> Option<Key> {
    if jwk.get("use").is_some_and(|u| u != "sig") {
        return None;
    }
    if let Some(ops) = jwk.get("key_ops")
        && !ops.as_array()?.iter().any(|op| op == "verify")
    {
        return None;
    }
    let alg = match jwk.get("alg") {
        None => None,
        Some(name) => Some(Alg::parse(name.as_str()?)?),
    };
    let kid = match jwk.get("kid") {
        None => None,
        Some(kid) => Some(kid.as_str()?.to_string()),
    };
    let material = match (jwk.get("kty")?.as_str()?, jwk.get("crv").and_then(Value::as_str)) {
        ("RSA", _) => {
            let mut n = bytes(jwk, "n")?;
            let e = bytes(jwk, "e")?;
            let leading = n.iter().take_while(|b| **b == 0).count();
            n.drain(..leading);
            // ring checks 2048-8192 bits when verifying; a shorter modulus is skipped here, so
            // the set's report says so at start-up rather than every token failing later
            if n.len() < 256 || n.len() > 1024 || e.is_empty() || e.len() > 8 {
                return None;
            }
            Material::Rsa { n, e }
        }
        ("EC", Some(curve @ ("P-256" | "P-384"))) => {
            let (x, y) = (bytes(jwk, "x")?, bytes(jwk, "y")?);
            let size = if curve == "P-256" { 32 } else { 48 };
            if x.len() != size || y.len() != size {
                return None;
            }
            let point = [&[4u8][..], &x, &y].concat();
            if curve == "P-256" { Material::P256(point) } else { Material::P384(point) }
        }
        ("OKP", Some("Ed25519")) => {
            let x = bytes(jwk, "x")?;
            if x.len() != 32 {
                return None;
            }
            Material::Ed25519(x)
        }
        _ => return None,
    };
    let key = Key { kid, alg, material };
    // a key whose own `alg` does not fit its type could never verify anything
    if key.alg.is_some_and(|a| !a.fits(&key.material)) {
        return None;
    }
    Some(key)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use ring::rand::SystemRandom;
    use ring::signature::{EcdsaKeyPair, Ed25519KeyPair, KeyPair};
    use serde_json::json;

    type Sign = Box<dyn Fn(&[u8]) -> Vec<u8> + Send + Sync>;

    /// A signing key for tests: its JWK and a way to sign.
    pub(crate) struct TestKey {
        pub jwk: Value,
        sign: Sign,
    }

    impl TestKey {
        pub(crate) fn ed25519(kid: &str) -> TestKey {
            let pkcs8 = Ed25519KeyPair::generate_pkcs8(&SystemRandom::new()).unwrap();
            let pair = Ed25519KeyPair::from_pkcs8(pkcs8.as_ref()).unwrap();
            let x = URL_SAFE_NO_PAD.encode(pair.public_key().as_ref());
            let jwk = json!({"kty": "OKP", "crv": "Ed25519", "x": x, "kid": kid, "use": "sig"});
            TestKey { jwk, sign: Box::new(move |m| pair.sign(m).as_ref().to_vec()) }
        }

        pub(crate) fn p256(kid: &str) -> TestKey {
            let rng = SystemRandom::new();
            let alg = &signature::ECDSA_P256_SHA256_FIXED_SIGNING;
            let pkcs8 = EcdsaKeyPair::generate_pkcs8(alg, &rng).unwrap();
            let pair = EcdsaKeyPair::from_pkcs8(alg, pkcs8.as_ref(), &rng).unwrap();
            let point = pair.public_key().as_ref();
            let (x, y) = (URL_SAFE_NO_PAD.encode(&point[1..33]), URL_SAFE_NO_PAD.encode(&point[33..]));
            let jwk = json!({"kty": "EC", "crv": "P-256", "x": x, "y": y, "kid": kid, "alg": "ES256"});
            TestKey { jwk, sign: Box::new(move |m| pair.sign(&SystemRandom::new(), m).unwrap().as_ref().to_vec()) }
        }

        pub(crate) fn sign(&self, message: &[u8]) -> Vec<u8> {
            (self.sign)(message)
        }
    }

    pub(crate) fn set_of(keys: &[&TestKey]) -> KeySet {
        let doc = json!({"keys": keys.iter().map(|k| k.jwk.clone()).collect::<Vec<_>>()});
        KeySet::parse(doc.to_string().as_bytes()).unwrap()
    }

    #[test]
    fn keys_not_for_signing_or_of_unknown_kinds_are_skipped_not_fatal() {
        let ed = TestKey::ed25519("ed");
        let doc = json!({"keys": [
            ed.jwk,
            {"kty": "RSA", "use": "enc", "n": "AQAB", "e": "AQAB", "kid": "enc"},
            {"kty": "oct", "k": "c2VjcmV0", "kid": "hmac"},
            {"kty": "EC", "crv": "P-521", "x": "AA", "y": "AA"},
            {"kty": "RSA", "n": URL_SAFE_NO_PAD.encode([7u8; 128]), "e": "AQAB", "kid": "rsa-1024"},
            {"kty": "OKP", "crv": "Ed25519", "x": URL_SAFE_NO_PAD.encode([1u8; 32]), "alg": "ES256"},
        ]});
        let set = KeySet::parse(doc.to_string().as_bytes()).unwrap();
        assert_eq!((set.keys.len(), set.skipped), (1, 5));
        assert_eq!(KeySet::parse(b"{\"keys\": 3}").unwrap_err(), JwksError::NoKeysArray);
        assert!(KeySet::parse(b"<html>").unwrap_err().to_string().contains("not JSON"));
        let many = json!({"keys": vec![json!({}); MAX_KEYS + 1]});
        let too_many = KeySet::parse(many.to_string().as_bytes()).unwrap_err();
        assert!(matches!(too_many, JwksError::TooManyKeys(_)) && too_many.to_string().contains("more than"));
    }

    #[test]
    fn a_key_is_found_by_kid_and_algorithm_and_without_kid_only_when_unambiguous() {
        let (ed, ec) = (TestKey::ed25519("ed"), TestKey::p256("ec"));
        let set = set_of(&[&ed, &ec]);
        assert!(set.find(Some("ed"), Alg::EdDsa).is_some());
        assert!(set.find(Some("ed"), Alg::Es256).is_none(), "a key only serves algorithms of its type");
        assert!(set.find(Some("ec"), Alg::Rs256).is_none());
        assert!(set.find(Some("nope"), Alg::EdDsa).is_none());
        assert!(set.find(None, Alg::Es256).is_some());
        let two = set_of(&[&ed, &TestKey::ed25519("ed2")]);
        assert!(two.find(None, Alg::EdDsa).is_none(), "two Ed25519 keys and no kid: which one is a guess");
    }

    #[test]
    fn signatures_verify_only_with_their_key_and_message() {
        let (a, b) = (TestKey::p256("a"), TestKey::p256("b"));
        let set = set_of(&[&a, &b]);
        let sig = a.sign(b"message");
        let key_a = set.find(Some("a"), Alg::Es256).unwrap();
        assert!(key_a.verify(Alg::Es256, b"message", &sig));
        assert!(!key_a.verify(Alg::Es256, b"messagf", &sig));
        assert!(!set.find(Some("b"), Alg::Es256).unwrap().verify(Alg::Es256, b"message", &sig));
    }
}
