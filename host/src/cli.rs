//! Command-line interface: every flag with its environment variable.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::approval_page::settings::PageArgs;
use crate::audit::settings::AuditArgs;
pub(crate) use crate::component::settings::{ComponentArgs, LimitsArgs};
use crate::fabric_client::settings::FabricArgs;
use crate::mcp::fairness::FairnessArgs;
use crate::mcp::reach::ConfirmationArgs;
use crate::oauth::settings::AuthArgs;
use crate::policy::PolicyArgs;
use crate::transports::http::settings::HttpArgs;
use crate::transports::metrics_listener::MetricsArgs;

/// Environment-only settings (secrets stay out of the process list).
const ENV_ONLY: &str = "Secrets, from the environment or an owner-only file (--client-secret-file, --state-key-file):
  EQUINIX_API_CLIENTSECRET  OAuth2 client secret for EQUINIX_API_CLIENTID
  EQUINIX_MCP_STATE_KEY     base64 key (>= 32 bytes) sealing 2026-07-28 confirmation state;
                            the same on every HTTP replica (default: random per process)
  EQUINIX_MCP_NOTIFY_SLACK_URL, EQUINIX_MCP_NOTIFY_TEAMS_URL
                            Slack's and Teams' incoming-webhook URLs (or --notify-*-url-file)";

/// What the first screen of `--help` shows instead of serve's 60-odd options.
const EXAMPLES: &str = "A change is proposed, dry-run by Fabric, approved by a person, then sent.

Examples:
  equinix-mcp serve --fabric-sim --toolsets all,mutate
      MCP over stdio on the built-in Fabric simulator: what a client runs
  claude mcp add equinix -- equinix-mcp serve --toolsets all,mutate
      Add it to Claude Code (credentials from the environment: docs/clients.md)
  equinix-mcp serve --transport http --listen 127.0.0.1:8931 --fabric-sim
      MCP over HTTP at http://127.0.0.1:8931/mcp (a team: docs/deploying.md)
  equinix-mcp tools --toolsets all,mutate
      The tools an agent sees, with their arguments
  equinix-mcp call fabric_search_ports '{\"name\":\"dc-pri\"}' --fabric-sim
      Call one read-only tool from the shell and print its JSON result
  equinix-mcp inspect
      What the sandboxed broker component can reach, and the host's verdict
  equinix-mcp audit verify audit.jsonl
      Check the audit log's hash chain

Every server option, with its environment variable: equinix-mcp serve --help
Documentation: README.md and docs/ (docs/configuration.md has every setting)";

#[derive(Parser, Debug)]
#[command(
    name = "equinix-mcp",
    after_help = EXAMPLES,
    about = "MCP server for Equinix Fabric: read-only tools and the Safe Mutation Broker",
    args_conflicts_with_subcommands = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,

    /// `serve` options, when no subcommand is given (taken, but listed only by `serve --help`:
    /// see [`Cli::command_with_version`]).
    #[command(flatten)]
    pub serve: ServeArgs,
}

impl Cli {
    /// The command line as `main` parses it: the top level takes serve's options but leaves them
    /// to `serve --help`, so its own help is the commands and examples a newcomer needs.
    pub fn command_with_version(version: &'static str) -> clap::Command {
        use clap::CommandFactory;
        Cli::command()
            .version(version)
            .override_usage("equinix-mcp [SERVE OPTIONS]\n       equinix-mcp <COMMAND> [OPTIONS]")
            .mut_args(|a| match a.get_id().as_str() {
                "help" | "version" => a,
                _ => a.hide(true),
            })
            .mut_subcommand("call", |call| {
                // serve's settings are taken, but `call --help` lists only those a one-shot
                // read uses
                call.mut_args(|a| match CALL_SHOWS.contains(&a.get_id().as_str()) {
                    true => a,
                    false => a.hide(true),
                })
                .mut_arg("toolsets", |a| {
                    a.help("Comma-separated toolsets to serve the call from (default here: `all`, every read-only toolset)")
                })
            })
    }
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Serve MCP (the default).
    #[command(after_help = ENV_ONLY)]
    Serve(Box<ServeArgs>),
    /// What the component can reach, and the host's verdict on it.
    ///
    /// Prints the component's SHA-256, its imports and exports with types, what the host grants
    /// behind each import, and the verdict; exits non-zero when the component is refused.
    Inspect(InspectArgs),
    /// Run the Fabric simulator standalone on a loopback address.
    FabricSim(SimArgs),
    /// Print the served tools as Markdown or JSON.
    ///
    /// The served catalog: names, toolsets, annotations and input schemas.
    Tools(ToolsArgs),
    /// One read-only tool call from the shell, its result as JSON.
    ///
    /// Serve's settings say where Fabric is (`--fabric-sim` for the simulator); exits 1 when the
    /// tool answers with an error, whose result is printed too.
    Call(CallArgs),
    /// Build a broker component with the embedded one's exact flags.
    ///
    /// Builds a component from a source tree and prints its SHA-256 (needs the Rust toolchain
    /// and the wasm32-wasip2 target).
    BuildComponent(BuildComponentArgs),
    /// Cedar policy: print the schema, or check a policy set.
    #[command(subcommand)]
    Policy(PolicyCommand),
    /// The audit log: verify its hash chain and signed checkpoints, or tell each change whole
    /// across a team's replicas' logs.
    #[command(subcommand)]
    Audit(AuditCommand),
    /// The approval page's passkeys: list, revoke, export.
    #[command(subcommand)]
    Passkeys(PasskeysCommand),
    /// The people who approve creates on this machine with a passkey (local servers, no
    /// identity provider): add, list, remove, export.
    #[command(subcommand)]
    Approvers(ApproversCommand),
    /// Exit 0 when this server's `/healthz` answers 200 (a container's health check).
    ///
    /// Probes the loopback at EQUINIX_MCP_LISTEN's port, or --url. Run by the image's
    /// HEALTHCHECK, not by people, so the first screen of `--help` does not list it.
    #[command(hide = true)]
    Healthcheck(HealthcheckArgs),
}

