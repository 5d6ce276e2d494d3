//! What each search endpoint's contract (Fabric v4 4.31) lets a filter say: its properties, its
//! operators, how `and` and `or` combine, and its error code.

use super::endpoint::{Endpoint, Shape};

/// `PortV4SearchRequest.filter` (`PortExpression`, `PortSearchFieldName`).
pub(crate) const PORTS: Endpoint = Endpoint {
    properties: &[
        "/device/name",
        "/physicalPorts/tether/crossConnectId",
        "/physicalPorts/interface/name",
        "/state",
        "/project/projectId",
        "/uuid",
        "/name",
        "/account/orgId",
        "/account/accountNumber",
        "/location/metroCode",
        "/operation/maintenanceStatus",
        "/operation/lockEnabled",
    ],
    operators: &["=", "!=", ">", ">=", "<", "<=", "LIKE", "ILIKE", "IN", "NOT IN", "BETWEEN"],
    shape: Shape::Nested,
    required: None,
    error_code: "EQ-3046116",
    error_message: "JSON syntax error.",
};

/// `ServiceProfileSearchRequest.filter`: `=` only, flat `and`.
pub(crate) const PROFILES: Endpoint = Endpoint {
    properties: &[
        "/name",
        "/uuid",
        "/state",
        "/metros/code",
        "/visibility",
        "/type",
        "/project/projectId",
        "/ports/uuid",
    ],
    operators: &["="],
    shape: Shape::FlatAnd,
    required: None,
    error_code: "EQ-3001202",
    error_message: "Unsupported search property",
};

/// `SearchRequest.filter` of connections (`Expression`, `SearchFieldName`).
pub(crate) const CONNECTIONS: Endpoint = Endpoint {
    properties: &[
        "/isRemote",
        "/name",
        "/uuid",
        "/type",
        "/geoScope",
        "/account/orgId",
        "/aSide/accessPoint/account/accountName",
        "/aSide/accessPoint/account/accountNumber",
        "/aSide/accessPoint/router/uuid",
        "/aSide/accessPoint/linkProtocol/vlanTagMin",
        "/aSide/accessPoint/linkProtocol/vlanTagMax",
        "/aSide/accessPoint/location/metroCode",
        "/aSide/accessPoint/location/metroName",
        "/aSide/accessPoint/name",
        "/aSide/accessPoint/port/uuid",
        "/aSide/accessPoint/port/name",
        "/aSide/accessPoint/type",
        "/aSide/accessPoint/virtualDevice/name",
        "/aSide/accessPoint/virtualDevice/uuid",
        "/aSide/serviceToken/uuid",
        "/bandwidth",
        "/change/status",
        "/changeLog/createdBy",
        "/changeLog/createdDateTime",
        "/changeLog/deletedBy",
        "/changeLog/deletedDateTime",
        "/changeLog/lastUpdatedBy",
        "/operation/equinixStatus",
        "/operation/providerStatus",
        "/operation/maintenanceStatus",
        "/operation/lockEnabled",
        "/project/projectId",
        "/redundancy/group",
        "/redundancy/priority",
        "/zSide/accessPoint/account/accountName",
        "/zSide/accessPoint/authenticationKey",
        "/zSide/accessPoint/linkProtocol/vlanTagMin",
        "/zSide/accessPoint/linkProtocol/vlanTagMax",
        "/zSide/accessPoint/location/metroCode",
        "/zSide/accessPoint/location/metroName",
        "/zSide/accessPoint/sellerRegion",
        "/zSide/accessPoint/name",
        "/zSide/accessPoint/port/uuid",
        "/zSide/accessPoint/network/uuid",
        "/zSide/accessPoint/port/name",
        "/zSide/accessPoint/profile/uuid",
        "/zSide/accessPoint/type",
        "/zSide/accessPoint/role",
        "/zSide/accessPoint/virtualDevice/name",
        "/zSide/accessPoint/virtualDevice/uuid",
        "/zSide/serviceToken/uuid",
        "/zSide/internetAccess/uuid",
        "/state",
    ],
    operators: &["=", "!=", ">", ">=", "<", "<=", "LIKE", "ILKE", "IS NOT NULL", "IS NULL", "IN", "BETWEEN"],
    shape: Shape::Nested,
    required: None,
    error_code: "EQ-3142501",
    error_message: "Invalid input",
};

/// `NetworkSearchRequest.filter` (`NetworkFilter`, `NetworkSearchFieldName`).
pub(crate) const NETWORKS: Endpoint = Endpoint {
    properties: &[
        "/name",
        "/uuid",
        "/scope",
        "/type",
        "/state",
        "/operation/equinixStatus",
        "/location/region",
        "/location/metroCode",
        "/connectionsCount",
        "/project/projectId",
        "/account/globalCustId",
        "/account/orgId",
        "/changeLog/createdDateTime",
        "/changeLog/updatedDateTime",
        "/changeLog/deletedDateTime",
        "/*",
    ],
    operators: &[
        "=",
        "!=",
        ">",
        ">=",
        "<",
        "<=",
        "BETWEEN",
        "NOT BETWEEN",
        "LIKE",
        "NOT LIKE",
        "ILIKE",
        "NOT ILIKE",
        "IN",
        "NOT IN",
    ],
    shape: Shape::Nested,
    required: None,
    error_code: "EQ-3142501",
    error_message: "Invalid input",
};

