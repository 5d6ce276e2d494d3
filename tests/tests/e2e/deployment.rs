//! `docs/deploying.md`'s team deployment, run as written on loopback. Its secrets
//! script makes the credentials, its config file and the four-eyes policy it points at are the
//! servers' settings, and `packaging/systemd/equinix-mcp.service` gives each replica its command
//! line, environment and credentials (copied as systemd copies them, `%d`, `%S` and `%C` filled
//! in), and each replica runs as an unprivileged user (`nobody` when the tests run as root, as
//! `DynamicUser` would), reaching only its own folders, its credentials and the settings. Against the simulator, the `oidc-provider` fixture and a real Redis primary with two
//! replicas and three Sentinels, two replicas over HTTPS end on: a proposal made on one and
//! confirmed on the other, the approval page's link served, `/readyz` ready on both, and
//! `audit verify` passing on each log with its signed checkpoints. The page's alert rules pass
//! `promtool check rules` and the unit `systemd-analyze verify` (systemd does not run as PID 1
//! on these machines, so the unit is not started by systemd itself).
//!
//! What is replaced, and only this: the `/etc/equinix-mcp/` prefix (a temporary folder), the
//! names and addresses of the example (the public URL, the identity provider, the Sentinels,
//! the Fabric client id and the approval client's id, which are the fixtures'), the listen
//! addresses (given as flags, which win over the file).

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::harness::sentinel::{Cluster, PASSWORD};
use crate::harness::*;
use equinix_fabric_sim as fabric_sim;
use serde_json::json;
use tokio::task::block_in_place;

const DEPLOYING: &str = include_str!("../../../docs/deploying.md");
const UNIT: &str = include_str!("../../../packaging/systemd/equinix-mcp.service");

/// The body of the code block whose info string is `lang tag`.
fn block(lang: &str, tag: &str) -> String {
    let open = format!("```{lang} {tag}\n");
    let at = DEPLOYING.find(&open).unwrap_or_else(|| panic!("docs/deploying.md has a ```{lang} {tag} block"));
    let body = &DEPLOYING[at + open.len()..];
    body[..body.find("```").unwrap()].to_string()
}

/// The values of every `key=` line of the unit, in order.
fn unit_lines(key: &str) -> Vec<String> {
    UNIT.lines().filter_map(|l| l.strip_prefix(&format!("{key}="))).map(str::to_string).collect()
}

