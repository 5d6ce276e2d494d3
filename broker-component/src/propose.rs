//! `fabric_propose_change`: parse and compile the spec, run the real dry run, price it, store
//! the proposal, return the single-use confirm token.

use alloc::format;
use alloc::string::String;
use alloc::vec;
use serde_json::{Value, json};

use crate::capability::{FabricRequest, Host, Method};
use crate::catalog::{BROKER, ToolDef};
use crate::grammar::{self, Kind, Object, req};
use crate::price;
use crate::proposal::{CAPACITY, Proposal, TTL_MS};
use crate::spec::{ChangeType, Spec};
use crate::time::format_rfc3339_ms;
use crate::tool_error::ToolError;

pub const NAME: &str = "fabric_propose_change";

pub const DESCRIPTION: &str = "Propose one Fabric create (connection, network or service token). The exact request \
is validated by a real Fabric dry run (dryRun=true; nothing is provisioned) and priced where Fabric can price it; \
the result holds a single-use confirm_token valid for 10 minutes. Nothing is created until fabric_confirm_change is \
called and the person at the MCP client approves (which needs a client that supports form elicitation or the \
2026-07-28 input-required round trip; see fabric_confirm_change). `spec` uses the Fabric v4 request field names (camelCase), described in \
full by this tool's input schema for each change_type (e.g. connection_create: {type, name, bandwidth, aSide:{accessPoint:\
{type, port:{uuid}, linkProtocol:{type, vlanTag}}}, zSide:{...}, notifications:[{type, emails}]}).";

static ARGS: Object = Object {
    fields: &[
        req("change_type", Kind::Enum(ChangeType::NAMES), "What to create; there are no update or delete change types"),
        req(
            "spec",
            Kind::AnyObject,
            "The Fabric v4 create request body (camelCase field names); its shape for each change_type is given below",
        ),
    ],
    rule: None,
    rule_doc: "",
};

pub static TOOL: ToolDef = ToolDef {
    name: NAME,
    toolset: "mutate",
    title: "Propose a Fabric create",
    description: DESCRIPTION,
    args: &ARGS,
    schema_extra: Some(typed_specs),
    hints: BROKER,
    run: call,
};

/// The spec of each change type, from the grammar that checks it.
fn typed_specs(schema: &mut Value) {
    let branches: alloc::vec::Vec<Value> = ChangeType::ALL
        .iter()
        .map(|ct| {
            let spec = grammar::schema(&Kind::Obj(ct.grammar()), ct.spec_doc());
            json!({"if": {"properties": {"change_type": {"const": ct.as_str()}}, "required": ["change_type"]},
                   "then": {"properties": {"spec": spec}}})
        })
        .collect();
    schema["allOf"] = Value::Array(branches);
}

/// What `fabric_propose_change` checked: the change type and its spec.
pub fn parse(args: &Value) -> Result<Spec, ToolError> {
    let kind = args["change_type"].as_str().unwrap_or_default();
    let change_type = ChangeType::parse(kind)
        .ok_or_else(|| ToolError::invalid_argument("/change_type", format!("unknown change type {kind:?}")))?;
    Spec::parse(change_type, &args["spec"], "/spec")
}

pub fn call(host: &mut dyn Host, args: &Value) -> Result<Value, ToolError> {
    let spec = parse(args)?;
    let compiled = spec.compile();
    let change_type = compiled.change_type;

    let dry_run = FabricRequest {
        method: Method::Post,
        path: change_type.path().into(),
        query: vec![("dryRun".into(), "true".into())],
        body: Some(compiled.body.clone()),
    };
    let response = host.fabric_send(dry_run).map_err(|e| ToolError::from_fabric(&e))?;
    if !(200..300).contains(&response.status) {
        let err = ToolError::from_response(&response);
        if is_dry_run_unsupported(&err) {
            return Err(ToolError {
                kind: "cannot_propose_safely",
                message: format!(
                    "this change cannot be proposed safely: Fabric does not support a dry run for it (EQ-3142411), \
                     so the exact request cannot be validated before a person approves it. {}",
                    err.message
                ),
                ..err
            });
        }
        let mut err = err.with("request_sha256", json!(compiled.request_sha256));
        err.message = format!("the dry run rejected this {}: {}; no token was minted", change_type.noun(), err.message);
        return Err(err);
    }
    let validated: Value = serde_json::from_str(&response.body).map_err(|e| {
        ToolError::new(
            "bad_fabric_response",
            format!("the dry run answered HTTP {} with a body that is not JSON: {e}", response.status),
        )
    })?;

    let price_context = price::price_context(host, &spec);
    let now = host.now_ms();
    let proposal = Proposal {
        change_type,
        canonical_spec: compiled.body.clone(),
        request_sha256: compiled.request_sha256.clone(),
        minted_at_ms: now,
        expires_at_ms: now + TTL_MS,
        price_context: price_context.clone(),
    };
    let stored = host.store_put(proposal.to_bytes(), proposal.expires_at_ms, CAPACITY);
    Ok(json!({
        "confirm_token": stored.token,
        "change_type": change_type.as_str(),
        "validated_entity": validated,
        "dry_run": {"status": response.status, "correlation_id": response.correlation_id},
        "price_context": price_context,
        "compiled_request": {
            "method": "POST",
            "path": change_type.path(),
            "body": compiled.wire,
            "body_canonical": compiled.body,
        },
        "request_sha256": compiled.request_sha256,
        "expires_at": format_rfc3339_ms(proposal.expires_at_ms),
        "evicted_proposals": stored.evicted,
        "next_step": next_step(&stored.token),
    }))
}

fn next_step(token: &str) -> String {
    format!(
        "Show the user this proposal, then call fabric_confirm_change with {{\"confirm_token\": \"{token}\"}}; the user \
         approves or declines in their MCP client's prompt, not in chat. The token is single-use and expires in 10 minutes."
    )
}

fn is_dry_run_unsupported(err: &ToolError) -> bool {
    err.details
        .get("fabric_errors")
        .and_then(Value::as_array)
        .is_some_and(|errs| errs.iter().any(|e| e.get("errorCode").and_then(Value::as_str) == Some("EQ-3142411")))
}
