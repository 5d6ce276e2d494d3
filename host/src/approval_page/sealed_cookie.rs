//! The sign-in under way lives in its browser's cookie, sealed with an AEAD (AES-256-GCM from
//! ring): the browser, and anyone who reads the cookie, learns nothing of its page, `state`,
//! `nonce` or PKCE verifier, and a cookie edited or made up opens to nothing. The key is derived
//! (HKDF-SHA256) from the state key every replica shares, so a sign-in begun on one replica
//! finishes on another, and no other use of that key can open these cookies.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ring::aead::{AES_256_GCM, Aad, LessSafeKey, NONCE_LEN, Nonce, UnboundKey};
use ring::hkdf::{HKDF_SHA256, Salt};
use serde::Serialize;
use serde::de::DeserializeOwned;

/// What the key is derived for: a cookie sealed for another purpose does not open here.
const PURPOSE: &[u8] = b"equinix-mcp approval-page sign-in cookie v1";

/// The most a sealed cookie may be (a browser keeps about 4 KiB per cookie).
const MAX_SEALED: usize = 4096;

#[derive(Clone)]
pub struct CookieSeal {
    key: std::sync::Arc<LessSafeKey>,
}

impl std::fmt::Debug for CookieSeal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CookieSeal(<key>)")
    }
}

/// What is sealed: the value and when it stops opening.
#[derive(Serialize, serde::Deserialize)]
struct Sealed<T> {
    until_ms: u64,
    value: T,
}

impl CookieSeal {
    /// The seal for `state_key` (the confirmation-state key, at least 32 bytes).
    pub fn new(state_key: &[u8]) -> Self {
        let prk = Salt::new(HKDF_SHA256, b"equinix-mcp cookie seal").extract(state_key);
        let mut bytes = [0u8; 32];
        prk.expand(&[PURPOSE], &AES_256_GCM)
            .and_then(|okm| okm.fill(&mut bytes))
            .expect("32 bytes is AES-256-GCM's key length");
        let key = UnboundKey::new(&AES_256_GCM, &bytes).expect("a 32-byte key");
        CookieSeal { key: std::sync::Arc::new(LessSafeKey::new(key)) }
    }

    /// `value` sealed until `until_ms`, as cookie-safe text (base64url of nonce and ciphertext).
    pub(crate) fn seal<T: Serialize>(&self, value: &T, until_ms: u64) -> String {
        let mut data = serde_json::to_vec(&Sealed { until_ms, value }).expect("a sealed value serializes");
        let nonce_bytes: [u8; NONCE_LEN] = rand::random();
        self.key
            .seal_in_place_append_tag(Nonce::assume_unique_for_key(nonce_bytes), Aad::from(PURPOSE), &mut data)
            .expect("a cookie's worth of data seals");
        let mut out = nonce_bytes.to_vec();
        out.extend_from_slice(&data);
        URL_SAFE_NO_PAD.encode(out)
    }

    /// The value sealed in `text`, if this seal made it, nothing in it changed and `now_ms` is
    /// before its end.
    pub(crate) fn open<T: DeserializeOwned>(&self, text: &str, now_ms: u64) -> Option<T> {
        if text.len() > MAX_SEALED {
            return None;
        }
        let mut bytes = URL_SAFE_NO_PAD.decode(text).ok()?;
        if bytes.len() < NONCE_LEN {
            return None;
        }
        let mut data = bytes.split_off(NONCE_LEN);
        let nonce = Nonce::try_assume_unique_for_key(&bytes).ok()?;
        let plain = self.key.open_in_place(nonce, Aad::from(PURPOSE), &mut data).ok()?;
        let sealed: Sealed<T> = serde_json::from_slice(plain).ok()?;
        (now_ms < sealed.until_ms).then_some(sealed.value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize, serde::Deserialize, Debug, PartialEq)]
    struct Note {
        verifier: String,
    }

    #[test]
    fn a_sealed_cookie_reads_as_nothing_and_opens_only_unchanged_in_time_with_its_key() {
        let seal = CookieSeal::new(&[7u8; 32]);
        let note = Note { verifier: "pkce-verifier-3f9a".into() };
        let text = seal.seal(&note, 2_000);
        assert_eq!(seal.open::<Note>(&text, 1_999), Some(Note { verifier: "pkce-verifier-3f9a".into() }));
        let raw = URL_SAFE_NO_PAD.decode(&text).unwrap();
        let shown = String::from_utf8_lossy(&raw);
        assert!(!shown.contains("pkce") && !shown.contains("verifier"), "{shown}");
        assert_ne!(seal.seal(&note, 2_000), text, "a new nonce each time");
        assert_eq!(seal.open::<Note>(&text, 2_000), None, "expired");
        assert_eq!(CookieSeal::new(&[8u8; 32]).open::<Note>(&text, 1), None, "another key");
        for at in [0, NONCE_LEN, raw.len() - 1] {
            let mut edited = raw.clone();
            edited[at] ^= 1;
            assert_eq!(seal.open::<Note>(&URL_SAFE_NO_PAD.encode(&edited), 1), None, "byte {at} edited");
        }
        for junk in ["", "AAAA", "not base64!", &"A".repeat(MAX_SEALED + 4)] {
            assert_eq!(seal.open::<Note>(junk, 1), None, "{junk:.20}");
        }
    }
}
