//! The precompiled-component cache: Cranelift output kept in a host-owned directory, keyed by
//! the component's SHA-256 and the engine's compatibility hash, so a restart loads native code in
//! about a millisecond instead of recompiling.
//!
//! Loading precompiled code runs it unchecked, so only files this host wrote are loaded: the
//! directory must belong to the current user and be writable by nobody else, and every entry
//! carries the SHA-256 of the `.wasm` it was compiled from and a checksum of its own native code,
//! both checked before wasmtime maps a byte of it (a truncated, corrupted or swapped entry is
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
pub(crate) enum Origin {
    Compiled,
    CompiledAndCached,
    LoadedFromCache,
}

/// Compiles `wasm`, or loads this host's own earlier compilation of the same bytes.
pub(crate) fn load(
    engine: &Engine,
    wasm: &[u8],
    sha256: &str,
    dir: Option<&Path>,
) -> anyhow::Result<(Component, Origin)> {
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

/// The entry at `path`, if there is one this host wrote for `sha256` on this engine. Its code is
/// mapped from the file, not read and copied (the copies were about a seventh of a warm start); where
/// the file cannot be mapped executable (a cache on a `noexec` mount) it is read instead.
#[allow(unsafe_code)] // one of the two places `unsafe` is allowed: a host-made precompiled component
fn load_entry(engine: &Engine, path: &Path, sha256: &str) -> Option<Component> {
    if !path.is_file() {
        return None;
    }
    if let Err(e) = check_private_file(path).and_then(|()| check_entry(path, sha256)) {
        tracing::warn!("ignoring cache entry {}: {e:#}; recompiling", path.display());
        return None;
    }
    // SAFETY: the entry is in a directory owned by this user and writable by nobody else, named
    // after the SHA-256 of the very `.wasm` being loaded and this engine's compatibility hash; its
    // trailer names that same `.wasm` and the checksum of the code before it, which `check_entry`
    // just recomputed, so these are the bytes `store` wrote from `Engine::precompile_component`
    // output. Between that check and this mapping only this user could replace the file (`store`
    // renames a whole new entry into place, never rewrites one), and this user could as well write
    // a consistent entry (docs/security.md). wasmtime reads the code from the start of the file,
    // the trailer after it is not in any of its sections, and it rejects code built by another
    // version or configuration.
    let mapped = unsafe { Component::deserialize_file(engine, path) };
    let error = match mapped {
        Ok(c) => return Some(c),
        Err(e) => e,
    };
    tracing::debug!("cannot map cache entry {}: {error:#}; reading it instead", path.display());
    match read_entry(path, sha256) {
        // SAFETY: as above; `read_entry` checked these very bytes' trailer and checksum.
        Ok(code) => match unsafe { Component::deserialize(engine, &code) } {
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

/// An entry: the code as wasmtime made it (an ELF object, which must start the file for wasmtime
/// to map it), then a trailer of fixed length: a newline, the SHA-256 of the `.wasm` (64 hex
/// digits), a newline, the XXH3-128 of the code (32), a newline and this magic. An entry of an
/// earlier version fails the magic and is compiled again.
const MAGIC: &[u8] = b"equinix-mcp precompiled v3\n";
const TRAILER_LEN: usize = 1 + 64 + 1 + 32 + 1 + MAGIC.len();

/// The trailer that follows `code`.
fn trailer(wasm_sha256: &str, code_checksum: u128) -> Vec<u8> {
    let mut t = format!("\n{wasm_sha256}\n{code_checksum:032x}\n").into_bytes();
    t.extend_from_slice(MAGIC);
    t
}

/// What a trailer says: the `.wasm` the code was compiled from and the code's checksum.
fn read_trailer(t: &[u8]) -> anyhow::Result<(&str, &str)> {
    if t.len() != TRAILER_LEN || !t.ends_with(MAGIC) {
        bail!("not an entry this host wrote (no trailer)");
    }
    let text = std::str::from_utf8(&t[..t.len() - MAGIC.len()]).context("a malformed trailer")?;
    let mut fields = text.strip_prefix('\n').context("a malformed trailer")?.split_terminator('\n');
    let (Some(for_wasm), Some(checksum), None) = (fields.next(), fields.next(), fields.next()) else {
        bail!("a malformed trailer");
    };
    Ok((for_wasm, checksum))
}

fn check_trailer(t: &[u8], wasm_sha256: &str, code_checksum: u128) -> anyhow::Result<()> {
    let (for_wasm, recorded) = read_trailer(t)?;
    if for_wasm != wasm_sha256 {
        bail!("compiled from another component ({for_wasm})");
    }
    if recorded != format!("{code_checksum:032x}") {
        bail!("its code does not match its recorded checksum (corrupted or altered)");
    }
    Ok(())
}

/// Checks the entry at `path` against `wasm_sha256` and its code's own checksum, streaming the
/// code through a small buffer (nothing of its size is allocated: wasmtime maps the file next).
fn check_entry(path: &Path, wasm_sha256: &str) -> anyhow::Result<()> {
    let mut file = std::fs::File::open(path)?;
    let len = file.metadata()?.len();
    let Some(code_len) = len.checked_sub(TRAILER_LEN as u64) else {
        bail!("not an entry this host wrote (shorter than its trailer)");
    };
    let mut hasher = xxhash_rust::xxh3::Xxh3::new();
    let mut buf = vec![0u8; 64 * 1024];
    let mut left = code_len;
    while left > 0 {
        let chunk = &mut buf[..left.min(64 * 1024) as usize];
        file.read_exact(chunk)?;
        hasher.update(chunk);
        left -= chunk.len() as u64;
    }
    let mut t = [0u8; TRAILER_LEN];
    file.read_exact(&mut t)?;
    check_trailer(&t, wasm_sha256, hasher.digest128())
}

/// The code of the entry at `path`, read whole, once its trailer matches `wasm_sha256` and the
/// code's own checksum.
fn read_entry(path: &Path, wasm_sha256: &str) -> anyhow::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    std::fs::File::open(path)?.read_to_end(&mut bytes)?;
    let Some(code_len) = bytes.len().checked_sub(TRAILER_LEN) else {
        bail!("not an entry this host wrote (shorter than its trailer)");
    };
    let (code, t) = bytes.split_at(code_len);
    check_trailer(t, wasm_sha256, xxhash_rust::xxh3::xxh3_128(code))?;
    bytes.truncate(code_len);
    Ok(bytes)
}

fn store(path: &Path, wasm_sha256: &str, code: &[u8]) -> anyhow::Result<()> {
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    let mut f = crate::platform::owner_only(std::fs::OpenOptions::new().write(true).create_new(true)).open(&tmp)?;
    f.write_all(code)?;
    f.write_all(&trailer(wasm_sha256, xxhash_rust::xxh3::xxh3_128(code)))?;
    f.sync_all()?;
    std::fs::rename(&tmp, path)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const SHA: &str = "ab12000000000000000000000000000000000000000000000000000000000000";

    /// An entry of `code` for `SHA` written as `store` writes it.
    fn entry(code: &[u8]) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("e.cwasm");
        store(&path, SHA, code).unwrap();
        (dir, path)
    }

    #[test]
    fn an_entry_is_its_code_then_a_trailer_of_fixed_length() {
        let code: Vec<u8> = (0..200_000u32).map(|i| (i * 7) as u8).collect();
        let (_dir, path) = entry(&code);
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(bytes.len(), code.len() + TRAILER_LEN);
        assert_eq!(&bytes[..code.len()], &code[..], "the code starts the file, where wasmtime maps it");
        check_entry(&path, SHA).unwrap();
        assert_eq!(read_entry(&path, SHA).unwrap(), code);
    }

    #[test]
    fn a_damaged_short_or_foreign_entry_is_refused_by_both_readers() {
        let code = vec![0x5a; 70_000];
        let (_dir, path) = entry(&code);
        let refused = |why: &str| {
            let (streamed, read) = (check_entry(&path, SHA).unwrap_err(), read_entry(&path, SHA).unwrap_err());
            assert!(streamed.to_string().contains(why), "{streamed}");
            assert!(read.to_string().contains(why), "{read}");
        };
        let other = SHA.replace("ab12", "cd34");
        assert!(check_entry(&path, &other).unwrap_err().to_string().contains("compiled from another component"));

        let mut bytes = std::fs::read(&path).unwrap();
        bytes[65_536] ^= 1; // in the second of the streamed chunks
        std::fs::write(&path, &bytes).unwrap();
        refused("does not match its recorded checksum");

        std::fs::write(&path, &code).unwrap();
        refused("no trailer");
        std::fs::write(&path, &bytes[..TRAILER_LEN - 1]).unwrap();
        refused("shorter than its trailer");
        let old = [&b"equinix-mcp precompiled v2\n"[..], SHA.as_bytes(), b"\n", &[b'0'; 32], b"\n", &code].concat();
        std::fs::write(&path, old).unwrap();
        refused("no trailer");
    }
}
