//! The command line documents every flag with its environment variable.

use std::process::Command;

fn help(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_equinix-mcp")).args(args).arg("--help").output().unwrap();
    assert!(out.status.success());
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn serve_help_names_every_environment_variable() {
    let text = help(&["serve"]);
    for var in [
        "EQUINIX_MCP_TOOLSETS",
        "EQUINIX_MCP_COMPONENT",
        "EQUINIX_MCP_COMPONENT_SHA256",
        "EQUINIX_API_ENDPOINT",
        "EQUINIX_API_CLIENTID",
        "EQUINIX_MCP_ELICIT_TIMEOUT_MS",
        "EQUINIX_MCP_ALLOW_UNCONFIRMED_MUTATIONS",
        "EQUINIX_MCP_CACHE_DIR",
        "EQUINIX_MCP_AUTH_TOKEN_FILE",
        "EQUINIX_MCP_ALLOWED_HOSTS",
        "EQUINIX_MCP_MAX_REQUEST_BYTES",
        "EQUINIX_MCP_SHUTDOWN_GRACE_MS",
        "EQUINIX_MCP_STATE_KEY",
        "EQUINIX_MCP_PROPOSAL_STORE",
        "EQUINIX_MCP_POLICY",
        "EQUINIX_API_CLIENTSECRET",
    ] {
        assert!(text.contains(var), "{var} missing from serve --help");
    }
    assert!(text.contains("--fabric-sim") && text.contains("--toolsets"));
}

/// The shipped binary offers what a user runs; the benchmarks and their echo server live in
/// `equinix-mcp-bench`.
#[test]
fn help_lists_only_what_a_user_runs() {
    let text = help(&[]);
    let commands: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        // a command's line starts two spaces in; a wrapped description's further lines, more
        .filter_map(|l| l.strip_prefix("  ").filter(|rest| !rest.starts_with(' ')))
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert_eq!(
        commands,
        [
            "serve",
            "inspect",
            "fabric-sim",
            "tools",
            "call",
            "build-component",
            "policy",
            "audit",
            "passkeys",
            "approvers",
            "help"
        ],
        "{text}"
    );
    for hidden in ["bench", "bench-echo"] {
        let out = Command::new(env!("CARGO_BIN_EXE_equinix-mcp")).arg(hidden).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "`{hidden}` is not a subcommand of the product");
    }
}

/// The first screen of `--help` is the commands and examples, not serve's options (those are
/// `serve --help`'s, still taken without the subcommand), and every example parses.
#[test]
fn help_is_one_screen_of_commands_and_examples() {
    // as an 80-column terminal shows it, when clap wraps (the workspace's build turns wrapping on)
    let out = Command::new(env!("CARGO_BIN_EXE_equinix-mcp")).arg("--help").env("COLUMNS", "80").output().unwrap();
    let top = String::from_utf8(out.stdout).unwrap();
    assert!(top.lines().count() <= 45, "{} lines:\n{top}", top.lines().count());
    assert!(top.contains("Examples:") && top.contains("equinix-mcp serve --help"), "{top}");
    assert!(!top.contains("--proposal-store") && !top.contains("EQUINIX_MCP_TOOLSETS"), "{top}");
    let mut examples = 0;
    for line in top.lines().filter_map(|l| l.strip_prefix("  equinix-mcp ")) {
        let out = Command::new(env!("CARGO_BIN_EXE_equinix-mcp"))
            .args(line.split_whitespace())
            .arg("--help")
            .output()
            .unwrap();
        assert!(out.status.success(), "{line}: {}", String::from_utf8_lossy(&out.stderr));
        examples += 1;
    }
    assert!(examples >= 4, "{top}");

    let serve = help(&["serve"]);
    assert!(serve.contains("--proposal-store") && serve.contains("EQUINIX_API_CLIENTSECRET"), "{serve}");
    let flat = Command::new(env!("CARGO_BIN_EXE_equinix-mcp"))
        .args(["--fabric-sim", "--toolsets", "all", "--help"])
        .output()
        .unwrap();
    assert!(flat.status.success(), "serve's options are still taken without `serve`");
}

