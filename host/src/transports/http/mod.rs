//! MCP over streamable HTTP at `/mcp`, in session mode so clients on the initialize lifecycle
//! can still be asked to confirm; 2026-07-28 requests are served statelessly by rmcp either way.
//!
//! Exposure rules: without `--auth-token-file` the server listens only on 127.0.0.1 or ::1 and
//! every client is the one local principal; any other address (another 127.x address included,
//! which is what lets a test exercise the rule) needs bearer tokens and explicit
//! `--allowed-host` names. rmcp's Host-header guard against DNS rebinding stays on in both.

pub(crate) mod auth;
pub(crate) mod connections;
pub(crate) mod health;
pub(crate) mod host_check;
pub(crate) mod listener;
pub(crate) mod resource_metadata;
pub(crate) mod scope_check;
pub(crate) mod sessions;
pub(crate) mod settings;
pub(crate) mod tls;

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, bail};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

use crate::mcp::McpServer;
use crate::oauth::ResourceServer;
pub(crate) use auth::{Authenticator, TokenFile};
pub(crate) use listener::ConnectionLimits;
pub(crate) use sessions::SessionLimits;

/// The names rmcp's DNS-rebinding guard accepts by default.
const LOOPBACK_HOSTS: [&str; 3] = ["localhost", "127.0.0.1", "::1"];

/// How long after the drain the last responses get to reach their clients before the sessions
/// and connections are closed.
const FLUSH: Duration = Duration::from_millis(300);

pub(crate) struct HttpOptions {
    pub listen: SocketAddr,
    pub auth: Option<Arc<TokenFile>>,
    /// Validate the issuer's JWT access tokens (`--oauth-issuer`).
    pub oauth: Option<Arc<ResourceServer>>,
    /// Serve HTTPS with this certificate and key.
    pub tls: Option<Arc<tls::TlsFiles>>,
    /// Extra `Host` names (or `host:port`) accepted besides the loopback names.
    pub(crate) allowed_hosts: Vec<String>,
    /// Browser origins accepted (every other `Origin` is refused).
    pub(crate) allowed_origins: Vec<String>,
    pub sessions: SessionLimits,
    /// A session with no traffic for this long is closed.
    pub(crate) session_idle_timeout: Duration,
    pub connections: ConnectionLimits,
    pub(crate) shutdown_grace: Duration,
    /// How long readiness fails before new calls are refused (see [`crate::shutdown`]).
    pub(crate) shutdown_drain: Duration,
}

/// The drain a server gets unless `--shutdown-drain-ms` says: long enough for a load balancer
/// that probes every 2 s and marks a server down after three failures, with a margin; none on
/// loopback, where no load balancer stands in front.
pub(crate) fn default_drain(listen: IpAddr) -> Duration {
    if listen.is_loopback() { Duration::ZERO } else { Duration::from_secs(10) }
}

/// The `Host` names accepted: the loopback names and `allowed` (`--allowed-host`).
pub(crate) fn accepted_hosts(allowed: &[String]) -> Vec<String> {
    LOOPBACK_HOSTS.iter().map(|h| h.to_string()).chain(allowed.iter().cloned()).collect()
}

/// Whether an address may be served without authentication.
pub(crate) fn is_default_loopback(ip: IpAddr) -> bool {
    ip == IpAddr::V4(Ipv4Addr::LOCALHOST) || ip == IpAddr::V6(Ipv6Addr::LOCALHOST)
}

impl HttpOptions {
    /// Refuses an exposure the operator did not spell out.
    pub(crate) fn check(&self) -> anyhow::Result<()> {
        if is_default_loopback(self.listen.ip()) {
            return Ok(());
        }
        if self.auth.is_none() && self.oauth.is_none() {
            bail!(
                "--listen {}: only 127.0.0.1 and ::1 may be served without authentication; give \
                 --auth-token-file (bearer tokens) or --oauth-issuer to listen anywhere else",
                self.listen
            );
        }
        if self.allowed_hosts.is_empty() && self.oauth.as_ref().and_then(|o| o.public_host()).is_none() {
            bail!(
                "--listen {}: name the Host values clients will use with --allowed-host (for example \
                 --allowed-host mcp.example.internal) or --public-url; the DNS-rebinding guard refuses every other Host",
                self.listen
            );
        }
        Ok(())
    }

