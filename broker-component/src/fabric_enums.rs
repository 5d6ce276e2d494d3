//! The Fabric v4 enumerations the broker sends or filters by, each in one place, as the official
//! contract states them: the Fabric API v4 OpenAPI document 4.31, from which the `equinix` Python
//! SDK 0.20.0 is generated (the project's contract tests check against that SDK). A list noted
//! "wider than the SDK" keeps values real Fabric returns that the SDK lacks.

/// `ConnectionType` (4.31 added GW_VC and IPX_VC and dropped IC_VC).
pub const CONNECTION_TYPES: &[&str] = &[
    "EVPL_VC",
    "EPL_VC",
    "EC_VC",
    "IP_VC",
    "ACCESS_EPL_VC",
    "EIA_VC",
    "EVPLAN_VC",
    "EPLAN_VC",
    "EVPTREE_VC",
    "EPTREE_VC",
    "IPWAN_VC",
    "IA_VC",
    "MC_VC",
    "IX_VC",
    "GW_VC",
    "IPX_VC",
];

/// `AccessPointType`.
pub const ACCESS_POINT_TYPES: &[&str] = &[
    "VD",
    "VG",
    "SP",
    "IGW",
    "COLO",
    "SUBNET",
    "CLOUD_ROUTER",
    "NETWORK",
    "METAL_NETWORK",
    "VPIC_INTERFACE",
    "APP_LINK",
    "XF_IC",
];

/// `LinkProtocolType` (what a request may ask for).
pub const LINK_PROTOCOLS: &[&str] = &["UNTAGGED", "DOT1Q", "QINQ", "EVPN_VXLAN", "VXLAN"];

/// `ServiceProfileTypeEnum`.
pub const PROFILE_TYPES: &[&str] =
    &["L2_PROFILE", "L3_PROFILE", "IA_PROFILE", "IX_PROFILE", "IC_PROFILE", "LMAAS_PROFILE"];

/// `ServiceProfileVisibilityEnum`.
pub const PROFILE_VISIBILITIES: &[&str] = &["PRIVATE", "PUBLIC"];

/// `SimplifiedNotification.type`.
pub const NOTIFICATION_TYPES: &[&str] = &[
    "NOTIFICATION",
    "BANDWIDTH_ALERT",
    "CONNECTION_APPROVAL",
    "PROFILE_LIFECYCLE",
    "ALL",
    "SALES_REP_NOTIFICATIONS",
    "TECHNICAL",
    "ORDERING",
    "QUOTE_NOTIFICATIONS",
];

/// `GeoScopeType`.
pub const GEO_SCOPES: &[&str] = &["CANADA", "CONUS", "JAPAN", "UK", "AUSTRALIA", "BRAZIL", "SWITZERLAND", "EU"];

/// `PeeringType`.
pub const PEERING_TYPES: &[&str] = &["PRIVATE", "MICROSOFT", "PUBLIC", "MANUAL"];

/// `AccessPoint.role`.
pub(crate) const ROLES: &[&str] = &["LEAF", "ROOT"];

/// `ConnectionRedundancy.priority`.
pub(crate) const PRIORITIES: &[&str] = &["PRIMARY", "SECONDARY"];

/// `marketplaceSubscription.type`.
pub(crate) const MARKETPLACES: &[&str] =
    &["AWS_MARKETPLACE_SUBSCRIPTION", "GCP_MARKETPLACE_SUBSCRIPTION", "AZURE_MARKETPLACE_SUBSCRIPTION"];

/// `VirtualDevice.type`.
pub(crate) const VIRTUAL_DEVICE_TYPES: &[&str] = &["EDGE"];

/// `Interface.type` (a connection's access point).
pub(crate) const INTERFACE_TYPES: &[&str] = &["CLOUD", "NETWORK"];

/// `VirtualDeviceInterface.type` (a service token's selector).
pub(crate) const SELECTOR_INTERFACE_TYPES: &[&str] = &["NETWORK"];

/// `NetworkType`, `NetworkScope`, `NetworkState`.
pub const NETWORK_TYPES: &[&str] = &["EVPLAN", "EPLAN", "IPWAN", "EVPTREE", "EPTREE"];
pub const NETWORK_SCOPES: &[&str] = &["REGIONAL", "GLOBAL", "LOCAL"];
pub const NETWORK_STATES: &[&str] = &["ACTIVE", "INACTIVE", "DELETED"];

