//! Start-up: load and check the component, build the Fabric client (real or simulator), read
//! the catalog, apply the toolsets, print the banner, serve MCP.

use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, bail};

use rmcp::model::RequestStateCodec;

use crate::approval_page::sealed_cookie::CookieSeal;
use crate::approval_page::{ApprovalPage, PageDeps};
use crate::audit::AuditLog;
use crate::audit::settings::AuditArgs;
use crate::capabilities::{CallState, Clock, Grants, ProposalStore};
use crate::cli::{ServeArgs, Transport};
use crate::component::ComponentRuntime;
use crate::fabric_client::{Credentials, FabricClient, FabricConfig};
use crate::mcp::fairness::Fairness;
use crate::mcp::registry::CatalogError;
use crate::mcp::{McpServer, Selection, ToolRegistry, server::Shared};
use crate::policy::PolicyGate;
use crate::secret::Secret;
use crate::transports::http::TokenFile;
use equinix_fabric_sim as fabric_sim;

/// Everything `serve` built, before choosing a transport (tests reuse it).
pub struct Ready {
    pub broker: McpServer,
    /// The operator's policy, which SIGHUP rereads.
    pub policy: Arc<PolicyGate>,
    /// The in-process simulator, when `--fabric-sim`.
    pub sim: Option<fabric_sim::SimHandle>,
    pub banner: Banner,
}

/// What the server started with, logged once as fields (JSON logs get them as keys).
pub struct Banner {
    pub component: String,
    pub toolsets: String,
    pub fabric: String,
    pub transport: String,
    pub proposal_store: String,
    pub audit_log: String,
    pub state_key: String,
    pub(crate) unconfirmed_allowed: bool,
    pub policy: String,
    /// How a person approves a create, whatever the client.
    pub confirmations: String,
}

impl Banner {
    pub(crate) fn log(&self) {
        tracing::info!(
            version = env!("CARGO_PKG_VERSION"),
            component = %self.component,
            toolsets = %self.toolsets,
            fabric = %self.fabric,
            transport = %self.transport,
            proposal_store = %self.proposal_store,
            audit_log = %self.audit_log,
            confirmation_state_key = %self.state_key,
            policy = %self.policy,
            confirmations = %self.confirmations,
            "equinix-mcp ready"
        );
        if self.unconfirmed_allowed {
            tracing::warn!(
                "WARNING: EQUINIX_MCP_ALLOW_UNCONFIRMED_MUTATIONS=true: confirmed proposals execute without a \
                 person's approval when the client cannot show a form"
            );
        }
    }
}

