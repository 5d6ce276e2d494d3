//! The subcommands of `equinix-mcp`, each built from the layers below.

pub mod approvers;
pub mod audit;
mod audit_files;
pub mod build_component;
pub mod call;
pub(crate) mod changes;
pub mod healthcheck;
pub mod inspect;
pub mod passkeys;
pub mod policy;
pub mod serve;
pub mod tools;
