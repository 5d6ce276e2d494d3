//! Fabric search filters evaluated over JSON objects: `{"and": [...]}`, `{"or": [...]}` and
//! `{property, operator, values}` with `=`, `!=`, `IN`, `NOT IN`, `LIKE`, `ILIKE` (and Fabric's
//! `ILKE`), the comparisons and `BETWEEN` (of instants, numbers or text), where `property` is a JSON pointer such as `/location/metroCode`. Each search endpoint
//! ([`endpoints`]) first checks the filter against what its contract (Fabric v4 4.31) allows: the
//! properties, the operators, the shape of `and` and `or`, and a property it requires.

mod endpoint;
mod endpoints;

use serde_json::Value;

pub(crate) use endpoint::Endpoint;
pub(crate) use endpoints::*;

/// Whether `item` matches `filter`; `Err` names what is malformed.
pub(crate) fn matches(item: &Value, filter: &Value) -> Result<bool, String> {
    if let Some(all) = filter.get("and") {
        let list = all.as_array().ok_or("`and` must be an array")?;
        for f in list {
            if !matches(item, f)? {
                return Ok(false);
            }
        }
        return Ok(true);
    }
    if let Some(any) = filter.get("or") {
        let list = any.as_array().ok_or("`or` must be an array")?;
        for f in list {
            if matches(item, f)? {
                return Ok(true);
            }
        }
        return Ok(false);
    }
    let property = filter.get("property").and_then(Value::as_str).ok_or("a filter needs `property`")?;
    let operator = filter.get("operator").and_then(Value::as_str).unwrap_or("=");
    let found = values_at(item, property);
    match operator {
        "IS NOT NULL" => return Ok(!found.is_empty()),
        "IS NULL" => return Ok(found.is_empty()),
        _ => {}
    }
    let values: Vec<String> = filter
        .get("values")
        .and_then(Value::as_array)
        .ok_or("a filter needs `values`")?
        .iter()
        .map(|v| match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
        .collect();
    if found.is_empty() {
        return Ok(matches!(operator, "!=" | "NOT IN"));
    }
    // a property inside an array (`/metros/code`) matches when any element does
    let mut any = false;
    for v in found {
        let actual = match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        any |= match operator {
            "=" | "IN" => values.contains(&actual),
            "!=" | "NOT IN" => values.iter().all(|v| *v != actual),
            "LIKE" => values.iter().any(|v| like(&actual, v, false)),
            "ILIKE" | "ILKE" => values.iter().any(|v| like(&actual, v, true)),
            ">" | ">=" | "<" | "<=" => {
                let bound = values.first().ok_or(format!("`{operator}` takes one value"))?;
                let order = compare(&actual, bound)?;
                match operator {
                    ">" => order.is_gt(),
                    ">=" => order.is_ge(),
                    "<" => order.is_lt(),
                    _ => order.is_le(),
                }
            }
            "BETWEEN" => {
                let [low, high] = values.as_slice() else { return Err("BETWEEN takes two values".into()) };
                compare(&actual, low)?.is_ge() && compare(&actual, high)?.is_le()
            }
            other => return Err(format!("unsupported operator {other:?}")),
        };
    }
    Ok(any)
}

/// Two values in their own order: as instants when both are, as numbers when both are, as text
/// when neither is either; an instant or a number against anything else is a malformed filter.
fn compare(a: &str, b: &str) -> Result<std::cmp::Ordering, String> {
    use crate::instant::parse_nanos;
    let number = |s: &str| s.parse::<f64>().ok().filter(|n| n.is_finite());
    match ((parse_nanos(a), number(a)), (parse_nanos(b), number(b))) {
        ((Some(x), _), (Some(y), _)) => Ok(x.cmp(&y)),
        ((None, Some(x)), (None, Some(y))) => Ok(x.total_cmp(&y)),
        ((None, None), (None, None)) => Ok(a.cmp(b)),
        _ => Err(format!("{b:?} cannot be compared with {a:?}")),
    }
}

/// The non-null values at a JSON pointer, fanning out over arrays on the way.
fn values_at<'a>(item: &'a Value, pointer: &str) -> Vec<&'a Value> {
    let mut current = vec![item];
    for segment in pointer.split('/').skip(1) {
        let mut next = Vec::new();
        for v in current {
            match v {
                Value::Object(m) => next.extend(m.get(segment)),
                Value::Array(items) => match segment.parse::<usize>() {
                    Ok(i) => next.extend(items.get(i)),
                    Err(_) => next.extend(items.iter().filter_map(|x| x.get(segment))),
                },
                _ => {}
            }
        }
        current = next;
    }
    current
        .into_iter()
        .flat_map(|v| if let Value::Array(a) = v { a.iter().collect() } else { vec![v] })
        .filter(|v| !v.is_null())
        .collect()
}

