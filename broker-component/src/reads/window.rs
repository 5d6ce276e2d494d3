//! The time window of a statistics or events read, stated simply: `window` (how far back from
//! now, e.g. `1h`), or `start` and optionally `end` as ISO 8601 date-times; sent to Fabric as
//! RFC 3339 in UTC.

use alloc::format;
use alloc::string::String;
use serde_json::Value;

use crate::args::text;
use crate::capability::Host;
use crate::grammar::{DATE_TIME, Field, Kind, opt};
use crate::time::{format_rfc3339_ms, parse_rfc3339_ms};
use crate::tool_error::ToolError;

/// The look-backs an agent may name: a count and a unit (minutes, hours, days).
const NAMES: &[&str] = &["15m", "1h", "6h", "24h", "7d", "30d"];

/// Fabric keeps five-minute data for 90 days; a longer window is not one it can answer.
const MAX_SPAN_MS: u64 = 90 * 86_400_000;
/// How far past this host's clock an end may lie (clocks differ a little).
const CLOCK_SKEW_MS: u64 = 5 * 60_000;

pub(crate) const WINDOW: Field = opt("window", Kind::Enum(NAMES), "Up to now: 1h is the last hour");
pub(crate) const START: Field = opt("start", DATE_TIME, "Instead of window");
pub(crate) const END: Field = opt("end", DATE_TIME, "With start (now)");

/// A window as Fabric reads it: RFC 3339 start and end in UTC.
pub(crate) struct Window {
    pub start: String,
    pub end: String,
}

/// An hour, the default window of a statistics read.
pub(crate) const HOUR_MS: u64 = 3_600_000;

/// The window the arguments state, or the last `default_ms` when they state none.
pub(crate) fn window(host: &mut dyn Host, args: &Value, default_ms: u64) -> Result<Window, ToolError> {
    let now = host.now_ms();
    Ok(as_window(stated(args, now)?.unwrap_or((now.saturating_sub(default_ms), now))))
}

/// The window the arguments state, if they state one.
pub(crate) fn stated_window(host: &mut dyn Host, args: &Value) -> Result<Option<Window>, ToolError> {
    let now = host.now_ms();
    Ok(stated(args, now)?.map(as_window))
}

fn as_window((from, to): (u64, u64)) -> Window {
    Window { start: format_rfc3339_ms(from), end: format_rfc3339_ms(to) }
}

/// The milliseconds of a look-back name such as `15m`, `1h` or `7d`.
fn lookback(name: &str) -> Option<u64> {
    let (count, unit) = name.split_at(name.len().checked_sub(1)?);
    let unit_ms = match unit {
        "m" => 60_000,
        "h" => 3_600_000,
        "d" => 86_400_000,
        _ => return None,
    };
    count.parse::<u64>().ok().map(|n| n * unit_ms)
}

/// `(start, end)` in Unix milliseconds from `window`, or from `start` and `end` (now by default).
fn stated(args: &Value, now: u64) -> Result<Option<(u64, u64)>, ToolError> {
    let (name, start, end) = (text(args, "window"), text(args, "start"), text(args, "end"));
    let at = |key: &str, s: &str| {
        parse_rfc3339_ms(s).ok_or_else(|| {
            ToolError::invalid_argument(&format!("/{key}"), "not an ISO 8601 date-time such as 2026-12-01T09:00:00Z")
        })
    };
    let (from, to) = match (name, start, end) {
        (Some(_), Some(_), _) | (Some(_), _, Some(_)) => {
            return Err(ToolError::invalid_argument("/window", "give window, or start (and end), not both"));
        }
        (Some(name), None, None) => {
            let span = lookback(name).ok_or_else(|| ToolError::invalid_argument("/window", "not a look-back"))?;
            (now.saturating_sub(span), now)
        }
        (None, Some(s), e) => (at("start", s)?, e.map(|e| at("end", e)).transpose()?.unwrap_or(now)),
        (None, None, Some(_)) => return Err(ToolError::invalid_argument("/end", "an end needs a start")),
        (None, None, None) => return Ok(None),
    };
    if from >= to {
        return Err(ToolError::invalid_argument("/start", "start must be before end (and before now)"));
    }
    if to > now + CLOCK_SKEW_MS {
        return Err(ToolError::invalid_argument("/end", "the end is in the future; nothing is measured there yet"));
    }
    if to - from > MAX_SPAN_MS {
        return Err(ToolError::invalid_argument("/start", "a window is at most 90 days (what Fabric keeps)"));
    }
    Ok(Some((from, to)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const NOW: u64 = 1_796_122_800_000; // 2026-12-01T11:00:00Z

    #[test]
    fn a_window_is_a_look_back_or_a_start_and_end() {
        assert_eq!(stated(&json!({}), NOW).unwrap(), None);
        assert_eq!(stated(&json!({"window": "1h"}), NOW).unwrap(), Some((NOW - 3_600_000, NOW)));
        assert_eq!(stated(&json!({"window": "7d"}), NOW).unwrap(), Some((NOW - 604_800_000, NOW)));
        let day = json!({"start": "2026-11-30T11:00:00Z", "end": "2026-12-01T12:00:00+01:00"});
        assert_eq!(stated(&day, NOW).unwrap(), Some((NOW - 86_400_000, NOW)));
        assert_eq!(stated(&json!({"start": "2026-12-01T10:30:00Z"}), NOW).unwrap(), Some((NOW - 1_800_000, NOW)));
    }

    #[test]
    fn every_look_back_offered_is_one_the_window_reads() {
        let spans: Vec<Option<u64>> = NAMES.iter().map(|n| lookback(n)).collect();
        assert!(spans.iter().all(Option::is_some), "{spans:?}");
        assert!(spans.windows(2).all(|w| w[0] < w[1]), "offered shortest first: {spans:?}");
        assert!(spans.iter().flatten().all(|s| *s <= MAX_SPAN_MS));
        assert_eq!(lookback("2w"), None);
        assert_eq!(lookback(""), None);
    }

    #[test]
    fn a_window_that_is_not_one_is_refused_naming_the_argument() {
        for (args, path) in [
            (json!({"window": "1h", "start": "2026-12-01T10:00:00Z"}), "/window"),
            (json!({"end": "2026-12-01T10:00:00Z"}), "/end"),
            (json!({"start": "2026-12-01T12:00:00Z"}), "/start"),
            (json!({"start": "2026-12-01T10:00:00Z", "end": "2026-12-01T09:00:00Z"}), "/start"),
            (json!({"start": "2026-12-01T10:00:00Z", "end": "tomorrow"}), "/end"),
            (json!({"start": "2026-12-01T10:00:00Z", "end": "2026-12-01T11:30:00Z"}), "/end"),
            (json!({"start": "1970-01-01T00:00:00Z", "end": "2026-12-01T10:00:00Z"}), "/start"),
        ] {
            let e = stated(&args, NOW).unwrap_err();
            assert_eq!(e.details["path"], path, "{args}");
        }
    }
}
