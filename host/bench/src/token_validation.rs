//! The cost of validating an OAuth access token once the issuer's keys are known (at
//! most 50 µs per request), through the functions the HTTP middleware runs: a token's first
//! request goes through [`equinix_mcp::oauth::validate`] (split and decode, the header rules, the
//! key lookup, the signature and the claims), its later ones find it in the
//! [`VerifiedCache`] (its SHA-256 and its `exp`). Two rows per algorithm.

use std::time::{Duration, Instant, SystemTime};

use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use ring::rand::SystemRandom;
use ring::signature::{self, EcdsaKeyPair, Ed25519KeyPair, KeyPair, RsaKeyPair};
use serde_json::{Value, json};

use crate::table::Table;
use equinix_mcp::oauth::jwks::KeySet;
use equinix_mcp::oauth::{ClaimRules, ScopeNames, VerifiedCache, validate};

/// A 2048-bit RSA key made for this benchmark only (PKCS#8, base64): ring verifies RSA but
/// cannot generate it. Nothing trusts it.
const RSA_PKCS8: &str = "\
    MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC70C08ScXzMb35JBQvSmNQtMeNcZzHJiNwRUntNQjkbCTS\
    0ShIPcO7E4+NTbNKHK/1nobnDrFZXGqAMqVqdJHXCWPjCz04JshLRLhL2cPBbZs7Ampx2+vX2xM4x8ZAEXvpAcbRWQnYts4Q\
    KvKgxoKm4UTrM3Vfb8i/j6fzy0S9TU81XzRC8fJfendi94aZgem+IHbEjTkJloSrW3+hiaqqt6ty7eWabeA8hOupc33ft4Ta\
    LSNRSSyWmFWyUd7s2SaToohOeK9eh2/AhgxaxN12/4rr0d554tgux0VN85gt3fHZj9qlzap8MAfIpCdGkmVwdjk+TA1jj+4i\
    ngQ95GjrAgMBAAECggEAA6wHoQzK3f0JpdFaw6yZ/H33A4DxJm5Mdb7Pud+Lk6EO/JWHoBdKYwyi2zRls6aT73gbUxvVGSuB\
    ZDhD8QI5HRHbQ2540pw6K56QVotPadIRcuSSiDSwi8EwwwTE5NkdVGpAejSvc0PqYM6LfTE5ugw1eL5s0QzdHpcEcEkicuuu\
    HrP4pyeLHofN7ZGhsZKdc2LtZLk2BWMBsAb3Q7ZQEnxV50MXtVvzuA8ZfSgFgU9dxSk2pIlNi1a/nNqX2ucD4oBXAsPFinT/\
    zY/uSJnuFpyByM3pjiDf8zqij0hhZbAGE7xQ2I9+vI0kzWzpKAO1gB1AhGgoAOQUqrsNLeHZYQKBgQDfgf7p9uXUt8CQzXnx\
    wvEjm5Z6buDgvLyRh+TuPD1jWR6O5PPyBu9ok8PW3gB1tnO+CiOcrjjqoITdUwaRyta7fL6rd68BvsprGSFE8gRLKzHIs7O6\
    MeKXc0VZSbgU6yKBQpU9bgE4J7DyUiU+QVeKlIw2jLUZyk6zhW68oR2eVwKBgQDXHcfHJFDsOaf2Bss/fHbc6TCW6P+1jNiJ\
    TwU6SL7ed+BtFaLIEH+VfhoDKXMIbY172hi/09LWvpvN9m3KTagWm4HLs94hDtkR/o5d0BGMmAFb7h9Excix7VatCCx1hy08\
    KL+gPVMdE4V5HKWNuwA2iEAxx5C+HJFeA80ACJeFjQKBgQCBf/yG6vr3aRA11hgVr/Gvw/JINf4tuK05VRebwWOAMJ64BIgj\
    b0k/un35/N8fVPty3MUNfxSTPTY+VmC0EGaicwC2sL3BsR3vN7xDCkbalshdlWFJPKYhQjSoK0JxPFvdsQpvcVFbjAPGIzpY\
    +9sQ/EjRQm2b58/5zBIBUQisOQKBgGhpegh85hJiwdW24nxEK2V6gi0dltBGNuwewMjTemF9Ch+oesRkzah/9pxGSCF1G1Fc\
    QNsLM7Er/2/vBsdE/itK+6sl+NFO5anIRs3eKkZ1mWNHp0G4RnumWYXPC9VX8Wrb1HcwjOD2ErkAYJL0i1vsskv3M5gzQZPC\
    gIRdpz4ZAoGAE8IzMOKtI2FTAlXG3T5ZcjKloYppR5bkrr8mLLrz0yIlxgUaPkf1Xxmf7t6yyrEwhWc/sU2TgG2h0MHVhvCz\
    VJPQBKVMNEjCjQ7wqVUZFLq392CUIqSHxYLKU7+e1M4qqdI7RA3coowOX2r7vVhMLGyTCJ1mWkNiYIOypYKghmw=";
