//! A real OpenID provider on loopback: `tests/oauth/provider.mjs` runs the npm package
//! `oidc-provider` (installed by `.ci/install-node`, on the project's own Node), which issues JWT
//! access tokens through the client-credentials grant with resource indicators, and adds
//! test-only routes to sign made-up tokens with its own keys, publish a key later and count
//! requests.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::AsyncBufReadExt;

use super::printed::Printed;
use super::process::{fresh_audit_path, node, node_fixture};

/// The fixture's directory (`tests/oauth`).
pub fn oauth_dir() -> PathBuf {
    node_fixture("oauth", "oidc-provider")
}

pub struct OidcProvider {
    child: tokio::process::Child,
    /// `http://127.0.0.1:PORT`, exactly as the provider writes it.
    pub issuer: String,
    pub token_endpoint: String,
    http: reqwest::Client,
    /// Its notices (oidc-provider writes them to stderr), shown if the test fails.
    _printed: Printed,
}

/// A free loopback port, for a server that must know its own URL before it listens. It lies below
/// the kernel's ephemeral range, so no `bind(0)` can take it between this check and the server's
/// own bind (the simulator a `--fabric-sim` server starts first once did, with a port from
/// `bind(0)`), and each is handed out once per test process.
pub fn free_port() -> u16 {
    use std::sync::atomic::{AtomicU32, Ordering};
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let low = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|t| t.split_whitespace().next()?.parse::<u32>().ok())
        .unwrap_or(32768);
    let span = 8000.min(low.saturating_sub(1024));
    let seed =
        std::process::id() ^ std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().subsec_nanos();
    let _ = NEXT.compare_exchange(0, seed % span.max(1), Ordering::SeqCst, Ordering::SeqCst);
    for _ in 0..span.max(1) {
        let port = (low - span + NEXT.fetch_add(1, Ordering::SeqCst) % span.max(1)) as u16;
        if std::net::TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
    panic!("no free loopback port below the ephemeral range {low}")
}

/// The providers' signing keys, made once per test run (`provider.mjs --make-keys`): making an
/// RSA key is a search for random primes whose time has a long tail, and under the suite's load
/// one such search at every provider start once took a start past 30 s.
async fn signing_keys() -> &'static PathBuf {
    static KEYS: tokio::sync::OnceCell<PathBuf> = tokio::sync::OnceCell::const_new();
    KEYS.get_or_init(|| async {
        let path = fresh_audit_path().with_extension("oidc-keys.json");
        let out = tokio::process::Command::new(node())
            .arg(oauth_dir().join("provider.mjs"))
            .arg("--make-keys")
            .arg(&path)
            .stdin(Stdio::null())
            .output()
            .await
            .expect("node runs");
        assert!(out.status.success(), "provider.mjs --make-keys: {}", String::from_utf8_lossy(&out.stderr));
        path
    })
    .await
}

impl OidcProvider {
    pub async fn start() -> OidcProvider {
        let mut child = tokio::process::Command::new(node())
            .arg(oauth_dir().join("provider.mjs"))
            .arg("--keys")
            .arg(signing_keys().await)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("node runs");
        let printed = Printed::new("the identity provider (tests/oauth/provider.mjs)");
        printed.collect(child.stderr.take().unwrap());
        let mut lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
        let said = tokio::time::timeout(Duration::from_secs(30), lines.next_line()).await;
        let Ok(Ok(Some(line))) = said else {
            panic!("the provider did not say where it listens within 30 s ({said:?})");
        };
        let said: Value = serde_json::from_str(&line).unwrap();
        equinix_mcp::install_crypto_provider();
        OidcProvider {
            child,
            issuer: said["issuer"].as_str().unwrap().to_string(),
            token_endpoint: said["token_endpoint"].as_str().unwrap().to_string(),
            http: reqwest::Client::new(),
            _printed: printed,
        }
    }

    /// The token endpoint's answer to a client-credentials request.
    pub async fn token_answer(&self, client: &str, scope: &str, resource: &str) -> (u16, Value) {
        let form: String =
            form_pairs(&[("grant_type", "client_credentials"), ("scope", scope), ("resource", resource)]);
        let answer = self
            .http
            .post(&self.token_endpoint)
            .basic_auth(client, Some(format!("secret-{client}")))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(form)
            .send()
            .await
            .unwrap();
        let status = answer.status().as_u16();
        (status, answer.json().await.unwrap())
    }

    /// An access token for `resource` from `client` (see provider.mjs for the clients).
    pub async fn token(&self, client: &str, scope: &str, resource: &str) -> String {
        let (status, answer) = self.token_answer(client, scope, resource).await;
        assert_eq!(status, 200, "{answer}");
        answer["access_token"].as_str().unwrap().to_string()
    }

    /// A JWT signed with the provider's key `kid` (or the unpublished `ed-2`), with `header`
    /// overlaid on `{alg, kid, typ: at+jwt}`.
    pub async fn sign(&self, kid: &str, header: Value, payload: Value) -> String {
        let answer: Value = self
            .http
            .post(format!("{}/__test/sign", self.issuer))
            .json(&json!({"kid": kid, "header": header, "payload": payload}))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        answer["jwt"].as_str().unwrap().to_string()
    }

    /// Adds the outsider key `ed-2` to the published JWK Set.
    pub async fn publish_outsider(&self) {
        let r = self.http.post(format!("{}/__test/publish", self.issuer)).json(&json!({"kid": "ed-2"})).send().await;
        assert!(r.unwrap().status().is_success());
    }

    /// Takes the key `kid` out of the published JWK Set.
    pub async fn withdraw(&self, kid: &str) {
        let r = self.http.post(format!("{}/__test/withdraw", self.issuer)).json(&json!({"kid": kid})).send().await;
        assert!(r.unwrap().status().is_success());
    }

    /// How often the JWK Set was fetched.
    pub async fn jwks_requests(&self) -> u64 {
        let stats: Value =
            self.http.get(format!("{}/__test/stats", self.issuer)).send().await.unwrap().json().await.unwrap();
        stats["jwks_requests"].as_u64().unwrap()
    }

    pub async fn stop(mut self) {
        let _ = self.child.kill().await;
    }
}

fn form_pairs(pairs: &[(&str, &str)]) -> String {
    let mut form = form_urlencoded::Serializer::new(String::new());
    form.extend_pairs(pairs.iter().filter(|(_, v)| !v.is_empty()));
    form.finish()
}
