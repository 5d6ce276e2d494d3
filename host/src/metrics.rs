//! Prometheus metrics, served on their own `--metrics-listen` address (never on the MCP port,
//! so they need no bearer token and a load balancer never exposes them). Every label takes
//! values from a short fixed set or from the served catalog, so no client input can grow them.
//!
//! One process-wide registry: the counters are facts about this process, and the parts that
//! record them (the Fabric client, the confirmation capability, the proposal store) are shared
//! by every transport. A leaf: it names no other module of the host.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

type Labels = Vec<(String, String)>;
type Histograms = Family<Labels, Histogram, fn() -> Histogram>;

pub(crate) struct Metrics {
    registry: Registry,
    /// The pending-proposal gauge alone: written only by a process that can count them (its
    /// memory store), so with a shared store the family is absent rather than a wrong 0.
    pending_registry: Registry,
    tool_calls: Family<Labels, Counter>,
    tool_seconds: Histograms,
    confirmations: Family<Labels, Counter>,
    fabric_answers: Family<Labels, Counter>,
    creates: Family<Labels, Counter>,
    page_decisions: Family<Labels, Counter>,
    policy_decisions: Family<Labels, Counter>,
    /// The series of `policy_decisions`, each looked up once (a decision is on every propose)
    policy_series: [OnceLock<Counter>; 4],
    http_limits: Family<Labels, Counter>,
    auth_refusals: Family<Labels, Counter>,
    store_errors: Counter,
    store_unacknowledged: Counter,
    traps: Counter,
    pending: Gauge,
    audit_syncs: Counter,
    audit_records: Counter,
    notifications: Family<Labels, Counter>,
}

/// 5 ms to ~80 s: a read takes milliseconds, a confirmation waits for a person.
fn seconds() -> Histogram {
    Histogram::new(exponential_buckets(0.005, 2.0, 15))
}

fn label(key: &str, value: &str) -> Labels {
    vec![(key.to_string(), value.to_string())]
}

/// The process's metrics.
pub(crate) fn metrics() -> &'static Metrics {
    static METRICS: OnceLock<Metrics> = OnceLock::new();
    METRICS.get_or_init(Metrics::new)
}

impl Metrics {
    fn new() -> Metrics {
        let mut registry = Registry::with_prefix("equinix_mcp");
        let m = Metrics {
            tool_calls: Family::default(),
            tool_seconds: Histograms::new_with_constructor(seconds),
            confirmations: Family::default(),
            fabric_answers: Family::default(),
            creates: Family::default(),
            page_decisions: Family::default(),
            policy_decisions: Family::default(),
            policy_series: Default::default(),
            http_limits: Family::default(),
            auth_refusals: Family::default(),
            store_errors: Counter::default(),
            store_unacknowledged: Counter::default(),
            traps: Counter::default(),
            pending: Gauge::default(),
            audit_syncs: Counter::default(),
            audit_records: Counter::default(),
            notifications: Family::default(),
            registry: Registry::default(),
            pending_registry: Registry::default(),
        };
        registry.register(
            "tool_calls",
            "Tool calls by tool and outcome (ok, error, input_required)",
            m.tool_calls.clone(),
        );
        registry.register("tool_call_duration_seconds", "Tool call latency by tool", m.tool_seconds.clone());
        registry.register(
            "confirmations",
            "Confirmation forms by the person's answer (human_confirmation.status)",
            m.confirmations.clone(),
        );
        registry.register(
            "fabric_answers",
            "Fabric API answers by status class (2xx..5xx) or failure (timeout, transport, ...)",
            m.fabric_answers.clone(),
        );
        registry.register(
            "creates",
            "Approved creates by outcome (executed, rejected, not_sent, unknown)",
            m.creates.clone(),
        );
        registry.register(
            "approval_page_decisions",
            "Decisions made on the approval page by outcome (approved, declined, refused)",
            m.page_decisions.clone(),
        );
        registry.register(
            "policy_decisions",
            "The operator policy's decisions by phase (dry_run, approval) and decision (allow, deny)",
            m.policy_decisions.clone(),
        );
        registry.register(
            "http_limits",
            "HTTP connections closed and requests refused by the sharing rules, by listener (mcp, metrics) and \
             reason (unproven_closed, full, principal_connections, principal_streams)",
            m.http_limits.clone(),
        );
        registry.register(
            "auth_refusals",
            "HTTP requests refused by authentication or scope, by reason (no_token, invalid_token, \
             insufficient_scope, several_authorization_headers)",
            m.auth_refusals.clone(),
        );
        registry.register("proposal_store_errors", "Proposal store operations that failed", m.store_errors.clone());
        registry.register(
            "proposal_store_unacknowledged_writes",
            "Store writes fewer replicas acknowledged than --proposal-store-acks requires (they failed closed)",
            m.store_unacknowledged.clone(),
        );
        registry.register("component_traps", "Tool calls that ended in a component trap", m.traps.clone());
        let mut pending_registry = Registry::with_prefix("equinix_mcp");
        pending_registry.register(
            "pending_proposals",
            "Unexpired proposals awaiting confirmation in this process's memory store (absent with a shared store)",
            m.pending.clone(),
        );
        registry.register(
            "audit_syncs",
            "fsyncs of the audit log (records written together share one)",
            m.audit_syncs.clone(),
        );
        registry.register("audit_records", "Records made durable in the audit log", m.audit_records.clone());
        registry.register(
            "notifications",
            "Notifications by destination (webhook, slack, teams; queue, store) and outcome (delivered, failed, dropped)",
            m.notifications.clone(),
        );
        Metrics { registry, pending_registry, ..m }
    }

