//! Builds the test components in `tests/guests/` for wasm32-wasip2 and tells the tests where
//! they are.

#[path = "../host/guest_build.rs"]
mod guest_build;

use std::env;
use std::path::PathBuf;

fn main() {
    let manifest_dir = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap());
    let repo = manifest_dir.parent().unwrap().to_path_buf();
    let probe =
        guest_build::build_guest(&repo, &manifest_dir.join("guests/probe"), "equinix-test-guest", "equinix_test_guest");
    println!("cargo:rustc-env=PROBE_COMPONENT={}", probe.display());
    let bad = guest_build::build_guest(
        &repo,
        &manifest_dir.join("guests/bad-catalog"),
        "equinix-test-bad-catalog",
        "equinix_test_bad_catalog",
    );
    println!("cargo:rustc-env=BAD_CATALOG_COMPONENT={}", bad.display());
}
