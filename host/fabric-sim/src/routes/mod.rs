//! The Fabric v4 routes this project calls, as axum routes over the simulator's estate, behind
//! the middleware in [`crate::middleware`]; the OAuth token route and `/_sim` stand outside it.

use axum::Router;
use axum::middleware::{from_fn, from_fn_with_state};
use axum::routing::{get, post};
use equinix_broker_contract::ChangeType;

use crate::state::Sim;
use crate::{admin, middleware, oauth};

mod connectivity;
mod events;
mod policies;
mod routing;
mod telemetry;

use connectivity::*;
use events::*;
use policies::*;
use routing::*;
use telemetry::*;

pub(crate) fn router(sim: Sim) -> Router {
    // every create the broker carries, and the search and reads of what it made, at the paths
    // the contract gives them (a path's parameter is `{id}` here, as on the routes beside it)
    let creates = ChangeType::ALL.into_iter().fold(Router::new(), |routes, ct| {
        let [search, item] = ct.reads();
        let item = format!("{}/{{id}}", item.path.rsplit_once('/').map_or(item.path, |(under, _)| under));
        routes
            .route(ct.path(), post(move |s, u, b| create(s, u, b, ct)))
            .route(search.path, post(move |s, b| searched(s, b, Searched::Made(ct))))
            .route(&item, get(move |s, p| got(s, p, Got::Made(ct))))
    });
    let fabric = creates
        .route("/fabric/v4/metros", get(metros))
        .route("/fabric/v4/metros/{code}", get(metro))
        .route("/fabric/v4/ports/search", post(|s, b| searched(s, b, Searched::Ports)))
        .route("/fabric/v4/ports/{id}", get(|s, p| got(s, p, Got::Port)))
        .route("/fabric/v4/ports/{id}/linkProtocols", get(link_protocols))
        .route("/fabric/v4/ports/{id}/stats", get(|s, p, u| stats(s, p, u, Asset::Port)))
        .route("/fabric/v4/ports/{id}/metrics", get(|s, p, u| metrics(s, p, u, Asset::Port)))
        .route("/fabric/v4/serviceProfiles/search", post(|s, b| searched(s, b, Searched::Profiles)))
        .route("/fabric/v4/serviceProfiles/{id}", get(|s, p| got(s, p, Got::Profile)))
        .route("/fabric/v4/serviceProfiles/{id}/metros", get(profile_metros))
        .route("/fabric/v4/connections/{id}/stats", get(|s, p, u| stats(s, p, u, Asset::Connection)))
        .route("/fabric/v4/connections/{id}/metrics", get(|s, p, u| metrics(s, p, u, Asset::Connection)))
        .route("/fabric/v4/networks/{id}/connections", get(network_connections))
        .route("/fabric/v4/prices/search", post(prices_search))
        .route("/fabric/v4/cloudevents/search", post(events_search))
        .route("/fabric/v4/cloudevents/{id}", get(event_get))
        .route("/fabric/v4/routers/search", post(routers_search))
        .route("/fabric/v4/routers/{id}", get(router_get))
        .route("/fabric/v4/routers/{id}/routes/search", post(router_routes))
        .route("/fabric/v4/routerPackages", get(packages))
        .route("/fabric/v4/routerPackages/{code}", get(package_get))
        .route(
            "/fabric/v4/connections/{id}/receivedRoutes/search",
            post(|s, p, b| connection_routes(s, p, b, RouteList::Received)),
        )
        .route(
            "/fabric/v4/connections/{id}/advertisedRoutes/search",
            post(|s, p, b| connection_routes(s, p, b, RouteList::Advertised)),
        )
        .route("/fabric/v4/connections/{id}/routingProtocols", get(routing_protocols))
        .route("/fabric/v4/connections/{id}/routingProtocols/{rp}", get(routing_protocol_get))
        .route("/fabric/v4/connections/{id}/routingProtocols/{rp}/actions", get(bgp_actions))
        .route("/fabric/v4/routeFilters/search", post(|s, b| policy_search(s, b, Policy::Filters)))
        .route("/fabric/v4/routeFilters/{id}", get(|s, p| policy_get(s, p, Policy::Filters)))
        .route("/fabric/v4/routeFilters/{id}/routeFilterRules", get(|s, p, u| policy_rules(s, p, u, Policy::Filters)))
        .route("/fabric/v4/connections/{id}/routeFilters", get(|s, p| connection_policies(s, p, Policy::Filters)))
        .route("/fabric/v4/routeAggregations/search", post(|s, b| policy_search(s, b, Policy::Aggregations)))
        .route("/fabric/v4/routeAggregations/{id}", get(|s, p| policy_get(s, p, Policy::Aggregations)))
        .route(
            "/fabric/v4/routeAggregations/{id}/routeAggregationRules",
            get(|s, p, u| policy_rules(s, p, u, Policy::Aggregations)),
        )
        .route(
            "/fabric/v4/connections/{id}/routeAggregations",
            get(|s, p| connection_policies(s, p, Policy::Aggregations)),
        )
        .method_not_allowed_fallback(not_allowed)
        .fallback(unknown)
        .layer(from_fn(middleware::apply_fault))
        .layer(from_fn_with_state(sim.clone(), middleware::require_token))
        .layer(from_fn_with_state(sim.clone(), middleware::delay))
        .layer(from_fn_with_state(sim.clone(), middleware::record))
        .with_state(sim.clone());
    Router::new()
        .route("/oauth2/v1/token", post(oauth::token))
        .route("/_sim/stats", get(admin::stats))
        .route("/_sim/faults", post(admin::fault))
        .route("/_sim/clock", post(admin::clock))
        .route("/_sim/latency", post(admin::latency))
        .with_state(sim)
        .merge(fabric)
}
