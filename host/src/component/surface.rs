//! The component's WIT surface: what it imports and exports, with types, the verdict against the
//! host's import allow-list, and the create path read from the types (which imports can send a
//! create and what they need). `equinix-mcp inspect` prints this; `serve` refuses to start on a
//! refused verdict.

use serde::Serialize;
use wasmtime::Engine;
use wasmtime::component::types::{ComponentItem, ResourceType, Type};
use wasmtime::component::{Component, types};

/// The WIT package version this host implements, and the versions it accepts for it.
pub(crate) const WORLD_VERSION: &str = "0.3.0";
const WORLD_COMPAT: &str = "0.3";

/// The only imports the host implements. Versions match semver-compatibly, as wasmtime's linker
/// does (`0.3.x` for 0.x packages).
pub(crate) const ALLOWED_IMPORTS: &[&str] = &[
    "equinix:broker/fabric@0.3",
    "equinix:broker/clock@0.3",
    "equinix:broker/confirmation@0.3",
    "equinix:broker/proposal-store@0.3",
];

/// The export the host calls.
pub(crate) const REQUIRED_EXPORT: &str = "equinix:broker/tools@0.3";

/// The resource whose handle a create needs.
const APPROVAL: &str = "approval";

#[derive(Clone, Debug, Serialize)]
pub struct Surface {
    pub sha256: String,
    pub(crate) size_bytes: usize,
    pub imports: Vec<Item>,
    pub exports: Vec<Item>,
    pub create_path: CreatePath,
    pub verdict: Verdict,
}

/// Who can create, read from the import types: the functions that take an `own<approval>` (they
/// spend one) and those that return one (they mint one).
#[derive(Clone, Debug, Default, Serialize)]
pub struct CreatePath {
    pub spends_approval: Vec<String>,
    pub mints_approval: Vec<String>,
    /// Nothing but `confirmation.[static]approval.execute` spends one and nothing but
    /// `confirmation.ask` mints one (a component that imports neither cannot create at all),
    /// and every approval is bound to a proposal (`bound_to_proposal`).
    pub holds: bool,
    /// `confirmation.ask` names the token of a proposal the call took, and `proposal-store.put`
    /// binds each record to a dry run the host validated: an approval is for a validated
    /// proposal, at most once.
    pub bound_to_proposal: bool,
}

