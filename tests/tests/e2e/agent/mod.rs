//! What the model sees: a test agent that knows no Fabric field names, enums or rules of its
//! own. It reads `tools/list` and tool results only, fills the propose tool's typed spec schema
//! from what the task and the read tools told it, and must reach a confirmed create in at most
//! five calls with no refused propose. Also: the size budgets of `tools/list` and results, and
//! every result checked against its tool's `outputSchema`.

use std::collections::BTreeMap;

use crate::harness::*;
use equinix_fabric_sim as fabric_sim;
use serde_json::{Map, Value, json};

/// What the agent knows, by where it applies: `""` everywhere, `"."` to the spec's own members
/// only, `"aSide"`/`"zSide"` only under that member. Keys are compared without case or
/// underscores.
#[derive(Default)]
struct Facts(BTreeMap<&'static str, Map<String, Value>>);

fn norm(key: &str) -> String {
    key.chars().filter(|c| *c != '_').flat_map(char::to_lowercase).collect()
}

impl Facts {
    fn set(&mut self, scope: &'static str, key: &str, value: Value) {
        self.0.entry(scope).or_default().insert(norm(key), value);
    }

    /// Every fact, whatever its scope.
    fn all(&self) -> Map<String, Value> {
        self.0.values().flat_map(|f| f.clone()).collect()
    }

    /// The facts visible at `path` (a scope applies below a member of its name).
    fn visible(&self, path: &[String]) -> Map<String, Value> {
        let mut out = Map::new();
        for (scope, facts) in &self.0 {
            let applies = match *scope {
                "" => true,
                "." => path.len() == 1,
                member => path.iter().any(|p| p == member),
            };
            if applies {
                out.extend(facts.clone());
            }
        }
        out
    }
}

/// Fills a spec from its JSON Schema: required members always, optional ones when the facts
/// can fill them; enums from a fact, a "By type: X needs ..." rule the facts satisfy, the task's
/// words, or the value the description names first.
struct Filler<'a> {
    defs: &'a Map<String, Value>,
    facts: &'a Facts,
    task: String,
}

impl Filler<'_> {
    fn resolve<'s>(&'s self, schema: &'s Value) -> &'s Value {
        match schema.get("$ref").and_then(Value::as_str).and_then(|r| r.strip_prefix("#/$defs/")) {
            Some(name) => &self.defs[name],
            None => schema,
        }
    }

    /// The value for the member `key` at `path`, and whether a fact or the task's words chose it
    /// (an optional member is sent only then).
    fn fill(&self, schema: &Value, key: &str, path: &mut Vec<String>, parent: &Value) -> Option<(Value, bool)> {
        let schema = self.resolve(schema);
        let facts = self.facts.visible(path);
        if let Some(values) = schema.get("enum").and_then(Value::as_array) {
            // a rule of the spec itself is judged on everything known, one deeper on what is known
            // there; the spec's own type falls back to the task's words and the description
            let at_root = path.len() == 1;
            let rule_facts = if at_root { self.facts.all() } else { facts.clone() };
            return self.pick(values, schema, key, (&facts, &rule_facts, at_root), parent);
        }
        let fact = |v: Option<&Value>| v.cloned().map(|v| (v, true));
        match schema.get("type").and_then(Value::as_str) {
            Some("object") => self.object(schema, path),
            Some("array") => self.fill(&schema["items"], key, path, parent).map(|(item, g)| (json!([item]), g)),
            // a `{uuid}` reference takes the fact named like the member holding it
            Some("string") if key == "uuid" => fact(facts.get(&norm(path.get(path.len().checked_sub(2)?)?))),
            Some("string") => {
                let by_format = schema.get("format").and_then(Value::as_str).and_then(|f| facts.get(f));
                fact(facts.get(&norm(key)).or(by_format))
            }
            Some("integer") => fact(facts.get(&norm(key))),
            _ => None,
        }
    }

    fn object(&self, schema: &Value, path: &mut Vec<String>) -> Option<(Value, bool)> {
        let required: Vec<&str> =
            schema["required"].as_array().map(|r| r.iter().filter_map(Value::as_str).collect()).unwrap_or_default();
        let props = schema["properties"].as_object()?;
        let mut out = Map::new();
        let mut grounded = false;
        // `type` first: what else an object needs depends on it
        let mut keys: Vec<&String> = props.keys().collect();
        keys.sort_by_key(|k| *k != "type");
        for key in keys {
            path.push(key.clone());
            let value = self.fill(&props[key], key, path, schema);
            path.pop();
            match value {
                Some((v, g)) if required.contains(&key.as_str()) || g => {
                    // an object is grounded by what it says beyond its type
                    grounded |= g && key != "type";
                    out.insert(key.clone(), v);
                }
                None if required.contains(&key.as_str()) => return None,
                _ => {}
            }
        }
        // an "Exactly one of a or b" rule keeps the first
        if let Some(rule) = schema["description"].as_str().and_then(|d| d.strip_prefix("Exactly one of "))
            && let Some((a, b)) = rule.trim_end_matches('.').split_once(" or ")
            && out.contains_key(a)
        {
            out.remove(b);
        }
        Some((Value::Object(out), grounded))
    }

    fn pick(
        &self,
        values: &[Value],
        schema: &Value,
        key: &str,
        (facts, rule_facts, at_root): (&Map<String, Value>, &Map<String, Value>, bool),
        parent: &Value,
    ) -> Option<(Value, bool)> {
        let strings: Vec<&str> = values.iter().filter_map(Value::as_str).collect();
        // a fact that is one of the values
        if let Some(v) = facts.values().filter_map(Value::as_str).find(|v| strings.contains(v)) {
            return Some((json!(v), true));
        }
        // "By type: COLO needs port (...); SP needs profile; ...": the first type whose needs the
        // facts meet; a side none of whose needs is known cannot be built
        if key == "type"
            && let Some(rule) = parent["description"].as_str().and_then(|d| d.strip_prefix("By type: "))
        {
            for clause in rule.trim_end_matches('.').split("; ") {
                let Some((kind, needs)) = clause.split_once(" needs ") else { continue };
                let need = needs.split([' ', ',']).next().unwrap_or_default();
                if strings.contains(&kind) && rule_facts.contains_key(&norm(need)) {
                    return Some((json!(kind), true));
                }
            }
            if !at_root {
                return None;
            }
        }
        let words: Vec<String> =
            self.task.split(|c: char| !c.is_alphanumeric() && c != '_').map(str::to_uppercase).collect();
        if let Some(v) = strings.iter().find(|v| words.iter().any(|w| w == *v)) {
            return Some((json!(v), true));
        }
        let doc = schema["description"].as_str().unwrap_or_default();
        let named_first = strings.iter().filter_map(|v| doc.find(*v).map(|at| (at, *v))).min();
        named_first.map(|(_, v)| json!(v)).or_else(|| values.first().cloned()).map(|v| (v, false))
    }
}

