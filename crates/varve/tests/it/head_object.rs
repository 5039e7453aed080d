//! The head object (`metadata/varve-head.bin`): a process that has never seen a table learns its
//! state in one round trip (`latest` is then answered; a selective query reads its data in a
//! second), and a head that is stale, missing or damaged is never believed: readers see what the
//! Iceberg metadata says, on local disk and on S3.

use std::sync::Arc;

use arrow::array::{Float64Array, RecordBatch};
use arrow::datatypes::{DataType, Field, Schema, TimeUnit};
use object_store::path::Path;
use object_store::ObjectStoreExt;
use varve::{AppendOptions, Lake, TableContract};
use varve_testkit::store::{instrument, Counters, Latency, Requests};

use crate::fast_paths::{batch, requests, requests_excluding};
use varve_testkit::{rows, Backend};

const T0: i64 = 1_700_000_000_000_000;
const HOUR_US: i64 = 3_600_000_000;
const HEAD: &str = "iot/readings/metadata/varve-head.bin";

async fn make_table(lake: &Lake) {
    let b = batch(4, 360, T0);
    let contract = TableContract::time_series("ts").with_series_key(["host"]);
    lake.create_table("iot.readings", &b.schema(), &contract).await.unwrap();
    append(lake, b).await;
}

async fn append(lake: &Lake, b: RecordBatch) {
    lake.append("iot.readings", vec![b], AppendOptions::default())
        .await
        .unwrap();
}

/// A fresh lake (a process that has never seen the table) whose requests are counted, each
/// delayed by 20 ms as a remote store's round trip.
fn fresh_counted(backend: &Backend) -> (Lake, Arc<Counters>) {
    let counters = Arc::new(Counters::default());
    let latency = Latency {
        delay_ms: 20.0,
        bandwidth: None,
    };
    let c = counters.clone();
    let lake =
        Lake::open_with_store_layer(&backend.url(), &backend.options(), move |s| instrument(s, latency, c)).unwrap();
    (lake, counters)
}

/// The JSON header of the table's head object (its sections: kind, location, bytes).
async fn head_header(lake: &Lake) -> String {
    let head = lake
        .object_store()
        .get(&Path::from(HEAD))
        .await
        .unwrap()
        .bytes()
        .await
        .unwrap();
    let len = u32::from_le_bytes(head[12..16].try_into().unwrap()) as usize;
    String::from_utf8_lossy(&head[16..16 + len]).to_string()
}

/// What a fresh process answers: the row count and the latest rows.
async fn fresh_answers(backend: &Backend) -> (String, Vec<Vec<String>>) {
    let lake = backend.open();
    let latest = lake.latest("iot.readings").await.unwrap();
    let lake = backend.open();
    let n = lake.sql("SELECT count(*) FROM iot.readings").await.unwrap();
    (rows(&n.batches)[0][0].clone(), rows(&latest.batches))
}

