//! The page's HTML: every text escaped, the request in the form's own words, and no script but
//! the one file that asks the browser for a passkey (its options ride in an escaped attribute)
//! and keeps the inbox current.

use super::people::{self, Named};
use super::record::{Approval, Decision, MAX_REASON_CHARS, PageRecord};
use super::state::{Decided, Outcome, State};
use super::{Permission, Session};
use crate::passkeys::Enrollment;
use crate::policy::Progress;

/// The page's one script (`/approve/passkey.js`).
pub(crate) const SCRIPT: &str = include_str!("passkey.js");

/// The page's style sheet (served from `/approve/page.css`: the CSP allows no inline style).
pub(crate) const CSS: &str = "body{font:15px/1.45 system-ui,sans-serif;max-width:60rem;margin:1.2rem auto;padding:0 1rem;color:#1b1b1b}\
h1{font-size:1.3rem;margin:.3rem 0 .5rem}h2{font-size:1.1rem}pre{white-space:pre-wrap;overflow-wrap:anywhere;background:#f4f4f4;padding:.8rem;border:1px solid #ccc}\
pre.component{background:#fffbe6;border-color:#d9c36a}.facts td{padding:.15rem .8rem .15rem 0;vertical-align:top}\
.refused{color:#8a1f11}.permitted{color:#1d5e20}form{display:inline-block;margin-right:1rem}\
button{font-size:1rem;padding:.5rem 1.2rem}button.approve{background:#1d5e20;color:#fff;border:1px solid #1d5e20}\
.summary{font-size:1.1rem;font-weight:600;margin:.3rem 0;overflow-wrap:anywhere}.plan td{padding:.25rem .8rem .25rem 0;vertical-align:top;overflow-wrap:anywhere}\
.plan td:first-child{white-space:nowrap;color:#555}.from{display:block;font-size:.8rem;color:#595959}\
.checks li{margin:.2rem 0}.checks .failed{color:#8a1f11;font-weight:600}.checks .ok{color:#1d5e20}.hash{font-size:.8rem;color:#595959;overflow-wrap:anywhere}\
th{text-align:left;padding:.25rem .8rem .25rem 0;border-bottom:1px solid #ccc}\
.meta{color:#444;margin:.3rem 0}details.who{display:inline-block;margin:0}details.who summary{display:inline;cursor:pointer;text-decoration:underline dotted}\
details.who code{margin-left:.3rem;font-size:.85rem;overflow-wrap:anywhere}\
.state{padding:.55rem .8rem;border-left:5px solid #1f4e8a;background:#eef3fb;margin:.6rem 0;font-weight:600}\
.state-created{border-color:#1d5e20;background:#eef7ee}.state-declined,.state-failed,.state-expired,.state-not_sent{border-color:#8a1f11;background:#fbeeec}\
.state-outcome_unknown{border-color:#7a4f00;background:#fff4dc}.reason{margin:.4rem 0 .8rem}.reason blockquote{margin:0;padding:.3rem .8rem;border-left:3px solid #999;white-space:pre-wrap;overflow-wrap:anywhere}\
.reason figcaption{font-size:.85rem;color:#444}\
.decide{position:sticky;bottom:0;background:#fff;border-top:2px solid #1b1b1b;padding:.4rem 0 .6rem;margin-top:1rem}\
.decide h2{margin:.2rem 0}.decide #permission,.decide .note{font-size:.85rem;margin:.15rem 0}#decision-form{display:block;margin:0}\
.decide label{display:block;font-size:.9rem}.hint{color:#555}textarea{display:block;width:100%;box-sizing:border-box;font:inherit}\
.buttons{display:flex;gap:1rem;margin-top:.4rem}details{margin:.6rem 0}summary{cursor:pointer}\
.list{border-collapse:collapse;width:100%}.list td{padding:.3rem .8rem .3rem 0;vertical-align:top;border-bottom:1px solid #eee}\
.list td.change{overflow-wrap:anywhere;min-width:12rem}.list td.act,.list td.at{white-space:nowrap}\
nav.states a{margin-right:.8rem}nav.states a[aria-current]{font-weight:700}";

