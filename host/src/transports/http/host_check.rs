//! The `Host` check of the endpoints rmcp's own DNS-rebinding guard does not cover: `/healthz`,
//! `/readyz` and the metrics listener. A page an operator's browser loads from a rebinding name
//! sends that name as `Host`, so only the loopback names and the operator's `--allowed-host`
//! values pass, and IP literals: a browser sends one only for a page it loaded from that
//! address, which is no rebinding (and is what a load balancer's probe usually sends).

use std::net::IpAddr;
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

/// Whether `host` (a `Host` header's value) names this server: one of `names` (each a bare name,
/// or `name:port` to pin the port too), compared without case, or an IP literal.
pub(crate) fn allowed(host: &str, names: &[String]) -> bool {
    let host = host.trim().to_ascii_lowercase();
    let bare = match host.strip_prefix('[') {
        // [v6]:port or [v6]
        Some(rest) => match rest.split_once(']') {
            Some((v6, port))
                if port.is_empty() || port[1..].bytes().all(|b| b.is_ascii_digit()) && port.starts_with(':') =>
            {
                return v6.parse::<std::net::Ipv6Addr>().is_ok();
            }
            _ => return false,
        },
        None => match host.rsplit_once(':') {
            Some((name, port)) if digits(port) => name.to_string(),
            Some(_) => return false,
            None => host.clone(),
        },
    };
    if bare.parse::<IpAddr>().is_ok() {
        return true;
    }
    names.iter().map(|n| n.to_ascii_lowercase()).any(|n| n == host || n == bare)
}

fn digits(port: &str) -> bool {
    !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit())
}

/// Middleware: 421 for a request whose one `Host` header does not name this server, 400 for
/// several. A request without `Host` passes: a browser always sends one, so it is no rebinding
/// page (an HTTP/1.0 health probe, HAProxy's default, sends none).
pub(crate) async fn require(State(names): State<Arc<Vec<String>>>, request: Request, next: Next) -> Response {
    let mut hosts = request.headers().get_all(header::HOST).iter();
    let refusal = match (hosts.next().map(|h| h.to_str()), hosts.next()) {
        (Some(Ok(host)), None) if allowed(host, &names) => return next.run(request).await,
        (Some(Ok(_)), None) => (
            StatusCode::MISDIRECTED_REQUEST,
            "this Host is not one of the server's names (loopback names, an IP address, or --allowed-host)\n",
        ),
        (None, _) => return next.run(request).await,
        _ => (StatusCode::BAD_REQUEST, "a request must carry exactly one readable Host header\n"),
    };
    tracing::warn!(path = %request.uri().path(), "refused a request: {}", refusal.1.trim_end());
    refusal.into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_servers_names_and_ip_literals_pass() {
        let names = vec!["localhost".to_string(), "mcp.example.internal".into(), "lb.example:8443".into()];
        for ok in [
            "localhost",
            "LOCALHOST:9464",
            "mcp.example.internal",
            "mcp.example.internal:80",
            "lb.example:8443",
            "127.0.0.1:9464",
            "10.0.0.5",
            "[::1]:9464",
            "[2001:db8::1]",
        ] {
            assert!(allowed(ok, &names), "{ok}");
        }
        for bad in [
            "evil.example",
            "evil.example:9464",
            "mcp.example.internal.evil.example",
            "lb.example:9999",
            "127.0.0.1:x",
            "[::1",
            "[nothex]:1",
            "",
        ] {
            assert!(!allowed(bad, &names), "{bad}");
        }
    }
}
