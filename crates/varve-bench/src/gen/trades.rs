//! A trades tape: `ts` (µs), `symbol`, `price`, `size`, `exchange`, `side`, the shape quant users
//! load. Each symbol trades as a Poisson process (`--rate` trades per second on average) with a
//! log-normal price walk rounded to cents; timestamps are unique within a symbol.

use std::path::Path;
use std::sync::Arc;

use arrow::array::{ArrayRef, Float64Builder, Int64Builder, RecordBatch, StringBuilder, TimestampMicrosecondBuilder};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef, TimeUnit};
use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::{chunk_rows, normal, pick, stream, GenSpec, GeneratedTable, TableSink};

const EXCHANGES: &[&str] = &["XNAS", "XNYS", "ARCX", "BATS", "IEXG"];
/// Distinct four-letter symbols available.
pub const MAX_SYMBOLS: usize = 26 * 26 * 26 * 26;

/// Symbol `i`: four capital letters, a bijection of `i` (so distinct for distinct `i`).
pub fn symbol(i: u32) -> String {
    // 7919 is coprime with 26^4, so this permutes 0..26^4.
    let mut n = (i as u64 * 7919 + 4321) % MAX_SYMBOLS as u64;
    let mut s = [b'A'; 4];
    for c in s.iter_mut().rev() {
        *c = b'A' + (n % 26) as u8;
        n /= 26;
    }
    String::from_utf8(s.to_vec()).expect("ascii")
}

/// Schema of `trades`.
pub fn trades_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new(
            "ts",
            DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            false,
        ),
        Field::new("symbol", DataType::Utf8, false),
        Field::new("price", DataType::Float64, false),
        Field::new("size", DataType::Int64, false),
        Field::new("exchange", DataType::Utf8, false),
        Field::new("side", DataType::Utf8, false),
    ]))
}

struct Symbol {
    name: String,
    price: f64,
    last_ts: i64,
    rng: ChaCha8Rng,
}

/// A Poisson variate with mean `lambda` (Knuth below 30, a rounded normal above).
fn poisson(rng: &mut ChaCha8Rng, lambda: f64) -> u64 {
    if lambda < 30.0 {
        let l = (-lambda).exp();
        let (mut k, mut p) = (0u64, 1.0f64);
        loop {
            p *= rng.random::<f64>();
            if p <= l {
                return k;
            }
            k += 1;
        }
    }
    (lambda + lambda.sqrt() * normal(rng)).round().max(0.0) as u64
}

struct Trade {
    ts: i64,
    symbol: u32,
    price: f64,
    size: i64,
    exchange: &'static str,
    side: &'static str,
}

fn batch(schema: &SchemaRef, rows: &[Trade], symbols: &[Symbol]) -> Result<RecordBatch, String> {
    let mut ts = TimestampMicrosecondBuilder::with_capacity(rows.len()).with_timezone("UTC");
    let mut sym = StringBuilder::new();
    let mut price = Float64Builder::with_capacity(rows.len());
    let mut size = Int64Builder::with_capacity(rows.len());
    let mut exchange = StringBuilder::new();
    let mut side = StringBuilder::new();
    for r in rows {
        ts.append_value(r.ts);
        sym.append_value(&symbols[r.symbol as usize].name);
        price.append_value(r.price);
        size.append_value(r.size);
        exchange.append_value(r.exchange);
        side.append_value(r.side);
    }
    let cols: Vec<ArrayRef> = vec![
        Arc::new(ts.finish()),
        Arc::new(sym.finish()),
        Arc::new(price.finish()),
        Arc::new(size.finish()),
        Arc::new(exchange.finish()),
        Arc::new(side.finish()),
    ];
    RecordBatch::try_new(schema.clone(), cols).map_err(|e| e.to_string())
}

/// Generates `trades` into `dir`, one second of the tape at a time, sorted by time.
pub(super) fn generate(spec: &GenSpec, dir: &Path, progress: &dyn Fn(f64)) -> Result<Vec<GeneratedTable>, String> {
    let chunk = chunk_rows(spec);
    let mut symbols: Vec<Symbol> = (0..spec.scale)
        .map(|i| {
            let mut rng = stream(spec.seed, "trades.symbol", i as u64);
            Symbol {
                name: symbol(i),
                price: (rng.random_range(10.0f64..500.0)).round(),
                last_ts: i64::MIN,
                rng,
            }
        })
        .collect();
    let mut sink = TableSink::new(dir, "trades", trades_schema(), spec.format, spec.file_rows)?;
    let schema = sink.schema();
    let seconds = spec.duration_us / 1_000_000;
    let mut rows: Vec<Trade> = Vec::with_capacity(chunk);
    let mut second_rows: Vec<Trade> = vec![];
    for s in 0..seconds {
        let base = spec.start_us + s * 1_000_000;
        for (i, sym) in symbols.iter_mut().enumerate() {
            let n = poisson(&mut sym.rng, spec.rate);
            let mut offsets: Vec<i64> = (0..n).map(|_| sym.rng.random_range(0..1_000_000)).collect();
            offsets.sort_unstable();
            for off in offsets {
                let ts = (base + off).max(sym.last_ts + 1);
                if ts >= base + 1_000_000 {
                    break;
                }
                sym.last_ts = ts;
                sym.price = (sym.price * (0.0005 * normal(&mut sym.rng)).exp()).max(0.01);
                let size = if sym.rng.random::<f64>() < 0.8 {
                    sym.rng.random_range(1..=100)
                } else {
                    100 * sym.rng.random_range(1..=50)
                };
                second_rows.push(Trade {
                    ts,
                    symbol: i as u32,
                    price: (sym.price * 100.0).round() / 100.0,
                    size,
                    exchange: pick(&mut sym.rng, EXCHANGES),
                    side: if sym.rng.random::<bool>() { "buy" } else { "sell" },
                });
            }
        }
        second_rows.sort_by_key(|t| (t.ts, t.symbol));
        rows.append(&mut second_rows);
        if rows.len() >= chunk {
            sink.write(&batch(&schema, &rows, &symbols)?)?;
            rows.clear();
        }
        if s % 600 == 0 {
            progress(s as f64 / seconds as f64);
        }
    }
    sink.write(&batch(&schema, &rows, &symbols)?)?;
    progress(1.0);
    Ok(vec![sink.finish()?])
}
