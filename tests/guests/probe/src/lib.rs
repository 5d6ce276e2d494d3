//! A test component for the `broker` world. Its catalog differs from the broker's (so swapping
//! components is visible), and its tools do what a buggy or hostile component might: send
//! arbitrary Fabric requests, panic, loop forever.
#![cfg_attr(target_arch = "wasm32", no_std)]

extern crate alloc;

#[cfg(target_arch = "wasm32")]
#[path = "../../../../broker-component/src/runtime.rs"]
mod runtime;

#[cfg(target_arch = "wasm32")]
mod glue {
    use alloc::string::{String, ToString};
    use alloc::vec::Vec;
    use serde_json::{Value, json};

    wit_bindgen::generate!({ world: "broker", path: "../../../wit" });

    use equinix::broker::fabric;
    use exports::equinix::broker::tools;

    const OPEN: &str = r#"{"type":"object"}"#;

    fn tool(name: &str, toolset: &str, description: &str) -> tools::Tool {
        tools::Tool {
            name: name.into(),
            toolset: toolset.into(),
            description: description.into(),
            input_schema: OPEN.into(),
            hints: tools::Hints { read_only: true, destructive: false, idempotent: true, open_world: false },
        }
    }

    struct Probe;

    impl tools::Guest for Probe {
        fn catalog() -> Vec<tools::Tool> {
            alloc::vec![
                tool("swap_echo", "echo", "Echoes its arguments (test component)"),
                tool("raw_fabric", "probe", "Sends the given method/path/query/body through the fabric import"),
                tool("panic", "probe", "Panics"),
                tool("spin", "probe", "Loops forever"),
                tool("alloc_bomb", "probe", "Allocates memory until something gives"),
                tool("recurse", "probe", "Recurses without bound"),
            ]
        }

        fn call(name: String, arguments: String) -> Result<String, String> {
            let args: Value = serde_json::from_str(&arguments).map_err(|e| e.to_string())?;
            match name.as_str() {
                "swap_echo" => Ok(json!({"echo": args, "component": "probe"}).to_string()),
                "raw_fabric" => Ok(raw_fabric(&args)),
                "panic" => panic!("deliberate"),
                "alloc_bomb" => {
                    let mut hoard: Vec<Vec<u8>> = Vec::new();
                    loop {
                        hoard.push(alloc::vec![1u8; 1 << 20]);
                        core::hint::black_box(&hoard);
                    }
                }
                "recurse" => Ok(depth(core::hint::black_box(1)).to_string()),
                "spin" => {
                    let mut n: u64 = 0;
                    loop {
                        n = core::hint::black_box(n.wrapping_add(1));
                    }
                }
                other => Err(json!({"error": {"kind": "unknown_tool", "message": other}}).to_string()),
            }
        }

        fn preview_confirm(_token: String) -> Result<String, String> {
            Err("{}".into())
        }
    }

    fn depth(n: u64) -> u64 {
        // black_box keeps the frame alive so the recursion cannot become a loop
        let frame = core::hint::black_box([n; 64]);
        frame[0] + depth(n + 1)
    }

    fn raw_fabric(args: &Value) -> String {
        let method = if args["method"] == "POST" { fabric::Method::Post } else { fabric::Method::Get };
        let query = args["query"]
            .as_array()
            .map(|q| {
                q.iter()
                    .map(|p| (p[0].as_str().unwrap_or("").to_string(), p[1].as_str().unwrap_or("").to_string()))
                    .collect()
            })
            .unwrap_or_default();
        let body = match args["body_bytes"].as_u64() {
            Some(n) => Some("x".repeat(n as usize)),
            None => args["body"].as_str().map(|s| s.to_string()),
        };
        let req = fabric::Request { method, path: args["path"].as_str().unwrap_or("").into(), query, body };
        match fabric::send(&req) {
            Ok(r) => json!({"status": r.status, "body": r.body}).to_string(),
            Err(fabric::Error::Refused(s)) => json!({"refused": s}).to_string(),
            Err(e) => json!({"failed": alloc::format!("{e:?}")}).to_string(),
        }
    }

    export!(Probe);
}
