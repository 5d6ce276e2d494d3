//! The Fabric simulator: a real HTTP server on loopback speaking the Equinix OAuth token
//! endpoint and the Fabric v4 endpoints this project calls, with spec-shaped error arrays,
//! seeded data, counters and knobs for latency and injected faults.
//!
//! It runs in-process behind `serve --fabric-sim` (the default way to try the server without
//! credentials) and standalone as `equinix-mcp fabric-sim --listen ADDR`. Its `/_sim/*` routes
//! (stats, faults, knobs) exist for tests and demos; real Fabric has nothing like them.

mod estate;
mod prices;
mod search;
mod seed;

use std::collections::{HashMap, VecDeque};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::capabilities::Clock;
use estate::{Estate, Kind};
pub use seed::{MY_PORT_METROS, PORTS, PROFILES, PROJECT_ID};

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
    /// The clock `POST /_sim/clock` moves: the host's own, when the simulator runs in-process.
    pub clock: Option<Clock>,
    /// Hand out this bearer token instead of random ones (for secret-leak tests).
    pub fixed_token: Option<String>,
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            client_id: SIM_CLIENT_ID.into(),
            client_secret: SIM_CLIENT_SECRET.into(),
            token_timeout_secs: 3600,
            latency: Duration::ZERO,
            clock: None,
            fixed_token: None,
        }
    }
}

/// How many requests the simulator remembers, so a long-running simulator stays small.
pub const REMEMBERED_REQUESTS: usize = 10_000;

/// One request the simulator received (Fabric routes only; token requests are counted apart).
#[derive(Clone, Debug, Serialize)]
pub struct Seen {
    pub method: String,
    pub path: String,
    pub query: String,
    pub correlation_id: Option<String>,
    /// The JSON body of a POST, as sent (what the contract tests check against Fabric's models).
    pub body: Option<String>,
}

/// Counters a test reads to prove what reached "Fabric".
#[derive(Clone, Debug, Default, Serialize)]
pub struct Stats {
    pub token_requests: u64,
    pub token_rejections: u64,
    /// The most recent requests (at most [`REMEMBERED_REQUESTS`]); the counters never reset.
    pub requests: VecDeque<Seen>,
    /// Real creates received (not dry runs), by collection (`connections`, ...).
    pub creates: HashMap<String, u64>,
    /// Dry runs received, by collection.
    pub dry_runs: HashMap<String, u64>,
}

/// A fault to inject into the next matching requests.
#[derive(Clone, Debug, Deserialize, Serialize)]
pub struct Fault {
    /// `"GET /fabric/v4/metros"`, `"POST /fabric/v4/connections"` (real creates only),
    /// `"POST /fabric/v4/connections?dryRun=true"`, or `"*"`.
    pub route: String,
    /// HTTP status to answer with (mode `respond`).
    #[serde(default = "five_hundred")]
    pub status: u16,
    /// Raw body to answer with; a Fabric-style error array when absent.
    #[serde(default)]
    pub body: Option<String>,
    /// How many matching requests it applies to.
    #[serde(default = "one")]
    pub times: u32,
    /// `respond` (default): answer `status`/`body` instead of processing. `drop`: process the
    /// request (a create persists) and then break the connection mid-answer. `stall`: wait
    /// `stall_ms`, then process normally.
    #[serde(default)]
    pub mode: FaultMode,
    #[serde(default)]
    pub stall_ms: u64,
    /// `Retry-After` seconds to send with a `respond` fault.
    #[serde(default)]
    pub retry_after: Option<u64>,
}

#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum FaultMode {
    #[default]
    Respond,
    Drop,
    Stall,
}

impl Fault {
    /// A plain `respond` fault.
    pub fn status(route: &str, status: u16) -> Fault {
        Fault {
            route: route.into(),
            status,
            body: None,
            times: 1,
            mode: FaultMode::Respond,
            stall_ms: 0,
            retry_after: None,
        }
    }
}

fn one() -> u32 {
    1
}

fn five_hundred() -> u16 {
    500
}

struct Inner {
    config: SimConfig,
    tokens: HashMap<String, Instant>,
    stats: Stats,
    faults: VecDeque<Fault>,
    estate: Estate,
}

