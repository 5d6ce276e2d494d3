//! Passkey approvals: a person enrolls a passkey on the approval page (signed in, recently), and
//! from then on approving takes a WebAuthn assertion over the request's own hash
//! ([`challenge`]), made only after the authenticator verified them (PIN, fingerprint, face). The
//! `page_decision` audit record keeps the assertion whole, so `audit verify --passkeys` can check
//! it offline against the enrolled keys ([`offline`]).

pub mod ceremony;
pub(crate) mod challenge;
mod error;
pub mod offline;
pub(crate) mod store;

use std::sync::{Arc, OnceLock};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use webauthn_rs::prelude::{PasskeyRegistration, PublicKeyCredential};

use crate::approval::Once;
pub use crate::audit::events::Evidence;
use crate::audit::{AuditLog, Event, events};
use crate::clock::Clock;
use crate::proposals::{NoteKey, ProposalStore};
pub use ceremony::{Ceremony, CeremonyError, LOCALHOST};
pub use challenge::ApprovalIdentity;
pub(crate) use error::PasskeyError;
use error::unavailable;
pub(crate) use store::{Enrollment, LOCAL_PREFIX, PasskeyStore, Revocation};
/// webauthn-rs's record of an enrolled key (its public key, algorithm and counter).
pub use webauthn_rs::prelude::Passkey;

/// How long an enrollment begun on the page may take.
const ENROLL_MS: u64 = 5 * 60 * 1000;
/// The largest browser answer read (a registration with its attestation is a few kilobytes).
pub(crate) const MAX_ANSWER_BYTES: usize = 16 * 1024;

/// How a person approved, for the operator's policy and the audit record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ApprovedWith {
    /// Their enrolled passkey signed the request, with user verification.
    Passkey,
    /// Their sign-in at the identity provider alone.
    SignIn,
}

impl ApprovedWith {
    pub(crate) fn name(self) -> &'static str {
        match self {
            ApprovedWith::Passkey => "passkey",
            ApprovedWith::SignIn => "sign_in",
        }
    }
}

pub struct Passkeys {
    pub store: PasskeyStore,
    notes: Arc<ProposalStore>,
    clock: Clock,
    audit: Option<Arc<AuditLog>>,
    ceremony: OnceLock<Result<Ceremony, CeremonyError>>,
}

impl Passkeys {
    pub(crate) fn new(
        store: PasskeyStore,
        notes: Arc<ProposalStore>,
        clock: Clock,
        audit: Option<Arc<AuditLog>>,
    ) -> Self {
        Passkeys { store, notes, clock, audit, ceremony: OnceLock::new() }
    }

    /// The relying party for the page at `origin` (known once the server listens), or why there
    /// is none.
    pub(crate) fn ceremony(&self, origin: &str) -> Result<&Ceremony, PasskeyError> {
        self.ceremony.get_or_init(|| Ceremony::new(origin)).as_ref().map_err(|why| PasskeyError::Ceremony(why.clone()))
    }

    /// Every enrollment, after this server's audit log has recorded each revocation in it.
    pub(crate) async fn all(&self) -> Result<Vec<Enrollment>, PasskeyError> {
        let all = self.store.all().await?;
        self.record_revocations(&all).await;
        Ok(all)
    }

    /// `principal`'s passkeys that are not revoked.
    pub(crate) async fn active_of(&self, principal: &str) -> Result<Vec<Enrollment>, PasskeyError> {
        Ok(self.all().await?.into_iter().filter(|e| e.principal == principal && e.revoked.is_none()).collect())
    }

    /// Writes `passkey_enrolled` for each local approver's enrollment (made by a command, not by
    /// this server) and `passkey_revoked` for each revocation this server's log has not recorded
    /// yet, then marks it recorded (a crash between the two records it twice, never not at all).
    pub(crate) async fn record_revocations(&self, all: &[Enrollment]) {
        let Some(log) = self.audit.clone() else { return };
        let chain = log.synced_head().0;
        for e in all {
            let local = e.principal.starts_with(LOCAL_PREFIX);
            if local && !e.enrollment_audited_by.contains(&chain) {
                let public_key = serde_json::to_value(e.passkey.get_public_key()).unwrap_or_default();
                let entry = Event::PasskeyEnrolled(events::PasskeyEnrolled {
                    credential_id: e.credential_id.clone(),
                    principal: e.principal.clone(),
                    rp_id: e.rp_id.clone(),
                    origin: e.origin.clone(),
                    algorithm: format!("{:?}", e.passkey.cred_algorithm()),
                    public_key,
                    peer: "equinix-mcp approvers add (this machine)".into(),
                })
                .at(self.clock.now_ms());
                self.record_then_mark(&log, entry, &e.credential_id, &chain, |e| &mut e.enrollment_audited_by).await;
            }
            let Some(revoked) = &e.revoked else { continue };
            if e.revocation_audited_by.contains(&chain) {
                continue;
            }
            let entry = Event::PasskeyRevoked(events::PasskeyRevoked {
                credential_id: e.credential_id.clone(),
                principal: e.principal.clone(),
                revoked_at: crate::audit::rfc3339(revoked.at_ms),
                revoked_by: revoked.by.clone(),
                reason: revoked.reason.clone(),
            })
            .at(self.clock.now_ms());
            self.record_then_mark(&log, entry, &e.credential_id, &chain, |e| &mut e.revocation_audited_by).await;
        }
    }

