//! How the page names people: by the name and e-mail their identity provider gave at their last
//! sign-in on the page, "you" for the reader, and the identifier (`ISSUER#SUBJECT`) one click
//! away. Principals are the rule's (every check compares those); names are only for reading, so a
//! person the page has not met yet reads as their subject.

use serde::{Deserialize, Serialize};

use crate::proposals::{NoteKey, ProposalStore};

/// How long the page remembers a person's name after their sign-in (each sign-in renews it).
pub(crate) const REMEMBERED_MS: u64 = 30 * 24 * 60 * 60 * 1000;
/// A name or an e-mail is cut beyond this many characters.
const MAX_CHARS: usize = 80;

/// A person's name and e-mail, as their ID token gave them (either may be empty).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Named {
    pub name: String,
    pub email: String,
}

impl Named {
    /// From an ID token's claims: `name` (else `preferred_username`) and `email`, each one line
    /// of visible text and cut to a length a line of the page can hold.
    pub(crate) fn of_claims(claims: &serde_json::Map<String, serde_json::Value>) -> Self {
        let text = |key: &str| {
            claims
                .get(key)
                .and_then(serde_json::Value::as_str)
                .map(|s| crate::exact_json::visible(&equinix_broker_contract::clip(s.trim(), MAX_CHARS)))
                .unwrap_or_default()
        };
        let name = match text("name") {
            n if n.is_empty() => text("preferred_username"),
            n => n,
        };
        Named { name, email: text("email") }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.name.is_empty() && self.email.is_empty()
    }

    /// "Alice Doe (alice@example.com)", or whichever of the two there is.
    pub(crate) fn text(&self) -> String {
        match (self.name.is_empty(), self.email.is_empty()) {
            (false, false) => format!("{} ({})", self.name, self.email),
            (false, true) => self.name.clone(),
            _ => self.email.clone(),
        }
    }
}

/// A person as a reader sees them, in words: "you", their name, or their subject.
pub(crate) fn words(principal: &str, named: Option<&Named>, reader: &str) -> String {
    if principal == reader {
        return "you".into();
    }
    match named.filter(|n| !n.is_empty()) {
        Some(n) => n.text(),
        None => principal.rsplit_once('#').map_or(principal, |(_, subject)| subject).to_string(),
    }
}

/// Remembers `named` for `principal` (at each sign-in).
pub(crate) async fn remember(store: &ProposalStore, principal: &str, named: &Named, now_ms: u64) {
    if named.is_empty() {
        return;
    }
    let bytes = serde_json::to_vec(named).expect("a name serializes");
    let key = crate::approval_page::hashed(principal);
    if let Err(e) = store.note_put(&NoteKey::Person(&key), &bytes, REMEMBERED_MS, false, now_ms).await {
        tracing::info!("the page does not remember a person's name this time: {e}");
    }
}

/// The name the page remembers for `principal`, if any (a store that does not answer: none).
pub(crate) async fn recall(store: &ProposalStore, principal: &str, now_ms: u64) -> Option<Named> {
    let key = crate::approval_page::hashed(principal);
    let bytes = store.note_get(&NoteKey::Person(&key), now_ms).await.ok()??;
    serde_json::from_slice(&bytes).ok()
}

/// Where the reason `principal`'s agent gave with its proposal `token` is kept: under both, so a
/// component that returns another principal's token from a proposal cannot put words on that
/// principal's page (a page is asked by its proposal's own principal).
fn agent_reason_key(principal: &str, token: &str) -> String {
    crate::approval_page::hashed(&format!("{principal}\n{token}"))
}

/// Keeps the reason `principal`'s agent gave with the proposal `token` (its own words, cut and
/// with its invisible characters shown), for the page that will ask about it.
pub(crate) async fn remember_agent_reason(
    store: &ProposalStore,
    principal: &str,
    token: &str,
    reason: &str,
    now_ms: u64,
) {
    let text = crate::exact_json::visible(&equinix_broker_contract::clip(
        reason.trim(),
        equinix_broker_contract::AGENT_REASON_CHARS,
    ));
    if text.is_empty() {
        return;
    }
    let ttl = crate::approval::TTL_MS + crate::approval::AFTERWARDS_MS;
    let key = agent_reason_key(principal, token);
    if let Err(e) = store.note_put(&NoteKey::AgentReason(&key), text.as_bytes(), ttl, false, now_ms).await {
        tracing::info!("the agent's reason for a proposal is not kept: {e}");
    }
}

/// The reason `principal`'s agent gave with the proposal `token`, if it gave one.
pub(crate) async fn agent_reason(store: &ProposalStore, principal: &str, token: &str, now_ms: u64) -> String {
    match store.note_get(&NoteKey::AgentReason(&agent_reason_key(principal, token)), now_ms).await {
        Ok(Some(bytes)) => String::from_utf8_lossy(&bytes).into_owned(),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[tokio::test]
    async fn an_agents_reason_is_kept_for_its_own_principals_page_only_and_cut() {
        let store = ProposalStore::new();
        let long = format!("  move the \u{202e}NOC link {}  ", "x".repeat(300));
        remember_agent_reason(&store, "i#alice", "chg-1", &long, 0).await;
        let kept = agent_reason(&store, "i#alice", "chg-1", 1).await;
        assert!(kept.starts_with("move the \\u{202e}NOC link x"), "trimmed, invisible shown: {kept}");
        assert!(kept.ends_with("more characters)") && kept.len() < long.len(), "cut, and says so: {kept}");
        // a component that hands alice's agent bob's token cannot put words on bob's page
        assert_eq!(agent_reason(&store, "i#bob", "chg-1", 1).await, "");
        remember_agent_reason(&store, "i#bob", "chg-2", "   ", 0).await;
        assert_eq!(agent_reason(&store, "i#bob", "chg-2", 1).await, "", "a blank reason is none");
    }

    #[test]
    fn a_person_reads_as_you_as_their_name_or_as_their_subject_and_the_id_is_one_click_away() {
        let claims = json!({"name": "Alice\u{202e} Doe", "email": "alice@example.com", "preferred_username": "al"});
        let alice = Named::of_claims(claims.as_object().unwrap());
        assert_eq!(alice.text(), "Alice\\u{202e} Doe (alice@example.com)", "invisible characters shown");
        let only_login = Named::of_claims(json!({"preferred_username": "bob"}).as_object().unwrap());
        assert_eq!(only_login.text(), "bob");
        assert!(Named::of_claims(json!({"name": 7}).as_object().unwrap()).is_empty());
        assert_eq!(words("i#alice", Some(&alice), "i#alice"), "you");
        assert_eq!(words("i#alice", None, "i#bob"), "alice");
        let shown = super::super::html::person(
            "i#<b>",
            Some(&Named { name: "<i>x</i>".into(), email: String::new() }),
            "i#bob",
        );
        assert_eq!(
            shown,
            "<details class=\"who\"><summary>&lt;i&gt;x&lt;/i&gt;</summary><code>i#&lt;b&gt;</code></details>"
        );
    }
}
