//! Where notifications go: the operator's flags (and the config file, whose keys are these flags'
//! names); no client can add or change a destination.

use std::path::PathBuf;

use clap::Args;

use super::Destination;
use crate::secret::{from_env_or_file, read_private_file};

#[derive(Args, Debug, Clone)]
pub struct NotifyArgs {
    /// Send each approval event as JSON to this URL (https, or http on loopback), signed with the
    /// keys of --notify-webhook-key-file (header x-equinix-mcp-signature; see
    /// docs/approval-page.md). The events: change_waiting, change_reminder and change_escalated
    /// (see --notify-remind-after-secs), change_approved, change_declined, change_expired (nobody
    /// decided in the proposal's time), change_executed, change_failed, change_outcome_unknown.
    #[arg(long, env = "EQUINIX_MCP_NOTIFY_WEBHOOK", value_name = "URL", requires = "notify_webhook_key_file")]
    pub(crate) notify_webhook: Option<reqwest::Url>,

    /// An owner-only file holding a signing key of the webhooks (--notify-webhook,
    /// --notify-escalate-webhook): its whole contents, every byte,
    /// a final newline included (nothing is trimmed; a receiver reads the same file the same way),
    /// at least 32 bytes. Give it twice while rotating: each notification is signed with both.
    #[arg(long, env = "EQUINIX_MCP_NOTIFY_WEBHOOK_KEY_FILE", value_name = "PATH", value_delimiter = ',')]
    pub(crate) notify_webhook_key_file: Vec<PathBuf>,

    /// An owner-only file holding a Slack incoming-webhook URL (a secret: whoever has it can
    /// post), or set EQUINIX_MCP_NOTIFY_SLACK_URL.
    #[arg(long, env = "EQUINIX_MCP_NOTIFY_SLACK_URL_FILE", value_name = "PATH")]
    pub(crate) notify_slack_url_file: Option<PathBuf>,

    /// An owner-only file holding a Microsoft Teams incoming-webhook URL (a Workflows webhook; a
    /// secret), or set EQUINIX_MCP_NOTIFY_TEAMS_URL.
    #[arg(long, env = "EQUINIX_MCP_NOTIFY_TEAMS_URL_FILE", value_name = "PATH")]
    pub(crate) notify_teams_url_file: Option<PathBuf>,

    /// A change still undecided this many seconds after it was put on the approval page is
    /// notified again (change_reminder), once, to the same destinations (0: never). Less than the
    /// proposal's 600 seconds.
    #[arg(long, env = "EQUINIX_MCP_NOTIFY_REMIND_AFTER_SECS", default_value_t = 0, value_name = "SECS")]
    pub(crate) notify_remind_after_secs: u64,

    /// A change still undecided this many seconds after it was put on the approval page is
    /// escalated (change_escalated), once, to the escalation destinations
    /// (--notify-escalate-webhook, --notify-escalate-slack-url-file, --notify-escalate-teams-url-file;
    /// 0: never). Later than the reminder, and less than the proposal's 600 seconds.
    #[arg(long, env = "EQUINIX_MCP_NOTIFY_ESCALATE_AFTER_SECS", default_value_t = 0, value_name = "SECS")]
    pub(crate) notify_escalate_after_secs: u64,

    /// Escalations go as JSON to this URL (https, or http on loopback), signed with the keys of
    /// --notify-webhook-key-file like every notice.
    #[arg(long, env = "EQUINIX_MCP_NOTIFY_ESCALATE_WEBHOOK", value_name = "URL")]
    pub(crate) notify_escalate_webhook: Option<reqwest::Url>,

    /// An owner-only file holding the Slack incoming-webhook URL escalations go to, or set
    /// EQUINIX_MCP_NOTIFY_ESCALATE_SLACK_URL.
    #[arg(long, env = "EQUINIX_MCP_NOTIFY_ESCALATE_SLACK_URL_FILE", value_name = "PATH")]
    pub(crate) notify_escalate_slack_url_file: Option<PathBuf>,

    /// An owner-only file holding the Microsoft Teams incoming-webhook URL escalations go to, or
    /// set EQUINIX_MCP_NOTIFY_ESCALATE_TEAMS_URL.
    #[arg(long, env = "EQUINIX_MCP_NOTIFY_ESCALATE_TEAMS_URL_FILE", value_name = "PATH")]
    pub(crate) notify_escalate_teams_url_file: Option<PathBuf>,