/// The spec schema of `change_type` in the propose tool's input schema.
fn spec_schema(propose: &Value, change_type: &str) -> Value {
    propose["allOf"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["if"]["properties"]["change_type"]["const"] == change_type)
        .map(|b| b["then"]["properties"]["spec"].clone())
        .unwrap_or_else(|| panic!("the schema types the spec of {change_type}"))
}

/// The name of the spec member whose description points to `tool`.
fn member_pointing_to(schema: &Value, defs: &Map<String, Value>, tool: &str) -> Option<String> {
    let mut stack = vec![schema.clone()];
    stack.extend(defs.values().cloned());
    while let Some(s) = stack.pop() {
        for (key, p) in s["properties"].as_object().into_iter().flatten() {
            if p["description"].as_str().is_some_and(|d| d.contains(tool)) {
                return Some(key.clone());
            }
            stack.push(p.clone());
            stack.push(p["items"].clone());
        }
    }
    None
}

struct Agent {
    server: Server,
    propose_schema: Value,
    calls: usize,
}

impl Agent {
    async fn start() -> Agent {
        let server = Launch::serve().args(&["--toolsets", "all,mutate"]).client(TestClient::accepting()).stdio().await;
        let tools = server.client.list_all_tools().await.unwrap();
        let propose = tools.iter().find(|t| t.name == "fabric_propose_change").unwrap();
        Agent { propose_schema: Value::Object((*propose.input_schema).clone()), server, calls: 0 }
    }

    async fn call(&mut self, tool: &str, args: Value) -> Value {
        self.calls += 1;
        let r = self.server.call(tool, args.clone()).await;
        assert!(!is_error(&r), "{tool} {args} failed: {:?}", r.structured_content);
        structured(&r)
    }

    fn defs(&self) -> Map<String, Value> {
        self.propose_schema["$defs"].as_object().cloned().unwrap_or_default()
    }

