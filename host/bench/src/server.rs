//! Which `equinix-mcp` binary is measured, and the check that it is the build this benchmark
//! belongs to: the in-process rows run the component linked into the benchmark, the process rows
//! run the binary, and both must be the same component.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};

/// The binary to measure: `explicit`, or `equinix-mcp` beside this executable.
pub fn locate(explicit: Option<&Path>) -> anyhow::Result<PathBuf> {
    let path = match explicit {
        Some(p) => p.to_path_buf(),
        None => {
            let me = std::env::current_exe().context("cannot find this executable's path")?;
            // target/<profile>/equinix-mcp-bench, or target/<profile>/deps/<test> in a test run
            let dir = me.parent().context("this executable has no directory")?;
            let dir = if dir.ends_with("deps") { dir.parent().unwrap_or(dir) } else { dir };
            dir.join("equinix-mcp")
        }
    };
    if !path.is_file() {
        bail!(
            "no equinix-mcp binary at {}: build both with `cargo build --release -p equinix-mcp -p \
             equinix-mcp-bench`, or name one with --server",
            path.display()
        );
    }
    check_build(&path)?;
    Ok(path)
}

/// Refuses a binary whose component is not the one linked here (a stale `equinix-mcp` beside a
/// rebuilt benchmark would be measured against the new component's in-process figures).
fn check_build(path: &Path) -> anyhow::Result<()> {
    let out = std::process::Command::new(path)
        .arg("--version")
        .output()
        .with_context(|| format!("running {} --version", path.display()))?;
    let version = String::from_utf8_lossy(&out.stdout);
    let expected = equinix_mcp::component::sha256_hex(equinix_mcp::EMBEDDED_COMPONENT);
    if !out.status.success() || !version.contains(&expected) {
        bail!(
            "{} is not this benchmark's build (it says {:?}; this benchmark embeds component sha256:{expected}): \
             rebuild both with `cargo build --release -p equinix-mcp -p equinix-mcp-bench`",
            path.display(),
            version.trim()
        );
    }
    Ok(())
}
