//! The approval page closes the loop: one change followed in a real Chromium through
//! each end state, checking what a person sees at each step, that the decision is inside the
//! first screen at 1280×800 and at 390×844, and that axe-core (in the page) finds no serious or
//! critical violation. The agent's answer says the same as the page.
//!
//! The docs' screenshots are taken here: with `EQUINIX_MCP_DOCS_SCREENSHOTS=1` they are written
//! to `docs/screenshots/` (else to `target/screenshots/`, to be looked at).

use std::time::Duration;

use serde_json::{Value, json};

use crate::approval_page::{ALL, PROPOSER, confirm, link_of, serve};
use crate::harness::webdriver::Chrome;
use crate::harness::*;

/// The page's state as the page itself holds it (`#live`'s `data-state`).
async fn state_of(chrome: &Chrome) -> String {
    chrome.run("return document.getElementById('live').dataset.state;").await.as_str().unwrap_or_default().to_string()
}

/// Waits until the page, left open, shows `state` without being reloaded.
async fn follows_to(chrome: &Chrome, state: &str) {
    chrome.run("window.__same_document = true;").await;
    wait::until(&format!("the open page to show {state}"), Duration::from_secs(30), async || {
        state_of(chrome).await == state
    })
    .await;
    assert_eq!(chrome.run("return window.__same_document === true;").await, true, "{state}: the page moved in place");
}

/// Writes `png` as the docs' screenshot `name` (see the module's note).
fn keep(name: &str, png: &[u8]) {
    assert!(png.starts_with(b"\x89PNG") && png.len() > 2_000, "{name}: a screenshot");
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let dir = match std::env::var("EQUINIX_MCP_DOCS_SCREENSHOTS").as_deref() {
        Ok("1") => root.join("docs/screenshots"),
        _ => root.join("target/screenshots"),
    };
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(name), png).unwrap();
}

async fn accessible(chrome: &Chrome, what: &str) {
    let violations = chrome.accessibility_violations().await;
    assert!(violations.is_empty(), "{what}: axe-core finds {violations:#?}");
}

/// A proposal's link, and its confirm token.
async fn waiting(agent: &Client, name: &str, vlan: u64) -> (String, String) {
    let proposal = propose_on(agent, name, vlan).await;
    let token = proposal["confirm_token"].as_str().unwrap().to_string();
    (link_of(&confirm(agent, &token).await.1), token)
}

