//! Fabric's error answers (its error arrays, each API's own wording) and the one JSON response
//! writer every route uses.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use serde_json::{Value, json};

/// A Fabric-shaped error array.
pub(crate) fn error_array(code: &str, message: &str, property: Option<&str>) -> Value {
    error_with(code, message, property.map(|p| json!([{"property": p}])))
}

/// Fabric's error array with its `additionalInfo` as given.
pub(crate) fn error_with(code: &str, message: &str, additional_info: Option<Value>) -> Value {
    let mut e = json!({
        "errorCode": code,
        "errorMessage": message,
        "correlationId": uuid::Uuid::new_v4().to_string(),
    });
    if let Some(info) = additional_info {
        e["additionalInfo"] = info;
    }
    json!([e])
}

/// A Fabric error answer (status and error array), small enough to pass around in a `Result`.
pub(crate) struct Fail(pub u16, pub Value);

impl IntoResponse for Fail {
    fn into_response(self) -> Response {
        json_response(StatusCode::from_u16(self.0).unwrap_or(StatusCode::BAD_REQUEST), self.1)
    }
}

pub(crate) fn fail(status: u16, code: &str, message: &str, property: Option<&str>) -> Fail {
    Fail(status, error_array(code, message, property))
}

/// A metros error as that API's contract words it (`MetroError`: its own codes and messages).
pub(crate) fn metro_fail(message: &str, property: Option<&str>, reason: &str) -> Fail {
    let info = match property {
        Some(p) => json!([{"property": p, "reason": reason}]),
        None => json!([{"reason": reason}]),
    };
    Fail(400, error_with("EQ-3036013", message, Some(info)))
}

pub(crate) fn not_found(what: &str) -> Fail {
    fail(404, "EQ-3045811", &format!("{what} not found"), None)
}

/// An unknown id where the contract declares 400 and no 404 for it (`GET` of a port, a service
/// profile or a service token, a port's link protocols), with the id's parameter named.
pub(crate) fn unknown_id(code: &str, message: &str, parameter: &str) -> Fail {
    let info = json!([{"property": parameter, "reason": "The uuid requested could not be found in system"}]);
    Fail(400, error_with(code, message, Some(info)))
}

pub(crate) fn json_response(status: StatusCode, body: Value) -> Response {
    bytes_response(status, json_bytes(&body))
}

pub(crate) fn bytes_response(status: StatusCode, body: Vec<u8>) -> Response {
    (status, [("content-type", "application/json")], body).into_response()
}

pub(crate) fn json_bytes(value: &impl Serialize) -> Vec<u8> {
    serde_json::to_vec(value).expect("simulator answers are plain JSON")
}
