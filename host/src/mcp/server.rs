//! The rmcp `ServerHandler`: `tools/list` and `tools/call` over the registry, argument
//! validation before the component sees anything, and one fresh component instance per call.

use std::sync::Arc;
use std::time::Duration;

use rmcp::ServerHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ErrorData, Implementation, ListToolsResult, PaginatedRequestParams,
    RequestStateCodec, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::{Value, json};

use super::elicitation::{ElicitConfirmer, client_can_elicit};
use super::fairness::Fairness;
use super::page_confirm::{PageRound, UrlElicit};
use super::registry::ToolRegistry;
use super::results::{self, ToolError};
use super::stateless_confirm::{self, FirstRound};
use crate::approval_page::ApprovalPage;
use crate::audit::{self, AuditLog};
use crate::capabilities::{CallContext, CallState, Confirmer, CorrelationIds, Grants, StepReporter, ToolGrant};
use crate::component::ComponentRuntime;
use crate::mcp::progress::Progress;
use crate::oauth::{Scope, Scopes};
use crate::principal::Principal;
use crate::shutdown::Lifecycle;

/// Everything a call needs, shared by every session and call.
pub struct Shared {
    pub runtime: ComponentRuntime,
    pub registry: ToolRegistry,
    /// What each call's capabilities reach.
    pub grants: Grants,
    /// How long a blocking confirmation waits for the person.
    pub elicit_timeout: Duration,
    /// Seals the stateless confirmation state (`EQUINIX_MCP_STATE_KEY` or a random key).
    pub request_state: RequestStateCodec,
    /// Calls in flight, for a graceful shutdown.
    pub lifecycle: Lifecycle,
    /// Per-principal limits on calls and open confirmation forms.
    pub fairness: Arc<Fairness>,
    /// The approval page, when the operator configured one.
    pub approval_page: Option<Arc<ApprovalPage>>,
}

/// The MCP server; cheap to clone.
#[derive(Clone)]
pub struct McpServer {
    shared: Arc<Shared>,
}

impl McpServer {
    pub fn new(shared: Shared) -> Self {
        McpServer { shared: Arc::new(shared) }
    }

    pub fn shared(&self) -> &Shared {
        &self.shared
    }

    /// Runs one tool call end to end and returns the MCP result (tool errors included), or the
    /// input request of a stateless first round whose component asked the person. Every call
    /// leaves one access-log line at INFO and its metrics.
    pub async fn run_tool(
        &self,
        name: &str,
        arguments: Value,
        call: CallContext,
    ) -> Result<CallToolResponse, ErrorData> {
        let started = std::time::Instant::now();
        let principal = call.principal.clone();
        let ids = CorrelationIds::default();
        let result = self.run_tool_inner(name, arguments, call, ids.clone()).await;
        let elapsed = started.elapsed();
        let (outcome, kind) = results::outcome_of(&result);
        tracing::info!(
            target: "equinix_mcp::access",
            tool = %self.logged_name(name),
            principal = %principal,
            duration_ms = elapsed.as_millis() as u64,
            outcome,
            error_kind = kind.as_deref().unwrap_or(""),
            correlation_ids = %ids.joined(),
            "tool call"
        );
        // only served tools get a label: a client's made-up names cannot grow the series
        if self.shared.registry.get(name).is_some() {
            crate::metrics::metrics().tool_call(name, outcome, elapsed);
        }
        result
    }