/// Builds the server from its arguments: the component, the Fabric client (real or the
/// simulator), the proposal store, the checked catalog, the audit log and the sealing key.
pub async fn prepare(args: &ServeArgs) -> anyhow::Result<Ready> {
    let warm = std::thread::spawn(crate::mcp::registry::warm_up);
    let clock = Clock::default();
    // the simulator's routes are work, not I/O: made beside the component's load (its estate is
    // seeded at its first request)
    let making_sim = args.fabric.fabric_sim.then(|| {
        let config = fabric_sim::SimConfig { clock: Some(Arc::new(clock.clone())), ..Default::default() };
        std::thread::spawn(move || fabric_sim::Unstarted::new(config))
    });
    let started = std::time::Instant::now();
    let (runtime, source) = load_component(args)?;
    tracing::debug!(elapsed_ms = started.elapsed().as_millis() as u64, origin = ?runtime.origin(), "component ready");

    let selection = Selection::parse(args.toolsets.as_deref());
    let unstarted =
        making_sim.map(|s| s.join().map_err(|_| anyhow::anyhow!("making the Fabric simulator failed"))).transpose()?;
    let (fabric, sim) = connect_fabric(args, unstarted, &selection, &clock).await?;
    tracing::debug!(elapsed_ms = started.elapsed().as_millis() as u64, "fabric client ready");

    let proposals = Arc::new(ProposalStore::open(&args.store).await?);
    let _ = warm.join();
    let policy = Arc::new(args.policy.gate()?);
    let mut grants = Grants {
        fabric,
        clock,
        proposals,
        audit: None,
        unconfirmed_allowed: args.confirmation.allow_unconfirmed_mutations,
        guest_time: runtime.limits().guest_time,
        policy: policy.clone(),
        transport: match args.transport {
            Transport::Http => "http",
            Transport::Stdio => "stdio",
        },
        notifier: None,
    };
    let registry = load_registry(&runtime, &selection, &grants).await?;
    tracing::debug!(elapsed_ms = started.elapsed().as_millis() as u64, "catalog checked");

    let (seals, key_source) = state_key(args, &grants.proposals)?;
    grants.audit = open_audit(&args.audit, &registry)?;
    let destinations = args.notify.destinations()?;
    let escalation = args.notify.escalation_destinations()?;
    let follow_ups = args.notify.follow_ups(&escalation)?;
    grants.notifier = crate::notify::Notifier::start(
        (destinations, escalation, follow_ups),
        args.notify.attempt_timeout(),
        grants.proposals.clone(),
        grants.clock.clone(),
        grants.audit.clone(),
    )?;
    let banner = Banner {
        component: format!("sha256:{} ({}, {:?})", runtime.sha256(), source, runtime.origin()),
        toolsets: registry.enabled_toolsets().iter().cloned().collect::<Vec<_>>().join(","),
        fabric: describe_fabric(&grants.fabric, sim.as_ref()),
        transport: format!("{:?}", args.transport).to_lowercase(),
        proposal_store: grants.proposals.describe(),
        audit_log: grants.audit.as_ref().map_or_else(|| "off (read-only)".into(), |a| a.path().display().to_string()),
        state_key: key_source.to_string(),
        unconfirmed_allowed: args.confirmation.allow_unconfirmed_mutations,
        policy: grants.policy.current().map_or_else(
            || "none (every create a person approves is permitted)".into(),
            |p| format!("{} ({} policies, sha256 {})", p.path.display(), p.policies, p.sha256),
        ),
        confirmations: String::new(),
    };
    let approval_page = match args.page.settings(&args.auth)? {
        Some(settings) => {
            let page =
                ApprovalPage::start(settings, page_deps(&grants, &seals.cookie)).await.context("the approval page")?;
            Some(page)
        }
        None if grants.audit.is_some() && serves_one_local_user(args) => local_page(args, &grants, &seals.cookie),
        None => None,
    };
    let mut banner = banner;
    let page = match &approval_page {
        None => PageKind::None,
        Some(p) if p.is_local() => {
            PageKind::Local { enrolled: p.offers_enrolled().await, command: p.enroll_command().unwrap_or_default() }
        }
        Some(_) => PageKind::Team,
    };
    banner.confirmations = confirmations(grants.audit.is_some(), page, grants.unconfirmed_allowed);
    let fairness = Fairness::new(args.fairness.limits(runtime.limits().instances));
    let broker = McpServer::new(Shared {
        runtime,
        registry,
        grants,
        elicit_timeout: args.confirmation.elicit_timeout(),
        request_state: seals.codec,
        lifecycle: Default::default(),
        fairness,
        approval_page,
    });
    Ok(Ready { broker, policy, sim, banner })
}

/// Whether this server serves one person at this machine: stdio, or HTTP on loopback without an
/// identity provider (whose page would be the team's).
fn serves_one_local_user(args: &ServeArgs) -> bool {
    match args.transport {
        Transport::Stdio => true,
        Transport::Http => args.http.listen.ip().is_loopback() && args.auth.oauth_issuer.is_none(),
    }
}

/// The page of local approvers; none (with a warning) when no approvers file is known, which
/// leaves every tool served.
fn local_page(args: &ServeArgs, grants: &Grants, cookie: &CookieSeal) -> Option<Arc<ApprovalPage>> {
    let file = match args.approvers.file() {
        Ok(f) => f,
        Err(why) => {
            tracing::warn!("no approval page for local approvers: {why:#}");
            return None;
        }
    };
    Some(ApprovalPage::start_local(file, page_deps(grants, cookie)))
}

