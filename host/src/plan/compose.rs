//! The plan's lines for one create body and what the host's reads answered: pure, so each change
//! type's plan is tested with plain data. Every text that is not the host's own (from the bytes,
//! which the component wrote, or from Fabric) passes through [`shown`] or [`quoted`].

use equinix_broker_contract::ChangeType;
use serde_json::Value;

use super::reads::{self, Key};
use super::resolve::Answers;
use super::{Check, FAILED, FROM_BYTES, Line, NOT_CHECKED, OK, Plan, quoted, short_uuid, shown};

/// What a plan is made of.
pub struct Input<'a> {
    pub change_type: ChangeType,
    pub body: &'a Value,
    pub request_sha256: &'a str,
    pub answers: &'a Answers,
    /// References over the read limit, not read.
    pub over: usize,
    pub read_at: String,
}

/// The plan of `input`.
pub fn compose(input: Input) -> Plan {
    let mut b = Builder { input: &input, lines: Vec::new(), checks: Vec::new() };
    let summary = match input.change_type {
        ChangeType::ConnectionCreate => b.connection(),
        ChangeType::NetworkCreate => b.network(),
        ChangeType::ServiceTokenCreate => b.service_token(),
    };
    if input.over > 0 {
        b.lines.push(Line {
            label: "not read".into(),
            value: format!("{} more references (the plan reads at most {})", input.over, reads::MAX_READS),
            from: "equinix-mcp".into(),
        });
    }
    Plan {
        change_type: input.change_type.as_str().to_string(),
        request_sha256: input.request_sha256.to_string(),
        read_at: input.read_at.clone(),
        summary,
        lines: b.lines,
        checks: b.checks,
    }
}

struct Builder<'a> {
    input: &'a Input<'a>,
    lines: Vec<Line>,
    checks: Vec<Check>,
}

/// A member of a JSON value as text: a string shown as it is, anything else as JSON.
fn text(v: &Value) -> String {
    match v {
        Value::String(s) => shown(s),
        Value::Null => String::new(),
        other => shown(&other.to_string()),
    }
}

/// The body's name, quoted, or that it has none.
fn name_of(body: &Value) -> String {
    body["name"].as_str().map_or_else(|| "(no name)".to_string(), quoted)
}

/// The name member of `v`, quoted, or the uuid shortened.
fn named(v: &Value, uuid: &str) -> String {
    match v["name"].as_str() {
        Some(name) => format!("{} ({})", quoted(name), short_uuid(uuid)),
        None => short_uuid(uuid),
    }
}

