//! Downsampling for charts: `m4(time, value, width)` and `lttb(time, value, points)` choose, from a
//! group's samples, the few points a line chart needs to look like the whole series. Both are
//! aggregates returning the chosen points in time order as
//! `List<Struct<time: <time's type>, value: Float64>>`; `unnest` makes them rows:
//!
//! ```sql
//! SELECT host, unnest(lttb(ts, cpu, 500)) AS p FROM metrics GROUP BY host;
//! SELECT p.time, p.value FROM (SELECT unnest(m4(ts, cpu, INTERVAL '1 minute')) AS p FROM metrics);
//! ```
//!
//! - `m4(time, value, width)` (M4, Jugel et al., "M4: A Visualization-Oriented Time Series Data
//!   Aggregation", VLDB 2014): for each bucket of `width` (a fixed-length INTERVAL; months and
//!   years are refused), the rows with the first time, the last time, the least value and the
//!   greatest value. Buckets are `time_bucket(width, time)`'s: floored on a grid through Monday
//!   2000-01-03 00:00 UTC (the same as one through 1970-01-01 for widths that divide a day).
//!   Drawn one pixel column per bucket, the line looks as the full series' would.
//! - `lttb(time, value, points)` (Largest-Triangle-Three-Buckets, Steinarsson, "Downsampling
//!   Time Series for Visual Representation", MSc thesis, University of Iceland, 2013, and his
//!   reference code `flot-downsample`): at most `points` (a constant >= 3) points. The first and
//!   last samples are always kept; the n - 2 samples between are split into `points - 2` buckets
//!   of equal count (bucket `i`, from 0, holds samples `1 + floor(i (n-2) / (points-2))` up to
//!   the next bucket's start), and each bucket gives the sample forming the largest triangle with
//!   the point chosen before it and the average of the next bucket (the last sample for the last
//!   bucket). The bucket bounds are computed exactly in integers (the reference code computes
//!   them in doubles, which can drop a sample from a bucket by rounding, e.g. 17 samples into 13
//!   points). Areas take x as the time in its unit counted from the group's first time (a shift
//!   and scale that changes no choice but by rounding) and y as the value. A group of at most
//!   `points` samples gives all of them.
//!
//! Rules shared by both:
//! - `time` is a timestamp (any unit or zone; a date is read as a µs timestamp, and `lttb` also
//!   takes an integer); `value` is a number, read as a double. The output's `time` has `time`'s
//!   type.
//! - Rows whose `time` or `value` is NULL, or whose value is NaN, are skipped.
//! - Samples are ordered by (time, value) first, since a group's rows arrive in no order.
//! - Ties: M4's first and last are the first and last samples in that order (so at one time,
//!   the first is the least value and the last the greatest); its least and greatest values are
//!   the earliest samples holding them; a sample that is several of the four, or a point the data
//!   holds twice, is given once. LTTB takes the earliest sample of the largest area.
//! - A group without samples gives an empty list (no rows after `unnest`).

use std::sync::Arc;

use super::one_list;
use arrow::array::{make_array, Array, ArrayRef, AsArray, Float64Array, Int64Array, StructArray};
use arrow::datatypes::{
    DataType, Field, FieldRef, Fields, Float64Type, Int64Type, IntervalMonthDayNanoType, IntervalUnit, TimeUnit,
};
use datafusion::common::{exec_err, plan_err, Result, ScalarValue};
use datafusion::logical_expr::function::{AccumulatorArgs, StateFieldsArgs};
use datafusion::logical_expr::{Accumulator, AggregateUDF, AggregateUDFImpl, Signature, Volatility};
use datafusion::physical_expr::expressions::Literal;

const NANOS_PER_DAY: i128 = 86_400_000_000_000;

/// `time_bucket`'s default origin for fixed widths, Monday 2000-01-03 00:00 UTC, in ns.
const ORIGIN_NANOS: i128 = 10_959 * NANOS_PER_DAY;

/// An M4 accumulator reduces its samples to their M4 points once it holds this many, and then
/// again at twice what is left (the points of a part's M4 hold the points of the whole's, by the
/// tie rules, so this changes no answer and keeps memory within twice four points a bucket).
const M4_COMPACT_AT: usize = 1 << 16;

/// Which downsampling.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Method {
    M4,
    Lttb,
}

