//! Telling people that a change waits for them, and what became of it: to destinations the
//! operator configured and no client can ([`settings`]): a JSON webhook signed with HMAC-SHA256,
//! and Slack's and Microsoft Teams' incoming webhooks ([`formats`]).
//!
//! Nothing here can hold the broker back: a notice goes into a bounded queue without waiting
//! (a full queue drops it, counted and logged), and one background task delivers it: each event
//! once across replicas (claimed in the proposal store first), each destination with a timeout
//! per attempt, at most [`ATTEMPTS`] attempts with a growing pause between them, no redirect
//! followed. Each delivery and each failure is counted in `/metrics` and recorded in the audit log.

pub(crate) mod formats;
pub(crate) mod settings;

use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use tokio::sync::mpsc;

use crate::approval::Once;
use crate::audit::{AuditLog, Event, events};
use crate::clock::Clock;
use crate::proposals::ProposalStore;
use crate::secret::Secret;

/// Notices waiting for delivery at most; more are dropped (and counted).
pub(crate) const QUEUE: usize = 256;
/// Attempts per destination and notice.
pub(crate) const ATTEMPTS: u32 = 3;
/// The pause before the second attempt; it doubles before each next one.
const FIRST_PAUSE: Duration = Duration::from_millis(500);

/// What happened, as a destination is told. The same words for every destination.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct Notice {
    /// `change_waiting`, `change_reminder`, `change_escalated`, `change_approved`,
    /// `change_partly_approved`, `change_declined`, `change_expired`, `change_executed`,
    /// `change_failed`, `change_outcome_unknown`.
    pub event: &'static str,
    /// What makes this event one (the page or the request, and the event): claimed once across
    /// replicas. Not sent.
    #[serde(skip)]
    pub key: String,
    pub change_type: String,
    /// The plan's summary line (`+ create connection "to-aws" (billable): EVPL_VC, 500 Mbps`).
    pub summary: Option<String>,
    /// The approval page's link (no credential: the page asks the person to sign in).
    pub approval_url: Option<String>,
    pub proposer: String,
    pub approver: Option<String>,
    /// What the operator's policy said, when there is one.
    pub policy: Option<String>,
    /// A create's outcome (`executed`, `rejected`, `unknown`, `not_sent`), for the last three events.
    pub outcome: Option<String>,
    /// Where the request stands, named as the page, the inbox and the agent's answer name it
    /// (`waiting`, `approved`, `declined`, `expired`, `created`, `failed`, `outcome_unknown`,
    /// `not_sent`).
    pub state: &'static str,
    /// The approver's reason (a decline's) or comment (an approval's), in their words.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Under a quorum: how far its approvals have come ("1 of 2 approvals; waiting for 1 more of
    /// netops").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub progress: Option<String>,
    /// The break-glass rules the request is under: a freeze only their quorum opens.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub break_glass: Vec<String>,
    pub request_sha256: String,
    pub at: String,
}

/// Where notices go.
#[derive(Clone)]
pub(crate) enum Destination {
    /// A generic JSON webhook, signed with each of its keys (two during a rotation).
    Webhook { url: reqwest::Url, keys: Vec<Vec<u8>> },
    /// A Slack incoming webhook (its URL is its secret).
    Slack { url: Secret },
    /// A Microsoft Teams incoming webhook (its URL is its secret).
    Teams { url: Secret },
}

/// Its label only: the keys and the chat URLs are secrets.
impl std::fmt::Debug for Destination {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.label())
    }
}

impl Destination {
    /// How metrics, logs and the audit name it: the generic webhook by its host, a chat by its
    /// kind (their URLs are secrets).
    pub(crate) fn label(&self) -> String {
        match self {
            Destination::Webhook { url, .. } => format!("webhook {}", url.host_str().unwrap_or("?")),
            Destination::Slack { .. } => "slack".into(),
            Destination::Teams { .. } => "teams".into(),
        }
    }

    fn kind(&self) -> &'static str {
        match self {
            Destination::Webhook { .. } => "webhook",
            Destination::Slack { .. } => "slack",
            Destination::Teams { .. } => "teams",
        }
    }
}

