//! `time_bucket`: the start of the bucket holding a time, in fixed widths or calendar units, in
//! UTC or a time zone; TimescaleDB's and DuckDB's function of that name:
//!
//! ```sql
//! time_bucket(width, ts)                                  -- UTC; weeks start on Monday
//! time_bucket(width, ts, origin | "offset" | timezone)    -- the third argument by its type
//! time_bucket(width, ts, timezone, origin [, "offset"])
//! time_bucket(width, ts, timezone => 'Europe/Berlin', origin => ..., "offset" => ...)
//!
//! SELECT time_bucket(INTERVAL '1 day', ts, 'Europe/Berlin') AS day, avg(celsius) FROM temps GROUP BY 1;
//! ```
//!
//! - `width` is an interval: a fixed length (`'15 minutes'`, `'1 day'`, `'7 days'`) or calendar
//!   months (`'1 month'`, `'3 months'`, `'1 year'`); not both.
//! - `ts` is a timestamp (any unit, zoned or not), a date or text; the result has `ts`'s type
//!   (dates and text become µs timestamps). The
//!   time zone of a zoned type only labels the instants: buckets are in UTC unless `timezone` is
//!   given. A timestamp without zone is read as UTC, the session's zone.
//! - `timezone` is an IANA name or an offset (`'+05:30'`); days, weeks, months and years then
//!   follow the zone's wall clock across DST, while hours and shorter stay lengths of time on a
//!   grid through the origin ([`calendar`] has the rules, DuckDB's).
//! - `origin` is a time on the bucket grid (default Monday 2000-01-03 for fixed widths,
//!   2000-01-01 for months). A zoned origin is an instant; a naive one (or text) is a wall-clock
//!   time in the bucket's zone.
//! - `offset` is an interval added to every bucket's start (`"offset" => INTERVAL '9 hours'`).
//! - NULL `ts` or `width` gives NULL; a NULL `timezone`, `origin` or `offset` means its default.
//!
//! Named arguments are put in the positional form before planning ([`named_arguments`]).

mod calendar;
mod named;

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, PrimitiveArray};
use arrow::datatypes::{
    ArrowTimestampType, DataType, IntervalMonthDayNanoType, IntervalUnit, TimeUnit, TimestampMicrosecondType,
    TimestampMillisecondType, TimestampNanosecondType, TimestampSecondType,
};
use datafusion::common::{exec_err, plan_err, Result, ScalarValue};
use datafusion::logical_expr::sort_properties::{ExprProperties, SortProperties};
use datafusion::logical_expr::{ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility};

pub(crate) use calendar::Bucketer;
use calendar::{Origin, Shift, Width, NANOS_PER_SECOND};
pub(crate) use named::named_arguments;

/// The function's name, as SQL spells it.
pub(crate) const NAME: &str = "time_bucket";

/// Its parameters in positional order: what named arguments are matched to.
pub(crate) const PARAMETERS: [&str; 5] = ["bucket_width", "ts", "timezone", "origin", "offset"];

/// `time_bucket(width, ts [, ...])` (module docs).
#[derive(Debug, PartialEq, Eq, Hash)]
pub(crate) struct TimeBucket {
    signature: Signature,
}

impl TimeBucket {
    pub(crate) fn udf() -> ScalarUDF {
        ScalarUDF::from(TimeBucket {
            signature: Signature::user_defined(Volatility::Immutable),
        })
    }
}

const USAGE: &str = "time_bucket(width, ts [, origin | offset | timezone]) or \
                     time_bucket(width, ts, timezone, origin [, offset])";

fn is_text(t: &DataType) -> bool {
    matches!(t, DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View)
}

/// What a time argument (`ts`, `origin`) is read as: timestamps keep their type, dates and text
/// become µs timestamps without zone (Varve's unit).
fn time_type(t: &DataType, what: &str) -> Result<DataType> {
    match t {
        DataType::Timestamp(u, tz) => Ok(DataType::Timestamp(*u, tz.clone())),
        DataType::Date32 | DataType::Date64 | DataType::Null => Ok(DataType::Timestamp(TimeUnit::Microsecond, None)),
        t if is_text(t) => Ok(DataType::Timestamp(TimeUnit::Microsecond, None)),
        other => plan_err!("time_bucket: {what} must be a timestamp, not {other}"),
    }
}

fn interval_type(t: &DataType, what: &str) -> Result<DataType> {
    match t {
        DataType::Interval(_) | DataType::Null => Ok(DataType::Interval(IntervalUnit::MonthDayNano)),
        other => plan_err!("time_bucket: {what} must be an interval such as INTERVAL '15 minutes', not {other}"),
    }
}

