//! A person alone at a laptop approves with the passkey they enrolled in a terminal, no
//! identity provider. A client that shows no form (and one that declares URL elicitation) on a
//! stdio server, Chromium with its virtual authenticator, the real `approvers add` command and its
//! one-time link; every answer the server must refuse is made by that browser and refused, each
//! ending on the simulator's create count; `audit verify --passkeys` checks the log offline.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use equinix_fabric_sim::{SimConfig, SimHandle};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader, Lines};
use tokio::process::{Child, ChildStdout};

use super::passkeys::{assertion, events, options_of, post_form};
use crate::harness::webdriver::Chrome;
use crate::harness::*;

/// `equinix-mcp approvers add NAME` under way: its link, and the rest of what it prints.
pub(crate) struct Enrolling {
    child: Child,
    lines: Lines<BufReader<ChildStdout>>,
    pub(crate) link: String,
}

impl Enrolling {
    async fn start(file: &Path, name: &str, extra: &[&str]) -> Enrolling {
        let mut args = vec!["approvers", "add", name, "--approvers-file", file.to_str().unwrap()];
        args.extend_from_slice(extra);
        Enrolling::spawn(command(&args, &[])).await
    }

    /// `cmd`, an `approvers add` command line, started: its link once printed.
    pub(crate) async fn spawn(mut cmd: tokio::process::Command) -> Enrolling {
        cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let link = loop {
            let line = tokio::time::timeout(Duration::from_secs(30), lines.next_line())
                .await
                .expect("the command prints its link within 30 s")
                .unwrap()
                .expect("the command printed no link");
            if let Some(at) = line.find("http://localhost:") {
                break line[at..].trim().to_string();
            }
        };
        Enrolling { child, lines, link }
    }

    /// Waits for the command to end: (success, stdout after the link, stderr).
    pub(crate) async fn finish(mut self) -> (bool, String, String) {
        let mut out = String::new();
        while let Ok(Some(line)) = self.lines.next_line().await {
            out.push_str(&line);
            out.push('\n');
        }
        let mut err = String::new();
        self.child.stderr.take().unwrap().read_to_string(&mut err).await.unwrap();
        let status = tokio::time::timeout(Duration::from_secs(30), self.child.wait()).await.unwrap().unwrap();
        (status.success(), out, err)
    }
}

/// Opens the enrollment link and adds a passkey with the browser's authenticator, as the page's
/// own button and script do; the text of the page that answers.
pub(crate) async fn enroll_in(chrome: &Chrome, link: &str) -> String {
    chrome.goto(link).await;
    chrome.click("#enroll").await;
    let answered = wait::first(Duration::from_secs(20), async || {
        let script = "return document.getElementById('enroll') || document.readyState !== 'complete' ? null \
                      : document.body.innerText;";
        chrome.try_run(script).await.and_then(|v| v.as_str().map(str::to_string))
    })
    .await;
    answered.unwrap_or_else(|| panic!("the enrollment was not answered within 20 s"))
}

/// Enrolls `name` in `file` through the command's link, in `chrome`.
pub(crate) async fn enrolled(chrome: &Chrome, file: &Path, name: &str) {
    let enrolling = Enrolling::start(file, name, &[]).await;
    let page = enroll_in(chrome, &enrolling.link).await;
    assert!(page.contains(&format!("{name} is an approver on this machine")), "{page}");
    let (ok, out, err) = enrolling.finish().await;
    assert!(ok && out.contains(&format!("{name} is an approver on this machine")), "{out}{err}");
}

/// A stdio server on `sim` serving the mutate toolset, whose local approvers are in `file`.
pub(crate) async fn local_server(sim: &SimHandle, file: &Path, client: TestClient) -> Server {
    Launch::serve()
        .against(sim)
        .args(&["--toolsets", "metros,mutate"])
        .env(&[("EQUINIX_MCP_APPROVERS_FILE", file.to_str().unwrap())])
        .client(client)
        .stdio()
        .await
}

