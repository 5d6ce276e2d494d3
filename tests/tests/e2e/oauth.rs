//! The HTTP server as an OAuth 2.1 resource server, against a real OpenID provider
//! (`oidc-provider` on loopback, see `harness::oidc`) and the official MCP TypeScript SDK: the
//! Protected Resource Metadata, the 401 and 403 challenges, every way a token can be wrong,
//! scopes deciding the tools, key rotation and an issuer outage, and principals.

use std::time::{Duration, SystemTime};

use crate::harness::*;
use serde_json::{Value, json};

const ALL: &str = "fabric:read fabric:propose fabric:confirm";

/// A server on a port chosen first, so `--public-url` is its real URL.
pub async fn serve(provider: &OidcProvider, extra: &[&str]) -> (HttpServer, String) {
    let port = free_port();
    let public = format!("http://127.0.0.1:{port}/mcp");
    let server = Launch::serve()
        .args(&["--toolsets", "metros,mutate", "--oauth-issuer", &provider.issuer, "--public-url", &public])
        .args(extra)
        .http(&format!("127.0.0.1:{port}"))
        .await;
    (server, public)
}

fn initialize() -> Value {
    initialize_message("raw", "1")
}

/// POSTs one JSON-RPC message with `token`: the status, `WWW-Authenticate` and the body.
async fn post(url: &str, token: Option<&str>, message: &Value) -> (u16, String, Value) {
    let mut request = http()
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .body(message.to_string());
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let answer = request.send().await.unwrap();
    let status = answer.status().as_u16();
    let challenge = answer.headers().get("www-authenticate").map(|v| v.to_str().unwrap().to_string());
    let text = answer.text().await.unwrap();
    (status, challenge.unwrap_or_default(), serde_json::from_str(&text).unwrap_or(Value::String(text)))
}

fn now() -> u64 {
    SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).unwrap().as_secs()
}

async fn tool_names(client: &Client) -> Vec<String> {
    client.list_all_tools().await.unwrap().into_iter().map(|t| t.name.to_string()).collect()
}

