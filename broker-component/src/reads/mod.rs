//! The read-only catalog: everything an agent needs to build a correct change spec. Arguments
//! are simple and typed (metro code, name, state, uuid, paging); the component builds Fabric's
//! filters as each endpoint's contract allows, and compacts the lists (a get tool returns Fabric's
//! whole object). Every list is paged with `total` and `next_offset`, never truncated silently.

use crate::tool::{Output, ToolDef, read};

pub(crate) static TOOLS: [ToolDef; 14] = [
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
        "fabric_list_service_profile_metros",
        "service_profiles",
        "Metros of a service profile",
        "Where a profile is offered: largest connection, seller regions.",
        &PROFILE_METROS,
        Output::Page("metros", &[]),
        profile_metros,
    ),
    read(
        "fabric_search_connections",
        "connections",
        "Search connections",
        "Connections by name, state, A-side port or Cloud Router.",
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
        "fabric_list_network_connections",
        "networks",
        "Connections of a network",
        "The connections with a side on a network.",
        &GET_NETWORK,
        Output::Page("connections", &[]),
        network_connections,
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

mod arguments;
mod compact;
mod events;
mod handlers;
pub(crate) mod metros;
mod policies;
mod requests;
mod routers;
mod routing;
mod statistics;
#[cfg(test)]
mod tests;
mod window;

/// Every read tool, in the order `tools/list` shows them.
pub(crate) fn tools() -> impl Iterator<Item = &'static ToolDef> {
    core::iter::once(&metros::TOOL)
        .chain(TOOLS.iter())
        .chain(routers::TOOLS.iter())
        .chain(routing::TOOLS.iter())
        .chain(policies::TOOLS.iter())
        .chain(statistics::TOOLS.iter())
        .chain(events::TOOLS.iter())
}

use arguments::*;
use handlers::*;
