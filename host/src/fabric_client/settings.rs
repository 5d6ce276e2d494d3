//! Where Fabric is: the real API (its endpoint and the client id; the secret comes from the
//! environment only) or the built-in simulator, and how long one request may take.

use clap::Args;

#[derive(Args, Debug, Clone)]
pub struct FabricArgs {
    /// Serve against the built-in Fabric simulator (no credentials needed). It listens on a
    /// loopback port (shown in the banner) for curl and its `/_sim/*` controls; this server's own
    /// requests reach it in process.
    #[arg(long, env = "EQUINIX_MCP_FABRIC_SIM", value_parser = clap::builder::BoolishValueParser::new())]
    pub fabric_sim: bool,

    /// With --fabric-sim: send this server's Fabric requests to the simulator over loopback HTTP,
    /// through the same network client real Fabric gets, instead of in process.
    #[arg(long, requires = "fabric_sim")]
    pub(crate) fabric_sim_http: bool,

    /// Fabric API base URL.
    #[arg(long, env = "EQUINIX_API_ENDPOINT", default_value = "https://api.equinix.com", value_name = "URL")]
    pub endpoint: String,

    /// OAuth2 client id (its secret: EQUINIX_API_CLIENTSECRET or --client-secret-file).
    #[arg(long, env = "EQUINIX_API_CLIENTID", value_name = "ID")]
    pub client_id: Option<String>,

    /// A file (mode 600, e.g. a systemd credential) holding the OAuth2 client secret; or set
    /// EQUINIX_API_CLIENTSECRET.
    #[arg(long, env = "EQUINIX_API_CLIENTSECRET_FILE", value_name = "PATH")]
    pub(crate) client_secret_file: Option<std::path::PathBuf>,

    /// Timeout of one Fabric request, in milliseconds.
    #[arg(
        long,
        env = "EQUINIX_MCP_FABRIC_TIMEOUT_MS",
        default_value_t = 30_000,
        value_name = "MS",
        value_parser = crate::value_parsers::at_least_one_ms(),
    )]
    pub(crate) fabric_timeout_ms: u64,
}