impl Builder<'_> {
    fn body(&self) -> &Value {
        self.input.body
    }

    fn line(&mut self, label: &str, value: String, from: String) {
        self.lines.push(Line { label: label.to_string(), value, from });
    }

    fn bytes(&mut self, label: &str, value: String) {
        if !value.is_empty() {
            self.line(label, value, FROM_BYTES.into());
        }
    }

    fn check(&mut self, verdict: &str, what: String, from: String) {
        self.checks.push(Check { verdict: verdict.into(), what, from });
    }

    fn source(&self, key: &Key) -> String {
        key.source(self.input.change_type, self.input.body)
    }

    /// What Fabric answered for `key`: `Ok(answer)`, or the line's text when there is none.
    fn answer(&self, key: &Key) -> Result<&Value, String> {
        match self.input.answers.get(key) {
            // an answer about another object than the one asked for resolves nothing
            Some(Ok(v)) => match (key.asked_id(), key.asked_id().and_then(|(member, _)| v[member].as_str())) {
                (Some((_, asked)), Some(got)) if got != asked => {
                    Err(format!("not resolved: Fabric answered about another object ({})", short_uuid(got)))
                }
                _ => Ok(v),
            },
            Some(Err(why)) => Err(format!("not resolved: {why}")),
            None => Err("not read (over the plan's read limit)".into()),
        }
    }

    /// A line for the object `key` reads, described by `describe`, or why it is not resolved.
    fn resolved(&mut self, label: &str, key: &Key, uuid: &str, describe: impl FnOnce(&Value) -> String) {
        let from = self.source(key);
        let value = match self.answer(key) {
            Ok(v) => describe(v),
            Err(why) => format!("{} {why}", short_uuid(uuid)),
        };
        self.line(label, value, from);
    }

    fn notifications_and_project(&mut self) {
        let notifications = self.body()["notifications"].as_array().cloned().unwrap_or_default();
        let shown_notifications: Vec<String> = notifications
            .iter()
            .map(|n| {
                let emails: Vec<String> = n["emails"].as_array().into_iter().flatten().map(text).collect();
                format!("{} to {}", text(&n["type"]), emails.join(", "))
            })
            .collect();
        self.bytes("notifications", shown_notifications.join("; "));
        let project = text(&self.body()["project"]["projectId"]);
        if !project.is_empty() {
            self.line(
                "project",
                project,
                format!("{FROM_BYTES}; its name is not read (no project read is on this server's allow-list)"),
            );
        }
    }

    fn connection(&mut self) -> String {
        let body = self.body().clone();
        let bandwidth = body["bandwidth"].as_u64();
        let summary = format!(
            "+ create connection {} (billable): {}, {} Mbps",
            name_of(&body),
            text(&body["type"]),
            bandwidth.map_or_else(|| text(&body["bandwidth"]), |b| b.to_string())
        );
        for (label, ap) in reads::access_points(ChangeType::ConnectionCreate, &body) {
            self.access_point(label, ap, bandwidth);
        }
        for (side, label) in [("aSide", "A side"), ("zSide", "Z side")] {
            if let Some(uuid) = body[side].pointer("/serviceToken/uuid").and_then(Value::as_str) {
                let key = Key::Token(uuid.to_string());
                self.resolved(label, &key, uuid, |t| {
                    format!(
                        "service token {}: {}, {}, expires {}",
                        named(t, uuid),
                        text(&t["type"]),
                        text(&t["state"]),
                        text(&t["expirationDateTime"])
                    )
                });
            }
        }
        self.bytes("redundancy", text(&body["redundancy"]["priority"]));
        self.notifications_and_project();
        self.bytes("purchase order", text(&body["order"]["purchaseOrderNumber"]));
        self.price();
        self.same_name("connection");
        summary
    }

    /// One side's access point: what it is, where, its VLAN, and the checks that go with them.
    fn access_point(&mut self, label: &str, ap: &Value, bandwidth: Option<u64>) {
        let id = |pointer: &str| ap.pointer(pointer).and_then(Value::as_str).map(str::to_string);
        let mut port_name = None;
        if let Some(uuid) = id("/port/uuid") {
            let key = Key::Port(uuid.clone());
            self.resolved(label, &key, &uuid, |p| {
                format!(
                    "port {} in {} (IBX {}), {} Mbps, {}, {}",
                    named(p, &uuid),
                    text(&p["location"]["metroCode"]),
                    text(&p["location"]["ibx"]),
                    text(&p["bandwidth"]),
                    text(&p["state"]),
                    text(&p["encapsulation"]["type"])
                )
            });
            if let Ok(port) = self.answer(&key).cloned() {
                port_name = Some(named(&port, &uuid));
                let from = self.source(&key);
                let state = port["state"].as_str().unwrap_or_default();
                let (verdict, what) = match state {
                    "ACTIVE" => (OK, format!("{label} port {} is ACTIVE", named(&port, &uuid))),
                    other => {
                        (FAILED, format!("{label} port {} is ACTIVE: it is {}", named(&port, &uuid), shown(other)))
                    }
                };
                self.check(verdict, what, from.clone());
                if let (Some(bw), Some(available)) = (bandwidth, port["availableBandwidth"].as_u64()) {
                    let verdict = if bw <= available { OK } else { FAILED };
                    let what = format!("{bw} Mbps fits the {available} Mbps the {label} port has available");
                    self.check(verdict, what, from);
                }
            }
        }
        if let Some(lp) = ap.get("linkProtocol").filter(|v| v.is_object()) {
            let vlan = vlan_of(lp);
            self.bytes(&format!("{label} VLAN"), format!("{} {}", text(&lp["type"]), vlan.describe()));
            if let (Some(uuid), true) = (id("/port/uuid"), vlan.tagged()) {
                self.vlan_check(label, &uuid, &vlan, port_name.unwrap_or_else(|| short_uuid(&uuid)));
            }
        }
        if let Some(uuid) = id("/profile/uuid") {
            let key = Key::Profile(uuid.clone());
            self.resolved(label, &key, &uuid, |p| {
                format!("service profile {} ({}), {}", named(p, &uuid), text(&p["visibility"]), text(&p["state"]))
            });
            if let (Ok(profile), Some(bw)) = (self.answer(&key).cloned(), bandwidth) {
                self.profile_bandwidth_check(&profile, &uuid, bw, self.source(&key));
            }
        }
        if let Some(uuid) = id("/network/uuid") {
            let key = Key::Network(uuid.clone());
            self.resolved(label, &key, &uuid, |n| {
                format!(
                    "network {}: {}, scope {}, {}",
                    named(n, &uuid),
                    text(&n["type"]),
                    text(&n["scope"]),
                    text(&n["state"])
                )
            });
        }
        if let Some(uuid) = id("/router/uuid") {
            let key = Key::Router(uuid.clone());
            self.resolved(label, &key, &uuid, |r| {
                format!(
                    "Cloud Router {} in {}, package {}, {}",
                    named(r, &uuid),
                    text(&r["location"]["metroCode"]),
                    text(&r["package"]["code"]),
                    text(&r["state"])
                )
            });
        }
        if let Some(uuid) = id("/virtualDevice/uuid") {
            self.line(
                label,
                format!("virtual device {}, interface {}", short_uuid(&uuid), text(&ap["interface"]["id"])),
                format!("{FROM_BYTES}; the device is not read (Network Edge is not on this server's allow-list)"),
            );
        }
        let named = ["/port/uuid", "/profile/uuid", "/network/uuid", "/router/uuid", "/virtualDevice/uuid"];
        if named.iter().all(|p| id(p).is_none()) {
            self.bytes(&format!("{label} access point"), text(&ap["type"]));
        }
        if let Some(code) = ap.pointer("/location/metroCode").and_then(Value::as_str) {
            self.metro(&format!("{label} metro"), code);
        }
        self.bytes(&format!("{label} seller region"), text(&ap["sellerRegion"]));
        self.bytes(&format!("{label} authentication key"), text(&ap["authenticationKey"]));
        self.bytes(&format!("{label} peering"), text(&ap["peeringType"]));
    }

    /// A metro code from the bytes, with its name where Fabric gave it.
    fn metro(&mut self, label: &str, code: &str) {
        let key = Key::Metro(code.to_string());
        match self.answer(&key).cloned() {
            Ok(m) => {
                let from = format!("{FROM_BYTES}; the name: {}", self.source(&key));
                self.line(label, format!("{} ({})", shown(code), text(&m["name"])), from);
            }
            Err(why) => self.line(label, format!("{} (its name {why})", shown(code)), FROM_BYTES.into()),
        }
    }

    fn vlan_check(&mut self, label: &str, uuid: &str, vlan: &Vlan, port: String) {
        let key = Key::PortVlans(uuid.to_string());
        let from = self.source(&key);
        let answer = match self.answer(&key) {
            Ok(a) => a.clone(),
            Err(why) => {
                self.check(NOT_CHECKED, format!("{label} {} is free on port {port}: {why}", vlan.describe()), from);
                return;
            }
        };
        let in_use = answer["data"].as_array().cloned().unwrap_or_default();
        let holder = in_use.iter().find(|lp| vlan.matches(lp));
        let total = answer["pagination"]["total"].as_u64().unwrap_or(in_use.len() as u64);
        match holder {
            Some(lp) => {
                let by =
                    lp.get("asset").or_else(|| lp.get("serviceToken")).map(|a| a["uuid"].as_str().unwrap_or_default());
                let by = by.map(|u| format!(" (held by {})", short_uuid(u))).unwrap_or_default();
                let what = format!("{label} {} is free on port {port}: it is already in use{by}", vlan.describe());
                self.check(FAILED, what, from);
            }
            None if total > in_use.len() as u64 => {
                let what = format!(
                    "{label} {} is free on port {port}: only {} of the {total} VLANs in use were read",
                    vlan.describe(),
                    in_use.len()
                );
                self.check(NOT_CHECKED, what, from);
            }
            None => self.check(OK, format!("{label} {} is free on port {port}", vlan.describe()), from),
        }
    }

    fn profile_bandwidth_check(&mut self, profile: &Value, uuid: &str, bandwidth: u64, from: String) {
        let configs = profile["accessPointTypeConfigs"].as_array().cloned().unwrap_or_default();
        let custom = configs.iter().any(|c| c["allowCustomBandwidth"] == true);
        let offered: Vec<u64> = configs
            .iter()
            .flat_map(|c| c["supportedBandwidths"].as_array().cloned().unwrap_or_default())
            .filter_map(|b| b.as_u64())
            .collect();
        let name = named(profile, uuid);
        let (verdict, what) = if offered.contains(&bandwidth) {
            (OK, format!("{bandwidth} Mbps is a bandwidth profile {name} offers"))
        } else if custom {
            (OK, format!("profile {name} allows custom bandwidths, {bandwidth} Mbps among them"))
        } else if offered.is_empty() {
            (NOT_CHECKED, format!("{bandwidth} Mbps is a bandwidth profile {name} offers: it lists none"))
        } else {
            let list: Vec<String> = offered.iter().map(u64::to_string).collect();
            (
                FAILED,
                format!("{bandwidth} Mbps is a bandwidth profile {name} offers (it offers {} Mbps)", list.join(", ")),
            )
        };
        self.check(verdict, what, from);
    }

    fn price(&mut self) {
        let filter = reads::price_filter(self.body());
        if let Err(why) = filter {
            self.line("price", format!("not priced: {why}"), "equinix-mcp".into());
            return;
        }
        let from =
            format!("{} (list price; account discounts and port packages may lower it)", self.source(&Key::Price));
        let value = match self.answer(&Key::Price) {
            Err(why) => why,
            Ok(answer) => match answer["data"].as_array().and_then(|d| d.first()) {
                None => "no rate-card row matched this connection".into(),
                Some(row) => {
                    let currency = text(&row["currency"]);
                    format!(
                        "{currency} {} per month + {currency} {} one-time, term {} month(s)",
                        money(charge(row, "MONTHLY_RECURRING")),
                        money(charge(row, "NON_RECURRING")),
                        text(&row["termLength"])
                    )
                }
            },
        };
        self.line("price", value, from);
    }

    fn same_name(&mut self, noun: &str) {
        let Some(name) = self.body()["name"].as_str().map(str::to_string) else { return };
        let key = Key::SameName;
        let from = self.source(&key);
        let what = format!("no other {noun} has the name {}", quoted(&name));
        match self.answer(&key).cloned() {
            Err(why) => self.check(NOT_CHECKED, format!("{what}: {why}"), from),
            Ok(answer) => {
                let rows = answer["data"].as_array().cloned().unwrap_or_default();
                match rows.iter().find(|r| r["name"].as_str() == Some(name.as_str())) {
                    Some(other) => {
                        let uuid = other["uuid"].as_str().unwrap_or_default();
                        let why = format!("{what}: {} ({}) has it", short_uuid(uuid), text(&other["state"]));
                        self.check(FAILED, why, from);
                    }
                    None => self.check(OK, what, from),
                }
            }
        }
    }

    fn network(&mut self) -> String {
        let body = self.body().clone();
        let summary =
            format!("+ create network {}: {}, scope {}", name_of(&body), text(&body["type"]), text(&body["scope"]));
        if let Some(code) = body.pointer("/location/metroCode").and_then(Value::as_str) {
            self.metro("metro", code);
        }
        self.bytes("region", text(&body["location"]["region"]));
        self.notifications_and_project();
        self.line(
            "price",
            "not priced: Fabric has no price product for networks; each connection to it is priced when it is created"
                .into(),
            "equinix-mcp".into(),
        );
        self.same_name("network");
        summary
    }

    fn service_token(&mut self) -> String {
        let body = self.body().clone();
        let summary = format!(
            "+ create service token {}: {}, expires {}",
            name_of(&body),
            text(&body["type"]),
            text(&body["expirationDateTime"])
        );
        let connection = &body["connection"];
        self.bytes("connection type", text(&connection["type"]));
        if let Some(limit) = connection["bandwidthLimit"].as_u64() {
            self.bytes("bandwidth limit", format!("{limit} Mbps"));
        }
        if let Some(offered) = connection["supportedBandwidths"].as_array() {
            let list: Vec<String> = offered.iter().map(text).collect();
            self.bytes("bandwidths offered", format!("{} Mbps", list.join(", ")));
        }
        let bandwidth = connection["bandwidthLimit"].as_u64();
        for (label, selector) in reads::access_points(ChangeType::ServiceTokenCreate, &body) {
            self.access_point(label, selector, bandwidth);
        }
        self.notifications_and_project();
        self.line(
            "price",
            "not priced: Fabric has no price product for service tokens; a connection made with the token is priced \
             as a virtual connection"
                .into(),
            "equinix-mcp".into(),
        );
        summary
    }
}

