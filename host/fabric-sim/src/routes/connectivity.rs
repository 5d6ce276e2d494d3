//! The routes of connectivity: metros, ports and their VLANs, service
//! profiles, connections, networks, service tokens, prices, and the three creates.

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use crate::answer::{Answer, by_uuid, is_dry_run, json_body, page, paging, query_map, respond, search};
use crate::errors::{Fail, fail, json_bytes, metro_fail, not_found, unknown_id};
use equinix_broker_contract::ChangeType;

use crate::estate::{Estate, Refused, collection};
use crate::seed::MY_PORT_METROS;
use crate::state::{Inner, Sim};
use crate::{prices, search as filters};

/// Runs `f` on the estate under the simulator's lock.
pub(super) fn with_estate<T>(sim: &Sim, f: impl FnOnce(&mut Estate) -> T) -> T {
    f(&mut sim.lock().estate)
}

pub(super) async fn metros(State(sim): State<Sim>, uri: Uri) -> Response {
    let q = query_map(&uri);
    respond(with_estate(&sim, |estate| {
        let (offset, limit) = paging(&q)?;
        let metros: Vec<&Value> = match q.get("presence").map(String::as_str) {
            None => estate.metros.iter().collect(),
            Some("MY_PORTS") => estate
                .metros
                .iter()
                .filter(|m| m["code"].as_str().is_some_and(|c| MY_PORT_METROS.contains(&c)))
                .collect(),
            Some(_) => {
                return Err(metro_fail(
                    "Invalid Query Parameter",
                    Some("presence"),
                    "Allowed value for presence is MY_PORTS",
                ));
            }
        };
        Ok((StatusCode::OK, page(&metros, offset, limit)))
    }))
}

pub(super) async fn metro(State(sim): State<Sim>, Path(code): Path<String>) -> Response {
    respond(with_estate(&sim, |estate| {
        estate.metros.iter().find(|m| m["code"] == code.as_str()).map(|m| (StatusCode::OK, json_bytes(m))).ok_or_else(
            || metro_fail("Invalid Path Parameter", Some("pathparameter-metroCode"), "Provide valid metro code"),
        )
    }))
}

pub(super) async fn link_protocols(State(sim): State<Sim>, Path(id): Path<String>, uri: Uri) -> Response {
    let q = query_map(&uri);
    respond(with_estate(&sim, |estate| {
        if estate.port(&id).is_none() {
            return Err(unknown_id("EQ-3035202", "Unable to fetch port details", "portUuid"));
        }
        let (offset, limit) = paging(&q)?;
        Ok((StatusCode::OK, page(&estate.link_protocols(&id), offset, limit)))
    }))
}

/// The searchable collections.
#[derive(Clone, Copy)]
pub(super) enum Searched {
    Ports,
    Profiles,
    /// What creates of a change type made.
    Made(ChangeType),
}

pub(super) async fn searched(State(sim): State<Sim>, body: Bytes, what: Searched) -> Response {
    let body = match json_body(&body) {
        Ok(b) => b,
        Err(f) => return f.into_response(),
    };
    respond(with_estate(&sim, |e| match what {
        // the port search requires a filter (its contract's own rule)
        Searched::Ports => search(&e.ports, &body, &filters::PORTS, true),
        Searched::Profiles => search(&e.profiles, &body, &filters::PROFILES, false),
        Searched::Made(ChangeType::ConnectionCreate) => search(&e.connections, &body, &filters::CONNECTIONS, false),
        Searched::Made(ChangeType::NetworkCreate) => search(&e.networks, &body, &filters::NETWORKS, false),
        Searched::Made(ChangeType::ServiceTokenCreate) => {
            search(&e.service_tokens, &body, &filters::SERVICE_TOKENS, false)
        }
    }))
}

/// The collections read by uuid.
#[derive(Clone, Copy)]
pub(super) enum Got {
    Port,
    Profile,
    /// One of what creates of a change type made.
    Made(ChangeType),
}

pub(super) async fn got(State(sim): State<Sim>, Path(id): Path<String>, what: Got) -> Response {
    respond(with_estate(&sim, |e| match what {
        // the contract declares 404 for connections and networks, 400 for the other three
        Got::Port => by_uuid(&e.ports, &id, || unknown_id("EQ-3035202", "Unable to fetch port details", "portId")),
        Got::Profile => {
            by_uuid(&e.profiles, &id, || unknown_id("EQ-3045811", "service profile not found", "serviceProfileId"))
        }
        Got::Made(ChangeType::ConnectionCreate) => by_uuid(&e.connections, &id, || not_found("connection")),
        Got::Made(ChangeType::NetworkCreate) => by_uuid(&e.networks, &id, || not_found("network")),
        // its 400 example for an unknown token, word for word
        Got::Made(ChangeType::ServiceTokenCreate) => {
            by_uuid(&e.service_tokens, &id, || unknown_id("EQ-3034016", "Token not found", "tokenUuid"))
        }
    }))
}