    /// A port by name: its uuid and encapsulation, and a free VLAN for the member that asks for one.
    async fn learn_port(&mut self, facts: &mut Facts, scope: &'static str, name: &str, change_type: &str) {
        let found = self.call("fabric_search_ports", json!({"name": name})).await;
        let port = rows(&found, "ports").into_iter().find(|p| p["name"] == name).expect("the port is found");
        facts.set(scope, "port", port["uuid"].clone());
        facts.set(scope, "encapsulation", port["encapsulation"].clone());
        let vlans = self.call("fabric_list_port_vlans", json!({"port_id": port["uuid"]})).await;
        let used: Vec<u64> = rows(&vlans, "vlans_in_use").iter().filter_map(|v| v["vlan_tag"].as_u64()).collect();
        let free = (300..4000).find(|v| !used.contains(v)).unwrap();
        let schema = spec_schema(&self.propose_schema, change_type);
        let member =
            member_pointing_to(&schema, &self.defs(), "fabric_list_port_vlans").expect("a member asks for a VLAN");
        facts.set(scope, &member, json!(free));
    }

    /// A provider's profile by name in a metro, for the Z-side: its uuid, the metro, and what the
    /// profile says a connection must bring, under the spec's own member names.
    async fn learn_profile(&mut self, facts: &mut Facts, name: &str, metro: &str) -> Value {
        let found = self.call("fabric_search_service_profiles", json!({"name": name, "metro": metro})).await;
        let profile = rows(&found, "service_profiles").into_iter().find(|p| p["name"] == name).expect("the profile");
        facts.set("zSide", "profile", profile["uuid"].clone());
        facts.set("zSide", "metroCode", json!(metro));
        if profile.get("authentication_key").is_some() {
            facts.set("zSide", "authentication_key", json!("123456789012")); // the person's AWS account
        }
        if let Some(region) = profile["seller_regions"].as_array().and_then(|r| r.first()) {
            facts.set("zSide", "seller_region", region.clone());
        }
        profile
    }

    /// Builds the spec from the schema and facts, proposes (which must pass), confirms.
    async fn create(&mut self, change_type: &str, facts: &Facts, task: &str) -> Value {
        let schema = spec_schema(&self.propose_schema, change_type);
        let defs = self.defs();
        let filler = Filler { defs: &defs, facts, task: task.to_string() };
        let (spec, _) =
            filler.fill(&schema, "spec", &mut Vec::new(), &Value::Null).expect("the facts fill every required member");
        println!("{change_type}: {spec}");
        let proposal = self.call("fabric_propose_change", json!({"change_type": change_type, "spec": spec})).await;
        let out = self.call("fabric_confirm_change", json!({"confirm_token": proposal["confirm_token"]})).await;
        assert_eq!(out["executed"], true, "{out}");
        out
    }
}

#[tokio::test]
async fn a_schema_driven_agent_connects_a_port_to_a_provider_in_five_calls() {
    let task = "connect port DC-PRI-01 to AWS Direct Connect in DC at 500 Mbps";
    let mut agent = Agent::start().await;
    let mut facts = Facts::default();
    facts.set(".", "name", json!("dc-pri-01-to-aws"));
    facts.set(".", "bandwidth", json!(500));
    facts.set("", "email", json!("noc@example.com"));
    agent.learn_port(&mut facts, "aSide", "DC-PRI-01", "connection_create").await;
    let profile = agent.learn_profile(&mut facts, "AWS Direct Connect", "DC").await;
    let out = agent.create("connection_create", &facts, task).await;
    assert!(agent.calls <= 5, "{} calls", agent.calls);
    let made = agent.call("fabric_get_connection", json!({"connection_id": out["created"]["uuid"]})).await;
    let c = &made["connection"];
    assert_eq!(
        (c["bandwidth"].as_u64(), c["zSide"]["accessPoint"]["profile"]["uuid"].as_str()),
        (Some(500), profile["uuid"].as_str())
    );
    agent.server.stop().await;
}

#[tokio::test]
async fn a_schema_driven_agent_creates_a_network_and_a_service_token() {
    let mut agent = Agent::start().await;
    let mut facts = Facts::default();
    facts.set(".", "name", json!("agent-net"));
    facts.set("", "email", json!("noc@example.com"));
    agent.create("network_create", &facts, "create a REGIONAL EVPLAN network in AMER").await;
    assert_eq!(agent.calls, 2);

    agent.calls = 0;
    let mut facts = Facts::default();
    facts.set(".", "name", json!("agent-token"));
    facts.set("", "email", json!("noc@example.com"));
    facts.set("", "date-time", json!("2031-01-01T00:00:00Z"));
    agent.learn_port(&mut facts, "aSide", "DC-PRI-01", "service_token_create").await;
    let out = agent.create("service_token_create", &facts, "a service token for port DC-PRI-01").await;
    assert!(agent.calls <= 5, "{} calls", agent.calls);
    assert!(out["created"]["uuid"].as_str().is_some(), "{out}");
    agent.server.stop().await;
}