/// `ServiceTokenSearchRequest.filter` (`ServiceTokenSearchExpression`).
pub(crate) const SERVICE_TOKENS: Endpoint = Endpoint {
    properties: &[
        "/uuid",
        "/state",
        "/name",
        "/project/projectId",
        "/type",
        "/expirationDateTime",
        "/changeLog/createdDateTime",
        "/changeLog/updatedDateTime",
        "/connection/aSide/accessPointSelectors/port/uuid",
        "/connection/zSide/accessPointSelectors/port/uuid",
    ],
    operators: &["=", "!=", "LIKE", "ILIKE", "<", ">", "<=", ">=", "IN", "NOT IN", "BETWEEN", "NOT BETWEEN"],
    shape: Shape::Nested,
    required: None,
    error_code: "EQ-3142501",
    error_message: "Invalid input",
};

/// The operators of the Cloud Router searches (their `operator` is a free string; these are the
/// ones their contract's descriptions list).
const ROUTER_OPERATORS: &[&str] =
    &["=", "!=", ">", ">=", "<", "<=", "BETWEEN", "NOT BETWEEN", "LIKE", "NOT LIKE", "IN", "NOT IN", "ILIKE"];

/// `CloudRouterSearchRequest.filter` (`CloudRouterFilters`): the project is mandatory.
pub(crate) const ROUTERS: Endpoint = Endpoint {
    properties: &[
        "/project/projectId",
        "/name",
        "/uuid",
        "/state",
        "/location/metroCode",
        "/location/metroName",
        "/package/code",
        "/type",
        "/connectionsCount",
        "/changeLog/createdDateTime",
        "/changeLog/updatedDateTime",
        "/changeLog/deletedDateTime",
        "/*",
    ],
    operators: ROUTER_OPERATORS,
    shape: Shape::AndOfOr,
    required: Some("/project/projectId"),
    error_code: "EQ-3040055",
    error_message: "Invalid filter",
};

/// The route searches' operators: their case-insensitive match is `~*`.
const ROUTE_OPERATORS: &[&str] =
    &["=", "!=", ">", ">=", "<", "<=", "BETWEEN", "NOT BETWEEN", "LIKE", "NOT LIKE", "IN", "NOT IN", "~*"];

/// `RouteTableEntrySearchRequest.filter` (`RouteTableEntryFilters`): a router's route table.
pub(crate) const ROUTER_ROUTES: Endpoint = Endpoint {
    properties: &["/type", "/prefix", "/nextHop", "/state", "/MED", "/*"],
    operators: ROUTE_OPERATORS,
    shape: Shape::AndOfOr,
    required: None,
    error_code: "EQ-3043015",
    error_message: "Invalid filter",
};

/// `ConnectionRouteSearchRequest.filter` (`ConnectionRouteEntryFilters`): what a connection
/// received or advertised (no MED to filter on).
pub(crate) const CONNECTION_ROUTES: Endpoint = Endpoint {
    properties: &["/type", "/state", "/prefix", "/nextHop", "/*"],
    operators: ROUTE_OPERATORS,
    shape: Shape::AndOfOr,
    required: None,
    error_code: "EQ-3043015",
    error_message: "Invalid filter",
};

/// `SearchSimpleExpressionOperator`: the route filter and aggregation searches' operators.
const POLICY_OPERATORS: &[&str] = &["=", "!=", "IN", "NOT IN", "LIKE", "ILIKE", "BETWEEN", ">", ">=", "<", "<="];

/// The properties a route filter or aggregation search names (`SearchFilter`'s own examples).
const POLICY_PROPERTIES: &[&str] = &[
    "/type",
    "/name",
    "/uuid",
    "/state",
    "/project/projectId",
    "/connectionsCount",
    "/changeLog/createdDateTime",
    "/changeLog/updatedDateTime",
    "/*",
];

/// `SearchFilter`, the filter of both `RouteFiltersSearchRequest` and
/// `RouteAggregationsSearchRequest`: `and` or `or` at the top.
pub(crate) const ROUTE_POLICIES: Endpoint = Endpoint {
    properties: POLICY_PROPERTIES,
    operators: POLICY_OPERATORS,
    shape: Shape::StrictNested,
    required: None,
    error_code: "EQ-3044305",
    error_message: "Invalid input",
};

/// `CloudEventSearchRequest.filter` (`CloudEventFilters`): an `and` of simple expressions, the
/// properties and operators its description lists.
pub(crate) const CLOUD_EVENTS: Endpoint = Endpoint {
    properties: &[
        "/id",
        "/subject",
        "/type",
        "/time",
        "/equinixproject",
        "/equinixorganization",
        "/equinixalert",
        "/severitytext",
        "/authid",
        "/authtype",
    ],
    operators: &["=", "!=", ">", ">=", "<", "<=", "BETWEEN", "IN", "LIKE", "ILIKE", "IS NULL", "IS NOT NULL"],
    shape: Shape::AndOnly,
    required: None,
    error_code: "EQ-3043015",
    error_message: "Invalid filter",
};
