//! Time values: converting the caller's time column to Iceberg `timestamptz` (µs since the epoch,
//! UTC).
//!
//! Rules: values that carry a zone or offset are absolute; naive timestamps, dates and zone-less
//! strings are read in [`TimeOptions::timezone`] (UTC by default); numbers are epoch offsets in
//! [`TimeOptions::unit`]. The hour `24:00` (ISO 8601 end of day) is read as `00:00` of the next day.
//!
//! Nothing is changed without a word: a time with digits below a microsecond (Iceberg v2 keeps µs)
//! is refused, naming its row and value, unless [`TimeOptions::truncate_ns`] asks for truncation
//! (then truncations are counted); a leap second (`23:59:60`) is refused, as DuckDB and chrono's
//! timestamps have no place for it (moving it to the next second could land on another reading).
//! Float numbers are rounded to the nearest µs when the difference is below the float's own
//! precision (`1714550400.123` s is 1714550400123000 µs, though the float is a hair below).

use std::str::FromStr;
use std::sync::Arc;

use arrow::array::timezone::Tz;
use arrow::array::{Array, ArrayRef, AsArray, TimestampMicrosecondArray};
use arrow::compute::{cast_with_options, CastOptions};
use arrow::datatypes::{DataType, TimeUnit};
use chrono::{DateTime, NaiveDate, NaiveDateTime, TimeZone};

use crate::error::{cut, Error, Result};
use crate::format::schema::UTC;

/// How to read the time column of an input.
#[derive(Debug, Clone, Default)]
pub struct TimeOptions {
    /// Zone for naive timestamps, dates and zone-less strings: an IANA name (`Europe/Paris`) or an
    /// offset (`-05:00`). `None` means UTC.
    pub timezone: Option<String>,
    /// A strftime format for string times, e.g. `%d/%m/%Y %H:%M`. `None` accepts RFC 3339 and
    /// `YYYY-MM-DD[ HH:MM[:SS[.f]]]`.
    pub format: Option<String>,
    /// The unit of numeric times (seconds, ms, µs or ns since 1970-01-01 UTC, or since
    /// [`TimeOptions::origin`]).
    pub unit: Option<TimeUnit>,
    /// When set, times are durations elapsed since this instant (µs since the epoch, UTC): numbers
    /// in [`TimeOptions::unit`], or strings such as `0 days 00:00:01`, `00:01:30.5` or `90s`.
    pub origin: Option<i64>,
    /// Store times with digits below a microsecond truncated to µs (and count them) instead of
    /// refusing the input. CLI: `--truncate-ns`; Python: `truncate_ns=True`.
    pub truncate_ns: bool,
}

/// Parses a time unit name: `s`, `ms`, `us` (or `µs`), `ns`.
///
/// Errors: [`crate::ErrorKind::InvalidInput`] for anything else.
pub fn parse_time_unit(s: &str) -> Result<TimeUnit> {
    match s {
        "s" | "sec" | "seconds" => Ok(TimeUnit::Second),
        "ms" | "millis" | "milliseconds" => Ok(TimeUnit::Millisecond),
        "us" | "µs" | "micros" | "microseconds" => Ok(TimeUnit::Microsecond),
        "ns" | "nanos" | "nanoseconds" => Ok(TimeUnit::Nanosecond),
        other => Err(Error::invalid(format!("time unit {other:?}: expected s, ms, us or ns"))),
    }
}

/// Converts a column of times (integers or floats in [`TimeOptions::unit`], timestamps, or
/// strings read with [`TimeOptions::format`] and [`TimeOptions::timezone`]) to µs since
/// 1970-01-01 UTC, exactly as an append reads its time column. `name` names the column in errors,
/// whose row numbers count from 1.
///
/// Errors: [`crate::ErrorKind::InvalidInput`] naming the column, row and value for a null,
/// unparsable or out-of-range time, a leap second, or sub-µs digits without
/// [`TimeOptions::truncate_ns`]; [`crate::ErrorKind::SchemaMismatch`] for a type that cannot hold
/// a time.
pub fn times_to_micros(array: &ArrayRef, name: &str, opts: &TimeOptions) -> Result<Vec<i64>> {
    let c = to_utc_micros(array, name, 0, opts)?;
    let v = cast_with_options(&c.values, &DataType::Int64, &CastOptions::default())?;
    Ok(v.as_primitive::<arrow::datatypes::Int64Type>().values().to_vec())
}

