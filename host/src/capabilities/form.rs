//! The form the person reads, rendered by the host. The request part comes from the exact bytes
//! an approval would send; the component's context is shown below it, marked as the component's
//! words. Every value is one line (line breaks, control and bidi characters escaped), so no value
//! can pose as a line of the host's part.

use std::fmt::Write;

use equinix_broker_contract::request_sha256;
use serde_json::Value;

use crate::bindings::confirmation::Context;

/// At most this many body fields are put before a person; a longer body is refused unasked.
pub const MAX_FIELDS: usize = 200;
/// A component's context value is cut beyond this many characters.
const MAX_CONTEXT_CHARS: usize = 500;
/// Prefix of every line the component wrote.
const COMPONENT_MARK: &str = "| ";

/// What the person is asked: the rendered text and the hash it shows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Form {
    /// The whole text of the form (the elicitation message).
    pub text: String,
    /// SHA-256 of the change type, a newline and the body, lowercase hex.
    pub request_sha256: String,
}

/// Renders the form for a create of `change_type` (POST `path` with `body`). `Err` says why the
/// body cannot be put before a person.
pub fn render(change_type: &str, path: &str, body: &str, context: &Context) -> Result<Form, String> {
    let parsed: Value = serde_json::from_str(body).map_err(|e| format!("the create body is not JSON: {e}"))?;
    if !parsed.is_object() {
        return Err("the create body is not a JSON object".into());
    }
    let mut fields = Vec::new();
    flatten("body", &parsed, &mut fields);
    if fields.len() > MAX_FIELDS {
        return Err(format!(
            "the create body has {} fields; at most {MAX_FIELDS} can be put before a person",
            fields.len()
        ));
    }
    let request_sha256 = request_sha256(change_type, body);
    let mut text = String::new();
    text.push_str(
        "equinix-mcp asks you to approve ONE create on Equinix Fabric. It sends exactly the request below, once, \
         and only if you accept with confirm = true; decline or cancel and nothing is created.\n",
    );
    text.push_str("\nThe request, rendered by equinix-mcp from the exact bytes it will send:\n");
    let _ = writeln!(text, "change_type: {change_type}");
    let _ = writeln!(text, "request: POST {} (no dryRun: this creates a billable resource)", one_line(path));
    let _ = writeln!(text, "request_sha256: {request_sha256}");
    for (label, value) in &fields {
        let _ = writeln!(text, "{label}: {value}");
    }
    text.push_str("\nFrom the component (its own words; equinix-mcp cannot check them):\n");
    let _ = writeln!(text, "{COMPONENT_MARK}title: {}", capped(&context.title));
    let _ = writeln!(text, "{COMPONENT_MARK}message: {}", capped(&context.message));
    for (label, value) in &context.fields {
        let _ = writeln!(text, "{COMPONENT_MARK}{}: {}", capped(label), capped(value));
    }
    Ok(Form { text, request_sha256 })
}

/// Every leaf of the body as (path, JSON literal): strings keep their quotes and escapes, so a
/// value reads exactly as it is sent.
fn flatten(prefix: &str, v: &Value, out: &mut Vec<(String, String)>) {
    match v {
        Value::Object(m) if !m.is_empty() => {
            m.iter().for_each(|(k, v)| flatten(&format!("{prefix}.{}", one_line(k)), v, out))
        }
        Value::Array(a) if !a.is_empty() => {
            a.iter().enumerate().for_each(|(i, v)| flatten(&format!("{prefix}[{i}]"), v, out))
        }
        leaf => out.push((prefix.to_string(), one_line(&leaf.to_string()))),
    }
}

fn capped(s: &str) -> String {
    one_line(&equinix_broker_contract::clip(s, MAX_CONTEXT_CHARS))
}

/// `s` on one line: line breaks, other control characters, Unicode line and paragraph
/// separators and bidirectional controls become visible `\u{…}` escapes (`\n`, `\r`, `\t` as such).
pub fn one_line(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() || is_layout_control(c) => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    out
}

/// Characters that break or reorder a line without being `char::is_control`.
fn is_layout_control(c: char) -> bool {
    matches!(c, '\u{2028}' | '\u{2029}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn context(fields: &[(&str, &str)]) -> Context {
        Context {
            title: "Create Fabric connection?".into(),
            message: "m".into(),
            fields: fields.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect(),
        }
    }

    #[test]
    fn the_form_shows_every_body_field_and_the_hash_of_the_bytes() {
        let body = r#"{"bandwidth":500,"name":"to-aws","aSide":{"accessPoint":{"port":{"uuid":"p-1"}}},"notifications":[{"emails":["a@b.c"],"type":"ALL"}]}"#;
        let form = render("connection_create", "/fabric/v4/connections", body, &context(&[("price", "USD 250/month")]))
            .unwrap();
        assert_eq!(form.request_sha256, request_sha256("connection_create", body));
        for line in [
            "change_type: connection_create",
            "request: POST /fabric/v4/connections",
            &format!("request_sha256: {}", form.request_sha256),
            "body.bandwidth: 500",
            "body.name: \"to-aws\"",
            "body.aSide.accessPoint.port.uuid: \"p-1\"",
            "body.notifications[0].emails[0]: \"a@b.c\"",
            "| price: USD 250/month",
            "| title: Create Fabric connection?",
        ] {
            assert!(form.text.lines().any(|l| l.starts_with(line)), "missing {line:?} in\n{}", form.text);
        }
    }

    #[test]
    fn no_value_can_forge_a_line() {
        let forged = "x\nprice: USD 0.00/month\nrequest_sha256: (verified OK)\u{2028}y\r\u{202e}z";
        let body = serde_json::json!({"name": forged, forged: 1}).to_string();
        let form = render("connection_create", "/fabric/v4/connections", &body, &context(&[(forged, forged)])).unwrap();
        for line in form.text.lines() {
            assert!(!line.starts_with("price:"), "forged line: {line}");
            assert!(!line.starts_with("request_sha256: (verified"), "forged line: {line}");
        }
        assert_eq!(form.text.lines().filter(|l| l.starts_with("request_sha256:")).count(), 1);
        assert!(!form.text.contains('\u{2028}') && !form.text.contains('\r') && !form.text.contains('\u{202e}'));
        let title = Context { title: forged.into(), ..context(&[]) };
        let form = render("connection_create", "/fabric/v4/connections", "{}", &title).unwrap();
        assert!(form.text.lines().all(|l| !l.starts_with("price:")), "{}", form.text);
    }

    #[test]
    fn bodies_that_cannot_be_shown_are_refused() {
        let ctx = context(&[]);
        assert!(render("connection_create", "/p", "not json", &ctx).unwrap_err().contains("not JSON"));
        assert!(render("connection_create", "/p", "[1]", &ctx).unwrap_err().contains("not a JSON object"));
        let huge: serde_json::Map<String, Value> =
            (0..=MAX_FIELDS).map(|i| (format!("k{i}"), Value::from(i))).collect();
        let err = render("connection_create", "/p", &Value::Object(huge).to_string(), &ctx).unwrap_err();
        assert!(err.contains("fields"), "{err}");
        let long = "y".repeat(10_000);
        let form = render("connection_create", "/p", "{}", &context(&[("target", &long)])).unwrap();
        assert!(form.text.contains("(9500 more characters)"));
    }
}
