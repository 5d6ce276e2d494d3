//! The create rules: what a dry run validates (the same rules as a real create) and what a real
//! create persists, answered with Fabric's error codes and `additionalInfo` paths.

use serde_json::{Value, json};

use equinix_broker_contract::ChangeType;

use super::{Estate, Refused, collection, find_by_uuid};
use crate::errors::{error_array, error_with};
use crate::seed;

fn bad(code: &str, message: &str, property: &str) -> Refused {
    Refused(400, error_array(code, message, Some(property)))
}

impl Estate {
    /// Refuses a VLAN another connection or token holds on `port`.
    fn check_vlan(&self, port: &str, lp: &Value, at: &str) -> Result<(), Refused> {
        if self.vlan_in_use(port, lp) {
            return Err(bad(
                "EQ-3142102",
                "Connection has duplicate buyer-side VLAN ID for port or the same VLAN ID is in the process of being deleted and should be freed up soon",
                at,
            ));
        }
        Ok(())
    }

    /// Validates a create body; the same rules run for a dry run and a real create.
    pub(crate) fn validate(&self, change_type: ChangeType, body: &Value, dry_run: bool) -> Result<(), Refused> {
        if !body.is_object() {
            return Err(invalid("body", "the request body must be a JSON object"));
        }
        // a member of another type than the schema's: Fabric's generic refusal, naming it
        if let Some(wrong) = equinix_broker_contract::fields::wrong_type(change_type, body) {
            return Err(invalid(&wrong.pointer, &format!("must be {}, not {}", wrong.expected, wrong.got)));
        }
        require(body, &["type", "notifications"])?;
        match change_type {
            ChangeType::ConnectionCreate => self.validate_connection(body, dry_run),
            ChangeType::NetworkCreate => self.validate_network(body),
            ChangeType::ServiceTokenCreate => self.validate_token(body),
        }
    }

    fn metro_exists(&self, code: &str) -> bool {
        self.metros.iter().any(|m| m["code"] == code)
    }

    fn validate_connection(&self, body: &Value, dry_run: bool) -> Result<(), Refused> {
        let kind = body["type"].as_str().unwrap_or("");
        if dry_run && kind == "IX_VC" {
            return Err(Refused(
                400,
                json!([{"errorCode": "EQ-3142411", "errorMessage": "Dry run is not supported for this connection type",
                        "correlationId": uuid::Uuid::new_v4().to_string(), "additionalInfo": [{"reason": "queryParam:dryRun"}]}]),
            ));
        }
        require(body, &["name", "bandwidth", "aSide", "zSide"])?;
        let bandwidth = body["bandwidth"].as_u64().unwrap_or(0);
        for side in ["aSide", "zSide"] {
            let ap = &body[side]["accessPoint"];
            let at = |rest: &str| format!("/{side}/accessPoint{rest}");
            if let Some(metro) = ap["location"]["metroCode"].as_str()
                && !self.metro_exists(metro)
            {
                return Err(invalid(&at("/location/metroCode"), &format!("metro {metro} does not exist")));
            }
            match ap["type"].as_str() {
                Some("COLO") => {
                    let uuid = ap["port"]["uuid"].as_str().unwrap_or("");
                    let Some(port) = self.port(uuid) else {
                        return Err(invalid(&at("/port/uuid"), "the port does not exist or is not accessible"));
                    };
                    let lp = &ap["linkProtocol"];
                    if lp["type"] != port["encapsulation"]["type"] && lp["type"] != "UNTAGGED" {
                        return Err(invalid(
                            &at("/linkProtocol/type"),
                            "the link protocol does not match the port's encapsulation",
                        ));
                    }
                    self.check_vlan(uuid, lp, &at("/linkProtocol"))?;
                    if bandwidth > port["availableBandwidth"].as_u64().unwrap_or(0) {
                        return Err(invalid("/bandwidth", "the bandwidth exceeds the port's available bandwidth"));
                    }
                }
                Some("SP") => self.validate_provider(ap, bandwidth, &at)?,
                Some("VD") => {
                    let uuid = ap["virtualDevice"]["uuid"].as_str().unwrap_or("");
                    let Some((_, _, _, interfaces)) = seed::VIRTUAL_DEVICES.iter().find(|d| d.0 == uuid) else {
                        return Err(invalid(
                            &at("/virtualDevice/uuid"),
                            "the virtual device does not exist or is not accessible",
                        ));
                    };
                    if let Some(id) = ap["interface"]["id"].as_u64()
                        && (id == 0 || id > *interfaces)
                    {
                        return Err(invalid(&at("/interface/id"), "the device has no such interface"));
                    }
                }
                Some("CLOUD_ROUTER") => self.validate_router_side(body, ap, &at)?,
                Some("NETWORK") => {
                    if find_by_uuid(&self.networks, ap["network"]["uuid"].as_str().unwrap_or("")).is_none() {
                        return Err(invalid(&at("/network/uuid"), "the network does not exist or is not accessible"));
                    }
                }
                _ if body[side]["serviceToken"]["uuid"].is_string() => {}
                Some(other) => {
                    return Err(invalid(
                        &at("/type"),
                        &format!("{other} access points are not offered by this simulator"),
                    ));
                }
                None => return Err(invalid(&format!("/{side}"), "needs an accessPoint or a serviceToken")),
            }
        }
        Ok(())
    }