pub(crate) fn parse_tz(s: Option<&str>) -> Result<Option<Tz>> {
    match s {
        None => Ok(None),
        Some(z) if z.eq_ignore_ascii_case("utc") || z == "Z" || z == "+00:00" => Ok(None),
        Some(z) => Tz::from_str(z).map(Some).map_err(|_| {
            Error::invalid(format!(
                "time zone {z:?}: expected an IANA name such as America/New_York or an offset such as -05:00"
            ))
        }),
    }
}

fn micros_per(unit: TimeUnit) -> (i64, i64) {
    // (multiply, divide) to get µs.
    match unit {
        TimeUnit::Second => (1_000_000, 1),
        TimeUnit::Millisecond => (1_000, 1),
        TimeUnit::Microsecond => (1, 1),
        TimeUnit::Nanosecond => (1, 1_000),
    }
}

/// The converted time column and how many values lost sub-µs precision.
pub(crate) struct TimeColumn {
    pub(crate) values: ArrayRef,
    pub(crate) truncated: u64,
    /// With [`TimeOptions::truncate_ns`]: each row's nanoseconds below its µs (0..999).
    pub(crate) sub_micros: Option<Vec<u16>>,
}

/// Sub-µs digits seen while converting: refused, or counted when truncation is asked for.
struct Precision<'a> {
    name: &'a str,
    truncate: bool,
    truncated: u64,
    subs: Option<Vec<u16>>,
}

impl Precision<'_> {
    fn new(name: &str, truncate: bool, rows: usize) -> Precision<'_> {
        Precision {
            name,
            truncate,
            truncated: 0,
            subs: truncate.then(|| Vec::with_capacity(rows)),
        }
    }

    /// Row `row` (1-based) has `sub` ns below its µs; `shown` is its value for the message.
    fn note(&mut self, row: u64, sub: u16, shown: impl FnOnce() -> String) -> Result<()> {
        if let Some(s) = self.subs.as_mut() {
            s.push(sub);
        }
        if sub == 0 {
            return Ok(());
        }
        if !self.truncate {
            return Err(Error::invalid(format!(
                "column {}, row {row}: {} has nanoseconds; the table keeps microseconds; --truncate-ns \
                 (Python: truncate_ns=True) stores it truncated",
                self.name,
                cut(&shown())
            )));
        }
        self.truncated += 1;
        Ok(())
    }
}

fn leap_second_error(name: &str, row: u64, text: &str) -> Error {
    Error::invalid(format!(
        "column {name}, row {row}: {} is a leap second, which a timestamp cannot hold (Varve refuses it \
         rather than move it to the next second, where it may land on another reading)",
        cut(text)
    ))
}

