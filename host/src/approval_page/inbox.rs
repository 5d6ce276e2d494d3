//! The inbox (`GET /approve`): for a signed-in person, the changes waiting that they may decide
//! (each a link to its page, where the decision is made as on any other), their own changes
//! waiting for someone else, and the latest decisions they took part in or could have made.
//!
//! It reads the store's two indexes, which every replica shares, and judges each entry by the
//! same rules as the page (the operator's policy, or only the proposer); what the person may not
//! decide is not listed. A local server has no inbox: its page signs nobody in, so a list would
//! hand every waiting link to any program on the machine (and a decline needs no passkey).

use axum::http::StatusCode;
use axum::response::Response;

use std::collections::HashMap;

use super::html::{at, document_with, escape, minutes};
use super::people::{self, Named};
use super::record::Listed;
use super::respond::{message, page_response};
use super::{ApprovalPage, Permission, Session};
use crate::passkeys::ApprovedWith;
use crate::proposals::StoreUnavailable;

/// Rows of waiting changes shown per page; `?before=` pages on.
pub(crate) const PAGE_ROWS: usize = 50;
/// The latest ended or decided requests shown.
const DECIDED_ROWS: usize = 30;
/// How often the page's script reads the list again (without the script, the page reloads
/// itself every [`NO_SCRIPT_REFRESH_SECS`]).
const REFRESH_MS: u64 = 5_000;
const NO_SCRIPT_REFRESH_SECS: u64 = 30;

/// How a listed change may be decided by the person reading.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decidable {
    /// By their sign-in (and a passkey if they have one).
    SignIn,
    /// Only with a passkey, which the policy asks for.
    Passkey,
}

/// Whether `session`'s person may decide `listed`, and how; `None`: they may not.
pub(crate) fn decidable(page: &ApprovalPage, session: &Session, listed: &Listed) -> Option<Decidable> {
    let q = listed.question();
    if let Permission::Permitted(..) = page.may_decide(session, &q, ApprovedWith::SignIn) {
        return Some(Decidable::SignIn);
    }
    match page.may_decide(session, &q, ApprovedWith::Passkey) {
        Permission::Permitted(..) => Some(Decidable::Passkey),
        Permission::Refused(_) => None,
    }
}

/// What the inbox shows one person.
#[derive(Debug, Default)]
pub struct Inbox {
    pub mine_to_decide: Vec<(Listed, Decidable)>,
    /// The person's own changes, waiting for someone else.
    pub(crate) theirs_to_decide: Vec<Listed>,
    /// Requests decided or ended that the person proposed, decided or could have decided,
    /// newest first, of the state asked for (any: all of them).
    pub decided: Vec<Listed>,
    /// Where the next page of waiting changes begins, if there is one.
    pub older: Option<u64>,
    /// The recent list's state, when one was asked for.
    pub state: Option<&'static str>,
    /// The names the page has met, by principal.
    pub names: HashMap<String, Named>,
}

