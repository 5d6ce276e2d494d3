//! A shared HTTP server attacked by its own users, on loopback. Each test reproduces
//! one finding (bounded in count and time) and checks that it now holds.

use std::time::{Duration, Instant};

use crate::harness::*;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

pub(crate) const ALICE: &str = "alice-0123456789abcdef0123456789abcdef";
pub(crate) const BOB: &str = "bob-0123456789abcdef0123456789abcdef00";

/// A hand-driven MCP session over HTTP, so a test can do what no well-behaved client would.
pub(crate) struct Raw {
    pub url: String,
    pub token: &'static str,
    pub session: Option<String>,
}

impl Raw {
    pub(crate) fn new(url: &str, token: &'static str) -> Raw {
        Raw { url: url.to_string(), token, session: None }
    }

    pub(crate) fn request(&self, method: reqwest::Method) -> reqwest::RequestBuilder {
        let mut r = http()
            .request(method, &self.url)
            .header("authorization", format!("Bearer {}", self.token))
            .header("accept", "application/json, text/event-stream");
        if let Some(s) = &self.session {
            r = r.header("mcp-session-id", s).header("mcp-protocol-version", "2025-06-18");
        }
        r
    }

    pub(crate) async fn post(&self, body: Value) -> reqwest::Response {
        self.request(reqwest::Method::POST).json(&body).send().await.unwrap()
    }

    /// initialize (declaring form elicitation) and notifications/initialized.
    pub(crate) async fn initialize(&mut self) -> reqwest::StatusCode {
        let r = self
            .post(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {"elicitation": {"form": {}}},
                "clientInfo": {"name": "raw", "version": "0"}}}))
            .await;
        let status = r.status();
        if status.is_success() {
            self.session = Some(r.headers()["mcp-session-id"].to_str().unwrap().to_string());
            let _ = Events::of(r).next().await;
            let r = self.post(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
            assert!(r.status().is_success(), "{}", r.status());
        }
        status
    }

    pub(crate) async fn call(&self, id: u64, tool: &str, arguments: Value) -> Events {
        let r = self
            .post(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}))
            .await;
        assert!(r.status().is_success(), "{}", r.status());
        Events::of(r)
    }
}

/// The JSON-RPC messages of an SSE (or plain JSON) response.
pub(crate) struct Events {
    response: reqwest::Response,
    buffer: String,
    json: bool,
}

impl Events {
    pub(crate) fn of(response: reqwest::Response) -> Events {
        let json =
            response.headers().get("content-type").is_some_and(|v| v.to_str().unwrap().starts_with("application/json"));
        Events { response, buffer: String::new(), json }
    }

    pub(crate) async fn next(&mut self) -> Option<Value> {
        loop {
            if self.json {
                let text = tokio::time::timeout(Duration::from_secs(20), self.response.chunk()).await.ok()?.ok()??;
                self.buffer.push_str(&String::from_utf8_lossy(&text));
                if let Ok(v) = serde_json::from_str::<Value>(&self.buffer) {
                    self.buffer.clear();
                    return Some(v);
                }
                continue;
            }
            if let Some(end) = self.buffer.find("\n\n") {
                let event: String = self.buffer.drain(..end + 2).collect();
                let data: String = event.lines().filter_map(|l| l.strip_prefix("data:")).map(str::trim).collect();
                if let Ok(v) = serde_json::from_str::<Value>(&data) {
                    return Some(v);
                }
                continue;
            }
            let chunk = tokio::time::timeout(Duration::from_secs(20), self.response.chunk()).await.ok()?.ok()??;
            self.buffer.push_str(&String::from_utf8_lossy(&chunk));
        }
    }

    /// The next message that is the response to request `id`.
    pub(crate) async fn result(&mut self, id: u64) -> Value {
        while let Some(m) = self.next().await {
            if m["id"] == id && (m.get("result").is_some() || m.get("error").is_some()) {
                return m;
            }
        }
        panic!("no response to request {id}")
    }
}

pub(crate) async fn team_server(extra: &[&str]) -> HttpServer {
    // the attacks on these servers open hundreds of sockets from this process, beside the other
    // tests running at the same time: a shell's 1,024 would not do
    equinix_mcp::open_files::raise_to_hard_limit();
    let tokens = token_file(&[("alice", ALICE), ("bob", BOB)]);
    let mut args = vec!["--toolsets", "metros,mutate", "--auth-token-file", tokens.to_str().unwrap()];
    args.extend_from_slice(extra);
    Launch::serve().args(&args).http("127.0.0.1:0").await
}