    /// How long one delivery attempt may take, connecting included, in milliseconds (at most
    /// three attempts per destination, 0.5 s then 1 s apart).
    #[arg(long, env = "EQUINIX_MCP_NOTIFY_ATTEMPT_TIMEOUT_MS", default_value_t = 5000, value_name = "MS",
          value_parser = clap::value_parser!(u64).range(100..=60_000))]
    pub(crate) notify_attempt_timeout_ms: u64,
}

/// The shortest signing key accepted.
const MIN_KEY_BYTES: usize = 32;

impl NotifyArgs {
    pub(crate) fn attempt_timeout(&self) -> std::time::Duration {
        std::time::Duration::from_millis(self.notify_attempt_timeout_ms)
    }

    /// When an undecided change is reminded of and escalated; an error names the setting that is
    /// wrong (a time the proposal does not live to, an escalation with nowhere to go).
    pub(crate) fn follow_ups(&self, escalation: &[Destination]) -> anyhow::Result<super::FollowUps> {
        let ttl_secs = crate::approval::TTL_MS / 1000;
        let (remind, escalate) = (self.notify_remind_after_secs, self.notify_escalate_after_secs);
        for (flag, secs) in [("--notify-remind-after-secs", remind), ("--notify-escalate-after-secs", escalate)] {
            if secs >= ttl_secs {
                anyhow::bail!(
                    "{flag} {secs}: a proposal waits {ttl_secs} s at most, so it would never be sent; give fewer                      seconds, or 0 for never"
                );
            }
        }
        if escalate > 0 && remind >= escalate {
            anyhow::bail!(
                "--notify-escalate-after-secs {escalate} comes no later than --notify-remind-after-secs {remind}: an                  escalation follows the reminder"
            );
        }
        if escalate > 0 && escalation.is_empty() {
            anyhow::bail!(
                "--notify-escalate-after-secs {escalate} has nowhere to go: name --notify-escalate-webhook,                  --notify-escalate-slack-url-file or --notify-escalate-teams-url-file"
            );
        }
        if escalate == 0 && !escalation.is_empty() {
            anyhow::bail!(
                "an escalation destination is given without --notify-escalate-after-secs: say after how long a change                  nobody decided is escalated"
            );
        }
        let ms = |secs: u64| (secs > 0).then_some(secs * 1000);
        Ok(super::FollowUps { remind_after_ms: ms(remind), escalate_after_ms: ms(escalate) })
    }

    /// The escalation destinations; an error names the setting that is wrong.
    pub(crate) fn escalation_destinations(&self) -> anyhow::Result<Vec<Destination>> {
        let mut out = Vec::new();
        if let Some(url) = &self.notify_escalate_webhook {
            check_webhook_url(url, "--notify-escalate-webhook")?;
            if self.notify_webhook_key_file.is_empty() {
                anyhow::bail!(
                    "--notify-escalate-webhook {url}: escalations are signed like every notice, with                      --notify-webhook-key-file"
                );
            }
            out.push(Destination::Webhook { url: url.clone(), keys: self.keys()? });
        }
        let chats = [
            (
                "EQUINIX_MCP_NOTIFY_ESCALATE_SLACK_URL",
                &self.notify_escalate_slack_url_file,
                "--notify-escalate-slack-url-file",
            ),
            (
                "EQUINIX_MCP_NOTIFY_ESCALATE_TEAMS_URL",
                &self.notify_escalate_teams_url_file,
                "--notify-escalate-teams-url-file",
            ),
        ];
        for (i, (var, file, flag)) in chats.into_iter().enumerate() {
            if let Some(url) = chat_url(var, file, flag)? {
                out.push(if i == 0 { Destination::Slack { url } } else { Destination::Teams { url } });
            }
        }
        Ok(out)
    }

    /// The webhook's signing keys, each file's whole contents.
    fn keys(&self) -> anyhow::Result<Vec<Vec<u8>>> {
        if self.notify_webhook_key_file.len() > 2 {
            anyhow::bail!("--notify-webhook-key-file: at most two keys (the current one and the next)");
        }
        let mut keys = Vec::new();
        for path in &self.notify_webhook_key_file {
            // the whole contents, as --help and the docs say: a receiver that reads the file
            // the documented way holds the same bytes, a final newline included
            let key = read_private_file(path, "--notify-webhook-key-file")?.into_bytes();
            if key.len() < MIN_KEY_BYTES {
                anyhow::bail!(
                    "--notify-webhook-key-file {}: {} bytes; a signing key has at least {MIN_KEY_BYTES}",
                    path.display(),
                    key.len()
                );
            }
            keys.push(key);
        }
        Ok(keys)
    }

