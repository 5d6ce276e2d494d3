//! The HTTP transport's flags: where it listens, with which certificate, the names and origins it
//! accepts, and its limits on bodies, sessions, streams and connections. [`HttpArgs::options`]
//! builds the transport's [`HttpOptions`] from them.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::bail;
use clap::Args;

use super::connections::SlotLimits;
use super::tls::TlsFiles;
use super::{ConnectionLimits, HttpOptions, SessionLimits, TokenFile};
use crate::oauth::ResourceServer;
use crate::value_parsers::{at_least_one, at_least_one_ms};

fn default_listen() -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], 8931))
}

#[derive(Args, Debug, Clone)]
pub struct HttpArgs {
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

    /// A `Host` header value HTTP clients use (repeatable, or comma-separated in the env var);
    /// added to localhost/127.0.0.1/::1 for the DNS-rebinding guard.
    #[arg(long = "allowed-host", env = "EQUINIX_MCP_ALLOWED_HOSTS", value_delimiter = ',', value_name = "HOST")]
    pub(crate) allowed_hosts: Vec<String>,

    /// Largest HTTP request body accepted, in bytes (larger ones get 413).
    #[arg(long, env = "EQUINIX_MCP_MAX_REQUEST_BYTES", default_value_t = 1 << 20, value_name = "BYTES")]
    pub(crate) max_request_bytes: usize,

    /// Browser `Origin` values accepted on HTTP (scheme://host[:port], `:*` for any port). A
    /// request carrying any other `Origin` gets 403; requests without one (non-browser clients)
    /// are not affected.
    #[arg(long = "allowed-origin", env = "EQUINIX_MCP_ALLOWED_ORIGINS", value_delimiter = ',', value_name = "ORIGIN")]
    pub(crate) allowed_origins: Vec<String>,

    /// HTTP sessions (pre-2026 clients) one principal may hold; an `initialize` beyond it gets 429.
    #[arg(
        long,
        env = "EQUINIX_MCP_MAX_SESSIONS_PER_PRINCIPAL",
        default_value_t = 16,
        value_name = "N",
        value_parser = at_least_one(),
    )]
    pub(crate) max_sessions_per_principal: usize,

    /// HTTP sessions the server holds in all; an `initialize` beyond it gets 503.
    #[arg(
        long,
        env = "EQUINIX_MCP_MAX_SESSIONS",
        default_value_t = 1024,
        value_name = "N",
        value_parser = at_least_one(),
    )]
    pub(crate) max_sessions: usize,

    /// An HTTP session with no traffic for this long is closed (its open forms end as
    /// `call_cancelled`), in milliseconds.
    #[arg(
        long,
        env = "EQUINIX_MCP_SESSION_IDLE_TIMEOUT_MS",
        default_value_t = 600_000,
        value_name = "MS",
        value_parser = at_least_one_ms(),
    )]
    pub(crate) session_idle_timeout_ms: u64,

    /// Concurrent HTTP connections; one beyond it is closed on accept.
    #[arg(
        long,
        env = "EQUINIX_MCP_MAX_CONNECTIONS",
        default_value_t = 512,
        value_name = "N",
        value_parser = at_least_one(),
    )]
    pub(crate) max_connections: usize,

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
    pub(crate) max_connections_per_principal: Option<usize>,

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
    pub(crate) max_unauthenticated_per_peer: usize,

    /// Open `GET /mcp` streams (rmcp's standalone streams and their shadows) one principal may
    /// hold; one more gets 429.
    #[arg(
        long,
        env = "EQUINIX_MCP_MAX_STREAMS_PER_PRINCIPAL",
        default_value_t = 32,
        value_name = "N",
        value_parser = at_least_one(),
    )]
    pub(crate) max_streams_per_principal: usize,

    /// Time allowed for an HTTP request's headers, and for the next request on an idle
    /// keep-alive connection, in milliseconds; then the connection is closed.
    #[arg(
        long,
        env = "EQUINIX_MCP_HEADER_READ_TIMEOUT_MS",
        default_value_t = 10_000,
        value_name = "MS",
        value_parser = at_least_one_ms(),
    )]
    pub(crate) header_read_timeout_ms: u64,

    /// Time allowed for an HTTP request's body once its headers arrived, in milliseconds (408 beyond).
    #[arg(
        long,
        env = "EQUINIX_MCP_BODY_READ_TIMEOUT_MS",
        default_value_t = 30_000,
        value_name = "MS",
        value_parser = at_least_one_ms(),
    )]
    pub(crate) body_read_timeout_ms: u64,
}

impl HttpArgs {
    /// The certificate and key, when both are given.
    pub(crate) fn tls(&self) -> anyhow::Result<Option<Arc<TlsFiles>>> {
        match (&self.tls_cert, &self.tls_key) {
            (Some(cert), Some(key)) => Ok(Some(Arc::new(TlsFiles::load(cert, key)?))),
            (None, None) => Ok(None),
            _ => bail!("--tls-cert and --tls-key go together: give both (PEM files) or neither"),
        }
    }

    /// How long any of this server's listeners waits for a request's headers.
    pub(crate) fn header_read_timeout(&self) -> Duration {
        Duration::from_millis(self.header_read_timeout_ms)
    }

    /// The transport's options, with the bearer checks already built (a principal's share of the
    /// connections depends on whether there are any).
    pub(crate) fn options(
        &self,
        auth: Option<Arc<TokenFile>>,
        oauth: Option<Arc<ResourceServer>>,
        shutdown_grace: Duration,
    ) -> anyhow::Result<HttpOptions> {
        let auth_present = auth.is_some() || oauth.is_some();
        let options = HttpOptions {
            listen: self.listen,
            auth,
            oauth,
            tls: self.tls()?,
            allowed_hosts: self.allowed_hosts.clone(),
            allowed_origins: self.allowed_origins.clone(),
            sessions: SessionLimits {
                per_principal: self.max_sessions_per_principal,
                total: self.max_sessions,
                streams_per_principal: self.max_streams_per_principal,
                max_body_bytes: self.max_request_bytes,
                body_read_timeout: Duration::from_millis(self.body_read_timeout_ms),
            },
            session_idle_timeout: Duration::from_millis(self.session_idle_timeout_ms),
            connections: ConnectionLimits {
                name: "mcp",
                slots: SlotLimits {
                    max_connections: self.max_connections,
                    per_principal: match (self.max_connections_per_principal, auth_present) {
                        (Some(n), _) => n,
                        (None, true) => (self.max_connections / 8).max(self.max_connections.min(16)),
                        (None, false) => self.max_connections,
                    },
                    unproven_per_peer: self.max_unauthenticated_per_peer,
                },
                header_read_timeout: self.header_read_timeout(),
            },
            shutdown_grace,
            shutdown_drain: Duration::ZERO,
        };
        options.check()?;
        Ok(options)
    }
}