/// A person alone at her laptop: the simulator, Chromium with an authenticator, `dana` enrolled in
/// a fresh approvers file, and a stdio server of hers with a client that shows no form.
pub(crate) async fn dana_at_her_server() -> (SimHandle, PathBuf, Chrome, Server) {
    let sim = sim(SimConfig::default()).await;
    let file = fresh_file();
    let chrome = Chrome::start().await;
    chrome.add_authenticator().await;
    enrolled(&chrome, &file, "dana").await;
    let server = local_server(&sim, &file, TestClient::plain()).await;
    (sim, file, chrome, server)
}

pub(crate) async fn confirm(client: &Client, token: &str) -> Value {
    structured(&call_on(client, "fabric_confirm_change", json!({"confirm_token": token})).await)
}

/// Proposes `name` and confirms once: the token and the page's link.
pub(crate) async fn pending(client: &Client, name: &str, vlan: u64) -> (String, String) {
    let proposal = propose_on(client, name, vlan).await;
    let step = proposal["next_step"].as_str().unwrap();
    assert!(step.contains("approval_pending"), "{step}");
    let token = proposal["confirm_token"].as_str().unwrap().to_string();
    let first = confirm(client, &token).await;
    assert_eq!(first["human_confirmation"]["status"], "approval_pending", "{first}");
    let link = first["human_confirmation"]["approval_url"].as_str().unwrap().to_string();
    assert!(link.starts_with("http://localhost:"), "WebAuthn needs a host name: {link}");
    (token, link)
}

