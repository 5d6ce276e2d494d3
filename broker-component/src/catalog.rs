//! The tool table: every tool's row, metros and the broker included, in the order `tools/list`
//! shows them. The same argument grammar checks every call and produces the JSON Schema the host
//! validates against first, so the two cannot drift apart. `tools/list`, the toolset filter and
//! `equinix-mcp tools` all read this one table through the host.

use crate::tool::ToolDef;
use crate::{confirm, propose, reads};

/// The whole catalog, in the order `tools/list` shows it.
pub fn tools() -> impl Iterator<Item = &'static ToolDef> {
    reads::tools().chain([&propose::TOOL, &confirm::TOOL])
}

/// The row of `name`.
pub(crate) fn find(name: &str) -> Option<&'static ToolDef> {
    tools().find(|t| t.name == name)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::grammar::{Field, Kind};

    #[test]
    fn every_schema_is_an_object_and_every_property_is_described() {
        for t in tools() {
            let schema = t.input_schema();
            assert_eq!(schema["type"], "object", "{}", t.name);
            let closed = schema.get("additionalProperties") == Some(&json!(false));
            assert_eq!(closed, !t.hints.read_only, "{}", t.name);
            let unknown = t.check(&json!({"no_such_argument": 1})).unwrap_err();
            assert!(format!("{unknown:?}").contains("/no_such_argument"), "{}: {unknown:?}", t.name);
            for (key, p) in schema["properties"].as_object().unwrap() {
                assert!(
                    p["description"].as_str().is_some_and(|d| !d.is_empty()),
                    "{}.{key} has no description",
                    t.name
                );
            }
            assert!(!t.hints.destructive, "no tool may delete or update: {}", t.name);
            assert!(t.name.len() <= 128 && t.name.bytes().all(|b| b.is_ascii_alphanumeric() || b"_.-".contains(&b)));
            assert!(!t.toolset.is_empty() && !t.description.is_empty() && !t.title.is_empty());
        }
    }

    #[test]
    fn argument_errors_name_every_path_and_where_valid_values_come_from() {
        let ports = find("fabric_search_ports").unwrap();
        let err = ports.check(&json!({"metro": "Washington", "project_id": "p", "limit": 0})).unwrap_err();
        let text = err.to_json();
        for path in ["/metro", "/project_id", "/limit"] {
            assert!(text.contains(&format!("\"path\":\"{path}\"")), "{path}: {text}");
        }
        let next = err.details["next_step"].as_str().unwrap();
        assert!(next.contains("fabric_list_metros lists valid values for /metro"), "{next}");
        assert!(err.message.contains("uppercase metro code"), "{}", err.message);

        let propose = find("fabric_propose_change").unwrap();
        let spec = json!({"type": "EVPL_VC", "name": "n", "bandwidth": 50, "notifications": [],
            "aSide": {"accessPoint": {"type": "COLO", "port": {"uuid": "x"}, "linkProtocol": {"type": "DOT1Q", "vlanTag": 1}}},
            "zSide": {"accessPoint": {"type": "SP", "profile": {}, "location": {"metroCode": "dc"}}}});
        let checked = propose.check(&json!({"change_type": "connection_create", "spec": spec})).unwrap();
        let err = crate::propose::parse(&checked).unwrap_err();
        let next = err.details["next_step"].as_str().unwrap();
        for tool in
            ["fabric_search_ports", "fabric_list_port_vlans", "fabric_search_service_profiles", "fabric_list_metros"]
        {
            assert!(next.contains(tool), "{tool}: {next}");
        }
        assert_eq!(err.details["problems"].as_array().unwrap().len(), 5, "{}", err.to_json());
    }

    /// Every field's pointer to where valid values come from is data (`Field::from`), never
    /// read out of its prose, and names a read tool of this catalog.
    #[test]
    fn hints_are_data_and_name_read_tools_of_this_catalog() {
        fn walk(kind: &Kind, seen: &mut alloc::vec::Vec<&'static Field>) {
            match kind {
                Kind::Obj(o) => o.fields.iter().for_each(|f| {
                    seen.push(f);
                    walk(&f.kind, seen);
                }),
                Kind::Array { item, .. } => walk(item, seen),
                _ => {}
            }
        }
        let mut fields = alloc::vec::Vec::new();
        for t in tools() {
            walk(&Kind::Obj(t.args), &mut fields);
        }
        for ct in crate::spec::ChangeType::ALL {
            walk(&Kind::Obj(crate::spec::Grammar::grammar(ct)), &mut fields);
        }
        let mut hinted = 0;
        for f in fields {
            assert!(!f.doc.contains("fabric_"), "{}: name the tool with .from(), not in the doc {:?}", f.name, f.doc);
            if let Some(tool) = f.values_listed_by() {
                hinted += 1;
                let row = find(tool).unwrap_or_else(|| panic!("{}: {tool} is not a tool of this catalog", f.name));
                assert!(row.hints.read_only || f.name == "confirm_token", "{}: {tool} is not a read tool", f.name);
                let described = f.description();
                assert!(f.values_from.is_none() || described.contains(tool), "{}: {described:?}", f.name);
            }
        }
        assert!(hinted >= 20, "{hinted} hinted fields");
    }

    #[test]
    fn every_default_toolset_is_one_of_this_catalog() {
        for toolset in equinix_broker_contract::DEFAULT_TOOLSETS {
            assert!(tools().any(|t| t.toolset == *toolset), "{toolset}");
        }
    }

    #[test]
    fn every_change_type_is_looked_up_by_read_tools_of_this_catalog() {
        for ct in crate::spec::ChangeType::ALL {
            let (search, get) = ct.lookup_tools();
            for name in [search, get] {
                assert!(find(name).is_some_and(|t| t.hints.read_only), "{ct:?}: {name} is no read tool here");
            }
        }
    }

    #[test]
    fn read_only_tools_are_never_in_the_mutate_toolset() {
        for t in tools() {
            assert_eq!(t.hints.read_only, t.toolset != equinix_broker_contract::MUTATE_TOOLSET, "{}", t.name);
        }
    }
}