/// Regions of a REGIONAL network. The contract types `location.region` as a free string; these
/// are the values its documentation and examples use.
pub(crate) const REGIONS: &[&str] = &["AMER", "APAC", "EMEA"];

/// `ServiceTokenType`, `ServiceTokenState`, `ServiceTokenConnection.type`, `AccessPointSelector.type`.
pub const TOKEN_TYPES: &[&str] = &["VC_TOKEN", "EPL_TOKEN"];
pub const TOKEN_STATES: &[&str] = &["ACTIVE", "INACTIVE", "EXPIRED", "DELETED"];
pub const TOKEN_CONNECTION_TYPES: &[&str] =
    &["EVPL_VC", "EPL_VC", "EVPLAN_VC", "EPLAN_VC", "IPWAN_VC", "IP_VC", "EVPTREE_VC", "EPTREE_VC"];
pub const SELECTOR_TYPES: &[&str] = &["COLO", "VD", "NETWORK"];

/// `ConnectionState`, wider than the SDK: real Fabric also answers PROVISIONED and
/// REPROVISIONING (the Go SDK adds them; Equinix's own examples return PROVISIONED).
pub const CONNECTION_STATES: &[&str] = &[
    "ACTIVE",
    "CANCELLED",
    "DEPROVISIONED",
    "DEPROVISIONING",
    "DRAFT",
    "FAILED",
    "PENDING",
    "PROVISIONED",
    "PROVISIONING",
    "REPROVISIONING",
];

/// `PortState`.
pub const PORT_STATES: &[&str] = &[
    "PENDING",
    "PROVISIONING",
    "REPROVISIONING",
    "PENDING_CROSS_CONNECT",
    "PROVISIONED",
    "ACTIVE",
    "DEPROVISIONING",
    "DEPROVISIONED",
    "INACTIVE",
    "FAILED",
    "ADDED",
    "DELETED",
    "TO_BE_ADDED",
    "TO_BE_DELETED",
];

/// `Presence` (metros).
pub const PRESENCES: &[&str] = &["MY_PORTS"];

/// `VirtualConnectionPriceConnectionType` and `VirtualConnectionPriceAccessPointType`: what the
/// price search prices (in the contract crate: the host builds the plan's price filter from them).
pub use equinix_broker_contract::{PRICED_ACCESS_POINT_TYPES, PRICED_CONNECTION_TYPES};

/// `CloudRouterAccessPointState`.
pub const ROUTER_STATES: &[&str] = &[
    "PROVISIONED",
    "PROVISIONING",
    "DEPROVISIONING",
    "DEPROVISIONED",
    "REPROVISIONING",
    "NOT_PROVISIONED",
    "NOT_DEPROVISIONED",
];

/// `RouterPackageCode`.
pub const ROUTER_PACKAGES: &[&str] = &["LAB", "BASIC", "STANDARD", "ADVANCED", "PREMIUM"];

/// `RouteTableEntryType`.
pub const ROUTE_TYPES: &[&str] = &[
    "IPv4_BGP_ROUTE",
    "IPv4_STATIC_ROUTE",
    "IPv4_DIRECT_ROUTE",
    "IPv6_BGP_ROUTE",
    "IPv6_STATIC_ROUTE",
    "IPv6_DIRECT_ROUTE",
];

/// `ConnectionRouteEntryState`: a route a connection received or advertised.
pub const CONNECTION_ROUTE_STATES: &[&str] = &["ACTIVE", "INACTIVE"];

/// `RouteFiltersBaseType`.
pub const ROUTE_FILTER_TYPES: &[&str] = &["BGP_IPv4_PREFIX_FILTER", "BGP_IPv6_PREFIX_FILTER"];

/// `RouteFilterState`, the same as `RouteAggregationState`.
pub const POLICY_STATES: &[&str] = &[
    "PROVISIONING",
    "REPROVISIONING",
    "DEPROVISIONING",
    "PROVISIONED",
    "DEPROVISIONED",
    "NOT_PROVISIONED",
    "NOT_DEPROVISIONED",
];
