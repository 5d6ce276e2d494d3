//! Passkey approvals in a real browser: Chromium with WebDriver's virtual authenticator
//! enrolls a passkey on the approval page and signs the exact request with it; every answer the
//! server must refuse is made by the same browser and authenticator and refused, each ending on
//! the simulator's create counter; `audit verify --passkeys` checks the log the browser made.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::harness::webdriver::Chrome;
use crate::harness::*;
use serde_json::{Value, json};

const ALL: &str = "fabric:read fabric:propose fabric:confirm";
/// The MCP client's identity at the provider, and the person who signs in as it (in netops).
const PROPOSER: &str = "full-es256";

/// A server with OAuth and the approval page at `http://localhost:PORT` (WebAuthn needs a host
/// name): the server, its MCP URL, the page's origin and its passkeys file.
async fn serve(provider: &OidcProvider, extra: &[&str]) -> (HttpServer, String, String, PathBuf) {
    let port = free_port();
    let public = format!("http://127.0.0.1:{port}/mcp");
    let origin = format!("http://localhost:{port}");
    let passkeys = fresh_audit_path().with_extension("passkeys.json");
    let server = Launch::serve()
        .args(&["--toolsets", "metros,mutate", "--oauth-issuer", &provider.issuer, "--public-url", &public])
        .args(&["--approval-client-id", "approval-page", "--approval-url", &origin])
        .args(&["--passkeys-file", passkeys.to_str().unwrap()])
        .args(extra)
        .http(&format!("127.0.0.1:{port}"))
        .await;
    (server, public, origin, passkeys)
}

async fn confirm(client: &Client, token: &str) -> Value {
    structured(&call_on(client, "fabric_confirm_change", json!({"confirm_token": token})).await)
}

/// Proposes `name` and asks for it: the token and the page's link.
async fn proposed(agent: &Client, name: &str, vlan: u64) -> (String, String) {
    let proposal = propose_on(agent, name, vlan).await;
    let token = proposal["confirm_token"].as_str().unwrap().to_string();
    let pending = confirm(agent, &token).await;
    assert_eq!(pending["human_confirmation"]["status"], "approval_pending", "{pending}");
    (token, pending["human_confirmation"]["approval_url"].as_str().unwrap().to_string())
}

/// Signs in on the passkeys page as `login` and adds a passkey with the browser's authenticator.
async fn enroll(chrome: &Chrome, origin: &str, login: &str) {
    chrome.goto(&format!("{origin}/approve/passkeys")).await;
    chrome.click("#sign-in").await;
    chrome.type_into("#login", login).await;
    chrome.type_into("#password", &format!("pw-{login}")).await;
    chrome.click("#submit").await;
    chrome.click("#enroll").await;
    let enrolled = chrome.text("#enrolled").await;
    assert!(enrolled.contains("active"), "{enrolled}");
}

/// The options the page at `link` asks the authenticator with (its Approve form's).
pub(crate) async fn options_of(chrome: &Chrome, link: &str) -> String {
    chrome.goto(link).await;
    chrome.find("#decision-form").await;
    let options = chrome.run("return document.getElementById('decision-form').dataset.passkeyRequest;").await;
    match options.as_str() {
        Some(o) => o.to_string(),
        None => panic!("the page asks for no passkey: {}", chrome.source().await),
    }
}

/// An assertion made in the browser from `options` (JSON) with `overrides` of its fields, encoded
/// as the page's script encodes it; `error: ...` when the browser refused.
pub(crate) async fn assertion(chrome: &Chrome, options: &str, overrides: Value) -> String {
    let script = r#"
        const [text, overrides, done] = arguments;
        const b64 = (b) => btoa(String.fromCharCode(...new Uint8Array(b))).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
        const bytes = (s) => Uint8Array.from(atob(s.replace(/-/g, "+").replace(/_/g, "/")), (c) => c.charCodeAt(0));
        const o = Object.assign(JSON.parse(text).publicKey, overrides);
        o.challenge = bytes(o.challenge);
        o.allowCredentials = (o.allowCredentials || []).map((c) => Object.assign({}, c, { id: bytes(c.id) }));
        navigator.credentials.get({ publicKey: o }).then(
            (c) => done(JSON.stringify({ id: c.id, rawId: b64(c.rawId), type: c.type, response: {
                authenticatorData: b64(c.response.authenticatorData), clientDataJSON: b64(c.response.clientDataJSON),
                signature: b64(c.response.signature), userHandle: c.response.userHandle ? b64(c.response.userHandle) : null } })),
            (e) => done("error: " + e.name + ": " + e.message));
    "#;
    let answer = chrome.run_async(script, json!([options, overrides])).await;
    let answer = answer.as_str().unwrap().to_string();
    assert!(!answer.starts_with("error"), "the browser made no assertion: {answer}");
    answer
}

