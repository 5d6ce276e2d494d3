//! Where users already work: the Claude Code plugin (`plugins/equinix-mcp`, listed by the
//! repository's `.claude-plugin/marketplace.json`) and the MCP Registry entry (`server.json`),
//! each checked by its own oracle: the real Claude Code CLI (pinned by `tests/claude`'s lock file,
//! installed by `.ci/install-node`) and the registry's published JSON Schema (kept in
//! `tests/registry/` under its version).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use serde_json::Value;

use crate::harness::*;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

fn plugin_dir() -> PathBuf {
    repo().join("plugins/equinix-mcp")
}

/// The Claude Code CLI with a home of its own: no settings, plugins or credentials of the machine's
/// user are read, and nothing is fetched (no updates, telemetry or error reports).
fn claude(home: &Path, args: &[&str]) -> tokio::process::Command {
    let cli = node_fixture("claude", "@anthropic-ai/claude-code").join("node_modules/.bin/claude");
    let mut cmd = tokio::process::Command::new(cli);
    cmd.env_clear();
    for key in ["PATH", "TMPDIR", "LANG"] {
        if let Ok(v) = std::env::var(key) {
            cmd.env(key, v);
        }
    }
    cmd.env("HOME", home)
        .env("CLAUDE_CONFIG_DIR", home.join(".claude"))
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("DISABLE_AUTOUPDATER", "1")
        .env("DISABLE_TELEMETRY", "1")
        .env("DISABLE_ERROR_REPORTING", "1")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        // a server's first start on a cold cache compiles the component (seconds, in a debug build)
        .env("MCP_TIMEOUT", "60000")
        .current_dir(home)
        .args(args)
        .stdin(Stdio::null())
        .kill_on_drop(true);
    cmd
}

async fn finish(mut cmd: tokio::process::Command, what: &str) -> (bool, String) {
    let out = tokio::time::timeout(Duration::from_secs(120), cmd.output())
        .await
        .unwrap_or_else(|_| panic!("{what} did not finish within 120 s"))
        .unwrap();
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    (out.status.success(), text)
}

fn fresh_home(name: &str) -> PathBuf {
    let home = fresh_audit_path().with_extension(name);
    std::fs::create_dir_all(&home).unwrap();
    home
}

/// `claude plugin validate` passes the marketplace and, under `--strict` (warnings are errors),
/// the plugin, and it finds the server and the four skills the plugin is for.
#[tokio::test]
async fn claude_code_validates_the_marketplace_and_the_plugin() {
    let home = fresh_home("claude-validate");
    let repo = repo();
    let (ok, said) = finish(claude(&home, &["plugin", "validate", repo.to_str().unwrap()]), "validate").await;
    assert!(ok && said.contains("Validation passed"), "the marketplace: {said}");
    assert!(said.contains("marketplace.json"), "it read the repository's marketplace: {said}");

    let dir = plugin_dir();
    let (ok, said) =
        finish(claude(&home, &["plugin", "validate", dir.to_str().unwrap(), "--strict", "--json"]), "validate").await;
    let report: Value = serde_json::from_str(&said).unwrap_or_else(|e| panic!("{e}: {said}"));
    assert!(ok && report["success"] == true, "{report:#}");
    assert_eq!(report["manifest"]["errors"], serde_json::json!([]), "{report:#}");
    assert_eq!(report["manifest"]["warnings"], serde_json::json!([]), "{report:#}");
    let servers = report["provides"]["mcpServers"].as_array().unwrap();
    assert_eq!(servers.len(), 1, "{report:#}");
    assert_eq!(servers[0]["name"], "equinix");
    assert_eq!(servers[0]["type"], "stdio");
    assert_eq!(servers[0]["target"], "equinix-mcp");
    let skills = report["provides"]["skills"].to_string();
    for skill in ["troubleshoot-connection", "provision-cloud-connection", "review-proposal", "audit-changes"] {
        assert!(skills.contains(skill), "{skill} is not among the skills Claude Code found: {skills}");
    }
}

