//! What a policy set can read of a request: the `Request` attributes its policies name, found by
//! walking each policy's JSON form (Cedar's EST). Two requests that agree on those attributes,
//! the principal, the action and the context get the same decision from Cedar, whose evaluation
//! is a pure function of them; the decision memo ([`super::Memo`]) rests on exactly that.
//!
//! The walk knows every node of the EST grammar and treats anything else as "reads everything":
//! a policy the walk does not fully understand is evaluated every time, never answered from
//! memory. So do a policy that uses the resource itself rather than an attribute of it
//! (`resource == ...`, `resource in ...`, a scope on `resource`: the resource's id is the
//! request's hash, different for every request) and one that reads entity tags.

use std::collections::BTreeSet;

use cedar_policy::PolicySet;
use serde_json::{Map, Value};

/// The attribute names a set reads (of any entity: naming more than the resource's only makes
/// the memo's key longer), or `None` when the set may read more than attributes.
pub(crate) fn attributes_read(set: &PolicySet) -> Option<BTreeSet<String>> {
    let mut names = BTreeSet::new();
    for policy in set.policies() {
        let json = policy.to_json().ok()?;
        policy_reads(&json, &mut names)?;
    }
    Some(names)
}

/// A policy: `effect`, the three scopes, `conditions` and `annotations`, nothing else.
fn policy_reads(policy: &Value, names: &mut BTreeSet<String>) -> Option<()> {
    let fields = policy.as_object()?;
    for (key, value) in fields {
        match key.as_str() {
            "effect" | "annotations" => {}
            // the principal and the action are in the memo's key whole: any scope on them is read
            "principal" | "action" => {}
            // a scope on the resource reads its id (or its type and ancestors)
            "resource" => (value.get("op")?.as_str()? == "All").then_some(())?,
            "conditions" => {
                for clause in value.as_array()? {
                    let clause = clause.as_object()?;
                    let kind = clause.get("kind")?.as_str()?;
                    if !matches!(kind, "when" | "unless") || clause.len() != 2 {
                        return None;
                    }
                    expr(clause.get("body")?, names)?;
                }
            }
            _ => return None,
        }
    }
    Some(())
}

/// One EST expression: an object with exactly one key naming its operator.
fn expr(e: &Value, names: &mut BTreeSet<String>) -> Option<()> {
    let node = e.as_object()?;
    if node.len() != 1 {
        return None;
    }
    let (op, arg) = node.iter().next()?;
    match op.as_str() {
        // a literal is data, whatever it holds
        "Value" => Some(()),
        // `principal`, `action` and `context` are in the memo's key whole; `resource` on its own
        // is its id, which is the request's hash
        "Var" => matches!(arg.as_str()?, "principal" | "action" | "context").then_some(()),
        "!" | "neg" | "isEmpty" => expr(field(arg, "arg")?, names),
        "==" | "!=" | "in" | "<" | "<=" | ">" | ">=" | "&&" | "||" | "+" | "-" | "*" | "contains" | "containsAll"
        | "containsAny" => {
            expr(field(arg, "left")?, names)?;
            expr(field(arg, "right")?, names)
        }
        "." => {
            names.insert(field(arg, "attr")?.as_str()?.to_string());
            operand(field(arg, "left")?, names)
        }
        "has" => {
            // `e has a` names one attribute, `e has a.b` a path: its first is the entity's
            match field(arg, "attr")? {
                Value::String(a) => names.insert(a.clone()),
                Value::Array(path) => names.insert(path.first()?.as_str()?.to_string()),
                _ => return None,
            };
            operand(field(arg, "left")?, names)
        }
        "like" => expr(field(arg, "left")?, names),
        // a type test reads the type, which is fixed; `is ... in` reads ancestry
        "is" => match arg.as_object()?.get("in") {
            None => operand(field(arg, "left")?, names),
            Some(within) => {
                expr(field(arg, "left")?, names)?;
                expr(within, names)
            }
        },
        "if-then-else" => ["if", "then", "else"].iter().try_for_each(|k| expr(field(arg, k)?, names)),
        "Set" => arg.as_array()?.iter().try_for_each(|item| expr(item, names)),
        "Record" => arg.as_object()?.values().try_for_each(|v| expr(v, names)),
        // tags are named by an expression: what they read cannot be listed
        "getTag" | "hasTag" | "Slot" | "Unknown" => None,
        // an extension function or method (`ip`, `decimal`, `isInRange`, ...) reads only its
        // arguments
        _ => arg.as_array()?.iter().try_for_each(|item| expr(item, names)),
    }
}

/// The left side of `.` or `has`: the resource itself is fine there (only the attribute is read).
fn operand(left: &Value, names: &mut BTreeSet<String>) -> Option<()> {
    if left == &serde_json::json!({"Var": "resource"}) { Some(()) } else { expr(left, names) }
}

