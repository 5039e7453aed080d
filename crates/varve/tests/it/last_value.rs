//! The last-value index (`index::last_value`) against a full scan: after every kind of commit
//! (appends in time order, late rows, last-write-wins replacements (of the newest rows too) and
//! duplicates within a batch,
//! deletes of a series' newest row and of a whole series, a column added, compaction, retention,
//! snapshot expiry) the index of the current snapshot, and of every earlier snapshot by time
//! travel, holds exactly the rows `row_number() OVER (PARTITION BY host ORDER BY ts DESC) = 1`
//! picks, on random data, on local disk and S3. `Lake::latest` answers from it, and EXPLAIN says so.
//! A filter on a column constant within each series (`site`, a host's) is answered from the index
//! only while no host has changed site, and always as a scan answers.

use std::collections::HashMap;
use std::sync::Arc;

use arrow::array::{ArrayRef, Float64Array, Int64Array, RecordBatch, StringArray, TimestampMicrosecondArray};
use arrow::datatypes::{DataType, Field, Schema, TimeUnit};
use varve::{AppendOptions, Dedup, Lake, MaintainOptions, TableContract};
use varve_testkit::{assert_readers_agree, Backend, Rng};

use crate::compaction::{rows_of, text_rows};

const MINUTE_US: i64 = 60_000_000;
const HOUR_US: i64 = 60 * MINUTE_US;
const DAY_US: i64 = 24 * HOUR_US;

fn schema() -> Arc<Schema> {
    Arc::new(Schema::new(vec![
        Field::new(
            "ts",
            DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            false,
        ),
        Field::new("host", DataType::Utf8, true),
        Field::new("v", DataType::Float64, true),
        Field::new("n", DataType::Int64, true),
        Field::new("site", DataType::Utf8, true),
    ]))
}

/// A host's site: `s<h mod 3>` (NULL for the NULL host), or `s9` for h5 once it has `moved`.
fn site_of(host: Option<&str>, moved: bool) -> Option<String> {
    let h: u32 = host?.trim_start_matches('h').parse().ok()?;
    Some(match (h, moved) {
        (5, true) => "s9".to_string(),
        _ => format!("s{}", h % 3),
    })
}

/// `rows` random rows for step `step` of 24: 8 hosts and a NULL one, times mostly in the step's
/// slice of the 10 days before `start` (on a 10-minute grid, so keys repeat), some late rows into
/// earlier slices; host h7 writes only in the first two days (retention later drops it whole).
/// Each host's site is [`site_of`] it (`moved`: h5's rows name another site).
fn random_batch(rng: &mut Rng, start: i64, step: i64, rows: usize) -> RecordBatch {
    random_batch_at(rng, start, step, rows, false)
}

fn random_batch_at(rng: &mut Rng, start: i64, step: i64, rows: usize, moved: bool) -> RecordBatch {
    let (mut ts, mut host, mut v, mut n, mut site) = (vec![], vec![], vec![], vec![], vec![]);
    for _ in 0..rows {
        let slice = match rng.next(6) {
            0 => rng.next(step as u64 + 1) as i64,
            _ => step,
        };
        let t = start - 10 * DAY_US + slice * 10 * HOUR_US + rng.next(60) as i64 * 10 * MINUTE_US;
        let h = rng.next(9);
        let name = match h {
            8 => None,
            7 if t >= start - 8 * DAY_US => Some("h0".to_string()),
            h => Some(format!("h{h}")),
        };
        ts.push(t);
        site.push(site_of(name.as_deref(), moved));
        host.push(name);
        v.push((rng.next(10) != 0).then(|| rng.next(1 << 16) as f64 / 8.0));
        n.push((rng.next(5) != 0).then(|| rng.next(1000) as i64));
    }
    let columns: Vec<ArrayRef> = vec![
        Arc::new(TimestampMicrosecondArray::from(ts).with_timezone("UTC")),
        Arc::new(StringArray::from(host)),
        Arc::new(Float64Array::from(v)),
        Arc::new(Int64Array::from(n)),
        Arc::new(StringArray::from(site)),
    ];
    RecordBatch::try_new(schema(), columns).unwrap()
}

/// The columns compared: every column for a last-write-wins table (one row per key), only the
/// key otherwise (two rows of one series at one time are both "the newest").
fn columns(t: &str) -> &'static str {
    match t {
        "lww" => "host, ts, v, n",
        _ => "host, ts",
    }
}

