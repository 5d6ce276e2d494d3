//! The precompiled-component cache: Cranelift output kept in a host-owned directory, keyed by
//! the component's SHA-256 and the engine's compatibility hash, so a restart loads native code in
//! about a millisecond instead of recompiling.
//!
//! Loading precompiled code runs it unchecked, so only files this host wrote are loaded: the
//! directory must belong to the current user and be writable by nobody else, and every entry
//! carries the SHA-256 of the `.wasm` it was compiled from and a checksum of its own native code,
//! both checked before a byte of it is deserialized (a truncated, corrupted or swapped entry is
//! recompiled). The checksum is XXH3-128, not a cryptographic digest: it detects damage, and no
//! digest could do more, since whoever can write an entry can write its digest too; the
//! directory's ownership is the guard. Someone who can write the user's own files could write a
//! consistent entry, or replace the binary itself (docs/security.md). An operator swaps the
//! `.wasm`, never a `.cwasm`; `inspect` and a `--component-sha256` pin never load from the cache.

use std::hash::{Hash, Hasher};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use wasmtime::Engine;
use wasmtime::component::Component;

/// Where the cache lives unless the operator says otherwise.
pub(crate) fn default_dir() -> Option<PathBuf> {
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
    let seen = entry_inode(&path);
    if let Some(component) = load_entry(engine, &path, sha256) {
        return Ok((component, Origin::LoadedFromCache));
    }
    // Servers started together (replicas, a test suite) would each compile the same component:
    // the first to take the entry's lock compiles it, the others wait and load what it stored
    // (`store` renames a new file into place, so a new entry is a new inode).
    let _lock = lock_entry(&path);
    if entry_inode(&path) != seen
        && let Some(component) = load_entry(engine, &path, sha256)
    {
        return Ok((component, Origin::LoadedFromCache));
    }
    let bytes = engine.precompile_component(wasm).map_err(anyhow::Error::from).context("compiling the component")?;
    if let Err(e) = store(&path, sha256, &bytes) {
        tracing::warn!("could not write the precompile cache {}: {e:#}", path.display());
    }
    // SAFETY: `bytes` was produced by `precompile_component` on this very engine a moment ago.
    #[allow(unsafe_code)] // one of the two places `unsafe` is allowed: a host-made precompiled component
    let component = unsafe { Component::deserialize(engine, &bytes)? };
    Ok((component, Origin::CompiledAndCached))
}

/// The entry at `path`, if there is one this host wrote for `sha256` on this engine.
#[allow(unsafe_code)] // one of the two places `unsafe` is allowed: a host-made precompiled component
fn load_entry(engine: &Engine, path: &Path, sha256: &str) -> Option<Component> {
    if !path.is_file() {
        return None;
    }
    match check_private_file(path).and_then(|()| read_entry(path, sha256)) {
        // SAFETY: the entry is in a directory owned by this user and writable by nobody else,
        // named after the SHA-256 of the very `.wasm` being loaded and this engine's
        // compatibility hash; its header names that same `.wasm` and the checksum of the code
        // that follows, which `read_entry` just recomputed, so these are the bytes
        // `store` wrote from `Engine::precompile_component` output. wasmtime additionally
        // rejects code built by another version or configuration.
        Ok(entry) => match unsafe { Component::deserialize(engine, &entry[HEADER_LEN..]) } {
            Ok(c) => Some(c),
            Err(e) => {
                tracing::warn!("ignoring unusable cache entry {}: {e:#}", path.display());
                None
            }
        },
        Err(e) => {
            tracing::warn!("ignoring cache entry {}: {e:#}; recompiling", path.display());
            None
        }
    }
}

fn entry_inode(path: &Path) -> Option<u64> {
    std::fs::symlink_metadata(path).ok().and_then(|m| crate::platform::file_id(&m)).map(|(_, inode)| inode)
}

