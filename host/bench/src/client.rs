//! The benchmark's side of the wire: spawning servers, a client that holds forms open, timing
//! calls, and reading figures from a server's log and `/proc`.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::Context;
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult,
    ElicitationAction, ErrorData, Implementation,
};
use rmcp::service::{RequestContext, RoleClient, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, ServiceExt};
use serde_json::{Value, json};
use tokio::io::AsyncBufReadExt;

use equinix_fabric_sim::PORTS;

/// Answers confirmation prompts after `delay` (decline), to hold a confirmation open.
#[derive(Clone)]
pub struct BenchClient {
    pub delay: Duration,
}

impl ClientHandler for BenchClient {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(ClientCapabilities::builder().enable_elicitation().build(), Implementation::new("bench", "0"))
    }

    async fn create_elicitation(
        &self,
        _r: ElicitRequestParams,
        _c: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        tokio::time::sleep(self.delay).await;
        Ok(ElicitResult::new(ElicitationAction::Decline))
    }
}

pub type Client = RunningService<RoleClient, BenchClient>;

/// The servers' log filter: quiet, except the lines the bench reads (banner, listening address).
pub const SERVER_LOG: &str = "warn,equinix_mcp::commands::serve=info,equinix_mcp::transports::http=info,equinix_mcp::transports::metrics_listener=info";

pub struct Proc {
    pub client: Client,
    pub pid: u32,
    pub stderr: tokio::process::ChildStderr,
}

/// Starts `exe` with `args` over stdio (with `cache` as its precompile cache), its client holding
/// each confirmation form open for `hold`; the process and how long it took to answer
/// `initialize`.
pub async fn spawn(
    exe: &Path,
    args: &[&str],
    cache: Option<&Path>,
    hold: Duration,
) -> anyhow::Result<(Proc, Duration)> {
    let mut cmd = tokio::process::Command::new(exe);
    cmd.args(args).env("RUST_LOG", SERVER_LOG).env_remove("EQUINIX_MCP_TOOLSETS");
    if let Some(dir) = cache {
        cmd.arg("--cache-dir").arg(dir);
    }
    let started = Instant::now();
    let (transport, stderr) = TokioChildProcess::builder(cmd).stderr(Stdio::piped()).spawn()?;
    let pid = transport.id().context("child has no pid")?;
    let client = BenchClient { delay: hold }.serve(transport).await?;
    Ok((Proc { client, pid, stderr: stderr.context("no stderr")? }, started.elapsed()))
}

pub async fn call(client: &Client, tool: &str, args: Value) -> anyhow::Result<CallToolResult> {
    let Value::Object(map) = args else { unreachable!() };
    Ok(client.call_tool(CallToolRequestParams::new(tool.to_string()).with_arguments(map)).await?)
}

pub fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// `sorted`'s value at quantile `q`.
pub fn quantile(sorted: &[f64], q: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * q).round() as usize]
}

pub fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

pub async fn timed_calls(
    client: &Client,
    tool: &str,
    n: usize,
    args: impl Fn(usize) -> Value,
) -> anyhow::Result<Vec<f64>> {
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let t = Instant::now();
        let r = call(client, tool, args(i)).await?;
        anyhow::ensure!(r.is_error != Some(true), "{tool} failed: {:?}", r.structured_content);
        out.push(ms(t.elapsed()));
    }
    Ok(out)
}

pub fn rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status.lines().find_map(|l| l.strip_prefix("VmRSS:")).and_then(|v| v.split_whitespace().next()?.parse().ok())
}

/// CPU time (user + system) process `pid` has used so far, from `/proc/PID/stat`.
pub fn cpu_of(pid: u32) -> Option<Duration> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // fields after the command name (which may hold spaces) start at its closing parenthesis
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    let per_second = rustix::param::clock_ticks_per_second().max(1);
    Some(Duration::from_micros(ticks * 1_000_000 / per_second))
}

pub async fn sim_url(stderr: &mut tokio::process::ChildStderr) -> anyhow::Result<String> {
    let mut lines = tokio::io::BufReader::new(stderr).lines();
    banner_word(&mut lines, "simulator at ", Duration::from_secs(10))
        .await?
        .context("no simulator address in the banner")
}

/// The word after `marker` on the first line that has it, waiting at most `wait` for each line;
/// `None` when the lines end first.
pub async fn banner_word<R: tokio::io::AsyncBufRead + Unpin>(
    lines: &mut tokio::io::Lines<R>,
    marker: &str,
    wait: Duration,
) -> anyhow::Result<Option<String>> {
    while let Some(line) = tokio::time::timeout(wait, lines.next_line()).await?? {
        if let Some(word) = word_after(&line, marker) {
            return Ok(Some(word));
        }
    }
    Ok(None)
}

/// The word after `marker` in `line`, if `line` has the marker.
fn word_after(line: &str, marker: &str) -> Option<String> {
    let (_, rest) = line.split_once(marker)?;
    Some(rest.split_whitespace().next().unwrap_or_default().to_string())
}

pub fn spec(i: usize) -> Value {
    json!({"change_type": "connection_create", "spec": {
        "type": "EVPL_VC", "name": format!("bench-{i}"), "bandwidth": 1000,
        "aSide": {"accessPoint": {"type": "COLO", "port": {"uuid": PORTS[1].0}, "linkProtocol": {"type": "DOT1Q", "vlanTag": 2 + (i % 4000)}}},
        "zSide": {"accessPoint": {"type": "COLO", "port": {"uuid": PORTS[4].0}, "linkProtocol": {"type": "DOT1Q", "vlanTag": 2 + (i % 4000)}}},
        "notifications": [{"type": "ALL", "emails": ["noc@example.com"]}]}})
}

/// A server on the embedded simulator over HTTP on a loopback port: the child, its simulator's
/// URL, its `/mcp` URL and its metrics URL (with `--metrics-listen`). Its stderr is drained in
/// the background.
pub struct HttpChild {
    pub child: tokio::process::Child,
    pub sim: String,
    pub url: String,
    pub metrics: Option<String>,
}

pub async fn spawn_http(exe: &Path, extra: &[&str]) -> anyhow::Result<HttpChild> {
    spawn_http_with(exe, extra, &[]).await
}

pub async fn spawn_http_with(exe: &Path, extra: &[&str], env: &[(&str, &str)]) -> anyhow::Result<HttpChild> {
    let mut child = tokio::process::Command::new(exe)
        .args(["serve", "--fabric-sim", "--transport", "http", "--listen", "127.0.0.1:0"])
        .args(extra)
        .envs(env.iter().copied())
        .env("RUST_LOG", SERVER_LOG)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()?;
    let mut lines = tokio::io::BufReader::new(child.stderr.take().context("no stderr")?).lines();
    let (mut sim, mut metrics) = (None, None);
    let url = loop {
        let line = tokio::time::timeout(Duration::from_secs(30), lines.next_line()).await??.context("server exited")?;
        sim = sim.or_else(|| word_after(&line, "simulator at "));
        metrics = metrics.or_else(|| word_after(&line, "Prometheus metrics at "));
        if let Some(url) = word_after(&line, "listening on ") {
            break url;
        }
    };
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    Ok(HttpChild { child, sim: sim.context("no simulator address")?, url, metrics })
}
