//! What the release ships, checked without building it (`.ci/release` builds and runs each
//! artifact): the Claude Desktop bundle's manifest starts `serve` with arguments this binary's
//! own parser takes and variables it reads; the bundle, the registry entry and the crate agree
//! on name and version; the image's recipe runs as a non-root user with the registry's label.

use std::collections::BTreeSet;
use std::path::PathBuf;

use clap::FromArgMatches;
use equinix_mcp::cli::{Cli, Command};
use serde_json::Value;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

fn read_json(path: &str) -> Value {
    let text = std::fs::read_to_string(repo().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The platforms `packaging/mcpb/for-platform.py` makes a bundle for, as `.ci/release` names them.
const BUNDLES: [&str; 3] = ["linux-x86_64", "linux-aarch64", "windows-x86_64"];

/// Read by `serve` itself, not through a flag: the secret is never a command-line argument.
const READ_DIRECTLY: [&str; 1] = ["EQUINIX_API_CLIENTSECRET"];

/// Every environment variable `serve` reads.
fn serve_variables() -> BTreeSet<String> {
    let cli = Cli::command_with_version("test");
    let serve = cli.find_subcommand("serve").unwrap();
    let mut names: BTreeSet<String> =
        serve.get_arguments().filter_map(|a| a.get_env()).map(|e| e.to_string_lossy().into_owned()).collect();
    names.extend(READ_DIRECTLY.map(String::from));
    names
}

/// `value` with `${name}` replaced from `vars`, as the official MCPB library does.
fn substitute(value: &str, vars: &[(String, String)]) -> String {
    vars.iter().fold(value.to_string(), |s, (k, v)| s.replace(&format!("${{{k}}}"), v))
}

/// The manifest's command line and environment for one user configuration (the manifest's
/// defaults, overridden by `user`).
fn resolve(manifest: &Value, user: &[(&str, Value)]) -> (Vec<String>, Vec<(String, String)>) {
    let mut vars = vec![("__dirname".to_string(), "/opt/bundle".to_string())];
    for (key, option) in manifest["user_config"].as_object().unwrap() {
        let chosen = user.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone()).unwrap_or(option["default"].clone());
        let text = match chosen {
            Value::String(s) => s,
            other => other.to_string(),
        };
        vars.push((format!("user_config.{key}"), text));
    }
    let config = &manifest["server"]["mcp_config"];
    let args = config["args"].as_array().unwrap().iter().map(|a| substitute(a.as_str().unwrap(), &vars)).collect();
    let env = config["env"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), substitute(v.as_str().unwrap(), &vars)))
        .collect();
    (args, env)
}

/// `serve`'s settings for a command line, parsed by the binary's own parser.
fn parse_serve(args: &[String]) -> Result<equinix_mcp::cli::ServeArgs, String> {
    let argv = std::iter::once("equinix-mcp".to_string()).chain(args.iter().cloned());
    let matches = Cli::command_with_version("test").try_get_matches_from(argv).map_err(|e| e.to_string())?;
    match Cli::from_arg_matches(&matches).map_err(|e| e.to_string())?.command {
        Some(Command::Serve(serve)) => Ok(*serve),
        other => Err(format!("not serve: {other:?}")),
    }
}