    /// A tool name as logged: one the catalog serves, or a fixed placeholder (a client's made-up
    /// name never reaches a log line).
    fn logged_name<'a>(&'a self, name: &str) -> &'a str {
        self.shared.registry.get(name).map_or("(not served)", |t| t.tool.name.as_ref())
    }

    async fn run_tool_inner(
        &self,
        name: &str,
        arguments: Value,
        call: CallContext,
        ids: CorrelationIds,
    ) -> Result<CallToolResponse, ErrorData> {
        let Some(tool) = self.shared.registry.get(name) else {
            return Err(ErrorData::invalid_params(
                format!(
                    "unknown tool {:?}: it is not in the served toolsets ({})",
                    equinix_broker_contract::clip(name, 128),
                    self.toolsets_text()
                ),
                None,
            ));
        };
        if let Err(errors) = tool.check_arguments(&arguments) {
            let first = &errors[0];
            let problems: Vec<Value> = errors.iter().map(|e| json!({"path": e.path, "message": e.message})).collect();
            return Ok(ToolError::new(
                "invalid_arguments",
                format!("invalid argument at {}: {}", first.path, first.message),
            )
            .with("path", first.path.clone())
            .with("problems", problems)
            .with("next_step", tool.next_step(&errors))
            .for_tool(tool));
        }
        if call.cancel.is_cancelled() {
            let message = "the call was cancelled before it started; nothing was done";
            return Ok(ToolError::new("cancelled", message).for_tool(tool));
        }
        let _slot = match self.shared.fairness.begin_call(&call.principal) {
            Ok(permit) => permit,
            Err(why) => return Ok(ToolError::new("too_many_calls", format!("{why}; nothing was done")).for_tool(tool)),
        };
        // a mutating call's record may share the audit log's next sync with others under way
        let _writer = self.shared.grants.audit.as_ref().filter(|_| !tool.decl.read_only).map(AuditLog::writer);
        let (principal, confirmer) = (call.principal.clone(), call.confirmer.clone());
        let grant =
            ToolGrant { name: name.to_string(), may_ask: tool.decl.toolset == equinix_broker_contract::MUTATE_TOOLSET };
        let state = CallState::new(&self.shared.grants, call, grant, ids);
        let decisions = state.decisions.clone();
        let args_text = serde_json::to_string(&arguments).expect("a JSON value always serializes");
        let started = self.shared.grants.clock.now_ms();
        let outcome = self.shared.runtime.call(state, name, &args_text).await;
        if let Some(pending) = confirmer.page_pending() {
            if pending.stateless {
                // a 2026-07-28 round: the link goes out as a URL-mode input request
                let call = stateless_confirm::Call { principal: &principal, tool: name, arguments: &arguments };
                let result = stateless_confirm::page_input_required(&self.shared.request_state, &call, &pending)
                    .unwrap_or_else(|e| ToolError::new("component_failed", e).for_tool(tool));
                self.audit_first_round(name, &principal, started, decisions.texts()).await;
                return Ok(result);
            }
            // nobody has decided on the page yet: the agent shows the person the link
            let value = approval_pending(name, &pending);
            let decisions = decisions.texts();
            let call = Audited { tool: name, principal: &principal, started };
            let value = self.audit(true, call, value, false, decisions).await;
            let mut result = results::structured(value, false);
            if tool.check_output(result.structured_content.as_ref().expect("just set")).is_err() {
                result.structured_content = None;
            }
            return Ok(result.into());
        }
        if let Some(form) = confirmer.input_request() {
            // The component's own result is moot: the person has not answered yet.
            let call = stateless_confirm::Call { principal: &principal, tool: name, arguments: &arguments };
            let result = stateless_confirm::input_required(&self.shared.request_state, &call, &form)
                .unwrap_or_else(|e| ToolError::new("component_failed", e).for_tool(tool));
            self.audit_first_round(name, &principal, started, decisions.texts()).await;
            return Ok(result);
        }
        let (value, is_error) = match outcome {
            Ok(Ok(text)) => match results::component_result(tool, &text) {
                Ok(v) => (v, false),
                Err(e) => (e.into_value(), true),
            },
            Ok(Err(text)) => (results::component_json(&text).unwrap_or_else(ToolError::into_value), true),
            Err(trapped) => {
                crate::metrics::metrics().trap();
                let message = format!(
                    "{}; nothing further was done for this call, and the server keeps serving",
                    trapped.message
                );
                (ToolError::new(trapped.kind, message).into_value(), true)
            }
        };
        let decisions = decisions.texts();
        let audited = !tool.decl.read_only || !decisions.is_empty();
        let call = Audited { tool: name, principal: &principal, started };
        let value = self.audit(audited, call, value, is_error, decisions).await;
        Ok(results::for_tool(tool, value, is_error).into())
    }

    /// A first round judged by the policy: its decisions are recorded before the form or the
    /// link goes out.
    async fn audit_first_round(&self, tool: &str, principal: &Principal, started: u64, decisions: Vec<String>) {
        if !decisions.is_empty() {
            let first_round = json!({"input_required": true});
            self.audit(true, Audited { tool, principal, started }, first_round, false, decisions).await;
        }
    }

    /// Records a mutating call in the audit log (synced) before its result goes out. The write
    /// and fsync run on the blocking pool so they never stall other calls.
    async fn audit(
        &self,
        audited: bool,
        call: Audited<'_>,
        mut value: Value,
        is_error: bool,
        decisions: Vec<String>,
    ) -> Value {
        let Some(log) = self.shared.grants.audit.clone().filter(|_| audited) else {
            return value;
        };
        let mut entry = audit::entry(call.tool, call.started, self.shared.grants.clock.now_ms(), &value, is_error);
        entry["principal"] = json!(call.principal.as_str());
        let line = audit::line_with(&entry, "policy_decisions", &decisions);
        drop(entry);
        if let Err(e) = AuditLog::record_line(log, line).await {
            tracing::error!("could not write the audit log {e}");
            value["audit_warning"] = json!(format!("this outcome could not be written to the audit log {e}"));
        }
        value
    }

    fn toolsets_text(&self) -> String {
        self.shared.registry.enabled_toolsets().iter().cloned().collect::<Vec<_>>().join(", ")
    }
}