/// The event an escalation is sent as (to the escalation destinations only).
pub(crate) const ESCALATED: &str = "change_escalated";
/// The event a reminder is sent as.
pub(crate) const REMINDER: &str = "change_reminder";
/// The event an approval that leaves a quorum short is sent as.
pub(crate) const PARTLY_APPROVED: &str = "change_partly_approved";

/// When a change nobody decided is notified again, and escalated (none: never), counted from
/// when it was put on the approval page.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FollowUps {
    pub(crate) remind_after_ms: Option<u64>,
    pub(crate) escalate_after_ms: Option<u64>,
}

/// The operator's notifications: a queue and the task that empties it.
pub struct Notifier {
    queue: mpsc::Sender<Notice>,
    /// Records a notice the full queue dropped.
    delivery: Arc<Delivery>,
    /// When a change nobody decided is reminded of and escalated.
    pub follow_ups: FollowUps,
}

impl Notifier {
    /// Starts delivering to `destinations` (escalations to `escalation`), each attempt within
    /// `timeout` (none: no notifier).
    pub(crate) fn start(
        (destinations, escalation, follow_ups): (Vec<Destination>, Vec<Destination>, FollowUps),
        timeout: Duration,
        store: Arc<ProposalStore>,
        clock: Clock,
        audit: Option<Arc<AuditLog>>,
    ) -> anyhow::Result<Option<Arc<Notifier>>> {
        if destinations.is_empty() && escalation.is_empty() {
            return Ok(None);
        }
        crate::install_crypto_provider();
        let client = reqwest::Client::builder()
            .connect_timeout(timeout)
            .timeout(timeout)
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(concat!("equinix-mcp/", env!("CARGO_PKG_VERSION")))
            .build()?;
        let (queue, mut waiting) = mpsc::channel::<Notice>(QUEUE);
        let delivery = Arc::new(Delivery { client, destinations, escalation, store, clock, audit, timeout });
        let delivering = delivery.clone();
        tokio::spawn(async move {
            while let Some(notice) = waiting.recv().await {
                let delivery = delivering.clone();
                // each notice on its own task: a slow destination delays no other notice
                tokio::spawn(async move { delivery.deliver(notice).await });
            }
        });
        Ok(Some(Arc::new(Notifier { queue, delivery, follow_ups })))
    }

    /// Queues `notice` without waiting; a full queue drops it: counted, logged, and recorded in
    /// the audit log as a notice no destination was sent. Whether it was queued.
    pub(crate) fn notify(&self, notice: Notice) -> bool {
        match self.queue.try_send(notice) {
            Ok(()) => true,
            Err(mpsc::error::TrySendError::Full(notice) | mpsc::error::TrySendError::Closed(notice)) => {
                crate::metrics::metrics().notification("queue", "dropped");
                tracing::warn!(event = notice.event, "a notification was dropped: its queue of {QUEUE} is full");
                let delivery = self.delivery.clone();
                tokio::spawn(async move { delivery.dropped(notice).await });
                false
            }
        }
    }
}

struct Delivery {
    client: reqwest::Client,
    destinations: Vec<Destination>,
    /// Where escalations go (and only they).
    escalation: Vec<Destination>,
    store: Arc<ProposalStore>,
    clock: Clock,
    audit: Option<Arc<AuditLog>>,
    timeout: Duration,
}

impl Delivery {
    /// Records that `notice` was dropped before any destination was tried (the queue was full).
    /// Where `notice` goes: an escalation to the escalation destinations, anything else to the
    /// others.
    fn routes(&self, notice: &Notice) -> &[Destination] {
        if notice.event == ESCALATED { &self.escalation } else { &self.destinations }
    }

    async fn dropped(&self, notice: Notice) {
        let destinations = self
            .routes(&notice)
            .iter()
            .map(|d| events::Delivered {
                destination: d.label(),
                outcome: "dropped".into(),
                attempts: 0,
                http_status: None,
                error: Some(format!("not sent: the queue of {QUEUE} notices waiting was full")),
            })
            .collect();
        self.record(&notice, "-".into(), destinations).await;
    }

