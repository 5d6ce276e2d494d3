//! The form the person reads, rendered by the host. First the plan ([`crate::plan`]): what the
//! request will do, in names the host resolved itself; then the request from the exact bytes an
//! approval would send, read by [`exact_json`] (what it cannot show exactly is refused); the
//! component's context is shown below them, marked as the component's words. Every value is one
//! line with its invisible characters escaped, so no value can pose as a line of the host's part
//! or hide a difference, and the whole form is bounded so that a person can read it.

use std::fmt::Write;

use equinix_broker_contract::ChangeType;

use super::subject::Subject;
use crate::bindings::confirmation::Context;
use crate::exact_json::{self, Node, visible};

/// At most this many body fields are put before a person; a longer body is refused unasked.
pub(crate) const MAX_FIELDS: usize = 200;
/// At most this many context fields; more are refused unasked.
pub(crate) const MAX_CONTEXT_FIELDS: usize = 40;
/// The whole form at most this many bytes; a larger one is refused unasked.
pub(crate) const MAX_FORM_BYTES: usize = 16 * 1024;
/// The policy's line is cut beyond this many characters; the form keeps room for it.
const POLICY_LINE_CHARS: usize = 400;
/// A component's context value is cut beyond this many characters.
const MAX_CONTEXT_CHARS: usize = 500;
/// How the host's line with the operator policy's verdict begins (the page's notices read it back).
pub(crate) const POLICY_LINE: &str = "operator policy: ";
/// Prefix of every line the component wrote.
const COMPONENT_MARK: &str = "| ";

/// What the person is asked: the rendered text, and what it is about (an answer counts for that
/// subject only).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Form {
    /// The whole text of the form (the elicitation message).
    pub text: String,
    /// The proposal, its validation and the hash of the request the form shows.
    pub subject: Subject,
    /// When Fabric validated it (the host's clock): the TTL runs from here.
    pub validated_at_ms: u64,
    /// `connection_create`, `network_create` or `service_token_create`.
    pub change_type: String,
    /// What the operator's policy judged of the request, when there is a policy (the approval
    /// page judges the person who decides on the same facts).
    pub(crate) policy_facts: Option<std::sync::Arc<crate::policy::Facts>>,
    /// The plan shown first (its hash is the subject's `plan_sha256`).
    pub plan: Option<crate::plan::Plan>,
}

/// The request a form shows: its tool, route and bytes (read once, by [`exact_json::parse`]),
/// and what it is about.
pub struct Request<'a> {
    pub tool: &'a str,
    pub change_type: ChangeType,
    pub path: &'a str,
    pub body: &'a Node<'a>,
    pub subject: Subject,
    pub validated_at_ms: u64,
    /// The plan the host resolved after the dry run (none for a proposal validated before plans).
    pub plan: Option<&'a crate::plan::Plan>,
}

/// Why a form cannot be put before a person: it would be more than a person reads whole.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FormError {
    #[error("the component's context has {0} fields; at most {MAX_CONTEXT_FIELDS} are put before a person")]
    ContextFields(usize),
    #[error("the create body has {0} fields; at most {MAX_FIELDS} can be put before a person")]
    BodyFields(usize),
    #[error(
        "the form would be {0} bytes, with {reserved} kept for the operator policy's line; at most {MAX_FORM_BYTES} \
         are put before a person (shorten the component's context)",
        reserved = POLICY_LINE_RESERVE
    )]
    TooLong(usize),
}

impl From<FormError> for String {
    fn from(e: FormError) -> String {
        e.to_string()
    }
}

/// Room kept for the policy's line (at most 4 bytes a character), added once the policy has judged.
const POLICY_LINE_RESERVE: usize = 4 * POLICY_LINE_CHARS + 40;

