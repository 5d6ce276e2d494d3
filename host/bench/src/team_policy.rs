//! The policy set the benchmarks judge proposes by, shared by the whole-process row and the
//! in-process bench.

/// The README's "Operator policy" set (ports DC-SEC-01 and SV-SEC-01 of the bench's spec are in
/// DC and SV, at 1 Gbps: every propose is permitted, after the host learns both ports' metros).
pub const TEAM_POLICY: &str = r#"
@id("our-metros-only") permit (principal, action, resource) when { ["DC", "SV"].containsAll(resource.metros) };
@id("at-most-1-gbps") forbid (principal, action, resource) when { resource has bandwidth_mbps && resource.bandwidth_mbps > 1000 };
@id("no-service-tokens") forbid (principal, action == EquinixMcp::Action::"service_token_create", resource);
@id("networks-only-for-netops") forbid (principal, action == EquinixMcp::Action::"network_create", resource)
unless { principal == EquinixMcp::Principal::"netops" };
"#;

/// The same set and one more policy that reads each request's name, which no two proposes share:
/// every decision is Cedar's evaluation, none is remembered (the row's context, not its target).
// the in-process bench includes this file too and has no use for it
#[allow(dead_code)]
pub const TEAM_POLICY_READING_NAMES: &str = r#"
@id("no-scratch-names") forbid (principal, action, resource) when { resource.name like "scratch-*" };
"#;