impl McpServer {
    /// A call from a client on the stateless protocol (2026-07-28): a first round asks through
    /// [`FirstRound`], a retry carries the sealed state and the person's answer.
    async fn call_stateless(
        &self,
        request: CallToolRequestParams,
        mut call: CallContext,
        wants_page: bool,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.to_string();
        let arguments = Value::Object(request.arguments.unwrap_or_default());
        let page = self.shared.approval_page.clone().filter(|_| wants_page);
        call.confirmer = match (&request.request_state, page) {
            (None, None) => Arc::new(FirstRound::default()),
            (None, Some(page)) => match PageRound::for_state(page, &call.principal, &name, None).await {
                Ok(round) => Arc::new(round),
                Err(why) => return Ok(store_unavailable(&why)),
            },
            (Some(state), page) => {
                let bound = stateless_confirm::Call { principal: &call.principal, tool: &name, arguments: &arguments };
                let sealed = match stateless_confirm::open(&self.shared.request_state, &bound, state) {
                    Ok(sealed) => sealed,
                    Err(refused) => return Ok((*refused).into()),
                };
                match (sealed.page.clone(), page.or_else(|| self.shared.approval_page.clone())) {
                    (Some(id), Some(page)) => match PageRound::for_state(page, &call.principal, &name, Some(&id)).await
                    {
                        Ok(round) => Arc::new(round),
                        Err(why) => return Ok(store_unavailable(&why)),
                    },
                    _ => Arc::new(stateless_confirm::answer(
                        sealed,
                        request.input_responses.as_ref(),
                        self.shared.grants.proposals.clone(),
                        self.shared.grants.clock.clone(),
                    )),
                }
            }
        };
        self.run_tool(&name, arguments, call).await
    }
}

impl McpServer {
    /// The approval page's confirmer for this call, when a page is configured, the tool may ask
    /// the person, and the client declared URL elicitation (the link goes through it) or no
    /// elicitation at all (the link goes in the result). A client with form elicitation keeps the
    /// form, and a stateless (2026-07-28) client its own round trip.
    async fn page_confirmer(
        &self,
        name: &str,
        request: &CallToolRequestParams,
        context: &RequestContext<RoleServer>,
        principal: &Principal,
    ) -> Result<Option<Arc<dyn Confirmer>>, String> {
        let Some(page) = &self.shared.approval_page else { return Ok(None) };
        if !self.asks(name) || context.protocol_version().is_some_and(|v| !v.has_initialize()) {
            return Ok(None);
        }
        if context.peer.supported_elicitation_modes().contains(&rmcp::service::ElicitationMode::Url) {
            return Ok(Some(Arc::new(UrlElicit {
                page: page.clone(),
                fairness: self.shared.fairness.clone(),
                peer: context.peer.clone(),
                timeout: self.shared.elicit_timeout,
                principal: principal.clone(),
                tool: name.to_string(),
                approver: Default::default(),
            })));
        }
        if client_can_elicit(&context.peer) {
            return Ok(None);
        }
        let arguments = Value::Object(request.arguments.clone().unwrap_or_default());
        let round = PageRound::for_call(page.clone(), principal, name, &arguments).await?;
        Ok(Some(Arc::new(round)))
    }

    /// Whether tool `name` may ask the person (the `mutate` toolset).
    fn asks(&self, name: &str) -> bool {
        self.shared.registry.get(name).is_some_and(|t| t.decl.toolset == equinix_broker_contract::MUTATE_TOOLSET)
    }
}

/// A call stopped because the proposal store (where the page's records live) did not answer.
fn store_unavailable(why: &str) -> CallToolResponse {
    ToolError::new("proposal_store_unavailable", format!("{why}; nothing was done")).result()
}