/// Its modulus, base64url, as the JWK carries it.
const RSA_N: &str = "\
    u9AtPEnF8zG9-SQUL0pjULTHjXGcxyYjcEVJ7TUI5Gwk0tEoSD3DuxOPjU2zShyv9Z6G5w6xWVxqgDKlanSR1wlj4ws9OCbI\
    S0S4S9nDwW2bOwJqcdvr19sTOMfGQBF76QHG0VkJ2LbOECryoMaCpuFE6zN1X2_Iv4-n88tEvU1PNV80QvHyX3p3YveGmYHp\
    viB2xI05CZaEq1t_oYmqqrercu3lmm3gPITrqXN937eE2i0jUUkslphVslHe7Nkmk6KITnivXodvwIYMWsTddv-K69HeeeLY\
    LsdFTfOYLd3x2Y_apc2qfDAHyKQnRpJlcHY5PkwNY4_uIp4EPeRo6w";

/// The per-request figure's ceiling.
const TARGET_US: f64 = 50.0;

type Sign = Box<dyn Fn(&[u8]) -> Vec<u8>>;

struct Signer {
    alg: &'static str,
    jwk: Value,
    sign: Sign,
}

fn signers() -> anyhow::Result<Vec<Signer>> {
    let rng = SystemRandom::new();
    let rsa = RsaKeyPair::from_pkcs8(&STANDARD.decode(RSA_PKCS8)?).map_err(|e| anyhow::anyhow!("{e}"))?;
    let ec_alg = &signature::ECDSA_P256_SHA256_FIXED_SIGNING;
    let ec_pkcs8 = EcdsaKeyPair::generate_pkcs8(ec_alg, &rng).map_err(|e| anyhow::anyhow!("{e}"))?;
    let ec = EcdsaKeyPair::from_pkcs8(ec_alg, ec_pkcs8.as_ref(), &rng).map_err(|e| anyhow::anyhow!("{e}"))?;
    let ed_pkcs8 = Ed25519KeyPair::generate_pkcs8(&rng).map_err(|e| anyhow::anyhow!("{e}"))?;
    let ed = Ed25519KeyPair::from_pkcs8(ed_pkcs8.as_ref()).map_err(|e| anyhow::anyhow!("{e}"))?;
    let point = ec.public_key().as_ref().to_vec();
    let ed_x = URL_SAFE_NO_PAD.encode(ed.public_key().as_ref());
    Ok(vec![
        Signer {
            alg: "RS256",
            jwk: json!({"kty": "RSA", "kid": "rsa", "n": RSA_N.replace(char::is_whitespace, ""), "e": "AQAB"}),
            sign: Box::new(move |m| {
                let mut sig = vec![0; rsa.public().modulus_len()];
                rsa.sign(&signature::RSA_PKCS1_SHA256, &SystemRandom::new(), m, &mut sig).expect("signs");
                sig
            }),
        },
        Signer {
            alg: "ES256",
            jwk: json!({"kty": "EC", "crv": "P-256", "kid": "ec",
                        "x": URL_SAFE_NO_PAD.encode(&point[1..33]), "y": URL_SAFE_NO_PAD.encode(&point[33..])}),
            sign: Box::new(move |m| ec.sign(&SystemRandom::new(), m).expect("signs").as_ref().to_vec()),
        },
        Signer {
            alg: "EdDSA",
            jwk: json!({"kty": "OKP", "crv": "Ed25519", "kid": "ed", "x": ed_x}),
            sign: Box::new(move |m| ed.sign(m).as_ref().to_vec()),
        },
    ])
}

