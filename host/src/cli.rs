//! Command-line interface: every flag with its environment variable.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// Environment-only settings (secrets stay out of the process list).
const ENV_ONLY: &str = "Environment only:
  EQUINIX_API_CLIENTSECRET  OAuth2 client secret for EQUINIX_API_CLIENTID
  EQUINIX_MCP_STATE_KEY     base64 key (>= 32 bytes) sealing 2026-07-28 confirmation state;
                            the same on every HTTP replica (default: random per process)";

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
    /// The audit log: verify its hash chain and signed checkpoints.
    #[command(subcommand)]
    Audit(AuditCommand),
    /// The approval page's passkeys: list, revoke, export.
    #[command(subcommand)]
    Passkeys(PasskeysCommand),
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
    pub passkeys_file: Option<PathBuf>,
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

/// Where the broker component comes from.
#[derive(Args, Debug, Clone, Default)]
pub struct ComponentArgs {
    /// Use this `.wasm` component instead of the embedded one (never a precompiled `.cwasm`).
    #[arg(long, env = "EQUINIX_MCP_COMPONENT", value_name = "PATH")]
    pub component: Option<PathBuf>,

    /// Refuse to start unless the component's SHA-256 is this (lowercase hex). A pinned component
    /// is compiled from its bytes at every start, never loaded from the precompile cache.
    #[arg(long, env = "EQUINIX_MCP_COMPONENT_SHA256", value_name = "HEX")]
    pub component_sha256: Option<String>,

    /// Require a minisign signature of the component's bytes (COMPONENT.wasm.minisig, as
    /// `minisign -Sm` writes it) by one of these public keys (minisign `.pub` files; repeatable,
    /// or comma-separated in the env var). The embedded component needs none.
    #[arg(
        long = "component-public-key",
        env = "EQUINIX_MCP_COMPONENT_PUBLIC_KEYS",
        value_delimiter = ',',
        value_name = "FILE"
    )]
    pub component_public_keys: Vec<PathBuf>,

    /// Directory of the precompiled-component cache (default: the user's cache dir).
    #[arg(long, env = "EQUINIX_MCP_CACHE_DIR", value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,

    /// Compile the component at every start instead of using the cache.
    #[arg(long, env = "EQUINIX_MCP_NO_CACHE", value_parser = clap::builder::BoolishValueParser::new())]
    pub no_cache: bool,
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

fn default_listen() -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], 8931))
}

#[derive(Args, Debug, Clone)]
#[command(after_help = ENV_ONLY)]
pub struct ServeArgs {
    #[command(flatten)]
    pub component: ComponentArgs,

    /// MCP transport.
    #[arg(long, env = "EQUINIX_MCP_TRANSPORT", value_enum, default_value_t = Transport::Stdio)]
    pub transport: Transport,

    /// Address for `--transport http`. Anything but 127.0.0.1 or ::1 needs --auth-token-file or
    /// --oauth-issuer, and --allowed-host (or --public-url).
    #[arg(long, env = "EQUINIX_MCP_LISTEN", default_value_t = default_listen(), value_name = "ADDR")]
    pub listen: SocketAddr,

    /// Serve HTTPS: the certificate chain, PEM (with --tls-key). Reread on SIGHUP.
    #[arg(long, env = "EQUINIX_MCP_TLS_CERT", value_name = "PATH")]
    pub tls_cert: Option<PathBuf>,

    /// The certificate's private key, PEM (with --tls-cert). Reread on SIGHUP.
    #[arg(long, env = "EQUINIX_MCP_TLS_KEY", value_name = "PATH")]
    pub tls_key: Option<PathBuf>,

    /// Serve Prometheus metrics at http://ADDR/metrics (a bare port means 127.0.0.1:PORT). Off
    /// unless given; keep it off the public interface (it needs no token).
    #[arg(long, env = "EQUINIX_MCP_METRICS_LISTEN", value_name = "ADDR", value_parser = parse_metrics_listen)]
    pub metrics_listen: Option<SocketAddr>,

    /// HTTP bearer tokens, one per line as `TOKEN` or `LABEL TOKEN` (the label names the
    /// principal whose proposals the token can see); must not be group/world-readable. Reread
    /// on SIGHUP.
    #[arg(long, env = "EQUINIX_MCP_AUTH_TOKEN_FILE", value_name = "PATH")]
    pub auth_token_file: Option<PathBuf>,