/// Installed from the repository's marketplace the way a user does (`plugin marketplace add`,
/// `plugin install`), the plugin's server configuration runs the built binary from `PATH`:
/// `claude mcp list` connects to it on its simulator. With no `equinix-mcp` on `PATH` the same
/// configuration fails to connect, so the check tells a running server from a missing one.
#[tokio::test]
async fn claude_code_connects_to_the_plugins_server() {
    let home = fresh_home("claude-install");
    let repo = repo();
    let (ok, said) = finish(claude(&home, &["plugin", "marketplace", "add", repo.to_str().unwrap()]), "add").await;
    assert!(ok, "marketplace add: {said}");
    let (ok, said) = finish(claude(&home, &["plugin", "install", "equinix-mcp@equinix-mcp"]), "install").await;
    assert!(ok, "install: {said}");

    let bin_dir = binary().parent().unwrap().to_path_buf();
    let path = format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap_or_default());
    let list = |path: &str| {
        let mut cmd = claude(&home, &["mcp", "list"]);
        cmd.env("PATH", path)
            .env("EQUINIX_MCP_FABRIC_SIM", "1")
            .env("EQUINIX_MCP_CACHE_DIR", cache_dir())
            .env("EQUINIX_MCP_AUDIT_LOG", fresh_audit_path());
        cmd
    };
    let line = |said: &str| {
        said.lines()
            .find(|l| l.starts_with("plugin:equinix-mcp:equinix"))
            .unwrap_or_else(|| panic!("the plugin's server is not listed: {said}"))
            .to_string()
    };

    let (ok, said) = finish(list(&path), "mcp list").await;
    assert!(ok, "{said}");
    let on_sim = line(&said);
    assert!(on_sim.contains("equinix-mcp serve --toolsets all,mutate"), "{on_sim}");
    assert!(on_sim.contains("Connected"), "on the simulator: {on_sim}");

    // the system's directories only: a developer's own installed equinix-mcp must not answer
    let (_, said) = finish(list("/usr/bin:/bin"), "mcp list").await;
    let missing = line(&said);
    assert!(!missing.contains("Connected") && missing.contains("Failed"), "no binary on PATH: {missing}");
}

/// Words of the skills that look like tool names and are not: fields of the audit records.
const NOT_TOOLS: [&str; 1] = ["fabric_uuid"];

/// Every `fabric_*` word in a text, each once, but [`NOT_TOOLS`].
fn tool_names(text: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for (i, _) in text.match_indices("fabric_") {
        let rest = &text[i..];
        let end = rest.find(|c: char| !(c.is_ascii_lowercase() || c == '_')).unwrap_or(rest.len());
        names.insert(rest[..end].trim_end_matches('_').to_string());
    }
    names.retain(|n| !NOT_TOOLS.contains(&n.as_str()));
    names
}

#[test]
fn tool_names_finds_each_name_once_whatever_surrounds_it() {
    let found = tool_names("call `fabric_get_port`, then fabric_delete_port. (fabric_get_port, `fabric_uuid`)");
    assert_eq!(found.into_iter().collect::<Vec<_>>(), ["fabric_delete_port", "fabric_get_port"]);
}

/// Each skill's prose carries no safety of its own, but its tool names must be the server's: a
/// skill naming a tool the server does not serve (renamed, or never there) fails here.
#[tokio::test]
async fn every_tool_a_skill_names_is_served() {
    let (ok, out, err) = run_to_exit(&["tools", "--toolsets", "all,mutate", "--json"], &[]).await;
    assert!(ok, "{err}");
    let catalog: Value = serde_json::from_str(&out).unwrap();
    let served: BTreeSet<String> =
        catalog["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().to_string()).collect();
    assert!(served.contains("fabric_confirm_change"), "{served:?}");

    let skills = plugin_dir().join("skills");
    let mut seen = 0;
    for entry in std::fs::read_dir(&skills).unwrap() {
        let dir = entry.unwrap().path();
        let text = std::fs::read_to_string(dir.join("SKILL.md")).unwrap();
        let name = dir.file_name().unwrap().to_str().unwrap();
        assert!(text.starts_with(&format!("---\nname: {name}\n")), "{name}: the front matter names another skill");
        let named = tool_names(&text);
        assert!(!named.is_empty(), "{name} names no tool by its served name");
        let unknown: Vec<_> = named.difference(&served).collect();
        assert!(unknown.is_empty(), "{name} names tools the server does not serve: {unknown:?}");
        seen += 1;
    }
    assert_eq!(seen, 4, "the four skills");
}

/// `server.json` is what the official MCP Registry accepts: valid against the registry's published
/// schema (2025-12-11, kept in the repository: the first to know `cargo` packages), with the
/// workspace's version. A copy broken the way a hand edit breaks it is refused, so the schema
/// really is applied. (What its packages run: host/tests/integration/packaging.rs.)
#[test]
fn the_registry_entry_matches_the_published_schema() {
    let read = |path: &Path| -> Value { serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap() };
    let schema = read(&repo().join("tests/registry/server.schema.2025-12-11.json"));
    let entry = read(&repo().join("server.json"));
    assert_eq!(entry["$schema"], schema["$id"], "server.json names the schema it is checked against");
    let validator = jsonschema::options().should_validate_formats(true).build(&schema).unwrap();
    let problems: Vec<String> = validator.iter_errors(&entry).map(|e| format!("{}: {e}", e.instance_path())).collect();
    assert!(problems.is_empty(), "{problems:#?}");
    assert_eq!(entry["version"], env!("CARGO_PKG_VERSION"), "the workspace's version");

    for (field, bad) in [
        ("name", Value::from("equinix-mcp")),
        ("description", Value::from("x".repeat(101))),
        ("version", Value::from(7)),
        ("packages", serde_json::json!([{"registryType": "mcpb", "identifier": "x.mcpb", "fileSha256": "abc"}])),
    ] {
        let mut broken = entry.clone();
        broken[field] = bad;
        assert!(!validator.is_valid(&broken), "a bad {field} passes the schema");
    }
}
