//! Fast paths on object storage, counted with the instrumented store on S3 (moto): a warm repeat of
//! a query within the version-check interval makes no request, after it one round trip checks the
//! version; the block cache returns the store's bytes under concurrent readers, refetches a damaged
//! disk block, and is shared by two lakes (processes) through its directory; a table another
//! process commits to is seen once the interval has passed, and at once by the committing process;
//! `ORDER BY ts DESC LIMIT k` opens only the newest files; a join with a small dimension table
//! reads only the fact table's files that hold its keys.

use std::sync::Arc;
use std::time::{Duration, Instant};

use arrow::array::{ArrayRef, Float64Array, RecordBatch, StringArray, TimestampMicrosecondArray};
use arrow::datatypes::{DataType, Field, Schema, TimeUnit};
use object_store::ObjectStoreExt;
use varve::{AppendOptions, Lake, TableContract};
use varve_testkit::store::{instrument, Counters, Latency, Requests};
use varve_testkit::{rows, Backend};

const HOUR_US: i64 = 3_600_000_000;
const T0: i64 = 1_700_000_000_000_000;

/// `hosts` series `h0..`, `per_host` rows each, 10 s apart from `start` (µs).
pub(crate) fn batch(hosts: usize, per_host: usize, start: i64) -> RecordBatch {
    let schema = Arc::new(Schema::new(vec![
        Field::new(
            "ts",
            DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            false,
        ),
        Field::new("host", DataType::Utf8, false),
        Field::new("v", DataType::Float64, true),
    ]));
    let (mut ts, mut host, mut v) = (vec![], vec![], vec![]);
    for h in 0..hosts {
        for i in 0..per_host {
            ts.push(start + i as i64 * 10_000_000);
            host.push(format!("h{h}"));
            v.push((h * 1000 + i) as f64);
        }
    }
    let columns: Vec<ArrayRef> = vec![
        Arc::new(TimestampMicrosecondArray::from(ts).with_timezone("UTC")),
        Arc::new(StringArray::from(host)),
        Arc::new(Float64Array::from(v)),
    ];
    RecordBatch::try_new(schema, columns).unwrap()
}

/// A lake on `backend` whose requests are counted, with Varve's `extra` options.
fn counted(backend: &Backend, extra: &[(&str, &str)]) -> (Lake, Arc<Counters>) {
    counted_with(backend, extra, Latency::default())
}

/// As [`counted`], each request delayed by `latency` (as a remote store's round trip).
pub(crate) fn counted_with(backend: &Backend, extra: &[(&str, &str)], latency: Latency) -> (Lake, Arc<Counters>) {
    let counters = Arc::new(Counters::default());
    let mut options = backend.options();
    for (k, v) in extra {
        options.insert(k.to_string(), v.to_string());
    }
    let c = counters.clone();
    let lake = Lake::open_with_store_layer(&backend.url(), &options, move |s| instrument(s, latency, c)).unwrap();
    (lake, counters)
}

async fn make_table(lake: &Lake) {
    let b = batch(4, 360, T0);
    let contract = TableContract::time_series("ts").with_series_key(["host"]);
    lake.create_table("iot.readings", &b.schema(), &contract).await.unwrap();
    lake.append("iot.readings", vec![b], AppendOptions::default())
        .await
        .unwrap();
}

/// Runs `f` and returns what it asked of the store.
pub(crate) async fn requests<F: std::future::Future>(counters: &Counters, f: F) -> (F::Output, Requests) {
    requests_excluding(counters, f, |_| false).await
}

/// [`requests`], with the round trips leaving out the requests for the objects `exclude` names
/// (`Counters::round_trips_since_excluding`).
pub(crate) async fn requests_excluding<F: std::future::Future>(
    counters: &Counters,
    f: F,
    exclude: impl Fn(&str) -> bool,
) -> (F::Output, Requests) {
    let before = counters.snapshot();
    let since = Instant::now();
    let out = f.await;
    (out, counters.since_excluding(&before, since, exclude))
}