// `healthcheck`'s probe, run by `commands::healthcheck` (a plain comment: clap would show a doc
// comment here in place of the variant's).
#[derive(Args, Debug, Clone)]
pub struct HealthcheckArgs {
    /// The address `serve` listens on (the same variable): an unspecified address (0.0.0.0 or
    /// ::) is probed on its loopback.
    #[arg(long, env = "EQUINIX_MCP_LISTEN", default_value = "127.0.0.1:8931", value_name = "ADDR")]
    pub listen: SocketAddr,

    /// Probe this URL instead (for a server behind TLS, a name its certificate carries).
    #[arg(long, value_name = "URL", conflicts_with = "listen")]
    pub url: Option<String>,

    /// How long the probe may take, in milliseconds.
    #[arg(long, default_value_t = 5_000, value_name = "MS", value_parser = crate::value_parsers::at_least_one_ms())]
    pub(crate) timeout_ms: u64,
}

#[derive(Subcommand, Debug, Clone)]
pub enum ApproversCommand {
    /// Enroll a person with a passkey: prints a one-time link (a few minutes, one use) to a page
    /// on this machine where the browser creates the passkey; waits until it is used.
    Add {
        /// Their name: as the approval page and the audit log show it, and `local:NAME` in a policy.
        #[arg(value_name = "NAME")]
        name: String,
        /// Where the enrollment page listens (loopback only; port 0 picks one).
        #[arg(long, default_value = "127.0.0.1:0", value_name = "ADDR")]
        listen: std::net::SocketAddr,
        /// How long the link works, in seconds.
        #[arg(long, default_value_t = 300, value_name = "SECS", value_parser = clap::value_parser!(u64).range(1..=900))]
        valid_secs: u64,
        #[command(flatten)]
        file: crate::approvers::ApproversArgs,
    },
    /// Every approver's passkeys: name, passkey id, when enrolled and last used, and whether removed.
    List {
        /// One JSON object per line instead of a table.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        file: crate::approvers::ApproversArgs,
    },
    /// Remove an approver: every local server refuses their passkeys from its next approval, and
    /// records the removal in its audit log.
    Remove {
        #[arg(value_name = "NAME")]
        name: String,
        /// Why, for the audit logs.
        #[arg(long, value_name = "TEXT", default_value = "removed with `equinix-mcp approvers remove`")]
        reason: String,
        #[command(flatten)]
        file: crate::approvers::ApproversArgs,
    },
    /// Print the approvers' public keys as JSON, for `audit verify --passkeys`.
    Export {
        #[command(flatten)]
        file: crate::approvers::ApproversArgs,
    },
}