    /// The destinations these settings name; an error names the setting that is wrong.
    pub(crate) fn destinations(&self) -> anyhow::Result<Vec<Destination>> {
        let mut out = Vec::new();
        if self.notify_webhook.is_none()
            && self.notify_escalate_webhook.is_none()
            && !self.notify_webhook_key_file.is_empty()
        {
            anyhow::bail!(
                "--notify-webhook-key-file is given, but no --notify-webhook to sign for: name the webhook, or drop the \
                 key (in the systemd unit, its LoadCredential= and Environment= pair)"
            );
        }
        if let Some(url) = &self.notify_webhook {
            check_webhook_url(url, "--notify-webhook")?;
            out.push(Destination::Webhook { url: url.clone(), keys: self.keys()? });
        }
        if let Some(url) =
            chat_url("EQUINIX_MCP_NOTIFY_SLACK_URL", &self.notify_slack_url_file, "--notify-slack-url-file")?
        {
            out.push(Destination::Slack { url });
        }
        if let Some(url) =
            chat_url("EQUINIX_MCP_NOTIFY_TEAMS_URL", &self.notify_teams_url_file, "--notify-teams-url-file")?
        {
            out.push(Destination::Teams { url });
        }
        Ok(out)
    }
}

/// A webhook's URL: https, or http on loopback.
fn check_webhook_url(url: &reqwest::Url, flag: &str) -> anyhow::Result<()> {
    let loopback = url.host_str().is_some_and(|h| matches!(h, "127.0.0.1" | "[::1]" | "localhost"));
    if url.scheme() != "https" && !(url.scheme() == "http" && loopback) {
        anyhow::bail!("{flag} {url}: https, or http on loopback only (a notification names people)");
    }
    Ok(())
}

