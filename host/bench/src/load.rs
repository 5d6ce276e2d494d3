//! A team on one server: concurrent HTTP clients proposing (the audit log's group commit under
//! load), and propose-then-confirm across two replicas sharing a Redis proposal store against
//! one replica with the memory store. Loopback only, bounded in time.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::Context;
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::StreamableHttpClientTransport;
use serde_json::{Value, json};

use crate::client::{HttpChild, cpu_of, median, spawn_http, spawn_http_with, spec};
use equinix_mcp_bench::lean::LeanSession;

pub(crate) type Session = rmcp::service::RunningService<rmcp::service::RoleClient, ()>;

pub(crate) async fn sessions(url: &str, n: usize) -> anyhow::Result<Vec<Session>> {
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        out.push(().serve(StreamableHttpClientTransport::from_uri(url.to_string())).await?);
    }
    Ok(out)
}

pub(crate) async fn call(s: &Session, tool: &str, args: Value) -> anyhow::Result<Value> {
    let Value::Object(map) = args else { anyhow::bail!("arguments are an object") };
    let r = s.call_tool(CallToolRequestParams::new(tool.to_string()).with_arguments(map)).await?;
    anyhow::ensure!(r.is_error != Some(true), "{tool} failed: {:?}", r.structured_content);
    r.structured_content.context("no structured content")
}

/// A counter from a Prometheus text exposition.
fn counter(text: &str, name: &str) -> f64 {
    text.lines().find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.parse().ok()).unwrap_or(0.0)
}

async fn scrape(metrics: &str) -> anyhow::Result<String> {
    Ok(reqwest::Client::new().get(metrics).send().await?.text().await?)
}

/// Runs `clients` loops at once for `duration`, each repeating `step(client, i)` for i = 0, 1, ...;
/// the latency of every step in milliseconds.
pub(crate) async fn for_a_while<'a, F, Fut>(clients: usize, duration: Duration, step: F) -> anyhow::Result<Vec<f64>>
where
    F: Fn(usize, usize) -> Fut + Copy + 'a,
    Fut: Future<Output = anyhow::Result<()>> + 'a,
{
    let started = Instant::now();
    let work = (0..clients).map(|c| async move {
        let mut latencies = Vec::new();
        let mut i = 0;
        while started.elapsed() < duration {
            let t = Instant::now();
            step(c, i).await?;
            latencies.push(t.elapsed().as_secs_f64() * 1e3);
            i += 1;
        }
        anyhow::Ok(latencies)
    });
    let mut latencies = Vec::new();
    for l in futures_util::future::join_all(work).await {
        latencies.extend(l?);
    }
    Ok(latencies)
}

/// What `clients` concurrent sessions sustain proposing for `duration`.
pub struct TeamProposes {
    pub per_second: f64,
    pub proposes: f64,
    pub syncs_per_propose: f64,
    pub p50_ms: f64,
    /// The server's CPU per propose, and the cores it kept busy (of the machine's, which the
    /// bench's own clients share).
    pub server_cpu_us: f64,
    pub server_share: f64,
}

pub async fn team_proposes(
    exe: &Path,
    cache: &Path,
    audit_dir: &Path,
    clients: usize,
    duration: Duration,
    extra: &[&str],
) -> anyhow::Result<TeamProposes> {
    Team::start(exe, cache, &audit_dir.join("team.jsonl"), clients, extra).await?.measure(duration, 0).await
}

/// A server with `clients` sessions open and warmed up, ready for windows of proposes.
pub struct Team {
    server: HttpChild,
    metrics: String,
    sessions: Vec<LeanSession>,
}