/// The index's rows at `snapshot` (the current one when `None`) and the full scan's.
async fn index_and_scan(lake: &Lake, t: &str, snapshot: Option<i64>) -> (Vec<String>, Vec<String>) {
    let cols = columns(t);
    let (indexed, as_of) = match snapshot {
        Some(id) => (
            format!("\"{t}@v={id}@last-values\""),
            format!(" FOR VERSION AS OF {id}"),
        ),
        None => (format!("\"{t}@last-values\""), String::new()),
    };
    let index = rows_of(lake, &format!("SELECT {cols} FROM {indexed} ORDER BY host")).await;
    let scan = rows_of(
        lake,
        &format!(
            "SELECT {cols} FROM (SELECT *, row_number() OVER (PARTITION BY host ORDER BY ts DESC) AS rn \
             FROM {t}{as_of}) WHERE rn = 1 ORDER BY host"
        ),
    )
    .await;
    (index, scan)
}

/// `sql` answers the rows of `reference`, in order; `case` names it in the failure.
async fn assert_same(lake: &Lake, sql: &str, reference: &str, case: &str) {
    let (got, want) = (rows_of(lake, sql).await, rows_of(lake, reference).await);
    assert!(got == want, "{case}: {got:?}\nreference {want:?}");
}

/// Whether the index answers a filter on `site` alone for `t` (at `as_of`, e.g. ` FOR VERSION AS
/// OF 5`, or now); when it does, `site` must be constant within every host, which a plain GROUP
/// BY checks.
async fn site_answered_by_index(lake: &Lake, t: &str, as_of: &str) -> bool {
    let sql = format!("SELECT host, max(ts) FROM {t}{as_of} WHERE site = 's1' GROUP BY host");
    let answered = from_index(lake, &sql).await;
    if answered {
        let varying = rows_of(
            lake,
            &format!("SELECT host FROM {t}{as_of} GROUP BY host HAVING count(DISTINCT coalesce(site, '-')) > 1"),
        )
        .await;
        assert!(
            varying.is_empty(),
            "{t}{as_of}: site claimed constant, but varies for {varying:?}"
        );
    }
    answered
}

async fn check(lake: &Lake, t: &str, what: &str) -> i64 {
    let (index, scan) = index_and_scan(lake, t, None).await;
    assert!(index == scan, "{t} after {what}: index {index:?}\nscan {scan:?}");
    // The newest rows by time, narrowed by the index to its first k series, against a window
    // over every row (which no rewrite touches).
    let cols = columns(t);
    for k in [1, 3, 7] {
        for order in ["ts DESC, host", "ts DESC, host DESC NULLS FIRST"] {
            assert_same(
                lake,
                &format!("SELECT {cols} FROM {t} ORDER BY {order} LIMIT {k}"),
                &format!(
                    "SELECT {cols} FROM (SELECT *, row_number() OVER (ORDER BY {order}) AS rn FROM {t}) \
                     WHERE rn <= {k} ORDER BY {order}"
                ),
                &format!("{t} after {what}, top {k} by {order}"),
            )
            .await;
        }
        assert_same(
            lake,
            &format!("SELECT {cols} FROM {t} WHERE host IN ('h1', 'h3') ORDER BY ts DESC, host LIMIT {k}"),
            &format!(
                "SELECT {cols} FROM (SELECT *, row_number() OVER (ORDER BY ts DESC, host) AS rn FROM {t} \
                 WHERE host IN ('h1', 'h3')) WHERE rn <= {k} ORDER BY ts DESC, host"
            ),
            &format!("{t} after {what}, top {k} of h1, h3"),
        )
        .await;
    }
    // The newest row of each series among the rows a filter on values keeps: the series whose
    // newest row passes come from the index, the others from the data files.
    // Filters on the site (constant per host until h5 moves) too, alone and with a value.
    for filter in [
        "v > 4000",
        "n IS NOT NULL AND host <> 'h2'",
        "v < 100 OR n > 990",
        "site = 's1'",
        "site IN ('s0', 's9') AND v > 4000",
        "site IS NULL OR n < 100",
    ] {
        assert_same(
            lake,
            &format!(
                "SELECT {cols} FROM (SELECT *, row_number() OVER (PARTITION BY host ORDER BY ts DESC) AS rn \
                 FROM {t} WHERE {filter}) WHERE rn = 1 ORDER BY host"
            ),
            &format!("SELECT DISTINCT ON (host) {cols} FROM {t} WHERE {filter} ORDER BY host, ts DESC"),
            &format!("{t} after {what}, newest where {filter}"),
        )
        .await;
        assert_same(
            lake,
            &format!("SELECT host, max(ts) FROM {t} WHERE {filter} GROUP BY host ORDER BY host"),
            &format!(
                "SELECT host, ts FROM (SELECT DISTINCT ON (host) host, ts FROM {t} WHERE {filter} \
                 ORDER BY host, ts DESC) ORDER BY host"
            ),
            &format!("{t} after {what}, max(ts) where {filter}"),
        )
        .await;
    }
    // Any scan with a filter on the site prunes by the site's hosts from the index: the same
    // rows as a filter the index cannot read (a volatile one, always true, is never used).
    for filter in ["site = 's1'", "site IN ('s0', 's9') AND v > 4000", "site IS NULL"] {
        let volatile = filter.replace("site", "(CASE WHEN random() < 2 THEN site END)");
        assert_same(
            lake,
            &format!("SELECT host, count(*), sum(n), max(ts) FROM {t} WHERE {filter} GROUP BY host ORDER BY host"),
            &format!("SELECT host, count(*), sum(n), max(ts) FROM {t} WHERE {volatile} GROUP BY host ORDER BY host"),
            &format!("{t} after {what}, rows where {filter}"),
        )
        .await;
    }
    let snapshot = lake.describe(t).await.unwrap().snapshot_id.unwrap();
    let explain = rows_of(lake, &format!("EXPLAIN SELECT * FROM \"{t}@last-values\"")).await;
    assert!(
        explain.iter().any(|l| l.contains("answered from the last-value index")),
        "{t} after {what}: {explain:?}"
    );
    snapshot
}

