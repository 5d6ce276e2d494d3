//! The page's HTML: no script at all, every text escaped, the request in the form's own words.

use super::record::{Decision, PageRecord};
use super::{Permission, Session};

/// The page's style sheet (served from `/approve/page.css`: the CSP allows no inline style).
pub const CSS: &str = "body{font:15px/1.45 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#1b1b1b}\
h1{font-size:1.35rem}pre{white-space:pre-wrap;overflow-wrap:anywhere;background:#f4f4f4;padding:.8rem;border:1px solid #ccc}\
pre.component{background:#fffbe6;border-color:#d9c36a}.facts td{padding:.15rem .8rem .15rem 0;vertical-align:top}\
.refused{color:#8a1f11}.permitted{color:#1d5e20}form{display:inline-block;margin-right:1rem}\
button{font-size:1rem;padding:.5rem 1.2rem}button.approve{background:#1d5e20;color:#fff}";

/// Where the form's request part begins (after its opening lines about the form's checkbox).
const FORM_REQUEST_PART: &str = "The request, rendered by equinix-mcp";

/// Escapes text for an HTML element or a quoted attribute.
pub fn escape(text: &str) -> String {
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
    format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" \
         content=\"width=device-width\"><title>{}</title><link rel=\"stylesheet\" href=\"/approve/page.css\"></head>\
         <body>{body}</body></html>",
        escape(title)
    )
}

/// A page that says one thing (an error, a sign-in that failed, an unknown link).
pub fn message(title: &str, text: &str) -> String {
    document(title, &format!("<h1>{}</h1><p>{}</p>", escape(title), escape(text)))
}

/// Signed out: nothing of the request, only the way to sign in.
pub fn signed_out(id: &str) -> String {
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

fn minutes(ms: u64) -> String {
    let s = ms / 1000;
    format!("{} min {:02} s", s / 60, s % 60)
}

/// What a signed-in person sees.
pub struct View<'a> {
    pub record: &'a PageRecord,
    pub session: &'a Session,
    pub decision: Option<&'a Decision>,
    pub permission: &'a Permission,
    pub now_ms: u64,
}

impl View<'_> {
    pub fn render(&self) -> String {
        let r = self.record;
        // the form's opening lines speak of its checkbox; the page has its own buttons
        let start = r.form_text.find(FORM_REQUEST_PART).unwrap_or(0);
        let (host_part, component_part) = match r.form_text.find("\nFrom the component") {
            Some(at) if at >= start => (&r.form_text[start..at], r.form_text[at + 1..].trim_end()),
            _ => (&r.form_text[start..], ""),
        };
        let left = r.expires_at_ms.saturating_sub(self.now_ms);
        let mut body = String::new();
        body.push_str("<h1>Approve one create on Equinix Fabric?</h1>");
        body.push_str(&format!(
            "<table class=\"facts\"><tr><td>signed in as</td><td id=\"approver\">{}</td></tr>\
             <tr><td>groups</td><td id=\"groups\">{}</td></tr>\
             <tr><td>proposed by</td><td id=\"proposer\">{}</td></tr>\
             <tr><td>validated by Fabric</td><td>{} ago</td></tr>\
             <tr><td>time left</td><td id=\"time-left\">{}</td></tr></table>",
            escape(&self.session.approver),
            escape(&self.session.groups.join(", ")),
            escape(&r.proposer),
            minutes(self.now_ms.saturating_sub(r.validated_at_ms)),
            if left == 0 { "none: the proposal's 10 minutes have passed".to_string() } else { minutes(left) },
        ));
        body.push_str("<h2>The request</h2><p>Rendered by equinix-mcp from the exact bytes it will send:</p>");
        body.push_str(&format!("<pre id=\"request\">{}</pre>", escape(host_part)));
        if !component_part.is_empty() {
            body.push_str("<h2>From the component</h2><p>Its own words; equinix-mcp cannot check them.</p>");
            body.push_str(&format!("<pre id=\"component\" class=\"component\">{}</pre>", escape(component_part)));
        }
        match self.decision {
            Some(d) => body.push_str(&format!(
                "<h2>Decided</h2><p id=\"outcome\">{} by {}. {}</p>",
                if d.approve { "Approved" } else { "Declined" },
                escape(&d.approver),
                if d.approve {
                    "The create is sent once, when the agent's call collects this approval within the proposal's time."
                } else {
                    "Nothing will be created for this proposal."
                }
            )),
            None if left == 0 => body.push_str("<p id=\"outcome\">Too late: nothing can be approved now.</p>"),
            None => match self.permission {
                Permission::Permitted(why, _) => body.push_str(&format!(
                    "<p id=\"permission\" class=\"permitted\">You may decide: {}.</p>\
                     <form method=\"post\" action=\"/approve/{id}\"><input type=\"hidden\" name=\"csrf\" value=\"{csrf}\">\
                     <input type=\"hidden\" name=\"decision\" value=\"approve\"><button id=\"approve\" class=\"approve\" \
                     type=\"submit\">Approve</button></form>\
                     <form method=\"post\" action=\"/approve/{id}\"><input type=\"hidden\" name=\"csrf\" value=\"{csrf}\">\
                     <input type=\"hidden\" name=\"decision\" value=\"decline\"><button id=\"decline\" \
                     type=\"submit\">Decline</button></form>",
                    escape(why),
                    id = escape(&r.id),
                    csrf = escape(&self.session.csrf),
                )),
                Permission::Refused(why) => body.push_str(&format!(
                    "<p id=\"permission\" class=\"refused\">You may not decide this request: {}.</p>",
                    escape(why)
                )),
            },
        }
        document("Approve a change on Equinix Fabric", &body)
    }
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
        };
        let session = Session {
            approver: "i#\"><svg onload=1>".into(),
            subject: "s".into(),
            groups: vec!["<i>netops</i>".into()],
            auth_time: 0,
            csrf: "c".into(),
            expires_at_ms: 1,
        };
        let permission = Permission::Refused("<u>no</u>".into());
        let html =
            View { record: &record, session: &session, decision: None, permission: &permission, now_ms: 1000 }.render();
        for hostile in ["<img", "<script", "<svg", "<b>", "<i>", "<u>", "</pre><script"] {
            assert!(!html.contains(hostile), "{hostile} must be escaped: {html}");
        }
        assert!(html.contains("&lt;img src=x onerror=alert(1)&gt;"));
        assert!(!html.contains("<form"), "a refused person gets no buttons");
    }
}
