//! The parts of the benchmark that are a library: the lean MCP client its load rows drive
//! servers with, and the recorded passkey approval both its table and its divan bench check. It is kept out of the binary so its unit tests build without compiling the
//! whole benchmark a second time (the binary itself has no unit tests, `test = false`).

#![forbid(unsafe_code)]

pub mod lean;
pub mod recorded_passkey;
