//! The component: only the world's imports, inspect, swapping, pinning and the precompile cache.

use super::*;

fn world_imports() -> Vec<String> {
    let wit = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../wit/broker.wit")).unwrap();
    let package =
        wit.lines().find_map(|l| l.trim().strip_prefix("package ")).unwrap().trim_end_matches(';').to_string();
    let (ns_name, version) = package.split_once('@').unwrap();
    let world = &wit[wit.find("world broker").unwrap()..];
    let mut imports: Vec<String> = world
        .lines()
        .filter_map(|l| l.trim().strip_prefix("import "))
        .map(|i| format!("{ns_name}/{}@{version}", i.trim_end_matches(';')))
        .collect();
    imports.sort();
    imports
}

#[test]
fn embedded_component_imports_exactly_the_world() {
    let surface = equinix_mcp::component::inspect(equinix_mcp::EMBEDDED_COMPONENT).unwrap();
    let mut imports: Vec<String> = surface.imports.iter().map(|i| i.name.clone()).collect();
    imports.sort();
    assert_eq!(imports, world_imports());
    assert!(imports.iter().all(|i| !i.starts_with("wasi:")));
    assert!(surface.verdict.accepted, "{:?}", surface.verdict.problems);
    let exports: Vec<&str> = surface.exports.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(exports, vec!["equinix:broker/tools@0.3.0"]);
    // the create path, read from the types: one import spends an approval, one mints it
    assert!(surface.create_path.holds);
    assert_eq!(surface.create_path.spends_approval, ["equinix:broker/confirmation@0.3.0#[static]approval.execute"]);
    assert_eq!(surface.create_path.mints_approval, ["equinix:broker/confirmation@0.3.0#ask"]);
}

/// A component (in WAT) that also imports a socket interface.
fn forbidden_component(path: &std::path::Path) {
    let wat = r#"(component
        (import "wasi:sockets/tcp@0.2.0" (instance (export "connect" (func (param "port" u16)))))
        (import "equinix:broker/clock@0.3.0" (instance (export "now-ms" (func (result u64)))))
    )"#;
    std::fs::write(path, wat::parse_str(wat).unwrap()).unwrap();
}

#[tokio::test]
async fn a_component_importing_sockets_is_refused_by_inspect_and_serve() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("sockets.wasm");
    forbidden_component(&bad);
    let bad = bad.to_str().unwrap();

    let (ok, stdout, _) = run_to_exit(&["inspect", "--component", bad], &[]).await;
    assert!(!ok, "inspect must exit non-zero");
    assert!(stdout.contains("REFUSED") && stdout.contains("wasi:sockets/tcp@0.2.0"), "{stdout}");

    let (ok, stdout, _) = run_to_exit(&["inspect", "--component", bad, "--json"], &[]).await;
    assert!(!ok);
    let v: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["verdict"]["accepted"], false);
    assert!(v["verdict"]["problems"][0].as_str().unwrap().contains("wasi:sockets/tcp@0.2.0"));

    let (ok, _, stderr) = run_to_exit(&["serve", "--fabric-sim", "--component", bad], &[]).await;
    assert!(!ok, "serve must refuse to start");
    assert!(stderr.contains("refusing component") && stderr.contains("wasi:sockets/tcp@0.2.0"), "{stderr}");
}

#[tokio::test]
async fn inspect_accepts_the_embedded_component_and_shows_both_sides() {
    let (ok, stdout, _) = run_to_exit(&["inspect"], &[]).await;
    assert!(ok);
    let sha = equinix_mcp::component::sha256_hex(equinix_mcp::EMBEDDED_COMPONENT);
    assert!(stdout.contains(&sha) && stdout.contains("ACCEPTED"));
    for import in world_imports() {
        assert!(stdout.contains(&import), "{import} missing from:\n{stdout}");
    }
    assert!(stdout.contains("POST /fabric/v4/connections") && stdout.contains("never: PUT, PATCH, DELETE"));
    // the invariant, stated from the types
    let section = &stdout[stdout.find("create path (read from the import types)").expect("a create path section")..];
    for needle in [
        "only equinix:broker/confirmation@0.3.0#[static]approval.execute sends a create",
        "own<approval>",
        "only equinix:broker/confirmation@0.3.0#ask returns an approval",
        "cannot create without a human's yes",
        "a validated proposal yields at most one approval",
    ] {
        assert!(section.contains(needle), "{needle} missing from:\n{section}");
    }
    // the catalog is checked as serve checks it, and no policy is in force
    assert!(stdout.contains("tools, checked as serve checks them"), "{stdout}");
    assert!(stdout.contains("policy      none given"), "{stdout}");
    let (_, json_out, _) = run_to_exit(&["inspect", "--json"], &[]).await;
    let v: Value = serde_json::from_str(&json_out).unwrap();
    assert_eq!(v["create_path"]["holds"], true);
    assert_eq!(v["create_path"]["bound_to_proposal"], true);
    assert!(v["catalog"]["tools"].as_u64().unwrap() >= 38, "{}", v["catalog"]);
    let ask = v["imports"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|i| i["functions"].as_array().unwrap())
        .find(|f| f["name"] == "ask");
    assert!(ask.unwrap()["signature"].as_str().unwrap().contains("option<own<approval>>"), "{ask:?}");
}

