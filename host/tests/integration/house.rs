//! Rules of the house the compiler keeps, checked to be in force: every crate of the workspace
//! takes the workspace's lints, which deny `unsafe`, and only the two places allowed it by name
//! allow it (the guest's runtime shim with its generated ABI glue, and the load of a host-made
//! precompiled component; the test components reuse the shim).

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if path.is_dir() && !["target", "node_modules", ".git"].contains(&name.as_str()) {
            rust_files(&path, out);
        } else if name.ends_with(".rs") {
            out.push(path);
        }
    }
}

#[test]
fn every_crate_denies_unsafe_and_only_the_two_allowed_places_allow_it() {
    let root = root();
    let workspace = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    assert!(workspace.contains("[workspace.lints.rust]\nunsafe_code = \"deny\""), "the workspace denies unsafe");
    let members: Vec<&str> = workspace
        .split("members = [")
        .nth(1)
        .unwrap()
        .split(']')
        .next()
        .unwrap()
        .split('"')
        .skip(1)
        .step_by(2)
        .collect();
    assert!(members.len() >= 6, "{members:?}");
    for member in members.iter().filter(|m| **m != "tests/unify-features") {
        let manifest = std::fs::read_to_string(root.join(member).join("Cargo.toml")).unwrap();
        assert!(manifest.contains("[lints]\nworkspace = true"), "{member} takes the workspace's lints");
    }
    let allowed = [
        "broker-component/src/runtime.rs",
        "broker-component/src/glue.rs",
        "host/src/component/cache.rs",
        "tests/guests/probe/src/lib.rs",
        "tests/guests/bad-catalog/src/lib.rs",
    ];
    let mut files = Vec::new();
    for dir in ["wit", "broker-component", "host", "tests"] {
        rust_files(&root.join(dir), &mut files);
    }
    let mut allowing = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap_or_default();
        // this file names the attribute in its checks, and generated bindings are checked through their includers
        let this = file.ends_with("host/tests/integration/house.rs");
        if !this && (text.contains("allow(unsafe_code)") || text.contains("allow(unsafe_code,")) {
            allowing.push(file.strip_prefix(&root).unwrap().to_string_lossy().to_string());
        }
    }
    allowing.sort();
    let mut expected: Vec<String> = allowed.iter().map(|s| s.to_string()).collect();
    expected.sort();
    assert_eq!(allowing, expected, "only the places allowed `unsafe` allow it");
}

/// What a comment is about is said in words: an issue's number means nothing to the next reader.
#[test]
fn no_code_or_comment_names_an_issue_by_its_number() {
    let root = root();
    let mut files = Vec::new();
    for dir in ["wit", "broker-component", "host", "tests"] {
        rust_files(&root.join(dir), &mut files);
    }
    let mut named = Vec::new();
    for file in files.iter().filter(|f| !f.ends_with("host/tests/integration/house.rs")) {
        let text = std::fs::read_to_string(file).unwrap_or_default();
        for (n, line) in text.lines().enumerate() {
            let lower = line.to_ascii_lowercase();
            let numbered = lower
                .match_indices("issue ")
                .any(|(at, _)| lower[at + "issue ".len()..].chars().next().is_some_and(|c| c.is_ascii_digit()));
            if numbered {
                named.push(format!("{}:{}", file.strip_prefix(&root).unwrap().display(), n + 1));
            }
        }
    }
    assert!(named.is_empty(), "{named:?}");
}
