//! The Fabric simulator: a real HTTP server on loopback speaking the Equinix OAuth token
//! endpoint and the Fabric v4 endpoints this project calls, with spec-shaped error arrays,
//! seeded data, counters and knobs for latency and injected faults.
//!
//! It runs in-process behind `serve --fabric-sim` (the default way to try the server without
//! credentials) and standalone as `equinix-mcp fabric-sim --listen ADDR`. Its `/_sim/*` routes
//! (stats, faults, knobs) exist for tests and demos; real Fabric has nothing like them.

mod seed;

use std::collections::{HashMap, VecDeque};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

pub use seed::{MY_PORT_METROS, PORTS, PROJECT_ID};

/// The metros every simulator serves, in order.
pub fn seeded_metros() -> Vec<Value> {
    seed::metros()
}

/// The simulator's fixed, obviously fake credentials.
pub const SIM_CLIENT_ID: &str = "sim-client-id";
pub const SIM_CLIENT_SECRET: &str = "sim-client-secret";

/// Knobs of a simulator instance.
#[derive(Clone, Debug)]
pub struct SimConfig {
    pub client_id: String,
    pub client_secret: String,
    /// `token_timeout` handed out with each token, in seconds.
    pub token_timeout_secs: u64,
    /// Added before every Fabric answer.
    pub latency: Duration,
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            client_id: SIM_CLIENT_ID.into(),
            client_secret: SIM_CLIENT_SECRET.into(),
            token_timeout_secs: 3600,
            latency: Duration::ZERO,
        }
    }
}

/// One request the simulator received (Fabric routes only; token requests are counted apart).
#[derive(Clone, Debug, Serialize)]
pub struct Seen {
    pub method: String,
    pub path: String,
    pub query: String,
    pub correlation_id: Option<String>,
}

/// Counters a test reads to prove what reached "Fabric".
#[derive(Clone, Debug, Default, Serialize)]
pub struct Stats {
    pub token_requests: u64,
    pub token_rejections: u64,
    pub requests: Vec<Seen>,
    /// Real creates received (not dry runs), by path.
    pub creates: HashMap<String, u64>,
}

/// A fault to inject into the next matching requests.
#[derive(Clone, Debug, Deserialize, Serialize)]
pub struct Fault {
    /// `"GET /fabric/v4/metros"`, a path prefix with method, or `"*"`.
    pub route: String,
    /// HTTP status to answer with.
    pub status: u16,
    /// Raw body to answer with; a Fabric-style error array when absent.
    #[serde(default)]
    pub body: Option<String>,
    /// How many matching requests it applies to.
    #[serde(default = "one")]
    pub times: u32,
}

fn one() -> u32 {
    1
}

struct Inner {
    config: SimConfig,
    tokens: HashMap<String, Instant>,
    stats: Stats,
    faults: VecDeque<Fault>,
}

#[derive(Clone)]
struct Sim {
    inner: Arc<Mutex<Inner>>,
    metros: Arc<Vec<Value>>,
}

/// A running simulator.
pub struct SimHandle {
    pub addr: SocketAddr,
    sim: Sim,
    task: tokio::task::JoinHandle<()>,
}

impl SimHandle {
    /// `http://127.0.0.1:PORT`, the value for `EQUINIX_API_ENDPOINT`.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn stats(&self) -> Stats {
        self.sim.inner.lock().unwrap().stats.clone()
    }

    pub fn inject(&self, fault: Fault) {
        self.sim.inner.lock().unwrap().faults.push_back(fault);
    }

    pub fn set_latency(&self, latency: Duration) {
        self.sim.inner.lock().unwrap().config.latency = latency;
    }
}

