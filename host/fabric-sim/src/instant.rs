//! Instants as Fabric's query strings and bodies carry them: RFC 3339 (`2026-12-01T10:00:00Z`,
//! with a fraction or an offset), and the form Equinix's Python SDK sends
//! (`2026-12-01T10:00:00.000000+0000`, or with no zone at all, read as UTC).

use time::format_description::well_known::Rfc3339;
use time::{OffsetDateTime, PrimitiveDateTime, UtcOffset};

/// Unix seconds of an instant (its fraction dropped), or `None` when it is not one.
pub(crate) fn parse(s: &str) -> Option<i64> {
    parse_nanos(s).map(|n| n.div_euclid(1_000_000_000) as i64)
}

/// Unix nanoseconds of an instant, to order instants that differ by less than a second.
pub(crate) fn parse_nanos(s: &str) -> Option<i128> {
    // a query string's `+` arrives as a space
    let s = s.trim().replace(' ', "+");
    if let Ok(t) = OffsetDateTime::parse(&s, &Rfc3339) {
        return Some(t.unix_timestamp_nanos());
    }
    // `+0000` without the colon
    let b = s.as_bytes();
    if b.len() > 5 && matches!(b[b.len() - 5], b'+' | b'-') && b[b.len() - 4..].iter().all(u8::is_ascii_digit) {
        let (head, zone) = s.split_at(s.len() - 5);
        if let Ok(t) = OffsetDateTime::parse(&format!("{head}{}:{}", &zone[..3], &zone[3..]), &Rfc3339) {
            return Some(t.unix_timestamp_nanos());
        }
    }
    // no zone: UTC
    let naive = time::macros::format_description!(
        version = 2,
        "[year]-[month]-[day]T[hour]:[minute]:[second][optional [.[subsecond]]]"
    );
    PrimitiveDateTime::parse(&s, &naive).ok().map(|t| t.assume_offset(UtcOffset::UTC).unix_timestamp_nanos())
}

/// RFC 3339 in UTC, to the second.
pub(crate) fn format(secs: i64) -> String {
    OffsetDateTime::from_unix_timestamp(secs).ok().and_then(|t| t.format(&Rfc3339).ok()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_form_fabric_clients_send_is_read_and_the_rest_refused() {
        let at = 1_764_583_200; // 2025-12-01T10:00:00Z
        for s in [
            "2025-12-01T10:00:00Z",
            "2025-12-01T10:00:00.000Z",
            "2025-12-01T11:00:00+01:00",
            "2025-12-01T10:00:00.000000+0000",
            "2025-12-01T10:00:00.000000 0000",
            "2025-12-01T10:00:00",
        ] {
            assert_eq!(parse(s), Some(at), "{s}");
        }
        for s in ["", "yesterday", "2025-13-01T10:00:00Z", "1764583200", "2025-12-01"] {
            assert_eq!(parse(s), None, "{s}");
        }
        assert_eq!(format(at), "2025-12-01T10:00:00Z");
        assert!(parse_nanos("2025-12-01T10:00:00.5Z") > parse_nanos("2025-12-01T10:00:00Z"));
    }
}
