//! A component users build themselves: `equinix-mcp build-component` builds with the embedded
//! component's exact flags (the unchanged source gives the embedded bytes), and a modified copy
//! of the source, built that way, is served by the already built host when pinned by its hash.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::harness::*;
use serde_json::json;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// Runs `equinix-mcp build-component` and returns (the .wasm path, its sha256) from its output.
fn build_component(source: &Path, target_dir: &Path, out: &Path) -> (PathBuf, String) {
    let run = Command::new(binary())
        .args(["build-component", "--source"])
        .arg(source)
        .arg("--target-dir")
        .arg(target_dir)
        .arg("--out")
        .arg(out)
        .env("CARGO_NET_OFFLINE", "true")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout).to_string();
    assert!(run.status.success(), "build-component failed:\n{stdout}\n{}", String::from_utf8_lossy(&run.stderr));
    let field = |name: &str| {
        stdout.lines().find_map(|l| l.strip_prefix(name)).unwrap_or_else(|| panic!("no {name} in {stdout}")).to_string()
    };
    assert!(field("serve it: ").contains("--component-sha256"), "{stdout}");
    (PathBuf::from(field("component: ")), field("sha256: "))
}

fn embedded_sha256() -> String {
    let out = Command::new(binary()).arg("--version").output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let at = text.find("sha256:").unwrap() + "sha256:".len();
    text[at..at + 64].to_string()
}

#[test]
fn the_unchanged_source_builds_the_embedded_component_byte_for_byte() {
    let out = tempfile::tempdir().unwrap();
    let target = repo().join("target/guest");
    let (wasm, sha) = build_component(&repo(), &target, &out.path().join("same.wasm"));
    assert_eq!(sha, embedded_sha256(), "same source, same flags, same bytes");
    assert_eq!(sha, equinix_mcp::component::sha256_hex(&std::fs::read(wasm).unwrap()));
}

/// Copies the tracked files of the repository (a source tree as a user has it).
fn copy_source(to: &Path) {
    let listed = Command::new("git")
        .arg("-C")
        .arg(repo())
        .args(["ls-files", "-z", "--cached", "--others", "--exclude-standard"])
        .output()
        .unwrap();
    assert!(listed.status.success(), "git ls-files failed");
    for file in listed.stdout.split(|b| *b == 0).filter(|f| !f.is_empty()) {
        let rel = Path::new(std::str::from_utf8(file).unwrap());
        let (from, dest) = (repo().join(rel), to.join(rel));
        if !from.is_file() {
            continue; // listed but deleted in this working tree
        }
        std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
        std::fs::copy(&from, &dest).unwrap();
    }
}

#[tokio::test]
async fn a_modified_component_built_that_way_is_served_when_pinned() {
    let work = tempfile::tempdir().unwrap();
    let source = work.path().join("src");
    copy_source(&source);
    // the team's change: a different title for the metros tool
    let metros = source.join("broker-component/src/reads/metros.rs");
    let text = std::fs::read_to_string(&metros).unwrap();
    assert!(text.contains("title: \"List metros\""));
    std::fs::write(&metros, text.replace("title: \"List metros\"", "title: \"List metros (team build)\"")).unwrap();

    // its own target directory, so the embedded build in target/guest is never overwritten;
    // started as a copy of that one, so the dependencies the copied tree shares with it (and the
    // build-time code generators) are not compiled again: only the changed tree's own crates are
    let target = repo().join("target/guest-user-build");
    if !target.exists() {
        let copied = Command::new("cp").arg("-a").arg(repo().join("target/guest")).arg(&target).status().unwrap();
        assert!(copied.success(), "copying target/guest to {}", target.display());
    }
    let (wasm, sha) = build_component(&source, &target, &work.path().join("team.wasm"));
    assert_ne!(sha, embedded_sha256());

    let sha_flag = sha.clone();
    let args = ["serve", "--fabric-sim", "--component", wasm.to_str().unwrap(), "--component-sha256", &sha_flag];
    let server = Launch::command(&args).stdio().await;
    let tools = server.client.list_all_tools().await.unwrap();
    let metros = tools.iter().find(|t| t.name == "fabric_list_metros").unwrap();
    assert_eq!(metros.title.as_deref(), Some("List metros (team build)"));
    assert!(!is_error(&server.call("fabric_list_metros", json!({"limit": 1})).await));
    server.stop().await;

    // a different hash refuses to start
    let wrong = "0".repeat(64);
    let out = Command::new(binary())
        .args([
            "serve",
            "--fabric-sim",
            "--no-cache",
            "--component",
            wasm.to_str().unwrap(),
            "--component-sha256",
            &wrong,
        ])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains(&sha), "the refusal names the actual hash");
}