async fn last_value_index(backend: Backend) {
    let lake = backend.open();
    let start = chrono::Utc::now().timestamp_micros();
    for (t, dedup) in [("plain", Dedup::None), ("lww", Dedup::LastWriteWins)] {
        let mut contract = TableContract::time_series("ts").with_series_key(["host"]);
        contract.dedup = dedup;
        lake.create_table(t, &schema(), &contract).await.unwrap();
        let props: HashMap<String, String> = [("varve.auto-maintain", "false"), ("varve.min-snapshots", "1000")]
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        lake.set_properties(t, &props, &[]).await.unwrap();

        let mut rng = Rng(0x2545_F491_4F6C_DD1D ^ t.len() as u64);
        let mut snapshots = vec![check_empty(&lake, t).await];
        for step in 0..24i64 {
            let what = match (step, rng.next(7)) {
                (16, _) => {
                    // Host h5 moves to another site: `site` is no longer constant per host.
                    let a = random_batch_at(&mut rng, start, step, 200, true);
                    lake.append(t, vec![a], AppendOptions::default()).await.unwrap();
                    "h5 moved".to_string()
                }
                (20, _) => {
                    // Its rows gone, the rebuilt index finds `site` constant again.
                    lake.sql(&format!("DELETE FROM {t} WHERE host = 'h5'")).await.unwrap();
                    "delete of the moved series h5".to_string()
                }
                (12, _) => {
                    lake.sql(&format!("ALTER TABLE {t} ADD COLUMN note VARCHAR"))
                        .await
                        .unwrap();
                    "a column added".to_string()
                }
                (0..=2, _) | (_, 0..=2) => {
                    // Two batches in one append: the second's rows replace the first's on ties.
                    let rows = 50 + rng.next(300) as usize;
                    let a = random_batch(&mut rng, start, step, rows);
                    let b = random_batch(&mut rng, start, step, rows / 3);
                    lake.append(t, vec![a, b], AppendOptions::default()).await.unwrap();
                    format!("append {step}")
                }
                (_, 3) => {
                    // The newest row of a series goes.
                    let h = format!("h{}", rng.next(7));
                    let newest = rows_of(&lake, &format!("SELECT max(ts) FROM {t} WHERE host = '{h}'")).await;
                    if newest[0].is_empty() {
                        continue;
                    }
                    lake.sql(&format!("DELETE FROM {t} WHERE host = '{h}' AND ts >= '{}'", newest[0]))
                        .await
                        .unwrap();
                    format!("delete of {h}'s newest row")
                }
                (_, 5) => {
                    // The newest row of every series written again with another value: the later
                    // write at the same time replaces the entry (last-write-wins replaces the row).
                    let again = lake
                        .sql(&format!(
                            "SELECT ts, host, v + 1 AS v, n, site FROM \"{t}@last-values\""
                        ))
                        .await
                        .unwrap();
                    lake.append(t, again.batches, AppendOptions::default()).await.unwrap();
                    "the newest rows written again".to_string()
                }
                (_, 4) => {
                    let h = format!("h{}", rng.next(7));
                    lake.sql(&format!("DELETE FROM {t} WHERE host = '{h}'")).await.unwrap();
                    format!("delete of series {h}")
                }
                _ => {
                    let opts = MaintainOptions {
                        expire: false,
                        orphans: false,
                        ..Default::default()
                    };
                    lake.maintain(t, &opts).await.unwrap();
                    "compaction".to_string()
                }
            };
            let id = check(&lake, t, &what).await;
            let answered = site_answered_by_index(&lake, t, "").await;
            match step {
                0..16 | 20.. => assert!(answered, "{t} after {what}: site not answered by the index"),
                _ => assert!(!answered, "{t} after {what}: site answered by the index after h5 moved"),
            }
            if snapshots.last() != Some(&Some(id)) {
                snapshots.push(Some(id));
            }
        }
        // Retention: the oldest days go (and with them series h7), in queries at once and from
        // the files when maintenance runs.
        let mut props = HashMap::new();
        props.insert("varve.retention".to_string(), "7d".to_string());
        lake.set_properties(t, &props, &[]).await.unwrap();
        check(&lake, t, "retention set").await;
        lake.maintain(t, &MaintainOptions::default()).await.unwrap();
        let id = check(&lake, t, "retention").await;
        let hosts = rows_of(&lake, &format!("SELECT DISTINCT host FROM \"{t}@last-values\"")).await;
        assert!(
            !hosts.iter().any(|h| h == "h7"),
            "{t}: h7 is past the retention: {hosts:?}"
        );
        snapshots.push(Some(id));

        // Every earlier snapshot's index answers as a scan of that snapshot does.
        assert!(snapshots.len() > 15, "{t}: {} snapshots", snapshots.len());
        for s in snapshots.iter().flatten() {
            let (index, scan) = index_and_scan(&lake, t, Some(*s)).await;
            assert!(index == scan, "{t} at snapshot {s}: index {index:?}\nscan {scan:?}");
            let as_of = format!(" FOR VERSION AS OF {s}");
            site_answered_by_index(&lake, t, &as_of).await;
            let cols = columns(t);
            assert_same(
                &lake,
                &format!(
                    "SELECT {cols} FROM (SELECT *, row_number() OVER (PARTITION BY host ORDER BY ts DESC) AS rn \
                     FROM {t}{as_of} WHERE site = 's2') WHERE rn = 1 ORDER BY host"
                ),
                &format!("SELECT DISTINCT ON (host) {cols} FROM {t}{as_of} WHERE site = 's2' ORDER BY host, ts DESC"),
                &format!("{t} at snapshot {s}, newest where site = 's2'"),
            )
            .await;
        }

        // `latest` reads the index: the newest row of every series, all columns.
        let latest = text_rows(&lake.latest(t).await.unwrap().batches);
        let scan = rows_of(
            &lake,
            &format!(
                "SELECT * EXCLUDE (rn) FROM (SELECT *, row_number() OVER (PARTITION BY host ORDER BY ts DESC) AS rn \
                 FROM {t}) WHERE rn = 1 ORDER BY host"
            ),
        )
        .await;
        assert_eq!(latest.len(), scan.len(), "{t}: latest");
        if t == "lww" {
            assert_eq!(latest, scan, "{t}: latest");
        }

        // Expiry keeps the current index and deletes the others once no snapshot names them.
        let mut props = HashMap::new();
        props.insert("varve.min-snapshots".to_string(), "1".to_string());
        props.insert("varve.snapshot-retention".to_string(), "0s".to_string());
        lake.set_properties(t, &props, &[]).await.unwrap();
        let opts = MaintainOptions {
            orphan_age: std::time::Duration::ZERO,
            ..Default::default()
        };
        lake.maintain(t, &opts).await.unwrap();
        check(&lake, t, "expiry").await;
        let indexes = crate::maintain::objects(&backend, t)
            .await
            .into_iter()
            .filter(|n| n.starts_with("metadata/last-value-"))
            .count();
        assert_eq!(indexes, 1, "{t}: one index file left after expiry");
        // Plain Iceberg readers ignore the index (and the retention, which only Varve applies
        // to rows of files still live: unset for the comparison).
        lake.set_properties(t, &HashMap::new(), &["varve.retention".to_string()])
            .await
            .unwrap();
        check(&lake, t, "retention unset").await;
        assert_readers_agree(&lake, &backend, "default", t).await;
    }
}

