//! What a destination receives: the generic webhook's JSON (signed), and the Slack and Microsoft
//! Teams incoming-webhook payloads, each built from one [`Notice`]. None carries a confirm token,
//! a session, a secret or the store's internals: a notice holds none of them.

use ring::hmac;
use serde_json::{Value, json};

use super::Notice;

/// The header that carries the generic webhook's signatures: `t=UNIX_SECONDS,v1=HEX[,v1=HEX]`,
/// one `v1` per configured key (two during a rotation), each HMAC-SHA256 over `t.` and the raw
/// body.
pub(crate) const SIGNATURE_HEADER: &str = "x-equinix-mcp-signature";
/// The event's name, also in the body.
pub(crate) const EVENT_HEADER: &str = "x-equinix-mcp-event";
/// The delivery's id: the same on each attempt of one delivery, so a receiver can drop a repeat.
pub(crate) const DELIVERY_HEADER: &str = "x-equinix-mcp-delivery";

/// The generic webhook's body: the notice as JSON, with a format version.
pub(crate) fn webhook_body(notice: &Notice) -> String {
    let mut v = serde_json::to_value(notice).expect("a notice serializes");
    v["format"] = json!("equinix-mcp notification v1");
    v.to_string()
}

/// The signature header's value for `body` sent at `unix_seconds`, with each of `keys`.
pub(crate) fn signature(keys: &[Vec<u8>], unix_seconds: u64, body: &str) -> String {
    let signed = format!("{unix_seconds}.{body}");
    let mut header = format!("t={unix_seconds}");
    for key in keys {
        let tag = hmac::sign(&hmac::Key::new(hmac::HMAC_SHA256, key), signed.as_bytes());
        header.push_str(&format!(",v1={}", hex::encode(tag.as_ref())));
    }
    header
}

/// The one line a chat message opens with.
fn headline(notice: &Notice) -> String {
    let what = match notice.event {
        "change_waiting" => "A change waits for approval",
        "change_reminder" => "Reminder: a change still waits for approval",
        "change_escalated" => "Escalated: nobody has decided a change that waits for approval",
        "change_approved" => "A change was approved",
        "change_partly_approved" => "A change was approved by one more person and needs more",
        "change_declined" => "A change was declined",
        "change_expired" => "A change expired unapproved",
        "change_executed" => "A change was created",
        "change_failed" => "A change failed",
        "change_outcome_unknown" => "A change's outcome is unknown",
        other => other,
    };
    format!("{what}: {}", notice.summary.as_deref().unwrap_or(&notice.change_type))
}

/// The notice's facts as `label: value` lines.
fn facts(notice: &Notice) -> Vec<(&'static str, String)> {
    let mut out = vec![("proposed by", notice.proposer.clone())];
    if let Some(a) = &notice.approver {
        out.push(("decided by", a.clone()));
    }
    if let Some(p) = &notice.policy {
        out.push(("policy", p.clone()));
    }
    out.push(("where it stands", notice.state.replace('_', " ")));
    if let Some(r) = &notice.reason {
        out.push(("their reason", format!("\"{r}\"")));
    }
    if let Some(p) = &notice.progress {
        out.push(("approvals", p.clone()));
    }
    if !notice.break_glass.is_empty() {
        out.push(("break-glass", notice.break_glass.join(", ")));
    }
    if let Some(o) = &notice.outcome {
        out.push(("outcome", o.clone()));
    }
    out.push(("request_sha256", notice.request_sha256.clone()));
    out
}

