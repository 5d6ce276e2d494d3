//! `fabric_list_metros`: GET /fabric/v4/metros, compacted for an agent.

use alloc::string::{String, ToString};
use alloc::vec::Vec;
use serde_json::{Map, Value};

use crate::args::{Args, paging_query};
use crate::capability::{FabricRequest, Host, Method};
use crate::fabric_call::{paged, send_json};
use crate::tool_error::ToolError;

pub const NAME: &str = "fabric_list_metros";

pub const SCHEMA: &str = r#"{
  "type": "object",
  "properties": {
    "presence": {"type": "string", "enum": ["MY_PORTS"], "description": "MY_PORTS: only metros where your organisation has ports"},
    "offset": {"type": "integer", "minimum": 0, "maximum": 100000, "default": 0, "description": "Index of the first metro to return"},
    "limit": {"type": "integer", "minimum": 1, "maximum": 100, "default": 20, "description": "Page size (1-100)"},
    "raw": {"type": "boolean", "default": false, "description": "Return Fabric's full metro objects instead of the compact form"}
  },
  "additionalProperties": false
}"#;

pub const DESCRIPTION: &str = "List Equinix Fabric metros (code, name, region, ASN, local bandwidth cap). \
Paged: the result has `total` and `next_offset` (null on the last page). Use the metro codes in port \
searches and change specs.";

/// Builds the Fabric request for the given arguments.
pub fn request(args: &Args) -> Result<(FabricRequest, u64, bool), ToolError> {
    let presence = args.opt_enum("presence", &["MY_PORTS"])?;
    let (offset, limit, raw) = args.paging()?;
    let mut query = paging_query(offset, limit);
    if let Some(p) = presence {
        query.push(("presence".to_string(), p.to_string()));
    }
    let req = FabricRequest { method: Method::Get, path: "/fabric/v4/metros".into(), query, body: None };
    Ok((req, offset, raw))
}

pub fn call(host: &mut impl Host, arguments: &str) -> Result<Value, ToolError> {
    let args = Args::parse(arguments, &["presence", "offset", "limit", "raw"])?;
    let (req, offset, raw) = request(&args)?;
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
        let args =
            Args::parse(r#"{"presence":"MY_PORTS","offset":40,"limit":10}"#, &["presence", "offset", "limit", "raw"])
                .unwrap();
        let (req, offset, raw) = request(&args).unwrap();
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
        let err = call(&mut host, r#"{"offset": 5}"#).unwrap_err();
        assert_eq!(err.kind, "fabric_error");
        assert!(err.message.contains("EQ-3036013"));
        assert_eq!(host.sent.len(), 1);
    }

    #[test]
    fn bad_arguments_send_nothing() {
        let mut host = FakeHost::answering(200, "{}");
        assert!(call(&mut host, r#"{"limit": 0}"#).is_err());
        assert!(host.sent.is_empty());
    }
}