#[tokio::test]
async fn the_metadata_is_public_and_a_request_without_a_token_is_told_where_to_sign_in() {
    let provider = OidcProvider::start().await;
    let (server, public) = serve(&provider, &[]).await;
    let origin = public.trim_end_matches("/mcp");
    let metadata_url = format!("{origin}/.well-known/oauth-protected-resource/mcp");
    for url in [metadata_url.clone(), format!("{origin}/.well-known/oauth-protected-resource")] {
        let answer = http().get(&url).send().await.unwrap();
        assert_eq!(answer.status(), 200, "{url}");
        let document: Value = answer.json().await.unwrap();
        assert_eq!(document["resource"], public.as_str(), "{document}");
        assert_eq!(document["authorization_servers"], json!([provider.issuer]));
        assert_eq!(document["scopes_supported"], json!(["fabric:read", "fabric:propose", "fabric:confirm"]));
        assert_eq!(document["bearer_methods_supported"], json!(["header"]));
    }
    let rebound = http().get(&metadata_url).header("host", "rebind.example").send().await.unwrap();
    assert_eq!(rebound.status(), 421, "the metadata has the health endpoints' Host check");

    let twice = http()
        .post(&public)
        .header("authorization", "Bearer a.b.c")
        .header("authorization", "Bearer d.e.f")
        .body(initialize().to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(twice.status(), 400);
    let header = twice.headers()["www-authenticate"].to_str().unwrap().to_string();
    assert_eq!(header, format!("Bearer error=\"invalid_request\", resource_metadata=\"{metadata_url}\""));

    let (status, challenge, body) = post(&public, None, &initialize()).await;
    assert_eq!(status, 401, "{body}");
    assert_eq!(challenge, format!("Bearer resource_metadata=\"{metadata_url}\", scope=\"fabric:read\""));
    assert!(body["message"].as_str().unwrap().contains(&metadata_url), "{body}");
    let _ = server;
}

#[tokio::test]
async fn tokens_signed_with_each_algorithm_sign_in_and_their_scopes_decide_the_tools() {
    let provider = OidcProvider::start().await;
    let (server, public) = serve(&provider, &[]).await;
    for client in ["full-rs256", "full-es256", "full-eddsa"] {
        let token = provider.token(client, ALL, &public).await;
        let mcp = server.connect(Some(&token), TestClient::accepting(), false).await;
        let names = tool_names(&mcp).await;
        assert!(names.iter().any(|n| n == "fabric_propose_change"), "{client}: {names:?}");
        assert!(names.iter().any(|n| n == "fabric_confirm_change"), "{client}: {names:?}");
        let metros = call_on(&mcp, "fabric_list_metros", json!({})).await;
        assert!(!is_error(&metros), "{client}: {:?}", metros.structured_content);
        let _ = mcp.cancel().await;
    }

    // read only: the broker's tools are not offered, and calling one is a 403 naming the scope
    let reader = provider.token("reader", "fabric:read", &public).await;
    let mcp = server.connect(Some(&reader), TestClient::plain(), false).await;
    let names = tool_names(&mcp).await;
    assert!(names.contains(&"fabric_list_metros".to_string()), "{names:?}");
    assert!(!names.iter().any(|n| n.ends_with("_change")), "a read-only token is offered {names:?}");
    let _ = mcp.cancel().await;
    let stateless = server.connect(Some(&reader), TestClient::plain(), true).await;
    let names = tool_names(&stateless).await;
    assert!(!names.iter().any(|n| n.ends_with("_change")), "2026-07-28 lifecycle: offered {names:?}");
    let _ = stateless.cancel().await;
    let call = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                      "params": {"name": "fabric_propose_change", "arguments": {}}});
    let (status, challenge, body) = post(&public, Some(&reader), &call).await;
    assert_eq!(status, 403, "{body}");
    let metadata_url = format!("{}/.well-known/oauth-protected-resource/mcp", public.trim_end_matches("/mcp"));
    assert!(
        challenge.starts_with("Bearer error=\"insufficient_scope\", scope=\"fabric:read fabric:propose\""),
        "{challenge}"
    );
    assert!(challenge.contains(&format!("resource_metadata=\"{metadata_url}\"")), "{challenge}");
    assert_eq!(body["id"], 7);
    assert_eq!(body["error"]["data"]["kind"], "insufficient_scope", "{body}");

    // propose without confirm: the proposal is made, its confirmation is refused before MCP
    let proposer = provider.token("full-es256", "fabric:read fabric:propose", &public).await;
    let mcp = server.connect(Some(&proposer), TestClient::accepting(), false).await;
    let proposed = propose_on(&mcp, "scoped", 1801).await;
    let confirm = json!({"jsonrpc": "2.0", "id": 8, "method": "tools/call",
        "params": {"name": "fabric_confirm_change", "arguments": {"confirm_token": proposed["confirm_token"]}}});
    let (status, challenge, _) = post(&public, Some(&proposer), &confirm).await;
    assert_eq!(status, 403);
    assert!(challenge.contains(&format!("scope=\"{ALL}\"")), "asks for what it holds plus confirm: {challenge}");
    assert_eq!(creates(&server.sim, "connections").await, 0);
    let _ = mcp.cancel().await;

    let audited: Vec<Value> =
        server.audit_entries().into_iter().filter(|e| e["tool"] == "fabric_propose_change").collect();
    assert_eq!(audited.len(), 1, "{audited:?}");
    assert_eq!(audited[0]["principal"], format!("{}#full-es256", provider.issuer), "iss and sub key the principal");
    assert!(server.stderr_text().contains("full-es256"), "the access log shows the subject");
    for token in [&reader, &proposer] {
        let signature = token.rsplit('.').next().unwrap();
        assert!(!server.stderr_text().contains(signature), "a token reached the log");
    }
}

