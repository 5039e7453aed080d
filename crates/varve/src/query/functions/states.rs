//! The aggregates that build and merge the states of a rollup's time-weighted averages and
//! percentile sketches, which no plain SQL aggregate merges:
//!
//! - `__varve_tdigest(value)`: a t-digest of the values (Dunning and Ertl, "Computing extremely
//!   accurate quantiles using t-digests", 2019; DataFusion's implementation, the one
//!   `approx_percentile_cont` uses, with 100 centroids), as bytes: little-endian doubles `[max_size,
//!   sum, count, max, min, mean1, weight1, mean2, weight2, ...]` (a binary column, which every
//!   Iceberg reader stores). NULL for no values.
//! - `__varve_tdigest_quantile(sketch, q)`: the `q` quantile of the merge of the sketches.
//! - `__varve_twa_merge(twa, count, first_time, first, last_time, last, method)`: the
//!   time-weighted average of the samples of several buckets, from each bucket's average, sample
//!   count, and first and last sample: the area inside each bucket is its average times its
//!   span, the area between two buckets the last value held (`step`) or the trapezoid to the
//!   next bucket's first value (`linear`), as `twa` itself computes it. The buckets must not
//!   overlap in time (a rollup's rows of one group do not); one sample, or samples all of one
//!   time, give their average.
//!
//! They are Varve's own (the `__varve_` prefix): a rollup's refresh and routing write them.

use std::sync::Arc;

use crate::query::functions::one_list;
use arrow::array::{Array, ArrayRef, AsArray, Float64Array, Int64Array};
use arrow::datatypes::{DataType, Field, FieldRef, Float64Type, Int64Type, TimeUnit, TimestampMicrosecondType};
use datafusion::common::{exec_err, plan_err, Result, ScalarValue};
use datafusion::logical_expr::function::{AccumulatorArgs, StateFieldsArgs};
use datafusion::logical_expr::utils::format_state_name;
use datafusion::logical_expr::{Accumulator, AggregateUDF, AggregateUDFImpl, Signature, Volatility};
use datafusion::physical_expr::expressions::Literal;
use datafusion_functions_aggregate_common::tdigest::TDigest;

/// Name of the sketch-building aggregate.
pub(crate) const TDIGEST: &str = "__varve_tdigest";
/// Name of the sketch-merging quantile aggregate.
pub(crate) const TDIGEST_QUANTILE: &str = "__varve_tdigest_quantile";
/// Name of the time-weighted average merge.
pub(crate) const TWA_MERGE: &str = "__varve_twa_merge";

/// Centroids of a sketch: `approx_percentile_cont`'s default.
const CENTROIDS: usize = 100;

/// Values buffered before they are merged into a sketch.
const BUFFER: usize = 4096;

/// The three aggregates.
pub(crate) fn all() -> Vec<AggregateUDF> {
    vec![
        AggregateUDF::from(Sketch::new(TDIGEST)),
        AggregateUDF::from(Sketch::new(TDIGEST_QUANTILE)),
        AggregateUDF::from(TwaMerge {
            signature: Signature::user_defined(Volatility::Immutable),
        }),
    ]
}