/// Where the passkeys are: the shared store, or the file a standalone server keeps.
#[derive(Args, Debug, Clone)]
pub struct PasskeysAt {
    /// The servers' shared store, given as for `serve` (`memory` for the file below).
    #[command(flatten)]
    pub store: crate::proposals::StoreArgs,
    /// The passkeys file of a server without a shared store (default: the one beside the audit
    /// log, AUDIT.passkeys.json).
    #[arg(long, env = "EQUINIX_MCP_PASSKEYS_FILE", value_name = "PATH")]
    pub(crate) passkeys_file: Option<PathBuf>,
    /// The server's audit log, to find the passkeys file beside it.
    #[arg(long, env = "EQUINIX_MCP_AUDIT_LOG", value_name = "PATH")]
    pub audit_log: Option<PathBuf>,
}

#[derive(Subcommand, Debug, Clone)]
pub enum PasskeysCommand {
    /// Every enrolled passkey: its id, whose it is, when enrolled and last used, and whether revoked.
    List {
        #[command(flatten)]
        at: PasskeysAt,
        /// One JSON object per line instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Revoke a passkey: every server refuses it from its next use, and each one's audit log
    /// records the revocation before that.
    Revoke {
        /// The passkey's id (as `list` prints it).
        // base64url: an id may begin with `-`, and must not be read as a flag
        #[arg(value_name = "CREDENTIAL_ID", allow_hyphen_values = true)]
        credential_id: String,
        /// Why, for the audit log.
        #[arg(long, value_name = "TEXT")]
        reason: String,
        #[command(flatten)]
        at: PasskeysAt,
    },
    /// Print the enrolled public keys as JSON, for `audit verify --passkeys`.
    Export {
        #[command(flatten)]
        at: PasskeysAt,
    },
}

#[derive(Subcommand, Debug, Clone)]
pub enum AuditCommand {
    /// Check an audit log's hash chain: exit 0 printing its records and head hash, 1 naming the
    /// first record that breaks it (or a checkpoint it contradicts), 2 for a torn last record.
    Verify {
        /// The audit log (JSON lines); after a rotation, its files oldest first, each checked
        /// to continue the one before.
        #[arg(value_name = "FILE", required = true, num_args = 1..)]
        files: Vec<PathBuf>,
        /// Signed checkpoints to check the log against (with --public-key).
        #[arg(long, value_name = "CFILE", requires = "public_key")]
        checkpoints: Option<PathBuf>,
        /// The Ed25519 public key of the checkpoints, PEM (`openssl pkey -pubout`).
        #[arg(long, value_name = "PUB.pem", requires = "checkpoints")]
        public_key: Option<PathBuf>,
        /// Enrolled passkeys (`equinix-mcp passkeys export`): check every passkey approval in
        /// the log against them (challenge, signature, flags, counters).
        #[arg(long, value_name = "EXPORT.json")]
        passkeys: Option<PathBuf>,
    },
    /// One change's evidence across a team's replicas: give every replica's log (files, or
    /// folders with their rotated files and checkpoints); each chain is verified, then each
    /// change is told whole (proposed, decided, approved, created, its outcome) with where each
    /// record was read. Exit 1 for a broken chain or checkpoint, or a create that no decision in
    /// the logs given accounts for.
    Changes {
        /// Audit logs, their rotated files and checkpoint files, or folders holding them.
        #[arg(value_name = "PATH", required = true, num_args = 1..)]
        paths: Vec<PathBuf>,
        /// The Ed25519 public key of the checkpoints (PEM): every chain must then be vouched for
        /// by a checkpoints file among the paths.
        #[arg(long, value_name = "PUB.pem")]
        public_key: Option<PathBuf>,
        /// One JSON object per change instead of the text.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Subcommand, Debug, Clone)]
pub enum PolicyCommand {
    /// Print the Cedar schema policies are validated against (namespace `EquinixMcp`).
    Schema,
    /// Validate a policy set against the schema; exit 1 naming each policy and its problem.
    Check {
        /// The Cedar policy set.
        #[arg(value_name = "FILE")]
        file: PathBuf,
    },
    /// What a policy set decides of one request before anyone proposes it: at the dry run and
    /// when a person is asked, which policies decide, and when a denial bound to the time ends.
    /// Offline: nothing is read from Fabric, so the ports' and Cloud Routers' metros and the
    /// price are what the flags say. Exit 0 when both phases allow it, 1 when one denies it.
    Explain(Box<ExplainArgs>),
}

#[derive(Args, Debug, Clone)]
pub struct ExplainArgs {
    /// The Cedar policy set.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// The request, as fabric_propose_change takes it: {"change_type": ..., "spec": {...}}.
    #[arg(long, value_name = "FILE")]
    pub request: PathBuf,
    /// Who proposes (an ISSUER#SUBJECT, a token's label, or `local`).
    #[arg(long, default_value = "local", value_name = "PRINCIPAL")]
    pub principal: String,
    /// `stdio` or `http`.
    #[arg(long, default_value = "http", value_parser = ["stdio", "http"])]
    pub transport: String,
    /// How the person's answer comes in the approval phase.
    #[arg(long, default_value = "form", value_parser = ["form", "page", "opt_in"])]
    pub method: String,
    /// On the page: who decides (ISSUER#SUBJECT).
    #[arg(long, value_name = "PRINCIPAL")]
    pub approver: Option<String>,
    /// On the page: the approver's groups, comma-separated.
    #[arg(long, value_delimiter = ',', value_name = "GROUPS")]
    pub approver_groups: Vec<String>,
    /// On the page: how the approver approves.
    #[arg(long, value_parser = ["passkey", "sign_in"])]
    pub approved_with: Option<String>,
    /// Under a quorum: an approval already given, PRINCIPAL=GROUP,GROUP (once for each), so the
    /// explanation counts it and says what is still missing.
    #[arg(long = "approved-by", value_name = "PRINCIPAL=GROUPS")]
    pub approved_by: Vec<String>,
    /// A port's or Cloud Router's metro as the server would read it from Fabric: UUID=METRO,
    /// once for each.
    #[arg(long = "metro", value_name = "UUID=METRO")]
    pub metros: Vec<String>,
    /// The plan's monthly list price, in cents of --currency (unknown without it).
    #[arg(long, value_name = "CENTS")]
    pub(crate) monthly_price_cents: Option<i64>,
    #[arg(long, default_value = "USD", value_name = "CODE")]
    pub currency: String,
    /// When it is judged (RFC 3339; default: now).
    #[arg(long, value_name = "TIME")]
    pub at: Option<String>,
}

#[derive(Args, Debug, Clone)]
pub struct BuildComponentArgs {
    /// The root of the equinix-mcp source tree (the workspace).
    #[arg(long, default_value = ".", value_name = "DIR")]
    pub source: PathBuf,

    /// The component's package in that workspace.
    #[arg(long, default_value = "equinix-broker-component")]
    pub package: String,

    /// Cargo's target directory for the build (default: the tree's target/guest, which the
    /// host's own build shares).
    #[arg(long, value_name = "DIR")]
    pub target_dir: Option<PathBuf>,

    /// Copy the built `.wasm` here.
    #[arg(long, value_name = "PATH")]
    pub out: Option<PathBuf>,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum Transport {
    /// MCP over stdin/stdout.
    #[default]
    Stdio,
    /// MCP streamable HTTP at `http://LISTEN/mcp` (127.0.0.1/::1 only, unless bearer tokens are
    /// configured with --auth-token-file or --oauth-issuer).
    Http,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    #[default]
    Pretty,
    Json,
}

/// `serve`'s settings: each concern's flags are a group of their own, beside the code that uses
/// them and builds its settings from them; this composes them.
#[derive(Args, Debug, Clone)]
#[command(after_help = ENV_ONLY)]
pub struct ServeArgs {
    /// Serve's settings from a TOML file, one key per flag (`listen = "0.0.0.0:8931"`); a flag
    /// or its environment variable given as well wins over the file (docs/configuration.md).
    #[arg(long, env = "EQUINIX_MCP_CONFIG", value_name = "FILE")]
    pub config: Option<PathBuf>,

    #[command(flatten)]
    pub component: ComponentArgs,

    /// MCP transport.
    #[arg(long, env = "EQUINIX_MCP_TRANSPORT", value_enum, default_value_t = Transport::Stdio)]
    pub transport: Transport,

    #[command(flatten)]
    pub http: HttpArgs,

    #[command(flatten)]
    pub metrics: MetricsArgs,

    #[command(flatten)]
    pub auth: AuthArgs,

    #[command(flatten)]
    pub page: PageArgs,

    #[command(flatten)]
    pub approvers: crate::approvers::ApproversArgs,

    #[command(flatten)]
    pub store: crate::proposals::StoreArgs,

    #[command(flatten)]
    pub(crate) fairness: FairnessArgs,

    /// On SIGINT/SIGTERM, how long calls in flight (a confirmation waiting for its person) may
    /// still finish before they are cancelled, in milliseconds.
    #[arg(long, env = "EQUINIX_MCP_SHUTDOWN_GRACE_MS", default_value_t = 30_000, value_name = "MS")]
    pub(crate) shutdown_grace_ms: u64,

    /// Over HTTP, on SIGINT/SIGTERM: how long `/readyz` answers 503 `draining` while the server
    /// still takes calls, before it refuses new ones (so a load balancer probing every 2 s, three
    /// failures to mark a server down, has seen it). Default 10000 on an address other than
    /// loopback, 0 on loopback (no load balancer in front). A second signal ends it at once.
    #[arg(long, env = "EQUINIX_MCP_SHUTDOWN_DRAIN_MS", value_name = "MS",
          value_parser = clap::value_parser!(u64).range(0..=600_000))]
    pub(crate) shutdown_drain_ms: Option<u64>,

    /// Comma-separated toolsets to serve. Default (or `default`): metros, ports, service_profiles,
    /// connections, cloud_routers. `all` means every read-only toolset; `mutate` (the broker) is
    /// served only when named, e.g. `default,routing,events,mutate`.
    #[arg(long, env = "EQUINIX_MCP_TOOLSETS", value_name = "LIST")]
    pub toolsets: Option<String>,

    #[command(flatten)]
    pub fabric: FabricArgs,

    #[command(flatten)]
    pub confirmation: ConfirmationArgs,

    #[command(flatten)]
    pub limits: LimitsArgs,

    #[command(flatten)]
    pub policy: PolicyArgs,

    #[command(flatten)]
    pub audit: AuditArgs,

    #[command(flatten)]
    pub notify: crate::notify::settings::NotifyArgs,

    /// Log format on stderr (filters come from RUST_LOG, default `info`).
    #[arg(long, env = "EQUINIX_MCP_LOG_FORMAT", value_enum, default_value_t = LogFormat::Pretty)]
    pub log_format: LogFormat,
}

#[derive(Args, Debug, Clone)]
pub struct InspectArgs {
    #[command(flatten)]
    pub component: ComponentArgs,

