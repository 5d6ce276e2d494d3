//! What surviving a store failover costs: two replicas on one plain Redis (no
//! acknowledgement) against two replicas on a primary with two replicas found through a
//! Sentinel, where every store write waits for one replica (`WAIT`), and against two
//! replicas on a three-member etcd cluster, where every write is committed by a majority. Rows:
//! a confirm's median latency (propose on A untimed, confirm on B timed, one at a time), and
//! proposes/s from 8 clients spread over both replicas. The set-ups are measured alternately,
//! and compared within the run (three rounds each; one with `--quick`). Loopback only, bounded
//! in time.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::Context;
use serde_json::json;

use crate::client::median;
use crate::load::{Redis, call, for_a_while, network, replica, sessions, start_redis_with};
use crate::table::Table;

/// The most a confirm may gain at the median from the acknowledgement, on loopback.
const ADDED_MS_TARGET: f64 = 1.0;
/// The least share of plain Redis's proposes/s the Sentinel set-up must keep.
const THROUGHPUT_TARGET: f64 = 0.8;
const KEY: &str = "c2hhcmVkLWJlbmNoLWtleS0wMTIzNDU2Nzg5YWJjZGVm";

struct Measured {
    confirm_p50_ms: f64,
    proposes_per_second: f64,
}

pub async fn rows(exe: &Path, cache: &Path, audit_dir: &Path, quick: bool, t: &mut Table) {
    match measure(exe, cache, audit_dir, quick).await {
        Ok((plain, acked)) => {
            let plain_ms = median(plain.iter().map(|m| m.confirm_p50_ms).collect());
            let acked_ms = median(acked.iter().map(|m| m.confirm_p50_ms).collect());
            let added = acked_ms - plain_ms;
            t.row(
                "a confirm across two replicas, Sentinel store with each write acknowledged by 1 replica vs plain Redis: median added",
                format!("{added:+.2} ms ({acked_ms:.2} vs {plain_ms:.2} ms)"),
                "≤ 1 ms",
                added <= ADDED_MS_TARGET,
            );
            let plain_rate: f64 = plain.iter().map(|m| m.proposes_per_second).sum::<f64>() / plain.len() as f64;
            let acked_rate: f64 = acked.iter().map(|m| m.proposes_per_second).sum::<f64>() / acked.len() as f64;
            t.row(
                "proposes/s, 8 clients over two replicas, Sentinel store (acknowledged) vs plain Redis",
                format!("{acked_rate:.0} vs {plain_rate:.0}/s: {:.2}x", acked_rate / plain_rate),
                "≥ 0.8x",
                acked_rate / plain_rate >= THROUGHPUT_TARGET,
            );
        }
        Err(e) => t.context("store failover cost (Sentinel, acknowledged writes)", format!("not measured: {e:#}")),
    }
}

/// The same two rows for the consensus store, as context (no target yet: what it costs).
pub async fn etcd_rows(exe: &Path, cache: &Path, audit_dir: &Path, quick: bool, t: &mut Table) {
    let measured = async {
        let plain = start_redis_with(&[])?;
        let cluster = Etcd::start(audit_dir)?;
        let stores = [(format!("redis://127.0.0.1:{}/0", plain.port), "plain"), (cluster.url(), "etcd")];
        let (confirms, window, rounds) =
            if quick { (10, Duration::from_millis(300), 1) } else { (300, Duration::from_secs(4), 3) };
        let (mut plain_runs, mut etcd_runs) = (Vec::new(), Vec::new());
        for round in 0..rounds {
            for (store, name) in &stores {
                let m = one(exe, cache, audit_dir, store, &format!("{name}-c-{round}"), confirms, window).await?;
                if *name == "plain" { plain_runs.push(m) } else { etcd_runs.push(m) }
            }
        }
        anyhow::Ok((plain_runs, etcd_runs))
    };
    match measured.await {
        Ok((plain, etcd)) => {
            let plain_ms = median(plain.iter().map(|m| m.confirm_p50_ms).collect());
            let etcd_ms = median(etcd.iter().map(|m| m.confirm_p50_ms).collect());
            t.context(
                "a confirm across two replicas, etcd store (3 members, majority commits) vs plain Redis: median",
                format!("{etcd_ms:.2} vs {plain_ms:.2} ms ({:+.2} ms)", etcd_ms - plain_ms),
            );
            let rate = |runs: &[Measured]| runs.iter().map(|m| m.proposes_per_second).sum::<f64>() / runs.len() as f64;
            let (plain_rate, etcd_rate) = (rate(&plain), rate(&etcd));
            t.context(
                "proposes/s, 8 clients over two replicas, etcd store (3 members) vs plain Redis",
                format!("{etcd_rate:.0} vs {plain_rate:.0}/s: {:.2}x", etcd_rate / plain_rate),
            );
        }
        Err(e) => t.context("the etcd store's cost", format!("not measured: {e:#}")),
    }
}