/// `m4` or `lttb` (module docs).
#[derive(Debug, PartialEq, Eq, Hash)]
pub(crate) struct Downsample {
    method: Method,
    signature: Signature,
}

impl Downsample {
    /// `m4` and `lttb`.
    pub(crate) fn all() -> Vec<AggregateUDF> {
        [Method::M4, Method::Lttb]
            .into_iter()
            .map(|method| {
                AggregateUDF::from(Downsample {
                    method,
                    signature: Signature::user_defined(Volatility::Immutable),
                })
            })
            .collect()
    }

    fn usage(&self) -> &'static str {
        match self.method {
            Method::M4 => "m4(time, value, width)",
            Method::Lttb => "lttb(time, value, points)",
        }
    }
}

/// The type of the result: a list of (time, value) structs.
fn points_type(time: &DataType) -> DataType {
    DataType::List(Arc::new(Field::new_list_field(
        DataType::Struct(point_fields(time)),
        true,
    )))
}

fn point_fields(time: &DataType) -> Fields {
    Fields::from(vec![
        Field::new("time", time.clone(), true),
        Field::new("value", DataType::Float64, true),
    ])
}

/// ns per unit of the time type (1 for integers, which only `lttb` takes and never buckets).
fn unit_nanos(time: &DataType) -> i128 {
    match time {
        DataType::Timestamp(TimeUnit::Second, _) => 1_000_000_000,
        DataType::Timestamp(TimeUnit::Millisecond, _) => 1_000_000,
        DataType::Timestamp(TimeUnit::Microsecond, _) => 1_000,
        _ => 1,
    }
}

impl AggregateUDFImpl for Downsample {
    fn documentation(&self) -> Option<&datafusion::logical_expr::Documentation> {
        crate::query::functions::reference::doc(self.name())
    }

    fn name(&self) -> &str {
        match self.method {
            Method::M4 => "m4",
            Method::Lttb => "lttb",
        }
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, arg_types: &[DataType]) -> Result<Vec<DataType>> {
        let usage = self.usage();
        let [time, value, third] = arg_types else {
            return plan_err!("{usage} takes 3 arguments, got {}", arg_types.len());
        };
        let time = match time {
            DataType::Timestamp(u, tz) => DataType::Timestamp(*u, tz.clone()),
            DataType::Date32 | DataType::Date64 | DataType::Null => DataType::Timestamp(TimeUnit::Microsecond, None),
            t if t.is_integer() && self.method == Method::Lttb => DataType::Int64,
            t if self.method == Method::Lttb => {
                return plan_err!("{usage}: time must be a timestamp, date or integer, not {t}")
            }
            t => return plan_err!("{usage}: time must be a timestamp or date, not {t}"),
        };
        if !(value.is_numeric() || value.is_null()) {
            return plan_err!("{usage}: value must be a number, not {value}");
        }
        let third = match (self.method, third) {
            (Method::M4, DataType::Interval(_) | DataType::Null) => DataType::Interval(IntervalUnit::MonthDayNano),
            (Method::M4, t) => {
                return plan_err!("{usage}: width must be an interval such as INTERVAL '1 minute', not {t}")
            }
            (Method::Lttb, t) if t.is_integer() || t.is_null() => DataType::Int64,
            (Method::Lttb, t) => return plan_err!("{usage}: points must be an integer, not {t}"),
        };
        Ok(vec![time, DataType::Float64, third])
    }

    fn return_type(&self, arg_types: &[DataType]) -> Result<DataType> {
        Ok(points_type(&arg_types[0]))
    }

    fn state_fields(&self, args: StateFieldsArgs) -> Result<Vec<FieldRef>> {
        Ok(crate::query::functions::samples_state_fields(args.name))
    }

