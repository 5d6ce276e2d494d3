//! The sandbox's own cost: the broker logic compiled natively (the `equinix-broker-component`
//! crate as a plain Rust library) driven through the very same host capabilities as the
//! component in wasmtime, so the only difference between the two is the sandbox: the instance,
//! the guest's code, and the copies across its boundary.

use std::sync::Arc;
use std::time::Duration;

use equinix_broker_component::capability as cap;
use tokio::runtime::Handle;
use wasmtime::component::Resource;

use equinix_fabric_sim::{self as fabric_sim, SimConfig};
use equinix_mcp::bindings::{Approval, clock, confirmation, fabric, proposal_store};
use equinix_mcp::capabilities::{CallState, Grants, ProposalStore};
use equinix_mcp::component::{ComponentRuntime, Limits};
use equinix_mcp::fabric_client::{Credentials, FabricClient, FabricConfig};
use equinix_mcp::secret::Secret;

use crate::client::{median, spec};

/// `CallState`'s capability implementations behind the broker logic's own [`cap::Host`] trait,
/// as `glue.rs` puts the WIT imports behind it inside the component.
struct NativeHost<'a> {
    state: &'a mut CallState,
    rt: Handle,
    approvals: Vec<Option<Resource<Approval>>>,
}

/// Waits for a capability call of the host; they do not trap for what the benchmark asks.
fn wait<T>(rt: &Handle, f: impl Future<Output = wasmtime::Result<T>>) -> T {
    rt.block_on(f).expect("no trap")
}

impl cap::Host for NativeHost<'_> {
    fn fabric_send(&mut self, r: cap::FabricRequest) -> Result<cap::FabricResponse, cap::FabricError> {
        let request = fabric::Request {
            method: match r.method {
                cap::Method::Get => fabric::Method::Get,
                cap::Method::Post => fabric::Method::Post,
            },
            path: r.path,
            query: r.query,
            body: r.body,
        };
        response(wait(&self.rt, fabric::Host::send(&mut self.state.fabric_view(), request)))
    }

    fn now_ms(&mut self) -> u64 {
        clock::Host::now_ms(&mut self.state.clock_view()).expect("no trap")
    }

    fn delivery(&mut self) -> cap::Delivery {
        match confirmation::Host::current_delivery(&mut self.state.confirm_view()).expect("no trap") {
            confirmation::Delivery::Blocking => cap::Delivery::Blocking,
            confirmation::Delivery::FirstRound => cap::Delivery::FirstRound,
            confirmation::Delivery::Answered => cap::Delivery::Answered,
        }
    }

    fn ask(&mut self, token: &str, request: cap::CreateRequest, context: cap::Prompt) -> Result<cap::Answer, String> {
        let request = confirmation::CreateRequest { path: request.path, body: request.body };
        let context = confirmation::Context { title: context.title, message: context.message, fields: context.fields };
        let answer = wait(
            &self.rt,
            confirmation::Host::ask(&mut self.state.confirm_view(), token.to_string(), request, context),
        )?;
        // the broker's status is the contract's, which the host's bindings convert to
        let status = cap::ConfirmStatus::from(answer.status);
        let approval = answer.approval.map(|handle| {
            let sha = confirmation::HostApproval::request_sha256(
                &mut self.state.confirm_view(),
                Resource::new_borrow(handle.rep()),
            )
            .expect("no trap");
            self.approvals.push(Some(handle));
            cap::Approval::native(self.approvals.len() as u32 - 1, sha)
        });
        Ok(cap::Answer { status, approval })
    }

    fn execute(&mut self, approval: cap::Approval) -> Result<cap::FabricResponse, cap::FabricError> {
        let handle = self.approvals.get_mut(approval.index() as usize).and_then(Option::take);
        let handle = handle.ok_or_else(|| cap::FabricError::Refused("this approval was already used".into()))?;
        response(wait(&self.rt, confirmation::HostApproval::execute(&mut self.state.confirm_view(), handle)))
    }

    fn store_put(
        &mut self,
        record: Vec<u8>,
        validated_sha256: &str,
        expires_at_ms: u64,
        capacity: u32,
    ) -> Result<cap::Stored, String> {
        let mut view = self.state.store_view();
        let put = proposal_store::Host::put(&mut view, record, validated_sha256.to_string(), expires_at_ms, capacity);
        let s = wait(&self.rt, put)?;
        Ok(cap::Stored { token: s.token, evicted: s.evicted })
    }

    fn store_peek(&mut self, token: &str) -> cap::Taken {
        taken(wait(&self.rt, proposal_store::Host::peek(&mut self.state.store_view(), token.to_string())))
    }

    fn store_take(&mut self, token: &str) -> cap::Taken {
        taken(wait(&self.rt, proposal_store::Host::take(&mut self.state.store_view(), token.to_string())))
    }

    fn store_settle(&mut self, token: &str, outcome: Vec<u8>) {
        wait(&self.rt, proposal_store::Host::settle(&mut self.state.store_view(), token.to_string(), outcome))
    }
}

