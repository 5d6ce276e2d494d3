//! The shapes a grammar is written in: kinds of values, objects of fields, and the shorthands
//! the tables use.

use alloc::format;
use alloc::string::{String, ToString};
use serde_json::{Map, Value};

use super::problems::Problems;

/// A Fabric metro code: uppercase letters and digits, e.g. `DC`, `SV`.
pub(crate) fn is_metro_code(s: &str) -> bool {
    (2..=4).contains(&s.len()) && s.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit())
}

/// A uuid in its 8-4-4-4-12 hex form.
pub(crate) fn is_uuid(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 36
        && b.iter().enumerate().all(|(i, c)| match i {
            8 | 13 | 18 | 23 => *c == b'-',
            _ => c.is_ascii_hexdigit(),
        })
}

/// What a string must look like.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Text {
    Any,
    Uuid,
    /// An uppercase Fabric metro code such as `DC` or `SV`.
    MetroCode,
    Email,
    /// RFC 3339, e.g. `2026-12-18T06:43:49.980Z`.
    DateTime,
}

/// The shape of one value.
#[derive(Clone, Copy, Debug)]
pub enum Kind {
    Str {
        min: usize,
        max: usize,
        text: Text,
    },
    /// An integer in `min..=max`; with `only`, one of those values.
    Int {
        min: i64,
        max: i64,
        only: Option<&'static [i64]>,
    },
    Bool,
    Enum(&'static [&'static str]),
    Obj(&'static Object),
    Array {
        item: &'static Kind,
        min: usize,
        max: usize,
    },
    /// Any JSON object, checked further by its user (a create spec, by its change type's grammar).
    AnyObject,
}

/// A rule over a checked object at a path.
pub(crate) type Rule = fn(&Map<String, Value>, &str, &mut Problems);

/// An object: its fields (no others are allowed) and a rule over the whole object.
#[derive(Debug)]
pub struct Object {
    /// Its name under the schema's `$defs` when it is reached from more than one place.
    pub name: &'static str,
    pub fields: &'static [Field],
    /// A rule across fields, run when every field passed; pushes its own problems.
    pub rule: Option<Rule>,
    /// What the rule requires, in words (for the schema's description).
    pub(crate) rule_doc: &'static str,
}

/// One named member of an object.
#[derive(Clone, Copy, Debug)]
pub struct Field {
    pub name: &'static str,
    pub kind: Kind,
    pub required: bool,
    pub doc: &'static str,
    /// The value assumed when the field is absent, as JSON text (shown in the schema).
    pub default: Option<&'static str>,
    /// The read tool that lists valid values for this field: named in its description for the
    /// model, in its schema's `x-values-from` for the host, and in its problems' next step.
    pub(crate) values_from: Option<&'static str>,
}

/// A tool's arguments: an unnamed object of `fields`, with no rule across them.
pub(crate) const fn arguments(fields: &'static [Field]) -> Object {
    Object { name: "", fields, rule: None, rule_doc: "" }
}

/// Shorthands for the tables.
pub(crate) const fn req(name: &'static str, kind: Kind, doc: &'static str) -> Field {
    Field { name, kind, required: true, doc, default: None, values_from: None }
}

pub(crate) const fn opt(name: &'static str, kind: Kind, doc: &'static str) -> Field {
    Field { name, kind, required: false, doc, default: None, values_from: None }
}

impl Field {
    /// The same field with a default (JSON text).
    pub(crate) const fn or(self, default: &'static str) -> Field {
        Field { default: Some(default), ..self }
    }

    /// The same field, its valid values listed by the read tool `tool`.
    pub(crate) const fn from(self, tool: &'static str) -> Field {
        Field { values_from: Some(tool), ..self }
    }

    /// The read tool that lists valid values here: the one named, or for a metro code the one
    /// that lists metros.
    pub(crate) fn values_listed_by(&self) -> Option<&'static str> {
        match self.kind {
            Kind::Str { text: Text::MetroCode, .. } => self.values_from.or(Some(METROS_TOOL)),
            _ => self.values_from,
        }
    }

    /// The description the schema shows: the doc, and where valid values come from.
    pub(crate) fn description(&self) -> String {
        match self.values_from {
            Some(tool) if self.doc.is_empty() => format!("From {tool}"),
            Some(tool) => format!("{}, from {tool}", self.doc),
            None => self.doc.to_string(),
        }
    }
}

/// The read tool every metro code comes from.
pub(crate) const METROS_TOOL: &str = "fabric_list_metros";

pub(crate) const fn text(max: usize) -> Kind {
    Kind::Str { min: 1, max, text: Text::Any }
}

/// Free text whose length is Fabric's to judge (the dry run does); the whole spec is bounded.
pub(crate) const TEXT: Kind = Kind::Str { min: 1, max: usize::MAX, text: Text::Any };

pub(crate) const UUID: Kind = Kind::Str { min: 36, max: 36, text: Text::Uuid };
pub(crate) const METRO: Kind = Kind::Str { min: 2, max: 4, text: Text::MetroCode };
pub(crate) const EMAIL: Kind = Kind::Str { min: 3, max: 254, text: Text::Email };
pub(crate) const DATE_TIME: Kind = Kind::Str { min: 20, max: 40, text: Text::DateTime };

pub(crate) const fn int(min: i64, max: i64) -> Kind {
    Kind::Int { min, max, only: None }
}

/// The JSON pointer of `key` under `path`.
pub(crate) fn child(path: &str, key: &str) -> String {
    let mut out = String::with_capacity(path.len() + 1 + key.len());
    out.push_str(path);
    out.push('/');
    for c in key.chars() {
        match c {
            '~' => out.push_str("~0"),
            '/' => out.push_str("~1"),
            c => out.push(c),
        }
    }
    out
}

/// An integral JSON number (`1000`, `1e3` and `1000.0` all read as 1000).
pub(crate) fn integer(v: &Value) -> Option<i64> {
    let n = v.as_number()?;
    if let Some(i) = n.as_i64() {
        return Some(i);
    }
    // no_std has no `f64::fract`: an integral float survives the round trip through i64
    let f = n.as_f64()?;
    let i = f as i64;
    (f.abs() < 9.0e15 && i as f64 == f).then_some(i)
}
