//! The routes of route filters and route aggregations: searches, gets, their rules, and those
//! attached to a connection.

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use std::collections::HashMap;

use serde_json::Value;

use super::connectivity::with_estate;
use crate::answer::{by_uuid, json_body, page, paging, query_map, respond, search};
use crate::errors::{Fail, fail};
use crate::estate::{Estate, find_by_uuid};
use crate::search as filters;
use crate::state::Sim;

/// Route filters or route aggregations.
#[derive(Clone, Copy)]
pub(super) enum Policy {
    Filters,
    Aggregations,
}

impl Policy {
    fn items(self, e: &Estate) -> &[Value] {
        match self {
            Policy::Filters => &e.route_filters,
            Policy::Aggregations => &e.route_aggregations,
        }
    }

    fn rules(self, e: &Estate) -> &HashMap<String, Vec<Value>> {
        match self {
            Policy::Filters => &e.policies.filter_rules,
            Policy::Aggregations => &e.policies.aggregation_rules,
        }
    }

    fn attached(self, e: &Estate) -> &HashMap<String, Vec<Value>> {
        match self {
            Policy::Filters => &e.policies.connection_filters,
            Policy::Aggregations => &e.policies.connection_aggregations,
        }
    }

    fn unknown(self) -> Fail {
        match self {
            Policy::Filters => fail(404, "EQ-3044304", "Route filter not found", Some("routeFilterId")),
            Policy::Aggregations => fail(404, "EQ-3044404", "Route aggregation not found", Some("routeAggregationId")),
        }
    }
}

pub(super) async fn policy_search(State(sim): State<Sim>, body: Bytes, policy: Policy) -> Response {
    match json_body(&body) {
        Ok(body) => respond(with_estate(&sim, |e| search(policy.items(e), &body, &filters::ROUTE_POLICIES, false))),
        Err(f) => f.into_response(),
    }
}

pub(super) async fn policy_get(State(sim): State<Sim>, Path(id): Path<String>, policy: Policy) -> Response {
    respond(with_estate(&sim, |e| by_uuid(policy.items(e), &id, || policy.unknown())))
}

pub(super) async fn policy_rules(State(sim): State<Sim>, Path(id): Path<String>, uri: Uri, policy: Policy) -> Response {
    let q = query_map(&uri);
    respond(with_estate(&sim, |e| {
        find_by_uuid(policy.items(e), &id).ok_or_else(|| policy.unknown())?;
        let (offset, limit) = paging(&q)?;
        let rules = policy.rules(e).get(&id).map(Vec::as_slice).unwrap_or_default();
        Ok((StatusCode::OK, page(rules, offset, limit)))
    }))
}

pub(super) async fn connection_policies(State(sim): State<Sim>, Path(id): Path<String>, policy: Policy) -> Response {
    respond(with_estate(&sim, |e| {
        find_by_uuid(&e.connections, &id)
            .ok_or_else(|| fail(404, "EQ-3041120", "The connection ID was not found or was already deleted.", None))?;
        let attached = policy.attached(e).get(&id).map(Vec::as_slice).unwrap_or_default();
        Ok((StatusCode::OK, page(attached, 0, attached.len().max(1))))
    }))
}