    /// Accept the OAuth 2.1 access tokens (JWTs) of this issuer, as MCP authorization
    /// describes: its metadata and keys are read at start. Needs --public-url.
    #[arg(long, env = "EQUINIX_MCP_OAUTH_ISSUER", value_name = "URL", requires = "public_url")]
    pub oauth_issuer: Option<String>,

    /// The canonical URL of this server's MCP endpoint as clients reach it (for example
    /// https://mcp.example.internal/mcp): the audience every access token must carry, and the
    /// `resource` of the Protected Resource Metadata. Its host is an accepted `Host`.
    #[arg(long, env = "EQUINIX_MCP_PUBLIC_URL", value_name = "URL", requires = "oauth_issuer")]
    pub public_url: Option<String>,

    /// The `aud` value tokens must carry, when the provider cannot put --public-url there (Entra
    /// ID puts the application's client id).
    #[arg(long, env = "EQUINIX_MCP_OAUTH_AUDIENCE", value_name = "AUD", requires = "oauth_issuer")]
    pub oauth_audience: Option<String>,

    /// The claim naming the principal (with the issuer): `sub` by default, `oid` for Entra ID.
    #[arg(long, env = "EQUINIX_MCP_OAUTH_PRINCIPAL_CLAIM", default_value = "sub", value_name = "CLAIM")]
    pub oauth_principal_claim: String,

    /// The scope that grants the read tools.
    #[arg(long, env = "EQUINIX_MCP_OAUTH_SCOPE_READ", default_value = "fabric:read", value_name = "SCOPE")]
    pub oauth_scope_read: String,

    /// The scope that grants fabric_propose_change.
    #[arg(long, env = "EQUINIX_MCP_OAUTH_SCOPE_PROPOSE", default_value = "fabric:propose", value_name = "SCOPE")]
    pub oauth_scope_propose: String,

    /// The scope that grants fabric_confirm_change.
    #[arg(long, env = "EQUINIX_MCP_OAUTH_SCOPE_CONFIRM", default_value = "fabric:confirm", value_name = "SCOPE")]
    pub oauth_scope_confirm: String,

    /// Put before each scope name where clients ask for it (the metadata's scopes_supported and
    /// the challenges); a token may carry either form. Entra ID: `api://APP-ID/`.
    #[arg(long, env = "EQUINIX_MCP_OAUTH_SCOPE_PREFIX", default_value = "", value_name = "PREFIX")]
    pub oauth_scope_prefix: String,

    /// Clock skew tolerated on a token's exp, nbf and iat, in seconds (at most 300).
    #[arg(long, env = "EQUINIX_MCP_OAUTH_CLOCK_LEEWAY_SECS", default_value_t = 30, value_name = "SECS")]
    pub oauth_clock_leeway_secs: u64,

    /// Serve the approval page (beside /mcp over HTTP; on --approval-listen for stdio) with this
    /// OpenID Connect client id at the
    /// identity provider: a person signs in there, reads the exact request and approves or
    /// declines it. The client secret comes from EQUINIX_MCP_APPROVAL_CLIENT_SECRET or
    /// --approval-client-secret-file, never a flag; without either the page is a public client
    /// (PKCE only).
    #[arg(long, env = "EQUINIX_MCP_APPROVAL_CLIENT_ID", value_name = "ID")]
    pub approval_client_id: Option<String>,

    /// The page's identity provider (default: --oauth-issuer).
    #[arg(long, env = "EQUINIX_MCP_APPROVAL_ISSUER", value_name = "URL", requires = "approval_client_id")]
    pub approval_issuer: Option<String>,

    /// A file (mode 600) holding the page's client secret.
    #[arg(long, env = "EQUINIX_MCP_APPROVAL_CLIENT_SECRET_FILE", value_name = "PATH", requires = "approval_client_id")]
    pub approval_client_secret_file: Option<PathBuf>,

    /// How recent the person's authentication must be to approve (OpenID `max_age`), in seconds.
    #[arg(long, env = "EQUINIX_MCP_APPROVAL_MAX_AGE_SECS", default_value_t = 300, value_name = "SECS",
          value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub approval_max_age_secs: u64,

    /// The ID-token claim listing the person's groups.
    #[arg(long, env = "EQUINIX_MCP_APPROVAL_GROUPS_CLAIM", default_value = "groups", value_name = "CLAIM")]
    pub approval_groups_claim: String,

