//! `equinix-mcp-bench --soak`: memory over a long run of a shared HTTP server. It
//! opens sessions in waves and abandons them (no `DELETE`: they must expire by themselves), and
//! makes proposals nobody confirms (the simulator's clock ages them past their TTL), then reports
//! the server's RSS after each round. Loopback only, bounded in rounds; it stops by itself.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::Context;
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use serde_json::json;

use crate::client::{HttpChild, rss_kib, spawn_http, spec};

/// Sessions per wave (each wave expires before the next), and waves and proposals per round.
const WAVE: usize = 64;
const WAVES_PER_ROUND: usize = 5;
const PROPOSALS_PER_ROUND: usize = 800;
const IDLE_MS: u64 = 400;

pub async fn run(server: &Path, quick: bool, rounds: Option<u32>) -> anyhow::Result<()> {
    let rounds = rounds.map_or(if quick { 2 } else { 10 }, |r| r as usize);
    let audit = std::env::temp_dir().join(format!("equinix-mcp-soak-{}.jsonl", std::process::id()));
    let (idle, sessions) = (IDLE_MS.to_string(), (WAVE + 1).to_string());
    let args =
        ["--toolsets", "metros,mutate", "--session-idle-timeout-ms", &idle, "--max-sessions-per-principal", &sessions];
    let audit_text = audit.display().to_string();
    let mut all = args.to_vec();
    all.extend(["--audit-log", &audit_text]);
    let HttpChild { mut child, sim, url, .. } = spawn_http(server, &all).await?;
    let pid = child.id().context("no pid")?;
    let http = reqwest::Client::new();
    let proposer = ().serve(rmcp::transport::StreamableHttpClientTransport::from_uri(url.clone())).await?;

    // warm-up: allocator pools, the first sessions and proposals
    let mut made = 0;
    soak_round(&http, &url, &sim, &proposer, &mut made, 1, 100).await?;
    let baseline = rss_kib(pid).unwrap_or(0);
    println!("| round | sessions opened and abandoned | proposals left to expire | RSS | vs after warm-up |");
    println!("|---|---|---|---|---|");
    println!("| warm-up | {WAVE} | 100 | {:.1} MiB | – |", baseline as f64 / 1024.0);
    let started = Instant::now();
    let (mut sessions, mut proposals) = (0, 0);
    for round in 1..=rounds {
        soak_round(&http, &url, &sim, &proposer, &mut made, WAVES_PER_ROUND, PROPOSALS_PER_ROUND).await?;
        sessions += WAVE * WAVES_PER_ROUND;
        proposals += PROPOSALS_PER_ROUND;
        let rss = rss_kib(pid).unwrap_or(0);
        println!(
            "| {round} | {sessions} | {proposals} | {:.1} MiB | {:+.1} MiB |",
            rss as f64 / 1024.0,
            (rss as f64 - baseline as f64) / 1024.0
        );
    }
    println!("\n{rounds} rounds in {:.0} s", started.elapsed().as_secs_f64());
    let _ = proposer.cancel().await;
    let _ = child.kill().await;
    let _ = std::fs::remove_file(&audit);
    Ok(())
}

/// `waves` of [`WAVE`] abandoned sessions, then `proposals` proposals aged past their TTL.
async fn soak_round(
    http: &reqwest::Client,
    url: &str,
    sim: &str,
    proposer: &rmcp::service::RunningService<rmcp::RoleClient, ()>,
    made: &mut usize,
    waves: usize,
    proposals: usize,
) -> anyhow::Result<()> {
    for _ in 0..waves {
        for _ in 0..WAVE {
            let r = equinix_mcp_bench::lean::initialize(http, url).await?;
            anyhow::ensure!(r.status().is_success(), "initialize answered {}", r.status());
            let _ = r.bytes().await?;
        }
        // abandoned: they expire after IDLE_MS without traffic
        tokio::time::sleep(Duration::from_millis(IDLE_MS * 2)).await;
    }
    for _ in 0..proposals {
        let args = spec(*made).as_object().cloned().unwrap_or_default();
        *made += 1;
        let r = proposer.call_tool(CallToolRequestParams::new("fabric_propose_change").with_arguments(args)).await?;
        anyhow::ensure!(r.is_error != Some(true), "propose failed: {:?}", r.structured_content);
    }
    // every proposal of this round expires unconfirmed
    let r = http.post(format!("{sim}/_sim/clock")).json(&json!({"advance_ms": 11 * 60 * 1000})).send().await?;
    anyhow::ensure!(r.status().is_success(), "advancing the simulator clock failed");
    Ok(())
}
