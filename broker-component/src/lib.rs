//! The Safe Mutation Broker component.
//!
//! Built for `wasm32-wasip2` as a `#![no_std]` component that imports exactly the `broker`
//! world of `wit/broker.wit`. All logic lives in plain modules over the [`capability::Host`]
//! trait so it unit-tests natively (`cargo test -p equinix-broker-component`); `glue.rs` is the
//! only file that touches the generated bindings.
#![cfg_attr(target_arch = "wasm32", no_std)]

extern crate alloc;

pub mod args;
pub mod capability;
pub mod catalog;
pub mod confirm;
pub mod fabric_call;
pub mod fabric_enums;
pub mod grammar;
pub mod json;
pub mod price;
pub mod proposal;
pub mod propose;
pub mod reads;
pub mod spec;
pub mod time;
pub mod tool;
pub mod tool_error;

#[cfg(test)]
mod broker_tests;
#[cfg(test)]
mod test_host;

#[cfg(target_arch = "wasm32")]
mod glue;
#[cfg(target_arch = "wasm32")]
mod runtime;

use alloc::format;
use alloc::string::String;

use capability::Host;
use json::{discard, json_text};
use tool_error::ToolError;

/// Runs the tool `name` with JSON `arguments`; `Err` is the JSON text of a tool error.
pub fn call_tool(host: &mut dyn Host, name: &str, arguments: &str) -> Result<String, String> {
    let result = match catalog::find(name) {
        Some(tool) => args::parse(arguments).and_then(|raw| {
            let checked = tool.check(&raw);
            discard(raw);
            let checked = checked?;
            let out = (tool.run)(host, &checked);
            discard(checked);
            out
        }),
        None => Err(ToolError::new(
            "unknown_tool",
            format!("this component has no tool named {:?}", equinix_broker_contract::clip(name, 128)),
        )),
    };
    result
        .map(|v| {
            let text = json_text(&v);
            discard(v);
            text
        })
        .map_err(|e| e.to_json())
}

#[cfg(test)]
mod tests {
    use super::*;
    use test_host::FakeHost;

    #[test]
    fn unknown_tool_is_a_tool_error() {
        let mut host = FakeHost::answering(200, "{}");
        let err = call_tool(&mut host, "fabric_delete_everything", "{}").unwrap_err();
        assert!(err.contains("unknown_tool") && err.contains("fabric_delete_everything"));
        assert!(host.sent.is_empty());
    }

    #[test]
    fn list_metros_round_trip() {
        let body = r#"{"pagination":{"offset":0,"limit":20,"total":1},"data":[{"code":"SV","name":"Silicon Valley"}]}"#;
        let mut host = FakeHost::answering(200, body);
        let out = call_tool(&mut host, "fabric_list_metros", "{}").unwrap();
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(crate::fabric_call::objects(&v, "metros")[0]["code"], "SV");
        assert_eq!(v["next_offset"], serde_json::Value::Null);
    }
}
