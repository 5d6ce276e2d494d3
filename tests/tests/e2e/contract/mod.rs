//! Real Fabric is the contract. Every request the project sends and every answer its
//! simulator gives is checked against Equinix's official Fabric v4 models (the `equinix` Python
//! SDK 0.20.0, generated from the Fabric API v4 document 4.31), and the official create request
//! examples parse as specs. Needs `.ci/install-contract-sdk` (the README's test command runs it).

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::harness::*;
use equinix_broker_component::spec::{ChangeType, Spec};
use equinix_fabric_sim as fabric_sim;
use equinix_fabric_sim::{
    FCR_CONNECTIONS, PORTS, PROFILES, ROUTE_AGGREGATIONS, ROUTE_FILTERS, ROUTERS, SimConfig, SimHandle, routing,
};
use serde_json::{Value, json};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// One value to check against an SDK model.
struct Case {
    label: String,
    model: &'static str,
    value: Value,
}

fn case(label: impl Into<String>, model: &'static str, value: Value) -> Case {
    Case { label: label.into(), model, value }
}

/// Runs the SDK checker over `cases`: label → problems.
fn sdk_check(cases: &[Case]) -> BTreeMap<String, Vec<String>> {
    let python = repo().join("target/contract-venv/bin/python");
    assert!(
        python.exists(),
        "{} is missing: run .ci/install-contract-sdk (the README's test command does) to install Equinix's SDK",
        python.display()
    );
    let input: Vec<Value> =
        cases.iter().map(|c| json!({"label": c.label, "model": c.model, "value": c.value})).collect();
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(file.path(), serde_json::to_vec(&input).unwrap()).unwrap();
    let out = std::process::Command::new(&python)
        .arg(repo().join("tests/contract/check.py"))
        .arg(file.path())
        .current_dir(repo())
        .output()
        .unwrap();
    assert!(out.status.success(), "the checker failed: {}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let problems = r["problems"].as_array().unwrap().iter().map(|p| p.as_str().unwrap().to_string()).collect();
            (r["label"].as_str().unwrap().to_string(), problems)
        })
        .collect()
}

/// Every case passes, except those listed with the reason the SDK (or Equinix's own example)
/// is at fault; a listed case that passes is stale and fails too.
fn expect_valid(results: &BTreeMap<String, Vec<String>>, excused: &[(&str, &str)]) {
    let mut wrong = Vec::new();
    for (label, problems) in results {
        match excused.iter().find(|(l, _)| l == label) {
            Some((_, needle)) if problems.iter().any(|p| p.contains(needle)) => {}
            Some((_, needle)) => wrong.push(format!("{label}: listed as failing with {needle:?}, got {problems:?}")),
            None if problems.is_empty() => {}
            None => wrong.push(format!("{label}: {problems:?}")),
        }
    }
    assert!(wrong.is_empty(), "not what Fabric's contract says:\n{}", wrong.join("\n"));
}

mod answers;
mod examples;
