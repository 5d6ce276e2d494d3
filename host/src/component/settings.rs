//! The component's flags: which `.wasm` runs and what is required of it (`--component`, its pin,
//! its signature, the precompile cache), and the limits of each call's sandbox.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::bail;
use clap::Args;

use super::{Limits, MAX_MEMORY_BYTES, read_component, sha256_hex, signature};

/// Where the broker component comes from.
#[derive(Args, Debug, Clone, Default)]
pub struct ComponentArgs {
    /// Use this `.wasm` component instead of the embedded one (never a precompiled `.cwasm`).
    #[arg(long, env = "EQUINIX_MCP_COMPONENT", value_name = "PATH")]
    pub component: Option<PathBuf>,

    /// Refuse to start unless the component's SHA-256 is this (lowercase hex). A pinned component
    /// is compiled from its bytes at every start, never loaded from the precompile cache.
    #[arg(long, env = "EQUINIX_MCP_COMPONENT_SHA256", value_name = "HEX")]
    pub(crate) component_sha256: Option<String>,

    /// Require a minisign signature of the component's bytes (COMPONENT.wasm.minisig, as
    /// `minisign -Sm` writes it) by one of these public keys (minisign `.pub` files; repeatable,
    /// or comma-separated in the env var). The embedded component needs none.
    #[arg(
        long = "component-public-key",
        env = "EQUINIX_MCP_COMPONENT_PUBLIC_KEYS",
        value_delimiter = ',',
        value_name = "FILE"
    )]
    pub(crate) component_public_keys: Vec<PathBuf>,

    /// Directory of the precompiled-component cache (default: the user's cache dir).
    #[arg(long, env = "EQUINIX_MCP_CACHE_DIR", value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,

    /// Compile the component at every start instead of using the cache.
    #[arg(long, env = "EQUINIX_MCP_NO_CACHE", value_parser = clap::builder::BoolishValueParser::new())]
    pub(crate) no_cache: bool,
}

/// The component's bytes and where they came from.
pub(crate) struct ComponentSource {
    pub wasm: std::borrow::Cow<'static, [u8]>,
    /// Its SHA-256 (lowercase hex): hashed once, here (the embedded one by the build).
    pub sha256: String,
    pub origin: String,
    /// Who signed it, when `--component-public-key` asked.
    pub signer: Option<signature::Signer>,
}

impl ComponentArgs {
    /// Reads the chosen component and enforces the operator's SHA-256 pin.
    pub(crate) fn source(&self) -> anyhow::Result<ComponentSource> {
        let source = match &self.component {
            Some(path) => {
                let wasm = read_component(path)?;
                let signer = match self.component_public_keys.is_empty() {
                    true => None,
                    false => Some(signature::verify(&wasm, path, &self.component_public_keys)?),
                };
                let origin = match &signer {
                    Some(s) => {
                        format!("{} (signed by minisign key {}: {})", path.display(), s.key_id, s.trusted_comment)
                    }
                    None => path.display().to_string(),
                };
                ComponentSource { sha256: sha256_hex(&wasm), wasm: wasm.into(), origin, signer }
            }
            // part of the host: trusted as the host binary is
            None => ComponentSource {
                wasm: crate::EMBEDDED_COMPONENT.into(),
                sha256: crate::EMBEDDED_COMPONENT_SHA256.into(),
                origin: "embedded".into(),
                signer: None,
            },
        };
        if let Some(pin) = &self.component_sha256 {
            let actual = &source.sha256;
            if !pin.trim().eq_ignore_ascii_case(actual) {
                bail!(
                    "component {} has SHA-256 {actual}, but EQUINIX_MCP_COMPONENT_SHA256 / --component-sha256 \
                     pins {}; refusing to start",
                    source.origin,
                    pin.trim()
                );
            }
        }
        Ok(source)
    }

    /// Where precompiled code may be loaded from: nowhere when the operator pinned the
    /// component's SHA-256 or asked for its signature, so the pin describes the code that runs (it is compiled from the
    /// pinned bytes at every start, at the cost of the compile time).
    pub(crate) fn cache_dir(&self) -> Option<PathBuf> {
        // a signature, like a pin, describes the code that runs only if it is compiled from
        // the verified bytes
        if self.no_cache || self.component_sha256.is_some() || !self.component_public_keys.is_empty() {
            None
        } else {
            self.cache_dir.clone().or_else(super::cache::default_dir)
        }
    }
}

/// What each call's sandbox may use.
#[derive(Args, Debug, Clone)]
pub struct LimitsArgs {
    /// Guest CPU time allowed per component call, in milliseconds (time waiting on Fabric or a
    /// person does not count).
    #[arg(
        long,
        env = "EQUINIX_MCP_GUEST_TIME_MS",
        default_value_t = 2_000,
        value_name = "MS",
        value_parser = crate::value_parsers::at_least_one_ms(),
    )]
    pub(crate) guest_time_ms: u64,

    /// Linear memory allowed per component instance, in MiB.
    #[arg(long, env = "EQUINIX_MCP_MEMORY_MIB", default_value_t = 64, value_name = "MIB", value_parser = memory_mib())]
    pub(crate) memory_mib: usize,
}

impl LimitsArgs {
    pub(crate) fn limits(&self) -> Limits {
        Limits {
            guest_time: Duration::from_millis(self.guest_time_ms),
            memory_bytes: self.memory_mib << 20,
            ..Limits::default()
        }
    }
}

/// An instance's memory in MiB, up to what the engine reserves for any instance.
fn memory_mib() -> clap::builder::RangedU64ValueParser<usize> {
    clap::builder::RangedU64ValueParser::<usize>::new().range(1..=(MAX_MEMORY_BYTES >> 20) as u64)
}
