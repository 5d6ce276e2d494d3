//! `equinix-mcp inspect`: the two-sided audit view. What the component imports and exports
//! (with types), and what the host grants behind each import.

use std::fmt::Write;
use std::process::ExitCode;

use serde_json::json;

use crate::cli::InspectArgs;
use crate::component::{self, Limits, surface::Surface};
use crate::fabric_client::allow_list::{ROUTES, Route};

const CONFIRMATION_GRANT: &str = "one question per call, only from tools of the mutate toolset: the host renders \
the request (change type, POST path, SHA-256, every body field) from the exact bytes, shows the component's context \
below it as the component's words, and asks the person (MCP form elicitation within EQUINIX_MCP_ELICIT_TIMEOUT_MS, \
or the 2026-07-28 input round trip); on accept with confirm = true (or, without client support, only with \
EQUINIX_MCP_ALLOW_UNCONFIRMED_MUTATIONS=true) it mints one approval for exactly that request, after a durable \
audit record; executing it sends that request once (audited before and after; nothing is sent if the record \
cannot be made durable)";

pub fn run(args: &InspectArgs) -> anyhow::Result<ExitCode> {
    let source = args.component.source()?;
    let surface = component::inspect(&source.wasm)?;
    let limits = Limits::default();
    if args.json {
        let out = json!({
            "component": source.origin,
            "sha256": surface.sha256,
            "size_bytes": surface.size_bytes,
            "verdict": surface.verdict,
            "create_path": create_path_json(&surface),
            "imports": surface.imports,
            "exports": surface.exports,
            "host_grants": grants_json(&limits),
        });
        println!("{}", serde_json::to_string_pretty(&out)?);
    } else {
        print!("{}", text(&source.origin, &surface, &limits));
    }
    Ok(if surface.verdict.accepted { ExitCode::SUCCESS } else { ExitCode::FAILURE })
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
        "so this component cannot create without a human's yes (an accepted status proves what the client reported)"
            .into(),
    ]
}

fn create_path_json(s: &Surface) -> serde_json::Value {
    json!({
        "spends_approval": s.create_path.spends_approval,
        "mints_approval": s.create_path.mints_approval,
        "holds": s.create_path.holds,
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
        "equinix:broker/proposal-store": "single-use proposal records under host-minted chg- tokens, scoped to the calling principal; held in this process (memory) or a shared Redis/Valkey (--proposal-store)",
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
    for r in ROUTES {
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
        "  equinix:broker/proposal-store  single-use records under host-minted chg- tokens, per principal; memory or shared Redis/Valkey (--proposal-store)"
    );
    let _ = writeln!(
        out,
        "  limits  guest CPU {} ms per call, {} MiB memory per instance, fresh instance per call; no WASI linked",
        limits.guest_time.as_millis(),
        limits.memory_bytes >> 20
    );
    out
}
