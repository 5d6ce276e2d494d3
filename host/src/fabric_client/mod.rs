//! The Fabric v4 HTTP client behind the `fabric` capability: base URL, OAuth2, the allow-list,
//! correlation ids, size caps, and the retry rules (reads may retry once after a 401; creates
//! are never retried).

pub mod allow_list;
pub mod oauth;

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
    http: reqwest::Client,
    config: FabricConfig,
    tokens: oauth::TokenSource,
}

impl FabricClient {
    pub fn new(config: FabricConfig) -> anyhow::Result<Self> {
        crate::install_crypto_provider();
        let http = reqwest::Client::builder()
            .connect_timeout(config.connect_timeout)
            .timeout(config.request_timeout)
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(concat!("equinix-mcp/", env!("CARGO_PKG_VERSION")))
            .build()?;
        let base = config.base_url.trim_end_matches('/').to_string();
        let tokens = oauth::TokenSource::new(http.clone(), &base, config.credentials.clone());
        Ok(FabricClient { http, config: FabricConfig { base_url: base, ..config }, tokens })
    }

    pub fn config(&self) -> &FabricConfig {
        &self.config
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
        let mut refreshed = false;
        loop {
            if cancel.is_cancelled() {
                return Err(SendError::Cancelled);
            }
            let token = self.tokens.bearer().await?;
            if cancel.is_cancelled() {
                return Err(SendError::Cancelled);
            }
            let response = self.send_once(req, &token).await?;
            // A 401 means the token died early; a read is repeated once with a fresh token.
            // A create is never repeated: Fabric refused it, so nothing was created.
            if response.status == 401 && class != RouteClass::Create && !refreshed {
                tracing::info!(path = %req.path, "Fabric answered 401; refreshing the token and retrying once");
                self.tokens.invalidate(&token).await;
                refreshed = true;
                continue;
            }
            return Ok(response);
        }
    }

    async fn send_once(&self, req: &ApiRequest, token: &crate::secret::Secret) -> Result<ApiResponse, SendError> {
        let correlation_id = new_correlation_id();
        let url = format!("{}{}", self.config.base_url, req.path);
        let mut builder = match req.method {
            Method::Get => self.http.get(&url),
            Method::Post => self.http.post(&url),
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
        Ok(ApiResponse { status, body, correlation_id })
    }
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
