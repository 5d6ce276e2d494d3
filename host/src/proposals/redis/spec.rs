//! What `--proposal-store` names when it is shared: one Redis/Valkey node (`redis://`), or a
//! primary found through Sentinels (`redis+sentinel://`), with the passwords from the
//! environment or a private file and how many replicas must acknowledge each write.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::bail;

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
    pub proposal_store_password_file: Option<PathBuf>,

    /// A file (mode 600) holding the Sentinels' own password (their `requirepass`); or set
    /// EQUINIX_MCP_SENTINEL_PASSWORD.
    #[arg(long, env = "EQUINIX_MCP_SENTINEL_PASSWORD_FILE", value_name = "PATH")]
    pub sentinel_password_file: Option<PathBuf>,

    /// A PEM file of the certificate authorities that sign a TLS store's certificates
    /// (`rediss://`, `rediss+sentinel://`, `etcds://`): with it, only those are trusted for the
    /// store, not the system's.
    #[arg(long, env = "EQUINIX_MCP_PROPOSAL_STORE_CA_FILE", value_name = "PATH")]
    pub proposal_store_ca_file: Option<PathBuf>,

    /// How many replicas must hold each store write (Redis `WAIT`) before it counts: a take that
    /// is not acknowledged sends nothing to Fabric. Default: 2 on Sentinel (every replica of the
    /// documented primary and two replicas, so no failover or partition tried undoes a take; one
    /// node lost stops creates, not reads), 0 on a single node. Lower it for availability
    /// knowingly: the start-up says what that gives up.
    #[arg(long, env = "EQUINIX_MCP_PROPOSAL_STORE_ACKS", value_name = "N")]
    pub proposal_store_acks: Option<u32>,

    /// How long a write waits for those acknowledgements before it fails closed.
    #[arg(long, env = "EQUINIX_MCP_PROPOSAL_STORE_ACK_TIMEOUT_MS", default_value_t = 500, value_name = "MS")]
    pub proposal_store_ack_timeout_ms: u64,
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

/// The acknowledgements a Sentinel store waits for unless told: every replica of a primary with
/// two, under which the partitions tried (issue 56) undid no take.
pub const SENTINEL_ACKS: u32 = 2;

/// How many replicas must acknowledge a write, and for how long it waits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Acks {
    pub replicas: u32,
    pub timeout: Duration,
}

/// Where the shared store is.
#[derive(Debug)]
pub enum Target {
    /// One node: the URL as the redis crate takes it (with the password, when there is one).
    Node {
        url: Secret,
    },
    Sentinel(SentinelTarget),
}

#[derive(Debug)]
pub struct SentinelTarget {
    pub sentinels: Vec<(String, u16)>,
    pub master: String,
    pub db: i64,
    pub tls: bool,
    pub username: Option<String>,
    pub password: Option<Secret>,
    pub sentinel_password: Option<Secret>,
}

/// A parsed shared-store setting: where, how it is shown (no password), and the acknowledgements.
#[derive(Debug)]
pub struct Shared {
    pub target: Target,
    /// PEM: the only authorities trusted for the store's certificates (`--proposal-store-ca-file`).
    pub ca: Option<Vec<u8>>,
    pub shown: String,
    pub acks: Acks,
}

const NODE_SCHEMES: [&str; 4] = ["redis://", "rediss://", "valkey://", "valkeys://"];
const SENTINEL_SCHEMES: [&str; 4] =
    ["redis+sentinel://", "rediss+sentinel://", "valkey+sentinel://", "valkeys+sentinel://"];

/// Whether `spec` names a shared store (rather than `memory`).
pub fn is_shared(spec: &str) -> bool {
    NODE_SCHEMES.iter().chain(SENTINEL_SCHEMES.iter()).any(|s| spec.starts_with(s))
}

/// The store's password (Redis's data nodes', or the etcd user's): from `env` or the file
/// `--proposal-store-password-file` names.
pub fn store_password(args: &StoreArgs, env: impl Fn(&str) -> Option<String>) -> anyhow::Result<Option<Secret>> {
    crate::secret::from_env_or_file(
        env("EQUINIX_MCP_PROPOSAL_STORE_PASSWORD"),
        args.proposal_store_password_file.as_deref(),
        "EQUINIX_MCP_PROPOSAL_STORE_PASSWORD",
        "--proposal-store-password-file",
    )
}

