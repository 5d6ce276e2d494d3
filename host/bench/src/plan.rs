//! What the plan adds to a propose: the host's reads of what a connection's bytes name
//! (at once, as the server makes them) and the lines composed from them, against the simulator in
//! this process, taking turns with the dry run of the same body, which every propose sends anyway;
//! and what it adds to the form a person reads.

use std::time::Instant;

use equinix_broker_contract::ChangeType;
use equinix_mcp::approval::{Subject, form};
use equinix_mcp::bindings::confirmation::Context;
use equinix_mcp::fabric_client::{ApiRequest, Method};
use equinix_mcp::plan::{compose, resolve};
use tokio_util::sync::CancellationToken;

use crate::client::{ms, quantile, spec};
use crate::table::Table;

pub async fn run(quick: bool) -> anyhow::Result<()> {
    let rounds = if quick { 100 } else { 1000 };
    let (sim, client) = crate::native::in_process_fabric().await?;
    let cancel = CancellationToken::new();
    let (mut plans, mut dry_runs) = (Vec::with_capacity(rounds), Vec::with_capacity(rounds));
    let mut last = None;
    for i in 0..rounds {
        let body = spec(i)["spec"].clone();
        let text = body.to_string();
        let dry_run = ApiRequest {
            method: Method::Post,
            path: "/fabric/v4/connections".into(),
            query: vec![("dryRun".into(), "true".into())],
            body: Some(text.clone()),
        };
        let t = Instant::now();
        let answer = client.send(&dry_run, &cancel).await.map_err(|e| anyhow::anyhow!("the dry run: {e:?}"))?;
        dry_runs.push(ms(t.elapsed()));
        anyhow::ensure!(answer.status == 200, "the dry run answered {}: {}", answer.status, answer.body);
        let t = Instant::now();
        let (answers, over) = resolve::read_all(&client, &cancel, ChangeType::ConnectionCreate, &body).await;
        let sha = equinix_broker_contract::request_sha256("connection_create", &text);
        let input = compose::Input {
            change_type: ChangeType::ConnectionCreate,
            body: &body,
            request_sha256: &sha,
            answers: &answers,
            over,
            read_at: "2026-12-04T00:00:00Z".into(),
        };
        let plan = compose::compose(input);
        plans.push(ms(t.elapsed()));
        anyhow::ensure!(plan.failed() == 0 && !plan.text().contains("not resolved"), "{}", plan.text());
        last = Some((text, plan));
    }
    for v in [&mut plans, &mut dry_runs] {
        v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    }
    let (text, plan) = last.expect("at least one round");
    let tree = equinix_mcp::exact_json::parse(&text).map_err(anyhow::Error::msg)?;
    let context = Context { title: "Create Fabric connection?".into(), message: "m".into(), fields: vec![] };
    let form_of = |plan| {
        let shown = form::Request {
            tool: "fabric_confirm_change",
            change_type: ChangeType::ConnectionCreate,
            path: "/fabric/v4/connections",
            body: &tree,
            subject: Subject::default(),
            validated_at_ms: 0,
            plan,
        };
        form::render(shown, &context).map(|f| f.text.len())
    };
    let (with, without) =
        (form_of(Some(&plan)).map_err(anyhow::Error::msg)?, form_of(None).map_err(anyhow::Error::msg)?);
    let mut table = Table::default();
    let (p50, p99) = (quantile(&plans, 0.5), quantile(&plans, 0.99));
    table.row(
        "what the plan adds to a propose: its reads at once and its lines, p50 / p99",
        format!("{p50:.2} / {p99:.2} ms ({rounds} proposes)"),
        "≤ 10 ms",
        p99 <= 10.0,
    );
    table.context(
        "the dry run every propose sends, p50 / p99",
        format!(
            "{:.2} / {:.2} ms; the plan is {:.2}x its p50",
            quantile(&dry_runs, 0.5),
            quantile(&dry_runs, 0.99),
            p50 / quantile(&dry_runs, 0.5)
        ),
    );
    table.context("the form a person reads, with the plan / without", format!("{with} / {without} bytes"));
    beside_the_dry_run(&mut table, &sim.base_url(), &client, &cancel, if quick { 5 } else { 15 }).await?;
    table.print();
    Ok(())
}

/// At 100 ms of simulated Fabric latency, what the plan's reads add to the wait of a propose:
/// sent beside its dry run (as the server sends them) and after it (as it once did), against the
/// dry run alone, each way in turn, medians of `rounds`.
async fn beside_the_dry_run(
    table: &mut Table,
    sim: &str,
    client: &equinix_mcp::fabric_client::FabricClient,
    cancel: &CancellationToken,
    rounds: usize,
) -> anyhow::Result<()> {
    crate::figures::set_latency(sim, 100).await?;
    let (mut alone, mut beside, mut after) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..rounds {
        let body = spec(10_000 + i)["spec"].clone();
        let dry_run = ApiRequest {
            method: Method::Post,
            path: "/fabric/v4/connections".into(),
            query: vec![("dryRun".into(), "true".into())],
            body: Some(body.to_string()),
        };
        let reads = || resolve::read_all(client, cancel, ChangeType::ConnectionCreate, &body);
        let t = Instant::now();
        client.send(&dry_run, cancel).await.map_err(|e| anyhow::anyhow!("the dry run: {e:?}"))?;
        alone.push(ms(t.elapsed()));
        let t = Instant::now();
        let (answer, _) = tokio::join!(client.send(&dry_run, cancel), reads());
        answer.map_err(|e| anyhow::anyhow!("the dry run: {e:?}"))?;
        beside.push(ms(t.elapsed()));
        let t = Instant::now();
        client.send(&dry_run, cancel).await.map_err(|e| anyhow::anyhow!("the dry run: {e:?}"))?;
        reads().await;
        after.push(ms(t.elapsed()));
    }
    crate::figures::set_latency(sim, 0).await?;
    for v in [&mut alone, &mut beside, &mut after] {
        v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    }
    let (alone, beside, after) = (quantile(&alone, 0.5), quantile(&beside, 0.5), quantile(&after, 0.5));
    table.row(
        "at 100 ms of Fabric latency, the dry run with the plan's reads beside it vs alone, medians",
        format!("{:.2}x ({beside:.0} ms vs {alone:.0} ms, {rounds} each)", beside / alone),
        "≤ 1.2x",
        beside / alone <= 1.2,
    );
    table.context(
        "the same with the reads after the dry run (as the server once sent them)",
        format!("{:.2}x ({after:.0} ms)", after / alone),
    );
    Ok(())
}