impl Team {
    /// The server loads the component from `cache`, warm as after a first start: what is
    /// measured begins after start-up either way, and compiling again would only cost the run.
    pub async fn start(exe: &Path, cache: &Path, audit: &Path, clients: usize, extra: &[&str]) -> anyhow::Result<Team> {
        let (audit, cache) = (audit.display().to_string(), cache.display().to_string());
        let mut args = vec![
            "--toolsets",
            "metros,mutate",
            "--audit-log",
            &audit,
            "--metrics-listen",
            "127.0.0.1:0",
            "--cache-dir",
            &cache,
        ];
        args.extend_from_slice(extra);
        let server = spawn_http(exe, &args).await?;
        let metrics = server.metrics.clone().context("no metrics address")?;
        let mut sessions = Vec::with_capacity(clients);
        for _ in 0..clients {
            sessions.push(LeanSession::open(&server.url).await?);
        }
        for (i, s) in sessions.iter().enumerate() {
            s.call("fabric_propose_change", spec(i)).await?; // warm-up
        }
        Ok(Team { server, metrics, sessions })
    }

    /// Every session proposing for `duration`; `window` keeps each window's names apart.
    pub async fn measure(&self, duration: Duration, window: usize) -> anyhow::Result<TeamProposes> {
        let before = scrape(&self.metrics).await?;
        let pid = self.server.child.id().context("no pid")?;
        let cpu_before = cpu_of(pid).context("no CPU time of the server")?;
        let started = Instant::now();
        let all = &self.sessions;
        let latencies = for_a_while(all.len(), duration, |c, i| {
            let s = &all[c];
            async move {
                s.call("fabric_propose_change", spec(1000 + window * 10_000_000 + c * 100_000 + i)).await.map(drop)
            }
        })
        .await?;
        let elapsed = started.elapsed().as_secs_f64();
        let server_cpu = cpu_of(pid).context("no CPU time of the server")? - cpu_before;
        let after = scrape(&self.metrics).await?;
        let proposes = latencies.len() as f64;
        let syncs =
            counter(&after, "equinix_mcp_audit_syncs_total") - counter(&before, "equinix_mcp_audit_syncs_total");
        Ok(TeamProposes {
            per_second: proposes / elapsed,
            proposes,
            syncs_per_propose: syncs / proposes,
            p50_ms: median(latencies),
            server_cpu_us: server_cpu.as_secs_f64() * 1e6 / proposes,
            server_share: server_cpu.as_secs_f64() / elapsed,
        })
    }
}

/// Propose-then-confirm pairs per second and their p50, from `clients` concurrent sessions.
pub struct Pairs {
    pub per_second: f64,
    pub p50_ms: f64,
}

/// Each client proposes on `propose_url` and confirms on `confirm_url` (the opt-in for clients
/// without a form is on: the benchmark has no person to ask).
pub(crate) async fn pairs(
    propose_url: &str,
    confirm_url: &str,
    clients: usize,
    duration: Duration,
) -> anyhow::Result<Pairs> {
    let proposers = sessions(propose_url, clients).await?;
    let confirmers = sessions(confirm_url, clients).await?;
    let started = Instant::now();
    let latencies = for_a_while(clients, duration, |c, i| {
        let (p, k) = (&proposers[c], &confirmers[c]);
        async move {
            let proposal = call(p, "fabric_propose_change", network(c, i)).await?;
            let out = call(k, "fabric_confirm_change", json!({"confirm_token": proposal["confirm_token"]})).await?;
            anyhow::ensure!(out["executed"] == true, "not executed: {out}");
            Ok(())
        }
    })
    .await?;
    let per_second = latencies.len() as f64 / started.elapsed().as_secs_f64();
    for s in proposers.into_iter().chain(confirmers) {
        let _ = s.cancel().await;
    }
    Ok(Pairs { per_second, p50_ms: median(latencies) })
}

/// A network create: unlike a connection, any number of them fit the simulated estate.
pub(crate) fn network(client: usize, i: usize) -> Value {
    json!({"change_type": "network_create", "spec": {
        "type": "EVPLAN", "name": format!("bench-{client}-{i}"), "scope": "REGIONAL", "location": {"region": "AMER"},
        "notifications": [{"type": "ALL", "emails": ["noc@example.com"]}]}})
}

