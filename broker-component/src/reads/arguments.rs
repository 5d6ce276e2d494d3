//! The read tools' arguments: simple and typed (metro code, name, state, uuid, paging), each id
//! with the search tool that lists valid ones.

use crate::args::{LIMIT, OFFSET};
use crate::fabric_enums::*;
use crate::grammar::{Field, Kind, METRO, METROS_TOOL, Object, TEXT, UUID, arguments, int, opt, req};

const SEARCH_PORTS_TOOL: &str = "fabric_search_ports";

const NAME: Field = opt("name", TEXT, "Part of the name, any case");
const METRO_ARG: Field = opt("metro", METRO, "Metro code").from(METROS_TOOL);

/// `{key}` (a uuid, required, listed by the search tool `search`): the argument of every
/// get-by-id tool.
macro_rules! by_id {
    ($key:literal, $search:expr) => {
        arguments(&[req($key, UUID, "").from($search)])
    };
}

pub(super) static SEARCH_PORTS: Object = arguments(&[
    NAME,
    METRO_ARG,
    opt("state", Kind::Enum(PORT_STATES), "State"),
    opt("project_id", UUID, "Project uuid"),
    OFFSET,
    LIMIT,
]);
pub(super) static GET_PORT: Object = by_id!("port_id", SEARCH_PORTS_TOOL);
pub(super) static PORT_VLANS: Object = arguments(&[req("port_id", UUID, "").from(SEARCH_PORTS_TOOL), OFFSET, LIMIT]);
pub(super) static SEARCH_PROFILES: Object = arguments(&[
    NAME,
    METRO_ARG,
    opt("visibility", Kind::Enum(PROFILE_VISIBILITIES), "PUBLIC: providers"),
    opt("view_point", Kind::Enum(&["aSide", "zSide"]), "Your end").or("\"aSide\""),
    OFFSET,
    LIMIT,
]);
pub(super) static GET_PROFILE: Object = by_id!("profile_id", "fabric_search_service_profiles");
pub(super) static PROFILE_METROS: Object =
    arguments(&[req("profile_id", UUID, "").from("fabric_search_service_profiles"), OFFSET, LIMIT]);
pub(super) static SEARCH_CONNECTIONS: Object = arguments(&[
    opt("name", TEXT, "Part of the name: as typed, lower or upper case"),
    opt("state", Kind::Enum(CONNECTION_STATES), "State"),
    opt("port_id", UUID, "A-side port").from(SEARCH_PORTS_TOOL),
    opt("router_id", UUID, "A-side Cloud Router").from("fabric_search_cloud_routers"),
    OFFSET,
    LIMIT,
]);
pub(super) static GET_CONNECTION: Object = by_id!("connection_id", "fabric_search_connections");
pub(super) static SEARCH_NETWORKS: Object = arguments(&[
    NAME,
    opt("type", Kind::Enum(NETWORK_TYPES), "Type"),
    opt("scope", Kind::Enum(NETWORK_SCOPES), "Scope"),
    opt("state", Kind::Enum(NETWORK_STATES), "State"),
    OFFSET,
    LIMIT,
]);
pub(super) static GET_NETWORK: Object = by_id!("network_id", "fabric_search_networks");
pub(super) static SEARCH_TOKENS: Object =
    arguments(&[NAME, opt("state", Kind::Enum(TOKEN_STATES), "State"), OFFSET, LIMIT]);
pub(super) static GET_TOKEN: Object = by_id!("service_token_id", "fabric_search_service_tokens");
pub(super) static SEARCH_PRICES: Object = arguments(&[
    req("connection_type", Kind::Enum(PRICED_CONNECTION_TYPES), "Connection type"),
    req("bandwidth", int(1, 100_000), "Mbps"),
    opt("a_side_type", Kind::Enum(PRICED_ACCESS_POINT_TYPES), "A-side type").or("\"COLO\""),
    opt("a_side_metro", METRO, "").from(METROS_TOOL),
    opt("a_side_port_id", UUID, "").from(SEARCH_PORTS_TOOL),
    opt("z_side_type", Kind::Enum(PRICED_ACCESS_POINT_TYPES), "Z-side type"),
    opt("z_side_metro", METRO, "").from(METROS_TOOL),
    opt("z_side_profile_id", UUID, "").from("fabric_search_service_profiles"),
]);

/// The get tools' id arguments, each listed by a search tool.
pub(super) static GET_IDS: [&Object; 6] =
    [&GET_PORT, &GET_PROFILE, &GET_CONNECTION, &GET_NETWORK, &GET_TOKEN, &PORT_VLANS];