/// A passkey's id is base64url, so one in 64 begins with `-`: it is still the id, not a flag.
#[test]
fn a_credential_id_that_begins_with_a_dash_is_an_id() {
    for id in ["-Wq3n8", "--x9", "plain"] {
        let out = Command::new(env!("CARGO_BIN_EXE_equinix-mcp"))
            .args(["passkeys", "revoke", id, "--reason", "left the team", "--help"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{id}: {}", String::from_utf8_lossy(&out.stderr));
    }
}

/// The product links the broker only as the sandboxed component: a native copy would carry the
/// benchmark's approval constructor, which forges what the WIT guarantees cannot be forged.
#[test]
fn the_shipped_binary_links_no_broker_code_natively() {
    let out = Command::new(env!("CARGO"))
        .args(["tree", "--offline", "--locked", "-p", "equinix-mcp", "-e", "normal", "--prefix", "none"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    let tree = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "cargo tree failed: {}", String::from_utf8_lossy(&out.stderr));
    assert!(tree.lines().any(|l| l.starts_with("wasmtime ")), "the tree is the product's:\n{tree}");
    assert!(!tree.contains("equinix-broker-component"), "{tree}");
}

/// A downloaded binary says which release file it is: its version, the target it was built for
/// and the component it embeds.
#[test]
fn version_shows_the_target_and_the_embedded_component_sha256() {
    let out = Command::new(env!("CARGO_BIN_EXE_equinix-mcp")).arg("--version").output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let sha = equinix_mcp::component::sha256_hex(equinix_mcp::EMBEDDED_COMPONENT);
    let target = env!("EQUINIX_MCP_TARGET");
    assert!(
        target.starts_with(std::env::consts::ARCH) && target.contains(std::env::consts::OS),
        "{target} is not this machine's target"
    );
    let expected = format!("equinix-mcp {} {target} (component sha256:{sha})\n", env!("CARGO_PKG_VERSION"));
    assert_eq!(text, expected);
}

/// A limit of 0 would refuse everything (or expire everything at once): clap refuses it, and an
/// instance's memory beyond the engine's reservation, before anything starts.
#[test]
fn limits_out_of_range_are_refused_when_the_command_line_is_parsed() {
    for (flag, value, says) in [
        ("--max-sessions", "0", "0 is not in 1..=1000000"),
        ("--max-connections", "2000000", "2000000 is not in 1..=1000000"),
        ("--max-calls-per-principal", "0", "0 is not in 1..=1000000"),
        ("--guest-time-ms", "0", "0 is not in 1..=86400000"),
        ("--header-read-timeout-ms", "0", "0 is not in 1..=86400000"),
        ("--memory-mib", "0", "0 is not in 1..=128"),
        ("--memory-mib", "129", "129 is not in 1..=128"),
        ("--max-sessions", "many", "invalid value 'many'"),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_equinix-mcp"))
            .args(["serve", "--fabric-sim", flag, value])
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{flag} {value}: {err}");
        assert!(err.contains(flag) && err.contains(says), "{flag} {value}: {err}");
    }
}

#[test]
fn unknown_toolsets_are_a_startup_error() {
    let out = Command::new(env!("CARGO_BIN_EXE_equinix-mcp"))
        .args(["serve", "--fabric-sim", "--no-cache", "--toolsets", "metros,prots"])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("unknown toolset \"prots\""), "{err}");
}

#[test]
fn readme_tool_reference_is_current() {
    let out = Command::new(env!("CARGO_BIN_EXE_equinix-mcp"))
        .args(["tools", "--toolsets", "all,mutate", "--no-cache"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let generated = String::from_utf8(out.stdout).unwrap();
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/tools.md")).unwrap();
    let start = readme.find("<!-- tools:begin -->\n").expect("docs/tools.md has the tools:begin marker")
        + "<!-- tools:begin -->\n".len();
    let end = readme.find("<!-- tools:end -->").expect("docs/tools.md has the tools:end marker");
    assert_eq!(
        &readme[start..end],
        generated,
        "docs/tools.md, the tool reference, is stale: regenerate it with `equinix-mcp tools --toolsets all,mutate`"
    );
}

#[test]
fn every_subcommand_documents_its_flags() {
    for (sub, needles) in [
        (vec!["inspect"], vec!["--component", "EQUINIX_MCP_COMPONENT", "--json", "EQUINIX_MCP_CACHE_DIR"]),
        (
            vec!["fabric-sim"],
            vec![
                "--listen",
                "EQUINIX_MCP_SIM_LISTEN",
                "EQUINIX_MCP_SIM_TOKEN_TIMEOUT_SECS",
                "EQUINIX_MCP_SIM_LATENCY_MS",
            ],
        ),
        (vec!["tools"], vec!["--toolsets", "EQUINIX_MCP_TOOLSETS", "--markdown", "--json"]),
        (
            vec!["serve"],
            vec![
                "--transport",
                "EQUINIX_MCP_TRANSPORT",
                "--listen",
                "EQUINIX_MCP_LISTEN",
                "--audit-log",
                "EQUINIX_MCP_AUDIT_LOG",
                "--log-format",
                "EQUINIX_MCP_LOG_FORMAT",
            ],
        ),
    ] {
        let text = help(&sub);
        for n in needles {
            assert!(text.contains(n), "{n} missing from `{} --help`", sub.join(" "));
        }
    }
}

#[test]
fn the_license_file_is_the_one_cargo_toml_names() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    let manifest = std::fs::read_to_string(format!("{root}/Cargo.toml")).unwrap();
    assert!(manifest.contains("license = \"Apache-2.0\""), "the workspace declares Apache-2.0");
    let license = std::fs::read_to_string(format!("{root}/LICENSE")).unwrap();
    let head: Vec<&str> = license.lines().take(2).map(str::trim).collect();
    assert_eq!(head, ["Apache License", "Version 2.0, January 2004"]);
    assert!(license.contains("END OF TERMS AND CONDITIONS"));
}
