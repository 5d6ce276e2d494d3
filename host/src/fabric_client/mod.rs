//! The Fabric v4 HTTP client behind the `fabric` capability: base URL, OAuth2, the allow-list,
//! correlation ids, size caps, and the retry rules (reads may retry once after a 401; creates
//! are never retried).

pub mod allow_list;
pub mod oauth;

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use tokio_util::sync::CancellationToken;

pub use allow_list::{Method, RouteClass};
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
    pub max_request_bytes: usize,
    pub max_response_bytes: usize,
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

/// Mirrors the `fabric.error` variant of the WIT contract.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SendError {
    Refused(String),
    Cancelled,
    Unavailable(String),
    Timeout,
    Transport(String),
}

pub struct FabricClient {
    http: Http,
    config: FabricConfig,
    tokens: oauth::TokenSource,
}

/// The HTTP client, built on a background thread: loading the TLS trust store takes several
/// milliseconds, and start-up should not wait for it. The first request waits if it must.
#[derive(Clone)]
pub struct Http {
    cell: Arc<OnceLock<reqwest::Client>>,
    connect_timeout: Duration,
    request_timeout: Duration,
}

impl Http {
    fn new(connect_timeout: Duration, request_timeout: Duration) -> Self {
        let http = Http { cell: Arc::new(OnceLock::new()), connect_timeout, request_timeout };
        let early = http.clone();
        std::thread::spawn(move || {
            early.client();
        });
        http
    }

    pub fn client(&self) -> &reqwest::Client {
        self.cell.get_or_init(|| {
            crate::install_crypto_provider();
            reqwest::Client::builder()
                .connect_timeout(self.connect_timeout)
                .timeout(self.request_timeout)
                .redirect(reqwest::redirect::Policy::none())
                .user_agent(concat!("equinix-mcp/", env!("CARGO_PKG_VERSION")))
                .build()
                .expect("building the HTTP client (TLS provider and settings are fixed)")
        })
    }
}

impl FabricClient {
    pub fn new(config: FabricConfig) -> anyhow::Result<Self> {
        let http = Http::new(config.connect_timeout, config.request_timeout);
        let base = config.base_url.trim_end_matches('/').to_string();
        let tokens = oauth::TokenSource::new(http.clone(), &base, config.credentials.clone());
        Ok(FabricClient { http, config: FabricConfig { base_url: base, ..config }, tokens })
    }

    pub fn config(&self) -> &FabricConfig {
        &self.config
    }

    /// What the allow-list makes of `req` (`None`: it would be refused).
    pub fn route_class(&self, req: &ApiRequest) -> Option<RouteClass> {
        allow_list::check(req.method, &req.path, &req.query, self.config.mutate_enabled).ok()
    }

    /// Sends one request on the component's behalf.
    pub async fn send(&self, req: &ApiRequest, cancel: &CancellationToken) -> Result<ApiResponse, SendError> {
        let class = allow_list::check(req.method, &req.path, &req.query, self.config.mutate_enabled)
            .map_err(|r| SendError::Refused(r.0))?;
        if req.method == Method::Get && req.body.is_some() {
            return Err(SendError::Refused(format!("GET {} must not carry a body", req.path)));
        }
        if let Some(body) = &req.body
            && body.len() > self.config.max_request_bytes
        {
            return Err(SendError::Refused(format!(
                "request body of {} bytes exceeds the {} byte limit",
                body.len(),
                self.config.max_request_bytes
            )));
        }
        let retryable = class != RouteClass::Create;
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
        let url = format!("{}{}", self.config.base_url, req.path);
        let mut builder = match req.method {
            Method::Get => self.http.client().get(&url),
            Method::Post => self.http.client().post(&url),
        };
        if !req.query.is_empty() {
            builder = builder.query(&req.query);
        }
        builder = builder
            .bearer_auth(token.expose())
            .header("X-CORRELATION-ID", &correlation_id)
            .header("X-SOURCE", "API")
            .header(reqwest::header::ACCEPT, "application/json");
        if let Some(body) = &req.body {
            builder = builder.header(reqwest::header::CONTENT_TYPE, "application/json").body(body.clone());
        }
        tracing::debug!(method = %req.method, path = %req.path, correlation_id, "sending Fabric request");
        let mut response = builder.send().await.map_err(classify)?;
        let status = response.status().as_u16();
        let retry_after = response
            .headers()
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map(Duration::from_secs);
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(classify)? {
            if body.len() + chunk.len() > self.config.max_response_bytes {
                return Err(SendError::Transport(format!(
                    "the Fabric response exceeded the {} byte limit",
                    self.config.max_response_bytes
                )));
            }
            body.extend_from_slice(&chunk);
        }
        let body =
            String::from_utf8(body).map_err(|_| SendError::Transport("the Fabric response is not UTF-8".into()))?;
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

/// Connect failures mean nothing was sent; anything later leaves the outcome unknown.
fn classify(e: reqwest::Error) -> SendError {
    if e.is_connect() {
        SendError::Unavailable(format!("could not connect to Fabric: {}", root_cause(&e)))
    } else if e.is_timeout() {
        SendError::Timeout
    } else {
        SendError::Transport(root_cause(&e))
    }
}

fn root_cause(e: &(dyn std::error::Error + 'static)) -> String {
    let mut cur = e;
    while let Some(next) = cur.source() {
        cur = next;
    }
    cur.to_string()
}

/// 25 random alphanumerics, as Equinix's own clients send.
fn new_correlation_id() -> String {
    use rand::Rng;
    use rand::distr::Alphanumeric;
    rand::rng().sample_iter(&Alphanumeric).take(25).map(char::from).collect()
}