/// The page's icon (`/approve/icon.svg`, and `/favicon.ico` for browsers that ask there): a
/// browser that finds none asks again on every page, and each ask was a refused request in the log.
pub(crate) const ICON: &str = "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 16 16\"><rect width=\"16\" \
height=\"16\" rx=\"3\" fill=\"#1d5e20\"/><path d=\"M4 8.5l2.5 2.5L12 5.5\" stroke=\"#fff\" stroke-width=\"2\" \
fill=\"none\"/></svg>";

/// Where the form's request part begins (after its opening lines about the form's checkbox).
const FORM_REQUEST_PART: &str = "The request, rendered by equinix-mcp";

/// The plan, first on the page: one meaning per row with where it came from, then the checks.
fn plan_view(plan: &crate::plan::Plan) -> String {
    let mut out = format!(
        "<h2>What this create will do</h2><p class=\"meta\">Resolved by equinix-mcp from the exact bytes and its own \
         Fabric reads at {}.</p><table id=\"plan\" class=\"plan\">",
        escape(&plan.read_at),
    );
    for line in &plan.lines {
        out.push_str(&format!(
            "<tr><td>{}</td><td>{}<span class=\"from\">{}</span></td></tr>",
            escape(&line.label),
            escape(&line.value),
            escape(&line.from)
        ));
    }
    out.push_str("</table>");
    if !plan.checks.is_empty() {
        out.push_str("<h3>Checked at read time</h3><ul id=\"checks\" class=\"checks\">");
        for check in &plan.checks {
            let class = match check.verdict.as_str() {
                crate::plan::OK => "ok",
                crate::plan::FAILED => "failed",
                _ => "unchecked",
            };
            out.push_str(&format!(
                "<li class=\"{class}\">{}: {}<span class=\"from\">{}</span></li>",
                escape(&check.verdict),
                escape(&check.what),
                escape(&check.from)
            ));
        }
        out.push_str("</ul>");
    }
    out.push_str(&format!("<p class=\"hash\" id=\"plan-sha256\">plan_sha256: {}</p>", plan.sha256()));
    out
}

/// A person in the reader's words ([`people::words`]), the identifier shown on demand (a click, or
/// a tap on a phone).
pub(crate) fn person(principal: &str, named: Option<&Named>, reader: &str) -> String {
    format!(
        "<details class=\"who\"><summary>{}</summary><code>{}</code></details>",
        escape(&people::words(principal, named, reader)),
        escape(principal)
    )
}

/// Escapes text for an HTML element or a quoted attribute.
pub(crate) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

fn document(title: &str, body: &str) -> String {
    document_with(title, "", body)
}

/// A page with `head` (markup of this module's own) added to its head.
pub(super) fn document_with(title: &str, head: &str, body: &str) -> String {
    // the script only acts on forms that carry passkey options and on the inbox's list, so every
    // page may load it
    format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" \
         content=\"width=device-width\"><title>{}</title><link rel=\"icon\" href=\"/approve/icon.svg\" \
         type=\"image/svg+xml\"><link rel=\"stylesheet\" href=\"/approve/page.css\">\
         <script src=\"/approve/passkey.js\" defer></script>{head}</head><body>{body}</body></html>",
        escape(title)
    )
}

/// A page that says one thing (an error, a sign-in that failed, an unknown link).
pub(crate) fn message(title: &str, text: &str) -> String {
    document(title, &format!("<h1>{}</h1><p>{}</p>", escape(title), escape(text)))
}

