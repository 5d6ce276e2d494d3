//! Builds the broker component for wasm32-wasip2 and embeds it, so `cargo install`/`cargo run`
//! yield one self-contained binary.

#[path = "guest_build.rs"]
mod guest_build;

use std::env;
use std::path::PathBuf;

fn main() {
    let manifest_dir = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap());
    let repo = manifest_dir.parent().unwrap().to_path_buf();
    let wasm = guest_build::build_guest(
        &repo,
        &repo.join("broker-component"),
        "equinix-broker-component",
        "equinix_broker_component",
    );
    let out = PathBuf::from(env::var("OUT_DIR").unwrap()).join("broker.wasm");
    std::fs::copy(&wasm, &out).unwrap_or_else(|e| panic!("copy {}: {e}", wasm.display()));
}
