//! JSON helpers the tool modules share.

use alloc::string::String;

/// Drops `value`, except in the component: its instance and all its memory are thrown away
/// when the call returns, so walking a JSON tree only to free it there is wasted time.
pub(crate) fn discard<T>(value: T) {
    #[cfg(target_arch = "wasm32")]
    core::mem::forget(value);
    #[cfg(not(target_arch = "wasm32"))]
    drop(value);
}

/// `value` as compact JSON text. Writes straight into the string; `Display` goes through the
/// formatting machinery (docs/engineering-log.md, "JSON through `fmt`").
pub(crate) fn json_text(value: &serde_json::Value) -> String {
    serde_json::to_string(value).expect("a JSON value always serializes")
}
