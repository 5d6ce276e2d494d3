//! The sandbox: one wasmtime engine, one pre-instantiated component, a fresh `Store` per call
//! with a memory cap and a guest-CPU deadline, and the precompile cache.
//!
//! No WASI is linked: the linker holds exactly the four `broker` imports, so a component that
//! imports anything else cannot be instantiated, and [`surface`] says so in words first.

pub(crate) mod cache;
pub(crate) mod settings;
pub(crate) mod signature;
pub(crate) mod surface;

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::{Context, bail};
use sha2::{Digest, Sha256};
use wasmtime::component::Linker;
use wasmtime::{
    Config, Enabled, Engine, InstanceAllocationStrategy, PoolingAllocationConfig, Store, StoreLimitsBuilder,
    UpdateDeadline,
};

use crate::bindings::{BrokerPre, tools};
use crate::capabilities::{CallState, Ending};

/// How often the engine's epoch advances; the granularity of the CPU deadline.
const EPOCH_TICK: Duration = Duration::from_millis(10);

/// Per-call limits of the sandbox.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Guest CPU time per call (time inside host imports does not count).
    pub(crate) guest_time: Duration,
    /// Linear memory per instance.
    pub(crate) memory_bytes: usize,
    /// Calls that can hold an instance at once: the pooling allocator's slots, set up at start.
    pub instances: u32,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { guest_time: Duration::from_secs(2), memory_bytes: 64 << 20, instances: MAX_CONCURRENT_INSTANCES }
    }
}

/// One tool as the component declares it.
#[derive(Clone, Debug, serde::Serialize)]
pub struct ToolDecl {
    pub name: String,
    pub toolset: String,
    pub title: String,
    pub description: String,
    pub input_schema: String,
    pub output_schema: Option<String>,
    pub read_only: bool,
    pub destructive: bool,
    pub idempotent: bool,
    pub open_world: bool,
}

/// A component call that did not produce a tool result: the component trapped or ran out of
/// its limits, or a host import it needed failed (the proposal store was unreachable). The host
/// keeps serving; the next call gets a fresh instance.
#[derive(Debug)]
pub struct Trapped {
    /// The tool-error `kind` to report: `component_failed` or `proposal_store_unavailable`.
    pub kind: &'static str,
    pub message: String,
}

/// What one tool call came to.
pub struct Called {
    /// `Ok(Ok(json))` the result, `Ok(Err(json))` a tool error, `Err` a trap.
    pub result: Result<Result<String, String>, Trapped>,
    /// The question it left waiting, the policy's decisions, whether a create left.
    pub ending: Ending,
}

/// A loaded, checked, pre-instantiated component.
pub struct ComponentRuntime {
    engine: Engine,
    pre: BrokerPre<CallState>,
    surface: surface::Surface,
    origin: cache::Origin,
    limits: Limits,
    ticker_stop: Arc<AtomicBool>,
    /// One permit per pool slot: a call waits for a free instance instead of failing on the
    /// pool's limit (forms held open are capped below it, see `mcp::fairness`).
    slots: tokio::sync::Semaphore,
}

impl Drop for ComponentRuntime {
    fn drop(&mut self) {
        self.ticker_stop.store(true, Ordering::Relaxed);
    }
}

/// Calls that can hold an instance at once (a confirmation waiting for a person holds one), on
/// a server many clients share.
pub(crate) const MAX_CONCURRENT_INSTANCES: u32 = 256;
/// The same for a server of one client over stdio: its calls at once are capped lower anyway
/// (`--max-calls-per-principal`, 64), and each slot costs its start a guard page's `mprotect`.
pub(crate) const STDIO_INSTANCES: u32 = 64;
// half the pool may hold forms open: a form for each of one client's pending proposals fits
const _: () = assert!(STDIO_INSTANCES / 2 >= crate::proposals::PENDING_PER_PRINCIPAL);

/// The largest linear memory any instance may have; `--memory-mib` caps each call below it.
pub(crate) const MAX_MEMORY_BYTES: usize = 128 << 20;