/// `GET /serviceProfiles/{id}/metros` (`ServiceMetros`): where a profile is offered, with each
/// metro's name, its IBXs, the largest connection and the seller regions there.
pub(super) async fn profile_metros(State(sim): State<Sim>, Path(id): Path<String>, uri: Uri) -> Response {
    let q = query_map(&uri);
    respond(with_estate(&sim, |e| {
        let profile = crate::estate::find_by_uuid(&e.profiles, &id)
            .ok_or_else(|| unknown_id("EQ-3045811", "service profile not found", "serviceProfileId"))?;
        let (offset, limit) = paging(&q)?;
        let max = profile["accessPointTypeConfigs"][0]["supportedBandwidths"]
            .as_array()
            .and_then(|b| b.iter().filter_map(Value::as_u64).max())
            .unwrap_or(0);
        let metros: Vec<Value> = profile["metros"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default()
            .iter()
            .map(|m| {
                let code = m["code"].as_str().unwrap_or_default();
                let name = e.metros.iter().find(|x| x["code"] == code).map_or(json!(code), |x| x["name"].clone());
                let mut metro = json!({"code": code, "name": name, "displayName": name, "vcBandwidthMax": max,
                                       "ibxs": [format!("{code}1"), format!("{code}2")], "inTrail": false});
                if let Some(regions) = m.get("sellerRegions") {
                    metro["sellerRegions"] = regions.clone();
                }
                metro
            })
            .collect();
        Ok((StatusCode::OK, page(&metros, offset, limit)))
    }))
}

/// `GET /networks/{id}/connections` (`NetworkConnections`): the whole connections with a side on
/// the network; the contract declares no paging here.
pub(super) async fn network_connections(State(sim): State<Sim>, Path(id): Path<String>) -> Response {
    respond(with_estate(&sim, |e| {
        crate::estate::find_by_uuid(&e.networks, &id).ok_or_else(|| not_found("network"))?;
        let on_it: Vec<&Value> = e
            .connections
            .iter()
            .filter(|c| ["aSide", "zSide"].iter().any(|s| c[*s]["accessPoint"]["network"]["uuid"] == id.as_str()))
            .collect();
        let n = on_it.len();
        Ok((StatusCode::OK, page(&on_it, 0, n.max(1))))
    }))
}

pub(super) async fn prices_search(body: Bytes) -> Response {
    let answer: Answer = json_body(&body).and_then(|body| match prices::search(&body) {
        Ok(rows) => {
            let n = rows.len();
            Ok((StatusCode::OK, page(&rows, 0, n.max(1))))
        }
        Err(e) => Err(Fail(
            400,
            json!([{"errorCode": "EQ-3038010", "errorMessage": "Validation failure",
                    "additionalInfo": [{"property": "/filter", "reason": e}]}]),
        )),
    });
    respond(answer)
}

/// A create or its dry run: validated as Fabric would, counted, echoed or persisted.
pub(super) async fn create(State(sim): State<Sim>, uri: Uri, body: Bytes, change_type: ChangeType) -> Response {
    let body = match json_body(&body) {
        Ok(b) => b,
        Err(f) => return f.into_response(),
    };
    let dry_run = is_dry_run(&uri);
    let mut inner = sim.lock();
    let Inner { estate, stats, .. } = &mut *inner;
    if let Err(Refused(status, errors)) = estate.validate(change_type, &body, dry_run) {
        return Fail(status, errors).into_response();
    }
    let counter = if dry_run { &mut stats.dry_runs } else { &mut stats.creates };
    *counter.entry(collection(change_type).to_string()).or_default() += 1;
    if dry_run {
        // networks file their dry-run answer under 201 in the spec; the others under 200
        let status = match change_type {
            ChangeType::NetworkCreate => StatusCode::CREATED,
            ChangeType::ConnectionCreate | ChangeType::ServiceTokenCreate => StatusCode::OK,
        };
        respond(Ok((status, json_bytes(&estate.echo(&body)))))
    } else {
        respond(Ok((StatusCode::CREATED, json_bytes(&estate.persist(change_type, &body)))))
    }
}

pub(super) async fn not_allowed() -> Response {
    fail(405, "EQ-3142569", "Method not supported", None).into_response()
}

/// A path Fabric does not have (or a method it never takes there).
pub(super) async fn unknown(method: Method, uri: Uri) -> Response {
    if method != Method::GET && method != Method::POST {
        return not_allowed().await;
    }
    fail(404, "EQ-3045811", "Resource not found", Some(uri.path())).into_response()
}