/// The result of a call whose question waits on the approval page.
fn approval_pending(tool: &str, pending: &crate::capabilities::PagePending) -> Value {
    json!({
        "confirm_token": pending.token,
        "executed": null,
        "request_sha256": pending.request_sha256,
        "human_confirmation": {
            "status": "approval_pending",
            "method": "page",
            "approval_url": pending.url,
            "expires_at": audit::rfc3339(pending.expires_at_ms),
        },
        "message": format!(
            "A person must approve this create on the approval page: show them approval_url. Nothing was sent and \
             nothing was used up. The link is valid until {}.",
            audit::rfc3339(pending.expires_at_ms)
        ),
        "next_step": format!(
            "show the person approval_url; once they approved or declined there, call {tool} again with the same \
             arguments to collect the decision"
        ),
    })
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("equinix-mcp", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "Equinix Fabric tools. Read-only tools look up metros, ports, profiles, connections, \
                 networks, service tokens and prices. Changes go only through fabric_propose_change \
                 (validated by a real Fabric dry run) and fabric_confirm_change (approved by the person \
                 at the client, never by the model).",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        // what the token's scopes allow, so an agent is not offered tools it would be refused
        let scopes = scopes_of(&context);
        let allowed = self.shared.registry.tools().filter(|t| scopes.allows(Scope::needed_by(&t.tool.name)));
        Ok(ListToolsResult::with_all_items(allowed.map(|t| t.tool.clone()).collect()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.shared.registry.get(name).map(|t| t.tool.clone())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.to_string();
        tracing::debug!(tool = %self.logged_name(&name), "tools/call");
        let Some(flight) = self.shared.lifecycle.begin(&context.ct) else {
            let message = "the server is shutting down and accepts no new calls; nothing was done. Retry once it (or \
                           another replica) is back";
            return Ok(ToolError::new("shutting_down", message).result());
        };
        let principal = principal_of(&context);
        let scopes = scopes_of(&context);
        if !scopes.allows(Scope::needed_by(&name)) {
            // the HTTP layer answers 403 first; this holds if a call reaches here another way
            let message = "the access token's scopes do not allow this tool; nothing was done";
            return Ok(ToolError::new("insufficient_scope", message).result());
        }
        let confirmer = match self.page_confirmer(&name, &request, &context, &principal).await {
            Ok(Some(page)) => page,
            Ok(None) => Arc::new(ElicitConfirmer {
                peer: context.peer.clone(),
                timeout: self.shared.elicit_timeout,
                fairness: self.shared.fairness.clone(),
                principal: principal.clone(),
            }),
            Err(why) => return Ok(store_unavailable(&why)),
        };
        let progress = context
            .meta
            .get_progress_token()
            .map(|t| Arc::new(Progress::new(context.peer.clone(), t)) as Arc<dyn StepReporter>);
        let call = CallContext { principal, scopes, confirmer, cancel: flight.cancel.clone(), progress };
        if context.protocol_version().is_some_and(|v| !v.has_initialize()) {
            // a 2026-07-28 client that declared URL elicitation is sent to the approval page
            let wants_page = self.asks(&name)
                && context.client_capabilities().and_then(|c| c.elicitation).is_some_and(|e| e.url.is_some());
            return self.call_stateless(request, call, wants_page).await;
        }
        let arguments = Value::Object(request.arguments.unwrap_or_default());
        self.run_tool(&name, arguments, call).await
    }
}

/// Who made the call an audit record is about, and when it started.
struct Audited<'a> {
    tool: &'a str,
    principal: &'a Principal,
    started: u64,
}

/// What the HTTP layer found the request's token grants; everything on stdio, for the local
/// principal and for a token-file token.
fn scopes_of(context: &RequestContext<RoleServer>) -> Scopes {
    context
        .extensions
        .get::<axum::http::request::Parts>()
        .and_then(|parts| parts.extensions.get::<crate::oauth::Access>())
        .map_or(Scopes::ALL, |access| access.scopes)
}

/// The principal the HTTP layer authenticated for this request; the local principal on stdio
/// and on unauthenticated loopback HTTP.
fn principal_of(context: &RequestContext<RoleServer>) -> Principal {
    context
        .extensions
        .get::<axum::http::request::Parts>()
        .and_then(|parts| parts.extensions.get::<Principal>())
        .cloned()
        .unwrap_or_default()
}
