//! The approval page's cost as the server's CPU on loopback: a signed-in person's
//! render of a request and a decision (its synced audit record included), and the form path's
//! confirm on a server that also serves the page against one that does not.
//!
//! The identity provider here is the bench's own, on loopback, made for this measurement: it
//! publishes an Ed25519 key, signs in anyone at once (`/authorize` redirects back with a code) and
//! answers the code with an ID token. It checks nothing of PKCE: the server's sign-in is measured,
//! not the provider's.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use anyhow::Context;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ring::rand::SystemRandom;
use ring::signature::{Ed25519KeyPair, KeyPair};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};

use crate::client::{self, call, cpu_of, spawn};
use crate::table::Table;
use equinix_mcp_bench::lean::LeanSession;

const CLIENT_ID: &str = "bench-approvals";

struct Provider {
    issuer: String,
    key: Ed25519KeyPair,
    /// code -> nonce
    codes: Mutex<HashMap<String, String>>,
}

/// Starts the bench's provider; its issuer URL.
async fn provider() -> anyhow::Result<String> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let issuer = format!("http://{}", listener.local_addr()?);
    let pkcs8 = Ed25519KeyPair::generate_pkcs8(&SystemRandom::new()).map_err(|e| anyhow::anyhow!("{e}"))?;
    let key = Ed25519KeyPair::from_pkcs8(pkcs8.as_ref()).map_err(|e| anyhow::anyhow!("{e}"))?;
    let provider = Arc::new(Provider { issuer: issuer.clone(), key, codes: Mutex::default() });
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let provider = provider.clone();
            tokio::spawn(async move {
                let _ = provider.answer(stream).await;
            });
        }
    });
    Ok(issuer)
}

impl Provider {
    /// One request on `stream` (then the connection closes).
    async fn answer(&self, stream: tokio::net::TcpStream) -> anyhow::Result<()> {
        let mut reader = BufReader::new(stream);
        let mut head = String::new();
        reader.read_line(&mut head).await?;
        let mut length = 0usize;
        loop {
            let mut line = String::new();
            reader.read_line(&mut line).await?;
            if line.trim().is_empty() {
                break;
            }
            if let Some((name, value)) = line.split_once(':')
                && name.eq_ignore_ascii_case("content-length")
            {
                length = value.trim().parse()?;
            }
        }
        let mut body = vec![0; length.min(64 * 1024)];
        reader.read_exact(&mut body).await?;
        let target = head.split_whitespace().nth(1).unwrap_or("/").to_string();
        let (path, query) = target.split_once('?').unwrap_or((&target, ""));
        let form = |text: &str| -> HashMap<String, String> { url_pairs(text).into_iter().collect() };
        let (status, extra, text) = match path {
            "/.well-known/openid-configuration" => (
                200,
                String::new(),
                json!({
                "issuer": self.issuer, "authorization_endpoint": format!("{}/authorize", self.issuer),
                "token_endpoint": format!("{}/token", self.issuer), "jwks_uri": format!("{}/jwks", self.issuer)})
                .to_string(),
            ),
            "/jwks" => {
                let x = URL_SAFE_NO_PAD.encode(self.key.public_key().as_ref());
                (
                    200,
                    String::new(),
                    json!({"keys": [{"kty": "OKP", "crv": "Ed25519", "kid": "k", "use": "sig", "x": x}]}).to_string(),
                )
            }
            "/authorize" => {
                let q = form(query);
                let code = URL_SAFE_NO_PAD.encode(rand_bytes());
                self.codes.lock().unwrap().insert(code.clone(), q.get("nonce").cloned().unwrap_or_default());
                let back = format!("{}?code={code}&state={}", q["redirect_uri"], q["state"]);
                (302, format!("Location: {back}\r\n"), String::new())
            }
            "/token" => {
                let f = form(&String::from_utf8_lossy(&body));
                let nonce = self.codes.lock().unwrap().remove(&f["code"]).context("unknown code")?;
                (
                    200,
                    String::new(),
                    json!({"id_token": self.id_token(&nonce), "token_type": "Bearer", "access_token": "unused"})
                        .to_string(),
                )
            }
            _ => (404, String::new(), String::new()),
        };
        let mut stream = reader.into_inner();
        let reply = format!(
            "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n{extra}\r\n{text}",
            text.len()
        );
        stream.write_all(reply.as_bytes()).await?;
        Ok(())
    }

    fn id_token(&self, nonce: &str) -> String {
        let now = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).unwrap_or_default().as_secs();
        let header = URL_SAFE_NO_PAD.encode(json!({"alg": "EdDSA", "kid": "k", "typ": "JWT"}).to_string());
        let claims = json!({"iss": self.issuer, "aud": CLIENT_ID, "sub": "bench-person", "nonce": nonce,
            "exp": now + 300, "iat": now, "auth_time": now, "groups": ["netops"]});
        let payload = URL_SAFE_NO_PAD.encode(claims.to_string());
        let signature = URL_SAFE_NO_PAD.encode(self.key.sign(format!("{header}.{payload}").as_bytes()).as_ref());
        format!("{header}.{payload}.{signature}")
    }
}

