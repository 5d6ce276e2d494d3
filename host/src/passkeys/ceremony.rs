//! The WebAuthn ceremonies, through webauthn-rs's passkey flows (user verification required, its
//! CBOR, COSE, attestation and signature checks): enrollment as the crate does it, and the
//! approval's assertion with one change. webauthn-rs draws an assertion's challenge at random and
//! keeps it in state the server must hold; ours is the request's own hash
//! ([`super::challenge`]), so the state is rebuilt from the enrolled key and the request whenever
//! it is needed (on any replica, and in `audit verify` years later), and the signature says which
//! request it approved. The challenge is set through the state's serde form, the crate's
//! supported way to persist that state, and read back to check it took.
//!
//! WebAuthn asks for random challenges so an assertion cannot be replayed: ours are unpredictable
//! before the proposal exists (they cover the page's 128 random bits) and each approves one page,
//! decided once; the signature counter, where the authenticator keeps one, must move on too.

use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use reqwest::Url;
use webauthn_rs::prelude::{
    AuthenticationResult, CreationChallengeResponse, CredentialID, Passkey, PasskeyAuthentication, PasskeyRegistration,
    PublicKeyCredential, RegisterPublicKeyCredential, RequestChallengeResponse, Uuid, WebauthnError,
};
use webauthn_rs::{Webauthn, WebauthnBuilder};

use super::challenge::{ApprovalIdentity, challenge};

/// The one host name whose ports all belong to this machine.
pub const LOCALHOST: &str = "localhost";

/// How long the browser gives the person to use their authenticator.
const TIMEOUT: Duration = Duration::from_secs(120);

/// Why a relying party could not be made, a ceremony could not begin, or the browser's answer is
/// refused: what the page and `audit verify` match on, worded as the person (or, for the origin,
/// the operator) reads it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CeremonyError {
    #[error("the page's origin {origin:?}: {why}")]
    NotAnOrigin { origin: String, why: String },
    #[error(
        "passkeys need the page at a host name, and {origin} is an IP address (browsers refuse WebAuthn there); give \
         --approval-url with a name (http://localhost:PORT on this machine)"
    )]
    IpAddress { origin: String },
    #[error("the WebAuthn relying party for {origin}: {why}")]
    RelyingParty { origin: String, why: String },
    /// webauthn-rs could not begin `what` ("the enrollment", "the approval").
    #[error("starting {what}: {why}")]
    NotBegun { what: &'static str, why: String },
    #[error("the browser's answer is not a WebAuthn registration: {0}")]
    NotARegistration(String),
    #[error("the assertion's client data names no origin: {0}")]
    NoOrigin(String),
    #[error(
        "the passkey signed this request on the page at {signed}, not on this page ({ours}): an answer counts only on \
         the page that asked for it, and another page on this machine may show one request and ask for a signature \
         over another"
    )]
    OtherPage { signed: String, ours: String },
    /// WebAuthn refused the answer: what that means to the person, and webauthn-rs's words.
    #[error("{0}")]
    Refused(String),
    #[error("the authenticator did not verify the person (no PIN, fingerprint or face)")]
    NotVerified,
    /// webauthn-rs's state or passkey record is not in the form this server sets or reads: its
    /// words (a newer webauthn-rs would say so here, before any signature is trusted).
    #[error("{0}")]
    State(String),
}

/// The words, for the callers that pass refusals on as text.
impl From<CeremonyError> for String {
    fn from(e: CeremonyError) -> String {
        e.to_string()
    }
}

/// One relying party: the page's host (the RP ID) and its exact origin.
pub struct Ceremony {
    webauthn: Webauthn,
    pub(crate) rp_id: String,
    pub origin: String,
}

impl Ceremony {
    /// For the page at `origin` (`http(s)://HOST[:PORT]`). The RP ID is its host, which must be a
    /// domain name (`localhost` included): browsers refuse WebAuthn on an IP address.
    pub fn new(origin: &str) -> Result<Self, CeremonyError> {
        let url = Url::parse(origin)
            .map_err(|e| CeremonyError::NotAnOrigin { origin: origin.to_string(), why: e.to_string() })?;
        let Some(host) = url.domain() else {
            return Err(CeremonyError::IpAddress { origin: origin.to_string() });
        };
        // the signed origin must be this page's exactly, port included: any process of any user can
        // listen on another port of `localhost`, show a harmless request there and collect the
        // person's signature over this page's challenge. A passkey enrolled at another
        // port still answers here ([`Ceremony::admits`]): the RP ID, `localhost`, is the same.
        let webauthn = WebauthnBuilder::new(host, &url)
            .and_then(|b| b.rp_name("equinix-mcp approvals").timeout(TIMEOUT).allow_any_port(false).build())
            .map_err(|e| CeremonyError::RelyingParty { origin: origin.to_string(), why: e.to_string() })?;
        Ok(Ceremony { webauthn, rp_id: host.to_string(), origin: url.origin().ascii_serialization() })
    }

