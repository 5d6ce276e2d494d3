//! `equinix-mcp-bench`: whole-process figures of the `equinix-mcp` binary, measured side by side
//! in one run and reported as ratios (absolute times only as context), and the memory soak of a
//! shared HTTP server. Everything runs on loopback against the server's embedded simulator,
//! bounded in requests and time; it stops by itself. BENCHMARKS.md has the figures and what
//! each row means.

#![forbid(unsafe_code)]

mod approval;
mod client;
mod echo;
mod figures;
mod inbox;
mod load;
mod native;
mod notify;
mod passkey;
mod plan;
mod server;
mod sessions;
mod soak;
mod store_failover;
mod table;
mod team_policy;
mod token_validation;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser, Debug)]
#[command(
    name = "equinix-mcp-bench",
    version,
    about = "Benchmarks of the equinix-mcp binary on loopback: prints a table of figures with targets and verdicts \
             (see BENCHMARKS.md)",
    args_conflicts_with_subcommands = true,
    group(clap::ArgGroup::new("compared").args(["approval_page", "cold_start"]).multiple(true))
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,

    /// Fewer iterations, 0.5 s load windows and a 1 s confirmation hold (a smoke run; its figures
    /// are not the ones BENCHMARKS.md records).
    #[arg(long)]
    quick: bool,

    /// Instead of the figures, a memory soak of a shared HTTP server (abandoned sessions and
    /// unconfirmed proposals, RSS after each round).
    #[arg(long)]
    soak: bool,

    /// Only the approval page's rows (its render and a decision, and the form path beside it).
    #[arg(long, conflicts_with = "soak")]
    approval_page: bool,

    /// Only the notifications' row: what two destinations (one down) cost propose + confirm
    /// pairs, against none.
    #[arg(long, conflicts_with_all = ["soak", "approval_page", "plan"])]
    notify: bool,

    /// Only the inbox's rows: `/approve` with 200 changes waiting, on the memory store and on a
    /// Redis of its own (in process).
    #[arg(long, conflicts_with_all = ["soak", "approval_page", "notify", "plan"])]
    inbox: bool,

    /// Only the plan's rows: what resolving a proposal's plan adds to a propose, and to the form
    /// (in process, against the simulator).
    #[arg(long, conflicts_with_all = ["soak", "approval_page"])]
    plan: bool,

    /// Only the store-failover rows: two replicas on Sentinel with acknowledged writes against
    /// two on plain Redis (needs redis-server and redis-sentinel).
    #[arg(long, conflicts_with_all = ["soak", "approval_page"])]
    store_failover: bool,

    /// Only the idle sessions' rows: this many streamable-HTTP sessions opened and left idle on
    /// one replica (10,000 unless given; 1,000 with `--quick`), the memory each costs, reads at
    /// 16 clients beside them against none, and the next `initialize` shed past the cap.
    #[arg(long, value_name = "N", num_args = 0..=1, default_missing_value = "0",
          conflicts_with_all = ["soak", "approval_page", "notify", "plan", "inbox", "store_failover"])]
    idle_sessions: Option<usize>,

    /// Only the cold start's row: a fresh stdio process per start until `initialize` is
    /// answered, warm precompile cache, median of 15; beside `--baseline` when given.
    #[arg(long, conflicts_with_all = ["soak", "approval_page", "notify", "plan", "inbox", "store_failover"])]
    cold_start: bool,

    /// With --approval-page: the form path's baseline is this other `equinix-mcp` binary (an
    /// earlier build, without the page), instead of this one without the page. With
    /// --cold-start: the earlier build whose starts alternate with this one's.
    #[arg(long, value_name = "PATH", requires = "compared")]
    baseline: Option<PathBuf>,

    /// Rounds of the soak (each ~6 s on two cores); the default is 10, 2 with `--quick`.
    #[arg(long, requires = "soak", value_parser = clap::value_parser!(u32).range(1..=1000))]
    rounds: Option<u32>,

    /// The `equinix-mcp` binary to measure (default: the one beside this benchmark, as cargo
    /// builds both into the same target directory). It must embed the component this benchmark
    /// was built with.
    #[arg(long, env = "EQUINIX_MCP_BENCH_SERVER", value_name = "PATH")]
    server: Option<PathBuf>,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// A minimal native rmcp echo server over stdio: the baseline the round trips are compared
    /// with (the benchmark starts it itself).
    #[command(hide = true)]
    Echo,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    equinix_mcp::install_crypto_provider();
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("equinix-mcp-bench: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(async move {
        if let Some(Command::Echo) = cli.command {
            return echo::run().await;
        }
        if cli.plan {
            return plan::run(cli.quick).await;
        }
        if cli.inbox {
            return inbox::run(cli.quick).await;
        }
        let server = server::locate(cli.server.as_deref())?;
        if cli.notify {
            return notify::run(&server, cli.quick).await;
        }
        if let Some(n) = cli.idle_sessions {
            let n = if n > 0 {
                n
            } else if cli.quick {
                1_000
            } else {
                10_000
            };
            return sessions::run(&server, n, cli.quick).await;
        }
        if cli.cold_start {
            return figures::cold_start_only(&server, cli.baseline.as_deref(), cli.quick).await;
        }
        if cli.soak {
            soak::run(&server, cli.quick, cli.rounds).await
        } else if cli.store_failover {
            figures::store_failover_only(&server, cli.quick).await
        } else if cli.approval_page {
            figures::approval_page_only(&server, cli.baseline.as_deref(), cli.quick).await
        } else {
            figures::run(&server, cli.quick).await
        }
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("equinix-mcp-bench: {e:#}");
            ExitCode::FAILURE
        }
    }
}
