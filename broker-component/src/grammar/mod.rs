//! Declarative JSON grammars: one table both checks a value (every problem at once, each named
//! by its JSON pointer) and produces the JSON Schema that describes it, so the schema a client
//! sees and the rules the component enforces cannot drift apart. A checked value comes back
//! normalized (integers written as such), which for a create spec is exactly the body sent.

use alloc::collections::{BTreeMap, BTreeSet};
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use serde_json::{Map, Value, json};

mod schema;
pub use schema::{schema, schemas_sharing};

#[cfg(test)]
mod tests;

/// A Fabric metro code: uppercase letters and digits, e.g. `DC`, `SV`.
pub fn is_metro_code(s: &str) -> bool {
    (2..=4).contains(&s.len()) && s.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit())
}

/// A uuid in its 8-4-4-4-12 hex form.
pub fn is_uuid(s: &str) -> bool {
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
pub type Rule = fn(&Map<String, Value>, &str, &mut Problems);

/// An object: its fields (no others are allowed) and a rule over the whole object.
#[derive(Debug)]
pub struct Object {
    /// Its name under the schema's `$defs` when it is reached from more than one place.
    pub name: &'static str,
    pub fields: &'static [Field],
    /// A rule across fields, run when every field passed; pushes its own problems.
    pub rule: Option<Rule>,
    /// What the rule requires, in words (for the schema's description).
    pub rule_doc: &'static str,
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
}

/// A tool's arguments: an unnamed object of `fields`, with no rule across them.
pub const fn arguments(fields: &'static [Field]) -> Object {
    Object { name: "", fields, rule: None, rule_doc: "" }
}

/// Shorthands for the tables.
pub const fn req(name: &'static str, kind: Kind, doc: &'static str) -> Field {
    Field { name, kind, required: true, doc, default: None }
}

pub const fn opt(name: &'static str, kind: Kind, doc: &'static str) -> Field {
    Field { name, kind, required: false, doc, default: None }
}

impl Field {
    /// The same field with a default (JSON text).
    pub const fn or(self, default: &'static str) -> Field {
        Field { default: Some(default), ..self }
    }
}

pub const fn text(max: usize) -> Kind {
    Kind::Str { min: 1, max, text: Text::Any }
}

/// Free text whose length is Fabric's to judge (the dry run does); the whole spec is bounded.
pub const TEXT: Kind = Kind::Str { min: 1, max: usize::MAX, text: Text::Any };

pub const UUID: Kind = Kind::Str { min: 36, max: 36, text: Text::Uuid };
pub const METRO: Kind = Kind::Str { min: 2, max: 4, text: Text::MetroCode };
pub const EMAIL: Kind = Kind::Str { min: 3, max: 254, text: Text::Email };
pub const DATE_TIME: Kind = Kind::Str { min: 20, max: 40, text: Text::DateTime };

pub const fn int(min: i64, max: i64) -> Kind {
    Kind::Int { min, max, only: None }
}

/// One problem with a value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    pub path: String,
    pub message: String,
    /// The read tool that lists valid values here, when the field's description names one.
    pub see: Option<&'static str>,
}

/// The problems found so far (at most [`Problems::MAX`]: a wholly wrong value is not an essay).
#[derive(Debug, Default)]
pub struct Problems(pub Vec<Problem>);

impl Problems {
    pub const MAX: usize = 20;

