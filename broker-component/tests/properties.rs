//! Property tests and a bounded fuzz harness (proptest, stable Rust) for spec parsing and
//! compilation and for tool-argument handling. `PROPTEST_CASES` scales the run; the campaign
//! (`tests/campaign.sh`) runs it with many more cases and reports executions and crashes.

use equinix_broker_component::capability::*;
use equinix_broker_component::spec::{ChangeType, Spec};
use equinix_broker_component::{call_tool, catalog};
use proptest::prelude::*;
use serde_json::{Map, Value, json};

fn base_connection() -> Value {
    json!({
        "type": "EVPL_VC", "name": "prop-conn", "bandwidth": 1000,
        "aSide": {"accessPoint": {"type": "COLO", "port": {"uuid": "c4d9350e-783c-83cd-1ce0-306a5c00a600"}, "linkProtocol": {"type": "DOT1Q", "vlanTag": 1001}}},
        "zSide": {"accessPoint": {"type": "SP", "profile": {"type": "L2_PROFILE", "uuid": "9f4b3a7e-1c2d-4e5f-8a9b-0c1d2e3f4a01"}, "location": {"metroCode": "DC"}}},
        "project": {"projectId": "ac4d34ca-0d9c-4bc2-9aab-1234567abcde"},
        "order": {"purchaseOrderNumber": "PO-1", "termLength": 12},
        "notifications": [{"type": "ALL", "emails": ["noc@example.com", "ops@example.com"]}]
    })
}

/// Writes `v` as JSON with object keys in an order chosen by `seed` and random whitespace.
fn scrambled(v: &Value, seed: &mut u64) -> String {
    let mut next = || {
        *seed ^= *seed << 13;
        *seed ^= *seed >> 7;
        *seed ^= *seed << 17;
        *seed
    };
    fn ws(n: u64) -> &'static str {
        ["", " ", "\n", "\t ", "  \r\n"][(n % 5) as usize]
    }
    fn go(v: &Value, next: &mut dyn FnMut() -> u64, out: &mut String) {
        match v {
            Value::Object(m) => {
                let mut keys: Vec<&String> = m.keys().collect();
                for i in (1..keys.len()).rev() {
                    keys.swap(i, (next() % (i as u64 + 1)) as usize);
                }
                out.push('{');
                for (i, k) in keys.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    out.push_str(ws(next()));
                    out.push_str(&serde_json::to_string(k).unwrap());
                    out.push_str(ws(next()));
                    out.push(':');
                    out.push_str(ws(next()));
                    go(&m[*k], next, out);
                }
                out.push_str(ws(next()));
                out.push('}');
            }
            Value::Array(a) => {
                out.push('[');
                for (i, x) in a.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    out.push_str(ws(next()));
                    go(x, next, out);
                }
                out.push(']');
            }
            other => out.push_str(&other.to_string()),
        }
    }
    let mut out = String::new();
    go(v, &mut next, &mut out);
    out
}

fn hash_of(v: &Value) -> Option<String> {
    Spec::parse(ChangeType::ConnectionCreate, v, "/spec").ok().map(|s| s.compile().request_sha256)
}

/// Every leaf of `v` as a JSON pointer.
fn leaves(v: &Value, path: String, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => m.iter().for_each(|(k, x)| leaves(x, format!("{path}/{k}"), out)),
        Value::Array(a) => a.iter().enumerate().for_each(|(i, x)| leaves(x, format!("{path}/{i}"), out)),
        _ => out.push(path),
    }
}

fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<f64>().prop_filter("finite", |f| f.is_finite()).prop_map(|f| json!(f)),
        ".{0,12}".prop_map(Value::String),
        prop::sample::select(vec![
            "EVPL_VC",
            "COLO",
            "DOT1Q",
            "ALL",
            "chg-",
            "DC",
            "c4d9350e-783c-83cd-1ce0-306a5c00a600"
        ])
        .prop_map(|s| json!(s)),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        let keys = prop::sample::select(vec![
            "type",
            "name",
            "bandwidth",
            "aSide",
            "zSide",
            "accessPoint",
            "port",
            "uuid",
            "linkProtocol",
            "vlanTag",
            "notifications",
            "emails",
            "project",
            "projectId",
            "scope",
            "location",
            "region",
            "connection",
            "expirationDateTime",
            "accessPointSelectors",
            "change_type",
            "spec",
            "confirm_token",
            "limit",
            "offset",
            "x",
        ]);
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec((keys, inner), 0..6)
                .prop_map(|kv| Value::Object(kv.into_iter().map(|(k, v)| (k.to_string(), v)).collect::<Map<_, _>>())),
        ]
    })
}

