//! Faults a test queues (`POST /_sim/faults` or [`crate::SimHandle::inject`]) for the next
//! matching requests: answer with a status, break the connection after processing, or stall.

use serde::{Deserialize, Serialize};

/// A fault to inject into the next matching requests.
#[derive(Clone, Debug, Deserialize, Serialize)]
pub struct Fault {
    /// `"GET /fabric/v4/metros"`, `"POST /fabric/v4/connections"` (real creates only),
    /// `"POST /fabric/v4/connections?dryRun=true"`, or `"*"`.
    pub route: String,
    /// HTTP status to answer with (mode `respond`).
    #[serde(default = "five_hundred")]
    pub status: u16,
    /// Raw body to answer with; a Fabric-style error array when absent.
    #[serde(default)]
    pub body: Option<String>,
    /// How many matching requests it applies to.
    #[serde(default = "one")]
    pub times: u32,
    /// `respond` (default): answer `status`/`body` instead of processing. `drop`: process the
    /// request (a create persists) and then break the connection mid-answer. `stall`: wait
    /// `stall_ms`, then process normally.
    #[serde(default)]
    pub mode: FaultMode,
    #[serde(default)]
    pub stall_ms: u64,
    /// `Retry-After` seconds to send with a `respond` fault.
    #[serde(default)]
    pub retry_after: Option<u64>,
}

#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum FaultMode {
    #[default]
    Respond,
    Drop,
    Stall,
}

impl Fault {
    /// A plain `respond` fault.
    pub fn status(route: &str, status: u16) -> Fault {
        Fault {
            route: route.into(),
            status,
            body: None,
            times: 1,
            mode: FaultMode::Respond,
            stall_ms: 0,
            retry_after: None,
        }
    }
}

fn one() -> u32 {
    1
}

fn five_hundred() -> u16 {
    500
}

/// The first queued fault for `key` (or `"*"`), counted down and removed when used up.
pub(crate) fn take(faults: &mut std::collections::VecDeque<Fault>, key: &str) -> Option<Fault> {
    let i = faults.iter().position(|f| f.route == "*" || f.route == key)?;
    let fault = faults[i].clone();
    if fault.times <= 1 {
        faults.remove(i);
    } else {
        faults[i].times -= 1;
    }
    Some(fault)
}