/// The sum of a rate-card row's charges of one type.
fn charge(row: &Value, charge_type: &str) -> f64 {
    row["charges"]
        .as_array()
        .map(|cs| cs.iter().filter(|c| c["type"] == charge_type).filter_map(|c| c["price"].as_f64()).sum())
        .unwrap_or(0.0)
}

fn money(amount: f64) -> String {
    format!("{amount:.2}")
}

/// The VLAN tags of a link protocol, as the bytes give them.
struct Vlan {
    tag: Option<u64>,
    s_tag: Option<u64>,
    c_tag: Option<u64>,
}

fn vlan_of(lp: &Value) -> Vlan {
    Vlan { tag: lp["vlanTag"].as_u64(), s_tag: lp["vlanSTag"].as_u64(), c_tag: lp["vlanCTag"].as_u64() }
}

impl Vlan {
    fn tagged(&self) -> bool {
        self.tag.is_some() || self.s_tag.is_some()
    }

    fn describe(&self) -> String {
        match (self.tag, self.s_tag, self.c_tag) {
            (Some(t), _, _) => format!("VLAN {t}"),
            (None, Some(s), Some(c)) => format!("VLAN S-tag {s}, C-tag {c}"),
            (None, Some(s), None) => format!("VLAN S-tag {s}"),
            _ => "untagged".into(),
        }
    }

