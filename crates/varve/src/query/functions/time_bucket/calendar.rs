//! The arithmetic of time buckets, apart from SQL: widths in calendar units or fixed lengths,
//! wall-clock time in a time zone, origins and offsets. Every time here is an `i128` count of
//! nanoseconds since 1970-01-01T00:00:00, either an instant (UTC) or a wall-clock reading in the
//! bucket's zone; `i128` so that µs columns far outside the ns range of an `i64` (before 1677,
//! after 2262) bucket exactly.
//!
//! The rules are DuckDB's (`time_bucket` with a time zone, ICU extension), which PostgreSQL's
//! interval arithmetic shares: an interval's days and months are calendar units, its hours,
//! minutes and seconds are lengths of time.
//!
//! - **Days and months** are counted on the zone's wall clock: the instant is read on the clock,
//!   the offset is taken off, the reading is floored to the grid of buckets through the origin,
//!   the offset is put back and the start is turned into an instant again. A day bucket in
//!   Europe/Berlin starts at local midnight and lasts 23 hours on the spring-forward day and 25
//!   on the fall-back day. A start that the clock shows twice is the earlier instant; a start
//!   the clock skips (a midnight jumped over by DST, as in America/Havana) is the instant of the
//!   jump, the first moment of the bucket that exists.
//! - **Fixed lengths** (hours, minutes, seconds and below) are cut on the time line itself, on a
//!   grid through the origin's instant: an hour bucket is always 60 minutes, the two 02:00 hours
//!   of a fall-back night are two buckets, and after a DST change the buckets keep their place
//!   in real time. The zone only moves the default origin (local midnight of 2000-01-03).
//! - A width mixing the two (`INTERVAL '1 day 12 hours'`, `'1 month 1 day'`) has no fixed place
//!   in the calendar and is refused, as DuckDB and DataFusion's `date_bin` refuse it.

use arrow::array::timezone::Tz;
use chrono::{DateTime, Datelike, LocalResult, Months, NaiveDateTime, Offset, TimeZone};

/// Nanoseconds in a second.
pub(super) const NANOS_PER_SECOND: i128 = 1_000_000_000;
/// Nanoseconds in a (wall-clock) day.
pub(super) const NANOS_PER_DAY: i128 = 86_400 * NANOS_PER_SECOND;

/// The width of a bucket.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Width {
    /// Calendar months (a quarter is 3, a year 12), on the wall clock: buckets start on the
    /// origin's day and time of the month.
    Months(u32),
    /// Calendar days (a week is 7), on the wall clock.
    Days(u32),
    /// A fixed length of time in ns, on the time line.
    Nanos(i128),
}

impl Width {
    /// The width of an SQL interval of `months`, `days` and `nanos`.
    ///
    /// Errors (as text for the caller's message): a width that is not positive, or that mixes
    /// calendar units with each other or with a length of time (module docs).
    pub(super) fn from_interval(months: i32, days: i32, nanos: i64) -> Result<Width, String> {
        let mixed = [months != 0, days != 0, nanos != 0].iter().filter(|b| **b).count() > 1;
        if mixed {
            return Err(
                "a width is months (INTERVAL '3 months'), days (INTERVAL '7 days') or a length \
                        of time (INTERVAL '90 minutes'), not a mix of them"
                    .into(),
            );
        }
        if months < 0 || days < 0 || nanos <= 0 && months == 0 && days == 0 {
            return Err("the width must be positive".into());
        }
        Ok(match (months, days) {
            (0, 0) => Width::Nanos(nanos as i128),
            (0, d) => Width::Days(d as u32),
            (m, _) => Width::Months(m as u32),
        })
    }

    /// The default origin (wall clock): Monday 2000-01-03 for days and lengths of time, so that
    /// week buckets start on Monday, and 2000-01-01 for months, so that months, quarters and
    /// years start on the first of January; DuckDB's and TimescaleDB's defaults. Widths that
    /// divide a day give the same buckets on any midnight.
    pub(super) fn default_origin(self) -> i128 {
        let day_2000_01_01 = 10_957;
        match self {
            Width::Months(_) => day_2000_01_01 * NANOS_PER_DAY,
            Width::Days(_) | Width::Nanos(_) => (day_2000_01_01 + 2) * NANOS_PER_DAY,
        }
    }
}