fn zone_type(t: &DataType) -> Result<DataType> {
    match t {
        t if is_text(t) => Ok(DataType::Utf8),
        DataType::Null => Ok(DataType::Utf8),
        other => plan_err!(
            "time_bucket: the time zone (third argument of {USAGE}) must be text such as 'Europe/Berlin', not {other}"
        ),
    }
}

impl ScalarUDFImpl for TimeBucket {
    fn documentation(&self) -> Option<&datafusion::logical_expr::Documentation> {
        crate::query::functions::reference::doc(self.name())
    }

    fn name(&self) -> &str {
        NAME
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, arg_types: &[DataType]) -> Result<Vec<DataType>> {
        if !(2..=5).contains(&arg_types.len()) {
            return plan_err!("{USAGE} takes 2 to 5 arguments, got {}", arg_types.len());
        }
        let mut out = vec![
            interval_type(&arg_types[0], "the width")?,
            time_type(&arg_types[1], "the second argument")?,
        ];
        match arg_types.len() {
            3 => out.push(match &arg_types[2] {
                DataType::Interval(_) => interval_type(&arg_types[2], "the offset")?,
                // A time zone or an origin: told apart by the value.
                t if is_text(t) => DataType::Utf8,
                t => time_type(t, "the third argument (an origin, offset or time zone)")?,
            }),
            n => {
                if n >= 4 {
                    out.push(zone_type(&arg_types[2])?);
                    out.push(time_type(&arg_types[3], "the origin")?);
                }
                if n == 5 {
                    out.push(interval_type(&arg_types[4], "the offset")?);
                }
            }
        }
        Ok(out)
    }

    fn return_type(&self, arg_types: &[DataType]) -> Result<DataType> {
        Ok(arg_types[1].clone())
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let Some(bucketer) = plan(&args.args)? else {
            // A NULL width: every bucket is NULL.
            return Ok(ColumnarValue::Scalar(ScalarValue::try_from(
                args.return_field.data_type(),
            )?));
        };
        let scalar = matches!(args.args[1], ColumnarValue::Scalar(_));
        let ts = args.args[1].to_array(if scalar { 1 } else { args.number_rows })?;
        let out = match ts.data_type().clone() {
            DataType::Timestamp(TimeUnit::Second, _) => bucket_all::<TimestampSecondType>(&ts, &bucketer)?,
            DataType::Timestamp(TimeUnit::Millisecond, _) => bucket_all::<TimestampMillisecondType>(&ts, &bucketer)?,
            DataType::Timestamp(TimeUnit::Microsecond, _) => bucket_all::<TimestampMicrosecondType>(&ts, &bucketer)?,
            DataType::Timestamp(TimeUnit::Nanosecond, _) => bucket_all::<TimestampNanosecondType>(&ts, &bucketer)?,
            other => return exec_err!("time_bucket: the second argument must be a timestamp, not {other}"),
        };
        Ok(match scalar {
            true => ColumnarValue::Scalar(ScalarValue::try_from_array(&out, 0)?),
            false => ColumnarValue::Array(out),
        })
    }

    fn output_ordering(&self, input: &[ExprProperties]) -> Result<SortProperties> {
        // Only the two-argument form (UTC, default origin) is claimed to keep `ts`'s order: with a
        // zone and an origin or offset off midnight, a bucket boundary inside a repeated
        // fall-back hour is crossed twice, so a later time can get an earlier bucket.
        let constant = input.len() == 2 && input[0].sort_properties == SortProperties::Singleton;
        Ok(match constant {
            true => input[1].sort_properties,
            false => SortProperties::Unordered,
        })
    }
}

/// ns per unit of a timestamp type (also the ASOF join's tolerance and gap filling use it).
pub(crate) fn unit_nanos(u: TimeUnit) -> i128 {
    match u {
        TimeUnit::Second => NANOS_PER_SECOND,
        TimeUnit::Millisecond => 1_000_000,
        TimeUnit::Microsecond => 1_000,
        TimeUnit::Nanosecond => 1,
    }
}