/// Reads and judges the inbox of `session`'s person, waiting changes put before `before_ms`, and
/// the recent ones in `state` (all of them without).
pub async fn read(
    page: &ApprovalPage,
    session: &Session,
    before_ms: Option<u64>,
    state: Option<&'static str>,
) -> Result<Inbox, StoreUnavailable> {
    let notes = page.notes();
    let now = notes.now_ms;
    let waiting = notes.waiting(before_ms, crate::proposals::MAX_INDEXED).await?;
    let mut inbox = Inbox { state, ..Inbox::default() };
    let mut ended = Vec::new();
    for listed in waiting {
        if listed.expires_at_ms <= now {
            // nobody decided in its time: it ended, expired
            ended.push(listed);
            continue;
        }
        if inbox.mine_to_decide.len() == PAGE_ROWS {
            inbox.older = inbox.mine_to_decide.last().map(|(l, _)| l.created_at_ms);
            break;
        }
        // someone who approved already waits for the others, as the proposer does
        let approved = listed.approved_by.contains(&session.approver);
        match decidable(page, session, &listed).filter(|_| !approved) {
            Some(how) => inbox.mine_to_decide.push((listed, how)),
            None if approved && inbox.theirs_to_decide.len() < PAGE_ROWS => inbox.theirs_to_decide.push(listed),
            None if listed.proposer == session.approver && inbox.theirs_to_decide.len() < PAGE_ROWS => {
                inbox.theirs_to_decide.push(listed)
            }
            None => {}
        }
    }
    let mut decided = notes.decided(crate::proposals::MAX_INDEXED).await?;
    decided.extend(ended);
    // newest first by when each ended or was decided
    decided.sort_by_key(|l| std::cmp::Reverse(l.decision.as_ref().map_or(l.expires_at_ms, |d| d.at_ms)));
    inbox.decided = decided
        .into_iter()
        .filter(|l| state.is_none_or(|s| l.state(now).name() == s))
        .filter(|l| {
            let took_part = l.decision.as_ref().is_some_and(|d| d.approver == session.approver);
            took_part || l.proposer == session.approver || decidable(page, session, l).is_some()
        })
        .take(DECIDED_ROWS)
        .collect();
    let everyone = inbox
        .mine_to_decide
        .iter()
        .map(|(l, _)| l)
        .chain(&inbox.theirs_to_decide)
        .chain(&inbox.decided)
        .flat_map(|l| std::iter::once(&l.proposer).chain(l.decision.as_ref().map(|d| &d.approver)))
        .filter(|p| **p != session.approver)
        .cloned()
        .collect::<std::collections::BTreeSet<String>>();
    for principal in everyone {
        if let Some(named) = people::recall(&page.store, &principal, now).await {
            inbox.names.insert(principal, named);
        }
    }
    Ok(inbox)
}

/// How far a listed change has come under a quorum, once someone approved it.
fn progress_of(l: &Listed) -> String {
    let mut out = String::new();
    if !l.break_glass.is_empty() {
        out.push_str(&format!(
            "<span class=\"from break-glass\">Break-glass: inside {}</span>",
            escape(&l.break_glass.iter().map(|id| format!("{id:?}")).collect::<Vec<_>>().join(", "))
        ));
    }
    if let Some(p) = l.progress.as_ref().filter(|p| p.approvals > 0) {
        out.push_str(&format!("<span class=\"from progress\">Partly approved: {}</span>", escape(&p.said())));
    }
    out
}

impl Inbox {
    fn person(&self, principal: &str, reader: &str) -> String {
        super::html::person(principal, self.names.get(principal), reader)
    }

