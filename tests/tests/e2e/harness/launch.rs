//! Starting servers: one builder for every way a test runs `equinix-mcp` (stdio or HTTP, on the
//! embedded simulator or one in this process, with any flags and environment), and the handles
//! that own the child process.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use equinix_fabric_sim::SimHandle;
use rmcp::model::{CallToolResult, ProtocolVersion};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientLifecycleMode, ClientServiceExt, ServiceExt};
use serde_json::Value;
use tokio::io::AsyncBufReadExt;

use super::client::{Client, TestClient, call_on, connect, is_error, structured};
use super::printed::Printed;
use super::process::{audit_log_of, binary, command, read_audit};
use super::sim::sim_env;

/// How a test wants the server started.
///
/// ```ignore
/// Launch::serve().args(&["--toolsets", "all,mutate"]).client(TestClient::accepting()).stdio().await
/// Launch::serve().against(&sim).http("127.0.0.1:0").await
/// Launch::command(&["serve", "--component", path]).stdio().await
/// ```
pub struct Launch {
    args: Vec<String>,
    env: Vec<(String, String)>,
    client: TestClient,
    stateless: bool,
    /// `ulimit` options the server starts under (`-S -n 400`, `-H -n 400`).
    limits: Vec<String>,
    sim_url: Option<String>,
    /// The network namespace it runs in (`ip netns exec`), if not this machine's.
    netns: Option<String>,
    /// The user (and group) it runs as, if not the tests' own.
    user: Option<u32>,
}

impl Launch {
    /// `equinix-mcp serve --fabric-sim`: the embedded simulator.
    pub fn serve() -> Launch {
        Launch::command(&["serve", "--fabric-sim"])
    }

    /// `equinix-mcp serve --fabric-sim` with the probe test component's `probe` toolset.
    pub fn probe() -> Launch {
        let probe = super::process::probe_component();
        Launch::serve().args(&["--component", probe.to_str().unwrap(), "--toolsets", "probe"])
    }

    /// Exactly these arguments (a subcommand first).
    pub fn command(args: &[&str]) -> Launch {
        Launch {
            args: args.iter().map(|a| a.to_string()).collect(),
            env: Vec::new(),
            client: TestClient::plain(),
            stateless: false,
            limits: Vec::new(),
            sim_url: None,
            netns: None,
            user: None,
        }
    }

    /// As user (and group) `uid`, as a service manager would start it.
    pub fn run_as(mut self, uid: Option<u32>) -> Launch {
        self.user = uid;
        self
    }

    /// In the network namespace `netns` (see [`super::netns::Network`]).
    pub fn in_netns(mut self, netns: &str) -> Launch {
        self.netns = Some(netns.to_string());
        self
    }

    /// Against `sim`, a simulator in this test process, instead of the embedded one.
    pub fn against(mut self, sim: &SimHandle) -> Launch {
        self.args.retain(|a| a != "--fabric-sim");
        self.env.extend(sim_env(sim));
        self.sim_url = Some(sim.base_url());
        self
    }

    pub fn args(mut self, extra: &[&str]) -> Launch {
        self.args.extend(extra.iter().map(|a| a.to_string()));
        self
    }

