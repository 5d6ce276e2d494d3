//! The component's WIT surface: what it imports and exports, with types, and the verdict
//! against the host's import allow-list. `equinix-mcp inspect` prints this; `serve` refuses to
//! start on a refused verdict.

use serde::Serialize;
use wasmtime::Engine;
use wasmtime::component::types::{ComponentItem, Type};
use wasmtime::component::{Component, types};

/// The only imports the host implements. Versions match semver-compatibly, as wasmtime's linker
/// does (`0.1.x` for 0.x packages).
pub const ALLOWED_IMPORTS: &[&str] = &[
    "equinix:broker/fabric@0.1",
    "equinix:broker/clock@0.1",
    "equinix:broker/confirmation@0.1",
    "equinix:broker/proposal-store@0.1",
];

/// The export the host calls.
pub const REQUIRED_EXPORT: &str = "equinix:broker/tools@0.1";

#[derive(Clone, Debug, Serialize)]
pub struct Surface {
    pub sha256: String,
    pub size_bytes: usize,
    pub imports: Vec<Item>,
    pub exports: Vec<Item>,
    pub verdict: Verdict,
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
pub fn describe(engine: &Engine, component: &Component, sha256: &str, size_bytes: usize) -> Surface {
    let ty = component.component_type();
    let imports: Vec<Item> = ty.imports(engine).map(|(n, e)| item(engine, n, &e.ty)).collect();
    let exports: Vec<Item> = ty.exports(engine).map(|(n, e)| item(engine, n, &e.ty)).collect();
    let mut problems = Vec::new();
    for i in &imports {
        if i.kind != "instance" || !ALLOWED_IMPORTS.contains(&compat_name(&i.name).as_str()) {
            problems.push(format!(
                "imports {} `{}`, which this host does not grant (it grants only {})",
                i.kind,
                i.name,
                ALLOWED_IMPORTS.join(", ")
            ));
        }
    }
    if !exports.iter().any(|e| e.kind == "instance" && compat_name(&e.name) == REQUIRED_EXPORT) {
        problems.push(format!("does not export `{REQUIRED_EXPORT}.x`, so it offers no tools"));
    }
    Surface {
        sha256: sha256.to_string(),
        size_bytes,
        imports,
        exports,
        verdict: Verdict { accepted: problems.is_empty(), problems },
    }
}

/// `pkg:name/iface@0.1.3` → `pkg:name/iface@0.1`; `@1.2.3` → `@1`. Pre-releases and 0.0.x stay
/// exact, as in wasmtime's own matching.
pub fn compat_name(name: &str) -> String {
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
            let fns = inst
                .exports(engine)
                .filter_map(|(f, e)| match &e.ty {
                    ComponentItem::ComponentFunc(func) => {
                        Some(Function { name: f.to_string(), signature: func_sig(func) })
                    }
                    ComponentItem::Type(t) => {
                        Some(Function { name: f.to_string(), signature: format!("type {}", ty_str(t)) })
                    }
                    _ => None,
                })
                .collect();
            ("instance", fns)
        }
        ComponentItem::ComponentFunc(func) => {
            ("func", vec![Function { name: name.to_string(), signature: func_sig(func) }])
        }
        ComponentItem::CoreFunc(_) => ("core func", vec![]),
        ComponentItem::Module(_) => ("core module", vec![]),
        ComponentItem::Component(_) => ("component", vec![]),
        ComponentItem::Type(_) => ("type", vec![]),
        ComponentItem::Resource(_) => ("resource", vec![]),
    };
    Item { name: name.to_string(), kind: kind.to_string(), functions }
}

fn func_sig(f: &types::ComponentFunc) -> String {
    let params: Vec<String> = f.params().map(|(n, t)| format!("{n}: {}", ty_str(&t))).collect();
    let results: Vec<String> = f.results().map(|t| ty_str(&t)).collect();
    match results.len() {
        0 => format!("func({})", params.join(", ")),
        _ => format!("func({}) -> {}", params.join(", "), results.join(", ")),
    }
}

/// A readable rendering of a component type (wasmtime's own is private).
pub fn ty_str(t: &Type) -> String {
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