fn bucket_all<T: ArrowTimestampType>(ts: &ArrayRef, b: &Bucketer) -> Result<ArrayRef> {
    let per = unit_nanos(T::UNIT);
    let values: &PrimitiveArray<T> = ts.as_primitive();
    // One fixed grid in the array's unit: integer arithmetic on the values (the calendar's i128
    // nanoseconds cost several times more per row); a value whose arithmetic would overflow takes
    // the calendar's way, which says why it fails.
    let grid = b.fixed_grid().and_then(|(w, start)| {
        let exact = w % per == 0 && start % per == 0;
        let (w, start) = (i64::try_from(w / per).ok()?, i64::try_from(start / per).ok()?);
        (exact && w > 0).then_some((w, start))
    });
    let out: PrimitiveArray<T> = values.try_unary(|v| {
        if let Some((w, start)) = grid {
            if let Some(bucket) = v
                .checked_sub(start)
                .and_then(|d| d.div_euclid(w).checked_mul(w))
                .and_then(|d| d.checked_add(start))
            {
                return Ok(bucket);
            }
        }
        b.bucket(v as i128 * per)
            .and_then(|s| i64::try_from(s.div_euclid(per)).ok())
            .ok_or_else(|| {
                arrow::error::ArrowError::ComputeError(format!(
                    "time_bucket: the bucket of {v} ({:?}) is outside the range of times",
                    T::UNIT
                ))
            })
    })?;
    Ok(Arc::new(out.with_timezone_opt(values.timezone().map(Arc::<str>::from))))
}

/// A constant argument, or an error naming it.
fn constant<'a>(arg: &'a ColumnarValue, what: &str) -> Result<&'a ScalarValue> {
    match arg {
        ColumnarValue::Scalar(s) => Ok(s),
        ColumnarValue::Array(_) => exec_err!("time_bucket: {what} must be a constant, not a column"),
    }
}

fn interval(v: &ScalarValue) -> Option<(i32, i32, i64)> {
    match v {
        ScalarValue::IntervalMonthDayNano(Some(i)) => Some(IntervalMonthDayNanoType::to_parts(*i)),
        _ => None,
    }
}

/// An origin argument as (ns, whether it is an instant rather than a wall-clock time).
fn origin_of(v: &ScalarValue) -> Result<Option<(i128, bool)>> {
    let (value, unit, zoned) = match v {
        ScalarValue::TimestampSecond(v, tz) => (*v, TimeUnit::Second, tz.is_some()),
        ScalarValue::TimestampMillisecond(v, tz) => (*v, TimeUnit::Millisecond, tz.is_some()),
        ScalarValue::TimestampMicrosecond(v, tz) => (*v, TimeUnit::Microsecond, tz.is_some()),
        ScalarValue::TimestampNanosecond(v, tz) => (*v, TimeUnit::Nanosecond, tz.is_some()),
        v if v.is_null() => return Ok(None),
        other => return exec_err!("time_bucket: the origin must be a timestamp, not {}", other.data_type()),
    };
    Ok(value.map(|v| (v as i128 * unit_nanos(unit), zoned)))
}

fn zone_of(text: &str) -> Result<Option<arrow::array::timezone::Tz>> {
    crate::input::time::parse_tz(Some(text))
        .map_err(|e| datafusion::error::DataFusionError::Execution(format!("time_bucket: {e}")))
}

/// The bucketer the constant arguments describe, or `None` for a NULL width.
fn plan(args: &[ColumnarValue]) -> Result<Option<Bucketer>> {
    let Some((m, d, n)) = interval(constant(&args[0], "the width")?) else {
        return Ok(None);
    };
    let width = Width::from_interval(m, d, n)
        .map_err(|e| datafusion::error::DataFusionError::Execution(format!("time_bucket: {e}")))?;
    let (mut zone, mut origin, mut offset) = (None, None, Shift::default());
    match args.len() {
        3 => {
            let v = constant(&args[2], "the third argument")?;
            match v {
                ScalarValue::Utf8(Some(text)) => match crate::input::time::parse_tz(Some(text)) {
                    Ok(z) => zone = z,
                    Err(_) => match crate::input::time::parse_time_str(text, None, None) {
                        Some(us) => origin = Some((us as i128 * 1_000, false)),
                        None => {
                            return exec_err!(
                                "time_bucket: '{text}' is neither a time zone (an IANA name such as \
                                 Europe/Berlin, or an offset such as +05:30) nor an origin time"
                            )
                        }
                    },
                },
                ScalarValue::IntervalMonthDayNano(_) => {
                    if let Some((m, d, n)) = interval(v) {
                        offset = Shift::from_interval(m, d, n);
                    }
                }
                v => origin = origin_of(v)?,
            }
        }
        len if len >= 4 => {
            if let ScalarValue::Utf8(Some(text)) = constant(&args[2], "the time zone")? {
                zone = zone_of(text)?;
            }
            origin = origin_of(constant(&args[3], "the origin")?)?;
            if len == 5 {
                if let Some((m, d, n)) = interval(constant(&args[4], "the offset")?) {
                    offset = Shift::from_interval(m, d, n);
                }
            }
        }
        _ => {}
    }
    if offset.months != 0 && !matches!(width, Width::Months(_)) {
        return exec_err!("time_bucket: an offset in months needs a width in months");
    }
    let origin = match origin {
        None => Origin::Default,
        Some((o, true)) => Origin::Instant(o),
        Some((o, false)) => Origin::Wall(o),
    };
    match Bucketer::new(width, origin, offset, zone) {
        Some(b) => Ok(Some(b)),
        None => exec_err!("time_bucket: the origin is outside the range of times"),
    }
}