/// Renders the form for `request`, with the component's `context` below it. `Err` says why it
/// cannot be put before a person.
pub fn render(request: Request, context: &Context) -> Result<Form, FormError> {
    let Request { tool, change_type, path, body, subject, validated_at_ms, plan } = request;
    let fields = exact_json::leaves_of(body);
    if context.fields.len() > MAX_CONTEXT_FIELDS {
        return Err(FormError::ContextFields(context.fields.len()));
    }
    if fields.len() > MAX_FIELDS {
        return Err(FormError::BodyFields(fields.len()));
    }
    let mut text = String::new();
    text.push_str(
        "equinix-mcp asks you to approve ONE create on Equinix Fabric. It sends exactly the request below, once, \
         and only if you accept with confirm = true; decline or cancel and nothing is created.\n",
    );
    if let Some(plan) = plan {
        text.push('\n');
        text.push_str(&plan.text());
    }
    text.push_str("\nThe request, rendered by equinix-mcp from the exact bytes it will send:\n");
    // the tool's name is the component's (its catalog names it): data, quoted, never the host's words
    let _ = writeln!(text, "asked by tool: {} (a name the component chose)", crate::plan::quoted(tool));
    let _ = writeln!(text, "change_type: {}", change_type.as_str());
    let _ = writeln!(text, "request: POST {} (no dryRun: this creates a billable resource)", visible(path));
    let _ = writeln!(text, "request_sha256: {}", subject.request_sha256);
    for (label, value) in &fields {
        let _ = writeln!(text, "{label}: {value}");
    }
    text.push_str("\nFrom the component (its own words; equinix-mcp cannot check them):\n");
    let _ = writeln!(text, "{COMPONENT_MARK}title: {}", capped(&context.title));
    let _ = writeln!(text, "{COMPONENT_MARK}message: {}", capped(&context.message));
    for (label, value) in &context.fields {
        let _ = writeln!(text, "{COMPONENT_MARK}{}: {}", capped(label), capped(value));
    }
    if text.len() + POLICY_LINE_RESERVE > MAX_FORM_BYTES {
        return Err(FormError::TooLong(text.len() + POLICY_LINE_RESERVE));
    }
    Ok(Form {
        text,
        subject,
        validated_at_ms,
        change_type: change_type.as_str().to_string(),
        policy_facts: None,
        plan: plan.cloned(),
    })
}

/// A context text as the form shows it: cut, each backslash doubled (so the component cannot type
/// what looks like the host's `\u{...}` escape of an invisible character; JSON writes the body's
/// backslashes the same way), then its invisible characters escaped.
fn capped(s: &str) -> String {
    visible(&equinix_broker_contract::clip(s, MAX_CONTEXT_CHARS).replace('\\', "\\\\"))
}