fn page_deps(grants: &Grants, cookie: &CookieSeal) -> PageDeps {
    PageDeps {
        store: grants.proposals.clone(),
        clock: grants.clock.clone(),
        audit: grants.audit.clone(),
        policy: grants.policy.clone(),
        transport: grants.transport,
        cookie_seal: cookie.clone(),
        notifier: grants.notifier.clone(),
    }
}

/// Which approval page a server has, for the banner.
#[derive(Clone, Debug, PartialEq, Eq)]
enum PageKind {
    None,
    /// A team's, behind its identity provider.
    Team,
    /// Local approvers', with this many enrolled at start.
    Local {
        enrolled: usize,
        /// The command that enrolls one, with this binary's path.
        command: String,
    },
}

/// How a person approves a create on this server, whatever the client, as the banner says it
/// (each propose result says it again for its own client).
fn confirmations(mutate: bool, page: PageKind, opt_in: bool) -> String {
    let without = match (page, opt_in) {
        (PageKind::Team, _) => "the approval page's link (approval_pending)".to_string(),
        (PageKind::Local { enrolled: n @ 1.., .. }, _) => format!(
            "the approval page's link (approval_pending), where one of the {n} approver(s) enrolled on this machine \
             approves with their passkey"
        ),
        (PageKind::Local { enrolled: 0, command }, _) if !opt_in => format!(
            "nobody can approve until an approver is enrolled on this machine: run `{command}` (then the approval \
             page's link, approval_pending)"
        ),
        (_, true) => "NOBODY is asked: the operator's opt-in creates without a person".to_string(),
        (_, false) => "nobody can approve (unsupported_by_client): serve the approval page (docs/approval-page.md) \
                       or use a client that shows forms"
            .to_string(),
    };
    match mutate {
        false => "none: the mutate toolset is not served".into(),
        true => format!("clients that show forms: the form; clients without: {without}"),
    }
}

/// The chosen component, loaded under the operator's limits; with where it came from.
fn load_component(args: &ServeArgs) -> anyhow::Result<(ComponentRuntime, String)> {
    let source = args.component.source()?;
    let mut limits = args.limits.limits();
    if let Transport::Stdio = args.transport {
        limits.instances = crate::component::STDIO_INSTANCES;
    }
    let runtime =
        ComponentRuntime::load_hashed(&source.wasm, &source.sha256, args.component.cache_dir().as_deref(), limits)
            .with_context(|| format!("loading component {}", source.origin))?;
    Ok((runtime, source.origin))
}

/// The Fabric client: to the in-process simulator `unstarted` when `--fabric-sim` made one (started
/// here; it shares the host's clock so `POST /_sim/clock` can age proposals), or to the configured
/// endpoint with the environment's credentials.
async fn connect_fabric(
    args: &ServeArgs,
    unstarted: Option<fabric_sim::Unstarted>,
    selection: &Selection,
    clock: &Clock,
) -> anyhow::Result<(Arc<FabricClient>, Option<fabric_sim::SimHandle>)> {
    let (sim, base_url, credentials) = if let Some(unstarted) = unstarted {
        let sim = unstarted.start("127.0.0.1:0".parse().unwrap()).await?;
        let creds = Credentials {
            client_id: fabric_sim::SIM_CLIENT_ID.into(),
            client_secret: Secret::new(fabric_sim::SIM_CLIENT_SECRET),
        };
        let url = sim.base_url();
        (Some(sim), url, Some(creds))
    } else {
        (None, args.fabric.endpoint.clone(), fabric_credentials(args)?)
    };
    let mut config = FabricConfig::new(base_url, credentials);
    config.mutate_enabled = selection.names_mutate();
    config.request_timeout = Duration::from_millis(args.fabric.fabric_timeout_ms);
    config.clock = clock.clone();
    let fabric = match &sim {
        Some(sim) if !args.fabric.fabric_sim_http => FabricClient::in_process(config, sim.router(), sim.base_url()),
        _ => FabricClient::new(config),
    };
    Ok((Arc::new(fabric), sim))
}