/// Signed out: nothing of the request, only the way to sign in.
pub(crate) fn signed_out(id: &str) -> String {
    document(
        "Approve a change on Equinix Fabric",
        &format!(
            "<h1>Approve a change on Equinix Fabric</h1><p>An agent asks a person to approve one create. Sign in to \
             see the request; the link alone shows nothing.</p><p><a id=\"sign-in\" href=\"/approve/{}/sign-in\">Sign \
             in with your identity provider</a></p>",
            escape(id)
        ),
    )
}

pub(super) fn minutes(ms: u64) -> String {
    let s = ms / 1000;
    format!("{} min {:02} s", s / 60, s % 60)
}

/// What a signed-in person sees.
pub struct View<'a> {
    pub record: &'a PageRecord,
    pub session: &'a Session,
    pub decision: Option<&'a Decision>,
    /// What became of an approval after an agent's call collected it.
    pub outcome: Option<&'a Outcome>,
    /// The proposer's name and e-mail, when the page has met them.
    pub proposer: Option<&'a Named>,
    pub permission: &'a Permission,
    pub now_ms: u64,
    /// With a passkey enrolled: the options that ask for it (JSON), so Approve takes it.
    pub passkey_request: Option<&'a str>,
    /// A local page's: nobody signs in, and the passkey names the approver.
    pub local: bool,
    /// Under a quorum: the approvals so far (or those that made it whole), and how far it has come
    /// while it waits.
    pub approvals: &'a [Approval],
    pub progress: Option<&'a Progress>,
    /// Why this person's approval would not count, when their decline still would.
    pub quorum_note: Option<&'a str>,
}

/// A time as people read it on the page: `2026-12-06 21:50:12 UTC`.
pub(crate) fn at(ms: u64) -> String {
    crate::audit::rfc3339(ms).replace('T', " ").trim_end_matches('Z').to_string() + " UTC"
}

/// How often a page that is not at its end reads itself again (the script puts what changed in
/// place; without the script, the page reloads itself every [`NO_SCRIPT_REFRESH_SECS`]).
pub(crate) const REFRESH_MS: u64 = 5_000;
pub(crate) const NO_SCRIPT_REFRESH_SECS: u64 = 30;