    pub(crate) fn tool_call(&self, tool: &str, outcome: &'static str, elapsed: Duration) {
        let tool_label = label("tool", tool);
        let mut labels = tool_label.clone();
        labels.push(("outcome".into(), outcome.into()));
        self.tool_calls.get_or_create(&labels).inc();
        self.tool_seconds.get_or_create(&tool_label).observe(elapsed.as_secs_f64());
    }

    pub(crate) fn confirmation(&self, status: &'static str) {
        self.confirmations.get_or_create(&label("status", status)).inc();
    }

    pub(crate) fn fabric_answer(&self, class: &'static str) {
        self.fabric_answers.get_or_create(&label("class", class)).inc();
    }

    pub(crate) fn create(&self, outcome: &'static str) {
        self.creates.get_or_create(&label("outcome", outcome)).inc();
    }

    pub(crate) fn page_decision(&self, outcome: &'static str) {
        self.page_decisions.get_or_create(&label("outcome", outcome)).inc();
    }

    pub(crate) fn policy_decision(&self, phase: &'static str, allowed: bool) {
        let decision = if allowed { "allow" } else { "deny" };
        let series = usize::from(phase == "approval") * 2 + usize::from(allowed);
        self.policy_series[series]
            .get_or_init(|| {
                let labels =
                    vec![("phase".to_string(), phase.to_string()), ("decision".to_string(), decision.to_string())];
                self.policy_decisions.get_or_create(&labels).clone()
            })
            .inc();
    }

    /// A connection closed or a request refused by a sharing rule of `listener`.
    pub(crate) fn http_limit(&self, listener: &'static str, reason: &'static str) {
        let labels = vec![("listener".to_string(), listener.to_string()), ("reason".to_string(), reason.to_string())];
        self.http_limits.get_or_create(&labels).inc();
    }

    /// A request refused before MCP for its credentials: `reason` is one of a fixed few.
    pub(crate) fn auth_refusal(&self, reason: &'static str) {
        self.auth_refusals.get_or_create(&label("reason", reason)).inc();
    }

    /// A notification to a `destination` kind came to `outcome`.
    pub(crate) fn notification(&self, destination: &'static str, outcome: &'static str) {
        let labels =
            vec![("destination".to_string(), destination.to_string()), ("outcome".to_string(), outcome.to_string())];
        self.notifications.get_or_create(&labels).inc();
    }

    pub(crate) fn store_error(&self) {
        self.store_errors.inc();
    }

    pub(crate) fn store_unacknowledged(&self) {
        self.store_unacknowledged.inc();
    }

    /// One sync of the audit log that made `records` lines durable.
    pub(crate) fn audit_sync(&self, records: usize) {
        self.audit_syncs.inc();
        self.audit_records.inc_by(records as u64);
    }

    pub(crate) fn trap(&self) {
        self.traps.inc();
    }

    /// The exposition (OpenMetrics text), with the pending-proposal gauge read now.
    pub(crate) fn render(&self, pending: Option<usize>) -> String {
        use prometheus_client::encoding::text::{encode_eof, encode_registry};
        let mut out = String::new();
        encode_registry(&mut out, &self.registry).expect("writing to a String cannot fail");
        if let Some(n) = pending {
            self.pending.set(n as i64);
            encode_registry(&mut out, &self.pending_registry).expect("writing to a String cannot fail");
        }
        encode_eof(&mut out).expect("writing to a String cannot fail");
        out
    }
}