/// One row per algorithm: the median of batches of validations of a realistic token (the
/// claims oidc-provider issues), with the keys already known.
pub fn rows(t: &mut Table, quick: bool) -> anyhow::Result<()> {
    let signers = signers()?;
    let jwks = json!({"keys": signers.iter().map(|s| s.jwk.clone()).collect::<Vec<_>>()});
    let keys = KeySet::parse(jwks.to_string().as_bytes()).map_err(anyhow::Error::msg)?;
    let rules = ClaimRules {
        issuer: "https://idp.example.com/realms/netops".into(),
        audience: "https://mcp.example.internal/mcp".into(),
        principal_claim: "sub".into(),
        scopes: ScopeNames::default(),
        leeway_secs: 30,
    };
    let now = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH)?.as_secs();
    let claims = json!({"jti": "6e1b2f4c-0d7a-4d55-9c1e-1f2a3b4c5d6e", "sub": "agent-netops-7", "iat": now,
        "exp": now + 600, "scope": "fabric:read fabric:propose fabric:confirm", "client_id": "agent-netops-7",
        "iss": rules.issuer, "aud": rules.audience});
    let (batch, batches) = if quick { (50, 5) } else { (500, 21) };
    for signer in &signers {
        let kid = signer.jwk["kid"].as_str().unwrap_or_default();
        let header = URL_SAFE_NO_PAD.encode(json!({"alg": signer.alg, "typ": "at+jwt", "kid": kid}).to_string());
        let payload = URL_SAFE_NO_PAD.encode(claims.to_string());
        let signature = URL_SAFE_NO_PAD.encode((signer.sign)(format!("{header}.{payload}").as_bytes()));
        let token = format!("{header}.{payload}.{signature}");
        let verified = validate(&keys, &rules, &token, now).map_err(|e| anyhow::anyhow!("{}: {}", signer.alg, e.0))?;
        let first = median_us(batch, batches, || validate(&keys, &rules, std::hint::black_box(&token), now).is_ok());
        let cache = VerifiedCache::default();
        cache.put(&token, &verified, cache.generation(), now, rules.leeway_secs);
        let later =
            median_us(batch, batches, || cache.get(std::hint::black_box(&token), now, rules.leeway_secs).is_some());
        t.row(
            &format!(
                "OAuth access token, first request: signature and claims checked ({}, {} bytes)",
                signer.alg,
                token.len()
            ),
            format!("{first:.1} µs"),
            "<= 50 µs per request",
            first <= TARGET_US,
        );
        t.row(
            &format!("OAuth access token, each later request: found verified by its SHA-256 ({})", signer.alg),
            format!("{later:.2} µs"),
            "<= 50 µs per request",
            later <= TARGET_US,
        );
    }
    Ok(())
}

/// The median over `batches` of the time per call of `f`, each batch `batch` calls, in µs.
fn median_us(batch: u32, batches: usize, f: impl Fn() -> bool) -> f64 {
    let mut per_call: Vec<Duration> = (0..batches)
        .map(|_| {
            let started = Instant::now();
            for _ in 0..batch {
                std::hint::black_box(f());
            }
            started.elapsed() / batch
        })
        .collect();
    per_call.sort();
    per_call[per_call.len() / 2].as_secs_f64() * 1e6
}