/// Where the bucket grid passes through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Origin {
    /// The width's default ([`Width::default_origin`]), on the zone's wall clock.
    Default,
    /// A wall-clock time in the zone (ns): a naive timestamp or text.
    Wall(i128),
    /// An instant (ns): a zoned timestamp.
    Instant(i128),
}

/// An interval added to wall-clock times: months on the calendar, then fixed ns (days are
/// wall-clock days).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Shift {
    /// Calendar months.
    pub(super) months: i32,
    /// Wall-clock ns (days included).
    pub(super) nanos: i128,
}

impl Shift {
    /// The shift of an SQL interval.
    pub(super) fn from_interval(months: i32, days: i32, nanos: i64) -> Shift {
        Shift {
            months,
            nanos: days as i128 * NANOS_PER_DAY + nanos as i128,
        }
    }

    fn apply(self, wall: i128, sign: i32) -> Option<i128> {
        let wall = match self.months as i64 * sign as i64 {
            0 => wall,
            m => add_months(wall, m)?,
        };
        Some(wall + self.nanos * sign as i128)
    }
}

/// Buckets one kind of bucket: a width, an origin, an offset and a zone (`None` is UTC, where
/// wall clock and instant are the same).
#[derive(Debug, Clone)]
pub(crate) struct Bucketer {
    width: Width,
    /// The origin as a wall-clock time in the zone (ns), for days and months.
    origin_wall: i128,
    /// The origin as an instant (ns), for lengths of time.
    origin_instant: i128,
    offset: Shift,
    zone: Option<Tz>,
}

impl Bucketer {
    /// A bucketer, or `None` when the origin is outside the calendar's range.
    pub(super) fn new(width: Width, origin: Origin, offset: Shift, zone: Option<Tz>) -> Option<Bucketer> {
        let mut b = Bucketer {
            width,
            origin_wall: 0,
            origin_instant: 0,
            offset,
            zone,
        };
        (b.origin_wall, b.origin_instant) = match origin {
            Origin::Default => (width.default_origin(), b.to_instant(width.default_origin())?),
            Origin::Wall(w) => (w, b.to_instant(w)?),
            Origin::Instant(i) => (b.to_wall(i)?, i),
        };
        Some(b)
    }

    /// `(width, a bucket start)` in ns when the buckets are one fixed grid of instants: lengths
    /// of time, or days in UTC, with no offset in months. [`Bucketer::bucket`] is then
    /// `start + (t - start).div_euclid(width) * width`, which a kernel computes without the
    /// calendar (`time_bucket`'s arrays).
    pub(crate) fn fixed_grid(&self) -> Option<(i128, i128)> {
        if self.offset.months != 0 {
            return None;
        }
        match self.width {
            Width::Nanos(w) => Some((w, self.origin_instant + self.offset.nanos)),
            Width::Days(d) if self.zone.is_none() => {
                Some((d as i128 * NANOS_PER_DAY, self.origin_wall + self.offset.nanos))
            }
            _ => None,
        }
    }

    /// The start (an instant, ns) of the bucket holding the instant `t` (ns), or `None` when a
    /// time on the way is outside the calendar's range (about ±262,000 years).
    pub(crate) fn bucket(&self, t: i128) -> Option<i128> {
        if let Width::Nanos(w) = self.width {
            let x = self.offset.apply(t, -1)?;
            let o = self.origin_instant;
            return self.offset.apply(o + (x - o).div_euclid(w) * w, 1);
        }
        let wall = self.offset.apply(self.to_wall(t)?, -1)?;
        let o = self.origin_wall;
        let start = match self.width {
            Width::Days(d) => {
                let w = d as i128 * NANOS_PER_DAY;
                o + (wall - o).div_euclid(w) * w
            }
            Width::Months(m) => self.month_floor(wall, m)?,
            Width::Nanos(_) => unreachable!("handled above"),
        };
        self.to_instant(self.offset.apply(start, 1)?)
    }

