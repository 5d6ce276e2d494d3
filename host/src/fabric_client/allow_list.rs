//! The static allow-list of Fabric requests the `fabric` capability will send.
//!
//! Every request a component asks for is matched against this table of (method, path template,
//! allowed query keys). Path parameters must be plain identifiers, so no argument can steer a
//! request to another path. There is no update or delete route, and the create routes are only
//! open when the operator enabled the `mutate` toolset: to a component's `fabric.send` only as a
//! dry run, and to a real create only through an approval ([`check_create`]).

use equinix_broker_contract::ChangeType;
use std::fmt;
use std::sync::LazyLock;

/// What a route does to the Fabric estate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RouteClass {
    /// Changes nothing (GETs and the search POSTs): may be retried.
    Read,
    /// A create with `dryRun=true`: validates, persists nothing; may be retried.
    DryRun(CreateRoute),
    /// A real create: billable, never retried.
    Create,
}

/// A create route of the allow-list, found by [`check`] or [`check_create`] (its fields are
/// private: no other code can make one up).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CreateRoute {
    template: &'static str,
    change_type: ChangeType,
}

impl CreateRoute {
    /// The path it is POSTed to (a create route has no path parameters).
    pub(crate) fn path(&self) -> &'static str {
        self.template
    }

    /// The change type it creates.
    pub(crate) fn change_type(&self) -> ChangeType {
        self.change_type
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    Get,
    Post,
}

impl fmt::Display for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Method::Get => "GET",
            Method::Post => "POST",
        })
    }
}

/// One allowed (method, path template).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Route {
    pub method: Method,
    /// `{name}` segments match one plain identifier (`[A-Za-z0-9_-]{1,64}`).
    pub template: &'static str,
    pub query: &'static [&'static str],
    /// Create routes: the change type they create. Open only with the `mutate` toolset;
    /// `dryRun=true` makes them a dry run.
    pub creates: Option<ChangeType>,
}

const PAGING: &[&str] = &["offset", "limit"];

