//! A new change type is a contract the compiler holds: a copy of the workspace gets a fourth
//! variant (`ChangeType::Dummy`, declared the way docs/contributing.md's recipe says, with the
//! contract crate's own arms), and `cargo check` is run on it again and again, each time giving
//! every match the compiler says is missing the arm it suggests (`todo!()`), until the whole
//! workspace compiles. Every file the compiler named must be one the recipe names, and the recipe
//! names no place the compiler did not find. Slow (a `cargo check` of the workspace in a target
//! directory of its own, and the guest built for wasm32 once): `#[ignore]`d in the test
//! command, run by `.ci/run` after it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// The files a fourth change type must answer in, past the contract crate itself: each found by
/// the compiler, each named by the recipe.
const FOUND_BY_THE_COMPILER: &[&str] = &[
    "broker-component/src/price.rs",
    "broker-component/src/spec/mod.rs",
    "host/fabric-sim/src/estate/create.rs",
    "host/fabric-sim/src/routes/connectivity.rs",
    "host/src/plan/compose.rs",
    "host/src/plan/reads.rs",
    "host/src/policy/facts.rs",
    "tests/tests/e2e/contract/answers.rs",
    "wit/src/fields.rs",
];

const CONTRACT: &str = "wit/src/lib.rs";

#[test]
#[ignore = "slow: run by .ci/run after the test command"]
fn a_fourth_change_type_is_found_everywhere_by_the_compiler() {
    let root = root();
    let copy = std::env::temp_dir().join(format!("equinix-mcp-dummy-change-type-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&copy);
    copy_tracked(&root, &copy);
    declare_dummy(&copy.join(CONTRACT));

    let target = root.join("target/dummy-change-type");
    let mut found: BTreeMap<String, usize> = BTreeMap::new();
    let mut clean = false;
    for round in 1..=8 {
        let missing = missing_arms(&copy, &target);
        if missing.is_empty() {
            clean = true;
            break;
        }
        let mut by_file: BTreeMap<String, Vec<Suggestion>> = BTreeMap::new();
        for s in missing {
            by_file.entry(s.file.clone()).or_default().push(s);
        }
        for (file, mut suggestions) in by_file {
            *found.entry(file.clone()).or_default() += suggestions.len();
            suggestions.sort_by_key(|s| std::cmp::Reverse(s.start));
            suggestions.dedup_by_key(|s| s.start);
            let path = copy.join(&file);
            let mut text = std::fs::read(&path).unwrap();
            for s in suggestions {
                text.splice(s.start..s.end, s.replacement.bytes());
            }
            std::fs::write(&path, text).unwrap();
        }
        eprintln!("round {round}: {found:?}");
    }
    let _ = std::fs::remove_dir_all(&copy);
    assert!(clean, "the workspace did not compile after giving the compiler's arms; found so far: {found:?}");

    let files: BTreeSet<&str> = found.keys().map(String::as_str).filter(|f| *f != CONTRACT).collect();
    assert_eq!(files, FOUND_BY_THE_COMPILER.iter().copied().collect(), "the files a fourth change type answers in");
    assert!(files.len() < 10, "at most ten files, the contract's included: {files:?}");

    let recipe = recipe(&root);
    for file in FOUND_BY_THE_COMPILER.iter().chain([&CONTRACT]) {
        assert!(recipe.contains(&format!("`{file}`")), "docs/contributing.md's recipe names `{file}`");
    }
}

/// docs/contributing.md's "A new change type", up to the next recipe.
fn recipe(root: &Path) -> String {
    let doc = std::fs::read_to_string(root.join("docs/contributing.md")).unwrap();
    let start = doc.find("**A new change type**").expect("the recipe");
    let rest = &doc[start..];
    rest[..rest[2..].find("\n\n**").map_or(rest.len(), |end| end + 2)].to_string()
}

/// The repository's files (tracked, and new ones not ignored: what a clone of the change holds),
/// copied to `to`.
fn copy_tracked(root: &Path, to: &Path) {
    let listed = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(["ls-files", "-z", "--cached", "--others", "--exclude-standard"])
        .output()
        .unwrap();
    assert!(listed.status.success(), "git ls-files");
    for file in listed.stdout.split(|b| *b == 0).filter(|f| !f.is_empty()) {
        let file = std::str::from_utf8(file).unwrap();
        let (from, dest) = (root.join(file), to.join(file));
        std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
        // a file deleted in the work tree but still tracked is not part of it
        if from.is_file() {
            std::fs::copy(&from, &dest).unwrap_or_else(|e| panic!("{file}: {e}"));
        }
    }
}

/// The recipe's first step: the variant in the contract's list, with the contract's own answers
/// (here the service token's, which the contract crate's own checks accept: each of its arms
/// there answers for both).
fn declare_dummy(lib: &Path) {
    let text = std::fs::read_to_string(lib).unwrap();
    let declared = "    ServiceTokenCreate => \"service_token_create\",\n";
    assert!(text.contains(declared), "the contract declares its change types in `change_types!`");
    let mut out = String::new();
    for line in text.lines() {
        let arm = line.trim_start().starts_with("ChangeType::ServiceTokenCreate =>");
        match arm {
            true => out.push_str(&line.replacen(
                "ChangeType::ServiceTokenCreate",
                "ChangeType::ServiceTokenCreate | ChangeType::Dummy",
                1,
            )),
            false => out.push_str(line),
        }
        out.push('\n');
        if line == declared.trim_end_matches('\n') {
            out.push_str("    Dummy => \"dummy_create\",\n");
        }
    }
    std::fs::write(lib, out).unwrap();
}

struct Suggestion {
    file: String,
    start: usize,
    end: usize,
    replacement: String,
}

/// Every match the compiler finds missing an arm (E0004) in the copy, with the arm it suggests.
/// Any other error fails the test: the recipe promised nothing else.
fn missing_arms(copy: &Path, target: &Path) -> Vec<Suggestion> {
    let out = Command::new(env!("CARGO"))
        .current_dir(copy)
        .args(["check", "--workspace", "--all-targets", "--keep-going", "--message-format=json", "--quiet"])
        .arg("--target-dir")
        .arg(target)
        .output()
        .unwrap();
    let mut found = Vec::new();
    let mut other = Vec::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let Ok(message) = serde_json::from_str::<Value>(line) else { continue };
        if message["reason"] != "compiler-message" || message["message"]["level"] != "error" {
            continue;
        }
        let m = &message["message"];
        if m["code"]["code"] != "E0004" {
            other.push(m["rendered"].as_str().unwrap_or_default().to_string());
            continue;
        }
        let suggestion = m["children"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|c| c["spans"].as_array().cloned().unwrap_or_default())
            .find(|s| s["suggested_replacement"].is_string())
            .unwrap_or_else(|| panic!("E0004 with no suggested arm: {}", m["rendered"]));
        found.push(Suggestion {
            file: suggestion["file_name"].as_str().unwrap().to_string(),
            start: suggestion["byte_start"].as_u64().unwrap() as usize,
            end: suggestion["byte_end"].as_u64().unwrap() as usize,
            replacement: without_modules(suggestion["suggested_replacement"].as_str().unwrap()),
        });
    }
    assert!(other.is_empty(), "errors other than a missing arm:\n{}", other.join("\n"));
    if found.is_empty() && !out.status.success() {
        panic!("cargo check failed for another reason:\n{}", String::from_utf8_lossy(&out.stderr));
    }
    found
}

/// `text` with the module segments of each path left out (`connectivity::Got::Made` is
/// `Got::Made`): rustc names a pattern's enum by its module, which the match's own file may not
/// have in scope, where it always has the enum.
fn without_modules(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find("::") {
        let (before, after) = rest.split_at(at);
        let start = before.rfind(|c: char| !(c.is_alphanumeric() || c == '_')).map_or(0, |i| i + 1);
        let segment = &before[start..];
        if segment.starts_with(|c: char| c.is_ascii_lowercase()) {
            out.push_str(&before[..start]);
        } else {
            out.push_str(before);
            out.push_str("::");
        }
        rest = &after[2..];
    }
    out.push_str(rest);
    out
}

#[test]
fn a_suggested_pattern_keeps_its_enum_and_drops_its_modules() {
    assert_eq!(
        without_modules(",\n  connectivity::Got::Made(ChangeType::Dummy) => todo!()"),
        ",\n  Got::Made(ChangeType::Dummy) => todo!()"
    );
    assert_eq!(
        without_modules("equinix_broker_contract::ChangeType::Dummy => todo!()"),
        "ChangeType::Dummy => todo!()"
    );
    assert_eq!(without_modules("(Some(a::B::C), x) => todo!()"), "(Some(B::C), x) => todo!()");
}