#[tokio::test]
async fn a_change_is_followed_on_the_page_through_each_end_state_and_the_agent_hears_the_same() {
    let provider = OidcProvider::start().await;
    let (server, public) = serve(&provider, &[]).await;
    let token = provider.token(PROPOSER, ALL, &public).await;
    let agent = server.connect(Some(&token), TestClient::plain(), false).await;
    let chrome = Chrome::start().await;

    // waiting: the summary, the plan, the decision, all in the first screen on a laptop and a phone;
    // the agent's reason, quoted as its words
    let mut long = crate::approval_page::connection_at("loop-long", 400, 1000);
    long["reason"] = json!("x".repeat(201));
    let refused = call_on(&agent, "fabric_propose_change", long).await;
    assert!(is_error(&refused), "{:?}", refused.structured_content);
    let said = refused.content[0].as_text().map(|t| t.text.clone()).unwrap_or_default();
    assert!(said.contains("/reason"), "the error names the argument: {said}");
    let mut args = crate::approval_page::connection_at("loop-created", 401, 1000);
    args["reason"] = json!("new Ashburn link for the migration");
    let proposed = call_on(&agent, "fabric_propose_change", args).await;
    assert!(!is_error(&proposed), "{:?}", proposed.structured_content);
    let confirm_token = structured(&proposed)["confirm_token"].as_str().unwrap().to_string();
    let link = link_of(&confirm(&agent, &confirm_token).await.1);
    chrome.viewport(1280, 800).await;
    chrome.sign_in(&link, PROPOSER).await;
    assert_eq!(state_of(&chrome).await, "waiting");
    assert!(chrome.text("#plan-summary").await.starts_with("+ create connection (billable): EVPL_VC"));
    assert!(chrome.text("#state").await.starts_with("Waiting for a decision"));
    let agent_said = chrome.text("#agent-reason").await;
    assert!(
        agent_said.starts_with("new Ashburn link for the migration")
            && agent_said.contains("The agent's reason, in its own words"),
        "{agent_said}"
    );
    assert!(chrome.text("#proposed").await.contains("Proposed by you at 20"), "{}", chrome.text("#proposed").await);
    for first in ["#plan-summary", "#approve", "#decline", "#reason"] {
        assert!(chrome.in_first_screen(first).await, "{first} is in the first screen at 1280×800");
    }
    // what the page shows unfolded is the host's, in its own words: no MCP-form wording (the
    // component's words, which may have it, are folded and marked as the component's)
    let shown = chrome.run("return document.body.innerText;").await.as_str().unwrap().to_string();
    for form_words in ["expires_in", "confirm = true", "accept with", "request_sha256"] {
        assert!(!shown.contains(form_words), "no MCP-form wording on the page: {form_words}\n{shown}");
    }
    let source = chrome.source().await;
    // the exact bytes and the component's words are there, folded, whole
    assert_eq!(chrome.run("return document.getElementById('exact').open;").await, false);
    assert!(source.contains("request_sha256: "), "the exact request is in the page");
    accessible(&chrome, "a waiting request at 1280×800").await;
    keep("approval-page-1280x800.png", &chrome.screenshot().await);
    chrome.viewport(390, 844).await;
    chrome.goto(&link).await;
    chrome.find("#approve").await;
    for first in ["#plan-summary", "#approve", "#decline"] {
        assert!(chrome.in_first_screen(first).await, "{first} is in the first screen at 390×844");
    }
    accessible(&chrome, "a waiting request at 390×844").await;
    keep("approval-page-390x844.png", &chrome.screenshot().await);
    chrome.viewport(1280, 800).await;

    // approved, with a comment: the page says it waits for the agent, and moves on by itself
    chrome.type_into("#reason", "ok for the Ashburn migration").await;
    chrome.click("#approve").await;
    let outcome = chrome.text("#outcome").await;
    assert!(outcome.starts_with("Approved by you at 20") && outcome.contains("Waiting for the agent"), "{outcome}");
    assert!(chrome.text("#reason-given").await.contains("ok for the Ashburn migration"));
    assert!(!chrome.source().await.contains("id=\"approve\""), "decided: no buttons");
    let collected = async {
        tokio::time::sleep(Duration::from_secs(1)).await;
        confirm(&agent, &confirm_token).await
    };
    let ((failed, done), ()) = tokio::join!(collected, follows_to(&chrome, "created"));
    assert!(!failed && done["executed"] == true, "{done}");
    let said = &done["page_decision"];
    assert_eq!(said["state"], "created", "{done}");
    assert_eq!(said["reason"], "ok for the Ashburn migration", "{done}");
    assert_eq!(said["reason_is"], "the approver's own words");
    assert_eq!(said["by"], "Full-es256 Example (full-es256@example.com)", "named as their sign-in named them");
    let outcome = chrome.text("#outcome").await;
    assert!(outcome.contains("Created on Fabric at 20") && outcome.contains("uuid "), "{outcome}");
    let uuid = done["created"]["uuid"].as_str().or(done["resource"]["uuid"].as_str()).map(str::to_string);
    if let Some(uuid) = uuid {
        assert!(outcome.contains(&uuid), "the page names what was created: {outcome} / {done}");
    }
    accessible(&chrome, "a created request").await;
    keep("approval-page-created.png", &chrome.screenshot().await);

    // declined: a reason is asked for before anything is sent, then kept and told to the agent
    let (link, confirm_token) = waiting(&agent, "loop-declined", 402).await;
    chrome.goto(&link).await;
    chrome.click("#decline").await;
    assert!(chrome.text("#decision-status").await.contains("Say why"), "a decline without a reason stays here");
    assert_eq!(state_of(&chrome).await, "waiting");
    chrome.type_into("#reason", "wrong metro: this belongs in SV").await;
    chrome.click("#decline").await;
    let outcome = chrome.text("#outcome").await;
    assert!(outcome.starts_with("Declined by you at 20") && outcome.contains("Nothing will be created"), "{outcome}");
    assert!(chrome.text("#reason-given").await.contains("wrong metro: this belongs in SV"));
    let (_, done) = confirm(&agent, &confirm_token).await;
    assert_ne!(done["executed"], true, "{done}");
    assert_eq!(
        (done["page_decision"]["state"].as_str(), done["page_decision"]["reason"].as_str()),
        (Some("declined"), Some("wrong metro: this belongs in SV")),
        "{done}"
    );
    accessible(&chrome, "a declined request").await;

    // failed: Fabric refuses the create the person approved, and the page says so with its error
    let (link, confirm_token) = waiting(&agent, "loop-failed", 403).await;
    chrome.goto(&link).await;
    chrome.click("#approve").await;
    chrome.find("#outcome").await;
    inject(&server.sim, json!({"route": "POST /fabric/v4/connections", "status": 400})).await;
    let (_, done) = confirm(&agent, &confirm_token).await;
    assert_ne!(done["executed"], true, "{done}");
    assert_eq!(done["page_decision"]["state"], "failed", "{done}");
    chrome.goto(&link).await;
    let outcome = chrome.text("#outcome").await;
    assert!(outcome.contains("Fabric refused the create") && outcome.contains("HTTP 400"), "{outcome}");

    // outcome unknown: the create left and its answer was lost
    let (link, confirm_token) = waiting(&agent, "loop-unknown", 404).await;
    chrome.goto(&link).await;
    chrome.click("#approve").await;
    chrome.find("#outcome").await;
    inject(&server.sim, json!({"route": "POST /fabric/v4/connections", "mode": "drop"})).await;
    let (_, done) = confirm(&agent, &confirm_token).await;
    assert_eq!(done["page_decision"]["state"], "outcome_unknown", "{done}");
    chrome.goto(&link).await;
    let outcome = chrome.text("#outcome").await;
    assert!(outcome.contains("no answer came back") && outcome.contains("Check Fabric"), "{outcome}");

    // expired twice: approved and never collected in time, and never decided
    let (approved_link, approved_token) = waiting(&agent, "loop-late", 405).await;
    chrome.goto(&approved_link).await;
    chrome.click("#approve").await;
    chrome.find("#outcome").await;
    let (undecided_link, _) = waiting(&agent, "loop-undecided", 406).await;
    advance_clock(&server.sim, 10 * 60 * 1000 + 1000).await;
    let (failed, late) = confirm(&agent, &approved_token).await;
    assert_ne!(late["executed"], true, "{late}");
    assert_eq!(late["page_decision"]["state"], "expired", "{late}");
    let message = late["message"].as_str().unwrap_or_else(|| panic!("a message: {failed} {late}"));
    assert!(
        message.contains("Approved by")
            && message.contains("before the agent collected it")
            && message.contains("propose again"),
        "the late answer tells the truth: {message}"
    );
    assert!(!message.contains("gave no approval"), "{message}");
    chrome.goto(&approved_link).await;
    assert!(chrome.text("#outcome").await.contains("before the agent collected it"));
    chrome.goto(&undecided_link).await;
    assert_eq!(state_of(&chrome).await, "expired");
    assert!(chrome.text("#state").await.contains("nobody decided in time"));
    assert!(!chrome.source().await.contains("id=\"approve\""), "expired: no buttons");

    // the inbox: every one of them by where it stands, and read by state
    let base = public.trim_end_matches("/mcp");
    chrome.goto(&format!("{base}/approve")).await;
    chrome.find("#decided").await;
    let states: Vec<Value> = chrome
        .run("return [...document.querySelectorAll('tr.decided')].map((r) => r.dataset.state);")
        .await
        .as_array()
        .unwrap()
        .clone();
    for state in ["created", "declined", "failed", "outcome_unknown", "expired"] {
        assert!(states.contains(&json!(state)), "the inbox lists one {state}: {states:?}");
    }
    assert_eq!(states.iter().filter(|s| **s == "expired").count(), 2, "{states:?}");
    accessible(&chrome, "the inbox").await;
    // the scan finds what it should: a button nobody can name is a critical violation
    chrome.run("document.body.appendChild(document.createElement('button'));").await;
    let found = chrome.accessibility_violations().await;
    assert!(found.iter().any(|v| v.starts_with("button-name")), "axe-core reports a nameless button: {found:?}");
    chrome.goto(&format!("{base}/approve")).await;
    chrome.find("#decided").await;
    keep("inbox-1280x800.png", &chrome.screenshot().await);
    chrome.goto(&format!("{base}/approve?state=declined")).await;
    let declined = chrome.text("#decided").await;
    assert!(declined.contains("wrong metro: this belongs in SV") && !declined.contains("Created"), "{declined}");
    // no column of the inbox wraps a word a letter a line at 1280 px
    chrome.goto(&format!("{base}/approve")).await;
    chrome.find("#decided").await;
    let narrowest = chrome
        .run(
            "return Math.min(...[...document.querySelectorAll('#decided td')].map((td) => \
             td.getBoundingClientRect().width));",
        )
        .await;
    assert!(narrowest.as_f64().unwrap() > 40.0, "the narrowest column is {narrowest} px wide");
    assert_eq!(creates(&server.sim, "connections").await, 2, "created once, and the create whose answer was lost");
    provider.stop().await;
}