pub(crate) async fn approvers(args: &[&str], file: &Path) -> (bool, String, String) {
    let mut all = vec!["approvers"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--approvers-file", file.to_str().unwrap()]);
    run_to_exit(&all, &[]).await
}

/// The approvers of a file, exported as `approvers export` prints them, for `audit verify
/// --passkeys`; and logs edited beside them.
pub(crate) struct Exported {
    pub dir: tempfile::TempDir,
    path: PathBuf,
}

impl Exported {
    pub(crate) async fn of(file: &Path) -> Self {
        let (ok, export, err) = approvers(&["export"], file).await;
        assert!(ok, "{err}");
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("approvers.json");
        std::fs::write(&path, export).unwrap();
        Exported { dir, path }
    }

    /// `audit verify LOG --passkeys` with these approvers.
    pub(crate) async fn verify(&self, log: &Path) -> (bool, String, String) {
        run_to_exit(&["audit", "verify", log.to_str().unwrap(), "--passkeys", self.path.to_str().unwrap()], &[]).await
    }

    /// `log` with its `page_decision` record's line changed by `edit` and the chain made whole
    /// again: the edited log's path.
    pub(crate) fn edited(&self, log: &Path, edit: impl FnOnce(&str) -> String) -> PathBuf {
        let text = std::fs::read_to_string(log).unwrap();
        let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
        let at = lines.iter().position(|l| l.contains("\"event\":\"page_decision\"")).unwrap();
        lines[at] = edit(&lines[at]);
        crate::local_origin::relink(&mut lines);
        let edited = self.dir.path().join("edited.jsonl");
        std::fs::write(&edited, lines.iter().map(|l| format!("{l}\n")).collect::<String>()).unwrap();
        edited
    }
}

/// `url` with its host replaced by `host` (the port kept).
fn with_host(url: &str, host: &str) -> String {
    let mut u = reqwest::Url::parse(url).unwrap();
    u.set_host(Some(host)).unwrap();
    u.to_string()
}

fn fresh_file() -> PathBuf {
    fresh_approvers_path()
}

#[tokio::test]
async fn a_person_alone_enrolls_in_a_terminal_and_approves_the_exact_request_with_the_passkey() {
    let sim = sim(SimConfig::default()).await;
    let file = fresh_file();
    let server = local_server(&sim, &file, TestClient::plain()).await;

    // nobody enrolled: the proposal says so, and the one command that fixes it, before a token is spent
    let early = propose_on(&server.client, "local-early", 350).await;
    let step = early["next_step"].as_str().unwrap();
    assert!(step.starts_with("Do not call fabric_confirm_change yet") && step.contains("approvers add NAME"), "{step}");
    let (ok, out, err) = approvers(&["list"], &file).await;
    assert!(ok && out.contains("no approver is enrolled"), "{out}{err}");

    // the command's one-time link: not guessable, not for another Host, not from another site
    let enrolling = Enrolling::start(&file, "dana", &[]).await;
    let link = enrolling.link.clone();
    let guessed = link.rsplit_once('/').unwrap().0.to_string() + "/" + &"0".repeat(32);
    assert_eq!(http().get(&guessed).send().await.unwrap().status(), 404);
    let other_host = http().get(&link).header("host", "evil.example").send().await.unwrap();
    assert_eq!(other_host.status(), 421);
    let other_site = http()
        .post(&link)
        .header("origin", "http://evil.example")
        .header("content-type", "application/x-www-form-urlencoded")
        .body("credential=%7B%7D")
        .send()
        .await
        .unwrap();
    assert_eq!(other_site.status(), 403, "refused, and the link still works for its own page");
    let chrome = Chrome::start().await;
    let authenticator = chrome.add_authenticator().await;
    let page = enroll_in(&chrome, &link).await;
    assert!(page.contains("dana is an approver on this machine"), "{page}");
    let (ok, out, err) = enrolling.finish().await;
    assert!(ok && out.contains("dana is an approver on this machine"), "{out}{err}");
    assert!(http().get(&link).send().await.is_err(), "the link answers once: the command ended with it");
    assert_eq!(chrome.credentials(&authenticator).await.len(), 1);
    let (ok, listed, err) = approvers(&["list", "--json"], &file).await;
    assert!(ok, "{err}");
    let dana: Value = serde_json::from_str(listed.trim()).unwrap();
    assert_eq!((dana["name"].as_str(), dana["principal"].as_str()), (Some("dana"), Some("local:dana")), "{dana}");
    assert_eq!(std::fs::metadata(&file).unwrap().permissions().mode() & 0o777, 0o600, "owner-only");

    // the client that shows no form gets the page's link, with nothing used up
    let (token, page_link) = pending(&server.client, "local-one", 351).await;
    let bare_ip = with_host(&page_link, "127.0.0.1");
    assert_eq!(http().get(&bare_ip).send().await.unwrap().status(), 421, "the page answers only at localhost");
    chrome.goto(&page_link).await;
    assert!(chrome.text("#approve").await.contains("passkey"), "approving takes the passkey");
    chrome.click("#approve").await;
    let outcome = chrome.text("#outcome").await;
    assert!(outcome.starts_with("Approved by local:dana"), "{outcome}");
    let done = confirm(&server.client, &token).await;
    assert_eq!(done["executed"], true, "{done}");
    assert_eq!(connection_creates(&sim), 1);

    // the audit log names the approver and keeps the assertion; it verifies offline
    let entries = server.audit_entries();
    let enrollments = events(&entries, "passkey_enrolled");
    assert_eq!(enrollments.len(), 1, "{enrollments:?}");
    assert_eq!(enrollments[0]["principal"], "local:dana", "{:?}", enrollments[0]);
    let decision = events(&entries, "page_decision")[0].clone();
    assert_eq!(decision["approver"], "local:dana", "{decision}");
    assert_eq!(decision["approved_with"], "passkey", "{decision}");
    assert_eq!(decision["passkey"]["user_verified"], true, "{decision}");
    assert!(decision["passkey"]["assertion"].is_object() || decision["passkey"]["assertion"].is_string());
    let (ok, export, err) = approvers(&["export"], &file).await;
    assert!(ok, "{err}");
    let dir = tempfile::tempdir().unwrap();
    let export_path = dir.path().join("approvers.json");
    std::fs::write(&export_path, export).unwrap();
    let verify = ["audit", "verify", server.audit_log.to_str().unwrap(), "--passkeys", export_path.to_str().unwrap()];
    let (ok, out, err) = run_to_exit(&verify, &[]).await;
    assert!(ok && out.contains("1 passkey approvals verify"), "{out}{err}");
}

#[tokio::test]
async fn a_client_that_declares_url_elicitation_is_sent_the_local_page_and_its_call_waits() {
    let sim = sim(SimConfig::default()).await;
    let file = fresh_file();
    let chrome = Chrome::start().await;
    chrome.add_authenticator().await;
    enrolled(&chrome, &file, "dana").await;
    let (person, mut links) = TestClient::following_links();
    let server = local_server(&sim, &file, person).await;
    let client = Arc::new(server.client);
    let proposal = propose_on(&client, "local-url", 352).await;
    assert!(proposal["next_step"].as_str().unwrap().contains("opens the approval page"), "{proposal}");
    let token = proposal["confirm_token"].as_str().unwrap().to_string();
    let confirming = {
        let client = client.clone();
        tokio::spawn(async move { confirm(&client, &token).await })
    };
    let (link, _) = links.recv().await.expect("the link arrives by URL elicitation");
    assert!(link.starts_with("http://localhost:"), "{link}");
    chrome.goto(&link).await;
    chrome.click("#approve").await;
    assert!(chrome.text("#outcome").await.starts_with("Approved by local:dana"));
    let done = confirming.await.unwrap();
    assert_eq!(done["executed"], true, "{done}");
    assert_eq!(connection_creates(&sim), 1);
}

#[tokio::test]
async fn every_answer_but_an_enrolled_approvers_verified_passkey_over_the_request_is_refused() {
    let sim = sim(SimConfig::default()).await;
    let file = fresh_file();

    // a link nobody used expires, and enrolls nobody
    let expiring = Enrolling::start(&file, "dana", &["--valid-secs", "1"]).await;
    let (ok, _, err) = expiring.finish().await;
    assert!(!ok && err.contains("expired"), "{err}");
    let (_, out, _) = approvers(&["list"], &file).await;
    assert!(out.contains("no approver is enrolled"), "{out}");
    // a link whose answer failed is used up; a post that names no origin at all (no browser's)
    // is refused before it is read, and spends nothing
    let spent = Enrolling::start(&file, "dana", &[]).await;
    let post = |origin: Option<String>| {
        let mut request = http().post(&spent.link).header("content-type", "application/x-www-form-urlencoded");
        if let Some(origin) = origin {
            request = request.header("origin", origin);
        }
        request.body("credential=%7B%22id%22%3A1%7D").send()
    };
    let bare = post(None).await.unwrap();
    assert_eq!(bare.status(), 403);
    assert!(bare.text().await.unwrap().contains("neither Origin nor Sec-Fetch-Site"));
    let own_origin = reqwest::Url::parse(&spent.link).unwrap().origin().ascii_serialization();
    let junk = post(Some(own_origin)).await.unwrap();
    assert_eq!(junk.status(), 403);
    let spent_link = spent.link.clone();
    let (ok, _, err) = spent.finish().await;
    assert!(!ok && err.contains("WebAuthn"), "{err}");
    assert!(http().get(&spent_link).send().await.is_err(), "used once, whatever it came to");

    let chrome = Chrome::start().await;
    let authenticator = chrome.add_authenticator().await;
    enrolled(&chrome, &file, "dana").await;
    let server = local_server(&sim, &file, TestClient::plain()).await;
    let (token_a, link_a) = pending(&server.client, "local-a", 353).await;
    let (token_b, link_b) = pending(&server.client, "local-b", 354).await;
    let options_b = options_of(&chrome, &link_b).await;
    let options_a = options_of(&chrome, &link_a).await;
    let approve =
        |assertion: &str| vec![("decision".to_string(), "approve".to_string()), ("assertion".into(), assertion.into())];
    let post = async |link: &str, fields: Vec<(String, String)>| {
        let fields: Vec<(&str, &str)> = fields.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        post_form(&chrome, link, &fields).await
    };

    // approving with no passkey: refused
    let refused = post(&link_a, vec![("decision".into(), "approve".into())]).await;
    assert!(refused.contains("approving takes an enrolled approver's passkey"), "{refused}");
    // from another site: refused before anything is read
    let cross = http()
        .post(&link_a)
        .header("origin", "http://evil.example")
        .header("content-type", "application/x-www-form-urlencoded")
        .body("decision=approve")
        .send()
        .await
        .unwrap();
    assert_eq!(cross.status(), 403);
    // a forged one: a real assertion with its signature changed
    let real = assertion(&chrome, &options_a, json!({})).await;
    let mut forged: Value = serde_json::from_str(&real).unwrap();
    let signature = forged["response"]["signature"].as_str().unwrap().to_string();
    let flipped = if signature.starts_with('A') { 'B' } else { 'A' };
    forged["response"]["signature"] = json!(format!("{flipped}{}", &signature[1..]));
    chrome.goto(&link_a).await;
    let refused = post(&link_a, approve(&forged.to_string())).await;
    assert!(refused.contains("did not approve"), "{refused}");
    // without user verification
    chrome.set_user_verified(&authenticator, false).await;
    let unverified = assertion(&chrome, &options_a, json!({"userVerification": "discouraged"})).await;
    chrome.set_user_verified(&authenticator, true).await;
    chrome.goto(&link_a).await;
    let refused = post(&link_a, approve(&unverified)).await;
    assert!(refused.contains("did not verify the person"), "{refused}");
    // over another request
    let for_b = assertion(&chrome, &options_b, json!({})).await;
    chrome.goto(&link_a).await;
    let refused = post(&link_a, approve(&for_b)).await;
    assert!(refused.contains("signed another request"), "{refused}");
    assert_eq!(connection_creates(&sim), 0, "nothing refused created anything");

    // the page's own button: one create
    chrome.goto(&link_a).await;
    chrome.click("#approve").await;
    assert!(chrome.text("#outcome").await.starts_with("Approved by local:dana"));
    assert_eq!(confirm(&server.client, &token_a).await["executed"], true);
    assert_eq!(connection_creates(&sim), 1);
    // the kept assertion, replayed on its own request and on another
    let kept = events(&server.audit_entries(), "page_decision")[0]["passkey"]["assertion"].to_string();
    chrome.goto(&link_b).await;
    let replayed = post(&link_a, approve(&kept)).await;
    assert!(replayed.contains("counter did not move on"), "{replayed}");
    chrome.goto(&link_b).await;
    let replayed = post(&link_b, approve(&kept)).await;
    assert!(replayed.contains("signed another request"), "{replayed}");

    // a removed approver: refused at once, the removal in the audit log first
    let for_b = assertion(&chrome, &options_b, json!({})).await;
    let (ok, out, err) = approvers(&["remove", "dana"], &file).await;
    assert!(ok && out.contains("removed dana"), "{out}{err}");
    chrome.goto(&link_b).await;
    let refused = post(&link_b, approve(&for_b)).await;
    assert!(refused.contains("was revoked") && refused.contains("approvers remove"), "{refused}");
    let removals = events(&server.audit_entries(), "passkey_revoked").len();
    assert_eq!(removals, 1, "the removal is an audit record");
    let after = confirm(&server.client, &token_b).await;
    assert_ne!(after["executed"], true, "{after}");
    assert_eq!(connection_creates(&sim), 1, "one approval, one create");
}

#[tokio::test]
async fn two_servers_of_one_user_share_the_approvers_and_a_restart_between_enrollment_and_approval_holds() {
    let sim = sim(SimConfig::default()).await;
    let file = fresh_file();
    let chrome = Chrome::start().await;
    chrome.add_authenticator().await;
    // enrolled while a server runs, approved on servers started after it stopped
    let before = local_server(&sim, &file, TestClient::plain()).await;
    enrolled(&chrome, &file, "dana").await;
    before.stop().await;
    let one = local_server(&sim, &file, TestClient::plain()).await;
    let two = local_server(&sim, &file, TestClient::plain()).await;
    let (token_one, link_one) = pending(&one.client, "local-one-of-two", 355).await;
    let (token_two, link_two) = pending(&two.client, "local-two-of-two", 356).await;
    let port = |link: &str| reqwest::Url::parse(link).unwrap().port();
    assert_ne!(port(&link_one), port(&link_two), "a busy page port: the second takes another, in its link");
    for (server, token, link) in [(&one, &token_one, &link_one), (&two, &token_two, &link_two)] {
        chrome.goto(link).await;
        chrome.click("#approve").await;
        assert!(chrome.text("#outcome").await.starts_with("Approved by local:dana"));
        assert_eq!(confirm(&server.client, token).await["executed"], true);
        let enrolled = events(&server.audit_entries(), "passkey_enrolled").len();
        assert_eq!(enrolled, 1, "each server records the enrollment it finds");
    }
    assert_eq!(connection_creates(&sim), 2);

    // a passkey in the file that is no local approver's (a team page's, copied in) approves nothing
    let (_, link_three) = pending(&one.client, "local-three", 357).await;
    let options = options_of(&chrome, &link_three).await;
    let answer = assertion(&chrome, &options, json!({})).await;
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, text.replace("\"local:dana\"", "\"https://idp.example#dana\"")).unwrap();
    let fields = [("decision", "approve"), ("assertion", answer.as_str())];
    let refused = post_form(&chrome, &link_three, &fields).await;
    assert!(refused.contains("who is no approver on this machine"), "{refused}");
    assert_eq!(connection_creates(&sim), 2);
}

