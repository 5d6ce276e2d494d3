//! `equinix-mcp build-component`: builds a broker component from a source tree with exactly the
//! flags of the embedded one (the same `guest_build.rs` the host's build script uses), prints
//! its SHA-256 and how to serve it. A team that changes the component builds it this way and
//! pins what it built: `serve --component PATH --component-sha256 HEX`.

use crate::outln;

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, bail};

use crate::cli::BuildComponentArgs;

#[path = "../../guest_build.rs"]
mod guest_build;

pub fn run(args: &BuildComponentArgs) -> anyhow::Result<ExitCode> {
    let source = std::fs::canonicalize(&args.source)
        .with_context(|| format!("--source {}: no such directory", args.source.display()))?;
    if !source.join("Cargo.toml").is_file() {
        bail!("--source {}: no Cargo.toml here; give the root of the equinix-mcp source tree", source.display());
    }
    let target_dir = args.target_dir.clone().unwrap_or_else(|| guest_build::guest_target_dir(&source));
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    eprintln!("building {} for wasm32-wasip2 in {} ...", args.package, source.display());
    let status = guest_build::guest_command(&cargo, &source, &args.package, &target_dir)
        .status()
        .with_context(|| format!("running {cargo}: is the Rust toolchain installed?"))?;
    if !status.success() {
        bail!(
            "cargo could not build {} ({status}); see its output above. If the wasm32-wasip2 target is \
             missing, run `rustup toolchain install` in {}",
            args.package,
            source.display()
        );
    }
    let built = guest_build::guest_wasm(&target_dir, &args.package.replace('-', "_"));
    let bytes = std::fs::read(&built).with_context(|| format!("reading the built component {}", built.display()))?;
    let wasm: PathBuf = match &args.out {
        Some(out) => {
            std::fs::write(out, &bytes).with_context(|| format!("writing --out {}", out.display()))?;
            out.clone()
        }
        None => built,
    };
    let sha = crate::component::sha256_hex(&bytes);
    outln!("component: {}", wasm.display());
    outln!("sha256: {sha}");
    outln!("check it: equinix-mcp inspect --component {}", wasm.display());
    outln!("serve it: equinix-mcp serve --component {} --component-sha256 {sha}", wasm.display());
    Ok(ExitCode::SUCCESS)
}
