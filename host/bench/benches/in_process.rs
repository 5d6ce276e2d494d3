//! In-process costs (`cargo bench -p equinix-mcp-bench`): a fresh Store from the InstancePre, a
//! component call, argument validation, and the proposal store's single-use take.

use std::sync::Arc;
use std::time::Duration;

use equinix_mcp::capabilities::{CallState, Grants, ProposalStore};
use equinix_mcp::component::{ComponentRuntime, Limits};
use equinix_mcp::fabric_client::{FabricClient, FabricConfig};
use equinix_mcp::mcp::{Selection, ToolRegistry};

#[path = "../src/team_policy.rs"]
mod team_policy;
use team_policy::TEAM_POLICY;

fn main() {
    divan::main();
}

struct Fixture {
    rt: tokio::runtime::Runtime,
    runtime: ComponentRuntime,
    fabric: Arc<FabricClient>,
    proposals: Arc<ProposalStore>,
}

impl Fixture {
    fn new() -> Fixture {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let runtime = ComponentRuntime::load(equinix_mcp::EMBEDDED_COMPONENT, None, Limits::default()).unwrap();
        let fabric = Arc::new(FabricClient::new(FabricConfig::new("http://127.0.0.1:9", None)));
        Fixture { rt, runtime, fabric, proposals: Arc::new(ProposalStore::new()) }
    }

    fn state(&self) -> CallState {
        CallState::unattended(&Grants::without_approvals(
            self.fabric.clone(),
            self.proposals.clone(),
            Duration::from_secs(2),
        ))
    }
}

/// Fresh Store + instantiate from the InstancePre + the `catalog` export.
#[divan::bench]
fn instantiate_and_catalog(bencher: divan::Bencher) {
    let f = Fixture::new();
    bencher.bench_local(|| f.rt.block_on(f.runtime.instantiate_then_catalog(f.state())).unwrap());
}