    /// The start (an instant, ns) of the bucket after the one that starts at `start`, or `None`
    /// out of the calendar's range. Fixed lengths add the width; days and months bucket a time
    /// well inside the next bucket (a day bucket lasts 23 to 25 hours, a month 28 to 31 days), so
    /// DST and month lengths are the bucketing's own.
    pub(crate) fn next(&self, start: i128) -> Option<i128> {
        let probe = match self.width {
            Width::Nanos(w) => return Some(start + w),
            Width::Days(d) => start + d as i128 * NANOS_PER_DAY + NANOS_PER_DAY / 2,
            Width::Months(m) => start + (m as i128 * 31 + 1) * NANOS_PER_DAY,
        };
        self.bucket(probe).filter(|n| *n > start)
    }

    /// Whether every bucket boundary of `coarser` is also a boundary of `self`, so that each
    /// bucket of `coarser` is a union of whole buckets of `self` (a rollup at `self` can answer a
    /// query at `coarser`). Sound, not complete: a pair outside these cases is `false`.
    /// - fixed lengths: the coarser width a multiple, the grids through one point;
    /// - a fixed length dividing a day under UTC days or months whose starts lie on its grid;
    /// - days under days (a multiple, origins a multiple apart) or one day under months, and
    ///   months under months, in the same zone with the same offset.
    pub(crate) fn refines(&self, coarser: &Bucketer) -> bool {
        let same_zone = format!("{:?}", self.zone) == format!("{:?}", coarser.zone);
        let same_offset = self.offset == coarser.offset;
        let grid = |b: &Bucketer| b.origin_instant + b.offset.nanos;
        match (self.width, coarser.width) {
            (Width::Nanos(w), Width::Nanos(big)) => {
                self.offset.months == 0
                    && coarser.offset.months == 0
                    && big % w == 0
                    && (grid(coarser) - grid(self)).rem_euclid(w) == 0
            }
            (Width::Nanos(w), Width::Days(_) | Width::Months(_)) => {
                coarser.zone.is_none()
                    && self.offset.months == 0
                    && NANOS_PER_DAY % w == 0
                    && (coarser.origin_wall + coarser.offset.nanos - grid(self)).rem_euclid(w) == 0
            }
            (Width::Days(d), Width::Days(big)) => {
                let w = d as i128 * NANOS_PER_DAY;
                same_zone && same_offset && big % d == 0 && (coarser.origin_wall - self.origin_wall).rem_euclid(w) == 0
            }
            (Width::Days(1), Width::Months(_)) => {
                same_zone && same_offset && (coarser.origin_wall - self.origin_wall).rem_euclid(NANOS_PER_DAY) == 0
            }
            (Width::Months(m), Width::Months(big)) => {
                let (Some(a), Some(b)) = (naive(self.origin_wall), naive(coarser.origin_wall)) else {
                    return false;
                };
                let diff = (b.year() as i64 - a.year() as i64) * 12 + (b.month0() as i64 - a.month0() as i64);
                same_zone
                    && same_offset
                    && big % m == 0
                    && diff.rem_euclid(m as i64) == 0
                    && add_months(self.origin_wall, diff) == Some(coarser.origin_wall)
            }
            _ => false,
        }
    }

    /// About how long a bucket lasts (ns): the width, a day for each day, 30 days for each
    /// month. For choosing a layout, not for arithmetic.
    pub(crate) fn nominal_nanos(&self) -> i128 {
        match self.width {
            Width::Nanos(w) => w,
            Width::Days(d) => d as i128 * NANOS_PER_DAY,
            Width::Months(m) => m as i128 * 30 * NANOS_PER_DAY,
        }
    }

    /// The latest `origin + k * m months` at or before `wall`.
    fn month_floor(&self, wall: i128, m: u32) -> Option<i128> {
        let o = naive(self.origin_wall)?;
        let x = naive(wall)?;
        let mut diff = (x.year() as i64 - o.year() as i64) * 12 + (x.month0() as i64 - o.month0() as i64);
        if add_months(self.origin_wall, diff)? > wall {
            diff -= 1;
        }
        add_months(self.origin_wall, diff.div_euclid(m as i64) * m as i64)
    }

