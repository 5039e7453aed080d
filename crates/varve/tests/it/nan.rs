//! NaN, infinities and negative zero under filters (issue 57): a filter answers the same rows
//! whether the scan prunes files, row groups and pages by their statistics or not. Parquet leaves
//! NaN out of min/max, so a filter that NaN satisfies (`v != 1.5`, `v > 1.5`) must not prune on
//! them. Checked against the same statement's `FILTER` clause (which prunes nothing) and against
//! a plain count in Rust with DataFusion's order of floats (NaN above every number and equal to
//! itself; -0 below +0), on random layouts: many files, small row groups and pages.

use std::sync::Arc;

use arrow::array::{Float64Array, RecordBatch, StringArray, TimestampMicrosecondArray};
use varve::{AppendOptions, Lake, TableContract};
use varve_testkit::Backend;

use crate::maintain::schema;

fn batch(start: i64, values: &[f64]) -> RecordBatch {
    RecordBatch::try_new(
        schema(),
        vec![
            Arc::new(
                TimestampMicrosecondArray::from_iter_values((0..values.len() as i64).map(|i| (start + i) * 1_000_000))
                    .with_timezone("UTC"),
            ),
            Arc::new(StringArray::from_iter_values(values.iter().map(|_| "h"))),
            Arc::new(Float64Array::from_iter_values(values.iter().copied())),
        ],
    )
    .unwrap()
}

async fn count(lake: &Lake, sql: &str) -> i64 {
    let r = lake.sql(sql).await.unwrap_or_else(|e| panic!("{sql}: {e}"));
    let col = r.batches[0].column(0);
    arrow::util::display::array_value_to_string(col, 0)
        .unwrap()
        .parse()
        .unwrap()
}

async fn table(lake: &Lake, name: &str, props: &[(&str, &str)]) {
    let contract = TableContract::time_series("ts").with_series_key(["host"]);
    lake.create_table(name, &schema(), &contract).await.unwrap();
    let set = props.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    lake.set_properties(name, &set, &[]).await.unwrap();
}

/// The case: 60,000 rows of 1.5 and one NaN, in one file.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_nan_among_equal_values_is_found() {
    let backend = Backend::local();
    let lake = backend.open();
    table(&lake, "t", &[]).await;
    let mut values = vec![1.5; 60_000];
    values[31_234] = f64::NAN;
    lake.append("t", vec![batch(0, &values)], AppendOptions::default())
        .await
        .unwrap();
    for (filter, n) in [("v != 1.5", 1), ("v > 1.5", 1), ("v >= 1.5", 60_000), ("isnan(v)", 1)] {
        assert_eq!(
            count(&lake, &format!("SELECT count(*) FROM t WHERE {filter}")).await,
            n,
            "{filter}"
        );
        assert_eq!(
            count(&lake, &format!("SELECT count(*) FILTER (WHERE {filter}) FROM t")).await,
            n,
            "{filter}"
        );
    }
    // The file's statistics do not mislead other readers either: the chunk holding the NaN has
    // no min/max, and DuckDB finds the row.
    let files = crate::maintain::data_files(&backend, "t").await;
    let meta = parquet::file::metadata::ParquetMetaDataReader::new()
        .parse_and_finish(&files[0].1)
        .unwrap();
    let v = meta.file_metadata().schema_descr().column(2).name().to_string();
    assert_eq!(v, "v");
    let nan_chunks = meta
        .row_groups()
        .iter()
        .filter(|rg| rg.column(2).statistics().is_some_and(|s| s.min_bytes_opt().is_none()))
        .count();
    assert_eq!(nan_chunks, 1, "the one row group holding the NaN has no bounds");
    let loc = backend.table_location("default", "t");
    let duck = varve_testkit::duckdb(
        &format!("SELECT count(*) AS n FROM iceberg_scan('{loc}') WHERE v != 1.5"),
        Some(&backend),
    );
    assert_eq!(varve_testkit::rows(&duck), vec![vec!["1".to_string()]], "DuckDB");
}

/// A small deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// A value of a random layout's file: runs of one value (so that whole pages and row groups
/// have min = max), specials sprinkled in.
fn value(rng: &mut Rng, run_value: f64) -> f64 {
    match rng.below(40) {
        0 => f64::NAN,
        1 => f64::INFINITY,
        2 => f64::NEG_INFINITY,
        3 => -0.0,
        4 => 0.0,
        _ => run_value,
    }
}

