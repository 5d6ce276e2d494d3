//! The host crate's integration tests, in one binary: the command line, the commands the docs
//! show, and the Fabric client against the simulator both ways.

mod audit_fixture;
mod cli;
mod docs;
mod fabric_wire;
