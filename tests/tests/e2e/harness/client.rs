//! The MCP test client (a real rmcp client that may show forms and records what it was asked)
//! and helpers over its results.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult,
    ElicitationAction, ErrorData, Implementation, ProgressNotificationParam, ProtocolVersion,
};
use rmcp::service::{NotificationContext, RequestContext, RoleClient, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientHandler, ClientLifecycleMode, ClientServiceExt, ServiceExt};
use serde_json::{Value, json};

use super::sim::advance_clock;

/// A connected client.
pub type Client = RunningService<RoleClient, TestClient>;

/// How the test client answers an elicitation.
#[derive(Clone, Debug)]
pub enum Answer {
    Accept {
        confirm: bool,
    },
    Decline,
    Cancel,
    /// Never answers (the server's timeout or a cancellation ends it).
    Never,
    /// Answers with a JSON-RPC error.
    Error,
    /// Accepts with `confirm = true` once the test adds a permit (a person who reads the form
    /// until the test has seen what it waits for).
    AcceptWhen(Arc<tokio::sync::Semaphore>),
}

/// An rmcp client that may declare form elicitation and records the prompts it was shown.
#[derive(Clone)]
pub struct TestClient {
    pub answer: Option<Answer>,
    pub prompts: Arc<Mutex<Vec<ElicitRequestParams>>>,
    /// Moves the embedded simulator's clock (`POST {url}/_sim/clock`) before answering.
    pub advance_before_answer: Arc<Mutex<Option<(String, u64)>>>,
    /// Messages of the progress notifications received.
    pub progress: Arc<Mutex<Vec<String>>>,
    /// Declares URL elicitation only (MCP 2025-11-25) and accepts every link, recording it.
    pub url_mode: bool,
    /// The `elicitationId`s of the `notifications/elicitation/complete` received.
    pub completed: Arc<Mutex<Vec<String>>>,
    /// Each link of a URL elicitation, as it arrives (the test plays the person).
    pub links: Option<tokio::sync::mpsc::UnboundedSender<(String, String)>>,
    /// When set, a URL elicitation is answered only once this is notified (a person who says
    /// "done" in the client after deciding on the page: a 2026-07-28 client retries then).
    pub done: Option<Arc<tokio::sync::Semaphore>>,
}

impl TestClient {
    pub fn plain() -> Self {
        TestClient {
            answer: None,
            prompts: Default::default(),
            advance_before_answer: Default::default(),
            progress: Default::default(),
            url_mode: false,
            completed: Default::default(),
            links: None,
            done: None,
        }
    }

    /// A client that declares URL elicitation only: each link and its elicitation id go to the
    /// returned receiver, and the client answers accept (the person opens the link).
    pub fn following_links() -> (Self, tokio::sync::mpsc::UnboundedReceiver<(String, String)>) {
        let (send, receive) = tokio::sync::mpsc::unbounded_channel();
        let client = TestClient { url_mode: true, links: Some(send), ..TestClient::accepting() };
        (client, receive)
    }

    /// A client that declares form elicitation and leaves every 2026-07-28 round to the test,
    /// which answers each by hand (`rounds.rs`); it never answers a form request itself.
    pub fn by_hand() -> Self {
        TestClient::answering(Answer::Never)
    }

    pub fn answering(answer: Answer) -> Self {
        TestClient { answer: Some(answer), ..TestClient::plain() }
    }

    /// Accepts every confirmation, ticking the confirm box.
    pub fn accepting() -> Self {
        TestClient::answering(Answer::Accept { confirm: true })
    }

    /// The text of every prompt shown so far.
    pub fn prompt_texts(&self) -> Vec<String> {
        self.prompts
            .lock()
            .unwrap()
            .iter()
            .map(|p| match p {
                ElicitRequestParams::FormElicitationParams { message, .. } => message.clone(),
                other => format!("{other:?}"),
            })
            .collect()
    }
}

impl ClientHandler for TestClient {
    fn get_info(&self) -> ClientConfig {
        let caps = if self.url_mode {
            let mut caps = ClientCapabilities::default();
            caps.elicitation =
                Some(rmcp::model::ElicitationCapability::new().with_url(rmcp::model::UrlElicitationCapability::new()));
            caps
        } else if self.answer.is_some() {
            ClientCapabilities::builder().enable_elicitation().build()
        } else {
            ClientCapabilities::default()
        };
        ClientConfig::new(caps, Implementation::new("equinix-mcp-tests", "0"))
    }

    async fn on_custom_notification(
        &self,
        notification: rmcp::model::CustomNotification,
        _context: NotificationContext<RoleClient>,
    ) {
        if notification.method == "notifications/elicitation/complete" {
            let id = notification.params.as_ref().and_then(|p| p["elicitationId"].as_str()).unwrap_or_default();
            self.completed.lock().unwrap().push(id.to_string());
        }
    }