fn response(r: Result<fabric::Response, fabric::Error>) -> Result<cap::FabricResponse, cap::FabricError> {
    match r {
        Ok(r) => Ok(cap::FabricResponse { status: r.status, body: r.body, correlation_id: r.correlation_id }),
        Err(fabric::Error::Refused(s)) => Err(cap::FabricError::Refused(s)),
        Err(fabric::Error::Denied(s)) => Err(cap::FabricError::Denied(s)),
        Err(fabric::Error::Cancelled) => Err(cap::FabricError::Cancelled),
        Err(fabric::Error::Unavailable(s)) => Err(cap::FabricError::Unavailable(s)),
        Err(fabric::Error::Timeout) => Err(cap::FabricError::Timeout),
        Err(fabric::Error::Transport(s)) => Err(cap::FabricError::Transport(s)),
    }
}

fn taken(t: proposal_store::Taken) -> cap::Taken {
    match t {
        proposal_store::Taken::Found(r) => cap::Taken::Found(r),
        proposal_store::Taken::Used(o) => cap::Taken::Used(o),
        proposal_store::Taken::Evicted => cap::Taken::Evicted,
        proposal_store::Taken::Unknown => cap::Taken::Unknown,
    }
}

/// CPU time of this process (every thread), user plus system.
fn cpu() -> Duration {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ProcessCPUTime);
    Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}

/// CPU per call of the same tool call through the component and through the native library.
pub struct SandboxCost {
    pub tool: &'static str,
    pub wasm_us: f64,
    pub native_us: f64,
}

/// A simulator and the host's Fabric client calling it in process, creates allowed.
pub async fn in_process_fabric() -> anyhow::Result<(fabric_sim::SimHandle, Arc<FabricClient>)> {
    let sim = fabric_sim::start("127.0.0.1:0".parse()?, SimConfig::default()).await?;
    let credentials = Credentials {
        client_id: fabric_sim::SIM_CLIENT_ID.into(),
        client_secret: Secret::new(fabric_sim::SIM_CLIENT_SECRET),
    };
    let mut config = FabricConfig::new(sim.base_url(), Some(credentials));
    config.mutate_enabled = true;
    let fabric = Arc::new(FabricClient::in_process(config, sim.router(), sim.base_url()));
    Ok((sim, fabric))
}

/// Runs `calls` reads and proposes each way, alternating in rounds so drift hits both alike.
/// The component comes from the bench's warm precompile `cache`, as a server's does.
pub async fn measure(calls: usize, cache: &std::path::Path) -> anyhow::Result<Vec<SandboxCost>> {
    let (_sim, fabric) = in_process_fabric().await?;
    let runtime = Arc::new(ComponentRuntime::load(equinix_mcp::EMBEDDED_COMPONENT, Some(cache), Limits::default())?);
    let grants = Grants::without_approvals(fabric, Arc::new(ProposalStore::new()), Duration::from_secs(2));
    // a fresh call state per call on both sides, as the server makes one per call
    let state = move || CallState::unattended(&grants);
    let mut out = Vec::new();
    for (tool, args) in [("fabric_list_metros", "{}".to_string()), ("fabric_propose_change", spec(0).to_string())] {
        let (mut wasm, mut native) = (Vec::new(), Vec::new());
        let (rounds, per_round) = (20, calls / 20);
        for round in 0..=rounds {
            // Both sides take turns on one thread, so the host's share of the work (the
            // simulator, the capabilities) runs on the same kind of thread and allocates from the
            // same malloc arena either way.
            let (rt, args, state, runtime) = (Handle::current(), args.clone(), state.clone(), runtime.clone());
            let (w, n) = tokio::task::spawn_blocking(move || {
                let t = cpu();
                for _ in 0..per_round {
                    let answer = rt
                        .block_on(runtime.call(state(), tool, &args))
                        .result
                        .map_err(|t| anyhow::anyhow!(t.message))?;
                    answer.map_err(|e| anyhow::anyhow!("{tool} failed in the component: {e}"))?;
                }
                let w = cpu() - t;
                let t = cpu();
                for _ in 0..per_round {
                    let mut call_state = state();
                    let mut host = NativeHost { state: &mut call_state, rt: rt.clone(), approvals: Vec::new() };
                    let answer = equinix_broker_component::call_tool(&mut host, tool, &args);
                    answer.map_err(|e| anyhow::anyhow!("{tool} failed natively: {e}"))?;
                }
                anyhow::Ok((w, cpu() - t))
            })
            .await??;
            // the first round warms both up (the allocator, the sim, the instance pool)
            if round > 0 {
                let per = |d: Duration| d.as_secs_f64() * 1e6 / per_round as f64;
                wasm.push(per(w));
                native.push(per(n));
            }
        }
        // medians of the rounds: a round that a neighbour's burst or a page-cache flush hit
        // moves neither side
        out.push(SandboxCost { tool, wasm_us: median(wasm), native_us: median(native) });
    }
    Ok(out)
}
