//! `equinix-mcp inspect`: the two-sided audit view. What the component imports and exports
//! (with types), and what the host grants behind each import.

use crate::{out, outln};

use std::collections::BTreeSet;
use std::fmt::Write;
use std::process::ExitCode;
use std::sync::Arc;

use serde_json::json;

use crate::capabilities::{CallState, Grants, ProposalStore};
use crate::cli::InspectArgs;
use crate::component::{ComponentRuntime, Limits, surface::Surface};
use crate::fabric_client::allow_list::{ROUTES, Route};
use crate::fabric_client::{FabricClient, FabricConfig};
use crate::mcp::{Selection, ToolRegistry};
use crate::policy;

const CONFIRMATION_GRANT: &str = "one question per call, only from tools of the mutate toolset and only about the \
request bound to a proposal the call took: the host renders the request (asking tool, change type, POST path, \
SHA-256, every body field as sent; duplicate keys, non-integer numbers and lone surrogates refused, invisible \
characters escaped) from the exact bytes, shows the component's context (at most 40 fields, the form at most 16 KiB) \
below it as the component's words, and asks the person (MCP form elicitation within EQUINIX_MCP_ELICIT_TIMEOUT_MS, \
or the 2026-07-28 input round trip); on accept with confirm = true (or, without client support, only with \
EQUINIX_MCP_ALLOW_UNCONFIRMED_MUTATIONS=true) it mints one approval for exactly that request, after a durable \
audit record; executing it sends that request once (audited before and after; nothing is sent if the record \
cannot be made durable)";