    pub fn push(&mut self, path: &str, message: impl Into<String>) {
        if self.0.len() < Self::MAX {
            self.0.push(Problem { path: crate::tool_error::clip(path, 200), message: message.into(), see: None });
        }
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Points the problems from `since` on at `tool`, unless a deeper field already named one.
    fn see(&mut self, since: usize, tool: Option<&'static str>) {
        for p in self.0.iter_mut().skip(since) {
            p.see = p.see.or(tool);
        }
    }
}

/// The read tool a field's description names (`fabric_list_metros` in "Metro code
/// (fabric_list_metros)"): where valid values come from. Errors and schemas share this one source.
pub fn tool_named_in(doc: &'static str) -> Option<&'static str> {
    let start = doc.find("fabric_")?;
    let rest = &doc[start..];
    let end = rest.find(|c: char| !(c.is_ascii_lowercase() || c == '_')).unwrap_or(rest.len());
    Some(&rest[..end])
}

fn see_for(field: &Field) -> Option<&'static str> {
    match field.kind {
        Kind::Str { text: Text::MetroCode, .. } => Some("fabric_list_metros"),
        _ => tool_named_in(field.doc),
    }
}

/// The JSON pointer of `key` under `path`.
pub fn child(path: &str, key: &str) -> String {
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

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// An integral JSON number (`1000`, `1e3` and `1000.0` all read as 1000).
pub fn integer(v: &Value) -> Option<i64> {
    let n = v.as_number()?;
    if let Some(i) = n.as_i64() {
        return Some(i);
    }
    // no_std has no `f64::fract`: an integral float survives the round trip through i64
    let f = n.as_f64()?;
    let i = f as i64;
    (f.abs() < 9.0e15 && i as f64 == f).then_some(i)
}

fn text_ok(t: Text, s: &str) -> Result<(), &'static str> {
    let ok = match t {
        Text::Any => true,
        Text::Uuid => is_uuid(s),
        Text::MetroCode => is_metro_code(s),
        Text::Email => {
            let at = s.find('@');
            at.is_some_and(|i| i > 0 && i < s.len() - 1) && !s.contains(char::is_whitespace)
        }
        Text::DateTime => crate::time::parse_rfc3339_ms(s).is_some(),
    };
    if ok {
        return Ok(());
    }
    Err(match t {
        Text::Any => "",
        Text::Uuid => "expected a uuid (8-4-4-4-12 hex digits)",
        Text::MetroCode => "expected an uppercase metro code such as \"DC\" or \"SV\" (fabric_list_metros lists them)",
        Text::Email => "expected an email address",
        Text::DateTime => "expected an RFC 3339 date-time such as 2026-12-18T06:43:49.980Z",
    })
}

/// Checks `value` against `kind`; returns it normalized when this part is valid. Problems go to
/// `problems`, each under its path.
pub fn check(kind: &Kind, value: &Value, path: &str, problems: &mut Problems) -> Option<Value> {
    match kind {
        Kind::Str { min, max, text } => {
            let Value::String(s) = value else {
                problems.push(path, format!("expected a string, got {}", kind_of(value)));
                return None;
            };
            // a typed string's own message says what it should look like (and where to find one)
            if *text != Text::Any
                && let Err(why) = text_ok(*text, s)
            {
                problems.push(path, format!("{why}, got {:?}", crate::tool_error::clip(s, 60)));
                return None;
            }
            let n = s.chars().count();
            if n < *min || n > *max {
                let want = if min == max { format!("{min}") } else { format!("{min} to {max}") };
                problems.push(path, format!("must be {want} characters long (it has {n})"));
                return None;
            }
            Some(value.clone())
        }
        Kind::Int { min, max, only } => {
            let Some(i) = integer(value) else {
                problems.push(path, format!("expected an integer, got {}", kind_of(value)));
                return None;
            };
            if i < *min || i > *max {
                problems.push(path, format!("expected an integer from {min} to {max}, got {i}"));
                return None;
            }
            if let Some(only) = only
                && !only.contains(&i)
            {
                let list: Vec<String> = only.iter().map(|v| v.to_string()).collect();
                problems.push(path, format!("expected one of {}, got {i}", list.join(", ")));
                return None;
            }
            Some(json!(i))
        }
        Kind::Bool => match value {
            Value::Bool(_) => Some(value.clone()),
            other => {
                problems.push(path, format!("expected true or false, got {}", kind_of(other)));
                None
            }
        },
        Kind::Enum(allowed) => match value.as_str() {
            Some(s) if allowed.contains(&s) => Some(value.clone()),
            Some(s) => {
                problems.push(
                    path,
                    format!("expected one of {}, got {:?}", allowed.join(", "), crate::tool_error::clip(s, 60)),
                );
                None
            }
            None => {
                problems.push(path, format!("expected one of {}, got {}", allowed.join(", "), kind_of(value)));
                None
            }
        },
        Kind::Array { item, min, max } => {
            let Value::Array(items) = value else {
                problems.push(path, format!("expected an array, got {}", kind_of(value)));
                return None;
            };
            if items.len() < *min || items.len() > *max {
                problems.push(path, format!("must have {min} to {max} items (it has {})", items.len()));
                return None;
            }
            let checked: Vec<Option<Value>> =
                items.iter().enumerate().map(|(i, v)| check(item, v, &format!("{path}/{i}"), problems)).collect();
            checked.into_iter().collect::<Option<Vec<Value>>>().map(Value::Array)
        }
        Kind::Obj(object) => check_object(object, value, path, problems),
        Kind::AnyObject => match value {
            Value::Object(_) => Some(value.clone()),
            other => {
                problems.push(path, format!("expected an object, got {}", kind_of(other)));
                None
            }
        },
    }
}

fn check_object(object: &Object, value: &Value, path: &str, problems: &mut Problems) -> Option<Value> {
    let Value::Object(map) = value else {
        problems.push(path, format!("expected an object, got {}", kind_of(value)));
        return None;
    };
    let before = problems.0.len();
    let mut out = Map::new();
    // a field's hint is looked up only when it has a problem, and its path only when it is
    // present or required: a valid spec (the common case) pays for no hint
    for field in object.fields {
        let since = problems.0.len();
        match map.get(field.name) {
            Some(v) => {
                if let Some(n) = check(&field.kind, v, &child(path, field.name), problems) {
                    out.insert(field.name.into(), n);
                }
            }
            None if field.required => problems.push(&child(path, field.name), "is required"),
            None => {}
        }
        if problems.0.len() > since {
            problems.see(since, see_for(field));
        }
    }
    for key in map.keys() {
        if !object.fields.iter().any(|f| f.name == key) {
            let allowed: Vec<&str> = object.fields.iter().map(|f| f.name).collect();
            problems.push(&child(path, key), format!("unknown field (allowed here: {})", allowed.join(", ")));
        }
    }
    if problems.0.len() != before {
        return None;
    }
    if let Some(rule) = object.rule {
        rule(&out, path, problems);
        if problems.0.len() != before {
            return None;
        }
    }
    Some(Value::Object(out))
}

/// Every problem of a failed check as one tool error: the first named in the message, all of
/// them listed under `problems`.
pub fn to_error(problems: Problems) -> crate::tool_error::ToolError {
    let list: Vec<Value> = problems.0.iter().map(|p| json!({"path": p.path, "message": p.message})).collect();
    let first =
        problems.0.first().cloned().unwrap_or(Problem { path: "/".into(), message: "is invalid".into(), see: None });
    let more = match list.len() {
        0 | 1 => String::new(),
        n => format!(" (and {} more problems, listed under problems)", n - 1),
    };
    let pointers: Vec<(&str, &str)> = problems.0.iter().filter_map(|p| Some((p.path.as_str(), p.see?))).collect();
    crate::tool_error::ToolError::new(
        "invalid_arguments",
        format!("invalid argument at {}: {}{more}", first.path, first.message),
    )
    .with("path", json!(first.path))
    .with("problems", Value::Array(list))
    .with("next_step", json!(next_step(&pointers)))
}

/// "Fix every problem ... and call again", with the read tool that lists valid values for each
/// path that has one (one mention per tool).
pub fn next_step(pointers: &[(&str, &str)]) -> String {
    let mut step = String::from("Fix every problem under `problems` and call again");
    let mut named: Vec<&str> = Vec::new();
    for (path, tool) in pointers {
        if !named.contains(tool) {
            named.push(tool);
            step.push_str(&format!("; {tool} lists valid values for {path}"));
        }
    }
    step.push('.');
    step
}