impl View<'_> {
    /// The person who decided, in the reader's words.
    fn who(&self, d: Decided) -> String {
        people::words(d.approver, d.named, &self.session.approver)
    }

    pub fn render(&self) -> String {
        let r = self.record;
        // the form's opening lines speak of its checkbox; the page has its own buttons
        // (and its heading, which the page says in its own words below)
        let start = match r.form_text.find(FORM_REQUEST_PART) {
            Some(at) => r.form_text[at..].find('\n').map_or(at, |end| at + end + 1),
            None => 0,
        };
        let (host_part, component_part) = match r.form_text.find("\nFrom the component") {
            Some(at) if at >= start => (&r.form_text[start..at], r.form_text[at + 1..].trim_end()),
            _ => (&r.form_text[start..], ""),
        };
        let state = State::of(r.expires_at_ms, self.decision.map(Decision::decided), self.outcome, self.now_ms)
            .with_progress(self.progress);
        let deciding = state.is_open() && matches!(self.permission, Permission::Permitted(..));
        let mut body = String::new();
        body.push_str(&format!(
            "<main><h1>{}</h1>",
            if deciding { "Approve one create on Equinix Fabric?" } else { "One create on Equinix Fabric" }
        ));
        let summary = r.plan.as_ref().map_or(r.change_type.as_str(), |p| p.summary.as_str());
        body.push_str(&format!("<p id=\"plan-summary\" class=\"summary\">{}</p>", escape(summary)));
        let left = r.expires_at_ms.saturating_sub(self.now_ms);
        let proposer = person(&r.proposer, self.proposer, &self.session.approver);
        let time_left = match left {
            _ if state.is_final() => String::new(),
            0 => String::new(),
            left => format!("; <span id=\"time-left\">{} left</span> to decide and collect", minutes(left)),
        };
        body.push_str(&format!(
            "<div id=\"proposed\" class=\"meta\">Proposed by <span id=\"proposer\">{proposer}</span> at {} (when Fabric \
             validated it){time_left}</div>",
            escape(&at(r.validated_at_ms)),
        ));
        if !r.agent_reason.is_empty() {
            body.push_str(&format!(
                "<figure id=\"agent-reason\" class=\"reason agent\"><blockquote>{}</blockquote><figcaption>The agent's \
                 reason, in its own words: equinix-mcp cannot check them</figcaption></figure>",
                escape(&r.agent_reason)
            ));
        }
        body.push_str(&self.live(&state));
        if let Some(plan) = &r.plan {
            body.push_str(&plan_view(plan));
        }
        // after the plan, and kept in sight (a sticky bar) until the person scrolls to it
        if deciding {
            body.push_str(&self.decide());
        }
        let reader = match (self.local, self.session.named.is_empty()) {
            (true, _) => "an approver enrolled on this machine: their passkey names them".to_string(),
            (false, true) => self.session.approver.clone(),
            (false, false) => format!("{}, {}", self.session.named.text(), self.session.approver),
        };
        let groups = match self.session.groups.is_empty() {
            true => String::new(),
            false => format!("; groups <span id=\"groups\">{}</span>", escape(&self.session.groups.join(", "))),
        };
        body.push_str(&format!(
            "<p class=\"meta\" id=\"reader\">{}: <span id=\"approver\">{}</span>{groups}</p>",
            if self.local { "Who approves" } else { "You are signed in as" },
            escape(&reader)
        ));
        body.push_str(&format!(
            "<details id=\"exact\"><summary>The exact request equinix-mcp will send (rendered from its bytes)</summary>\
             <pre id=\"request\">{}</pre></details>",
            escape(host_part)
        ));
        if !component_part.is_empty() {
            body.push_str(&format!(
                "<details id=\"component-words\"><summary>What the component said (its own words; equinix-mcp cannot \
                 check them)</summary><pre id=\"component\" class=\"component\">{}</pre></details>",
                escape(component_part)
            ));
        }
        body.push_str("</main>");
        // without the script the page reloads itself, except while the person may be writing a reason
        let head = match state.is_final() || deciding {
            true => String::new(),
            false => format!("<noscript><meta http-equiv=\"refresh\" content=\"{NO_SCRIPT_REFRESH_SECS}\"></noscript>"),
        };
        document_with("Approve a change on Equinix Fabric", &head, &body)
    }

    /// The part of the page that moves with the request: where it stands, and the decision's
    /// reason.
    fn live(&self, state: &State) -> String {
        let mut out = format!(
            "<div id=\"live\" data-state=\"{}\" data-final=\"{}\" data-refresh-ms=\"{REFRESH_MS}\">",
            state.name(),
            state.is_final()
        );
        let sentence = state.sentence(&|d| self.who(d), &at);
        let id = if state.decision().is_some() { "outcome" } else { "state" };
        out.push_str(&format!(
            "<p id=\"{id}\" class=\"state state-{}\" role=\"status\">{}</p>",
            state.name(),
            escape(&sentence)
        ));
        if let Some(d) = state.decision().filter(|d| !d.reason.is_empty()) {
            out.push_str(&format!(
                "<figure id=\"reason-given\" class=\"reason\"><blockquote>{}</blockquote><figcaption>{}, in {} own \
                 words</figcaption></figure>",
                escape(d.reason),
                if d.approve { "The approver's comment" } else { "Why it was declined" },
                if d.approver == self.session.approver { "your" } else { "their" }
            ));
        }
        out.push_str(&self.quorum());
        if let (true, Permission::Refused(why)) = (state.is_open(), self.permission) {
            out.push_str(&format!(
                "<p id=\"permission\" class=\"refused\">You may not decide this request: {}.</p>",
                escape(why)
            ));
        }
        out.push_str("</div>");
        out
    }

    /// Under a quorum: what it needs, and each approval given, with the approver's comment.
    fn quorum(&self) -> String {
        let needs = self.progress.map(|p| p.needs.clone()).or_else(|| self.decision.map(|d| d.quorum.clone()));
        let Some(needs) = needs.filter(|n| !n.is_empty()) else { return String::new() };
        let glass = match self.progress {
            Some(p) => p.break_glass.clone(),
            None => self.record.break_glass.clone(),
        };
        let mut out = String::new();
        if !glass.is_empty() {
            out.push_str(&format!(
                "<p id=\"break-glass\" class=\"state state-outcome_unknown\">Break-glass: this change is inside {}, a \
                 freeze the operator's policy lets only its own quorum open. Approve only if it must be made now.</p>",
                escape(&glass.iter().map(|id| format!("{id:?}")).collect::<Vec<_>>().join(", "))
            ));
        }
        out.push_str(&format!(
            "<p id=\"quorum\" class=\"meta\">The operator's policy asks for these approvals: {}. Each person \
             counts once, the proposer never.</p>",
            escape(&needs.join("; "))
        ));
        if !self.approvals.is_empty() {
            out.push_str("<ol id=\"approvals\">");
            for a in self.approvals {
                let who = person(&a.approver, a.named.as_ref(), &self.session.approver);
                let groups =
                    if a.groups.is_empty() { String::new() } else { format!(" ({})", escape(&a.groups.join(", "))) };
                let with = if a.approved_with == "passkey" { "with a passkey" } else { "signed in" };
                out.push_str(&format!(
                    "<li class=\"approval\">Approved by {who}{groups} at {}, {with}",
                    escape(&at(a.at_ms))
                ));
                if !a.reason.is_empty() {
                    out.push_str(&format!(": <q>{}</q>", escape(&a.reason)));
                }
                out.push_str("</li>");
            }
            out.push_str("</ol>");
        }
        out
    }

    /// The decision: one box for the reason, Approve and Decline.
    fn decide(&self) -> String {
        let Permission::Permitted(why, _) = self.permission else { return String::new() };
        let (passkey, label, note) = match self.passkey_request {
            Some(options) => (
                format!(" data-passkey-request=\"{}\"", escape(options)),
                "Approve with your passkey",
                "<p class=\"note\">Approving asks your authenticator (PIN, fingerprint or face) to sign this exact \
                 request.</p><p id=\"passkey-status\" class=\"refused\"></p>",
            ),
            None => (String::new(), "Approve", ""),
        };
        format!(
            "<section id=\"decide\" class=\"decide\" aria-labelledby=\"decide-heading\"><h2 id=\"decide-heading\">Your \
             decision</h2><p id=\"permission\" class=\"permitted\">You may decide: {}.</p>{quorum_note}{note}\
             <form id=\"decision-form\" method=\"post\" action=\"/approve/{id}\"{passkey}><input type=\"hidden\" \
             name=\"csrf\" value=\"{csrf}\"><input type=\"hidden\" name=\"assertion\" value=\"\"><label \
             for=\"reason\">Reason <span class=\"hint\">(needed to decline; a comment is optional to approve)</span>\
             </label><textarea id=\"reason\" name=\"reason\" rows=\"2\" maxlength=\"{MAX_REASON_CHARS}\"></textarea>\
             <div class=\"buttons\"><button id=\"approve\" class=\"approve\" type=\"submit\" name=\"decision\" \
             value=\"approve\">{label}</button><button id=\"decline\" class=\"decline\" type=\"submit\" \
             name=\"decision\" value=\"decline\">Decline</button></div></form><p id=\"decision-status\" \
             class=\"refused\" role=\"alert\"></p></section>",
            escape(why),
            quorum_note = self
                .quorum_note
                .map(|n| format!("<p id=\"quorum-note\" class=\"refused\">Your approval would not count: {}. You may still decline.</p>", escape(n)))
                .unwrap_or_default(),
            id = escape(&self.record.id),
            csrf = escape(&self.session.csrf),
        )
    }
}