    /// Whether a passkey enrolled for the page at `origin` answers here: the same relying party,
    /// and the same origin but on `localhost`, where a page takes whichever port is free (the
    /// enrollment page of `approvers add` has one, each local server's page another). Where it
    /// answers, the assertion is still for this page's own origin ([`Ceremony::check`]).
    pub(crate) fn admits(&self, origin: &str) -> bool {
        let Ok(url) = Url::parse(origin) else { return false };
        let ours = Url::parse(&self.origin).ok();
        match ours {
            Some(ours) if self.rp_id == LOCALHOST => url.domain() == Some(LOCALHOST) && url.scheme() == ours.scheme(),
            _ => url.origin().ascii_serialization() == self.origin,
        }
    }

    /// The options for `navigator.credentials.create()` and the state to keep until the answer.
    /// The user handle is a hash of the person's name, so no personal data reaches the
    /// authenticator beyond the name it shows.
    pub(crate) fn begin_enrollment(
        &self,
        principal: &str,
        shown_name: &str,
        exclude: Vec<CredentialID>,
    ) -> Result<(CreationChallengeResponse, PasskeyRegistration), CeremonyError> {
        use sha2::{Digest, Sha256};
        let digest = Sha256::digest(format!("equinix-mcp passkey user v1\0{principal}").as_bytes());
        let handle = Uuid::from_slice(&digest[..16]).expect("16 bytes");
        self.webauthn
            .start_passkey_registration(handle, shown_name, shown_name, Some(exclude))
            .map_err(|e| CeremonyError::NotBegun { what: "the enrollment", why: e.to_string() })
    }

    /// The browser's answer (`navigator.credentials.create()`'s, as JSON) to the enrollment begun
    /// with `state`, checked: the passkey, enrolled to `principal` at `now_ms`.
    pub(crate) fn finish_enrollment(
        &self,
        answer: &str,
        state: &PasskeyRegistration,
        principal: &str,
        now_ms: u64,
    ) -> Result<super::Enrollment, CeremonyError> {
        let answer: RegisterPublicKeyCredential =
            serde_json::from_str(answer).map_err(|e| CeremonyError::NotARegistration(e.to_string()))?;
        let passkey = self.webauthn.finish_passkey_registration(&answer, state).map_err(|e| explain(&e))?;
        Ok(super::Enrollment {
            credential_id: URL_SAFE_NO_PAD.encode(passkey.cred_id()),
            principal: principal.to_string(),
            rp_id: self.rp_id.clone(),
            origin: self.origin.clone(),
            enrolled_at_ms: now_ms,
            passkey,
            last_used_ms: None,
            revoked: None,
            revocation_audited_by: Vec::new(),
            enrollment_audited_by: Vec::new(),
        })
    }

    /// The options for `navigator.credentials.get()` approving `id` with one of `passkeys`, and the
    /// state that checks the answer.
    pub fn request(
        &self,
        passkeys: &[Passkey],
        id: &ApprovalIdentity,
    ) -> Result<(RequestChallengeResponse, PasskeyAuthentication), CeremonyError> {
        let (mut options, state) = self
            .webauthn
            .start_passkey_authentication(passkeys)
            .map_err(|e| CeremonyError::NotBegun { what: "the approval", why: e.to_string() })?;
        let ours = challenge(id);
        let state = with_challenge(&state, &ours)?;
        options.public_key.challenge = ours.to_vec();
        Ok((options, state))
    }

    /// Checks `assertion` against `state`: the origin (this page's exactly), the RP ID, UP and
    /// UV, the challenge, the signature, and that a counter the authenticator keeps moved past
    /// the one enrolled.
    pub fn check(
        &self,
        assertion: &PublicKeyCredential,
        state: &PasskeyAuthentication,
    ) -> Result<AuthenticationResult, CeremonyError> {
        // said in the person's words before webauthn-rs refuses it as "another site"
        let signed = signed_origin(assertion)?;
        if signed != self.origin {
            return Err(CeremonyError::OtherPage { signed, ours: self.origin.clone() });
        }
        let result = self.webauthn.finish_passkey_authentication(assertion, state).map_err(|e| explain(&e))?;
        if !result.user_verified() {
            // the passkey flow requires UV already; stated again where the approval depends on it
            return Err(CeremonyError::NotVerified);
        }
        Ok(result)
    }
}

