//! The local servers of one person, started exactly as the docs' configurations start
//! them (Claude Desktop's, the plugin's `.mcp.json`, `claude mcp add`: no `--audit-log`, no
//! approvers file, a fresh home, not root), run side by side, each with its own page port, and
//! append to the one audit log the docs name, whose chain `audit verify` checks whole. Before
//! anyone is enrolled, a confirm made anyway says the way out in the host's words, naming this
//! very binary (what a person who installed the Claude Desktop bundle has no other way to find).

use std::process::Stdio;

use serde_json::Value;

use super::local_approvers::{Enrolling, confirm, enroll_in, pending};
use super::passkeys::events;
use crate::harness::webdriver::Chrome;
use crate::harness::*;

/// What the configurations in docs/clients.md run, with the simulator in place of credentials.
const DOCUMENTED: [&str; 4] = ["serve", "--fabric-sim", "--toolsets", "all,mutate"];

/// The command between the first pair of backticks in `text` that enrolls someone.
fn enroll_command(text: &str) -> String {
    let command = text.split('`').nth(1).unwrap_or_else(|| panic!("no command in {text}"));
    assert!(command.contains(" approvers add NAME"), "{text}");
    command.to_string()
}

#[tokio::test]
async fn three_local_servers_of_one_person_run_at_once_and_keep_one_verified_audit_log() {
    let account = Account::fresh();
    let chrome = Chrome::start().await;
    chrome.add_authenticator().await;

    // Claude Desktop's server, before anyone enrolled: the proposal names the one command ...
    let desktop = account.serve(&DOCUMENTED, TestClient::plain()).await;
    let early = propose_on(&desktop.client, "local-early", 361).await;
    let step = early["next_step"].as_str().unwrap();
    assert!(step.starts_with("Do not call fabric_confirm_change yet"), "{step}");
    let command = enroll_command(step);
    let exe = binary().display().to_string();
    assert_eq!(command, format!("{exe} approvers add NAME"), "this binary, the default approvers file");
    let banner = wait::until_some("the start-up line", wait::WITHIN, async || {
        let text = desktop.stderr_text();
        text.lines().find(|l| l.contains("confirmations=")).map(str::to_string)
    })
    .await;
    assert!(banner.contains(&format!("run `{command}`")), "the start-up line names it too: {banner}");
    // ... and a confirm made anyway says the way out, and that a new proposal is needed
    let token = early["confirm_token"].as_str().unwrap();
    let spent = confirm(&desktop.client, token).await;
    assert_eq!(spent["human_confirmation"]["status"], "unsupported_by_client", "{spent}");
    assert_eq!(spent["executed"], false, "{spent}");
    let after = spent["next_step"].as_str().unwrap();
    assert!(after.contains(&command) && after.contains("call fabric_propose_change again"), "{after}");
    assert!(!after.contains("ask the operator"), "a local server's way out is the person's own: {after}");

    // the person runs exactly that command in a terminal of their own
    let words: Vec<String> = command.replace("NAME", "dana").split(' ').map(str::to_string).collect();
    let args: Vec<&str> = words[1..].iter().map(String::as_str).collect();
    let enrolling = Enrolling::spawn(account.command_of(std::path::Path::new(&words[0]), &args)).await;
    let page = enroll_in(&chrome, &enrolling.link).await;
    assert!(page.contains("dana is an approver on this machine"), "{page}");
    let (ok, out, err) = enrolling.finish().await;
    assert!(ok && out.contains("dana is an approver on this machine"), "{out}{err}");
    assert!(account.state_dir().join("approvers.json").exists(), "where the docs say: {out}");

    // the plugin's server and `claude mcp add`'s (Claude Code, which shows the form) start beside it
    let plugin = account.serve(&DOCUMENTED, TestClient::plain()).await;
    let code = account.serve(&DOCUMENTED, TestClient::accepting()).await;
    let mut ports = Vec::new();
    for (server, name, vlan) in [(&desktop, "local-desktop", 362), (&plugin, "local-plugin", 363)] {
        let (token, link) = pending(&server.client, name, vlan).await;
        ports.push(reqwest::Url::parse(&link).unwrap().port());
        chrome.goto(&link).await;
        chrome.click("#approve").await;
        assert!(chrome.text("#outcome").await.starts_with("Approved by local:dana"));
        assert_eq!(confirm(&server.client, &token).await["executed"], true);
    }
    assert_ne!(ports[0], ports[1], "each server's page has a port of its own");
    let proposal = propose_on(&code.client, "local-code", 364).await;
    let token = proposal["confirm_token"].as_str().unwrap();
    assert_eq!(confirm(&code.client, token).await["executed"], true, "the form, approved");

    // one log where the docs say, three processes in one chain, every approval in it
    let log = account.audit_log();
    let entries = read_audit_chain(&log);
    let opened: std::collections::BTreeSet<&str> =
        events(&entries, "audit_log_opened").iter().filter_map(|e| e["instance"].as_str()).collect();
    assert_eq!(opened.len(), 3, "three servers opened the one log");
    assert_eq!(events(&entries, "page_decision").len(), 2);
    let executed = events(&entries, "create_outcome").iter().filter(|e| e["outcome"] == "executed").count();
    assert_eq!(executed, 3, "three creates, each recorded");
    assert_eq!(events(&entries, "passkey_enrolled").len(), 1, "the enrollment once: one chain recorded it");
    let (ok, export, err) = account.run(&["approvers", "export"]).await;
    assert!(ok, "{err}");
    let export_path = account.write("approvers-export.json", &export);
    let (ok, out, err) =
        account.run(&["audit", "verify", log.to_str().unwrap(), "--passkeys", export_path.to_str().unwrap()]).await;
    assert!(ok && out.contains("intact") && out.contains("2 passkey approvals verify"), "{out}{err}");
    for server in [desktop, plugin, code] {
        assert!(!server.stderr_text().contains("in use by another process"), "{}", server.stderr_text());
        server.stop().await;
    }
}

