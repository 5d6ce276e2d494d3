//! The `equinix-mcp` binary: parse the command line, set up logging, dispatch.

use std::process::ExitCode;

use clap::FromArgMatches;
use equinix_fabric_sim as fabric_sim;
use equinix_mcp::cli::{Cli, Command, LogFormat};
use equinix_mcp::commands::{
    approvers, audit, build_component, call, healthcheck, inspect, passkeys, policy, serve, tools,
};

/// EX_USAGE of sysexits.h: the command line was wrong.
const USAGE: i32 = 64;

fn main() -> ExitCode {
    equinix_mcp::install_crypto_provider();
    let version: &'static str = Box::leak(
        format!(
            "{} {} (component sha256:{})",
            env!("CARGO_PKG_VERSION"),
            env!("EQUINIX_MCP_TARGET"),
            equinix_mcp::EMBEDDED_COMPONENT_SHA256
        )
        .into_boxed_str(),
    );
    let command = Cli::command_with_version(version);
    let mut argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if let Some(path) = equinix_mcp::config_file::named(&argv) {
        argv = match equinix_mcp::config_file::apply(&command, argv, &path) {
            Ok(with_file) => with_file,
            Err(e) => {
                eprintln!("equinix-mcp: {e:#}");
                // a mistake in the settings, as clap's for a flag
                std::process::exit(2);
            }
        };
    }
    let matches = match command.try_get_matches_from(argv) {
        Ok(matches) => matches,
        Err(e) => {
            // `audit verify` gives exit status 2 its own meaning (a torn last record), so a
            // mistake on its command line is EX_USAGE (64) there, not clap's 2
            let audit = std::env::args().nth(1).as_deref() == Some("audit");
            let code = if audit && e.use_stderr() { USAGE } else { e.exit_code() };
            let _ = e.print();
            std::process::exit(code);
        }
    };
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(c) => c,
        Err(e) => e.exit(),
    };
    let log_format = match &cli.command {
        Some(Command::Serve(a)) => a.log_format,
        Some(Command::Call(a)) => a.serve.log_format,
        _ => cli.serve.log_format,
    };
    // a one-shot call's answer is its output: its access-log line would only be noise
    let quiet = matches!(cli.command, Some(Command::Call(_)));
    init_logging(log_format, if quiet { "warn" } else { "info" });
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("equinix-mcp: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(async move {
        match cli.command {
            None => serve::run(cli.serve).await.map(|_| ExitCode::SUCCESS),
            Some(Command::Serve(args)) => serve::run(*args).await.map(|_| ExitCode::SUCCESS),
            Some(Command::Inspect(args)) => inspect::run(&args).await,
            Some(Command::FabricSim(args)) => run_sim(args).await.map(|_| ExitCode::SUCCESS),
            Some(Command::Tools(args)) => tools::run(&args).await.map(|_| ExitCode::SUCCESS),
            Some(Command::Call(args)) => call::run(args).await,
            Some(Command::BuildComponent(args)) => build_component::run(&args),
            Some(Command::Policy(command)) => Ok(policy::run(&command)),
            Some(Command::Audit(command)) => Ok(audit::run(&command)),
            Some(Command::Passkeys(command)) => passkeys::run(&command).await,
            Some(Command::Approvers(command)) => approvers::run(&command).await,
            Some(Command::Healthcheck(args)) => healthcheck::run(&args).await,
        }
    });
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("equinix-mcp: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// rmcp logs the id of every new HTTP session at INFO; a session id is a capability, so that
/// module speaks only from WARN up unless RUST_LOG names it explicitly.
const SESSION_LOGS: &str = "rmcp::transport::streamable_http_server::session";

/// Logs to standard error at `default` unless RUST_LOG says otherwise.
fn init_logging(format: LogFormat, default: &str) {
    let configured = std::env::var("RUST_LOG").ok().filter(|f| !f.trim().is_empty());
    let mut filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    if !configured.as_deref().is_some_and(|f| f.contains(SESSION_LOGS)) {
        filter = filter.add_directive(format!("{SESSION_LOGS}=warn").parse().expect("a valid directive"));
    }
    // rmcp says three INFO lines of every request (a unit's `RUST_LOG=info` would log them all):
    // the library speaks from WARN up unless RUST_LOG names it; the access log says each call once
    if !configured.as_deref().is_some_and(|f| f.split(',').any(|d| d.trim().starts_with("rmcp"))) {
        filter = filter.add_directive("rmcp=warn".parse().expect("a valid directive"));
    }
    // Colour only for a person at a terminal: a file, a pipe or a log collector gets plain text.
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr())
        && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).with_ansi(ansi);
    match format {
        LogFormat::Pretty => builder.fmt_fields(equinix_mcp::log_lines::fields()).init(),
        LogFormat::Json => builder.json().with_ansi(false).init(),
    }
}

async fn run_sim(args: equinix_mcp::cli::SimArgs) -> anyhow::Result<()> {
    if !args.listen.ip().is_loopback() {
        anyhow::bail!("the simulator listens on loopback only; {} is not a loopback address", args.listen);
    }
    let config = fabric_sim::SimConfig {
        token_timeout_secs: args.token_timeout_secs,
        latency: std::time::Duration::from_millis(args.latency_ms),
        ..Default::default()
    };
    let sim = fabric_sim::start(args.listen, config).await?;
    eprintln!(
        "fabric simulator listening on {} (EQUINIX_API_ENDPOINT={} EQUINIX_API_CLIENTID={} EQUINIX_API_CLIENTSECRET={})",
        sim.addr,
        sim.base_url(),
        fabric_sim::SIM_CLIENT_ID,
        fabric_sim::SIM_CLIENT_SECRET
    );
    tokio::signal::ctrl_c().await?;
    Ok(())
}