/// A chat's incoming-webhook URL, from its environment variable or owner-only file.
fn chat_url(var: &str, file: &Option<PathBuf>, flag: &str) -> anyhow::Result<Option<crate::secret::Secret>> {
    let url = from_env_or_file(std::env::var(var).ok(), file.as_deref(), var, flag)?;
    if let Some(u) = &url
        && !reqwest::Url::parse(u.expose()).is_ok_and(|u| u.scheme() == "https" || u.scheme() == "http")
    {
        anyhow::bail!("{flag}: the URL it holds does not parse as an http(s) URL");
    }
    Ok(url)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args() -> NotifyArgs {
        NotifyArgs {
            notify_webhook: None,
            notify_webhook_key_file: vec![],
            notify_slack_url_file: None,
            notify_teams_url_file: None,
            notify_remind_after_secs: 0,
            notify_escalate_after_secs: 0,
            notify_escalate_webhook: None,
            notify_escalate_slack_url_file: None,
            notify_escalate_teams_url_file: None,
            notify_attempt_timeout_ms: 5000,
        }
    }

    #[test]
    fn reminders_and_escalations_come_in_the_proposals_time_in_order_and_somewhere() {
        let with = |remind: u64, escalate: u64| NotifyArgs {
            notify_remind_after_secs: remind,
            notify_escalate_after_secs: escalate,
            ..args()
        };
        let somewhere = [Destination::Slack { url: crate::secret::Secret::new("https://hooks.slack.com/x") }];
        let e = with(600, 0).follow_ups(&[]).unwrap_err().to_string();
        assert!(e.contains("--notify-remind-after-secs 600") && e.contains("never be sent"), "{e}");
        let e = with(300, 200).follow_ups(&somewhere).unwrap_err().to_string();
        assert!(e.contains("no later than --notify-remind-after-secs 300"), "{e}");
        let e = with(120, 300).follow_ups(&[]).unwrap_err().to_string();
        assert!(e.contains("nowhere to go"), "{e}");
        let e = with(120, 0).follow_ups(&somewhere).unwrap_err().to_string();
        assert!(e.contains("without --notify-escalate-after-secs"), "{e}");
        let ok = with(120, 300).follow_ups(&somewhere).unwrap();
        assert_eq!((ok.remind_after_ms, ok.escalate_after_ms), (Some(120_000), Some(300_000)));
        assert_eq!(with(0, 0).follow_ups(&[]).unwrap().remind_after_ms, None, "0: never");
        let (_d, key) = private(&"k".repeat(32));
        let unsigned =
            NotifyArgs { notify_escalate_webhook: Some("https://oncall.example/x".parse().unwrap()), ..args() };
        let e = unsigned.escalation_destinations().unwrap_err().to_string();
        assert!(e.contains("signed like every notice"), "{e}");
        let signed = NotifyArgs { notify_webhook_key_file: vec![key], ..unsigned };
        assert_eq!(signed.escalation_destinations().unwrap()[0].label(), "webhook oncall.example");
    }

    fn private(text: &str) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("secret");
        std::fs::write(&path, text).unwrap();
        #[cfg(unix)]
        std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
        (dir, path)
    }

    #[test]
    fn a_webhook_needs_https_or_loopback_and_keys_long_enough() {
        let (_d, short) = private("too-short");
        let (_e, good) = private(&"k".repeat(32));
        let with = |url: &str, keys: Vec<PathBuf>| NotifyArgs {
            notify_webhook: Some(url.parse().unwrap()),
            notify_webhook_key_file: keys,
            ..args()
        };
        let e = with("http://hooks.example/x", vec![good.clone()]).destinations().unwrap_err().to_string();
        assert!(e.contains("https, or http on loopback only"), "{e}");
        let e = with("https://hooks.example/x", vec![short]).destinations().unwrap_err().to_string();
        assert!(e.contains("9 bytes; a signing key has at least 32"), "{e}");
        let e = with("https://hooks.example/x", vec![good.clone(); 3]).destinations().unwrap_err().to_string();
        assert!(e.contains("at most two keys"), "{e}");
        // the whole contents are the key, a final newline included: nothing is trimmed
        let (_g, made_by_openssl) = private(&format!("{}\n", "a1".repeat(32)));
        let got = with("http://127.0.0.1:9/x", vec![made_by_openssl]).destinations().unwrap();
        assert!(
            matches!(&got[..], [Destination::Webhook { keys, .. }] if keys[0] == format!("{}\n", "a1".repeat(32)).as_bytes()),
            "{got:?}"
        );
        let (_h, newline_padded) = private(&format!("{}\n", "k".repeat(31)));
        assert!(with("http://127.0.0.1:9/x", vec![newline_padded]).destinations().is_ok(), "32 bytes with the newline");
        let ok = with("http://127.0.0.1:9/x", vec![good.clone(), good]).destinations().unwrap();
        assert!(matches!(&ok[..], [Destination::Webhook { keys, .. }] if keys.len() == 2));
        assert_eq!(ok[0].label(), "webhook 127.0.0.1", "named by its host, never its path");
        assert!(args().destinations().unwrap().is_empty(), "none configured: none");
        let (_f, key) = private(&"k".repeat(32));
        let e =
            NotifyArgs { notify_webhook_key_file: vec![key.clone()], ..args() }.destinations().unwrap_err().to_string();
        assert!(e.contains("no --notify-webhook to sign for"), "a key for nothing is no silent no-op: {e}");
        // an escalation webhook alone signs with the same keys, and needs no other webhook
        let escalation_only = NotifyArgs {
            notify_webhook_key_file: vec![key],
            notify_escalate_webhook: Some("https://oncall.example/x".parse().unwrap()),
            ..args()
        };
        assert!(escalation_only.destinations().unwrap().is_empty());
        assert_eq!(escalation_only.escalation_destinations().unwrap().len(), 1);
    }

    #[test]
    fn a_chat_url_comes_from_an_owner_only_file_and_must_parse() {
        let (_d, slack) = private("https://hooks.slack.com/services/T/B/secret\n");
        let got = NotifyArgs { notify_slack_url_file: Some(slack), ..args() }.destinations().unwrap();
        assert!(
            matches!(&got[..], [Destination::Slack { url }] if url.expose() == "https://hooks.slack.com/services/T/B/secret")
        );
        assert_eq!(got[0].label(), "slack");
        let (_e, junk) = private("not a url");
        let e = NotifyArgs { notify_teams_url_file: Some(junk), ..args() }.destinations().unwrap_err().to_string();
        assert!(e.contains("--notify-teams-url-file") && !e.contains("not a url"), "{e}");
    }
}