    fn accumulator(&self, args: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        let usage = self.usage();
        let time_type = args.expr_fields[0].data_type().clone();
        let constant = args
            .exprs
            .get(2)
            .and_then(|e| e.downcast_ref::<Literal>())
            .map(|l| l.value().clone());
        let pick = match (self.method, constant) {
            (Method::M4, Some(ScalarValue::IntervalMonthDayNano(Some(i)))) => {
                let (months, days, nanos) = IntervalMonthDayNanoType::to_parts(i);
                if months != 0 {
                    return plan_err!(
                        "{usage}: width must be a fixed length of time such as INTERVAL '1 minute'; months and years have no fixed length"
                    );
                }
                let width = days as i128 * NANOS_PER_DAY + nanos as i128;
                if width <= 0 {
                    return plan_err!("{usage}: width must be positive");
                }
                Pick::M4 {
                    width,
                    unit: unit_nanos(&time_type),
                }
            }
            (Method::M4, _) => {
                return plan_err!("{usage}: width must be a constant interval such as INTERVAL '1 minute'")
            }
            (Method::Lttb, Some(ScalarValue::Int64(Some(p)))) => {
                if p < 3 {
                    return plan_err!(
                        "{usage}: points must be at least 3 (the first point, the last and one bucket between), got {p}"
                    );
                }
                Pick::Lttb {
                    points: usize::try_from(p).unwrap_or(usize::MAX),
                }
            }
            (Method::Lttb, _) => return plan_err!("{usage}: points must be a constant integer"),
        };
        Ok(Box::new(Downsampler {
            pick,
            time_type,
            times: Vec::new(),
            values: Vec::new(),
            compact_at: M4_COMPACT_AT,
        }))
    }
}

/// A downsampling with its constant argument.
#[derive(Debug, Clone, Copy)]
enum Pick {
    /// Bucket width in ns; ns per unit of time.
    M4 {
        width: i128,
        unit: i128,
    },
    Lttb {
        points: usize,
    },
}

/// A group's samples (times as i64 in the time type's unit), in arrival order until evaluated.
#[derive(Debug)]
struct Downsampler {
    pick: Pick,
    time_type: DataType,
    times: Vec<i64>,
    values: Vec<f64>,
    /// The count of samples at which M4 compacts them next.
    compact_at: usize,
}

impl Downsampler {
    /// The samples ordered by (time, value).
    fn ordered(&self) -> Vec<(i64, f64)> {
        let mut s: Vec<(i64, f64)> = self.times.iter().copied().zip(self.values.iter().copied()).collect();
        s.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)));
        s
    }

    fn chosen(&self) -> Vec<(i64, f64)> {
        let s = self.ordered();
        match self.pick {
            Pick::M4 { width, unit } => m4(&s, width, unit),
            Pick::Lttb { points } => lttb(&s, points),
        }
    }

    /// Keeps only the M4 points of the samples, which are all M4 needs of them.
    fn compact(&mut self) {
        if matches!(self.pick, Pick::M4 { .. }) {
            (self.times, self.values) = self.chosen().into_iter().unzip();
            self.compact_at = M4_COMPACT_AT.max(2 * self.times.len());
        }
    }

    /// Compacts when the samples have grown enough since the last time.
    fn maybe_compact(&mut self) {
        if self.times.len() >= self.compact_at {
            self.compact();
        }
    }
}

/// Times and Int64 share a layout: the time column's values as i64.
fn as_i64(a: &ArrayRef) -> Result<Int64Array> {
    Ok(Int64Array::from(
        a.to_data().into_builder().data_type(DataType::Int64).build()?,
    ))
}

/// M4 of samples ordered by (time, value): per bucket of `width` ns (times in units of `unit`
/// ns), its first and last samples and the earliest of its least and of its greatest values,
/// in order, each point once.
fn m4(s: &[(i64, f64)], width: i128, unit: i128) -> Vec<(i64, f64)> {
    let bucket = |t: i64| (t as i128 * unit - ORIGIN_NANOS).div_euclid(width);
    let mut out: Vec<(i64, f64)> = Vec::new();
    let mut start = 0;
    while start < s.len() {
        let b = bucket(s[start].0);
        let end = start + s[start..].iter().take_while(|p| bucket(p.0) == b).count();
        let run = &s[start..end];
        let (mut low, mut high) = (0, 0);
        for (i, p) in run.iter().enumerate() {
            if p.1 < run[low].1 {
                low = i;
            }
            if p.1 > run[high].1 {
                high = i;
            }
        }
        let mut picks = [0, low, high, run.len() - 1];
        picks.sort_unstable();
        for i in picks {
            if out.last() != Some(&run[i]) {
                out.push(run[i]);
            }
        }
        start = end;
    }
    out
}

