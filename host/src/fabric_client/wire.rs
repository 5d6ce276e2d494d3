//! How one Fabric request travels: over the network through reqwest (real Fabric, the
//! standalone simulator), or, when this process runs the embedded simulator, straight into the
//! simulator's router. Both take the same request line, headers (User-Agent included; Host and
//! Content-Length are HTTP/1 framing) and body and give back the same status, headers and
//! size-capped body, so everything above this module (OAuth, allow-list, retries, caps, error
//! mapping) is shared. The in-process route skips only the loopback socket and the HTTP/1
//! framing on both ends; `FabricClient::in_process` takes the routes of a server this process
//! started (the embedded simulator's), so no configured endpoint can be routed this way.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use axum::http::{HeaderMap, HeaderValue, Method, header};
use futures_util::{FutureExt, StreamExt};

use super::SendError;

#[derive(Clone)]
pub(crate) enum Wire {
    /// `base` is the endpoint, e.g. `https://api.equinix.com`.
    Network {
        http: Http,
        base: String,
    },
    InProcess {
        router: axum::Router,
        timeout: Duration,
    },
}

/// A request as it goes out.
pub(crate) struct Outgoing {
    pub method: Method,
    /// Path and query, e.g. `/fabric/v4/metros?offset=0&limit=5`, encoded.
    pub target: String,
    pub headers: HeaderMap,
    pub body: Option<String>,
}

/// An answer, any status, body read in full (at most the cap given to `exchange`).
pub(crate) struct Incoming {
    pub status: u16,
    pub headers: HeaderMap,
    pub body: Vec<u8>,
}

impl Wire {
    pub(crate) fn network(base: &str, connect_timeout: Duration, request_timeout: Duration) -> Self {
        Wire::Network { http: Http::new(connect_timeout, request_timeout), base: base.to_string() }
    }

    pub(crate) async fn exchange(&self, out: Outgoing, max_body: usize) -> Result<Incoming, SendError> {
        match self {
            Wire::Network { http, base } => network(http.client(), base, out, max_body).await,
            Wire::InProcess { router, timeout } => {
                // Over HTTP a panicking handler only costs its connection; in process it would
                // unwind into the tool call, so it is turned into the same broken answer.
                let mut exchange =
                    Box::pin(std::panic::AssertUnwindSafe(in_process(router.clone(), out, max_body)).catch_unwind());
                // Without injected latency the simulator answers on the first poll; arming the
                // timer only when it does not saves waking the thread parked in the I/O driver.
                let outcome = match (&mut exchange).now_or_never() {
                    Some(outcome) => Ok(outcome),
                    None => tokio::time::timeout(*timeout, exchange).await,
                };
                match outcome {
                    Ok(Ok(answer)) => answer,
                    Ok(Err(_panic)) => Err(SendError::Transport("the simulator failed while answering".into())),
                    Err(_elapsed) => Err(SendError::Timeout),
                }
            }
        }
    }
}

async fn network(client: &reqwest::Client, base: &str, out: Outgoing, max_body: usize) -> Result<Incoming, SendError> {
    let mut builder = client.request(out.method, format!("{base}{}", out.target)).headers(out.headers);
    if let Some(body) = out.body {
        builder = builder.body(body);
    }
    let mut response = builder.send().await.map_err(classify)?;
    let status = response.status().as_u16();
    let headers = std::mem::take(response.headers_mut());
    let mut body = CappedBody::new(max_body);
    while let Some(chunk) = response.chunk().await.map_err(classify)? {
        body.push(&chunk)?;
    }
    Ok(Incoming { status, headers, body: body.bytes })
}

async fn in_process(router: axum::Router, out: Outgoing, max_body: usize) -> Result<Incoming, SendError> {
    let mut request = axum::http::Request::builder()
        .method(out.method)
        .uri(out.target)
        .body(axum::body::Body::from(out.body.unwrap_or_default()))
        .map_err(|e| SendError::Transport(format!("the request could not be built: {e}")))?;
    *request.headers_mut() = out.headers;
    // what reqwest adds on the network path (Host and Content-Length are its framing)
    request.headers_mut().entry(header::USER_AGENT).or_insert(HeaderValue::from_static(USER_AGENT));
    let response = match tower::ServiceExt::oneshot(router, request).await {
        Ok(r) => r,
        Err(never) => match never {},
    };
    let (parts, answer) = response.into_parts();
    let mut stream = answer.into_data_stream();
    let mut body = CappedBody::new(max_body);
    while let Some(chunk) = stream.next().await {
        body.push(&chunk.map_err(|e| SendError::Transport(root_cause(&e)))?)?;
    }
    Ok(Incoming { status: parts.status.as_u16(), headers: parts.headers, body: body.bytes })
}

/// A response body that refuses to grow past its cap.
struct CappedBody {
    cap: usize,
    bytes: Vec<u8>,
}

impl CappedBody {
    fn new(cap: usize) -> Self {
        CappedBody { cap, bytes: Vec::new() }
    }

    fn push(&mut self, chunk: &[u8]) -> Result<(), SendError> {
        if self.bytes.len() + chunk.len() > self.cap {
            return Err(SendError::Transport(format!("the Fabric response exceeded the {} byte limit", self.cap)));
        }
        self.bytes.extend_from_slice(chunk);
        Ok(())
    }
}

/// The HTTP client, built on a background thread: loading the TLS trust store takes several
/// milliseconds, and start-up should not wait for it. The first request waits if it must.
#[derive(Clone)]
pub(crate) struct Http {
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

    fn client(&self) -> &reqwest::Client {
        self.cell.get_or_init(|| {
            crate::install_crypto_provider();
            reqwest::Client::builder()
                .connect_timeout(self.connect_timeout)
                .timeout(self.request_timeout)
                .redirect(reqwest::redirect::Policy::none())
                .user_agent(USER_AGENT)
                .build()
                .expect("building the HTTP client (TLS provider and settings are fixed)")
        })
    }
}

const USER_AGENT: &str = concat!("equinix-mcp/", env!("CARGO_PKG_VERSION"));

/// Connect failures mean nothing was sent; anything later leaves the outcome unknown. The URL is
/// cut from the error first: an endpoint may carry credentials in its userinfo.
fn classify(e: reqwest::Error) -> SendError {
    let e = e.without_url();
    if e.is_connect() {
        SendError::Unavailable(format!("could not connect to Fabric: {}", root_cause(&e)))
    } else if e.is_timeout() {
        SendError::Timeout
    } else {
        SendError::Transport(root_cause(&e))
    }
}

/// The innermost error of a chain: what actually went wrong (a refused connection, a DNS
/// failure), without the layers that wrap it.
pub(crate) fn root_cause(e: &(dyn std::error::Error + 'static)) -> String {
    let mut cur = e;
    while let Some(next) = cur.source() {
        cur = next;
    }
    cur.to_string()
}