    async fn on_progress(&self, params: ProgressNotificationParam, _context: NotificationContext<RoleClient>) {
        self.progress.lock().unwrap().push(params.message.unwrap_or_default());
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        if let ElicitRequestParams::UrlElicitationParams { url, elicitation_id, .. } = &request
            && let Some(links) = &self.links
        {
            let _ = links.send((url.clone(), elicitation_id.clone()));
            self.prompts.lock().unwrap().push(request);
            if let Some(done) = &self.done {
                done.acquire().await.expect("never closed").forget();
            }
            return Ok(ElicitResult::new(ElicitationAction::Accept));
        }
        self.prompts.lock().unwrap().push(request);
        let advance = self.advance_before_answer.lock().unwrap().clone();
        if let Some((url, ms)) = advance {
            advance_clock(&url, ms).await;
        }
        match self.answer.clone().unwrap_or(Answer::Decline) {
            Answer::Accept { confirm } => {
                Ok(ElicitResult::new(ElicitationAction::Accept).with_content(json!({ "confirm": confirm })))
            }
            Answer::Decline => Ok(ElicitResult::new(ElicitationAction::Decline)),
            Answer::Cancel => Ok(ElicitResult::new(ElicitationAction::Cancel)),
            Answer::Never => {
                // a person who never answers: not even when the client goes away
                let _ = &context;
                std::future::pending().await
            }
            Answer::Error => Err(ErrorData::internal_error("the client failed to show the form", None)),
            Answer::AcceptWhen(read) => {
                let _ = read.acquire().await;
                Ok(ElicitResult::new(ElicitationAction::Accept).with_content(json!({ "confirm": true })))
            }
        }
    }
}

/// `tools/call` on any connected client (the client runs any 2026-07-28 input rounds itself).
pub async fn call_on(client: &Client, tool: &str, args: Value) -> CallToolResult {
    let Value::Object(map) = args else { panic!("arguments must be an object") };
    let params = CallToolRequestParams::new(tool.to_string()).with_arguments(map);
    tokio::time::timeout(Duration::from_secs(60), client.call_tool(params))
        .await
        .expect("tools/call timed out")
        .expect("tools/call failed at the protocol level")
}

/// A `fabric_confirm_change` request for `token` (a string or a JSON value holding one).
pub fn confirm_request(token: impl Into<Value>) -> CallToolRequestParams {
    let token: Value = token.into();
    CallToolRequestParams::new("fabric_confirm_change")
        .with_arguments(json!({ "confirm_token": token }).as_object().unwrap().clone())
}

/// The structured content of a result, which every tool of ours returns.
/// The result of a call that is expected to be complete (not an input request).
pub fn complete(r: rmcp::model::CallToolResponse) -> CallToolResult {
    match r {
        rmcp::model::CallToolResponse::Complete(r) => r,
        other => panic!("expected a complete result, got {other:?}"),
    }
}

pub fn structured(r: &CallToolResult) -> Value {
    r.structured_content.clone().expect("the result has structured content")
}

/// The rows of a page under `key` as objects (a page carries `columns`, rows of values, and the
/// values every row shares under `same`).
pub fn rows(page: &Value, key: &str) -> Vec<Value> {
    let columns: Vec<&str> = page["columns"]
        .as_array()
        .unwrap_or_else(|| panic!("a page has columns: {page}"))
        .iter()
        .map(|c| c.as_str().expect("a column is a name"))
        .collect();
    let items = page[key].as_array().unwrap_or_else(|| panic!("a page has {key}: {page}"));
    items
        .iter()
        .map(|row| {
            let row = row.as_array().expect("a row is an array");
            assert_eq!(row.len(), columns.len(), "a row has one value per column");
            let pairs = columns.iter().zip(row).filter(|(_, v)| !v.is_null());
            let mut object: serde_json::Map<String, Value> = pairs.map(|(c, v)| (c.to_string(), v.clone())).collect();
            if let Some(same) = page.get("same").and_then(Value::as_object) {
                object.extend(same.clone());
            }
            Value::Object(object)
        })
        .collect()
}

pub fn is_error(r: &CallToolResult) -> bool {
    r.is_error == Some(true)
}

/// A 2025-06-18 `initialize` request (id 1, no capabilities) from client `name` `version`, for
/// tests that speak raw HTTP.
pub fn initialize_message(name: &str, version: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": name, "version": version}}})
}

/// Connects `client` to an HTTP server at `url`, with a bearer token when given, on the
/// initialize lifecycle or (`stateless`) the 2026-07-28 discover lifecycle.
pub async fn connect(url: &str, token: Option<&str>, client: TestClient, stateless: bool) -> anyhow::Result<Client> {
    equinix_mcp::install_crypto_provider();
    let mut config = StreamableHttpClientTransportConfig::with_uri(url.to_string());
    if let Some(token) = token {
        config = config.auth_header(token.to_string());
    }
    let transport = StreamableHttpClientTransport::from_config(config);
    let service = if stateless {
        let lifecycle = ClientLifecycleMode::Discover { preferred_versions: vec![ProtocolVersion::V_2026_07_28] };
        tokio::time::timeout(Duration::from_secs(30), client.serve_with_lifecycle(transport, lifecycle)).await??
    } else {
        tokio::time::timeout(Duration::from_secs(30), client.serve(transport)).await??
    };
    Ok(service)
}

/// `n` confirms of `token` at once, alternating between `a` and `b` (two replicas): how many said
/// `executed`; every other one must have said `replayed_token`.
pub async fn confirm_at_once(a: &Client, b: &Client, token: &Value, n: usize) -> usize {
    let calls: Vec<_> = (0..n)
        .map(|i| {
            let peer = if i % 2 == 0 { a.peer().clone() } else { b.peer().clone() };
            let params = confirm_request(token.clone());
            tokio::spawn(async move { peer.call_tool(params).await.unwrap() })
        })
        .collect();
    let mut executed = 0;
    for c in calls {
        let r = c.await.unwrap();
        if structured(&r)["executed"] == true {
            executed += 1;
        } else {
            assert_eq!(structured(&r)["error"]["kind"], "replayed_token", "{:?}", r.structured_content);
        }
    }
    executed
}