/// The latest rows by a full scan (no index, no head).
async fn scanned_latest(lake: &Lake) -> Vec<Vec<String>> {
    let r = lake
        .sql(
            "SELECT ts, host, v FROM (SELECT *, row_number() OVER (PARTITION BY host ORDER BY ts DESC) AS rn \
             FROM iot.readings) WHERE rn = 1 ORDER BY host",
        )
        .await
        .unwrap();
    rows(&r.batches)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_fresh_latest_takes_one_round_trip_and_a_selective_query_two() {
    let backend = Backend::s3();
    let writer = backend.open();
    make_table(&writer).await;
    append(&writer, batch(4, 10, T0 + HOUR_US)).await;

    let (lake, counters) = fresh_counted(&backend);
    let (latest, r) = requests(&counters, lake.latest("iot.readings")).await;
    let latest = latest.unwrap();
    eprintln!("latest, fresh process: {r:?}");
    assert_eq!(latest.num_rows(), 4);
    assert_eq!(r.round_trips, 1, "a fresh latest is one round trip: {r:?}");

    let (lake, counters) = fresh_counted(&backend);
    let sql = "SELECT ts, v FROM iot.readings WHERE host = 'h2' AND ts >= TIMESTAMP '2023-11-14 22:13:20Z' \
               AND ts < TIMESTAMP '2023-11-14 22:43:20Z' ORDER BY ts";
    let (answer, r) = requests(&counters, lake.sql(sql)).await;
    eprintln!("selective query, fresh process: {r:?}");
    assert_eq!(answer.unwrap().num_rows(), 180);
    assert!(r.round_trips <= 2, "state, then data: {r:?}");

    // A table that does not exist is found out in one round trip too.
    let (lake, counters) = fresh_counted(&backend);
    let (missing, r) = requests(&counters, lake.latest("iot.nothing")).await;
    assert_eq!(missing.unwrap_err().kind(), varve::ErrorKind::NotFound);
    assert_eq!(r.round_trips, 1, "{r:?}");
}

/// A commit whose head write never happened (its process died after the commit) leaves the
/// previous head behind: fresh readers see the commit all the same.
async fn a_stale_head_is_never_believed(backend: Backend) {
    let writer = backend.open();
    make_table(&writer).await;
    let store = writer.object_store();
    let before = scanned_latest(&backend.open()).await;
    let old_head = store.get(&Path::from(HEAD)).await.unwrap().bytes().await.unwrap();
    // Newer rows for every series, then the old head put back: as if the second commit's
    // process died between its commit and its head write.
    append(&writer, batch(4, 5, T0 + 2 * HOUR_US)).await;
    // (The head and the hint are written after the append answered.)
    varve::settle_published().await;
    store.put(&Path::from(HEAD), old_head.into()).await.unwrap();
    let expected = scanned_latest(&backend.open()).await;
    assert_eq!(expected.len(), 4);
    assert_ne!(expected, before, "the second commit holds every series' newest row");
    let (n, latest) = fresh_answers(&backend).await;
    assert_eq!(n, "1460", "a fresh reader sees the second commit");
    assert_eq!(latest, expected, "latest from the newest index, not the stale head's");
    // DuckDB follows the version hint, which the commit wrote.
    let duck = varve_testkit::duckdb_scan(&backend, "iot", "readings");
    assert_eq!(duck.iter().map(|b| b.num_rows()).sum::<usize>(), 1460);

    // A missing head, then a damaged one: the same answers.
    store.delete(&Path::from(HEAD)).await.unwrap();
    assert_eq!(fresh_answers(&backend).await, ("1460".to_string(), expected.clone()));
    store
        .put(&Path::from(HEAD), bytes::Bytes::from_static(b"VARVHEAD garbage").into())
        .await
        .unwrap();
    assert_eq!(fresh_answers(&backend).await, ("1460".to_string(), expected.clone()));

    // The next commit writes a head again, and a fresh reader uses it.
    append(&writer, batch(1, 2, T0 + 3 * HOUR_US)).await;
    let (n, _) = fresh_answers(&backend).await;
    assert_eq!(n, "1462");
    let head = store.get(&Path::from(HEAD)).await.unwrap().bytes().await.unwrap();
    assert!(head.starts_with(b"VARVHEAD") && head.len() > 100);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_stale_head_is_never_believed_local() {
    a_stale_head_is_never_believed(Backend::local()).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_stale_head_is_never_believed_s3() {
    a_stale_head_is_never_believed(Backend::s3()).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn appends_count_their_round_trips() {
    let backend = Backend::s3();
    make_table(&backend.open()).await;
    let (lake, counters) = fresh_counted(&backend);
    let (r, cold) = foreground_requests(
        &counters,
        lake.append(
            "iot.readings",
            vec![batch(4, 10, T0 + HOUR_US)],
            AppendOptions::default(),
        ),
    )
    .await;
    r.unwrap();
    eprintln!("append, fresh process: {cold:?}");
    // (Its hint and head writes, made after it answered, are not counted as the next append's.)
    varve::settle().await;
    let (r, warm) = foreground_requests(
        &counters,
        lake.append(
            "iot.readings",
            vec![batch(4, 10, T0 + 2 * HOUR_US)],
            AppendOptions::default(),
        ),
    )
    .await;
    r.unwrap();
    eprintln!("append, warm: {warm:?}");
    // A fresh process reads the table's state first (the head object: the schema the data files
    // are written with). Then: the data file with the manifest, manifest list and index, at once
    // with the check of the version this process saw (warm); the conditional write of the
    // metadata. The version hint and the head object are written after the append has answered
    // (`varve::settle_published` waits for them), and the HEAD that no newer version moved the
    // hint back after that (`varve::settle` waits for all); those requests are left out of the
    // round trips, since on a loaded machine they may end before the append's answer is counted.
    assert!(cold.round_trips <= 3, "{cold:?}");
    assert!(warm.round_trips <= 2, "{warm:?}");
    varve::settle().await;
    let (n, _) = fresh_answers(&backend).await;
    assert_eq!(n, "1520");
}

/// The requests `f` makes, with the round trips of those it waits for: without the version hint
/// and head object writes that a commit makes once it has answered.
async fn foreground_requests<F: std::future::Future>(counters: &Counters, f: F) -> (F::Output, Requests) {
    requests_excluding(counters, f, |path| path.ends_with("/version-hint.text") || path == HEAD).await
}

/// A commit whose process died before its version hint write leaves the hint behind: plain
/// Iceberg readers (DuckDB follows the hint) see the older snapshot until it is repaired: the
/// next writer in any process does, even when its batch turns out to be a duplicate, and so does
/// the next reader.
#[tokio::test(flavor = "multi_thread")]
async fn a_hint_left_behind_is_repaired_by_the_next_writer() {
    let backend = Backend::local();
    let writer = backend.open();
    make_table(&writer).await;
    let hint = Path::from("iot/readings/metadata/version-hint.text");
    let store = writer.object_store();
    let opts = AppendOptions {
        batch_id: Some("b-1".into()),
        ..Default::default()
    };
    writer
        .append("iot.readings", vec![batch(4, 10, T0 + HOUR_US)], opts.clone())
        .await
        .unwrap();
    let read_hint = || async {
        let b = store.get(&hint).await.unwrap().bytes().await.unwrap();
        String::from_utf8(b.to_vec()).unwrap()
    };
    // (The hint is written after the append answered.)
    varve::settle_published().await;
    let newest = read_hint().await;
    store.put(&hint, bytes::Bytes::from("2").into()).await.unwrap();
    let duck = || {
        varve_testkit::duckdb_scan(&backend, "iot", "readings")
            .iter()
            .map(|b| b.num_rows())
            .sum::<usize>()
    };
    assert_eq!(duck(), 1440, "DuckDB follows the stale hint");
    // A fresh process retries the same batch: a duplicate, and the hint is repaired.
    let again = backend.open();
    let r = again
        .append("iot.readings", vec![batch(4, 10, T0 + HOUR_US)], opts)
        .await
        .unwrap();
    assert!(r.duplicate);
    varve::settle_published().await;
    assert_eq!(read_hint().await, newest);
    assert_eq!(duck(), 1480);
    // And a plain append in another fresh process, after the hint fell behind again.
    store.put(&hint, bytes::Bytes::from("2").into()).await.unwrap();
    backend
        .open()
        .append(
            "iot.readings",
            vec![batch(1, 1, T0 + 2 * HOUR_US)],
            AppendOptions::default(),
        )
        .await
        .unwrap();
    varve::settle_published().await;
    assert_eq!(duck(), 1481);
    // A reader repairs it too: after a writer was killed between its commit and its hint, the
    // next command of any kind (here a query in a fresh process) puts the hint right.
    let newest = read_hint().await;
    store.put(&hint, bytes::Bytes::from("2").into()).await.unwrap();
    assert_eq!(duck(), 1440);
    let r = backend.open().sql("SELECT count(*) FROM iot.readings").await.unwrap();
    assert_eq!(r.num_rows(), 1);
    varve::settle_published().await;
    assert_eq!(read_hint().await, newest);
    assert_eq!(duck(), 1481);
}

/// The head carries the footers (with page indexes) of the newest data files: a fresh process's
/// query of one series' hour in a file of several MiB reads the head, then only data.
#[tokio::test(flavor = "multi_thread")]
async fn a_fresh_selective_query_on_a_large_file_reads_no_footer() {
    fresh_selective_query_on_a_large_file(false).await;
}

/// The same when the file is a compaction's output (two appends, then `maintain`).
#[tokio::test(flavor = "multi_thread")]
async fn a_fresh_selective_query_on_a_compacted_file_reads_no_footer() {
    fresh_selective_query_on_a_large_file(true).await;
}

async fn fresh_selective_query_on_a_large_file(compacted: bool) {
    let backend = Backend::s3();
    let writer = backend.open();
    // Values that do not compress, so that the file is several MiB (the times take little room).
    let per_host = 80_000usize;
    let big = crate::read_ahead::readings(8, per_host);
    let schema = big.schema();
    let v = big.column(2).as_any().downcast_ref::<Float64Array>().unwrap();
    let expected_sum: f64 = (5 * 3600..6 * 3600).map(|i| v.value(2 * per_host + i)).sum();
    let contract = TableContract::time_series("ts").with_series_key(["host"]);
    writer.create_table("iot.readings", &schema, &contract).await.unwrap();
    if compacted {
        let half = big.num_rows() / 2;
        append(&writer, big.slice(half, half)).await;
        append(&writer, big.slice(0, half)).await;
        writer
            .maintain("iot.readings", &varve::MaintainOptions::default())
            .await
            .unwrap();
    } else {
        append(&writer, big).await;
    }
    let info = writer.info("iot.readings").await.unwrap();
    assert_eq!(info.live_files, 1);
    assert!(info.bytes > 3 << 20, "{info:?}");
    let header = head_header(&writer).await;
    assert!(
        header.contains("\"footer\""),
        "the head carries the new file's footer: {header}"
    );

    let (lake, counters) = fresh_counted(&backend);
    let sql = "SELECT count(*), sum(v) FROM iot.readings WHERE host = 'h2' \
               AND ts >= TIMESTAMP '2023-11-14 05:00:00Z' AND ts < TIMESTAMP '2023-11-14 06:00:00Z'";
    let (answer, r) = requests(&counters, lake.sql(sql)).await;
    eprintln!("selective query on a large file, fresh process: {r:?}");
    let answer = answer.unwrap();
    assert_eq!(rows(&answer.batches)[0][0], "3600");
    let sum = answer.batches[0]
        .column(1)
        .as_any()
        .downcast_ref::<Float64Array>()
        .unwrap()
        .value(0);
    assert!(
        (sum - expected_sum).abs() <= expected_sum.abs() * 1e-9,
        "{sum} vs {expected_sum}"
    );
    assert!(r.round_trips <= 2, "the head, then data: {r:?}");
}

/// A head passes on the footers it carries: a writer that loaded the table through the head (a
/// fresh process) carries the older file's footer along with its own file's, so a fresh query of
/// both files reads the head, then only data.
#[tokio::test(flavor = "multi_thread")]
async fn a_head_passes_on_the_footers_of_older_files() {
    let backend = Backend::s3();
    let per_host = 80_000usize;
    // Host-major rows: the first half is h0 to h3, the second h4 to h7; values that do not
    // compress, so that each file is about 2 MiB (more than a cache block).
    let big = crate::read_ahead::readings(8, per_host);
    let half = big.num_rows() / 2;
    let contract = TableContract::time_series("ts").with_series_key(["host"]);
    let first = backend.open();
    first
        .create_table("iot.readings", &big.schema(), &contract)
        .await
        .unwrap();
    append(&first, big.slice(0, half)).await;
    varve::settle().await;
    let second = backend.open();
    append(&second, big.slice(half, half)).await;
    let info = second.info("iot.readings").await.unwrap();
    assert_eq!(info.live_files, 2, "{info:?}");
    assert!(info.bytes > 3 << 20, "{info:?}");
    varve::settle().await;
    let header = head_header(&second).await;
    assert_eq!(header.matches("\"footer\"").count(), 2, "both files' footers: {header}");

    let (lake, counters) = fresh_counted(&backend);
    let sql = "SELECT host, count(*) FROM iot.readings WHERE host IN ('h3', 'h4') \
               AND ts >= TIMESTAMP '2023-11-14 05:00:00Z' AND ts < TIMESTAMP '2023-11-14 06:00:00Z' \
               GROUP BY host ORDER BY host";
    let (answer, r) = requests(&counters, lake.sql(sql)).await;
    eprintln!("selective query over two files, fresh process: {r:?}");
    let answer = answer.unwrap();
    assert_eq!(
        rows(&answer.batches),
        vec![
            vec!["3600".to_string(), "h3".to_string()],
            vec!["3600".to_string(), "h4".to_string()]
        ]
    );
    assert!(r.round_trips <= 2, "the head, then data: {r:?}");
}

/// A head that outlived its table (a late head write landing after a drop) is never taken for
/// the head of a new table of the same name, even at the same version with metadata of the same
/// size: the head records the e-tag of the metadata file it describes.
async fn a_dropped_tables_head_is_not_believed(backend: Backend) {
    let lake = backend.open();
    let schema = |key: &str| {
        Arc::new(Schema::new(vec![
            Field::new(
                "ts",
                DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
                false,
            ),
            Field::new(key, DataType::Utf8, false),
        ]))
    };
    let contract = |key: &str| TableContract::time_series("ts").with_series_key([key]);
    lake.create_table("iot.readings", &schema("host"), &contract("host"))
        .await
        .unwrap();
    let store = lake.object_store();
    let old_head = store.get(&Path::from(HEAD)).await.unwrap().bytes().await.unwrap();
    lake.drop_table("iot.readings").await.unwrap();
    // The same name, a column of the same length: `v1.metadata.json` of the same size.
    lake.create_table("iot.readings", &schema("node"), &contract("node"))
        .await
        .unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    store.put(&Path::from(HEAD), old_head.into()).await.unwrap();
    let fresh = backend.open();
    let columns: Vec<String> = fresh
        .describe("iot.readings")
        .await
        .unwrap()
        .schema
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect();
    assert_eq!(
        columns,
        ["ts", "node"],
        "the new table's columns, not the dropped one's"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_dropped_tables_head_is_not_believed_local() {
    a_dropped_tables_head_is_not_believed(Backend::local()).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_dropped_tables_head_is_not_believed_s3() {
    a_dropped_tables_head_is_not_believed(Backend::s3()).await;
}

/// A batch of `batch(hosts, per_host, start)`'s rows with one more column, `extra`.
fn with_extra(b: RecordBatch) -> RecordBatch {
    let mut fields: Vec<Field> = b.schema().fields().iter().map(|f| f.as_ref().clone()).collect();
    fields.push(Field::new("extra", DataType::Float64, true));
    let mut columns = b.columns().to_vec();
    columns.push(Arc::new(Float64Array::from(vec![1.5; b.num_rows()])));
    RecordBatch::try_new(Arc::new(Schema::new(fields)), columns).unwrap()
}

/// An append builds on the version its process saw last without asking (the check runs at once
/// with its uploads): when another process committed meanwhile, even one that added a column,
/// the append still commits on the newest version, every row once, and the history stays linear.
async fn appends_on_a_version_seen_long_ago(backend: Backend) {
    let a = backend.open();
    make_table(&a).await;
    append(&a, batch(4, 10, T0 + HOUR_US)).await;
    // Another process appends twice, the second time with a new column.
    let b = backend.open();
    append(&b, batch(4, 10, T0 + 2 * HOUR_US)).await;
    append(&b, with_extra(batch(4, 10, T0 + 3 * HOUR_US))).await;
    // The first process, on what it saw: an append with the column the other process added (its
    // schema change is then built on the newest metadata, not on what the process saw), and after
    // one more commit of the other process a plain append, whose first attempt is on an old version.
    append(&a, with_extra(batch(2, 5, T0 + 4 * HOUR_US))).await;
    append(&b, batch(1, 1, T0 + 5 * HOUR_US)).await;
    let r = a
        .append(
            "iot.readings",
            vec![batch(2, 5, T0 + 6 * HOUR_US)],
            AppendOptions::default(),
        )
        .await
        .unwrap();
    assert!(r.attempts >= 2, "the first attempt was on an older version: {r:?}");
    append(&b, batch(1, 1, T0 + 7 * HOUR_US)).await;
    append(&a, batch(1, 3, T0 + 8 * HOUR_US)).await;
    // A streaming append of two inputs, the second with a column nobody has written yet: the
    // first input's rows stay (nothing is reloaded once rows are pushed).
    append(&b, batch(1, 1, T0 + 9 * HOUR_US)).await;
    let mut streaming = a.appender("iot.readings", AppendOptions::default()).await.unwrap();
    streaming.push(batch(2, 4, T0 + 10 * HOUR_US)).await.unwrap();
    streaming.start_input();
    let b2 = batch(2, 3, T0 + 11 * HOUR_US);
    let mut fields: Vec<Field> = b2.schema().fields().iter().map(|f| f.as_ref().clone()).collect();
    fields.push(Field::new("extra2", DataType::Float64, true));
    let mut columns = b2.columns().to_vec();
    columns.push(Arc::new(Float64Array::from(vec![2.5; b2.num_rows()])));
    streaming
        .push(RecordBatch::try_new(Arc::new(Schema::new(fields)), columns).unwrap())
        .await
        .unwrap();
    let r = streaming.commit().await.unwrap();
    assert_eq!(r.rows, 14, "{r:?}");
    let fresh = backend.open();
    let n = fresh
        .sql("SELECT count(*) AS n, count(extra) AS e FROM iot.readings")
        .await
        .unwrap();
    let expected = 1440 + 40 + 40 + 40 + 10 + 1 + 10 + 1 + 3 + 1 + 14;
    // `rows` orders columns by name: e, n.
    assert_eq!(rows(&n.batches)[0], vec!["50".to_string(), expected.to_string()]);
    let d = fresh
        .sql("SELECT count(*) FROM (SELECT DISTINCT host, ts FROM iot.readings)")
        .await
        .unwrap();
    assert_eq!(rows(&d.batches)[0], vec![expected.to_string()]);
    let history = fresh.history("iot.readings").await.unwrap();
    for pair in history.windows(2) {
        assert_eq!(pair[1].parent_id, Some(pair[0].snapshot_id), "{history:?}");
    }
    varve::settle_published().await;
    let duck: usize = varve_testkit::duckdb_scan(&backend, "iot", "readings")
        .iter()
        .map(|b| b.num_rows())
        .sum();
    assert_eq!(duck, expected);
}

#[tokio::test(flavor = "multi_thread")]
async fn appends_on_a_version_seen_long_ago_local() {
    appends_on_a_version_seen_long_ago(Backend::local()).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn appends_on_a_version_seen_long_ago_s3() {
    appends_on_a_version_seen_long_ago(Backend::s3()).await;
}
