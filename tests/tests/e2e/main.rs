//! End-to-end tests: the real `equinix-mcp` binary, real MCP clients, the Fabric simulator on
//! loopback. One test binary (one link of the host's dependencies instead of one per file), a
//! module per concern, one harness.

mod harness;

mod agent;
mod approval_page;
mod broker;
mod catalog;
mod change_story;
mod component_build;
mod conformance;
mod consensus;
mod contract;
mod delivery_matrix;
mod deployment;
mod docs_match;
mod every_call;
mod evidence;
mod failover;
mod faults;
mod foundation;
mod hostile;
mod hostile_binding;
mod http;
mod inbox;
mod local_approvers;
mod local_origin;
mod local_servers;
mod lockout;
mod newcomer;
mod notifications;
mod oauth;
mod observability;
mod one_yes;
mod operations;
mod page_states;
mod partitions;
mod passkeys;
mod plan;
mod plugin;
mod policy;
mod quorum;
mod races;
mod replicas;
mod route_policies;
mod routing;
mod secrets;
mod shared_server;
mod store_conformance;
mod trial;
