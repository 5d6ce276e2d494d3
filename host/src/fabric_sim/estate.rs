//! The simulated Fabric estate and its create rules: what a dry run validates and a real create
//! persists. Validation answers with Fabric's error codes and `additionalInfo` paths.

use serde_json::{Value, json};

use super::{error_array, seed};

/// Everything the simulator knows; creates from the broker land here and show up in searches.
pub struct Estate {
    pub metros: Vec<Value>,
    pub ports: Vec<Value>,
    pub profiles: Vec<Value>,
    pub connections: Vec<Value>,
    pub networks: Vec<Value>,
    pub service_tokens: Vec<Value>,
}

/// The object of a collection with this `uuid`.
pub fn find_by_uuid<'a>(items: &'a [Value], uuid: &str) -> Option<&'a Value> {
    items.iter().find(|item| item["uuid"] == uuid)
}

/// A refused create: status and Fabric error array.
pub struct Refused(pub u16, pub Value);

fn bad(code: &str, message: &str, property: &str) -> Refused {
    Refused(400, error_array(code, message, Some(property)))
}

/// Which create endpoint.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Connection,
    Network,
    ServiceToken,
}

impl Kind {
    pub fn collection(self) -> &'static str {
        match self {
            Kind::Connection => "connections",
            Kind::Network => "networks",
            Kind::ServiceToken => "serviceTokens",
        }
    }
}

impl Estate {
    pub fn seeded() -> Estate {
        Estate {
            metros: seed::metros(),
            ports: seed::ports(),
            profiles: seed::profiles(),
            connections: seed::connections(),
            networks: Vec::new(),
            service_tokens: Vec::new(),
        }
    }

    pub fn port(&self, uuid: &str) -> Option<&Value> {
        find_by_uuid(&self.ports, uuid)
    }

