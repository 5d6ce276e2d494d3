//! Spawning the real `equinix-mcp` binary hermetically, and the files it reads and writes.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use serde_json::Value;

/// The binary built by `cargo test --workspace` (host has integration tests, so cargo builds it).
pub fn binary() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().unwrap().parent().unwrap();
    let bin = dir.join("equinix-mcp");
    assert!(
        bin.exists(),
        "{} is missing: run `cargo test --workspace` (or `cargo build -p equinix-mcp`) first",
        bin.display()
    );
    bin
}

/// The test component built by `tests/build.rs`.
pub fn probe_component() -> PathBuf {
    PathBuf::from(env!("PROBE_COMPONENT"))
}

/// `inspect` of the small test component, for tests whose subject is not the embedded one: every
/// `inspect` compiles what it reads, and this one compiles in a third of the broker's time.
pub fn inspect_probe() -> [&'static str; 3] {
    ["inspect", "--component", env!("PROBE_COMPONENT")]
}

/// The test component with an invalid catalog.
pub fn bad_catalog_component() -> PathBuf {
    PathBuf::from(env!("BAD_CATALOG_COMPONENT"))
}

/// A precompile cache shared by the test processes (host-owned, under the target dir).
pub fn cache_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    exe.parent().unwrap().parent().unwrap().join("test-precompile-cache")
}

/// The project's own Node.js (`tests/node`, pinned by its lock file and installed by
/// `.ci/install-node`), for the JavaScript fixtures: their packages support no older Node than 22,
/// and the machine's may be older.
pub fn node() -> PathBuf {
    let node = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("node/node_modules/.bin/node");
    assert!(node.exists(), "{} is missing: run .ci/install-node (or .ci/install-test-tools)", node.display());
    node
}

/// `tests/DIR`, a JavaScript fixture whose `package` `.ci/install-node` installed there.
pub fn node_fixture(dir: &str, package: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(dir);
    assert!(
        dir.join("node_modules").join(package).exists(),
        "{package} is not installed in {}: run .ci/install-node (or .ci/install-test-tools)",
        dir.display()
    );
    dir
}

/// A hermetic command line: no inherited EQUINIX_* variables, logs at `info`.
pub fn command(args: &[&str], env: &[(&str, &str)]) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new(binary());
    cmd.env_clear();
    for key in ["PATH", "HOME", "TMPDIR"] {
        if let Ok(v) = std::env::var(key) {
            cmd.env(key, v);
        }
    }
    cmd.env("RUST_LOG", "info,rmcp=warn")
        .env("EQUINIX_MCP_CACHE_DIR", cache_dir())
        .env("EQUINIX_MCP_AUDIT_LOG", fresh_audit_path())
        .env("EQUINIX_MCP_APPROVERS_FILE", fresh_approvers_path());
    cmd.args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.kill_on_drop(true);
    cmd
}

/// A new audit-log path under the system temp dir, one per spawned server.
pub fn fresh_audit_path() -> PathBuf {
    fresh_path("audit", "jsonl")
}

/// A new (absent) local approvers file, one per spawned command: no test reads the user's own.
pub fn fresh_approvers_path() -> PathBuf {
    fresh_path("approvers", "json")
}

/// `STEM-N.EXT` in this test process's own folder under the system temp dir, N counted per
/// process, and absent.
pub fn fresh_path(stem: &str, ext: &str) -> PathBuf {
    use std::sync::atomic::{AtomicU32, Ordering};
    static N: AtomicU32 = AtomicU32::new(0);
    let path = run_dir().join(format!("{stem}-{}.{ext}", N.fetch_add(1, Ordering::Relaxed)));
    // pids are reused across runs (and machine restarts): a leftover file must not be read as ours
    let _ = std::fs::remove_file(&path);
    path
}

/// `equinix-mcp-tests/PID/` under the system temp dir. A test binary has no end to clean up at,
/// so each run removes the folders of the runs whose process is gone (audit logs, approvers,
/// secret files: a thousand files a run) before it makes its own.
fn run_dir() -> &'static PathBuf {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let root = std::env::temp_dir().join("equinix-mcp-tests");
        for entry in std::fs::read_dir(&root).into_iter().flatten().flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            // a folder is named by its run's pid; the flat files of runs before these folders
            // were `STEM-PID-N.EXT`
            let pid = match name.parse::<u32>() {
                Ok(pid) => Some(pid),
                Err(_) => name.split('.').next().and_then(|n| n.rsplit('-').nth(1)).and_then(|p| p.parse().ok()),
            };
            if pid.is_none_or(process_gone) {
                let _ = std::fs::remove_dir_all(entry.path()).or_else(|_| std::fs::remove_file(entry.path()));
            }
        }
        let dir = root.join(std::process::id().to_string());
        std::fs::create_dir_all(&dir).unwrap();
        dir
    })
}

/// Whether the process `pid` has ended: what an earlier run left (folders, namespaces) is its
/// to remove only then.
pub fn process_gone(pid: u32) -> bool {
    !std::path::Path::new(&format!("/proc/{pid}")).exists()
}

/// The audit log a command built by [`command`] will write (the last `EQUINIX_MCP_AUDIT_LOG`).
pub fn audit_log_of(cmd: &tokio::process::Command) -> PathBuf {
    cmd.as_std()
        .get_envs()
        .filter(|(k, _)| *k == "EQUINIX_MCP_AUDIT_LOG")
        .filter_map(|(_, v)| v.map(PathBuf::from))
        .last()
        .expect("command() always sets EQUINIX_MCP_AUDIT_LOG")
}

/// Every entry of an audit log written so far, but the chain's start records (one per process
/// that opened the log: `audit/chain.rs` tests them), each still with its `seq` and `prev`.
pub fn read_audit(path: &std::path::Path) -> Vec<Value> {
    read_audit_chain(path).into_iter().filter(|e| e["event"] != "audit_log_opened").collect()
}

/// Every line of an audit log, start records included.
pub fn read_audit_chain(path: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).expect("every audit line is JSON"))
        .collect()
}

/// Runs a command to completion: (success, stdout, stderr).
pub async fn run_to_exit(args: &[&str], env: &[(&str, &str)]) -> (bool, String, String) {
    let mut cmd = command(args, env);
    cmd.stdin(Stdio::null());
    let out = tokio::time::timeout(Duration::from_secs(60), cmd.output()).await.expect("command timed out").unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Waits until `ready` holds, for at most [`super::wait::WITHIN`].
pub async fn wait_until(what: &str, ready: impl AsyncFn() -> bool) {
    super::wait::until(what, super::wait::WITHIN, async || ready().await).await
}

/// Writes a bearer-token file (mode 600) and returns its path.
pub fn token_file(lines: &[(&str, &str)]) -> PathBuf {
    let path = super::fresh_audit_path().with_extension("tokens");
    let text: String = lines.iter().map(|(label, token)| format!("{label} {token}\n")).collect();
    std::fs::write(&path, text).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    path
}