    /// Whether the link protocol `lp` in use on the port holds these tags.
    fn matches(&self, lp: &Value) -> bool {
        let held = vlan_of(lp);
        match (self.tag, self.s_tag) {
            (Some(t), _) => held.tag == Some(t),
            (None, Some(s)) => {
                held.s_tag == Some(s) && (self.c_tag.is_none() || held.c_tag.is_none() || held.c_tag == self.c_tag)
            }
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const PORT: &str = "c4d9350e-783c-83cd-1ce0-306a5c00a600";
    const PROFILE: &str = "9f4b3a7e-1c2d-4e5f-8a9b-0c1d2e3f4a01";

    fn body() -> Value {
        json!({
            "type": "EVPL_VC", "name": "to-aws", "bandwidth": 500,
            "aSide": {"accessPoint": {"type": "COLO", "port": {"uuid": PORT},
                                      "linkProtocol": {"type": "DOT1Q", "vlanTag": 300}}},
            "zSide": {"accessPoint": {"type": "SP", "profile": {"uuid": PROFILE},
                                      "location": {"metroCode": "SV"}, "sellerRegion": "us-west-1"}},
            "notifications": [{"type": "ALL", "emails": ["noc@example.com"]}],
            "project": {"projectId": "ac4d"}
        })
    }

    fn answers() -> Answers {
        let mut a = Answers::new();
        a.insert(Key::Port(PORT.into()), Ok(json!({"name": "DC-PRI-01", "state": "ACTIVE", "bandwidth": 10000,
            "availableBandwidth": 10000, "location": {"metroCode": "DC", "ibx": "DC1"}, "encapsulation": {"type": "DOT1Q"}})));
        a.insert(
            Key::PortVlans(PORT.into()),
            Ok(json!({"data": [{"type": "DOT1Q", "vlanTag": 100, "asset": {"uuid": "c-100"}}],
            "pagination": {"total": 1}})),
        );
        a.insert(
            Key::Profile(PROFILE.into()),
            Ok(json!({"name": "AWS Direct Connect", "visibility": "PUBLIC", "state": "ACTIVE",
            "accessPointTypeConfigs": [{"supportedBandwidths": [50, 500, 1000], "allowCustomBandwidth": false}]})),
        );
        a.insert(Key::Metro("SV".into()), Ok(json!({"code": "SV", "name": "Silicon Valley"})));
        a.insert(Key::SameName, Ok(json!({"data": []})));
        a.insert(
            Key::Price,
            Ok(json!({"data": [{"currency": "USD", "termLength": 1,
            "charges": [{"type": "MONTHLY_RECURRING", "price": 250.0}, {"type": "NON_RECURRING", "price": 0.0}]}]})),
        );
        a
    }

    fn plan(body: &Value, answers: &Answers) -> Plan {
        compose(Input {
            change_type: ChangeType::ConnectionCreate,
            body,
            request_sha256: "ab",
            answers,
            over: 0,
            read_at: "2026-12-04T22:00:00Z".into(),
        })
    }

    fn value<'a>(plan: &'a Plan, label: &str) -> &'a Line {
        plan.lines.iter().find(|l| l.label == label).unwrap_or_else(|| panic!("no {label}: {plan:#?}"))
    }