pub async fn run(args: &InspectArgs) -> anyhow::Result<ExitCode> {
    let source = args.component.source()?;
    let limits = Limits::default();
    let (mut surface, runtime) = ComponentRuntime::inspect(&source.wasm, limits)?;
    let catalog = match runtime {
        Some(runtime) => Some(catalog(runtime.map_err(|e| format!("cannot be loaded: {e:#}")), limits).await),
        None => None,
    };
    if let Some(Err(problem)) = &catalog {
        surface.verdict.accepted = false;
        surface.verdict.problems.push(problem.clone());
    }
    let catalog = catalog.and_then(Result::ok);
    let policy = match &args.policy {
        Some(path) => Some(policy::load(path)?),
        None => None,
    };
    let policy_json = policy
        .as_ref()
        .map(|p| json!({"file": p.path.display().to_string(), "sha256": p.sha256, "policies": p.policies}));
    if args.json {
        let out = json!({
            "component": source.origin,
            "signature": source.signer.as_ref().map(|s| json!({"key_id": s.key_id, "trusted_comment": s.trusted_comment,
                "public_key": s.key_file.display().to_string()})),
            "sha256": surface.sha256,
            "size_bytes": surface.size_bytes,
            "verdict": surface.verdict,
            "create_path": create_path_json(&surface),
            "catalog": catalog.as_ref().map(|c| json!({"tools": c.tools, "toolsets": c.toolsets})),
            "policy": policy_json,
            "imports": surface.imports,
            "exports": surface.exports,
            "host_grants": grants_json(&limits),
        });
        outln!("{}", serde_json::to_string_pretty(&out)?);
    } else {
        out!("{}", text(&source.origin, &surface, &limits));
        if let Some(c) = &catalog {
            outln!("\ncatalog     {} tools, checked as serve checks them; toolsets {}", c.tools, c.toolsets.join(", "));
        }
        match &policy {
            Some(p) => outln!(
                "policy      {}: {} policies, sha256 {}; a create is denied unless one permits it and none forbids it",
                p.path.display(),
                p.policies,
                p.sha256
            ),
            None => outln!("policy      none given (--policy): every create a person approves is permitted"),
        }
    }
    Ok(if surface.verdict.accepted { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

/// What `serve` would accept of the catalog.
struct Catalog {
    tools: usize,
    toolsets: Vec<String>,
}

/// Reads the catalog and checks it with `serve`'s own rules; `Err` is the problem, as a verdict
/// line (`it ...`).
async fn catalog(runtime: Result<ComponentRuntime, String>, limits: Limits) -> Result<Catalog, String> {
    let runtime = runtime?;
    // The catalog call reaches no Fabric; this client exists only to satisfy the capability.
    let fabric = Arc::new(FabricClient::new(FabricConfig::new("http://127.0.0.1:9", None)));
    let grants = Grants::without_approvals(fabric, Arc::new(ProposalStore::new()), limits.guest_time);
    let catalog = runtime
        .catalog(CallState::unattended(&grants))
        .await
        .map_err(|t| format!("fails its catalog call: {}", t.message))?;
    let tools = catalog.len();
    let toolsets: BTreeSet<String> = catalog.iter().map(|t| t.toolset.clone()).collect();
    ToolRegistry::build(catalog, &Selection::parse(None)).map_err(|e| format!("has a catalog serve refuses: {e:#}"))?;
    Ok(Catalog { tools, toolsets: toolsets.into_iter().collect() })
}

fn route_json(r: &Route) -> serde_json::Value {
    json!({"method": r.method.to_string(), "path": r.template, "query": r.query, "class": route_class(r)})
}

fn route_class(r: &Route) -> &'static str {
    if r.creates.is_some() {
        "create route, only with the mutate toolset: through fabric.send only with dryRun=true (a dry run); a real create only by executing an approval"
    } else {
        "read"
    }
}

/// The invariant, as the types state it (the verdict refuses a component where they do not).
fn invariant(s: &Surface) -> Vec<String> {
    let c = &s.create_path;
    if !c.holds {
        return vec![format!(
            "UNEXPECTED: approvals are spent by {:?} and minted by {:?}",
            c.spends_approval, c.mints_approval
        )];
    }
    if c.spends_approval.is_empty() {
        return vec!["this component imports no function that can send a create: it cannot create at all".into()];
    }
    vec![
        format!(
            "only {} sends a create, and it consumes an own<approval> (single use; the handle dies with the call)",
            c.spends_approval.join(", ")
        ),
        format!(
            "only {} returns an approval, and the host returns one only after the person accepted with confirm = true \
             (or, with EQUINIX_MCP_ALLOW_UNCONFIRMED_MUTATIONS=true, when the client cannot show a form) for exactly the \
             request the host rendered in the form",
            c.mints_approval.join(", ")
        ),
        "fabric.send carries reads and dry runs: the host refuses a create route without dryRun=true".into(),
        "confirmation.ask names a proposal token, and proposal-store.put binds each record to a create dry run the \
         host sent in that call and Fabric answered 2xx: the host asks only about the bound bytes, for a token taken in \
         the same call, by the principal that proposed it, within 10 minutes of the dry run on the host's clock; a token \
         is taken once (atomically in a shared store), so a validated proposal yields at most one approval"
            .into(),
        "so this component cannot create without a human's yes (an accepted status proves what the client reported)"
            .into(),
    ]
}

fn create_path_json(s: &Surface) -> serde_json::Value {
    json!({
        "spends_approval": s.create_path.spends_approval,
        "mints_approval": s.create_path.mints_approval,
        "holds": s.create_path.holds,
        "bound_to_proposal": s.create_path.bound_to_proposal,
        "invariant": invariant(s),
    })
}

fn grants_json(limits: &Limits) -> serde_json::Value {
    json!({
        "equinix:broker/fabric": {
            "routes": ROUTES.iter().map(route_json).collect::<Vec<_>>(),
            "never": "PUT, PATCH, DELETE or any path not listed; creates are never retried",
            "added_by_host": ["base URL", "OAuth2 bearer token", "Content-Type", "X-CORRELATION-ID"],
        },
        "equinix:broker/clock": "wall-clock milliseconds",
        "equinix:broker/confirmation": CONFIRMATION_GRANT,
        "equinix:broker/proposal-store": "single-use proposal records, each bound to a dry run the host validated, under host-minted chg- tokens, scoped to the calling principal; held in this process (memory) or a shared Redis/Valkey (--proposal-store)",
        "limits": {"guest_cpu_ms_per_call": limits.guest_time.as_millis() as u64, "memory_bytes_per_instance": limits.memory_bytes},
        "wasi": "none linked",
    })
}

fn text(origin: &str, s: &Surface, limits: &Limits) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "component   {origin}");
    let _ = writeln!(out, "sha256      {}", s.sha256);
    let _ = writeln!(out, "size        {} bytes", s.size_bytes);
    let _ = writeln!(out, "verdict     {}", if s.verdict.accepted { "ACCEPTED" } else { "REFUSED" });
    for p in &s.verdict.problems {
        let _ = writeln!(out, "  - it {p}");
    }
    let _ = writeln!(out, "\ncreate path (read from the import types)");
    for line in invariant(s) {
        let _ = writeln!(out, "  - {line}");
    }
    for (title, items) in [("imports", &s.imports), ("exports", &s.exports)] {
        let _ = writeln!(out, "\n{title}");
        for i in items.iter() {
            let _ = writeln!(out, "  {} ({})", i.name, i.kind);
            for f in &i.functions {
                let _ = writeln!(out, "    {}: {}", f.name, f.signature);
            }
        }
    }
    let _ = writeln!(out, "\nhost grants (what each import can reach)");
    let _ = writeln!(out, "  equinix:broker/fabric  one request to these Fabric v4 routes, nothing else:");
    for r in ROUTES.iter() {
        let _ = writeln!(
            out,
            "    {:<4} {:<48} query [{}]  ({})",
            r.method.to_string(),
            r.template,
            r.query.join(", "),
            route_class(r)
        );
    }
    let _ = writeln!(out, "    never: PUT, PATCH, DELETE, other paths; creates are never retried");
    let _ = writeln!(
        out,
        "    the host adds base URL, OAuth2 bearer, Content-Type, X-CORRELATION-ID; the component sees no secret"
    );
    let _ = writeln!(out, "  equinix:broker/clock  wall-clock milliseconds");
    let _ = writeln!(out, "  equinix:broker/confirmation  {CONFIRMATION_GRANT}");
    let _ = writeln!(
        out,
        "  equinix:broker/proposal-store  single-use records, each bound to a dry run the host validated, under host-minted chg- tokens, per principal; memory or shared Redis/Valkey (--proposal-store)"
    );
    let _ = writeln!(
        out,
        "  limits  guest CPU {} ms per call, {} MiB memory per instance, fresh instance per call; no WASI linked",
        limits.guest_time.as_millis(),
        limits.memory_bytes >> 20
    );
    out
}
