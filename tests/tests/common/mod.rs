//! Shared harness: spawn the real `equinix-mcp` binary, connect an rmcp client over stdio, and
//! run a Fabric simulator in-process so tests can read what reached "Fabric".

#![allow(dead_code)]

use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use equinix_mcp::fabric_sim::{self, SimConfig, SimHandle};
use rmcp::model::ProtocolVersion;
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult,
    ElicitationAction, ErrorData, Implementation, ProgressNotificationParam,
};
use rmcp::service::{NotificationContext, RequestContext, RoleClient, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, ClientLifecycleMode, ClientServiceExt, ServiceExt};
use serde_json::{Value, json};
use tokio::io::AsyncBufReadExt;

pub mod http;
pub mod redis;
pub mod rounds;

/// The binary built by `cargo test --workspace` (host has integration tests, so cargo builds it).
pub fn binary() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().unwrap().parent().unwrap();
    let bin = dir.join("equinix-mcp");
    assert!(
        bin.exists(),
        "{} is missing: run `cargo test --workspace` (or `cargo build -p equinix-mcp`) first",
        bin.display()
    );
    bin
}

/// The test component built by `tests/build.rs`.
pub fn probe_component() -> PathBuf {
    PathBuf::from(env!("PROBE_COMPONENT"))
}

/// The test component with an invalid catalog.
pub fn bad_catalog_component() -> PathBuf {
    PathBuf::from(env!("BAD_CATALOG_COMPONENT"))
}

/// A precompile cache shared by the test processes (host-owned, under the target dir).
pub fn cache_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    exe.parent().unwrap().parent().unwrap().join("test-precompile-cache")
}

/// A hermetic command line: no inherited EQUINIX_* variables, logs at `info`.
pub fn command(args: &[&str], env: &[(&str, &str)]) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new(binary());
    cmd.env_clear();
    for key in ["PATH", "HOME", "TMPDIR"] {
        if let Ok(v) = std::env::var(key) {
            cmd.env(key, v);
        }
    }
    cmd.env("RUST_LOG", "info,rmcp=warn")
        .env("EQUINIX_MCP_CACHE_DIR", cache_dir())
        .env("EQUINIX_MCP_AUDIT_LOG", fresh_audit_path());
    cmd.args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.kill_on_drop(true);
    cmd
}

/// A new audit-log path under the system temp dir, one per spawned server.
pub fn fresh_audit_path() -> PathBuf {
    use std::sync::atomic::{AtomicU32, Ordering};
    static N: AtomicU32 = AtomicU32::new(0);
    let dir = std::env::temp_dir().join("equinix-mcp-tests");
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(format!("audit-{}-{}.jsonl", std::process::id(), N.fetch_add(1, Ordering::Relaxed)))
}

/// The audit log a command built by [`command`] will write (the last `EQUINIX_MCP_AUDIT_LOG`).
pub fn audit_log_of(cmd: &tokio::process::Command) -> PathBuf {
    cmd.as_std()
        .get_envs()
        .filter(|(k, _)| *k == "EQUINIX_MCP_AUDIT_LOG")
        .filter_map(|(_, v)| v.map(PathBuf::from))
        .last()
        .expect("command() always sets EQUINIX_MCP_AUDIT_LOG")
}

/// Every entry of an audit log written so far.
pub fn read_audit(path: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).expect("every audit line is JSON"))
        .collect()
}