/// LTTB of samples ordered by (time, value), to at most `points` (>= 3) points.
fn lttb(s: &[(i64, f64)], points: usize) -> Vec<(i64, f64)> {
    let n = s.len();
    if n <= points {
        return s.to_vec();
    }
    // x in the time's unit from the first time, y the value.
    let xy: Vec<(f64, f64)> = s.iter().map(|p| ((p.0 as i128 - s[0].0 as i128) as f64, p.1)).collect();
    let buckets = points - 2;
    // Bucket i holds samples start(i)..start(i + 1); start(buckets) is n - 1, the last sample.
    let start = |i: usize| 1 + (i as u128 * (n - 2) as u128 / buckets as u128) as usize;
    let mut out = Vec::with_capacity(points);
    out.push(s[0]);
    let mut a = 0;
    for i in 0..buckets {
        let next = &xy[start(i + 1)..if i + 1 == buckets { n } else { start(i + 2) }];
        let (mut avg_x, mut avg_y) = (0.0, 0.0);
        for &(x, y) in next {
            avg_x += x;
            avg_y += y;
        }
        (avg_x, avg_y) = (avg_x / next.len() as f64, avg_y / next.len() as f64);
        let (ax, ay) = xy[a];
        let (from, to) = (start(i), start(i + 1));
        let (mut best, mut best_area) = (from, -1.0);
        for (j, &(x, y)) in xy[from..to].iter().enumerate() {
            let area = ((ax - avg_x) * (y - ay) - (ax - x) * (avg_y - ay)).abs() * 0.5;
            if area > best_area {
                (best, best_area) = (from + j, area);
            }
        }
        out.push(s[best]);
        a = best;
    }
    out.push(s[n - 1]);
    out
}

impl Accumulator for Downsampler {
    fn update_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        let t = as_i64(&values[0])?;
        let v = values[1].as_primitive::<Float64Type>();
        for i in 0..v.len() {
            if t.is_valid(i) && v.is_valid(i) && !v.value(i).is_nan() {
                self.times.push(t.value(i));
                self.values.push(v.value(i));
            }
        }
        self.maybe_compact();
        Ok(())
    }

    fn merge_batch(&mut self, states: &[ArrayRef]) -> Result<()> {
        let (times, values) = (states[0].as_list::<i32>(), states[1].as_list::<i32>());
        for i in 0..times.len() {
            if times.is_null(i) || values.is_null(i) {
                continue;
            }
            let (t, v) = (times.value(i), values.value(i));
            let (t, v) = (t.as_primitive::<Int64Type>(), v.as_primitive::<Float64Type>());
            if t.len() != v.len() {
                return exec_err!(
                    "{}: a partial state's times and values differ in length",
                    self.pick.name()
                );
            }
            self.times.extend(t.values().iter().copied());
            self.values.extend(v.values().iter().copied());
            self.maybe_compact();
        }
        Ok(())
    }

    fn state(&mut self) -> Result<Vec<ScalarValue>> {
        self.compact();
        let times: ArrayRef = Arc::new(Int64Array::from(std::mem::take(&mut self.times)));
        let values: ArrayRef = Arc::new(Float64Array::from(std::mem::take(&mut self.values)));
        Ok(vec![one_list(times), one_list(values)])
    }

    fn evaluate(&mut self) -> Result<ScalarValue> {
        let (times, values): (Vec<i64>, Vec<f64>) = self.chosen().into_iter().unzip();
        let times = Int64Array::from(times)
            .into_data()
            .into_builder()
            .data_type(self.time_type.clone())
            .build()?;
        let values: ArrayRef = Arc::new(Float64Array::from(values));
        let points = StructArray::try_new(point_fields(&self.time_type), vec![make_array(times), values], None)?;
        Ok(one_list(Arc::new(points)))
    }

    fn size(&self) -> usize {
        std::mem::size_of_val(self) + self.times.capacity() * 8 + self.values.capacity() * 8
    }
}

