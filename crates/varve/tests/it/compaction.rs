//! Compaction column by column (`write::merge_columns`) on a table with columns of every common
//! type, NULLs, NaN and a column added after some files were written: many appends of random
//! rows, merged with a tiny merge buffer (many windows, each input giving a few rows to each),
//! small row groups and small files (cuts), give the same rows as before compaction, files in
//! (series key, time) order with row groups of the table's size, and DuckDB and PyIceberg agree.

use std::collections::HashMap;
use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, BooleanArray, Float64Array, Int64Array, RecordBatch, StringArray, TimestampMicrosecondArray,
};
use arrow::datatypes::{DataType, Field, Schema, TimeUnit};
use varve::{AppendOptions, Lake, MaintainOptions, TableContract};
use varve_testkit::{assert_readers_agree, Backend, Rng};

const HOUR_US: i64 = 3_600_000_000;
const DAY_US: i64 = 24 * HOUR_US;

fn schema(with_note: bool) -> Arc<Schema> {
    let mut fields = vec![
        Field::new(
            "ts",
            DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            false,
        ),
        Field::new("host", DataType::Utf8, true),
        Field::new("region", DataType::Utf8, true),
        Field::new("n", DataType::Int64, true),
        Field::new("x", DataType::Float64, true),
        Field::new("ok", DataType::Boolean, true),
    ];
    if with_note {
        fields.push(Field::new("note", DataType::Utf8, true));
    }
    Arc::new(Schema::new(fields))
}

/// `rows` random rows for append `a`: 12 hosts (one of them NULL), mostly the append's hour with
/// late rows into earlier hours, times that repeat, NULLs in every value column, NaN in `x`.
fn random_batch(rng: &mut Rng, a: i64, rows: usize, with_note: bool) -> RecordBatch {
    let mut ts = Vec::new();
    let (mut host, mut region, mut n, mut x, mut ok, mut note) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for _ in 0..rows {
        let hour = match rng.next(8) {
            0 => rng.next(a as u64 + 1) as i64,
            _ => a,
        } % 48;
        ts.push(20_000 * DAY_US + hour * HOUR_US + rng.next(600) as i64 * 6_000_000);
        let h = rng.next(12);
        host.push((h != 11).then(|| format!("host-{h:02}")));
        region.push((rng.next(5) != 0).then(|| ["eu-west", "us-east", "ap-south"][rng.next(3) as usize].to_string()));
        n.push((rng.next(6) != 0).then(|| rng.next(1_000_000) as i64 - 500_000));
        x.push(match rng.next(20) {
            0 => None,
            1 => Some(f64::NAN),
            _ => Some(rng.next(1 << 20) as f64 / 64.0),
        });
        ok.push((rng.next(4) != 0).then(|| rng.next(2) == 1));
        note.push((rng.next(3) != 0).then(|| format!("note {}", rng.next(1000))));
    }
    let mut columns: Vec<ArrayRef> = vec![
        Arc::new(TimestampMicrosecondArray::from(ts).with_timezone("UTC")),
        Arc::new(StringArray::from(host)),
        Arc::new(StringArray::from(region)),
        Arc::new(Int64Array::from(n)),
        Arc::new(Float64Array::from(x)),
        Arc::new(BooleanArray::from(ok)),
    ];
    if with_note {
        columns.push(Arc::new(StringArray::from(note)));
    }
    RecordBatch::try_new(schema(with_note), columns).unwrap()
}

/// Queries whose answers must not change: every row in a total order, then filters that prune by
/// the files' bounds.
const QUERIES: &[&str] = &[
    "SELECT * FROM w ORDER BY host, ts, region, n, x, ok, note",
    "SELECT count(*), sum(n), count(x), count(note) FROM w WHERE host = 'host-03'",
    "SELECT count(*), min(ts), max(ts) FROM w WHERE n > 400000",
    "SELECT count(*), sum(n) FROM w WHERE ts >= '2024-10-04T05:00:00Z' AND ts < '2024-10-04T06:00:00Z'",
    "SELECT count(*), count(region) FROM w WHERE host IS NULL",
    "SELECT host, count(*), sum(CASE WHEN ok THEN 1 ELSE 0 END) FROM w GROUP BY host ORDER BY host",
];