/// The one-time page of `equinix-mcp approvers add`: a passkey for `name`, made in this browser.
pub(crate) fn enroll_page(name: &str, action: &str, options: &str) -> String {
    document(
        "Enroll an approver",
        &format!(
            "<h1>Enroll {name} as an approver on this machine</h1><p>Your authenticator (PIN, fingerprint or face) \
             makes a passkey for this machine's equinix-mcp. From then on, approving a create on a local server's \
             approval page takes this passkey, and it signs the exact request.</p><form id=\"enroll-form\" \
             method=\"post\" action=\"{action}\" data-passkey-create=\"{options}\"><input type=\"hidden\" \
             name=\"credential\" value=\"\"><button id=\"enroll\" type=\"submit\">Add a passkey</button></form><p \
             id=\"passkey-status\" class=\"refused\"></p>",
            name = escape(name),
            action = escape(action),
            options = escape(options),
        ),
    )
}

/// How the passkeys page offers to add one.
pub(crate) enum Adding {
    /// The options for `navigator.credentials.create()` (JSON).
    Options(String),
    /// The sign-in is older than this many seconds allow.
    SignInAgain(u64),
    Unavailable(String),
}

/// Signed out, the passkeys page offers only the sign-in.
pub(crate) fn passkeys_signed_out() -> String {
    document(
        "Your passkeys",
        "<h1>Your passkeys</h1><p>Sign in to see your passkeys or add one.</p><p><a id=\"sign-in\" \
         href=\"/approve/passkeys/sign-in\">Sign in with your identity provider</a></p>",
    )
}

