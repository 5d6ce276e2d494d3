//! The operator's notifications, against real receivers on loopback. A generic webhook
//! whose receiver checks the signature as docs/approval-page.md says (and rejects a tampered body
//! and an old timestamp); Slack's and Teams' payload shapes; receivers that fail, redirect or never
//! answer cost the proposal nothing, are tried a bounded number of times, and are audited.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use equinix_fabric_sim::SimConfig;
use serde_json::{Value, json};
use sha2::Sha256;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::local_approvers::{confirm, enrolled, pending};
use super::passkeys::events;
use crate::harness::webdriver::Chrome;
use crate::harness::*;

/// How a receiver answers.
#[derive(Clone, Copy)]
pub(crate) enum Answers {
    Status(u16),
    /// A redirect to another receiver's address.
    RedirectTo(u16),
    /// Reads the request and never answers.
    Never,
}

/// One request a receiver got: its headers (lower-case names), its body, and when.
#[derive(Clone, Debug)]
pub(crate) struct Got {
    headers: Vec<(String, String)>,
    pub(crate) body: String,
    at: Instant,
}

impl Got {
    pub(crate) fn header(&self, name: &str) -> &str {
        self.headers.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str()).unwrap_or("")
    }

    pub(crate) fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.body))
    }
}

/// An HTTP receiver on loopback that records what it gets.
pub(crate) struct Receiver {
    pub(crate) url: String,
    port: u16,
    got: Arc<Mutex<Vec<Got>>>,
}

impl Receiver {
    pub(crate) async fn start(answers: Answers) -> Receiver {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let got = Arc::new(Mutex::new(Vec::new()));
        let kept = got.clone();
        tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                let kept = kept.clone();
                tokio::spawn(async move {
                    let Some(request) = read_request(&mut stream).await else { return };
                    kept.lock().unwrap().push(request);
                    let answer = match answers {
                        Answers::Status(s) => {
                            format!("HTTP/1.1 {s} X\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok")
                        }
                        Answers::RedirectTo(port) => format!(
                            "HTTP/1.1 302 Found\r\nlocation: http://127.0.0.1:{port}/elsewhere\r\ncontent-length: 0\r\n\
                             connection: close\r\n\r\n"
                        ),
                        Answers::Never => {
                            tokio::time::sleep(Duration::from_secs(60)).await;
                            return;
                        }
                    };
                    let _ = stream.write_all(answer.as_bytes()).await;
                });
            }
        });
        Receiver { url: format!("http://127.0.0.1:{port}/hook"), port, got }
    }

    fn got(&self) -> Vec<Got> {
        self.got.lock().unwrap().clone()
    }

    /// What it got for `event`.
    pub(crate) fn of(&self, event: &str) -> Vec<Got> {
        self.got().into_iter().filter(|g| g.header("x-equinix-mcp-event") == event).collect()
    }

    /// Waits for `n` requests of `event`.
    pub(crate) async fn wait_for(&self, event: &str, n: usize) -> Vec<Got> {
        wait::until(&format!("{n} notification(s) of {event}"), Duration::from_secs(20), async || {
            self.of(event).len() >= n
        })
        .await;
        self.of(event)
    }
}

async fn read_request(stream: &mut tokio::net::TcpStream) -> Option<Got> {
    let mut bytes = Vec::new();
    let mut buf = [0u8; 8192];
    let head_end = loop {
        let n = tokio::time::timeout(Duration::from_secs(10), stream.read(&mut buf)).await.ok()?.ok()?;
        if n == 0 {
            return None;
        }
        bytes.extend_from_slice(&buf[..n]);
        if let Some(at) = bytes.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
    };
    let head = String::from_utf8_lossy(&bytes[..head_end]).to_string();
    let headers: Vec<(String, String)> = head
        .lines()
        .skip(1)
        .filter_map(|l| l.split_once(':').map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string())))
        .collect();
    let length: usize = headers.iter().find(|(k, _)| k == "content-length").and_then(|(_, v)| v.parse().ok())?;
    while bytes.len() < head_end + length {
        let n = tokio::time::timeout(Duration::from_secs(10), stream.read(&mut buf)).await.ok()?.ok()?;
        if n == 0 {
            return None;
        }
        bytes.extend_from_slice(&buf[..n]);
    }
    let body = String::from_utf8_lossy(&bytes[head_end..head_end + length]).to_string();
    Some(Got { headers, body, at: Instant::now() })
}

