//! The plan's lines for one create body and what the host's reads answered: pure, so each change
//! type's plan is tested with plain data. Every text that is not the host's own (from the bytes,
//! which the component wrote, or from Fabric) passes through [`shown`] or [`quoted`], and is
//! quoted wherever it is free text: it is data in the host's lines, never words of the host's.
//! The summary opens with the host's own figures; the body's name comes last in it, quoted and
//! cut short, so a name made to look like a plan can never come first.

use equinix_broker_contract::ChangeType;
use equinix_broker_contract::body::{self, Side, charge_total};
use serde_json::Value;

use super::reads::Answers;
use super::reads::{self, Key, NoAnswer};
use super::{Check, FAILED, FROM_BYTES, Line, NOT_CHECKED, OK, Plan, quoted, short_uuid, shown};

/// Why a read resolves nothing, as its plan line says it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
enum Unresolved {
    /// Fabric answered about another object than the one asked for (its short id).
    #[error("not resolved: Fabric answered about another object ({0})")]
    OtherObject(String),
    #[error("not resolved: {0}")]
    NoAnswer(NoAnswer),
    #[error("not read (over the plan's read limit)")]
    NotRead,
}

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

/// The most characters of the body's name the summary shows (the whole name is a line of its own).
const SUMMARY_NAME_CHARS: usize = 40;

/// The plan of `input`.
pub fn compose(input: Input) -> Plan {
    let mut b = Builder { input: &input, lines: Vec::new(), checks: Vec::new(), priced: None };
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
        priced: b.priced,
    }
}

struct Builder<'a> {
    input: &'a Input<'a>,
    lines: Vec<Line>,
    checks: Vec<Check>,
    priced: Option<super::Priced>,
}

/// A member of a JSON value as text: a string shown as it is, anything else as JSON.
fn text(v: &Value) -> String {
    match v {
        Value::String(s) => shown(s),
        Value::Null => String::new(),
        other => shown(&other.to_string()),
    }
}

/// A value from the bytes or from Fabric as data: a word of an enumeration's kind (`EVPL_VC`,
/// `DOT1Q`, `us-east-1`) as it is, any other string quoted (it may hold spaces, commas, figures
/// that would read as the host's), a number or a boolean as JSON.
fn data(v: &Value) -> String {
    match v {
        Value::String(s) if is_word(s) => s.clone(),
        Value::String(s) => quoted(s),
        Value::Null => String::new(),
        other => shown(&other.to_string()),
    }
}

/// Whether `s` is one short word of letters, digits and `_-.:+` (a code, a region, a date-time):
/// without a space or a comma, nothing in it can pose as a sentence.
fn is_word(s: &str) -> bool {
    !s.is_empty() && s.len() <= 40 && s.bytes().all(|b| b.is_ascii_alphanumeric() || b"_-.:+".contains(&b))
}

/// The body's name for the summary: quoted, cut to [`SUMMARY_NAME_CHARS`], after the host's figures.
fn summary_name(body: &Value) -> String {
    match body["name"].as_str() {
        Some(name) => {
            let cut: String = name.chars().take(SUMMARY_NAME_CHARS).collect();
            let more = if cut.len() < name.len() { "…" } else { "" };
            format!("; named {}{more}", quoted(&cut))
        }
        None => "; no name".into(),
    }
}

/// The name member of `v`, quoted, or the uuid shortened.
fn named(v: &Value, uuid: &str) -> String {
    match v["name"].as_str() {
        Some(name) => format!("{} ({})", quoted(name), short_uuid(uuid)),
        None => short_uuid(uuid),
    }
}