    pub fn render(&self, session: &Session, now_ms: u64) -> String {
        let me = &session.approver;
        let reader = match session.named.is_empty() {
            true => escape(me),
            false => format!("{} <span class=\"hint\">({})</span>", escape(&session.named.text()), escape(me)),
        };
        let mut body = format!(
            "<main><h1>Changes on Equinix Fabric</h1><p class=\"meta\">Signed in as <span id=\"approver\">{reader}</span>. \
             Each change is decided on its own page, after reading its plan. <a href=\"/approve/passkeys\">Your \
             passkeys</a></p><div id=\"inbox\" data-refresh-ms=\"{REFRESH_MS}\"><p class=\"note\">As of {}.</p>",
            when(now_ms)
        );
        body.push_str(&format!("<h2>For you to decide ({})</h2>", self.mine_to_decide.len()));
        if self.mine_to_decide.is_empty() {
            body.push_str("<p id=\"nothing\">Nothing waits for your decision.</p>");
        } else {
            body.push_str(
                "<table id=\"waiting\" class=\"list\"><tr><th>Change</th><th>Proposed by</th><th>Proposed at</th>\
                 <th>Time left</th><th>Approve with</th><th><span class=\"hint\">Page</span></th></tr>",
            );
            for (l, how) in &self.mine_to_decide {
                let with = match how {
                    Decidable::SignIn => "your sign-in",
                    Decidable::Passkey => "your passkey (the policy asks for one)",
                };
                body.push_str(&format!(
                    "<tr class=\"waiting\" data-page=\"{id}\"><td class=\"change\">{}{}</td><td>{}</td><td class=\"at\">{}\
                     </td><td class=\"at\">{}</td><td>{with}</td><td class=\"act\"><a href=\"/approve/{id}\">Review and \
                     decide</a></td></tr>",
                    escape(&l.summary),
                    progress_of(l),
                    self.person(&l.proposer, me),
                    when(proposed_at(l)),
                    minutes(l.expires_at_ms.saturating_sub(now_ms)),
                    id = escape(&l.id),
                ));
            }
            body.push_str("</table>");
        }
        if let Some(older) = self.older {
            body.push_str(&format!("<p><a id=\"older\" href=\"/approve?before={older}\">Older changes</a></p>"));
        }
        if !self.theirs_to_decide.is_empty() {
            body.push_str(&format!(
                "<h2>Yours or approved by you, waiting for another approver ({})</h2><table id=\"yours\" class=\"list\"><tr><th>Change</th>\
                 <th>Proposed at</th><th>Time left</th></tr>",
                self.theirs_to_decide.len()
            ));
            for l in &self.theirs_to_decide {
                body.push_str(&format!(
                    "<tr class=\"yours\" data-page=\"{id}\"><td class=\"change\"><a href=\"/approve/{id}\">{}</a>{}</td>\
                     <td class=\"at\">{}</td><td class=\"at\">{}</td></tr>",
                    escape(&l.summary),
                    progress_of(l),
                    when(proposed_at(l)),
                    minutes(l.expires_at_ms.saturating_sub(now_ms)),
                    id = escape(&l.id),
                ));
            }
            body.push_str("</table>");
        }
        body.push_str("<h2>Recent</h2><nav class=\"states\" aria-label=\"Recent requests by state\">");
        let all = std::iter::once((None, "All")).chain(STATES.iter().map(|(name, shown)| (Some(*name), *shown)));
        for (name, shown) in all {
            let href = name.map_or("/approve".to_string(), |n| format!("/approve?state={n}"));
            let current = if name == self.state { " aria-current=\"page\"" } else { "" };
            body.push_str(&format!("<a href=\"{href}\"{current}>{shown}</a>"));
        }
        body.push_str("</nav>");
        if self.decided.is_empty() {
            body.push_str("<p id=\"none-recent\">None.</p>");
        } else {
            body.push_str(
                "<table id=\"decided\" class=\"list\"><tr><th>Change</th><th>Proposed by</th><th>Where it stands</th>\
                 <th>Decided by</th><th>Why</th></tr>",
            );
            for l in &self.decided {
                let state = l.state(now_ms);
                let decided_by = match &l.decision {
                    Some(d) => format!("{} at {}", self.person(&d.approver, me), when(d.at_ms)),
                    None => "nobody".into(),
                };
                let why = l.decision.as_ref().map_or("", |d| d.reason.as_str());
                body.push_str(&format!(
                    "<tr class=\"decided\" data-page=\"{id}\" data-state=\"{name}\"><td class=\"change\"><a \
                     href=\"/approve/{id}\">{}</a></td><td>{}</td><td class=\"state-name\">{}</td><td>{decided_by}</td>\
                     <td>{}</td></tr>",
                    escape(&l.summary),
                    self.person(&l.proposer, me),
                    escape(state_shown(state.name())),
                    escape(why),
                    id = escape(&l.id),
                    name = state.name(),
                ));
            }
            body.push_str("</table>");
        }
        body.push_str("</div></main>");
        let refresh =
            format!("<noscript><meta http-equiv=\"refresh\" content=\"{NO_SCRIPT_REFRESH_SECS}\"></noscript>");
        document_with("Changes on Equinix Fabric", &refresh, &body)
    }
}

/// The `?before=` of a request's query, if it is a number.
pub(crate) fn before(query: Option<&str>) -> Option<u64> {
    form_urlencoded::parse(query.unwrap_or_default().as_bytes())
        .find(|(k, _)| k == "before")
        .and_then(|(_, v)| v.parse().ok())
}

/// The `?state=` of a request's query, if it names a state the recent list can show.
pub(crate) fn state(query: Option<&str>) -> Option<&'static str> {
    let asked = form_urlencoded::parse(query.unwrap_or_default().as_bytes()).find(|(k, _)| k == "state")?.1;
    STATES.iter().map(|(name, _)| *name).find(|name| *name == asked)
}

/// The states the recent list can be read by, and their names on the page.
pub(crate) const STATES: [(&str, &str); 8] = [
    ("approved", "Approved, waiting for the agent"),
    ("sending", "Sending"),
    ("created", "Created"),
    ("failed", "Failed"),
    ("outcome_unknown", "Outcome unknown"),
    ("not_sent", "Not sent"),
    ("declined", "Declined"),
    ("expired", "Expired"),
];