/// `EQUINIX_API_CLIENTID` (or `--client-id`) and `EQUINIX_API_CLIENTSECRET` (or
/// `--client-secret-file`); without both every Fabric call fails, which the log says once.
fn fabric_credentials(args: &ServeArgs) -> anyhow::Result<Option<Credentials>> {
    let secret = crate::secret::from_env_or_file(
        std::env::var("EQUINIX_API_CLIENTSECRET").ok(),
        args.fabric.client_secret_file.as_deref(),
        "EQUINIX_API_CLIENTSECRET",
        "--client-secret-file",
    )?;
    Ok(match (&args.fabric.client_id, secret) {
        (Some(id), Some(client_secret)) if !id.is_empty() => Some(Credentials { client_id: id.clone(), client_secret }),
        _ => {
            tracing::warn!(
                "EQUINIX_API_CLIENTID / EQUINIX_API_CLIENTSECRET (or --client-secret-file) are not set: every Fabric \
                 call will fail until they are (or use --fabric-sim)"
            );
            None
        }
    })
}

/// Where Fabric requests go, as the banner says it (a URL's credentials redacted).
fn describe_fabric(fabric: &FabricClient, sim: Option<&fabric_sim::SimHandle>) -> String {
    match sim {
        Some(s) if fabric.is_in_process() => format!("simulator at {} (called in process)", s.base_url()),
        Some(s) => format!("simulator at {} (called over HTTP)", s.base_url()),
        None => crate::secret::redact_url(&fabric.config().base_url),
    }
}

/// The state key and where it came from: the codec sealing 2026-07-28 confirmation state and the
/// approval page's cookie seal are made from it. A shared store without a shared key is worth a
/// warning.
fn state_key(args: &ServeArgs, proposals: &ProposalStore) -> anyhow::Result<(StateSeals, &'static str)> {
    let key = crate::secret::from_env_or_file(
        std::env::var("EQUINIX_MCP_STATE_KEY").ok().filter(|k| !k.trim().is_empty()),
        args.confirmation.state_key_file.as_deref(),
        "EQUINIX_MCP_STATE_KEY",
        "--state-key-file",
    )?;
    let from = match args.confirmation.state_key_file {
        Some(_) => "--state-key-file",
        None => "EQUINIX_MCP_STATE_KEY",
    };
    let (bytes, from) = crate::mcp::reach::stateless::state_key(key.as_ref().map(|k| (k.expose(), from)))?;
    if key.is_none() && proposals.is_shared() {
        tracing::warn!(
            "the proposal store is shared but no state key is set (EQUINIX_MCP_STATE_KEY or --state-key-file): each \
             replica draws its own, so a 2026-07-28 confirmation or a page sign-in begun on another replica is \
             refused here (give every replica the same key)"
        );
    }
    let seals = StateSeals { codec: crate::mcp::reach::stateless::codec_of(&bytes)?, cookie: CookieSeal::new(&bytes) };
    Ok((seals, from))
}

/// What the state key seals: 2026-07-28 confirmation state and the page's sign-in cookie.
struct StateSeals {
    codec: RequestStateCodec,
    cookie: CookieSeal,
}

/// The audit log, opened only by a server that can mutate.
fn open_audit(args: &AuditArgs, registry: &ToolRegistry) -> anyhow::Result<Option<Arc<AuditLog>>> {
    if !registry.enabled_toolsets().contains(equinix_broker_contract::MUTATE_TOOLSET) {
        return Ok(None);
    }
    let path = args.audit_log.clone().or_else(crate::audit::default_path).context(
        "no audit log path: set --audit-log / EQUINIX_MCP_AUDIT_LOG (no state directory is known for this user)",
    )?;
    check_existing_log(&path);
    let log = Arc::new(AuditLog::open(&path)?);
    log.checkpoint_after(args.audit_checkpoint_every as u64);
    Ok(Some(log))
}

/// The most of an existing audit log the start-up check reads (a bigger one is left to `audit
/// verify`).
const CHECKED_AT_START: u64 = 512 << 20;