fn mode(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// What systemd does for one replica of the unit: copies each `LoadCredential=` source into a
/// credentials folder of its own (mode 400), makes the state folder, and fills in the
/// `Environment=` lines. Returns the environment.
fn unit_environment(etc: &Path, replica: &Path, user: Option<u32>) -> Vec<(String, String)> {
    let credentials = replica.join("credentials");
    let state = replica.join("state");
    let cache = replica.join("cache");
    std::fs::create_dir_all(&credentials).unwrap();
    std::fs::create_dir_all(state.join("equinix-mcp")).unwrap();
    std::fs::create_dir_all(cache.join("equinix-mcp")).unwrap();
    for open in [replica, &state, &cache] {
        mode(open, 0o755);
    }
    // StateDirectoryMode=0700, CacheDirectoryMode=0700, the credentials readable by the service alone
    for private in [state.join("equinix-mcp"), cache.join("equinix-mcp"), credentials.clone()] {
        mode(&private, 0o700);
        std::os::unix::fs::chown(&private, user, user).unwrap();
    }
    for line in unit_lines("LoadCredential") {
        let (id, source) = line.split_once(':').unwrap();
        let source = on(etc, source);
        let copy = credentials.join(id);
        std::fs::copy(&source, &copy).unwrap_or_else(|e| panic!("credential {id} from {}: {e}", source.display()));
        mode(&copy, 0o400);
        std::os::unix::fs::chown(&copy, user, user).unwrap();
    }
    unit_lines("Environment")
        .into_iter()
        .map(|line| {
            let (name, value) = line.split_once('=').unwrap();
            let value = value
                .replace("%d", credentials.to_str().unwrap())
                .replace("%S", state.to_str().unwrap())
                .replace("%C", cache.to_str().unwrap());
            (name.to_string(), value)
        })
        .collect()
}

/// `text` with the page's `/etc/equinix-mcp/` at `etc`.
fn on_etc(etc: &Path, text: &str) -> String {
    text.replace("/etc/equinix-mcp/", &format!("{}/", etc.display()))
}

fn on(etc: &Path, path: &str) -> PathBuf {
    PathBuf::from(on_etc(etc, path))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_team_deployment_of_docs_deploying_runs_as_written() {
    let dir = tempfile::tempdir().unwrap();
    // the service's user (DynamicUser) reaches its own folders and the settings, nothing more
    mode(dir.path(), 0o755);
    let user = crate::harness::account::service_user();
    let etc = dir.path().join("etc");
    let provider = OidcProvider::start().await;
    let cluster = block_in_place(Cluster::start);
    // the nodes as docs/store.md configures them
    for node in &cluster.nodes {
        for setting in ["min-replicas-to-write 2", "save \"\"", "appendonly no"] {
            node.query(&format!("CONFIG SET {setting}")).unwrap();
        }
    }
    let sim = sim(fabric_sim::SimConfig::default()).await;
    let (tls_cert, tls_key, pem) = certificate(dir.path(), "operator-ca");
    let receiver = crate::notifications::Receiver::start(crate::notifications::Answers::Status(200)).await;

    // 1. the secrets script, as root would run it
    let script = on_etc(&etc, &block("sh", "secrets.sh"));
    let ran = std::process::Command::new("sh")
        .args(["-eu", "-c", &script])
        .env("FABRIC_CLIENT_SECRET", fabric_sim::SIM_CLIENT_SECRET)
        .env("APPROVAL_CLIENT_SECRET", "approval-client-secret-9f1c")
        .env("REDIS_PASSWORD", PASSWORD)
        .env("TLS_KEY", &tls_key)
        .env("TLS_CERT", &tls_cert)
        .output()
        .unwrap();
    assert!(ran.status.success(), "secrets.sh: {}", String::from_utf8_lossy(&ran.stderr));
    for secret in std::fs::read_dir(etc.join("credentials")).unwrap() {
        let meta = secret.unwrap().metadata().unwrap();
        assert_eq!(meta.permissions().mode() & 0o777, 0o600, "every secret file is owner-only");
    }
    // a public approval client: no secret, so no (empty) file that would stop the start
    let public_client = dir.path().join("public-client");
    let ran = std::process::Command::new("sh")
        .args(["-eu", "-c", &on_etc(&public_client, &block("sh", "secrets.sh"))])
        .env("FABRIC_CLIENT_SECRET", fabric_sim::SIM_CLIENT_SECRET)
        .env("REDIS_PASSWORD", PASSWORD)
        .env("TLS_KEY", &tls_key)
        .env("TLS_CERT", &tls_cert)
        .output()
        .unwrap();
    assert!(ran.status.success(), "secrets.sh without a client secret: {}", String::from_utf8_lossy(&ran.stderr));
    assert!(!public_client.join("credentials/approval-client-secret").exists());
    for public in ["tls-cert.pem", "audit-signing-key.pub.pem"] {
        let meta = std::fs::metadata(etc.join(public)).unwrap();
        assert_eq!(meta.permissions().mode() & 0o777, 0o644, "{public} is no secret: the service's user reads it");
    }

    // 2. the settings file; 3. the policy it names
    let port_a = free_port();
    let public = format!("https://127.0.0.1:{port_a}/mcp");
    let config = on_etc(&etc, &block("toml", "config.toml"))
        .replace("https://mcp.example.internal/mcp", &public)
        .replace("https://sso.example.internal/realms/netops", &provider.issuer)
        .replace("equinix-mcp-approval", "approval-page")
        .replace("your-fabric-client-id", fabric_sim::SIM_CLIENT_ID)
        .replace("https://hooks.example.internal/equinix-mcp", &receiver.url)
        .replace(
            "redis+sentinel://redis-1.internal:26379,redis-2.internal:26379,redis-3.internal:26379/equinix-mcp/0",
            &cluster.url(),
        );
    std::fs::write(etc.join("config.toml"), &config).unwrap();
    std::fs::write(etc.join("four-eyes.cedar"), crate::approval_page::four_eyes_policy()).unwrap();

    // 4. the unit's command line and environment, one replica per "host"
    let exec = unit_lines("ExecStart").pop().unwrap();
    let mut words: Vec<String> = exec.split_whitespace().skip(1).map(|w| on_etc(&etc, w)).collect();
    words.extend(["--metrics-listen".into(), "127.0.0.1:0".into()]);
    let words: Vec<&str> = words.iter().map(String::as_str).collect();
    let mut replicas = Vec::new();
    for (name, port) in [("a", port_a), ("b", free_port())] {
        let mut env = unit_environment(&etc, &dir.path().join(name), user);
        // the harness's own secret for the simulator: this deployment's comes from its file
        env.push(("EQUINIX_API_CLIENTSECRET".into(), String::new()));
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        let server =
            Launch::command(&words).against(&sim).env(&env).run_as(user).http(&format!("127.0.0.1:{port}")).await;
        assert!(server.url.starts_with("https://"), "{}", server.url);
        let said = server.stderr_text();
        // the page's log format is JSON lines
        let banner =
            ["\"confirmation_state_key\":\"--state-key-file\"", "acknowledged by 2 replicas", "four-eyes.cedar"];
        for field in banner {
            assert!(said.contains(field), "{field} in {said}");
        }
        assert!(!said.contains("\"level\":\"WARN\""), "the deployment starts without a warning: {said}");
        // the page's address as browsers reach it: the public URL's origin, on both replicas
        assert!(said.contains(&format!("approval page at https://127.0.0.1:{port_a}/approve/\"")), "{said}");
        assert!(!said.contains("%E2%80%A6"), "{said}");
        replicas.push((server, dir.path().join(name).join("state/equinix-mcp")));
    }
    let (a, b) = (&replicas[0].0, &replicas[1].0);

    // a proposal made on one replica, confirmed on the other: the page's link, served
    let token = provider.token("full-es256", "fabric:read fabric:propose fabric:confirm", &public).await;
    let on_a = connect_trusting(&a.url, &pem, &token, TestClient::plain()).await;
    let on_b = connect_trusting(&b.url, &pem, &token, TestClient::plain()).await;
    let proposal = propose_on(&on_a, "team-deployment", 3401).await;
    let r = call_on(&on_b, "fabric_confirm_change", json!({"confirm_token": proposal["confirm_token"]})).await;
    let pending = structured(&r);
    assert_eq!(pending["human_confirmation"]["status"], "approval_pending", "{pending}");
    let link = pending["human_confirmation"]["approval_url"].as_str().unwrap().to_string();
    assert!(link.starts_with(&format!("https://127.0.0.1:{port_a}/approve/")), "{link}");
    let page = trusting(&pem).get(&link).send().await.unwrap();
    assert_eq!(page.status().as_u16(), 200);
    assert!(page.text().await.unwrap().contains("id=\"sign-in\""), "the page asks a person to sign in");
    assert_eq!(connection_creates(&sim), 0, "nothing is created before a person approves");
    // the receiver of the config file's webhook: one notice of the waiting change, whichever
    // replica, signed with the secrets script's key as approval-page.md tells a receiver to check
    let notices = receiver.wait_for("change_waiting", 1).await;
    // (the key file's whole contents, as the docs' receiver reads it: no harness trimming)
    let key = std::fs::read(etc.join("credentials/notify-key")).unwrap();
    let signature = notices[0].header("x-equinix-mcp-signature");
    assert!(crate::notifications::verify(signature, &notices[0].body, &key, crate::notifications::now()));
    assert!(crate::notifications::verified_as_the_docs_say(&notices[0], &etc.join("credentials/notify-key")));
    assert_eq!(notices[0].json()["approval_url"], link.as_str(), "{}", notices[0].body);
    // the inbox, where the second engineer finds it, behind the same origin
    let inbox = trusting(&pem).get(format!("https://127.0.0.1:{port_a}/approve")).send().await.unwrap();
    assert_eq!(inbox.status().as_u16(), 200);
    assert!(inbox.text().await.unwrap().contains("href=\"/approve/sign-in\""), "the inbox asks a person to sign in");
    for (server, _) in &replicas {
        let readyz = server.url.replace("/mcp", "/readyz");
        let answer = trusting(&pem).get(&readyz).send().await.unwrap();
        assert_eq!((answer.status().as_u16(), answer.text().await.unwrap()), (200, "ready\n".to_string()));
    }
    drop((on_a, on_b));

    // 6. each audit log verifies against its signed checkpoints (written at the latest on stop)
    let public_key = etc.join("audit-signing-key.pub.pem");
    let folders: Vec<String> = replicas.iter().map(|(_, state)| state.display().to_string()).collect();
    for (mut server, state) in replicas {
        server.terminate();
        assert!(server.child.wait().await.unwrap().success());
        let (log, checkpoints) = (state.join("audit.jsonl"), state.join("checkpoints.jsonl"));
        if let Some(user) = user {
            let owner = std::os::unix::fs::MetadataExt::uid(&std::fs::metadata(&log).unwrap());
            assert_eq!(owner, user, "the replica ran as the service's user");
        }
        let verified = std::process::Command::new(binary())
            .args(["audit", "verify", log.to_str().unwrap(), "--checkpoints", checkpoints.to_str().unwrap()])
            .args(["--public-key", public_key.to_str().unwrap()])
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&verified.stdout).to_string() + &String::from_utf8_lossy(&verified.stderr);
        assert!(verified.status.success(), "audit verify {}: {said}", log.display());
    }
    assert_eq!(receiver.of("change_waiting").len(), 1, "one notice for two replicas");
    // the reviewer's one command over both replicas' folders, as the page gives it
    let story = std::process::Command::new(binary())
        .args(["audit", "changes", &folders[0], &folders[1], "--public-key", public_key.to_str().unwrap()])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&story.stdout).to_string() + &String::from_utf8_lossy(&story.stderr);
    assert!(story.status.success(), "audit changes: {said}");
    assert!(
        said.contains("1 changes, 0 created, 0 decisions stood (0 refused, not kept), 2 chains; 0 problems"),
        "{said}"
    );
    provider.stop().await;
    drop(cluster);
}

