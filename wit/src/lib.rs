//! The Rust side of `broker.wit` beside it: the few things the host and the guest must spell
//! identically and that the WIT types alone cannot carry. Each item here is what the WIT
//! documentation refers to; the WIT stays the one place that explains the contract.
//!
//! Both sides link this crate (the guest built for wasm32-wasip2 without std), and neither trusts
//! the other's copy: the host computes the request hash itself from the bytes it holds.
#![no_std]
#![forbid(unsafe_code)]

extern crate alloc;

pub mod answers;
pub mod body;
pub mod fields;

use alloc::format;
use alloc::string::{String, ToString};

use sha2::{Digest, Sha256};

/// The toolset whose tools may ask the person to approve a create (`tools.tool.toolset`); the
/// operator serves it only when named.
pub const MUTATE_TOOLSET: &str = "mutate";

/// The broker's two tools of the `mutate` toolset, as the host's grants name them: proposing a
/// change needs the propose grant, confirming one the confirm grant; every other tool only reads.
pub const PROPOSE_TOOL: &str = "fabric_propose_change";
pub const CONFIRM_TOOL: &str = "fabric_confirm_change";

/// The agent's own reason for a proposal: an optional argument of the propose tool, which the
/// component accepts and ignores, and the host shows the approver quoted as the agent's words.
pub const AGENT_REASON_ARG: &str = "reason";
/// The longest agent's reason taken (in characters).
pub const AGENT_REASON_CHARS: usize = 200;

/// How long a proposal stays confirmable after Fabric validated it: the component's TTL rule and
/// the host's own (no approval after it, whatever the component says) both read this one value.
pub const PROPOSAL_TTL_MS: u64 = 10 * 60 * 1000;

/// The toolsets served when the operator names none (or names `default`): what an agent needs to
/// find what an organisation has and build a change, within a model's budget for `tools/list`.
/// The rest (networks, service tokens, pricing, the diagnostics) are served when named, or all of
/// them with `all`; `mutate` only when
/// named. A component whose catalog has none of these gets every read-only toolset by default.
pub const DEFAULT_TOOLSETS: &[&str] = &["metros", "ports", "service_profiles", "connections", "cloud_routers"];