#[derive(Clone)]
struct Sim {
    inner: Arc<Mutex<Inner>>,
}

/// A running simulator.
pub struct SimHandle {
    pub addr: SocketAddr,
    sim: Sim,
    app: Router,
    task: tokio::task::JoinHandle<()>,
}

impl SimHandle {
    /// `http://127.0.0.1:PORT`, the value for `EQUINIX_API_ENDPOINT`.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The simulator's routes, for a Fabric client in this process to call without a socket.
    pub(crate) fn router(&self) -> Router {
        self.app.clone()
    }

    pub fn stats(&self) -> Stats {
        self.sim.inner.lock().unwrap().stats.clone()
    }

    pub fn inject(&self, fault: Fault) {
        self.sim.inner.lock().unwrap().faults.push_back(fault);
    }

    /// Forgets every issued token, as if they all expired at once.
    pub fn expire_tokens(&self) {
        self.sim.inner.lock().unwrap().tokens.clear();
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
            estate: Estate::seeded(),
        })),
    };
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let addr = listener.local_addr()?;
    let app = router(sim.clone());
    let served = app.clone();
    let task = tokio::spawn(async move {
        if let Err(e) = axum::serve(listener, served).await {
            tracing::error!("fabric simulator stopped: {e}");
        }
    });
    Ok(SimHandle { addr, sim, app, task })
}

fn router(sim: Sim) -> Router {
    Router::new()
        .route("/oauth2/v1/token", post(token))
        .route("/_sim/stats", get(admin_stats))
        .route("/_sim/faults", post(admin_fault))
        .route("/_sim/clock", post(admin_clock))
        .route("/_sim/latency", post(admin_latency))
        .fallback(fabric)
        .with_state(sim)
}

/// A Fabric-shaped error array.
pub fn error_array(code: &str, message: &str, property: Option<&str>) -> Value {
    error_with(code, message, property.map(|p| json!([{"property": p}])))
}

