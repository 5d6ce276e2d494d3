//! Redeeming a token: the five confirm checks over what the store holds, and each refusal in its own words.

use alloc::format;
use alloc::string::ToString;
use alloc::vec::Vec;
use serde_json::Value;

use crate::capability::Taken;
use crate::proposal::{Checks, PROPOSE_AGAIN, Proposal, token_error};
use crate::spec::{ChangeType, Compiled, Spec};
use crate::tool_error::ToolError;

pub(super) fn is_token(s: &str) -> bool {
    s.len() == 36 && s.starts_with("chg-") && s[4..].bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

pub(super) fn unknown_token(token: &str) -> ToolError {
    token_error(
        "unknown_token",
        format!(
            "confirm token {token:?} is unknown to this server: it was never proposed here (by you), or the server \
             restarted since; nothing was sent. {PROPOSE_AGAIN}"
        ),
        Checks { proposal_exists: Some(false), ..Checks::default() },
        PROPOSE_AGAIN,
    )
}

/// The proposal behind a token that `take` or `peek` found, with its evaluated checks.
pub(crate) struct Redeemable {
    pub proposal: Proposal,
    pub spec: Option<Spec>,
    pub compiled: Option<Compiled>,
    pub checks: Checks,
}

/// Turns a store answer into a redeemable proposal or the token error for it.
pub(crate) fn redeem(token: &str, taken: Taken, now: u64) -> Result<Redeemable, ToolError> {
    let record = match taken {
        Taken::Found(bytes) => bytes,
        Taken::Unknown => return Err(unknown_token(token)),
        Taken::Evicted => {
            return Err(token_error(
                "evicted_token",
                format!(
                    "confirm token {token} was evicted: 20 newer proposals were made after it; nothing was sent. \
                     {PROPOSE_AGAIN}"
                ),
                Checks { proposal_exists: Some(true), not_evicted: Some(false), ..Checks::default() },
                PROPOSE_AGAIN,
            ));
        }
        Taken::Used(outcome) => return Err(replayed(token, outcome)),
    };
    let Some(proposal) = Proposal::from_bytes(&record) else {
        return Err(token_error(
            "corrupt_proposal",
            format!(
                "the stored proposal for {token} cannot be read by this component; nothing was sent. {PROPOSE_AGAIN}"
            ),
            Checks {
                proposal_exists: Some(true),
                not_evicted: Some(true),
                not_previously_used: Some(true),
                request_matches_binding: Some(false),
                ..Checks::default()
            },
            PROPOSE_AGAIN,
        ));
    };
    let recompiled = proposal.recompile();
    let matches = recompiled.as_ref().is_some_and(|(_, c)| c.request_sha256 == proposal.request_sha256);
    let checks = Checks {
        proposal_exists: Some(true),
        not_evicted: Some(true),
        not_expired: Some(!proposal.expired_at(now)),
        not_previously_used: Some(true),
        request_matches_binding: Some(matches),
    };
    let (spec, compiled) = match recompiled {
        Some((s, c)) => (Some(s), Some(c)),
        None => (None, None),
    };
    Ok(Redeemable { proposal, spec, compiled, checks })
}

/// A replay: what the first attempt did decides the advice. Only a first attempt that certainly
/// created nothing invites a new proposal; otherwise the resource may exist, so look first.
pub(super) fn replayed(token: &str, outcome: Option<Vec<u8>>) -> ToolError {
    let first = outcome.and_then(|o| serde_json::from_slice::<Value>(&o).ok());
    let change = first.as_ref().and_then(|f| f["change_type"].as_str()).and_then(ChangeType::parse);
    let (search, get) = change.map(ChangeType::lookup_tools).unwrap_or(("the fabric_search_* tools", "fabric_get_*"));
    let (said, next) = match first.as_ref().map(|f| (f["executed"].as_bool(), f)) {
        Some((Some(true), f)) => {
            let uuid = f["created"]["uuid"].as_str().unwrap_or("?");
            (
                format!(
                    "its first attempt executed after the person's answer {}: uuid {uuid}, correlation id {}",
                    f["human_confirmation"]["status"].as_str().unwrap_or("?"),
                    f["correlation_id"].as_str().unwrap_or("?")
                ),
                format!("Do not propose it again: it was created. Look it up with {get} (uuid {uuid})."),
            )
        }
        Some((Some(false), f)) => (
            format!(
                "its first attempt did not execute ({})",
                f["message"].as_str().unwrap_or("the person's answer was not an approval")
            ),
            PROPOSE_AGAIN.to_string(),
        ),
        Some((None, _)) => (
            "its first attempt sent the create but its outcome is unknown".to_string(),
            format!("Search with {search} (e.g. by name) before proposing again: it may exist."),
        ),
        None => (
            "its first attempt's outcome is not recorded (it may still be running)".to_string(),
            format!("Search with {search} (e.g. by name) before proposing again: it may exist."),
        ),
    };
    let mut err = token_error(
        "replayed_token",
        format!(
            "confirm token {token} was already used: a token is consumed by its first confirm attempt, and {said}. {next}"
        ),
        Checks {
            proposal_exists: Some(true),
            not_evicted: Some(true),
            not_previously_used: Some(false),
            ..Checks::default()
        },
        &next,
    );
    if let Some(f) = first {
        err = err.with("first_attempt", f);
    }
    err
}
