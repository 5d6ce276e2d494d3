//! Checking passkey approvals offline: `equinix-mcp passkeys export` writes the enrolled public
//! keys, and `audit verify --passkeys EXPORT` checks every passkey approval in a log against
//! them, with no server: the challenge computed again from the record's own page, token,
//! request hash, validation and proposer, the signature over it by the enrolled key, the origin
//! and RP ID, the UP and UV flags, and each key's counter moving on from record to record.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::challenge::ApprovalIdentity;
use super::{Ceremony, CeremonyError, Enrollment, Evidence, ceremony};
use crate::audit::events;

pub(crate) const EXPORT_FORMAT: &str = "equinix-mcp passkeys export v1";

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Export {
    pub format: String,
    pub(crate) exported_at: String,
    pub enrollments: Vec<Enrollment>,
}

/// Why a file is not a passkey export this version reads.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NotAnExport {
    /// Not JSON of an export's shape: serde's words, which name the line and column.
    #[error("not a passkey export: {0}")]
    Shape(String),
    #[error("format {found:?}, not {EXPORT_FORMAT:?}")]
    Format { found: String },
}

impl Export {
    pub fn parse(text: &str) -> Result<Export, NotAnExport> {
        let export: Export = serde_json::from_str(text).map_err(|e| NotAnExport::Shape(e.to_string()))?;
        if export.format != EXPORT_FORMAT {
            return Err(NotAnExport::Format { found: export.format });
        }
        Ok(export)
    }
}

/// The first record of a log whose passkey approval does not check out, by its `seq` ("?" for a
/// record without one), and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("record {seq}: {why}")]
pub struct Refused {
    pub seq: String,
    pub why: Refusal,
}

/// Why a passkey approval recorded in the log does not check out against the export.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    #[error("a page_decision that does not read: {0}")]
    DoesNotRead(String),
    #[error("a passkey approval that keeps no assertion")]
    NoAssertion,
    #[error("an assertion on a decision not made with a passkey")]
    NotMadeWithAPasskey,
    #[error("an assertion kept on a decision that is not an approval")]
    NotAnApproval,
    #[error("passkey {0} is not in the export")]
    NotInTheExport(String),
    #[error("passkey {credential} belongs to {enrolled} in the export, and the record names {approver} as approver")]
    AnotherApprover { credential: String, enrolled: String, approver: String },
    #[error("the export's RP ID {rp_id} is not its origin's host {host}")]
    RpIdNotTheOrigin { rp_id: String, host: String },
    #[error("the assertion was made at {made_at}, not at {enrolled_at}'s page")]
    AnotherOrigin { made_at: String, enrolled_at: String },
    #[error("the record says counter {recorded} and the signed authenticator data says {signed}")]
    CounterDiffers { recorded: u32, signed: u32 },
    #[error(
        "passkey {credential}'s counter {counter} does not move on from {last} in an earlier record (a replayed \
         assertion, or a cloned authenticator)"
    )]
    CounterStill { credential: String, counter: u32, last: u32 },
    /// The signature itself, or the page it was made on: the ceremony's words.
    #[error(transparent)]
    Ceremony(#[from] CeremonyError),
}

/// What the passkey approvals of a log came to.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Checked {
    pub approvals: usize,
}

/// Checks every passkey approval among `records` (the log's records, in order) against `export`.
/// `Err`: the first record that fails, by its `seq`, and why. Each `page_decision` is read as the
/// type the server wrote it through ([`events::PageDecision`]), and its challenge computed from
/// that type's members by [`identity`].
pub fn check_log<'a>(records: impl IntoIterator<Item = &'a Value>, export: &Export) -> Result<Checked, Refused> {
    let keys: HashMap<&str, &Enrollment> = export.enrollments.iter().map(|e| (e.credential_id.as_str(), e)).collect();
    let mut counters: HashMap<String, u32> = HashMap::new();
    let mut checked = Checked::default();
    for record in records {
        if record.get("event").and_then(Value::as_str) != Some("page_decision") {
            continue;
        }
        let seq = record.get("seq").and_then(Value::as_u64).map_or("?".into(), |s| s.to_string());
        let refused = |why| Refused { seq: seq.clone(), why };
        let decision =
            events::PageDecision::deserialize(record).map_err(|e| refused(Refusal::DoesNotRead(e.to_string())))?;
        let evidence = match (decision.approved_with.as_deref(), &decision.passkey) {
            (Some("passkey"), Some(evidence)) => evidence,
            (Some("passkey"), None) => return Err(refused(Refusal::NoAssertion)),
            (_, Some(_)) => return Err(refused(Refusal::NotMadeWithAPasskey)),
            _ => continue,
        };
        let counter = check_one(&decision, evidence, &keys).map_err(refused)?;
        let last = counters.entry(evidence.credential_id.clone()).or_insert(0);
        if (counter > 0 || *last > 0) && counter <= *last {
            return Err(refused(Refusal::CounterStill {
                credential: evidence.credential_id.clone(),
                counter,
                last: *last,
            }));
        }
        *last = counter;
        checked.approvals += 1;
    }
    Ok(checked)
}