#[tokio::test]
async fn forged_misaddressed_altered_and_expired_tokens_are_refused_as_invalid_tokens() {
    let provider = OidcProvider::start().await;
    let (server, public) =
        serve(&provider, &["--oauth-clock-leeway-secs", "0", "--metrics-listen", "127.0.0.1:0"]).await;
    let claims = |edit: &dyn Fn(&mut Value)| {
        let mut c = json!({"iss": provider.issuer, "aud": public, "sub": "mallory", "iat": now(),
                           "exp": now() + 300, "scope": ALL});
        edit(&mut c);
        c
    };
    // a made-up token the provider's own key signs is accepted: the cases below fail on their one flaw
    let genuine = provider.sign("ec-1", json!({}), claims(&|_| {})).await;
    assert_eq!(post(&public, Some(&genuine), &initialize()).await.0, 200);

    let real = provider.token("full-eddsa", ALL, &public).await;
    let mut parts: Vec<String> = real.split('.').map(str::to_string).collect();
    let mut payload: Value = serde_json::from_slice(&b64(&parts[1])).unwrap();
    payload["sub"] = json!("admin");
    parts[1] = unb64(payload.to_string().as_bytes());
    let altered = parts.join(".");
    let elsewhere = provider.token("full-es256", ALL, "http://127.0.0.1:9/mcp").await;

    let cases: Vec<(&str, String, &str)> = vec![
        (
            "another issuer",
            provider.sign("ec-1", json!({}), claims(&|c| c["iss"] = json!("http://127.0.0.1:9"))).await,
            "another issuer",
        ),
        (
            "another audience, signed",
            provider.sign("ed-1", json!({}), claims(&|c| c["aud"] = json!("http://127.0.0.1:9/mcp"))).await,
            "audience",
        ),
        ("another audience, from the provider", elsewhere, "audience"),
        ("expired", provider.sign("rsa-1", json!({}), claims(&|c| c["exp"] = json!(now() - 5))).await, "expired"),
        (
            "not yet valid",
            provider.sign("rsa-1", json!({}), claims(&|c| c["nbf"] = json!(now() + 120))).await,
            "not valid yet",
        ),
        ("crit", provider.sign("ec-1", json!({"crit": ["exp"]}), claims(&|_| {})).await, "`crit`"),
        ("alg none", provider.sign("ec-1", json!({"alg": "none"}), claims(&|_| {})).await, "unsigned"),
        (
            "HS256 keyed by the public key",
            provider.sign("rsa-1", json!({"alg": "HS256"}), claims(&|_| {})).await,
            "HMAC",
        ),
        ("an unpublished key", provider.sign("ed-2", json!({}), claims(&|_| {})).await, "names no signing key"),
        ("a real token altered", altered, "does not verify"),
        (
            "an ID token for this audience",
            provider
                .sign("ec-1", json!({"typ": "JWT"}), claims(&|c| c["at_hash"] = json!("77QmUPtjPfzWtF2AnpK9RQ")))
                .await,
            "ID token",
        ),
        ("not a JWT", "not-a-jwt-but-long-enough-to-look-like-a-token".into(), "nor a JWT"),
    ];
    for (case, token, says) in &cases {
        let (status, challenge, body) = post(&public, Some(token), &initialize()).await;
        assert_eq!(status, 401, "{case}: {body}");
        assert!(challenge.contains("error=\"invalid_token\""), "{case}: {challenge}");
        assert!(challenge.contains("resource_metadata=\""), "{case}: {challenge}");
        assert!(body["message"].as_str().unwrap().contains(says), "{case}: {body}");
        assert_eq!(body["error"], "invalid_token");
    }

    // a real token past its two seconds
    let short = provider.token("short", ALL, &public).await;
    assert_eq!(post(&public, Some(&short), &initialize()).await.0, 200);
    // a sleep: the token's `exp` is real time at the provider, and the server checks it against
    // its own wall clock with no leeway here
    tokio::time::sleep(Duration::from_millis(3100)).await;
    let (status, _, body) = post(&public, Some(&short), &initialize()).await;
    assert_eq!(status, 401);
    assert!(body["message"].as_str().unwrap().contains("expired"), "{body}");

    let log = server.stderr_text();
    let at = log.find("Prometheus metrics at http://").expect("a metrics line") + "Prometheus metrics at ".len();
    let metrics_url = log[at..].split_whitespace().next().unwrap();
    let text = http().get(metrics_url).send().await.unwrap().text().await.unwrap();
    let refused = format!("equinix_mcp_auth_refusals_total{{reason=\"invalid_token\"}} {}", cases.len() + 1);
    assert!(text.contains(&refused), "{refused} in:\n{text}");
    for (case, token, _) in &cases {
        assert!(!log.contains(token.as_str()), "{case}: the token reached the log");
    }
    assert!(!log.contains(&short) && !log.contains(&genuine));
}

