//! A passkey's answer counts only for the origin of the page that asked for it. Any
//! process of any user can listen on another port of `localhost` (the same WebAuthn RP ID), show
//! a harmless request there and ask the person's authenticator to sign the challenge of a request
//! waiting on the real page. That answer, posted to the real page through its own form, by a bare
//! POST, or by a program that forges the page's `Origin`, approves nothing; a log edited to carry
//! it fails `audit verify --passkeys`.

use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::local_approvers::{Exported, confirm, dana_at_her_server, pending};
use super::passkeys::{assertion, events, options_of, post_form};
use crate::harness::*;

/// Another program's page on this machine: a harmless HTML page at `http://localhost:PORT`, on
/// both loopbacks (the browser may resolve `localhost` to either). Served until dropped.
struct OtherPage {
    origin: String,
    _serving: Vec<tokio::task::JoinHandle<()>>,
}

impl OtherPage {
    async fn serve() -> OtherPage {
        let v4 = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = v4.local_addr().unwrap().port();
        let mut listeners = vec![v4];
        if let Ok(v6) = tokio::net::TcpListener::bind(("::1", port)).await {
            listeners.push(v6);
        }
        let serving = listeners.into_iter().map(|l| tokio::spawn(answer_every(l))).collect();
        OtherPage { origin: format!("http://localhost:{port}"), _serving: serving }
    }
}

async fn answer_every(listener: tokio::net::TcpListener) {
    let body = "<!doctype html><title>Harmless</title><p>Approve a harmless change?</p>";
    loop {
        let Ok((mut stream, _)) = listener.accept().await else { return };
        tokio::spawn(async move {
            let mut seen = Vec::new();
            let mut buf = [0u8; 4096];
            while !seen.windows(4).any(|w| w == b"\r\n\r\n") {
                match tokio::time::timeout(Duration::from_secs(5), stream.read(&mut buf)).await {
                    Ok(Ok(n)) if n > 0 => seen.extend_from_slice(&buf[..n]),
                    _ => return,
                }
            }
            let head = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: text/html; charset=utf-8\r\ncontent-length: {}\r\nconnection: \
                 close\r\n\r\n",
                body.len()
            );
            let _ = stream.write_all(format!("{head}{body}").as_bytes()).await;
        });
    }
}

fn approve(answer: &str) -> Vec<(&'static str, String)> {
    vec![("decision", "approve".into()), ("assertion", answer.to_string())]
}

/// `fields` URL-encoded, posted to `link` by a program (no browser): with `origin` when given.
async fn posted_by_a_program(link: &str, fields: &[(&str, String)], origin: Option<&str>) -> (u16, String) {
    let body: String =
        form_urlencoded::Serializer::new(String::new()).extend_pairs(fields.iter().map(|(k, v)| (*k, v))).finish();
    let mut request = http().post(link).header("content-type", "application/x-www-form-urlencoded");
    if let Some(origin) = origin {
        request = request.header("origin", origin);
    }
    let response = request.body(body).send().await.unwrap();
    (response.status().as_u16(), response.text().await.unwrap())
}

#[tokio::test]
async fn a_passkey_answer_made_on_another_localhost_page_approves_nothing_and_fails_verify_in_an_edited_log() {
    let (sim, file, chrome, server) = dana_at_her_server().await;
    let (token, link) = pending(&server.client, "origin-bound", 360).await;
    let page = reqwest::Url::parse(&link).unwrap().origin().ascii_serialization();
    let options = options_of(&chrome, &link).await;

    // another program's page on another port signs the waiting request's challenge with dana's passkey
    let other = OtherPage::serve().await;
    assert_ne!(other.origin, page);
    chrome.goto(&format!("{}/", other.origin)).await;
    assert!(chrome.text("p").await.contains("harmless"), "the other page is what the browser shows");
    let elsewhere = assertion(&chrome, &options, json!({})).await;
    let signed = format!("on the page at {}", other.origin);

    // through the real page's own form, as a person's browser would post it
    chrome.goto(&link).await;
    let fields = approve(&elsewhere);
    let as_form: Vec<(&str, &str)> = fields.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let refused = post_form(&chrome, &link, &as_form).await;
    assert!(refused.contains(&signed) && refused.contains(&format!("not on this page ({page})")), "{refused}");
    // by a program: with no Origin and no Sec-Fetch-Site (no browser's post), and with the page's
    // own Origin forged (a program sends any header it likes)
    let (status, bare) = posted_by_a_program(&link, &fields, None).await;
    assert_eq!(status, 403, "{bare}");
    assert!(bare.contains("neither Origin nor Sec-Fetch-Site"), "{bare}");
    let (status, forged) = posted_by_a_program(&link, &fields, Some(&page)).await;
    assert_eq!(status, 403, "{forged}");
    assert!(forged.contains(&signed), "refused for the signature's origin, not for a header: {forged}");
    assert_eq!(connection_creates(&sim), 0, "nothing refused created anything");
    assert!(events(&server.audit_entries(), "page_decision").is_empty(), "and nothing was recorded as decided");
    let still = confirm(&server.client, &token).await;
    assert_eq!(still["human_confirmation"]["status"], "approval_pending", "the request still waits: {still}");

    // dana approves on the page itself: one create, and its record verifies
    chrome.goto(&link).await;
    chrome.click("#approve").await;
    assert!(chrome.text("#outcome").await.starts_with("Approved by local:dana"));
    assert_eq!(confirm(&server.client, &token).await["executed"], true);
    assert_eq!(connection_creates(&sim), 1);
    let exported = Exported::of(&file).await;
    let (ok, out, err) = exported.verify(&server.audit_log).await;
    assert!(ok && out.contains("1 passkey approvals verify"), "{out}{err}");

    // the same record carrying the other page's answer, its chain made whole again: refused
    let edited = exported.edited(&server.audit_log, |line| with_assertion(line, &elsewhere));
    let (ok, out, err) = exported.verify(&edited).await;
    assert!(!ok && out.contains("BROKEN") && out.contains(&signed), "{out}{err}");
}

/// `line` (a `page_decision` record) with its kept assertion replaced by `answer` (JSON text).
fn with_assertion(line: &str, answer: &str) -> String {
    let key = "\"assertion\":";
    let start = line.find(key).unwrap() + key.len();
    // the assertion is an object of base64url strings and names: no brace inside a string
    let mut depth = 0;
    let end = line[start..]
        .char_indices()
        .find_map(|(i, c)| {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                _ => {}
            }
            (depth == 0).then_some(start + i + 1)
        })
        .unwrap();
    let answer: Value = serde_json::from_str(answer).unwrap();
    format!("{}{}{}", &line[..start], answer, &line[end..])
}

/// Each line's `prev` set to the SHA-256 of the line before it, as a forger would: the chain
/// verifies, so only the passkey check can tell.
pub(crate) fn relink(lines: &mut [String]) {
    use sha2::{Digest, Sha256};
    for i in 1..lines.len() {
        let prev = hex::encode(Sha256::digest(lines[i - 1].as_bytes()));
        let at = lines[i].find("\"prev\":\"").unwrap() + 8;
        lines[i].replace_range(at..at + 64, &prev);
    }
}