#[tokio::test]
async fn a_component_built_for_broker_0_2_0_is_refused_naming_both_versions() {
    let dir = tempfile::tempdir().unwrap();
    let old = dir.path().join("old.wasm");
    let wat = r#"(component
        (import "equinix:broker/clock@0.2.0" (instance (export "now-ms" (func (result u64)))))
        (import "equinix:broker/fabric@0.2.0" (instance (export "send" (func (param "path" string)))))
    )"#;
    std::fs::write(&old, wat::parse_str(wat).unwrap()).unwrap();
    let old = old.to_str().unwrap();
    let (ok, stdout, _) = run_to_exit(&["inspect", "--component", old], &[]).await;
    assert!(!ok, "inspect must exit non-zero");
    assert!(
        stdout.contains("REFUSED")
            && stdout.contains("equinix:broker@0.2.0")
            && stdout.contains("equinix:broker@0.3.0"),
        "{stdout}"
    );
    let (ok, _, stderr) = run_to_exit(&["serve", "--fabric-sim", "--component", old], &[]).await;
    assert!(!ok, "serve must refuse to start");
    assert!(stderr.contains("equinix:broker@0.2.0") && stderr.contains("requires equinix:broker@0.3.0"), "{stderr}");
}

#[tokio::test]
async fn swapping_the_component_serves_its_catalog_without_rebuilding() {
    let probe = probe_component();
    let server = Launch::serve().args(&["--component", probe.to_str().unwrap(), "--toolsets", "echo"]).stdio().await;
    let names: Vec<String> =
        server.client.list_all_tools().await.unwrap().into_iter().map(|t| t.name.to_string()).collect();
    assert_eq!(names, vec!["swap_echo"]);
    let r = structured(&server.call("swap_echo", json!({"hello": "world"})).await);
    assert_eq!(r, json!({"echo": {"hello": "world"}, "component": "probe"}));
    let sha = equinix_mcp::component::sha256_hex(&std::fs::read(&probe).unwrap());
    assert!(server.stderr_text().contains(&sha), "the banner names the running component");
    server.stop().await;
}

#[tokio::test]
async fn a_pinned_sha256_that_does_not_match_refuses_to_start() {
    let probe = probe_component();
    let wrong = "0".repeat(64);
    let (ok, _, stderr) = run_to_exit(
        &["serve", "--fabric-sim", "--component", probe.to_str().unwrap(), "--component-sha256", &wrong],
        &[],
    )
    .await;
    assert!(!ok);
    assert!(stderr.contains("pins") && stderr.contains(&wrong), "{stderr}");
}

/// The tool names `equinix-mcp tools` reads from the component it loads (what actually runs).
async fn tools_run(cache: &std::path::Path, extra: &[&str]) -> (Vec<String>, String) {
    let mut args = vec!["tools", "--json", "--toolsets", "all,mutate", "--cache-dir", cache.to_str().unwrap()];
    args.extend_from_slice(extra);
    let (ok, stdout, stderr) = run_to_exit(&args, &[]).await;
    assert!(ok, "{stderr}");
    let v: Value = serde_json::from_str(&stdout).unwrap();
    let names = v["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().to_string()).collect();
    (names, stderr)
}

/// The one entry of `dir` whose name starts with `sha` (not its lock file).
fn entry_of(dir: &std::path::Path, sha: &str) -> std::path::PathBuf {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.file_name().unwrap().to_str().unwrap().starts_with(sha) && p.extension().unwrap() == "cwasm")
        .unwrap()
}

#[tokio::test]
async fn servers_started_together_compile_the_component_once() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let cache = cache.to_str().unwrap();
    // stdio servers with no client: each loads the component, says so and exits
    let args = ["serve", "--fabric-sim", "--cache-dir", cache];
    let starts = (0..4).map(|_| run_to_exit(&args, &[]));
    let banners: Vec<String> = futures_util::future::join_all(starts).await.into_iter().map(|(_, _, e)| e).collect();
    let said = |origin: &str| banners.iter().filter(|b| b.contains(&format!("(embedded, {origin})"))).count();
    assert_eq!((said("CompiledAndCached"), said("LoadedFromCache")), (1, 3), "{banners:#?}");
}