/// What a passkey signed to approve `decision`: the identity the page asked the authenticator to
/// sign ([`crate::approval_page::PageRecord::identity`]), from the members the record keeps.
pub(crate) fn identity(decision: &events::PageDecision) -> ApprovalIdentity<'_> {
    ApprovalIdentity {
        page: &decision.page,
        token: &decision.token,
        request_sha256: &decision.request_sha256,
        validation: &decision.validation,
        proposer: &decision.proposer,
        plan_sha256: decision.plan_sha256.clone().unwrap_or_default(),
        comment_sha256: ApprovalIdentity::comment_hash(&decision.reason),
    }
}

/// One decision's assertion: its counter, or why it fails.
fn check_one(
    decision: &events::PageDecision,
    evidence: &Evidence,
    keys: &HashMap<&str, &Enrollment>,
) -> Result<u32, Refusal> {
    if decision.decision != "approve" {
        return Err(Refusal::NotAnApproval);
    }
    let Some(enrolled) = keys.get(evidence.credential_id.as_str()) else {
        return Err(Refusal::NotInTheExport(evidence.credential_id.clone()));
    };
    if enrolled.principal != decision.approver {
        return Err(Refusal::AnotherApprover {
            credential: evidence.credential_id.clone(),
            enrolled: enrolled.principal.clone(),
            approver: decision.approver.clone(),
        });
    }
    let id = identity(decision);
    let at_enrollment = Ceremony::new(&enrolled.origin)?;
    if at_enrollment.rp_id != enrolled.rp_id {
        return Err(Refusal::RpIdNotTheOrigin { rp_id: enrolled.rp_id.clone(), host: at_enrollment.rp_id });
    }
    if !at_enrollment.admits(&evidence.origin) || evidence.rp_id != enrolled.rp_id {
        return Err(Refusal::AnotherOrigin { made_at: evidence.origin.clone(), enrolled_at: enrolled.origin.clone() });
    }
    // the page that asked, as the record keeps it: the signature must be for exactly that origin
    let ceremony = Ceremony::new(&evidence.origin)?;
    let key = ceremony::without_counter(&enrolled.passkey)?;
    let (_, state) = ceremony.request(std::slice::from_ref(&key), &id)?;
    let result = ceremony.check(&evidence.assertion, &state)?;
    if result.counter() != evidence.counter {
        return Err(Refusal::CounterDiffers { recorded: evidence.counter, signed: result.counter() });
    }
    Ok(result.counter())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `page_decision` record and the export of its key, as a run of the browser test made
    /// them (Chromium's virtual authenticator, ES256).
    fn fixture() -> (Value, Export) {
        let record = serde_json::from_str(include_str!("testdata/decision.jsonl").trim()).unwrap();
        let export = Export::parse(include_str!("testdata/export.json")).unwrap();
        (record, export)
    }

    #[test]
    fn a_recorded_passkey_approval_verifies_against_the_export() {
        let (record, export) = fixture();
        assert_eq!(check_log([&record], &export), Ok(Checked { approvals: 1 }));
    }

    #[test]
    fn any_field_of_the_challenge_edited_in_the_record_fails() {
        let (record, export) = fixture();
        for field in ["page", "token", "request_sha256", "validation", "proposer"] {
            let mut edited = record.clone();
            edited[field] = json_text(&format!("{}x", record[field].as_str().unwrap()));
            let refused = check_log([&edited], &export).unwrap_err();
            assert!(matches!(refused.why, Refusal::Ceremony(_)) && refused.seq == "6", "{field}: {refused:?}");
            let why = refused.to_string();
            assert!(why.starts_with("record 6:") && why.contains("another request"), "{field}: {why}");
        }
    }

    fn json_text(s: &str) -> Value {
        Value::String(s.to_string())
    }

    #[test]
    fn a_signature_by_another_key_or_for_another_person_fails() {
        let (record, export) = fixture();
        let mut doctored = serde_json::to_value(&export).unwrap();
        let x = doctored.pointer_mut("/enrollments/0/passkey/cred/cred/key/EC_EC2/x").unwrap();
        let text = x.as_str().unwrap().to_string();
        *x = json_text(&format!("{}{}", if text.starts_with('A') { 'B' } else { 'A' }, &text[1..]));
        let doctored: Export = serde_json::from_value(doctored).unwrap();
        let refused = check_log([&record], &doctored).unwrap_err();
        assert!(matches!(refused.why, Refusal::Ceremony(_)), "{refused:?}");
        assert!(refused.to_string().starts_with("record 6:"), "{refused}");

        let mut other = record.clone();
        other["approver"] = json_text("https://idp.example#mallory");
        let refused = check_log([&other], &export).unwrap_err();
        assert!(matches!(&refused.why, Refusal::AnotherApprover { approver, .. } if approver.ends_with("mallory")));
        let why = refused.to_string();
        assert!(why.contains("belongs to") && why.contains("mallory"), "{why}");

        let empty = Export { format: EXPORT_FORMAT.into(), exported_at: String::new(), enrollments: Vec::new() };
        let refused = check_log([&record], &empty).unwrap_err();
        assert!(
            matches!(refused.why, Refusal::NotInTheExport(_)) && refused.to_string().contains("is not in the export")
        );
    }

    #[test]
    fn an_assertion_made_for_another_origin_or_relying_party_fails() {
        let (record, export) = fixture();
        let origin = export.enrollments[0].origin.clone();
        let port: u16 = origin.rsplit(':').next().unwrap().parse().unwrap();
        // every port of localhost is this machine's page; another scheme is another site
        let mut other_port = serde_json::to_value(&export).unwrap();
        other_port["enrollments"][0]["origin"] = json_text(&format!("http://localhost:{}", port + 1));
        let other_port: Export = serde_json::from_value(other_port).unwrap();
        assert_eq!(check_log([&record], &other_port), Ok(Checked { approvals: 1 }));
        let mut elsewhere = serde_json::to_value(&export).unwrap();
        elsewhere["enrollments"][0]["origin"] = json_text(&format!("https://localhost:{port}"));
        let elsewhere: Export = serde_json::from_value(elsewhere).unwrap();
        let refused = check_log([&record], &elsewhere).unwrap_err();
        assert!(matches!(refused.why, Refusal::AnotherOrigin { .. }), "{refused:?}");
        assert!(refused.to_string().contains("not at"), "{refused}");

        let mut other_rp = serde_json::to_value(&export).unwrap();
        other_rp["enrollments"][0]["rp_id"] = json_text("example.com");
        let other_rp: Export = serde_json::from_value(other_rp).unwrap();
        let refused = check_log([&record], &other_rp).unwrap_err();
        assert!(matches!(refused.why, Refusal::RpIdNotTheOrigin { .. }) && refused.to_string().contains("RP ID"));
    }

    /// A signature collected by another page of this machine (another port of
    /// `localhost`) over this page's challenge, recorded as this page's approval.
    #[test]
    fn an_assertion_signed_on_another_port_than_the_recorded_page_fails() {
        let (record, export) = fixture();
        let page = record["passkey"]["origin"].as_str().unwrap().to_string();
        let port: u16 = page.rsplit(':').next().unwrap().parse().unwrap();
        let mut swapped = record.clone();
        swapped["passkey"]["origin"] = json_text(&format!("http://localhost:{}", port + 1));
        let refused = check_log([&swapped], &export).unwrap_err();
        assert!(matches!(refused.why, Refusal::Ceremony(CeremonyError::OtherPage { .. })), "{refused:?}");
        let why = refused.to_string();
        assert!(why.starts_with("record 6:") && why.contains(&format!("on the page at {page}")), "{why}");
        assert!(why.contains("not on this page"), "{why}");
    }

    #[test]
    fn the_same_assertion_twice_in_a_log_fails_on_its_counter() {
        let (record, export) = fixture();
        let mut again = record.clone();
        again["seq"] = Value::from(9);
        let refused = check_log([&record, &again], &export).unwrap_err();
        assert!(matches!(refused.why, Refusal::CounterStill { .. }) && refused.seq == "9", "{refused:?}");
        let why = refused.to_string();
        assert!(why.starts_with("record 9:") && why.contains("does not move on"), "{why}");
    }

    #[test]
    fn a_passkey_approval_without_its_assertion_or_an_assertion_without_one_fails() {
        let (record, export) = fixture();
        let mut bare = record.clone();
        bare.as_object_mut().unwrap().remove("passkey");
        let refused = check_log([&bare], &export).unwrap_err();
        assert!(refused.why == Refusal::NoAssertion && refused.to_string().contains("keeps no assertion"));
        let mut claimed = record.clone();
        claimed["approved_with"] = json_text("sign_in");
        let refused = check_log([&claimed], &export).unwrap_err();
        assert!(refused.why == Refusal::NotMadeWithAPasskey && refused.to_string().contains("not made with a passkey"));
        let mut declined = record.clone();
        declined["decision"] = json_text("decline");
        let refused = check_log([&declined], &export).unwrap_err();
        assert!(refused.why == Refusal::NotAnApproval && refused.to_string().contains("not an approval"));
        // a decision by sign-in alone has nothing to check
        let mut plain = bare;
        plain["approved_with"] = json_text("sign_in");
        assert_eq!(check_log([&plain], &export), Ok(Checked { approvals: 0 }));
    }

    #[test]
    fn an_export_of_another_format_is_refused() {
        let not = Export::parse("{}").unwrap_err();
        assert!(matches!(not, NotAnExport::Shape(_)) && not.to_string().contains("not a passkey export"), "{not}");
        let text = include_str!("testdata/export.json").replace(EXPORT_FORMAT, "something else");
        let other = Export::parse(&text).unwrap_err();
        assert_eq!(other, NotAnExport::Format { found: "something else".into() });
        assert_eq!(other.to_string(), format!("format \"something else\", not {EXPORT_FORMAT:?}"));
    }
}
