//! The routes of Cloud Routers and what runs on them: the routers and their packages, route
//! tables, each connection's routing protocols with their BGP actions, and the routes a
//! connection received and advertised.

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::connectivity::with_estate;
use crate::answer::{Answer, by_uuid, json_body, page, paging, query_map, respond, search};
use crate::errors::{Fail, error_with, fail, json_bytes, unknown_id};
use crate::estate::Estate;
use crate::search as filters;
use crate::state::Sim;

/// The routing protocol API's own 404 for a connection it does not know.
fn unknown_connection() -> Fail {
    fail(404, "EQ-3041120", "The connection ID was not found or was already deleted.", None)
}

fn unknown_router() -> Fail {
    fail(404, "EQ-3045811", "Cloud Router not found", None)
}

pub(super) async fn routers_search(State(sim): State<Sim>, body: Bytes) -> Response {
    match json_body(&body) {
        Ok(body) => respond(with_estate(&sim, |e| search(&e.routers, &body, &filters::ROUTERS, true))),
        Err(f) => f.into_response(),
    }
}

pub(super) async fn router_get(State(sim): State<Sim>, Path(id): Path<String>) -> Response {
    respond(with_estate(&sim, |e| by_uuid(&e.routers, &id, unknown_router)))
}

pub(super) async fn packages(State(sim): State<Sim>, uri: Uri) -> Response {
    let q = query_map(&uri);
    respond(with_estate(&sim, |e| {
        let (offset, limit) = paging(&q)?;
        Ok((StatusCode::OK, page(&e.router_packages, offset, limit)))
    }))
}

pub(super) async fn package_get(State(sim): State<Sim>, Path(code): Path<String>) -> Response {
    respond(with_estate(&sim, |e| {
        // the contract declares 400, not 404, for a code it does not know
        let package = e
            .router_package(&code)
            .ok_or_else(|| unknown_id("EQ-3040043", "Invalid router package code", "routerPackageCode"))?;
        Ok((StatusCode::OK, json_bytes(package)))
    }))
}

pub(super) async fn router_routes(State(sim): State<Sim>, Path(id): Path<String>, body: Bytes) -> Response {
    let body = match json_body(&body) {
        Ok(b) => b,
        Err(f) => return f.into_response(),
    };
    respond(with_estate(&sim, |e| {
        e.router(&id).ok_or_else(unknown_router)?;
        let routes = e.routing.router_routes.get(&id).map(Vec::as_slice).unwrap_or_default();
        search(routes, &body, &filters::ROUTER_ROUTES, false)
    }))
}

/// Which of a connection's route lists.
#[derive(Clone, Copy)]
pub(super) enum RouteList {
    Received,
    Advertised,
}

pub(super) async fn connection_routes(
    State(sim): State<Sim>,
    Path(id): Path<String>,
    body: Bytes,
    which: RouteList,
) -> Response {
    let body = match json_body(&body) {
        Ok(b) => b,
        Err(f) => return f.into_response(),
    };
    respond(with_estate(&sim, |e| {
        known_connection(e, &id)?;
        let lists = match which {
            RouteList::Received => &e.routing.received_routes,
            RouteList::Advertised => &e.routing.advertised_routes,
        };
        let routes = lists.get(&id).map(Vec::as_slice).unwrap_or_default();
        search(routes, &body, &filters::CONNECTION_ROUTES, false)
    }))
}

fn known_connection(e: &Estate, id: &str) -> Result<(), Fail> {
    crate::estate::find_by_uuid(&e.connections, id).map(drop).ok_or_else(unknown_connection)
}

pub(super) async fn routing_protocols(State(sim): State<Sim>, Path(id): Path<String>, uri: Uri) -> Response {
    let q = query_map(&uri);
    respond(with_estate(&sim, |e| {
        known_connection(e, &id)?;
        let (offset, limit) = paging(&q)?;
        let protocols = e.routing.protocols.get(&id).map(Vec::as_slice).unwrap_or_default();
        Ok((StatusCode::OK, page(protocols, offset, limit)))
    }))
}

/// The routing protocol `rp` of connection `id`, or the API's 404 for whichever is unknown.
fn protocol<'e>(e: &'e Estate, id: &str, rp: &str) -> Result<&'e Value, Fail> {
    known_connection(e, id)?;
    let protocols = e.routing.protocols.get(id).map(Vec::as_slice).unwrap_or_default();
    crate::estate::find_by_uuid(protocols, rp).ok_or_else(|| {
        let info = json!([{"property": "routingProtocolId", "reason": "The routing protocol was not found on this connection"}]);
        Fail(404, error_with("EQ-3041121", "Routing protocol not found", Some(info)))
    })
}

pub(super) async fn routing_protocol_get(State(sim): State<Sim>, Path((id, rp)): Path<(String, String)>) -> Response {
    respond(with_estate(&sim, |e| Ok((StatusCode::OK, json_bytes(protocol(e, &id, &rp)?)))))
}

pub(super) async fn bgp_actions(State(sim): State<Sim>, Path((id, rp)): Path<(String, String)>, uri: Uri) -> Response {
    let q = query_map(&uri);
    respond(with_estate(&sim, |e| -> Answer {
        protocol(e, &id, &rp)?;
        let (offset, limit) = paging(&q)?;
        let actions = e.routing.bgp_actions.get(&rp).map(Vec::as_slice).unwrap_or_default();
        Ok((StatusCode::OK, page(actions, offset, limit)))
    }))
}