#[tokio::test]
async fn another_principal_cannot_answer_delete_or_read_a_session_that_is_not_its_own() {
    let server = team_server(&[]).await;
    let mut alice = Raw::new(&server.url, ALICE);
    assert!(alice.initialize().await.is_success());
    let propose = json!({"change_type": "connection_create", "spec": connection_spec("alice-only", 1001)});
    let proposed = alice.call(2, "fabric_propose_change", propose).await.result(2).await;
    let token = proposed["result"]["structuredContent"]["confirm_token"].as_str().unwrap().to_string();

    // Alice's confirm waits on her form
    let mut confirm = alice.call(3, "fabric_confirm_change", json!({"confirm_token": token})).await;
    let form = loop {
        let m = confirm.next().await.expect("the form");
        if m["method"] == "elicitation/create" {
            break m;
        }
    };
    let form_id = form["id"].clone();

    // Bob, with his own valid token and Alice's session id, answers it, reads it, deletes it
    let bob = Raw { session: alice.session.clone(), ..Raw::new(&server.url, BOB) };
    let answer = json!({"jsonrpc": "2.0", "id": form_id, "result": {"action": "accept", "content": {"confirm": true}}});
    assert_eq!(bob.post(answer).await.status(), 404, "an answer from another principal");
    assert_eq!(bob.request(reqwest::Method::GET).send().await.unwrap().status(), 404, "a stream");
    assert_eq!(bob.request(reqwest::Method::DELETE).send().await.unwrap().status(), 404, "a delete");
    let r = bob.post(json!({"jsonrpc": "2.0", "id": 9, "method": "tools/list"})).await;
    assert_eq!(r.status(), 404, "a request");

    // nothing changed: the session lives, and only Alice's own answer counts
    let decline = json!({"jsonrpc": "2.0", "id": form_id, "result": {"action": "decline"}});
    assert!(alice.post(decline).await.status().is_success());
    let done = confirm.result(3).await;
    let out = &done["result"]["structuredContent"];
    assert_eq!(
        (out["executed"].clone(), out["human_confirmation"]["status"].clone()),
        (json!(false), json!("declined")),
        "{done}"
    );
    assert_eq!(creates(&server.sim, "connections").await, 0);

    assert!(alice.request(reqwest::Method::DELETE).send().await.unwrap().status().is_success());
    let session = alice.session.clone().unwrap();
    let refused = "refused a request on another principal's session";
    wait_until("the refusal in the log", async || server.stderr_text().contains(refused)).await;
    let log = server.stderr_text();
    assert!(log.contains("refused a request on another principal's session"), "{log}");
    assert!(!log.contains(&session), "the session id must not be logged:\n{log}");
}

#[tokio::test]
async fn one_principal_holding_forms_open_starves_nobody_and_its_forms_end_when_it_leaves() {
    let server = team_server(&["--max-confirmations-per-principal", "3"]).await;
    let holder = TestClient::answering(Answer::Never);
    let alice = server.connect(Some(ALICE), holder.clone(), false).await;
    let mut tokens = Vec::new();
    for i in 0..5 {
        let p = propose_on(&alice, &format!("held-{i}"), 1100 + i).await;
        tokens.push(p["confirm_token"].as_str().unwrap().to_string());
    }
    let peer = alice.peer().clone();
    let confirms: Vec<_> = tokens
        .iter()
        .map(|t| {
            let peer = peer.clone();
            let params = confirm_request(t.as_str());
            tokio::spawn(async move { peer.call_tool(params).await })
        })
        .collect();
    wait_until("three open forms", async || holder.prompt_texts().len() == 3).await;

    // the two beyond the limit are refused at once, before anyone is asked (one deadline for all:
    // the three held forms never answer)
    let mut refused = 0;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(2);
    for c in confirms {
        if let Ok(Ok(r)) = tokio::time::timeout_at(deadline, c).await.map(|j| j.unwrap()) {
            let out = structured(&r);
            assert_eq!(out["error"]["kind"], "confirmation_refused", "{out}");
            assert!(out["error"]["message"].as_str().unwrap().contains("--max-confirmations-per-principal"), "{out}");
            refused += 1;
        }
    }
    assert_eq!(refused, 2);
    assert_eq!(holder.prompt_texts().len(), 3);

    // Bob is not starved: reads, and a confirm of his own
    let bob_client = TestClient::accepting();
    let bob = server.connect(Some(BOB), bob_client.clone(), false).await;
    let started = Instant::now();
    let metros = call_on(&bob, "fabric_list_metros", json!({"limit": 1})).await;
    assert!(!is_error(&metros) && started.elapsed() < Duration::from_secs(5));
    let p = propose_on(&bob, "bob-not-starved", 1200).await;
    let c = call_on(&bob, "fabric_confirm_change", json!({"confirm_token": p["confirm_token"]})).await;
    assert_eq!(structured(&c)["executed"], true, "{:?}", c.structured_content);

    // Alice leaves: her open forms end as call_cancelled, audited
    let _ = alice.cancel().await;
    let cancelled = async || {
        server
            .audit_entries()
            .iter()
            .filter(|e| e["tool"] == "fabric_confirm_change" && e["human_status"] == "call_cancelled")
            .count()
            == 3
    };
    wait_until("Alice's three forms to end as call_cancelled", cancelled).await;
    assert_eq!(creates(&server.sim, "connections").await, 1, "only Bob's");
    let _ = bob.cancel().await;
}

