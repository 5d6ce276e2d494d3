//! Builds the broker component for wasm32-wasip2 and embeds it, so `cargo install`/`cargo run`
//! yield one self-contained binary.
//!
//! In the repository the component is built from `broker-component/`. A packaged crate (what
//! `cargo install equinix-mcp` downloads) holds no guest source: `.ci/release` puts the component
//! every release binary embeds into `component/broker.wasm`, with its SHA-256 beside it, and the
//! build embeds that copy only if it still has that hash.

#[path = "guest_build.rs"]
mod guest_build;

use std::env;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

fn main() {
    let manifest_dir = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap());
    let repo = manifest_dir.parent().unwrap().to_path_buf();
    let out = PathBuf::from(env::var("OUT_DIR").unwrap()).join("broker.wasm");
    let source = repo.join("broker-component");
    if source.join("Cargo.toml").is_file() {
        let wasm = guest_build::build_guest(&repo, &source, "equinix-broker-component", "equinix_broker_component");
        std::fs::copy(&wasm, &out).unwrap_or_else(|e| panic!("copy {}: {e}", wasm.display()));
    } else {
        embed_packaged_copy(&manifest_dir.join("component"), &out);
    }
    // its SHA-256, computed once here rather than at every start (`--version`, the cache's key)
    let wasm = std::fs::read(&out).unwrap_or_else(|e| panic!("read {}: {e}", out.display()));
    println!("cargo:rustc-env=EQUINIX_MCP_COMPONENT_SHA256={}", hex(&Sha256::digest(&wasm)));
    // `--version` names the target a binary was built for: a downloaded release file says which
    // of the release's binaries it is
    println!("cargo:rustc-env=EQUINIX_MCP_TARGET={}", env::var("TARGET").unwrap());
}

fn embed_packaged_copy(dir: &Path, out: &Path) {
    let wasm = dir.join("broker.wasm");
    let recorded = dir.join("broker.wasm.sha256");
    for path in [&wasm, &recorded] {
        println!("cargo:rerun-if-changed={}", path.display());
    }
    let bytes = std::fs::read(&wasm).unwrap_or_else(|e| {
        panic!(
            "{}: {e}: this is neither the repository (no broker-component/ beside host/) nor a crate packaged \
             by .ci/release",
            wasm.display()
        )
    });
    let expected = std::fs::read_to_string(&recorded).unwrap_or_else(|e| panic!("{}: {e}", recorded.display()));
    let actual = hex(&Sha256::digest(&bytes));
    if actual != expected.trim() {
        panic!(
            "{} has SHA-256 {actual}, not the recorded {}: the package was altered",
            wasm.display(),
            expected.trim()
        );
    }
    std::fs::write(out, bytes).unwrap_or_else(|e| panic!("write {}: {e}", out.display()));
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