fn when(ms: u64) -> String {
    format!("<time datetime=\"{}\">{}</time>", crate::audit::rfc3339(ms), at(ms))
}

/// When a listed request was proposed: when Fabric validated it (a listing from before that was
/// kept: when it was put on the page).
fn proposed_at(l: &Listed) -> u64 {
    if l.validated_at_ms == 0 { l.created_at_ms } else { l.validated_at_ms }
}

/// A state's name as the recent list shows it.
pub(crate) fn state_shown(name: &str) -> &str {
    STATES.iter().find(|(n, _)| *n == name).map_or(name, |(_, shown)| shown)
}

/// Signed out: only the way to sign in.
pub(crate) fn signed_out() -> String {
    document_with(
        "Changes waiting on Equinix Fabric",
        "",
        "<h1>Changes waiting on Equinix Fabric</h1><p>Sign in to see the changes you may decide.</p><p><a \
         id=\"sign-in\" href=\"/approve/sign-in\">Sign in with your identity provider</a></p>",
    )
}

/// A local server's answer.
pub(crate) fn none_here() -> Response {
    message(
        StatusCode::NOT_FOUND,
        "No inbox here",
        "This machine's approval page lists nothing: it signs nobody in, so a list would show every waiting request to \
         any program on this machine. Open the link the agent gave you.",
    )
}

pub(crate) fn response(inbox: &Inbox, session: &Session, now_ms: u64) -> Response {
    page_response(StatusCode::OK, inbox.render(session, now_ms))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_number_pages_on_and_only_a_known_state_filters() {
        assert_eq!(before(Some("before=1764900000000")), Some(1_764_900_000_000));
        assert_eq!(before(Some("before=x")), None);
        assert_eq!(before(None), None);
        assert_eq!(state(Some("state=created")), Some("created"));
        assert_eq!(state(Some("state=%3Cb%3E")), None);
        assert_eq!(state(None), None);
    }

    #[test]
    fn what_is_listed_is_text_and_the_person_reads_as_their_subject() {
        let session = Session {
            approver: "https://idp#bob".into(),
            subject: "bob".into(),
            groups: vec![],
            auth_time: 0,
            csrf: "c".into(),
            expires_at_ms: u64::MAX,
            named: Default::default(),
        };
        let listed = Listed {
            id: "apv-00000000000000000000000000000000".into(),
            summary: "<script>alert(1)</script> 1 Gbps".into(),
            proposer: "https://idp#<b>alice</b>".into(),
            tool: "t".into(),
            transport: "http".into(),
            change_type: "connection_create".into(),
            facts: None,
            created_at_ms: 60_000,
            expires_at_ms: 660_000,
            validated_at_ms: 50_000,
            decision: None,
            outcome: None,
            progress: None,
            approved_by: vec![],
            break_glass: vec![],
        };
        let mut declined = listed.clone();
        declined.id = "apv-11111111111111111111111111111111".into();
        declined.decision = Some(super::super::record::ListedDecision {
            approver: "https://idp#bob".into(),
            approve: false,
            at_ms: 70_000,
            reason: "<i>wrong</i> metro".into(),
            named: None,
        });
        let inbox =
            Inbox { mine_to_decide: vec![(listed, Decidable::Passkey)], decided: vec![declined], ..Inbox::default() };
        let html = inbox.render(&session, 120_000);
        assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt; 1 Gbps"), "{html}");
        assert!(!html.contains("<script>alert") && !html.contains("<i>wrong"), "{html}");
        assert!(html.contains("<summary>&lt;b&gt;alice&lt;/b&gt;</summary><code>https://idp#&lt;b&gt;alice"), "{html}");
        assert!(html.contains("data-state=\"declined\""), "{html}");
        assert!(html.contains("<summary>you</summary>"), "the reader is you: {html}");
        assert!(html.contains("&lt;i&gt;wrong&lt;/i&gt; metro"), "the reason is listed: {html}");
        assert!(html.contains("<time datetime=\"1970-01-01T00:00:50"), "proposed when Fabric validated it: {html}");
        assert!(html.contains("9 min 00 s"), "{html}");
        assert!(html.contains("your passkey"), "{html}");
        assert!(html.contains("href=\"/approve/apv-00000000000000000000000000000000\""), "{html}");
    }
}