#[tokio::test]
async fn slow_or_silent_connections_are_closed_and_the_connection_cap_holds() {
    let server = Launch::serve()
        .args(&["--toolsets", "metros", "--header-read-timeout-ms", "500", "--max-connections", "14"])
        .http("127.0.0.1:0")
        .await;
    let addr = server.url.trim_start_matches("http://").trim_end_matches("/mcp").to_string();
    // ten connections that send half a request, and never the rest
    let mut slow = Vec::new();
    for _ in 0..10 {
        let mut s = tokio::net::TcpStream::connect(&addr).await.unwrap();
        s.write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ").await.unwrap();
        slow.push(s);
    }
    // a legitimate client (two or three connections) is served meanwhile: the cap is not reached
    let ok = server.connect(None, TestClient::plain(), false).await;
    assert!(!is_error(&call_on(&ok, "fabric_list_metros", json!({"limit": 1})).await));
    // beyond the cap, a connection is closed at once: the new one, or (past a second) the oldest
    // that never sent a request
    let mut extra = Vec::new();
    for _ in 0..6 {
        extra.push(tokio::net::TcpStream::connect(&addr).await.unwrap());
    }
    let mut closed_at_once = 0;
    for s in extra.iter_mut().chain(slow.iter_mut()) {
        let mut b = [0u8; 1];
        if let Ok(Ok(0) | Err(_)) = tokio::time::timeout(Duration::from_millis(100), s.read(&mut b)).await {
            closed_at_once += 1;
        }
    }
    assert!(closed_at_once >= 3, "connections beyond the cap are closed ({closed_at_once} of 16)");
    // every slow connection is closed by the header deadline
    let started = Instant::now();
    for s in &mut slow {
        let mut b = [0u8; 64];
        let read = tokio::time::timeout(Duration::from_secs(5), async {
            loop {
                match s.read(&mut b).await {
                    Ok(0) | Err(_) => return,
                    Ok(_) => continue, // a 408 may come before the close
                }
            }
        })
        .await;
        assert!(read.is_ok(), "a slow connection stayed open");
    }
    assert!(started.elapsed() < Duration::from_secs(5));
    // a new client (the first one's idle connection was closed by the same deadline)
    let _ = ok.cancel().await;
    let again = server.connect(None, TestClient::plain(), false).await;
    assert!(!is_error(&call_on(&again, "fabric_list_metros", json!({"limit": 1})).await), "still serving");
    let _ = again.cancel().await;
}

#[tokio::test]
async fn sessions_are_capped_per_principal_and_expire_when_idle() {
    let server = team_server(&["--max-sessions-per-principal", "3", "--session-idle-timeout-ms", "1500"]).await;
    let mut alices = Vec::new();
    for _ in 0..3 {
        let mut a = Raw::new(&server.url, ALICE);
        assert!(a.initialize().await.is_success());
        alices.push(a);
    }
    let mut fourth = Raw::new(&server.url, ALICE);
    let r = fourth.post(initialize_message("raw", "0")).await;
    assert_eq!(r.status(), 429);
    let body: Value = r.json().await.unwrap();
    assert!(body["error"]["message"].as_str().unwrap().contains("--max-sessions-per-principal"), "{body}");
    let mut bob = Raw::new(&server.url, BOB);
    assert!(bob.initialize().await.is_success(), "Bob has his own allowance");
    // closing one frees a place at once; idle ones expire by themselves
    assert!(alices[0].request(reqwest::Method::DELETE).send().await.unwrap().status().is_success());
    assert!(fourth.initialize().await.is_success());
    // a sleep, not a wait: the idle timer runs in the server's own time, and any request to see
    // whether the session expired would be traffic that keeps it alive
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let r = alices[1].post(json!({"jsonrpc": "2.0", "id": 5, "method": "tools/list"})).await;
    assert_eq!(r.status(), 404, "an idle session expired");
    for _ in 0..3 {
        let mut a = Raw::new(&server.url, ALICE);
        assert!(a.initialize().await.is_success(), "expired sessions no longer count");
    }
}

