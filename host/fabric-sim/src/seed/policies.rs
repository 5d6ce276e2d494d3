//! The seeded route filters and route aggregations, their rules, and where they are attached:
//! AWS's routes come in through a prefix filter, Azure gets AWS's ranges summarised by an
//! aggregation through an outbound filter still waiting for its BGP session, and two policies
//! are attached nowhere.

use serde_json::{Value, json};

use super::PROJECT_ID;
use super::routing::FCR_CONNECTIONS;

const CREATED: &str = "2026-11-02T09:30:00Z";

/// A seeded route filter.
pub struct SeededFilter {
    pub uuid: &'static str,
    pub name: &'static str,
    pub kind: &'static str,
    /// What happens to a prefix no rule matches.
    pub(crate) not_matched: &'static str,
    /// (prefix, match, action)
    pub rules: &'static [(&'static str, &'static str, &'static str)],
}

pub const ROUTE_FILTERS: &[SeededFilter] = &[
    SeededFilter {
        uuid: "55555555-6666-4777-8888-000000000301",
        name: "aws-inbound-v4",
        kind: "BGP_IPv4_PREFIX_FILTER",
        not_matched: "DENY",
        rules: &[("10.10.0.0/16", "orlonger", "PERMIT"), ("10.11.0.0/16", "orlonger", "PERMIT")],
    },
    SeededFilter {
        uuid: "55555555-6666-4777-8888-000000000302",
        name: "azure-outbound-v4",
        kind: "BGP_IPv4_PREFIX_FILTER",
        not_matched: "DENY",
        rules: &[("10.10.0.0/15", "exact", "PERMIT")],
    },
    SeededFilter {
        uuid: "55555555-6666-4777-8888-000000000303",
        name: "v6-deny-default",
        kind: "BGP_IPv6_PREFIX_FILTER",
        not_matched: "ALLOW",
        rules: &[("::/0", "exact", "DENY")],
    },
];

/// Where filters are attached: (filter index, connection index, direction, status).
pub(crate) const FILTER_ATTACHMENTS: &[(usize, usize, &str, &str)] =
    &[(0, 0, "INBOUND", "ATTACHED"), (1, 1, "OUTBOUND", "PENDING_BGP_CONFIGURATION")];

/// A seeded route aggregation and the prefixes it summarises to.
pub struct SeededAggregation {
    pub uuid: &'static str,
    pub name: &'static str,
    pub(crate) prefixes: &'static [&'static str],
}

pub const ROUTE_AGGREGATIONS: &[SeededAggregation] = &[
    SeededAggregation {
        uuid: "66666666-7777-4888-8999-000000000401",
        name: "aws-summary",
        prefixes: &["10.10.0.0/15"],
    },
    SeededAggregation {
        uuid: "66666666-7777-4888-8999-000000000402",
        name: "lab-summary",
        prefixes: &["172.16.0.0/12"],
    },
];

/// Where aggregations are attached: (aggregation index, connection index, status).
pub(crate) const AGGREGATION_ATTACHMENTS: &[(usize, usize, &str)] = &[(0, 1, "ATTACHED")];

fn changelog() -> Value {
    json!({"createdBy": "sim-user", "createdDateTime": CREATED, "updatedDateTime": CREATED})
}

fn rule_uuid(policy: &str, i: usize) -> String {
    format!("{}{:02}", &policy[..policy.len() - 2], 50 + i)
}

pub(crate) fn route_filters() -> Vec<Value> {
    ROUTE_FILTERS
        .iter()
        .enumerate()
        .map(|(i, SeededFilter { uuid, name, kind, not_matched, rules })| {
            let attached = FILTER_ATTACHMENTS.iter().filter(|a| a.0 == i).count();
            json!({
                "href": format!("/fabric/v4/routeFilters/{uuid}"),
                "uuid": uuid,
                "name": name,
                "type": kind,
                "state": "PROVISIONED",
                "description": format!("{name} (simulated)"),
                "notMatchedRuleAction": not_matched,
                "rulesCount": rules.len(),
                "connectionsCount": attached,
                "project": {"projectId": PROJECT_ID, "href": format!("/resourceManager/v1/projects/{PROJECT_ID}")},
                "changelog": changelog(),
            })
        })
        .collect()
}

