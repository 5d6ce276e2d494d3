//! Nobody locks the team out of a shared server. Each test reproduces one finding on
//! loopback, bounded in count and time, and checks that Bob is served promptly while Alice or an
//! anonymous peer does its worst.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::{Duration, Instant};

use futures_util::future::join_all;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};
use tokio_util::sync::CancellationToken;

use crate::harness::*;
use crate::shared_server::{ALICE, BOB, Raw, team_server};

fn addr_of(url: &str) -> SocketAddr {
    let host = url.trim_start_matches("http://").split('/').next().unwrap();
    host.parse().unwrap()
}

fn loopback(last: u8) -> IpAddr {
    IpAddr::V4(Ipv4Addr::new(127, 0, 0, last))
}

/// A TCP connection to `to` from the loopback address `from` (Linux routes all of 127/8 to lo).
async fn connect_from(from: IpAddr, to: SocketAddr) -> std::io::Result<TcpStream> {
    let socket = TcpSocket::new_v4()?;
    socket.bind(SocketAddr::new(from, 0))?;
    tokio::time::timeout(Duration::from_secs(2), socket.connect(to)).await.map_err(std::io::Error::other)?
}

/// Whether the server has closed `s` (EOF or reset) within `within`; bytes it sends are skipped.
async fn closed_within(s: &mut TcpStream, within: Duration) -> bool {
    let mut b = [0u8; 512];
    tokio::time::timeout(within, async {
        loop {
            match s.read(&mut b).await {
                Ok(0) | Err(_) => return,
                Ok(_) => continue,
            }
        }
    })
    .await
    .is_ok()
}

/// Bob opens a session and lists metros; how long it took.
async fn bob_is_served(url: &str) -> Duration {
    let started = Instant::now();
    let mut bob = Raw::new(url, BOB);
    assert!(bob.initialize().await.is_success(), "Bob's initialize");
    let out = bob.call(2, "fabric_list_metros", json!({"limit": 1})).await.result(2).await;
    assert!(out["result"]["isError"] != true && out.get("error").is_none(), "{out}");
    started.elapsed()
}

/// A raw `POST /mcp` of `body` on a fresh connection for `token` on `session`; the connection
/// (left open) and the answer's status and first bytes.
async fn raw_post(to: SocketAddr, token: &str, session: &str, body: &Value) -> (TcpStream, u16, String) {
    let body = body.to_string();
    let mut s = TcpStream::connect(to).await.unwrap();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMcp-Session-Id: {session}\r\nMcp-Protocol-Version: 2025-06-18\r\n\
         Content-Length: {}\r\n\r\n{body}",
        body.len()
    );
    s.write_all(head.as_bytes()).await.unwrap();
    let mut got = Vec::new();
    let mut b = [0u8; 2048];
    while !String::from_utf8_lossy(&got).contains("\r\n\r\n") {
        match tokio::time::timeout(Duration::from_secs(5), s.read(&mut b)).await {
            Ok(Ok(n)) if n > 0 => got.extend_from_slice(&b[..n]),
            _ => break,
        }
    }
    let text = String::from_utf8_lossy(&got).to_string();
    let status = text.split_whitespace().nth(1).and_then(|c| c.parse().ok()).unwrap_or(0);
    (s, status, text)
}