/// The check docs/approval-page.md tells a receiver to make: the header's time within five
/// minutes of now, and one `v1` equal (in constant time) to HMAC-SHA256 of `t.` and the raw body
/// under the receiver's key.
pub(crate) fn verify(header: &str, body: &str, key: &[u8], now: u64) -> bool {
    let mut t = None;
    let mut signatures = Vec::new();
    for part in header.split(',') {
        match part.split_once('=') {
            Some(("t", v)) => t = v.parse::<u64>().ok(),
            Some(("v1", v)) => signatures.push(v.to_string()),
            _ => {}
        }
    }
    let Some(t) = t else { return false };
    if now.abs_diff(t) > 300 {
        return false;
    }
    let expected = hmac_sha256(key, format!("{t}.{body}").as_bytes());
    signatures.iter().any(|s| hex::decode(s).is_ok_and(|s| constant_time_eq(&s, &expected)))
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// HMAC-SHA256 (RFC 2104) from the SHA-256 the tests already link.
fn hmac_sha256(key: &[u8], message: &[u8]) -> Vec<u8> {
    use sha2::Digest as _;
    let mut block = [0u8; 64];
    if key.len() > 64 {
        block[..32].copy_from_slice(&Sha256::digest(key));
    } else {
        block[..key.len()].copy_from_slice(key);
    }
    let pad = |byte: u8| block.iter().map(|b| b ^ byte).collect::<Vec<u8>>();
    let inner = Sha256::new().chain_update(pad(0x36)).chain_update(message).finalize();
    Sha256::new().chain_update(pad(0x5c)).chain_update(inner).finalize().to_vec()
}

/// The receiver's check exactly as docs/approval-page.md prints it (its Python block), run by
/// Python: the key read from `key_file` by the block's own `signing_key`, the header and the raw
/// body as the receiver got them. Whether `verified` says yes.
pub(crate) fn verified_as_the_docs_say(got: &Got, key_file: &std::path::Path) -> bool {
    let docs = include_str!("../../../docs/approval-page.md");
    let section = &docs[docs.find("## Notifications").expect("the notifications section")..];
    let start = section.find("```python\n").expect("a python block") + "```python\n".len();
    let block: String = section[start..start + section[start..].find("```").unwrap()]
        .lines()
        .map(|l| l.strip_prefix("  ").unwrap_or(l))
        .collect::<Vec<_>>()
        .join("\n");
    let body = fresh_path("notice", "body");
    std::fs::write(&body, &got.body).unwrap();
    let driver = "import sys\nprint(verified(sys.argv[1], open(sys.argv[2], 'rb').read(), signing_key(sys.argv[3])))";
    let out = std::process::Command::new("python3")
        .args(["-c", &format!("{block}\n{driver}"), got.header("x-equinix-mcp-signature")])
        .arg(&body)
        .arg(key_file)
        .output()
        .expect("python3 runs");
    assert!(out.status.success(), "the docs' receiver: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).trim() == "True"
}

pub(crate) fn now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs()
}

/// An owner-only file holding `text`.
pub(crate) fn private_file(text: &str) -> std::path::PathBuf {
    let path = fresh_path("notify", "secret");
    std::fs::write(&path, text).unwrap();
    std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    path
}

const KEY_OLD: &str = "an-old-key-of-at-least-thirty-two-bytes-0001";
pub(crate) const KEY_NEW: &str = "a-new-key-of-at-least-thirty-two-bytes-00002";

#[tokio::test]
async fn a_signed_webhook_hears_that_a_change_waits_what_the_person_decided_and_what_was_created() {
    let sim = sim(SimConfig::default()).await;
    let receiver = Receiver::start(Answers::Status(200)).await;
    let (old, new) = (private_file(KEY_OLD), private_file(KEY_NEW));
    let keys = format!("{},{}", old.display(), new.display());
    let file = fresh_approvers_path();
    let chrome = Chrome::start().await;
    chrome.add_authenticator().await;
    enrolled(&chrome, &file, "dana").await;
    let server = Launch::serve()
        .against(&sim)
        .args(&["--toolsets", "metros,mutate", "--notify-webhook", &receiver.url, "--notify-webhook-key-file", &keys])
        .env(&[("EQUINIX_MCP_APPROVERS_FILE", file.to_str().unwrap())])
        .stdio()
        .await;
    let (token, link) = pending(&server.client, "notified", 1301).await;
    let waiting = receiver.wait_for("change_waiting", 1).await;
    let notice = waiting[0].json();
    assert_eq!(notice["approval_url"], link, "{notice}");
    assert_eq!(
        notice["summary"],
        "+ create connection (billable): EVPL_VC, 1000 Mbps, USD 300.00 per month; named \"notified\"",
        "{notice}"
    );
    assert_eq!(notice["format"], "equinix-mcp notification v1");
    assert_eq!(notice["state"], "waiting", "{notice}");
    chrome.goto(&link).await;
    chrome.type_into("#reason", "fine for the NOC").await;
    chrome.click("#approve").await;
    assert!(chrome.text("#outcome").await.starts_with("Approved by local:dana"));
    let approved = receiver.wait_for("change_approved", 1).await;
    let said = approved[0].json();
    assert_eq!(said["approver"], "local:dana");
    // where it stands and the approver's words, as the page names them
    assert_eq!((said["state"].as_str(), said["reason"].as_str()), (Some("approved"), Some("fine for the NOC")));
    assert_eq!(confirm(&server.client, &token).await["executed"], true);
    let executed = receiver.wait_for("change_executed", 1).await;
    assert_eq!(executed[0].json()["outcome"], "executed");
    assert_eq!(executed[0].json()["state"], "created");
    assert_eq!(executed[0].json()["reason"], "fine for the NOC");

    // each signed with both keys, as the docs tell a receiver to check; nothing secret in them
    for got in receiver.got() {
        let signature = got.header("x-equinix-mcp-signature");
        for key in [KEY_OLD, KEY_NEW] {
            assert!(verify(signature, &got.body, key.as_bytes(), now()), "{key}: {signature}");
        }
        assert!(
            !verify(signature, &got.body.replacen("notified", "notifieD", 1), KEY_NEW.as_bytes(), now()),
            "tampered"
        );
        assert!(!verify(signature, &got.body, KEY_NEW.as_bytes(), now() + 301), "too old");
        assert!(!verify(signature, &got.body, b"another-key-of-at-least-thirty-two-bytes", now()), "another key");
        assert!(!got.body.contains("chg-") && !got.body.contains(&token), "no confirm token: {}", got.body);
    }
    assert_eq!(receiver.got().len(), 3, "one notification per event");
    wait::until("each notice to be audited", Duration::from_secs(20), async || {
        events(&server.audit_entries(), "notification").len() == 3
    })
    .await;
    let recorded = server.audit_entries();
    let notices: Vec<&str> = events(&recorded, "notification").iter().map(|n| n["notice"].as_str().unwrap()).collect();
    assert_eq!(notices, ["change_waiting", "change_approved", "change_executed"]);
    for n in events(&recorded, "notification") {
        let d = &n["destinations"][0];
        assert_eq!(
            (d["destination"].as_str(), d["outcome"].as_str(), d["attempts"].as_u64()),
            (Some("webhook 127.0.0.1"), Some("delivered"), Some(1)),
            "{n}"
        );
    }
}

/// Slack's and Teams' incoming-webhook shapes; a destination that answers 500, one that
/// redirects and one that never answers: the confirm returns at once, each is tried a bounded
/// number of times (no redirect followed), and each failure is audited.
#[tokio::test]
async fn chat_destinations_get_their_shapes_and_failing_ones_cost_the_change_nothing() {
    let sim = sim(SimConfig::default()).await;
    let slack = Receiver::start(Answers::Status(200)).await;
    let teams = Receiver::start(Answers::Status(500)).await;
    let elsewhere = Receiver::start(Answers::Status(200)).await;
    let redirecting = Receiver::start(Answers::RedirectTo(elsewhere.port)).await;
    let silent = Receiver::start(Answers::Never).await;
    let key = private_file(KEY_NEW);
    let (slack_file, teams_file) = (private_file(&slack.url), private_file(&teams.url));
    let client = TestClient::accepting();
    let server = Launch::serve()
        .against(&sim)
        .args(&["--toolsets", "metros,mutate", "--notify-attempt-timeout-ms", "400"])
        .args(&["--notify-webhook", &redirecting.url, "--notify-webhook-key-file", key.to_str().unwrap()])
        .args(&["--notify-slack-url-file", slack_file.to_str().unwrap()])
        .args(&["--notify-teams-url-file", teams_file.to_str().unwrap()])
        .client(client.clone())
        .stdio()
        .await;
    let p = propose_on(&server.client, "chatty", 1302).await;
    let done = call_on(&server.client, "fabric_confirm_change", json!({"confirm_token": p["confirm_token"]})).await;
    let confirmed_at = Instant::now();
    assert_eq!(structured(&done)["executed"], true);

    let to_slack = slack.wait_for("change_executed", 1).await[0].json();
    assert!(to_slack["text"].as_str().unwrap().starts_with("A change was created: + create connection"), "{to_slack}");
    assert_eq!(to_slack["blocks"][0]["type"], "section");
    let to_teams = teams.wait_for("change_executed", 3).await;
    let card = to_teams[0].json();
    assert_eq!(card["type"], "message");
    assert_eq!(card["attachments"][0]["contentType"], "application/vnd.microsoft.card.adaptive");
    assert_eq!(card["attachments"][0]["content"]["type"], "AdaptiveCard");
    assert!(to_teams[2].at > confirmed_at, "the retries came after the confirm had returned");
    // the redirect answered once and was not followed; the silent one took its three attempts
    let record = wait::until_some("the notice to be audited", Duration::from_secs(20), async || {
        events(&server.audit_entries(), "notification").first().map(|r| (*r).clone())
    })
    .await;
    let by = |dest: &str| {
        let all = record["destinations"].as_array().unwrap();
        all.iter().find(|f| f["destination"].as_str().unwrap().starts_with(dest)).unwrap().clone()
    };
    assert_eq!((by("slack")["outcome"].as_str(), by("slack")["attempts"].as_u64()), (Some("delivered"), Some(1)));
    assert_eq!((by("teams")["attempts"].as_u64(), by("teams")["error"].as_str()), (Some(3), Some("answered HTTP 500")));
    assert_eq!(
        (by("webhook")["attempts"].as_u64(), by("webhook")["error"].as_str()),
        (Some(1), Some("answered HTTP 302"))
    );
    assert_eq!(redirecting.got().len(), 1);
    assert!(elsewhere.got().is_empty(), "no redirect followed");
    assert!(
        !by("teams").to_string().contains(&teams.url) && !by("teams").to_string().contains("127.0.0.1"),
        "no secret URL"
    );

    // a destination that never answers: three attempts, each cut off, the change long done
    let server2 = Launch::serve()
        .against(&sim)
        .args(&["--toolsets", "metros,mutate", "--notify-attempt-timeout-ms", "300"])
        .args(&["--notify-webhook", &silent.url, "--notify-webhook-key-file", key.to_str().unwrap()])
        .client(TestClient::accepting())
        .stdio()
        .await;
    let p = propose_on(&server2.client, "unheard", 1303).await;
    let t = Instant::now();
    let done = call_on(&server2.client, "fabric_confirm_change", json!({"confirm_token": p["confirm_token"]})).await;
    assert_eq!(structured(&done)["executed"], true);
    let took = t.elapsed();
    silent.wait_for("change_executed", 3).await;
    assert!(silent.got()[2].at.duration_since(t) > took, "the attempts went on after the confirm returned");
    let record = wait::until_some("the failure to be audited", Duration::from_secs(20), async || {
        events(&server2.audit_entries(), "notification").first().map(|f| (*f).clone())
    })
    .await;
    let failed = record["destinations"][0].clone();
    assert_eq!(failed["outcome"], "failed");
    assert_eq!(failed["attempts"], 3);
    assert!(failed["error"].as_str().unwrap().contains("no answer within 300 ms"), "{failed}");
}

/// Two replicas on one store, both told of the same destination: one notification per event.
#[tokio::test]
async fn two_replicas_send_one_notification_per_event() {
    let receiver = Receiver::start(Answers::Status(200)).await;
    let key = private_file(KEY_NEW);
    let p =
        super::replicas::pair(&["--notify-webhook", &receiver.url, "--notify-webhook-key-file", key.to_str().unwrap()])
            .await;
    let on_a = p.a.connect(None, TestClient::plain(), false).await;
    let on_b = p.b.connect(None, TestClient::accepting(), false).await;
    let proposal = propose_on(&on_a, "replicated-notice", 1304).await;
    let done = call_on(&on_b, "fabric_confirm_change", json!({"confirm_token": proposal["confirm_token"]})).await;
    assert_eq!(structured(&done)["executed"], true);
    receiver.wait_for("change_executed", 1).await;
    wait::until("B to record its delivery", Duration::from_secs(20), async || {
        !events(&p.b.audit_entries(), "notification").is_empty()
    })
    .await;
    assert_eq!(receiver.got().len(), 1, "one event, one notification: {:?}", receiver.got());
    assert!(events(&p.a.audit_entries(), "notification").is_empty(), "A sent nothing of B's create");
}

/// dana, enrolled as a local approver in a Chromium of her own, and her stdio server on the
/// embedded simulator (its clock knob moves the server's clock, by which the time is judged),
/// telling `receiver` of every event, signed, with `extra` arguments.
async fn dana_notifying(receiver: &Receiver, extra: &[&str]) -> (Chrome, Server) {
    let key = private_file(KEY_NEW);
    let file = fresh_approvers_path();
    let chrome = Chrome::start().await;
    chrome.add_authenticator().await;
    enrolled(&chrome, &file, "dana").await;
    let server = Launch::serve()
        .args(&["--toolsets", "metros,mutate", "--notify-webhook", &receiver.url])
        .args(&["--notify-webhook-key-file", key.to_str().unwrap()])
        .args(extra)
        .env(&[("EQUINIX_MCP_APPROVERS_FILE", file.to_str().unwrap())])
        .stdio()
        .await;
    (chrome, server)
}

/// A question nobody decided within its proposal's time: the destinations hear that it expired.
#[tokio::test]
async fn a_change_nobody_decided_in_its_time_is_said_to_have_expired() {
    let receiver = Receiver::start(Answers::Status(200)).await;
    let (_chrome, server) = dana_notifying(&receiver, &[]).await;
    let (_, link) = pending(&server.client, "left-waiting", 1305).await;
    receiver.wait_for("change_waiting", 1).await;
    assert!(receiver.of("change_expired").is_empty(), "not before its time");
    advance_clock(&embedded_sim_url(&server).await, 10 * 60 * 1000 + 1).await;
    let expired = receiver.wait_for("change_expired", 1).await;
    assert_eq!(expired[0].json()["approval_url"], link);
    assert_eq!(
        expired[0].json()["summary"],
        "+ create connection (billable): EVPL_VC, 1000 Mbps, USD 300.00 per month; named \"left-waiting\""
    );
}

/// A change nobody decides is reminded of once after `--notify-remind-after-secs`, to
/// the usual destinations, and escalated once after `--notify-escalate-after-secs`, to the
/// escalation destination only; each is in the audit log, and a decision ends them.
#[tokio::test]
async fn a_change_nobody_decides_is_reminded_of_then_escalated_once_each() {
    let (receiver, on_call) =
        (Receiver::start(Answers::Status(200)).await, Receiver::start(Answers::Status(200)).await);
    let follow_ups = ["--notify-remind-after-secs", "120", "--notify-escalate-after-secs", "300"];
    let escalation = ["--notify-escalate-webhook", on_call.url.as_str()];
    let (chrome, server) = dana_notifying(&receiver, &[&follow_ups[..], &escalation[..]].concat()).await;
    let sim = embedded_sim_url(&server).await;
    let (token, link) = pending(&server.client, "nobody-looks", 1308).await;
    receiver.wait_for("change_waiting", 1).await;
    assert!(receiver.of("change_reminder").is_empty(), "not before its time");
    advance_clock(&sim, 121_000).await;
    let reminded = receiver.wait_for("change_reminder", 1).await;
    assert_eq!(
        (reminded[0].json()["state"].as_str(), reminded[0].json()["approval_url"].as_str()),
        (Some("waiting"), Some(link.as_str()))
    );
    advance_clock(&sim, 180_000).await;
    let escalated = on_call.wait_for("change_escalated", 1).await;
    assert_eq!(escalated[0].json()["approval_url"], link.as_str());
    // a person decides: no expiry notice follows, and each follow-up was sent once, where it goes
    chrome.goto(&link).await;
    chrome.click("#approve").await;
    assert!(chrome.text("#outcome").await.starts_with("Approved by local:dana"));
    assert_eq!(confirm(&server.client, &token).await["executed"], true);
    receiver.wait_for("change_executed", 1).await;
    advance_clock(&sim, 400_000).await;
    tokio::time::sleep(std::time::Duration::from_secs(3)).await;
    // (sorted: two deliveries may arrive in either order)
    let events = |r: &Receiver| {
        let mut all: Vec<String> = r.got().iter().map(|g| g.json()["event"].as_str().unwrap().to_string()).collect();
        all.sort();
        all
    };
    assert_eq!(events(&receiver), ["change_approved", "change_executed", "change_reminder", "change_waiting"]);
    assert_eq!(events(&on_call), ["change_escalated"], "an escalation goes to the escalation destination only");
    let audited: Vec<String> = server
        .audit_entries()
        .iter()
        .filter(|e| e["event"] == "notification")
        .map(|e| e["notice"].as_str().unwrap().to_string())
        .collect();
    assert!(audited.contains(&"change_reminder".into()) && audited.contains(&"change_escalated".into()), "{audited:?}");
}

/// The key made exactly as docs/deploying.md makes it (`openssl rand -hex 32 > notify-key`, its
/// newline and all) signs each notice so that the docs' own receiver, reading the same file the
/// documented way, accepts it; a create Fabric refuses is `change_failed`, and one whose answer
/// was lost `change_outcome_unknown`, each said once.
#[tokio::test]
async fn the_documented_key_verifies_the_documented_way_and_failed_and_unknown_creates_are_told() {
    use equinix_fabric_sim::{Fault, FaultMode};
    let dir = tempfile::tempdir().unwrap();
    let made = std::process::Command::new("sh")
        .args(["-euc", "umask 077; openssl rand -hex 32 > notify-key"])
        .current_dir(dir.path())
        .status()
        .unwrap();
    assert!(made.success());
    let key_file = dir.path().join("notify-key");
    assert_eq!(std::fs::read(&key_file).unwrap().len(), 65, "64 hex digits and the newline");
    let sim = sim(SimConfig::default()).await;
    let receiver = Receiver::start(Answers::Status(200)).await;
    let server = Launch::serve()
        .against(&sim)
        .args(&["--toolsets", "metros,mutate", "--notify-webhook", &receiver.url])
        .args(&["--notify-webhook-key-file", key_file.to_str().unwrap()])
        .client(TestClient::accepting())
        .stdio()
        .await;
    // Fabric refuses the create
    let refused = propose_on(&server.client, "refused-create", 1306).await;
    sim.inject(Fault::status("POST /fabric/v4/connections", 400));
    let done =
        call_on(&server.client, "fabric_confirm_change", json!({"confirm_token": refused["confirm_token"]})).await;
    assert_ne!(structured(&done)["executed"], true, "{:?}", done.structured_content);
    let failed = receiver.wait_for("change_failed", 1).await;
    assert_eq!(failed[0].json()["outcome"], "rejected", "{}", failed[0].body);
    // the create reached Fabric and its answer was lost
    let lost = propose_on(&server.client, "lost-answer", 1307).await;
    sim.inject(Fault { mode: FaultMode::Drop, ..Fault::status("POST /fabric/v4/connections", 201) });
    call_on(&server.client, "fabric_confirm_change", json!({"confirm_token": lost["confirm_token"]})).await;
    let unknown = receiver.wait_for("change_outcome_unknown", 1).await;
    assert_eq!(unknown[0].json()["outcome"], "unknown", "{}", unknown[0].body);

    for got in [&failed[0], &unknown[0]] {
        assert!(verified_as_the_docs_say(got, &key_file), "the docs' receiver accepts {}", got.body);
        // the same receiver with the key trimmed of its newline, as the server once signed it, refuses
        let trimmed = dir.path().join("trimmed-key");
        std::fs::write(&trimmed, std::fs::read_to_string(&key_file).unwrap().trim_end()).unwrap();
        assert!(!verified_as_the_docs_say(got, &trimmed), "a key of other bytes is another key");
    }
    assert_eq!(receiver.got().len(), 2, "one notice per event: {:?}", receiver.got());
}
