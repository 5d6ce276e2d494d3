//! `GET /.well-known/oauth-protected-resource[/mcp]` (RFC 9728): which authorization server
//! signs this server's tokens and which scopes it knows. Public by design, so it is answered
//! without a token (a client reads it to learn how to get one), behind the same `Host` check as
//! the health endpoints, and readable by a browser-based client from any origin.

use std::sync::Arc;

use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

use crate::oauth::ResourceServer;

pub(crate) fn routes(oauth: Arc<ResourceServer>) -> axum::Router {
    let mut router = axum::Router::new();
    for path in oauth.metadata_paths() {
        let oauth = oauth.clone();
        router = router.route(&path, get(move || async move { document(&oauth) }));
    }
    router
}

fn document(oauth: &ResourceServer) -> Response {
    let mut response = axum::Json(oauth.metadata()).into_response();
    let headers = response.headers_mut();
    headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, HeaderValue::from_static("*"));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("max-age=300"));
    response
}
