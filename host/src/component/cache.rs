//! The precompiled-component cache: Cranelift output kept in a host-owned directory, keyed by
//! the component's SHA-256 and the engine's compatibility hash, so a restart loads native code in
//! about a millisecond instead of recompiling.
//!
//! Loading precompiled code runs it unchecked, so only files this host wrote are loaded: the
//! directory must belong to the current user and be writable by nobody else. An operator swaps
//! the `.wasm`, never a `.cwasm`.

use std::hash::{Hash, Hasher};
use std::io::Write;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use wasmtime::Engine;
use wasmtime::component::Component;

/// Where the cache lives unless the operator says otherwise.
pub fn default_dir() -> Option<PathBuf> {
    dirs::cache_dir().map(|d| d.join("equinix-mcp").join("precompiled"))
}

/// How the component was obtained, for the banner and benchmarks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    Compiled,
    CompiledAndCached,
    LoadedFromCache,
}

/// Compiles `wasm`, or loads this host's own earlier compilation of the same bytes.
pub fn load(engine: &Engine, wasm: &[u8], sha256: &str, dir: Option<&Path>) -> anyhow::Result<(Component, Origin)> {
    let Some(dir) = dir else {
        return Ok((Component::new(engine, wasm)?, Origin::Compiled));
    };
    if let Err(e) = ensure_private_dir(dir) {
        tracing::warn!("precompile cache disabled: {e:#}");
        return Ok((Component::new(engine, wasm)?, Origin::Compiled));
    }
    let path = dir.join(format!("{sha256}-{}.cwasm", engine_key(engine)));
    if path.is_file() {
        match check_private_file(&path) {
            // SAFETY: the file is in a directory owned by this user and writable by nobody else,
            // named after the SHA-256 of the very `.wasm` being loaded and this engine's
            // compatibility hash, and was written only by `store` below from
            // `Engine::precompile_component` output. wasmtime additionally rejects files built
            // by another version or configuration.
            Ok(()) => match unsafe { Component::deserialize_file(engine, &path) } {
                Ok(c) => return Ok((c, Origin::LoadedFromCache)),
                Err(e) => tracing::warn!("ignoring unusable cache entry {}: {e:#}", path.display()),
            },
            Err(e) => tracing::warn!("ignoring cache entry {}: {e:#}", path.display()),
        }
    }
    let bytes = engine.precompile_component(wasm).map_err(anyhow::Error::from).context("compiling the component")?;
    if let Err(e) = store(&path, &bytes) {
        tracing::warn!("could not write the precompile cache {}: {e:#}", path.display());
    }
    // SAFETY: `bytes` was produced by `precompile_component` on this very engine a moment ago.
    let component = unsafe { Component::deserialize(engine, &bytes)? };
    Ok((component, Origin::CompiledAndCached))
}

/// A stable text key for the engine's compatibility hash (wasmtime version + settings).
pub fn engine_key(engine: &Engine) -> String {
    // DefaultHasher::new() uses fixed keys, so the key is stable across runs of one binary;
    // a different binary at worst misses the cache.
    let mut h = std::collections::hash_map::DefaultHasher::new();
    engine.precompile_compatibility_hash().hash(&mut h);
    format!("{:016x}", h.finish())
}

fn ensure_private_dir(dir: &Path) -> anyhow::Result<()> {
    if !dir.exists() {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    }
    let meta = std::fs::metadata(dir)?;
    // /proc/self belongs to this process's effective uid.
    let uid = std::fs::metadata("/proc/self").context("reading the current uid")?.uid();
    if meta.uid() != uid {
        bail!("{} belongs to uid {}, not to this user ({uid})", dir.display(), meta.uid());
    }
    if meta.mode() & 0o022 != 0 {
        bail!("{} is writable by other users (mode {:o})", dir.display(), meta.mode() & 0o777);
    }
    Ok(())
}

fn check_private_file(path: &Path) -> anyhow::Result<()> {
    let meta = std::fs::symlink_metadata(path)?;
    if !meta.file_type().is_file() {
        bail!("not a regular file");
    }
    if meta.mode() & 0o022 != 0 {
        bail!("writable by other users");
    }
    Ok(())
}

fn store(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    let mut f = std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(&tmp)?;
    f.write_all(bytes)?;
    f.sync_all()?;
    std::fs::rename(&tmp, path)?;
    Ok(())
}