    /// VLANs in use on a port, from the connections (and tokens) that reference it.
    pub fn link_protocols(&self, port: &str) -> Vec<Value> {
        let mut out = Vec::new();
        for c in &self.connections {
            for side in ["aSide", "zSide"] {
                let ap = &c[side]["accessPoint"];
                if ap["port"]["uuid"] == port {
                    let mut lp = ap["linkProtocol"].clone();
                    if lp.is_object() {
                        lp["state"] = json!("RESERVED");
                        lp["connection"] = json!({"uuid": c["uuid"], "name": c["name"]});
                        out.push(lp);
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

    /// Validates a create body; the same rules run for a dry run and a real create.
    pub fn validate(&self, kind: Kind, body: &Value, dry_run: bool) -> Result<(), Refused> {
        if !body.is_object() {
            return Err(bad("EQ-3142001", "Invalid request body", "body"));
        }
        require(body, &["type", "notifications"], "EQ-3142001")?;
        match kind {
            Kind::Connection => self.validate_connection(body, dry_run),
            Kind::Network => validate_network(body),
            Kind::ServiceToken => self.validate_token(body),
        }
    }

    fn validate_connection(&self, body: &Value, dry_run: bool) -> Result<(), Refused> {
        let kind = body["type"].as_str().unwrap_or("");
        if dry_run && matches!(kind, "IX_VC" | "IC_VC") {
            return Err(Refused(
                400,
                json!([{"errorCode": "EQ-3142411", "errorMessage": "Dry run is not supported for this connection type",
                        "correlationId": uuid::Uuid::new_v4().to_string(), "additionalInfo": [{"reason": "queryParam:dryRun"}]}]),
            ));
        }
        require(body, &["name", "bandwidth", "aSide", "zSide"], "EQ-3142001")?;
        let bandwidth = body["bandwidth"].as_u64().unwrap_or(0);
        for side in ["aSide", "zSide"] {
            let ap = &body[side]["accessPoint"];
            match ap["type"].as_str() {
                Some("COLO") => {
                    let uuid = ap["port"]["uuid"].as_str().unwrap_or("");
                    let Some(port) = self.port(uuid) else {
                        return Err(bad(
                            "EQ-3142226",
                            "Port does not exist or is not accessible",
                            &format!("/{side}/accessPoint/port/uuid"),
                        ));
                    };
                    let lp = &ap["linkProtocol"];
                    if lp["type"] != port["encapsulation"]["type"] && lp["type"] != "UNTAGGED" {
                        return Err(bad(
                            "EQ-3142204",
                            "Link protocol does not match the port encapsulation",
                            &format!("/{side}/accessPoint/linkProtocol/type"),
                        ));
                    }
                    if self.vlan_in_use(uuid, lp) {
                        return Err(bad(
                            "EQ-3142102",
                            "Connection has duplicate buyer-side VLAN ID for port or the same VLAN ID is in the process of being deleted and should be freed up soon",
                            &format!("/{side}/accessPoint/linkProtocol"),
                        ));
                    }
                    if bandwidth > port["bandwidth"].as_u64().unwrap_or(0) {
                        return Err(bad("EQ-3142306", "Requested bandwidth exceeds the port bandwidth", "/bandwidth"));
                    }
                }
                Some("SP") => {
                    if find_by_uuid(&self.profiles, ap["profile"]["uuid"].as_str().unwrap_or("")).is_none() {
                        return Err(bad(
                            "EQ-3142301",
                            "Given profile does not exist",
                            &format!("/{side}/accessPoint/profile/uuid"),
                        ));
                    }
                }
                Some("NETWORK") => {
                    if find_by_uuid(&self.networks, ap["network"]["uuid"].as_str().unwrap_or("")).is_none() {
                        return Err(bad(
                            "EQ-3142301",
                            "Given network does not exist",
                            &format!("/{side}/accessPoint/network/uuid"),
                        ));
                    }
                }
                _ if body[side]["serviceToken"]["uuid"].is_string() => {}
                _ => return Err(bad("EQ-3142001", "Unsupported access point", &format!("/{side}/accessPoint/type"))),
            }
        }
        Ok(())
    }

    fn validate_token(&self, body: &Value) -> Result<(), Refused> {
        let Some(exp) = body["expirationDateTime"].as_str() else {
            return Err(bad("EQ-3034005", "expirationDateTime is required", "/expirationDateTime"));
        };
        let parsed = time::OffsetDateTime::parse(exp, &time::format_description::well_known::Rfc3339);
        if !parsed.is_ok_and(|t| t > time::OffsetDateTime::now_utc()) {
            return Err(bad("EQ-3034010", "Expiration date must be a future date-time", "/expirationDateTime"));
        }
        let selectors = body["connection"]["aSide"]["accessPointSelectors"]
            .as_array()
            .or_else(|| body["connection"]["zSide"]["accessPointSelectors"].as_array());
        for s in selectors.into_iter().flatten() {
            if let Some(uuid) = s["port"]["uuid"].as_str()
                && self.port(uuid).is_none()
            {
                return Err(bad(
                    "EQ-3034012",
                    "Port does not exist or is not accessible",
                    "/connection/aSide/accessPointSelectors/port/uuid",
                ));
            }
        }
        Ok(())
    }

    /// The dry-run answer: the body echoed with server-resolved hrefs, no uuid or state.
    pub fn echo(&self, body: &Value) -> Value {
        let mut out = body.clone();
        for side in ["aSide", "zSide"] {
            if let Some(uuid) = out[side]["accessPoint"]["port"]["uuid"].as_str().map(str::to_owned) {
                out[side]["accessPoint"]["port"]["href"] = json!(format!("/fabric/v4/ports/{uuid}"));
            }
        }
        out
    }

    /// Persists a real create and returns the entity as Fabric answers it.
    pub fn persist(&mut self, kind: Kind, body: &Value) -> Value {
        let uuid = uuid::Uuid::new_v4().to_string();
        let mut entity = self.echo(body);
        entity["uuid"] = json!(uuid);
        entity["href"] = json!(format!("/fabric/v4/{}/{uuid}", kind.collection()));
        let now =
            time::OffsetDateTime::now_utc().format(&time::format_description::well_known::Rfc3339).unwrap_or_default();
        entity["changeLog"] = json!({"createdBy": "sim-user", "createdDateTime": now});
        match kind {
            Kind::Connection => {
                entity["state"] = json!("PROVISIONING");
                entity["operation"] = json!({"equinixStatus": "PROVISIONING", "providerStatus": "NOT_AVAILABLE"});
                entity["change"] = json!({"type": "CONNECTION_CREATION", "status": "REQUESTED"});
                self.connections.push(entity.clone());
            }
            Kind::Network => {
                entity["state"] = json!("INACTIVE");
                entity["operation"] = json!({"equinixStatus": "PROVISIONING"});
                entity["change"] = json!({"type": "NETWORK_CREATION"});
                entity["connectionsCount"] = json!(0);
                self.networks.push(entity.clone());
            }
            Kind::ServiceToken => {
                entity["state"] = json!("INACTIVE");
                self.service_tokens.push(entity.clone());
            }
        }
        entity
    }
}

/// Fabric's answer to the first of `keys` missing from `body`.
fn require(body: &Value, keys: &[&str], code: &str) -> Result<(), Refused> {
    match keys.iter().find(|key| body.get(key).is_none()) {
        Some(key) => Err(bad(code, &format!("{key} is required"), &format!("/{key}"))),
        None => Ok(()),
    }
}

fn validate_network(body: &Value) -> Result<(), Refused> {
    require(body, &["name", "scope"], "EQ-3041001")?;
    if body["scope"] == "REGIONAL" && body["location"]["region"].is_null() {
        return Err(bad("EQ-3041010", "location.region is required for a REGIONAL network", "/location/region"));
    }
    Ok(())
}