/// Posts `fields` to `action` from the page the browser is on (a form of the page's own origin,
/// as the page's script would send it), and returns the text of the page that answers.
pub(crate) async fn post_form(chrome: &Chrome, action: &str, fields: &[(&str, &str)]) -> String {
    let script = r#"
        const [action, fields] = arguments;
        const f = document.createElement("form");
        f.method = "post";
        f.action = action;
        for (const [k, v] of fields) {
            const i = document.createElement("input");
            i.type = "hidden"; i.name = k; i.value = v; f.appendChild(i);
        }
        document.body.appendChild(f);
        window.__before = 1;
        HTMLFormElement.prototype.submit.call(f);
    "#;
    chrome.run_with(script, json!([action, fields])).await;
    wait::until("the form to be answered", Duration::from_secs(20), async || {
        // the poll may land while the navigation commits: that answer is no answer, not a failure
        let script = "return typeof window.__before === 'undefined' && document.readyState === 'complete';";
        chrome.try_run(script).await == Some(Value::Bool(true))
    })
    .await;
    chrome.run("return document.body.innerText;").await.as_str().unwrap().to_string()
}

/// The session's anti-CSRF token, from the page the browser is on.
async fn csrf(chrome: &Chrome) -> String {
    chrome.run("return document.querySelector('input[name=csrf]').value;").await.as_str().unwrap().to_string()
}

pub(crate) fn events<'a>(entries: &'a [Value], event: &str) -> Vec<&'a Value> {
    entries.iter().filter(|e| e["event"] == event).collect()
}