    async fn record(&self, notice: &Notice, delivery: String, destinations: Vec<events::Delivered>) {
        let record = Event::Notification(events::Notification {
            notice: notice.event.into(),
            delivery,
            request_sha256: notice.request_sha256.clone(),
            destinations,
        });
        if let Some(log) = self.audit.clone()
            && let Err(e) = AuditLog::record(log, record.at(self.clock.now_ms())).await
        {
            tracing::error!("a notification is not in the audit log: {e}");
        }
    }

    async fn deliver(&self, notice: Notice) {
        // one notification per event, however many replicas saw it
        match self.store.claim(Once::Notice(&notice.key), self.clock.now_ms()).await {
            Ok(true) => {}
            Ok(false) => return,
            Err(e) => {
                crate::metrics::metrics().notification("store", "failed");
                tracing::warn!(event = notice.event, "a notification was not sent: {e}");
                return;
            }
        }
        let id = hex::encode(rand::random::<[u8; 16]>());
        let sends = self.routes(&notice).iter().map(|d| self.to(d, &notice, &id));
        let destinations = futures_util::future::join_all(sends).await;
        // one record for the notice, once every destination's attempts are over
        self.record(&notice, id, destinations).await;
    }

    /// Delivers `notice` to `destination`, attempt after attempt: what it came to (counted).
    async fn to(&self, destination: &Destination, notice: &Notice, id: &str) -> events::Delivered {
        let mut pause = FIRST_PAUSE;
        let mut attempt = 0;
        let outcome = loop {
            attempt += 1;
            let answer = self.attempt(destination, notice, id).await;
            let retry = match &answer {
                Ok(status) if (200..300).contains(status) => break Ok(*status),
                // a redirect is not followed, and asking again would meet it again
                Ok(status) if (300..400).contains(status) => false,
                Ok(status) => *status >= 500 || matches!(status, 408 | 429),
                // a URL that does not parse will not parse the next time either
                Err(Unanswered::UrlDoesNotParse) => false,
                Err(Unanswered::NoAnswerWithin(_) | Unanswered::Transport(_)) => true,
            };
            if !retry || attempt >= ATTEMPTS {
                break Err(match answer {
                    Ok(status) => format!("answered HTTP {status}"),
                    Err(why) => why.to_string(),
                });
            }
            tokio::time::sleep(pause).await;
            pause *= 2;
        };
        let destination_label = destination.label();
        match outcome {
            Ok(status) => {
                crate::metrics::metrics().notification(destination.kind(), "delivered");
                events::Delivered {
                    destination: destination_label,
                    outcome: "delivered".into(),
                    attempts: attempt,
                    http_status: Some(status),
                    error: None,
                }
            }
            Err(why) => {
                crate::metrics::metrics().notification(destination.kind(), "failed");
                tracing::warn!(destination = %destination_label, event = notice.event, attempts = attempt, "a notification failed: {why}");
                events::Delivered {
                    destination: destination_label,
                    outcome: "failed".into(),
                    attempts: attempt,
                    http_status: None,
                    error: Some(why),
                }
            }
        }
    }

    /// One attempt: the status the destination answered, or why none came.
    async fn attempt(&self, destination: &Destination, notice: &Notice, id: &str) -> Result<u16, Unanswered> {
        let (url, body) = match destination {
            Destination::Webhook { url, .. } => (url.clone(), formats::webhook_body(notice)),
            Destination::Slack { url } => (parse(url)?, formats::slack_body(notice)),
            Destination::Teams { url } => (parse(url)?, formats::teams_body(notice)),
        };
        let mut request = self
            .client
            .post(url)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .header(formats::EVENT_HEADER, notice.event)
            .header(formats::DELIVERY_HEADER, id);
        if let Destination::Webhook { keys, .. } = destination {
            // the receiver compares it with its own wall clock, not with this server's test clock
            let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
            request = request.header(formats::SIGNATURE_HEADER, formats::signature(keys, now, &body));
        }
        match request.body(body).send().await {
            Ok(answer) => Ok(answer.status().as_u16()),
            // the URL may be a secret: never in an error
            Err(e) if e.is_timeout() => Err(Unanswered::NoAnswerWithin(self.timeout.as_millis())),
            Err(e) => Err(Unanswered::Transport(crate::fabric_client::root_cause(&e.without_url()))),
        }
    }
}