    /// A service provider access point: its profile, the metro it is offered in, the bandwidths
    /// it offers, and the authentication key and seller region it requires.
    fn validate_provider(&self, ap: &Value, bandwidth: u64, at: &dyn Fn(&str) -> String) -> Result<(), Refused> {
        let Some(profile) = find_by_uuid(&self.profiles, ap["profile"]["uuid"].as_str().unwrap_or("")) else {
            return Err(bad("EQ-3142301", "Given profile does not exist", &at("/profile/uuid")));
        };
        let config = &profile["accessPointTypeConfigs"][0];
        let offered = config["supportedBandwidths"].as_array().is_some_and(|b| b.iter().any(|v| *v == bandwidth));
        if !offered && config["allowCustomBandwidth"] != true {
            return Err(bad("EQ-3142306", "Requested bandwidth is not supported by service profile", "/bandwidth"));
        }
        let metro = ap["location"]["metroCode"].as_str().unwrap_or("");
        let Some(offered_in) = profile["metros"].as_array().and_then(|ms| ms.iter().find(|m| m["code"] == metro))
        else {
            return Err(bad(
                "EQ-3142302",
                "Service provider does not exist in required zSide metro",
                &at("/location/metroCode"),
            ));
        };
        if config["authenticationKey"]["required"] == true && !ap["authenticationKey"].is_string() {
            return Err(bad("EQ-3142308", "Authentication key is required", &at("/authenticationKey")));
        }
        if let Some(regions) = offered_in["sellerRegions"].as_object() {
            match ap["sellerRegion"].as_str() {
                Some(r) if regions.contains_key(r) => {}
                Some(r) => {
                    return Err(invalid(
                        &at("/sellerRegion"),
                        &format!("the profile offers no seller region {r} here"),
                    ));
                }
                None => return Err(invalid(&at("/sellerRegion"), "the profile requires a seller region")),
            }
        }
        Ok(())
    }

    fn validate_network(&self, body: &Value) -> Result<(), Refused> {
        require(body, &["name", "scope"])?;
        if body["scope"] == "REGIONAL" && body["location"]["region"].is_null() {
            return Err(invalid("/location/region", "a REGIONAL network needs location.region"));
        }
        if let Some(metro) = body["location"]["metroCode"].as_str()
            && !self.metro_exists(metro)
        {
            return Err(invalid("/location/metroCode", &format!("metro {metro} does not exist")));
        }
        Ok(())
    }

    fn validate_token(&self, body: &Value) -> Result<(), Refused> {
        let Some(exp) = body["expirationDateTime"].as_str() else {
            return Err(invalid("/expirationDateTime", "expirationDateTime is required"));
        };
        let parsed = time::OffsetDateTime::parse(exp, &time::format_description::well_known::Rfc3339);
        if !parsed.is_ok_and(|t| t > time::OffsetDateTime::now_utc()) {
            return Err(invalid("/expirationDateTime", "the expiration must be a future date-time"));
        }
        for side in ["aSide", "zSide"] {
            let selectors = body["connection"][side]["accessPointSelectors"].as_array();
            for (i, s) in selectors.into_iter().flatten().enumerate() {
                let at = |rest: &str| format!("/connection/{side}/accessPointSelectors/{i}{rest}");
                if let Some(uuid) = s["port"]["uuid"].as_str() {
                    if self.port(uuid).is_none() {
                        return Err(invalid(&at("/port/uuid"), "the port does not exist or is not accessible"));
                    }
                    self.check_vlan(uuid, &s["linkProtocol"], &at("/linkProtocol"))?;
                }
                if let Some(uuid) = s["virtualDevice"]["uuid"].as_str()
                    && !seed::VIRTUAL_DEVICES.iter().any(|d| d.0 == uuid)
                {
                    return Err(invalid(
                        &at("/virtualDevice/uuid"),
                        "the virtual device does not exist or is not accessible",
                    ));
                }
                if let Some(uuid) = s["network"]["uuid"].as_str()
                    && find_by_uuid(&self.networks, uuid).is_none()
                {
                    return Err(invalid(&at("/network/uuid"), "the network does not exist or is not accessible"));
                }
            }
        }
        Ok(())
    }