/// `2xx`, `4xx`, ...: the class of an HTTP status.
pub(crate) fn status_class(status: u16) -> &'static str {
    match status {
        100..=199 => "1xx",
        200..=299 => "2xx",
        300..=399 => "3xx",
        400..=499 => "4xx",
        _ => "5xx",
    }
}

const OPENMETRICS: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";
const TEXT_004: &str = "text/plain; version=0.0.4; charset=utf-8";

/// OpenMetrics to a scraper that asks for it (Prometheus does), the classic text format to
/// everything else (curl, `promtool check metrics`).
/// Counts the pending proposals at scrape time, where the process can (its memory store).
pub(crate) type PendingCount = Arc<dyn Fn() -> Option<usize> + Send + Sync>;

/// `GET /metrics` (served by [`crate::transports::metrics_listener`]).
pub(crate) async fn scrape(State(pending): State<PendingCount>, headers: axum::http::HeaderMap) -> Response {
    let pending = pending();
    let text = metrics().render(pending);
    let wants_openmetrics = headers
        .get(header::ACCEPT)
        .and_then(|a| a.to_str().ok())
        .is_some_and(|a| a.contains("application/openmetrics-text"));
    if wants_openmetrics {
        ([(header::CONTENT_TYPE, OPENMETRICS)], text).into_response()
    } else {
        ([(header::CONTENT_TYPE, TEXT_004)], classic_text(&text)).into_response()
    }
}

/// OpenMetrics text as the classic Prometheus text format (0.0.4): a counter family is named
/// with its `_total` suffix, and there is no `# EOF`.
pub(crate) fn classic_text(openmetrics: &str) -> String {
    let counters: Vec<&str> =
        openmetrics.lines().filter_map(|l| l.strip_prefix("# TYPE ")?.strip_suffix(" counter")).collect();
    let mut out = String::with_capacity(openmetrics.len());
    for line in openmetrics.lines() {
        if line == "# EOF" {
            continue;
        }
        let renamed = ["# HELP ", "# TYPE "].iter().find_map(|prefix| {
            let rest = line.strip_prefix(prefix)?;
            let name = counters.iter().find(|c| rest.strip_prefix(**c).is_some_and(|r| r.starts_with(' ')))?;
            Some(format!("{prefix}{name}_total{}", &rest[name.len()..]))
        });
        out.push_str(renamed.as_deref().unwrap_or(line));
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_exposition_names_every_family_and_counts() {
        let m = Metrics::new();
        m.tool_call("fabric_list_metros", "ok", Duration::from_millis(12));
        m.confirmation("accepted");
        m.fabric_answer(status_class(201));
        m.create("executed");
        m.trap();
        let text = m.render(Some(3));
        for line in [
            "equinix_mcp_tool_calls_total{tool=\"fabric_list_metros\",outcome=\"ok\"} 1",
            "equinix_mcp_confirmations_total{status=\"accepted\"} 1",
            "equinix_mcp_fabric_answers_total{class=\"2xx\"} 1",
            "equinix_mcp_creates_total{outcome=\"executed\"} 1",
            "equinix_mcp_component_traps_total 1",
            "equinix_mcp_proposal_store_errors_total 0",
            "equinix_mcp_proposal_store_unacknowledged_writes_total 0",
            "equinix_mcp_pending_proposals 3",
            "equinix_mcp_tool_call_duration_seconds_count{tool=\"fabric_list_metros\"} 1",
        ] {
            assert!(text.contains(line), "{line} missing from\n{text}");
        }
        assert!(text.ends_with("# EOF\n"));
        let classic = classic_text(&text);
        assert!(classic.contains("# TYPE equinix_mcp_tool_calls_total counter\n"), "{classic}");
        assert!(classic.contains("# HELP equinix_mcp_tool_calls_total Tool calls"), "{classic}");
        assert!(classic.contains("# TYPE equinix_mcp_pending_proposals gauge\n"), "{classic}");
        assert!(!classic.contains("# EOF"));
        let shared = m.render(None);
        assert!(!shared.contains("pending_proposals") && shared.ends_with("# EOF\n"), "{shared}");
        assert_eq!(shared.matches("# EOF").count(), 1);
    }
}