    #[test]
    fn a_connection_reads_as_names_places_and_a_price_each_with_its_source() {
        let plan = plan(&body(), &answers());
        assert_eq!(plan.summary, "+ create connection \"to-aws\" (billable): EVPL_VC, 500 Mbps");
        let a = value(&plan, "A side");
        assert!(a.value.contains("\"DC-PRI-01\"") && a.value.contains("in DC (IBX DC1)") && a.value.contains("ACTIVE"));
        assert_eq!(a.from, format!("Fabric: GET /fabric/v4/ports/{PORT}"));
        assert_eq!(value(&plan, "A side VLAN").value, "DOT1Q VLAN 300");
        assert_eq!(value(&plan, "A side VLAN").from, FROM_BYTES);
        assert!(value(&plan, "Z side").value.contains("\"AWS Direct Connect\" (…0c1d2e3f4a01) (PUBLIC)"));
        assert_eq!(value(&plan, "Z side metro").value, "SV (Silicon Valley)");
        assert_eq!(value(&plan, "price").value, "USD 250.00 per month + USD 0.00 one-time, term 1 month(s)");
        assert!(value(&plan, "price").from.starts_with("Fabric: POST /fabric/v4/prices/search"));
        assert_eq!(value(&plan, "notifications").value, "ALL to noc@example.com");
        let verdicts: Vec<(&str, &str)> = plan.checks.iter().map(|c| (c.verdict.as_str(), c.what.as_str())).collect();
        assert!(verdicts.iter().all(|(v, _)| *v == OK), "{verdicts:?}");
        assert_eq!(plan.checks.len(), 5, "port active, bandwidth fits, VLAN free, profile offers it, name free");
        assert!(plan.text().contains("plan_sha256: "));
    }

