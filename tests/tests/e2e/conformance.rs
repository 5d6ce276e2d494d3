//! The official MCP conformance suite (`@modelcontextprotocol/conformance`, pinned by
//! `tests/conformance/package-lock.json`, installed by `.ci/install-node`) against the real
//! binary over streamable HTTP on loopback, as `conformance server --url ... --scenario NAME`.
//!
//! Every server scenario of the pinned suite is named here, either as one that applies or with
//! the reason it does not, so a newer suite's scenarios fail the list test until someone decides.

use std::collections::BTreeSet;
use std::process::Stdio;
use std::time::Duration;

use crate::harness::*;

/// The scenarios that test what any MCP server over streamable HTTP does: all must pass.
const APPLIES: [&str; 6] = [
    "server-initialize",
    "ping",
    "tools-list",
    // its `server-sse-disconnect-resume` check warns (it calls the suite's demo tool
    // `test_reconnection`); the checks of the server's own streams pass
    "server-sse-polling",
    "server-sse-multiple-streams",
    "dns-rebinding-protection",
];

/// The scenarios that need what this server does not serve.
const DOES_NOT_APPLY: [(&str, &str); 26] = [
    ("logging-set-level", "the server declares no `logging` capability: it sends no log messages to clients"),
    ("completion-complete", "no `completions` capability: there are no prompt or resource arguments to complete"),
    ("tools-call-simple-text", "calls the suite's demo tool `test_simple_text`"),
    ("tools-call-image", "calls the suite's demo tool `test_image_content`"),
    ("tools-call-audio", "calls the suite's demo tool `test_audio_content`"),
    ("tools-call-embedded-resource", "calls the suite's demo tool `test_embedded_resource`"),
    ("tools-call-mixed-content", "calls the suite's demo tool `test_multiple_content_types`"),
    ("tools-call-with-logging", "calls the suite's demo tool `test_tool_with_logging` (and needs `logging`)"),
    ("tools-call-error", "calls the suite's demo tool `test_error_handling`"),
    ("tools-call-with-progress", "calls the suite's demo tool `test_tool_with_progress`"),
    ("tools-call-sampling", "calls the suite's demo tool `test_sampling`; the server never asks for sampling"),
    ("tools-call-elicitation", "calls the suite's demo tool `test_elicitation`"),
    ("json-schema-2020-12", "reads the schema of the suite's demo tool `json_schema_2020_12_tool`"),
    ("elicitation-sep1034-defaults", "calls the suite's demo tool `test_elicitation_sep1034_defaults`"),
    ("elicitation-sep1330-enums", "calls the suite's demo tool `test_elicitation_sep1330_enums`"),
    ("resources-list", "no `resources` capability"),
    ("resources-read-text", "no `resources` capability (reads `test://static-text`)"),
    ("resources-read-binary", "no `resources` capability (reads `test://static-binary`)"),
    ("resources-templates-read", "no `resources` capability (reads `test://template/123/data`)"),
    ("resources-subscribe", "no `resources` capability (subscribes to `test://watched-resource`)"),
    ("resources-unsubscribe", "no `resources` capability"),
    ("prompts-list", "no `prompts` capability"),
    ("prompts-get-simple", "no `prompts` capability (gets `test_simple_prompt`)"),
    ("prompts-get-with-args", "no `prompts` capability (gets `test_prompt_with_arguments`)"),
    ("prompts-get-embedded-resource", "no `prompts` capability (gets `test_prompt_with_embedded_resource`)"),
    ("prompts-get-with-image", "no `prompts` capability (gets `test_prompt_with_image`)"),
];

fn conformance(args: &[&str]) -> tokio::process::Command {
    let dir = node_fixture("conformance", "@modelcontextprotocol/conformance");
    let mut cmd = tokio::process::Command::new(node());
    cmd.arg(dir.join("node_modules/@modelcontextprotocol/conformance/dist/index.js"))
        .args(args)
        // its results directory, if it writes one, stays out of the tree
        .current_dir(std::env::temp_dir())
        .stdin(Stdio::null())
        .kill_on_drop(true);
    cmd
}

/// (success, stdout and stderr) of one run of the suite, bounded in time.
async fn run(args: &[&str]) -> (bool, String) {
    let out = tokio::time::timeout(Duration::from_secs(60), conformance(args).output())
        .await
        .unwrap_or_else(|_| panic!("conformance {args:?} did not finish within 60 s"))
        .unwrap();
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    (out.status.success(), text)
}

#[tokio::test]
async fn the_official_conformance_suite_passes_every_scenario_that_applies() {
    let server = Launch::serve().args(&["--toolsets", "all,mutate"]).http("127.0.0.1:0").await;
    let url = &server.url;
    let runs = APPLIES.iter().map(|scenario| async move {
        let (ok, text) = run(&["server", "--url", url, "--scenario", scenario]).await;
        (scenario, ok, text)
    });
    let mut failed = Vec::new();
    for (scenario, ok, text) in futures_util::future::join_all(runs).await {
        // a scenario the suite does not know fails too, but says nothing of passing
        let passed = text.lines().find(|l| l.starts_with("Passed: ")).unwrap_or_default().to_string();
        let all = passed
            .strip_prefix("Passed: ")
            .and_then(|p| p.split(',').next())
            .and_then(|n| n.split_once('/'))
            .is_some_and(|(a, b)| a == b && a != "0");
        if !(ok && all && passed.contains(" 0 failed")) {
            failed.push(format!("--- {scenario} ({passed:?}) ---\n{text}"));
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}

#[tokio::test]
async fn every_server_scenario_of_the_pinned_suite_is_run_or_said_not_to_apply() {
    let (ok, text) = run(&["list", "--server"]).await;
    assert!(ok, "{text}");
    let listed: BTreeSet<&str> =
        text.lines().filter_map(|l| l.trim().strip_prefix("- ")).filter_map(|l| l.split_whitespace().next()).collect();
    let ours: BTreeSet<&str> = APPLIES.iter().copied().chain(DOES_NOT_APPLY.iter().map(|(s, _)| *s)).collect();
    assert_eq!(ours.len(), APPLIES.len() + DOES_NOT_APPLY.len(), "a scenario is named twice");
    assert_eq!(listed, ours, "the pinned suite's server scenarios:\n{text}");
}
