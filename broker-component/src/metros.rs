//! `fabric_list_metros`: GET /fabric/v4/metros, compacted for an agent.

use alloc::string::{String, ToString};
use alloc::vec::Vec;
use serde_json::{Map, Value};

use crate::args::{LIMIT, OFFSET, RAW, paging, paging_query, text};
use crate::capability::{FabricRequest, Host, Method};
use crate::catalog::{READ_ONLY, ToolDef};
use crate::fabric_call::{paged, send_json};
use crate::fabric_enums::PRESENCES;
use crate::grammar::{Kind, Object, opt};
use crate::tool_error::ToolError;

pub const NAME: &str = "fabric_list_metros";

static ARGS: Object = Object {
    fields: &[
        opt("presence", Kind::Enum(PRESENCES), "MY_PORTS: only metros where your organisation has ports"),
        OFFSET,
        LIMIT,
        RAW,
    ],
    rule: None,
    rule_doc: "",
};

pub static TOOL: ToolDef = ToolDef {
    name: NAME,
    toolset: "metros",
    title: "List Fabric metros",
    description: "List Equinix Fabric metros (code, name, region, ASN, local bandwidth cap). Paged: the result has \
`total` and `next_offset` (null on the last page). Use the metro codes in port searches and change specs.",
    args: &ARGS,
    schema_extra: None,
    hints: READ_ONLY,
    run: call,
};

/// Builds the Fabric request for checked arguments.
pub fn request(args: &Value) -> (FabricRequest, u64, bool) {
    let (offset, limit, raw) = paging(args);
    let mut query = paging_query(offset, limit);
    if let Some(p) = text(args, "presence") {
        query.push(("presence".to_string(), p.to_string()));
    }
    (FabricRequest { method: Method::Get, path: "/fabric/v4/metros".into(), query, body: None }, offset, raw)
}

pub fn call(host: &mut dyn Host, args: &Value) -> Result<Value, ToolError> {
    let (req, offset, raw) = request(args);
    let answer = send_json(host, req)?;
    Ok(compact(answer, offset, raw))
}

/// The agent-facing result: the fields that matter for building a spec, plus paging.
pub fn compact(answer: Value, offset: u64, raw: bool) -> Value {
    paged(answer, "metros", offset, raw, compact_metro)
}

fn compact_metro(m: &Value) -> Value {
    let mut out = Map::new();
    for (from, to) in [
        ("code", "code"),
        ("name", "name"),
        ("region", "region"),
        ("equinixAsn", "equinix_asn"),
        ("localVCBandwidthMax", "local_vc_bandwidth_max_mbps"),
        ("geoScopes", "geo_scopes"),
    ] {
        if let Some(v) = m.get(from) {
            out.insert(String::from(to), v.clone());
        }
    }
    if let Some(list) = m.get("connectedMetros").and_then(Value::as_array) {
        let codes: Vec<Value> = list.iter().filter_map(|c| c.get("code").cloned()).collect();
        out.insert("connected_metros".into(), Value::Array(codes));
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_host::FakeHost;
    use serde_json::json;

    #[test]
    fn request_carries_paging_and_presence() {
        let args = TOOL.check(&json!({"presence": "MY_PORTS", "offset": 40, "limit": 10})).unwrap();
        let (req, offset, raw) = request(&args);
        assert_eq!(req.method, Method::Get);
        assert_eq!(req.path, "/fabric/v4/metros");
        assert_eq!(offset, 40);
        assert!(!raw);
        assert!(req.query.contains(&("limit".into(), "10".into())));
        assert!(req.query.contains(&("presence".into(), "MY_PORTS".into())));
    }

    #[test]
    fn compact_result_keeps_spec_fields_and_next_offset() {
        let answer = json!({
            "pagination": {"offset": 0, "limit": 1, "total": 3},
            "data": [{"code": "DC", "name": "Ashburn", "region": "AMER", "type": "XF_METRO",
                      "connectedMetros": [{"code": "NY", "avgLatency": 5.0}], "equinixAsn": 64512}]
        });
        let out = compact(answer.clone(), 0, false);
        assert_eq!(out["total"], 3);
        assert_eq!(out["next_offset"], 1);
        assert_eq!(out["metros"][0]["code"], "DC");
        assert_eq!(out["metros"][0]["connected_metros"], json!(["NY"]));
        assert!(out["metros"][0].get("type").is_none());
        let raw = compact(answer, 0, true);
        assert_eq!(raw["metros"][0]["type"], "XF_METRO");
    }

    #[test]
    fn fabric_error_becomes_tool_error() {
        let mut host = FakeHost::answering(400, r#"[{"errorCode":"EQ-3036013","errorMessage":"Invalid offset"}]"#);
        let err = call(&mut host, &json!({"offset": 5})).unwrap_err();
        assert_eq!(err.kind, "fabric_error");
        assert!(err.message.contains("EQ-3036013"));
        assert_eq!(host.sent.len(), 1);
    }

    #[test]
    fn bad_arguments_send_nothing() {
        let mut host = FakeHost::answering(200, "{}");
        let out = crate::call_tool(&mut host, NAME, r#"{"limit": 0, "presence": "ALL"}"#).unwrap_err();
        assert!(out.contains("/limit") && out.contains("/presence"), "both problems named: {out}");
        assert!(host.sent.is_empty());
    }
}