/// The engine configuration every load uses (the cache key depends on it).
///
/// Instances come from a pooling allocator: memories, tables and fiber stacks are reused across
/// calls instead of being mapped and unmapped per call, which is what made a fresh Store per call
/// expensive (page faults, and TLB-shootdown IPIs on every `munmap`).
/// `instances` sizes the pool (the compiled code does not depend on it: one cache entry serves
/// every size).
pub(crate) fn engine(instances: u32) -> anyhow::Result<Engine> {
    let mut pool = PoolingAllocationConfig::default();
    pool.total_component_instances(instances)
        .total_core_instances(instances * 4)
        .total_memories(instances * 2)
        .total_tables(instances * 4)
        .total_stacks(instances)
        .max_memory_size(MAX_MEMORY_BYTES)
        .max_memories_per_component(4)
        .max_tables_per_component(8)
        .max_core_instances_per_component(8)
        // a few pages of funcref tables: reset in place rather than by one `madvise` each per call
        .table_keep_resident(64 << 10);
    // The guest's initial memory (1 MiB: shadow stack, static data and the heap a typical call
    // needs, see guest_build.rs) is reset in place on reuse instead of being decommitted and
    // faulted in again on every call. With PAGEMAP_SCAN (Linux 6.7+) only the pages the call
    // dirtied are reset, so all of it can stay; without it the whole window is `memset` and
    // made resident, so the window stays at the half that holds the stack and static data.
    if PoolingAllocationConfig::is_pagemap_scan_available() {
        pool.pagemap_scan(Enabled::Yes).linear_memory_keep_resident(1 << 20);
    } else {
        pool.linear_memory_keep_resident(512 << 10);
    }
    let mut config = Config::new();
    config.epoch_interruption(true);
    // The guest is stripped, so a wasm backtrace names no function: it would only clutter the
    // tool error a trap becomes.
    config.wasm_backtrace_max_frames(None);
    // With no backtrace, nothing maps the guest's machine code back to its wasm offsets, and
    // nothing outside wasmtime unwinds through its frames (wasmtime walks them itself): without
    // the address map and the `.eh_frame` the precompiled component is smaller, and each start
    // has less to read, hash and register.
    config.generate_address_map(false);
    config.native_unwind_info(false);
    config.wasm_component_model(true);
    config.max_wasm_stack(1 << 20);
    // 4 GiB of address space per memory (with a guard region after it) lets Cranelift drop the
    // bounds check of every load and store: a 32-bit index cannot reach past the reservation,
    // so the guard pages catch what a check would. Only address space, never memory; the
    // instance still may not grow past MAX_MEMORY_BYTES (docs/engineering-log.md, "The sandbox's own cost").
    config.memory_reservation(1 << 32);
    config.memory_guard_size(32 << 20);
    config.allocation_strategy(InstanceAllocationStrategy::Pooling(pool));
    Ok(Engine::new(&config)?)
}

/// SHA-256 of a component, lowercase hex.
pub fn sha256_hex(wasm: &[u8]) -> String {
    hex::encode(Sha256::digest(wasm))
}

/// Compiles and judges a component without preparing it to run. Never from the cache: an audit
/// reads the `.wasm` whose SHA-256 it prints.
pub fn inspect(wasm: &[u8]) -> anyhow::Result<surface::Surface> {
    let engine = engine(MAX_CONCURRENT_INSTANCES)?;
    let sha = sha256_hex(wasm);
    let (component, _) = cache::load(&engine, wasm, &sha, None).map_err(not_a_component)?;
    Ok(surface::describe(&engine, &component, &sha, wasm.len()))
}

fn not_a_component(e: anyhow::Error) -> anyhow::Error {
    anyhow::anyhow!("not a valid WebAssembly component: {e:#}")
}

impl ComponentRuntime {
    /// Loads `wasm`, refuses it unless its imports are exactly within the broker world, and
    /// pre-instantiates it.
    pub fn load(wasm: &[u8], cache_dir: Option<&Path>, limits: Limits) -> anyhow::Result<Self> {
        Self::load_hashed(wasm, &sha256_hex(wasm), cache_dir, limits)
    }