/// Checks, on a thread of its own so the server does not wait, that an existing audit log
/// verifies: this server continues the chain after its last record, so a log `audit verify`
/// calls broken stays broken, and the operator should hear it now, not at the next review.
fn check_existing_log(path: &std::path::Path) {
    let Ok(meta) = std::fs::metadata(path) else { return };
    if meta.len() == 0 || meta.len() > CHECKED_AT_START {
        return;
    }
    let path = path.to_path_buf();
    let _ = std::thread::Builder::new().name("audit-check".into()).spawn(move || {
        let Ok(bytes) = std::fs::read(&path) else { return };
        if let crate::audit::chain::Verdict::Broken { line, why } = crate::audit::chain::verify(&bytes) {
            tracing::warn!(
                "the audit log {} does not verify: line {line}: {why}. This server continues its chain after \
                 the last record, so `equinix-mcp audit verify` will go on reporting that line; move the file aside \
                 to start a new log",
                path.display()
            );
        }
    });
}

/// The checkpoint writer of `--audit-signing-key`, started once the log is open; it writes a
/// last checkpoint when the returned guard is dropped (at shutdown) and `stopped` is awaited.
fn start_checkpoints(
    args: &AuditArgs,
    log: Option<&Arc<AuditLog>>,
) -> anyhow::Result<Option<(tokio_util::sync::CancellationToken, tokio::task::JoinHandle<()>)>> {
    let (Some(key), Some(path)) = (&args.audit_signing_key, &args.audit_checkpoints) else {
        return Ok(None);
    };
    let Some(log) = log else {
        tracing::warn!("--audit-signing-key without the mutate toolset: there is no audit log to checkpoint");
        return Ok(None);
    };
    let key = crate::audit::checkpoints::load_signing_key(key)?;
    let writer = Arc::new(crate::audit::checkpoints::Checkpointer::open(key, path)?);
    tracing::info!(key_id = writer.key_id(), "signed audit checkpoints to {}", path.display());
    let stop = tokio_util::sync::CancellationToken::new();
    let task = tokio::spawn(writer.run(log.clone(), stop.clone()));
    Ok(Some((stop, task)))
}

/// The in-process simulator's `POST /_sim/clock` moves this server's own clock.
impl equinix_fabric_sim::SimClock for Clock {
    fn advance(&self, ms: u64) {
        Clock::advance(self, ms)
    }

    fn now_ms(&self) -> u64 {
        Clock::now_ms(self)
    }
}

/// Reads the component's catalog (a call with no person behind it) and checks it.
pub(crate) async fn load_registry(
    runtime: &ComponentRuntime,
    selection: &Selection,
    grants: &Grants,
) -> anyhow::Result<ToolRegistry> {
    let catalog = runtime.catalog(CallState::unattended(grants)).await.map_err(|t| {
        anyhow::anyhow!("refusing component {}: its catalog call failed: {}", runtime.sha256(), t.message)
    })?;
    tracing::debug!("catalog read");
    ToolRegistry::build(catalog, selection).map_err(|e| match e {
        // the operator's mistake, not the component's
        CatalogError::Selection(_) => anyhow::Error::new(e),
        e => anyhow::Error::new(e).context(format!("refusing the catalog of component {}", runtime.sha256())),
    })
}