/// Declares [`ChangeType`] and [`ChangeType::ALL`] from one list, so no variant can be left out
/// of `ALL` (and with it out of [`ChangeType::parse`], the propose schema and the simulator's
/// routes, which are all built from it).
macro_rules! change_types {
    ($($(#[$attr:meta])* $variant:ident => $name:literal,)+) => {
        /// What the broker can carry: creates, and no update or delete. One type for both sides:
        /// the guest's grammar and compiler, the host's allow-list, policy facts and plan match on
        /// it exhaustively, so a new change type is found everywhere it must be handled (the
        /// recipe is in `docs/contributing.md`, "A new change type").
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum ChangeType {
            $($(#[$attr])* $variant,)+
        }

        impl ChangeType {
            /// Every change type, in the order they are declared.
            pub const ALL: [ChangeType; [$($name),+].len()] = [$(ChangeType::$variant),+];

            /// Its name in tool arguments, policies and the audit log.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(ChangeType::$variant => $name,)+
                }
            }
        }
    };
}

change_types! {
    ConnectionCreate => "connection_create",
    NetworkCreate => "network_create",
    ServiceTokenCreate => "service_token_create",
}

impl ChangeType {
    /// Their names, in [`ChangeType::ALL`]'s order: written once, by [`ChangeType::as_str`].
    pub const NAMES: &'static [&'static str] = &{
        let mut names = [""; Self::ALL.len()];
        let mut i = 0;
        while i < names.len() {
            names[i] = Self::ALL[i].as_str();
            i += 1;
        }
        names
    };

    pub fn parse(s: &str) -> Option<ChangeType> {
        Self::ALL.into_iter().find(|ct| ct.as_str() == s)
    }

    /// The create endpoint the compiled body is POSTed to.
    pub const fn path(self) -> &'static str {
        match self {
            ChangeType::ConnectionCreate => "/fabric/v4/connections",
            ChangeType::NetworkCreate => "/fabric/v4/networks",
            ChangeType::ServiceTokenCreate => "/fabric/v4/serviceTokens",
        }
    }

    /// Where what a create of this type made is searched (`POST`), and read one by one (`GET`,
    /// the last segment its uuid), each with the query keys Fabric takes there: the routes the
    /// host's plan and the lookup tools read.
    pub const fn reads(self) -> [ReadRoute; 2] {
        const fn at(path: &'static str, query: &'static [&'static str]) -> ReadRoute {
            ReadRoute { path, query }
        }
        match self {
            ChangeType::ConnectionCreate => {
                [at("/fabric/v4/connections/search", &[]), at("/fabric/v4/connections/{connectionId}", &["direction"])]
            }
            ChangeType::NetworkCreate => {
                [at("/fabric/v4/networks/search", &[]), at("/fabric/v4/networks/{networkId}", &[])]
            }
            ChangeType::ServiceTokenCreate => [
                at("/fabric/v4/serviceTokens/search", &["offset", "limit"]),
                at("/fabric/v4/serviceTokens/{serviceTokenId}", &[]),
            ],
        }
    }

    /// Where a body of this type holds its access points (what [`body::access_points`] walks).
    pub const fn access_points_at(self) -> body::AccessPointsAt {
        match self {
            ChangeType::ConnectionCreate => body::AccessPointsAt::EachSide,
            ChangeType::NetworkCreate => body::AccessPointsAt::Nowhere,
            ChangeType::ServiceTokenCreate => body::AccessPointsAt::TokenSelectors,
        }
    }

    /// The read tools that find what a create of this type made.
    pub fn lookup_tools(self) -> (&'static str, &'static str) {
        match self {
            ChangeType::ConnectionCreate => ("fabric_search_connections", "fabric_get_connection"),
            ChangeType::NetworkCreate => ("fabric_search_networks", "fabric_get_network"),
            ChangeType::ServiceTokenCreate => ("fabric_search_service_tokens", "fabric_get_service_token"),
        }
    }

    /// What a person reads: "Fabric connection".
    pub fn noun(self) -> &'static str {
        match self {
            ChangeType::ConnectionCreate => "Fabric connection",
            ChangeType::NetworkCreate => "Fabric network",
            ChangeType::ServiceTokenCreate => "Fabric service token",
        }
    }
}

/// A route that reads what creates made: its path and the query keys Fabric takes there.
#[derive(Clone, Copy, Debug)]
pub struct ReadRoute {
    pub path: &'static str,
    pub query: &'static [&'static str],
}

// a change type's read routes are its create path's
const _: () = {
    let mut i = 0;
    while i < ChangeType::ALL.len() {
        let ct = ChangeType::ALL[i];
        let [search, item] = ct.reads();
        assert!(starts_with(search.path, ct.path()) && starts_with(item.path, ct.path()), "reads under the create");
        i += 1;
    }
};

const fn starts_with(s: &str, prefix: &str) -> bool {
    let (s, prefix) = (s.as_bytes(), prefix.as_bytes());
    if s.len() <= prefix.len() {
        return false;
    }
    let mut i = 0;
    while i < prefix.len() {
        if s[i] != prefix[i] {
            return false;
        }
        i += 1;
    }
    s[prefix.len()] == b'/'
}

/// `VirtualConnectionPriceConnectionType`: the connection types Fabric's price search prices. Both
/// sides build a price search from a connection's bytes (the component for its price context, the
/// host for the plan it vouches for), so both read this one list.
pub const PRICED_CONNECTION_TYPES: &[&str] = &[
    "EVPL_VC",
    "EPL_VC",
    "EC_VC",
    "IP_VC",
    "VD_CHAIN_VC",
    "ACCESS_EPL_VC",
    "EVPLAN_VC",
    "EPLAN_VC",
    "IPWAN_VC",
    "EVPTREE_VC",
    "EPTREE_VC",
    "IA_VC",
];

