//! A known client secret and bearer token appear nowhere — not in stdout (the MCP
//! stream the client received), stderr at debug level, tool results or the audit log — across
//! every tool and the error paths.

use crate::harness::*;
use equinix_fabric_sim as fabric_sim;
use equinix_fabric_sim::{Fault, SimConfig};
use serde_json::json;

const SECRET: &str = "known-client-secret-7f3a91";
const BEARER: &str = "known-bearer-token-9c1e44";

#[tokio::test]
async fn secrets_never_leave_the_host() {
    let sim =
        sim(SimConfig { client_secret: SECRET.into(), fixed_token: Some(BEARER.into()), ..Default::default() }).await;
    let env = [("EQUINIX_API_CLIENTSECRET", SECRET), ("RUST_LOG", "debug")];
    let server = Launch::serve()
        .against(&sim)
        .args(&["--toolsets", "all,mutate"])
        .env(&env)
        .client(TestClient::accepting())
        .stdio()
        .await;
    let port = fabric_sim::PORTS[0].0;
    let mut transcript = String::new();
    let calls = vec![
        ("fabric_list_metros", json!({})),
        ("fabric_search_ports", json!({"metro": "DC"})),
        ("fabric_get_port", json!({"port_id": port})),
        ("fabric_get_port", json!({"port_id": "00000000-0000-4000-8000-000000000000"})),
        ("fabric_list_port_vlans", json!({"port_id": port})),
        ("fabric_search_service_profiles", json!({})),
        ("fabric_get_service_profile", json!({"profile_id": fabric_sim::PROFILES[0].uuid})),
        ("fabric_search_connections", json!({})),
        ("fabric_get_connection", json!({"connection_id": fabric_sim::CONNECTIONS[0].0})),
        ("fabric_search_networks", json!({})),
        ("fabric_get_network", json!({"network_id": "00000000-0000-4000-8000-000000000000"})),
        ("fabric_search_service_tokens", json!({})),
        ("fabric_get_service_token", json!({"service_token_id": "00000000-0000-4000-8000-000000000000"})),
        ("fabric_search_prices", json!({"connection_type": "EVPL_VC", "bandwidth": 100})),
        ("fabric_list_metros", json!({"limit": "bad"})),
        ("fabric_confirm_change", json!({"confirm_token": "chg-0123456789abcdef0123456789abcdef"})),
    ];
    for (tool, args) in calls {
        let r = server.call(tool, args).await;
        transcript.push_str(&serde_json::to_string(&r).unwrap());
    }
    sim.inject(Fault::status("GET /fabric/v4/metros", 401));
    let r = server.call("fabric_list_metros", json!({})).await;
    transcript.push_str(&serde_json::to_string(&r).unwrap());
    let spec = json!({"type": "EVPL_VC", "name": "secret-test", "bandwidth": 100,
        "aSide": {"accessPoint": {"type": "COLO", "port": {"uuid": port}, "linkProtocol": {"type": "DOT1Q", "vlanTag": 3001}}},
        "zSide": {"accessPoint": {"type": "COLO", "port": {"uuid": fabric_sim::PORTS[3].0}, "linkProtocol": {"type": "DOT1Q", "vlanTag": 3001}}},
        "notifications": [{"type": "ALL", "emails": ["noc@example.com"]}]});
    let p = server.call("fabric_propose_change", json!({"change_type": "connection_create", "spec": spec})).await;
    transcript.push_str(&serde_json::to_string(&p).unwrap());
    let token = structured(&p)["confirm_token"].clone();
    for _ in 0..2 {
        let c = server.call("fabric_confirm_change", json!({"confirm_token": token})).await;
        transcript.push_str(&serde_json::to_string(&c).unwrap());
    }
    let tools = server.client.list_all_tools().await.unwrap();
    transcript.push_str(&serde_json::to_string(&tools).unwrap());
    let audit = std::fs::read_to_string(&server.audit_log).unwrap();
    let stderr = server.stderr_text();
    assert!(stderr.contains("DEBUG"), "the server logged at debug level");
    assert!(audit.lines().count() >= 3);
    assert!(sim.stats().token_requests >= 2, "the bearer token was really used and refreshed");
    for (what, text) in [("results", &transcript), ("stderr", &stderr), ("audit log", &audit)] {
        assert!(!text.contains(SECRET), "the client secret leaked into {what}");
        assert!(!text.contains(BEARER), "the bearer token leaked into {what}");
    }
    server.stop().await;

    // a rejected secret is reported without echoing it (by a command that reads it and reaches
    // nothing: `inspect`, of the small test component, which it compiles)
    let (ok, stdout, stderr) = run_to_exit(&inspect_probe(), &[("EQUINIX_API_CLIENTSECRET", SECRET)]).await;
    assert!(ok && !stdout.contains(SECRET) && !stderr.contains(SECRET));
}

