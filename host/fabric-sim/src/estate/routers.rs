//! A connection from a Cloud Router, as Fabric validates it: the router exists and is
//! provisioned, the connection is an `IP_VC` (an `IPWAN_VC` to a network), and the router's package allows its bandwidth and
//! one more connection. A real one is counted on its router.

use serde_json::{Value, json};

use super::create::invalid;
use super::{Estate, Refused, find_by_uuid};

impl Estate {
    /// A Cloud Router's record.
    pub(crate) fn router(&self, uuid: &str) -> Option<&Value> {
        find_by_uuid(&self.routers, uuid)
    }

    /// A router package's record by its code.
    pub(crate) fn router_package(&self, code: &str) -> Option<&Value> {
        self.router_packages.iter().find(|p| p["code"] == code)
    }

    /// The `CLOUD_ROUTER` access point `ap` of a connection create `body`; `at` places a field
    /// under this side.
    pub(super) fn validate_router_side(
        &self,
        body: &Value,
        ap: &Value,
        at: &dyn Fn(&str) -> String,
    ) -> Result<(), Refused> {
        let uuid = ap["router"]["uuid"].as_str().unwrap_or_default();
        let Some(router) = self.router(uuid) else {
            return Err(invalid(&at("/router/uuid"), "the Cloud Router does not exist or is not accessible"));
        };
        let name = router["name"].as_str().unwrap_or(uuid);
        if router["state"] != "PROVISIONED" {
            let state = router["state"].as_str().unwrap_or("?");
            return Err(invalid(
                &at("/router/uuid"),
                &format!("Cloud Router {name} is {state}; it takes connections once it is PROVISIONED"),
            ));
        }
        // IPWAN_VC reaches an IP-WAN network (the official Fcr2IpWan example)
        let to_network = body.pointer("/zSide/accessPoint/type") == Some(&json!("NETWORK"));
        match body["type"].as_str() {
            Some("IP_VC") => {}
            Some("IPWAN_VC") if to_network => {}
            _ => {
                return Err(invalid(
                    "/type",
                    "a connection from a Cloud Router is of type IP_VC (IPWAN_VC to an IP-WAN network)",
                ));
            }
        }
        let code = router["package"]["code"].as_str().unwrap_or_default();
        let package = self.router_package(code).cloned().unwrap_or(json!({}));
        let bandwidth = body["bandwidth"].as_u64().unwrap_or(0);
        let most = package["vcBandwidthMax"].as_u64().unwrap_or(0);
        if bandwidth > most {
            return Err(invalid(
                "/bandwidth",
                &format!("Cloud Router {name}'s {code} package allows connections of at most {most} Mbps"),
            ));
        }
        let (count, max) =
            (router["connectionsCount"].as_u64().unwrap_or(0), package["vcCountMax"].as_u64().unwrap_or(0));
        if count >= max {
            return Err(invalid(
                &at("/router/uuid"),
                &format!("Cloud Router {name}'s {code} package allows {max} connections and it has {count}"),
            ));
        }
        Ok(())
    }

    /// Counts a created connection on the Cloud Router it starts from, if it does.
    pub(super) fn attach_to_router(&mut self, connection: &Value) {
        let ap = &connection["aSide"]["accessPoint"];
        if ap["type"] != "CLOUD_ROUTER" {
            return;
        }
        let uuid = ap["router"]["uuid"].as_str().unwrap_or_default();
        if let Some(router) = self.routers.iter_mut().find(|r| r["uuid"] == uuid) {
            let count = router["connectionsCount"].as_u64().unwrap_or(0);
            router["connectionsCount"] = json!(count + 1);
        }
    }
}