/// Three etcd members on loopback, their data in the bench's folder, stopped on drop.
struct Etcd {
    children: Vec<std::process::Child>,
    clients: Vec<u16>,
}

impl Etcd {
    fn start(dir: &Path) -> anyhow::Result<Etcd> {
        let port = || -> anyhow::Result<u16> { Ok(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port()) };
        let (clients, peers) = ([port()?, port()?, port()?], [port()?, port()?, port()?]);
        let cluster: Vec<String> = (0..3).map(|i| format!("b{i}=http://127.0.0.1:{}", peers[i])).collect();
        let mut etcd = Etcd { children: Vec::new(), clients: clients.to_vec() };
        for i in 0..3 {
            let data = dir.join(format!("etcd-{i}"));
            let child = std::process::Command::new("etcd")
                .args(["--name", &format!("b{i}"), "--data-dir", data.to_str().context("a UTF-8 folder")?])
                .args(["--listen-client-urls", &format!("http://127.0.0.1:{}", clients[i])])
                .args(["--advertise-client-urls", &format!("http://127.0.0.1:{}", clients[i])])
                .args(["--listen-peer-urls", &format!("http://127.0.0.1:{}", peers[i])])
                .args(["--initial-advertise-peer-urls", &format!("http://127.0.0.1:{}", peers[i])])
                .args(["--initial-cluster", &cluster.join(","), "--initial-cluster-state", "new"])
                .args(["--heartbeat-interval", "100", "--election-timeout", "1000"])
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .spawn()
                .context("etcd is not installed (.ci/install-etcd installs it)")?;
            etcd.children.push(child);
        }
        for _ in 0..300 {
            if etcd.clients.iter().any(|p| answers(*p)) {
                return Ok(etcd);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        anyhow::bail!("the etcd cluster had no quorum within 15 s")
    }

    fn url(&self) -> String {
        let hosts: Vec<_> = self.clients.iter().map(|p| format!("127.0.0.1:{p}")).collect();
        format!("etcd://{}", hosts.join(","))
    }
}

impl Drop for Etcd {
    fn drop(&mut self) {
        for child in &mut self.children {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Whether the member on `port` answers a linearizable read (HTTP/1.1 by hand).
fn answers(port: u16) -> bool {
    use std::io::{Read, Write};
    let body = r#"{"key":"cGluZw=="}"#;
    let Ok(mut s) = std::net::TcpStream::connect(("127.0.0.1", port)) else { return false };
    let _ = s.set_read_timeout(Some(Duration::from_secs(1)));
    let request = format!(
        "POST /v3/kv/range HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let mut answer = String::new();
    s.write_all(request.as_bytes()).is_ok()
        && s.read_to_string(&mut answer).is_ok()
        && answer.starts_with("HTTP/1.1 200")
}

async fn measure(exe: &Path, cache: &Path, dir: &Path, quick: bool) -> anyhow::Result<(Vec<Measured>, Vec<Measured>)> {
    let plain = start_redis_with(&[])?;
    let primary = start_redis_with(&[])?;
    let port = primary.port.to_string();
    let replicas = [
        start_redis_with(&["--replicaof", "127.0.0.1", &port])?,
        start_redis_with(&["--replicaof", "127.0.0.1", &port])?,
    ];
    wait_linked(primary.port, replicas.len())?;
    let sentinel = start_sentinel(dir, primary.port)?;
    let stores = [
        (format!("redis://127.0.0.1:{}/0", plain.port), "plain"),
        (format!("redis+sentinel://127.0.0.1:{}/bench/0", sentinel.port), "sentinel"),
    ];
    let (confirms, window, rounds) =
        if quick { (10, Duration::from_millis(300), 1) } else { (300, Duration::from_secs(4), 3) };
    let (mut plain_runs, mut acked_runs) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        for (store, name) in &stores {
            let m = one(exe, cache, dir, store, &format!("{name}-{round}"), confirms, window).await?;
            if *name == "plain" { plain_runs.push(m) } else { acked_runs.push(m) }
        }
    }
    drop((replicas, primary, plain, sentinel));
    Ok((plain_runs, acked_runs))
}

/// Two replicas on `store`: the confirm latency, then proposes/s.
async fn one(
    exe: &Path,
    cache: &Path,
    dir: &Path,
    store: &str,
    name: &str,
    confirms: usize,
    window: Duration,
) -> anyhow::Result<Measured> {
    let cache = cache.display().to_string();
    let audit = |side: &str| dir.join(format!("{name}-{side}.jsonl")).display().to_string();
    let (a_audit, b_audit) = (audit("a"), audit("b"));
    let args =
        |audit| ["--toolsets", "metros,mutate", "--proposal-store", store, "--audit-log", audit, "--cache-dir", &cache];
    let a = replica(exe, &args(&a_audit), Some(KEY)).await?;
    let b = replica(exe, &args(&b_audit), Some(KEY)).await?;
    let (on_a, on_b) = (sessions(&a.url, 1).await?, sessions(&b.url, 1).await?);
    let mut latencies = Vec::with_capacity(confirms);
    for i in 0..confirms + 5 {
        let proposal = call(&on_a[0], "fabric_propose_change", network(9, i)).await?;
        let started = Instant::now();
        let out = call(&on_b[0], "fabric_confirm_change", json!({"confirm_token": proposal["confirm_token"]})).await?;
        anyhow::ensure!(out["executed"] == true, "not executed: {out}");
        if i >= 5 {
            latencies.push(started.elapsed().as_secs_f64() * 1e3); // the first five warm up
        }
    }
    let clients = [sessions(&a.url, 4).await?, sessions(&b.url, 4).await?];
    let started = Instant::now();
    let proposes = for_a_while(8, window, |c, i| {
        let s = &clients[c % 2][c / 2];
        async move { call(s, "fabric_propose_change", network(10 + c, i)).await.map(drop) }
    })
    .await?;
    let proposes_per_second = proposes.len() as f64 / started.elapsed().as_secs_f64();
    Ok(Measured { confirm_p50_ms: median(latencies), proposes_per_second })
}

/// A Sentinel watching `primary` as `bench` (one is enough to name the primary; no failover here).
fn start_sentinel(dir: &Path, primary: u16) -> anyhow::Result<Redis> {
    let conf = dir.join("sentinel.conf");
    std::fs::write(&conf, format!("sentinel monitor bench 127.0.0.1 {primary} 1\n"))?;
    let conf = conf.to_str().context("the bench's directory is not UTF-8")?;
    crate::load::start_with_program("redis-sentinel", Some(conf), &[])
}

/// Waits until the primary on `port` streams to `n` replicas.
fn wait_linked(port: u16, n: usize) -> anyhow::Result<()> {
    use std::io::{Read, Write};
    for _ in 0..500 {
        let mut s = std::net::TcpStream::connect(("127.0.0.1", port))?;
        s.set_read_timeout(Some(Duration::from_secs(1)))?;
        s.write_all(b"INFO replication\r\n")?;
        let mut buf = [0u8; 4096];
        let read = s.read(&mut buf)?;
        if String::from_utf8_lossy(&buf[..read]).matches("state=online").count() >= n {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    anyhow::bail!("the replicas of the primary on {port} did not link")
}
