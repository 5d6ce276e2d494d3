//! A swapped component that tries every way around the binding of an approval to
//! its dry run and proposal, or puts before a person a form that is not the bytes. Each case
//! ends with the simulator's create count as expected and the server still serving.

use crate::harness::*;
use crate::hostile::{Rogue, rogue};
use serde_json::{Value, json};

fn dry_runs(r: &Rogue) -> u64 {
    r.sim.stats().dry_runs.get("connections").copied().unwrap_or(0)
}

fn refusal(v: &Value) -> &str {
    v["refused"].as_str().unwrap_or_else(|| panic!("not refused: {v}"))
}

#[tokio::test]
async fn nothing_is_stored_or_asked_for_a_body_that_was_never_dry_run() {
    let r = rogue().await;
    let (err, out) = r.call("rogue_no_dry_run", json!({"body": connection_spec("never-validated", 1001)})).await;
    assert!(!err, "{out}");
    assert!(refusal(&out["put"]).contains("no create dry run"), "{out}");
    assert!(refusal(&out["ask"]).contains("did not take proposal"), "{out}");
    assert!(r.client.prompt_texts().is_empty(), "nobody was asked");
    assert_eq!(dry_runs(&r), 0);
    r.ends_with(0).await;
}

#[tokio::test]
async fn a_body_one_byte_off_the_dry_runs_is_not_asked_about() {
    let r = rogue().await;
    let (err, out) = r.call("rogue_off_by_one", json!({"body": connection_spec("one-byte-off", 1001)})).await;
    assert!(!err, "{out}");
    assert!(refusal(&out["ask"]).contains("is not the one Fabric validated"), "{out}");
    assert!(r.client.prompt_texts().is_empty());
    assert_eq!(dry_runs(&r), 1);
    r.ends_with(0).await;
}

#[tokio::test]
async fn a_validated_proposal_gets_one_yes_across_calls_and_a_peek_gets_none() {
    let r = rogue().await;
    let body = connection_spec("asked-in-two-calls", 1001);
    let (_, proposed) = r.call("rogue_propose", json!({"body": body})).await;
    let token = proposed["token"].as_str().unwrap_or_else(|| panic!("{proposed}")).to_string();
    // peeking is not taking: a blocking ask about a peeked token is refused, nothing consumed
    let (_, peeked) = r.call("rogue_confirm", json!({"token": token, "body": body, "peek": true})).await;
    assert!(peeked["found"] == true && peeked["refused"].as_str().unwrap().contains("only peeked"), "{peeked}");
    let (_, first) = r.call("rogue_confirm", json!({"token": token, "body": body})).await;
    assert_eq!(
        (first["status"].as_str(), first["execute"]["status"].as_u64()),
        (Some("Status::Accepted"), Some(201)),
        "{first}"
    );
    let (_, second) = r.call("rogue_confirm", json!({"token": token, "body": body})).await;
    assert!(second["found"] == false && second["refused"].as_str().unwrap().contains("did not take"), "{second}");
    assert_eq!(r.client.prompt_texts().len(), 1, "one person asked once");
    r.ends_with(1).await;
}

#[tokio::test]
async fn no_approval_comes_after_the_ttl_whatever_the_component_stored() {
    let probe = probe_component();
    let args = ["--component", probe.to_str().unwrap(), "--toolsets", "probe,echo,mutate"];
    let server = Launch::serve().args(&args).client(TestClient::accepting()).stdio().await;
    let sim = embedded_sim_url(&server).await;
    let body = connection_spec("too-old", 1001);
    // the probe stores its record with an expiry of u64::MAX: only the host's clock counts
    let proposed = server.ok("rogue_propose", json!({"body": body})).await;
    advance_clock(&sim, 10 * 60 * 1000 + 1).await;
    let late = server.ok("rogue_confirm", json!({"token": proposed["token"], "body": body})).await;
    assert!(late["refused"].as_str().unwrap().contains("within 10 minutes of its dry run"), "{late}");
    assert_eq!(creates(&sim, "connections").await, 0);
    assert!(server.ok("swap_echo", json!({"still": "serving"})).await["echo"]["still"] == "serving");
    server.stop().await;
}

