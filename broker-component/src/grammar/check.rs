//! Checking a value against its kind: every problem at once, each under its path, and the value
//! normalized when it is valid.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use equinix_broker_contract::{clip, json_kind as kind_of};
use serde_json::{Map, Value, json};

use super::kinds::{Kind, Object, Text, child, integer, is_metro_code, is_uuid};
use super::problems::Problems;

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
pub(crate) fn check(kind: &Kind, value: &Value, path: &str, problems: &mut Problems) -> Option<Value> {
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
                problems.push(path, format!("{why}, got {:?}", clip(s, 60)));
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
                problems.push(path, format!("expected one of {}, got {:?}", allowed.join(", "), clip(s, 60)));
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
            problems.see(since, field.values_listed_by());
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