/// Converts `array` (column `name`, whose first row is input row `row_offset + 1`) to µs UTC.
///
/// Errors: [`crate::ErrorKind::InvalidInput`] naming the column, row and value for a null or
/// unparsable time; [`crate::ErrorKind::SchemaMismatch`] for a type that cannot hold a time.
pub(crate) fn to_utc_micros(array: &ArrayRef, name: &str, row_offset: u64, opts: &TimeOptions) -> Result<TimeColumn> {
    let tz = parse_tz(opts.timezone.as_deref())?;
    let row = |i: usize| row_offset + i as u64 + 1;
    if let Some(i) = (0..array.len()).find(|&i| array.is_null(i)) {
        return Err(Error::invalid(format!(
            "column {name}, row {}: the time is null (the time column may not hold nulls)",
            row(i)
        )));
    }
    let mut p = Precision::new(name, opts.truncate_ns, array.len());
    if let Some(origin) = opts.origin {
        let values = elapsed_since(array, name, origin, opts, &mut p, row)?;
        return Ok(TimeColumn {
            values: Arc::new(TimestampMicrosecondArray::from(values).with_timezone(UTC)),
            truncated: p.truncated,
            sub_micros: p.subs,
        });
    }
    let values: Vec<i64> = match array.data_type() {
        DataType::Timestamp(unit, zone) => {
            let raw = cast_with_options(array, &DataType::Int64, &CastOptions::default())?;
            let raw = raw.as_primitive::<arrow::datatypes::Int64Type>();
            let (mul, div) = micros_per(*unit);
            let mut out = Vec::with_capacity(raw.len());
            for (i, v) in raw.values().iter().enumerate() {
                let sub = if div > 1 { v.rem_euclid(div) as u16 } else { 0 };
                p.note(row(i), sub, || {
                    arrow::util::display::array_value_to_string(array, i).unwrap_or_else(|_| v.to_string())
                })?;
                out.push(
                    v.div_euclid(div)
                        .checked_mul(mul)
                        .ok_or_else(|| Error::invalid(format!("column {name}: time {v} is out of range")))?,
                );
            }
            match (zone, &tz) {
                (None, Some(z)) => localize(&out, z, name, row)?,
                _ => out,
            }
        }
        DataType::Date32 | DataType::Date64 => {
            let d = cast_with_options(array, &DataType::Date32, &CastOptions::default())?;
            let days: Vec<i64> = d
                .as_primitive::<arrow::datatypes::Date32Type>()
                .values()
                .iter()
                .map(|d| *d as i64 * 86_400_000_000)
                .collect();
            for i in 0..days.len() {
                p.note(row(i), 0, String::new)?;
            }
            match &tz {
                Some(z) => localize(&days, z, name, row)?,
                None => days,
            }
        }
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View if opts.unit.is_some() => {
            let unit = opts.unit.unwrap_or(TimeUnit::Second);
            numbers_to_micros(array, name, unit, 0, &mut p, &row)?
        }
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => {
            let s = cast_with_options(array, &DataType::Utf8, &CastOptions::default())?;
            let s = s.as_string::<i32>();
            let mut out = Vec::with_capacity(s.len());
            for i in 0..s.len() {
                let text = s.value(i).trim();
                let v = parse_time_precise(text, opts.format.as_deref(), tz.as_ref()).ok_or_else(|| {
                    // Text that parses without the zone names a local time the zone skips (a DST gap).
                    if let Some(z) = &tz {
                        if parse_time_str(text, opts.format.as_deref(), None).is_some() {
                            return Error::invalid(format!(
                                "column {name}, row {}: {text} does not exist in time zone {z} (a daylight saving gap)",
                                row(i)
                            ));
                        }
                    }
                    if text.parse::<f64>().is_ok() {
                        return Error::invalid(format!(
                            "column {name}, row {}: '{}' is a number: give its unit (--time-unit s|ms|us|ns)",
                            row(i),
                            cut(text)
                        ));
                    }
                    if parse_duration(text).is_some() {
                        return Error::invalid(format!(
                            "column {name}, row {}: '{}' is an elapsed time, not a point in time: give \
                             --time-origin (the time it counts from, e.g. 2024-05-01T08:00:00Z)",
                            row(i),
                            cut(text)
                        ));
                    }
                    let expected = match &opts.format {
                        Some(f) => format!("expected format {f}"),
                        None => "expected RFC 3339 or YYYY-MM-DD HH:MM:SS; give --time-format".to_string(),
                    };
                    Error::invalid(format!(
                        "column {name}, row {}: '{}' is not a time ({expected})",
                        row(i),
                        cut(text)
                    ))
                })?;
                if v.leap {
                    return Err(leap_second_error(name, row(i), text));
                }
                p.note(row(i), v.sub_ns, || text.to_string())?;
                out.push(v.micros);
            }
            out
        }
        dt if dt.is_integer() || dt.is_floating() => {
            let unit = opts.unit.ok_or_else(|| {
                Error::invalid(format!(
                    "column {name}: numeric times need a unit (give the time unit: s, ms, us or ns)"
                ))
            })?;
            numbers_to_micros(array, name, unit, 0, &mut p, &row)?
        }
        other => {
            return Err(Error::schema(format!(
                "column {name}: values of type {other} cannot be times (use timestamps, dates, strings or numbers)"
            )))
        }
    };
    let values: ArrayRef = Arc::new(TimestampMicrosecondArray::from(values).with_timezone(UTC));
    Ok(TimeColumn {
        values,
        truncated: p.truncated,
        sub_micros: p.subs,
    })
}

