//! Maintenance against every backend: compaction of many micro-appends (same rows, one file per
//! partition, bounded manifests, DuckDB and PyIceberg agree, time travel to before it still
//! answers), inline compaction, retention, snapshot expiry and orphan cleanup down to the live
//! files, batch ids idempotent after expiry, and appenders racing a maintenance loop.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use arrow::array::{Float64Array, RecordBatch, StringArray, TimestampMicrosecondArray};
use arrow::datatypes::{DataType, Field, Schema, TimeUnit};
use futures::TryStreamExt;
use object_store::ObjectStoreExt;
use varve::{AppendOptions, Lake, MaintainOptions, TableContract};
use varve_testkit::{assert_readers_agree, Backend};

const HOUR_US: i64 = 3_600_000_000;
const DAY_US: i64 = 24 * HOUR_US;

pub(crate) fn schema() -> Arc<Schema> {
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

/// Rows `(ts, host, v)`.
fn batch(rows: &[(i64, &str, f64)]) -> RecordBatch {
    RecordBatch::try_new(
        schema(),
        vec![
            Arc::new(TimestampMicrosecondArray::from_iter_values(rows.iter().map(|r| r.0)).with_timezone("UTC")),
            Arc::new(StringArray::from_iter_values(rows.iter().map(|r| r.1))),
            Arc::new(Float64Array::from_iter_values(rows.iter().map(|r| r.2))),
        ],
    )
    .unwrap()
}

/// The `i`-th micro-append: 4 rows over 4 hosts in one of two days, out of time order.
fn micro(i: i64, base_day: i64) -> RecordBatch {
    let day = base_day + i % 2;
    let rows: Vec<(i64, &str, f64)> = ["d", "a", "c", "b"]
        .iter()
        .enumerate()
        .map(|(k, h)| {
            (
                day * DAY_US + (1000 - i) * 1_000_000 + k as i64,
                *h,
                (i * 4 + k as i64) as f64,
            )
        })
        .collect();
    batch(&rows)
}

async fn scalar(lake: &Lake, sql: &str) -> String {
    let r = lake.sql(sql).await.unwrap_or_else(|e| panic!("{sql}: {e}"));
    let col = r.batches[0].column(0);
    arrow::util::display::array_value_to_string(col, 0).unwrap()
}

pub(crate) async fn create(lake: &Lake, name: &str, props: &[(&str, &str)]) {
    let contract = TableContract::time_series("ts").with_series_key(["host"]);
    lake.create_table(name, &schema(), &contract).await.unwrap();
    if !props.is_empty() {
        let set: HashMap<String, String> = props.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        lake.set_properties(name, &set, &[]).await.unwrap();
    }
}

/// The object store a lake on `backend` reads and writes (caught through the store layer hook).
fn lake_store(backend: &Backend) -> Arc<dyn object_store::ObjectStore> {
    let slot: Arc<std::sync::Mutex<Option<Arc<dyn object_store::ObjectStore>>>> = Default::default();
    let keep = slot.clone();
    Lake::open_with_store_layer(&backend.url(), &backend.options(), move |s| {
        *keep.lock().unwrap() = Some(s.clone());
        s
    })
    .unwrap();
    let store = slot.lock().unwrap().clone();
    store.unwrap()
}

/// The data files on disk of `table` (live or not), each with its name under the table and its
/// bytes.
pub(crate) async fn data_files(backend: &Backend, table: &str) -> Vec<(String, bytes::Bytes)> {
    let store = lake_store(backend);
    let mut out = Vec::new();
    for name in objects(backend, table).await {
        if name.starts_with("data/") {
            let path = object_store::path::Path::from(format!("default/{table}/{name}"));
            out.push((name, store.get(&path).await.unwrap().bytes().await.unwrap()));
        }
    }
    out
}

/// Every object under the table, relative to the table (listed through the lake's own store).
pub(crate) async fn objects(backend: &Backend, table: &str) -> Vec<String> {
    let store = lake_store(backend);
    let prefix = object_store::path::Path::from(format!("default/{table}"));
    let list: Vec<object_store::ObjectMeta> = store.list(Some(&prefix)).try_collect().await.unwrap();
    let mut out: Vec<String> = list
        .into_iter()
        .map(|m| {
            m.location
                .as_ref()
                .strip_prefix(prefix.as_ref())
                .unwrap()
                .trim_start_matches('/')
                .to_string()
        })
        .collect();
    out.sort();
    out
}

async fn compaction_of_micro_appends(backend: Backend) {
    let lake = backend.open();
    create(&lake, "m", &[("varve.auto-maintain", "false")]).await;
    for i in 0..300 {
        lake.append("m", vec![micro(i, 19_000)], AppendOptions::default())
            .await
            .unwrap();
    }
    let info = lake.info("m").await.unwrap();
    assert_eq!(info.live_files, 300);
    assert_eq!(info.rows, 1200);
    assert!(
        info.manifests <= 16,
        "manifests are merged as appends go: {}",
        info.manifests
    );
    let before_sum = scalar(&lake, "SELECT sum(v) FROM m").await;
    let before_snapshot = info.snapshot_id.unwrap();

    let dry = lake
        .maintain(
            "m",
            &MaintainOptions {
                dry_run: true,
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(dry.partitions_compacted, 2);
    assert_eq!(
        lake.info("m").await.unwrap().live_files,
        300,
        "a dry run changes nothing"
    );

    let r = lake.maintain("m", &MaintainOptions::default()).await.unwrap();
    assert_eq!((r.files_before, r.files_after), (300, 2), "{r:?}");
    assert_eq!(r.rows_rewritten, 1200);
    let info = lake.info("m").await.unwrap();
    assert_eq!((info.live_files, info.partitions, info.rows), (2, 2, 1200));
    assert_eq!(info.manifests, 1);
    assert_eq!(scalar(&lake, "SELECT sum(v) FROM m").await, before_sum);
    assert_eq!(scalar(&lake, "SELECT count(DISTINCT (ts, host)) FROM m").await, "1200");
    assert_readers_agree(&lake, &backend, "default", "m").await;
    // Time travel to before the compaction reads the old files.
    assert_eq!(
        scalar(
            &lake,
            &format!("SELECT count(*) FROM m FOR VERSION AS OF {before_snapshot}")
        )
        .await,
        "1200"
    );
    let h = lake.history("m").await.unwrap();
    let last = h.last().unwrap();
    assert_eq!(last.operation, "replace");
    assert!(last.note.as_deref().unwrap_or("").starts_with("compaction"), "{last:?}");

    // A second run finds nothing to compact.
    let again = lake.maintain("m", &MaintainOptions::default()).await.unwrap();
    assert_eq!(again.partitions_compacted, 0, "{again:?}");

    // Expiry with no retention and orphan cleanup with no safety window: only live files and
    // current metadata remain (min-snapshots 1 keeps the current snapshot only).
    lake.set_properties(
        "m",
        &HashMap::from([("varve.min-snapshots".to_string(), "1".to_string())]),
        &[],
    )
    .await
    .unwrap();
    let r = lake
        .maintain(
            "m",
            &MaintainOptions {
                snapshot_retention: Some(Duration::ZERO),
                orphan_age: Duration::ZERO,
                ..Default::default()
            },
        )
        .await
        .unwrap();
    // Commits kept the newest 100 snapshots (`varve.max-snapshots`); expiry takes all but one.
    assert!(r.snapshots_expired >= 99, "{r:?}");
    let err = lake
        .sql(&format!("SELECT count(*) FROM m FOR VERSION AS OF {before_snapshot}"))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), varve::ErrorKind::NotFound, "{err}");
    assert!(err.message().contains("oldest retained snapshot"), "{err}");
    let d = lake.describe("m").await.unwrap();
    let objs = objects(&backend, "m").await;
    let data: Vec<&String> = objs.iter().filter(|o| o.starts_with("data/")).collect();
    let meta: Vec<&String> = objs.iter().filter(|o| o.starts_with("metadata/")).collect();
    assert_eq!(data.len(), 2, "{objs:?}");
    // Metadata versions younger than 15 minutes stay whatever the orphan age (a writer may still
    // target their numbers: `commit::METADATA_VERSION_MIN_AGE`); none newer than the current.
    let versions: Vec<String> = (1..=d.metadata_version)
        .map(|v| format!("metadata/v{v}.metadata.json"))
        .collect();
    let mut expected_meta: HashSet<&str> = versions.iter().map(String::as_str).collect();
    expected_meta.insert("metadata/version-hint.text");
    let json: HashSet<&str> = meta
        .iter()
        .filter(|m| m.ends_with(".json") || m.ends_with(".text"))
        .map(|m| m.as_str())
        .collect();
    assert_eq!(json, expected_meta, "{objs:?}");
    let avro = meta.iter().filter(|m| m.ends_with(".avro")).count();
    assert_eq!(avro, 2, "one manifest list and one manifest: {objs:?}");
    assert_eq!(lake.history("m").await.unwrap().len(), 1);
    assert_eq!(scalar(&lake, "SELECT sum(v) FROM m").await, before_sum);
    assert_readers_agree(&lake, &backend, "default", "m").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compaction_on_local_disk() {
    compaction_of_micro_appends(Backend::local()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compaction_on_s3() {
    compaction_of_micro_appends(Backend::s3()).await;
}

/// `varve.max-snapshots`: every commit expires the oldest snapshots beyond the bound, so each
/// metadata file stays small however often the table commits; what is kept is a contiguous
/// history that DuckDB and PyIceberg read, time travel past it names the oldest retained
/// snapshot, and maintenance's orphan cleanup removes the files only the expired ones held.
async fn commits_keep_at_most_max_snapshots(backend: Backend) {
    let lake = backend.open();
    create(
        &lake,
        "b",
        &[("varve.auto-maintain", "false"), ("varve.max-snapshots", "10")],
    )
    .await;
    let mut ids = Vec::new();
    let mut sizes = Vec::new();
    for i in 0..30 {
        lake.append("b", vec![micro(i, 19_000)], AppendOptions::default())
            .await
            .unwrap();
        let info = lake.info("b").await.unwrap();
        ids.push(info.snapshot_id.unwrap());
        let d = lake.describe("b").await.unwrap();
        let meta = format!("default/b/metadata/v{}.metadata.json", d.metadata_version);
        let store = lake_store(&backend);
        sizes.push(store.head(&object_store::path::Path::from(meta)).await.unwrap().size);
        assert!(info.snapshots <= 10, "append {i}: {} snapshots", info.snapshots);
    }
    // Past the bound a commit adds only its metadata-log entry (about 110 bytes; Iceberg keeps
    // the newest 100, `write.metadata.previous-versions-max`), not a snapshot of about 950.
    let (before, after) = ((sizes[9] - sizes[0]) / 9, (sizes[29] - sizes[9]) / 20);
    assert!(after * 4 < before, "bytes per commit {before} then {after}: {sizes:?}");
    let h = lake.history("b").await.unwrap();
    let kept: Vec<i64> = h.iter().map(|s| s.snapshot_id).collect();
    assert_eq!(kept, ids[20..].to_vec(), "the newest 10, oldest first");
    for w in h.windows(2) {
        assert_eq!(w[1].parent_id, Some(w[0].snapshot_id), "history is linear");
    }
    assert_eq!(scalar(&lake, "SELECT count(*) FROM b").await, "120");
    let oldest = ids[20];
    assert_eq!(
        scalar(&lake, &format!("SELECT count(*) FROM b FOR VERSION AS OF {oldest}")).await,
        "84"
    );
    let err = lake
        .sql(&format!("SELECT count(*) FROM b FOR VERSION AS OF {}", ids[5]))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), varve::ErrorKind::NotFound, "{err}");
    assert!(err.message().contains("oldest retained snapshot"), "{err}");
    assert_readers_agree(&lake, &backend, "default", "b").await;

    // The expired snapshots' manifest lists are orphans now; cleanup with no safety window takes
    // them, and leaves what the 10 kept snapshots reference.
    let lists = |objs: &[String]| objs.iter().filter(|o| o.contains("/snap-")).count();
    assert_eq!(lists(&objects(&backend, "b").await), 30);
    let r = lake
        .maintain(
            "b",
            &MaintainOptions {
                compact: false,
                orphan_age: Duration::ZERO,
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(r.snapshots_expired, 0, "nothing older than an hour: {r:?}");
    assert_eq!(lists(&objects(&backend, "b").await), 10);
    assert_eq!(scalar(&lake, "SELECT count(*) FROM b").await, "120");
    assert_eq!(
        scalar(&lake, &format!("SELECT count(*) FROM b FOR VERSION AS OF {oldest}")).await,
        "84"
    );

    // Lowering the bound: the next commit trims to it; a bad value is refused.
    let set = |v: &str| HashMap::from([("varve.max-snapshots".to_string(), v.to_string())]);
    let err = lake.set_properties("b", &set("0"), &[]).await.unwrap_err();
    assert!(err.message().contains("varve.max-snapshots"), "{err}");
    let err = lake.set_properties("b", &set("many"), &[]).await.unwrap_err();
    assert!(err.message().contains("whole number"), "{err}");
    let err = lake.set_properties("b", &set("3"), &[]).await.unwrap_err();
    assert!(err.message().contains("below varve.min-snapshots=5"), "{err}");
    lake.set_properties("b", &set("6"), &[]).await.unwrap();
    lake.append("b", vec![micro(30, 19_000)], AppendOptions::default())
        .await
        .unwrap();
    assert_eq!(lake.info("b").await.unwrap().snapshots, 6);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn max_snapshots_on_local_disk() {
    commits_keep_at_most_max_snapshots(Backend::local()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn max_snapshots_on_s3() {
    commits_keep_at_most_max_snapshots(Backend::s3()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn inline_compaction_bounds_small_files() {
    let backend = Backend::local();
    let lake = backend.open();
    create(&lake, "i", &[("varve.auto-maintain", "true")]).await;
    let mut compacted = 0;
    for i in 0..40 {
        let r = lake
            .append("i", vec![micro(i * 2, 19_000)], AppendOptions::default())
            .await
            .unwrap();
        if let Some(m) = &r.maintenance {
            assert!(m.error.is_none(), "{m:?}");
            compacted += m.partitions_compacted;
        }
        let files = lake.info("i").await.unwrap().live_files;
        assert!(files <= 9, "append {i}: {files} files in one partition");
    }
    assert!(compacted >= 4);
    assert_eq!(scalar(&lake, "SELECT count(*) FROM i").await, "160");
    // `no_maintain` skips it.
    for i in 0..10 {
        let opts = AppendOptions {
            no_maintain: true,
            ..Default::default()
        };
        let r = lake.append("i", vec![micro(1000 + i * 2, 19_000)], opts).await.unwrap();
        assert!(r.maintenance.is_none());
    }
    assert!(lake.info("i").await.unwrap().live_files >= 10);
    assert_readers_agree(&lake, &backend, "default", "i").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retention_hides_then_drops_old_files() {
    let backend = Backend::local();
    let lake = backend.open();
    create(&lake, "r", &[]).await;
    let now_day = chrono::Utc::now().timestamp_micros() / DAY_US;
    lake.append("r", vec![micro(0, 18_000), micro(1, 18_000)], AppendOptions::default())
        .await
        .unwrap();
    lake.append("r", vec![micro(0, now_day - 1)], AppendOptions::default())
        .await
        .unwrap();
    assert_eq!(scalar(&lake, "SELECT count(*) FROM r").await, "12");
    let err = lake
        .set_properties(
            "r",
            &HashMap::from([("varve.retention".into(), "thirty days".into())]),
            &[],
        )
        .await
        .unwrap_err();
    assert!(err.message().contains("varve.retention"), "{err}");
    let err = lake
        .set_properties(
            "r",
            &HashMap::from([("varve.dedup".into(), "last-write-wins".into())]),
            &[],
        )
        .await
        .unwrap_err();
    assert!(err.message().contains("fixed when the table is created"), "{err}");
    lake.set_properties("r", &HashMap::from([("varve.retention".into(), "30d".into())]), &[])
        .await
        .unwrap();
    // Hidden before maintenance runs.
    assert_eq!(scalar(&lake, "SELECT count(*) FROM r").await, "4");
    let r = lake.maintain("r", &MaintainOptions::default()).await.unwrap();
    assert_eq!((r.files_dropped, r.rows_dropped), (2, 8), "{r:?}");
    assert_eq!(lake.info("r").await.unwrap().rows, 4);
    assert_eq!(lake.history("r").await.unwrap().last().unwrap().operation, "delete");
    assert_readers_agree(&lake, &backend, "default", "r").await;
    // Removing the property shows nothing old again: the files are gone.
    lake.set_properties("r", &HashMap::new(), &["varve.retention".to_string()])
        .await
        .unwrap();
    assert_eq!(scalar(&lake, "SELECT count(*) FROM r").await, "4");
}

#[tokio::test(flavor = "multi_thread")]
async fn retention_within_a_file_is_not_counted_from_statistics() {
    let backend = Backend::local();
    let lake = backend.open();
    create(&lake, "rf", &[]).await;
    // One file with a row past the retention and one within it (one day's partition, except in
    // the first hour of a UTC day, when the old row's file is pruned whole instead).
    let now = chrono::Utc::now().timestamp_micros();
    let rows = [(now - 61 * 60_000_000, "a", 1.0), (now - 60_000_000, "a", 2.0)];
    lake.append("rf", vec![batch(&rows)], AppendOptions::default())
        .await
        .unwrap();
    lake.set_properties("rf", &HashMap::from([("varve.retention".into(), "1h".into())]), &[])
        .await
        .unwrap();
    // A count over the whole table is not taken from the file's row count.
    assert_eq!(scalar(&lake, "SELECT count(*) FROM rf").await, "1");
    assert_eq!(scalar(&lake, "SELECT sum(v) FROM rf").await, "2.0");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn batch_ids_stay_idempotent_after_expiry() {
    let backend = Backend::local();
    let lake = backend.open();
    create(&lake, "b", &[("varve.min-snapshots", "1")]).await;
    for i in 0..5 {
        let opts = AppendOptions {
            batch_id: Some(format!("batch-{i}")),
            ..Default::default()
        };
        lake.append("b", vec![micro(i, 19_000)], opts).await.unwrap();
    }
    let opts = MaintainOptions {
        snapshot_retention: Some(Duration::ZERO),
        orphan_age: Duration::ZERO,
        ..Default::default()
    };
    lake.maintain("b", &opts).await.unwrap();
    assert_eq!(lake.history("b").await.unwrap().len(), 1);
    let again = AppendOptions {
        batch_id: Some("batch-0".into()),
        ..Default::default()
    };
    let r = lake.append("b", vec![micro(0, 19_000)], again).await.unwrap();
    assert!(r.duplicate, "batch-0's snapshot expired, its id must still be known");
    assert_eq!(scalar(&lake, "SELECT count(*) FROM b").await, "20");
}

/// Appenders racing a maintenance loop on S3: every committed row exactly once, history linear.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn appends_race_maintenance_on_s3() {
    let backend = Backend::s3();
    let lake = backend.open();
    create(&lake, "c", &[("varve.auto-maintain", "false")]).await;
    let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut writers = Vec::new();
    for w in 0..3i64 {
        let lake = lake.clone();
        writers.push(tokio::spawn(async move {
            for s in 0..15i64 {
                let i = w * 100 + s;
                let opts = AppendOptions {
                    batch_id: Some(format!("{w}-{s}")),
                    ..Default::default()
                };
                lake.append("c", vec![micro(i, 19_000)], opts).await.unwrap();
            }
        }));
    }
    let maintainer = {
        let lake = lake.clone();
        let done = done.clone();
        tokio::spawn(async move {
            let mut runs = 0;
            while !done.load(std::sync::atomic::Ordering::SeqCst) {
                lake.maintain("c", &MaintainOptions::default()).await.unwrap();
                runs += 1;
            }
            runs
        })
    };
    for w in writers {
        w.await.unwrap();
    }
    done.store(true, std::sync::atomic::Ordering::SeqCst);
    let runs = maintainer.await.unwrap();
    assert!(runs >= 1);
    lake.maintain("c", &MaintainOptions::default()).await.unwrap();
    assert_eq!(scalar(&lake, "SELECT count(*) FROM c").await, "180");
    assert_eq!(scalar(&lake, "SELECT count(DISTINCT (ts, host)) FROM c").await, "180");
    let sum: f64 = (0..3i64)
        .flat_map(|w| (0..15i64).map(move |s| w * 100 + s))
        .map(|i| (0..4).map(|k| (i * 4 + k) as f64).sum::<f64>())
        .sum();
    assert_eq!(scalar(&lake, "SELECT sum(v) FROM c").await, format!("{sum:?}"));
    let h = lake.history("c").await.unwrap();
    for pair in h.windows(2) {
        assert_eq!(pair[1].parent_id, Some(pair[0].snapshot_id), "history is linear");
    }
    assert_eq!(lake.info("c").await.unwrap().live_files, 2);
    assert_readers_agree(&lake, &backend, "default", "c").await;
}

/// Rows kept by the test as the reference model: `(ts, host, v)` with `v` NULL for every 7th row.
fn model_rows(days: &[i64]) -> Vec<(i64, String, Option<f64>)> {
    let mut out = Vec::new();
    for &d in days {
        for (k, h) in ["a", "b", "c", "d"].iter().enumerate() {
            for i in 0..25i64 {
                let n = out.len() as i64;
                let v = if n % 7 == 0 { None } else { Some((n % 150) as f64) };
                out.push((d * DAY_US + i * 60_000_000 + k as i64, h.to_string(), v));
            }
        }
    }
    out
}

fn model_batch(rows: &[(i64, String, Option<f64>)]) -> RecordBatch {
    RecordBatch::try_new(
        schema(),
        vec![
            Arc::new(TimestampMicrosecondArray::from_iter_values(rows.iter().map(|r| r.0)).with_timezone("UTC")),
            Arc::new(StringArray::from_iter_values(rows.iter().map(|r| r.1.as_str()))),
            Arc::new(Float64Array::from(rows.iter().map(|r| r.2).collect::<Vec<_>>())),
        ],
    )
    .unwrap()
}

async fn check_model(lake: &Lake, backend: &Backend, model: &[(i64, String, Option<f64>)]) {
    assert_eq!(scalar(lake, "SELECT count(*) FROM d").await, model.len().to_string());
    let nulls = model.iter().filter(|r| r.2.is_none()).count();
    assert_eq!(
        scalar(lake, "SELECT count(*) FROM d WHERE v IS NULL").await,
        nulls.to_string()
    );
    assert_readers_agree(lake, backend, "default", "d").await;
}

async fn deletes(backend: Backend) {
    let lake = backend.open();
    create(&lake, "d", &[("varve.auto-maintain", "false")]).await;
    let mut model = model_rows(&[19_000, 19_001, 19_002]);
    // Two appends per day: several files per partition.
    for chunk in model.chunks(150) {
        lake.append("d", vec![model_batch(chunk)], AppendOptions::default())
            .await
            .unwrap();
    }
    check_model(&lake, &backend, &model).await;

    // A time range covering a whole partition: its files are dropped without a rewrite.
    let r = lake.delete("d", Some("ts < '2022-01-09T00:00:00Z'")).await.unwrap();
    let cut = 19_001 * DAY_US; // 2022-01-09
    let before = model.len();
    model.retain(|r| r.0 >= cut);
    assert_eq!(r.rows_deleted as usize, before - model.len(), "{r:?}");
    assert_eq!(r.files_written, 0, "a covered partition is dropped whole: {r:?}");
    check_model(&lake, &backend, &model).await;

    // One series: files are rewritten without its rows.
    let r = lake.delete("d", Some("host = 'a'")).await.unwrap();
    let before = model.len();
    model.retain(|r| r.1 != "a");
    assert_eq!(r.rows_deleted as usize, before - model.len());
    assert!(r.files_written >= 1, "{r:?}");
    check_model(&lake, &backend, &model).await;

    // NULLs do not match a comparison: those rows stay.
    let r = lake.delete("d", Some("v > 100")).await.unwrap();
    let before = model.len();
    model.retain(|r| !r.2.is_some_and(|v| v > 100.0));
    assert_eq!(r.rows_deleted as usize, before - model.len());
    check_model(&lake, &backend, &model).await;

    // No match: nothing is committed.
    let snapshots = lake.history("d").await.unwrap().len();
    let r = lake.delete("d", Some("host = 'zzz'")).await.unwrap();
    assert_eq!((r.rows_deleted, r.snapshot_id), (0, None));
    assert_eq!(lake.history("d").await.unwrap().len(), snapshots);

    // SQL DELETE answers the count.
    let n = scalar(&lake, "DELETE FROM d WHERE host = 'b' AND v IS NULL").await;
    let before = model.len();
    model.retain(|r| !(r.1 == "b" && r.2.is_none()));
    assert_eq!(n, (before - model.len()).to_string());
    check_model(&lake, &backend, &model).await;
    assert_eq!(lake.history("d").await.unwrap().last().unwrap().operation, "delete");

    // Deleted rows never come back through compaction.
    lake.maintain("d", &MaintainOptions::default()).await.unwrap();
    check_model(&lake, &backend, &model).await;

    let err = lake.delete("d", Some("nonsense = 1")).await.unwrap_err();
    assert_eq!(err.kind(), varve::ErrorKind::InvalidInput, "{err}");
    let r = lake.delete("d", None).await.unwrap();
    assert_eq!(r.rows_deleted as usize, model.len());
    model.clear();
    check_model(&lake, &backend, &model).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deletes_on_local_disk() {
    deletes(Backend::local()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deletes_on_s3() {
    deletes(Backend::s3()).await;
}

/// The most rows of a data page of any column of a Parquet file (from its offset index).
fn largest_page_rows(bytes: &bytes::Bytes) -> i64 {
    use parquet::arrow::arrow_reader::{ArrowReaderOptions, ParquetRecordBatchReaderBuilder};
    use parquet::file::metadata::PageIndexPolicy;
    let options = ArrowReaderOptions::new().with_page_index_policy(PageIndexPolicy::Required);
    let reader = ParquetRecordBatchReaderBuilder::try_new_with_options(bytes.clone(), options).unwrap();
    let meta = reader.metadata();
    let index = meta.offset_index().expect("an offset index");
    let mut most = 0;
    for (rg, columns) in meta.row_groups().iter().zip(index) {
        for column in columns {
            let starts: Vec<i64> = column.page_locations().iter().map(|p| p.first_row_index).collect();
            for (i, start) in starts.iter().enumerate() {
                let end = starts.get(i + 1).copied().unwrap_or(rg.num_rows());
                most = most.max(end - start);
            }
        }
    }
    most
}

/// Compaction cuts output files at `varve.target-file-size` on series boundaries (no series in two
/// files of the partition), in row groups of `varve.row-group-rows` and data pages of
/// `varve.page-rows` (appends too), keeping every row.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compaction_cuts_files_on_series_boundaries() {
    let backend = Backend::local();
    let lake = backend.open();
    create(
        &lake,
        "c",
        &[
            ("varve.auto-maintain", "false"),
            ("varve.target-file-size", "1MiB"),
            ("varve.row-group-rows", "20000"),
            ("varve.page-rows", "3000"),
            // The times as a dictionary, so that the partition is about 5 MiB (delta-encoded they
            // take almost no room, and the values are limited to sum exactly).
            ("varve.time-encoding", "dictionary"),
            // Expiry then deletes the appends' files: what is left on disk is live.
            ("varve.snapshot-retention", "0s"),
            ("varve.min-snapshots", "1"),
        ],
    )
    .await;
    // 60 hosts x 8,000 readings 10 s apart in one day, values that do not compress, in 6 appends
    // that each hold every host.
    let hosts: Vec<String> = (0..60).map(|h| format!("host-{h:02}")).collect();
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    for part in 0..6i64 {
        let mut rows = Vec::new();
        for h in &hosts {
            for k in (part..8000).step_by(6) {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                rows.push((19_000 * DAY_US + k * 10_000_000, h.as_str(), (state % 1_000_000) as f64));
            }
        }
        lake.append("c", vec![batch(&rows)], AppendOptions::default())
            .await
            .unwrap();
    }
    // parquet-rs checks the page limit after each write of at most 1,024 rows.
    for (name, bytes) in data_files(&backend, "c").await {
        let most = largest_page_rows(&bytes);
        assert!(most > 2000 && most < 3000 + 1024, "{name}: a page of {most} rows");
    }
    let sum_before = scalar(&lake, "SELECT sum(v) FROM c").await;
    let r = lake.maintain("c", &MaintainOptions::default()).await.unwrap();
    assert!(r.rows_rewritten > 0, "{r:?}");
    assert_eq!(scalar(&lake, "SELECT count(*) FROM c").await, "480000");
    assert_eq!(scalar(&lake, "SELECT sum(v) FROM c").await, sum_before);

    // Read each live data file: its hosts, row groups and size.
    let live = lake.info("c").await.unwrap().live_files;
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut files = 0;
    for (name, bytes) in data_files(&backend, "c").await {
        let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(bytes.clone()).unwrap();
        let meta = reader.metadata().clone();
        if meta.file_metadata().num_rows() == 0 {
            continue;
        }
        assert!(meta.row_groups().iter().all(|rg| rg.num_rows() <= 20_000), "{name}");
        let most = largest_page_rows(&bytes);
        assert!(most > 2000 && most < 3000 + 1024, "{name}: a page of {most} rows");
        files += 1;
        assert!(bytes.len() < 2 * 1024 * 1024, "{name}: {} bytes", bytes.len());
        let mut hosts_here = HashSet::new();
        for b in reader.build().unwrap() {
            let b = b.unwrap();
            let col = b.column_by_name("host").unwrap();
            let col = col.as_any().downcast_ref::<StringArray>().unwrap();
            hosts_here.extend(col.iter().flatten().map(str::to_string));
        }
        for h in hosts_here {
            if let Some(prev) = seen.insert(h.clone(), files) {
                panic!("series {h} is in two compacted files ({prev} and {files})");
            }
        }
    }
    assert_eq!(files as u64, live, "compacted files on disk vs live files");
    assert!(files >= 3, "a partition of about 5 MiB cut at 1 MiB: {files} files");
    assert_eq!(seen.len(), 60);
}

/// Compaction of many overlapping appends (late rows, keys repeated across appends, more files
/// than one merge pass takes), each input read in chunks of rows (a tiny
/// `varve.merge-buffer-size` and small row groups): every output file is sorted by (series key,
/// time) and the table holds exactly the rows appended, checked against a plain sort.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compaction_in_chunks_matches_a_sort() {
    let backend = Backend::local();
    let lake = backend.open();
    create(
        &lake,
        "k",
        &[
            ("varve.auto-maintain", "false"),
            ("varve.row-group-rows", "700"),
            ("varve.merge-buffer-size", "16KiB"),
            ("varve.snapshot-retention", "0s"),
            ("varve.min-snapshots", "1"),
        ],
    )
    .await;
    let hosts: Vec<String> = (0..30).map(|h| format!("h{h}")).collect();
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut want: Vec<(String, i64, u64)> = Vec::new();
    for a in 0..70i64 {
        let mut rows = Vec::new();
        for _ in 0..(200 + next() % 400) {
            let h = &hosts[(next() % hosts.len() as u64) as usize];
            // Mostly this append's hour, a tenth late into any earlier hour, in one day; a few
            // timestamps repeat within and across appends.
            let hour = if next() % 10 == 0 {
                (next() % (a as u64 + 1)) as i64
            } else {
                a
            } % 24;
            let ts = 19_000 * DAY_US + hour * HOUR_US + (next() % 3_600) as i64 * 1_000_000;
            let v = (next() % 100_000) as f64 / 8.0;
            rows.push((ts, h.as_str(), v));
            want.push((h.clone(), ts, v.to_bits()));
        }
        lake.append("k", vec![batch(&rows)], AppendOptions::default())
            .await
            .unwrap();
    }
    let r = lake.maintain("k", &MaintainOptions::default()).await.unwrap();
    assert_eq!(r.files_after, 1, "{r:?}");
    check_sorted_table(&lake, &backend, "k", want).await;
}

/// The table `table` holds exactly the rows `want` (host, ts, bits of v), and each of its live
/// data files is in (host, ts) order; returns the row counts of the files' row groups.
async fn check_sorted_table(
    lake: &Lake,
    backend: &Backend,
    table: &str,
    mut want: Vec<(String, i64, u64)>,
) -> Vec<i64> {
    let got = lake
        .sql(&format!("SELECT host, ts, v FROM {table} ORDER BY host, ts, v"))
        .await
        .unwrap();
    let mut rows: Vec<(String, i64, u64)> = Vec::new();
    for b in &got.batches {
        let host = b.column(0).as_any().downcast_ref::<StringArray>().unwrap();
        let ts = b
            .column(1)
            .as_any()
            .downcast_ref::<TimestampMicrosecondArray>()
            .unwrap();
        let v = b.column(2).as_any().downcast_ref::<Float64Array>().unwrap();
        for i in 0..b.num_rows() {
            rows.push((host.value(i).to_string(), ts.value(i), v.value(i).to_bits()));
        }
    }
    want.sort_by(|x, y| {
        (&x.0, x.1, f64::from_bits(x.2))
            .partial_cmp(&(&y.0, y.1, f64::from_bits(y.2)))
            .unwrap()
    });
    assert_eq!(rows.len(), want.len());
    assert!(rows == want, "the compacted table differs from the rows appended");

    // The compacted file itself is in (host, ts) order.
    let mut checked = 0;
    let mut groups = Vec::new();
    for (name, bytes) in data_files(backend, table).await {
        let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(bytes).unwrap();
        groups.extend(reader.metadata().row_groups().iter().map(|rg| rg.num_rows()));
        let reader = reader.build().unwrap();
        let mut last: Option<(String, i64)> = None;
        for b in reader {
            let b = b.unwrap();
            let host = b
                .column_by_name("host")
                .unwrap()
                .as_any()
                .downcast_ref::<StringArray>()
                .unwrap()
                .clone();
            let ts = b
                .column_by_name("ts")
                .unwrap()
                .as_any()
                .downcast_ref::<TimestampMicrosecondArray>()
                .unwrap()
                .clone();
            for i in 0..b.num_rows() {
                let key = (host.value(i).to_string(), ts.value(i));
                if let Some(prev) = &last {
                    assert!(*prev <= key, "{name}: {prev:?} before {key:?}");
                }
                last = Some(key);
                checked += 1;
            }
        }
    }
    assert_eq!(checked, want.len(), "rows in live data files");
    groups
}

/// Row groups larger than the part the output buffers as Arrow data (65,536 rows) are encoded in
/// parts into open column writers: the compacted table holds exactly the rows appended, in order,
/// in row groups of `varve.row-group-rows`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compaction_encodes_large_row_groups_in_parts() {
    let backend = Backend::local();
    let lake = backend.open();
    create(
        &lake,
        "p",
        &[
            ("varve.auto-maintain", "false"),
            ("varve.row-group-rows", "100000"),
            ("varve.snapshot-retention", "0s"),
            ("varve.min-snapshots", "1"),
        ],
    )
    .await;
    let hosts: Vec<String> = (0..7).map(|h| format!("h{h}")).collect();
    let mut rng = varve_testkit::Rng(0x51ED_2701);
    let mut want: Vec<(String, i64, u64)> = Vec::new();
    for a in 0..4i64 {
        let mut rows = Vec::new();
        for i in 0..40_000i64 {
            let h = &hosts[rng.next(hosts.len() as u64) as usize];
            let ts = 19_000 * DAY_US + (i * 4 + a) * 500_000;
            let v = rng.next(1_000_000) as f64 / 4.0;
            rows.push((ts, h.as_str(), v));
            want.push((h.clone(), ts, v.to_bits()));
        }
        lake.append("p", vec![batch(&rows)], AppendOptions::default())
            .await
            .unwrap();
    }
    let r = lake.maintain("p", &MaintainOptions::default()).await.unwrap();
    assert_eq!(r.files_after, 1, "{r:?}");
    let groups = check_sorted_table(&lake, &backend, "p", want).await;
    assert_eq!(groups, vec![100_000, 60_000], "{r:?}");
}

/// Orphan cleanup with no safety window between a commit's data upload and its metadata write
/// (issue 56): the cleanup lists the uploaded file as unreferenced, commits its fence, and
/// deletes it; the commit sees the fence and uploads the file again under a new name. The append
/// lands with its rows, and every reader reads them. Before the fence the commit referenced the
/// deleted file, and every query of the table failed.
async fn orphan_cleanup_between_upload_and_commit(backend: Backend) {
    let sweeper = backend.open();
    create(&sweeper, "o", &[("varve.auto-maintain", "false")]).await;
    sweeper
        .append("o", vec![micro(0, 19_000)], AppendOptions::default())
        .await
        .unwrap();
    let sweep = {
        let lake = sweeper.clone();
        Box::pin(async move {
            let opts = MaintainOptions {
                compact: false,
                retention: false,
                expire: false,
                orphan_age: Duration::ZERO,
                ..Default::default()
            };
            let r = lake.maintain("o", &opts).await.unwrap();
            assert!(
                r.objects_deleted >= 1,
                "the sweep saw the uploaded file as an orphan: {r:?}"
            );
        })
    };
    let writer = Lake::open_with_store_layer(&backend.url(), &backend.options(), move |s| {
        varve_testkit::hook::after_put(s, |p| p.as_ref().ends_with(".parquet"), sweep)
    })
    .unwrap();
    let r = writer
        .append("o", vec![micro(1, 19_000)], AppendOptions::default())
        .await
        .unwrap();
    assert!(r.attempts >= 2, "the first attempt lost to the fence: {r:?}");
    // The writer, and a process that has not seen the table (the sweeper's own view may be up
    // to the version-check interval old).
    for lake in [&writer, &backend.open()] {
        assert_eq!(scalar(lake, "SELECT count(*) FROM o").await, "8");
        assert_eq!(scalar(lake, "SELECT sum(v) FROM o").await, "28.0");
    }
    assert_readers_agree(&writer, &backend, "default", "o").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn orphan_cleanup_between_upload_and_commit_on_local_disk() {
    orphan_cleanup_between_upload_and_commit(Backend::local()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn orphan_cleanup_between_upload_and_commit_on_s3() {
    orphan_cleanup_between_upload_and_commit(Backend::s3()).await;
}

/// Retention on a table partitioned more coarsely than the retention (issue 57): one file of
/// 7 days of readings, `varve.retention = 3d`. Before maintenance Varve hides the old rows and
/// `info` counts what other engines still read; maintenance rewrites the file without them, and
/// then Varve, DuckDB and PyIceberg read the same rows. `info` warns about the partition.
async fn retention_within_coarse_partitions(backend: Backend) {
    let lake = backend.open();
    let contract = TableContract::time_series("ts")
        .with_series_key(["host"])
        .with_partitioning(varve::Partitioning::Year);
    lake.create_table("y", &schema(), &contract).await.unwrap();
    let now = chrono::Utc::now().timestamp_micros();
    // Every 10 minutes for 7 days, two hosts; within one UTC year unless run in the first week.
    let rows: Vec<(i64, &str, f64)> = (0..7 * 144)
        .flat_map(|i| {
            let ts = now - 7 * DAY_US + i * 600_000_000;
            [(ts, "a", i as f64), (ts, "b", -(i as f64))]
        })
        .collect();
    lake.append("y", vec![batch(&rows)], AppendOptions::default())
        .await
        .unwrap();
    lake.set_properties("y", &HashMap::from([("varve.retention".into(), "3d".into())]), &[])
        .await
        .unwrap();
    let visible: i64 = scalar(&lake, "SELECT count(*) FROM y").await.parse().unwrap();
    let total = rows.len() as i64;
    assert!(visible > 0 && visible < total, "{visible} of {total}");
    let info = lake.info("y").await.unwrap();
    assert_eq!(info.rows_past_retention, Some((total - visible) as u64), "{info:?}");
    assert!(
        info.retention_warning
            .as_deref()
            .unwrap_or("")
            .contains("partitioned by year"),
        "{info:?}"
    );
    // Other engines read every row until maintenance.
    let duck = varve_testkit::duckdb_scan(&backend, "default", "y");
    assert_eq!(duck.iter().map(|b| b.num_rows()).sum::<usize>() as i64, total);

    let r = lake.maintain("y", &MaintainOptions::default()).await.unwrap();
    assert!(r.rows_dropped > 0, "{r:?}");
    let info = lake.info("y").await.unwrap();
    assert_eq!(info.rows_past_retention, Some(0), "{info:?}");
    let kept = info.rows as i64;
    assert!(
        kept <= visible && kept >= visible - 4,
        "{kept} rows kept, {visible} visible before"
    );
    let last = lake.history("y").await.unwrap().pop().unwrap();
    assert_eq!(last.operation, "delete");
    assert!(last.note.as_deref().unwrap_or("").starts_with("retention"), "{last:?}");
    assert_readers_agree(&lake, &backend, "default", "y").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retention_within_coarse_partitions_on_local_disk() {
    retention_within_coarse_partitions(Backend::local()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retention_within_coarse_partitions_on_s3() {
    retention_within_coarse_partitions(Backend::s3()).await;
}

/// A retention that every row is past: maintenance keeps the rows and says how to drop them
/// (issue 57: 2000-2013 prices under a 30-day retention lost all 157 files without a word);
/// with `drop_all_rows` it drops them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retention_asks_before_dropping_every_row() {
    let backend = Backend::local();
    let lake = backend.open();
    create(&lake, "old", &[]).await;
    lake.append(
        "old",
        vec![micro(0, 11_000), micro(1, 11_000)],
        AppendOptions::default(),
    )
    .await
    .unwrap();
    lake.set_properties("old", &HashMap::from([("varve.retention".into(), "30d".into())]), &[])
        .await
        .unwrap();
    assert_eq!(lake.info("old").await.unwrap().rows_past_retention, Some(8));
    let r = lake.maintain("old", &MaintainOptions::default()).await.unwrap();
    assert_eq!(r.rows_dropped, 0, "{r:?}");
    assert!(
        r.skipped.iter().any(|s| s.contains("every row") && s.contains("--yes")),
        "{r:?}"
    );
    assert_eq!(lake.info("old").await.unwrap().rows, 8);
    let opts = MaintainOptions {
        drop_all_rows: true,
        ..Default::default()
    };
    let r = lake.maintain("old", &opts).await.unwrap();
    assert_eq!(r.rows_dropped, 8, "{r:?}");
    assert_eq!(lake.info("old").await.unwrap().rows, 0);
    assert_readers_agree(&lake, &backend, "default", "old").await;
}