/// A component call that stops at argument parsing inside the guest (no Fabric request).
#[divan::bench]
fn component_call_with_invalid_arguments(bencher: divan::Bencher) {
    let f = Fixture::new();
    bencher.bench_local(|| {
        f.rt.block_on(f.runtime.call(f.state(), "fabric_list_metros", r#"{"limit":0}"#)).result.unwrap()
    });
}

/// The host's JSON-schema check of one tool's arguments.
#[divan::bench]
fn schema_validation(bencher: divan::Bencher) {
    let f = Fixture::new();
    let catalog = f.rt.block_on(f.runtime.catalog(f.state())).unwrap();
    let registry = ToolRegistry::build(catalog, &Selection::parse(Some("all,mutate"))).unwrap();
    let tool = registry.get("fabric_search_ports").unwrap();
    let args = serde_json::json!({"metro": "DC", "name": "DC-*", "limit": 20});
    bencher.bench_local(|| tool.check_arguments(&args).unwrap());
}

/// put + take on the proposal store (the single-use mechanism).
#[divan::bench]
fn proposal_store_put_take(bencher: divan::Bencher) {
    let store = equinix_mcp::proposals::MemoryStore::new();
    let record = vec![7u8; 600];
    let who = equinix_mcp::principal::Principal::local();
    bencher.bench_local(|| {
        let (token, _) = store.put(&who, record.clone(), u64::MAX, 20, 0);
        store.take(&who, &token)
    });
}

/// One Fabric read through the host's client to the simulator (token cached): over loopback
/// HTTP, as real Fabric is reached, and in process, as `serve --fabric-sim` does.
#[divan::bench(args = ["loopback_http", "in_process"])]
fn fabric_read_from_the_simulator(bencher: divan::Bencher, wire: &str) {
    use equinix_fabric_sim::{self as fabric_sim, SimConfig};
    use equinix_mcp::fabric_client::{ApiRequest, Credentials, Method};
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let sim = rt.block_on(fabric_sim::start("127.0.0.1:0".parse().unwrap(), SimConfig::default())).unwrap();
    let creds = Credentials {
        client_id: fabric_sim::SIM_CLIENT_ID.into(),
        client_secret: equinix_mcp::secret::Secret::new(fabric_sim::SIM_CLIENT_SECRET),
    };
    let config = FabricConfig::new(sim.base_url(), Some(creds));
    let client = match wire {
        "in_process" => FabricClient::in_process(config, sim.router(), sim.base_url()),
        _ => FabricClient::new(config),
    };
    let req = ApiRequest {
        method: Method::Get,
        path: "/fabric/v4/metros".into(),
        query: vec![("limit".into(), "5".into())],
        body: None,
    };
    let cancel = Default::default();
    bencher.bench_local(|| rt.block_on(client.send(&req, &cancel)).unwrap());
}

/// Checking the whole catalog and compiling every tool's argument validator (start-up cost).
#[divan::bench]
fn registry_build(bencher: divan::Bencher) {
    let f = Fixture::new();
    let catalog = f.rt.block_on(f.runtime.catalog(f.state())).unwrap();
    bencher.bench_local(|| ToolRegistry::build(catalog.clone(), &Selection::parse(Some("all,mutate"))).unwrap());
}

/// Compiling one argument schema with each draft (where the start-up time goes).
#[divan::bench(args = ["draft7", "draft2020"])]
fn compile_one_schema(bencher: divan::Bencher, draft: &str) {
    let schema = serde_json::json!({"type": "object", "properties": {
        "port_id": {"type": "string", "pattern": "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"},
        "limit": {"type": "integer", "minimum": 1, "maximum": 100}}, "additionalProperties": false});
    let d = if draft == "draft7" { jsonschema::Draft::Draft7 } else { jsonschema::Draft::Draft202012 };
    bencher.bench_local(|| jsonschema::options().with_draft(d).build(&schema).unwrap());
}

/// The README's set of four policies, loaded as `serve` loads it, and a connection create's
/// body between ports in DC and SV (every propose of the whole-process row is permitted).
struct PolicyFixture {
    dir: std::path::PathBuf,
    loaded: equinix_mcp::policy::LoadedPolicy,
    body: String,
}

impl PolicyFixture {
    fn new(tag: &str) -> PolicyFixture {
        let dir = std::env::temp_dir().join(format!("equinix-mcp-bench-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("team.cedar");
        std::fs::write(&file, TEAM_POLICY).unwrap();
        let loaded = equinix_mcp::policy::load(&file).unwrap();
        let body = serde_json::json!({"type": "EVPL_VC", "name": "bench-1", "bandwidth": 1000,
            "aSide": {"accessPoint": {"type": "COLO", "port": {"uuid": "c4d9350e-783c-83cd-1ce0-306a5c00a601"}}},
            "zSide": {"accessPoint": {"type": "COLO", "port": {"uuid": "c4d9350e-783c-83cd-1ce0-306a5c00a611"}}},
            "notifications": [{"type": "ALL", "emails": ["noc@example.com"]}]})
        .to_string();
        PolicyFixture { dir, loaded, body }
    }

    /// The body's facts, with the ports' metros the server learns once per process.
    fn facts(&self) -> equinix_mcp::policy::Facts {
        let tree = equinix_mcp::exact_json::parse(&self.body).unwrap();
        let mut facts =
            equinix_mcp::policy::Facts::of(equinix_broker_contract::ChangeType::ConnectionCreate, &tree, "ab");
        facts.metros.extend(["DC".to_string(), "SV".to_string()]);
        facts
    }
}

impl Drop for PolicyFixture {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

const ASKING: equinix_mcp::policy::Asking<'static> = equinix_mcp::policy::Asking {
    action: "connection_create",
    principal: "local",
    phase: "dry_run",
    transport: "http",
    tool: "t",
    approving: None,
    // a Wednesday noon: a time no freeze of the docs covers
    at: equinix_mcp::policy::Moment { year: 2026, month: 12, day: 2, weekday: 3, hour: 12, minute: 0 },
};

/// The operator policy's decision on one connection create (the README's set of four policies):
/// the facts from the body's bytes, then Cedar's evaluation.
#[divan::bench]
fn policy_decision(bencher: divan::Bencher) {
    let fixture = PolicyFixture::new("policy");
    bencher.bench_local(|| assert!(fixture.loaded.decide(&ASKING, &fixture.facts()).allowed));
}

/// The same decision answered from the policy's memo (the set reads the metros and the
/// bandwidth, which every bench propose shares): the facts, the memo's key and one lookup.
#[divan::bench]
fn policy_decision_remembered(bencher: divan::Bencher) {
    let fixture = PolicyFixture::new("policy-memo");
    assert!(fixture.loaded.decide(&ASKING, &fixture.facts()).allowed);
    bencher.bench_local(|| assert!(fixture.loaded.recall(&ASKING, &fixture.facts()).expect("remembered").allowed));
}

/// The hop to the blocking pool that a decision takes (Cedar measures the stack it has left, and
/// a capability runs on the component's fiber).
#[divan::bench]
fn blocking_pool_hop(bencher: divan::Bencher) {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    bencher.bench_local(|| rt.block_on(async { tokio::task::spawn_blocking(|| 1).await.unwrap() }));
}

/// A realistic page record: the form of a connection create (the README's walk-through body)
/// with the component's usual context.
fn page_record() -> equinix_mcp::approval_page::PageRecord {
    use equinix_mcp::bindings::confirmation::Context;
    let body = r#"{"aSide":{"accessPoint":{"linkProtocol":{"type":"DOT1Q","vlanTag":102},"port":{"uuid":"c4d9350e-783c-83cd-1ce0-306a5c00a600"},"type":"COLO"}},"bandwidth":500,"name":"to-aws","notifications":[{"emails":["noc@example.com"],"type":"ALL"}],"type":"EVPL_VC","zSide":{"accessPoint":{"authenticationKey":"123456789012","location":{"metroCode":"DC"},"profile":{"type":"L2_PROFILE","uuid":"9f4b3a7e-2c1d-4e5f-8a9b-0c1d2e3f4a01"},"sellerRegion":"us-east-1","type":"SP"}}}"#;
    let context = Context {
        title: "Create Fabric connection?".into(),
        message: "An AI agent asks to CREATE a billable Fabric connection.".into(),
        fields: [
            ("target", "EVPL_VC connection \"to-aws\", 500 Mbps"),
            ("price", "USD 250 per month"),
            ("proposal_age", "12s"),
        ]
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect(),
    };
    use equinix_mcp::approval::{Subject, form};
    let tree = equinix_mcp::exact_json::parse(body).unwrap();
    let request_sha256 = equinix_broker_contract::request_sha256("connection_create", body);
    let shown = form::Request {
        tool: "fabric_confirm_change",
        change_type: equinix_broker_contract::ChangeType::ConnectionCreate,
        path: "/fabric/v4/connections",
        body: &tree,
        subject: Subject {
            token: "chg-0123".into(),
            validation: "v-1".into(),
            request_sha256,
            plan_sha256: String::new(),
        },
        validated_at_ms: 1_000,
        plan: None,
    };
    let form = form::render(shown, &context).unwrap();
    let proposer = equinix_mcp::principal::Principal::subject("https://idp.example", "alice");
    equinix_mcp::approval_page::PageRecord::new(&form, &proposer, "fabric_confirm_change", "http", 2_000)
}

fn page_session() -> equinix_mcp::approval_page::Session {
    equinix_mcp::approval_page::Session {
        approver: "https://idp.example#alice".into(),
        subject: "alice".into(),
        groups: vec!["netops".into()],
        auth_time: 1,
        csrf: "c".repeat(43),
        expires_at_ms: u64::MAX,
        named: equinix_mcp::approval_page::people::Named {
            name: "Alice Example".into(),
            email: "alice@example.com".into(),
        },
    }
}

/// The approval page as a signed-in person sees it: the HTML of one request (escaping and all).
#[divan::bench]
fn approval_page_render(bencher: divan::Bencher) {
    use equinix_mcp::approval_page::{Permission, html::View};
    let (record, session) = (page_record(), page_session());
    let permission = Permission::Permitted("you proposed this request with your own sign-in".into(), Vec::new());
    bencher.bench_local(|| {
        View {
            record: &record,
            session: &session,
            decision: None,
            outcome: None,
            proposer: None,
            permission: &permission,
            now_ms: 30_000,
            passkey_request: None,
            local: false,
            approvals: &[],
            progress: None,
            quorum_note: None,
        }
        .render()
    });
}

/// What a decision costs besides its synced audit record: the record read from the store, the
/// rule, and the first-wins write of the decision (memory store).
#[divan::bench]
fn approval_page_decision(bencher: divan::Bencher) {
    use equinix_mcp::approval_page::{Decision, permission, record::Notes};
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let (session, record) = (page_session(), page_record());
    bencher.bench_local(|| {
        // a store of its own each time (an empty one allocates nothing): notes are bounded
        let store = ProposalStore::new();
        rt.block_on(async {
            let notes = Notes { store: &store, now_ms: 3_000 };
            notes.put(&record, None).await.unwrap();
            let found = notes.record(&record.id).await.unwrap().unwrap();
            assert!(matches!(
                permission(&session, &found.question()),
                equinix_mcp::approval_page::Permission::Permitted(..)
            ));
            let decision = Decision {
                id: "d".into(),
                approve: true,
                approver: session.approver.clone(),
                groups: vec![],
                at_ms: 3_000,
                reason: String::new(),
                named: None,
                approvals: vec![],
                quorum: vec![],
            };
            assert!(notes.decide(&found, &decision).await.unwrap());
        })
    });
}

/// A passkey approval's check on the server: the state rebuilt with the request's challenge and
/// webauthn-rs's check of an ES256 assertion Chromium's virtual authenticator made.
#[divan::bench]
fn passkey_assertion_check(bencher: divan::Bencher) {
    let recorded = equinix_mcp_bench::recorded_passkey::Recorded::load().unwrap();
    bencher.bench_local(|| recorded.check().unwrap());
}
