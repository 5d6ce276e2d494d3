//! The traffic the simulator reports. Each seeded port and connection follows a daily curve
//! (busiest at 15:00 UTC, quietest at 03:00), so statistics over different windows differ as
//! real ones do. DC-SEC-01 has a failing optic (erred packets in), dc-fcr-to-aws runs near its
//! 50 Mbps and drops what exceeds it, and dc-fcr-to-azure, its BGP session down, carries nothing.

use std::f64::consts::TAU;

use super::routing::FCR_CONNECTIONS;
use super::{CONNECTIONS, PORTS};

/// An asset's traffic at the busiest time of day, and its packet counts per five minutes.
pub(crate) struct Traffic {
    pub uuid: &'static str,
    /// Peak Mbps (in, out), as the asset's own end sees it.
    pub peak_mbps: (f64, f64),
    /// Packets dropped per five minutes (in, out): by a port, or over a connection's rate limit.
    pub dropped: (f64, f64),
    /// Packets with errors per five minutes (in, out); ports only.
    pub erred: (f64, f64),
}

pub(crate) const TRAFFIC: &[Traffic] = &[
    Traffic { uuid: PORTS[0].0, peak_mbps: (2100.0, 1800.0), dropped: (0.0, 0.0), erred: (0.0, 0.0) },
    Traffic { uuid: PORTS[1].0, peak_mbps: (350.0, 420.0), dropped: (4.0, 0.0), erred: (180.0, 0.0) },
    Traffic { uuid: PORTS[2].0, peak_mbps: (60.0, 40.0), dropped: (0.0, 0.0), erred: (0.0, 0.0) },
    Traffic { uuid: PORTS[3].0, peak_mbps: (1900.0, 2300.0), dropped: (0.0, 0.0), erred: (0.0, 0.0) },
    Traffic { uuid: CONNECTIONS[0].0, peak_mbps: (210.0, 180.0), dropped: (0.0, 0.0), erred: (0.0, 0.0) },
    Traffic { uuid: CONNECTIONS[1].0, peak_mbps: (95.0, 120.0), dropped: (0.0, 0.0), erred: (0.0, 0.0) },
    Traffic { uuid: FCR_CONNECTIONS[0].0, peak_mbps: (49.0, 44.0), dropped: (320.0, 0.0), erred: (0.0, 0.0) },
    Traffic { uuid: FCR_CONNECTIONS[1].0, peak_mbps: (0.0, 0.0), dropped: (0.0, 0.0), erred: (0.0, 0.0) },
];

/// The traffic of a seeded asset; anything else (a new create) carries none yet.
pub(crate) fn traffic(uuid: &str) -> &'static Traffic {
    const IDLE: Traffic = Traffic { uuid: "", peak_mbps: (0.0, 0.0), dropped: (0.0, 0.0), erred: (0.0, 0.0) };
    TRAFFIC.iter().find(|t| t.uuid == uuid).unwrap_or(&IDLE)
}

/// The share of the peak at Unix second `t`: 1 at 15:00 UTC, 0.1 at 03:00, with a steady
/// ripple of a few percent so no two intervals read the same.
pub(crate) fn share(t: i64) -> f64 {
    let day = t.rem_euclid(86_400) as f64 / 86_400.0;
    let curve = 0.55 + 0.45 * ((day - 0.625) * TAU).cos();
    let ripple = 1.0 + 0.04 * ((t / 300) as f64 * 2.399).sin();
    (curve * ripple).clamp(0.0, 1.0)
}

/// The sampling interval Fabric uses for a window: five minutes up to a day, an hour up to a
/// week, a day beyond (seconds, ISO 8601).
pub(crate) fn interval(span_secs: i64) -> (i64, &'static str) {
    match span_secs {
        s if s <= 86_400 => (300, "PT5M"),
        s if s <= 7 * 86_400 => (3_600, "PT1H"),
        _ => (86_400, "PT24H"),
    }
}

/// The ends of the intervals that overlap `[start, end)`, on the interval grid: a window
/// shorter than one interval still reads the interval it falls in.
pub(crate) fn interval_ends(start: i64, end: i64, step: i64) -> impl Iterator<Item = i64> {
    let first = (start.div_euclid(step) + 1) * step;
    (0..).map(move |i| first + i * step).take_while(move |t| t - step < end)
}
