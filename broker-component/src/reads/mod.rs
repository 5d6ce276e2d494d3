//! The read-only catalog: everything an agent needs to build a correct change spec. Arguments
//! are simple and typed (metro code, name, state, uuid, paging); the component builds Fabric's
//! filters as each endpoint's contract allows, and compacts the lists (a get tool returns Fabric's
//! whole object). Every list is paged with `total` and `next_offset`, never truncated silently.

use crate::args::{LIMIT, OFFSET};
use crate::catalog::{Output, READ_ONLY, ToolDef};
use crate::fabric_enums::*;
use crate::grammar::{Field, Kind, METRO, Object, UUID, arguments, int, opt, req};

const NAME: Field = opt("name", crate::grammar::TEXT, "Part of the name");
const METRO_ARG: Field = opt("metro", METRO, "Metro code (fabric_list_metros)");

/// `{key}` (a uuid, required): the argument of every get-by-id tool.
macro_rules! by_id {
    ($key:literal, $search:literal) => {
        arguments(&[req($key, UUID, concat!("From ", $search))])
    };
}

/// A read-only row.
const fn read(
    name: &'static str,
    toolset: &'static str,
    title: &'static str,
    description: &'static str,
    args: &'static Object,
    output: Output,
    run: crate::catalog::Handler,
) -> ToolDef {
    ToolDef { name, toolset, title, description, args, schema_extra: None, hints: READ_ONLY, output, run }
}

static SEARCH_PORTS: Object = arguments(&[
    NAME,
    METRO_ARG,
    opt("state", Kind::Enum(PORT_STATES), "State"),
    opt("project_id", UUID, "Project uuid"),
    OFFSET,
    LIMIT,
]);
static GET_PORT: Object = by_id!("port_id", "fabric_search_ports");
static PORT_VLANS: Object = arguments(&[req("port_id", UUID, "From fabric_search_ports"), OFFSET, LIMIT]);
static SEARCH_PROFILES: Object = arguments(&[
    NAME,
    METRO_ARG,
    opt("visibility", Kind::Enum(PROFILE_VISIBILITIES), "PUBLIC: providers"),
    opt("view_point", Kind::Enum(&["aSide", "zSide"]), "Your end").or("\"aSide\""),
    OFFSET,
    LIMIT,
]);
static GET_PROFILE: Object = by_id!("profile_id", "fabric_search_service_profiles");
static SEARCH_CONNECTIONS: Object = arguments(&[
    NAME,
    opt("state", Kind::Enum(CONNECTION_STATES), "State"),
    opt("port_id", UUID, "A-side port, from fabric_search_ports"),
    OFFSET,
    LIMIT,
]);
static GET_CONNECTION: Object = by_id!("connection_id", "fabric_search_connections");
static SEARCH_NETWORKS: Object = arguments(&[
    NAME,
    opt("type", Kind::Enum(NETWORK_TYPES), "Type"),
    opt("scope", Kind::Enum(NETWORK_SCOPES), "Scope"),
    opt("state", Kind::Enum(NETWORK_STATES), "State"),
    OFFSET,
    LIMIT,
]);
static GET_NETWORK: Object = by_id!("network_id", "fabric_search_networks");
static SEARCH_TOKENS: Object = arguments(&[NAME, opt("state", Kind::Enum(TOKEN_STATES), "State"), OFFSET, LIMIT]);
static GET_TOKEN: Object = by_id!("service_token_id", "fabric_search_service_tokens");
static SEARCH_PRICES: Object = arguments(&[
    req("connection_type", Kind::Enum(PRICED_CONNECTION_TYPES), "Connection type"),
    req("bandwidth", int(1, 100_000), "Mbps"),
    opt("a_side_type", Kind::Enum(PRICED_ACCESS_POINT_TYPES), "A-side type").or("\"COLO\""),
    opt("a_side_metro", METRO, "From fabric_list_metros"),
    opt("a_side_port_id", UUID, "From fabric_search_ports"),
    opt("z_side_type", Kind::Enum(PRICED_ACCESS_POINT_TYPES), "Z-side type"),
    opt("z_side_metro", METRO, "From fabric_list_metros"),
    opt("z_side_profile_id", UUID, "From fabric_search_service_profiles"),
]);

pub static TOOLS: [ToolDef; 12] = [
    read(
        "fabric_search_ports",
        "ports",
        "Search ports",
        "Your ports by name, metro, state or project.",
        &SEARCH_PORTS,
        Output::Page("ports", &[]),
        search_ports,
    ),
    read("fabric_get_port", "ports", "Get a port", "The whole port object.", &GET_PORT, Output::One("port"), get_port),
    read(
        "fabric_list_port_vlans",
        "ports",
        "VLANs in use on a port",
        "VLANs in use on a port, and what holds each.",
        &PORT_VLANS,
        Output::Page("vlans_in_use", &[]),
        list_port_vlans,
    ),
    read(
        "fabric_search_service_profiles",
        "service_profiles",
        "Search service profiles",
        "Service profiles and what a connection to each needs.",
        &SEARCH_PROFILES,
        Output::Page("service_profiles", &[]),
        search_profiles,
    ),
    read(
        "fabric_get_service_profile",
        "service_profiles",
        "Get a service profile",
        "The whole profile object.",
        &GET_PROFILE,
        Output::One("service_profile"),
        get_profile,
    ),
    read(
        "fabric_search_connections",
        "connections",
        "Search connections",
        "Connections by name, state or A-side port.",
        &SEARCH_CONNECTIONS,
        Output::Page("connections", &[]),
        search_connections,
    ),
    read(
        "fabric_get_connection",
        "connections",
        "Get a connection",
        "The whole connection object.",
        &GET_CONNECTION,
        Output::One("connection"),
        get_connection,
    ),
    read(
        "fabric_search_networks",
        "networks",
        "Search networks",
        "Networks by name, type, scope or state.",
        &SEARCH_NETWORKS,
        Output::Page("networks", &[]),
        search_networks,
    ),
    read(
        "fabric_get_network",
        "networks",
        "Get a network",
        "The whole network object.",
        &GET_NETWORK,
        Output::One("network"),
        get_network,
    ),
    read(
        "fabric_search_service_tokens",
        "service_tokens",
        "Search service tokens",
        "Service tokens by name or state.",
        &SEARCH_TOKENS,
        Output::Page("service_tokens", &[]),
        search_tokens,
    ),
    read(
        "fabric_get_service_token",
        "service_tokens",
        "Get a service token",
        "The whole token object.",
        &GET_TOKEN,
        Output::One("service_token"),
        get_token,
    ),
    read(
        "fabric_search_prices",
        "pricing",
        "Price a connection",
        "List price of a virtual connection.",
        &SEARCH_PRICES,
        Output::Page("prices", &[]),
        search_prices,
    ),
];

mod compact;
mod handlers;
#[cfg(test)]
mod tests;

use handlers::*;