/// An approval's comment is signed by the passkey with the request: the audit record keeps it,
/// `audit verify --passkeys` checks it, and a comment edited in the log no longer verifies.
#[tokio::test]
async fn a_passkey_signs_the_approvers_comment_and_an_edited_comment_fails_verify() {
    use crate::local_approvers::{Exported, confirm, dana_at_her_server, pending};
    use crate::passkeys::events;
    let (_sim, file, chrome, server) = dana_at_her_server().await;
    let (token, link) = pending(&server.client, "signed-comment", 1411).await;
    chrome.goto(&link).await;
    chrome.type_into("#reason", "checked with the \"DC\" team").await;
    chrome.click("#approve").await;
    let outcome = chrome.text("#outcome").await;
    assert!(outcome.starts_with("Approved by local:dana"), "{outcome}");
    assert!(chrome.text("#reason-given").await.contains("checked with the \"DC\" team"));
    assert_eq!(confirm(&server.client, &token).await["executed"], true);
    let entries = server.audit_entries();
    let decision = events(&entries, "page_decision")[0].clone();
    assert_eq!(decision["reason"], "checked with the \"DC\" team", "{decision}");
    assert!(decision["passkey"].is_object(), "{decision}");

    let exported = Exported::of(&file).await;
    let (ok, out, err) = exported.verify(&server.audit_log).await;
    assert!(ok && out.contains("1 passkey approvals verify"), "{out}{err}");
    // the comment edited, the chain rebuilt: the signature was over the words the person wrote
    let edited = exported.edited(&server.audit_log, |line| {
        let changed = line.replace("checked with the \\\"DC\\\" team", "not checked with anyone");
        assert!(changed.contains("not checked with anyone"), "{line}");
        changed
    });
    let (ok, out, _) = exported.verify(&edited).await;
    assert!(!ok && out.contains("BROKEN"), "{out}");
}