/// Each filter's rules, by filter uuid.
pub(crate) fn route_filter_rules() -> Vec<(String, Vec<Value>)> {
    ROUTE_FILTERS
        .iter()
        .map(|SeededFilter { uuid, name, kind, rules, .. }| {
            let list = rules
                .iter()
                .enumerate()
                .map(|(i, (prefix, matching, action))| {
                    let id = rule_uuid(uuid, i);
                    json!({
                        "href": format!("/fabric/v4/routeFilters/{uuid}/routeFilterRules/{id}"),
                        "uuid": id,
                        "name": format!("{name}-{}", i + 1),
                        "type": format!("{kind}_RULE"),
                        "state": "PROVISIONED",
                        "prefix": prefix,
                        "prefixMatch": matching,
                        "action": action,
                        "changelog": changelog(),
                    })
                })
                .collect();
            (uuid.to_string(), list)
        })
        .collect()
}

/// The filters on each connection, by connection uuid.
pub(crate) fn connection_route_filters() -> Vec<(String, Vec<Value>)> {
    FCR_CONNECTIONS
        .iter()
        .enumerate()
        .map(|(c, (connection, ..))| {
            let list = FILTER_ATTACHMENTS
                .iter()
                .filter(|a| a.1 == c)
                .map(|(f, _, direction, status)| {
                    let SeededFilter { uuid, kind, .. } = ROUTE_FILTERS[*f];
                    json!({
                        "href": format!("/fabric/v4/routeFilters/{uuid}"),
                        "uuid": uuid,
                        "type": kind,
                        "direction": direction,
                        "attachmentStatus": status,
                        "changeLog": changelog(),
                    })
                })
                .collect();
            (connection.to_string(), list)
        })
        .collect()
}

pub(crate) fn route_aggregations() -> Vec<Value> {
    ROUTE_AGGREGATIONS
        .iter()
        .enumerate()
        .map(|(i, SeededAggregation { uuid, name, prefixes: rules })| {
            let attached = AGGREGATION_ATTACHMENTS.iter().filter(|a| a.0 == i).count();
            json!({
                "href": format!("/fabric/v4/routeAggregations/{uuid}"),
                "uuid": uuid,
                "name": name,
                "type": "BGP_IPv4_PREFIX_AGGREGATION",
                "state": "PROVISIONED",
                "description": format!("{name} (simulated)"),
                "rulesCount": rules.len(),
                "connectionsCount": attached,
                "project": {"projectId": PROJECT_ID, "href": format!("/resourceManager/v1/projects/{PROJECT_ID}")},
                "changeLog": changelog(),
            })
        })
        .collect()
}

/// Each aggregation's rules, by aggregation uuid.
pub(crate) fn route_aggregation_rules() -> Vec<(String, Vec<Value>)> {
    ROUTE_AGGREGATIONS
        .iter()
        .map(|SeededAggregation { uuid, name, prefixes: rules }| {
            let list = rules
                .iter()
                .enumerate()
                .map(|(i, prefix)| {
                    let id = rule_uuid(uuid, i);
                    json!({
                        "href": format!("/fabric/v4/routeAggregations/{uuid}/routeAggregationRules/{id}"),
                        "uuid": id,
                        "name": format!("{name}-{}", i + 1),
                        "type": "BGP_IPv4_PREFIX_AGGREGATION_RULE",
                        "state": "PROVISIONED",
                        "prefix": prefix,
                        "changeLog": changelog(),
                    })
                })
                .collect();
            (uuid.to_string(), list)
        })
        .collect()
}

/// The aggregations on each connection, by connection uuid.
pub(crate) fn connection_route_aggregations() -> Vec<(String, Vec<Value>)> {
    FCR_CONNECTIONS
        .iter()
        .enumerate()
        .map(|(c, (connection, ..))| {
            let list = AGGREGATION_ATTACHMENTS
                .iter()
                .filter(|a| a.1 == c)
                .map(|(a, _, status)| {
                    let uuid = ROUTE_AGGREGATIONS[*a].uuid;
                    json!({
                        "href": format!("/fabric/v4/routeAggregations/{uuid}"),
                        "uuid": uuid,
                        "type": "BGP_IPv4_PREFIX_AGGREGATION",
                        "attachmentStatus": status,
                        "changeLog": changelog(),
                    })
                })
                .collect();
            (connection.to_string(), list)
        })
        .collect()
}
