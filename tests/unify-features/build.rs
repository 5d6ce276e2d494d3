//! Empty: cargo compiles a package's build-dependencies only for its build script, and asking for
//! them is this package's whole purpose (see Cargo.toml and .ci/unify-features).
fn main() {}
