//! The simulated estate: what the simulator knows, seeded, and what real creates add. Its create
//! rules (what a dry run validates and a real create persists) are in [`create`] and, for a
//! Cloud Router side, [`routers`].

mod create;
mod routers;

use std::collections::HashMap;

use equinix_broker_contract::ChangeType;
use serde_json::{Value, json};

use crate::seed;

/// A refused create: status and Fabric error array.
pub(crate) struct Refused(pub u16, pub Value);

/// Everything the simulator knows; real creates land here and show up in searches.
pub(crate) struct Estate {
    pub metros: Vec<Value>,
    pub ports: Vec<Value>,
    pub profiles: Vec<Value>,
    pub connections: Vec<Value>,
    pub networks: Vec<Value>,
    pub service_tokens: Vec<Value>,
    pub routers: Vec<Value>,
    pub(crate) router_packages: Vec<Value>,
    /// What runs on the routers and their connections, by the uuid of what it belongs to.
    pub routing: Routing,
    pub route_filters: Vec<Value>,
    pub route_aggregations: Vec<Value>,
    /// Rules and attachments of the route filters and aggregations.
    pub policies: Policies,
    /// Cloud events, newest first.
    pub events: Vec<Value>,
}

/// The rules of each route filter and aggregation (by its uuid) and the filters and
/// aggregations attached to each connection (by the connection's uuid).
#[derive(Default)]
pub(crate) struct Policies {
    pub(crate) filter_rules: HashMap<String, Vec<Value>>,
    pub(crate) aggregation_rules: HashMap<String, Vec<Value>>,
    pub(crate) connection_filters: HashMap<String, Vec<Value>>,
    pub(crate) connection_aggregations: HashMap<String, Vec<Value>>,
}

/// The routing state of the estate's Cloud Routers and their connections, each list keyed by
/// the uuid of the router, connection or routing protocol it belongs to.
#[derive(Default)]
pub(crate) struct Routing {
    pub protocols: HashMap<String, Vec<Value>>,
    pub bgp_actions: HashMap<String, Vec<Value>>,
    pub(crate) router_routes: HashMap<String, Vec<Value>>,
    pub(crate) received_routes: HashMap<String, Vec<Value>>,
    pub(crate) advertised_routes: HashMap<String, Vec<Value>>,
}

/// The object of a collection with this `uuid`.
pub(crate) fn find_by_uuid<'a>(items: &'a [Value], uuid: &str) -> Option<&'a Value> {
    items.iter().find(|item| item["uuid"] == uuid)
}

/// The collection a create of `change_type` adds to, as its path and its counters name it: the
/// last segment of the contract's create path.
pub(crate) fn collection(change_type: ChangeType) -> &'static str {
    change_type.path().trim_start_matches("/fabric/v4/")
}

impl Estate {
    pub(crate) fn seeded() -> Estate {
        let mut estate = Estate {
            metros: seed::metros(),
            ports: seed::ports(),
            profiles: seed::profiles(),
            connections: seed::connections().into_iter().chain(seed::routing::connections()).collect(),
            networks: Vec::new(),
            service_tokens: Vec::new(),
            routers: seed::routing::routers(),
            router_packages: seed::routing::packages(),
            routing: Routing {
                protocols: seed::routing::routing_protocols().into_iter().collect(),
                bgp_actions: seed::routing::bgp_actions().into_iter().collect(),
                router_routes: seed::routing::router_routes().into_iter().collect(),
                received_routes: seed::routing::received_routes().into_iter().collect(),
                advertised_routes: seed::routing::advertised_routes().into_iter().collect(),
            },
            route_filters: seed::policies::route_filters(),
            route_aggregations: seed::policies::route_aggregations(),
            policies: Policies {
                filter_rules: seed::policies::route_filter_rules().into_iter().collect(),
                aggregation_rules: seed::policies::route_aggregation_rules().into_iter().collect(),
                connection_filters: seed::policies::connection_route_filters().into_iter().collect(),
                connection_aggregations: seed::policies::connection_route_aggregations().into_iter().collect(),
            },
            events: seed::events::cloud_events(),
        };
        estate.recount_ports();
        estate
    }

    pub(crate) fn port(&self, uuid: &str) -> Option<&Value> {
        find_by_uuid(&self.ports, uuid)
    }

    /// Counts each port's used bandwidth (every connection side on it, the seeded ones too) and
    /// what that leaves available, as Fabric reports them: a second 10 Gbps on a 10 Gbps port is
    /// then refused as Fabric would refuse it.
    pub(crate) fn recount_ports(&mut self) {
        for port in &mut self.ports {
            let uuid = port["uuid"].clone();
            let (mut used, mut count) = (0u64, 0u64);
            for c in &self.connections {
                for side in ["aSide", "zSide"] {
                    if c[side]["accessPoint"]["port"]["uuid"] == uuid {
                        used += c["bandwidth"].as_u64().unwrap_or(0);
                        count += 1;
                    }
                }
            }
            let total = port["bandwidth"].as_u64().unwrap_or(0);
            port["usedBandwidth"] = json!(used);
            port["availableBandwidth"] = json!(total.saturating_sub(used));
            port["operation"]["connectionCount"] = json!(count);
        }
    }

    /// VLANs in use on a port, as `GET .../linkProtocols` answers (`LinkProtocolResponse`): each
    /// with the asset (a connection) or the service token holding it, by href, uuid, type and
    /// bandwidth; Fabric gives no name.
    pub(crate) fn link_protocols(&self, port: &str) -> Vec<Value> {
        let mut out = Vec::new();
        let held = |lp: &Value, holder_key: &str, holder: Value, created: &Value| {
            let mut lp = lp.clone();
            lp["state"] = json!("RESERVED");
            lp[holder_key] = holder;
            if created.is_string() {
                lp["changeLog"] = json!({"createdDateTime": created});
            }
            lp
        };
        for c in &self.connections {
            for side in ["aSide", "zSide"] {
                let ap = &c[side]["accessPoint"];
                if ap["port"]["uuid"] == port && ap["linkProtocol"].is_object() {
                    let asset =
                        json!({"href": c["href"], "uuid": c["uuid"], "type": c["type"], "bandwidth": c["bandwidth"]});
                    out.push(held(&ap["linkProtocol"], "asset", asset, &c["changeLog"]["createdDateTime"]));
                }
            }
        }
        for t in &self.service_tokens {
            for side in ["aSide", "zSide"] {
                let selectors = t["connection"][side]["accessPointSelectors"].as_array();
                for sel in selectors.into_iter().flatten() {
                    if sel["port"]["uuid"] == port && sel["linkProtocol"].is_object() {
                        let token = json!({"href": t["href"], "uuid": t["uuid"], "type": t["type"],
                                           "bandwidth": t["connection"]["bandwidthLimit"]});
                        out.push(held(&sel["linkProtocol"], "serviceToken", token, &Value::Null));
                    }
                }
            }
        }
        out
    }

    fn vlan_in_use(&self, port: &str, lp: &Value) -> bool {
        self.link_protocols(port)
            .iter()
            .any(|used| ["vlanTag", "vlanSTag"].iter().any(|k| !lp[k].is_null() && used[k] == lp[k]))
    }
}