    /// The zone's wall-clock reading at the instant `t`.
    pub(super) fn to_wall(&self, t: i128) -> Option<i128> {
        match &self.zone {
            None => Some(t),
            Some(tz) => {
                let off = tz.offset_from_utc_datetime(&naive(t)?).fix().local_minus_utc();
                Some(t + off as i128 * NANOS_PER_SECOND)
            }
        }
    }

    /// The instant at which the zone's clock reads `wall`: the earlier of two, or the instant of
    /// the jump when the clock skips `wall` (module docs).
    pub(super) fn to_instant(&self, wall: i128) -> Option<i128> {
        let Some(tz) = &self.zone else {
            return Some(wall);
        };
        let n = naive(wall)?;
        let secs = |o: i32| wall - o as i128 * NANOS_PER_SECOND;
        Some(match tz.offset_from_local_datetime(&n) {
            LocalResult::Single(o) => secs(o.fix().local_minus_utc()),
            LocalResult::Ambiguous(a, b) => secs(a.fix().local_minus_utc().max(b.fix().local_minus_utc())),
            LocalResult::None => {
                // Skipped by a jump forward: the clock read `wall` in the offset before the jump.
                let before = n.checked_sub_signed(chrono::TimeDelta::days(1))?;
                secs(tz.offset_from_utc_datetime(&before).fix().local_minus_utc())
            }
        })
    }
}

/// `ns` since the epoch as a calendar time, or `None` out of chrono's range.
pub(super) fn naive(ns: i128) -> Option<NaiveDateTime> {
    let secs = i64::try_from(ns.div_euclid(NANOS_PER_SECOND)).ok()?;
    let sub = ns.rem_euclid(NANOS_PER_SECOND) as u32;
    DateTime::from_timestamp(secs, sub).map(|d| d.naive_utc())
}

fn nanos_of(n: NaiveDateTime) -> i128 {
    let d = n.and_utc();
    d.timestamp() as i128 * NANOS_PER_SECOND + d.timestamp_subsec_nanos() as i128
}

/// `wall` plus `k` calendar months (the day clamped to the month's end, as in SQL).
fn add_months(wall: i128, k: i64) -> Option<i128> {
    let n = naive(wall)?;
    let months = Months::new(u32::try_from(k.unsigned_abs()).ok()?);
    let moved = if k >= 0 {
        n.checked_add_months(months)?
    } else {
        n.checked_sub_months(months)?
    };
    Some(nanos_of(moved))
}

#[cfg(test)]
mod tests {
    use std::str::FromStr;

    use super::*;

    fn at(s: &str) -> i128 {
        nanos_of(NaiveDateTime::parse_from_str(s, "%Y-%m-%d %H:%M:%S").unwrap())
    }

    fn show(ns: i128) -> String {
        naive(ns).unwrap().format("%Y-%m-%d %H:%M:%S").to_string()
    }

    fn bucketer(width: Width, zone: Option<&str>) -> Bucketer {
        with(width, zone, Origin::Default, Shift::default())
    }

    fn with(width: Width, zone: Option<&str>, origin: Origin, offset: Shift) -> Bucketer {
        Bucketer::new(width, origin, offset, zone.map(|z| Tz::from_str(z).unwrap())).unwrap()
    }

    const HOUR: i128 = 3_600 * NANOS_PER_SECOND;

    #[test]
    fn days_follow_local_midnight_across_dst() {
        let b = bucketer(Width::Days(1), Some("Europe/Berlin"));
        // 2024-03-31 is 23 hours long in Berlin: midnight is 23:00 UTC the day before, then 22:00.
        assert_eq!(
            show(b.bucket(at("2024-03-31 12:00:00")).unwrap()),
            "2024-03-30 23:00:00"
        );
        assert_eq!(
            show(b.bucket(at("2024-03-31 22:30:00")).unwrap()),
            "2024-03-31 22:00:00"
        );
        assert_eq!(
            show(b.bucket(at("2024-10-27 23:30:00")).unwrap()),
            "2024-10-27 23:00:00"
        );
    }