/// A `redis-server` on a loopback port, without persistence, stopped on drop.
pub(crate) struct Redis {
    child: std::process::Child,
    pub port: u16,
    /// The RDB file a replica's full sync writes, removed with the server.
    rdb: Option<std::path::PathBuf>,
}

impl Drop for Redis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if let Some(rdb) = &self.rdb {
            let _ = std::fs::remove_file(rdb);
        }
    }
}

fn start_redis() -> anyhow::Result<Redis> {
    start_redis_with(&[])
}

/// A `redis-server` with `extra` arguments (`--replicaof`).
pub(crate) fn start_redis_with(extra: &[&str]) -> anyhow::Result<Redis> {
    // a replica's full sync writes an RDB file even without persistence: into the temp dir, not
    // wherever the bench was started
    static STARTED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = STARTED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let temp = std::env::temp_dir();
    let (dir, file) = (temp.display().to_string(), format!("equinix-mcp-bench-{}-{n}.rdb", std::process::id()));
    let mut args = vec!["--save", "", "--appendonly", "no", "--dir", &dir, "--dbfilename", &file];
    args.extend_from_slice(extra);
    let mut redis = start_with_program("redis-server", None, &args)?;
    redis.rdb = Some(temp.join(&file));
    Ok(redis)
}

/// `program [config] --port P --bind 127.0.0.1 extra...` on a free loopback port, once it listens.
pub(crate) fn start_with_program(program: &str, config: Option<&str>, extra: &[&str]) -> anyhow::Result<Redis> {
    let port = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
    let child = std::process::Command::new(program)
        .args(config)
        .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
        .args(extra)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .with_context(|| format!("{program} is not installed (.ci/install-redis installs it)"))?;
    let redis = Redis { child, port, rdb: None };
    for _ in 0..200 {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return Ok(redis);
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    anyhow::bail!("{program} did not listen on {port}")
}

/// Pairs on one replica with the memory store, and across two replicas sharing one Redis.
pub async fn shared_store(
    exe: &Path,
    cache: &Path,
    audit_dir: &Path,
    clients: usize,
    duration: Duration,
) -> anyhow::Result<(Pairs, Pairs)> {
    let audit = |name: &str| audit_dir.join(name).display().to_string();
    let key = "c2hhcmVkLWJlbmNoLWtleS0wMTIzNDU2Nzg5YWJjZGVm"; // 32 bytes, base64: the replicas' state key
    let memory_audit = audit("memory.jsonl");
    let cache = cache.display().to_string();
    let memory_args = ["--toolsets", "metros,mutate", "--audit-log", &memory_audit, "--cache-dir", &cache];
    let memory = replica(exe, &memory_args, None).await?;
    let one = pairs(&memory.url, &memory.url, clients, duration).await?;
    drop(memory);

    let redis = start_redis()?;
    let store = format!("redis://127.0.0.1:{}/0", redis.port);
    let (a_audit, b_audit) = (audit("replica-a.jsonl"), audit("replica-b.jsonl"));
    let args = |audit| {
        ["--toolsets", "metros,mutate", "--proposal-store", &store, "--audit-log", audit, "--cache-dir", &cache]
    };
    let a = replica(exe, &args(&a_audit), Some(key)).await?;
    let b = replica(exe, &args(&b_audit), Some(key)).await?;
    let two = pairs(&a.url, &b.url, clients, duration).await?;
    drop((a, b, redis));
    Ok((one, two))
}

/// A replica that executes without a form (no person in a benchmark), sharing `key` if given.
pub(crate) async fn replica(exe: &Path, args: &[&str], key: Option<&str>) -> anyhow::Result<HttpChild> {
    let mut env = vec![("EQUINIX_MCP_ALLOW_UNCONFIRMED_MUTATIONS", "true")];
    env.extend(key.map(|k| ("EQUINIX_MCP_STATE_KEY", k)));
    spawn_http_with(exe, args, &env).await
}