/// The origin the browser wrote into the assertion's signed client data (checked again, with
/// the rest of it, by webauthn-rs).
pub(crate) fn signed_origin(assertion: &PublicKeyCredential) -> Result<String, CeremonyError> {
    #[derive(serde::Deserialize)]
    struct ClientData {
        origin: String,
    }
    let data: ClientData = serde_json::from_slice(&assertion.response.client_data_json)
        .map_err(|e| CeremonyError::NoOrigin(e.to_string()))?;
    Ok(data.origin)
}

/// `state` with its challenge replaced by `ours`, read back to be sure it took.
fn with_challenge(state: &PasskeyAuthentication, ours: &[u8; 32]) -> Result<PasskeyAuthentication, CeremonyError> {
    let state_error = |e: serde_json::Error| CeremonyError::State(e.to_string());
    let encoded = URL_SAFE_NO_PAD.encode(ours);
    let mut form = serde_json::to_value(state).map_err(state_error)?;
    let slot = form.pointer_mut("/ast/challenge").filter(|v| v.is_string());
    let Some(slot) = slot else {
        let why = "webauthn-rs's authentication state has no challenge where this server sets it";
        return Err(CeremonyError::State(why.into()));
    };
    *slot = serde_json::Value::String(encoded.clone());
    let state: PasskeyAuthentication = serde_json::from_value(form).map_err(state_error)?;
    let back = serde_json::to_value(&state).map_err(state_error)?;
    if back.pointer("/ast/challenge").and_then(|v| v.as_str()) != Some(encoded.as_str()) {
        return Err(CeremonyError::State("webauthn-rs did not keep the approval's challenge".into()));
    }
    Ok(state)
}

/// A copy of `passkey` whose stored counter is zero: `audit verify` checks each recorded
/// assertion's signature on its own and the counters' order across the log itself.
pub fn without_counter(passkey: &Passkey) -> Result<Passkey, CeremonyError> {
    let state_error = |e: serde_json::Error| CeremonyError::State(e.to_string());
    let mut form = serde_json::to_value(passkey).map_err(state_error)?;
    let Some(slot) = form.pointer_mut("/cred/counter").filter(|v| v.is_u64()) else {
        let why = "webauthn-rs's passkey record has no counter where this server expects one";
        return Err(CeremonyError::State(why.into()));
    };
    *slot = serde_json::Value::from(0u32);
    serde_json::from_value(form).map_err(state_error)
}

/// What a refused ceremony means to the person.
fn explain(e: &WebauthnError) -> CeremonyError {
    let what = match e {
        WebauthnError::MismatchedChallenge => "the passkey signed another request than this one",
        WebauthnError::UserNotVerified => {
            "the authenticator did not verify the person (no PIN, fingerprint or face), which approving requires"
        }
        WebauthnError::UserNotPresent => "the authenticator saw no person present",
        WebauthnError::CredentialPossibleCompromise => {
            "the passkey's signature counter did not move on: a replayed answer, or a cloned authenticator"
        }
        WebauthnError::InvalidRPOrigin => "the answer was made for another site",
        WebauthnError::InvalidRPIDHash => "the answer was made for another relying party",
        WebauthnError::CredentialNotFound => "the answer was made with a passkey this approval did not ask for",
        WebauthnError::AuthenticationFailure => "the passkey's signature does not verify",
        _ => "",
    };
    CeremonyError::Refused(if what.is_empty() {
        format!("the passkey's answer was refused: {e}")
    } else {
        format!("{what} ({e})")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_relying_party_needs_a_host_name_and_says_which_origin_it_refused() {
        let ip = Ceremony::new("http://127.0.0.1:8931").err().unwrap();
        assert_eq!(ip, CeremonyError::IpAddress { origin: "http://127.0.0.1:8931".into() });
        assert!(ip.to_string().contains("give --approval-url with a name"), "{ip}");
        let garbage = Ceremony::new("not a url").err().unwrap();
        assert!(matches!(&garbage, CeremonyError::NotAnOrigin { origin, .. } if origin == "not a url"), "{garbage:?}");
        let local = Ceremony::new("http://localhost:8931").unwrap();
        assert_eq!((local.rp_id.as_str(), local.origin.as_str()), ("localhost", "http://localhost:8931"));
        assert!(local.admits("http://localhost:40001"), "another port of localhost is the same relying party");
        assert!(!local.admits("https://localhost:8931") && !local.admits("http://example.com:8931"));
    }
}