/// LIKE as the contract describes it, a partial match (a value without `%` matches anywhere;
/// with `%`, SQL wildcards, no `_`), optionally case-insensitive.
fn like(actual: &str, pattern: &str, fold: bool) -> bool {
    let (a, p) =
        if fold { (actual.to_lowercase(), pattern.to_lowercase()) } else { (actual.to_string(), pattern.to_string()) };
    let parts: Vec<&str> = p.split('%').collect();
    if parts.len() == 1 {
        return a.contains(&p);
    }
    let mut rest = a.as_str();
    for (i, part) in parts.iter().enumerate() {
        if part.is_empty() {
            continue;
        }
        if i == 0 {
            match rest.strip_prefix(part) {
                Some(r) => rest = r,
                None => return false,
            }
        } else if i == parts.len() - 1 {
            return rest.ends_with(part);
        } else {
            match rest.find(part) {
                Some(at) => rest = &rest[at + part.len()..],
                None => return false,
            }
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn filters_combine_and_compare() {
        let port = json!({"name": "DC-PRI-01", "location": {"metroCode": "DC"}, "bandwidth": 10000});
        assert!(
            matches(&port, &json!({"property": "/location/metroCode", "operator": "=", "values": ["DC"]})).unwrap()
        );
        assert!(matches(&port, &json!({"and": [{"property": "/name", "operator": "LIKE", "values": ["DC-%"]},
                                              {"property": "/bandwidth", "operator": "IN", "values": ["1000", "10000"]}]})).unwrap());
        assert!(!matches(&port, &json!({"property": "/name", "operator": "LIKE", "values": ["%SEC%"]})).unwrap());
        assert!(
            matches(&port, &json!({"property": "/name", "operator": "LIKE", "values": ["PRI"]})).unwrap(),
            "partial"
        );
        assert!(matches(&port, &json!({"property": "/name", "operator": "ILIKE", "values": ["dc-pri%"]})).unwrap());
        assert!(
            matches(
                &port,
                &json!({"or": [{"property": "/name", "operator": "=", "values": ["x"]},
                                             {"property": "/name", "operator": "=", "values": ["DC-PRI-01"]}]})
            )
            .unwrap()
        );
        assert!(matches(&port, &json!({"property": "/name", "operator": "~", "values": ["x"]})).is_err());
        assert!(matches(&port, &json!({"operator": "=", "values": ["x"]})).is_err());
        assert!(matches(&port, &json!({"property": "/uuid", "operator": "IS NOT NULL", "values": []})).is_ok());
        assert!(PORTS.check(&json!({"property": "/uuid", "operator": "IS NOT NULL", "values": []})).is_err());
        assert!(PROFILES.check(&json!({"property": "/name", "operator": "LIKE", "values": ["A%"]})).is_err());
        assert!(PROFILES.check(&json!({"and": [{"property": "/name", "operator": "=", "values": ["A"]}]})).is_ok());
        assert!(PROFILES.check(&json!({"or": [{"property": "/name", "operator": "=", "values": ["A"]}]})).is_err());
        assert!(
            CONNECTIONS
                .check(&json!({"and": [{"or": [{"property": "/name", "operator": "LIKE", "values": ["x"]}]}]}))
                .is_ok()
        );
        let profile = json!({"metros": [{"code": "DC"}, {"code": "SV"}]});
        assert!(matches(&profile, &json!({"property": "/metros/code", "operator": "=", "values": ["SV"]})).unwrap());
        assert!(!matches(&profile, &json!({"property": "/metros/code", "operator": "=", "values": ["LD"]})).unwrap());
    }

    #[test]
    fn instants_numbers_and_text_compare_in_their_own_order() {
        let event = json!({"time": "2026-12-01T06:12:09Z", "severitynumber": "17"});
        let between = |a: &str, b: &str| json!({"property": "/time", "operator": "BETWEEN", "values": [a, b]});
        // the same instant written three ways
        assert!(matches(&event, &between("2026-12-01T06:12:09.000Z", "2026-12-01T07:12:09+01:00")).unwrap());
        assert!(!matches(&event, &between("2026-12-01T06:12:10Z", "2026-12-02T00:00:00Z")).unwrap());
        assert!(matches(&event, &between("2026-12-01T06:00:00Z", "2026-12-01T07:00:00Z")).unwrap());
        assert!(
            matches(&event, &json!({"property": "/time", "operator": "<=", "values": ["2026-12-01T06:12:09Z"]}))
                .unwrap()
        );
        assert!(
            !matches(&event, &json!({"property": "/time", "operator": "<", "values": ["2026-12-01T06:12:09Z"]}))
                .unwrap()
        );
        // 17 > 9 as numbers, though not as text
        assert!(matches(&event, &json!({"property": "/severitynumber", "operator": ">", "values": ["9"]})).unwrap());
        assert!(matches(&event, &json!({"property": "/time", "operator": "BETWEEN", "values": ["x"]})).is_err());
        assert!(matches(&event, &json!({"property": "/time", "operator": ">", "values": ["soon"]})).is_err());
        // within a second
        assert!(!matches(&event, &between("2026-12-01T06:12:09.500Z", "2026-12-01T07:00:00Z")).unwrap());
    }

    #[test]
    fn the_cloud_event_search_takes_an_and_of_strings_and_nothing_else() {
        let simple = json!({"property": "/type", "operator": "=", "values": ["x"]});
        assert!(CLOUD_EVENTS.check(&json!({"and": [simple.clone()]})).is_ok());
        assert!(CLOUD_EVENTS.check(&simple).is_err(), "a bare expression");
        assert!(CLOUD_EVENTS.check(&json!({"or": [simple.clone()]})).is_err());
        assert!(CLOUD_EVENTS.check(&json!({"and": [{"and": [simple]}]})).is_err(), "nested");
        assert!(CLOUD_EVENTS.check(&json!({"and": [{"property": "/time", "operator": ">", "values": [1]}]})).is_err());
        assert!(
            CLOUD_EVENTS.check(&json!({"and": [{"property": "/colour", "operator": "=", "values": ["x"]}]})).is_err()
        );
    }
}