/// A table with no snapshot has no rows to index: the index of no snapshot reads as empty.
async fn check_empty(lake: &Lake, t: &str) -> Option<i64> {
    let r = lake.latest(t).await.unwrap();
    assert_eq!(r.num_rows(), 0);
    None
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn last_value_index_matches_a_scan_on_local_disk() {
    last_value_index(Backend::local()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn last_value_index_matches_a_scan_on_s3() {
    last_value_index(Backend::s3()).await;
}

/// Whether EXPLAIN of `sql` says the last-value index answered.
async fn from_index(lake: &Lake, sql: &str) -> bool {
    let explain = rows_of(lake, &format!("EXPLAIN {sql}")).await;
    let notes: Vec<&String> = explain.iter().filter(|l| l.starts_with("varve_pruning")).collect();
    assert!(!notes.is_empty(), "{sql}: {explain:?}");
    notes.iter().all(|l| l.contains("answered from the last-value index"))
}

/// SQL that asks for the newest row of each series reads the index (EXPLAIN says so) and answers
/// as a plain scan does (`DISTINCT ON`, which is never rewritten); SQL whose filters or aggregates
/// need the raw rows is left alone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn newest_row_queries_read_the_index() {
    let backend = Backend::local();
    let lake = backend.open();
    let contract = TableContract::time_series("ts").with_series_key(["host"]);
    lake.create_table("m", &schema(), &contract).await.unwrap();
    let start = chrono::Utc::now().timestamp_micros();
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut first = None;
    for step in 0..6 {
        // Unique times per row, so that "the newest row" is one row.
        let mut b = random_batch(&mut rng, start, step, 200);
        let ts: Vec<i64> = (0..b.num_rows() as i64)
            .map(|i| start - 10 * DAY_US + step * HOUR_US + (rng.next(1_000_000) as i64) * 1000 + i)
            .collect();
        let mut columns = b.columns().to_vec();
        columns[0] = Arc::new(TimestampMicrosecondArray::from(ts).with_timezone("UTC"));
        b = RecordBatch::try_new(schema(), columns).unwrap();
        let r = lake.append("m", vec![b], AppendOptions::default()).await.unwrap();
        first.get_or_insert(r.snapshot_id.unwrap());
    }
    let rn = |inner: &str| {
        format!(
            "SELECT host, ts, v, n FROM (SELECT *, row_number() OVER (PARTITION BY host ORDER BY ts DESC) AS rn \
             FROM {inner}) t WHERE rn = 1 ORDER BY host"
        )
    };
    let distinct =
        |inner: &str| format!("SELECT DISTINCT ON (host) host, ts, v, n FROM {inner} ORDER BY host, ts DESC");
    let first = first.unwrap();
    let cases = [
        (rn("m"), distinct("m"), true),
        (
            rn("m WHERE host IN ('h1', 'h3')"),
            distinct("m WHERE host IN ('h1', 'h3')"),
            true,
        ),
        (
            rn(&format!("m FOR VERSION AS OF {first}")),
            distinct(&format!("m FOR VERSION AS OF {first}")),
            true,
        ),
        // A filter on a column constant within each series (a host's site) keeps or drops whole
        // series: answered from the index.
        (rn("m WHERE site = 's1'"), distinct("m WHERE site = 's1'"), true),
        (
            rn("m WHERE site IN ('s0', 's2') AND host <> 'h3'"),
            distinct("m WHERE site IN ('s0', 's2') AND host <> 'h3'"),
            true,
        ),
        // A filter on a value or on time may pick an older row: scanned.
        (rn("m WHERE v > 1000"), distinct("m WHERE v > 1000"), false),
        (
            rn(&format!("m WHERE ts < '{}'", chrono::DateTime::from_timestamp_micros(start - 9 * DAY_US).unwrap().to_rfc3339())),
            distinct(&format!("m WHERE ts < '{}'", chrono::DateTime::from_timestamp_micros(start - 9 * DAY_US).unwrap().to_rfc3339())),
            false,
        ),
        (
            "SELECT host, max(ts) AS newest FROM m GROUP BY host ORDER BY host".to_string(),
            "SELECT host, ts FROM (SELECT DISTINCT ON (host) host, ts FROM m ORDER BY host, ts DESC) ORDER BY host"
                .to_string(),
            true,
        ),
        (
            "SELECT host, last_value(v ORDER BY ts) AS v, first_value(n ORDER BY ts DESC) AS n FROM m \
             WHERE host <> 'h2' GROUP BY host ORDER BY host"
                .to_string(),
            "SELECT host, v, n FROM (SELECT DISTINCT ON (host) host, v, n FROM m WHERE host <> 'h2' ORDER BY host, ts DESC) \
             ORDER BY host"
                .to_string(),
            true,
        ),
        // IGNORE NULLS may reach past the newest row; a volatile filter samples rows: scanned.
        (
            "SELECT host, last_value(v ORDER BY ts) IGNORE NULLS AS v FROM m GROUP BY host ORDER BY host".to_string(),
            "SELECT host, last_value(v ORDER BY ts) IGNORE NULLS AS v FROM (SELECT * FROM m WHERE v IS NOT NULL) \
             GROUP BY host ORDER BY host"
                .to_string(),
            false,
        ),
        (
            "SELECT host, max(ts) FROM m WHERE random() < 2.0 GROUP BY host ORDER BY host".to_string(),
            "SELECT host, max(ts) FROM m GROUP BY host ORDER BY host".to_string(),
            false,
        ),
        // Another aggregate needs every row: scanned.
        (
            "SELECT host, max(ts), count(*) FROM m GROUP BY host ORDER BY host".to_string(),
            "SELECT host, max(ts), count(ts) FROM (SELECT * FROM m) GROUP BY host ORDER BY host".to_string(),
            false,
        ),
    ];
    for (sql, reference, indexed) in cases {
        assert_eq!(from_index(&lake, &sql).await, indexed, "{sql}");
        let (a, b) = (rows_of(&lake, &sql).await, rows_of(&lake, &reference).await);
        assert!(!a.is_empty(), "{sql}");
        assert_eq!(a, b, "{sql}");
    }
    // The newest rows by time read only the series the index puts first (EXPLAIN says so); with
    // another filter, or another sort key, the scan is left alone.
    let narrowed = |sql: String| {
        let lake = lake.clone();
        async move {
            let notes = rows_of(&lake, &format!("EXPLAIN {sql}")).await;
            notes.iter().any(|l| {
                l.contains("only the 3 series the last-value index puts first")
                    || l.contains("the 3 newest rows taken from the last-value index")
            })
        }
    };
    assert!(narrowed("SELECT * FROM m ORDER BY ts DESC LIMIT 3".into()).await);
    assert!(narrowed("SELECT host, v FROM m WHERE host <> 'h1' ORDER BY ts DESC, host LIMIT 3".into()).await);
    assert!(!narrowed("SELECT * FROM m WHERE v > 10 ORDER BY ts DESC LIMIT 3".into()).await);
    assert!(!narrowed("SELECT * FROM m ORDER BY ts DESC, v LIMIT 3".into()).await);
    assert!(!narrowed("SELECT * FROM m ORDER BY ts LIMIT 3".into()).await);
    // A narrowed scan keeps its files whole (DataFusion would split any file over the minimum
    // size into byte ranges, each opened and pruned on its own); other scans are still split.
    let session = lake.session(Default::default()).expect("session");
    // (DataFusion splits only scans of more rows than a batch.)
    for set in [
        "SET datafusion.optimizer.repartition_file_min_size = 1",
        "SET datafusion.execution.batch_size = 10",
    ] {
        session.sql(set).await.expect("set");
    }
    let split_files = |sql: String| {
        let session = &session;
        async move {
            let plan = text_rows(&session.sql(&format!("EXPLAIN {sql}")).await.expect("explain").batches).join("\n");
            let scan = plan
                .lines()
                .find(|l| l.contains("DataSourceExec"))
                .expect("a scan")
                .to_string();
            // A byte range reads `path:start..end`.
            scan.contains("..")
        }
    };
    // The first snapshot has one data file, which is split in two when not narrowed.
    assert!(
        !split_files(format!(
            "SELECT * FROM m FOR VERSION AS OF {first} ORDER BY ts DESC LIMIT 3"
        ))
        .await
    );
    assert!(split_files(format!("SELECT * FROM m FOR VERSION AS OF {first} ORDER BY ts LIMIT 3")).await);
    // With a filter on values, the series whose newest row passes it come from the index.
    let split = |sql: String| {
        let lake = lake.clone();
        async move {
            let notes = rows_of(&lake, &format!("EXPLAIN {sql}")).await;
            notes.iter().any(|l| l.contains("taken from the last-value index"))
        }
    };
    assert!(split(rn("m WHERE v > 1000")).await);
    // With a filter on the site too, only that site's hosts whose newest row fails the rest are
    // read; when the site's every host has its newest row passing, no data file is.
    let explain = |sql: String| {
        let lake = lake.clone();
        async move { rows_of(&lake, &format!("EXPLAIN {sql}")).await.join("\n") }
    };
    let notes = explain("SELECT count(*) FROM m WHERE site = 's1' AND v > 10".into()).await;
    assert!(
        notes.contains("the filter on series-constant columns keeps 3 series"),
        "{notes}"
    );
    let mixed = rn("m WHERE site = 's1' AND v > 7000");
    let notes = explain(mixed.clone()).await;
    assert!(notes.contains("data files read for the other series"), "{notes}");
    assert_eq!(
        rows_of(&lake, &mixed).await,
        rows_of(&lake, &distinct("m WHERE site = 's1' AND v > 7000")).await
    );
    let none_needed = rn("m WHERE site = 's1' AND ts > '1970-01-02T00:00:00Z'");
    let notes = explain(none_needed.clone()).await;
    assert!(
        notes.contains("0 of") && notes.contains("no data file needed for the other series"),
        "{notes}"
    );
    assert_eq!(
        rows_of(&lake, &none_needed).await,
        rows_of(&lake, &distinct("m WHERE site = 's1' AND ts > '1970-01-02T00:00:00Z'")).await
    );
    // `rn = 1` with a condition on the window's rows (high-load: the newest load above 90%).
    let high = "SELECT host, ts, v FROM (SELECT *, row_number() OVER (PARTITION BY host ORDER BY ts DESC) AS rn \
                FROM m WHERE n > 10) t WHERE rn = 1 AND v > 2000 ORDER BY host";
    assert!(split(high.into()).await);
    assert_eq!(
        rows_of(&lake, high).await,
        rows_of(
            &lake,
            "SELECT host, ts, v FROM (SELECT DISTINCT ON (host) host, ts, v FROM m WHERE n > 10 ORDER BY host, ts DESC) \
             WHERE v > 2000 ORDER BY host"
        )
        .await
    );
    let (mut a, mut b) = (
        rows_of(&lake, &format!("SELECT * FROM ({}) WHERE v > 2000", rn("m"))).await,
        rows_of(&lake, &format!("SELECT * FROM ({}) WHERE v > 2000", distinct("m"))).await,
    );
    a.sort();
    b.sort();
    assert_eq!(a, b);
    assert!(split("SELECT host, max(ts) FROM m WHERE n > 10 GROUP BY host".into()).await);
    assert!(!split(rn("m WHERE random() < 0.5")).await);
    // The index is read-only: a write to it is refused and the table keeps its rows.
    let rows = rows_of(&lake, "SELECT count(*) FROM m").await;
    for sql in [
        "DELETE FROM \"m@last-values\" WHERE host = 'h1'",
        "DELETE FROM \"m@last-values\"",
        "INSERT INTO \"m@last-values\" SELECT * FROM m LIMIT 1",
    ] {
        let e = lake.sql(sql).await.expect_err(sql);
        assert!(e.message().contains("read-only"), "{sql}: {e}");
    }
    assert_eq!(rows_of(&lake, "SELECT count(*) FROM m").await, rows);
}

/// The k newest rows come from the index alone while its k-th newest entry is later than every
/// row that is not an entry (the older-rows bound): after appends of a regular grid, a late row,
/// compaction and a delete; a row at the same time as a series' newest (a second reading of that
/// time) makes the index narrow the scan instead. Each answer equals a window over every row.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn newest_rows_by_time_from_the_index_alone() {
    let backend = Backend::local();
    let lake = backend.open();
    let contract = TableContract::time_series("ts").with_series_key(["host"]);
    lake.create_table("g", &schema(), &contract).await.unwrap();
    let props: HashMap<String, String> = [("varve.auto-maintain".to_string(), "false".to_string())].into();
    lake.set_properties("g", &props, &[]).await.unwrap();
    let start = 1_767_225_600_000_000i64; // 2026-01-01T00:00:00Z
                                          // `rows` as (host, seconds after start, v).
    let batch = |rows: &[(&str, i64, f64)]| {
        let columns: Vec<ArrayRef> = vec![
            Arc::new(
                TimestampMicrosecondArray::from(rows.iter().map(|r| start + r.1 * 1_000_000).collect::<Vec<_>>())
                    .with_timezone("UTC"),
            ),
            Arc::new(StringArray::from(rows.iter().map(|r| Some(r.0)).collect::<Vec<_>>())),
            Arc::new(Float64Array::from(rows.iter().map(|r| Some(r.2)).collect::<Vec<_>>())),
            Arc::new(Int64Array::from(vec![Some(1); rows.len()])),
            Arc::new(StringArray::from(
                rows.iter().map(|r| site_of(Some(r.0), false)).collect::<Vec<_>>(),
            )),
        ];
        RecordBatch::try_new(schema(), columns).unwrap()
    };
    // Four hosts every 10 s for 5 minutes, in two appends; h3 stops a minute early.
    for half in 0..2i64 {
        let mut rows = vec![];
        for t in (half * 150..(half + 1) * 150).step_by(10) {
            for (i, h) in ["h0", "h1", "h2", "h3"].iter().enumerate() {
                if *h != "h3" || t < 240 {
                    rows.push((*h, t, (t * 10 + i as i64) as f64));
                }
            }
        }
        lake.append("g", vec![batch(&rows)], AppendOptions::default())
            .await
            .unwrap();
    }
    let explain = |sql: String| {
        let lake = lake.clone();
        async move { rows_of(&lake, &format!("EXPLAIN {sql}")).await.join("\n") }
    };
    // (Two readings of one host at one time tie in the order: then only host and ts compare.)
    let check = |what: &'static str, k: usize, from_index: bool| {
        let lake = lake.clone();
        let cols = match what.contains("second reading") {
            true => "host, ts",
            false => "host, ts, v",
        };
        async move {
            for order in ["ts DESC, host", "ts DESC, host DESC"] {
                let sql = format!("SELECT {cols} FROM g ORDER BY {order} LIMIT {k}");
                let notes = explain(sql.clone()).await;
                let answered = notes.contains(&format!("the {k} newest rows taken from the last-value index"));
                assert_eq!(answered, from_index, "{what}: {sql}\n{notes}");
                let reference = format!(
                    "SELECT {cols} FROM (SELECT *, row_number() OVER (ORDER BY {order}) AS rn FROM g) \
                     WHERE rn <= {k} ORDER BY {order}"
                );
                assert_same(&lake, &sql, &reference, &format!("{what}, top {k} by {order}")).await;
            }
        }
    };
    // The three hosts at 290 s are newer than every other row (at most 280 s).
    check("two appends", 3, true).await;
    check("two appends", 2, true).await;
    // The fourth newest entry (h3 at 230 s) is older than other rows: narrowed, not answered.
    check("two appends", 4, false).await;
    // A late row leaves the newest entries and the bound as they were.
    lake.append("g", vec![batch(&[("h1", 5, -1.0)])], AppendOptions::default())
        .await
        .unwrap();
    check("a late row", 3, true).await;
    // Compaction keeps them.
    let opts = MaintainOptions {
        expire: false,
        orphans: false,
        ..Default::default()
    };
    lake.maintain("g", &opts).await.unwrap();
    check("compaction", 3, true).await;
    // A second reading of h2 at 290 s: not an entry, as new as the entries.
    lake.append("g", vec![batch(&[("h2", 290, -2.0)])], AppendOptions::default())
        .await
        .unwrap();
    check("a second reading at the newest time", 3, false).await;
    // Both of h2's readings at 290 s go: the index is rebuilt, and its bound with it.
    lake.sql("DELETE FROM g WHERE host = 'h2' AND ts >= '2026-01-01T00:04:50Z'")
        .await
        .unwrap();
    check("a delete of h2's newest", 2, true).await;
    check("a delete of h2's newest", 3, false).await;
}