fn rand_bytes() -> [u8; 16] {
    let mut b = [0u8; 16];
    ring::rand::SecureRandom::fill(&SystemRandom::new(), &mut b).expect("random bytes");
    b
}

fn url_pairs(text: &str) -> Vec<(String, String)> {
    reqwest::Url::parse(&format!("http://x/?{text}"))
        .map(|u| u.query_pairs().map(|(k, v)| (k.into_owned(), v.into_owned())).collect())
        .unwrap_or_default()
}

/// A person's browser: no redirects followed by itself, the page's session cookie kept.
struct Person {
    http: reqwest::Client,
    cookies: Mutex<Vec<String>>,
}

impl Person {
    fn new() -> anyhow::Result<Person> {
        let http = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build()?;
        Ok(Person { http, cookies: Mutex::default() })
    }

    async fn send(&self, request: reqwest::RequestBuilder) -> anyhow::Result<reqwest::Response> {
        let cookie = self.cookies.lock().unwrap().join("; ");
        let response = request.header("cookie", cookie).send().await?;
        for set in response.headers().get_all("set-cookie") {
            let pair = set.to_str()?.split(';').next().unwrap_or_default().to_string();
            let name = pair.split('=').next().unwrap_or_default().to_string();
            let mut jar = self.cookies.lock().unwrap();
            jar.retain(|c| !c.starts_with(&format!("{name}=")));
            jar.push(pair);
        }
        Ok(response)
    }

    /// Follows the sign-in from `link` back to the page; the page's HTML.
    async fn sign_in(&self, link: &str) -> anyhow::Result<String> {
        let mut url = reqwest::Url::parse(&format!("{link}/sign-in"))?;
        for _ in 0..5 {
            let response = self.send(self.http.get(url.clone())).await?;
            if !response.status().is_redirection() {
                return Ok(response.text().await?);
            }
            let location = response.headers().get("location").context("a redirect without Location")?.to_str()?;
            url = url.join(location)?;
        }
        anyhow::bail!("the sign-in did not come back to the page")
    }

    async fn page(&self, link: &str) -> anyhow::Result<String> {
        let response = self.send(self.http.get(link)).await?;
        anyhow::ensure!(response.status() == 200, "the page answered {}", response.status());
        Ok(response.text().await?)
    }

    async fn approve(&self, link: &str, csrf: &str) -> anyhow::Result<()> {
        let request = self
            .http
            .post(link)
            .header("origin", "null")
            .header("sec-fetch-site", "same-origin")
            .header("content-type", "application/x-www-form-urlencoded")
            .body(format!("csrf={csrf}&decision=approve"));
        let response = self.send(request).await?;
        anyhow::ensure!(response.status() == 303, "the decision answered {}", response.status());
        Ok(())
    }
}

fn attr_after(html: &str, marker: &str, attr: &str) -> Option<String> {
    let rest = &html[html.find(marker)?..];
    let start = rest.find(&format!("{attr}=\""))? + attr.len() + 2;
    Some(rest[start..start + rest[start..].find('"')?].to_string())
}

fn network(i: usize) -> Value {
    json!({"change_type": "network_create", "spec": {"type": "EVPLAN", "name": format!("page-{i}"), "scope": "REGIONAL",
        "location": {"region": "AMER"}, "notifications": [{"type": "ALL", "emails": ["noc@example.com"]}]}})
}

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