const SELECTIVE: &str = "SELECT ts, v FROM iot.readings WHERE host = 'h2' AND ts >= TIMESTAMP '2023-11-14 22:13:20Z' \
     AND ts < TIMESTAMP '2023-11-14 22:43:20Z' ORDER BY ts";

#[tokio::test(flavor = "multi_thread")]
async fn warm_repeats_ask_nothing_within_the_version_check_interval() {
    let backend = Backend::s3();
    make_table(&backend.open()).await;
    // A fresh process, 20 ms per request (the round trips are then plain to see: requests made
    // at once overlap).
    let latency = Latency {
        delay_ms: 20.0,
        bandwidth: None,
    };
    let (lake, counters) = counted_with(&backend, &[("version-check-interval", "3s")], latency);
    let (cold, first) = requests(&counters, lake.sql(SELECTIVE)).await;
    let cold = cold.unwrap();
    assert_eq!(cold.num_rows(), 180);
    eprintln!("selective query, cold: {first:?}");
    // The head object with the metadata versions and the hint, at once; the data.
    assert!(first.round_trips <= 2, "{first:?}");
    let (warm, second) = requests(&counters, lake.sql(SELECTIVE)).await;
    assert_eq!(rows(&warm.unwrap().batches), rows(&cold.batches));
    assert_eq!(
        second.total(),
        0,
        "a warm repeat within the interval asks nothing: {second:?}"
    );
    let (latest, third) = requests(&counters, lake.latest("iot.readings")).await;
    assert_eq!(latest.unwrap().num_rows(), 4);
    eprintln!("latest after the query: {third:?}");
    let (_, fourth) = requests(&counters, lake.latest("iot.readings")).await;
    assert_eq!(fourth.total(), 0, "a warm latest asks nothing: {fourth:?}");
    // Past the interval: one round trip asks whether the version is still the newest.
    tokio::time::sleep(Duration::from_millis(3100)).await;
    let (again, fifth) = requests(&counters, lake.sql(SELECTIVE)).await;
    assert_eq!(rows(&again.unwrap().batches), rows(&cold.batches));
    assert_eq!(fifth.round_trips, 1, "after the interval, one round trip: {fifth:?}");
    assert_eq!(fifth.get + fifth.ranged_get, 0, "and no data is read again: {fifth:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_commit_is_seen_at_once_by_its_process_and_after_the_interval_by_others() {
    let backend = Backend::s3();
    let writer = backend.open();
    make_table(&writer).await;
    let mut options = backend.options();
    options.insert("version-check-interval".into(), "1s".into());
    let reader = Lake::open(&backend.url(), &options).unwrap();
    let count = |lake: Lake| async move {
        let r = lake.sql("SELECT count(*) AS n FROM iot.readings").await.unwrap();
        rows(&r.batches)[0][0].clone()
    };
    assert_eq!(count(reader.clone()).await, "1440");
    writer
        .append(
            "iot.readings",
            vec![batch(4, 10, T0 + HOUR_US)],
            AppendOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(
        count(writer.clone()).await,
        "1480",
        "the writer sees its commit at once"
    );
    let stale = count(reader.clone()).await;
    assert!(stale == "1440" || stale == "1480", "{stale}");
    tokio::time::sleep(Duration::from_millis(1100)).await;
    assert_eq!(
        count(reader.clone()).await,
        "1480",
        "after the interval the reader sees it"
    );
    // With the interval at 0 every statement asks.
    let mut options = backend.options();
    options.insert("version-check-interval".into(), "0s".into());
    let eager = Lake::open(&backend.url(), &options).unwrap();
    assert_eq!(count(eager.clone()).await, "1480");
    writer
        .append(
            "iot.readings",
            vec![batch(1, 5, T0 + 2 * HOUR_US)],
            AppendOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(count(eager).await, "1485");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_block_cache_returns_the_stores_bytes_to_concurrent_readers() {
    let backend = Backend::s3();
    let lake = backend.open();
    // Several row groups and files, so that reads cut blocks at many places.
    let b = batch(50, 4000, T0);
    let contract = TableContract::time_series("ts").with_series_key(["host"]);
    lake.create_table("iot.big", &b.schema(), &contract).await.unwrap();
    lake.append("iot.big", vec![b], AppendOptions::default()).await.unwrap();
    let plain = {
        let mut o = backend.options();
        o.insert("cache".into(), "off".into());
        Lake::open(&backend.url(), &o).unwrap()
    };
    let sql =
        "SELECT host, count(*) AS n, sum(v) AS s, min(ts) AS a, max(ts) AS b FROM iot.big GROUP BY host ORDER BY host";
    let expected = rows(&plain.sql(sql).await.unwrap().batches);
    assert_eq!(plain.cache_stats(), varve::CacheStats::default());
    let (lake, _) = counted(&backend, &[("cache-memory-bytes", "4MiB")]);
    let mut readers = Vec::new();
    for _ in 0..6 {
        let lake = lake.clone();
        readers.push(tokio::spawn(async move { rows(&lake.sql(sql).await.unwrap().batches) }));
    }
    for r in readers {
        assert_eq!(r.await.unwrap(), expected);
    }
    let stats = lake.cache_stats();
    assert!(stats.misses > 0 && stats.requests > 0, "{stats:?}");
    assert!(stats.memory_bytes <= 4 << 20, "the memory bound holds: {stats:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_disk_cache_is_shared_and_a_damaged_block_is_fetched_again() {
    let backend = Backend::s3();
    make_table(&backend.open()).await;
    let dir = tempfile::tempdir().unwrap();
    let dir_text = dir.path().display().to_string();
    let options: Vec<(&str, &str)> = vec![("cache-dir", dir_text.as_str())];
    let sql = "SELECT host, count(*) AS n, sum(v) AS s FROM iot.readings GROUP BY host ORDER BY host";
    let (first, _) = counted(&backend, &options);
    let expected = rows(&first.sql(sql).await.unwrap().batches);
    let s1 = first.cache_stats();
    assert!(s1.misses > 0 && s1.disk_bytes > 0, "{s1:?}");
    // A second process finds the blocks on disk and fetches no data.
    let (second, counters) = counted(&backend, &options);
    let (got, asked) = requests(&counters, second.sql(sql)).await;
    assert_eq!(rows(&got.unwrap().batches), expected);
    let s2 = second.cache_stats();
    assert!(s2.disk_hits > 0 && s2.misses == 0, "{s2:?}");
    assert_eq!(asked.ranged_get, 0, "{asked:?}");
    // Damage every block on disk: a third process notices, fetches them again, and answers right.
    let mut damaged = 0;
    for entry in std::fs::read_dir(dir.path()).unwrap() {
        let path = entry.unwrap().path();
        let mut bytes = std::fs::read(&path).unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 0x5a;
        std::fs::write(&path, bytes).unwrap();
        damaged += 1;
    }
    assert!(damaged > 0);
    let (third, _) = counted(&backend, &options);
    assert_eq!(rows(&third.sql(sql).await.unwrap().batches), expected);
    let s3 = third.cache_stats();
    assert!(s3.corrupt_blocks > 0 && s3.misses > 0, "{s3:?}");
    // The refetched blocks are whole again.
    let (fourth, _) = counted(&backend, &options);
    assert_eq!(rows(&fourth.sql(sql).await.unwrap().batches), expected);
    assert_eq!(fourth.cache_stats().corrupt_blocks, 0);
}

/// Reads through the block cache equal the store's bytes for every range of a data file, across
/// block edges, from many tasks at once.
#[tokio::test(flavor = "multi_thread")]
async fn cached_ranges_equal_the_stores() {
    let backend = Backend::s3();
    let lake = backend.open();
    // Values that do not compress, so that the file spans several blocks.
    let mut b = batch(40, 5000, T0);
    let mut rng = varve_testkit::Rng(7);
    let noise: Vec<f64> = (0..b.num_rows()).map(|_| rng.next(1 << 52) as f64).collect();
    let mut columns = b.columns().to_vec();
    columns[2] = Arc::new(Float64Array::from(noise));
    b = RecordBatch::try_new(b.schema(), columns).unwrap();
    let contract = TableContract::time_series("ts").with_series_key(["host"]);
    lake.create_table("iot.raw", &b.schema(), &contract).await.unwrap();
    lake.append("iot.raw", vec![b], AppendOptions::default()).await.unwrap();
    // The store under the cache, and the cache over it, as the lake's layer sees them.
    let slot: Arc<std::sync::Mutex<Option<Arc<dyn object_store::ObjectStore>>>> = Default::default();
    let keep = slot.clone();
    let cached = Lake::open_with_store_layer(&backend.url(), &backend.options(), move |s| {
        *keep.lock().unwrap() = Some(s.clone());
        s
    })
    .unwrap();
    let raw = slot.lock().unwrap().clone().unwrap();
    let files: Vec<object_store::ObjectMeta> = {
        use futures::TryStreamExt;
        raw.list(Some(&object_store::path::Path::from("iot/raw/data")))
            .try_collect()
            .await
            .unwrap()
    };
    let file = files.iter().max_by_key(|m| m.size).unwrap().clone();
    assert!(file.size > 1 << 20, "the file spans blocks: {} bytes", file.size);
    let whole = raw.get(&file.location).await.unwrap().bytes().await.unwrap();
    let through = cached.object_store();
    let mut tasks = Vec::new();
    for k in 0..16u64 {
        let (store, location, whole) = (through.clone(), file.location.clone(), whole.clone());
        let size = file.size;
        tasks.push(tokio::spawn(async move {
            let mut rng = varve_testkit::Rng(k + 1);
            for _ in 0..40 {
                let a = rng.next(size);
                let len = rng.next((3 << 20).min(size - a) + 1);
                // Small ranges too, inside and across blocks.
                let s = rng.next(size);
                let ranges = [
                    a..a + len,
                    (size - len.min(size))..size,
                    ((1 << 20) - 3).min(size - 1)..(1 << 20).min(size),
                    s..(s + 1 + rng.next(20_000)).min(size),
                ];
                let got = store.get_ranges(&location, &ranges).await.unwrap();
                for (r, g) in ranges.iter().zip(got) {
                    assert_eq!(g.as_ref(), &whole[r.start as usize..r.end as usize], "range {r:?}");
                }
                let one = store.get_range(&location, a..a + len).await.unwrap();
                assert_eq!(one.as_ref(), &whole[a as usize..(a + len) as usize]);
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    let whole_again = through.get(&file.location).await.unwrap().bytes().await.unwrap();
    assert_eq!(whole_again, whole);
}

/// `ORDER BY ts DESC LIMIT k` reads the newest files first and skips those that cannot hold a
/// newer row than the k it has (DataFusion's TopK threshold against each file's bounds), with
/// and without a filter (applied in the scan: `filter-pushdown=auto` is on for local lakes, and on S3 for `ORDER BY ... LIMIT`); the
/// answers equal a plain sort of the rows written.
#[tokio::test(flavor = "multi_thread")]
async fn newest_first_scans_skip_older_files_local() {
    newest_first_scans_skip_older_files(Backend::local()).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn newest_first_scans_skip_older_files_s3() {
    newest_first_scans_skip_older_files(Backend::s3()).await;
}

async fn newest_first_scans_skip_older_files(backend: Backend) {
    // The Parquet scan's skipping, which the small files of this test would otherwise bypass
    // (they are read from their decoded rows: `small_files`).
    let mut options = backend.options();
    options.insert("cache-decoded-bytes".into(), "0".into());
    let lake = varve::Lake::open(&backend.url(), &options).unwrap();
    let contract = TableContract::time_series("ts").with_series_key(["host"]);
    let first = batch(3, 50, T0);
    lake.create_table("iot.days", &first.schema(), &contract).await.unwrap();
    let mut props = std::collections::HashMap::new();
    props.insert("varve.auto-maintain".to_string(), "false".to_string());
    lake.set_properties("iot.days", &props, &[]).await.unwrap();
    // Twelve appends, one day each (one file each), in a shuffled order.
    let mut written: Vec<Row> = Vec::new();
    for day in [5i64, 0, 11, 3, 8, 1, 10, 2, 7, 4, 9, 6] {
        let b = batch(3, 50, T0 + day * 24 * HOUR_US);
        written.extend(batch_rows(&b));
        lake.append("iot.days", vec![b], AppendOptions::default())
            .await
            .unwrap();
    }
    assert_eq!(lake.info("iot.days").await.unwrap().live_files, 12);
    // The rows as `rows` prints them (columns by name, rows sorted: the set of the k newest).
    let as_rows = |picked: &[&Row]| {
        let columns: Vec<ArrayRef> = vec![
            Arc::new(
                TimestampMicrosecondArray::from(picked.iter().map(|r| r.0).collect::<Vec<_>>()).with_timezone("UTC"),
            ),
            Arc::new(StringArray::from(
                picked.iter().map(|r| r.1.clone()).collect::<Vec<_>>(),
            )),
            Arc::new(Float64Array::from(picked.iter().map(|r| r.2).collect::<Vec<_>>())),
        ];
        rows(&[RecordBatch::try_new(first.schema(), columns).unwrap()])
    };
    // The reference: a plain sort, newest first, ties by host.
    let mut newest = written.clone();
    newest.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    type Row = (i64, String, f64);
    let cases: Vec<(&str, Vec<&Row>)> = vec![
        (
            "SELECT ts, host, v FROM iot.days ORDER BY ts DESC, host LIMIT 7",
            newest.iter().take(7).collect(),
        ),
        (
            "SELECT ts, host, v FROM iot.days WHERE host = 'h1' ORDER BY ts DESC, host LIMIT 3",
            newest.iter().filter(|r| r.1 == "h1").take(3).collect(),
        ),
    ];
    for (sql, expected) in cases {
        let got = rows(&lake.sql(sql).await.unwrap().batches);
        assert_eq!(got, as_rows(&expected), "{sql}");
        // The scan opened fewer files than it was given.
        let plan = lake.sql(&format!("EXPLAIN ANALYZE {sql}")).await.unwrap();
        let plan = rows(&plan.batches).concat().join("\n");
        let metric = plan
            .split("files_ranges_pruned_statistics=")
            .nth(1)
            .unwrap_or_else(|| panic!("no file pruning metric in\n{plan}"));
        let numbers: Vec<u64> = metric
            .split(|c: char| !c.is_ascii_digit())
            .filter(|s| !s.is_empty())
            .take(2)
            .map(|s| s.parse().unwrap())
            .collect();
        // The days do not overlap: one partition reads the files newest first, one after the
        // other (`query::file_order`), and the newest file's rows rule out the rest by their
        // bounds before they are opened.
        assert!(plan.contains("file_groups={1 group"), "{plan}");
        assert_eq!(numbers[0], 12, "{plan}");
        assert!(
            numbers[1] == 1,
            "{sql}: files opened {} of {}:\n{plan}",
            numbers[1],
            numbers[0]
        );
    }

    // Two files, one per partition, whose scan declares their order (one series' rows by time).
    // Newest first (against the declared order, a sort above): read one after the other all the
    // same, the order dropped. Oldest first (the declared order): DataFusion merges the files'
    // first rows, each scan with the limit, and needs no sort.
    lake.create_table("iot.two", &first.schema(), &contract).await.unwrap();
    lake.set_properties("iot.two", &props, &[]).await.unwrap();
    let mut two: Vec<Row> = Vec::new();
    for day in [0i64, 1] {
        let b = batch(3, 50, T0 + day * 24 * HOUR_US);
        two.extend(batch_rows(&b));
        lake.append("iot.two", vec![b], AppendOptions::default()).await.unwrap();
    }
    let plan = lake
        .sql("EXPLAIN SELECT ts, v FROM iot.two WHERE host = 'h1'")
        .await
        .unwrap();
    let plan = rows(&plan.batches).concat().join("\n");
    assert!(
        plan.contains("2 groups") && plan.contains("output_ordering=["),
        "{plan}"
    );
    let mut h1: Vec<&Row> = two.iter().filter(|r| r.1 == "h1").collect();
    h1.sort_by_key(|r| r.0);
    let oldest: Vec<&Row> = h1.iter().take(3).copied().collect();
    let newest: Vec<&Row> = h1.iter().rev().take(3).copied().collect();
    for (sql, expected, one_group) in [
        (
            "SELECT ts, host, v FROM iot.two WHERE host = 'h1' ORDER BY ts DESC LIMIT 3",
            newest,
            true,
        ),
        (
            "SELECT ts, host, v FROM iot.two WHERE host = 'h1' ORDER BY ts LIMIT 3",
            oldest,
            false,
        ),
    ] {
        let got = rows(&lake.sql(sql).await.unwrap().batches);
        assert_eq!(got, as_rows(&expected), "{sql}");
        let plan = lake.sql(&format!("EXPLAIN ANALYZE {sql}")).await.unwrap();
        let plan = rows(&plan.batches).concat().join("\n");
        if !one_group {
            assert!(plan.contains("limit=3, output_ordering=[ts@0 ASC"), "{sql}\n{plan}");
            continue;
        }
        assert!(plan.contains("file_groups={1 group"), "{sql}\n{plan}");
        // (DataFusion counts a file its bounds rule out when its turn comes as opened, though
        // nothing of it is read: the pruning metric says how many were read.)
        assert!(
            plan.contains("files_ranges_pruned_statistics=2 total → 1 matched"),
            "{sql}\n{plan}"
        );
    }
}

/// The rows of a `batch` (`ts`, `host`, `v`) as tuples.
fn batch_rows(b: &RecordBatch) -> Vec<(i64, String, f64)> {
    let ts = b
        .column(0)
        .as_any()
        .downcast_ref::<TimestampMicrosecondArray>()
        .unwrap();
    let host = b.column(1).as_any().downcast_ref::<StringArray>().unwrap();
    let v = b.column(2).as_any().downcast_ref::<Float64Array>().unwrap();
    (0..b.num_rows())
        .map(|i| (ts.value(i), host.value(i).to_string(), v.value(i)))
        .collect()
}

/// Creates `table` (inline maintenance off) with one append per host, `host00`, `host01`, ..., each
/// of `per_host` rows from `T0`, 10 s apart.
async fn one_append_per_host(lake: &Lake, table: &str, hosts: usize, per_host: usize) {
    let contract = TableContract::time_series("ts").with_series_key(["host"]);
    lake.create_table(table, &batch(1, 1, T0).schema(), &contract)
        .await
        .unwrap();
    let props = std::collections::HashMap::from([("varve.auto-maintain".to_string(), "false".to_string())]);
    lake.set_properties(table, &props, &[]).await.unwrap();
    for h in 0..hosts {
        let b = batch(1, per_host, T0);
        let host: ArrayRef = Arc::new(StringArray::from(vec![format!("host{h:02}"); per_host]));
        let b = RecordBatch::try_new(b.schema(), vec![b.column(0).clone(), host, b.column(2).clone()]).unwrap();
        lake.append(table, vec![b], AppendOptions::default()).await.unwrap();
    }
}

/// An `IN` list longer than DataFusion's pruning takes (20 values) still prunes files by their
/// bounds, and the answer equals the same query's without pruning (a list of `OR`s).
#[tokio::test(flavor = "multi_thread")]
async fn long_in_lists_prune_files() {
    let backend = Backend::local();
    let lake = backend.open();
    // One file per host: host00 .. host29.
    one_append_per_host(&lake, "iot.hosts", 30, 5).await;
    let mut list: Vec<String> = (0..40).map(|i| format!("'absent{i}'")).collect();
    list.push("'host07'".into());
    list.push("'host21'".into());
    let sql = format!(
        "SELECT host, count(*) AS n FROM iot.hosts WHERE host IN ({}) GROUP BY host ORDER BY host",
        list.join(", ")
    );
    let got = rows(&lake.sql(&sql).await.unwrap().batches);
    let ors: Vec<String> = list.iter().map(|v| format!("host = {v}")).collect();
    let reference = format!(
        "SELECT host, count(*) AS n FROM iot.hosts WHERE ({}) OR false GROUP BY host ORDER BY host",
        ors.join(" OR ")
    );
    assert_eq!(got, rows(&lake.sql(&reference).await.unwrap().batches));
    assert_eq!(got.len(), 2);
    let plan = lake.sql(&format!("EXPLAIN ANALYZE {sql}")).await.unwrap();
    let plan = rows(&plan.batches).concat().join("\n");
    assert!(plan.contains("2 of 30 data files read"), "{plan}");
}

/// Within one file sorted by series, an `IN` list longer than DataFusion's pruning takes prunes
/// pages (`query::page_pruning`): a scan that applies filters row by row decodes only the listed
/// hosts' pages, and the answer equals the same query's as a list of `OR`s.
#[tokio::test(flavor = "multi_thread")]
async fn long_in_lists_prune_pages() {
    let backend = Backend::local();
    let lake = backend.open();
    let contract = TableContract::time_series("ts").with_series_key(["host"]);
    // 30 hosts of 2,048 rows in one file, in pages of 1,024 rows (the least parquet-rs writes):
    // each page holds one host.
    let b = batch(30, 2048, T0);
    lake.create_table("iot.paged", &b.schema(), &contract).await.unwrap();
    let mut props = std::collections::HashMap::new();
    props.insert("varve.page-rows".to_string(), "1".to_string());
    lake.set_properties("iot.paged", &props, &[]).await.unwrap();
    lake.append("iot.paged", vec![b], AppendOptions::default())
        .await
        .unwrap();
    let mut list: Vec<String> = (0..40).map(|i| format!("'absent{i}'")).collect();
    list.push("'h7'".into());
    list.push("'h21'".into());
    let sql = format!(
        "SELECT host, count(*) AS n, sum(v) AS s FROM iot.paged WHERE host IN ({}) GROUP BY host ORDER BY host",
        list.join(", ")
    );
    let got = rows(&lake.sql(&sql).await.unwrap().batches);
    let ors: Vec<String> = list.iter().map(|v| format!("host = {v}")).collect();
    let reference = format!(
        "SELECT host, count(*) AS n, sum(v) AS s FROM iot.paged WHERE ({}) OR false GROUP BY host ORDER BY host",
        ors.join(" OR ")
    );
    assert_eq!(got, rows(&lake.sql(&reference).await.unwrap().batches));
    assert_eq!(got.len(), 2);
    // The scan decodes the two hosts' pages (4,096 rows, and neighbours sharing a page of the
    // key column), not the file's 61,440 rows.
    let plan = lake.sql(&format!("EXPLAIN ANALYZE {sql}")).await.unwrap();
    let plan = rows(&plan.batches).concat().join("\n");
    let metric = |name: &str| -> f64 {
        let at = plan
            .find(&format!("{name}="))
            .unwrap_or_else(|| panic!("no {name} in {plan}"));
        let value = plan[at + name.len() + 1..].split([',', ']']).next().unwrap().trim();
        match value.strip_suffix(" K") {
            Some(k) => k.parse::<f64>().unwrap() * 1000.0,
            None => value.parse().unwrap(),
        }
    };
    assert_eq!(metric("pushdown_rows_matched"), 4100.0, "{plan}");
    assert!(metric("pushdown_rows_pruned") <= 8200.0, "{plan}");
}

/// A join with a small dimension table prunes the other side's files and row groups on object
/// storage: DataFusion's hash join pushes the keys it collected (their bounds, and an `IN` list of
/// up to 150 values) into the scan as a dynamic filter, which the scan's opener checks against
/// each file's column bounds and each row group's statistics before reading it.
#[tokio::test(flavor = "multi_thread")]
async fn a_join_on_a_dimension_table_prunes_the_fact_side() {
    let backend = Backend::s3();
    let lake = backend.open();
    // The fact table: one append per host, host00 .. host29, 2,000 rows each.
    one_append_per_host(&lake, "iot.facts", 30, 2000).await;
    let contract = TableContract::time_series("ts").with_series_key(["host"]);
    let b = batch(1, 5, T0);
    // The dimension table: each host with a value; v < 2 keeps two of them.
    lake.create_table("iot.dims", &b.schema(), &contract).await.unwrap();
    let hosts: Vec<String> = (0..30).map(|h| format!("host{h:02}")).collect();
    let b = batch(1, 30, T0);
    let v: ArrayRef = Arc::new(Float64Array::from(
        (0..30).map(|h| ((h * 7) % 30) as f64).collect::<Vec<_>>(),
    ));
    let dims = RecordBatch::try_new(
        b.schema(),
        vec![b.column(0).clone(), Arc::new(StringArray::from(hosts)), v],
    )
    .unwrap();
    lake.append("iot.dims", vec![dims], AppendOptions::default())
        .await
        .unwrap();
    let info = lake.info("iot.facts").await.unwrap();
    // Each host's rows span midnight: a file per host and day.
    assert_eq!(info.live_files, 60);

    let join = "SELECT f.host, count(*) AS n, sum(f.v) AS s FROM iot.facts f JOIN iot.dims d ON f.host = d.host \
                WHERE d.v < 2 GROUP BY f.host ORDER BY f.host";
    let listed = "SELECT host, count(*) AS n, sum(v) AS s FROM iot.facts WHERE host IN ('host00', 'host13') \
                  GROUP BY host ORDER BY host";
    let (lake, counters) = counted(&backend, &[("cache", "off")]);
    let (got, r) = requests(&counters, lake.sql(join)).await;
    let got = rows(&got.unwrap().batches);
    eprintln!("join: {r:?}, table {} bytes", info.bytes);
    assert_eq!(got, rows(&lake.sql(listed).await.unwrap().batches));
    assert_eq!(got.len(), 2);
    // The same data GETs as the query that names the two hosts, and one for the dimension table.
    let (fresh, counters) = counted(&backend, &[("cache", "off")]);
    let (_, direct) = requests(&counters, fresh.sql(listed)).await;
    eprintln!("listed: {direct:?}");
    assert_eq!(r.ranged_get, direct.ranged_get + 1, "join {r:?}, listed {direct:?}");
    let plan = lake.sql(&format!("EXPLAIN ANALYZE {join}")).await.unwrap();
    let plan = rows(&plan.batches).concat().join("\n");
    // The dynamic filter, and the files it ruled out as the scan opened them.
    assert!(plan.contains("predicate=DynamicFilter [ host@1 >= host00"), "{plan}");
    assert!(
        plan.contains("files_ranges_pruned_statistics=60 total → 4 matched"),
        "{plan}"
    );
}