#[tokio::test]
async fn one_principal_cannot_take_every_stream_or_connection() {
    let server = team_server(&[
        "--max-connections",
        "40",
        "--max-connections-per-principal",
        "10",
        "--max-streams-per-principal",
        "4",
    ])
    .await;
    let mut alice = Raw::new(&server.url, ALICE);
    assert!(alice.initialize().await.is_success());

    // twelve GET streams on her session at once (rmcp would keep 33): four open, the rest 429
    let gets = join_all((0..12).map(|_| alice.request(reqwest::Method::GET).send())).await;
    let streams: Vec<reqwest::Response> = gets.into_iter().map(Result::unwrap).collect();
    let statuses: Vec<u16> = streams.iter().map(|r| r.status().as_u16()).collect();
    assert_eq!(statuses.iter().filter(|s| **s == 200).count(), 4, "{statuses:?}");
    assert!(statuses.iter().all(|s| *s == 200 || *s == 429), "{statuses:?}");
    let (open, refused): (Vec<_>, Vec<_>) = streams.into_iter().partition(|r| r.status() == 200);
    let said: Vec<Value> =
        join_all(refused.into_iter().map(|r| r.json::<Value>())).await.into_iter().flatten().collect();
    assert!(said.iter().any(|b| b["error"]["data"]["kind"] == "too_many_streams"), "{said:?}");
    assert!(said.iter().any(|b| b["error"]["message"].as_str().unwrap_or("").contains("--max-streams-per-principal")));
    assert!(bob_is_served(&server.url).await < Duration::from_secs(5), "Bob while Alice holds her streams");
    drop(open);

    // fourteen connections each carrying a request of hers: ten at most are hers at once (a
    // sleep: the server releases the streams' slots as it notices them closed, which it shows
    // nowhere; the count below allows for one still held)
    tokio::time::sleep(Duration::from_millis(300)).await;
    let session = alice.session.clone().unwrap();
    let list = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/list"});
    let to = addr_of(&server.url);
    let mut held = Vec::new();
    let (mut ok, mut beyond) = (0, Vec::new());
    for _ in 0..14 {
        let (s, status, text) = raw_post(to, ALICE, &session, &list).await;
        match status {
            200 => ok += 1,
            429 => beyond.push(text),
            other => panic!("unexpected {other}: {text}"),
        }
        held.push(s);
    }
    // (a connection of hers from before may not be closed yet)
    assert!((6..=10).contains(&ok), "{ok} of Alice's connections served");
    assert!(beyond.len() >= 4, "{beyond:?}");
    assert!(
        beyond.iter().all(|t| t.contains("too_many_connections") || t.to_lowercase().contains("connection: close"))
    );
    assert!(bob_is_served(&server.url).await < Duration::from_secs(5), "Bob while Alice holds her share");
    let log = server.stderr_text();
    assert!(log.contains("beyond the principal's share (--max-connections-per-principal)"), "{log}");
}

