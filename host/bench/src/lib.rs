//! The one part of the benchmark that is a library: the lean MCP client its load rows drive
//! servers with. It is kept out of the binary so its unit tests build without compiling the
//! whole benchmark a second time (the binary itself has no unit tests, `test = false`).

#![forbid(unsafe_code)]

pub mod lean;