/// A metro code with the name Fabric gives it, or that it gave none.
fn metro_named(code: &str, name: Option<&str>) -> String {
    match name {
        Some(name) => format!("{} ({})", data(&Value::from(code)), shown(name)),
        None => format!("{} (its name not given by Fabric)", data(&Value::from(code))),
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

    /// What Fabric answered for `key`: `Ok(answer)`, or why it resolves nothing (the line says it).
    fn answer(&self, key: &Key) -> Result<&Value, Unresolved> {
        match self.input.answers.get(key) {
            // an answer about another object than the one asked for resolves nothing
            Some(Ok(v)) => match (key.asked_id(), key.asked_id().and_then(|(member, _)| v[member].as_str())) {
                (Some((_, asked)), Some(got)) if got != asked => Err(Unresolved::OtherObject(short_uuid(got))),
                _ => Ok(v),
            },
            Some(Err(why)) => Err(Unresolved::NoAnswer(why.clone())),
            None => Err(Unresolved::NotRead),
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

    /// The metro Fabric places `port` in, named as Fabric names it: the port's own answer's
    /// `metroName`, else the metro's read (`DC (Ashburn)`).
    fn port_metro(&self, port: &Value) -> String {
        let code = port["location"]["metroCode"].as_str().unwrap_or_default();
        let name = port["location"]["metroName"].as_str().map(str::to_string).or_else(|| {
            let metro = self.answer(&Key::Metro(code.to_string())).ok()?;
            metro["name"].as_str().map(str::to_string)
        });
        metro_named(code, name.as_deref())
    }

    fn notifications_and_project(&mut self) {
        let notifications = self.body()["notifications"].as_array().cloned().unwrap_or_default();
        let shown_notifications: Vec<String> = notifications
            .iter()
            .map(|n| {
                let emails: Vec<String> = n["emails"].as_array().into_iter().flatten().map(data).collect();
                format!("{} to {}", data(&n["type"]), emails.join(", "))
            })
            .collect();
        self.bytes("notifications", shown_notifications.join("; "));
        let project = data(&self.body()["project"]["projectId"]);
        if !project.is_empty() {
            self.line(
                "project",
                project,
                format!("{FROM_BYTES}; its name is not read (no project read is on this server's allow-list)"),
            );
        }
    }

    /// The body's name, whole, as a line of its own (the summary shows only its start).
    fn name_line(&mut self) {
        if let Some(name) = self.body()["name"].as_str() {
            let value = quoted(name);
            self.line("name", value, FROM_BYTES.into());
        }
    }

    fn connection(&mut self) -> String {
        let body = self.body().clone();
        let bandwidth = Bandwidth::of(&body["bandwidth"], "the body gives no bandwidth in whole Mbps");
        for (side, ap) in body::access_points(ChangeType::ConnectionCreate, &body) {
            self.access_point(side.label(), ap, &bandwidth);
        }
        for side in Side::BOTH {
            let label = side.label();
            if let Some(uuid) = body[side.member()].pointer("/serviceToken/uuid").and_then(Value::as_str) {
                let key = Key::Token(uuid.to_string());
                self.resolved(label, &key, uuid, |t| {
                    format!(
                        "service token {}: {}, {}, expires {}",
                        named(t, uuid),
                        data(&t["type"]),
                        data(&t["state"]),
                        data(&t["expirationDateTime"])
                    )
                });
            }
        }
        self.bytes("redundancy", data(&body["redundancy"]["priority"]));
        self.notifications_and_project();
        self.bytes("purchase order", data(&body["order"]["purchaseOrderNumber"]));
        let price = self.price();
        self.name_line();
        self.same_name("connection");
        format!(
            "+ create connection (billable): {}, {}, {price}{}",
            data(&body["type"]),
            bandwidth.describe(),
            summary_name(&body)
        )
    }

    /// One side's access point: what it is, where, its VLAN, and the checks that go with them.
    fn access_point(&mut self, label: &str, ap: &Value, bandwidth: &Bandwidth) {
        let id = |pointer: &str| ap.pointer(pointer).and_then(Value::as_str).map(str::to_string);
        let mut port_name = None;
        if let Some(uuid) = id("/port/uuid") {
            let key = Key::Port(uuid.clone());
            let port = self.answer(&key).cloned();
            let metro = port.as_ref().ok().map(|p| self.port_metro(p));
            self.resolved(label, &key, &uuid, |p| {
                format!(
                    "port {} in {}, IBX {}, {} Mbps ({} Mbps available), {}, {}",
                    named(p, &uuid),
                    metro.unwrap_or_default(),
                    data(&p["location"]["ibx"]),
                    text(&p["bandwidth"]),
                    text(&p["availableBandwidth"]),
                    data(&p["state"]),
                    data(&p["encapsulation"]["type"])
                )
            });
            if let Ok(port) = port {
                port_name = Some(named(&port, &uuid));
                self.port_checks(label, ap, &port, &uuid, bandwidth, self.source(&key));
            }
        }
        if let Some(lp) = ap.get("linkProtocol").filter(|v| v.is_object()) {
            let vlan = vlan_of(lp);
            self.bytes(&format!("{label} VLAN"), format!("{} {}", data(&lp["type"]), vlan.describe()));
            if let (Some(uuid), true) = (id("/port/uuid"), vlan.tagged()) {
                self.vlan_check(label, &uuid, &vlan, port_name.unwrap_or_else(|| short_uuid(&uuid)));
            }
        }
        if let Some(uuid) = id("/profile/uuid") {
            let key = Key::Profile(uuid.clone());
            self.resolved(label, &key, &uuid, |p| {
                format!("service profile {} ({}), {}", named(p, &uuid), data(&p["visibility"]), data(&p["state"]))
            });
            if let Ok(profile) = self.answer(&key).cloned() {
                self.profile_bandwidth_check(&profile, &uuid, bandwidth, self.source(&key));
            }
        }
        if let Some(uuid) = id("/network/uuid") {
            let key = Key::Network(uuid.clone());
            self.resolved(label, &key, &uuid, |n| {
                format!(
                    "network {}: {}, scope {}, {}",
                    named(n, &uuid),
                    data(&n["type"]),
                    data(&n["scope"]),
                    data(&n["state"])
                )
            });
        }
        if let Some(uuid) = id("/router/uuid") {
            let key = Key::Router(uuid.clone());
            self.resolved(label, &key, &uuid, |r| {
                format!(
                    "Cloud Router {} in {}, package {}, {}",
                    named(r, &uuid),
                    data(&r["location"]["metroCode"]),
                    data(&r["package"]["code"]),
                    data(&r["state"])
                )
            });
        }
        if let Some(uuid) = id("/virtualDevice/uuid") {
            self.line(
                label,
                format!("virtual device {}, interface {}", short_uuid(&uuid), data(&ap["interface"]["id"])),
                format!("{FROM_BYTES}; the device is not read (Network Edge is not on this server's allow-list)"),
            );
        }
        let named = ["/port/uuid", "/profile/uuid", "/network/uuid", "/router/uuid", "/virtualDevice/uuid"];
        if named.iter().all(|p| id(p).is_none()) {
            self.bytes(&format!("{label} access point"), data(&ap["type"]));
        }
        if let Some(code) = ap.pointer("/location/metroCode").and_then(Value::as_str) {
            self.metro(&format!("{label} metro"), code);
        }
        self.bytes(&format!("{label} seller region"), data(&ap["sellerRegion"]));
        self.bytes(&format!("{label} authentication key"), data(&ap["authenticationKey"]));
        self.bytes(&format!("{label} peering"), data(&ap["peeringType"]));
    }

    /// What Fabric says of a port that bears on the change: its state, its operational status,
    /// maintenance under way, a failed change, the room it has, and whether the body's metro for
    /// it is the port's own. A figure Fabric did not give is a check not made, said.
    fn port_checks(&mut self, label: &str, ap: &Value, port: &Value, uuid: &str, bw: &Bandwidth, from: String) {
        let name = named(port, uuid);
        let (verdict, what) = match port["state"].as_str() {
            Some("ACTIVE") => (OK, format!("{label} port {name} is ACTIVE")),
            Some(other) => (FAILED, format!("{label} port {name} is ACTIVE: it is {}", data(&Value::from(other)))),
            None => (NOT_CHECKED, format!("{label} port {name} is ACTIVE: Fabric's answer gives no state")),
        };
        self.check(verdict, what, from.clone());
        let operation = &port["operation"];
        let (verdict, what) = match operation["operationalStatus"].as_str() {
            Some("UP") => (OK, format!("{label} port {name} is operationally UP")),
            Some(other) => {
                let since =
                    operation["opStatusChangedAt"].as_str().map(|t| format!(" since {}", data(&Value::from(t))));
                let what = format!(
                    "{label} port {name} is operationally UP: it is {}{}",
                    data(&Value::from(other)),
                    since.unwrap_or_default()
                );
                (FAILED, what)
            }
            None => (
                NOT_CHECKED,
                format!("{label} port {name} is operationally UP: Fabric's answer gives no operational status"),
            ),
        };
        self.check(verdict, what, from.clone());
        if let Some(m) = operation["maintenanceStatus"].as_str().filter(|m| matches!(*m, "SCHEDULED" | "IN_PROGRESS")) {
            let what = format!(
                "{label} port {name} has no maintenance under way: its maintenance is {}",
                data(&Value::from(m))
            );
            self.check(FAILED, what, from.clone());
        }
        if port["change"]["status"] == "FAILED" {
            let info = port["change"]["information"].as_str().map(|i| format!(": {}", quoted(i))).unwrap_or_default();
            let what = format!(
                "{label} port {name}'s last change succeeded: its {} FAILED{info}",
                data(&port["change"]["type"])
            );
            self.check(FAILED, what, from.clone());
        }
        match (bw.mbps, port["availableBandwidth"].as_u64()) {
            (Some(b), Some(available)) => {
                let verdict = if b <= available { OK } else { FAILED };
                let what = format!("{b} Mbps fits the {available} Mbps the {label} port has available");
                self.check(verdict, what, from.clone());
            }
            (None, _) => {
                self.check(NOT_CHECKED, format!("the bandwidth fits the {label} port: {}", bw.missing), from.clone())
            }
            (Some(b), None) => self.check(
                NOT_CHECKED,
                format!("{b} Mbps fits the {label} port: Fabric's answer gives no availableBandwidth"),
                from.clone(),
            ),
        }
        // Fabric places a port itself; a body that says otherwise is wrong about where it connects
        if let Some(said) = ap.pointer("/location/metroCode").and_then(Value::as_str) {
            let own = port["location"]["metroCode"].as_str();
            let (verdict, what) = match own {
                Some(own) if own == said => {
                    (OK, format!("{label} metroCode {} is port {name}'s own metro", data(&Value::from(said))))
                }
                Some(_) => {
                    let where_ = self.port_metro(port);
                    let what = format!(
                        "{label} metroCode {} in the exact bytes is port {name}'s own metro: Fabric places the port in \
                         {where_}; the price is of the port's own metro",
                        data(&Value::from(said))
                    );
                    (FAILED, what)
                }
                None => (
                    NOT_CHECKED,
                    format!(
                        "{label} metroCode {} is port {name}'s own metro: Fabric's answer gives none",
                        data(&Value::from(said))
                    ),
                ),
            };
            self.check(verdict, what, from);
        }
    }

    /// A metro code from the bytes, with its name where Fabric gave it.
    fn metro(&mut self, label: &str, code: &str) {
        let key = Key::Metro(code.to_string());
        match self.answer(&key).cloned() {
            Ok(m) => {
                let from = format!("{FROM_BYTES}; the name: {}", self.source(&key));
                self.line(label, format!("{} ({})", data(&Value::from(code)), text(&m["name"])), from);
            }
            Err(why) => self.line(label, format!("{} (its name {why})", data(&Value::from(code))), FROM_BYTES.into()),
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

    fn profile_bandwidth_check(&mut self, profile: &Value, uuid: &str, bw: &Bandwidth, from: String) {
        let name = named(profile, uuid);
        let Some(bandwidth) = bw.mbps else {
            self.check(NOT_CHECKED, format!("the bandwidth is one profile {name} offers: {}", bw.missing), from);
            return;
        };
        let configs = profile["accessPointTypeConfigs"].as_array().cloned().unwrap_or_default();
        let custom = configs.iter().any(|c| c["allowCustomBandwidth"] == true);
        let offered: Vec<u64> = configs
            .iter()
            .flat_map(|c| c["supportedBandwidths"].as_array().cloned().unwrap_or_default())
            .filter_map(|b| b.as_u64())
            .collect();
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

    /// The price line, and what the summary says of it (`USD 250.00 per month`, or why not).
    fn price(&mut self) -> String {
        if let Err(why) = body::price_filter(self.body()) {
            self.line("price", format!("not priced: {}", why.describe(shown)), "equinix-mcp".into());
            return "price unknown".into();
        }
        let mut from =
            format!("{} (list price; account discounts and port packages may lower it)", self.source(&Key::Price));
        if body::priced_by_port(self.body()) {
            from.push_str(
                "; the A side is priced by its port, where Fabric places it, not by a metroCode in the bytes",
            );
        }
        let mut figures = None;
        let (value, short) = match self.answer(&Key::Price) {
            Err(why) => (why.to_string(), "price unknown".to_string()),
            Ok(answer) => match answer["data"].as_array().and_then(|d| d.first()) {
                None => ("no rate-card row matched this connection".into(), "price unknown".into()),
                Some(row) => {
                    figures = priced(row);
                    let currency = data(&row["currency"]);
                    let monthly = money(charge_total(row, "MONTHLY_RECURRING"));
                    let value = format!(
                        "{currency} {monthly} per month + {currency} {} one-time, term {} month(s)",
                        money(charge_total(row, "NON_RECURRING")),
                        data(&row["termLength"])
                    );
                    (value, format!("{currency} {monthly} per month"))
                }
            },
        };
        self.priced = figures;
        self.line("price", value, from);
        short
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
                        let why = format!("{what}: {} ({}) has it", short_uuid(uuid), data(&other["state"]));
                        self.check(FAILED, why, from);
                    }
                    None => self.check(OK, what, from),
                }
            }
        }
    }

    fn network(&mut self) -> String {
        let body = self.body().clone();
        if let Some(code) = body.pointer("/location/metroCode").and_then(Value::as_str) {
            self.metro("metro", code);
        }
        self.bytes("region", data(&body["location"]["region"]));
        self.notifications_and_project();
        self.line(
            "price",
            "not priced: Fabric has no price product for networks; each connection to it is priced when it is created"
                .into(),
            "equinix-mcp".into(),
        );
        self.name_line();
        self.same_name("network");
        format!("+ create network: {}, scope {}{}", data(&body["type"]), data(&body["scope"]), summary_name(&body))
    }

    /// A service token grants access: whoever holds it may connect to the access points it names,
    /// up to its bandwidth, until it expires. The plan says exactly that, first.
    fn service_token(&mut self) -> String {
        let body = self.body().clone();
        let connection = &body["connection"];
        let limit = Bandwidth::of(&connection["bandwidthLimit"], "the token sets no bandwidthLimit");
        let until = match body["expirationDateTime"].as_str() {
            Some(t) => data(&Value::from(t)),
            None => "no expiry in the bytes".into(),
        };
        self.line(
            "who may connect",
            "whoever holds the token: Fabric returns its uuid to the proposer, who may hand it to anyone, another \
             organisation included, to connect to the access points below"
                .into(),
            "equinix-mcp".into(),
        );
        let offered: Vec<String> =
            connection["supportedBandwidths"].as_array().into_iter().flatten().map(data).collect();
        let up_to = match (limit.mbps, offered.is_empty()) {
            (Some(l), _) => format!("up to {l} Mbps"),
            (None, false) => format!("at {} Mbps", offered.join(", ")),
            (None, true) => "at any bandwidth Fabric allows (the bytes set no limit)".into(),
        };
        self.bytes("bandwidth", up_to.clone());
        if !offered.is_empty() {
            self.bytes("bandwidths offered", format!("{} Mbps", offered.join(", ")));
        }
        self.bytes("until", until.clone());
        self.bytes("connection type", data(&connection["type"]));
        for (member, label) in
            [("allowRemoteConnection", "from other metros"), ("allowCustomBandwidth", "custom bandwidth")]
        {
            if let Some(allowed) = connection[member].as_bool() {
                self.bytes(label, if allowed { "allowed" } else { "not allowed" }.into());
            }
        }
        let mut to = Vec::new();
        for (side, selector) in body::access_points(ChangeType::ServiceTokenCreate, &body) {
            to.push(self.token_target(side.label(), selector));
            self.access_point(side.label(), selector, &limit);
        }
        self.notifications_and_project();
        self.line(
            "price",
            "not priced: Fabric has no price product for service tokens; a connection made with the token is priced \
             as a virtual connection"
                .into(),
            "equinix-mcp".into(),
        );
        self.name_line();
        let to = if to.is_empty() { "no access point named in the bytes".to_string() } else { to.join(" and ") };
        format!(
            "+ create service token (grants access, {}): whoever holds it may connect to {to}, {up_to}, until {until}{}",
            data(&body["type"]),
            summary_name(&body)
        )
    }

    /// What a token's selector lets its holder connect to, in a few words for the summary.
    fn token_target(&self, label: &str, selector: &Value) -> String {
        let lp = &selector["linkProtocol"];
        let vlan = if lp.is_object() { format!(" {}", vlan_of(lp).describe()) } else { String::new() };
        if let Some(uuid) = selector.pointer("/port/uuid").and_then(Value::as_str) {
            let port = match self.answer(&Key::Port(uuid.to_string())) {
                Ok(p) => named(p, uuid),
                Err(_) => short_uuid(uuid),
            };
            return format!("{label} port {port}{vlan}");
        }
        if let Some(uuid) = selector.pointer("/network/uuid").and_then(Value::as_str) {
            return format!("{label} network {}", short_uuid(uuid));
        }
        if let Some(uuid) = selector.pointer("/virtualDevice/uuid").and_then(Value::as_str) {
            return format!("{label} virtual device {}", short_uuid(uuid));
        }
        format!("{label} {}", data(&selector["type"]))
    }
}

/// A bandwidth the bytes give in whole Mbps, or why the checks that need one are not made.
struct Bandwidth {
    mbps: Option<u64>,
    /// Why there is none, for a check's "not checked" line.
    missing: &'static str,
}

impl Bandwidth {
    fn of(v: &Value, missing: &'static str) -> Bandwidth {
        let missing = if v.is_null() { missing } else { "the bandwidth in the bytes is not a whole number of Mbps" };
        Bandwidth { mbps: v.as_u64(), missing }
    }

    fn describe(&self) -> String {
        match self.mbps {
            Some(b) => format!("{b} Mbps"),
            None => "bandwidth not given in whole Mbps".into(),
        }
    }
}

/// A rate-card row's figures for the policy: a charge type the row does not name, or names
/// without a number, is unknown (none), never zero; so is a row without a plain currency code.
fn priced(row: &Value) -> Option<super::Priced> {
    let currency = row["currency"].as_str().filter(|c| c.len() == 3 && c.bytes().all(|b| b.is_ascii_uppercase()))?;
    let cents = |charge_type: &str| {
        let charges: Vec<f64> = row["charges"]
            .as_array()?
            .iter()
            .filter(|c| c["type"] == charge_type)
            .map(|c| c["price"].as_f64())
            .collect::<Option<_>>()?;
        let sum: f64 = charges.iter().sum();
        (!charges.is_empty() && (0.0..1e15).contains(&sum)).then(|| (sum * 100.0).round() as i64)
    };
    Some(super::Priced {
        currency: currency.to_string(),
        monthly_cents: cents("MONTHLY_RECURRING"),
        one_time_cents: cents("NON_RECURRING"),
        term_months: row["termLength"].as_i64().filter(|t| *t > 0),
    })
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
        a.insert(
            Key::Port(PORT.into()),
            Ok(json!({"name": "DC-PRI-01", "state": "ACTIVE", "bandwidth": 10000,
            "availableBandwidth": 9000, "location": {"metroCode": "DC", "metroName": "Ashburn", "ibx": "DC1"},
            "encapsulation": {"type": "DOT1Q"}, "operation": {"operationalStatus": "UP"}})),
        );
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
    fn a_charge_fabric_did_not_give_is_unknown_to_the_policy_never_zero() {
        let row = |charges: Value| json!({"currency": "USD", "termLength": 12, "charges": charges});
        let only_monthly = priced(&row(json!([{"type": "MONTHLY_RECURRING", "price": 1999.995}]))).unwrap();
        assert_eq!((only_monthly.monthly_cents, only_monthly.one_time_cents), (Some(200_000), None));
        let no_number = priced(&row(json!([{"type": "MONTHLY_RECURRING", "price": "12"}]))).unwrap();
        assert_eq!(no_number.monthly_cents, None, "a price that is not a number is unknown");
        assert_eq!(priced(&json!({"currency": "usd<b>", "charges": []})), None, "no plain currency: no figures");
        let negative = priced(&row(json!([{"type": "MONTHLY_RECURRING", "price": -5.0}]))).unwrap();
        assert_eq!(negative.monthly_cents, None, "a negative sum is no price");
    }

    #[test]
    fn a_connection_reads_as_names_places_and_a_price_each_with_its_source() {
        let plan = plan(&body(), &answers());
        assert_eq!(
            plan.summary,
            "+ create connection (billable): EVPL_VC, 500 Mbps, USD 250.00 per month; named \"to-aws\""
        );
        let a = value(&plan, "A side");
        assert_eq!(
            a.value,
            "port \"DC-PRI-01\" (…306a5c00a600) in DC (Ashburn), IBX DC1, 10000 Mbps (9000 Mbps available), ACTIVE, DOT1Q"
        );
        assert_eq!(a.from, format!("Fabric: GET /fabric/v4/ports/{PORT}"));
        assert_eq!(value(&plan, "A side VLAN").value, "DOT1Q VLAN 300");
        assert_eq!(value(&plan, "A side VLAN").from, FROM_BYTES);
        assert!(value(&plan, "Z side").value.contains("\"AWS Direct Connect\" (…0c1d2e3f4a01) (PUBLIC)"));
        assert_eq!(value(&plan, "Z side metro").value, "SV (Silicon Valley)");
        assert_eq!(value(&plan, "price").value, "USD 250.00 per month + USD 0.00 one-time, term 1 month(s)");
        // the same figures for the operator's policy, in cents
        let priced = plan.priced.clone().expect("priced");
        assert_eq!(
            (priced.currency.as_str(), priced.monthly_cents, priced.one_time_cents, priced.term_months),
            ("USD", Some(25_000), Some(0), Some(1))
        );
        assert!(value(&plan, "price").from.starts_with("Fabric: POST /fabric/v4/prices/search"));
        assert_eq!(value(&plan, "notifications").value, "ALL to \"noc@example.com\"");
        assert_eq!(value(&plan, "name").value, "\"to-aws\"");
        let verdicts: Vec<(&str, &str)> = plan.checks.iter().map(|c| (c.verdict.as_str(), c.what.as_str())).collect();
        assert!(verdicts.iter().all(|(v, _)| *v == OK), "{verdicts:?}");
        assert_eq!(
            plan.checks.len(),
            6,
            "port active, port up, bandwidth fits, VLAN free, profile offers it, name free"
        );
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
            Err(NoAnswer::Status { status: 404, first_error: ": EQ-3035202 Unable to fetch port details".into() }),
        );
        answers.insert(Key::Price, Ok(json!({"data": []})));
        answers.remove(&Key::Metro("SV".into()));
        let plan = plan(&body(), &answers);
        let a_side = &value(&plan, "A side").value;
        assert!(
            a_side.contains(
                "…306a5c00a600 not resolved: Fabric answered HTTP 404: EQ-3035202 Unable to fetch port details"
            ),
            "{a_side}"
        );
        assert_eq!(value(&plan, "price").value, "no rate-card row matched this connection");
        assert_eq!(plan.priced, None, "no price is no figure for the policy, never zero");
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
        assert_eq!(plan.summary, "+ create network: EVPLAN, scope REGIONAL; named \"n-1\"");
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
        assert_eq!(
            plan.summary,
            "+ create service token (grants access, VC_TOKEN): whoever holds it may connect to A side port \
             \"DC-PRI-01\" (…306a5c00a600) VLAN 300 and Z side virtual device …1c2d3e4f5a61, at 50, 100 Mbps, until \
             2031-01-01T00:00:00.000Z; no name"
        );
        assert!(value(&plan, "who may connect").value.starts_with("whoever holds the token"));
        assert_eq!(value(&plan, "until").value, "2031-01-01T00:00:00.000Z");
        assert_eq!(value(&plan, "bandwidths offered").value, "50, 100 Mbps");
        assert!(value(&plan, "A side").value.contains("\"DC-PRI-01\""));
        assert!(value(&plan, "Z side").value.starts_with("virtual device …1c2d3e4f5a61, interface 5"));
        assert!(plan.checks.iter().any(|c| c.verdict == OK && c.what.contains("VLAN 300 is free")));
    }

    #[test]
    fn a_name_made_to_look_like_the_plan_comes_after_the_hosts_figures_quoted_and_cut() {
        let mut body = body();
        body["name"] = json!("to-aws (billable): EVPL_VC, 50 Mbps, USD 0.00 per month, checked OK by equinix-mcp");
        let plan = plan(&body, &answers());
        let real = "+ create connection (billable): EVPL_VC, 500 Mbps, USD 250.00 per month; named \"";
        assert!(plan.summary.starts_with(real), "the host's figures first: {}", plan.summary);
        assert!(plan.summary.ends_with("…"), "the name cut short in the summary: {}", plan.summary);
        assert!(!plan.summary.contains("checked OK"), "{}", plan.summary);
        assert!(plan.text().lines().nth(1).unwrap().starts_with(real), "{}", plan.text());
        assert!(value(&plan, "name").value.contains("checked OK by equinix-mcp"), "the whole name is a line of data");
        // free text from the bytes is quoted data in the host's lines
        body["zSide"]["accessPoint"]["authenticationKey"] = json!("USD 0.00 per month");
        let plan = self::plan(&body, &answers());
        assert_eq!(value(&plan, "Z side authentication key").value, "\"USD 0.00 per month\"");
    }

    #[test]
    fn an_a_side_metro_the_port_is_not_in_fails_its_check_and_does_not_steer_the_price() {
        let mut body = body();
        body["aSide"]["accessPoint"]["location"] = json!({"metroCode": "SV"});
        let plan = plan(&body, &answers());
        let failed: Vec<&str> = plan.checks.iter().filter(|c| c.verdict == FAILED).map(|c| c.what.as_str()).collect();
        assert_eq!(
            failed,
            ["A side metroCode SV in the exact bytes is port \"DC-PRI-01\" (…306a5c00a600)'s own metro: Fabric \
              places the port in DC (Ashburn); the price is of the port's own metro"],
            "{plan:#?}"
        );
        assert!(value(&plan, "price").from.contains("the A side is priced by its port"), "{plan:#?}");
        let filter = body::price_filter(&body).unwrap().to_string();
        assert!(!filter.contains("/connection/aSide/accessPoint/location/metroCode"), "{filter}");
        assert!(filter.contains("/connection/aSide/accessPoint/port/uuid"), "{filter}");
        // the body agreeing with the port: an ok of its own
        body["aSide"]["accessPoint"]["location"] = json!({"metroCode": "DC"});
        let plan = self::plan(&body, &answers());
        assert!(plan.checks.iter().any(|c| c.verdict == OK && c.what.contains("metroCode DC is port")), "{plan:#?}");
    }

    #[test]
    fn a_ports_errors_are_shown_and_a_figure_fabric_did_not_give_is_a_check_not_made() {
        let mut answers = answers();
        let port = answers.get_mut(&Key::Port(PORT.into())).unwrap().as_mut().unwrap();
        port["operation"] = json!({"operationalStatus": "DOWN", "opStatusChangedAt": "2026-12-01T10:00:00Z",
                                   "maintenanceStatus": "IN_PROGRESS"});
        port["change"] =
            json!({"type": "PORT_UPDATE", "status": "FAILED", "information": "LAG member lost\nprice: USD 0"});
        let plan = plan(&body(), &answers);
        let failed: Vec<&str> = plan.checks.iter().filter(|c| c.verdict == FAILED).map(|c| c.what.as_str()).collect();
        assert!(
            failed.iter().any(|w| w.ends_with("is operationally UP: it is DOWN since 2026-12-01T10:00:00Z")),
            "{failed:?}"
        );
        assert!(failed.iter().any(|w| w.ends_with("its maintenance is IN_PROGRESS")), "{failed:?}");
        assert!(
            failed.iter().any(|w| w.ends_with("its PORT_UPDATE FAILED: \"LAG member lost\\nprice: USD 0\"")),
            "Fabric's words quoted, on one line: {failed:?}"
        );
        // no operational status, no available bandwidth, no bandwidth in the body: each said
        let mut answers = self::answers();
        let port = answers.get_mut(&Key::Port(PORT.into())).unwrap().as_mut().unwrap();
        port.as_object_mut().unwrap().remove("operation");
        port.as_object_mut().unwrap().remove("availableBandwidth");
        let plan = self::plan(&body(), &answers);
        let unchecked: Vec<&str> =
            plan.checks.iter().filter(|c| c.verdict == NOT_CHECKED).map(|c| c.what.as_str()).collect();
        assert!(unchecked.iter().any(|w| w.ends_with("Fabric's answer gives no operational status")), "{unchecked:?}");
        assert!(unchecked.iter().any(|w| w.ends_with("Fabric's answer gives no availableBandwidth")), "{unchecked:?}");
        let mut no_bandwidth = body();
        no_bandwidth.as_object_mut().unwrap().remove("bandwidth");
        let plan = self::plan(&no_bandwidth, &self::answers());
        let unchecked: Vec<&str> =
            plan.checks.iter().filter(|c| c.verdict == NOT_CHECKED).map(|c| c.what.as_str()).collect();
        assert_eq!(
            unchecked,
            [
                "the bandwidth fits the A side port: the body gives no bandwidth in whole Mbps",
                "the bandwidth is one profile \"AWS Direct Connect\" (…0c1d2e3f4a01) offers: the body gives no bandwidth \
                 in whole Mbps"
            ]
        );
        assert!(plan.summary.contains("bandwidth not given in whole Mbps, price unknown"), "{}", plan.summary);
        assert!(value(&plan, "price").value.starts_with("not priced: the body names no bandwidth"), "{plan:#?}");
    }

    #[test]
    fn a_ports_metro_is_named_from_the_metros_read_when_the_port_does_not_name_it() {
        let mut answers = answers();
        let port = answers.get_mut(&Key::Port(PORT.into())).unwrap().as_mut().unwrap();
        port["location"].as_object_mut().unwrap().remove("metroName");
        assert!(value(&plan(&body(), &answers), "A side").value.contains("in DC (its name not given by Fabric)"));
        assert_eq!(reads::follow_ups(&answers, 4), vec![Key::Metro("DC".into())], "one more read, for DC");
        answers.insert(Key::Metro("DC".into()), Ok(json!({"code": "DC", "name": "Ashburn"})));
        assert!(value(&plan(&body(), &answers), "A side").value.contains("in DC (Ashburn)"));
        assert!(reads::follow_ups(&answers, 4).is_empty(), "read once");
        assert!(reads::follow_ups(&self::answers(), 4).is_empty(), "the port named it: nothing more to read");
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
