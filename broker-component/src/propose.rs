//! `fabric_propose_change`: parse and compile the spec, run the real dry run, price it, store
//! the proposal, return the single-use confirm token.

use alloc::format;
use alloc::string::String;
use alloc::vec;
use serde_json::{Map, Value, json};

use equinix_broker_contract::MUTATE_TOOLSET;
use equinix_broker_contract::answers::{CONFIRM_TOKEN, NEXT_STEP};

use crate::capability::{FabricRequest, FabricResponse, Host, Method};
use crate::grammar::{self, Kind, Object, arguments, opt, req, text};
use crate::price;
use crate::proposal::{CAPACITY, Proposal, TTL_MS};
use crate::spec::{ChangeType, Compiled, Grammar, Spec};
use crate::time::format_rfc3339_ms;
use crate::tool::{BROKER, Output, ToolDef};
use crate::tool_error::ToolError;

pub(crate) const NAME: &str = equinix_broker_contract::PROPOSE_TOOL;

pub(crate) const DESCRIPTION: &str = "Propose one Fabric create: a connection, network or service token. A Fabric dry run \
(dryRun=true, nothing provisioned) validates the exact request, priced where Fabric can; you get a single-use \
confirm_token (10 minutes). Nothing is created until fabric_confirm_change runs and the person approves. The input \
schema types `spec` fully for each change_type.";

static ARGS: Object = arguments(&[
    req("change_type", Kind::Enum(ChangeType::NAMES), "What to create; there are no update or delete change types"),
    req("spec", Kind::AnyObject, "The Fabric v4 create request body"),
    opt(
        equinix_broker_contract::AGENT_REASON_ARG,
        text(equinix_broker_contract::AGENT_REASON_CHARS),
        "Why, in a sentence: shown to the approver quoted, as your words",
    ),
]);

pub(crate) static TOOL: ToolDef = ToolDef {
    name: NAME,
    toolset: MUTATE_TOOLSET,
    title: "Propose a Fabric create",
    description: DESCRIPTION,
    args: &ARGS,
    schema_extra: Some(typed_specs),
    hints: BROKER,
    output: Output::Members(&[
        (CONFIRM_TOKEN, "string"),
        ("change_type", "string"),
        ("request_sha256", "string"),
        ("compiled_request", "object"),
        ("expires_at", "string"),
        ("dry_run", "object"),
        ("price_context", "object"),
        ("touches", "object"),
        ("evicted_proposals", "array"),
        (NEXT_STEP, "string"),
    ]),
    run: call,
};

/// The spec of each change type, from the grammar that checks it.
fn typed_specs(schema: &mut Value) {
    let grammars: alloc::vec::Vec<Kind> = ChangeType::ALL.iter().map(|ct| Kind::Obj(ct.grammar())).collect();
    let kinds: alloc::vec::Vec<(&Kind, &str)> = grammars.iter().map(|k| (k, "")).collect();
    let (specs, defs) = grammar::schemas_sharing(&kinds);
    let branches: alloc::vec::Vec<Value> = ChangeType::ALL
        .iter()
        .zip(specs)
        .map(|(ct, spec)| {
            json!({"if": {"properties": {"change_type": {"const": ct.as_str()}}, "required": ["change_type"]},
                   "then": {"properties": {"spec": spec}}})
        })
        .collect();
    schema["allOf"] = Value::Array(branches);
    schema["$defs"] = Value::Object(defs);
}

/// What `fabric_propose_change` checked: the change type and its spec.
pub(crate) fn parse(args: &Value) -> Result<Spec, ToolError> {
    let kind = args["change_type"].as_str().unwrap_or_default();
    let change_type = ChangeType::parse(kind)
        .ok_or_else(|| ToolError::invalid_argument("/change_type", format!("unknown change type {kind:?}")))?;
    Spec::parse(change_type, &args["spec"], "/spec")
}