    /// A stdio server's approval page listens here (loopback only; port 0 picks one, and the
    /// identity provider must then accept any loopback port of the redirect URI, RFC 8252 7.3).
    #[arg(long, env = "EQUINIX_MCP_APPROVAL_LISTEN", default_value = "127.0.0.1:0", value_name = "ADDR")]
    pub approval_listen: std::net::SocketAddr,

    /// Where browsers reach this server, as an origin (https://mcp.example.internal); default:
    /// --public-url's origin, or the address the server listens on.
    #[arg(long, env = "EQUINIX_MCP_APPROVAL_URL", value_name = "URL", requires = "approval_client_id")]
    pub approval_url: Option<String>,

    /// Where the approval page keeps enrolled passkeys when the proposal store is not shared
    /// (default: beside the audit log, AUDIT.passkeys.json); with a Redis store, in Redis.
    #[arg(long, env = "EQUINIX_MCP_PASSKEYS_FILE", value_name = "PATH", requires = "approval_client_id")]
    pub passkeys_file: Option<PathBuf>,

    /// A `Host` header value HTTP clients use (repeatable, or comma-separated in the env var);
    /// added to localhost/127.0.0.1/::1 for the DNS-rebinding guard.
    #[arg(long = "allowed-host", env = "EQUINIX_MCP_ALLOWED_HOSTS", value_delimiter = ',', value_name = "HOST")]
    pub allowed_hosts: Vec<String>,

    #[command(flatten)]
    pub store: crate::proposals::StoreArgs,

    /// Largest HTTP request body accepted, in bytes (larger ones get 413).
    #[arg(long, env = "EQUINIX_MCP_MAX_REQUEST_BYTES", default_value_t = 1 << 20, value_name = "BYTES")]
    pub max_request_bytes: usize,

    /// Browser `Origin` values accepted on HTTP (scheme://host[:port], `:*` for any port). A
    /// request carrying any other `Origin` gets 403; requests without one (non-browser clients)
    /// are not affected.
    #[arg(long = "allowed-origin", env = "EQUINIX_MCP_ALLOWED_ORIGINS", value_delimiter = ',', value_name = "ORIGIN")]
    pub allowed_origins: Vec<String>,