/// The sketch as bytes (module docs).
fn to_bytes(v: &[f64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// The doubles of a sketch's bytes.
///
/// Errors: a length that is not a multiple of 8.
fn from_bytes(b: &[u8]) -> Result<Vec<f64>> {
    if !b.len().is_multiple_of(8) {
        return exec_err!("a rollup's percentile sketch is malformed ({} bytes)", b.len());
    }
    Ok(b.chunks_exact(8)
        .map(|c| f64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
        .collect())
}

/// A sketch as a flat list (module docs).
fn flatten(d: &TDigest) -> Option<Vec<f64>> {
    if d.count() == 0.0 {
        return None;
    }
    let state = d.to_scalar_state();
    let mut out = Vec::new();
    for s in &state[..5] {
        out.push(match s {
            ScalarValue::UInt64(Some(v)) => *v as f64,
            ScalarValue::Float64(Some(v)) => *v,
            _ => 0.0,
        });
    }
    if let ScalarValue::List(l) = &state[5] {
        out.extend(l.values().as_primitive::<Float64Type>().values().iter().copied());
    }
    Some(out)
}

/// A sketch from a flat list.
///
/// Errors: a list that is not one (fewer than 5 numbers, or an odd number of centroid values).
fn unflatten(v: &[f64]) -> Result<TDigest> {
    if v.len() < 5 || !(v.len() - 5).is_multiple_of(2) || v[0] < 1.0 {
        return exec_err!("a rollup's percentile sketch is malformed ({} numbers)", v.len());
    }
    let centroids: Vec<ScalarValue> = v[5..].iter().map(|x| ScalarValue::Float64(Some(*x))).collect();
    let state = [
        ScalarValue::UInt64(Some(v[0] as u64)),
        ScalarValue::Float64(Some(v[1])),
        ScalarValue::Float64(Some(v[2])),
        ScalarValue::Float64(Some(v[3])),
        ScalarValue::Float64(Some(v[4])),
        ScalarValue::List(ScalarValue::new_list_nullable(&centroids, &DataType::Float64)),
    ];
    Ok(TDigest::from_scalar_state(&state))
}

/// `__varve_tdigest` and `__varve_tdigest_quantile` (module docs).
#[derive(Debug, PartialEq, Eq, Hash)]
struct Sketch {
    name: &'static str,
    signature: Signature,
}

impl Sketch {
    fn new(name: &'static str) -> Sketch {
        Sketch {
            name,
            signature: Signature::user_defined(Volatility::Immutable),
        }
    }

    fn merging(&self) -> bool {
        self.name == TDIGEST_QUANTILE
    }
}

impl AggregateUDFImpl for Sketch {
    fn name(&self) -> &str {
        self.name
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, arg_types: &[DataType]) -> Result<Vec<DataType>> {
        match (self.merging(), arg_types) {
            (false, [v]) if v.is_numeric() || v.is_null() => Ok(vec![DataType::Float64]),
            (true, [DataType::Binary | DataType::LargeBinary | DataType::BinaryView | DataType::Null, q])
                if q.is_numeric() =>
            {
                Ok(vec![DataType::Binary, DataType::Float64])
            }
            _ => plan_err!("{}: unexpected arguments {arg_types:?}", self.name),
        }
    }

    fn return_type(&self, _arg_types: &[DataType]) -> Result<DataType> {
        Ok(match self.merging() {
            true => DataType::Float64,
            false => DataType::Binary,
        })
    }

    fn state_fields(&self, args: StateFieldsArgs) -> Result<Vec<FieldRef>> {
        Ok(vec![Arc::new(Field::new(
            format_state_name(args.name, "sketch"),
            DataType::Binary,
            true,
        ))])
    }

    fn accumulator(&self, args: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        let quantile = match self.merging() {
            false => None,
            true => match args
                .exprs
                .get(1)
                .and_then(|e| e.downcast_ref::<Literal>())
                .map(|l| l.value())
            {
                Some(ScalarValue::Float64(Some(q))) if (0.0..=1.0).contains(q) => Some(*q),
                _ => return plan_err!("{}: the quantile must be a constant between 0 and 1", self.name),
            },
        };
        Ok(Box::new(SketchAccumulator {
            digest: TDigest::new(CENTROIDS),
            buffer: Vec::new(),
            quantile,
        }))
    }
}

#[derive(Debug)]
struct SketchAccumulator {
    digest: TDigest,
    buffer: Vec<f64>,
    /// Set for `__varve_tdigest_quantile`.
    quantile: Option<f64>,
}

impl SketchAccumulator {
    fn flush(&mut self) {
        if !self.buffer.is_empty() {
            self.digest = self.digest.merge_unsorted_f64(std::mem::take(&mut self.buffer));
        }
    }

    fn merge_sketches(&mut self, sketches: &arrow::array::BinaryArray) -> Result<()> {
        let mut digests = vec![self.digest.clone()];
        for b in sketches.iter().flatten() {
            digests.push(unflatten(&from_bytes(b)?)?);
        }
        self.digest = TDigest::merge_digests(&digests);
        Ok(())
    }
}

impl Accumulator for SketchAccumulator {
    fn update_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        if self.quantile.is_some() {
            return self.merge_sketches(values[0].as_binary::<i32>());
        }
        let v = values[0].as_primitive::<Float64Type>();
        self.buffer.extend(v.iter().flatten());
        if self.buffer.len() >= BUFFER {
            self.flush();
        }
        Ok(())
    }

    fn merge_batch(&mut self, states: &[ArrayRef]) -> Result<()> {
        self.flush();
        self.merge_sketches(states[0].as_binary::<i32>())
    }

    fn state(&mut self) -> Result<Vec<ScalarValue>> {
        self.flush();
        Ok(vec![ScalarValue::Binary(flatten(&self.digest).map(|v| to_bytes(&v)))])
    }

    fn evaluate(&mut self) -> Result<ScalarValue> {
        self.flush();
        match self.quantile {
            Some(q) => Ok(ScalarValue::Float64(
                (self.digest.count() > 0.0).then(|| self.digest.estimate_quantile(q)),
            )),
            None => Ok(self.state()?.remove(0)),
        }
    }

    fn size(&self) -> usize {
        std::mem::size_of_val(self) + self.buffer.capacity() * 8 + self.digest.size() * 16
    }
}

/// `__varve_twa_merge` (module docs).
#[derive(Debug, PartialEq, Eq, Hash)]
struct TwaMerge {
    signature: Signature,
}

impl AggregateUDFImpl for TwaMerge {
    fn name(&self) -> &str {
        TWA_MERGE
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, arg_types: &[DataType]) -> Result<Vec<DataType>> {
        if arg_types.len() != 7 {
            return plan_err!("{TWA_MERGE} takes 7 arguments, got {}", arg_types.len());
        }
        let t = DataType::Timestamp(TimeUnit::Microsecond, None);
        Ok(vec![
            DataType::Float64,
            DataType::Int64,
            t.clone(),
            DataType::Float64,
            t,
            DataType::Float64,
            DataType::Utf8,
        ])
    }

    fn return_type(&self, _arg_types: &[DataType]) -> Result<DataType> {
        Ok(DataType::Float64)
    }

    fn state_fields(&self, args: StateFieldsArgs) -> Result<Vec<FieldRef>> {
        Ok(crate::query::functions::samples_state_fields(args.name))
    }

    fn accumulator(&self, args: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        let linear = match args
            .exprs
            .get(6)
            .and_then(|e| e.downcast_ref::<Literal>())
            .map(|l| l.value())
        {
            Some(ScalarValue::Utf8(Some(m))) if m == "linear" => true,
            Some(ScalarValue::Utf8(Some(m))) if m == "step" => false,
            _ => return plan_err!("{TWA_MERGE}: the method must be 'step' or 'linear'"),
        };
        Ok(Box::new(TwaAccumulator {
            linear,
            buckets: Vec::new(),
        }))
    }
}

/// One bucket's summary: (first time, last time) µs and (twa, count, first, last).
type Bucket = ([i64; 2], [f64; 4]);

#[derive(Debug)]
struct TwaAccumulator {
    linear: bool,
    buckets: Vec<Bucket>,
}

impl Accumulator for TwaAccumulator {
    fn update_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        let f = |i: usize| values[i].as_primitive::<Float64Type>();
        let t = |i: usize| values[i].as_primitive::<TimestampMicrosecondType>();
        let (w, n, ft, fv, lt, lv) = (f(0), values[1].as_primitive::<Int64Type>(), t(2), f(3), t(4), f(5));
        for i in 0..w.len() {
            let valid = [
                w.is_valid(i),
                n.is_valid(i),
                ft.is_valid(i),
                fv.is_valid(i),
                lt.is_valid(i),
                lv.is_valid(i),
            ];
            if valid.iter().all(|v| *v) && n.value(i) > 0 {
                self.buckets.push((
                    [ft.value(i), lt.value(i)],
                    [w.value(i), n.value(i) as f64, fv.value(i), lv.value(i)],
                ));
            }
        }
        Ok(())
    }

    fn merge_batch(&mut self, states: &[ArrayRef]) -> Result<()> {
        crate::query::functions::for_each_samples_state(states, |t, v| {
            if t.len() * 2 != v.len() {
                return exec_err!("{TWA_MERGE}: a partial state's times and values differ in length");
            }
            for (ts, vs) in t.chunks(2).zip(v.chunks(4)) {
                self.buckets.push(([ts[0], ts[1]], [vs[0], vs[1], vs[2], vs[3]]));
            }
            Ok(())
        })
    }

    fn state(&mut self) -> Result<Vec<ScalarValue>> {
        let times: Vec<i64> = self.buckets.iter().flat_map(|b| b.0).collect();
        let values: Vec<f64> = self.buckets.iter().flat_map(|b| b.1).collect();
        Ok(vec![
            one_list(Arc::new(Int64Array::from(times))),
            one_list(Arc::new(Float64Array::from(values))),
        ])
    }

    fn evaluate(&mut self) -> Result<ScalarValue> {
        if self.buckets.is_empty() {
            return Ok(ScalarValue::Float64(None));
        }
        self.buckets
            .sort_by(|a, b| a.0[0].cmp(&b.0[0]).then(a.1[2].total_cmp(&b.1[2])));
        let first = self.buckets[0].0[0];
        let last = self.buckets.iter().map(|b| b.0[1]).max().unwrap_or(first);
        let span = (last - first) as f64;
        if span == 0.0 {
            let (sum, n) = self
                .buckets
                .iter()
                .fold((0.0, 0.0), |(s, n), b| (s + b.1[0] * b.1[1], n + b.1[1]));
            return Ok(ScalarValue::Float64(Some(sum / n)));
        }
        let mut area = 0.0;
        for (i, b) in self.buckets.iter().enumerate() {
            area += b.1[0] * (b.0[1] - b.0[0]) as f64;
            if let Some(next) = self.buckets.get(i + 1) {
                let dt = (next.0[0] - b.0[1]) as f64;
                area += match self.linear {
                    true => (b.1[3] + next.1[2]) / 2.0 * dt,
                    false => b.1[3] * dt,
                };
            }
        }
        Ok(ScalarValue::Float64(Some(area / span)))
    }

    fn size(&self) -> usize {
        std::mem::size_of_val(self) + self.buckets.capacity() * std::mem::size_of::<Bucket>()
    }
}