/// The answers to [`QUERIES`], each row as text.
async fn answers(lake: &Lake) -> Vec<Vec<String>> {
    let mut all = Vec::new();
    for q in QUERIES {
        all.push(rows_of(lake, q).await);
    }
    all
}

/// The rows of `sql`'s answer, each as its values' text joined by `|`.
pub(crate) async fn rows_of(lake: &Lake, sql: &str) -> Vec<String> {
    let r = lake.sql(sql).await.unwrap_or_else(|e| panic!("{sql}: {e}"));
    text_rows(&r.batches)
}

/// Each row of `batches` as its values' text joined by `|`.
pub(crate) fn text_rows(batches: &[RecordBatch]) -> Vec<String> {
    let mut out = Vec::new();
    for b in batches {
        for i in 0..b.num_rows() {
            let row: Vec<String> = b
                .columns()
                .iter()
                .map(|c| arrow::util::display::array_value_to_string(c, i).unwrap())
                .collect();
            out.push(row.join("|"));
        }
    }
    out
}

async fn compaction_by_columns(backend: Backend) {
    let lake = backend.open();
    let contract = TableContract::time_series("ts").with_series_key(["host"]);
    lake.create_table("w", &schema(false), &contract).await.unwrap();
    let props: HashMap<String, String> = [
        ("varve.auto-maintain", "false"),
        ("varve.row-group-rows", "300"),
        ("varve.merge-buffer-size", "96KiB"),
        ("varve.target-file-size", "1MiB"),
        ("varve.snapshot-retention", "0s"),
        ("varve.min-snapshots", "1"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    lake.set_properties("w", &props, &[]).await.unwrap();

    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for a in 0..30i64 {
        if a == 12 {
            lake.sql("ALTER TABLE w ADD COLUMN note VARCHAR").await.unwrap();
        }
        let rows = 2_000 + rng.next(4_000) as usize;
        let b = random_batch(&mut rng, a, rows, a >= 12);
        lake.append("w", vec![b], AppendOptions::default()).await.unwrap();
    }
    let before = answers(&lake).await;
    assert!(before[0].len() > 5_000, "{} rows", before[0].len());
    let r = lake.maintain("w", &MaintainOptions::default()).await.unwrap();
    assert!(r.partitions_compacted >= 2, "{r:?}");
    assert!(r.files_after > r.partitions_compacted, "files are cut: {r:?}");
    let after = answers(&lake).await;
    for (q, (b, a)) in QUERIES.iter().zip(before.iter().zip(&after)) {
        assert!(a == b, "{q}: the answer changed with compaction");
    }
    // Each file is in (host, ts) order (NULL host first) with row groups of at most 300 rows.
    let files = crate::maintain::data_files(&backend, "w").await;
    assert_eq!(files.len() as u64, r.files_after);
    for (name, bytes) in files {
        let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(bytes).unwrap();
        assert!(
            reader.metadata().row_groups().iter().all(|g| g.num_rows() <= 300),
            "{name}"
        );
        let mut last: Option<(Option<String>, i64)> = None;
        for b in reader.build().unwrap() {
            let b = b.unwrap();
            let host = b
                .column_by_name("host")
                .unwrap()
                .as_any()
                .downcast_ref::<StringArray>()
                .unwrap();
            let ts = b
                .column_by_name("ts")
                .unwrap()
                .as_any()
                .downcast_ref::<TimestampMicrosecondArray>()
                .unwrap();
            for i in 0..b.num_rows() {
                let key = ((!host.is_null(i)).then(|| host.value(i).to_string()), ts.value(i));
                assert!(
                    last.as_ref().is_none_or(|l| *l <= key),
                    "{name}: {key:?} after {last:?}"
                );
                last = Some(key);
            }
        }
    }
    assert_readers_agree(&lake, &backend, "default", "w").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compaction_by_columns_on_local_disk() {
    compaction_by_columns(Backend::local()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compaction_by_columns_on_s3() {
    compaction_by_columns(Backend::s3()).await;
}