#[test]
fn the_bundle_starts_serve_with_arguments_the_binary_parses_and_variables_it_reads() {
    let manifest = read_json("packaging/mcpb/manifest.json");
    assert_eq!(manifest["server"]["type"], "binary");
    let config = &manifest["server"]["mcp_config"];
    let entry = manifest["server"]["entry_point"].as_str().unwrap();
    assert_eq!(config["command"], format!("${{__dirname}}/{entry}"), "the command is the bundle's own binary");
    let overrides = config["platform_overrides"].as_object().unwrap();
    assert_eq!(overrides.keys().collect::<Vec<_>>(), ["linux", "win32"]);
    assert_eq!(overrides["win32"]["command"], "${__dirname}/server/equinix-mcp.exe");
    assert_eq!(manifest["compatibility"]["platforms"], serde_json::json!(["linux", "win32"]));

    let secret = &manifest["user_config"]["client_secret"];
    assert_eq!(secret["sensitive"], true, "the secret is kept in the OS's credential store");
    assert_eq!(manifest["user_config"]["fabric_sim"]["type"], "boolean");

    // every option is used, and everything used is an option
    let text = config.to_string();
    let used: BTreeSet<&str> =
        text.split("${user_config.").skip(1).map(|rest| rest.split('}').next().unwrap()).collect();
    let declared: BTreeSet<&str> = manifest["user_config"].as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(used, declared);

    let variables = serve_variables();
    for (defaults, user) in [
        (true, vec![]),
        (
            false,
            vec![
                ("client_id", Value::from("abc")),
                ("client_secret", Value::from("s3cret")),
                ("toolsets", Value::from("default,routing,mutate")),
                ("fabric_sim", Value::from(true)),
            ],
        ),
    ] {
        let (args, env) = resolve(&manifest, &user);
        let serve = parse_serve(&args).unwrap_or_else(|e| panic!("{args:?}: {e}"));
        let toolsets = if defaults { "all,mutate" } else { "default,routing,mutate" };
        assert_eq!(serve.toolsets.as_deref(), Some(toolsets), "{args:?}");
        for (name, value) in &env {
            assert!(variables.contains(name), "serve reads no {name}");
            assert!(!value.contains("${"), "{name}={value} is left unresolved");
        }
        let sim = &env.iter().find(|(k, _)| k == "EQUINIX_MCP_FABRIC_SIM").unwrap().1;
        let parsed = clap::builder::TypedValueParser::parse_ref(
            &clap::builder::BoolishValueParser::new(),
            &clap::Command::new("x"),
            None,
            std::ffi::OsStr::new(sim),
        );
        assert_eq!(parsed.unwrap(), !defaults, "the switch's {sim:?}");
    }

    // and the check can fail: a flag the binary does not take is refused
    let mut broken = manifest.clone();
    broken["server"]["mcp_config"]["args"][1] = Value::from("--toolset");
    assert!(parse_serve(&resolve(&broken, &[]).0).is_err());
}

#[test]
fn the_bundle_the_registry_entry_and_the_crate_agree_on_name_and_version() {
    let version = env!("CARGO_PKG_VERSION");
    let manifest = read_json("packaging/mcpb/manifest.json");
    let entry = read_json("server.json");
    assert_eq!(manifest["name"], env!("CARGO_PKG_NAME"));
    assert_eq!(manifest["version"], version);
    assert_eq!(entry["version"], version);
    assert_eq!(manifest["description"], entry["description"]);
    assert_eq!(manifest["display_name"], entry["title"]);
    assert_eq!(manifest["repository"]["url"], entry["repository"]["url"]);

    let packages = entry["packages"].as_array().unwrap();
    let of = |kind: &'static str| packages.iter().filter(move |p| p["registryType"] == kind);
    let cargo: Vec<_> = of("cargo").collect();
    assert_eq!(cargo.len(), 1);
    assert_eq!(cargo[0]["identifier"], env!("CARGO_PKG_NAME"));
    assert_eq!(cargo[0]["version"], version);
    let oci: Vec<_> = of("oci").collect();
    assert_eq!(oci.len(), 1);
    assert!(oci[0]["identifier"].as_str().unwrap().ends_with(&format!("/equinix-mcp:{version}")), "{}", oci[0]);

    let repository = entry["repository"]["url"].as_str().unwrap();
    let bundles: Vec<String> = of("mcpb").map(|p| p["identifier"].as_str().unwrap().to_string()).collect();
    let expected: Vec<String> = BUNDLES
        .iter()
        .map(|platform| format!("{repository}/releases/download/v{version}/equinix-mcp-{version}-{platform}.mcpb"))
        .collect();
    assert_eq!(bundles, expected, "one bundle per platform .ci/release builds, at this version");
    for package in of("mcpb") {
        // filled in by .ci/release (packaging/registry-entry.py) in the release's own copy; the
        // repository's copy never carries an older release's hash
        assert_eq!(package["fileSha256"], "0".repeat(64), "{package}");
    }

    // what the registry tells a client to run is what the binary takes and reads
    let variables = serve_variables();
    for package in packages {
        for variable in package["environmentVariables"].as_array().into_iter().flatten() {
            let name = variable["name"].as_str().unwrap();
            assert!(variables.contains(name), "serve reads no {name}");
            assert_eq!(variable["isSecret"] == true, name.contains("SECRET"), "{variable}");
        }
    }
    let args: Vec<String> = cargo[0]["packageArguments"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|a| match a["type"].as_str().unwrap() {
            "named" => vec![a["name"].as_str().unwrap().to_string(), a["value"].as_str().unwrap().to_string()],
            _ => vec![a["value"].as_str().unwrap().to_string()],
        })
        .collect();
    parse_serve(&args).unwrap_or_else(|e| panic!("{args:?}: {e}"));
}

