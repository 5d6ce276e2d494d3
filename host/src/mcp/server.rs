//! The rmcp `ServerHandler`: `tools/list` and `tools/call` over the registry, argument
//! validation before the component sees anything, and one fresh component instance per call.

use std::sync::Arc;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use equinix_broker_contract::answers::{Confirmed, Proposed};
use rmcp::ServerHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ErrorData, Implementation, ListToolsResult, PaginatedRequestParams,
    ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::{Value, json};

use super::reach;
use super::results::{self, ToolError};
pub(crate) use super::shared::Shared;

use crate::approval::{self, CallKey, Road};
use crate::audit::events::{Call, PolicyDecision};
use crate::audit::{self, AuditLog, Record};
use crate::capabilities::{Awaiting, CallContext, CallState, CorrelationIds, PagePending, StepReporter, ToolGrant};
use crate::mcp::progress::Progress;
use crate::oauth::{Scope, Scopes};
use crate::principal::Principal;

/// The MCP server; cheap to clone.
#[derive(Clone)]
pub struct McpServer {
    shared: Arc<Shared>,
}

impl McpServer {
    pub(crate) fn new(shared: Shared) -> Self {
        McpServer { shared: Arc::new(shared) }
    }

    pub fn shared(&self) -> &Shared {
        &self.shared
    }

    /// Runs one tool call end to end and returns the MCP result (tool errors included). Every
    /// call leaves one access-log line at INFO and its metrics.
    pub async fn run_tool(
        &self,
        name: &str,
        arguments: Value,
        call: CallContext,
    ) -> Result<CallToolResponse, ErrorData> {
        self.run_on_road(name, arguments, call, Road::NotAsked).await
    }

    /// [`McpServer::run_tool`] of a call whose question takes `road`: the result, or what the
    /// question waits for (a stateless round's input request, or the approval page's link).
    async fn run_on_road(
        &self,
        name: &str,
        arguments: Value,
        call: CallContext,
        road: Road,
    ) -> Result<CallToolResponse, ErrorData> {
        let started = std::time::Instant::now();
        let principal = call.principal.clone();
        let ids = CorrelationIds::default();
        let result = self.run_tool_inner(name, arguments, call, ids.clone(), road).await;
        self.access_line(name, &principal, started.elapsed(), result.as_ref(), &ids.joined());
        result
    }

