//! Last-write-wins dedup against a reference model: random overlapping appends (late rows into
//! older partitions, duplicates within a batch), then exactly one row per (series key, time) with
//! the newest value, as Varve, DuckDB and PyIceberg read it, before and after compaction; and
//! concurrent writers of the same keys.

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

use arrow::array::{Array, Float64Array, RecordBatch, StringArray, TimestampMicrosecondArray};
use arrow::datatypes::{DataType, Field, Schema, TimeUnit};
use varve::{AppendOptions, Dedup, Lake, MaintainOptions, TableContract};
use varve_testkit::{assert_readers_agree, Backend, Rng};

const DAY_US: i64 = 86_400_000_000;
const HOSTS: [&str; 4] = ["a", "b", "c", "d"];

fn schema() -> Arc<Schema> {
    Arc::new(Schema::new(vec![
        Field::new(
            "ts",
            DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            false,
        ),
        Field::new("host", DataType::Utf8, true),
        Field::new("v", DataType::Float64, true),
    ]))
}

fn batch(rows: &[(i64, String, f64)]) -> RecordBatch {
    RecordBatch::try_new(
        schema(),
        vec![
            Arc::new(TimestampMicrosecondArray::from_iter_values(rows.iter().map(|r| r.0)).with_timezone("UTC")),
            Arc::new(StringArray::from_iter_values(rows.iter().map(|r| r.1.as_str()))),
            Arc::new(Float64Array::from_iter_values(rows.iter().map(|r| r.2))),
        ],
    )
    .unwrap()
}

async fn create(lake: &Lake, name: &str, auto_maintain: bool) {
    lake.create_table(
        name,
        &schema(),
        &TableContract::time_series("ts")
            .with_series_key(["host"])
            .with_dedup(Dedup::LastWriteWins),
    )
    .await
    .unwrap();
    let props = [("varve.auto-maintain".to_string(), auto_maintain.to_string())].into();
    lake.set_properties(name, &props, &[]).await.unwrap();
}

/// The table's rows as `(host, ts) -> v`, failing on a repeated key.
async fn stored(lake: &Lake, table: &str) -> BTreeMap<(String, i64), f64> {
    let r = lake.sql(&format!("SELECT ts, host, v FROM {table}")).await.unwrap();
    let mut out = BTreeMap::new();
    for b in &r.batches {
        let ts = b
            .column(0)
            .as_any()
            .downcast_ref::<TimestampMicrosecondArray>()
            .unwrap();
        let host = b.column(1).as_any().downcast_ref::<StringArray>().unwrap();
        let v = b.column(2).as_any().downcast_ref::<Float64Array>().unwrap();
        for i in 0..b.num_rows() {
            let key = (host.value(i).to_string(), ts.value(i));
            assert!(!v.is_null(i));
            assert!(
                out.insert(key.clone(), v.value(i)).is_none(),
                "{table}: key {key:?} twice"
            );
        }
    }
    out
}