    /// The accepted `Host` values: `--public-url`'s is one of them.
    fn hosts(&self) -> Vec<String> {
        let mut hosts = accepted_hosts(&self.allowed_hosts);
        hosts.extend(self.oauth.as_ref().and_then(|o| o.public_host()));
        hosts
    }

    /// The accepted `Origin` values once the server listens on `port`: `--allowed-origin` and
    /// the server's own origins.
    fn origins(&self, port: u16) -> Vec<String> {
        let scheme = if self.tls.is_some() { "https" } else { "http" };
        let mut origins = self.allowed_origins.clone();
        origins.extend(own_origins(scheme, &accepted_hosts(&self.allowed_hosts), port));
        origins.extend(self.oauth.as_ref().map(|o| o.public_origin()));
        origins
    }
}

/// The origins of the server itself: every name the DNS-rebinding guard accepts, with the port
/// the name carries or else the one the server listens on. A page this server serves sends one
/// of them, and a request from it is no more cross-origin than one without `Origin`; a page of
/// another local server (another port) is still foreign, and a rebinding name is refused by the
/// `Host` check whatever its `Origin`.
pub(crate) fn own_origins(scheme: &str, hosts: &[String], port: u16) -> Vec<String> {
    hosts
        .iter()
        .map(|host| {
            let authority = if host.parse::<Ipv6Addr>().is_ok() {
                format!("[{host}]:{port}")
            } else if match host.strip_prefix('[') {
                Some(bracketed) => bracketed.contains("]:"),
                None => host.contains(':'),
            } {
                host.clone()
            } else {
                format!("{host}:{port}")
            };
            format!("{scheme}://{authority}")
        })
        .collect()
}