    /// Records `entry`, then marks the enrollment `credential_id` as recorded by `chain` in the
    /// list `marks` picks.
    async fn record_then_mark(
        &self,
        log: &Arc<AuditLog>,
        entry: crate::audit::Record,
        credential_id: &str,
        chain: &str,
        marks: fn(&mut Enrollment) -> &mut Vec<String>,
    ) {
        if let Err(why) = AuditLog::record(log.clone(), entry).await {
            tracing::error!("a passkey's enrollment or revocation is not in the audit log: {why}");
            return;
        }
        let mark = chain.to_string();
        let marked = self
            .store
            .update(credential_id, move |e| {
                let list = marks(e);
                if !list.contains(&mark) {
                    list.push(mark.clone());
                }
                Ok(())
            })
            .await;
        if let Err(why) = marked {
            tracing::warn!("a recorded enrollment or revocation is not marked recorded: {why}");
        }
    }

    /// Begins an enrollment for the person of session `session_key` (the options for
    /// `navigator.credentials.create()`, as JSON); the state waits in the store for the answer.
    pub(crate) async fn begin_enrollment(
        &self,
        origin: &str,
        session_key: &str,
        principal: &str,
        shown_name: &str,
    ) -> Result<String, PasskeyError> {
        let ceremony = self.ceremony(origin)?;
        let mine = self.all().await?.into_iter().filter(|e| e.principal == principal);
        let exclude = mine.filter_map(|e| URL_SAFE_NO_PAD.decode(&e.credential_id).ok()).collect();
        let (options, state) =
            ceremony.begin_enrollment(principal, shown_name, exclude).map_err(PasskeyError::Ceremony)?;
        let bytes = serde_json::to_vec(&state).map_err(unavailable)?;
        let now = self.clock.now_ms();
        self.notes.note_put(&NoteKey::Enrollment(session_key), &bytes, ENROLL_MS, false, now).await?;
        serde_json::to_string(&options).map_err(unavailable)
    }

    /// Finishes the enrollment begun for session `session_key` with the browser's `answer`: the
    /// audit record first, then the store. The enrollment, or why not.
    pub(crate) async fn finish_enrollment(
        &self,
        origin: &str,
        session_key: &str,
        principal: &str,
        answer: &str,
        peer: &str,
    ) -> Result<Enrollment, PasskeyError> {
        let ceremony = self.ceremony(origin)?;
        let now = self.clock.now_ms();
        let key = NoteKey::Enrollment(session_key);
        let Some(bytes) = self.notes.note_get(&key, now).await? else {
            return Err(PasskeyError::NoEnrollmentBegun);
        };
        // an enrollment's state is used once, on every replica
        if !self.notes.claim(Once::PasskeyEnrollment(&bytes), now).await? {
            return Err(PasskeyError::AnsweredAlready);
        }
        let state: PasskeyRegistration = serde_json::from_slice(&bytes).map_err(unavailable)?;
        let enrollment = ceremony.finish_enrollment(answer, &state, principal, now).map_err(PasskeyError::Ceremony)?;
        let Some(log) = self.audit.clone() else {
            return Err(PasskeyError::NoAuditLog);
        };
        let public_key = serde_json::to_value(enrollment.passkey.get_public_key()).map_err(unavailable)?;
        let entry = Event::PasskeyEnrolled(events::PasskeyEnrolled {
            credential_id: enrollment.credential_id.clone(),
            principal: principal.to_string(),
            rp_id: enrollment.rp_id.clone(),
            origin: enrollment.origin.clone(),
            algorithm: format!("{:?}", enrollment.passkey.cred_algorithm()),
            public_key,
            peer: peer.to_string(),
        })
        .at(now);
        AuditLog::record(log.clone(), entry).await.map_err(|e| {
            tracing::error!("a passkey's enrollment is not in the audit log: {e}");
            PasskeyError::NotRecorded(e.reason().to_string())
        })?;
        if let Err(why) = self.store.insert(enrollment.clone()).await {
            let entry = Event::PasskeyEnrollmentNotKept(events::PasskeyNotKept {
                credential_id: enrollment.credential_id.clone(),
                principal: principal.to_string(),
                reason: why.to_string(),
            })
            .at(self.clock.now_ms());
            if let Err(e) = AuditLog::record(log, entry).await {
                tracing::error!("an enrollment that was not kept is not marked in the audit log: {e}");
            }
            return Err(why.into());
        }
        tracing::info!(%principal, credential = %enrollment.credential_id, "a passkey was enrolled");
        Ok(enrollment)
    }

