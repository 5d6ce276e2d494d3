//! The Fabric v4 HTTP client behind the `fabric` capability: base URL, OAuth2, the allow-list,
//! correlation ids, size caps, and the retry rules (reads may retry once after a 401; creates
//! are never retried).

pub(crate) mod allow_list;
pub(crate) mod oauth;
pub(crate) mod settings;
mod wire;

use std::time::Duration;

use axum::http::{HeaderMap, HeaderValue, header};
use tokio_util::sync::CancellationToken;
use wire::Wire;
pub(crate) use wire::root_cause;

pub use allow_list::{CreateRoute, Method, RouteClass};
pub use oauth::Credentials;

/// Settings of the Fabric client.
#[derive(Clone, Debug)]
pub struct FabricConfig {
    /// `EQUINIX_API_ENDPOINT`, e.g. `https://api.equinix.com`.
    pub base_url: String,
    pub credentials: Option<Credentials>,
    /// Whether the operator enabled the `mutate` toolset (opens the create routes).
    pub mutate_enabled: bool,
    pub request_timeout: Duration,
    pub connect_timeout: Duration,
    pub(crate) max_request_bytes: usize,
    pub max_response_bytes: usize,
    /// When a cached token is due for its refresh (the server's clock, which the simulator moves).
    pub clock: crate::clock::Clock,
}

impl FabricConfig {
    pub fn new(base_url: impl Into<String>, credentials: Option<Credentials>) -> Self {
        FabricConfig {
            base_url: base_url.into(),
            credentials,
            mutate_enabled: false,
            request_timeout: Duration::from_secs(30),
            connect_timeout: Duration::from_secs(10),
            max_request_bytes: 1 << 20,
            max_response_bytes: 8 << 20,
            clock: crate::clock::Clock::default(),
        }
    }
}

/// One request as the component asked for it.
#[derive(Clone, Debug)]
pub struct ApiRequest {
    pub method: Method,
    pub path: String,
    pub query: Vec<(String, String)>,
    pub body: Option<String>,
}

/// Fabric's answer, any status.
#[derive(Clone, Debug)]
pub struct ApiResponse {
    pub status: u16,
    pub body: String,
    pub correlation_id: String,
}

/// Why a request got no answer. The cases are the WIT contract's `fabric.error` (the
/// `fabric` capability hands them on one to one), kept here so the client knows nothing of
/// the component.
#[derive(Clone, PartialEq, Eq)]
pub enum SendError {
    /// The host refused the request; nothing was sent.
    Refused(String),
    /// The operator's policy denies this create; nothing was sent.
    Denied(String),
    /// The call was cancelled before the request left; nothing was sent.
    Cancelled,
    /// Nothing reached Fabric (the token endpoint failed, or no connection could be opened).
    Unavailable(String),
    /// Sent, and no answer came in time: its outcome is unknown.
    Timeout,
    /// Sent, and the connection broke or the answer was unreadable: its outcome is unknown.
    Transport(String),
}

/// Why a request cannot be sent as an approved create ([`FabricClient::check_create`]); nothing
/// was sent.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum NotACreate {
    /// The allow-list's: not a create route, or creates are not open on this server.
    #[error("{0}")]
    Route(allow_list::Refusal),
    #[error("the create body has {bytes} bytes; at most {max} are sent")]
    TooLarge { bytes: usize, max: usize },
}

/// Written as the WIT's generated types write themselves (`Error::Timeout`): audit records and
/// results quote it, and their words stay those of earlier versions.
impl std::fmt::Debug for SendError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SendError::Refused(why) => f.debug_tuple("Error::Refused").field(why).finish(),
            SendError::Denied(why) => f.debug_tuple("Error::Denied").field(why).finish(),
            SendError::Cancelled => f.debug_tuple("Error::Cancelled").finish(),
            SendError::Unavailable(why) => f.debug_tuple("Error::Unavailable").field(why).finish(),
            SendError::Timeout => f.debug_tuple("Error::Timeout").finish(),
            SendError::Transport(why) => f.debug_tuple("Error::Transport").field(why).finish(),
        }
    }
}

/// A create the allow-list admitted, with its body under the size cap: made only by
/// [`FabricClient::check_create`], so [`FabricClient::send_create`] sends what was checked once,
/// and the approval that carries it cannot name another route.
#[derive(Debug)]
pub struct CheckedCreate {
    route: CreateRoute,
    body: String,
}

impl CheckedCreate {
    pub(crate) fn route(&self) -> CreateRoute {
        self.route
    }

    pub fn body(&self) -> &str {
        &self.body
    }
}

pub struct FabricClient {
    wire: Wire,
    config: FabricConfig,
    tokens: oauth::TokenSource,
}