fn elapsed_since(
    array: &ArrayRef,
    name: &str,
    origin: i64,
    opts: &TimeOptions,
    p: &mut Precision<'_>,
    row: impl Fn(usize) -> u64,
) -> Result<Vec<i64>> {
    let text = matches!(
        array.data_type(),
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View
    );
    let numeric = array.data_type().is_integer() || array.data_type().is_floating();
    // Numbers, or text when a unit is given, count units since the origin.
    if numeric || (text && opts.unit.is_some()) {
        return numbers_to_micros(array, name, opts.unit.unwrap_or(TimeUnit::Second), origin, p, &row);
    }
    match array.data_type() {
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => {
            let s = cast_with_options(array, &DataType::Utf8, &CastOptions::default())?;
            let s = s.as_string::<i32>();
            (0..s.len())
                .map(|i| {
                    let text = s.value(i).trim();
                    let d = parse_duration(text).ok_or_else(|| {
                        Error::invalid(format!(
                            "column {name}, row {}: '{}' is not an elapsed time (expected e.g. '0 days 00:00:01' or '00:01:30')",
                            row(i),
                            cut(text)
                        ))
                    })?;
                    p.note(row(i), sub_micros_of_duration(text), || text.to_string())?;
                    Ok(origin + d)
                })
                .collect()
        }
        other => Err(Error::schema(format!(
            "column {name}: values of type {other} cannot be elapsed times"
        ))),
    }
}

/// Numbers (or numbers as text) in `unit` since `origin` (µs) as µs since the epoch. Integers are
/// converted exactly; floats are rounded to the nearest µs when they differ from it by less than
/// a thousandth of a µs (float noise); other digits below a µs go to `p` (refused or truncated).
///
/// Errors: [`crate::ErrorKind::InvalidInput`] naming the row for text that is not a number, a
/// non-finite number, or a time out of range.
fn numbers_to_micros(
    array: &ArrayRef,
    name: &str,
    unit: TimeUnit,
    origin: i64,
    p: &mut Precision<'_>,
    row: &impl Fn(usize) -> u64,
) -> Result<Vec<i64>> {
    let (mul, div) = micros_per(unit);
    let out_of_range = |i: usize, v: &dyn std::fmt::Display| {
        Error::invalid(format!(
            "column {name}, row {}: {v} is not a time in {unit:?} (out of range)",
            row(i)
        ))
    };
    let from_int = |i: usize, v: i64, p: &mut Precision<'_>| -> Result<i64> {
        p.note(row(i), v.rem_euclid(div) as u16, || format!("{v} ({unit:?})"))?;
        v.div_euclid(div)
            .checked_mul(mul)
            .and_then(|us| us.checked_add(origin))
            .ok_or_else(|| out_of_range(i, &v))
    };
    let from_float = |i: usize, v: f64, p: &mut Precision<'_>| -> Result<i64> {
        let us = v * mul as f64 / div as f64;
        if !us.is_finite() || us.abs() > 9.0e18 {
            return Err(out_of_range(i, &v));
        }
        let nearest = us.round();
        let us = if (us - nearest).abs() < 1e-3 {
            p.note(row(i), 0, String::new)?;
            nearest
        } else {
            let floor = us.floor();
            p.note(row(i), (((us - floor) * 1000.0) as u16).max(1), || {
                format!("{v} ({unit:?})")
            })?;
            floor
        };
        (us as i64).checked_add(origin).ok_or_else(|| out_of_range(i, &v))
    };
    let dt = array.data_type();
    if dt.is_integer() {
        let a = cast_with_options(
            array,
            &DataType::Int64,
            &CastOptions {
                safe: false,
                ..Default::default()
            },
        )?;
        let a = a.as_primitive::<arrow::datatypes::Int64Type>();
        return a.values().iter().enumerate().map(|(i, v)| from_int(i, *v, p)).collect();
    }
    if dt.is_floating() {
        let a = cast_with_options(array, &DataType::Float64, &CastOptions::default())?;
        let a = a.as_primitive::<arrow::datatypes::Float64Type>();
        return a
            .values()
            .iter()
            .enumerate()
            .map(|(i, v)| from_float(i, *v, p))
            .collect();
    }
    let s = cast_with_options(array, &DataType::Utf8, &CastOptions::default())?;
    let s = s.as_string::<i32>();
    (0..s.len())
        .map(|i| {
            let text = s.value(i).trim();
            if let Ok(v) = text.parse::<i64>() {
                from_int(i, v, p)
            } else if let Ok(v) = text.parse::<f64>() {
                from_float(i, v, p)
            } else {
                Err(Error::invalid(format!(
                    "column {name}, row {}: '{}' is not a number of {unit:?}",
                    row(i),
                    cut(text)
                )))
            }
        })
        .collect()
}

