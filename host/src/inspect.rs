//! `equinix-mcp inspect`: the two-sided audit view. What the component imports and exports
//! (with types), and what the host grants behind each import.

use std::fmt::Write;
use std::process::ExitCode;

use serde_json::json;

use crate::cli::InspectArgs;
use crate::component::{self, Limits, surface::Surface};
use crate::fabric_client::allow_list::{ROUTES, Route};

pub fn run(args: &InspectArgs) -> anyhow::Result<ExitCode> {
    let source = args.component.source()?;
    let surface = component::inspect(&source.wasm, args.component.cache_dir().as_deref())?;
    let limits = Limits::default();
    if args.json {
        let out = json!({
            "component": source.origin,
            "sha256": surface.sha256,
            "size_bytes": surface.size_bytes,
            "verdict": surface.verdict,
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
    json!({"method": r.method.to_string(), "path": r.template, "query": r.query,
           "class": if r.creates { "create (dryRun=true: dry run); only with the mutate toolset" } else { "read" }})
}

fn grants_json(limits: &Limits) -> serde_json::Value {
    json!({
        "equinix:broker/fabric": {
            "routes": ROUTES.iter().map(route_json).collect::<Vec<_>>(),
            "never": "PUT, PATCH, DELETE or any path not listed; creates are never retried",
            "added_by_host": ["base URL", "OAuth2 bearer token", "Content-Type", "X-CORRELATION-ID"],
        },
        "equinix:broker/clock": "wall-clock milliseconds",
        "equinix:broker/confirmation": "an MCP form elicitation to the person at the client (EQUINIX_MCP_ELICIT_TIMEOUT_MS); unconfirmed execution only with EQUINIX_MCP_ALLOW_UNCONFIRMED_MUTATIONS=true",
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
        let class =
            if r.creates { "create; only with --toolsets ...,mutate; dryRun=true is a dry run" } else { "read" };
        let _ = writeln!(
            out,
            "    {:<4} {:<48} query [{}]  ({class})",
            r.method.to_string(),
            r.template,
            r.query.join(", ")
        );
    }
    let _ = writeln!(out, "    never: PUT, PATCH, DELETE, other paths; creates are never retried");
    let _ = writeln!(
        out,
        "    the host adds base URL, OAuth2 bearer, Content-Type, X-CORRELATION-ID; the component sees no secret"
    );
    let _ = writeln!(out, "  equinix:broker/clock  wall-clock milliseconds");
    let _ = writeln!(
        out,
        "  equinix:broker/confirmation  MCP form elicitation to the person at the client (EQUINIX_MCP_ELICIT_TIMEOUT_MS); without client support nothing executes unless EQUINIX_MCP_ALLOW_UNCONFIRMED_MUTATIONS=true"
    );
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
