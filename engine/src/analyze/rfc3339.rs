//! Times as engineers write them beside a capture (a snapshot's or a QP table's `time:` line):
//! RFC 3339, read into ns since the Unix epoch like the capture's own timestamps.

use crate::quoting::quoted;

/// At most this much of a time that is not one is quoted in a message.
const QUOTED_BYTES: usize = 200;

/// A `time:` line's time, as written and in ns since the Unix epoch; else what is wrong.
pub(crate) fn time_line(time: &str) -> Result<(String, i64), String> {
    let time = time.trim();
    let parts = rfc3339_parts(time).ok_or_else(|| format!("{} is not an RFC 3339 time", quoted(time, QUOTED_BYTES)))?;
    let ns = ns_since_epoch(parts)
        .ok_or_else(|| format!("{} is outside the times rocescope holds, {TIME_RANGE}", quoted(time, QUOTED_BYTES)))?;
    Ok((time.to_string(), ns))
}

/// The times a count of ns since the Unix epoch in 64 bits holds, as a message says them.
const TIME_RANGE: &str = "1677-09-21T00:12:44Z to 2262-04-11T23:47:16Z";

/// ns since the Unix epoch of an RFC 3339 time (`2026-12-05T10:00:00Z`, fractions and any
/// offset); `None` for no such time or one outside [`TIME_RANGE`].
#[cfg(test)]
fn rfc3339_ns(s: &str) -> Option<i64> {
    rfc3339_parts(s).and_then(ns_since_epoch)
}

/// Seconds and ns since the Unix epoch as one count of ns, if 64 bits hold it.
fn ns_since_epoch((seconds, nanos): (i64, i64)) -> Option<i64> {
    seconds.checked_mul(1_000_000_000)?.checked_add(nanos)
}

/// Seconds since the Unix epoch and the ns of the second, of an RFC 3339 time.
fn rfc3339_parts(s: &str) -> Option<(i64, i64)> {
    let number = |from: usize, len: usize| s.get(from..from + len)?.parse::<i64>().ok();
    let (year, month, day) = (number(0, 4)?, number(5, 2)?, number(8, 2)?);
    let (hour, minute, second) = (number(11, 2)?, number(14, 2)?, number(17, 2)?);
    let separators = [(4, b'-'), (7, b'-'), (13, b':'), (16, b':')];
    let bytes = s.as_bytes();
    if separators.iter().any(|&(i, c)| bytes.get(i) != Some(&c)) || !matches!(bytes.get(10), Some(b'T' | b't' | b' ')) {
        return None;
    }
    let rest = s.get(19..)?;
    let (fraction, zone) = match rest.strip_prefix('.') {
        Some(f) => f.split_at(f.find(|c: char| !c.is_ascii_digit()).unwrap_or(f.len())),
        None => ("", rest),
    };
    let nanos = if fraction.is_empty() { 0 } else { format!("{fraction:0<9}").get(..9)?.parse::<i64>().ok()? };
    let offset_s = match zone {
        "Z" | "z" => 0,
        _ => {
            // ±HH:MM, at most a day either way
            let sign = match zone.as_bytes().first()? {
                b'+' => 1,
                b'-' => -1,
                _ => return None,
            };
            let (h, m) = (zone.get(1..3)?.parse::<i64>().ok()?, zone.get(4..6)?.parse::<i64>().ok()?);
            if zone.len() != 6 || zone.as_bytes().get(3) != Some(&b':') || h > 23 || m > 59 {
                return None;
            }
            sign * (h * 3600 + m * 60)
        }
    };
    let valid = (1..=12).contains(&month) && (1..=31).contains(&day) && hour < 24 && minute < 60 && second < 61;
    let seconds = days_from_civil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second - offset_s;
    valid.then_some((seconds, nanos))
}

/// Days from 1970-01-01 to a date of the proleptic Gregorian calendar (Howard Hinnant's
/// algorithm).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let year_of_era = y - era * 400;
    let day_of_year = (153 * (month + if month > 2 { -3 } else { 9 }) + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_with_offsets_and_fractions() {
        let utc = rfc3339_ns("2026-12-05T10:00:00Z").expect("a time");
        assert_eq!(rfc3339_ns("2026-12-05T11:30:00+01:30"), Some(utc));
        assert_eq!(rfc3339_ns("2026-12-05T09:00:00.5-01:00"), Some(utc + 500_000_000));
        assert_eq!(rfc3339_ns("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(rfc3339_ns("2026-13-05T10:00:00Z"), None);
        assert_eq!(rfc3339_ns("2026-12-05 10:00"), None);
        assert_eq!(rfc3339_ns("2026-12-05T10:00:00+99999999999999999:00"), None);
        assert_eq!(rfc3339_ns("2026-12-05T10:00:00+1:00"), None);
        assert_eq!(rfc3339_ns("2262-04-11T23:47:16Z").map(|ns| ns / 1_000_000_000), Some(i64::MAX / 1_000_000_000));
        assert_eq!(rfc3339_ns("1677-09-21T00:12:44Z").map(|ns| ns / 1_000_000_000), Some(i64::MIN / 1_000_000_000));
        for outside in ["9999-12-31T23:59:59Z", "2262-04-11T23:47:17Z", "0001-01-01T00:00:00Z"] {
            let message = time_line(outside).expect_err(outside);
            assert!(
                message.contains("outside the times rocescope holds, 1677-09-21T00:12:44Z to 2262-04-11T23:47:16Z"),
                "{message}"
            );
        }
        assert!(time_line("yesterday").expect_err("no time").contains("is not an RFC 3339 time"));
    }
}