#[test]
fn the_image_runs_as_a_non_root_user_with_the_registry_label_and_a_health_check() {
    let recipe = std::fs::read_to_string(repo().join("packaging/oci/Containerfile")).unwrap();
    // instructions, their continuation lines joined
    let joined = recipe.lines().filter(|l| !l.trim_start().starts_with('#')).collect::<Vec<_>>().join("\n");
    let instructions: Vec<String> = joined.replace("\\\n", " ").lines().map(str::to_string).collect();
    let find = |keyword: &str| -> Vec<String> {
        instructions.iter().filter_map(|l| l.strip_prefix(&format!("{keyword} ")).map(str::to_string)).collect()
    };
    assert_eq!(find("FROM"), ["scratch"], "nothing but what the recipe copies");

    let user = find("USER");
    assert_eq!(user.len(), 1);
    let (uid, gid) = user[0].trim().split_once(':').expect("USER uid:gid");
    assert!(uid.parse::<u32>().unwrap() != 0 && gid.parse::<u32>().unwrap() != 0, "USER {}", user[0]);
    let passwd = std::fs::read_to_string(repo().join("packaging/oci/passwd")).unwrap();
    assert!(passwd.lines().any(|l| l.split(':').nth(2) == Some(uid)), "passwd names uid {uid}");

    let entry = read_json("server.json");
    let label = format!("io.modelcontextprotocol.server.name={}", entry["name"]);
    assert!(find("LABEL").iter().any(|l| l.contains(&label)), "the registry's label, as server.json names it");
    assert_eq!(find("EXPOSE"), ["8931/tcp"]);
    let env = find("ENV").join(" ");
    assert!(env.contains("EQUINIX_MCP_LISTEN=0.0.0.0:8931") && env.contains("EQUINIX_MCP_TRANSPORT=http"), "{env}");
    for word in ["SECRET", "TOKEN=", "CLIENTID"] {
        assert!(!env.contains(word), "no credential is built into the image: {env}");
    }

    // the health check is the binary's own, with arguments it parses
    let health = find("HEALTHCHECK");
    assert_eq!(health.len(), 1);
    let command = health[0].split("CMD ").nth(1).unwrap();
    let argv: Vec<String> = serde_json::from_str(command).unwrap();
    assert_eq!(argv[0], "/usr/local/bin/equinix-mcp");
    let matches = Cli::command_with_version("test").try_get_matches_from(argv).unwrap();
    assert!(matches!(Cli::from_arg_matches(&matches).unwrap().command, Some(Command::Healthcheck(_))));
    let entrypoint: Vec<String> = serde_json::from_str(&find("ENTRYPOINT")[0]).unwrap();
    let cmd: Vec<String> = serde_json::from_str(&find("CMD")[0]).unwrap();
    assert_eq!(entrypoint, ["/usr/local/bin/equinix-mcp"]);
    assert_eq!(cmd, ["serve"]);
}