/// The entries damaged and planted here are the small test component's (a component an operator
/// swaps in), and the code planted under its name is the broker's: each step recompiles the
/// entry it refuses, and the test component compiles in a third of the broker's time.
#[tokio::test]
async fn a_damaged_or_planted_cache_entry_never_runs_in_place_of_the_pinned_component() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let embedded = equinix_mcp::component::sha256_hex(equinix_mcp::EMBEDDED_COMPONENT);
    let probe = probe_component();
    let probe_sha = equinix_mcp::component::sha256_hex(&std::fs::read(&probe).unwrap());
    let (broker_tools, _) = tools_run(&cache, &[]).await;
    assert!(broker_tools.contains(&"fabric_confirm_change".to_string()));
    let swapped = ["--component", probe.to_str().unwrap()];
    let (probe_tools, _) = tools_run(&cache, &swapped).await;
    assert!(probe_tools.contains(&"swap_echo".to_string()) && !probe_tools.contains(&"fabric_confirm_change".into()));
    let (ours, theirs) = (entry_of(&cache, &probe_sha), entry_of(&cache, &embedded));
    let good = std::fs::read(&ours).unwrap();

    // 64 flipped bytes in the code: detected before loading, recompiled, rewritten
    let mut flipped = good.clone();
    let at = flipped.len() / 2;
    flipped[at..at + 64].iter_mut().for_each(|b| *b ^= 0xff);
    std::fs::write(&ours, &flipped).unwrap();
    let (names, stderr) = tools_run(&cache, &swapped).await;
    assert_eq!(names, probe_tools);
    assert!(stderr.contains("does not match its recorded checksum"), "{stderr}");
    assert_eq!(std::fs::read(&ours).unwrap(), good, "the entry was rewritten from the .wasm");

    // another component's code planted under our name, without its trailer: refused
    let planted = std::fs::read(&theirs).unwrap();
    let names_it = format!("\n{embedded}\n");
    let code_end = planted.windows(names_it.len()).rposition(|w| w == names_it.as_bytes()).unwrap();
    std::fs::write(&ours, &planted[..code_end]).unwrap();
    let (names, stderr) = tools_run(&cache, &swapped).await;
    assert_eq!(names, probe_tools, "a planted .cwasm never runs");
    assert!(stderr.contains("no trailer"), "{stderr}");

    // a consistent plant (our name in its trailer, its own checksum right) is what someone who
    // can write the user's files could make; a pinned component is compiled from its bytes anyway
    let mut consistent = planted[..code_end].to_vec();
    consistent
        .extend_from_slice(String::from_utf8_lossy(&planted[code_end..]).replace(&embedded, &probe_sha).as_bytes());
    std::fs::write(&ours, &consistent).unwrap();
    let (names, _) = tools_run(&cache, &[&swapped[..], &["--component-sha256", &probe_sha]].concat()).await;
    assert_eq!(names, probe_tools, "the pin describes the code that runs");
}

/// A cache on a mount that forbids executable mappings (a `noexec` home or cache volume): the
/// entry cannot be mapped, so it is read and loaded from memory, not compiled again at every
/// start. A tmpfs mounted `noexec` in a mount namespace of the test's own, which needs root:
/// `.ci/run` runs it, as it runs the partition campaign.
#[tokio::test]
#[ignore = "needs root for a mount namespace (.ci/run runs it)"]
async fn a_cache_on_a_noexec_mount_is_read_instead_of_mapped() {
    let dir = tempfile::tempdir().unwrap();
    let mount = dir.path().join("noexec");
    std::fs::create_dir(&mount).unwrap();
    let start = format!(
        "{} serve --fabric-sim --component {} --cache-dir {}/cache </dev/null",
        binary().display(),
        probe_component().display(),
        mount.display()
    );
    // two starts in one namespace (the tmpfs ends with it); each stdio server with no client
    // loads the component, says so and exits
    let script =
        format!("mount -t tmpfs -o noexec,mode=0700 tmpfs {} || exit 3; {start}; {start}; exit 0", mount.display());
    let out = tokio::process::Command::new("unshare")
        .args(["--mount", "--propagation", "private", "sh", "-c", &script])
        .env("RUST_LOG", "info,equinix_mcp::component::cache=debug")
        .output()
        .await
        .unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{said}");
    let origins: Vec<&str> =
        ["CompiledAndCached", "LoadedFromCache"].into_iter().filter(|o| said.contains(&format!(", {o})"))).collect();
    assert_eq!(origins, ["CompiledAndCached", "LoadedFromCache"], "{said}");
    assert!(said.contains("cannot map cache entry") && said.contains("reading it instead"), "{said}");
    assert!(!said.contains("recompiling"), "{said}");
}