fn b64(text: &str) -> Vec<u8> {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(text).unwrap()
}

fn unb64(bytes: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

#[tokio::test]
async fn a_rotated_key_is_fetched_once_made_up_kids_cost_nothing_and_an_outage_keeps_the_known_keys() {
    let provider = OidcProvider::start().await;
    let (_server, public) = serve(&provider, &[]).await;
    let before = provider.jwks_requests().await;
    let claims = json!({"iss": provider.issuer, "aud": public, "sub": "rotated", "exp": now() + 300, "scope": ALL});

    // the provider starts signing with a new key: its first token makes the keys be fetched again
    provider.publish_outsider().await;
    let rotated = provider.sign("ed-2", json!({}), claims.clone()).await;
    let (status, _, body) = post(&public, Some(&rotated), &initialize()).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(provider.jwks_requests().await, before + 1);

    // made-up key ids right after: refused without another fetch
    for i in 0..20 {
        let forged = provider.sign("ed-1", json!({"kid": format!("made-up-{i}")}), claims.clone()).await;
        assert_eq!(post(&public, Some(&forged), &initialize()).await.0, 401);
    }
    assert_eq!(provider.jwks_requests().await, before + 1, "made-up kids are rate-limited");

    // the provider goes away: tokens signed with known keys still work
    let known = provider.token("full-rs256", ALL, &public).await;
    provider.stop().await;
    assert_eq!(post(&public, Some(&known), &initialize()).await.0, 200);
    assert_eq!(post(&public, Some(&rotated), &initialize()).await.0, 200);
}

#[tokio::test]
async fn a_withdrawn_key_stops_vouching_for_tokens_already_seen() {
    let provider = OidcProvider::start().await;
    let (_server, public) = serve(&provider, &[]).await;
    let claims = json!({"iss": provider.issuer, "aud": public, "sub": "withdrawn", "exp": now() + 300, "scope": ALL});
    // a key known from the start, so the fetch below is the first an unknown kid asks for
    let signed = provider.sign("ed-1", json!({}), claims.clone()).await;
    assert_eq!(post(&public, Some(&signed), &initialize()).await.0, 200);
    assert_eq!(post(&public, Some(&signed), &initialize()).await.0, 200, "its second request is a cache hit");
    provider.withdraw("ed-1").await;
    let unknown = provider.sign("ec-1", json!({"kid": "not-published"}), claims).await;
    let before = provider.jwks_requests().await;
    assert_eq!(post(&public, Some(&unknown), &initialize()).await.0, 401);
    assert_eq!(provider.jwks_requests().await, before + 1);
    let (status, _, body) = post(&public, Some(&signed), &initialize()).await;
    assert_eq!(status, 401, "a token of a withdrawn key was still accepted: {body}");
    assert!(body["message"].as_str().unwrap().contains("names no signing key"), "{body}");
}

#[tokio::test]
async fn an_issuer_that_cannot_be_read_or_names_another_issuer_stops_the_start() {
    let closed = format!("http://127.0.0.1:{}", free_port());
    let public = format!("http://127.0.0.1:{}/mcp", free_port());
    let start = |issuer: String, public: String| async move {
        Launch::serve()
            .args(&["--transport", "http", "--oauth-issuer", &issuer, "--public-url", &public])
            .run_to_exit()
            .await
    };
    let (ok, _, stderr) = start(closed.clone(), public.clone()).await;
    assert!(!ok);
    assert!(stderr.contains(&format!("--oauth-issuer {closed}: no issuer metadata")), "{stderr}");

    let provider = OidcProvider::start().await;
    let respelled = provider.issuer.replace("127.0.0.1", "localhost");
    let (ok, _, stderr) = start(respelled, public.clone()).await;
    assert!(!ok);
    assert!(stderr.contains(&format!("is for issuer \"{}\"", provider.issuer)), "{stderr}");

    let (ok, _, stderr) = start(provider.issuer.clone(), "http://mcp.example/mcp".into()).await;
    assert!(!ok);
    assert!(stderr.contains("--public-url \"http://mcp.example/mcp\" must be https"), "{stderr}");
    let (ok, _, stderr) = start(provider.issuer.clone(), public.replace("/mcp", "")).await;
    assert!(!ok);
    assert!(stderr.contains("give it in its canonical form"), "{stderr}");
    let (ok, _, stderr) =
        Launch::serve().args(&["--transport", "http", "--oauth-issuer", &provider.issuer]).run_to_exit().await;
    assert!(!ok && stderr.contains("--public-url"), "{stderr}");
}

#[tokio::test]
async fn a_label_and_a_subject_are_different_principals_on_one_server() {
    let provider = OidcProvider::start().await;
    let label_token = "label-0123456789abcdef0123456789abcdef";
    let tokens = token_file(&[("full-es256", label_token)]);
    let (server, public) = serve(&provider, &["--auth-token-file", tokens.to_str().unwrap()]).await;
    let subject =
        server.connect(Some(&provider.token("full-es256", ALL, &public).await), TestClient::accepting(), false).await;
    let label = server.connect(Some(label_token), TestClient::accepting(), false).await;
    let proposed = propose_on(&subject, "subjects", 1802).await;
    let r = call_on(&label, "fabric_confirm_change", json!({"confirm_token": proposed["confirm_token"]})).await;
    assert_eq!(structured(&r)["error"]["kind"], "unknown_token", "the label confirmed the subject's proposal");
    let r = call_on(&subject, "fabric_confirm_change", json!({"confirm_token": proposed["confirm_token"]})).await;
    assert_eq!(structured(&r)["executed"], true, "{:?}", r.structured_content);
    assert_eq!(creates(&server.sim, "connections").await, 1);
    let principals: Vec<Value> = server.audit_entries().iter().filter_map(|e| e.get("principal").cloned()).collect();
    assert!(principals.contains(&json!("full-es256")), "{principals:?}");
    assert!(principals.contains(&json!(format!("{}#full-es256", provider.issuer))), "{principals:?}");
    let _ = (subject.cancel().await, label.cancel().await);
}

#[tokio::test]
async fn the_official_mcp_sdk_follows_the_401_to_the_provider_and_calls_a_tool() {
    let provider = OidcProvider::start().await;
    let (server, public) = serve(&provider, &[]).await;
    let mut client = tokio::process::Command::new(node())
        .arg(oauth_dir().join("mcp-client.mjs"))
        .args([&public, "mcp-sdk", "secret-mcp-sdk", "fabric_list_metros"])
        .args(["--scope", "fabric:read", "--expected-issuer", &provider.issuer])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    // shown if anything below fails, a timeout included
    let stderr = crate::harness::printed::Printed::new("the SDK client (tests/oauth/mcp-client.mjs), on stderr");
    stderr.collect(client.stderr.take().unwrap());
    let mut stdout = Vec::new();
    let status = tokio::time::timeout(Duration::from_secs(30), async {
        tokio::io::AsyncReadExt::read_to_end(&mut client.stdout.take().unwrap(), &mut stdout).await.unwrap();
        client.wait().await.unwrap()
    })
    .await
    .expect("the SDK client finished within 30 s");
    assert!(status.success(), "the SDK client exited with {status}");
    let said: Value = serde_json::from_slice(&stdout)
        .unwrap_or_else(|e| panic!("the SDK client printed no JSON ({e}): {}", String::from_utf8_lossy(&stdout)));
    let requests = said["requests"].as_array().unwrap();
    let first = &requests[0];
    assert_eq!((first["method"].as_str(), first["status"].as_u64()), (Some("POST"), Some(401)), "{said}");
    let metadata_url = format!("{}/.well-known/oauth-protected-resource/mcp", public.trim_end_matches("/mcp"));
    assert!(requests.iter().any(|r| r["url"] == metadata_url && r["status"] == 200), "{said}");
    let token_request =
        requests.iter().find(|r| r["url"] == provider.token_endpoint.as_str()).expect("a token request");
    assert_eq!(token_request["status"], 200, "{said}");
    assert_eq!(token_request["form"]["resource"], public.as_str(), "the token is asked for this server (RFC 8707)");
    let tools: Vec<&str> = said["tools"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
    assert!(tools.contains(&"fabric_list_metros") && !tools.contains(&"fabric_propose_change"), "{tools:?}");
    assert_eq!(said["call"]["isError"], false, "{said}");
    assert!(said["call"]["text"].as_str().unwrap().contains("metro"), "{said}");
    assert!(server.stderr_text().contains("mcp-sdk"), "the access log names the SDK client's subject");
}

#[tokio::test]
async fn a_component_cannot_lend_a_read_only_token_its_own_propose_or_confirm() {
    let provider = OidcProvider::start().await;
    let port = free_port();
    let public = format!("http://127.0.0.1:{port}/mcp");
    let probe = probe_component();
    let server = Launch::serve()
        .args(&["--component", probe.to_str().unwrap(), "--toolsets", "probe,echo,mutate"])
        .args(&["--oauth-issuer", &provider.issuer, "--public-url", &public])
        .http(&format!("127.0.0.1:{port}"))
        .await;
    let body = connection_spec("lent-grants", 1803);
    // the probe's own tools are named like nothing the host knows, so they pass as reads: the
    // capabilities still hold the token's grants
    let reader = provider.token("reader", "fabric:read", &public).await;
    let mcp = server.connect(Some(&reader), TestClient::accepting(), false).await;
    let r = call_on(&mcp, "rogue_propose", json!({"body": body})).await;
    let text = serde_json::to_string(&r).unwrap();
    assert!(text.contains("does not grant proposing"), "{text}");
    // nor does the mutate tool named like a read one get a dry run sent
    let r = call_on(&mcp, "fabric_list_metros", json!({"body": body})).await;
    let text = serde_json::to_string(&r).unwrap();
    assert!(text.contains("does not grant proposing"), "{text}");
    let dry_runs = |stats: &Value| stats["dry_runs"]["connections"].as_u64().unwrap_or(0);
    assert_eq!(dry_runs(&sim_stats(&server.sim).await), 0, "a read-only token had Fabric validate a create");
    let _ = mcp.cancel().await;

    let proposer = provider.token("full-es256", "fabric:read fabric:propose", &public).await;
    let mcp = server.connect(Some(&proposer), TestClient::accepting(), false).await;
    let proposed = structured(&call_on(&mcp, "rogue_propose", json!({"body": body})).await);
    let token = proposed["token"].as_str().unwrap_or_else(|| panic!("{proposed}"));
    let confirmed = structured(&call_on(&mcp, "rogue_confirm", json!({"token": token, "body": body})).await);
    assert!(confirmed["refused"].as_str().unwrap_or_default().contains("does not grant confirming"), "{confirmed}");
    assert_eq!(creates(&server.sim, "connections").await, 0);
    let _ = mcp.cancel().await;
}

#[tokio::test]
async fn the_policy_judges_an_oauth_principal_by_its_issuer_and_subject_not_a_lookalike_label() {
    use crate::policy::{policy_file, readme_policy};
    let provider = OidcProvider::start().await;
    let network = json!({"change_type": "network_create", "spec": {"type": "EVPLAN", "name": "n-1", "scope": "REGIONAL",
        "location": {"region": "AMER"}, "notifications": [{"type": "ALL", "emails": ["noc@example.com"]}]}});
    // the README's set lets only the token label `netops` create networks
    let as_written = policy_file(&readme_policy());
    let for_subject = policy_file(&readme_policy().replace("\"netops\"", &format!("\"{}#netops\"", provider.issuer)));
    for (policy, allowed) in [(as_written, false), (for_subject, true)] {
        let (server, public) = serve(&provider, &["--policy", policy.to_str().unwrap()]).await;
        let claims = json!({"iss": provider.issuer, "aud": public, "sub": "netops", "exp": now() + 300, "scope": ALL});
        let token = provider.sign("ec-1", json!({}), claims).await;
        let mcp = server.connect(Some(&token), TestClient::accepting(), false).await;
        let r = structured(&call_on(&mcp, "fabric_propose_change", network.clone()).await);
        match allowed {
            true => assert!(r["confirm_token"].is_string(), "{r}"),
            false => assert_eq!(r["error"]["kind"], "policy_denied", "an OAuth subject passed for a label: {r}"),
        }
        let _ = mcp.cancel().await;
    }
}