/// DataFusion's comparison of floats: total order (NaN above +inf and equal to itself).
fn cmp(a: f64, b: f64) -> std::cmp::Ordering {
    a.total_cmp(&b)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn random_layouts_with_nan_infinities_and_negative_zero() {
    let backend = Backend::local();
    let lake = backend.open();
    let mut all: Vec<f64> = Vec::new();
    for seed in 1..=3u64 {
        let name = format!("r{seed}");
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ seed);
        // Small row groups and pages, so that statistics prune at every level.
        table(
            &lake,
            &name,
            &[
                ("varve.row-group-rows", "1024"),
                ("varve.page-rows", "128"),
                ("varve.auto-maintain", "false"),
            ],
        )
        .await;
        let mut values: Vec<f64> = Vec::new();
        for file in 0..4 {
            let n = 500 + rng.below(3000) as usize;
            let mut chunk = Vec::with_capacity(n);
            let mut run = 1.5;
            for i in 0..n {
                if i % 300 == 0 {
                    run = [1.5, -2.0, 7.0, 0.0][rng.below(4) as usize];
                }
                // One file in four holds no special value at all.
                chunk.push(if file == 3 { run } else { value(&mut rng, run) });
            }
            let start = values.len() as i64;
            lake.append(&name, vec![batch(start, &chunk)], AppendOptions::default())
                .await
                .unwrap();
            values.extend(chunk);
        }
        all.extend(values.iter().copied());
        let literals = [
            ("1.5", 1.5),
            ("0.0", 0.0),
            ("-2.0", -2.0),
            ("7.0", 7.0),
            ("CAST('-0' AS DOUBLE)", -0.0),
            ("CAST('inf' AS DOUBLE)", f64::INFINITY),
            ("CAST('-inf' AS DOUBLE)", f64::NEG_INFINITY),
            ("CAST('NaN' AS DOUBLE)", f64::NAN),
        ];
        type Op = fn(std::cmp::Ordering) -> bool;
        let ops: [(&str, Op); 6] = [
            ("=", |o| o.is_eq()),
            ("!=", |o| o.is_ne()),
            ("<", |o| o.is_lt()),
            ("<=", |o| o.is_le()),
            (">", |o| o.is_gt()),
            (">=", |o| o.is_ge()),
        ];
        for (text, lit) in literals {
            for (op, holds) in ops {
                let filter = format!("v {op} {text}");
                let expected = values.iter().filter(|v| holds(cmp(**v, lit))).count() as i64;
                let filtered = count(&lake, &format!("SELECT count(*) FILTER (WHERE {filter}) FROM {name}")).await;
                let pruned = count(&lake, &format!("SELECT count(*) FROM {name} WHERE {filter}")).await;
                assert_eq!(filtered, expected, "{name}: FILTER (WHERE {filter})");
                assert_eq!(pruned, expected, "{name}: WHERE {filter}");
                // The same with the literal on the left.
                let flipped = format!("{text} {} v", flip(op));
                let pruned = count(&lake, &format!("SELECT count(*) FROM {name} WHERE {flipped}")).await;
                assert_eq!(pruned, expected, "{name}: WHERE {flipped}");
            }
        }
        for (filter, holds) in [
            (
                "NOT (v < 1.5)",
                Box::new(|v: f64| !cmp(v, 1.5).is_lt()) as Box<dyn Fn(f64) -> bool>,
            ),
            (
                "v NOT IN (1.5, 7.0)",
                Box::new(|v: f64| cmp(v, 1.5).is_ne() && cmp(v, 7.0).is_ne()),
            ),
            (
                "v NOT BETWEEN -2.0 AND 1.5",
                Box::new(|v: f64| cmp(v, -2.0).is_lt() || cmp(v, 1.5).is_gt()),
            ),
            (
                "v BETWEEN -2.0 AND 1.5",
                Box::new(|v: f64| cmp(v, -2.0).is_ge() && cmp(v, 1.5).is_le()),
            ),
            (
                "v IN (1.5, 7.0)",
                Box::new(|v: f64| cmp(v, 1.5).is_eq() || cmp(v, 7.0).is_eq()),
            ),
            (
                "v > 7.0 OR v < -2.0",
                Box::new(|v: f64| cmp(v, 7.0).is_gt() || cmp(v, -2.0).is_lt()),
            ),
        ] {
            let expected = values.iter().filter(|v| holds(**v)).count() as i64;
            let pruned = count(&lake, &format!("SELECT count(*) FROM {name} WHERE {filter}")).await;
            assert_eq!(pruned, expected, "{name}: WHERE {filter}");
        }
        // A top-k by the float column: NaN sorts first descending.
        let nans = values.iter().filter(|v| v.is_nan()).count() as i64;
        if nans > 0 {
            let top = count(
                &lake,
                &format!("SELECT count(*) FROM (SELECT v FROM {name} ORDER BY v DESC LIMIT {nans}) WHERE isnan(v)"),
            )
            .await;
            assert_eq!(top, nans, "{name}: the NaN rows lead ORDER BY v DESC");
        }
    }
    assert!(all.iter().any(|v| v.is_nan()) && all.contains(&f64::INFINITY));
}

fn flip(op: &str) -> &str {
    match op {
        "<" => ">",
        "<=" => ">=",
        ">" => "<",
        ">=" => "<=",
        other => other,
    }
}