#[tokio::test]
async fn a_schema_driven_agent_connects_a_cloud_router_to_a_provider_in_four_calls() {
    let task = "connect our Cloud Router in DC to AWS Direct Connect at 50 Mbps";
    let mut agent = Agent::start().await;
    let mut facts = Facts::default();
    facts.set(".", "name", json!("dc-fcr-to-aws-50"));
    facts.set(".", "bandwidth", json!(50));
    facts.set("", "email", json!("noc@example.com"));
    let found = agent.call("fabric_search_cloud_routers", json!({"metro": "DC", "state": "PROVISIONED"})).await;
    let router = rows(&found, "cloud_routers").into_iter().next().expect("a router in DC");
    facts.set("aSide", "router", router["uuid"].clone());
    agent.learn_profile(&mut facts, "AWS Direct Connect", "DC").await;
    let out = agent.create("connection_create", &facts, task).await;
    assert!(agent.calls <= 4, "{} calls (the issue allows five)", agent.calls);
    let made = agent.call("fabric_get_connection", json!({"connection_id": out["created"]["uuid"]})).await;
    let c = &made["connection"];
    assert_eq!((c["type"].as_str(), c["bandwidth"].as_u64()), (Some("IP_VC"), Some(50)), "{c}");
    assert_eq!(c["aSide"]["accessPoint"]["router"]["uuid"], router["uuid"], "{c}");
    agent.server.stop().await;
}

/// The served tool whose arguments include `arg` and whose description mentions every word.
fn tool_for<'t>(tools: &'t [rmcp::model::Tool], arg: &str, words: &[&str]) -> &'t str {
    tools
        .iter()
        .find(|t| {
            let text = t.description.as_deref().unwrap_or_default().to_lowercase();
            t.input_schema["properties"].get(arg).is_some() && words.iter().all(|w| text.contains(w))
        })
        .map(|t| t.name.as_ref())
        .unwrap_or_else(|| panic!("no tool takes {arg} and speaks of {words:?}"))
}

/// The member of a page holding its rows (whatever the tool calls them).
fn row_key(page: &Value) -> String {
    let members = page.as_object().expect("a page is an object");
    members.keys().find(|k| *k != "columns" && members[*k].is_array()).expect("a page has rows").clone()
}

/// Every string in a page's rows, with the column it is in.
fn strings(page: &Value, key: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for row in rows(page, key) {
        for (column, v) in row.as_object().into_iter().flatten() {
            if let Some(s) = v.as_str() {
                out.push((column.clone(), s.to_string()));
            }
        }
    }
    out
}

#[tokio::test]
async fn an_agent_finds_why_a_connection_passes_no_traffic_in_four_calls() {
    // the task names the connection; the agent knows only tools/list and what the tools answer
    let task_connection = "dc-fcr-to-azure";
    let mut agent = Agent::start().await;
    let tools = agent.server.client.list_all_tools().await.unwrap();
    let found = agent.call("fabric_search_connections", json!({"name": task_connection})).await;
    let connection = rows(&found, "connections").into_iter().find(|c| c["name"] == task_connection).unwrap();
    let id = connection["uuid"].clone();

    let sessions = tool_for(&tools, "connection_id", &["session", "why"]);
    let page = agent.call(sessions, json!({"connection_id": id})).await;
    let said = strings(&page, &row_key(&page));
    let down = said.iter().find(|(_, v)| v == "DOWN").expect("a session is down");
    let why = said.iter().find(|(c, _)| c == "error").map(|(_, v)| v.clone()).expect("and why");
    println!("{} is DOWN: {why}", down.0);

    let events = tool_for(&tools, "asset_id", &["bgp"]);
    let page = agent.call(events, json!({"asset_id": id})).await;
    let newest_failure = rows(&page, "events")
        .into_iter()
        .find(|e| e.as_object().unwrap().values().any(|v| v.as_str().is_some_and(|s| s.contains("idle"))))
        .expect("an event says the session fell idle");
    let get = tool_for(&tools, "event_id", &["message"]);
    let event = agent.call(get, json!({"event_id": newest_failure["id"]})).await;
    assert!(agent.calls <= 4, "{} calls (the issue allows five)", agent.calls);
    assert!(why.contains("hold timer expired"), "{why}");
    // the event is about this session: its subject is the connection's routing protocol, its
    // message names the peer the protocol names and says the session went down
    let event = &event["event"];
    let peer = why.split_whitespace().find(|w| w.starts_with("169.254.")).expect("the protocol names the peer");
    let message = event["data"]["message"].as_str().unwrap_or_default();
    assert!(event["subject"].as_str().unwrap_or_default().contains(id.as_str().unwrap()), "{event}");
    assert!(message.contains(peer) && message.contains("went down"), "the event explains it: {event}");
    agent.server.stop().await;
}

mod budgets;