#[tokio::test]
async fn sockets_that_never_authenticate_cannot_lock_a_token_holder_out() {
    let server = team_server(&[
        "--max-connections",
        "48",
        "--max-unauthenticated-per-peer",
        "8",
        "--header-read-timeout-ms",
        "4000",
    ])
    .await;
    let to = addr_of(&server.url);
    // 16 idle sockets from each of six addresses (127.0.0.1, Bob's own, among them): 96 for 48
    // slots, none of which ever sends a byte
    let mut idle: Vec<(u8, TcpStream)> = Vec::new();
    for from in 1..=6u8 {
        for _ in 0..16 {
            if let Ok(s) = connect_from(loopback(from), to).await {
                idle.push((from, s));
            }
        }
    }
    // and the attack goes on: one more every 20 ms from three more addresses, for as long as
    // Bob's rounds take (bounded: at most 6 s)
    let stop = tokio_util::sync::CancellationToken::new();
    let churn = {
        let stop = stop.clone();
        tokio::spawn(async move {
            let (mut kept, started) = (Vec::new(), Instant::now());
            let mut i = 0u8;
            while !stop.is_cancelled() && started.elapsed() < Duration::from_secs(6) {
                if let Ok(s) = connect_from(loopback(7 + i % 3), to).await {
                    kept.push(s);
                }
                i = i.wrapping_add(1);
                // pacing: the churn opens about fifty connections a second
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            kept.len()
        })
    };
    // past the second in which a new connection keeps its place whatever comes
    tokio::time::sleep(Duration::from_millis(1100)).await;
    for round in 0..4 {
        let took = bob_is_served(&server.url).await;
        assert!(took < Duration::from_secs(3), "round {round}: Bob took {took:?}");
        // pacing: the rounds are spread across the churn, not a wait for anything
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    stop.cancel();
    assert!(churn.await.unwrap() > 10, "the churn ran");
    // of the sockets each address left idle, at most its 8 are still open
    let mut open_by_address = [0usize; 7];
    for (from, s) in &mut idle {
        if !closed_within(s, Duration::from_millis(20)).await {
            open_by_address[*from as usize] += 1;
        }
    }
    assert!(open_by_address.iter().all(|n| *n <= 8), "{open_by_address:?}");
}

/// The metrics address a server printed.
fn metrics_addr(server: &HttpServer) -> SocketAddr {
    let log = server.stderr_text();
    let at = log.find("Prometheus metrics at http://").expect("a metrics line");
    let rest = &log[at + "Prometheus metrics at http://".len()..];
    rest.split('/').next().unwrap().parse().unwrap()
}

#[tokio::test]
async fn the_metrics_listener_has_a_deadline_a_cap_and_a_host_check_and_so_do_health_checks() {
    let server = Launch::serve()
        .args(&[
            "--toolsets",
            "metros",
            "--metrics-listen",
            "127.0.0.1:0",
            "--header-read-timeout-ms",
            "1500",
            "--allowed-host",
            "lb.example.internal",
        ])
        .http("127.0.0.1:0")
        .await;
    let metrics = metrics_addr(&server);
    // forty idle sockets: the listener keeps at most its 16
    let mut idle = Vec::new();
    for _ in 0..40 {
        idle.push(TcpStream::connect(metrics).await.unwrap());
    }
    // (a sleep: time for the listener to take them all from its backlog, well within the
    // deadline; a socket it has not accepted yet looks open as well)
    tokio::time::sleep(Duration::from_millis(300)).await;
    let mut open = 0;
    for s in &mut idle {
        if !closed_within(s, Duration::from_millis(10)).await {
            open += 1;
        }
    }
    assert!(open <= 16, "{open} idle metrics connections open");
    // half-sent requests are closed by the header deadline
    let mut slow = Vec::new();
    for _ in 0..8 {
        let mut s = TcpStream::connect(metrics).await.unwrap();
        s.write_all(b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ").await.unwrap();
        slow.push(s);
    }
    let started = Instant::now();
    for s in slow.iter_mut().chain(idle.iter_mut()) {
        assert!(closed_within(s, Duration::from_secs(4)).await, "a metrics connection outlived the deadline");
    }
    assert!(started.elapsed() < Duration::from_secs(4));

    // the Host check, and no bodies
    let url = format!("http://{metrics}/metrics");
    let get = |host: &'static str| http().get(&url).header("host", host).send();
    let scraped = get("127.0.0.1").await.unwrap();
    assert_eq!(scraped.status(), 200);
    let text = scraped.text().await.unwrap();
    assert!(text.contains(r#"equinix_mcp_http_limits_total{listener="metrics",reason="unproven_closed"}"#), "{text}");
    assert_eq!(get("localhost:9464").await.unwrap().status(), 200);
    assert_eq!(get("lb.example.internal").await.unwrap().status(), 200);
    let rebinding = get("rebind.evil.example").await.unwrap();
    assert_eq!(rebinding.status(), 421);
    assert!(!rebinding.text().await.unwrap().contains("equinix_mcp_"), "nothing of the metrics");
    let with_body = http().get(&url).body("x".repeat(100)).send().await.unwrap();
    assert_eq!(with_body.status(), 413);

    // the MCP listener's health endpoints check Host too; a probe by IP or allowed name passes
    let base = server.url.trim_end_matches("/mcp").to_string();
    for path in ["/healthz", "/readyz", "/readyz/mutations"] {
        let at = format!("{base}{path}");
        let evil = http().get(&at).header("host", "rebind.evil.example:80").send().await.unwrap();
        assert_eq!(evil.status(), 421, "{path}");
        for host in ["127.0.0.1", "10.1.2.3:8080", "lb.example.internal"] {
            let ok = http().get(&at).header("host", host).send().await.unwrap();
            assert_eq!(ok.status(), 200, "{path} with Host {host}");
        }
    }
}

#[tokio::test]
async fn the_open_file_limit_is_raised_and_a_metrics_flood_cannot_starve_mcp_of_descriptors() {
    // a soft limit of 300 under a hard one of 600: raised at start-up, and said
    let server = Launch::serve()
        .args(&["--toolsets", "metros", "--metrics-listen", "127.0.0.1:0", "--max-connections", "100"])
        .open_files(300, 600)
        .http("127.0.0.1:0")
        .await;
    wait_until("the limit's log line", async || server.stderr_text().contains("open-file limit")).await;
    assert!(server.stderr_text().contains("open-file limit raised from 300 to 600"), "{}", server.stderr_text());
    // 700 connections to the metrics port: more than the process may open in all
    let metrics = metrics_addr(&server);
    let mut flood = Vec::new();
    let mut failed = None;
    for _ in 0..700 {
        // (3 s: a port whose last use is in TIME_WAIT on the server's side takes a SYN retry, 1 s)
        match tokio::time::timeout(Duration::from_secs(3), TcpStream::connect(metrics)).await {
            Ok(Ok(s)) => flood.push(s),
            Ok(Err(e)) => {
                failed = Some(e.to_string());
                break;
            }
            Err(_) => {
                failed = Some("timed out".into());
                break;
            }
        }
    }
    assert_eq!(flood.len(), 700, "the flood stopped: {failed:?}\n{}", server.stderr_text());
    let client = server.connect(None, TestClient::plain(), false).await;
    let started = Instant::now();
    assert!(!is_error(&call_on(&client, "fabric_list_metros", json!({"limit": 1})).await));
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(!server.stderr_text().contains("Too many open files"), "{}", server.stderr_text());
    let _ = client.cancel().await;
    drop(flood);

    // caps that cannot fit the hard limit refuse to start, by name
    let (ok, _, stderr) = Launch::serve()
        .args(&["--transport", "http", "--max-connections", "500"])
        .open_files(300, 600)
        .run_to_exit()
        .await;
    assert!(!ok, "{stderr}");
    assert!(stderr.contains("may open 600 files") && stderr.contains("--max-connections 500"), "{stderr}");
}

#[tokio::test]
async fn a_client_cannot_forge_or_hide_a_log_line() {
    let server = Launch::serve()
        .args(&["--toolsets", "metros"])
        .env(&[("RUST_LOG", "debug,rmcp::transport::streamable_http_server::session=warn")])
        .http("127.0.0.1:0")
        .await;
    let forged = "x\n2026-01-01T00:00:00.000000Z  INFO FORGED principal=bob\n";
    let hidden = "raw\r\u{1b}[2K\u{1b}[1A\u{202e}";
    let init = initialize_message(hidden, forged);
    let r = http()
        .post(&server.url)
        .header("accept", "application/json, text/event-stream")
        .json(&init)
        .send()
        .await
        .unwrap();
    let session = r.headers()["mcp-session-id"].to_str().unwrap().to_string();
    let _ = r.text().await;
    let post = |body: Value| {
        http()
            .post(&server.url)
            .header("accept", "application/json, text/event-stream")
            .header("mcp-session-id", &session)
            .header("mcp-protocol-version", "2025-06-18")
            .json(&body)
            .send()
    };
    let _ = post(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await.unwrap().text().await;
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": forged, "arguments": {}}});
    let _ = post(call).await.unwrap().text().await;
    wait_until("the access line", async || server.stderr_text().contains("tool call")).await;
    let log = server.stderr_text();
    assert!(!log.lines().any(|l| l.starts_with("2026-01-01T00:00:00")), "a forged line:\n{log}");
    assert!(!log.contains('\r') && !log.contains('\u{1b}') && !log.contains('\u{202e}'), "hidden characters:\n{log:?}");
    assert!(log.contains("tool=(not served)"), "the access line names no made-up tool:\n{log}");
}

#[tokio::test]
async fn a_burst_of_initializes_gets_exactly_the_session_caps() {
    let server = team_server(&[
        "--max-sessions-per-principal",
        "16",
        "--max-sessions",
        "24",
        "--max-connections",
        "600",
        "--max-connections-per-principal",
        "300",
        "--max-unauthenticated-per-peer",
        "300",
    ])
    .await;
    let init = initialize_message("burst", "0");
    let burst = |token: &'static str| {
        let init = init.clone();
        let url = server.url.clone();
        async move {
            let sends = (0..120).map(|_| {
                http()
                    .post(&url)
                    .header("authorization", format!("Bearer {token}"))
                    .header("accept", "application/json, text/event-stream")
                    .json(&init)
                    .send()
            });
            let mut statuses: Vec<u16> =
                join_all(sends).await.into_iter().map(|r| r.unwrap().status().as_u16()).collect();
            statuses.sort();
            statuses
        }
    };
    let alice = burst(ALICE).await;
    assert_eq!(alice.iter().filter(|s| **s == 200).count(), 16, "{alice:?}");
    assert_eq!(alice.iter().filter(|s| **s == 429).count(), 104, "{alice:?}");
    let bob = burst(BOB).await;
    assert_eq!(bob.iter().filter(|s| **s == 200).count(), 8, "the server's 24 in all: {bob:?}");
    assert_eq!(bob.iter().filter(|s| **s == 503).count(), 112, "{bob:?}");
}

#[tokio::test]
async fn a_token_file_of_another_owner_and_several_authorization_headers_are_refused() {
    // (as root, the test can give the file away; otherwise it cannot make one it does not own)
    let tokens = token_file(&[("alice", ALICE)]);
    if std::os::unix::fs::MetadataExt::uid(&std::fs::metadata(&tokens).unwrap()) == 0 {
        std::os::unix::fs::chown(&tokens, Some(65534), Some(65534)).unwrap();
        let link = tokens.with_extension("link");
        std::os::unix::fs::symlink(&tokens, &link).unwrap();
        for path in [&tokens, &link] {
            let args = ["serve", "--fabric-sim", "--transport", "http", "--auth-token-file", path.to_str().unwrap()];
            let (ok, _, stderr) = run_to_exit(&args, &[]).await;
            assert!(!ok, "{stderr}");
            assert!(stderr.contains("is owned by uid 65534, not by the user running the server"), "{stderr}");
        }
    } else {
        eprintln!("not root: the token file's owner check is covered by the unit tests only");
    }

    let server = team_server(&[]).await;
    let init = initialize_message("raw", "0");
    for second in [BOB, "not-a-token-at-all-0123456789abcdef"] {
        let r = http()
            .post(&server.url)
            .header("accept", "application/json, text/event-stream")
            .header("authorization", format!("Bearer {ALICE}"))
            .header("authorization", format!("Bearer {second}"))
            .json(&init)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 400);
        let body: Value = r.json().await.unwrap();
        assert!(body["message"].as_str().unwrap().contains("several Authorization headers"), "{body}");
    }
}

/// Keeps up to `keep` sockets from `from` open to `to`, each reopened `pause` after the server
/// closed it, until `stop` (at most `limit`); how many it opened. With the server keeping 64 of
/// 520 and a pause of a second, about 450 a second are reopened (the issue measured 564).
async fn reopened_as_closed(
    from: IpAddr,
    to: SocketAddr,
    keep: usize,
    pause: Duration,
    stop: CancellationToken,
    limit: Duration,
) -> usize {
    let opened = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let workers = (0..keep).map(|_| {
        let (stop, opened) = (stop.clone(), opened.clone());
        tokio::spawn(async move {
            while !stop.is_cancelled() {
                let Ok(mut s) = connect_from(from, to).await else {
                    // pacing: an attacker's retry after a refused connect
                    tokio::time::sleep(Duration::from_millis(5)).await;
                    continue;
                };
                opened.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                tokio::select! {
                    _ = closed_within(&mut s, limit) => tokio::time::sleep(pause).await,
                    _ = stop.cancelled() => {}
                }
            }
        })
    });
    let workers: Vec<_> = workers.collect();
    let _ = tokio::time::timeout(limit, stop.cancelled()).await;
    stop.cancel();
    join_all(workers).await;
    opened.load(std::sync::atomic::Ordering::Relaxed)
}

/// `tools/list` for `token` on a new connection from 127.0.0.1: its status and how long the
/// answer took.
async fn listed_on_a_new_connection(to: SocketAddr, token: &str, session: &str) -> (u16, Duration) {
    let started = Instant::now();
    let list = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"});
    let (_, status, _) = raw_post(to, token, session, &list).await;
    (status, started.elapsed())
}

/// A team server with the default limits (512 connections, 64 unproven per address), its
/// address, and a session of `token`'s on it.
async fn default_server_and_session(token: &'static str) -> (HttpServer, SocketAddr, String) {
    let server = team_server(&[]).await;
    let mut raw = Raw::new(&server.url, token);
    assert!(raw.initialize().await.is_success());
    let (to, session) = (addr_of(&server.url), raw.session.unwrap());
    (server, to, session)
}

// The attacker and the victim share one address (a NAT, a proxy).

#[tokio::test]
async fn a_token_holder_behind_the_attackers_own_address_is_served() {
    let (_server, to, session) = default_server_and_session(BOB).await;
    // 520 idle sockets from Bob's own address, each reopened a second after it is closed
    let stop = CancellationToken::new();
    let pause = Duration::from_secs(1);
    let attack = tokio::spawn(reopened_as_closed(loopback(1), to, 520, pause, stop.clone(), Duration::from_secs(15)));
    // pacing: the flood establishes itself and starts reopening (its first pause is a second)
    tokio::time::sleep(Duration::from_millis(1500)).await;
    for round in 0..5 {
        let (status, took) = listed_on_a_new_connection(to, BOB, &session).await;
        assert_eq!(status, 200, "round {round}: Bob's request beside the idle flood");
        assert!(took < Duration::from_secs(1), "round {round}: Bob took {took:?}");
        // pacing: the rounds are spread across the attack
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    stop.cancel();
    let opened = attack.await.unwrap();
    assert!(opened > 520 + 64, "the server closed idle sockets and the attack reopened them ({opened} opened)");
}

#[tokio::test]
async fn a_token_holder_is_served_right_after_a_burst_of_half_sent_requests_from_its_address() {
    let (_server, to, session) = default_server_and_session(ALICE).await;
    for round in 0..3 {
        // 200 half-sent requests from Alice's address at once, and Alice right after them
        let half_sent = join_all((0..200).map(|_| async move {
            let mut s = connect_from(loopback(1), to).await.ok()?;
            s.write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: appl").await.ok()?;
            Some(s)
        }))
        .await;
        assert!(half_sent.iter().flatten().count() >= 190, "round {round}: the half-sent requests were opened");
        let (status, took) = listed_on_a_new_connection(to, ALICE, &session).await;
        assert_eq!(status, 200, "round {round}: Alice right after 200 half-sent requests");
        assert!(took < Duration::from_secs(1), "round {round}: Alice took {took:?}");
        drop(half_sent);
    }
}