/// The page's alert rules are ones Prometheus loads.
#[test]
fn the_alert_rules_of_docs_deploying_pass_promtool() {
    let dir = tempfile::tempdir().unwrap();
    let rules = dir.path().join("alerts.yml");
    std::fs::write(&rules, block("yaml", "alerts.yml")).unwrap();
    let promtool = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/tools/promtool");
    assert!(promtool.exists(), "{} is missing: run .ci/install-promtool", promtool.display());
    let out = std::process::Command::new(promtool).args(["check", "rules", rules.to_str().unwrap()]).output().unwrap();
    let said = String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && said.contains("SUCCESS: 5 rules found"), "{said}");
    // every metric the rules read is one the server exports (docs_match checks those are documented)
    let known: BTreeMap<&str, ()> = DEPLOYING
        .lines()
        .filter_map(|l| l.trim().strip_prefix("| `equinix_mcp_"))
        .filter_map(|l| l.split('`').next())
        .map(|name| (name, ()))
        .collect();
    for used in block("yaml", "alerts.yml").split("equinix_mcp_").skip(1) {
        let name: String = used.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
        assert!(known.contains_key(name.as_str()), "equinix_mcp_{name} is no documented metric");
    }
}

/// The unit is one systemd takes: `systemd-analyze verify` prints nothing (it reports an unknown
/// setting without failing, so its output is checked too), and every variable the unit sets is
/// one the server reads.
#[test]
fn the_systemd_unit_verifies_and_sets_only_what_the_server_reads() {
    let dir = tempfile::tempdir().unwrap();
    let unit = dir.path().join("equinix-mcp.service");
    std::fs::write(&unit, UNIT.replace("/usr/local/bin/equinix-mcp", binary().to_str().unwrap())).unwrap();
    let out = std::process::Command::new("systemd-analyze")
        .args(["verify", unit.to_str().unwrap()])
        .output()
        .expect("systemd-analyze: .ci/install-test-tools installs Debian's systemd");
    let said = String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && said.trim().is_empty(), "systemd-analyze verify: {said}");
    // the exposure docs/deploying.md quotes (1.4, "OK"): the sandboxing is not lost by an edit
    let out = std::process::Command::new("systemd-analyze")
        .args(["security", "--offline=yes", "--no-pager", unit.to_str().unwrap()])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout).to_string();
    let level =
        said.split("Overall exposure level for equinix-mcp.service: ").nth(1).unwrap_or_else(|| panic!("{said}"));
    let level: f64 = level.split_whitespace().next().unwrap().parse().unwrap();
    assert!(level <= 1.5, "systemd-analyze security rates the unit {level}, the docs say 1.4");

    let help = std::process::Command::new(binary()).args(["serve", "--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    for line in unit_lines("Environment") {
        let name = line.split('=').next().unwrap();
        assert!(name == "RUST_LOG" || help.contains(&format!("env: {name}=")), "the server reads no {name}");
    }
    for line in unit_lines("LoadCredential") {
        let id = line.split(':').next().unwrap();
        assert!(UNIT.contains(&format!("=%d/{id}\n")), "credential {id} is handed to the server through a variable");
    }
}

