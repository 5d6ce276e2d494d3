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

use super::html::{document_with, escape, minutes};
use super::record::Listed;
use super::respond::{message, page_response};
use super::{ApprovalPage, Permission, Session};
use crate::passkeys::ApprovedWith;

/// Rows of waiting changes shown per page; `?before=` pages on.
pub const PAGE_ROWS: usize = 50;
/// The latest decisions shown.
const DECIDED_ROWS: usize = 20;
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
pub fn decidable(page: &ApprovalPage, session: &Session, listed: &Listed) -> Option<Decidable> {
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
    pub theirs_to_decide: Vec<Listed>,
    pub decided: Vec<Listed>,
    /// Where the next page of waiting changes begins, if there is one.
    pub older: Option<u64>,
}

/// Reads and judges the inbox of `session`'s person, waiting changes put before `before_ms`.
pub async fn read(page: &ApprovalPage, session: &Session, before_ms: Option<u64>) -> Result<Inbox, String> {
    let notes = page.notes();
    let waiting = notes.waiting(before_ms, crate::proposals::MAX_INDEXED).await.map_err(|e| e.told())?;
    let mut inbox = Inbox::default();
    for listed in waiting {
        if listed.expires_at_ms <= notes.now_ms {
            continue;
        }
        if inbox.mine_to_decide.len() == PAGE_ROWS {
            inbox.older = inbox.mine_to_decide.last().map(|(l, _)| l.created_at_ms);
            break;
        }
        match decidable(page, session, &listed) {
            Some(how) => inbox.mine_to_decide.push((listed, how)),
            None if listed.proposer == session.approver && inbox.theirs_to_decide.len() < PAGE_ROWS => {
                inbox.theirs_to_decide.push(listed)
            }
            None => {}
        }
    }
    let decided = notes.decided(crate::proposals::MAX_INDEXED).await.map_err(|e| e.told())?;
    inbox.decided = decided
        .into_iter()
        .filter(|l| {
            let took_part = l.decision.as_ref().is_some_and(|d| d.approver == session.approver);
            took_part || l.proposer == session.approver || decidable(page, session, l).is_some()
        })
        .take(DECIDED_ROWS)
        .collect();
    Ok(inbox)
}

/// The `?before=` of a request's query, if it is a number.
pub fn before(query: Option<&str>) -> Option<u64> {
    form_urlencoded::parse(query.unwrap_or_default().as_bytes())
        .find(|(k, _)| k == "before")
        .and_then(|(_, v)| v.parse().ok())
}

fn when(ms: u64) -> String {
    let text = crate::audit::rfc3339(ms);
    format!("<time datetime=\"{text}\">{}</time>", text.replace('T', " ").trim_end_matches('Z').to_string() + " UTC")
}

fn person(principal: &str) -> String {
    // the subject reads; the whole principal (issuer included) is one hover away
    let shown = principal.rsplit_once('#').map_or(principal, |(_, subject)| subject);
    format!("<span title=\"{}\">{}</span>", escape(principal), escape(shown))
}