fn when(ms: u64) -> String {
    crate::audit::rfc3339(ms)
}

/// A signed-in person's passkeys, and the way to add one.
pub(crate) fn passkeys(session: &Session, mine: &[Enrollment], adding: &Adding) -> String {
    let mut body = String::from("<h1>Your passkeys</h1>");
    body.push_str(&format!(
        "<p>Signed in as <span id=\"approver\">{}</span>. Once you have a passkey here, approving a request on the \
         approval page takes it: your authenticator signs the exact request, after it verifies you.</p>",
        escape(&session.approver)
    ));
    if mine.is_empty() {
        body.push_str("<p id=\"none\">You have no passkey enrolled.</p>");
    } else {
        body.push_str("<table class=\"facts\" id=\"enrolled\"><tr><td>passkey</td><td>enrolled</td><td>last used</td><td>state</td></tr>");
        for e in mine {
            let state = match &e.revoked {
                Some(r) => format!("revoked by {}: {}", escape(&r.by), escape(&r.reason)),
                None => "active".into(),
            };
            body.push_str(&format!(
                "<tr class=\"passkey\"><td><code>{}</code></td><td>{}</td><td>{}</td><td>{state}</td></tr>",
                escape(&e.credential_id),
                when(e.enrolled_at_ms),
                e.last_used_ms.map_or("never".into(), when),
            ));
        }
        body.push_str("</table>");
    }
    match adding {
        Adding::Options(options) => body.push_str(&format!(
            "<form id=\"enroll-form\" method=\"post\" action=\"/approve/passkeys\" data-passkey-create=\"{}\"><input \
             type=\"hidden\" name=\"csrf\" value=\"{}\"><input type=\"hidden\" name=\"credential\" value=\"\">\
             <button id=\"enroll\" type=\"submit\">Add a passkey</button></form><p id=\"passkey-status\" \
             class=\"refused\"></p>",
            escape(options),
            escape(&session.csrf)
        )),
        Adding::SignInAgain(max_age) => body.push_str(&format!(
            "<p id=\"sign-in-again\">Adding a passkey needs a sign-in within the last {max_age} s. <a id=\"sign-in\" \
             href=\"/approve/passkeys/sign-in\">Sign in again</a></p>"
        )),
        Adding::Unavailable(why) => body.push_str(&format!(
            "<p id=\"unavailable\" class=\"refused\">Passkeys cannot be added here: {}</p>",
            escape(why)
        )),
    }
    document("Your passkeys", &body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_in_any_text_is_inert() {
        assert_eq!(escape("<script>x='1'&\"</script>"), "&lt;script&gt;x=&#39;1&#39;&amp;&quot;&lt;/script&gt;");
        let record = PageRecord {
            id: "apv-00000000000000000000000000000000".into(),
            form_text: "request_sha256: a\nname: <img src=x onerror=alert(1)>\n\nFrom the component (its own words):\n| title: </pre><script>1</script>\n".into(),
            request_sha256: "a".into(),
            token: "chg-a".into(),
            validation: "v".into(),
            proposer: "i#<b>p</b>".into(),
            tool: "t".into(),
            validated_at_ms: 0,
            created_at_ms: 0,
            expires_at_ms: 600_000,
            change_type: "connection_create".into(),
            transport: "http".into(),
            facts: None,
            plan: None,
            agent_reason: "</blockquote><b>host</b>".into(),
            break_glass: vec!["<s>freeze</s>".into()],
        };
        let session = Session {
            approver: "i#\"><svg onload=1>".into(),
            subject: "s".into(),
            groups: vec!["<i>netops</i>".into()],
            auth_time: 0,
            csrf: "c".into(),
            expires_at_ms: 1,
            named: Default::default(),
        };
        let permission = Permission::Refused("<u>no</u>".into());
        let hostile_approvals = [Approval {
            id: "d".into(),
            approver: "i#<img src=x>".into(),
            groups: vec!["<b>netops</b>".into()],
            at_ms: 1,
            reason: "</q><script>x</script>".into(),
            named: None,
            approved_with: "sign_in".into(),
            plan_sha256: String::new(),
        }];
        let progress = Progress {
            approvals: 1,
            needed: 2,
            missing: "1 of <i>finance</i>".into(),
            needs: vec!["\"<u>q</u>\": 1 of <b>netops</b> and 1 of <i>finance</i>".into()],
            break_glass: vec!["<s>freeze</s>".into()],
        };
        let view = View {
            record: &record,
            session: &session,
            decision: None,
            outcome: None,
            proposer: None,
            permission: &permission,
            now_ms: 1000,
            passkey_request: None,
            local: false,
            approvals: &hostile_approvals,
            progress: Some(&progress),
            quorum_note: None,
        };
        let html = view.render();
        let (head, body) = html.split_at(html.find("<body>").unwrap());
        assert_eq!(head.matches("<script").count(), 1, "one script: the page's own file");
        assert!(head.contains("<script src=\"/approve/passkey.js\" defer></script>"), "{head}");
        assert!(
            body.contains("&lt;/blockquote&gt;&lt;b&gt;host&lt;/b&gt;</blockquote><figcaption>The agent"),
            "{body}"
        );
        for hostile in ["<img", "<script", "<svg", "<b>", "<i>", "<u>", "</pre><script"] {
            assert!(!body.contains(hostile), "{hostile} must be escaped: {html}");
        }
        assert!(html.contains("&lt;img src=x onerror=alert(1)&gt;"));
        assert!(!html.contains("<form"), "a refused person gets no buttons");

        // the passkey options ride in an attribute: no quote in them closes it
        let permitted = Permission::Permitted("yes".into(), Vec::new());
        let options = r#"{"publicKey":{"challenge":"\"><script>window.__hostile=1</script>"}}"#;
        let html = View { permission: &permitted, passkey_request: Some(options), ..view }.render();
        let body = &html[html.find("<body>").unwrap()..];
        assert!(!body.contains("<script") && body.contains("data-passkey-request=\"{&quot;publicKey&quot;"), "{body}");
        assert!(body.contains("Approve with your passkey"));
    }
}