    /// The options for `navigator.credentials.get()` approving `id` with one of `mine`, as JSON.
    pub(crate) fn request_options(
        &self,
        origin: &str,
        mine: &[Enrollment],
        id: &ApprovalIdentity,
    ) -> Result<String, PasskeyError> {
        let ceremony = self.ceremony(origin)?;
        let keys: Vec<_> = mine.iter().map(|e| e.passkey.clone()).collect();
        let (options, _) = ceremony.request(&keys, id).map_err(PasskeyError::Ceremony)?;
        serde_json::to_string(&options).map_err(unavailable)
    }

    /// Checks the browser's `answer` approving `id` by `approver`: the passkey is enrolled, theirs,
    /// not revoked, made for this page's relying party, and its assertion verifies over this
    /// request with UV; then its counter moves on in the store (once, on every replica).
    pub(crate) async fn check(
        &self,
        origin: &str,
        approver: &str,
        answer: &str,
        id: &ApprovalIdentity<'_>,
    ) -> Result<Evidence, PasskeyError> {
        self.check_as(origin, Some(approver), answer, id).await.map(|(_, evidence)| evidence)
    }

    /// [`Passkeys::check`] for whoever's enrolled passkey made the answer (a local approver, who
    /// signs in with nothing else): whose it is, and the evidence.
    pub(crate) async fn check_any(
        &self,
        origin: &str,
        answer: &str,
        id: &ApprovalIdentity<'_>,
    ) -> Result<(String, Evidence), PasskeyError> {
        self.check_as(origin, None, answer, id).await
    }

    async fn check_as(
        &self,
        origin: &str,
        approver: Option<&str>,
        answer: &str,
        id: &ApprovalIdentity<'_>,
    ) -> Result<(String, Evidence), PasskeyError> {
        let ceremony = self.ceremony(origin)?;
        let assertion: PublicKeyCredential =
            serde_json::from_str(answer).map_err(|e| PasskeyError::NotAnAssertion(e.to_string()))?;
        let credential_id = URL_SAFE_NO_PAD.encode(&assertion.raw_id);
        let all = self.all().await?;
        let Some(enrolled) = all.into_iter().find(|e| e.credential_id == credential_id) else {
            return Err(PasskeyError::NotEnrolled);
        };
        if let Some(approver) = approver.filter(|a| *a != enrolled.principal) {
            return Err(PasskeyError::SomeoneElses { owner: enrolled.principal, approver: approver.to_string() });
        }
        if let Some(r) = &enrolled.revoked {
            return Err(PasskeyError::Revoked { by: r.by.clone(), reason: r.reason.clone() });
        }
        if enrolled.rp_id != ceremony.rp_id || !ceremony.admits(&enrolled.origin) {
            return Err(PasskeyError::OtherOrigin { enrolled: enrolled.origin, page: ceremony.origin.clone() });
        }
        let (_, state) =
            ceremony.request(std::slice::from_ref(&enrolled.passkey), id).map_err(PasskeyError::Ceremony)?;
        let result = ceremony.check(&assertion, &state).map_err(PasskeyError::Ceremony)?;
        let now = self.clock.now_ms();
        let counter = result.counter();
        // the counter moves on once across replicas: two uses of one answer cannot both pass
        let result_for_store = result.clone();
        self.store
            .update(&credential_id, move |e| {
                if e.revoked.is_some() {
                    return Err("this passkey was revoked a moment ago".into());
                }
                let stored = e.passkey.counter_value();
                if (counter > 0 || stored > 0) && counter <= stored {
                    return Err(
                        "the passkey's signature counter did not move on: a replayed answer, or a cloned authenticator"
                            .into(),
                    );
                }
                e.passkey.update_credential(&result_for_store);
                e.last_used_ms = Some(now);
                Ok(())
            })
            .await?;
        let evidence = Evidence {
            credential_id,
            rp_id: ceremony.rp_id.clone(),
            origin: ceremony.origin.clone(),
            counter,
            user_verified: result.user_verified(),
            assertion,
        };
        Ok((enrolled.principal, evidence))
    }
}

/// webauthn-rs keeps a passkey's counter to itself; its serde form says it.
trait CounterValue {
    fn counter_value(&self) -> u32;
}

impl CounterValue for webauthn_rs::prelude::Passkey {
    fn counter_value(&self) -> u32 {
        serde_json::to_value(self)
            .ok()
            .and_then(|v| v.pointer("/cred/counter").and_then(|c| c.as_u64()))
            .map_or(u32::MAX, |c| c as u32)
    }
}