#[tokio::test]
async fn bodies_the_form_cannot_show_exactly_are_not_even_dry_run() {
    let r = rogue().await;
    let spec = connection_spec("exact", 1001).to_string();
    let with = |extra: &str| spec.replacen('{', &format!("{{{extra},"), 1);
    for (raw, why) in [
        (with(r#""bandwidth":10000"#), "twice"),
        (with(r#""band\u0077idth":10000"#), "twice"),
        (spec.replace(r#""bandwidth":1000"#, r#""bandwidth":1e3"#), "plain integers"),
        (spec.replace(r#""bandwidth":1000"#, r#""bandwidth":-0"#), "plain integers"),
        (spec.replace(r#""bandwidth":1000"#, r#""bandwidth":100000000000000000001"#), "plain integers"),
        (spec.replace(r#""bandwidth":1000"#, r#""bandwidth":1000.00000000000000001"#), "plain integers"),
        (spec.replace(r#""name":"exact""#, r#""name":"\ud800""#), "surrogate"),
    ] {
        let (err, out) = r.call("rogue_propose", json!({"raw": raw})).await;
        assert!(err, "{raw}: {out}");
        let message = out["error"]["message"].as_str().unwrap();
        assert!(message.contains(why) && message.contains("not dry-run either"), "{raw}: {message}");
    }
    assert_eq!(dry_runs(&r), 0, "nothing reached Fabric");
    r.ends_with(0).await;
}

#[tokio::test]
async fn the_form_shows_strings_as_sent_with_invisible_characters_escaped() {
    let r = rogue().await;
    let spec = connection_spec("x", 1001).to_string();
    let raw = spec.replace(r#""name":"x""#, "\"name\":\"\\u0041dmin\u{200b}\u{2060}\u{feff}\u{ad}-link\"");
    let (_, proposed) = r.call("rogue_propose", json!({"raw": raw})).await;
    let token = proposed["token"].as_str().unwrap_or_else(|| panic!("{proposed}"));
    let (_, out) = r.call("rogue_confirm", json!({"token": token, "raw": raw})).await;
    assert_eq!(out["execute"]["status"], 201, "{out}");
    let prompt = &r.client.prompt_texts()[0];
    assert!(prompt.contains(r#"body.name: "\u0041dmin\u{200b}\u{2060}\u{feff}\u{ad}-link""#), "{prompt}");
    assert!(!prompt.contains('\u{200b}') && !prompt.contains('\u{feff}'), "no invisible character reaches the form");
    assert!(prompt.contains("asked by tool: \"rogue_confirm\" (a name the component chose)"), "{prompt}");
    r.ends_with(1).await;
}

#[tokio::test]
async fn a_context_flood_is_refused_before_anyone_is_asked() {
    let r = rogue().await;
    let body = connection_spec("flood", 1001);
    let (_, many) = r.call("rogue_flood", json!({"body": body, "fields": 100_000, "chars": 10})).await;
    assert!(refusal(&many["ask"]).contains("100000 fields; at most 40"), "{many}");
    let (_, long) = r.call("rogue_flood", json!({"body": body, "fields": 40, "chars": 500})).await;
    assert!(refusal(&long["ask"]).contains("at most 16384"), "{long}");
    let (_, fits) = r.call("rogue_flood", json!({"body": body, "fields": 40, "chars": 10})).await;
    assert_eq!(fits["ask"]["approved"], true, "{fits}");
    assert_eq!(r.client.prompt_texts().len(), 1, "only the form that fits was shown");
    assert!(r.client.prompt_texts()[0].len() <= 16 * 1024);
    r.ends_with(0).await;
}

#[tokio::test]
async fn the_form_names_the_tool_that_asked_whatever_it_is_called() {
    let r = rogue().await;
    let (err, out) = r.call("fabric_list_metros", json!({"body": connection_spec("posing-as-a-read", 1001)})).await;
    assert!(!err && out["ask"]["approved"] == true, "{out}");
    let prompt = &r.client.prompt_texts()[0];
    assert!(
        prompt.lines().any(|l| l == "asked by tool: \"fabric_list_metros\" (a name the component chose)"),
        "{prompt}"
    );
    r.ends_with(0).await;
}

#[tokio::test]
async fn the_hosts_escapes_cannot_be_imitated_in_the_form() {
    let r = rogue().await;
    let body = connection_spec("escapes", 1001);
    let (_, proposed) = r.call("rogue_propose", json!({"body": body})).await;
    // the component types the text of the host's escape, and beside it a real invisible character
    let fields = json!([["typed", "a\\u{200b}b"], ["real", "a\u{200b}b"]]);
    let (err, out) = r.call("rogue_confirm", json!({"token": proposed["token"], "body": body, "fields": fields})).await;
    assert!(!err && out["status"] == "Status::Accepted", "{out}");
    let prompt = r.client.prompt_texts().pop().expect("the person was asked");
    let line = |label: &str| prompt.lines().find(|l| l.starts_with(label)).map(String::from);
    assert_eq!(line("| typed: ").as_deref(), Some(r"| typed: a\\u{200b}b"), "{prompt}");
    assert_eq!(line("| real: ").as_deref(), Some(r"| real: a\u{200b}b"), "{prompt}");
    assert_eq!(r.approval_events().iter().filter(|e| *e == "approval_minted").count(), 1);
    r.ends_with(1).await;
}
