//! A component whose catalog breaks the host's rules: an invalid tool name and a schema that is
//! not JSON. The host must refuse it at start-up with a message naming the tool.
#![cfg_attr(target_arch = "wasm32", no_std)]

extern crate alloc;

#[cfg(target_arch = "wasm32")]
#[path = "../../../../broker-component/src/runtime.rs"]
mod runtime;

#[cfg(target_arch = "wasm32")]
#[allow(unsafe_code)] // the generated ABI glue, as the broker's own (`broker-component/src/glue.rs`)
mod glue {
    use alloc::string::String;
    use alloc::vec::Vec;

    // the world's bindings, generated from wit/ by .ci/guest-bindings (what wit_bindgen::generate!
    // would expand to, without compiling the generator into every build)
    include!("../../../../wit/guest/broker.rs");

    use exports::equinix::broker::tools;

    struct Bad;

    impl tools::Guest for Bad {
        fn catalog() -> Vec<tools::Tool> {
            alloc::vec![tools::Tool {
                name: "drop table; --".into(),
                toolset: "metros".into(),
                title: "bad".into(),
                description: "not a valid tool".into(),
                input_schema: "{not json".into(),
                output_schema: None,
                hints: tools::Hints { read_only: true, destructive: false, idempotent: true, open_world: false },
            }]
        }

        fn call(_name: String, _arguments: String) -> Result<String, String> {
            Err("{}".into())
        }
    }

    export!(Bad);
}
