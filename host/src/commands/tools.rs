//! `equinix-mcp tools`: prints the served catalog (names, toolsets, annotations, input schemas)
//! from the component. docs/tools.md's tool reference is this command's Markdown output.

use crate::{out, outln};

use std::fmt::Write;
use std::sync::Arc;

use serde_json::{Value, json};

use crate::capabilities::{Grants, ProposalStore};
use crate::cli::{ComponentArgs, ToolsArgs};
use crate::commands::serve::load_registry;
use crate::component::{ComponentRuntime, Limits};
use crate::fabric_client::{FabricClient, FabricConfig};
use crate::mcp::{Selection, ToolRegistry};

pub async fn run(args: &ToolsArgs) -> anyhow::Result<()> {
    let (runtime, registry) = catalog(&args.component, args.toolsets.as_deref()).await?;
    if args.json {
        let tools: Vec<Value> = registry
            .tools()
            .map(|t| {
                json!({"name": t.decl.name, "title": t.decl.title, "toolset": t.decl.toolset,
                       "description": t.decl.description, "annotations": t.tool.annotations,
                       "input_schema": t.tool.input_schema, "output_schema": t.tool.output_schema})
            })
            .collect();
        outln!("{}", serde_json::to_string_pretty(&json!({"component_sha256": runtime.sha256(), "tools": tools}))?);
    } else {
        out!("{}", markdown(&registry));
    }
    Ok(())
}

/// The component's catalog as `serve` would check and serve it with these toolsets, without
/// serving it.
pub(crate) async fn catalog(
    component: &ComponentArgs,
    toolsets: Option<&str>,
) -> anyhow::Result<(ComponentRuntime, ToolRegistry)> {
    let source = component.source()?;
    let runtime = ComponentRuntime::load_hashed(
        &source.wasm,
        &source.sha256,
        component.cache_dir().as_deref(),
        Limits::default(),
    )?;
    // The catalog call reaches no Fabric; this client exists only to satisfy the capability.
    let fabric = Arc::new(FabricClient::new(FabricConfig::new("http://127.0.0.1:9", None)));
    let grants = Grants::without_approvals(fabric, Arc::new(ProposalStore::new()), runtime.limits().guest_time);
    let registry = load_registry(&runtime, &Selection::parse(toolsets), &grants).await?;
    Ok((runtime, registry))
}

/// The Markdown tool reference.
pub(crate) fn markdown(registry: &ToolRegistry) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "| tool | title | toolset | hints | arguments |");
    let _ = writeln!(out, "|---|---|---|---|---|");
    for t in registry.tools() {
        let d = &t.decl;
        let hints = if d.read_only {
            "read-only".to_string()
        } else {
            format!(
                "{}{}",
                if d.destructive { "destructive" } else { "not destructive" },
                if d.open_world { ", open world" } else { "" }
            )
        };
        let schema = Value::Object((*t.tool.input_schema).clone());
        let required: Vec<&str> =
            schema["required"].as_array().map(|r| r.iter().filter_map(Value::as_str).collect()).unwrap_or_default();
        let args: Vec<String> = schema["properties"]
            .as_object()
            .map(|props| {
                props
                    .iter()
                    .map(|(name, p)| {
                        let ty = kind_of(p);
                        let mark = if required.contains(&name.as_str()) { "" } else { "?" };
                        format!("`{name}{mark}`: {ty}")
                    })
                    .collect()
            })
            .unwrap_or_default();
        let _ = writeln!(out, "| `{}` | {} | `{}` | {} | {} |", d.name, d.title, d.toolset, hints, args.join(", "));
    }
    out
}

/// An argument's type in a few words: its JSON type, or its values when it is an enum.
fn kind_of(p: &Value) -> String {
    match (p["type"].as_str(), p["enum"].as_array()) {
        (_, Some(values)) if values.len() <= 3 => {
            let names: Vec<String> = values.iter().map(|v| v.as_str().map_or(v.to_string(), str::to_string)).collect();
            names.join(" \\| ")
        }
        (_, Some(values)) => format!("one of {} values", values.len()),
        (Some(ty), None) => p["format"].as_str().map_or(ty.to_string(), |f| format!("{ty} ({f})")),
        (None, None) => "any".into(),
    }
}
