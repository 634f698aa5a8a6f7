//! RFC 3339 times as the endpoint reads them (an allowance's `expires_at`, with any UTC offset)
//! and writes them (a token's `created`, in UTC to the second), as Unix milliseconds.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Unix milliseconds of an RFC 3339 date-time (`2026-02-13T12:00:00Z`,
/// `2026-02-13T13:00:00.5+01:00`), or `None` when it is not one.
pub fn parse_ms(text: &str) -> Option<i64> {
    if !text.is_ascii() || text.len() < "2026-01-01T00:00:00Z".len() {
        return None;
    }
    let (local, offset_minutes) = match text.strip_suffix(['Z', 'z']) {
        Some(local) => (local, 0),
        None => {
            let (local, offset) = text.split_at(text.len() - "+00:00".len());
            (local, offset_minutes(offset)?)
        }
    };
    // humantime reads the UTC form only (`…T…Z`); the offset is applied below.
    let mut utc = local.to_string();
    if utc.as_bytes().get(10) == Some(&b't') {
        utc.replace_range(10..11, "T");
    }
    utc.push('Z');
    let at = humantime::parse_rfc3339(&utc).ok()?;
    let ms = i64::try_from(at.duration_since(UNIX_EPOCH).ok()?.as_millis()).ok()?;
    Some(ms - offset_minutes * 60_000)
}

/// `+hh:mm` / `-hh:mm` as signed minutes.
fn offset_minutes(offset: &str) -> Option<i64> {
    let b = offset.as_bytes();
    let sign = match b.first()? {
        b'+' => 1,
        b'-' => -1,
        _ => return None,
    };
    let digits = |s: &str| s.bytes().all(|d| d.is_ascii_digit()).then(|| s.parse::<i64>().ok()).flatten();
    if b.get(3) != Some(&b':') {
        return None;
    }
    let (hours, minutes) = (digits(offset.get(1..3)?)?, digits(offset.get(4..6)?)?);
    (hours <= 23 && minutes <= 59).then_some(sign * (hours * 60 + minutes))
}

/// Unix milliseconds as RFC 3339 in UTC, to the second (`2026-02-13T12:00:00Z`).
pub fn format_ms(ms: i64) -> String {
    let at = UNIX_EPOCH + Duration::from_millis(u64::try_from(ms).unwrap_or(0));
    humantime::format_rfc3339_seconds(at).to_string()
}

/// The UTC year and month at Unix milliseconds `ms` (a card's expiry is compared with these).
pub fn year_month(ms: i64) -> (u32, u32) {
    let text = format_ms(ms);
    let field = |range: std::ops::Range<usize>| text.get(range).and_then(|s| s.parse().ok()).unwrap_or(0);
    (field(0..4), field(5..7))
}

/// Now, as Unix milliseconds.
pub fn now_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as i64).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_offsets_and_fractions_are_read() {
        let noon = parse_ms("2026-02-13T12:00:00Z").unwrap();
        assert_eq!(format_ms(noon), "2026-02-13T12:00:00Z");
        assert_eq!(parse_ms("2026-02-13T13:00:00+01:00"), Some(noon));
        assert_eq!(parse_ms("2026-02-13T07:30:00-04:30"), Some(noon));
        assert_eq!(parse_ms("2026-02-13t12:00:00z"), Some(noon));
        assert_eq!(parse_ms("2026-02-13T12:00:00.250Z"), Some(noon + 250));
        assert_eq!(year_month(noon), (2026, 2));
    }

    #[test]
    fn anything_else_is_refused() {
        for text in [
            "",
            "2026-02-13",
            "2026-02-13T12:00:00",
            "2026-02-13 12:00:00Z",
            "2026-02-13T12:00:00+0100",
            "2026-02-13T12:00:00+25:00",
            "2026-13-13T12:00:00Z",
            "2026-02-30T12:00:00Z",
            "tomorrow at noon please",
            "2026-02-13T12:00:00Zé",
        ] {
            assert_eq!(parse_ms(text), None, "{text}");
        }
    }
}