/// `.ci/release` stops before building anything when something is missing, says what, and leaves
/// no folder behind. It runs here in a throwaway repository holding only what its checks read
/// (the script and `Cargo.toml`), so the real tree's state does not matter.
#[test]
fn the_release_script_stops_before_building_and_names_what_is_missing() {
    let scratch = tempfile::tempdir().unwrap();
    let clone = scratch.path().join("repo");
    std::fs::create_dir_all(clone.join(".ci")).unwrap();
    std::fs::copy(repo().join(".ci/release"), clone.join(".ci/release")).unwrap();
    std::fs::copy(repo().join("Cargo.toml"), clone.join("Cargo.toml")).unwrap();
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .args([
                "-c",
                "user.name=release-test",
                "-c",
                "user.email=release@test.invalid",
                "-c",
                "commit.gpgsign=false",
            ])
            .args(args)
            .current_dir(&clone)
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    };
    git(&["init", "--quiet"]);
    git(&["add", "."]);
    git(&["commit", "--quiet", "-m", "release test"]);

    let key = scratch.path().join("test.key");
    std::fs::write(
        &key,
        "untrusted comment: minisign secret key\nRWQAAEIyAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\n",
    )
    .unwrap();
    let not_a_key = scratch.path().join("notes.txt");
    std::fs::write(&not_a_key, "hello\n").unwrap();
    let inside = clone.join("test.key");
    let out = scratch.path().join("dist/equinix-mcp");
    let run = |args: &[&str], key: Option<&std::path::Path>| -> String {
        let mut command = std::process::Command::new("bash");
        command.arg(clone.join(".ci/release")).args(["--out", out.to_str().unwrap()]).args(args);
        command.env_remove("EQUINIX_MCP_RELEASE_KEY");
        if let Some(key) = key {
            command.env("EQUINIX_MCP_RELEASE_KEY", key);
        }
        let result = command.output().unwrap();
        assert_eq!(result.status.code(), Some(1), "{result:?}");
        let parent = out.parent().unwrap();
        let left: Vec<_> =
            std::fs::read_dir(parent).map(|d| d.flatten().map(|e| e.file_name()).collect()).unwrap_or_default();
        assert!(left.is_empty(), "a stopped release leaves nothing behind: {left:?}");
        String::from_utf8(result.stderr).unwrap()
    };

    assert!(run(&[], None).contains("no signing key: pass --key FILE or set EQUINIX_MCP_RELEASE_KEY"));
    assert!(
        run(&["--key", "/nonexistent/release.key"], None).contains("/nonexistent/release.key is not a readable file")
    );
    assert!(run(&[], Some(&not_a_key)).contains("is not a minisign secret key"));
    std::fs::copy(&key, &inside).unwrap();
    let said = run(&[], Some(&inside));
    assert!(said.contains("is inside the repository"), "{said}");
    // the copy inside is an untracked file: the tree is dirty now
    let said = run(&[], Some(&key));
    assert!(said.contains("the tree has uncommitted changes"), "{said}");
    std::fs::remove_file(&inside).unwrap();
    std::fs::create_dir_all(&out).unwrap();
    let said = {
        let result = std::process::Command::new("bash")
            .arg(clone.join(".ci/release"))
            .args(["--out", out.to_str().unwrap(), "--key", key.to_str().unwrap()])
            .output()
            .unwrap();
        assert_eq!(result.status.code(), Some(1));
        assert_eq!(std::fs::read_dir(&out).unwrap().count(), 0, "an existing folder is left as it was");
        String::from_utf8(result.stderr).unwrap()
    };
    assert!(said.contains("exists: a release folder is never overwritten"), "{said}");
    std::fs::remove_dir(&out).unwrap();
    // a clean tree and a key, but the cross tools were never installed in this repository
    let said = run(&[], Some(&key));
    assert!(
        said.contains("missing: cargo-zigbuild and zig") && said.contains("run .ci/install-release-tools"),
        "{said}"
    );
}
