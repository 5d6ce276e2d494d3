//! No code. This package only asks cargo for crates the workspace needs both at build time and at
//! run time, with one feature set, so each is compiled once (written by `.ci/unify-features`).