impl FabricClient {
    /// A client for `config.base_url` over the network.
    pub fn new(config: FabricConfig) -> Self {
        let base = config.base_url.trim_end_matches('/').to_string();
        let wire = Wire::network(&base, config.connect_timeout, config.request_timeout);
        Self::over(wire, FabricConfig { base_url: base, ..config })
    }

    /// A client whose requests go straight into `routes`, an HTTP service this process runs (the
    /// embedded simulator) without a socket; `base_url` is where the same routes listen, what
    /// users and errors see.
    pub fn in_process(config: FabricConfig, routes: axum::Router, base_url: String) -> Self {
        let wire = Wire::InProcess { router: routes, timeout: config.request_timeout };
        Self::over(wire, FabricConfig { base_url, ..config })
    }

    fn over(wire: Wire, config: FabricConfig) -> Self {
        let tokens = oauth::TokenSource::new(wire.clone(), config.credentials.clone(), config.clock.clone());
        FabricClient { wire, config, tokens }
    }

    /// Whether requests skip the network (the embedded simulator, in process).
    pub fn is_in_process(&self) -> bool {
        matches!(self.wire, Wire::InProcess { .. })
    }

    pub(crate) fn config(&self) -> &FabricConfig {
        &self.config
    }

    /// What the allow-list makes of a read or dry run `req`, or its refusal (a create is always
    /// refused here: see [`FabricClient::check_create`]). Every rule a request must pass is
    /// checked here, once: its route, a GET without a body, the size of its body.
    pub(crate) fn route_class(&self, req: &ApiRequest) -> Result<RouteClass, SendError> {
        let class = allow_list::check(req.method, &req.path, &req.query, self.config.mutate_enabled)
            .map_err(|r| SendError::Refused(r.0))?;
        if req.method == Method::Get && req.body.is_some() {
            return Err(SendError::Refused(format!("GET {} must not carry a body", req.path)));
        }
        if let Some(body) = &req.body {
            self.check_size(body)?;
        }
        Ok(class)
    }

    fn check_size(&self, body: &str) -> Result<(), SendError> {
        let max = self.config.max_request_bytes;
        match body.len() > max {
            true => {
                Err(SendError::Refused(format!("request body of {} bytes exceeds the {max} byte limit", body.len())))
            }
            false => Ok(()),
        }
    }

    /// Sends one read or dry run on the component's behalf.
    pub async fn send(&self, req: &ApiRequest, cancel: &CancellationToken) -> Result<ApiResponse, SendError> {
        self.send_classified(req, self.route_class(req)?, cancel).await
    }

    /// Checks a create (POST `path` with `body`, no query) once, before anyone is asked about it:
    /// a create route of the allow-list, the `mutate` toolset enabled, the body within the cap.
    pub(crate) fn check_create(&self, path: &str, body: &str) -> Result<CheckedCreate, NotACreate> {
        let route = allow_list::check_create(path, self.config.mutate_enabled).map_err(NotACreate::Route)?;
        let max = self.config.max_request_bytes;
        if body.len() > max {
            return Err(NotACreate::TooLarge { bytes: body.len(), max });
        }
        Ok(CheckedCreate { route, body: body.to_string() })
    }

    /// Sends one checked create exactly once: never retried. Only an approval's execution calls
    /// this.
    pub(crate) async fn send_create(
        &self,
        create: &CheckedCreate,
        cancel: &CancellationToken,
    ) -> Result<ApiResponse, SendError> {
        let req = ApiRequest {
            method: Method::Post,
            path: create.route.path().into(),
            query: Vec::new(),
            body: Some(create.body.clone()),
        };
        self.send_classified(&req, RouteClass::Create, cancel).await
    }

    /// Sends a request whose class [`FabricClient::route_class`] (or [`FabricClient::check_create`])
    /// gave, with the retry rules of that class.
    pub(crate) async fn send_classified(
        &self,
        req: &ApiRequest,
        class: RouteClass,
        cancel: &CancellationToken,
    ) -> Result<ApiResponse, SendError> {
        let retryable = !matches!(class, RouteClass::Create);
        let mut refreshed = false;
        let mut attempt = 0u32;
        loop {
            if cancel.is_cancelled() {
                return Err(SendError::Cancelled);
            }
            let token = self.tokens.bearer().await?;
            if cancel.is_cancelled() {
                return Err(SendError::Cancelled);
            }
            attempt += 1;
            let (response, retry_after) = match self.send_once(req, &token).await {
                // A broken answer to a read is asked again once; a create's is never.
                Err(SendError::Transport(why)) if retryable && attempt < 2 => {
                    tracing::info!(path = %req.path, "Fabric answer lost ({why}); retrying the read once");
                    self.pause(backoff(attempt), cancel).await?;
                    continue;
                }
                other => other?,
            };
            // A 401 means the token died early; a read is repeated once with a fresh token.
            // A create is never repeated: Fabric refused it, so nothing was created.
            if response.status == 401 && retryable && !refreshed {
                tracing::info!(path = %req.path, "Fabric answered 401; refreshing the token and retrying once");
                self.tokens.invalidate(&token).await;
                refreshed = true;
                continue;
            }
            if retryable && matches!(response.status, 429 | 502 | 503 | 504) && attempt < MAX_READ_ATTEMPTS {
                let wait = retry_after.unwrap_or_else(|| backoff(attempt)).min(MAX_RETRY_WAIT);
                tracing::info!(path = %req.path, status = response.status, wait_ms = wait.as_millis() as u64, "retrying a read");
                self.pause(wait, cancel).await?;
                continue;
            }
            return Ok(response);
        }
    }