/// The bucketer of a `time_bucket` call's constant arguments in positional order (width, `ts`,
/// then any time zone, origin and offset; `ts` is not read), or `None` for a NULL width.
///
/// Errors: as `time_bucket`'s for a bad width, zone or origin.
pub(crate) fn bucketer_of(args: &[ScalarValue]) -> Result<Option<Bucketer>> {
    let args: Vec<ColumnarValue> = args.iter().cloned().map(ColumnarValue::Scalar).collect();
    plan(&args)
}

/// The name of the gap-filling form, as SQL spells it.
pub(crate) const GAPFILL: &str = "time_bucket_gapfill";

const GAPFILL_USAGE: &str = "time_bucket_gapfill(width, ts [, timezone] [, start, finish])";

/// `time_bucket_gapfill(width, ts [, timezone] [, start, finish])`: as a function, the bucket of
/// `ts` (as `time_bucket(width, ts [, timezone])`); in a query's GROUP BY it also marks the
/// bucket whose gaps `query::gapfill` fills between `start` and `finish`.
#[derive(Debug, PartialEq, Eq, Hash)]
pub(crate) struct TimeBucketGapfill {
    signature: Signature,
}

impl TimeBucketGapfill {
    pub(crate) fn udf() -> ScalarUDF {
        ScalarUDF::from(TimeBucketGapfill {
            signature: Signature::user_defined(Volatility::Immutable),
        })
    }
}

/// The bucketer of `time_bucket_gapfill`'s constant width and zone, or `None` for a NULL width.
///
/// Errors: as `time_bucket`'s for a bad width or zone.
pub(crate) fn gapfill_bucketer(width: &ScalarValue, zone: Option<&str>) -> Result<Option<Bucketer>> {
    let args = [
        ColumnarValue::Scalar(width.clone()),
        ColumnarValue::Scalar(ScalarValue::TimestampMicrosecond(None, None)),
        ColumnarValue::Scalar(ScalarValue::Utf8(zone.map(str::to_string))),
        ColumnarValue::Scalar(ScalarValue::TimestampMicrosecond(None, None)),
    ];
    plan(&args)
}

impl ScalarUDFImpl for TimeBucketGapfill {
    fn documentation(&self) -> Option<&datafusion::logical_expr::Documentation> {
        crate::query::functions::reference::doc(self.name())
    }

    fn name(&self) -> &str {
        GAPFILL
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, arg_types: &[DataType]) -> Result<Vec<DataType>> {
        if !(2..=5).contains(&arg_types.len()) {
            return plan_err!("{GAPFILL_USAGE} takes 2 to 5 arguments, got {}", arg_types.len());
        }
        let mut out = vec![
            interval_type(&arg_types[0], "the width")?,
            time_type(&arg_types[1], "the second argument")?,
        ];
        let rest = &arg_types[2..];
        let bounds = match rest.len() {
            1 | 3 => {
                out.push(zone_type(&rest[0])?);
                &rest[1..]
            }
            _ => rest,
        };
        for t in bounds {
            out.push(time_type(t, "start and finish")?);
        }
        Ok(out)
    }

    fn return_type(&self, arg_types: &[DataType]) -> Result<DataType> {
        Ok(arg_types[1].clone())
    }

    fn invoke_with_args(&self, mut args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        // time_bucket(width, ts) or time_bucket(width, ts, zone, NULL origin).
        let zone = match args.args.len() {
            3 | 5 => Some(args.args[2].clone()),
            _ => None,
        };
        args.args.truncate(2);
        if let Some(z) = zone {
            args.args.push(z);
            args.args
                .push(ColumnarValue::Scalar(ScalarValue::TimestampMicrosecond(None, None)));
        }
        TimeBucket {
            signature: self.signature.clone(),
        }
        .invoke_with_args(args)
    }
}
