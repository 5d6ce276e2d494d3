//! The proposal store's settings, whichever store they name: `--proposal-store` itself and the
//! password of the store's nodes or user. What a Redis or Sentinel URL may hold is
//! `redis::spec`'s; an etcd URL is `etcd`'s.

use std::path::PathBuf;

use crate::secret::Secret;

/// The store settings `serve` and the operator commands share (flattened into both).
#[derive(clap::Args, Debug, Clone)]
pub struct StoreArgs {
    /// Where pending proposals live: `memory` (this process), `redis://HOST:PORT/DB` (one Redis
    /// or Valkey shared by every replica; `rediss://` for TLS), or
    /// `redis+sentinel://HOST:PORT,HOST:PORT,.../MASTER/DB` (the primary Sentinel names, followed
    /// across failovers; `rediss+sentinel://` for TLS). Passwords: see the two settings below.
    /// Or `etcd://[USER@]HOST:PORT,HOST:PORT,HOST:PORT[/PREFIX]` (an etcd cluster: each write
    /// committed by a majority of its members; `etcds://` for TLS; USER signs in with the
    /// password below).
    #[arg(long, env = "EQUINIX_MCP_PROPOSAL_STORE", default_value = "memory", value_name = "STORE")]
    pub proposal_store: String,

    /// A file (mode 600) holding the Redis/Valkey password of the store's nodes, or the etcd
    /// user's; or set EQUINIX_MCP_PROPOSAL_STORE_PASSWORD. Sentinel and etcd stores take no
    /// password in their URL.
    #[arg(long, env = "EQUINIX_MCP_PROPOSAL_STORE_PASSWORD_FILE", value_name = "PATH")]
    pub(crate) proposal_store_password_file: Option<PathBuf>,

    /// A file (mode 600) holding the Sentinels' own password (their `requirepass`); or set
    /// EQUINIX_MCP_SENTINEL_PASSWORD.
    #[arg(long, env = "EQUINIX_MCP_SENTINEL_PASSWORD_FILE", value_name = "PATH")]
    pub(crate) sentinel_password_file: Option<PathBuf>,

    /// A PEM file of the certificate authorities that sign a TLS store's certificates
    /// (`rediss://`, `rediss+sentinel://`, `etcds://`): with it, only those are trusted for the
    /// store, not the system's.
    #[arg(long, env = "EQUINIX_MCP_PROPOSAL_STORE_CA_FILE", value_name = "PATH")]
    pub(crate) proposal_store_ca_file: Option<PathBuf>,

    /// How many replicas must hold each store write (Redis `WAIT`) before it counts: a take that
    /// is not acknowledged sends nothing to Fabric. Default: 2 on Sentinel (every replica of the
    /// documented primary and two replicas, so no failover or partition tried undoes a take; one
    /// node lost stops creates, not reads), 0 on a single node. Lower it for availability
    /// knowingly: the start-up says what that gives up.
    #[arg(long, env = "EQUINIX_MCP_PROPOSAL_STORE_ACKS", value_name = "N")]
    pub(crate) proposal_store_acks: Option<u32>,

    /// How long a write waits for those acknowledgements before it fails closed.
    #[arg(long, env = "EQUINIX_MCP_PROPOSAL_STORE_ACK_TIMEOUT_MS", default_value_t = 500, value_name = "MS")]
    pub(crate) proposal_store_ack_timeout_ms: u64,
}

impl Default for StoreArgs {
    fn default() -> Self {
        StoreArgs {
            proposal_store: "memory".into(),
            proposal_store_password_file: None,
            sentinel_password_file: None,
            proposal_store_ca_file: None,
            proposal_store_acks: None,
            proposal_store_ack_timeout_ms: 500,
        }
    }
}

impl StoreArgs {
    /// Settings for the store at `spec` and nothing else (tests, benches).
    pub fn at(spec: &str) -> Self {
        StoreArgs { proposal_store: spec.into(), ..Default::default() }
    }
}

/// The store's password (Redis's data nodes', or the etcd user's): from `env` or the file
/// `--proposal-store-password-file` names.
pub(crate) fn store_password(args: &StoreArgs, env: impl Fn(&str) -> Option<String>) -> anyhow::Result<Option<Secret>> {
    crate::secret::from_env_or_file(
        env("EQUINIX_MCP_PROPOSAL_STORE_PASSWORD"),
        args.proposal_store_password_file.as_deref(),
        "EQUINIX_MCP_PROPOSAL_STORE_PASSWORD",
        "--proposal-store-password-file",
    )
}