#[derive(Clone, Debug, Serialize)]
pub struct Item {
    pub name: String,
    pub kind: String,
    pub functions: Vec<Function>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Function {
    pub name: String,
    pub signature: String,
}

#[derive(Clone, Debug, Serialize)]
pub struct Verdict {
    pub accepted: bool,
    /// One line per problem, each naming the offending import or export.
    pub problems: Vec<String>,
}

/// Reads the surface of a compiled component and judges it.
pub(crate) fn describe(engine: &Engine, component: &Component, sha256: &str, size_bytes: usize) -> Surface {
    let ty = component.component_type();
    let imports: Vec<Item> = ty.imports(engine).map(|(n, e)| item(engine, n, &e.ty)).collect();
    let exports: Vec<Item> = ty.exports(engine).map(|(n, e)| item(engine, n, &e.ty)).collect();
    let mut problems = Vec::new();
    let ours = |name: &str| name.starts_with("equinix:broker/");
    if let Some(old) = imports.iter().chain(&exports).find(|i| ours(&i.name) && !version_ok(&i.name)) {
        let found = old.name.split_once('@').map(|(_, v)| v).unwrap_or("no version");
        problems.push(format!(
            "is built against equinix:broker@{found} (it names `{}`), but this host requires equinix:broker@{WORLD_VERSION}: \
             rebuild it against this host's wit/broker.wit, where a create needs an approval that only the host mints, \
             for a proposal bound to a dry run the host sent",
            old.name
        ));
    }
    for i in imports.iter().filter(|i| !ours(&i.name) || version_ok(&i.name)) {
        if i.kind != "instance" || !ALLOWED_IMPORTS.contains(&compat_name(&i.name).as_str()) {
            problems.push(format!(
                "imports {} `{}`, which this host does not grant (it grants only {})",
                i.kind,
                i.name,
                ALLOWED_IMPORTS.join(", ")
            ));
        }
    }
    if problems.is_empty() && !exports.iter().any(|e| e.kind == "instance" && compat_name(&e.name) == REQUIRED_EXPORT) {
        problems.push(format!("does not export `{REQUIRED_EXPORT}.x`, so it offers no tools"));
    }
    let create_path = create_path(&imports);
    if problems.is_empty() && !create_path.holds {
        problems.push(format!(
            "has a create path other than the broker world's (spends approvals: {:?}; mints them: {:?})",
            create_path.spends_approval, create_path.mints_approval
        ));
    }
    Surface {
        sha256: sha256.to_string(),
        size_bytes,
        imports,
        exports,
        create_path,
        verdict: Verdict { accepted: problems.is_empty(), problems },
    }
}

/// Whether an `equinix:broker/...` name has this host's version (semver-compatibly).
fn version_ok(name: &str) -> bool {
    compat_name(name).rsplit_once('@').map(|(_, v)| v) == Some(WORLD_COMPAT)
}

fn create_path(imports: &[Item]) -> CreatePath {
    let own = format!("own<{APPROVAL}>");
    let mut path = CreatePath::default();
    for i in imports {
        for f in &i.functions {
            let Some((params, results)) = f.signature.strip_prefix("func(").and_then(|s| s.split_once(')')) else {
                continue;
            };
            let name = format!("{}#{}", i.name, f.name);
            if params.contains(&own) {
                path.spends_approval.push(name.clone());
            }
            if results.contains(&own) {
                path.mints_approval.push(name);
            }
        }
    }
    let only = |list: &[String], suffix: &str| {
        list.iter().all(|f| f.starts_with("equinix:broker/confirmation@") && f.ends_with(suffix))
    };
    let signature = |iface: &str, func: &str| {
        imports
            .iter()
            .filter(|i| i.name.starts_with(iface))
            .flat_map(|i| &i.functions)
            .find(|f| f.name == func)
            .map(|f| f.signature.clone())
    };
    let asks_by_token =
        signature("equinix:broker/confirmation@", "ask").is_none_or(|s| s.starts_with("func(token: string, request: "));
    let puts_validated = signature("equinix:broker/proposal-store@", "put")
        .is_none_or(|s| s.starts_with("func(proposal: list<u8>, validated-sha256: string, "));
    path.bound_to_proposal = asks_by_token && puts_validated;
    path.holds = only(&path.spends_approval, "#[static]approval.execute")
        && only(&path.mints_approval, "#ask")
        && path.bound_to_proposal;
    path
}

/// `pkg:name/iface@0.1.3` → `pkg:name/iface@0.1`; `@1.2.3` → `@1`. Pre-releases and 0.0.x stay
/// exact, as in wasmtime's own matching.
pub(crate) fn compat_name(name: &str) -> String {
    let Some((base, version)) = name.split_once('@') else {
        return name.to_string();
    };
    if version.contains('-') || version.contains('+') {
        return name.to_string();
    }
    let parts: Vec<&str> = version.split('.').collect();
    match parts.as_slice() {
        ["0", "0", _] => name.to_string(),
        ["0", minor, _] => format!("{base}@0.{minor}"),
        [major, _, _] => format!("{base}@{major}"),
        _ => name.to_string(),
    }
}

fn item(engine: &Engine, name: &str, ty: &ComponentItem) -> Item {
    let (kind, functions) = match ty {
        ComponentItem::ComponentInstance(inst) => {
            let resources: Vec<(ResourceType, String)> = inst
                .exports(engine)
                .filter_map(|(f, e)| match &e.ty {
                    ComponentItem::Resource(r) => Some((*r, f.to_string())),
                    _ => None,
                })
                .collect();
            let names = Names(&resources);
            let fns = inst
                .exports(engine)
                .filter_map(|(f, e)| match &e.ty {
                    ComponentItem::ComponentFunc(func) => {
                        Some(Function { name: f.to_string(), signature: func_sig(func, names) })
                    }
                    ComponentItem::Type(t) => {
                        Some(Function { name: f.to_string(), signature: format!("type {}", ty_str(t, names)) })
                    }
                    ComponentItem::Resource(_) => Some(Function { name: f.to_string(), signature: "resource".into() }),
                    _ => None,
                })
                .collect();
            ("instance", fns)
        }
        ComponentItem::ComponentFunc(func) => {
            ("func", vec![Function { name: name.to_string(), signature: func_sig(func, Names(&[])) }])
        }
        ComponentItem::CoreFunc(_) => ("core func", vec![]),
        ComponentItem::Module(_) => ("core module", vec![]),
        ComponentItem::Component(_) => ("component", vec![]),
        ComponentItem::Type(_) => ("type", vec![]),
        ComponentItem::Resource(_) => ("resource", vec![]),
    };
    Item { name: name.to_string(), kind: kind.to_string(), functions }
}

/// The resource types an instance defines, by name, for rendering handles.
#[derive(Clone, Copy)]
struct Names<'a>(&'a [(ResourceType, String)]);

