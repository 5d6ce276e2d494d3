//! A passkey approval as the browser test recorded it (`host/src/passkeys/testdata`): the
//! server's check of it is what both the table's row and the divan bench measure.

use equinix_mcp::passkeys::offline::Export;
use equinix_mcp::passkeys::{ApprovalIdentity, Ceremony, CeremonyError, Evidence, Passkey, ceremony};

pub struct Recorded {
    pub ceremony: Ceremony,
    /// The enrolled key, its counter set back so the recorded assertion passes every time.
    pub key: Passkey,
    pub evidence: Evidence,
    /// The record's page, token, request hash, validation and proposer.
    fields: [String; 5],
}

impl Recorded {
    pub fn load() -> Result<Recorded, String> {
        let record: serde_json::Value =
            serde_json::from_str(include_str!("../../src/passkeys/testdata/decision.jsonl").trim())
                .map_err(|e| e.to_string())?;
        let export =
            Export::parse(include_str!("../../src/passkeys/testdata/export.json")).map_err(|e| e.to_string())?;
        let enrolled = &export.enrollments[0];
        let evidence: Evidence = serde_json::from_value(record["passkey"].clone()).map_err(|e| e.to_string())?;
        let text = |f: &str| record[f].as_str().unwrap_or_default().to_string();
        let fields = [text("page"), text("token"), text("request_sha256"), text("validation"), text("proposer")];
        let ceremony = Ceremony::new(&enrolled.origin)?;
        let key = ceremony::without_counter(&enrolled.passkey)?;
        Ok(Recorded { ceremony, key, evidence, fields })
    }

    /// What the server does with an answer: the state rebuilt with the request's challenge, then
    /// webauthn-rs's check of the assertion.
    pub fn check(&self) -> Result<(), CeremonyError> {
        let [page, token, request_sha256, validation, proposer] = &self.fields;
        let id = ApprovalIdentity {
            page,
            token,
            request_sha256,
            validation,
            proposer,
            plan_sha256: String::new(),
            comment_sha256: String::new(),
        };
        let (_, state) = self.ceremony.request(std::slice::from_ref(&self.key), &id)?;
        self.ceremony.check(&self.evidence.assertion, &state).map(|_| ())
    }
}