fn field<'a>(arg: &'a Value, key: &str) -> Option<&'a Value> {
    arg.as_object().and_then(|m: &Map<String, Value>| m.get(key))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::str::FromStr;

    fn reads(text: &str) -> Option<Vec<String>> {
        attributes_read(&PolicySet::from_str(text).unwrap()).map(|s| s.into_iter().collect())
    }

    #[test]
    fn every_way_of_naming_an_attribute_is_found() {
        let cases = [
            (r#"permit (principal, action, resource) when { resource.bandwidth_mbps > 1 };"#, "bandwidth_mbps"),
            (r#"permit (principal, action, resource) when { resource["metros"].isEmpty() };"#, "metros"),
            (r#"forbid (principal, action, resource) when { resource has project_id };"#, "project_id"),
            (r#"forbid (principal, action, resource) when { resource has "token_type" };"#, "token_type"),
            (r#"forbid (principal, action, resource) unless { !(resource.redundant) };"#, "redundant"),
            (r#"permit (principal, action, resource) when { resource.name like "prod-*" };"#, "name"),
            (
                r#"permit (principal, action, resource) when { if resource has network_scope then resource.network_scope == "LOCAL" else false };"#,
                "network_scope",
            ),
            (
                r#"permit (principal, action, resource) when { {"a": resource.connection_type}.a == "EVPL_VC" };"#,
                "connection_type",
            ),
            (
                r#"permit (principal, action, resource) when { [resource.port_uuids].contains(resource.profile_uuids) };"#,
                "port_uuids",
            ),
            (r#"permit (principal, action, resource) when { ip("10.0.0.1").isInRange(ip(resource.name)) };"#, "name"),
            (r#"permit (principal, action, resource) when { -(resource.bandwidth_mbps) < 0 };"#, "bandwidth_mbps"),
            (
                r#"permit (principal, action, resource) when { resource is EquinixMcp::Request && resource.redundant };"#,
                "redundant",
            ),
        ];
        for (text, name) in cases {
            let got = reads(text).unwrap_or_else(|| panic!("the walk gave up on {text}"));
            assert!(got.contains(&name.to_string()), "{text}: {got:?}");
        }
        assert_eq!(
            reads(
                r#"permit (principal, action, resource) when { [resource.port_uuids].contains(resource.profile_uuids) };"#
            ),
            Some(vec!["port_uuids".into(), "profile_uuids".into()])
        );
        let team = r#"permit (principal, action, resource) when { ["DC", "SV"].containsAll(resource.metros) };
            forbid (principal, action == EquinixMcp::Action::"network_create", resource)
            unless { principal == EquinixMcp::Principal::"netops" && context.phase == "approval" };"#;
        assert_eq!(reads(team), Some(vec!["metros".into(), "phase".into()]));
        assert_eq!(reads(""), Some(vec![]));
    }

    #[test]
    fn a_policy_that_reads_the_resource_itself_or_tags_reads_everything() {
        for text in [
            r#"permit (principal, action, resource == EquinixMcp::Request::"ab");"#,
            r#"permit (principal, action, resource is EquinixMcp::Request);"#,
            r#"permit (principal, action, resource) when { resource == EquinixMcp::Request::"ab" };"#,
            r#"permit (principal, action, resource) when { resource in [EquinixMcp::Request::"ab"] };"#,
            r#"permit (principal, action, resource) when { resource is EquinixMcp::Request in EquinixMcp::Request::"ab" };"#,
            r#"permit (principal, action, resource) when { resource.hasTag("x") };"#,
            r#"permit (principal, action, resource) when { [resource].contains(resource) };"#,
            r#"permit (principal, action, resource) when { {"r": resource}.r.name == "x" };"#,
        ] {
            assert_eq!(reads(text), None, "{text}");
        }
    }

    #[test]
    fn an_unknown_node_or_field_reads_everything() {
        let mut names = BTreeSet::new();
        assert_eq!(expr(&serde_json::json!({"someFutureOp": {"left": {"Var": "context"}}}), &mut names), None);
        assert_eq!(expr(&serde_json::json!({"Var": "resource", "x": 1}), &mut names), None);
        assert_eq!(expr(&serde_json::json!({"Var": "somethingNew"}), &mut names), None);
        let policy = serde_json::json!({"effect": "permit", "principal": {"op": "All"}, "action": {"op": "All"},
            "resource": {"op": "All"}, "conditions": [], "newField": true});
        assert_eq!(policy_reads(&policy, &mut names), None);
        let clause = serde_json::json!({"effect": "permit", "principal": {"op": "All"}, "action": {"op": "All"},
            "resource": {"op": "All"}, "conditions": [{"kind": "maybe", "body": {"Value": true}}]});
        assert_eq!(policy_reads(&clause, &mut names), None);
    }
}
