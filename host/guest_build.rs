//! Building a wasm32-wasip2 guest; shared by `host/build.rs` (the broker component),
//! `tests/build.rs` (the test components) and `equinix-mcp build-component` (a user's own).
//!
//! The guest is built by a nested `cargo build` with its own target directory and a scrubbed
//! environment: flags meant for the native host build (RUSTFLAGS, coverage, sanitizers, the outer
//! profile) must not leak into the guest, and the guest must not share the host's build lock.

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Environment variables the nested cargo may see; everything else is removed.
const KEEP_ENV: &[&str] = &[
    "PATH",
    "HOME",
    "CARGO_HOME",
    "RUSTUP_HOME",
    "RUSTUP_TOOLCHAIN",
    "CARGO_NET_OFFLINE",
    "CARGO_HTTP_PROXY",
    "HTTPS_PROXY",
    "HTTP_PROXY",
    "NO_PROXY",
    "TMPDIR",
];

/// Builds workspace package `package` (whose sources are in `dir`) for wasm32-wasip2 in release
/// mode, optimised for speed, and returns the path of `<lib_name>.wasm`. For build scripts: it
/// tells cargo what to watch and panics on failure.
#[allow(dead_code)]
pub fn build_guest(repo: &Path, dir: &Path, package: &str, lib_name: &str) -> PathBuf {
    for watched in ["src", "Cargo.toml"] {
        println!("cargo:rerun-if-changed={}", dir.join(watched).display());
    }
    println!("cargo:rerun-if-changed={}", repo.join("wit").display());
    println!("cargo:rerun-if-changed={}", repo.join("Cargo.lock").display());

    let target_dir = guest_target_dir(repo);
    let cargo = env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = guest_command(&cargo, repo, package, &target_dir)
        .status()
        .expect("could not run cargo to build a wasm32-wasip2 guest");
    if !status.success() {
        panic!(
            "building {package} for wasm32-wasip2 failed (see cargo's output above; if the target is \
             missing, run `rustup toolchain install` in the repository)"
        );
    }
    guest_wasm(&target_dir, lib_name)
}

/// The nested `cargo build` of guest `package` in workspace `repo`: the one definition of how a
/// component is built, used by the build scripts and by `equinix-mcp build-component`, so a
/// component a user builds gets exactly the embedded one's flags.
pub fn guest_command(cargo: &str, repo: &Path, package: &str, target_dir: &Path) -> Command {
    let mut cmd = Command::new(cargo);
    cmd.env_clear();
    for key in KEEP_ENV {
        if let Ok(v) = env::var(key) {
            cmd.env(key, v);
        }
    }
    cmd.current_dir(repo).args(["build", "--locked", "--release", "--target", "wasm32-wasip2", "-p", package]);
    cmd.arg("--target-dir").arg(target_dir);
    // Guests ship inside the host and run on every call: optimise them for speed whatever the host
    // profile (docs/engineering-log.md, "Server CPU per call", has what opt-level 3 bought against "s").
    for setting in [
        "profile.release.opt-level=3",
        "profile.release.lto=true",
        "profile.release.codegen-units=1",
        "profile.release.strip=true",
        "profile.release.panic=\"abort\"",
        // A 256 KiB shadow stack (the default is 1 MiB) keeps the pages a call touches (stack,
        // static data, the start of the heap) inside the host's keep-resident window, so a
        // reused instance slot does not page-fault them in again on every call. 1 MiB of
        // initial memory holds a typical call's heap, so the instance never grows its memory and
        // the slot's page protections never change between calls.
        "target.wasm32-wasip2.rustflags=[\"-C\", \"link-arg=-zstack-size=262144\", \"-C\", \"link-arg=--initial-memory=1048576\"]",
    ] {
        cmd.args(["--config", setting]);
    }
    cmd
}

/// Where the nested build leaves `<lib_name>.wasm`.
pub fn guest_wasm(target_dir: &Path, lib_name: &str) -> PathBuf {
    target_dir.join("wasm32-wasip2/release").join(format!("{lib_name}.wasm"))
}

/// One guest target directory for every host profile (debug, release, clippy), so each guest
/// is built once; beside the host's own target directory.
pub fn guest_target_dir(repo: &Path) -> PathBuf {
    let base = env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .map(|p| if p.is_absolute() { p } else { repo.join(p) })
        .unwrap_or_else(|| repo.join("target"));
    base.join("guest")
}
