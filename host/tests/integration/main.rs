//! The host crate's integration tests, in one binary: the command line, and the Fabric client
//! against the simulator both ways.

mod cli;
mod fabric_wire;