async fn passkeys_cli(args: &[&str], file: &Path) -> (bool, String, String) {
    let mut all: Vec<&str> = vec!["passkeys"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--passkeys-file", file.to_str().unwrap()]);
    run_to_exit(&all, &[]).await
}

#[tokio::test]
async fn in_a_real_browser_a_passkey_signs_the_exact_request_and_every_other_answer_is_refused() {
    let provider = OidcProvider::start().await;
    let (server, public, origin, passkeys) = serve(&provider, &[]).await;

    // nobody adds a passkey without signing in: nothing is stored
    let anonymous = http()
        .post(format!("{origin}/approve/passkeys"))
        .header("origin", &origin)
        .header("content-type", "application/x-www-form-urlencoded")
        .body("csrf=x&credential=%7B%7D")
        .send()
        .await
        .unwrap();
    assert_eq!(anonymous.status(), 401);
    let (ok, out, err) = passkeys_cli(&["list"], &passkeys).await;
    assert!(ok && out.contains("no passkey is enrolled"), "{out}{err}");

    let token = provider.token(PROPOSER, ALL, &public).await;
    let agent = server.connect(Some(&token), TestClient::plain(), false).await;
    let chrome = Chrome::start().await;
    let authenticator = chrome.add_authenticator().await;
    enroll(&chrome, &origin, PROPOSER).await;
    let (ok, listed, err) = passkeys_cli(&["list", "--json"], &passkeys).await;
    assert!(ok, "{err}");
    let mine: Value = serde_json::from_str(listed.trim()).unwrap();
    assert_eq!(mine["principal"], format!("{}#{PROPOSER}", provider.issuer));
    let credential_id = mine["credential_id"].as_str().unwrap().to_string();

    let (token_a, link_a) = proposed(&agent, "passkey-a", 340).await;
    let (token_b, link_b) = proposed(&agent, "passkey-b", 341).await;
    let options_b = options_of(&chrome, &link_b).await;
    let options_a = options_of(&chrome, &link_a).await;
    assert!(chrome.text("#approve").await.contains("passkey"), "approving takes the passkey");
    let session_csrf = csrf(&chrome).await;
    let approve = |assertion: String| {
        vec![
            ("csrf".to_string(), session_csrf.clone()),
            ("decision".into(), "approve".into()),
            ("assertion".into(), assertion),
        ]
    };
    let post = async |link: &str, fields: Vec<(String, String)>| {
        let fields: Vec<(&str, &str)> = fields.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        post_form(&chrome, link, &fields).await
    };

    // without user verification (the authenticator not asked to verify): refused
    chrome.set_user_verified(&authenticator, false).await;
    let unverified = assertion(&chrome, &options_a, json!({"userVerification": "discouraged"})).await;
    chrome.set_user_verified(&authenticator, true).await;
    let refused = post(&link_a, approve(unverified)).await;
    assert!(refused.contains("did not verify the person"), "{refused}");

    // an assertion over another request's challenge: refused
    let for_b = assertion(&chrome, &options_b, json!({})).await;
    chrome.goto(&link_a).await;
    let refused = post(&link_a, approve(for_b)).await;
    assert!(refused.contains("signed another request"), "{refused}");
    // approving by sign-in alone, with a passkey enrolled: refused
    chrome.goto(&link_a).await;
    let refused =
        post(&link_a, vec![("csrf".into(), session_csrf.clone()), ("decision".into(), "approve".into())]).await;
    assert!(refused.contains("approving takes it"), "{refused}");
    assert_eq!(creates(&server.sim, "connections").await, 0);

    // the page's own button and script: the authenticator signs request A; one create
    chrome.goto(&link_a).await;
    chrome.click("#approve").await;
    let outcome = chrome.text("#outcome").await;
    assert!(outcome.starts_with("Approved by"), "{outcome}");
    let done = confirm(&agent, &token_a).await;
    assert_eq!(done["executed"], true, "{done}");
    assert_eq!(creates(&server.sim, "connections").await, 1);

    // the assertion the audit log kept, replayed on its own request and on another: refused
    let entries = server.audit_entries();
    let decision = events(&entries, "page_decision")[0].clone();
    assert_eq!(decision["approved_with"], "passkey", "{decision}");
    assert_eq!(decision["passkey"]["credential_id"], credential_id.as_str());
    assert_eq!(decision["passkey"]["user_verified"], true);
    let kept = decision["passkey"]["assertion"].to_string();
    chrome.goto(&link_b).await;
    let replayed = post(&link_a, approve(kept.clone())).await;
    assert!(replayed.contains("counter did not move on"), "{replayed}");
    chrome.goto(&link_b).await;
    let replayed = post(&link_b, approve(kept)).await;
    assert!(replayed.contains("signed another request"), "{replayed}");

    // another person's passkey, in this browser's authenticator: refused
    let bob = Chrome::start().await;
    let bobs_authenticator = bob.add_authenticator().await;
    enroll(&bob, &origin, "bob").await;
    let bobs = bob.credentials(&bobs_authenticator).await.pop().expect("bob's credential");
    drop(bob);
    chrome.add_credential(&authenticator, &bobs).await;
    let bobs_id = bobs["credentialId"].as_str().unwrap();
    let allow = json!({"allowCredentials": [{"type": "public-key", "id": bobs_id}]});
    let by_bob = assertion(&chrome, &options_b, allow).await;
    chrome.goto(&link_b).await;
    let refused = post(&link_b, approve(by_bob)).await;
    assert!(refused.contains(&format!("a passkey of {}#bob", provider.issuer)), "{refused}");

    // a revoked passkey: refused on its next use, and the revocation is in the audit log first
    let (ok, out, err) = passkeys_cli(&["revoke", &credential_id, "--reason", "laptop lost"], &passkeys).await;
    assert!(ok && out.contains("revoked passkey"), "{out}{err}");
    let revoked = assertion(&chrome, &options_b, json!({})).await;
    chrome.goto(&link_b).await;
    let refused = post(&link_b, approve(revoked)).await;
    assert!(refused.contains("was revoked") && refused.contains("laptop lost"), "{refused}");
    let pending = confirm(&agent, &token_b).await;
    assert_eq!(pending["human_confirmation"]["status"], "approval_pending", "B was never approved: {pending}");
    assert_eq!(creates(&server.sim, "connections").await, 1, "one approval, one create");

    let entries = server.audit_entries();
    assert_eq!(events(&entries, "passkey_enrolled").len(), 2);
    let revocations = events(&entries, "passkey_revoked");
    assert_eq!(revocations.len(), 1, "{revocations:?}");
    assert_eq!(revocations[0]["credential_id"], credential_id.as_str());
    assert_eq!(events(&entries, "page_decision").len(), 1, "refused answers decide nothing");

    // anyone with the export checks the approval offline; an edited record or key fails
    let (ok, export, err) = passkeys_cli(&["export"], &passkeys).await;
    assert!(ok, "{err}");
    let dir = tempfile::tempdir().unwrap();
    let export_path = dir.path().join("passkeys.json");
    std::fs::write(&export_path, &export).unwrap();
    let log = server.audit_log.to_str().unwrap();
    let verify = async |log: &str, export: &Path| {
        run_to_exit(&["audit", "verify", log, "--passkeys", export.to_str().unwrap()], &[]).await
    };
    let (ok, out, err) = verify(log, &export_path).await;
    assert!(ok && out.contains("1 passkey approvals verify"), "{out}{err}");

    let text = std::fs::read_to_string(log).unwrap();
    let sha = decision["request_sha256"].as_str().unwrap();
    let edited = dir.path().join("edited.jsonl");
    std::fs::write(&edited, text.replace(sha, &"0".repeat(64))).unwrap();
    let (ok, out, _) = verify(edited.to_str().unwrap(), &export_path).await;
    assert!(!ok && out.contains("BROKEN"), "{out}");
    // the chain caught that edit first; the signature catches it too, even under a rebuilt chain
    let parsed = equinix_mcp::passkeys::offline::Export::parse(&export).unwrap();
    let mut records: Vec<Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(equinix_mcp::passkeys::offline::check_log(&records, &parsed).unwrap().approvals, 1);
    for r in records.iter_mut().filter(|r| r["event"] == "page_decision") {
        r["request_sha256"] = json!("0".repeat(64));
    }
    let why = equinix_mcp::passkeys::offline::check_log(&records, &parsed).unwrap_err().to_string();
    assert!(why.contains(&format!("record {}", decision["seq"])) && why.contains("another request"), "{why}");

    let mut doctored: Value = serde_json::from_str(&export).unwrap();
    let key = doctored["enrollments"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|e| e["credential_id"] == credential_id.as_str())
        .unwrap();
    let shown = key.to_string();
    let x = key.pointer_mut("/passkey/cred/cred/key/EC_EC2/x").unwrap_or_else(|| panic!("a P-256 key's x: {shown}"));
    *x = match x.take() {
        Value::String(s) => {
            // base64url: another first character is another x
            let other = if s.starts_with('A') { 'B' } else { 'A' };
            json!(format!("{other}{}", &s[1..]))
        }
        Value::Array(mut bytes) => {
            bytes[0] = json!(bytes[0].as_u64().unwrap() ^ 1);
            Value::Array(bytes)
        }
        other => panic!("x is {other}"),
    };
    let doctored_path = dir.path().join("doctored.json");
    std::fs::write(&doctored_path, doctored.to_string()).unwrap();
    let (ok, out, _) = verify(log, &doctored_path).await;
    assert!(!ok && out.contains("BROKEN") && out.contains(&format!("record {}", decision["seq"])), "{out}");
    provider.stop().await;
}

/// The passkey rule of the passkey section of docs/approval-page.md, exactly as printed there.
fn passkey_policy() -> String {
    let readme = include_str!("../../../docs/approval-page.md");
    let section = &readme[readme.find("## Passkeys").expect("the passkeys section")..];
    let start = section.find("```cedar\n").expect("a cedar block") + "```cedar\n".len();
    section[start..start + section[start..].find("```").unwrap()].to_string()
}

#[tokio::test]
async fn the_readme_passkey_policy_wants_a_netops_passkey_that_is_not_the_proposers_for_a_connection() {
    let policy = crate::approval_page::four_eyes_policy() + "\n" + &passkey_policy();
    let path = crate::policy::policy_file(&policy);
    let (ok, out, err) = run_to_exit(&["policy", "check", path.to_str().unwrap()], &[]).await;
    assert!(ok && out.contains("5 policies"), "{out}{err}");
    let provider = OidcProvider::start().await;
    let (server, public, origin, _) = serve(&provider, &["--policy", path.to_str().unwrap()]).await;
    let token = provider.token(PROPOSER, ALL, &public).await;
    let agent = server.connect(Some(&token), TestClient::plain(), false).await;
    let big = crate::approval_page::connection_at("passkey-5g", 342, 5000);
    let proposal = structured(&call_on(&agent, "fabric_propose_change", big).await);
    let big_token = proposal["confirm_token"].as_str().unwrap().to_string();
    let link = confirm(&agent, &big_token).await["human_confirmation"]["approval_url"].as_str().unwrap().to_string();

    // alice (netops, not the proposer) without a passkey: told she needs one, and where
    let alice = Chrome::start().await;
    let authenticator = alice.add_authenticator().await;
    alice.sign_in(&link, "alice").await;
    let permission = alice.text("#permission").await;
    assert!(permission.contains("needs your passkey") && permission.contains("/approve/passkeys"), "{permission}");
    // with her session's anti-CSRF token, by sign-in alone: refused by the policy
    alice.goto(&format!("{origin}/approve/passkeys")).await;
    let csrf = csrf(&alice).await;
    alice.goto(&link).await;
    let refused = post_form(&alice, &link, &[("csrf", &csrf), ("decision", "approve")]).await;
    assert!(refused.contains("billable-or-access-passkey"), "{refused}");

    // with a passkey: she may, and her passkey signs it; one create
    alice.goto(&format!("{origin}/approve/passkeys")).await;
    alice.click("#enroll").await;
    alice.find("#enrolled").await;
    assert_eq!(alice.credentials(&authenticator).await.len(), 1, "the passkey is in her authenticator");
    alice.goto(&link).await;
    assert!(alice.text("#permission").await.contains("You may decide"));
    alice.click("#approve").await;
    assert!(alice.text("#outcome").await.starts_with("Approved by"));
    let done = confirm(&agent, &big_token).await;
    assert_eq!(done["executed"], true, "{done}");
    assert_eq!(creates(&server.sim, "connections").await, 1);
    let decision = server.audit_entries().into_iter().find(|e| e["event"] == "page_decision").unwrap();
    assert_eq!(decision["approved_with"], "passkey");
    assert_eq!(decision["approver"], format!("{}#alice", provider.issuer));
    provider.stop().await;
}

#[tokio::test]
async fn with_a_shared_store_passkeys_live_in_redis_and_every_replica_records_a_revocation() {
    let provider = OidcProvider::start().await;
    let redis = crate::harness::redis::RedisServer::start();
    let sim = sim(equinix_fabric_sim::SimConfig::default()).await;
    let port = free_port();
    let public = format!("http://127.0.0.1:{port}/mcp");
    let origin = format!("http://localhost:{port}");
    let store = redis.url(0);
    let mut args = crate::approval_page::replica_args(&store, &provider.issuer, &public);
    args.extend(["--approval-url".to_string(), origin.clone()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let a = Launch::serve().against(&sim).args(&args).http(&format!("127.0.0.1:{port}")).await;
    let chrome = Chrome::start().await;
    let authenticator = chrome.add_authenticator().await;
    enroll(&chrome, &origin, PROPOSER).await;
    let (ok, listed, err) = run_to_exit(&["passkeys", "list", "--json", "--proposal-store", &store], &[]).await;
    assert!(ok, "{err}");
    let credential_id =
        serde_json::from_str::<Value>(listed.trim()).unwrap()["credential_id"].as_str().unwrap().to_string();
    let beside = a.audit_log.with_extension("passkeys.json");
    assert!(!beside.exists() && !a.audit_log.with_file_name("passkeys.json").exists(), "kept in Redis, not a file");

    let token = provider.token(PROPOSER, ALL, &public).await;
    let agent = a.connect(Some(&token), TestClient::plain(), false).await;
    let (first, link) = proposed(&agent, "passkey-redis-1", 344).await;
    // the host checks whose passkey it is and whether it was revoked before the signature, so a
    // revoked passkey's answer over any challenge of this page will do below
    let options = options_of(&chrome, &link).await;
    chrome.click("#approve").await;
    assert!(chrome.text("#outcome").await.starts_with("Approved by"));
    assert_eq!(confirm(&agent, &first).await["executed"], true);
    assert_eq!(connection_creates(&sim), 1);

    let (ok, out, err) = run_to_exit(
        &["passkeys", "revoke", &credential_id, "--reason", "left the team", "--proposal-store", &store],
        &[],
    )
    .await;
    assert!(ok, "{out}{err}");
    // a replica started after the revocation records it in its own log as it starts
    let b = Launch::serve().against(&sim).args(&args).http("127.0.0.1:0").await;
    wait_until("replica b to record the revocation", async || {
        !events(&b.audit_entries(), "passkey_revoked").is_empty()
    })
    .await;
    // and the one that enrolled it refuses it on its next use, recording it first
    let (second, link) = proposed(&agent, "passkey-redis-2", 345).await;
    chrome.goto(&link).await;
    assert_eq!(chrome.text("#approve").await, "Approve", "no passkey left: approving is by sign-in");
    let session_csrf = csrf(&chrome).await;
    let revoked = assertion(&chrome, &options, json!({})).await;
    assert_eq!(chrome.credentials(&authenticator).await.len(), 1, "the authenticator still holds it");
    let fields = [("csrf", session_csrf.as_str()), ("decision", "approve"), ("assertion", revoked.as_str())];
    let refused = post_form(&chrome, &link, &fields).await;
    assert!(refused.contains("was revoked") && refused.contains("left the team"), "{refused}");
    assert_eq!(events(&a.audit_entries(), "passkey_revoked").len(), 1);
    assert_eq!(events(&b.audit_entries(), "passkey_revoked").len(), 1, "recorded once per log");
    let pending = confirm(&agent, &second).await;
    assert_eq!(pending["human_confirmation"]["status"], "approval_pending", "{pending}");
    assert_eq!(connection_creates(&sim), 1);
    drop(b);
    drop(a);
    provider.stop().await;
}

#[tokio::test]
async fn the_passkeys_commands_name_what_is_wrong() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("audit.passkeys.json");
    let (ok, _, err) = passkeys_cli(&["revoke", "no-such-id", "--reason", "lost"], &file).await;
    assert!(!ok && err.contains("no passkey no-such-id is enrolled"), "{err}");
    let (ok, _, err) = passkeys_cli(&["revoke", "x", "--reason", " "], &file).await;
    assert!(!ok && err.contains("--reason must say why"), "{err}");
    std::fs::write(&file, "{\"format\":\"something else\",\"enrollments\":[]}").unwrap();
    let (ok, _, err) = passkeys_cli(&["list"], &file).await;
    assert!(!ok && err.contains("has format \"something else\""), "{err}");
    let (ok, _, err) = run_to_exit(
        &["passkeys", "list", "--proposal-store", "redis://127.0.0.1:1/0", "--passkeys-file", "x.json"],
        &[],
    )
    .await;
    assert!(!ok && err.contains("proposal store"), "{err}");
    // the export a reviewer is given must be one
    let log = dir.path().join("audit.jsonl");
    std::fs::write(&log, "").unwrap();
    let bad = dir.path().join("export.json");
    std::fs::write(&bad, "[]").unwrap();
    let (ok, out, err) =
        run_to_exit(&["audit", "verify", log.to_str().unwrap(), "--passkeys", bad.to_str().unwrap()], &[]).await;
    assert!(!ok && (out.contains("not a passkey export") || err.contains("not a passkey export")), "{out}{err}");
}