    pub fn env(mut self, vars: &[(&str, &str)]) -> Launch {
        self.env.extend(vars.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        self
    }

    /// The stdio client (default: one that shows no forms).
    pub fn client(mut self, client: TestClient) -> Launch {
        self.client = client;
        self
    }

    /// Connect with the 2026-07-28 discover lifecycle.
    pub fn stateless(mut self) -> Launch {
        self.stateless = true;
        self
    }

    /// Starts the server with `soft` open files allowed and at most `hard` (the soft limit
    /// first: a hard limit below the soft one is refused).
    pub fn open_files(mut self, soft: u64, hard: u64) -> Launch {
        self.limits.extend([format!("-S -n {soft}"), format!("-H -n {hard}")]);
        self
    }

    fn command_line(&self) -> tokio::process::Command {
        let args: Vec<&str> = self.args.iter().map(String::as_str).collect();
        let env: Vec<(&str, &str)> = self.env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        let mut inner = command(&args, &env);
        if let Some(uid) = self.user {
            inner.uid(uid).gid(uid);
        }
        if self.limits.is_empty() && self.netns.is_none() {
            return inner;
        }
        // each wrapper execs the next in place: the child's PID stays the server's
        let mut line: Vec<String> = Vec::new();
        if let Some(netns) = &self.netns {
            line.extend(["ip", "netns", "exec", netns].map(String::from));
        }
        if !self.limits.is_empty() {
            let limits: Vec<String> = self.limits.iter().map(|l| format!("ulimit {l} && ")).collect();
            line.extend(["sh".into(), "-c".into(), format!("{}exec \"$0\" \"$@\"", limits.concat())]);
        }
        let mut cmd = tokio::process::Command::new(&line[0]);
        cmd.env_clear();
        for (k, v) in inner.as_std().get_envs() {
            if let Some(v) = v {
                cmd.env(k, v);
            }
        }
        cmd.args(&line[1..]).arg(binary()).args(&args);
        if let Some(uid) = self.user {
            cmd.uid(uid).gid(uid);
        }
        cmd.kill_on_drop(true);
        cmd
    }

    /// Runs the command to completion (its limits applied): (success, stdout, stderr).
    pub async fn run_to_exit(self) -> (bool, String, String) {
        let mut cmd = self.command_line();
        cmd.stdin(Stdio::null());
        let out = tokio::time::timeout(Duration::from_secs(60), cmd.output()).await.expect("timed out").unwrap();
        let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        (out.status.success(), text(&out.stdout), text(&out.stderr))
    }

    /// Runs the command to completion, which must fail (a start refused): what it printed.
    pub async fn refused(self) -> String {
        let (ok, _, stderr) = self.run_to_exit().await;
        assert!(!ok, "the start is refused: {stderr}");
        stderr
    }

    /// Spawns the server and connects the client over stdio.
    pub async fn try_stdio(self) -> anyhow::Result<Server> {
        let cmd = self.command_line();
        let audit_log = audit_log_of(&cmd);
        let (transport, stderr) = TokioChildProcess::builder(cmd).stderr(Stdio::piped()).spawn()?;
        let pid = transport.id();
        let captured = Printed::new(format!("equinix-mcp {}", self.args.join(" ")));
        if let Some(stderr) = stderr {
            captured.collect(stderr);
        }
        let client = if self.stateless {
            let lifecycle = ClientLifecycleMode::Discover { preferred_versions: vec![ProtocolVersion::V_2026_07_28] };
            tokio::time::timeout(Duration::from_secs(60), self.client.serve_with_lifecycle(transport, lifecycle))
                .await??
        } else {
            tokio::time::timeout(Duration::from_secs(60), self.client.serve(transport)).await??
        };
        Ok(Server { client, stderr: captured, audit_log, pid })
    }

    pub async fn stdio(self) -> Server {
        self.try_stdio().await.expect("the server starts and the client connects")
    }

    /// Spawns `--transport http --listen LISTEN` and waits for its listening line.
    pub async fn http(mut self, listen: &str) -> HttpServer {
        self.args.extend(["--transport".to_string(), "http".into(), "--listen".into(), listen.into()]);
        let mut cmd = self.command_line();
        let audit_log = audit_log_of(&cmd);
        cmd.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        let mut lines = tokio::io::BufReader::new(child.stderr.take().unwrap()).lines();
        let stderr = Printed::new(format!("equinix-mcp {}", self.args.join(" ")));
        let (mut url, mut sim) = (None, self.sim_url.clone());
        while url.is_none() || sim.is_none() {
            let line = tokio::time::timeout(Duration::from_secs(30), lines.next_line())
                .await
                .expect("no listening line within 30 s")
                .unwrap()
                .unwrap_or_else(|| panic!("the server exited before it listened"));
            stderr.push_line(&line);
            if let Some(at) = line.find("listening on ") {
                url = line[at + 13..].split_whitespace().next().map(str::to_string);
            }
            if let Some(at) = line.find("simulator at ") {
                sim = line[at + 13..].split_whitespace().next().map(str::to_string);
            }
        }
        stderr.collect(lines.into_inner());
        HttpServer { child, url: url.unwrap(), sim: sim.unwrap(), stderr, audit_log }
    }
}

/// A running stdio server with its client and captured stderr.
pub struct Server {
    pub client: Client,
    stderr: Printed,
    /// The audit log this server writes (`EQUINIX_MCP_AUDIT_LOG`).
    pub audit_log: PathBuf,
    pub pid: Option<u32>,
}

impl Server {
    pub(crate) fn new(client: Client, stderr: Printed, audit_log: PathBuf, pid: Option<u32>) -> Server {
        Server { client, stderr, audit_log, pid }
    }

    pub async fn call(&self, tool: &str, args: Value) -> CallToolResult {
        call_on(&self.client, tool, args).await
    }

    /// The structured result of a call that must succeed.
    pub async fn ok(&self, tool: &str, args: Value) -> Value {
        let r = self.call(tool, args.clone()).await;
        assert!(!is_error(&r), "{tool} {args} failed: {:?}", r.structured_content);
        structured(&r)
    }

    /// The `error` of a call that must fail.
    pub async fn refused(&self, tool: &str, args: Value) -> Value {
        let r = self.call(tool, args.clone()).await;
        assert!(is_error(&r), "{tool} {args} should fail: {:?}", r.structured_content);
        structured(&r)["error"].clone()
    }

    /// The audit log's entries so far.
    pub fn audit_entries(&self) -> Vec<Value> {
        read_audit(&self.audit_log)
    }

    pub fn stderr_text(&self) -> String {
        self.stderr.text()
    }

    pub async fn stop(self) {
        let _ = self.client.cancel().await;
    }
}

/// A running HTTP server.
pub struct HttpServer {
    pub child: tokio::process::Child,
    /// `http://ADDR/mcp` (or `https://`)
    pub url: String,
    /// The simulator's base URL.
    pub sim: String,
    stderr: Printed,
    pub audit_log: PathBuf,
}

impl HttpServer {
    /// Connects an rmcp client, with a bearer token when given, on the initialize lifecycle or
    /// (`stateless`) the 2026-07-28 discover lifecycle.
    pub async fn connect(&self, token: Option<&str>, client: TestClient, stateless: bool) -> Client {
        connect(&self.url, token, client, stateless).await.unwrap()
    }

    pub fn stderr_text(&self) -> String {
        self.stderr.text()
    }

    pub fn audit_entries(&self) -> Vec<Value> {
        read_audit(&self.audit_log)
    }

    /// Sends SIGTERM.
    pub fn terminate(&self) {
        self.signal("-TERM");
    }

    /// Sends SIGHUP.
    pub fn hangup(&self) {
        self.signal("-HUP");
    }

    fn signal(&self, which: &str) {
        let pid = self.child.id().expect("still running");
        let sent = std::process::Command::new("kill").args([which, &pid.to_string()]).status().unwrap();
        assert!(sent.success());
    }
}