const STORE: &str = include_str!("../../../docs/store.md");

/// The body of docs/store.md's ```conf `tag` block.
fn store_block(tag: &str) -> String {
    let open = format!("```conf {tag}\n");
    let at = STORE.find(&open).unwrap_or_else(|| panic!("docs/store.md has a ```conf {tag} block"));
    let body = &STORE[at + open.len()..];
    body[..body.find("```").unwrap()].to_string()
}

/// Processes killed when the test ends, however it ends.
struct Killed(Vec<std::process::Child>);

impl Drop for Killed {
    fn drop(&mut self) {
        for child in &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// `command` at `port` on loopback, after `AUTH password` when given.
fn redis_at(port: u16, password: Option<&str>, command: &str) -> Vec<String> {
    try_redis_at(port, password, command).unwrap_or_else(|e| panic!("{command} at port {port}: {e}"))
}

/// [`redis_at`], or why it got no answer: a wait's probe, asked again while a process starts
/// (it may accept a connection before it answers one).
fn try_redis_at(port: u16, password: Option<&str>, command: &str) -> std::io::Result<Vec<String>> {
    let s = std::net::TcpStream::connect(("127.0.0.1", port))?;
    s.set_read_timeout(Some(std::time::Duration::from_secs(2)))?;
    if let Some(password) = password {
        crate::harness::redis::query_at(s.try_clone()?, &format!("AUTH {password}"))?;
    }
    crate::harness::redis::query_at(s, command)
}

/// docs/store.md's `redis.conf`, `replica.conf` and `sentinel.conf`, as written (the password,
/// the host name and the ports replaced): Redis 7 takes them, the replicas follow the primary,
/// a write reaches the two replicas `min-replicas-to-write` asks for, and every Sentinel names the
/// primary.
#[test]
fn the_redis_and_sentinel_files_of_docs_store_start_as_written() {
    let dir = tempfile::tempdir().unwrap();
    let ports: Vec<u16> = (0..6).map(|_| free_port()).collect();
    let with_password = |text: String| text.replace("<password>", PASSWORD);
    let node = with_password(store_block("redis.conf"));
    let replica = node.clone()
        + &store_block("replica.conf").replace("redis-1.internal 6379", &format!("127.0.0.1 {}", ports[0]));
    let sentinel = with_password(store_block("sentinel.conf"))
        .replace("redis-1.internal 6379", &format!("127.0.0.1 {}", ports[0]));
    let mut running = Killed(Vec::new());
    for (i, port) in ports.iter().enumerate() {
        let (program, text) = match i {
            0 => ("redis-server", &node),
            1 | 2 => ("redis-server", &replica),
            _ => ("redis-sentinel", &sentinel),
        };
        let conf = dir.path().join(format!("{i}.conf"));
        std::fs::write(&conf, text).unwrap();
        let log = std::fs::File::create(dir.path().join(format!("{i}.log"))).unwrap();
        let child = std::process::Command::new(program)
            .arg(&conf)
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1", "--dir", dir.path().to_str().unwrap()])
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .unwrap_or_else(|e| panic!("{program}: {e} (`.ci/install-redis` installs it)"));
        running.0.push(child);
    }
    let said = |i: usize| std::fs::read_to_string(dir.path().join(format!("{i}.log"))).unwrap_or_default();
    wait::until_blocking("the primary to see both replicas", wait::WITHIN, || {
        for (i, child) in running.0.iter_mut().enumerate() {
            if let Some(status) = child.try_wait().unwrap() {
                panic!("process {i} refused its file as written ({status}): {}", said(i));
            }
        }
        let info = try_redis_at(ports[0], Some(PASSWORD), "INFO replication").ok().map(|lines| lines.join("\n"));
        info.filter(|i| i.contains("connected_slaves:2")).map(|_| ())
    });
    // a replica counts as good once it acknowledged (every second): then writes are taken
    wait::until_blocking("a write the two replicas allow", wait::WITHIN, || {
        try_redis_at(ports[0], Some(PASSWORD), "SET equinix-mcp:check 1").ok().filter(|r| r == &["OK"]).map(|_| ())
    });
    assert!(redis_at(ports[0], None, "GET equinix-mcp:check")[0].starts_with("-NOAUTH"), "the password is required");
    for port in &ports[3..] {
        wait::until_blocking("each Sentinel to name the primary", wait::WITHIN, || {
            let named = try_redis_at(*port, None, "SENTINEL get-master-addr-by-name equinix-mcp").ok();
            (named == Some(vec!["127.0.0.1".to_string(), ports[0].to_string()])).then_some(())
        });
    }
}
