//! The process's open-file budget. systemd and most shells start a service with a soft limit of
//! 1,024 descriptors while allowing far more; a server whose connection caps add up to more
//! than its limit would fail to accept ("too many open files") for everyone once one listener
//! filled it. So the soft limit is raised to the hard one at start-up, and a server whose caps do
//! not fit in what it got refuses to start.

/// Descriptors kept for everything that is not a client connection: the audit log, the
/// proposal store, Fabric's connection pool, the component cache, signals, the runtime.
pub(crate) const RESERVED: u64 = 128;

/// The soft limit asked for under an unlimited hard limit.
#[cfg(unix)]
const UNLIMITED_TARGET: u64 = 1 << 16;

/// The soft limit after raising it to the hard limit: `(now, before)`. `None` where the limit is
/// unlimited or cannot be read, and on Windows, which has no such limit on sockets.
#[cfg(not(unix))]
pub(crate) fn raise_to_hard_limit() -> Option<(u64, u64)> {
    None
}

/// The soft limit after raising it to the hard limit: `(now, before)`. `None` where the limit is
/// unlimited or cannot be read.
#[cfg(unix)]
pub fn raise_to_hard_limit() -> Option<(u64, u64)> {
    use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};
    let limit = getrlimit(Resource::Nofile);
    let before = limit.current?;
    let Some(hard) = limit.maximum else {
        // an unlimited hard limit: ask for a generous finite figure (the kernel caps it at
        // fs.nr_open, macOS at OPEN_MAX), keeping what there was if that is refused
        let wanted = Rlimit { current: Some(UNLIMITED_TARGET.max(before)), maximum: None };
        return match setrlimit(Resource::Nofile, wanted) {
            Ok(()) => Some((UNLIMITED_TARGET.max(before), before)),
            Err(_) => Some((before, before)),
        };
    };
    if hard > before && setrlimit(Resource::Nofile, Rlimit { current: Some(hard), maximum: Some(hard) }).is_ok() {
        return Some((hard, before));
    }
    Some((before, before))
}

/// Refuses caps that need more descriptors than the process may open.
pub(crate) fn check_budget(limit: u64, connections: &[(&str, usize)]) -> anyhow::Result<()> {
    let needed = RESERVED + connections.iter().map(|(_, n)| *n as u64).sum::<u64>();
    if needed <= limit {
        return Ok(());
    }
    let caps: Vec<String> = connections.iter().map(|(what, n)| format!("{what} {n}")).collect();
    anyhow::bail!(
        "the process may open {limit} files (ulimit -n, hard limit included), but its connection caps need {needed} \
         ({} and {RESERVED} kept for files and Fabric): raise the limit (LimitNOFILE= in a systemd unit) or lower the caps",
        caps.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caps_that_do_not_fit_the_limit_are_refused_by_name() {
        assert!(check_budget(1024, &[("--max-connections", 512), ("the metrics listener", 16)]).is_ok());
        let e = check_budget(256, &[("--max-connections", 512)]).unwrap_err().to_string();
        assert!(
            e.contains("may open 256 files") && e.contains("need 640") && e.contains("--max-connections 512"),
            "{e}"
        );
    }

    #[test]
    fn the_soft_limit_ends_at_the_hard_one() {
        let (now, before) = raise_to_hard_limit().expect("Linux has a descriptor limit");
        assert!(now >= before);
        let limit = rustix::process::getrlimit(rustix::process::Resource::Nofile);
        assert_eq!(limit.current, limit.maximum.or(limit.current));
    }
}
