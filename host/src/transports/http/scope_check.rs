//! The HTTP answer to a tool call beyond the token's scopes: 403 with
//! `WWW-Authenticate: Bearer error="insufficient_scope"` naming the scopes to ask for (MCP
//! authorization, "scope challenge"), before the call reaches MCP. The MCP layer checks again,
//! and the capabilities a third time.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use crate::oauth::{Access, Scope};

/// The grant each tool needs, as the tool registry says.
pub(crate) type ToolScopes = std::sync::Arc<dyn Fn(&str) -> Scope + Send + Sync>;

/// The refusal for a POSTed message (or any message of a batch) calling a tool `access` does
/// not allow; `None` when every call in it is allowed, or it calls none.
pub(crate) fn refuse(access: &Access, body: &[u8], scope_of: &dyn Fn(&str) -> Scope) -> Option<Response> {
    let oauth = access.oauth.as_ref()?;
    if access.scopes.is_all() {
        return None;
    }
    let message: Value = serde_json::from_slice(body).ok()?;
    let messages = match &message {
        Value::Array(batch) => batch.iter().collect(),
        one => vec![one],
    };
    for message in messages {
        if message.get("method").and_then(Value::as_str) != Some("tools/call") {
            continue;
        }
        let tool = message.pointer("/params/name").and_then(Value::as_str).unwrap_or_default();
        let needed = scope_of(tool);
        if access.scopes.allows(needed) {
            continue;
        }
        let name = oauth.scope_names().requested(needed);
        // the tool name is the client's text: only the scope it lacked is logged
        tracing::warn!(scope = %name, "refused a tool call beyond the token's scopes");
        crate::metrics::metrics().auth_refusal("insufficient_scope");
        let body = json!({"jsonrpc": "2.0", "id": message.get("id").cloned().unwrap_or(Value::Null), "error": {
            "code": -32600,
            "message": format!("the access token does not grant the scope {name}, which this tool needs; sign in again asking for it"),
            "data": {"kind": "insufficient_scope", "scope": name},
        }});
        let mut response = (StatusCode::FORBIDDEN, axum::Json(body)).into_response();
        if let Ok(value) = HeaderValue::from_str(&oauth.insufficient_scope(access.scopes, needed)) {
            response.headers_mut().insert(header::WWW_AUTHENTICATE, value);
        }
        return Some(response);
    }
    None
}
