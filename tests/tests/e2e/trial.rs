//! The one-box trial, `scripts/trial`, run as docs/deploying.md gives it (its default
//! ports; only the binary is the suite's, through the script's own `TRIAL_BIN`): two
//! replicas, one shared simulator, the local identity provider and Redis come up; an agent with
//! the printed token proposes 5 Gbps on replica b, its proposer may not approve it, alice approves
//! on replica a's page, the confirm creates once, and replica a reads the same estate. SIGTERM
//! stops every process the script started.

use std::process::Stdio;
use std::time::Duration;

use serde_json::json;
use tokio::io::{AsyncBufReadExt, BufReader};

use crate::harness::printed::Printed;
use crate::harness::*;

/// The script's process group, stopped (SIGTERM, then SIGKILL) however the test ends: a test that
/// fails must not leave servers on the trial's fixed ports.
struct Group(u32);

impl Drop for Group {
    fn drop(&mut self) {
        let group = format!("-{}", self.0);
        let _ = std::process::Command::new("kill").args(["-TERM", "--", &group]).status();
        std::thread::sleep(Duration::from_millis(500));
        let _ = std::process::Command::new("kill").args(["-KILL", "--", &group]).stderr(Stdio::null()).status();
    }
}

/// Every file under `dir`.
fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() { found.extend(walk(&path)) } else { found.push(path) }
    }
    found
}

/// The value of the printed line that begins with `label` (its first word after it).
fn printed(text: &str, label: &str) -> String {
    let line = text.lines().find(|l| l.trim_start().starts_with(label)).unwrap_or_else(|| panic!("{label}: {text}"));
    line.trim_start()[label.len()..].split_whitespace().next().unwrap().to_string()
}

#[tokio::test]
async fn the_one_box_trial_clicks_through_a_four_eyes_approval() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    // the script keeps its files for the person who ran it (it says where): here they go in a
    // folder the test removes
    let scratch = tempfile::tempdir().unwrap();
    let mut trial = tokio::process::Command::new(root.join("scripts/trial"))
        .env("TMPDIR", scratch.path())
        .env("TRIAL_BIN", binary())
        .env("EQUINIX_MCP_CACHE_DIR", cache_dir())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .unwrap();
    let group = Group(trial.id().unwrap());
    let said = Printed::new("scripts/trial");
    said.collect(trial.stderr.take().unwrap());
    let mut lines = BufReader::new(trial.stdout.take().unwrap()).lines();
    let mut text = String::new();
    while !text.contains("Connect an MCP client") {
        let line = tokio::time::timeout(Duration::from_secs(90), lines.next_line()).await;
        let line = line.expect("the trial is ready within 90 s").unwrap().expect("the trial ended before it was ready");
        text.push_str(&line);
        text.push('\n');
    }
    let (a, b, token) =
        (printed(&text, "replica a"), printed(&text, "replica b"), printed(&text, "agent access token"));
    // the printed token lasts the trial, and the script says so
    let claims =
        token.split('.').nth(1).map(|c| base64::Engine::decode(&base64::engine::general_purpose::URL_SAFE_NO_PAD, c));
    let claims: serde_json::Value = serde_json::from_slice(&claims.unwrap().unwrap()).unwrap();
    let lasts = claims["exp"].as_u64().unwrap() - claims["iat"].as_u64().unwrap();
    assert!(lasts >= 8 * 3600, "the agent's token lasts {lasts} s: {text}");
    assert!(text.contains("valid 12 hours"), "{text}");
    assert_eq!((a.as_str(), b.as_str()), ("http://127.0.0.1:8941/mcp", "http://127.0.0.1:8942/mcp"), "{text}");

    let agent = connect(&b, Some(&token), TestClient::plain(), false).await.unwrap();
    let proposed =
        call_on(&agent, "fabric_propose_change", crate::approval_page::connection_at("trial-5g", 3801, 5000)).await;
    assert!(!is_error(&proposed), "{:?}", proposed.structured_content);
    let confirm_token = structured(&proposed)["confirm_token"].as_str().unwrap().to_string();
    let asked = structured(&call_on(&agent, "fabric_confirm_change", json!({"confirm_token": confirm_token})).await);
    let link = asked["human_confirmation"]["approval_url"].as_str().unwrap_or_else(|| panic!("{asked}")).to_string();
    assert!(link.starts_with("http://127.0.0.1:8941/approve/apv-"), "the page on replica a: {link}");
    // the proposer may not approve their own connection; alice, in netops, may
    let own = Browser::default().sign_in(&link, "trial-agent").await;
    assert!(
        own.body.contains("You may not decide") && own.body.contains("billable-or-access-four-eyes"),
        "{}",
        own.body
    );
    let alice = Browser::default();
    let page = alice.sign_in(&link, "alice").await;
    assert!(alice.decide(&page, "approve").await.body.contains("Approved by"));
    let done = structured(&call_on(&agent, "fabric_confirm_change", json!({"confirm_token": confirm_token})).await);
    assert_eq!(done["executed"], true, "{done}");
    let uuid = done["created"]["uuid"].as_str().unwrap_or_else(|| panic!("{done}")).to_string();
    // one estate: replica a reads what b created
    let on_a = connect(&a, Some(&token), TestClient::plain(), false).await.unwrap();
    let read = call_on(&on_a, "fabric_get_connection", json!({"connection_id": uuid})).await;
    assert!(!is_error(&read), "{:?}", read.structured_content);
    assert!(structured(&read).to_string().contains("trial-5g"), "{:?}", read.structured_content);
    let again = structured(&call_on(&agent, "fabric_confirm_change", json!({"confirm_token": confirm_token})).await);
    assert_ne!(again["executed"], true, "one create: {again}");
    // the icon every browser asks for is served, not refused in the log
    let icon = Browser::default().get("http://127.0.0.1:8941/favicon.ico").await;
    assert_eq!((icon.status, icon.header("content-type").as_str()), (200, "image/svg+xml"));
    drop((agent, on_a));

    // SIGTERM stops the script and every process it started
    let pid = trial.id().unwrap();
    assert!(std::process::Command::new("kill").args(["-TERM", &pid.to_string()]).status().unwrap().success());
    std::mem::forget(group);
    let ended = tokio::time::timeout(Duration::from_secs(30), trial.wait()).await.expect("it stops");
    assert!(ended.unwrap().success());
    let logs: Vec<_> = walk(scratch.path()).into_iter().filter(|p| p.ends_with("a/server.log")).collect();
    let log =
        std::fs::read_to_string(logs.first().unwrap_or_else(|| panic!("replica a's log in {scratch:?}"))).unwrap();
    assert!(!log.contains("favicon"), "no line of the log is about the icon: {log}");
    for port in 8940..=8944 {
        wait::until(&format!("port {port} to be free"), wait::WITHIN, async || {
            std::net::TcpStream::connect(("127.0.0.1", port)).is_err()
        })
        .await;
    }
}