const fn read(method: Method, template: &'static str, query: &'static [&'static str]) -> Route {
    Route { method, template, query, creates: None }
}

/// The create route of `change_type`: the path the contract gives it.
const fn create(change_type: ChangeType) -> Route {
    Route { method: Method::Post, template: change_type.path(), query: &["dryRun"], creates: Some(change_type) }
}

/// What a create of `change_type` made: its search, one of them, and its create.
fn created(change_type: ChangeType) -> [Route; 3] {
    let [search, item] = change_type.reads();
    [read(Method::Post, search.path, search.query), read(Method::Get, item.path, item.query), create(change_type)]
}

/// The whole reachable Fabric surface: the reads below, and each change type's [`created`].
pub(crate) static ROUTES: LazyLock<Vec<Route>> =
    LazyLock::new(|| READS.iter().copied().chain(ChangeType::ALL.into_iter().flat_map(created)).collect());

/// Every read that is not of what a create made.
const READS: &[Route] = &[
    read(Method::Get, "/fabric/v4/metros", &["presence", "offset", "limit"]),
    read(Method::Get, "/fabric/v4/metros/{metroCode}", &[]),
    read(Method::Post, "/fabric/v4/ports/search", &[]),
    read(Method::Get, "/fabric/v4/ports/{portId}", &[]),
    read(Method::Get, "/fabric/v4/ports/{portId}/linkProtocols", PAGING),
    read(Method::Post, "/fabric/v4/serviceProfiles/search", &["viewPoint"]),
    read(Method::Get, "/fabric/v4/serviceProfiles/{serviceProfileId}", &["viewPoint"]),
    read(Method::Post, "/fabric/v4/prices/search", &[]),
    read(Method::Post, "/fabric/v4/routers/search", &[]),
    read(Method::Get, "/fabric/v4/routers/{routerId}", &[]),
    read(Method::Post, "/fabric/v4/routers/{routerId}/routes/search", &[]),
    read(Method::Get, "/fabric/v4/routerPackages", PAGING),
    read(Method::Get, "/fabric/v4/routerPackages/{routerPackageCode}", &[]),
    read(Method::Post, "/fabric/v4/connections/{connectionId}/receivedRoutes/search", &[]),
    read(Method::Post, "/fabric/v4/connections/{connectionId}/advertisedRoutes/search", &[]),
    read(Method::Get, "/fabric/v4/connections/{connectionId}/routingProtocols", PAGING),
    read(Method::Get, "/fabric/v4/connections/{connectionId}/routingProtocols/{routingProtocolId}", &[]),
    read(Method::Get, "/fabric/v4/connections/{connectionId}/routingProtocols/{routingProtocolId}/actions", PAGING),
    read(Method::Post, "/fabric/v4/routeFilters/search", &[]),
    read(Method::Get, "/fabric/v4/routeFilters/{routeFilterId}", &[]),
    read(Method::Get, "/fabric/v4/routeFilters/{routeFilterId}/routeFilterRules", PAGING),
    read(Method::Get, "/fabric/v4/connections/{connectionId}/routeFilters", &[]),
    read(Method::Get, "/fabric/v4/ports/{portId}/stats", &["startDateTime", "endDateTime"]),
    read(Method::Get, "/fabric/v4/connections/{connectionId}/stats", &["startDateTime", "endDateTime", "viewPoint"]),
    read(Method::Get, "/fabric/v4/ports/{portId}/metrics", &["name", "fromDateTime", "toDateTime"]),
    read(Method::Get, "/fabric/v4/connections/{connectionId}/metrics", &["name", "fromDateTime", "toDateTime"]),
    read(Method::Post, "/fabric/v4/cloudevents/search", &[]),
    read(Method::Get, "/fabric/v4/cloudevents/{cloudEventId}", &[]),
    read(Method::Get, "/fabric/v4/serviceProfiles/{serviceProfileId}/metros", PAGING),
    read(Method::Get, "/fabric/v4/networks/{networkId}/connections", &[]),
    read(Method::Post, "/fabric/v4/routeAggregations/search", &[]),
    read(Method::Get, "/fabric/v4/routeAggregations/{routeAggregationId}", &[]),
    read(Method::Get, "/fabric/v4/routeAggregations/{routeAggregationId}/routeAggregationRules", PAGING),
    read(Method::Get, "/fabric/v4/connections/{connectionId}/routeAggregations", &[]),
];

/// Why a request was refused; the text is shown to the agent and the operator.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Refusal(pub String);

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Checks one request a component sends through `fabric.send`; on success says what kind of
/// request it is (a read or a dry run: never a create).
pub(crate) fn check(
    method: Method,
    path: &str,
    query: &[(String, String)],
    mutate_enabled: bool,
) -> Result<RouteClass, Refusal> {
    let refuse = |why: &str| Err(Refusal(format!("{method} {path} is not allowed: {why}")));
    let Some(route) = ROUTES.iter().find(|r| r.method == method && matches(r.template, path)) else {
        return refuse("it is not on the Fabric allow-list (no update, delete or unknown endpoint is ever sent)");
    };
    let mut seen: Vec<&str> = Vec::new();
    for (key, _) in query {
        if !route.query.contains(&key.as_str()) {
            return refuse(&format!("query parameter {key:?} is not allowed on {}", route.template));
        }
        if seen.contains(&key.as_str()) {
            return refuse(&format!("query parameter {key:?} is repeated"));
        }
        seen.push(key);
    }
    let Some(change_type) = route.creates else {
        return Ok(RouteClass::Read);
    };
    if !mutate_enabled {
        return refuse("create endpoints are only open when the operator enables the `mutate` toolset");
    }
    match query.iter().find(|(k, _)| k == "dryRun").map(|(_, v)| v.as_str()) {
        Some("true") => Ok(RouteClass::DryRun(CreateRoute { template: route.template, change_type })),
        None | Some("false") => refuse(NOT_THROUGH_SEND),
        Some(other) => refuse(&format!("dryRun must be true, not {other:?}")),
    }
}

/// Why `fabric.send` never carries a create.
pub(crate) const NOT_THROUGH_SEND: &str = "a create (a create route without dryRun=true) is never sent through fabric.send: \
     it is sent only by executing an approval that the host minted after the person accepted exactly that request";

/// Checks a create a person is to approve (POST `path`, no query); returns its route.
pub(crate) fn check_create(path: &str, mutate_enabled: bool) -> Result<CreateRoute, Refusal> {
    let found = ROUTES.iter().filter(|r| r.template == path).find_map(|r| Some((r.template, r.creates?)));
    let Some((template, change_type)) = found else {
        return Err(Refusal(format!(
            "POST {path} is not a create route (only {} can be approved)",
            ROUTES.iter().filter(|r| r.creates.is_some()).map(|r| r.template).collect::<Vec<_>>().join(", ")
        )));
    };
    if !mutate_enabled {
        return Err(Refusal(format!(
            "POST {path} is not allowed: creates are only open when the operator enables the `mutate` toolset"
        )));
    }
    Ok(CreateRoute { template, change_type })
}

fn matches(template: &str, path: &str) -> bool {
    let mut t = template.split('/');
    let mut p = path.split('/');
    loop {
        match (t.next(), p.next()) {
            (None, None) => return true,
            (Some(ts), Some(ps)) if ts.starts_with('{') => {
                if !is_identifier(ps) {
                    return false;
                }
            }
            (Some(ts), Some(ps)) if ts == ps => {}
            _ => return false,
        }
    }
}

/// A path parameter: uuids, metro codes and similar ids; never `.`/`..`, encodings or separators.
fn is_identifier(segment: &str) -> bool {
    (1..=64).contains(&segment.len()) && segment.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn reads_are_allowed_with_their_query_keys() {
        assert_eq!(check(Method::Get, "/fabric/v4/metros", &q(&[("limit", "5")]), false), Ok(RouteClass::Read));
        assert_eq!(
            check(Method::Get, "/fabric/v4/ports/c4d9350e-783c-83cd-1ce0-306a5c00a600/linkProtocols", &[], false),
            Ok(RouteClass::Read)
        );
        assert!(check(Method::Get, "/fabric/v4/metros", &q(&[("dryRun", "true")]), false).is_err());
        assert!(check(Method::Get, "/fabric/v4/metros", &q(&[("limit", "1"), ("limit", "2")]), false).is_err());
    }

    #[test]
    fn traversal_and_unknown_paths_are_refused() {
        for path in [
            "/fabric/v4/ports/../connections",
            "/fabric/v4/ports/a%2Fb",
            "/fabric/v4/ports/",
            "/fabric/v4/ports/x/y",
            "/fabric/v4/metros/",
            "/fabric/v4/routers",
            "/fabric/v4/connections/abc/../../x",
            "https://evil.example/fabric/v4/metros",
            "/fabric/v4//metros",
        ] {
            let err = check(Method::Get, path, &[], true).unwrap_err();
            assert!(err.0.contains("allow-list"), "{path}: {err}");
        }
    }

    #[test]
    fn send_carries_dry_runs_only_with_mutate_and_never_a_create() {
        let dry = q(&[("dryRun", "true")]);
        let refused = check(Method::Post, "/fabric/v4/connections", &dry, false).unwrap_err();
        assert!(refused.0.contains("`mutate`"));
        let connection = CreateRoute { template: "/fabric/v4/connections", change_type: ChangeType::ConnectionCreate };
        assert_eq!(check(Method::Post, "/fabric/v4/connections", &dry, true), Ok(RouteClass::DryRun(connection)));
        for query in [q(&[]), q(&[("dryRun", "false")])] {
            for path in ["/fabric/v4/connections", "/fabric/v4/networks", "/fabric/v4/serviceTokens"] {
                let refused = check(Method::Post, path, &query, true).unwrap_err();
                assert!(refused.0.contains("approval"), "{path} {query:?}: {refused}");
            }
        }
        assert!(check(Method::Post, "/fabric/v4/serviceTokens", &q(&[("dryRun", "yes")]), true).is_err());
        assert_eq!(
            check_create("/fabric/v4/serviceTokens", true).unwrap().change_type(),
            ChangeType::ServiceTokenCreate
        );
        assert!(check_create("/fabric/v4/serviceTokens", false).unwrap_err().0.contains("`mutate`"));
        assert!(check_create("/fabric/v4/ports/search", true).unwrap_err().0.contains("not a create route"));
        assert!(check_create("/fabric/v4/connections/", true).is_err());
        // a GET on a create route is not a read of it
        assert!(check(Method::Get, "/fabric/v4/connections", &[], true).is_err());
    }
}