    /// [`ComponentRuntime::load`] of `wasm` whose SHA-256 the caller computed (`sha`).
    pub(crate) fn load_hashed(
        wasm: &[u8],
        sha: &str,
        cache_dir: Option<&Path>,
        limits: Limits,
    ) -> anyhow::Result<Self> {
        let engine = engine(limits.instances)?;
        let sha = sha.to_string();
        let (component, origin) = cache::load(&engine, wasm, &sha, cache_dir).map_err(not_a_component)?;
        let surface = surface::describe(&engine, &component, &sha, wasm.len());
        Self::prepare(engine, &component, surface, origin, limits)
    }

    /// What `inspect` prints of `wasm` (compiled here, never from the cache), and the runtime
    /// made from that same compilation when the component is accepted (one compilation, not two).
    pub(crate) fn inspect(
        wasm: &[u8],
        limits: Limits,
    ) -> anyhow::Result<(surface::Surface, Option<anyhow::Result<Self>>)> {
        let engine = engine(limits.instances)?;
        let sha = sha256_hex(wasm);
        let (component, origin) = cache::load(&engine, wasm, &sha, None).map_err(not_a_component)?;
        let surface = surface::describe(&engine, &component, &sha, wasm.len());
        let runtime =
            surface.verdict.accepted.then(|| Self::prepare(engine, &component, surface.clone(), origin, limits));
        Ok((surface, runtime))
    }

    /// Refuses `component` unless `surface` accepted it and its imports are exactly within the
    /// broker world; pre-instantiates it.
    fn prepare(
        engine: Engine,
        component: &wasmtime::component::Component,
        surface: surface::Surface,
        origin: cache::Origin,
        limits: Limits,
    ) -> anyhow::Result<Self> {
        let sha = surface.sha256.clone();
        if !surface.verdict.accepted {
            bail!("refusing component {sha}: it {}", surface.verdict.problems.join("; it "));
        }
        let mut linker = Linker::<CallState>::new(&engine);
        crate::capabilities::add_to_linker(&mut linker)?;
        let instance_pre = linker.instantiate_pre(component).map_err(|e| {
            anyhow::anyhow!("refusing component {sha}: its imports do not match the broker world: {e:#}")
        })?;
        let pre = BrokerPre::new(instance_pre).map_err(|e| {
            anyhow::anyhow!("refusing component {sha}: its exports do not match the broker world: {e:#}")
        })?;
        let ticker_stop = Arc::new(AtomicBool::new(false));
        spawn_epoch_ticker(engine.clone(), ticker_stop.clone());
        let slots = tokio::sync::Semaphore::new(limits.instances as usize);
        Ok(ComponentRuntime { engine, pre, surface, origin, limits, ticker_stop, slots })
    }

    pub(crate) fn sha256(&self) -> &str {
        &self.surface.sha256
    }

    pub(crate) fn origin(&self) -> cache::Origin {
        self.origin
    }

    pub(crate) fn limits(&self) -> Limits {
        self.limits
    }

    /// A fresh store with this call's limits and deadline.
    fn store(&self, mut state: CallState) -> Store<CallState> {
        state.limits = StoreLimitsBuilder::new()
            .memory_size(self.limits.memory_bytes)
            .instances(8)
            .tables(8)
            .memories(4)
            .trap_on_grow_failure(true)
            .build();
        state.meter = crate::capabilities::GuestMeter::new(self.limits.guest_time);
        let mut store = Store::new(&self.engine, state);
        store.limiter(|s| &mut s.limits);
        // Checked every tick: over budget traps, otherwise yield so a busy guest never starves
        // the other calls on this executor thread.
        store.set_epoch_deadline(1);
        store.epoch_deadline_callback(|ctx| {
            let meter = &ctx.data().meter;
            if meter.over_budget() { Ok(UpdateDeadline::Interrupt) } else { Ok(UpdateDeadline::Yield(1)) }
        });
        store
    }

    /// The component's tool catalog.
    pub async fn catalog(&self, state: CallState) -> Result<Vec<ToolDecl>, Trapped> {
        let _slot = self.slots.acquire().await.expect("the slot semaphore is never closed");
        let mut store = self.store(state);
        let result = async {
            let broker = self.pre.instantiate_async(&mut store).await?;
            broker.equinix_broker_tools().call_catalog(&mut store).await
        }
        .await;
        let tools = result.map_err(|e| self.trapped(&store, e))?;
        Ok(tools.into_iter().map(decl).collect())
    }