    #[test]
    fn a_taken_vlan_a_port_down_an_unoffered_bandwidth_and_a_used_name_fail_their_checks() {
        let mut body = body();
        body["aSide"]["accessPoint"]["linkProtocol"]["vlanTag"] = json!(100);
        body["bandwidth"] = json!(200);
        let mut answers = answers();
        answers.get_mut(&Key::Port(PORT.into())).unwrap().as_mut().unwrap()["state"] = json!("DEPROVISIONED");
        answers.insert(Key::SameName, Ok(json!({"data": [{"name": "to-aws", "uuid": "x-1", "state": "ACTIVE"}]})));
        let plan = plan(&body, &answers);
        let failed: Vec<&str> = plan.checks.iter().filter(|c| c.verdict == FAILED).map(|c| c.what.as_str()).collect();
        assert_eq!(plan.failed(), 4, "{failed:?}");
        assert!(failed.iter().any(|w| w.contains("VLAN 100") && w.contains("already in use (held by c-100)")));
        assert!(failed.iter().any(|w| w.contains("is ACTIVE: it is DEPROVISIONED")));
        assert!(failed.iter().any(|w| w.contains("200 Mbps") && w.contains("offers 50, 500, 1000")));
        assert!(failed.iter().any(|w| w.contains("x-1 (ACTIVE) has it")));
    }

    #[test]
    fn what_could_not_be_read_says_why_and_an_unpriced_body_says_so() {
        let mut answers = answers();
        answers.insert(
            Key::Port(PORT.into()),
            Err("Fabric answered HTTP 404: EQ-3035202 Unable to fetch port details".into()),
        );
        answers.insert(Key::Price, Ok(json!({"data": []})));
        answers.remove(&Key::Metro("SV".into()));
        let plan = plan(&body(), &answers);
        assert!(value(&plan, "A side").value.contains("…306a5c00a600 not resolved: Fabric answered HTTP 404"));
        assert_eq!(value(&plan, "price").value, "no rate-card row matched this connection");
        assert!(value(&plan, "Z side metro").value.starts_with("SV (its name not read"));
        assert!(plan.checks.iter().any(|c| c.verdict == OK && c.what.contains("VLAN 300 is free")));
    }