/// `VirtualConnectionPriceAccessPointType`.
pub const PRICED_ACCESS_POINT_TYPES: &[&str] =
    &["VD", "SP", "COLO", "CLOUD_ROUTER", "CHAINGROUP", "NETWORK", "METAL_NETWORK"];

/// An input-schema keyword a property may carry: the name of the read tool that lists its valid
/// values (`"x-values-from": "fabric_search_ports"`). The host reads it to say where valid values
/// come from when a call fails its schema, and leaves it out of the schema clients see.
pub const VALUES_FROM: &str = "x-values-from";

/// `confirmation.delivery`: how a call's question reaches the person. Both sides order the same
/// two rules by it, read here, so neither spells them apart: what a first round may do with the
/// proposal, and when the TTL is judged.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Delivery {
    /// `ask` shows the form now and waits for the answer (or answers `unsupported-by-client`).
    Blocking,
    /// Stateless (MCP 2026-07-28) first round: `ask` answers `input-required` at once.
    FirstRound,
    /// Stateless retry: `ask` answers with what the person chose in the first round's form.
    Answered,
}

impl Delivery {
    /// Whether the call takes (consumes) the proposal before asking: a first round only peeks,
    /// since it never approves and its retry must still find the proposal.
    pub const fn takes_the_proposal(self) -> bool {
        !matches!(self, Delivery::FirstRound)
    }

    /// Whether the proposal's TTL is judged before asking: an answered retry's answer was given
    /// already, in the first round, and is judged when it would mint an approval instead.
    pub const fn judges_the_ttl_before_asking(self) -> bool {
        !matches!(self, Delivery::Answered)
    }
}

/// `confirmation.status`, as tool results, the audit log and metrics name it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ConfirmStatus {
    Accepted,
    Declined,
    Cancelled,
    TimedOut,
    Failed,
    CallCancelled,
    UnsupportedByClient,
    InputRequired,
}

impl ConfirmStatus {
    /// The WIT case name in snake case (`timed-out` is `timed_out`): `human_confirmation.status`
    /// in results, `human_status` in the audit log, the `status` label of the metrics.
    pub fn as_str(self) -> &'static str {
        match self {
            ConfirmStatus::Accepted => "accepted",
            ConfirmStatus::Declined => "declined",
            ConfirmStatus::Cancelled => "cancelled",
            ConfirmStatus::TimedOut => "timed_out",
            ConfirmStatus::Failed => "failed",
            ConfirmStatus::CallCancelled => "call_cancelled",
            ConfirmStatus::UnsupportedByClient => "unsupported_by_client",
            ConfirmStatus::InputRequired => "input_required",
        }
    }
}

/// The hash an approval is bound to (`confirmation.approval.request-sha256`): SHA-256 over the
/// change type, a newline and the body, in lowercase hex. By hand:
/// `printf '%s\n%s' connection_create "$BODY" | sha256sum`.
pub fn request_sha256(change_type: &str, body: &str) -> String {
    let mut h = Sha256::new();
    h.update(change_type.as_bytes());
    h.update(b"\n");
    h.update(body.as_bytes());
    hex::encode(h.finalize())
}

/// `value` as compact JSON text with every object's keys in byte order: the canonical form the
/// broker hashes and sends, and the host binds a stateless retry to. Written out here, not left
/// to serde_json's map: a dependency that turns on its `preserve_order` (cedar-policy does, in
/// the host's build) would otherwise keep whatever order a client chose.
pub fn canonical_json(value: &serde_json::Value) -> String {
    let mut out = String::new();
    write_sorted(value, &mut out);
    out
}

fn write_sorted(value: &serde_json::Value, out: &mut String) {
    use serde_json::Value;
    match value {
        Value::Object(m) => {
            let mut entries: alloc::vec::Vec<(&String, &Value)> = m.iter().collect();
            entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
            out.push('{');
            for (i, (k, v)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&serde_json::to_string(k).expect("a string serializes"));
                out.push(':');
                write_sorted(v, out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_sorted(v, out);
            }
            out.push(']');
        }
        leaf => out.push_str(&serde_json::to_string(leaf).expect("a JSON value serializes")),
    }
}