    /// Instantiates into a fresh store and reads the catalog; returns the instantiation time
    /// alone (benchmarks).
    pub async fn instantiate_then_catalog(&self, state: CallState) -> anyhow::Result<(Duration, usize)> {
        let mut store = self.store(state);
        let started = std::time::Instant::now();
        let broker = self.pre.instantiate_async(&mut store).await?;
        let instantiated = started.elapsed();
        let tools = broker.equinix_broker_tools().call_catalog(&mut store).await?;
        Ok((instantiated, tools.len()))
    }

    /// Runs one tool: what it returned, and what the call came to besides.
    pub async fn call(&self, state: CallState, name: &str, arguments: &str) -> Called {
        let _slot = self.slots.acquire().await.expect("the slot semaphore is never closed");
        let mut store = self.store(state);
        let result = async {
            let broker = self.pre.instantiate_async(&mut store).await?;
            broker.equinix_broker_tools().call_call(&mut store, name, arguments).await
        }
        .await;
        let result = result.map_err(|e| self.trapped(&store, e));
        Called { result, ending: store.into_data().end() }
    }

    fn trapped(&self, store: &Store<CallState>, e: wasmtime::Error) -> Trapped {
        let meter = &store.data().meter;
        if let Some(down) = e.downcast_ref::<crate::proposals::StoreUnavailable>() {
            // the store fails before any create it guards is sent (settle, after one, never traps)
            let sent = match store.data().create_sent() {
                false => "no create was sent to Fabric",
                true => "a create was sent to Fabric before it: see the audit log for its outcome",
            };
            return Trapped { kind: "proposal_store_unavailable", message: format!("{}; {sent}", down.told()) };
        }
        let why = match e.downcast_ref::<wasmtime::Trap>() {
            Some(wasmtime::Trap::Interrupt) => {
                format!("the component exceeded its CPU budget of {:?} and was stopped", meter.budget())
            }
            Some(wasmtime::Trap::UnreachableCodeReached) => {
                "the component panicked or aborted (wasm `unreachable`)".to_string()
            }
            Some(wasmtime::Trap::StackOverflow) => "the component overflowed its stack".to_string(),
            Some(wasmtime::Trap::MemoryOutOfBounds) => {
                "the component accessed memory out of bounds (a deep recursion overflowing its in-memory stack does this)"
                    .to_string()
            }
            Some(trap) => format!("the component trapped: {trap}"),
            None => {
                // The root cause without the wasm backtrace the outer error carries.
                let root = e.root_cause().to_string();
                if root.contains("handle index") {
                    format!(
                        "the component presented a resource handle it does not hold ({root}): an approval cannot \
                         be forged, copied, spent twice or kept past the call that minted it"
                    )
                } else if root.contains("memory") {
                    format!("the component exceeded its memory limit of {} MiB: {root}", self.limits.memory_bytes >> 20)
                } else {
                    format!("the component failed: {root}")
                }
            }
        };
        tracing::warn!(guest_ms = meter.guest_time().as_millis() as u64, "{why}");
        Trapped { kind: "component_failed", message: why }
    }
}

fn decl(t: tools::Tool) -> ToolDecl {
    ToolDecl {
        name: t.name,
        toolset: t.toolset,
        title: t.title,
        description: t.description,
        input_schema: t.input_schema,
        output_schema: t.output_schema,
        read_only: t.hints.read_only,
        destructive: t.hints.destructive,
        idempotent: t.hints.idempotent,
        open_world: t.hints.open_world,
    }
}

fn spawn_epoch_ticker(engine: Engine, stop: Arc<AtomicBool>) {
    std::thread::Builder::new()
        .name("epoch-ticker".into())
        .spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                std::thread::sleep(EPOCH_TICK);
                engine.increment_epoch();
            }
        })
        .expect("spawning the epoch ticker thread");
}

/// Reads a component file with a clear error.
pub(crate) fn read_component(path: &Path) -> anyhow::Result<Vec<u8>> {
    std::fs::read(path).with_context(|| format!("reading component {}", path.display()))
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_build_hashed_the_component_it_embedded() {
        assert_eq!(crate::EMBEDDED_COMPONENT_SHA256, super::sha256_hex(crate::EMBEDDED_COMPONENT));
    }
}