/// The page's rows.
/// The page's rows. The form path's baseline is `baseline` (an earlier build) when given, else
/// this `server` without the page.
pub async fn rows(
    server: &Path,
    baseline: Option<&Path>,
    cache: &Path,
    dir: &Path,
    quick: bool,
    t: &mut Table,
) -> anyhow::Result<()> {
    let issuer = provider().await?;
    let permit = dir.join("permit-all.cedar");
    std::fs::write(&permit, "permit (principal, action, resource);\n")?;
    let (permit, cache_s) = (permit.to_str().context("temp dir")?, cache.to_str().context("temp dir")?);
    let audit = dir.join("page.jsonl");
    let page_args = ["--approval-client-id", CLIENT_ID, "--approval-issuer", &issuer, "--policy", permit];
    let mut args =
        vec!["--toolsets", "metros,mutate", "--cache-dir", cache_s, "--audit-log", audit.to_str().context("temp dir")?];
    args.extend(page_args);
    let http = client::spawn_http(server, &args).await?;
    let pid = http.child.id().context("no pid")?;
    let session = LeanSession::open(&http.url).await?;
    let decisions = if quick { 20 } else { 300 };
    let renders = if quick { 50 } else { 2000 };
    let mut links = Vec::with_capacity(decisions);
    for i in 0..decisions {
        let proposal = session.call("fabric_propose_change", network(i)).await?;
        let pending =
            session.call("fabric_confirm_change", json!({"confirm_token": proposal["confirm_token"]})).await?;
        let link = pending["human_confirmation"]["approval_url"].as_str().context("no approval_url")?.to_string();
        links.push(link);
    }
    let person = Person::new()?;
    let first = person.sign_in(&links[0]).await?;
    let csrf = attr_after(&first, "name=\"csrf\"", "value").context("the page offers no decision")?;
    let before = cpu_of(pid).context("no /proc")?;
    for _ in 0..renders {
        person.page(&links[0]).await?;
    }
    let render_us = micros(cpu_of(pid).context("no /proc")? - before) / renders as f64;
    let before = cpu_of(pid).context("no /proc")?;
    for link in &links {
        person.approve(link, &csrf).await?;
    }
    let decision_us = micros(cpu_of(pid).context("no /proc")? - before) / decisions as f64;
    t.context(
        "approval page: server CPU per signed-in render of a request / per decision (its synced audit record included), loopback HTTP",
        format!("{render_us:.0} µs / {decision_us:.0} µs ({renders} renders, {decisions} decisions)"),
    );
    drop(http);

    // the form path, on a server that also serves the page and on one that does not
    let plain_args = ["serve", "--fabric-sim", "--toolsets", "metros,mutate", "--policy", permit];
    let plain_audit = dir.join("form-plain.jsonl");
    let paged_audit = dir.join("form-paged.jsonl");
    let mut plain = plain_args.to_vec();
    plain.extend(["--audit-log", plain_audit.to_str().context("temp dir")?]);
    let mut paged = plain_args.to_vec();
    paged.extend(["--audit-log", paged_audit.to_str().context("temp dir")?, "--approval-client-id", CLIENT_ID]);
    paged.extend(["--approval-issuer", &issuer]);
    let control_audit = dir.join("form-control.jsonl");
    let mut control = plain_args.to_vec();
    control.extend(["--audit-log", control_audit.to_str().context("temp dir")?]);
    // the baseline twice: how far two servers of one build drift apart measured this way
    let (a, _) = spawn(baseline.unwrap_or(server), &plain, Some(cache), Duration::ZERO).await?;
    let (c, _) = spawn(baseline.unwrap_or(server), &control, Some(cache), Duration::ZERO).await?;
    let (b, _) = spawn(server, &paged, Some(cache), Duration::ZERO).await?;
    let (rounds, pairs) = if quick { (1, 10) } else { (20, 100) };
    let mut cpu = [Duration::ZERO; 3];
    for round in 0..rounds {
        // each round in another order, so no server always follows the same one
        let order: [usize; 3] = [[0, 1, 2], [1, 2, 0], [2, 0, 1]][round % 3];
        for k in order {
            let srv = [&a, &c, &b][k];
            let before = cpu_of(srv.pid).context("no /proc")?;
            for i in 0..pairs {
                let proposal = call(&srv.client, "fabric_propose_change", network(round * pairs + i)).await?;
                let token =
                    proposal.structured_content.as_ref().and_then(|v| v["confirm_token"].as_str().map(str::to_owned));
                let out = call(&srv.client, "fabric_confirm_change", json!({"confirm_token": token})).await?;
                anyhow::ensure!(
                    out.structured_content.as_ref().is_some_and(|v| v["human_confirmation"]["status"] == "declined"),
                    "the form was not shown: {:?}",
                    out.structured_content
                );
            }
            cpu[k] += cpu_of(srv.pid).context("no /proc")? - before;
        }
    }
    let n = (rounds * pairs) as f64;
    let [per_a, per_c, per_b] = cpu.map(|d| d.as_secs_f64() * 1e6 / n);
    let ratio = per_b / per_a;
    let figure = match baseline {
        Some(_) => {
            "server CPU per propose + form confirm on a server that also serves the approval page vs the baseline build (stdio, interleaved rounds)"
        }
        None => {
            "server CPU per propose + form confirm on a server that also serves the approval page vs one that does not (stdio, interleaved rounds)"
        }
    };
    t.row(
        figure,
        format!("{ratio:.3}x ({per_b:.0} vs {per_a:.0} µs, {} pairs each)", rounds * pairs),
        "<= 1.02x",
        ratio <= 1.02 || quick,
    );
    t.context(
        "the same for a second server of the baseline (the method's own spread)",
        format!("{:.3}x ({per_c:.0} vs {per_a:.0} µs)", per_c / per_a),
    );
    Ok(())
}