/// Whatever answers on the other loopback at the page's port would be at the page's origin
/// (`localhost` resolves to both): a port held there by anyone else is a busy port, and the page
/// takes another, while the tools are served as ever.
#[tokio::test]
async fn a_page_port_held_by_someone_else_on_either_loopback_is_not_used() {
    let Ok(squatter) = std::net::TcpListener::bind("[::1]:0") else {
        eprintln!("no IPv6 loopback on this machine: nothing to squat on");
        return;
    };
    let port = squatter.local_addr().unwrap().port();
    let v4_free = std::net::TcpListener::bind(("127.0.0.1", port));
    assert!(v4_free.is_ok(), "127.0.0.1:{port} is free, so only the squatter makes the port busy");
    drop(v4_free);
    let server = Launch::serve()
        .args(&["--toolsets", "metros,mutate", "--approval-listen", &format!("127.0.0.1:{port}")])
        .stdio()
        .await;
    let said = wait::until_some("the page's address in the log", wait::WITHIN, async || {
        let text = server.stderr_text();
        let at = text.find("approval page at http://localhost:")? + "approval page at http://localhost:".len();
        text[at..].split('/').next().map(str::to_string)
    })
    .await;
    assert_ne!(said, port.to_string(), "{}", server.stderr_text());
    assert!(server.stderr_text().contains(&format!("port {port} is taken")), "{}", server.stderr_text());
    let metros = server.ok("fabric_list_metros", json!({})).await;
    assert!(metros.to_string().contains("DC"), "the tools are served: {metros}");
    drop(squatter);
}