/// `equinix-mcp serve`.
pub async fn run(args: ServeArgs) -> anyhow::Result<()> {
    crate::shutdown::survive_file_size_limit();
    let shutdown_grace = Duration::from_millis(args.shutdown_grace_ms);
    // The exposure rules are checked before anything starts.
    let http = match args.transport {
        Transport::Http => {
            let auth = args.auth.auth_token_file.as_deref().map(TokenFile::load).transpose()?.map(Arc::new);
            let oauth = match args.auth.oauth() {
                Some(settings) => Some(crate::oauth::ResourceServer::start(&settings).await?),
                None => None,
            };
            let mut options = args.http.options(auth, oauth, shutdown_grace)?;
            options.shutdown_drain = match args.shutdown_drain_ms {
                Some(ms) => Duration::from_millis(ms),
                None => crate::transports::http::default_drain(options.listen.ip()),
            };
            if options.tls.is_none() && !crate::transports::http::is_default_loopback(options.listen.ip()) {
                tracing::warn!(
                    listen = %options.listen,
                    "bearer tokens travel in clear text over plain HTTP: give --tls-cert and --tls-key, or terminate \
                     TLS in a proxy in front of this server"
                );
            }
            Some(options)
        }
        Transport::Stdio if args.auth.oauth_issuer.is_some() => {
            bail!("--oauth-issuer applies to --transport http (stdio has one local user and no tokens)")
        }
        Transport::Stdio => None,
    };
    let open_files = crate::open_files::raise_to_hard_limit();
    if let Some((limit, _)) = open_files {
        let mut caps = Vec::new();
        if let Some(options) = &http {
            caps.push(("--max-connections", options.connections.slots.max_connections));
        }
        if args.metrics.metrics_listen.is_some() {
            caps.push(("the metrics listener's", crate::transports::metrics_listener::MAX_CONNECTIONS));
        }
        crate::open_files::check_budget(limit, &caps)?;
    }
    let ready = prepare(&args).await?;
    let checkpoints = start_checkpoints(&args.audit, ready.broker.shared().grants.audit.as_ref())?;
    // listening before the banner, so a SIGHUP sent once the server said it is ready never
    // meets the default action (termination)
    let _rereads = match args.policy.policy.is_some() {
        true => Some(reread_on_sighup(ready.policy.clone())?),
        false => None,
    };
    ready.banner.log();
    if let Some((limit, before)) = open_files {
        match limit > before {
            true => tracing::info!("open-file limit raised from {before} to {limit} (the hard limit)"),
            false => tracing::info!("open-file limit {limit}"),
        }
    }
    let metrics_stop = tokio_util::sync::CancellationToken::new();
    let _stop_metrics = metrics_stop.clone().drop_guard();
    if let Some(addr) = args.metrics.metrics_listen {
        let proposals = ready.broker.shared().grants.proposals.clone();
        let hosts = crate::transports::http::accepted_hosts(&args.http.allowed_hosts);
        let deadline = args.http.header_read_timeout();
        crate::transports::metrics_listener::serve(
            addr,
            Arc::new(move || proposals.pending_len()),
            hosts,
            deadline,
            metrics_stop,
        )
        .await?;
    }
    let page_stop = tokio_util::sync::CancellationToken::new();
    let _stop_page = page_stop.clone().drop_guard();
    if let (None, Some(page)) = (&http, &ready.broker.shared().approval_page) {
        // a stdio server serves its approval page on a loopback listener of its own
        let hosts = crate::transports::http::accepted_hosts(&args.http.allowed_hosts);
        let deadline = args.http.header_read_timeout();
        let listen = args.page.approval_listen;
        let served =
            crate::transports::approval_listener::serve(page.clone(), listen, hosts, deadline, page_stop).await;
        match served {
            Ok(_) => {}
            // the tools go on without the page of local approvers: creates wait until it is back
            Err(why) if page.is_local() => tracing::error!("no approval page for local approvers: {why:#}"),
            Err(why) => return Err(why),
        }
    }
    let served = match http {
        None => crate::transports::stdio::serve(&ready.broker, shutdown_grace).await,
        Some(options) => crate::transports::http::serve(ready.broker.clone(), options).await,
    };
    if let Some((stop, task)) = checkpoints {
        // the last checkpoint, after the last record of the calls that were let finish
        stop.cancel();
        let _ = task.await;
    }
    served?;
    drop(ready.sim);
    Ok(())
}

/// SIGHUP rereads the policy file; a set that no longer validates is logged and the previous
/// one stays. The task ends with the returned guard.
fn reread_on_sighup(gate: Arc<PolicyGate>) -> anyhow::Result<tokio_util::sync::DropGuard> {
    let stop = tokio_util::sync::CancellationToken::new();
    let guard = stop.clone().drop_guard();
    let mut hangups = crate::platform::Hangups::listen().context("cannot listen for SIGHUP, which rereads --policy")?;
    tokio::spawn(async move {
        loop {
            tokio::select! {
                _ = stop.cancelled() => return,
                _ = hangups.recv() => match gate.reload() {
                    Some(Ok(now)) => tracing::info!("SIGHUP: policy reread: {now}"),
                    Some(Err(why)) => tracing::error!("SIGHUP: the policy was not changed, the previous set stays: {why}"),
                    None => {}
                },
            }
        }
    });
    Ok(guard)
}
