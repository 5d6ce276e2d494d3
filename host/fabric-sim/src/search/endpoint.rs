//! What a search endpoint's filter may contain, and the check of a filter against it.

use serde_json::Value;

/// How `and` and `or` may combine in an endpoint's filter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Shape {
    /// A simple expression, or a flat `and` of them (the service profile search).
    FlatAnd,
    /// A flat `and` of simple expressions and nothing else (the cloud event search).
    AndOnly,
    /// An `and` of simple expressions or of `or`s of at most three simple expressions (the
    /// Cloud Router searches); nothing else at the top.
    AndOfOr,
    /// `and` and `or` nested freely, a simple expression at the top too.
    Nested,
    /// `and` or `or` at the top (never a bare expression), nested freely, at most eight items
    /// and eight values each (the route filter and aggregation searches).
    StrictNested,
}

/// What one search endpoint's filter may contain, and how it refuses the rest.
pub(crate) struct Endpoint {
    pub properties: &'static [&'static str],
    pub(crate) operators: &'static [&'static str],
    pub shape: Shape,
    /// A property the filter must name (the Cloud Router search requires the project).
    pub required: Option<&'static str>,
    pub error_code: &'static str,
    pub error_message: &'static str,
}

impl Endpoint {
    /// Whether `filter` is one this endpoint accepts; `Err((property, reason))` otherwise.
    pub(crate) fn check(&self, filter: &Value) -> Result<(), (String, String)> {
        let top_is_list = filter.get("and").is_some() || filter.get("or").is_some();
        match self.shape {
            Shape::AndOfOr | Shape::AndOnly if filter.get("and").is_none() => {
                return Err(("filter".into(), "the filter must be an `and` of expressions".into()));
            }
            Shape::StrictNested if !top_is_list => {
                return Err(("filter".into(), "the filter must be an `and` or an `or` of expressions".into()));
            }
            _ => {}
        }
        self.check_at(filter, "filter", 0)?;
        if let Some(property) = self.required
            && !names(filter, property)
        {
            return Err(("filter".into(), format!("{property} is mandatory in this search's filter")));
        }
        Ok(())
    }

    fn check_at(&self, filter: &Value, at: &str, depth: usize) -> Result<(), (String, String)> {
        let refuse = |reason: String| Err((at.to_string(), reason));
        if filter.get("and").is_some() && filter.get("or").is_some() {
            return refuse("an expression has `and` or `or`, not both".into());
        }
        for key in ["and", "or"] {
            let Some(list) = filter.get(key) else { continue };
            let allowed = match (self.shape, key) {
                (Shape::FlatAnd | Shape::AndOnly, "and") => depth == 0,
                (Shape::FlatAnd | Shape::AndOnly, _) => false,
                (Shape::AndOfOr, "and") => depth == 0,
                (Shape::AndOfOr, _) => depth == 1,
                (Shape::Nested | Shape::StrictNested, _) => true,
            };
            if !allowed {
                return refuse(format!("`{key}` is not supported here"));
            }
            let Some(items) = list.as_array() else { return refuse(format!("`{key}` must be an array")) };
            let max = match (self.shape, key) {
                (Shape::AndOfOr, "or") => 3,
                (Shape::AndOfOr, _) | (Shape::StrictNested, _) => 8,
                _ => usize::MAX,
            };
            if items.len() > max || (self.shape == Shape::StrictNested && items.is_empty()) {
                return refuse(format!("`{key}` takes 1 to {max} expressions"));
            }
            for (i, item) in items.iter().enumerate() {
                self.check_at(item, &format!("{at}.{key}.[{i}]"), depth + 1)?;
            }
            return Ok(());
        }
        let property = filter.get("property").and_then(Value::as_str).unwrap_or_default();
        if !self.properties.contains(&property) {
            return refuse(format!(
                "Unexpected value '{property}'; supported search properties are : {}",
                self.properties.join(",")
            ));
        }
        let operator = filter.get("operator").and_then(Value::as_str).unwrap_or_default();
        if !self.operators.contains(&operator) {
            return refuse(format!(
                "Unexpected operator '{operator}'; supported search operator is : {}",
                self.operators.join(",")
            ));
        }
        let values = filter.get("values").and_then(Value::as_array);
        if self.shape == Shape::StrictNested && !values.is_some_and(|v| (1..=8).contains(&v.len())) {
            return refuse("`values` takes 1 to 8 strings".into());
        }
        // the newer searches' models take strings only (a MED or a count too)
        let strict = matches!(self.shape, Shape::AndOfOr | Shape::StrictNested | Shape::AndOnly);
        if strict && values.is_some_and(|v| v.iter().any(|x| !x.is_string())) {
            return refuse("every value is a string".into());
        }
        Ok(())
    }
}

/// Whether `filter` names `property` anywhere.
fn names(filter: &Value, property: &str) -> bool {
    if filter.get("property").and_then(Value::as_str) == Some(property) {
        return true;
    }
    ["and", "or"].iter().filter_map(|k| filter.get(k)?.as_array()).flatten().any(|f| names(f, property))
}