/// The settings, with the secrets read from `env` (the process environment in the server).
pub fn parse(args: &StoreArgs, env: impl Fn(&str) -> Option<String>) -> anyhow::Result<Shared> {
    let spec = args.proposal_store.trim();
    let shown = super::redact(spec);
    let password = store_password(args, &env)?;
    let sentinel_password = crate::secret::from_env_or_file(
        env("EQUINIX_MCP_SENTINEL_PASSWORD"),
        args.sentinel_password_file.as_deref(),
        "EQUINIX_MCP_SENTINEL_PASSWORD",
        "--sentinel-password-file",
    )?;
    let timeout = Duration::from_millis(args.proposal_store_ack_timeout_ms);
    if !(1..=60_000).contains(&args.proposal_store_ack_timeout_ms) {
        bail!(
            "--proposal-store-ack-timeout-ms {}: expected 1 to 60000 (a write waits this long for its replicas)",
            args.proposal_store_ack_timeout_ms
        );
    }
    let tls = spec.starts_with("rediss") || spec.starts_with("valkeys");
    let ca = match &args.proposal_store_ca_file {
        Some(file) => Some(super::super::ca_file::read(file, tls, "rediss://")?),
        None => None,
    };
    if let Some(scheme) = SENTINEL_SCHEMES.iter().find(|s| spec.starts_with(**s)) {
        let target = sentinel(spec, scheme, &shown, password, sentinel_password)?;
        let acks = Acks { replicas: args.proposal_store_acks.unwrap_or(SENTINEL_ACKS), timeout };
        return Ok(Shared { target: Target::Sentinel(target), ca, shown, acks });
    }
    if sentinel_password.is_some() {
        bail!("a Sentinel password is set, but --proposal-store {shown} names no Sentinels (redis+sentinel://...)");
    }
    let url = spec.replacen("valkey://", "redis://", 1).replacen("valkeys://", "rediss://", 1);
    let mut parsed = reqwest::Url::parse(&url).map_err(|e| anyhow::anyhow!("--proposal-store {shown}: {e}"))?;
    if let Some(password) = password {
        if parsed.password().is_some() {
            bail!("--proposal-store {shown} has a password, and one is also set apart from it: keep one");
        }
        parsed
            .set_password(Some(password.expose()))
            .map_err(|()| anyhow::anyhow!("--proposal-store {shown}: this URL cannot carry a password"))?;
    }
    let acks = Acks { replicas: args.proposal_store_acks.unwrap_or(0), timeout };
    Ok(Shared { target: Target::Node { url: Secret::new(parsed.to_string()) }, ca, shown, acks })
}