    /// The dry-run answer: the body echoed with server-resolved hrefs, no uuid or state, and
    /// without what the answer's model has no place for (`Connection` has no `endCustomer`).
    pub(crate) fn echo(&self, body: &Value) -> Value {
        let mut out = body.clone();
        if let Some(o) = out.as_object_mut() {
            o.remove("endCustomer");
        }
        // Fabric resolves the referenced port and profile: their href and name come back
        for side in ["aSide", "zSide"] {
            for (key, items, collection) in
                [("port", &self.ports, "ports"), ("profile", &self.profiles, "serviceProfiles")]
            {
                let Some(uuid) = out[side]["accessPoint"][key]["uuid"].as_str().map(str::to_owned) else { continue };
                out[side]["accessPoint"][key]["href"] = json!(format!("/fabric/v4/{collection}/{uuid}"));
                if let Some(name) = find_by_uuid(items, &uuid).and_then(|v| v.get("name")) {
                    out[side]["accessPoint"][key]["name"] = name.clone();
                }
            }
        }
        out
    }

    /// Persists a real create and returns the entity as Fabric answers it.
    pub(crate) fn persist(&mut self, change_type: ChangeType, body: &Value) -> Value {
        let uuid = uuid::Uuid::new_v4().to_string();
        let mut entity = self.echo(body);
        entity["uuid"] = json!(uuid);
        entity["href"] = json!(format!("/fabric/v4/{}/{uuid}", collection(change_type)));
        let now =
            time::OffsetDateTime::now_utc().format(&time::format_description::well_known::Rfc3339).unwrap_or_default();
        let change_log = json!({"createdBy": "sim-user", "createdDateTime": now});
        match change_type {
            ChangeType::ConnectionCreate => {
                entity["changeLog"] = change_log;
                self.attach_to_router(&entity);
                entity["state"] = json!("PROVISIONING");
                entity["operation"] = json!({"equinixStatus": "PROVISIONING", "providerStatus": "NOT_AVAILABLE"});
                entity["change"] = json!({"uuid": uuid::Uuid::new_v4().to_string(), "type": "CONNECTION_CREATION",
                                          "status": "REQUESTED", "createdDateTime": now});
                self.connections.push(entity.clone());
                self.recount_ports();
            }
            ChangeType::NetworkCreate => {
                entity["changeLog"] = change_log;
                entity["state"] = json!("INACTIVE");
                entity["operation"] = json!({"equinixStatus": "PROVISIONING"});
                entity["change"] = json!({"type": "NETWORK_CREATION"});
                entity["connectionsCount"] = json!(0);
                self.networks.push(entity.clone());
            }
            // `ServiceToken` spells it `changelog` (and Equinix's own examples `changeLog`): tokens get none
            ChangeType::ServiceTokenCreate => {
                entity["state"] = json!("INACTIVE");
                self.service_tokens.push(entity.clone());
            }
        }
        entity
    }
}

/// Fabric's answer to the first of `keys` missing from `body`.
fn require(body: &Value, keys: &[&str]) -> Result<(), Refused> {
    match keys.iter().find(|key| body.get(key).is_none()) {
        Some(key) => Err(invalid(&format!("/{key}"), &format!("{key} is required"))),
        None => Ok(()),
    }
}

/// The contract's generic refusal (`EQ-3142501 Invalid input`) for what it has no own code for.
pub(crate) fn invalid(property: &str, reason: &str) -> Refused {
    Refused(400, error_with("EQ-3142501", "Invalid input", Some(json!([{"property": property, "reason": reason}]))))
}