impl Drop for SimHandle {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Starts a simulator on `addr` (use port 0 for any free port) in the current tokio runtime.
pub async fn start(addr: SocketAddr, config: SimConfig) -> std::io::Result<SimHandle> {
    let sim = Sim {
        inner: Arc::new(Mutex::new(Inner {
            config,
            tokens: HashMap::new(),
            stats: Stats::default(),
            faults: VecDeque::new(),
        })),
        metros: Arc::new(seed::metros()),
    };
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let addr = listener.local_addr()?;
    let app = router(sim.clone());
    let task = tokio::spawn(async move {
        if let Err(e) = axum::serve(listener, app).await {
            tracing::error!("fabric simulator stopped: {e}");
        }
    });
    Ok(SimHandle { addr, sim, task })
}

fn router(sim: Sim) -> Router {
    Router::new()
        .route("/oauth2/v1/token", post(token))
        .route("/fabric/v4/metros", get(list_metros))
        .route("/_sim/stats", get(admin_stats))
        .route("/_sim/faults", post(admin_fault))
        .fallback(unknown_route)
        .with_state(sim)
}

/// A Fabric-shaped error array.
pub fn error_array(code: &str, message: &str, property: Option<&str>) -> Value {
    let mut e = json!({
        "errorCode": code,
        "errorMessage": message,
        "correlationId": uuid::Uuid::new_v4().to_string(),
    });
    if let Some(p) = property {
        e["additionalInfo"] = json!([{"property": p}]);
    }
    json!([e])
}

fn json_response(status: StatusCode, body: Value) -> Response {
    (status, [("content-type", "application/json")], body.to_string()).into_response()
}

#[derive(Deserialize)]
struct TokenRequest {
    grant_type: Option<String>,
    client_id: Option<String>,
    client_secret: Option<String>,
}

async fn token(State(sim): State<Sim>, headers: HeaderMap, body: Bytes) -> Response {
    let mut inner = sim.inner.lock().unwrap();
    inner.stats.token_requests += 1;
    let is_json =
        headers.get("content-type").and_then(|v| v.to_str().ok()).is_some_and(|v| v.starts_with("application/json"));
    let parsed: Option<TokenRequest> = if is_json { serde_json::from_slice(&body).ok() } else { None };
    let ok = parsed.as_ref().is_some_and(|r| {
        r.grant_type.as_deref() == Some("client_credentials")
            && r.client_id.as_deref() == Some(inner.config.client_id.as_str())
            && r.client_secret.as_deref() == Some(inner.config.client_secret.as_str())
    });
    if !ok {
        inner.stats.token_rejections += 1;
        return json_response(
            StatusCode::UNAUTHORIZED,
            json!({"errorDomain": "apps-fqa", "errorTitle": "Login Failure", "errorCode": "S1006",
                   "developerMessage": "Invalid client credentials", "errorMessage": "Login Failure, please try again."}),
        );
    }
    let token = format!("simtok-{}", uuid::Uuid::new_v4().simple());
    let lifetime = inner.config.token_timeout_secs;
    inner.tokens.insert(token.clone(), Instant::now() + Duration::from_secs(lifetime));
    json_response(
        StatusCode::OK,
        json!({"access_token": token, "token_timeout": lifetime.to_string(), "user_name": "sim-user", "token_type": "Bearer"}),
    )
}

/// Records the request, applies latency, auth and injected faults. `Err` is the answer to give.
async fn admit(sim: &Sim, method: &Method, uri: &Uri, headers: &HeaderMap) -> Result<(), Response> {
    let latency = {
        let mut inner = sim.inner.lock().unwrap();
        inner.stats.requests.push(Seen {
            method: method.to_string(),
            path: uri.path().to_string(),
            query: uri.query().unwrap_or("").to_string(),
            correlation_id: headers.get("x-correlation-id").and_then(|v| v.to_str().ok()).map(str::to_owned),
        });
        inner.config.latency
    };
    if !latency.is_zero() {
        tokio::time::sleep(latency).await;
    }
    let mut inner = sim.inner.lock().unwrap();
    let bearer = headers.get("authorization").and_then(|v| v.to_str().ok()).and_then(|v| v.strip_prefix("Bearer "));
    let valid = bearer.and_then(|t| inner.tokens.get(t)).is_some_and(|exp| Instant::now() < *exp);
    if !valid {
        return Err(json_response(
            StatusCode::UNAUTHORIZED,
            error_array("EQ-3000039", "User not found in request or invalid.", None),
        ));
    }
    let key = format!("{} {}", method, uri.path());
    if let Some(i) = inner.faults.iter().position(|f| f.route == "*" || key.starts_with(&f.route)) {
        let fault = inner.faults[i].clone();
        if fault.times <= 1 {
            inner.faults.remove(i);
        } else {
            inner.faults[i].times -= 1;
        }
        let status = StatusCode::from_u16(fault.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let body = fault.body.unwrap_or_else(|| {
            error_array("EQ-3045004", &format!("Injected fault: HTTP {}", fault.status), None).to_string()
        });
        return Err((status, [("content-type", "application/json")], body).into_response());
    }
    Ok(())
}

/// A 400 with a Fabric error array, small enough to pass around in a `Result`.
struct BadRequest(Value);

impl IntoResponse for BadRequest {
    fn into_response(self) -> Response {
        json_response(StatusCode::BAD_REQUEST, self.0)
    }
}

/// Paging parameters as Fabric reads them; bad values are a 400 with Fabric's codes.
fn paging(q: &HashMap<String, String>) -> Result<(usize, usize), BadRequest> {
    let num = |k: &str, default: usize, max: usize| -> Result<usize, BadRequest> {
        match q.get(k) {
            None => Ok(default),
            Some(v) => v
                .parse::<usize>()
                .ok()
                .filter(|n| *n <= max)
                .ok_or_else(|| BadRequest(error_array("EQ-3036013", &format!("Invalid {k}"), Some(k)))),
        }
    };
    let offset = num("offset", 0, 1_000_000)?;
    let limit = num("limit", 20, 100)?;
    if limit == 0 {
        return Err(BadRequest(error_array("EQ-3036013", "Invalid limit", Some("limit"))));
    }
    Ok((offset, limit))
}

fn page(items: Vec<Value>, offset: usize, limit: usize) -> Value {
    let total = items.len();
    let data: Vec<Value> = items.into_iter().skip(offset).take(limit).collect();
    let mut pagination = json!({"offset": offset, "limit": limit, "total": total});
    if offset + limit < total {
        pagination["next"] = json!(format!("?offset={}&limit={limit}", offset + limit));
    }
    json!({"pagination": pagination, "data": data})
}

async fn list_metros(
    State(sim): State<Sim>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    if let Err(r) = admit(&sim, &method, &uri, &headers).await {
        return r;
    }
    let (offset, limit) = match paging(&q) {
        Ok(p) => p,
        Err(r) => return r.into_response(),
    };
    let metros: Vec<Value> = match q.get("presence").map(String::as_str) {
        None => sim.metros.to_vec(),
        Some("MY_PORTS") => sim
            .metros
            .iter()
            .filter(|m| m["code"].as_str().is_some_and(|c| MY_PORT_METROS.contains(&c)))
            .cloned()
            .collect(),
        Some(_) => {
            return json_response(
                StatusCode::BAD_REQUEST,
                error_array("EQ-3036001", "Invalid presence", Some("presence")),
            );
        }
    };
    json_response(StatusCode::OK, page(metros, offset, limit))
}

async fn unknown_route(State(sim): State<Sim>, method: Method, uri: Uri, headers: HeaderMap) -> Response {
    if let Err(r) = admit(&sim, &method, &uri, &headers).await {
        return r;
    }
    json_response(StatusCode::NOT_FOUND, error_array("EQ-3045811", "Resource not found", Some(uri.path())))
}

async fn admin_stats(State(sim): State<Sim>) -> Response {
    json_response(StatusCode::OK, serde_json::to_value(&sim.inner.lock().unwrap().stats).unwrap())
}

async fn admin_fault(State(sim): State<Sim>, body: Bytes) -> Response {
    match serde_json::from_slice::<Fault>(&body) {
        Ok(f) => {
            sim.inner.lock().unwrap().faults.push_back(f);
            json_response(StatusCode::OK, json!({"queued": true}))
        }
        Err(e) => json_response(StatusCode::BAD_REQUEST, json!({"error": format!("bad fault: {e}")})),
    }
}