/// The official TypeScript SDK, declaring no elicitation as Claude Desktop does, spawns the server
/// over stdio: the propose result says the confirm answers with a link, the confirm does, the
/// person approves with their passkey, the same confirm again creates once.
#[tokio::test]
async fn the_official_typescript_sdk_without_elicitation_reaches_a_local_approver() {
    use tokio::io::AsyncWriteExt;
    let sim = sim(SimConfig::default()).await;
    let file = fresh_file();
    let chrome = Chrome::start().await;
    chrome.add_authenticator().await;
    enrolled(&chrome, &file, "dana").await;
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("interop/no-form-client.mjs");
    node_fixture("interop", "@modelcontextprotocol/sdk");
    let propose = json!({"change_type": "connection_create", "spec": connection_spec("ts-sdk-local", 358)});
    // the server's environment: the harness's hermetic one, against this test's simulator
    let hermetic = command(&[], &[]);
    let mut sdk = tokio::process::Command::new(node());
    sdk.env_clear();
    for (k, v) in hermetic.as_std().get_envs() {
        if let Some(v) = v {
            sdk.env(k, v);
        }
    }
    for (k, v) in sim_env(&sim) {
        sdk.env(k, v);
    }
    let mut sdk = sdk
        .env("EQUINIX_MCP_APPROVERS_FILE", &file)
        .arg(&script)
        .arg(binary())
        .arg(propose.to_string())
        .args(["--toolsets", "metros,mutate"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let printed = crate::harness::printed::Printed::new("tests/interop/no-form-client.mjs");
    printed.collect(sdk.stderr.take().unwrap());
    let mut lines = BufReader::new(sdk.stdout.take().unwrap()).lines();
    let mut next = async || -> Value {
        let line = tokio::time::timeout(Duration::from_secs(60), lines.next_line()).await;
        let Ok(Ok(Some(line))) = line else { panic!("the SDK client said nothing more: {line:?}\n{}", printed.text()) };
        serde_json::from_str(&line).unwrap()
    };
    let proposed = next().await;
    let step = proposed["proposed"]["next_step"].as_str().unwrap_or_default();
    assert!(step.contains("approval_pending"), "{proposed}");
    let first = next().await;
    assert_eq!(first["first"]["human_confirmation"]["status"], "approval_pending", "{first}");
    let link = first["first"]["human_confirmation"]["approval_url"].as_str().unwrap().to_string();
    chrome.goto(&link).await;
    assert!(chrome.text("#request").await.contains("ts-sdk-local"));
    chrome.click("#approve").await;
    assert!(chrome.text("#outcome").await.starts_with("Approved by local:dana"));
    sdk.stdin.take().unwrap().write_all(b"approved\n").await.unwrap();
    let end = next().await;
    assert_eq!(end["isError"], false, "{end}");
    assert_eq!(end["result"]["executed"], true, "{end}");
    assert_eq!(end["result"]["human_confirmation"]["status"], "accepted", "{end}");
    assert!(sdk.wait().await.unwrap().success());
    assert_eq!(connection_creates(&sim), 1, "exactly one create");
}

/// HTTP on loopback without an identity provider serves one local user too: its page is beside
/// `/mcp`, at `localhost` on the server's own port, for the same approvers.
#[tokio::test]
async fn an_http_server_on_loopback_serves_the_local_page_beside_mcp() {
    let file = fresh_file();
    let chrome = Chrome::start().await;
    chrome.add_authenticator().await;
    enrolled(&chrome, &file, "dana").await;
    let server = Launch::serve()
        .args(&["--toolsets", "metros,mutate", "--metrics-listen", "127.0.0.1:0"])
        .env(&[("EQUINIX_MCP_APPROVERS_FILE", file.to_str().unwrap())])
        .http("127.0.0.1:0")
        .await;
    let client = server.connect(None, TestClient::plain(), false).await;
    let (token, link) = pending(&client, "local-http", 359).await;
    // the question left on the page is counted as what the client was told
    let metrics = {
        let text = server.stderr_text();
        let at = text.find("Prometheus metrics at ").expect("the metrics line") + "Prometheus metrics at ".len();
        text[at..].split_whitespace().next().unwrap().to_string()
    };
    let counted = http().get(&metrics).send().await.unwrap().text().await.unwrap();
    assert!(counted.contains("equinix_mcp_confirmations_total{status=\"approval_pending\"} 1"), "{counted}");
    assert!(!counted.contains("status=\"input_required\""), "{counted}");
    let port = reqwest::Url::parse(&server.url).unwrap().port();
    assert_eq!(reqwest::Url::parse(&link).unwrap().port(), port, "beside /mcp: {link}");
    chrome.goto(&link).await;
    chrome.click("#approve").await;
    assert!(chrome.text("#outcome").await.starts_with("Approved by local:dana"));
    assert_eq!(confirm(&client, &token).await["executed"], true);
    assert_eq!(creates(&server.sim, "connections").await, 1);
}