    /// Print JSON instead of text.
    #[arg(long, env = "EQUINIX_MCP_INSPECT_JSON", value_parser = clap::builder::BoolishValueParser::new())]
    pub json: bool,

    /// The Cedar policy set `serve` would load (file, SHA-256 and number of policies are shown;
    /// one that does not validate refuses).
    #[arg(long, env = "EQUINIX_MCP_POLICY", value_name = "FILE")]
    pub policy: Option<PathBuf>,
}

#[derive(Args, Debug, Clone)]
pub struct SimArgs {
    /// Loopback address to listen on, e.g. 127.0.0.1:8787 (port 0 picks a free port).
    #[arg(long, env = "EQUINIX_MCP_SIM_LISTEN", default_value = "127.0.0.1:8787")]
    pub listen: SocketAddr,

    /// Lifetime of the tokens it hands out, in seconds.
    #[arg(long, env = "EQUINIX_MCP_SIM_TOKEN_TIMEOUT_SECS", default_value_t = 3600)]
    pub token_timeout_secs: u64,

    /// Latency added to every Fabric answer, in milliseconds.
    #[arg(long, env = "EQUINIX_MCP_SIM_LATENCY_MS", default_value_t = 0)]
    pub latency_ms: u64,
}

/// The options `call --help` lists: the tool and its arguments, where Fabric is, the component
/// and its limits.
const CALL_SHOWS: &[&str] = &[
    "help",
    "tool",
    "arguments",
    "compact",
    "component",
    "component_sha256",
    "component_public_keys",
    "cache_dir",
    "no_cache",
    "toolsets",
    "fabric_sim",
    "fabric_sim_http",
    "endpoint",
    "client_id",
    "fabric_timeout_ms",
    "guest_time_ms",
    "memory_mib",
    "log_format",
];

#[derive(Args, Debug)]
pub struct CallArgs {
    /// The tool, as `equinix-mcp tools --toolsets all` lists it (read-only tools only).
    pub tool: String,

    /// Its arguments: one JSON object (default `{}`).
    #[arg(value_name = "JSON")]
    pub arguments: Option<String>,

    /// One line of JSON instead of indented JSON.
    #[arg(long)]
    pub compact: bool,

    /// Where Fabric is and the rest of serve's settings (`--toolsets` defaults to `all` here).
    #[command(flatten)]
    pub serve: Box<ServeArgs>,
}

#[derive(Args, Debug, Clone)]
pub struct ToolsArgs {
    #[command(flatten)]
    pub component: ComponentArgs,

    /// Toolsets to list, as for `serve` (`all,mutate` lists every tool).
    #[arg(long, env = "EQUINIX_MCP_TOOLSETS", value_name = "LIST")]
    pub toolsets: Option<String>,

    /// Print Markdown (the default).
    #[arg(long, conflicts_with = "json")]
    pub markdown: bool,

    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}