    /// The call's one access-log line at INFO and its count.
    fn access_line(
        &self,
        name: &str,
        principal: &Principal,
        elapsed: std::time::Duration,
        result: Result<&CallToolResponse, &ErrorData>,
        correlation_ids: &str,
    ) {
        let (outcome, kind) = results::outcome_of(result);
        tracing::info!(
            target: "equinix_mcp::access",
            tool = %self.logged_name(name),
            principal = %principal,
            duration_ms = elapsed.as_millis() as u64,
            outcome,
            error_kind = kind.as_deref().unwrap_or(""),
            correlation_ids,
            "tool call"
        );
        // only served tools get a label: a client's made-up names cannot grow the series
        if self.shared.registry.get(name).is_some() {
            crate::metrics::metrics().tool_call(name, outcome, elapsed);
        }
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
        road: Road,
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
        let principal = call.principal.clone();
        let grant =
            ToolGrant { name: name.to_string(), may_ask: tool.decl.toolset == equinix_broker_contract::MUTATE_TOOLSET };
        let state = CallState::new(&self.shared.grants, call, grant, ids);
        let args_text = serde_json::to_string(&arguments).expect("a JSON value always serializes");
        let started = self.shared.grants.clock.now_ms();
        let called = self.shared.runtime.call(state, name, &args_text).await;
        let audited = Audited { tool: name, principal: &principal, started };
        if let Some(awaiting) = called.ending.awaiting {
            let key = || CallKey::new(&principal, name, &arguments);
            let decisions = called.ending.decisions;
            return Ok(match (awaiting, road) {
                // a 2026-07-28 round: the form, or the page's link, goes out as an input request
                (Awaiting::Input(form), _) => {
                    let result = reach::stateless::input_required(&self.shared.request_state, &key(), &form);
                    self.audit_first_round(audited, decisions).await;
                    result.unwrap_or_else(|e| ToolError::new("component_failed", e.to_string()).for_tool(tool))
                }
                (Awaiting::Page(pending), Road::RoundTrip(_)) => {
                    crate::metrics::metrics().confirmation("input_required");
                    let result = reach::stateless::page_input_required(&self.shared.request_state, &key(), &pending);
                    self.audit_first_round(audited, decisions).await;
                    result.unwrap_or_else(|e| ToolError::new("component_failed", e.to_string()).for_tool(tool))
                }
                // nobody has decided on the page yet: the agent shows the person the link
                (Awaiting::Page(pending), _) => {
                    crate::metrics::metrics().confirmation("approval_pending");
                    let value = self.audit(true, audited, approval_pending(name, &pending), false, decisions).await;
                    let mut result = results::structured(value, false);
                    if tool.check_output(result.structured_content.as_ref().expect("just set")).is_err() {
                        result.structured_content = None;
                    }
                    result.into()
                }
            });
        }
        let (value, is_error) = match called.result {
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
        if name == equinix_broker_contract::PROPOSE_TOOL
            && !is_error
            && let (Some(proposed), Some(reason)) = (
                Proposed::read(&value),
                arguments.get(equinix_broker_contract::AGENT_REASON_ARG).and_then(Value::as_str),
            )
        {
            let (store, now) = (&self.shared.grants.proposals, self.shared.grants.clock.now_ms());
            let token = proposed.confirm_token;
            crate::approval_page::people::remember_agent_reason(store, principal.as_str(), token, reason, now).await;
        }
        let value = match &called.ending.page_said {
            Some(said) => with_page_decision(value, said, self.shared.grants.clock.now_ms()),
            None => value,
        };
        let decisions = called.ending.decisions;
        let logged = !tool.decl.read_only || !decisions.is_empty();
        let value = self.audit(logged, audited, value, is_error, decisions).await;
        Ok(results::for_tool(tool, value, is_error).into())
    }

    /// A first round judged by the policy: its decisions are recorded before the form or the
    /// link goes out.
    async fn audit_first_round(&self, call: Audited<'_>, decisions: Vec<PolicyDecision>) {
        if !decisions.is_empty() {
            let first_round = json!({"input_required": true});
            self.audit(true, call, first_round, false, decisions).await;
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
        decisions: Vec<PolicyDecision>,
    ) -> Value {
        let Some(log) = self.shared.grants.audit.clone().filter(|_| audited) else {
            return value;
        };
        let finished = self.shared.grants.clock.now_ms();
        let mut record = Call::of(call.tool, call.principal.as_str(), call.started, finished, &value, is_error);
        record.policy_decisions = decisions;
        if let Err(e) = AuditLog::record(log, Record::Call(record)).await {
            tracing::error!("could not write the audit log {e}");
            value["audit_warning"] =
                json!(format!("this outcome could not be written to the audit log: {}", e.reason()));
        }
        value
    }

    fn toolsets_text(&self) -> String {
        self.shared.registry.enabled_toolsets().iter().cloned().collect::<Vec<_>>().join(", ")
    }
}

/// `response` with its `next_step` in the host's words (only the host knows the client and the
/// server's way out), when `applies` to its structured content and error flag; any other
/// response as it is.
fn with_next_step(response: CallToolResponse, step: &str, applies: fn(&Value, bool) -> bool) -> CallToolResponse {
    let CallToolResponse::Complete(result) = response else { return response };
    let is_error = result.is_error == Some(true);
    let Some(mut value) = result.structured_content.clone().filter(|v| applies(v, is_error)) else {
        return CallToolResponse::Complete(result);
    };
    value["next_step"] = json!(step);
    results::structured(value, is_error).into()
}

/// A result whose call collected a decision from the approval page: the host says who decided,
/// when, why, and where the request stands (`page_decision`). An approval collected after the
/// proposal's time approved nothing, and the component can only say it got none: the message and
/// next step are then the host's, so the agent does not tell the person nobody approved.
fn with_page_decision(mut value: Value, said: &crate::capabilities::PageSaid, now_ms: u64) -> Value {
    let Some(object) = value.as_object_mut() else { return value };
    let decision = said.value(now_ms);
    if said.late {
        object.insert(
            "message".into(),
            json!(format!("not executed: {}", decision["said"].as_str().unwrap_or_default())),
        );
        object.insert(
            "next_step".into(),
            json!("Nothing was created. Call fabric_propose_change again and have the person approve the new proposal; collect it before its time ends."),
        );
    }
    object.insert("page_decision".into(), decision);
    value
}

/// A proposal's result (it names its confirm token): its next step says what this client's
/// confirm will do.
fn proposed(v: &Value, is_error: bool) -> bool {
    !is_error && Proposed::read(v).is_some()
}

/// A confirm's result that reached nobody (`unsupported_by_client`): the component cannot know
/// whether this server's way out is an enrollment.
fn reached_nobody(v: &Value, _is_error: bool) -> bool {
    Confirmed::read(v).reached_nobody()
}

/// A call stopped because the proposal store (where the page's records live) did not answer.
fn store_unavailable(why: &str) -> CallToolResponse {
    ToolError::new("proposal_store_unavailable", format!("{why}; nothing was done")).result()
}

/// The result of a call whose question waits on the approval page.
fn approval_pending(tool: &str, pending: &PagePending) -> Value {
    let (state, so_far) = match &pending.progress {
        Some(partly) => ("partly_approved", format!(" So far: {}.", partly.said())),
        None => ("waiting", String::new()),
    };
    let mut confirmation = json!({
        "status": "approval_pending",
        "method": "page",
        "approval_url": pending.url,
        "expires_at": audit::rfc3339(pending.expires_at_ms),
        "state": state,
    });
    let glass = match pending.break_glass.is_empty() {
        true => String::new(),
        false => {
            confirmation["break_glass"] = json!(pending.break_glass);
            format!(
                " Break-glass: it is inside {}, a freeze the operator's policy lets only its own quorum open.",
                pending.break_glass.iter().map(|id| format!("{id:?}")).collect::<Vec<_>>().join(", ")
            )
        }
    };
    if let Some(partly) = &pending.progress {
        confirmation["progress"] = json!({
            "approvals": partly.progress.approvals,
            "needed": partly.progress.needed,
            "missing": partly.progress.missing,
            "needs": partly.progress.needs,
            "approved_by": partly.approvals.iter().map(|(by, at)| json!({"by": by, "at": at})).collect::<Vec<_>>(),
        });
    }
    json!({
        "confirm_token": pending.subject.token,
        "executed": null,
        "request_sha256": pending.subject.request_sha256,
        "human_confirmation": confirmation,
        "message": format!(
            "A person must approve this create on the approval page: show them approval_url. Nothing was sent and \
             nothing was used up. The link is valid until {}.{glass}{so_far}",
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
        let allowed = self.shared.registry.tools().filter(|t| scopes.allows(t.scope));
        Ok(ListToolsResult::with_all_items(allowed.map(|t| t.tool.clone()).collect()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.shared.registry.get(name).map(|t| t.tool.clone())
    }

    /// Every call, however it ends (refused before the component ran, a store that did not
    /// answer, a panic caught), leaves its access line and its count, and a propose's or a
    /// confirm's its audit record.
    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        use futures_util::FutureExt as _;
        let name = request.name.to_string();
        let principal = principal_of(&context);
        let started = (std::time::Instant::now(), self.shared.grants.clock.now_ms());
        // a confirm refused before it ran is still recorded under its token: only one with a
        // token's shape (its arguments were not checked yet, and a client's text of any length
        // must not reach the log)
        let token = request
            .arguments
            .as_ref()
            .and_then(|a| a.get("confirm_token"))
            .filter(|t| t.as_str().is_some_and(crate::proposals::is_token))
            .cloned();
        let answered = std::panic::AssertUnwindSafe(self.answer(request, context)).catch_unwind().await;
        let response = match answered {
            Ok(Answered::Accounted(result)) => return result,
            Ok(Answered::Before(response)) => response,
            Err(panic) => {
                let reference = URL_SAFE_NO_PAD.encode(rand::random::<[u8; 6]>());
                let what = panic
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_default();
                tracing::error!(reference = %reference, tool = %self.logged_name(&name), "a tool call failed: {what}");
                let message = format!(
                    "the server failed while handling this call (its log has the details under reference \
                     {reference}); the audit log says whether anything was sent"
                );
                ToolError::new("internal_error", message).result()
            }
        };
        self.account_before(&name, &principal, started, &response, token).await;
        Ok(response)
    }
}

/// How a call ended, for its accounting: through [`McpServer::run_on_road`] (which logged,
/// counted and audited it), or before it.
enum Answered {
    Accounted(Result<CallToolResponse, ErrorData>),
    Before(CallToolResponse),
}

impl McpServer {
    /// The access line, the count and (a mutating tool's) audit record of a call that ended
    /// before it ran.
    async fn account_before(
        &self,
        name: &str,
        principal: &Principal,
        (started, started_ms): (std::time::Instant, u64),
        response: &CallToolResponse,
        token: Option<Value>,
    ) {
        self.access_line(name, principal, started.elapsed(), Ok(response), "");
        let Some(tool) = self.shared.registry.get(name) else { return };
        let CallToolResponse::Complete(result) = response else { return };
        if let Some(mut value) = result.structured_content.clone() {
            if let (Some(token), Some(error)) = (token, value.get_mut("error").and_then(Value::as_object_mut)) {
                error.entry("result").or_insert_with(|| json!({"confirm_token": token}));
            }
            let audited = Audited { tool: name, principal, started: started_ms };
            self.audit(!tool.decl.read_only, audited, value, result.is_error == Some(true), Vec::new()).await;
        }
    }

    /// [`ServerHandler::call_tool`]'s work.
    async fn answer(&self, request: CallToolRequestParams, context: RequestContext<RoleServer>) -> Answered {
        let name = request.name.to_string();
        tracing::debug!(tool = %self.logged_name(&name), "tools/call");
        let Some(flight) = self.shared.lifecycle.begin(&context.ct) else {
            let message = "the server is shutting down and accepts no new calls; nothing was done. Retry once it (or \
                           another replica) is back";
            return Answered::Before(ToolError::new("shutting_down", message).result());
        };
        let principal = principal_of(&context);
        let scopes = scopes_of(&context);
        if !scopes.allows(self.shared.registry.scope_of(&name)) {
            // the HTTP layer answers 403 first; this holds if a call reaches here another way
            let message = "the access token's scopes do not allow this tool; nothing was done";
            return Answered::Before(ToolError::new("insufficient_scope", message).result());
        }
        let arguments = Value::Object(request.arguments.unwrap_or_default());
        let key = CallKey::new(&principal, &name, &arguments);
        let declared = reach::declared(&context);
        // a retry's state is bound to this call, whatever the tool: a state of another call is refused
        let sealed = match (&request.request_state, declared.stateless) {
            (Some(state), true) => match reach::stateless::open(&self.shared.request_state, &key, state) {
                Ok(sealed) => Some(sealed),
                Err(refused) => return Answered::Before((*refused).into()),
            },
            _ => None,
        };
        let tool_asks =
            self.shared.registry.get(&name).is_some_and(|t| t.decl.toolset == equinix_broker_contract::MUTATE_TOOLSET);
        let is_propose = self.shared.registry.scope_of(&name) == Scope::Propose;
        let offered = match tool_asks || is_propose {
            true => reach::offered(&self.shared).await,
            // a tool that asks nobody is never sent anywhere
            false => approval::Offered::default(),
        };
        let sealed_kind = reach::sealed_kind(sealed.as_ref());
        let roads = approval::choose(
            declared,
            offered,
            approval::Call { tool_asks, proposes: is_propose, sealed: sealed_kind },
        );
        let road = roads.road;
        tracing::debug!(tool = %self.logged_name(&name), ?declared, ?roads, "how the person is reached");
        let reaching = reach::Reaching {
            shared: &self.shared,
            declared,
            peer: &context.peer,
            principal: &principal,
            tool: &name,
            key: &key,
            sealed,
            responses: request.input_responses.as_ref(),
        };
        let confirmer = match reach::confirmer(road, &reaching).await {
            Ok(c) => c,
            Err(e) => return Answered::Before(store_unavailable(&e.told())),
        };
        let page_instead = roads.page_instead.and_then(|road| reach::fallback(road, &reaching));
        let progress = context
            .meta
            .get_progress_token()
            .map(|t| Arc::new(Progress::new(context.peer.clone(), t)) as Arc<dyn StepReporter>);
        let call = CallContext { principal, scopes, confirmer, page_instead, cancel: flight.cancel.clone(), progress };
        let response = match self.run_on_road(&name, arguments, call, road).await {
            Ok(r) => r,
            Err(e) => return Answered::Accounted(Err(e)),
        };
        // a propose says how this client's confirm of what it proposed will reach a person
        let Some(confirm) = roads.confirm_next else {
            return Answered::Accounted(Ok(match road {
                Road::Nobody => with_next_step(response, &reach::after_nobody(&self.shared), reached_nobody),
                _ => response,
            }));
        };
        Answered::Accounted(Ok(match reach::next_step(confirm, &self.shared) {
            Some(step) => with_next_step(response, &step, proposed),
            None => response,
        }))
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
