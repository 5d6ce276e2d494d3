//! `fabric_list_metros`: GET /fabric/v4/metros, compacted for an agent.

use alloc::string::{String, ToString};
use alloc::vec::Vec;
use serde_json::{Map, Value};

use crate::args::{LIMIT, OFFSET, paging, paging_query, text};
use crate::capability::{FabricRequest, Host, Method};
use crate::fabric_call::{paged, send_json};
use crate::fabric_enums::PRESENCES;
use crate::grammar::{Kind, Object, arguments, opt};
use crate::tool::{Output, READ_ONLY, ToolDef};
use crate::tool_error::ToolError;

pub(crate) const NAME: &str = "fabric_list_metros";

static ARGS: Object =
    arguments(&[opt("presence", Kind::Enum(PRESENCES), "MY_PORTS: where you have ports"), OFFSET, LIMIT]);

pub(crate) static TOOL: ToolDef = ToolDef {
    name: NAME,
    toolset: "metros",
    title: "List metros",
    description: "Fabric metros and their codes (for searches and specs).",
    args: &ARGS,
    schema_extra: None,
    hints: READ_ONLY,
    output: Output::Page("metros", &[]),
    run: call,
};

/// Builds the Fabric request for checked arguments.
pub(crate) fn request(args: &Value) -> (FabricRequest, u64) {
    let (offset, limit) = paging(args);
    let mut query = paging_query(offset, limit);
    if let Some(p) = text(args, "presence") {
        query.push(("presence".to_string(), p.to_string()));
    }
    (FabricRequest { method: Method::Get, path: "/fabric/v4/metros".into(), query, body: None }, offset)
}

pub(crate) fn call(host: &mut dyn Host, args: &Value) -> Result<Value, ToolError> {
    let (req, offset) = request(args);
    let answer = send_json(host, req)?;
    Ok(compact(answer, offset))
}

/// The agent-facing result: the fields that matter for building a spec, plus paging.
pub(crate) fn compact(answer: Value, offset: u64) -> Value {
    paged(answer, "metros", offset, compact_metro)
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
        let (req, offset) = request(&args);
        assert_eq!(req.method, Method::Get);
        assert_eq!(req.path, "/fabric/v4/metros");
        assert_eq!(offset, 40);
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
        let out = compact(answer, 0);
        assert_eq!(out["total"], 3);
        assert_eq!(out["next_offset"], 1);
        let metro = &crate::fabric_call::objects(&out, "metros")[0];
        assert_eq!(metro["code"], "DC");
        assert_eq!(metro["connected_metros"], json!(["NY"]));
        assert!(metro.get("type").is_none());
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
