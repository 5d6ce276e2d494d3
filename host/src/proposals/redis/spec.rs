//! What `--proposal-store` names when it is shared: one Redis/Valkey node (`redis://`), or a
//! primary found through Sentinels (`redis+sentinel://`), with the passwords from the
//! environment or a private file and how many replicas must acknowledge each write.

use std::time::Duration;

use anyhow::bail;

use crate::proposals::settings::{StoreArgs, store_password};
use crate::secret::Secret;

/// The acknowledgements a Sentinel store waits for unless told: every replica of a primary with
/// two, under which the partitions tried undid no take.
pub(crate) const SENTINEL_ACKS: u32 = 2;

/// How many replicas must acknowledge a write, and for how long it waits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Acks {
    pub replicas: u32,
    pub timeout: Duration,
}

/// Where the shared store is.
#[derive(Debug)]
pub(crate) enum Target {
    /// One node: the URL as the redis crate takes it (with the password, when there is one).
    Node {
        url: Secret,
    },
    Sentinel(SentinelTarget),
}

#[derive(Debug)]
pub(crate) struct SentinelTarget {
    pub sentinels: Vec<(String, u16)>,
    pub master: String,
    pub db: i64,
    pub tls: bool,
    pub(crate) username: Option<String>,
    pub password: Option<Secret>,
    pub(crate) sentinel_password: Option<Secret>,
}

/// A parsed shared-store setting: where, how it is shown (no password), and the acknowledgements.
#[derive(Debug)]
pub(crate) struct Shared {
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
pub(crate) fn is_shared(spec: &str) -> bool {
    NODE_SCHEMES.iter().chain(SENTINEL_SCHEMES.iter()).any(|s| spec.starts_with(s))
}

/// The settings, with the secrets read from `env` (the process environment in the server).
pub(crate) fn parse(args: &StoreArgs, env: impl Fn(&str) -> Option<String>) -> anyhow::Result<Shared> {
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
