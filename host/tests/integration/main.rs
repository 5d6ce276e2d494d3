//! The host crate's integration tests, in one binary: the command line, the commands the docs
//! show, the Fabric client against the simulator both ways, and what the release ships.

mod audit_fixture;
mod change_type;
mod cli;
mod docs;
mod fabric_wire;
mod house;
mod packaging;