pub(crate) fn call(host: &mut dyn Host, args: &Value) -> Result<Value, ToolError> {
    let spec = parse(args)?;
    let compiled = spec.compile();
    let change_type = compiled.change_type;

    let (response, validated) = dry_run(host, &compiled)?;

    let price_context = price::price_context(host, &spec);
    let touches = names_of(host, spec.change_type, spec.body(), &validated);
    let now = host.now_ms();
    let proposal = Proposal {
        change_type,
        canonical_spec: compiled.body,
        request_sha256: compiled.request_sha256,
        minted_at_ms: now,
        expires_at_ms: now + TTL_MS,
        price_context,
        touches,
    };
    let stored = host
        .store_put(proposal.to_bytes(), &proposal.request_sha256, proposal.expires_at_ms, CAPACITY)
        .map_err(|why| ToolError::new("proposal_not_stored", format!("the host stored no proposal: {why}")))?;
    let Proposal { canonical_spec, request_sha256, expires_at_ms, price_context, touches, .. } = proposal;
    // The body once, as the exact text that is sent and hashed; of the dry run's answer only
    // what it adds to the request, less the names `touches` already gives.
    let mut answer_adds = adds(&validated, spec.body());
    if let (Some(adds), Some(known)) = (answer_adds.as_object_mut(), touches.as_object()) {
        let known: alloc::vec::Vec<&Value> = known.values().collect();
        without_names(adds, &known);
    }
    let mut result = json!({
        CONFIRM_TOKEN: stored.token,
        "change_type": change_type.as_str(),
        "request_sha256": request_sha256,
        "compiled_request": {"method": "POST", "path": change_type.path(), "body_canonical": canonical_spec},
        "expires_at": format_rfc3339_ms(expires_at_ms),
        "dry_run": {"status": response.status, "correlation_id": response.correlation_id, "answer_adds": answer_adds},
        "price_context": price::lean(price_context),
        NEXT_STEP: AFTER_PROPOSING,
    });
    if !touches.as_object().is_some_and(Map::is_empty) {
        result["touches"] = touches;
    }
    if !stored.evicted.is_empty() {
        result["evicted_proposals"] = json!(stored.evicted);
    }
    crate::json::discard((validated, spec));
    Ok(result)
}

/// The real dry run of exactly the compiled body: Fabric's answer and its parsed body, or the
/// tool error for a refusal (Fabric's errors intact, with the read tool that helps), for a change
/// Fabric cannot dry-run, or for an answer that is not JSON.
fn dry_run(host: &mut dyn Host, compiled: &Compiled) -> Result<(FabricResponse, Value), ToolError> {
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
        let next = next_step_for(&err);
        return Err(err.with("next_step", json!(next)));
    }
    let validated: Value = serde_json::from_str(&response.body).map_err(|e| {
        ToolError::new(
            "bad_fabric_response",
            format!("the dry run answered HTTP {} with a body that is not JSON: {e}", response.status),
        )
    })?;
    Ok((response, validated))
}

/// What `answer` has that `request` does not (new members, changed values), recursively, leaving
/// out `href` links.
fn adds(answer: &Value, request: &Value) -> Value {
    match (answer, request) {
        (Value::Object(a), Value::Object(r)) => {
            let mut out = Map::new();
            // links are navigation, not content: the agent has the read tools
            for (k, v) in a.iter().filter(|(k, _)| *k != "href") {
                match r.get(k) {
                    None => {
                        out.insert(k.clone(), v.clone());
                    }
                    Some(w) if w != v => {
                        let d = adds(v, w);
                        if !d.as_object().is_some_and(Map::is_empty) {
                            out.insert(k.clone(), d);
                        }
                    }
                    Some(_) => {}
                }
            }
            Value::Object(out)
        }
        _ => answer.clone(),
    }
}

/// `map` without any `name` member whose value is among `known`, and without the objects that
/// leaves empty: a name the result says once, in `touches`, costs the model's budget once.
fn without_names(map: &mut Map<String, Value>, known: &[&Value]) {
    if map.get("name").is_some_and(|n| known.contains(&n)) {
        map.remove("name");
    }
    map.retain(|_, v| match v.as_object_mut() {
        Some(inner) => {
            without_names(inner, known);
            !inner.is_empty()
        }
        None => true,
    });
}

