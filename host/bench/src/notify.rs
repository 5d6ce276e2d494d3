//! What the operator's notifications cost the broker: propose + confirm pairs per
//! second (each confirm executes, so each sends a notification) on a server with two destinations,
//! one answering at once and one down (a closed port), against the same binary with none, their
//! windows alternating so the machine's drift weighs on both alike.

use std::path::Path;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::load::{Pairs, pairs, replica};
use crate::table::Table;

/// A receiver on loopback that answers each request 200 at once, keeping its connections open as
/// real receivers do.
async fn receiver() -> anyhow::Result<String> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://127.0.0.1:{}/hook", listener.local_addr()?.port());
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut pending: Vec<u8> = Vec::new();
                let mut buf = vec![0u8; 16 * 1024];
                loop {
                    // one whole request: its head, then as many bytes as its content-length says
                    let Some(end) = pending.windows(4).position(|w| w == b"\r\n\r\n").map(|at| at + 4) else {
                        match stream.read(&mut buf).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => pending.extend_from_slice(&buf[..n]),
                        }
                        continue;
                    };
                    let head = String::from_utf8_lossy(&pending[..end]).to_ascii_lowercase();
                    let length: usize = head
                        .lines()
                        .find_map(|l| l.strip_prefix("content-length:"))
                        .and_then(|v| v.trim().parse().ok())
                        .unwrap_or(0);
                    if pending.len() < end + length {
                        match stream.read(&mut buf).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => pending.extend_from_slice(&buf[..n]),
                        }
                        continue;
                    }
                    pending.drain(..end + length);
                    if stream.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n").await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    Ok(url)
}

fn private(dir: &Path, name: &str, text: &str) -> anyhow::Result<String> {
    let path = dir.join(name);
    std::fs::write(&path, text)?;
    #[cfg(unix)]
    std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o600))?;
    Ok(path.display().to_string())
}

pub async fn run(exe: &Path, quick: bool) -> anyhow::Result<()> {
    let dir = std::env::temp_dir().join(format!("equinix-mcp-bench-notify-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let up = receiver().await?;
    let down = {
        let closed = std::net::TcpListener::bind("127.0.0.1:0")?;
        format!("http://127.0.0.1:{}/down", closed.local_addr()?.port())
    };
    let key = private(&dir, "key", "a-bench-signing-key-of-at-least-32-bytes")?;
    let teams = private(&dir, "teams-url", &down)?;
    let cache = dir.join("cache").display().to_string();
    let audit = |n: &str| dir.join(n).display().to_string();
    let (plain_audit, notified_audit) = (audit("plain.jsonl"), audit("notified.jsonl"));
    let plain_args = ["--toolsets", "metros,mutate", "--audit-log", &plain_audit, "--cache-dir", &cache];
    let mut notified_args = vec!["--toolsets", "metros,mutate", "--audit-log", &notified_audit, "--cache-dir", &cache];
    notified_args.extend([
        "--notify-webhook",
        &up,
        "--notify-webhook-key-file",
        &key,
        "--notify-teams-url-file",
        &teams,
    ]);
    let plain = replica(exe, &plain_args, None).await?;
    let notified = replica(exe, &notified_args, None).await?;
    let (rounds, window) = if quick { (1, Duration::from_millis(500)) } else { (5, Duration::from_secs(2)) };
    let (mut without, mut with): (Vec<Pairs>, Vec<Pairs>) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        // the order alternates, so neither always runs first
        if round % 2 == 0 {
            without.push(pairs(&plain.url, &plain.url, 8, window).await?);
            with.push(pairs(&notified.url, &notified.url, 8, window).await?);
        } else {
            with.push(pairs(&notified.url, &notified.url, 8, window).await?);
            without.push(pairs(&plain.url, &plain.url, 8, window).await?);
        }
    }
    let rate = |v: &[Pairs]| v.iter().map(|p| p.per_second).sum::<f64>() / v.len() as f64;
    let ratio = rate(&with) / rate(&without);
    let mut table = Table::default();
    table.row(
        "propose + confirm pairs/s (8 clients), two notification destinations (one down) vs none",
        format!("{ratio:.3}x ({:.0} vs {:.0}/s, {rounds} alternating windows each)", rate(&with), rate(&without)),
        "≥ 0.95x",
        ratio >= 0.95,
    );
    table.print();
    drop((plain, notified));
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}