/// Fabric's error array with its `additionalInfo` as given.
pub fn error_with(code: &str, message: &str, additional_info: Option<Value>) -> Value {
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

/// A metros error as that API's contract words it (`MetroError`: its own codes and messages).
fn metro_fail(message: &str, property: Option<&str>, reason: &str) -> Fail {
    let info = match property {
        Some(p) => json!([{"property": p, "reason": reason}]),
        None => json!([{"reason": reason}]),
    };
    Fail(400, error_with("EQ-3036013", message, Some(info)))
}

fn json_response(status: StatusCode, body: Value) -> Response {
    bytes_response(status, json_bytes(&body))
}

fn bytes_response(status: StatusCode, body: Vec<u8>) -> Response {
    (status, [("content-type", "application/json")], body).into_response()
}

fn json_bytes(value: &impl Serialize) -> Vec<u8> {
    serde_json::to_vec(value).expect("simulator answers are plain JSON")
}

fn error_response(status: u16, code: &str, message: &str, property: Option<&str>) -> Response {
    fail(status, code, message, property).into_response()
}

/// A Fabric error answer (status and error array), small enough to pass around in a `Result`.
struct Fail(u16, Value);

impl IntoResponse for Fail {
    fn into_response(self) -> Response {
        json_response(StatusCode::from_u16(self.0).unwrap_or(StatusCode::BAD_REQUEST), self.1)
    }
}

fn fail(status: u16, code: &str, message: &str, property: Option<&str>) -> Fail {
    Fail(status, error_array(code, message, property))
}

#[derive(Deserialize)]
struct TokenRequest {
    grant_type: Option<String>,
    client_id: Option<String>,
    client_secret: Option<String>,
}

async fn token(State(sim): State<Sim>, headers: HeaderMap, body: Bytes) -> Response {
    let fault = {
        let mut inner = sim.inner.lock().unwrap();
        inner.stats.token_requests += 1;
        let i = inner.faults.iter().position(|f| f.route == "POST /oauth2/v1/token");
        i.and_then(|i| inner.faults.remove(i))
    };
    if let Some(f) = fault {
        tokio::time::sleep(Duration::from_millis(f.stall_ms)).await;
        if f.mode == FaultMode::Respond {
            return json_response(
                StatusCode::from_u16(f.status).unwrap_or(StatusCode::SERVICE_UNAVAILABLE),
                json!({"error_domain": "apps-fqa", "error_title": "Injected fault", "error_code": "S5000",
                       "developer_message": "Injected token endpoint fault", "error_message": "Injected token endpoint fault"}),
            );
        }
    }
    let mut inner = sim.inner.lock().unwrap();
    let is_json =
        headers.get("content-type").and_then(|v| v.to_str().ok()).is_some_and(|v| v.starts_with("application/json"));
    let parsed: Option<TokenRequest> = if is_json { serde_json::from_slice(&body).ok() } else { None };
    let ok = parsed.as_ref().is_some_and(|r| {
        r.grant_type.as_deref() == Some("client_credentials")
            && r.client_id.as_deref() == Some(inner.config.client_id.as_str())
            && r.client_secret.as_deref() == Some(inner.config.client_secret.as_str())
    });
    if !ok {
        // the token API's one declared error: 400 with Oauth2TokenErrorResponse (snake_case)
        inner.stats.token_rejections += 1;
        return json_response(
            StatusCode::BAD_REQUEST,
            json!({"error_domain": "apps-fqa", "error_title": "Login Failure", "error_code": "S1006",
                   "developer_message": "Invalid client credentials", "error_message": "Login Failure, please try again."}),
        );
    }
    let token = inner.config.fixed_token.clone().unwrap_or_else(|| format!("simtok-{}", uuid::Uuid::new_v4().simple()));
    let lifetime = inner.config.token_timeout_secs;
    inner.tokens.insert(token.clone(), Instant::now() + Duration::from_secs(lifetime));
    json_response(
        StatusCode::OK,
        json!({"access_token": token, "token_timeout": lifetime.to_string(), "user_name": "sim-user", "token_type": "Bearer"}),
    )
}

/// Whether the request asks for a dry run.
fn is_dry_run(uri: &Uri) -> bool {
    uri.query().unwrap_or("").split('&').any(|kv| kv.eq_ignore_ascii_case("dryRun=true"))
}

/// Records the request and applies latency, auth and injected faults. `Err` is the answer to
/// give; `Ok(true)` means "process it, then drop the connection".
async fn admit(sim: &Sim, method: &Method, uri: &Uri, headers: &HeaderMap, body: &Bytes) -> Result<bool, Response> {
    let (latency, fault) = {
        let mut inner = sim.inner.lock().unwrap();
        if inner.stats.requests.len() >= REMEMBERED_REQUESTS {
            inner.stats.requests.pop_front();
        }
        inner.stats.requests.push_back(Seen {
            method: method.to_string(),
            path: uri.path().to_string(),
            query: uri.query().unwrap_or("").to_string(),
            correlation_id: headers.get("x-correlation-id").and_then(|v| v.to_str().ok()).map(str::to_owned),
            body: (!body.is_empty() && body.len() <= 4 << 10).then(|| String::from_utf8_lossy(body).into_owned()),
        });
        let key = format!("{method} {}{}", uri.path(), if is_dry_run(uri) { "?dryRun=true" } else { "" });
        let fault = inner.faults.iter().position(|f| f.route == "*" || f.route == key).map(|i| {
            let fault = inner.faults[i].clone();
            if fault.times <= 1 {
                inner.faults.remove(i);
            } else {
                inner.faults[i].times -= 1;
            }
            fault
        });
        (inner.config.latency, fault)
    };
    if !latency.is_zero() {
        tokio::time::sleep(latency).await;
    }
    if let Some(f) = fault.as_ref().filter(|f| f.mode == FaultMode::Stall) {
        tokio::time::sleep(Duration::from_millis(f.stall_ms)).await;
    }
    let inner = sim.inner.lock().unwrap();
    let bearer = headers.get("authorization").and_then(|v| v.to_str().ok()).and_then(|v| v.strip_prefix("Bearer "));
    let valid = bearer.and_then(|t| inner.tokens.get(t)).is_some_and(|exp| Instant::now() < *exp);
    if !valid {
        if uri.path().starts_with("/fabric/v4/metros") {
            let info = json!([{"reason": "You are unauthorized to perform this operation"}]);
            return Err(json_response(StatusCode::UNAUTHORIZED, error_with("EQ-3036001", "Unauthorized", Some(info))));
        }
        return Err(error_response(401, "EQ-3000039", "User not found in request or invalid.", None));
    }
    match fault {
        Some(f) if f.mode == FaultMode::Respond => {
            let status = StatusCode::from_u16(f.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
            let body = f.body.unwrap_or_else(|| {
                error_array("EQ-3045004", &format!("Injected fault: HTTP {}", f.status), None).to_string()
            });
            let mut response = (status, [("content-type", "application/json")], body).into_response();
            if let Some(secs) = f.retry_after {
                response.headers_mut().insert("retry-after", secs.into());
            }
            Err(response)
        }
        Some(f) => Ok(f.mode == FaultMode::Drop),
        None => Ok(false),
    }
}

/// An answer whose body breaks off: the client sees the status line, then a dead connection.
fn broken_answer(status: StatusCode) -> Response {
    let stream = futures_util::stream::once(async {
        Err::<Bytes, std::io::Error>(std::io::Error::other("simulated connection drop"))
    });
    (status, [("content-type", "application/json")], Body::from_stream(stream)).into_response()
}

fn query_map(uri: &Uri) -> HashMap<String, String> {
    url_pairs(uri.query().unwrap_or(""))
}

fn url_pairs(q: &str) -> HashMap<String, String> {
    q.split('&')
        .filter(|kv| !kv.is_empty())
        .map(|kv| {
            let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
            (k.to_string(), v.replace('+', " "))
        })
        .collect()
}

/// Paging from query parameters; bad values are a 400 with Fabric's codes.
fn paging(q: &HashMap<String, String>) -> Result<(usize, usize), Fail> {
    let offset = match q.get("offset") {
        None => 0,
        Some(v) => v.parse::<usize>().map_err(|_| {
            metro_fail("Invalid Query Parameter", Some("offset"), "offset must be a non-negative integer")
        })?,
    };
    let limit = match q.get("limit") {
        None => 20,
        Some(v) => v.parse::<usize>().ok().filter(|n| (1..=100).contains(n)).ok_or_else(|| {
            metro_fail("Invalid Query Parameter", Some("limit"), "limit must be an integer from 1 to 100")
        })?,
    };
    Ok((offset, limit))
}

/// Paging from a search body's `pagination`.
fn body_paging(body: &Value) -> Result<(usize, usize), Fail> {
    let p = &body["pagination"];
    let offset = p["offset"].as_u64().unwrap_or(0) as usize;
    let limit = p["limit"].as_u64().unwrap_or(20) as usize;
    if !(1..=100).contains(&limit) {
        return Err(fail(400, "EQ-3142501", "Invalid input", Some("/pagination/limit")));
    }
    Ok((offset, limit))
}

/// One page of `items` as Fabric's JSON, written straight from the estate without copying it.
fn page<V: std::borrow::Borrow<Value>>(items: &[V], offset: usize, limit: usize) -> Vec<u8> {
    #[derive(Serialize)]
    struct Page<'a> {
        data: Vec<&'a Value>,
        pagination: Value,
    }
    let total = items.len();
    let data = items.iter().skip(offset).take(limit).map(|v| v.borrow()).collect();
    let mut pagination = json!({"offset": offset, "limit": limit, "total": total});
    if offset.saturating_add(limit) < total {
        pagination["next"] = json!(format!("?offset={}&limit={limit}", offset + limit));
    }
    json_bytes(&Page { data, pagination })
}

fn search(items: &[Value], body: &Value, endpoint: &search::Endpoint, required: bool) -> Result<Vec<u8>, Fail> {
    let (offset, limit) = body_paging(body)?;
    let refuse = |property: &str, reason: &str| {
        let info = json!([{"property": property, "reason": reason}]);
        Fail(400, error_with(endpoint.error_code, endpoint.error_message, Some(info)))
    };
    let filter = body.get("filter");
    if required && filter.is_none() {
        return Err(refuse("filter", "filter is required"));
    }
    if let Some(f) = filter {
        endpoint.check(f).map_err(|(property, reason)| refuse(&property, &reason))?;
    }
    let mut hits = Vec::new();
    for item in items {
        let keep = match filter {
            None => true,
            Some(f) => search::matches(item, f).map_err(|e| refuse("filter", &e))?,
        };
        if keep {
            hits.push(item);
        }
    }
    Ok(page(&hits, offset, limit))
}

/// `GET .../{id}`: the object with that uuid, or Fabric's 404.
fn by_uuid(items: &[Value], id: &str, what: &str) -> Result<(StatusCode, Vec<u8>), Fail> {
    estate::find_by_uuid(items, id).map(|v| (StatusCode::OK, json_bytes(v))).ok_or_else(|| not_found(what))
}

fn not_found(what: &str) -> Fail {
    fail(404, "EQ-3045811", &format!("{what} not found"), None)
}

/// Every Fabric v4 route the project uses.
async fn fabric(State(sim): State<Sim>, method: Method, uri: Uri, headers: HeaderMap, body: Bytes) -> Response {
    let drop_after = match admit(&sim, &method, &uri, &headers, &body).await {
        Ok(d) => d,
        Err(r) => return r,
    };
    let json_body: Value = if body.is_empty() {
        Value::Null
    } else {
        match serde_json::from_slice(&body) {
            Ok(v) => v,
            Err(e) => {
                return error_response(
                    400,
                    "EQ-3142501",
                    &format!("Invalid input: malformed JSON body: {e}"),
                    Some("body"),
                );
            }
        }
    };
    let q = query_map(&uri);
    let segments: Vec<&str> = uri.path().trim_start_matches('/').split('/').collect();
    let mut inner = sim.inner.lock().unwrap();
    let Inner { estate, stats, .. } = &mut *inner;
    let answer: Result<(StatusCode, Vec<u8>), Fail> = (|| {
        let ok = |body: Vec<u8>| Ok((StatusCode::OK, body));
        match (method.as_str(), segments.as_slice()) {
            ("GET", ["fabric", "v4", "metros"]) => {
                let (offset, limit) = paging(&q)?;
                let metros: Vec<&Value> = match q.get("presence").map(String::as_str) {
                    None => estate.metros.iter().collect(),
                    Some("MY_PORTS") => estate
                        .metros
                        .iter()
                        .filter(|m| m["code"].as_str().is_some_and(|c| MY_PORT_METROS.contains(&c)))
                        .collect(),
                    Some(_) => {
                        return Err(metro_fail(
                            "Invalid Query Parameter",
                            Some("presence"),
                            "Allowed value for presence is MY_PORTS",
                        ));
                    }
                };
                ok(page(&metros, offset, limit))
            }
            ("GET", ["fabric", "v4", "metros", code]) => estate.metros.iter().find(|m| m["code"] == *code).map_or_else(
                || {
                    Err(metro_fail(
                        "Invalid Path Parameter",
                        Some("pathparameter-metroCode"),
                        "Provide valid metro code",
                    ))
                },
                |m| ok(json_bytes(m)),
            ),
            ("POST", ["fabric", "v4", "ports", "search"]) => {
                ok(search(&estate.ports, &json_body, &search::PORTS, true)?)
            }
            ("GET", ["fabric", "v4", "ports", id]) => by_uuid(&estate.ports, id, "port"),
            ("GET", ["fabric", "v4", "ports", id, "linkProtocols"]) => {
                if estate.port(id).is_none() {
                    let info =
                        json!([{"property": "portUuid", "reason": "The uuid requested could not be found in system"}]);
                    return Err(Fail(400, error_with("EQ-3035202", "Unable to fetch port details", Some(info))));
                }
                let (offset, limit) = paging(&q)?;
                ok(page(&estate.link_protocols(id), offset, limit))
            }
            ("POST", ["fabric", "v4", "serviceProfiles", "search"]) => {
                ok(search(&estate.profiles, &json_body, &search::PROFILES, false)?)
            }
            ("GET", ["fabric", "v4", "serviceProfiles", id]) => by_uuid(&estate.profiles, id, "service profile"),
            ("POST", ["fabric", "v4", "connections", "search"]) => {
                ok(search(&estate.connections, &json_body, &search::CONNECTIONS, false)?)
            }
            ("GET", ["fabric", "v4", "connections", id]) => by_uuid(&estate.connections, id, "connection"),
            ("POST", ["fabric", "v4", "networks", "search"]) => {
                ok(search(&estate.networks, &json_body, &search::NETWORKS, false)?)
            }
            ("GET", ["fabric", "v4", "networks", id]) => by_uuid(&estate.networks, id, "network"),
            ("POST", ["fabric", "v4", "serviceTokens", "search"]) => {
                ok(search(&estate.service_tokens, &json_body, &search::SERVICE_TOKENS, false)?)
            }
            ("GET", ["fabric", "v4", "serviceTokens", id]) => by_uuid(&estate.service_tokens, id, "service token"),
            ("POST", ["fabric", "v4", "prices", "search"]) => match prices::search(&json_body) {
                Ok(rows) => {
                    let n = rows.len();
                    ok(page(&rows, 0, n.max(1)))
                }
                Err(e) => Err(Fail(
                    400,
                    json!([{"errorCode": "EQ-3038010", "errorMessage": "Validation failure",
                            "additionalInfo": [{"property": "/filter", "reason": e}]}]),
                )),
            },
            ("POST", ["fabric", "v4", collection]) => {
                let Some(kind) = [Kind::Connection, Kind::Network, Kind::ServiceToken]
                    .into_iter()
                    .find(|k| k.collection() == *collection)
                else {
                    return Err(not_found("resource"));
                };
                let dry_run = is_dry_run(&uri);
                if let Err(estate::Refused(status, errors)) = estate.validate(kind, &json_body, dry_run) {
                    return Err(Fail(status, errors));
                }
                let counter = if dry_run { &mut stats.dry_runs } else { &mut stats.creates };
                *counter.entry(kind.collection().to_string()).or_default() += 1;
                if dry_run {
                    // networks file their dry-run answer under 201 in the spec; the others under 200
                    let status = if kind == Kind::Network { StatusCode::CREATED } else { StatusCode::OK };
                    Ok((status, json_bytes(&estate.echo(&json_body))))
                } else {
                    Ok((StatusCode::CREATED, json_bytes(&estate.persist(kind, &json_body))))
                }
            }
            (m, _) if m != "GET" && m != "POST" => Err(fail(405, "EQ-3142569", "Method not supported", None)),
            _ => Err(fail(404, "EQ-3045811", "Resource not found", Some(uri.path()))),
        }
    })();
    drop(inner);
    match answer {
        Ok((status, _)) if drop_after => broken_answer(status),
        Ok((status, body)) => bytes_response(status, body),
        Err(r) if drop_after => broken_answer(StatusCode::from_u16(r.0).unwrap_or(StatusCode::BAD_REQUEST)),
        Err(r) => r.into_response(),
    }
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

#[derive(Deserialize)]
struct Advance {
    advance_ms: u64,
}

async fn admin_clock(State(sim): State<Sim>, body: Bytes) -> Response {
    let inner = sim.inner.lock().unwrap();
    let Some(clock) = &inner.config.clock else {
        return json_response(StatusCode::CONFLICT, json!({"error": "this simulator shares no clock with a server"}));
    };
    match serde_json::from_slice::<Advance>(&body) {
        Ok(a) => {
            clock.advance(a.advance_ms);
            json_response(StatusCode::OK, json!({"now_ms": clock.now_ms()}))
        }
        Err(e) => {
            json_response(StatusCode::BAD_REQUEST, json!({"error": format!("expected {{\"advance_ms\": N}}: {e}")}))
        }
    }
}

#[derive(Deserialize)]
struct Latency {
    ms: u64,
}

async fn admin_latency(State(sim): State<Sim>, body: Bytes) -> Response {
    match serde_json::from_slice::<Latency>(&body) {
        Ok(l) => {
            sim.inner.lock().unwrap().config.latency = Duration::from_millis(l.ms);
            json_response(StatusCode::OK, json!({"latency_ms": l.ms}))
        }
        Err(e) => json_response(StatusCode::BAD_REQUEST, json!({"error": format!("expected {{\"ms\": N}}: {e}")})),
    }
}