/// The next step of a call whose arguments failed their schema: fix every problem, and for each
/// `(path, tool)` the read tool that lists valid values there (one mention per tool). The host
/// says it for the calls its schema check refuses, the component for those its grammar refuses,
/// in the same words.
pub fn next_step<'a>(pointers: impl IntoIterator<Item = (&'a str, &'a str)>) -> String {
    let mut step = String::from("Fix every problem under `problems` and call again");
    let mut named: alloc::vec::Vec<&str> = alloc::vec::Vec::new();
    for (path, tool) in pointers {
        if !named.contains(&tool) {
            named.push(tool);
            step.push_str(&format!("; {tool} lists valid values for {path}"));
        }
    }
    step.push('.');
    step
}

/// How an error names the kind of JSON value it was given ("expected an object, got a string"),
/// alike in the component's argument checks and the host's command line.
pub fn json_kind(v: &serde_json::Value) -> &'static str {
    use serde_json::Value;
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The longest quote of an untrusted value in an error.
pub const QUOTE_CHARS: usize = 200;

/// `s` cut to `max` characters, saying how much was left out: errors name what was wrong with a
/// short prefix of it, never the whole value (a 1 MiB argument must not come back as a 4 MB
/// error).
pub fn clip(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        None => s.to_string(),
        Some((end, _)) => format!("{}… ({} more characters)", &s[..end], s[end..].chars().count()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_first_round_only_peeks_and_an_answered_retry_is_judged_when_it_mints() {
        let rules = |d: Delivery| (d.takes_the_proposal(), d.judges_the_ttl_before_asking());
        assert_eq!(rules(Delivery::Blocking), (true, true));
        assert_eq!(rules(Delivery::FirstRound), (false, true));
        assert_eq!(rules(Delivery::Answered), (true, false));
    }

    #[test]
    fn long_values_are_clipped_with_a_count() {
        assert_eq!(clip("short", 10), "short");
        assert_eq!(clip("abcdef", 3), "abc… (3 more characters)");
        assert_eq!(clip("ééééé", 2), "éé… (3 more characters)");
    }

    #[test]
    fn the_request_hash_is_what_sha256sum_prints() {
        // printf '%s\n%s' connection_create '{"a":1}' | sha256sum
        assert_eq!(
            request_sha256("connection_create", r#"{"a":1}"#),
            "09925c5b4018bfa87c9cc0c5aed724bd92a66964651ba32dbb08977f3fff36a9"
        );
    }

    #[test]
    fn status_names_are_the_wit_cases_in_snake_case() {
        let wit = include_str!("../broker.wit");
        let start = wit.find("enum status {").expect("the WIT declares confirmation.status");
        let cases: alloc::vec::Vec<String> = wit[start..]
            .lines()
            .skip(1)
            .map(str::trim)
            .take_while(|l| *l != "}")
            .filter(|l| !l.starts_with("//"))
            .map(|l| l.trim_end_matches(',').replace('-', "_"))
            .collect();
        use ConfirmStatus::*;
        let all = [Accepted, Declined, Cancelled, TimedOut, Failed, CallCancelled, UnsupportedByClient, InputRequired];
        let ours: alloc::vec::Vec<&str> = all.iter().map(|s| s.as_str()).collect();
        assert_eq!(cases, ours);
    }

    #[test]
    fn the_next_step_names_each_tool_once() {
        assert_eq!(next_step([]), "Fix every problem under `problems` and call again.");
        assert_eq!(
            next_step([("/a", "fabric_x"), ("/b", "fabric_x"), ("/c", "fabric_y")]),
            "Fix every problem under `problems` and call again; fabric_x lists valid values for /a; fabric_y lists \
             valid values for /c."
        );
    }
}