/// Serves until SIGINT/SIGTERM, then drains (see [`crate::shutdown`]). The caller has passed
/// `options` through [`HttpOptions::check`] before starting anything else.
pub(crate) async fn serve(broker: McpServer, options: HttpOptions) -> anyhow::Result<()> {
    let listener = listener::bind(options.listen).with_context(|| format!("binding {}", options.listen))?;
    let addr = listener.local_addr()?;
    let sessions_closed = CancellationToken::new();
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(options.hosts())
        .with_allowed_origins(options.origins(addr.port()))
        .enforce_origin_validation()
        .with_max_request_body_bytes(options.sessions.max_body_bytes)
        .with_cancellation_token(sessions_closed.clone());
    let mut manager = LocalSessionManager::default();
    manager.session_config.keep_alive = Some(options.session_idle_timeout);
    let manager = Arc::new(manager);
    let scopes_of = broker.clone();
    let tool_scopes: scope_check::ToolScopes = Arc::new(move |tool: &str| scopes_of.shared().registry.scope_of(tool));
    let guard = sessions::SessionGuard::new(manager.clone(), options.sessions, tool_scopes);
    tokio::spawn(guard.clone().sweep_until(sessions_closed.clone()));
    let factory_broker = broker.clone();
    let service = StreamableHttpService::new(move || Ok(factory_broker.clone()), manager, config);
    // Layers run outermost last-added first: the bearer check, the principal's hold on its
    // connection, then the session guard.
    let mut router = axum::Router::new()
        .nest_service("/mcp", service)
        .layer(axum::middleware::from_fn_with_state(guard, sessions::guard))
        .layer(axum::middleware::from_fn(connections::hold));
    if options.auth.is_some() || options.oauth.is_some() {
        let authenticator = Arc::new(Authenticator { tokens: options.auth.clone(), oauth: options.oauth.clone() });
        router = router.layer(axum::middleware::from_fn_with_state(authenticator, auth::require_bearer));
    }
    // health, readiness and the resource metadata sit outside the bearer check and the session
    // guard, behind a Host check of their own (rmcp's guards `/mcp` only)
    let mut public = health::routes(broker.clone());
    if let Some(oauth) = &options.oauth {
        public = public.merge(resource_metadata::routes(oauth.clone()));
        tokio::spawn(oauth.clone().refresh_until(sessions_closed.clone()));
    }
    let scheme = if options.tls.is_some() { "https" } else { "http" };
    let mut page_text = String::new();
    if let Some(page) = &broker.shared().approval_page {
        // without --approval-url or --public-url, browsers reach the page where the server
        // listens; a local page at localhost, the only name WebAuthn binds its passkeys to
        match page.is_local() {
            true => page.set_base(&format!("{scheme}://localhost:{}", addr.port()))?,
            false => page.set_base(&format!("{scheme}://{addr}"))?,
        }
        public = public.merge(crate::approval_page::routes::routes(page.clone()));
        page_text = format!("; approval page at {}/approve/", page.origin());
    }
    let public = public.layer(axum::middleware::from_fn_with_state(Arc::new(options.hosts()), host_check::require));
    let router = public.merge(router);
    let mut auth_text = match &options.auth {
        Some(t) => format!("bearer tokens for {} principal(s)", t.current().principals()),
        None => "none (loopback; every client is the local principal)".into(),
    };
    if let Some(oauth) = &options.oauth {
        let tokens = if options.auth.is_some() { format!("{auth_text} and ") } else { String::new() };
        auth_text = format!("{tokens}OAuth access tokens, metadata at {}", oauth.metadata_url());
    }
    // caught before the line a supervisor waits for: a signal sent on reading it gets the drain
    // (or the reload), not the default action
    let mut signals = crate::shutdown::Signals::catch()?;
    let hangups = crate::platform::Hangups::listen();
    tracing::info!("MCP streamable HTTP listening on {scheme}://{addr}/mcp (auth: {auth_text}){page_text}");
    tokio::spawn(reload_on_hangup(hangups, options.auth.clone(), options.tls.clone(), sessions_closed.clone()));
    let server = tokio::spawn(listener::serve(
        listener,
        router,
        options.connections,
        options.tls.clone(),
        sessions_closed.clone(),
    ));

    let signal = signals.next().await;
    // a signal already delivered with the first (SIGINT and SIGTERM together) is not a second one
    signals.forget_pending();
    let lifecycle = &broker.shared().lifecycle;
    if !options.shutdown_drain.is_zero() {
        lifecycle.stop_being_ready();
        tracing::info!(
            drain_ms = options.shutdown_drain.as_millis() as u64,
            "{signal}: /readyz answers 503 draining while calls are still taken, so the load balancer sends new \
             ones elsewhere; a second signal ends the wait"
        );
        tokio::select! {
            _ = tokio::time::sleep(options.shutdown_drain) => {}
            again = signals.next() => tracing::info!("{again}: the drain's wait ends early"),
        }
    }
    tracing::info!(
        in_flight = lifecycle.in_flight(),
        grace_ms = options.shutdown_grace.as_millis() as u64,
        "{signal}: shutting down; new tool calls are refused, calls in flight may finish"
    );
    lifecycle.drain(options.shutdown_grace).await;
    tokio::time::sleep(FLUSH).await;
    sessions_closed.cancel();
    server.await.context("the HTTP server task failed")?;
    Ok(())
}