/// Runs a command to completion: (success, stdout, stderr).
pub async fn run_to_exit(args: &[&str], env: &[(&str, &str)]) -> (bool, String, String) {
    let mut cmd = command(args, env);
    cmd.stdin(Stdio::null());
    let out = tokio::time::timeout(Duration::from_secs(60), cmd.output()).await.expect("command timed out").unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// How the test client answers an elicitation.
#[derive(Clone, Debug)]
pub enum Answer {
    Accept {
        confirm: bool,
    },
    Decline,
    Cancel,
    /// Never answers (the server's timeout or a cancellation ends it).
    Never,
    /// Answers with a JSON-RPC error.
    Error,
    /// Accepts with `confirm = true` after a pause (a person reading the form).
    AcceptAfter(Duration),
}

/// An rmcp client that may declare form elicitation and records the prompts it was shown.
#[derive(Clone)]
pub struct TestClient {
    pub answer: Option<Answer>,
    pub prompts: Arc<Mutex<Vec<ElicitRequestParams>>>,
    /// Moves the embedded simulator's clock (`POST {url}/_sim/clock`) before answering.
    pub advance_before_answer: Arc<Mutex<Option<(String, u64)>>>,
    /// Messages of the progress notifications received.
    pub progress: Arc<Mutex<Vec<String>>>,
}

impl TestClient {
    pub fn plain() -> Self {
        TestClient {
            answer: None,
            prompts: Default::default(),
            advance_before_answer: Default::default(),
            progress: Default::default(),
        }
    }

    pub fn answering(answer: Answer) -> Self {
        TestClient { answer: Some(answer), ..TestClient::plain() }
    }

    /// Accepts every confirmation, ticking the confirm box.
    pub fn accepting() -> Self {
        TestClient::answering(Answer::Accept { confirm: true })
    }

    /// The text of every prompt shown so far.
    pub fn prompt_texts(&self) -> Vec<String> {
        self.prompts
            .lock()
            .unwrap()
            .iter()
            .map(|p| match p {
                ElicitRequestParams::FormElicitationParams { message, .. } => message.clone(),
                other => format!("{other:?}"),
            })
            .collect()
    }
}

impl ClientHandler for TestClient {
    fn get_info(&self) -> ClientConfig {
        let caps = if self.answer.is_some() {
            ClientCapabilities::builder().enable_elicitation().build()
        } else {
            ClientCapabilities::default()
        };
        ClientConfig::new(caps, Implementation::new("equinix-mcp-tests", "0"))
    }

    async fn on_progress(&self, params: ProgressNotificationParam, _context: NotificationContext<RoleClient>) {
        self.progress.lock().unwrap().push(params.message.unwrap_or_default());
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        self.prompts.lock().unwrap().push(request);
        let advance = self.advance_before_answer.lock().unwrap().clone();
        if let Some((url, ms)) = advance {
            advance_clock(&url, ms).await;
        }
        match self.answer.clone().unwrap_or(Answer::Decline) {
            Answer::Accept { confirm } => {
                Ok(ElicitResult::new(ElicitationAction::Accept).with_content(json!({ "confirm": confirm })))
            }
            Answer::Decline => Ok(ElicitResult::new(ElicitationAction::Decline)),
            Answer::Cancel => Ok(ElicitResult::new(ElicitationAction::Cancel)),
            Answer::Never => {
                // a person who never answers: not even when the client goes away
                let _ = &context;
                std::future::pending().await
            }
            Answer::Error => Err(ErrorData::internal_error("the client failed to show the form", None)),
            Answer::AcceptAfter(pause) => {
                tokio::time::sleep(pause).await;
                Ok(ElicitResult::new(ElicitationAction::Accept).with_content(json!({ "confirm": true })))
            }
        }
    }
}

/// A running server with its client and captured stderr.
pub struct Server {
    pub client: RunningService<RoleClient, TestClient>,
    pub stderr: Arc<Mutex<String>>,
    /// The audit log this server writes (`EQUINIX_MCP_AUDIT_LOG`).
    pub audit_log: PathBuf,
    pub pid: Option<u32>,
}

impl Server {
    pub async fn call(&self, tool: &str, args: Value) -> CallToolResult {
        call_on(&self.client, tool, args).await
    }

    /// The audit log's entries so far.
    pub fn audit_entries(&self) -> Vec<Value> {
        read_audit(&self.audit_log)
    }

    pub fn stderr_text(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    pub async fn stop(self) {
        let _ = self.client.cancel().await;
    }
}

/// `tools/call` on any connected client (the client runs any 2026-07-28 input rounds itself).
/// Polls `ready` every 20 ms for up to 10 s; a test waiting for `what` fails instead of hanging.
pub async fn wait_until(what: &str, ready: impl AsyncFn() -> bool) {
    for _ in 0..500 {
        if ready().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("{what} never came");
}

pub async fn call_on(client: &RunningService<RoleClient, TestClient>, tool: &str, args: Value) -> CallToolResult {
    let Value::Object(map) = args else { panic!("arguments must be an object") };
    let params = CallToolRequestParams::new(tool.to_string()).with_arguments(map);
    tokio::time::timeout(Duration::from_secs(60), client.call_tool(params))
        .await
        .expect("tools/call timed out")
        .expect("tools/call failed at the protocol level")
}

/// A `fabric_confirm_change` request for `token` (a string or a JSON value holding one).
pub fn confirm_request(token: impl Into<Value>) -> CallToolRequestParams {
    let token: Value = token.into();
    CallToolRequestParams::new("fabric_confirm_change")
        .with_arguments(json!({ "confirm_token": token }).as_object().unwrap().clone())
}

/// Two seeded simulator ports a connection may join.
pub const PORT_A: &str = "c4d9350e-783c-83cd-1ce0-306a5c00a600";
pub const PORT_Z: &str = "c4d9350e-783c-83cd-1ce0-306a5c00a610";

/// A connection create between [`PORT_A`] and [`PORT_Z`].
pub fn connection_spec(name: &str, vlan: u64) -> Value {
    json!({
        "type": "EVPL_VC",
        "name": name,
        "bandwidth": 1000,
        "aSide": {"accessPoint": {"type": "COLO", "port": {"uuid": PORT_A}, "linkProtocol": {"type": "DOT1Q", "vlanTag": vlan}}},
        "zSide": {"accessPoint": {"type": "COLO", "port": {"uuid": PORT_Z}, "linkProtocol": {"type": "DOT1Q", "vlanTag": vlan}}},
        "project": {"projectId": equinix_mcp::fabric_sim::PROJECT_ID},
        "notifications": [{"type": "ALL", "emails": ["noc@example.com"]}]
    })
}

/// Proposes a connection create and returns its structured result (which must not be an error).
pub async fn propose_on(client: &RunningService<RoleClient, TestClient>, name: &str, vlan: u64) -> Value {
    let r = call_on(
        client,
        "fabric_propose_change",
        json!({"change_type": "connection_create", "spec": connection_spec(name, vlan)}),
    )
    .await;
    assert!(!is_error(&r), "propose failed: {:?}", r.structured_content);
    structured(&r)
}

/// The structured content of a result, which every tool of ours returns.
/// The result of a call that is expected to be complete (not an input request).
pub fn complete(r: rmcp::model::CallToolResponse) -> CallToolResult {
    match r {
        rmcp::model::CallToolResponse::Complete(r) => r,
        other => panic!("expected a complete result, got {other:?}"),
    }
}

pub fn structured(r: &CallToolResult) -> Value {
    r.structured_content.clone().expect("the result has structured content")
}

/// The rows of a page under `key` as objects (a page carries `columns`, rows of values, and the
/// values every row shares under `same`).
pub fn rows(page: &Value, key: &str) -> Vec<Value> {
    let columns: Vec<&str> = page["columns"]
        .as_array()
        .unwrap_or_else(|| panic!("a page has columns: {page}"))
        .iter()
        .map(|c| c.as_str().expect("a column is a name"))
        .collect();
    let items = page[key].as_array().unwrap_or_else(|| panic!("a page has {key}: {page}"));
    items
        .iter()
        .map(|row| {
            let row = row.as_array().expect("a row is an array");
            assert_eq!(row.len(), columns.len(), "a row has one value per column");
            let pairs = columns.iter().zip(row).filter(|(_, v)| !v.is_null());
            let mut object: serde_json::Map<String, Value> = pairs.map(|(c, v)| (c.to_string(), v.clone())).collect();
            if let Some(same) = page.get("same").and_then(Value::as_object) {
                object.extend(same.clone());
            }
            Value::Object(object)
        })
        .collect()
}

pub fn is_error(r: &CallToolResult) -> bool {
    r.is_error == Some(true)
}

/// Spawns `equinix-mcp` with `args`/`env` and connects `client` over stdio (initialize lifecycle).
pub async fn start(args: &[&str], env: &[(&str, &str)], client: TestClient) -> anyhow::Result<Server> {
    start_with(args, env, client, false).await
}

/// Like [`start`], but `stateless` connects with the 2026-07-28 discover lifecycle.
pub async fn start_with(
    args: &[&str],
    env: &[(&str, &str)],
    client: TestClient,
    stateless: bool,
) -> anyhow::Result<Server> {
    start_command(command(args, env), client, stateless).await
}

/// Like [`start`], with writes to files limited to `blocks` of 512 bytes (`ulimit -f`): a full
/// disk, as far as the process can tell.
pub async fn start_with_file_size_limit(
    args: &[&str],
    env: &[(&str, &str)],
    client: TestClient,
    blocks: u64,
) -> anyhow::Result<Server> {
    let inner = command(args, env);
    let mut cmd = tokio::process::Command::new("sh");
    cmd.env_clear();
    for (k, v) in inner.as_std().get_envs() {
        if let Some(v) = v {
            cmd.env(k, v);
        }
    }
    cmd.arg("-c").arg(format!("ulimit -f {blocks} && exec \"$0\" \"$@\"")).arg(binary()).args(args);
    cmd.kill_on_drop(true);
    start_command(cmd, client, false).await
}

async fn start_command(cmd: tokio::process::Command, client: TestClient, stateless: bool) -> anyhow::Result<Server> {
    let audit_log = audit_log_of(&cmd);
    let (transport, stderr) = TokioChildProcess::builder(cmd).stderr(Stdio::piped()).spawn()?;
    let pid = transport.id();
    let captured = Arc::new(Mutex::new(String::new()));
    if let Some(stderr) = stderr {
        let sink = captured.clone();
        tokio::spawn(async move {
            let mut lines = tokio::io::BufReader::new(stderr).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                let mut s = sink.lock().unwrap();
                s.push_str(&line);
                s.push('\n');
            }
        });
    }
    let client = if stateless {
        let lifecycle = ClientLifecycleMode::Discover { preferred_versions: vec![ProtocolVersion::V_2026_07_28] };
        tokio::time::timeout(Duration::from_secs(60), client.serve_with_lifecycle(transport, lifecycle)).await??
    } else {
        tokio::time::timeout(Duration::from_secs(60), client.serve(transport)).await??
    };
    Ok(Server { client, stderr: captured, audit_log, pid })
}

/// `serve --fabric-sim` plus extra arguments.
pub async fn start_on_embedded_sim(extra: &[&str], client: TestClient) -> anyhow::Result<Server> {
    let mut args = vec!["serve", "--fabric-sim"];
    args.extend_from_slice(extra);
    start(&args, &[], client).await
}

/// A simulator in this test process, so the test can read its counters.
pub async fn sim(config: SimConfig) -> SimHandle {
    fabric_sim::start("127.0.0.1:0".parse().unwrap(), config).await.unwrap()
}

/// Environment pointing the server at `sim` with the simulator's credentials.
pub fn sim_env(sim: &SimHandle) -> Vec<(String, String)> {
    vec![
        ("EQUINIX_API_ENDPOINT".into(), sim.base_url()),
        ("EQUINIX_API_CLIENTID".into(), fabric_sim::SIM_CLIENT_ID.into()),
        ("EQUINIX_API_CLIENTSECRET".into(), fabric_sim::SIM_CLIENT_SECRET.into()),
    ]
}

/// Starts a server against an in-process simulator.
pub async fn start_against(
    sim: &SimHandle,
    extra_args: &[&str],
    extra_env: &[(&str, &str)],
    client: TestClient,
) -> Server {
    let env = sim_env(sim);
    let mut all: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    all.extend_from_slice(extra_env);
    let mut args = vec!["serve"];
    args.extend_from_slice(extra_args);
    start(&args, &all, client).await.unwrap()
}

/// The embedded simulator's base URL, read from the server's banner.
pub async fn embedded_sim_url(server: &Server) -> String {
    for _ in 0..100 {
        let text = server.stderr_text();
        if let Some(at) = text.find("simulator at ") {
            let rest = &text[at + "simulator at ".len()..];
            return rest.split([' ', '\n']).next().unwrap().to_string();
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("no simulator address in the banner:\n{}", server.stderr_text());
}

/// Moves the embedded simulator's (and so the server's) clock forward.
pub async fn advance_clock(sim_url: &str, ms: u64) {
    let r = http().post(format!("{sim_url}/_sim/clock")).json(&json!({"advance_ms": ms})).send().await.unwrap();
    assert!(r.status().is_success());
}

/// The embedded simulator's counters.
pub async fn sim_stats(sim_url: &str) -> Value {
    http().get(format!("{sim_url}/_sim/stats")).send().await.unwrap().json().await.unwrap()
}

/// Real creates the simulator received for `collection` (`connections`, ...).
pub async fn creates(sim_url: &str, collection: &str) -> u64 {
    sim_stats(sim_url).await["creates"][collection].as_u64().unwrap_or(0)
}

/// Real connection creates an in-process simulator completed.
pub fn connection_creates(sim: &SimHandle) -> u64 {
    sim.stats().creates.get("connections").copied().unwrap_or(0)
}

/// Connection create requests (not dry runs) an in-process simulator received, completed or not.
pub fn connection_create_requests(sim: &SimHandle) -> usize {
    sim.stats()
        .requests
        .iter()
        .filter(|r| r.method == "POST" && r.path == "/fabric/v4/connections" && r.query.is_empty())
        .count()
}

/// Queues a fault in the embedded simulator.
pub async fn inject(sim_url: &str, fault: Value) {
    let r = http().post(format!("{sim_url}/_sim/faults")).json(&fault).send().await.unwrap();
    assert!(r.status().is_success());
}

/// An HTTP client for the simulator's admin routes.
pub fn http() -> reqwest::Client {
    equinix_mcp::install_crypto_provider();
    reqwest::Client::new()
}
