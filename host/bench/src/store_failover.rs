//! What surviving a store failover costs (issue 44): two replicas on one plain Redis (no
//! acknowledgement) against two replicas on a primary with two replicas found through a
//! Sentinel, where every store write waits for one replica (`WAIT`). Rows: a confirm's median
//! latency (propose on A untimed, confirm on B timed, one at a time), and proposes/s from 8
//! clients spread over both replicas. The two set-ups are measured alternately, and
//! compared within the run (three rounds each; one with `--quick`). Loopback only, bounded in time.

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