    #[test]
    fn an_answer_about_another_port_than_the_one_asked_for_resolves_nothing() {
        let mut answers = answers();
        answers.get_mut(&Key::Port(PORT.into())).unwrap().as_mut().unwrap()["uuid"] =
            json!("ffffffff-0000-0000-0000-00000000beef");
        let plan = plan(&body(), &answers);
        let a = &value(&plan, "A side").value;
        assert!(
            a.contains("not resolved: Fabric answered about another object (…00000000beef)")
                && !a.contains("DC-PRI-01"),
            "{a}"
        );
        assert!(!plan.checks.iter().any(|c| c.what.contains("is ACTIVE")), "no check on a port not resolved");
    }

    #[test]
    fn hostile_names_stay_one_visible_bounded_quoted_value() {
        let mut answers = answers();
        let hostile = format!("<b>x</b>\"\n  price: USD 0\u{202e}{}", "y".repeat(500));
        answers.get_mut(&Key::Port(PORT.into())).unwrap().as_mut().unwrap()["name"] = json!(hostile);
        let plan = plan(&body(), &answers);
        let text = plan.text();
        assert!(
            !text.contains('\u{202e}') && !text.lines().any(|l| l.trim_start().starts_with("price: USD 0")),
            "{text}"
        );
        let a = &value(&plan, "A side").value;
        assert!(a.contains("\\\"\\n") && a.contains("more characters"), "{a}");
        assert_eq!(text.lines().filter(|l| l.starts_with("  price:")).count(), 1);
    }

    #[test]
    fn a_network_and_a_service_token_read_as_what_they_are() {
        let network = json!({"type": "EVPLAN", "name": "n-1", "scope": "REGIONAL", "location": {"region": "AMER"},
                             "notifications": [{"type": "ALL", "emails": ["noc@example.com"]}]});
        let mut named = Answers::new();
        named.insert(Key::SameName, Ok(json!({"data": []})));
        let plan = compose(Input {
            change_type: ChangeType::NetworkCreate,
            body: &network,
            request_sha256: "ab",
            answers: &named,
            over: 0,
            read_at: "t".into(),
        });
        assert_eq!(plan.summary, "+ create network \"n-1\": EVPLAN, scope REGIONAL");
        assert_eq!(value(&plan, "region").value, "AMER");
        assert!(value(&plan, "price").value.starts_with("not priced: Fabric has no price product for networks"));
        assert_eq!(plan.checks.len(), 1, "the name");

        let token = json!({"type": "VC_TOKEN", "expirationDateTime": "2031-01-01T00:00:00.000Z",
            "connection": {"type": "EVPL_VC", "supportedBandwidths": [50, 100],
                "aSide": {"accessPointSelectors": [{"type": "COLO", "port": {"uuid": PORT}, "linkProtocol": {"type": "DOT1Q", "vlanTag": 300}}]},
                "zSide": {"accessPointSelectors": [{"type": "VD", "virtualDevice": {"type": "EDGE", "uuid": "5f8e2b1a-6c3d-4e7f-9a0b-1c2d3e4f5a61"},
                                                    "interface": {"type": "NETWORK", "id": 5}}]}}});
        let plan = compose(Input {
            change_type: ChangeType::ServiceTokenCreate,
            body: &token,
            request_sha256: "ab",
            answers: &answers(),
            over: 0,
            read_at: "t".into(),
        });
        assert_eq!(plan.summary, "+ create service token (no name): VC_TOKEN, expires 2031-01-01T00:00:00.000Z");
        assert_eq!(value(&plan, "bandwidths offered").value, "50, 100 Mbps");
        assert!(value(&plan, "A side").value.contains("\"DC-PRI-01\""));
        assert!(value(&plan, "Z side").value.starts_with("virtual device …1c2d3e4f5a61, interface 5"));
        assert!(plan.checks.iter().any(|c| c.verdict == OK && c.what.contains("VLAN 300 is free")));
    }

    #[test]
    fn the_hash_moves_with_any_line() {
        let one = plan(&body(), &answers());
        let mut other = one.clone();
        other.lines[0].value.push('x');
        assert_ne!(one.sha256(), other.sha256());
        assert_eq!(one.sha256(), plan(&body(), &answers()).sha256(), "the same reads make the same plan");
    }
}