/// Parses an elapsed time to µs: `[D days ]HH:MM:SS[.f]`, `MM:SS`, or a number with a unit suffix
/// (`90s`, `1500ms`).
/// Nanoseconds below the µs in the seconds of an elapsed time (`00:00:01.0000005` has 500), or
/// 0: digits past the sixth of a fraction are looked at as text, not as a float.
fn sub_micros_of_duration(text: &str) -> u16 {
    let secs = text.rsplit(':').next().unwrap_or(text);
    let Some((_, frac)) = secs.split_once('.') else {
        return 0;
    };
    let digits: String = frac.chars().take_while(|c| c.is_ascii_digit()).collect();
    if digits.len() <= 6 || digits[6..].bytes().all(|b| b == b'0') {
        return 0;
    }
    let ns: String = digits[6..].chars().chain(std::iter::repeat('0')).take(3).collect();
    ns.parse::<u16>().unwrap_or(1).max(1)
}

pub(crate) fn parse_duration(text: &str) -> Option<i64> {
    let (days, rest) = match text.split_once(" days ").or_else(|| text.split_once(" day ")) {
        Some((d, r)) => (d.trim().parse::<i64>().ok()?, r.trim()),
        None => (0, text),
    };
    let parts: Vec<&str> = rest.split(':').collect();
    let secs: f64 = match parts.as_slice() {
        [h, m, s] => h.parse::<f64>().ok()? * 3600.0 + m.parse::<f64>().ok()? * 60.0 + s.parse::<f64>().ok()?,
        [m, s] => m.parse::<f64>().ok()? * 60.0 + s.parse::<f64>().ok()?,
        [one] => {
            let (num, scale) = if let Some(n) = one.strip_suffix("ms") {
                (n, 1e-3)
            } else if let Some(n) = one.strip_suffix("us") {
                (n, 1e-6)
            } else if let Some(n) = one.strip_suffix('s') {
                (n, 1.0)
            } else {
                return None;
            };
            num.trim().parse::<f64>().ok()? * scale
        }
        _ => return None,
    };
    // Digits below a µs are dropped (truncated), not rounded up: the caller counts or refuses them.
    let below = f64::from(sub_micros_of_duration(text)) / 1000.0;
    Some(days * 86_400_000_000 + (secs * 1e6 - below).round() as i64)
}

fn localize(values: &[i64], tz: &Tz, name: &str, row: impl Fn(usize) -> u64) -> Result<Vec<i64>> {
    values
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let naive = DateTime::from_timestamp_micros(*v)
                .map(|d| d.naive_utc())
                .ok_or_else(|| Error::invalid(format!("column {name}, row {}: time out of range", row(i))))?;
            local_to_utc(&naive, tz).ok_or_else(|| {
                Error::invalid(format!(
                    "column {name}, row {}: {naive} does not exist in time zone {tz}",
                    row(i)
                ))
            })
        })
        .collect()
}