impl Inbox {
    pub fn render(&self, session: &Session, now_ms: u64) -> String {
        let mut body = format!(
            "<h1>Changes waiting on Equinix Fabric</h1><p>Signed in as <span id=\"approver\">{}</span>. Each change \
             is decided on its own page, after reading its plan and exact request. <a href=\"/approve/passkeys\">Your \
             passkeys</a></p><div id=\"inbox\" data-refresh-ms=\"{REFRESH_MS}\"><p class=\"note\">As of {}.</p>",
            escape(&session.approver),
            when(now_ms)
        );
        body.push_str(&format!("<h2>For you to decide ({})</h2>", self.mine_to_decide.len()));
        if self.mine_to_decide.is_empty() {
            body.push_str("<p id=\"nothing\">Nothing waits for your decision.</p>");
        } else {
            body.push_str(
                "<table id=\"waiting\" class=\"plan\"><tr><th>Change</th><th>Proposed by</th><th>Proposed at</th>\
                 <th>Time left</th><th>Approve with</th><th></th></tr>",
            );
            for (l, how) in &self.mine_to_decide {
                let with = match how {
                    Decidable::SignIn => "your sign-in",
                    Decidable::Passkey => "your passkey (the policy asks for one)",
                };
                body.push_str(&format!(
                    "<tr class=\"waiting\" data-page=\"{id}\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{with}</td>\
                     <td><a href=\"/approve/{id}\">Review and decide</a></td></tr>",
                    escape(&l.summary),
                    person(&l.proposer),
                    when(l.created_at_ms),
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
                "<h2>Yours, waiting for another approver ({})</h2><table id=\"yours\" class=\"plan\"><tr><th>Change</th>\
                 <th>Proposed at</th><th>Time left</th></tr>",
                self.theirs_to_decide.len()
            ));
            for l in &self.theirs_to_decide {
                body.push_str(&format!(
                    "<tr class=\"yours\" data-page=\"{}\"><td>{}</td><td>{}</td><td>{}</td></tr>",
                    escape(&l.id),
                    escape(&l.summary),
                    when(l.created_at_ms),
                    minutes(l.expires_at_ms.saturating_sub(now_ms)),
                ));
            }
            body.push_str("</table>");
        }
        body.push_str("<h2>Latest decisions</h2>");
        if self.decided.is_empty() {
            body.push_str("<p>None yet.</p>");
        } else {
            body.push_str(
                "<table id=\"decided\" class=\"plan\"><tr><th>Change</th><th>Proposed by</th><th>Decision</th>\
                 <th>By</th><th>At</th></tr>",
            );
            for l in &self.decided {
                let Some(d) = &l.decision else { continue };
                body.push_str(&format!(
                    "<tr class=\"decided\" data-page=\"{}\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                    escape(&l.id),
                    escape(&l.summary),
                    person(&l.proposer),
                    if d.approve { "approved" } else { "declined" },
                    person(&d.approver),
                    when(d.at_ms),
                ));
            }
            body.push_str("</table>");
        }
        body.push_str("</div>");
        let refresh =
            format!("<noscript><meta http-equiv=\"refresh\" content=\"{NO_SCRIPT_REFRESH_SECS}\"></noscript>");
        document_with("Changes waiting on Equinix Fabric", &refresh, &body)
    }
}

/// Signed out: only the way to sign in.
pub fn signed_out() -> String {
    document_with(
        "Changes waiting on Equinix Fabric",
        "",
        "<h1>Changes waiting on Equinix Fabric</h1><p>Sign in to see the changes you may decide.</p><p><a \
         id=\"sign-in\" href=\"/approve/sign-in\">Sign in with your identity provider</a></p>",
    )
}

/// A local server's answer.
pub fn none_here() -> Response {
    message(
        StatusCode::NOT_FOUND,
        "No inbox here",
        "This machine's approval page lists nothing: it signs nobody in, so a list would show every waiting request to \
         any program on this machine. Open the link the agent gave you.",
    )
}

pub fn response(inbox: &Inbox, session: &Session, now_ms: u64) -> Response {
    page_response(StatusCode::OK, inbox.render(session, now_ms))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_number_pages_on() {
        assert_eq!(before(Some("before=1764900000000")), Some(1_764_900_000_000));
        assert_eq!(before(Some("before=x")), None);
        assert_eq!(before(None), None);
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
            decision: None,
        };
        let inbox = Inbox { mine_to_decide: vec![(listed, Decidable::Passkey)], ..Inbox::default() };
        let html = inbox.render(&session, 120_000);
        assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt; 1 Gbps"), "{html}");
        assert!(!html.contains("<script>alert"), "{html}");
        assert!(html.contains(">&lt;b&gt;alice&lt;/b&gt;</span>"), "{html}");
        assert!(html.contains("9 min 00 s"), "{html}");
        assert!(html.contains("your passkey"), "{html}");
        assert!(html.contains("href=\"/approve/apv-00000000000000000000000000000000\""), "{html}");
    }
}
