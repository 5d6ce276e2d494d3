//! Cloud events: the search (its filter required, an `and` of simple expressions) and a get by
//! id, newest first.

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};

use super::connectivity::with_estate;
use crate::answer::{json_body, respond, search};
use crate::errors::fail;
use crate::search as filters;
use crate::state::Sim;

pub(super) async fn events_search(State(sim): State<Sim>, body: Bytes) -> Response {
    match json_body(&body) {
        Ok(body) => respond(with_estate(&sim, |e| search(&e.events, &body, &filters::CLOUD_EVENTS, true))),
        Err(f) => f.into_response(),
    }
}

pub(super) async fn event_get(State(sim): State<Sim>, Path(id): Path<String>) -> Response {
    respond(with_estate(&sim, |e| {
        let found = e.events.iter().find(|ev| ev["id"] == id.as_str());
        match found {
            Some(ev) => Ok((axum::http::StatusCode::OK, crate::errors::json_bytes(ev))),
            None => Err(fail(404, "EQ-3045811", "Cloud event not found", Some("cloudEventId"))),
        }
    }))
}