async fn against_model(backend: Backend) {
    let lake = backend.open();
    create(&lake, "w", false).await;
    let mut model: BTreeMap<(String, i64), f64> = BTreeMap::new();
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut replaced_total = 0u64;
    for append in 0..14u64 {
        // 3 days x 30 minutes x 4 hosts of keys; later appends reach back into older days.
        let n = 10 + rng.next(50) as usize;
        let rows: Vec<(i64, String, f64)> = (0..n)
            .map(|i| {
                let day = 19_000 + rng.next(3) as i64;
                let minute = rng.next(30) as i64;
                let host = HOSTS[rng.next(4) as usize].to_string();
                (
                    day * DAY_US + minute * 60_000_000,
                    host,
                    (append * 1000 + i as u64) as f64,
                )
            })
            .collect();
        let before = model.len();
        let mut in_batch = HashSet::new();
        let mut dup_in_batch = 0;
        let mut hits = 0;
        for r in &rows {
            let key = (r.1.clone(), r.0);
            if !in_batch.insert(key.clone()) {
                dup_in_batch += 1;
            } else if model.contains_key(&key) {
                hits += 1;
            }
            model.insert(key, r.2);
        }
        let report = lake
            .append("w", vec![batch(&rows)], AppendOptions::default())
            .await
            .unwrap();
        assert_eq!(
            report.duplicate_rows_dropped, dup_in_batch,
            "append {append}: {report:?}"
        );
        assert_eq!(report.rows_replaced, hits, "append {append}: {report:?}");
        assert_eq!(report.rows as usize, n - dup_in_batch as usize, "append {append}");
        assert_eq!(model.len(), before + n - dup_in_batch as usize - hits as usize);
        replaced_total += report.rows_replaced;
        assert_eq!(stored(&lake, "w").await, model, "after append {append}");
    }
    assert!(replaced_total > 0, "the random appends replace stored rows");
    let ops: HashSet<String> = lake
        .history("w")
        .await
        .unwrap()
        .into_iter()
        .map(|s| s.operation)
        .collect();
    assert!(ops.contains("overwrite"), "{ops:?}");
    // Every reader sees one row per key before any compaction.
    assert_readers_agree(&lake, &backend, "default", "w").await;
    lake.maintain("w", &MaintainOptions::default()).await.unwrap();
    assert_eq!(stored(&lake, "w").await, model, "after compaction");
    assert_readers_agree(&lake, &backend, "default", "w").await;
    // And appends after compaction replace rows in the compacted files.
    let late = vec![(19_000 * DAY_US, "a".to_string(), -1.0)];
    model.insert(("a".to_string(), 19_000 * DAY_US), -1.0);
    lake.append("w", vec![batch(&late)], AppendOptions::default())
        .await
        .unwrap();
    assert_eq!(stored(&lake, "w").await, model, "after a late row");
    assert_readers_agree(&lake, &backend, "default", "w").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn last_write_wins_on_local_disk() {
    against_model(Backend::local()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn last_write_wins_on_s3() {
    against_model(Backend::s3()).await;
}

/// Writers of the same keys at once, with inline compaction on: one row per key, and its value is
/// the one of the writer whose commit came last for that key.
async fn concurrent(backend: Backend) {
    let lake = backend.open();
    create(&lake, "c", true).await;
    let mut handles = vec![];
    for w in 0..4i64 {
        let lake = lake.clone();
        handles.push(tokio::spawn(async move {
            for s in 0..8i64 {
                // Every writer writes the same 20 keys of one day, with its own values.
                let rows: Vec<(i64, String, f64)> = (0..20)
                    .map(|i| {
                        (
                            19_000 * DAY_US + i * 1_000_000,
                            HOSTS[(i % 4) as usize].to_string(),
                            (w * 100 + s) as f64,
                        )
                    })
                    .collect();
                lake.append("c", vec![batch(&rows)], AppendOptions::default())
                    .await
                    .unwrap();
            }
        }));
    }
    for h in handles {
        h.await.unwrap();
    }
    let rows = stored(&lake, "c").await;
    assert_eq!(rows.len(), 20, "one row per key");
    // All 20 keys were last written by one append, so they hold one value.
    let values: HashSet<u64> = rows.values().map(|v| *v as u64).collect();
    assert_eq!(values.len(), 1, "{rows:?}");
    let h = lake.history("c").await.unwrap();
    for w in h.windows(2) {
        assert_eq!(w[1].parent_id, Some(w[0].snapshot_id), "history is linear");
    }
    assert_readers_agree(&lake, &backend, "default", "c").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_writers_of_one_key_on_local_disk() {
    concurrent(Backend::local()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_writers_of_one_key_on_s3() {
    concurrent(Backend::s3()).await;
}

#[tokio::test]
async fn dedup_needs_a_time_column_and_is_fixed_at_creation() {
    let lake = Backend::Memory.open();
    let err = lake
        .create_table(
            "p",
            &schema(),
            &TableContract::default().with_dedup(Dedup::LastWriteWins),
        )
        .await
        .unwrap_err();
    assert!(err.to_string().contains("needs a time column"), "{err}");
    create(&lake, "f", false).await;
    assert_eq!(lake.describe("f").await.unwrap().contract.dedup, Dedup::LastWriteWins);
    let props = [("varve.dedup".to_string(), "none".to_string())].into();
    let err = lake.set_properties("f", &props, &[]).await.unwrap_err();
    assert!(err.to_string().contains("fixed when the table is created"), "{err}");
}

/// A NULL series key is one series: a stored row with a NULL key is replaced like any other, even
/// when the files' bounds (which leave NULLs out) do not overlap.
#[tokio::test]
async fn null_series_keys_are_replaced_too() {
    let lake = Backend::Memory.open();
    create(&lake, "n", false).await;
    let b = |other: &str, v: f64| {
        RecordBatch::try_new(
            schema(),
            vec![
                Arc::new(
                    TimestampMicrosecondArray::from(vec![19_000 * DAY_US, 19_000 * DAY_US + 1]).with_timezone("UTC"),
                ),
                Arc::new(StringArray::from(vec![None, Some(other)])),
                Arc::new(Float64Array::from(vec![v, v])),
            ],
        )
        .unwrap()
    };
    lake.append("n", vec![b("z", 1.0)], AppendOptions::default())
        .await
        .unwrap();
    // The stored file's host bounds are [z, z], the new one's [a, a]: only their NULLs meet.
    let r = lake
        .append("n", vec![b("a", 2.0)], AppendOptions::default())
        .await
        .unwrap();
    assert_eq!(r.rows_replaced, 1, "{r:?}");
    let rows = lake
        .sql("SELECT host, v FROM n ORDER BY host NULLS FIRST")
        .await
        .unwrap();
    assert_eq!(
        varve_testkit::rows(&rows.batches),
        [["NULL", "2.0"], ["a", "2.0"], ["z", "1.0"]],
        "one row per key, the newest"
    );
}