/// The names of the ports, profiles and networks a body touches, by uuid: the person's form says
/// "DC-PRI-01", not only a uuid. Fabric's dry-run answer names what it resolved; the rest is
/// read with one GET each (at most four). A lookup that fails leaves that one out.
fn names_of(host: &mut dyn Host, change_type: ChangeType, body: &Value, answer: &Value) -> Value {
    let mut refs: alloc::vec::Vec<(&str, String)> = alloc::vec::Vec::new();
    for (_, ap) in equinix_broker_contract::body::access_points(change_type, body) {
        for (collection, member) in [("ports", "port"), ("serviceProfiles", "profile"), ("networks", "network")] {
            if let Some(u) = ap[member].get("uuid").and_then(Value::as_str).filter(|u| crate::grammar::is_uuid(u))
                && !refs.iter().any(|(_, x)| x == u)
            {
                refs.push((collection, u.into()));
            }
        }
    }
    let mut answered = Map::new();
    collect_names(answer, &mut answered);
    // only what the body touches: the answer also names the new resource itself
    let mut names = Map::new();
    refs.retain(|(_, uuid)| match answered.remove(uuid.as_str()) {
        Some(name) => {
            names.insert(uuid.clone(), name);
            false
        }
        None => true,
    });
    for (collection, uuid) in refs.into_iter().take(4) {
        let get = FabricRequest {
            method: Method::Get,
            path: format!("/fabric/v4/{collection}/{uuid}"),
            query: vec![],
            body: None,
        };
        if let Ok(found) = crate::fabric_call::send_json(host, get)
            && let Some(name) = found.get("name").and_then(Value::as_str)
        {
            names.insert(uuid, json!(name));
        }
    }
    Value::Object(names)
}

/// Every `{uuid, name}` pair in an answer, at any depth.
fn collect_names(v: &Value, names: &mut Map<String, Value>) {
    match v {
        Value::Object(m) => {
            if let (Some(Value::String(u)), Some(n @ Value::String(_))) = (m.get("uuid"), m.get("name"))
                && crate::grammar::is_uuid(u)
            {
                names.insert(u.clone(), n.clone());
            }
            m.values().for_each(|x| collect_names(x, names));
        }
        Value::Array(a) => a.iter().for_each(|x| collect_names(x, names)),
        _ => {}
    }
}

/// The read tool that helps with the first refused field of a dry run, if one does.
fn next_step_for(err: &ToolError) -> String {
    let property = err
        .details
        .get("fabric_errors")
        .and_then(|e| e.pointer("/0/additionalInfo/0/property"))
        .and_then(Value::as_str)
        .unwrap_or_default();
    let hint = [
        ("/port/uuid", "find the port with fabric_search_ports"),
        ("/linkProtocol", "pick a free VLAN with fabric_list_port_vlans"),
        ("/profile/uuid", "find the profile with fabric_search_service_profiles"),
        ("metroCode", "pick a metro from fabric_list_metros (and one the profile offers)"),
        ("/authenticationKey", "the profile requires an authentication key (fabric_get_service_profile names it)"),
        ("/sellerRegion", "the profile requires a seller region (fabric_get_service_profile lists them)"),
        ("/bandwidth", "pick a bandwidth the profile or port offers (fabric_get_service_profile, fabric_get_port)"),
        ("/network/uuid", "find the network with fabric_search_networks"),
    ]
    .iter()
    .find(|(needle, _)| property.contains(needle))
    .map(|(_, hint)| *hint);
    match hint {
        Some(h) => format!("Fix the spec and propose again: {h}."),
        None => "Fix what Fabric's errors name and propose again.".into(),
    }
}

const AFTER_PROPOSING: &str = "Show the user this proposal, then call fabric_confirm_change with the confirm_token; the \
user approves or declines where the server asks them (a form, or the approval page), not in chat.";

fn is_dry_run_unsupported(err: &ToolError) -> bool {
    err.details
        .get("fabric_errors")
        .and_then(Value::as_array)
        .is_some_and(|errs| errs.iter().any(|e| e.get("errorCode").and_then(Value::as_str) == Some("EQ-3142411")))
}
