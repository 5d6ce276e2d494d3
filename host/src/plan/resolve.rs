//! Sends the plan's reads ([`super::reads`]): all at once, each bounded in time and in the size
//! of its answer, once per proposal (the plan is stored with it). A read that fails says why and
//! the plan says it could not resolve that value; nothing here can block or hide the exact bytes.

use std::time::Duration;

use equinix_broker_contract::ChangeType;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::reads::{self, Answers, Key, NoAnswer};
use crate::fabric_client::{FabricClient, SendError};

/// The longest the host waits for one read (they run at once, so also for all of them).
pub(crate) const READ_TIMEOUT: Duration = Duration::from_secs(3);
/// The largest answer read.
pub(crate) const MAX_ANSWER_BYTES: usize = 256 * 1024;

/// Reads what `change_type`'s `body` references: the answers, and how many reads were over the
/// limit and not sent.
pub async fn read_all(
    client: &FabricClient,
    cancel: &CancellationToken,
    change_type: ChangeType,
    body: &Value,
) -> (Answers, usize) {
    let (keys, over) = reads::of(change_type, body);
    let sent = keys.len();
    let mut answers = read(client, cancel, change_type, body, keys).await;
    // a port's metro by Fabric's name, when its own answer does not give it: one more round, only then
    let then = reads::follow_ups(&answers, reads::MAX_READS.saturating_sub(sent));
    if !then.is_empty() {
        answers.extend(read(client, cancel, change_type, body, then).await);
    }
    (answers, over)
}

/// Sends the reads of `keys` at once.
async fn read(
    client: &FabricClient,
    cancel: &CancellationToken,
    change_type: ChangeType,
    body: &Value,
    keys: Vec<Key>,
) -> Answers {
    let sends = keys.into_iter().filter_map(|key| {
        let request = key.request(change_type, body)?;
        Some(async move {
            let answer = match tokio::time::timeout(READ_TIMEOUT, client.send(&request, cancel)).await {
                Err(_) => Err(NoAnswer::NotWithin(READ_TIMEOUT.as_secs())),
                Ok(Err(e)) => Err(failed(e)),
                Ok(Ok(r)) if r.body.len() > MAX_ANSWER_BYTES => {
                    Err(NoAnswer::TooLarge { bytes: r.body.len(), limit: MAX_ANSWER_BYTES })
                }
                Ok(Ok(r)) if (200..300).contains(&r.status) => {
                    serde_json::from_str(&r.body).map_err(|_| NoAnswer::NotJson)
                }
                Ok(Ok(r)) => Err(NoAnswer::Status { status: r.status, first_error: first_error(&r.body) }),
            };
            (key, answer)
        })
    });
    futures_util::future::join_all(sends).await.into_iter().collect()
}

/// Why a read was not answered, in words that carry no secret.
fn failed(e: SendError) -> NoAnswer {
    match e {
        SendError::Refused(why) | SendError::Denied(why) => NoAnswer::NotSent(super::shown(&why)),
        SendError::Cancelled => NoAnswer::Cancelled,
        SendError::Unavailable(_) => NoAnswer::Unreachable,
        SendError::Timeout => NoAnswer::TimedOut,
        SendError::Transport(_) => NoAnswer::Broken,
    }
}

/// `: CODE message` of Fabric's first error, when its answer is one.
fn first_error(body: &str) -> String {
    let v: Value = serde_json::from_str(body).unwrap_or_default();
    let first = v.as_array().and_then(|a| a.first()).unwrap_or(&v);
    let code = first["errorCode"].as_str().unwrap_or_default();
    let message = first["errorMessage"].as_str().unwrap_or_default();
    match (code, message) {
        ("", "") => String::new(),
        _ => format!(": {}", super::shown(format!("{code} {message}").trim())),
    }
}