    /// Waits before a retry, unless the call is cancelled meanwhile.
    async fn pause(&self, wait: Duration, cancel: &CancellationToken) -> Result<(), SendError> {
        tokio::select! {
            _ = tokio::time::sleep(wait) => Ok(()),
            _ = cancel.cancelled() => Err(SendError::Cancelled),
        }
    }

    async fn send_once(
        &self,
        req: &ApiRequest,
        token: &crate::secret::Secret,
    ) -> Result<(ApiResponse, Option<Duration>), SendError> {
        let correlation_id = new_correlation_id();
        let mut target = req.path.clone();
        if !req.query.is_empty() {
            target.push('?');
            target.push_str(&form_urlencoded::Serializer::new(String::new()).extend_pairs(&req.query).finish());
        }
        let mut headers = HeaderMap::new();
        let mut bearer = HeaderValue::try_from(format!("Bearer {}", token.expose()))
            .map_err(|_| SendError::Unavailable("the bearer token is not a valid header value".into()))?;
        bearer.set_sensitive(true);
        headers.insert(header::AUTHORIZATION, bearer);
        headers.insert(
            "x-correlation-id",
            HeaderValue::try_from(correlation_id.as_str()).expect("correlation ids are alphanumeric"),
        );
        headers.insert("x-source", HeaderValue::from_static("API"));
        headers.insert(header::ACCEPT, HeaderValue::from_static("application/json"));
        if req.body.is_some() {
            headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
        }
        let method = match req.method {
            Method::Get => axum::http::Method::GET,
            Method::Post => axum::http::Method::POST,
        };
        tracing::debug!(method = %req.method, path = %req.path, correlation_id, "sending Fabric request");
        let out = wire::Outgoing { method, target, headers, body: req.body.clone() };
        let answer = self.wire.exchange(out, self.config.max_response_bytes).await?;
        let status = answer.status;
        let retry_after = answer
            .headers
            .get(header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map(Duration::from_secs);
        let body = String::from_utf8(answer.body)
            .map_err(|_| SendError::Transport("the Fabric response is not UTF-8".into()))?;
        tracing::debug!(status, correlation_id, bytes = body.len(), "Fabric answered");
        Ok((ApiResponse { status, body, correlation_id }, retry_after))
    }
}

/// Attempts of a read (or dry run) answered 429/502/503/504; creates get exactly one.
const MAX_READ_ATTEMPTS: u32 = 3;
/// The longest wait before a retry, whatever Retry-After asks for.
const MAX_RETRY_WAIT: Duration = Duration::from_secs(5);

/// 200 ms, 400 ms, 800 ms, ...
fn backoff(attempt: u32) -> Duration {
    Duration::from_millis(200u64 << attempt.saturating_sub(1).min(5))
}

/// 25 random alphanumerics, as Equinix's own clients send.
fn new_correlation_id() -> String {
    use rand::Rng;
    use rand::distr::Alphanumeric;
    rand::rng().sample_iter(&Alphanumeric).take(25).map(char::from).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_approved_create_is_a_create_route_within_the_size_limit() {
        let config = |mutate_enabled| FabricConfig {
            mutate_enabled,
            max_request_bytes: 16,
            ..FabricConfig::new("http://127.0.0.1:9", None)
        };
        let client = FabricClient::new(config(true));
        assert!(client.check_create("/fabric/v4/connections", "{}").is_ok());
        let large = client.check_create("/fabric/v4/connections", &format!("{{\"name\":\"{}\"}}", "x".repeat(20)));
        let large = large.map(|_| ()).unwrap_err();
        assert_eq!(large, NotACreate::TooLarge { bytes: 31, max: 16 });
        assert_eq!(large.to_string(), "the create body has 31 bytes; at most 16 are sent");
        let search = client.check_create("/fabric/v4/ports/search", "{}").map(|_| ()).unwrap_err();
        assert!(matches!(&search, NotACreate::Route(r) if r.0.contains("not a create route")), "{search}");
        let closed = FabricClient::new(config(false)).check_create("/fabric/v4/connections", "{}");
        assert!(closed.map(|_| ()).unwrap_err().to_string().contains("`mutate`"));
    }
}