/// SIGHUP rereads the token file and the TLS certificate; a file that fails to load is logged
/// and the old one stays in force.
async fn reload_on_hangup(
    hangups: std::io::Result<crate::platform::Hangups>,
    tokens: Option<Arc<TokenFile>>,
    tls: Option<Arc<tls::TlsFiles>>,
    stop: CancellationToken,
) {
    let Ok(mut hangups) = hangups else {
        tracing::warn!("cannot listen for SIGHUP: the token file and certificate are read only at start");
        return;
    };
    loop {
        tokio::select! {
            _ = hangups.recv() => {}
            _ = stop.cancelled() => return,
        }
        if let Some(tokens) = &tokens {
            match tokens.reload() {
                Ok(n) => tracing::info!(principals = n, "SIGHUP: bearer tokens reloaded"),
                Err(e) => tracing::error!("SIGHUP: the token file was not reloaded, the previous tokens stay: {e:#}"),
            }
        }
        if let Some(tls) = &tls {
            match tls.reload() {
                Ok(()) => tracing::info!("SIGHUP: TLS certificate reloaded"),
                Err(e) => {
                    tracing::error!("SIGHUP: the TLS certificate was not reloaded, the previous one stays: {e:#}")
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(listen: &str, auth: bool, hosts: &[&str]) -> HttpOptions {
        HttpOptions {
            listen: listen.parse().unwrap(),
            auth: auth.then(|| {
                Arc::new(TokenFile::fixed(auth::AuthTokens::parse("ops 0123456789abcdef0123456789abcdef").unwrap()))
            }),
            oauth: None,
            tls: None,
            allowed_hosts: hosts.iter().map(|h| h.to_string()).collect(),
            allowed_origins: Vec::new(),
            sessions: SessionLimits {
                per_principal: 1,
                total: 1,
                streams_per_principal: 1,
                max_body_bytes: 1 << 20,
                body_read_timeout: Duration::from_secs(1),
            },
            session_idle_timeout: Duration::from_secs(1),
            connections: ConnectionLimits {
                name: "mcp",
                slots: connections::SlotLimits { max_connections: 1, per_principal: 1, unproven_per_peer: 1 },
                header_read_timeout: Duration::from_secs(1),
            },
            shutdown_grace: Duration::from_secs(1),
            shutdown_drain: Duration::ZERO,
        }
    }

    #[test]
    fn the_servers_own_origins_are_its_accepted_names_on_its_port() {
        let hosts = accepted_hosts(&["mcp.example.internal".into(), "10.1.2.3:8080".into(), "fd00::1".into()]);
        assert_eq!(
            own_origins("http", &hosts, 4100),
            [
                "http://localhost:4100",
                "http://127.0.0.1:4100",
                "http://[::1]:4100",
                "http://mcp.example.internal:4100",
                "http://10.1.2.3:8080",
                "http://[fd00::1]:4100",
            ]
        );
        assert_eq!(
            own_origins("https", &["[fd00::2]:443".into(), "[fd00::3]".into()], 9),
            ["https://[fd00::2]:443", "https://[fd00::3]:9"]
        );
        let mut listed = options("127.0.0.1:0", false, &[]);
        listed.allowed_origins = vec!["https://console.example.internal".into()];
        let origins = listed.origins(4100);
        assert_eq!(origins[0], "https://console.example.internal", "the operator's list comes first");
        assert!(origins.contains(&"http://127.0.0.1:4100".to_string()), "{origins:?}");
    }

    #[test]
    fn only_the_default_loopback_addresses_go_without_auth_and_host_names() {
        assert!(options("127.0.0.1:0", false, &[]).check().is_ok());
        assert!(options("[::1]:0", false, &[]).check().is_ok());
        let e = options("127.0.0.2:0", false, &[]).check().unwrap_err().to_string();
        assert!(e.contains("--auth-token-file"), "{e}");
        let e = options("0.0.0.0:0", true, &[]).check().unwrap_err().to_string();
        assert!(e.contains("--allowed-host"), "{e}");
        assert!(options("0.0.0.0:0", true, &["mcp.example"]).check().is_ok());
    }
}