impl Pick {
    fn name(self) -> &'static str {
        match self {
            Pick::M4 { .. } => "m4",
            Pick::Lttb { .. } => "lttb",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINUTE: i128 = 60_000_000_000;

    #[test]
    fn m4_keeps_first_last_min_max_per_bucket() {
        // Times in seconds; one-minute buckets. Bucket 0: 0..60 s, bucket 1: 60..120 s.
        let s = [
            (0, 5.0),
            (10, 1.0),
            (20, 9.0),
            (30, 1.0),
            (40, 9.0),
            (59, 4.0),
            (60, 2.0),
            (60, 3.0),
        ];
        let got = m4(&s, MINUTE, 1_000_000_000);
        assert_eq!(
            got,
            vec![(0, 5.0), (10, 1.0), (20, 9.0), (59, 4.0), (60, 2.0), (60, 3.0)]
        );
        // One sample that is all four; a point held twice.
        assert_eq!(m4(&[(7, 1.0)], MINUTE, 1_000_000_000), vec![(7, 1.0)]);
        assert_eq!(m4(&[(7, 1.0), (7, 1.0)], MINUTE, 1_000_000_000), vec![(7, 1.0)]);
        // Before the origin and 1970: floored.
        assert_eq!(m4(&[(-61, 1.0), (-60, 2.0), (-1, 3.0)], MINUTE, 1_000_000_000).len(), 3);
    }

    #[test]
    fn m4_of_parts_is_m4_of_the_whole() {
        let mut g = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = |n: u64| {
            g ^= g << 13;
            g ^= g >> 7;
            g ^= g << 17;
            g % n
        };
        let s: Vec<(i64, f64)> = (0..2000).map(|_| (next(600) as i64 - 300, next(20) as f64)).collect();
        let order = |mut v: Vec<(i64, f64)>| {
            v.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)));
            v
        };
        let whole = m4(&order(s.clone()), MINUTE, 1_000_000_000);
        let mut parts = Vec::new();
        for chunk in s.chunks(300) {
            parts.extend(m4(&order(chunk.to_vec()), MINUTE, 1_000_000_000));
        }
        assert_eq!(m4(&order(parts), MINUTE, 1_000_000_000), whole);
    }

    #[test]
    fn compacting_accumulator_gives_the_same_points() {
        let time_type = DataType::Timestamp(TimeUnit::Second, None);
        let mut acc = Downsampler {
            pick: Pick::M4 {
                width: MINUTE,
                unit: 1_000_000_000,
            },
            time_type: time_type.clone(),
            times: Vec::new(),
            values: Vec::new(),
            compact_at: 50,
        };
        let mut all = Vec::new();
        for k in 0..40i64 {
            let t: Vec<Option<i64>> = (0..30).map(|i| Some((i * 7919 + k * 104_729) % 900 - 450)).collect();
            let v: Vec<Option<f64>> = (0..30)
                .map(|i| (i % 11 != 0).then_some(((i * k) % 13) as f64))
                .collect();
            all.extend(t.iter().zip(&v).filter_map(|(t, v)| Some((t.unwrap(), (*v)?))));
            let t = make_array(
                Int64Array::from(t)
                    .into_data()
                    .into_builder()
                    .data_type(time_type.clone())
                    .build()
                    .unwrap(),
            );
            acc.update_batch(&[
                t,
                Arc::new(Float64Array::from(v)),
                Arc::new(Int64Array::from(vec![0; 30])),
            ])
            .unwrap();
        }
        assert!(acc.times.len() < all.len());
        all.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)));
        let want = m4(&all, MINUTE, 1_000_000_000);
        let ScalarValue::List(got) = acc.evaluate().unwrap() else {
            panic!("not a list")
        };
        let got = got.value(0);
        let got = got.as_struct();
        let t = got.column(0).as_primitive::<arrow::datatypes::TimestampSecondType>();
        let v = got.column(1).as_primitive::<Float64Type>();
        let got: Vec<(i64, f64)> = (0..got.len()).map(|i| (t.value(i), v.value(i))).collect();
        assert_eq!(got, want);
    }

    #[test]
    fn lttb_keeps_ends_and_peaks() {
        let s: Vec<(i64, f64)> = (0..10).map(|i| (i, if i == 4 { 10.0 } else { 0.0 })).collect();
        let got = lttb(&s, 3);
        assert_eq!(got, vec![(0, 0.0), (4, 10.0), (9, 0.0)]);
        assert_eq!(lttb(&s, 10), s);
        assert_eq!(lttb(&s, 4).len(), 4);
        // 17 samples into 13 points: the 16th sample (index 15) is in the last bucket.
        let s: Vec<(i64, f64)> = (0..17).map(|i| (i, if i == 15 { 1.0 } else { 0.0 })).collect();
        assert!(lttb(&s, 13).contains(&(15, 1.0)));
    }
}