impl Form {
    /// Adds what the operator's policy said of the request to the host's part, below its hash.
    pub(crate) fn note_policy(&mut self, verdict: &str) {
        let shown = equinix_broker_contract::clip(&visible(verdict), POLICY_LINE_CHARS);
        let line = format!("{POLICY_LINE}{shown}\n");
        let at = self.text.find("\nFrom the component").unwrap_or(self.text.len());
        self.text.insert_str(at, &line);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use equinix_broker_contract::request_sha256;

    /// The form of a body given as text, as the confirmation capability renders it.
    fn render(tool: &str, change_type: &str, path: &str, body: &str, context: &Context) -> Result<Form, String> {
        let tree = exact_json::parse(body)?;
        let subject = Subject { request_sha256: request_sha256(change_type, body), ..Subject::default() };
        super::render(
            Request {
                tool,
                change_type: ChangeType::parse(change_type).unwrap(),
                path,
                body: &tree,
                subject,
                validated_at_ms: 0,
                plan: None,
            },
            context,
        )
        .map_err(String::from)
    }

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
        let form = render(
            "fabric_confirm_change",
            "connection_create",
            "/fabric/v4/connections",
            body,
            &context(&[("price", "USD 250/month")]),
        )
        .unwrap();
        assert_eq!(form.subject.request_sha256, request_sha256("connection_create", body));
        for line in [
            "change_type: connection_create",
            "request: POST /fabric/v4/connections",
            &format!("request_sha256: {}", form.subject.request_sha256),
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
        let form = render(
            "fabric_confirm_change",
            "connection_create",
            "/fabric/v4/connections",
            &body,
            &context(&[(forged, forged)]),
        )
        .unwrap();
        for line in form.text.lines() {
            assert!(!line.starts_with("price:"), "forged line: {line}");
            assert!(!line.starts_with("request_sha256: (verified"), "forged line: {line}");
        }
        assert_eq!(form.text.lines().filter(|l| l.starts_with("request_sha256:")).count(), 1);
        assert!(!form.text.contains('\u{2028}') && !form.text.contains('\r') && !form.text.contains('\u{202e}'));
        let title = Context { title: forged.into(), ..context(&[]) };
        let form =
            render("fabric_confirm_change", "connection_create", "/fabric/v4/connections", "{}", &title).unwrap();
        assert!(form.text.lines().all(|l| !l.starts_with("price:")), "{}", form.text);
    }

    #[test]
    fn the_hosts_escapes_cannot_be_typed() {
        // the component types the text of the host's escape; a real invisible character beside it
        let typed = r"a\u{200b}b";
        let real = "a\u{200b}b";
        let body = serde_json::json!({"name": typed, "other": real}).to_string();
        let ctx = context(&[("typed", typed), ("real", real), (r"\u{200b}label", "x")]);
        let form = render("t", "connection_create", "/fabric/v4/connections", &body, &ctx).unwrap();
        let line = |start: &str| form.text.lines().find(|l| l.starts_with(start)).unwrap().to_string();
        assert_eq!(line("| typed: "), r"| typed: a\\u{200b}b");
        assert_eq!(line("| real: "), r"| real: a\u{200b}b");
        assert_ne!(line("| typed: ")["| typed: ".len()..], line("| real: ")["| real: ".len()..]);
        assert!(form.text.contains(r"| \\u{200b}label: x"), "{}", form.text);
        // in the body a backslash always starts a JSON escape, and `\u{` is none
        assert_eq!(line("body.name: "), r#"body.name: "a\\u{200b}b""#);
        assert_eq!(line("body.other: "), r#"body.other: "a\u{200b}b""#);
    }

    #[test]
    fn bodies_that_cannot_be_shown_are_refused() {
        let ctx = context(&[]);
        assert!(
            render("fabric_confirm_change", "connection_create", "/p", "not json", &ctx)
                .unwrap_err()
                .contains("not a JSON")
        );
        assert!(
            render("fabric_confirm_change", "connection_create", "/p", "[1]", &ctx)
                .unwrap_err()
                .contains("not a JSON object")
        );
        let huge: serde_json::Map<String, serde_json::Value> =
            (0..=MAX_FIELDS).map(|i| (format!("k{i}"), serde_json::Value::from(i))).collect();
        let huge = serde_json::Value::Object(huge).to_string();
        let err = render("fabric_confirm_change", "connection_create", "/p", &huge, &ctx).unwrap_err();
        assert!(err.contains("fields"), "{err}");
        let long = "y".repeat(10_000);
        let form =
            render("fabric_confirm_change", "connection_create", "/p", "{}", &context(&[("target", &long)])).unwrap();
        assert!(form.text.contains("(9500 more characters)"));
        let dup = r#"{"bandwidth":50,"bandwidth":10000}"#;
        assert!(render("t", "connection_create", "/p", dup, &ctx).unwrap_err().contains("twice"));
    }

    #[test]
    fn the_form_names_the_tool_and_is_bounded() {
        let form = render("fabric_list_metros", "connection_create", "/p", "{}", &context(&[])).unwrap();
        assert!(
            form.text.lines().any(|l| l == "asked by tool: \"fabric_list_metros\" (a name the component chose)"),
            "{}",
            form.text
        );
        // a name made to read as the host's verdict stays one quoted value, marked as the component's
        let posing =
            render("confirm. verified by equinix-mcp: plan OK", "connection_create", "/p", "{}", &context(&[]))
                .unwrap();
        assert!(
            posing
                .text
                .lines()
                .any(|l| l
                    == "asked by tool: \"confirm. verified by equinix-mcp: plan OK\" (a name the component chose)"),
            "{}",
            posing.text
        );
        let many: Vec<(String, String)> = (0..=MAX_CONTEXT_FIELDS).map(|i| (format!("f{i}"), "v".into())).collect();
        let flood = Context { fields: many, ..context(&[]) };
        let err = render("t", "connection_create", "/p", "{}", &flood).unwrap_err();
        assert_eq!(err, FormError::ContextFields(41).to_string());
        assert!(err.contains("41 fields; at most 40"), "{err}");
        let long = "z".repeat(MAX_CONTEXT_CHARS);
        let fields: Vec<(String, String)> = (0..MAX_CONTEXT_FIELDS).map(|i| (format!("f{i}"), long.clone())).collect();
        let err = render("t", "connection_create", "/p", "{}", &Context { fields, ..context(&[]) }).unwrap_err();
        assert!(err.contains("at most 16384"), "{err}");
    }
}
