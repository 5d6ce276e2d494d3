//! `equinix-mcp policy schema` and `equinix-mcp policy check FILE`: the operator policy's
//! Cedar schema, and a set checked against it exactly as `serve --policy` checks it.

use crate::{out, outln};

use std::process::ExitCode;

use crate::cli::PolicyCommand;
use crate::policy;

pub fn run(command: &PolicyCommand) -> ExitCode {
    match command {
        PolicyCommand::Schema => {
            out!("{}", policy::SCHEMA);
            ExitCode::SUCCESS
        }
        PolicyCommand::Check { file } => match policy::load(file) {
            Ok(loaded) => {
                outln!(
                    "{}: {} policies, valid against the EquinixMcp schema (sha256 {})",
                    file.display(),
                    loaded.policies,
                    loaded.sha256
                );
                ExitCode::SUCCESS
            }
            Err(why) => {
                eprintln!("equinix-mcp: {why}");
                ExitCode::FAILURE
            }
        },
    }
}