    /// Tool calls one principal may have in flight at once; more are refused (`too_many_calls`).
    #[arg(
        long,
        env = "EQUINIX_MCP_MAX_CALLS_PER_PRINCIPAL",
        default_value_t = 64,
        value_name = "N",
        value_parser = at_least_one(),
    )]
    pub max_calls_per_principal: usize,

    /// Confirmation forms one principal may have open at once (the same 20 as its pending
    /// proposals); a confirm beyond it is refused before anyone is asked.
    #[arg(
        long,
        env = "EQUINIX_MCP_MAX_CONFIRMATIONS_PER_PRINCIPAL",
        default_value_t = 20,
        value_name = "N",
        value_parser = at_least_one(),
    )]
    pub max_confirmations_per_principal: usize,

    /// HTTP sessions (pre-2026 clients) one principal may hold; an `initialize` beyond it gets 429.
    #[arg(
        long,
        env = "EQUINIX_MCP_MAX_SESSIONS_PER_PRINCIPAL",
        default_value_t = 16,
        value_name = "N",
        value_parser = at_least_one(),
    )]
    pub max_sessions_per_principal: usize,

    /// HTTP sessions the server holds in all; an `initialize` beyond it gets 503.
    #[arg(
        long,
        env = "EQUINIX_MCP_MAX_SESSIONS",
        default_value_t = 1024,
        value_name = "N",
        value_parser = at_least_one(),
    )]
    pub max_sessions: usize,

    /// An HTTP session with no traffic for this long is closed (its open forms end as
    /// `call_cancelled`), in milliseconds.
    #[arg(
        long,
        env = "EQUINIX_MCP_SESSION_IDLE_TIMEOUT_MS",
        default_value_t = 600_000,
        value_name = "MS",
        value_parser = at_least_one_ms(),
    )]
    pub session_idle_timeout_ms: u64,

    /// Concurrent HTTP connections; one beyond it is closed on accept.
    #[arg(
        long,
        env = "EQUINIX_MCP_MAX_CONNECTIONS",
        default_value_t = 512,
        value_name = "N",
        value_parser = at_least_one(),
    )]
    pub max_connections: usize,

    /// HTTP connections one principal may hold (a request of its passed the bearer check on
    /// each); a request beyond it gets 429 and its connection is closed. Default: an eighth of
    /// --max-connections, at least 16 (or all of them). Without --auth-token-file or
    /// --oauth-issuer every client is the one local principal, whose share is every slot.
    #[arg(
        long,
        env = "EQUINIX_MCP_MAX_CONNECTIONS_PER_PRINCIPAL",
        value_name = "N",
        value_parser = at_least_one(),
    )]
    pub max_connections_per_principal: Option<usize>,

    /// HTTP connections from one IP address that have not yet sent a request with a valid
    /// token (without tokens: any `/mcp` request); one more closes that address's oldest such
    /// connection, however young (the newcomer is always read, so a token holder sharing the
    /// address is served). With every slot taken, a new connection closes the oldest such one
    /// anywhere; one less than a second old is closed only for a connection from its own address.
    #[arg(
        long,
        env = "EQUINIX_MCP_MAX_UNAUTHENTICATED_PER_PEER",
        default_value_t = 64,
        value_name = "N",
        value_parser = at_least_one(),
    )]
    pub max_unauthenticated_per_peer: usize,

    /// Open `GET /mcp` streams (rmcp's standalone streams and their shadows) one principal may
    /// hold; one more gets 429.
    #[arg(
        long,
        env = "EQUINIX_MCP_MAX_STREAMS_PER_PRINCIPAL",
        default_value_t = 32,
        value_name = "N",
        value_parser = at_least_one(),
    )]
    pub max_streams_per_principal: usize,

    /// Time allowed for an HTTP request's headers, and for the next request on an idle
    /// keep-alive connection, in milliseconds; then the connection is closed.
    #[arg(
        long,
        env = "EQUINIX_MCP_HEADER_READ_TIMEOUT_MS",
        default_value_t = 10_000,
        value_name = "MS",
        value_parser = at_least_one_ms(),
    )]
    pub header_read_timeout_ms: u64,

    /// Time allowed for an HTTP request's body once its headers arrived, in milliseconds (408 beyond).
    #[arg(
        long,
        env = "EQUINIX_MCP_BODY_READ_TIMEOUT_MS",
        default_value_t = 30_000,
        value_name = "MS",
        value_parser = at_least_one_ms(),
    )]
    pub body_read_timeout_ms: u64,

    /// On SIGINT/SIGTERM, how long calls in flight (a confirmation waiting for its person) may
    /// still finish before they are cancelled, in milliseconds.
    #[arg(long, env = "EQUINIX_MCP_SHUTDOWN_GRACE_MS", default_value_t = 30_000, value_name = "MS")]
    pub shutdown_grace_ms: u64,

    /// Comma-separated toolsets to serve. Default (or `default`): metros, ports, service_profiles,
    /// connections, cloud_routers. `all` means every read-only toolset; `mutate` (the broker) is
    /// served only when named, e.g. `default,routing,events,mutate`.
    #[arg(long, env = "EQUINIX_MCP_TOOLSETS", value_name = "LIST")]
    pub toolsets: Option<String>,

    /// Serve against the built-in Fabric simulator (no credentials needed). It listens on a
    /// loopback port (shown in the banner) for curl and its `/_sim/*` controls; this server's own
    /// requests reach it in process.
    #[arg(long, env = "EQUINIX_MCP_FABRIC_SIM", value_parser = clap::builder::BoolishValueParser::new())]
    pub fabric_sim: bool,

    /// With --fabric-sim: send this server's Fabric requests to the simulator over loopback HTTP,
    /// through the same network client real Fabric gets, instead of in process.
    #[arg(long, requires = "fabric_sim")]
    pub fabric_sim_http: bool,

    /// Fabric API base URL.
    #[arg(long, env = "EQUINIX_API_ENDPOINT", default_value = "https://api.equinix.com", value_name = "URL")]
    pub endpoint: String,

    /// OAuth2 client id (the secret is read only from EQUINIX_API_CLIENTSECRET).
    #[arg(long, env = "EQUINIX_API_CLIENTID", value_name = "ID")]
    pub client_id: Option<String>,

    /// How long to wait for the person to answer a confirmation, in milliseconds.
    #[arg(long, env = "EQUINIX_MCP_ELICIT_TIMEOUT_MS", default_value_t = 300_000, value_name = "MS")]
    pub elicit_timeout_ms: u64,

    /// Execute confirmed proposals even when the client cannot ask a person (off by default).
    #[arg(
        long,
        env = "EQUINIX_MCP_ALLOW_UNCONFIRMED_MUTATIONS",
        default_value_t = false,
        action = clap::ArgAction::Set,
        value_parser = clap::builder::BoolishValueParser::new(),
        value_name = "BOOL",
        num_args = 0..=1,
        default_missing_value = "true",
    )]
    pub allow_unconfirmed_mutations: bool,

    /// Timeout of one Fabric request, in milliseconds.
    #[arg(
        long,
        env = "EQUINIX_MCP_FABRIC_TIMEOUT_MS",
        default_value_t = 30_000,
        value_name = "MS",
        value_parser = at_least_one_ms(),
    )]
    pub fabric_timeout_ms: u64,

    /// Guest CPU time allowed per component call, in milliseconds (time waiting on Fabric or a
    /// person does not count).
    #[arg(
        long,
        env = "EQUINIX_MCP_GUEST_TIME_MS",
        default_value_t = 2_000,
        value_name = "MS",
        value_parser = at_least_one_ms(),
    )]
    pub guest_time_ms: u64,

    /// Linear memory allowed per component instance, in MiB.
    #[arg(long, env = "EQUINIX_MCP_MEMORY_MIB", default_value_t = 64, value_name = "MIB", value_parser = memory_mib())]
    pub memory_mib: usize,

    /// A Cedar policy set on what may be proposed (`equinix-mcp policy schema`): every create is
    /// judged on its exact bytes before its dry run and before a person is asked, and denied
    /// unless a policy permits it and none forbids it. SIGHUP rereads it. Without it everything
    /// is permitted.
    #[arg(long, env = "EQUINIX_MCP_POLICY", value_name = "FILE")]
    pub policy: Option<PathBuf>,

    /// Append-only JSON-lines audit log of every propose and confirm (default:
    /// `$XDG_STATE_HOME/equinix-mcp/audit.jsonl`).
    #[arg(long, env = "EQUINIX_MCP_AUDIT_LOG", value_name = "PATH")]
    pub audit_log: Option<PathBuf>,

    /// Sign checkpoints of the audit log's hash chain with this Ed25519 private key (PKCS#8
    /// PEM, as `openssl genpkey -algorithm ed25519` writes it; mode 600). Needs
    /// --audit-checkpoints.
    #[arg(long, env = "EQUINIX_MCP_AUDIT_SIGNING_KEY", value_name = "FILE", requires = "audit_checkpoints")]
    pub audit_signing_key: Option<PathBuf>,

    /// Where signed checkpoints go: another file than the log, ideally on another volume or host.
    #[arg(long, env = "EQUINIX_MCP_AUDIT_CHECKPOINTS", value_name = "FILE", requires = "audit_signing_key")]
    pub audit_checkpoints: Option<PathBuf>,

    /// A checkpoint after this many synced records (and at least every 60 s, and at shutdown).
    #[arg(
        long,
        env = "EQUINIX_MCP_AUDIT_CHECKPOINT_EVERY",
        default_value_t = 1000,
        value_name = "N",
        value_parser = at_least_one(),
    )]
    pub audit_checkpoint_every: usize,

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

/// A count limit: 1 to a million (0 would refuse everything), refused by clap otherwise.
fn at_least_one() -> clap::builder::RangedU64ValueParser<usize> {
    clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1_000_000)
}

/// A time limit in milliseconds: 1 ms to a day (0 would expire everything at once).
fn at_least_one_ms() -> clap::builder::RangedU64ValueParser<u64> {
    clap::builder::RangedU64ValueParser::<u64>::new().range(1..=86_400_000)
}

/// An instance's memory in MiB, up to what the engine reserves for any instance.
fn memory_mib() -> clap::builder::RangedU64ValueParser<usize> {
    clap::builder::RangedU64ValueParser::<usize>::new().range(1..=(crate::component::MAX_MEMORY_BYTES >> 20) as u64)
}

/// `PORT` (loopback) or `IP:PORT`.
fn parse_metrics_listen(text: &str) -> Result<SocketAddr, String> {
    if let Ok(port) = text.parse::<u16>() {
        return Ok(SocketAddr::from(([127, 0, 0, 1], port)));
    }
    text.parse().map_err(|_| format!("{text:?}: expected PORT or IP:PORT (e.g. 9464 or 127.0.0.1:9464)"))
}
