//! What checking a passkey approval costs the server: the state rebuilt from the
//! enrolled key with the request's own challenge, then webauthn-rs's check of the assertion (client
//! data, RP ID hash, UP and UV, the ES256 signature, the counter), on an assertion Chromium's
//! virtual authenticator made in the browser test. In process, one thread: its wall time is its
//! CPU time. The store's counter update is not in it (one compare-and-swap, as every note).

use std::time::Instant;

use crate::table::Table;
use equinix_mcp_bench::recorded_passkey::Recorded;

/// The per-check ceiling: well under a person's click, and under a synced audit record.
const TARGET_US: f64 = 1000.0;

pub fn rows(t: &mut Table, quick: bool) -> anyhow::Result<()> {
    let recorded = Recorded::load().map_err(anyhow::Error::msg)?;
    let check = || recorded.check();
    check().map_err(|e| anyhow::anyhow!("the fixture's assertion does not verify: {e}"))?;
    let n = if quick { 100 } else { 2000 };
    let started = Instant::now();
    for _ in 0..n {
        check().map_err(anyhow::Error::msg)?;
    }
    let us = started.elapsed().as_secs_f64() * 1e6 / n as f64;
    t.row(
        "passkey approval: server CPU per assertion check (state with the request's challenge, webauthn-rs's ES256 check), in process",
        format!("{us:.0} µs ({n} checks)"),
        "≤ 1 ms",
        us <= TARGET_US,
    );
    Ok(())
}
