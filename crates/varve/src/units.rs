//! Human quantities in options and table properties: durations (`30d`, `1h30m`) and sizes
//! (`512MiB`). The lowest layer beside `error`: storage options and table properties both parse
//! them, so neither owns them.

use std::time::Duration;

use crate::error::{Error, Result};

/// Parses a duration: a number with a unit, `ms`, `s`, `m`, `h`, `d` or `w` (`30d`, `1h`, `90m`,
/// `250ms`, `0s`); several parts add up (`1h30m`).
///
/// Errors: [`crate::ErrorKind::InvalidInput`].
pub fn parse_duration(v: &str) -> Result<Duration> {
    let t = v.trim();
    let bad = || Error::invalid(format!("{v:?}: expected a duration such as 30d, 12h, 90m or 0s"));
    if t.is_empty() {
        return Err(bad());
    }
    let mut total = 0u64;
    let mut num = String::new();
    let mut chars = t.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_ascii_digit() {
            num.push(c);
            continue;
        }
        let mut unit = c.to_string();
        while let Some(n) = chars.peek().filter(|n| n.is_ascii_alphabetic()) {
            unit.push(*n);
            chars.next();
        }
        let n: u64 = num.parse().map_err(|_| bad())?;
        num.clear();
        let ms = match unit.to_ascii_lowercase().as_str() {
            "ms" | "msec" | "msecs" | "millisecond" | "milliseconds" => 1,
            "s" | "sec" | "secs" | "second" | "seconds" => 1000,
            "m" | "min" | "mins" | "minute" | "minutes" => 60_000,
            "h" | "hour" | "hours" => 3_600_000,
            "d" | "day" | "days" => 86_400_000,
            "w" | "week" | "weeks" => 7 * 86_400_000,
            _ => return Err(bad()),
        };
        total = total.checked_add(n.checked_mul(ms).ok_or_else(bad)?).ok_or_else(bad)?;
    }
    if !num.is_empty() {
        return Err(bad());
    }
    Ok(Duration::from_millis(total))
}

/// Parses a size: `1048576`, `512KiB`, `64MiB`, `2GiB` (KB/MB/GB are powers of 1000).
///
/// Errors: [`crate::ErrorKind::InvalidInput`].
pub fn parse_bytes(s: &str) -> Result<u64> {
    let t = s.trim();
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: f64 = num
        .parse()
        .map_err(|_| Error::invalid(format!("{s:?}: expected a size such as 512MiB")))?;
    let mult = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1.0,
        "k" | "kib" => 1024.0,
        "m" | "mib" => 1024.0 * 1024.0,
        "g" | "gib" => 1024.0 * 1024.0 * 1024.0,
        "kb" => 1e3,
        "mb" => 1e6,
        "gb" => 1e9,
        other => {
            return Err(Error::invalid(format!(
                "{s:?}: unknown unit {other:?} (use KiB, MiB, GiB)"
            )))
        }
    };
    Ok((n * mult) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("30d").unwrap(), Duration::from_secs(30 * 86_400));
        assert_eq!(parse_duration("1h30m").unwrap(), Duration::from_secs(5400));
        assert_eq!(parse_duration("0s").unwrap(), Duration::ZERO);
        assert_eq!(parse_duration("1s250ms").unwrap(), Duration::from_millis(1250));
        assert!(parse_duration("30").is_err());
        assert!(parse_duration("x").is_err());
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_bytes("512KiB").unwrap(), 512 * 1024);
        assert_eq!(parse_bytes("2MB").unwrap(), 2_000_000);
        assert_eq!(parse_bytes("1048576").unwrap(), 1_048_576);
        assert!(parse_bytes("3 parsecs").is_err());
    }
}