    #[test]
    fn months_quarters_and_years() {
        let q = bucketer(Width::Months(3), None);
        assert_eq!(
            show(q.bucket(at("2024-02-29 23:59:59")).unwrap()),
            "2024-01-01 00:00:00"
        );
        assert_eq!(
            show(q.bucket(at("1969-12-31 23:59:59")).unwrap()),
            "1969-10-01 00:00:00"
        );
        let y = bucketer(Width::Months(12), Some("America/New_York"));
        // New Year in New York is 05:00 UTC.
        assert_eq!(
            show(y.bucket(at("2024-01-01 04:59:59")).unwrap()),
            "2023-01-01 05:00:00"
        );
    }

    #[test]
    fn weeks_start_on_monday_and_origins_move_them() {
        let w = bucketer(Width::Days(7), None);
        // 2024-02-29 is a Thursday; its week starts on Monday 2024-02-26.
        assert_eq!(
            show(w.bucket(at("2024-02-29 10:00:00")).unwrap()),
            "2024-02-26 00:00:00"
        );
        let sunday = with(
            Width::Days(7),
            None,
            Origin::Wall(at("2024-01-07 00:00:00")),
            Shift::default(),
        );
        assert_eq!(
            show(sunday.bucket(at("2024-02-29 10:00:00")).unwrap()),
            "2024-02-25 00:00:00"
        );
        // Before 1970 and before the origin: floored, not truncated towards zero.
        assert_eq!(
            show(w.bucket(at("1969-07-20 20:17:40")).unwrap()),
            "1969-07-14 00:00:00"
        );
    }

    #[test]
    fn skipped_and_repeated_wall_times() {
        // Havana skipped 2024-03-10 00:00-01:00: the day starts at the jump, 05:00 UTC.
        let b = bucketer(Width::Days(1), Some("America/Havana"));
        assert_eq!(
            show(b.bucket(at("2024-03-10 12:00:00")).unwrap()),
            "2024-03-10 05:00:00"
        );
        // Berlin's 02:00-03:00 happened twice on 2024-10-27: two hour buckets, as in DuckDB.
        let h = bucketer(Width::Nanos(HOUR), Some("Europe/Berlin"));
        assert_eq!(
            show(h.bucket(at("2024-10-27 00:30:00")).unwrap()),
            "2024-10-27 00:00:00"
        );
        assert_eq!(
            show(h.bucket(at("2024-10-27 01:30:00")).unwrap()),
            "2024-10-27 01:00:00"
        );
        // Lengths of time keep their place in real time: after the spring jump, Berlin's 2-hour
        // buckets start at odd local hours; Kathmandu's hours start at :15 UTC (DuckDB agrees).
        let two = bucketer(Width::Nanos(2 * HOUR), Some("Europe/Berlin"));
        assert_eq!(
            show(two.bucket(at("2024-03-31 03:30:00")).unwrap()),
            "2024-03-31 03:00:00"
        );
        let k = bucketer(Width::Nanos(HOUR), Some("Asia/Kathmandu"));
        assert_eq!(
            show(k.bucket(at("2024-10-27 01:30:00")).unwrap()),
            "2024-10-27 01:15:00"
        );
    }

    #[test]
    fn offsets_shift_the_grid() {
        let b = with(Width::Months(1), None, Origin::Default, Shift::from_interval(0, 1, 0));
        assert_eq!(
            show(b.bucket(at("2024-03-01 12:00:00")).unwrap()),
            "2024-02-02 00:00:00"
        );
        assert_eq!(
            show(b.bucket(at("2024-03-02 00:00:00")).unwrap()),
            "2024-03-02 00:00:00"
        );
    }

    #[test]
    fn widths() {
        assert_eq!(Width::from_interval(0, 0, 0), Err("the width must be positive".into()));
        assert!(Width::from_interval(1, 1, 0).is_err());
        assert_eq!(Width::from_interval(3, 0, 0), Ok(Width::Months(3)));
        assert!(Width::from_interval(0, 1, 5).is_err());
        assert_eq!(Width::from_interval(0, 7, 0), Ok(Width::Days(7)));
        assert_eq!(Width::from_interval(0, 0, 5), Ok(Width::Nanos(5)));
        assert!(Width::from_interval(0, -1, 0).is_err());
    }
}