/// A client of the 2026-07-28 generation that shows no form is told the same, in the same words.
#[tokio::test]
async fn a_formless_stateless_client_that_confirms_before_anyone_enrolled_is_told_the_way_out() {
    let server = Launch::serve().args(&["--toolsets", "metros,mutate"]).stateless().stdio().await;
    let proposal = propose_on(&server.client, "local-stateless", 365).await;
    let command = enroll_command(proposal["next_step"].as_str().unwrap());
    let token = proposal["confirm_token"].as_str().unwrap();
    let spent = confirm(&server.client, token).await;
    assert_eq!(spent["human_confirmation"]["status"], "unsupported_by_client", "{spent}");
    let after = spent["next_step"].as_str().unwrap();
    assert!(after.contains(&command) && after.contains("call fabric_propose_change again"), "{after}");
    // the harness gives each server its own approvers file, which the command names
    assert!(command.contains(" --approvers-file "), "{command}");
    let (ok, out, _) = {
        let mut words: Vec<&str> = command.split(' ').collect();
        words[0] = "true";
        let mut sh = tokio::process::Command::new("sh");
        sh.arg("-c").arg(format!("{} && echo parsed", words.join(" "))).stdin(Stdio::null());
        let out = sh.output().await.unwrap();
        (out.status.success(), String::from_utf8_lossy(&out.stdout).into_owned(), ())
    };
    assert!(ok && out.contains("parsed"), "the command is one a shell reads as it is");
}

/// The refusal of a server with no page at all (a team's, signed in at its identity provider,
/// with no approval page configured) points at the operator, not at an enrollment.
#[tokio::test]
async fn a_formless_client_of_a_server_without_a_page_is_sent_to_the_operator() {
    let provider = OidcProvider::start().await;
    let (server, public) = super::oauth::serve(&provider, &[]).await;
    let exp = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() + 300;
    let scope = "fabric:read fabric:propose fabric:confirm";
    let claims =
        serde_json::json!({"iss": provider.issuer, "aud": public, "sub": "no-page", "exp": exp, "scope": scope});
    let token = provider.sign("ed-1", serde_json::json!({}), claims).await;
    let client = server.connect(Some(&token), TestClient::plain(), false).await;
    let proposal = propose_on(&client, "no-page", 366).await;
    let token = proposal["confirm_token"].as_str().unwrap();
    let spent: Value = confirm(&client, token).await;
    assert_eq!(spent["human_confirmation"]["status"], "unsupported_by_client", "{spent}");
    let after = spent["next_step"].as_str().unwrap();
    assert!(
        after.contains("ask the operator to set up the approval page") && !after.contains("approvers add"),
        "{after}"
    );
}