impl Names<'_> {
    fn of(&self, r: &ResourceType) -> &str {
        self.0.iter().find(|(t, _)| t == r).map(|(_, n)| n.as_str()).unwrap_or("resource")
    }
}

fn func_sig(f: &types::ComponentFunc, names: Names) -> String {
    let params: Vec<String> = f.params().map(|(n, t)| format!("{n}: {}", ty_str(&t, names))).collect();
    let results: Vec<String> = f.results().map(|t| ty_str(&t, names)).collect();
    match results.len() {
        0 => format!("func({})", params.join(", ")),
        _ => format!("func({}) -> {}", params.join(", "), results.join(", ")),
    }
}

/// A readable rendering of a component type (wasmtime's own is private).
fn ty_str(t: &Type, names: Names) -> String {
    let ty_str = |t: &Type| ty_str(t, names);
    match t {
        Type::Bool => "bool".into(),
        Type::S8 => "s8".into(),
        Type::U8 => "u8".into(),
        Type::S16 => "s16".into(),
        Type::U16 => "u16".into(),
        Type::S32 => "s32".into(),
        Type::U32 => "u32".into(),
        Type::S64 => "s64".into(),
        Type::U64 => "u64".into(),
        Type::Float32 => "f32".into(),
        Type::Float64 => "f64".into(),
        Type::Char => "char".into(),
        Type::String => "string".into(),
        Type::List(l) => format!("list<{}>", ty_str(&l.ty())),
        Type::Record(r) => {
            let fields: Vec<String> = r.fields().map(|f| format!("{}: {}", f.name, ty_str(&f.ty))).collect();
            format!("record {{ {} }}", fields.join(", "))
        }
        Type::Tuple(t) => {
            let items: Vec<String> = t.types().map(|t| ty_str(&t)).collect();
            format!("tuple<{}>", items.join(", "))
        }
        Type::Variant(v) => {
            let cases: Vec<String> = v
                .cases()
                .map(|c| match c.ty {
                    Some(t) => format!("{}({})", c.name, ty_str(&t)),
                    None => c.name.to_string(),
                })
                .collect();
            format!("variant {{ {} }}", cases.join(", "))
        }
        Type::Enum(e) => format!("enum {{ {} }}", e.names().collect::<Vec<_>>().join(", ")),
        Type::Option(o) => format!("option<{}>", ty_str(&o.ty())),
        Type::Result(r) => {
            let ok = r.ok().map(|t| ty_str(&t)).unwrap_or_else(|| "_".into());
            let err = r.err().map(|t| ty_str(&t)).unwrap_or_else(|| "_".into());
            format!("result<{ok}, {err}>")
        }
        Type::Flags(f) => format!("flags {{ {} }}", f.names().collect::<Vec<_>>().join(", ")),
        Type::Own(r) => format!("own<{}>", names.of(r)),
        Type::Borrow(r) => format!("borrow<{}>", names.of(r)),
        other => format!("{other:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compat_names_follow_wasmtime_semver_rules() {
        assert_eq!(compat_name("equinix:broker/fabric@0.1.0"), "equinix:broker/fabric@0.1");
        assert_eq!(compat_name("equinix:broker/fabric@0.1.7"), "equinix:broker/fabric@0.1");
        assert_eq!(compat_name("equinix:broker/fabric@0.2.0"), "equinix:broker/fabric@0.2");
        assert_eq!(compat_name("wasi:io/poll@0.2.6"), "wasi:io/poll@0.2");
        assert_eq!(compat_name("x:y/z@1.2.3"), "x:y/z@1");
        assert_eq!(compat_name("x:y/z@0.0.3"), "x:y/z@0.0.3");
        assert_eq!(compat_name("x:y/z@0.1.0-rc1"), "x:y/z@0.1.0-rc1");
        assert_eq!(compat_name("unversioned"), "unversioned");
    }
}