/// Every secret can come from an owner-only file (systemd's `LoadCredential`, a
/// Kubernetes secret volume): the Fabric client secret and the state key included. A file others
/// can read, and a secret given both ways, stop the start naming what is wrong.
#[tokio::test]
async fn secrets_come_from_owner_only_files() {
    use std::os::unix::fs::PermissionsExt;
    let sim = sim(SimConfig { client_secret: SECRET.into(), ..Default::default() }).await;
    let secret_file = fresh_path("client-secret", "txt");
    std::fs::write(&secret_file, format!("{SECRET}\n")).unwrap();
    std::fs::set_permissions(&secret_file, std::fs::Permissions::from_mode(0o600)).unwrap();
    let key_file = fresh_path("state-key", "txt");
    std::fs::write(&key_file, "bm90LWEtcmVhbC1rZXktYnV0LTMyLWJ5dGVzLWxvbmctZW5vdWdo\n").unwrap();
    std::fs::set_permissions(&key_file, std::fs::Permissions::from_mode(0o400)).unwrap();
    let (secret_path, key_path) = (secret_file.to_str().unwrap(), key_file.to_str().unwrap());
    // no secret in the environment: the harness's is blanked
    let files = [
        ("EQUINIX_API_CLIENTSECRET", ""),
        ("EQUINIX_API_CLIENTSECRET_FILE", secret_path),
        ("EQUINIX_MCP_STATE_KEY_FILE", key_path),
        ("RUST_LOG", "debug"),
    ];
    let server = Launch::serve().against(&sim).env(&files).stdio().await;
    let r = server.call("fabric_list_metros", json!({"limit": 1})).await;
    assert!(!is_error(&r), "the secret from the file signs in: {:?}", r.structured_content);
    let key_from = "confirmation_state_key=--state-key-file";
    wait_until("the banner naming the key's file", async || server.stderr_text().contains(key_from)).await;
    assert!(!server.stderr_text().contains(SECRET), "the secret is not logged");
    drop(server);

    // the same settings as flags
    let flags = ["--client-secret-file", secret_path, "--state-key-file", key_path];
    let server = Launch::serve().against(&sim).env(&[("EQUINIX_API_CLIENTSECRET", "")]).args(&flags).stdio().await;
    assert!(!is_error(&server.call("fabric_list_metros", json!({"limit": 1})).await));
    drop(server);

    let refused = async |env: &[(&str, &str)]| {
        let (ok, _, stderr) = Launch::serve().against(&sim).env(env).run_to_exit().await;
        assert!(!ok, "{stderr}");
        assert!(!stderr.contains(SECRET), "{stderr}");
        stderr
    };
    let both = [("EQUINIX_API_CLIENTSECRET", SECRET), ("EQUINIX_API_CLIENTSECRET_FILE", secret_path)];
    let said = refused(&both).await;
    assert!(said.contains("EQUINIX_API_CLIENTSECRET and --client-secret-file") && said.contains("keep one"), "{said}");
    std::fs::set_permissions(&secret_file, std::fs::Permissions::from_mode(0o644)).unwrap();
    let said = refused(&files).await;
    assert!(said.contains(secret_path) && said.contains("mode 644"), "{said}");
    let short = key_file.with_extension("short");
    std::fs::write(&short, "c2hvcnQ=\n").unwrap();
    std::fs::set_permissions(&short, std::fs::Permissions::from_mode(0o600)).unwrap();
    std::fs::set_permissions(&secret_file, std::fs::Permissions::from_mode(0o600)).unwrap();
    let said = refused(&[files[0], files[1], ("EQUINIX_MCP_STATE_KEY_FILE", short.to_str().unwrap())]).await;
    assert!(said.contains("the state key of --state-key-file decodes to 5 bytes"), "{said}");
}