/// An exclusive lock on the entry at `path`, held until the returned file is dropped (the
/// kernel also drops it with the process, so no lock outlives a crash). `None` when the lock
/// file cannot be had: then this process compiles without waiting, as before there were locks.
fn lock_entry(path: &Path) -> Option<std::fs::File> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(false);
    let file = crate::platform::owner_only(&mut options)
        .open(path.with_extension("lock"))
        .map_err(|e| tracing::warn!("cannot lock the precompile cache entry {}: {e}", path.display()))
        .ok()?;
    file.lock().map_err(|e| tracing::warn!("cannot lock the precompile cache entry {}: {e}", path.display())).ok()?;
    Some(file)
}

/// A stable text key for the engine's compatibility hash (wasmtime version + settings).
pub(crate) fn engine_key(engine: &Engine) -> String {
    // DefaultHasher::new() uses fixed keys, so the key is stable across runs of one binary;
    // a different binary at worst misses the cache.
    let mut h = std::collections::hash_map::DefaultHasher::new();
    engine.precompile_compatibility_hash().hash(&mut h);
    format!("{:016x}", h.finish())
}

fn ensure_private_dir(dir: &Path) -> anyhow::Result<()> {
    if !dir.exists() {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        crate::platform::make_private_dir(dir)?;
    }
    let meta = std::fs::metadata(dir)?;
    if let (Some(owner), Some(uid)) = (crate::platform::owner(&meta), crate::platform::effective_uid())
        && owner != uid
    {
        bail!("{} belongs to uid {owner}, not to this user ({uid})", dir.display());
    }
    if let Some(mode) = crate::platform::mode(&meta)
        && mode & 0o022 != 0
    {
        bail!("{} is writable by other users (mode {mode:o})", dir.display());
    }
    Ok(())
}

fn check_private_file(path: &Path) -> anyhow::Result<()> {
    let meta = std::fs::symlink_metadata(path)?;
    if !meta.file_type().is_file() {
        bail!("not a regular file");
    }
    if crate::platform::mode(&meta).is_some_and(|mode| mode & 0o022 != 0) {
        bail!("writable by other users");
    }
    Ok(())
}

/// An entry: this magic, the SHA-256 of the `.wasm` (64 hex digits), the XXH3-128 of the code
/// (32), a newline each, then the code. An entry of an earlier version fails the magic and is
/// compiled again.
const MAGIC: &[u8] = b"equinix-mcp precompiled v2\n";
const HEADER_LEN: usize = MAGIC.len() + 65 + 33;

/// The code's checksum as the header writes it.
fn checksum(code: &[u8]) -> String {
    format!("{:032x}", xxhash_rust::xxh3::xxh3_128(code))
}

/// A cache entry (its code from [`HEADER_LEN`] on), once its header matches `wasm_sha256` and its
/// code's own checksum: read once into one buffer of its size, and not copied.
fn read_entry(path: &Path, wasm_sha256: &str) -> anyhow::Result<Vec<u8>> {
    let mut file = std::fs::File::open(path)?;
    let mut bytes = Vec::with_capacity(file.metadata().map_or(0, |m| m.len() as usize));
    file.read_to_end(&mut bytes)?;
    if bytes.len() < HEADER_LEN || !bytes.starts_with(MAGIC) {
        bail!("not an entry this host wrote (no header)");
    }
    let (header, code) = bytes.split_at(HEADER_LEN);
    let header = std::str::from_utf8(&header[MAGIC.len()..]).context("a malformed header")?;
    let (for_wasm, code_checksum) = header.split_once('\n').context("a malformed header")?;
    if for_wasm != wasm_sha256 {
        bail!("compiled from another component ({for_wasm})");
    }
    if code_checksum.trim_end() != checksum(code) {
        bail!("its code does not match its recorded checksum (corrupted or altered)");
    }
    Ok(bytes)
}

fn store(path: &Path, wasm_sha256: &str, code: &[u8]) -> anyhow::Result<()> {
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    let mut f = crate::platform::owner_only(std::fs::OpenOptions::new().write(true).create_new(true)).open(&tmp)?;
    f.write_all(MAGIC)?;
    f.write_all(format!("{wasm_sha256}\n{}\n", checksum(code)).as_bytes())?;
    f.write_all(code)?;
    f.sync_all()?;
    std::fs::rename(&tmp, path)?;
    Ok(())
}