/// A host that answers every request with a fixed 200 and never approves (it cannot mint an
/// approval: only the real host can).
struct Echo;

impl Host for Echo {
    fn fabric_send(&mut self, r: FabricRequest) -> Result<FabricResponse, FabricError> {
        Ok(FabricResponse { status: 200, body: r.body.unwrap_or_else(|| "{}".into()), correlation_id: None })
    }
    fn now_ms(&mut self) -> u64 {
        1_700_000_000_000
    }
    fn delivery(&mut self) -> Delivery {
        Delivery::Blocking
    }
    fn ask(&mut self, _t: &str, _r: CreateRequest, _p: Prompt) -> Result<Answer, String> {
        Ok(Answer { status: ConfirmStatus::Declined, approval: None })
    }
    fn execute(&mut self, _a: Approval) -> Result<FabricResponse, FabricError> {
        unreachable!("no approval is ever minted here")
    }
    fn store_put(&mut self, _r: Vec<u8>, _v: &str, _e: u64, _c: u32) -> Result<Stored, String> {
        Ok(Stored { token: "chg-00000000000000000000000000000001".into(), evicted: vec![] })
    }
    fn store_peek(&mut self, _t: &str) -> Taken {
        Taken::Unknown
    }
    fn store_take(&mut self, _t: &str) -> Taken {
        Taken::Unknown
    }
    fn store_settle(&mut self, _t: &str, _o: Vec<u8>) {}
}

proptest! {
    #[test]
    fn canonicalisation_ignores_key_order_and_whitespace(seed in 1u64..) {
        let base = base_connection();
        let text = scrambled(&base, &mut seed.clone());
        let reparsed: Value = serde_json::from_str(&text).unwrap();
        prop_assert_eq!(hash_of(&reparsed), hash_of(&base));
    }

    #[test]
    fn canonicalisation_is_idempotent(seed in 1u64..) {
        let base = base_connection();
        let spec = Spec::parse(ChangeType::ConnectionCreate, &serde_json::from_str(&scrambled(&base, &mut seed.clone())).unwrap(), "/spec").unwrap();
        let once = spec.compile();
        let twice = Spec::parse(ChangeType::ConnectionCreate, &serde_json::from_str(&once.body).unwrap(), "/spec").unwrap().compile();
        prop_assert_eq!(once, twice);
    }

    #[test]
    fn any_semantic_change_alters_the_hash_or_is_refused(pick in any::<prop::sample::Index>(), bump in 1u64..50) {
        let base = base_connection();
        let mut paths = Vec::new();
        leaves(&base, String::new(), &mut paths);
        let path = pick.get(&paths);
        let mut changed = base.clone();
        let leaf = changed.pointer_mut(path).unwrap();
        *leaf = match leaf.clone() {
            Value::String(s) => json!(format!("{s}{bump}")),
            Value::Number(n) => json!(n.as_u64().unwrap() + bump),
            Value::Bool(b) => json!(!b),
            other => other,
        };
        let (before, after) = (hash_of(&base).unwrap(), hash_of(&changed));
        prop_assert_ne!(Some(before), after, "changing {} kept the hash", path);
    }

    #[test]
    fn fuzz_spec_parsing_never_panics(v in arb_json(), kind in 0usize..ChangeType::ALL.len()) {
        let change = ChangeType::ALL[kind];
        if let Ok(spec) = Spec::parse(change, &v, "/spec") {
            let c = spec.compile();
            // what compiles, recompiles to itself
            let again = Spec::parse(change, &serde_json::from_str(&c.body).unwrap(), "/spec").unwrap().compile();
            prop_assert_eq!(c, again);
        }
    }

    #[test]
    fn fuzz_tool_arguments_never_panic(v in arb_json(), tool in any::<prop::sample::Index>(), text in ".{0,40}") {
        let names: Vec<&str> = catalog::tools().map(|t| t.name).collect();
        let name = tool.get(&names);
        // a JSON value and arbitrary text; errors are fine, panics are not
        let _ = call_tool(&mut Echo, name, &v.to_string());
        let _ = call_tool(&mut Echo, name, &text);
    }
}
