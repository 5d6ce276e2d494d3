//! The inbox with 200 changes waiting: what `GET /approve` does for a signed-in person
//! (read the store's index, judge every entry by the four-eyes policy of docs/approval-page.md,
//! write the page), in this process, on the memory store and on a Redis of its own on loopback
//! when `redis-server` is installed. Two readers: one who may decide every change (the page holds
//! the first 50) and one who may decide none (every entry judged twice, the worst case).

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use equinix_mcp::approval_page::inbox;
use equinix_mcp::approval_page::sealed_cookie::CookieSeal;
use equinix_mcp::approval_page::{ApprovalPage, PageDeps, PageRecord, Session};
use equinix_mcp::clock::Clock;
use equinix_mcp::plan::Plan;
use equinix_mcp::policy::{Facts, PolicyGate};
use equinix_mcp::proposals::ProposalStore;

use clap::Parser;

use crate::client::ms;
use crate::table::Table;

const PENDING: usize = 200;
const TARGET_MS: f64 = 50.0;
const ISSUER: &str = "https://idp.example";

fn four_eyes() -> String {
    let doc = include_str!("../../../docs/approval-page.md");
    let start = doc.find("```cedar\n").expect("the four-eyes set") + "```cedar\n".len();
    doc[start..start + doc[start..].find("```").expect("its end")].to_string()
}

fn record(i: usize, now: u64) -> PageRecord {
    let name = format!("inbox-bench-{i}");
    let facts = Facts {
        bandwidth_mbps: Some(if i.is_multiple_of(2) { 10_000 } else { 500 }),
        metros: BTreeSet::from(["DC".to_string()]),
        name: name.clone(),
        request_sha256: format!("{i:064x}"),
        ..Facts::default()
    };
    PageRecord {
        id: format!("apv-{i:032x}"),
        form_text: "x".repeat(3000),
        request_sha256: format!("{i:064x}"),
        token: format!("chg-{i:032x}"),
        validation: "v".into(),
        proposer: format!("{ISSUER}#engineer-{}", i % 10),
        tool: "fabric_confirm_change".into(),
        validated_at_ms: now,
        created_at_ms: now + i as u64,
        expires_at_ms: now + 600_000,
        change_type: "connection_create".into(),
        transport: "http".into(),
        facts: Some(facts),
        plan: Some(Plan {
            change_type: "connection_create".into(),
            request_sha256: format!("{i:064x}"),
            read_at: "2026-12-05T00:00:00Z".into(),
            summary: format!(
                "+ create connection (billable): EVPL_VC, 10000 Mbps, USD 1200.00 per month; named \"{name}\""
            ),
            lines: Vec::new(),
            checks: Vec::new(),
            priced: None,
        }),
        agent_reason: String::new(),
        break_glass: vec![],
    }
}

fn person(name: &str, groups: &[&str]) -> Session {
    Session {
        approver: format!("{ISSUER}#{name}"),
        subject: name.into(),
        groups: groups.iter().map(|g| g.to_string()).collect(),
        auth_time: 0,
        csrf: String::new(),
        expires_at_ms: u64::MAX,
        named: Default::default(),
    }
}

#[derive(clap::Parser)]
struct Store {
    #[command(flatten)]
    args: equinix_mcp::proposals::StoreArgs,
}

/// A Redis of this run's own on a free loopback port, stopped on drop.
struct Redis(std::process::Child, u16);

impl Redis {
    fn start() -> Option<Redis> {
        let port = std::net::TcpListener::bind("127.0.0.1:0").ok()?.local_addr().ok()?.port();
        let child = std::process::Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            .stdout(std::process::Stdio::null())
            .spawn()
            .ok()?;
        let up = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            if up.elapsed() > Duration::from_secs(5) {
                return None;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Some(Redis(child, port))
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

async fn page_over(store: ProposalStore, clock: Clock, dir: &std::path::Path) -> anyhow::Result<Arc<ApprovalPage>> {
    let policy = dir.join("four-eyes.cedar");
    std::fs::write(&policy, four_eyes())?;
    let deps = PageDeps {
        store: Arc::new(store),
        clock,
        audit: None,
        policy: Arc::new(PolicyGate::load(&policy)?),
        transport: "http",
        cookie_seal: CookieSeal::new(&[7; 32]),
        notifier: None,
    };
    Ok(ApprovalPage::start_local(dir.join("approvers.json"), deps))
}

pub async fn run(quick: bool) -> anyhow::Result<()> {
    let rounds = if quick { 20 } else { 200 };
    let dir = std::env::temp_dir().join(format!("equinix-mcp-bench-inbox-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let redis = Redis::start();
    let mut stores = vec![("memory", ProposalStore::new())];
    if let Some(r) = &redis {
        let url = format!("redis://127.0.0.1:{}/0", r.1);
        let store = Store::parse_from(["bench", "--proposal-store", &url]);
        stores.push(("redis", ProposalStore::open(&store.args).await?));
    }
    let mut table = Table::default();
    let clock = Clock::default();
    for (backend, store) in stores {
        let page = page_over(store, clock.clone(), &dir).await?;
        let now = clock.now_ms();
        for i in 0..PENDING {
            page.notes().put(&record(i, now), None).await.map_err(|e| anyhow::anyhow!("{e}"))?;
        }
        for (who, session) in
            [("may decide all", person("alice", &["netops"])), ("may decide none", person("mallory", &[]))]
        {
            let mut took = Vec::with_capacity(rounds);
            let mut bytes = 0;
            let mut shown = 0;
            for _ in 0..rounds {
                let t = Instant::now();
                let listed = inbox::read(&page, &session, None, None).await.map_err(anyhow::Error::msg)?;
                let html = listed.render(&session, clock.now_ms());
                took.push(ms(t.elapsed()));
                bytes = html.len();
                shown = listed.mine_to_decide.len();
            }
            took.sort_by(|a, b| a.partial_cmp(b).unwrap());
            let (p50, p99) = (took[took.len() / 2], took[(took.len() - 1) * 99 / 100]);
            table.row(
                &format!("{PENDING} waiting, {backend} store, a reader who {who} ({shown} rows, {bytes} B)"),
                format!("{p50:.2} / {p99:.2} ms p50 / p99"),
                &format!("< {TARGET_MS} ms"),
                p99 < TARGET_MS,
            );
        }
    }
    if redis.is_none() {
        println!("(no redis-server on PATH: the Redis rows were not measured)");
    }
    table.print();
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}