/// Why an attempt got no HTTP answer. The URL may be a secret, so none of these holds it.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
enum Unanswered {
    #[error("its URL does not parse")]
    UrlDoesNotParse,
    #[error("no answer within {0} ms")]
    NoAnswerWithin(u128),
    /// The transport's own words, without the URL.
    #[error("{0}")]
    Transport(String),
}

fn parse(url: &Secret) -> Result<reqwest::Url, Unanswered> {
    reqwest::Url::parse(url.expose()).map_err(|_| Unanswered::UrlDoesNotParse)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn notice(n: usize) -> Notice {
        Notice {
            event: "change_waiting",
            key: format!("change_waiting apv-{n}"),
            change_type: "connection_create".into(),
            summary: None,
            approval_url: None,
            proposer: "local".into(),
            approver: None,
            policy: None,
            outcome: None,
            state: "waiting",
            reason: None,
            progress: None,
            break_glass: Vec::new(),
            request_sha256: format!("{n:064x}"),
            at: "2026-12-06T00:00:00Z".into(),
        }
    }

    #[tokio::test]
    async fn a_url_that_does_not_parse_is_tried_once_and_named_without_its_text() {
        crate::install_crypto_provider();
        let url = Secret::new("hooks.slack.com/services/T/B/secret");
        let delivery = Delivery {
            client: reqwest::Client::new(),
            destinations: Vec::new(),
            escalation: Vec::new(),
            store: Arc::new(ProposalStore::new()),
            clock: Clock::default(),
            audit: None,
            timeout: Duration::from_millis(100),
        };
        let destination = Destination::Slack { url };
        assert_eq!(delivery.attempt(&destination, &notice(1), "id").await, Err(Unanswered::UrlDoesNotParse));
        let delivered = delivery.to(&destination, &notice(1), "id").await;
        assert_eq!((delivered.outcome.as_str(), delivered.attempts), ("failed", 1), "not asked again");
        let error = delivered.error.unwrap();
        assert_eq!(error, "its URL does not parse");
        assert!(!error.contains("secret"));
    }

    #[tokio::test]
    async fn a_full_queue_drops_without_waiting_and_the_audit_log_says_which_notice_was_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let audit = Arc::new(AuditLog::open(&dir.path().join("audit.jsonl")).unwrap());
        crate::install_crypto_provider();
        let url: reqwest::Url = "http://127.0.0.1:9/hook".parse().unwrap();
        let delivery = Arc::new(Delivery {
            client: reqwest::Client::new(),
            destinations: vec![Destination::Webhook { url, keys: vec![vec![b'k'; 32]] }],
            escalation: Vec::new(),
            store: Arc::new(ProposalStore::new()),
            clock: Clock::default(),
            audit: Some(audit.clone()),
            timeout: Duration::from_millis(100),
        });
        // a queue nobody empties, as when every delivery task is busy
        let (queue, _waiting) = mpsc::channel::<Notice>(QUEUE);
        let notifier = Notifier { queue, delivery, follow_ups: FollowUps::default() };
        let started = std::time::Instant::now();
        let queued = (0..QUEUE + 2).filter(|n| notifier.notify(notice(*n))).count();
        assert_eq!(queued, QUEUE, "the queue takes {QUEUE}, the rest are dropped");
        assert!(started.elapsed() < Duration::from_secs(5), "notify never waits for room");
        let path = dir.path().join("audit.jsonl");
        let recorded = || {
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            text.lines()
                .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
                .filter(|r| r["event"] == "notification")
                .collect::<Vec<_>>()
        };
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while recorded().len() < 2 && std::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let records = recorded();
        assert_eq!(records.len(), 2, "one record per dropped notice: {records:?}");
        let mut shas: Vec<&str> = records.iter().map(|r| r["request_sha256"].as_str().unwrap()).collect();
        shas.sort();
        assert_eq!(shas, [format!("{:064x}", QUEUE), format!("{:064x}", QUEUE + 1)]);
        let d = &records[0]["destinations"][0];
        assert_eq!((d["outcome"].as_str(), d["attempts"].as_u64()), (Some("dropped"), Some(0)), "{d}");
        assert!(d["error"].as_str().unwrap().contains("queue of 256"), "{d}");
    }
}
