//! The grammar checks every problem at once and its schema says what it enforces.

use serde_json::{Value, json};

use super::*;

static INNER: Object =
    Object { name: "Inner", fields: &[req("uuid", UUID, "the id"), opt("n", int(1, 5), "")], rule: None, rule_doc: "" };
static OUTER: Object = Object {
    name: "",
    fields: &[
        req("name", text(8), "a name"),
        req("inner", Kind::Obj(&INNER), ""),
        opt("tags", Kind::Array { item: &Kind::Enum(&["A", "B"]), min: 1, max: 2 }, ""),
    ],
    rule: Some(|m, path, p| {
        if m.get("name").and_then(Value::as_str) == Some("bad") {
            p.push(&child(path, "name"), "may not be \"bad\"");
        }
    }),
    rule_doc: "The name may not be \"bad\".",
};

fn run(v: Value) -> Result<Value, Vec<Problem>> {
    let mut p = Problems::default();
    match check(&Kind::Obj(&OUTER), &v, "/spec", &mut p) {
        Some(v) if p.is_empty() => Ok(v),
        _ => Err(p.0),
    }
}

#[test]
fn every_problem_is_named_at_once() {
    let errs = run(json!({"name": 7, "inner": {"n": 9}, "tags": ["C"], "extra": 1})).unwrap_err();
    let paths: Vec<&str> = errs.iter().map(|e| e.path.as_str()).collect();
    assert_eq!(paths, ["/spec/name", "/spec/inner/uuid", "/spec/inner/n", "/spec/tags/0", "/spec/extra"]);
    assert!(errs[4].message.contains("allowed here: name, inner, tags"), "{}", errs[4].message);
}

#[test]
fn valid_values_come_back_normalized_and_rules_run_last() {
    let ok = run(json!({"name": "x", "inner": {"uuid": "c4d9350e-783c-83cd-1ce0-306a5c00a600", "n": 2.0}})).unwrap();
    assert_eq!(ok["inner"]["n"], json!(2));
    assert!(ok["inner"]["n"].is_i64());
    let errs = run(json!({"name": "bad", "inner": {"uuid": "c4d9350e-783c-83cd-1ce0-306a5c00a600"}})).unwrap_err();
    assert_eq!(errs[0].path, "/spec/name");
}

#[test]
fn the_schema_says_what_the_check_enforces() {
    let s = schema(&Kind::Obj(&OUTER), "outer");
    assert_eq!(s["required"], json!(["name", "inner"]));
    assert_eq!(s["properties"]["inner"]["properties"]["n"], json!({"type": "integer", "minimum": 1, "maximum": 5}));
    assert_eq!(s["properties"]["tags"]["items"]["enum"], json!(["A", "B"]));
    assert!(s["description"].as_str().unwrap().contains("may not be"));
    let (once, defs) = schemas_sharing(&[(&Kind::Obj(&OUTER), "")]);
    assert_eq!(once[0]["properties"]["inner"]["required"], json!(["uuid"]), "used once: inline");
    assert!(defs.is_empty());
    let (twice, defs) = schemas_sharing(&[(&Kind::Obj(&OUTER), ""), (&Kind::Obj(&OUTER), "")]);
    assert_eq!(twice[1]["properties"]["inner"]["$ref"], "#/$defs/Inner");
    assert_eq!(defs["Inner"]["required"], json!(["uuid"]));
}