fn local_to_utc(naive: &NaiveDateTime, tz: &Tz) -> Option<i64> {
    tz.from_local_datetime(naive).earliest().map(|d| d.timestamp_micros())
}

/// A parsed time: µs since the epoch (UTC), the nanoseconds below it, and whether it was a leap
/// second (`:60`, which chrono keeps as a nanosecond count of a second or more).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Parsed {
    pub(crate) micros: i64,
    pub(crate) sub_ns: u16,
    pub(crate) leap: bool,
}

impl Parsed {
    fn of(micros: i64, nanos: u32) -> Parsed {
        Parsed {
            micros,
            sub_ns: (nanos % 1000) as u16,
            leap: nanos >= 1_000_000_000,
        }
    }

    fn naive(n: &NaiveDateTime, tz: Option<&Tz>) -> Option<Parsed> {
        let micros = match tz {
            Some(z) => local_to_utc(n, z)?,
            None => n.and_utc().timestamp_micros(),
        };
        Some(Parsed::of(micros, n.and_utc().timestamp_subsec_nanos()))
    }

    fn aware<T: TimeZone>(d: &DateTime<T>) -> Parsed {
        Parsed::of(d.timestamp_micros(), d.timestamp_subsec_nanos())
    }
}

/// Parses one time string to µs UTC (digits below a µs dropped), or `None`.
pub(crate) fn parse_time_str(text: &str, format: Option<&str>, tz: Option<&Tz>) -> Option<i64> {
    parse_time_precise(text, format, tz).map(|p| p.micros)
}

/// Parses one time string, keeping what [`parse_time_str`] drops, or `None`.
pub(crate) fn parse_time_precise(text: &str, format: Option<&str>, tz: Option<&Tz>) -> Option<Parsed> {
    if let Some(v) = parse_time_str_once(text, format, tz) {
        return Some(v);
    }
    // ISO 8601 allows 24:00 for the end of a day: read it as 00:00 of the next day.
    if text.contains("24:00") {
        let fixed = text.replacen("24:00", "00:00", 1);
        return parse_time_str_once(&fixed, format, tz).map(|mut v| {
            v.micros += 86_400_000_000;
            v
        });
    }
    None
}