/// `redis+sentinel://[USER@]HOST:PORT[,HOST:PORT...]/MASTER[/DB]`
fn sentinel(
    spec: &str,
    scheme: &str,
    shown: &str,
    password: Option<Secret>,
    sentinel_password: Option<Secret>,
) -> anyhow::Result<SentinelTarget> {
    let rest = &spec[scheme.len()..];
    let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
    let (user, hosts) = match authority.rsplit_once('@') {
        Some((user, hosts)) => (Some(user), hosts),
        None => (None, authority),
    };
    if user.is_some_and(|u| u.contains(':')) {
        bail!(
            "--proposal-store {shown}: a Sentinel store takes no password in its URL (it would show in the process \
             list); set EQUINIX_MCP_PROPOSAL_STORE_PASSWORD or --proposal-store-password-file"
        );
    }
    let mut sentinels = Vec::new();
    for host in hosts.split(',').filter(|h| !h.is_empty()) {
        let (name, port) = host.rsplit_once(':').unwrap_or((host, "26379"));
        let port: u16 = port
            .parse()
            .map_err(|_| anyhow::anyhow!("--proposal-store {shown}: Sentinel {host:?} has no valid port"))?;
        let name = name.trim_start_matches('[').trim_end_matches(']');
        if name.is_empty() {
            bail!("--proposal-store {shown}: Sentinel {host:?} has no host");
        }
        sentinels.push((name.to_string(), port));
    }
    if sentinels.is_empty() {
        bail!("--proposal-store {shown}: name the Sentinels (redis+sentinel://HOST:PORT,HOST:PORT/MASTER/DB)");
    }
    let mut parts = path.split('/').filter(|p| !p.is_empty());
    let Some(master) = parts.next() else {
        bail!("--proposal-store {shown}: name the master Sentinel watches (redis+sentinel://HOST:PORT/MASTER/DB)");
    };
    let db = match parts.next() {
        Some(db) => {
            db.parse().map_err(|_| anyhow::anyhow!("--proposal-store {shown}: database {db:?} is not a number"))?
        }
        None => 0,
    };
    if let Some(extra) = parts.next() {
        bail!("--proposal-store {shown}: unexpected {extra:?} after the database");
    }
    Ok(SentinelTarget {
        sentinels,
        master: master.to_string(),
        db,
        tls: scheme.starts_with("rediss") || scheme.starts_with("valkeys"),
        username: user.filter(|u| !u.is_empty()).map(str::to_string),
        password,
        sentinel_password,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_env(_: &str) -> Option<String> {
        None
    }

    #[test]
    fn a_sentinel_store_names_its_sentinels_master_and_database() {
        let shared =
            parse(&StoreArgs::at("redis+sentinel://app@10.0.0.1:26379,10.0.0.2:5000,s3/store/2"), no_env).unwrap();
        let Target::Sentinel(t) = &shared.target else { panic!("{shared:?}") };
        assert_eq!(t.sentinels, [("10.0.0.1".into(), 26379), ("10.0.0.2".into(), 5000), ("s3".into(), 26379)]);
        assert_eq!((t.master.as_str(), t.db, t.tls, t.username.as_deref()), ("store", 2, false, Some("app")));
        assert_eq!(shared.acks, Acks { replicas: 2, timeout: Duration::from_millis(500) }, "acknowledged by default");
        let tls = parse(&StoreArgs::at("rediss+sentinel://h:1/m"), no_env).unwrap();
        assert!(matches!(tls.target, Target::Sentinel(SentinelTarget { tls: true, db: 0, .. })));
    }

    #[test]
    fn passwords_come_from_the_environment_never_the_sentinel_url() {
        let err = parse(&StoreArgs::at("redis+sentinel://app:hunter2@h:1/m"), no_env).unwrap_err().to_string();
        assert!(err.contains("EQUINIX_MCP_PROPOSAL_STORE_PASSWORD") && !err.contains("hunter2"), "{err}");
        let env = |var: &str| (var == "EQUINIX_MCP_PROPOSAL_STORE_PASSWORD").then(|| "hunter2".to_string());
        let shared = parse(&StoreArgs::at("redis+sentinel://h:1/m"), env).unwrap();
        let Target::Sentinel(t) = &shared.target else { panic!() };
        assert_eq!(t.password.as_ref().map(Secret::expose), Some("hunter2"));
        assert!(!format!("{shared:?}").contains("hunter2"));
        // a single node takes it too, as its URL's password
        let shared = parse(&StoreArgs::at("redis://127.0.0.1:6379/0"), env).unwrap();
        let Target::Node { url } = &shared.target else { panic!() };
        assert_eq!(url.expose(), "redis://:hunter2@127.0.0.1:6379/0");
        assert_eq!(shared.shown, "redis://127.0.0.1:6379/0");
        assert_eq!(shared.acks.replicas, 0, "a single node is not acknowledged unless asked");
        let err = parse(&StoreArgs::at("redis://:x@127.0.0.1:6379/0"), env).unwrap_err().to_string();
        assert!(err.contains("keep one"), "{err}");
    }

    #[test]
    fn bad_sentinel_urls_say_what_is_missing() {
        for (spec, says) in [
            ("redis+sentinel:///m", "name the Sentinels"),
            ("redis+sentinel://h:1", "name the master"),
            ("redis+sentinel://h:x/m", "no valid port"),
            ("redis+sentinel://h:1/m/zero", "not a number"),
            ("redis+sentinel://h:1/m/0/x", "unexpected"),
        ] {
            let err = parse(&StoreArgs::at(spec), no_env).unwrap_err().to_string();
            assert!(err.contains(says), "{spec}: {err}");
        }
        let args = StoreArgs { proposal_store_ack_timeout_ms: 0, ..StoreArgs::at("redis+sentinel://h:1/m") };
        assert!(parse(&args, no_env).unwrap_err().to_string().contains("1 to 60000"));
    }
}
