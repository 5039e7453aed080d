//! `vwap(price, volume)`: the volume-weighted average price of a group, sum(price x volume) /
//! sum(volume), in double precision.
//!
//! Rows where `price` or `volume` is NULL are ignored. A group without such a row, or whose
//! volumes sum to zero, gives NULL. Negative volumes are summed as they are (a correction
//! reduces the weight), as a plain sum would.
//!
//! ```sql
//! SELECT symbol, time_bucket(INTERVAL '1 minute', ts) AS minute, vwap(price, size) FROM trades GROUP BY 1, 2;
//! ```

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray};
use arrow::datatypes::{DataType, Field, FieldRef, Float64Type, UInt64Type};
use datafusion::common::{plan_err, Result, ScalarValue};
use datafusion::logical_expr::function::{AccumulatorArgs, StateFieldsArgs};
use datafusion::logical_expr::utils::format_state_name;
use datafusion::logical_expr::{Accumulator, AggregateUDF, AggregateUDFImpl, Signature, Volatility};

/// `vwap(price, volume)`.
#[derive(Debug, PartialEq, Eq, Hash)]
pub(crate) struct Vwap {
    signature: Signature,
}

impl Vwap {
    pub(crate) fn udaf() -> AggregateUDF {
        AggregateUDF::from(Vwap {
            signature: Signature::user_defined(Volatility::Immutable),
        })
    }
}

impl AggregateUDFImpl for Vwap {
    fn documentation(&self) -> Option<&datafusion::logical_expr::Documentation> {
        crate::query::functions::reference::doc(self.name())
    }

    fn name(&self) -> &str {
        "vwap"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, arg_types: &[DataType]) -> Result<Vec<DataType>> {
        if arg_types.len() != 2 {
            return plan_err!("vwap(price, volume) takes 2 arguments, got {}", arg_types.len());
        }
        for (what, t) in ["price", "volume"].iter().zip(arg_types) {
            if !(t.is_numeric() || t.is_null()) {
                return plan_err!("vwap(price, volume): {what} must be a number, not {t}");
            }
        }
        Ok(vec![DataType::Float64, DataType::Float64])
    }

    fn return_type(&self, _arg_types: &[DataType]) -> Result<DataType> {
        Ok(DataType::Float64)
    }

    fn state_fields(&self, args: StateFieldsArgs) -> Result<Vec<FieldRef>> {
        Ok(vec![
            Arc::new(Field::new(
                format_state_name(args.name, "price_volume"),
                DataType::Float64,
                true,
            )),
            Arc::new(Field::new(
                format_state_name(args.name, "volume"),
                DataType::Float64,
                true,
            )),
            Arc::new(Field::new(format_state_name(args.name, "rows"), DataType::UInt64, true)),
        ])
    }

    fn accumulator(&self, _args: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        Ok(Box::new(VwapAccumulator::default()))
    }
}

/// Sums of price x volume and of volume, and the rows counted.
#[derive(Debug, Default)]
struct VwapAccumulator {
    price_volume: f64,
    volume: f64,
    rows: u64,
}

impl Accumulator for VwapAccumulator {
    fn update_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        // Both are doubles: `coerce_types` asks DataFusion to cast them.
        let (p, v) = (
            values[0].as_primitive::<Float64Type>(),
            values[1].as_primitive::<Float64Type>(),
        );
        for i in 0..p.len() {
            if p.is_valid(i) && v.is_valid(i) {
                self.price_volume += p.value(i) * v.value(i);
                self.volume += v.value(i);
                self.rows += 1;
            }
        }
        Ok(())
    }

    fn merge_batch(&mut self, states: &[ArrayRef]) -> Result<()> {
        let (pv, v) = (
            states[0].as_primitive::<Float64Type>(),
            states[1].as_primitive::<Float64Type>(),
        );
        let n = states[2].as_primitive::<UInt64Type>();
        for i in 0..n.len() {
            if n.is_valid(i) && n.value(i) > 0 {
                self.price_volume += pv.value(i);
                self.volume += v.value(i);
                self.rows += n.value(i);
            }
        }
        Ok(())
    }

    fn state(&mut self) -> Result<Vec<ScalarValue>> {
        Ok(vec![
            ScalarValue::Float64(Some(self.price_volume)),
            ScalarValue::Float64(Some(self.volume)),
            ScalarValue::UInt64(Some(self.rows)),
        ])
    }

    fn evaluate(&mut self) -> Result<ScalarValue> {
        Ok(ScalarValue::Float64(
            (self.rows > 0 && self.volume != 0.0).then(|| self.price_volume / self.volume),
        ))
    }

    fn size(&self) -> usize {
        std::mem::size_of_val(self)
    }
}