fn parse_time_str_once(text: &str, format: Option<&str>, tz: Option<&Tz>) -> Option<Parsed> {
    match format {
        Some(f) => {
            if f.contains("%z") || f.contains("%:z") || f.contains("%Z") || f.contains("%+") || f.contains("%s") {
                if let Ok(d) = DateTime::parse_from_str(text, f) {
                    return Some(Parsed::aware(&d));
                }
            }
            if let Ok(n) = NaiveDateTime::parse_from_str(text, f) {
                return Parsed::naive(&n, tz);
            }
            NaiveDate::parse_from_str(text, f)
                .ok()
                .and_then(|d| Parsed::naive(&d.and_hms_opt(0, 0, 0)?, tz))
        }
        None => {
            if let Ok(d) = DateTime::parse_from_rfc3339(text) {
                return Some(Parsed::aware(&d));
            }
            for f in [
                "%Y-%m-%d %H:%M:%S%.f",
                "%Y-%m-%dT%H:%M:%S%.f",
                "%Y-%m-%d %H:%M",
                "%Y-%m-%dT%H:%M",
            ] {
                if let Ok(n) = NaiveDateTime::parse_from_str(text, f) {
                    return Parsed::naive(&n, tz);
                }
            }
            for f in [
                "%Y-%m-%d %H:%M:%S%.f%#z",
                "%Y-%m-%dT%H:%M:%S%.f%#z",
                "%Y-%m-%d %H:%M:%S%.f %#z",
            ] {
                if let Ok(d) = DateTime::parse_from_str(text, f) {
                    return Some(Parsed::aware(&d));
                }
            }
            NaiveDate::parse_from_str(text, "%Y-%m-%d")
                .ok()
                .and_then(|d| Parsed::naive(&d.and_hms_opt(0, 0, 0)?, tz))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn end_of_day_is_next_midnight() {
        let a = parse_time_str("01/01/1988 24:00", Some("%m/%d/%Y %H:%M"), None).unwrap();
        let b = parse_time_str("01/02/1988 00:00", Some("%m/%d/%Y %H:%M"), None).unwrap();
        assert_eq!(a, b);
    }

    #[test]
    fn elapsed_times_parse() {
        assert_eq!(parse_duration("0 days 00:00:01"), Some(1_000_000));
        assert_eq!(parse_duration("1 days 01:00:00.5"), Some(90_000_500_000));
        assert_eq!(parse_duration("fast"), None);
        assert_eq!(sub_micros_of_duration("00:00:01.0000005"), 500);
        assert_eq!(sub_micros_of_duration("00:00:01.500000000"), 0);
        assert_eq!(sub_micros_of_duration("0 days 00:00:01"), 0);
        let a: ArrayRef = Arc::new(arrow::array::StringArray::from(vec!["00:00:01.0000005"]));
        let opts = TimeOptions {
            origin: Some(0),
            ..Default::default()
        };
        let e = to_utc_micros(&a, "t", 0, &opts).err().unwrap();
        assert!(e.message().contains("00:00:01.0000005 has nanoseconds"), "{e}");
        assert_eq!(parse_duration("00:00:01.0000009"), Some(1_000_000));
    }

    #[test]
    fn nanoseconds_and_leap_seconds_are_seen() {
        let p = parse_time_precise("2019-06-15T00:00:12.868214001Z", None, None).unwrap();
        assert_eq!((p.sub_ns, p.leap), (1, false));
        let p = parse_time_precise("2016-12-31T23:59:60Z", None, None).unwrap();
        assert!(p.leap);
        let p = parse_time_precise("2016-12-31 23:59:60", None, None).unwrap();
        assert!(p.leap);
    }

    #[test]
    fn sub_microsecond_times_are_refused_unless_truncation_is_asked() {
        let a: ArrayRef = Arc::new(arrow::array::StringArray::from(vec![
            "2019-06-15T00:00:12.868214Z",
            "2019-06-15T00:00:12.868214001Z",
        ]));
        let e = to_utc_micros(&a, "time", 0, &TimeOptions::default()).err().unwrap();
        assert_eq!(
            e.message(),
            "column time, row 2: 2019-06-15T00:00:12.868214001Z has nanoseconds; the table keeps microseconds; \
             --truncate-ns (Python: truncate_ns=True) stores it truncated"
        );
        let opts = TimeOptions {
            truncate_ns: true,
            ..Default::default()
        };
        let t = to_utc_micros(&a, "time", 0, &opts).ok().unwrap();
        assert_eq!(t.truncated, 1);
        assert_eq!(t.sub_micros, Some(vec![0, 1]));
        let n: ArrayRef = Arc::new(arrow::array::Int64Array::from(vec![1_560_556_812_868_214_001]));
        let ns = TimeOptions {
            unit: Some(TimeUnit::Nanosecond),
            ..Default::default()
        };
        assert!(to_utc_micros(&n, "t", 0, &ns)
            .err()
            .unwrap()
            .message()
            .contains("has nanoseconds"));
        let f: ArrayRef = Arc::new(arrow::array::Float64Array::from(vec![1_714_550_400.123]));
        let s = TimeOptions {
            unit: Some(TimeUnit::Second),
            ..Default::default()
        };
        let t = to_utc_micros(&f, "t", 0, &s).ok().unwrap();
        let v = t
            .values
            .as_primitive::<arrow::datatypes::TimestampMicrosecondType>()
            .value(0);
        assert_eq!(v, 1_714_550_400_123_000);
    }

    #[test]
    fn naive_strings_use_the_zone_and_offsets_win() {
        let tz = parse_tz(Some("-05:00")).unwrap();
        let a = parse_time_str("2020-01-01 00:00:00", None, tz.as_ref()).unwrap();
        let b = parse_time_str("2020-01-01T05:00:00Z", None, tz.as_ref()).unwrap();
        assert_eq!(a, b);
    }
}