/// Slack's `mrkdwn` escapes (`&`, `<`, `>`), so no text can become a link or a mention.
fn slack_escaped(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

/// Slack's incoming-webhook payload: `text` (the notification's fallback) and `blocks`.
pub(crate) fn slack_body(notice: &Notice) -> String {
    let head = slack_escaped(&headline(notice));
    let lines: Vec<String> = facts(notice).iter().map(|(k, v)| format!("*{k}:* {}", slack_escaped(v))).collect();
    let mut blocks = vec![
        json!({"type": "section", "text": {"type": "mrkdwn", "text": format!("*{head}*")}}),
        json!({"type": "section", "text": {"type": "mrkdwn", "text": lines.join("\n")}}),
    ];
    if let Some(url) = &notice.approval_url {
        blocks.push(json!({"type": "actions", "elements": [{"type": "button",
            "text": {"type": "plain_text", "text": "Open the approval page"}, "url": url}]}));
    }
    json!({"text": head, "blocks": blocks}).to_string()
}

/// Text for an Adaptive Card, whose `TextBlock` and `FactSet` values are Markdown: each ASCII
/// punctuation mark Markdown gives a meaning anywhere in a line (links `[..](..)`, images,
/// emphasis, code, autolinks `<..>`, headings, tables) escaped with a backslash (CommonMark 2.4),
/// and a list marker that opens the text (`- `, `+ `, `1. `) too, so no text can become a link or
/// formatting, as [`slack_escaped`] does for Slack.
fn teams_escaped(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    let digits = s.bytes().take_while(u8::is_ascii_digit).count();
    for (i, c) in s.char_indices() {
        let list_marker = (i == 0 && matches!(c, '-' | '+')) || (digits > 0 && i == digits && matches!(c, '.' | ')'));
        if list_marker || "\\`*_[]()<>!#|~".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Microsoft Teams' incoming-webhook payload (a Workflows webhook): a message with one Adaptive
/// Card attachment.
pub(crate) fn teams_body(notice: &Notice) -> String {
    let facts: Vec<Value> = facts(notice).iter().map(|(k, v)| json!({"title": k, "value": teams_escaped(v)})).collect();
    let mut card = json!({
        "type": "AdaptiveCard",
        "$schema": "http://adaptivecards.io/schemas/adaptive-card.json",
        "version": "1.4",
        "body": [
            {"type": "TextBlock", "text": teams_escaped(&headline(notice)), "weight": "Bolder", "wrap": true},
            {"type": "FactSet", "facts": facts},
        ],
    });
    if let Some(url) = &notice.approval_url {
        card["actions"] = json!([{"type": "Action.OpenUrl", "title": "Open the approval page", "url": url}]);
    }
    json!({"type": "message", "attachments": [{"contentType": "application/vnd.microsoft.card.adaptive",
        "contentUrl": null, "content": card}]})
    .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn notice() -> Notice {
        Notice {
            event: "change_waiting",
            key: "k".into(),
            change_type: "connection_create".into(),
            summary: Some("+ create connection \"<b>to-aws</b>\" (billable): EVPL_VC, 500 Mbps".into()),
            approval_url: Some("https://mcp.example/approve/apv-1".into()),
            proposer: "https://idp#alice".into(),
            approver: None,
            policy: Some("four-eyes".into()),
            outcome: None,
            state: "waiting",
            reason: None,
            progress: None,
            break_glass: Vec::new(),
            request_sha256: "ab".into(),
            at: "2026-12-04T00:00:00Z".into(),
        }
    }

    #[test]
    fn the_signature_is_hmac_sha256_of_the_time_and_the_raw_body_with_each_key() {
        let header = signature(&[b"k1".to_vec(), b"k2".to_vec()], 1_700_000_000, "{}");
        // computed apart from this code: printf '1700000000.{}' | openssl dgst -sha256 -hmac k1
        assert!(header.starts_with("t=1700000000,v1="), "{header}");
        assert_eq!(header.matches(",v1=").count(), 2);
        let first = header.split(",v1=").nth(1).unwrap();
        let key = hmac::Key::new(hmac::HMAC_SHA256, b"k1");
        assert!(hmac::verify(&key, b"1700000000.{}", &hex::decode(first).unwrap()).is_ok());
    }

    #[test]
    fn a_markdown_link_in_a_name_stays_text_in_teams_as_in_slack() {
        let mut hostile = notice();
        hostile.summary =
            Some("+ create connection \"[Approve here](https://evil.example/x) **now** <https://e.x>\"".into());
        hostile.proposer = "https://idp#[me](https://evil.example)".into();
        let teams: Value = serde_json::from_str(&teams_body(&hostile)).unwrap();
        let card = &teams["attachments"][0]["content"];
        let headline = card["body"][0]["text"].as_str().unwrap();
        assert!(
            headline.contains(r"\[Approve here\]\(https://evil.example/x\) \*\*now\*\* \<https://e.x\>"),
            "{headline}"
        );
        let proposer = card["body"][1]["facts"][0]["value"].as_str().unwrap();
        assert_eq!(proposer, r"https://idp\#\[me\]\(https://evil.example\)");
        assert_eq!(teams_escaped("- a list"), r"\- a list");
        assert_eq!(teams_escaped("12. a list"), r"12\. a list");
        assert_eq!(teams_escaped("a-b 1.5"), "a-b 1.5", "inside a line a hyphen or a dot means nothing");
        // every link-making sequence is broken: no unescaped `](` or `<` is left
        for text in [headline, proposer] {
            let unescaped =
                text.replace("\\\\", "").replace("\\]", "").replace("\\[", "").replace("\\(", "").replace("\\<", "");
            assert!(!unescaped.contains("](") && !unescaped.contains('<') && !unescaped.contains('['), "{text}");
        }
        let slack: Value = serde_json::from_str(&slack_body(&hostile)).unwrap();
        assert!(slack["text"].as_str().unwrap().contains("&lt;https://e.x&gt;"), "{slack}");
    }

    #[test]
    fn chat_payloads_carry_the_link_and_no_markup_or_token() {
        let slack: Value = serde_json::from_str(&slack_body(&notice())).unwrap();
        assert!(slack["text"].as_str().unwrap().contains("&lt;b&gt;to-aws&lt;/b&gt;"), "{slack}");
        assert_eq!(slack["blocks"][2]["elements"][0]["url"], "https://mcp.example/approve/apv-1");
        let teams: Value = serde_json::from_str(&teams_body(&notice())).unwrap();
        assert_eq!(teams["attachments"][0]["content"]["actions"][0]["url"], "https://mcp.example/approve/apv-1");
        let headline = teams["attachments"][0]["content"]["body"][0]["text"].as_str().unwrap();
        assert!(headline.contains("\\<b\\>to-aws\\</b\\>"), "{headline}");
        assert_eq!(teams["attachments"][0]["contentType"], "application/vnd.microsoft.card.adaptive");
        let generic: Value = serde_json::from_str(&webhook_body(&notice())).unwrap();
        assert_eq!(generic["event"], "change_waiting");
        assert!(generic.get("key").is_none() && !generic.to_string().contains("chg-"), "{generic}");
    }
}
