//! `equinix-mcp-bench --idle-sessions`: one replica holding a team's idle streamable-HTTP
//! sessions. Reads from 16 clients are timed with none idle, then the sessions are opened (each
//! initialized, then left alone) and the reads timed beside them, then the sessions are closed
//! (`DELETE`) and the reads timed once more: the ratio is against the mean of the two runs
//! without, so the machine's drift over the run is not read as the sessions' cost. The server's
//! RSS is read before and after the opening, and one `initialize` past `--max-sessions` must be
//! shed with a 503 and `Retry-After` while the sessions already open keep working. Loopback
//! only, bounded in sessions and time; it stops by itself.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::Context;
use equinix_mcp_bench::lean::{LeanSession, initialize};
use futures_util::StreamExt;
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::StreamableHttpClientTransport;
use serde_json::json;

use crate::client::{HttpChild, quantile, rss_kib, spawn_http};

const READERS: usize = 16;
/// `initialize`s in flight while the idle sessions are opened.
const OPENING_AT_ONCE: usize = 32;

type Reader = rmcp::service::RunningService<rmcp::RoleClient, ()>;

pub async fn run(server: &Path, idle: usize, quick: bool) -> anyhow::Result<()> {
    let window = if quick { Duration::from_millis(500) } else { Duration::from_secs(4) };
    // room for exactly the readers and the idle sessions, so the next one is shed
    let cap = (idle + READERS).to_string();
    let HttpChild { mut child, url, .. } = spawn_http(
        server,
        &["--max-sessions", &cap, "--max-sessions-per-principal", &(idle + READERS + 1).to_string()],
    )
    .await?;
    let pid = child.id().context("no pid")?;
    let mut readers = Vec::new();
    for _ in 0..READERS {
        readers.push(().serve(StreamableHttpClientTransport::from_uri(url.clone())).await?);
    }
    reads(&readers, Duration::from_millis(300)).await?; // warm-up: pools, the component's instances
    let none_idle = reads(&readers, window).await?;

    let before = rss_kib(pid).context("no RSS")?;
    let http = reqwest::Client::builder().pool_max_idle_per_host(OPENING_AT_ONCE).build()?;
    let started = Instant::now();
    // each initialized, then left alone, as a client leaves it between conversations
    let opened: Vec<anyhow::Result<LeanSession>> = futures_util::stream::iter(0..idle)
        .map(|_| LeanSession::open_on(http.clone(), &url))
        .buffer_unordered(OPENING_AT_ONCE)
        .collect()
        .await;
    let opening = started.elapsed();
    let refused = opened.iter().filter(|r| r.is_err()).count();
    let mut sessions = Vec::with_capacity(idle);
    for r in opened {
        match r {
            Ok(session) => sessions.push(session),
            Err(e) => anyhow::bail!("{refused} of {idle} sessions could not be opened; the first: {e:#}"),
        }
    }
    // the allocator settles: read the RSS once the opening's buffers are back
    tokio::time::sleep(Duration::from_millis(500)).await;
    let after = rss_kib(pid).context("no RSS")?;
    let with_idle = reads(&readers, window).await?;

    // one more than the cap: shed, and nothing lost for the sessions already open
    let shed = initialize(&http, &url).await?;
    let (status, retry_after) =
        (shed.status(), shed.headers().get("retry-after").and_then(|v| v.to_str().ok()).map(String::from));
    let body = shed.text().await.unwrap_or_default();
    let still = reads(&readers, Duration::from_millis(200)).await?;

    let closed: Vec<anyhow::Result<()>> =
        futures_util::stream::iter(sessions).map(LeanSession::close).buffer_unordered(OPENING_AT_ONCE).collect().await;
    closed.into_iter().collect::<anyhow::Result<Vec<()>>>()?;
    let none_again = reads(&readers, window).await?;
    for r in readers {
        let _ = r.cancel().await;
    }
    let _ = child.kill().await;

    let per_session = (after.saturating_sub(before)) as f64 / idle as f64;
    let (p50, p99) = (
        (none_idle.percentile(50) + none_again.percentile(50)) / 2.0,
        (none_idle.percentile(99) + none_again.percentile(99)) / 2.0,
    );
    let (q50, q99) = (with_idle.percentile(50), with_idle.percentile(99));
    println!("| figure | measured | target | verdict |");
    println!("|---|---|---|---|");
    println!(
        "| {idle} idle sessions opened | {:.1} s ({:.0}/s), RSS {:.1} MiB to {:.1} MiB | (context) | - |",
        opening.as_secs_f64(),
        idle as f64 / opening.as_secs_f64(),
        before as f64 / 1024.0,
        after as f64 / 1024.0
    );
    println!("| memory per idle session | {per_session:.1} KiB | (context) | - |");
    println!(
        "| reads at {READERS} clients, p50 / p99, with {idle} idle vs none (the mean of before and after) | {:.2}x / \
         {:.2}x ({q50:.2} / {q99:.2} ms vs {p50:.2} / {p99:.2} ms; {} calls vs {} and {}) | <= 1.10x p50 and p99 (no \
         slower, within the machine's noise) | {} |",
        q50 / p50,
        q99 / p99,
        with_idle.0.len(),
        none_idle.0.len(),
        none_again.0.len(),
        if q50 <= p50 * 1.10 && q99 <= p99 * 1.10 { "met" } else { "MISSED" }
    );
    let shed_ok = status == 503 && retry_after.is_some() && !still.0.is_empty();
    println!(
        "| the next `initialize` past --max-sessions | {status}, Retry-After: {}; the {READERS} open sessions kept \
         reading ({} calls after it); \"{}\" | 503 with Retry-After, nothing lost | {} |",
        retry_after.as_deref().unwrap_or("none"),
        still.0.len(),
        one_line(&body),
        if shed_ok { "met" } else { "MISSED" }
    );
    Ok(())
}

/// Each call's latency in milliseconds.
struct Latencies(Vec<f64>);

impl Latencies {
    fn percentile(&self, p: usize) -> f64 {
        let mut v = self.0.clone();
        v.sort_by(f64::total_cmp);
        quantile(&v, p as f64 / 100.0)
    }
}

/// Every reader calls a read tool back to back for `window`.
async fn reads(readers: &[Reader], window: Duration) -> anyhow::Result<Latencies> {
    let deadline = Instant::now() + window;
    let work = readers.iter().map(|r| async move {
        let mut out = Vec::new();
        while Instant::now() < deadline {
            let args = json!({"limit": 5}).as_object().cloned().unwrap_or_default();
            let t = Instant::now();
            let result = r.call_tool(CallToolRequestParams::new("fabric_list_metros").with_arguments(args)).await?;
            anyhow::ensure!(result.is_error != Some(true), "a read failed: {:?}", result.content);
            out.push(t.elapsed().as_secs_f64() * 1e3);
        }
        anyhow::Ok(out)
    });
    let mut all = Vec::new();
    for r in futures_util::future::join_all(work).await {
        all.extend(r?);
    }
    anyhow::ensure!(!all.is_empty(), "no read finished in {window:?}");
    Ok(Latencies(all))
}

fn one_line(s: &str) -> String {
    let s: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    s.chars().take(160).collect()
}