#[tokio::test]
async fn foreign_origins_huge_bad_arguments_and_url_credentials_are_handled() {
    let server = Launch::serve()
        .args(&["--toolsets", "metros", "--allowed-origin", "https://console.example.internal"])
        .http("127.0.0.1:0")
        .await;
    let init = initialize_message("raw", "0");
    let post_to = |host: Option<String>, origin: Option<String>| {
        let mut r = http().post(&server.url).header("accept", "application/json, text/event-stream").json(&init);
        if let Some(h) = host {
            r = r.header("host", h);
        }
        if let Some(o) = origin {
            r = r.header("origin", o);
        }
        r.send()
    };
    let post = |origin: Option<&str>| post_to(None, origin.map(str::to_string));
    assert_eq!(post(Some("https://evil.example")).await.unwrap().status(), 403);
    assert_eq!(post(Some("http://localhost:8931")).await.unwrap().status(), 403, "not listed, even on loopback");
    assert!(post(Some("https://console.example.internal")).await.unwrap().status().is_success());
    assert!(post(None).await.unwrap().status().is_success(), "non-browser clients send no Origin");
    // a page this server serves sends its own origin, under any name it answers to
    let port = server.url.trim_start_matches("http://127.0.0.1:").split('/').next().unwrap().to_string();
    for name in ["127.0.0.1", "localhost"] {
        let (host, origin) = (format!("{name}:{port}"), format!("http://{name}:{port}"));
        let r = post_to(Some(host), Some(origin.clone())).await.unwrap();
        assert!(r.status().is_success(), "{origin}: {}", r.status());
    }
    assert_eq!(post(Some(&format!("https://127.0.0.1:{port}"))).await.unwrap().status(), 403, "another scheme");
    // a rebinding name is refused whatever its Origin, its own included
    let evil = format!("evil.example.com:{port}");
    assert_eq!(post_to(Some(evil.clone()), Some(format!("http://{evil}"))).await.unwrap().status(), 403);
    assert_eq!(post_to(Some(evil), None).await.unwrap().status(), 403);

    // a bad argument of 400 KB (as a value and as a key, just under the body cap) is named, not echoed
    let client = server.connect(None, TestClient::plain(), false).await;
    let huge = "x".repeat(400 << 10);
    let r = call_on(&client, "fabric_list_metros", json!({"presence": huge.clone(), huge.clone(): 1})).await;
    assert!(is_error(&r));
    let text = serde_json::to_string(&r).unwrap();
    assert!(text.len() < 8192, "the error is {} bytes", text.len());
    let _ = client.cancel().await;

    // credentials in the endpoint URL never reach the banner
    let (_, _, stderr) =
        run_to_exit(&["serve", "--endpoint", "http://user:hunter2secret@127.0.0.1:9/", "--toolsets", "metros"], &[])
            .await;
    assert!(stderr.contains("fabric=http://***@127.0.0.1:9"), "{stderr}");
    assert!(!stderr.contains("hunter2secret"), "{stderr}");
}

#[tokio::test]
async fn the_audit_log_refuses_a_symlink_and_reopens_a_deleted_file() {
    let dir = tempfile::tempdir().unwrap();
    let precious = dir.path().join("precious.txt");
    std::fs::write(&precious, "do not touch\n").unwrap();
    let link = dir.path().join("audit.jsonl");
    std::os::unix::fs::symlink(&precious, &link).unwrap();
    let (ok, _, stderr) =
        run_to_exit(&["serve", "--fabric-sim", "--toolsets", "mutate", "--audit-log", link.to_str().unwrap()], &[])
            .await;
    assert!(!ok && stderr.contains("symbolic link"), "{stderr}");
    assert_eq!(std::fs::read_to_string(&precious).unwrap(), "do not touch\n");

    // deleted while running: the next record reopens the path and says so
    let path = dir.path().join("real.jsonl");
    let server = Launch::command(&["serve", "--fabric-sim", "--toolsets", "mutate"])
        .env(&[("EQUINIX_MCP_AUDIT_LOG", path.to_str().unwrap())])
        .stdio()
        .await;
    propose_on(&server.client, "before-delete", 1300).await;
    std::fs::remove_file(&path).unwrap();
    propose_on(&server.client, "after-delete", 1301).await;
    let lines: Vec<Value> = read_audit(&path);
    assert_eq!(lines.len(), 2, "the reopening note and the new record: {lines:?}");
    assert_eq!(lines[0]["event"], "audit_log_reopened");
    assert_eq!(lines[1]["tool"], "fabric_propose_change");
    assert!(server.stderr_text().contains("reopening it"), "{}", server.stderr_text());
    server.stop().await;
}
