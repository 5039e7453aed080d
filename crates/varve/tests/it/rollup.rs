//! Materialized rollups: every query a rollup answers gives the raw table's answer (the same
//! query with `SET varve.rollup_routing = off`) on random data, after the first fill, appends with
//! late rows (answered from the rollup and the newer rows), deletes (not routed until a refresh),
//! incremental refreshes, compaction, and last-write-wins replacements; on local disk and S3.
//! DuckDB and PyIceberg read the rollup table as Varve does.

use varve::{Lake, MaintainOptions};
use varve_testkit::{assert_readers_agree, rows, Backend, Rng};

const BASE: i64 = 1_709_164_800_000_000; // 2024-02-29T00:00:00Z, µs

const ROLLUP: &str = "CREATE ROLLUP t_15m ON r.t AS SELECT host, fleet, \
     time_bucket(INTERVAL '15 minutes', ts) AS bucket, count(*) AS n, count(v) AS nv, sum(v) AS s, \
     min(v) AS lo, max(v) AS hi, avg(v) AS a, first(v, ts) AS f, last(v, ts) AS l, \
     first_not_null(v, ts) AS fn, last_not_null(v, ts) AS ln, twa(v, ts) AS w, twa(v, ts, 'linear') AS wl, \
     approx_percentile_cont(v, 0.9) AS p90 FROM r.t GROUP BY host, fleet, bucket";

/// When a query can be answered from the rollup.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Routable {
    Never,
    Always,
    /// Only with no rows appended after the watermark (time-weighted averages).
    UpToDate,
}

/// The state of the rollup when the queries run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Rollup {
    UpToDate,
    Appended,
    Behind,
}

/// (query, when a rollup can answer it).
const QUERIES: [(&str, Routable); 8] = [
    (
        "SELECT host, time_bucket(INTERVAL '1 hour', ts) AS h, count(*) AS n, count(v) AS nv, sum(v) AS s, \
         min(v) AS lo, max(v) AS hi, avg(v) AS a, first(v, ts) AS f, last(v, ts) AS l, \
         first_not_null(v, ts) AS fnn, last_not_null(v, ts) AS lnn FROM r.t GROUP BY 1, 2",
        Routable::Always,
    ),
    (
        "SELECT fleet, time_bucket(INTERVAL '6 hours', ts) AS b, count(*) AS n, sum(v) AS s FROM r.t \
         WHERE ts >= '2024-02-29T02:00:00Z' AND ts < '2024-03-01T12:00:00Z' GROUP BY 1, 2",
        Routable::Always,
    ),
    (
        "SELECT count(*) AS n, min(v) AS lo, max(v) AS hi FROM r.t WHERE fleet = 'f1'",
        Routable::Always,
    ),
    (
        "SELECT time_bucket(INTERVAL '1 month', ts) AS m, count(*) AS n, avg(v) AS a FROM r.t GROUP BY 1",
        Routable::Always,
    ),
    (
        "SELECT host, time_bucket(INTERVAL '2 hours', ts) AS h, twa(v, ts) AS w, twa(v, ts, 'linear') AS wl \
         FROM r.t GROUP BY 1, 2",
        Routable::UpToDate,
    ),
    (
        "SELECT date_trunc('day', ts) AS d, date_bin(INTERVAL '30 minutes', ts) AS b, count(*) AS n FROM r.t \
         GROUP BY 1, 2",
        Routable::Always,
    ),
    // Buckets that are not unions of 15-minute ones, and a filter between bucket boundaries.
    (
        "SELECT host, time_bucket(INTERVAL '10 minutes', ts) AS b, count(*) AS n FROM r.t GROUP BY 1, 2",
        Routable::Never,
    ),
    (
        "SELECT host, count(*) AS n FROM r.t WHERE ts >= '2024-02-29T02:05:00Z' GROUP BY 1",
        Routable::Never,
    ),
];

/// Rows equal, numbers up to a relative 1e-9 (sums of floats in another order).
fn same_rows(ours: &[Vec<String>], theirs: &[Vec<String>], what: &str) {
    assert_eq!(ours.len(), theirs.len(), "{what}: row counts");
    for (a, b) in ours.iter().zip(theirs) {
        for (x, y) in a.iter().zip(b) {
            let close = match (x.parse::<f64>(), y.parse::<f64>()) {
                (Ok(x), Ok(y)) => (x - y).abs() <= 1e-9 * x.abs().max(y.abs()).max(1.0),
                _ => x == y,
            };
            assert!(close, "{what}: {a:?} vs {b:?}");
        }
    }
}

/// Appends `n` random rows: hosts h0..h5 in fleets f0..f2 (and NULL hosts), times over two days
/// in random order, NULL values sometimes, duplicate times often.
async fn append(lake: &Lake, g: &mut Rng, n: usize, from: i64, span_s: u64) {
    let mut values = Vec::new();
    for _ in 0..n {
        let h = g.next(7);
        let host = match h {
            6 => "NULL".to_string(),
            h => format!("'h{h}'"),
        };
        let fleet = format!("'f{}'", h % 3);
        let t = from + g.next(span_s) as i64 * 1_000_000;
        let v = match g.next(8) {
            0 => "NULL".to_string(),
            _ => format!("{}", g.next(10_000) as f64 / 8.0 - 300.0),
        };
        values.push(format!("(to_timestamp_micros({t}), {host}, {fleet}, {v})"));
    }
    lake.sql(&format!("INSERT INTO r.t VALUES {}", values.join(", ")))
        .await
        .expect("insert");
}

/// Runs every query routed and not, and checks the answers are equal and that EXPLAIN says a
/// rollup answered exactly when it can in the rollup's `state`; percentiles from the rollup's
/// sketches are close to the table's.
async fn check(lake: &Lake, when: &str, state: Rollup) {
    let session = lake.session(Default::default()).expect("session");
    session.sql("SET varve.rollup_routing = off").await.expect("set");
    for (q, routable) in QUERIES {
        let routed = lake.sql(q).await.unwrap_or_else(|e| panic!("{when}: {q}: {e}"));
        let raw = session.sql(q).await.expect("raw");
        same_rows(&rows(&routed.batches), &rows(&raw.batches), &format!("{when}: {q}"));
        assert!(!raw.batches.iter().all(|b| b.num_rows() == 0), "{when}: {q}: no rows");
        let explain = lake.sql(&format!("EXPLAIN {q}")).await.expect("explain");
        let text = rows(&explain.batches).concat().join("\n");
        let answered = text.contains("was answered from rollup r.t_15m");
        let expected = match (routable, state) {
            (_, Rollup::Behind) | (Routable::Never, _) => false,
            (Routable::Always, _) => true,
            (Routable::UpToDate, s) => s == Rollup::UpToDate,
        };
        assert_eq!(answered, expected, "{when}: {q}: EXPLAIN says\n{text}");
        let off = session.sql(&format!("EXPLAIN {q}")).await.expect("explain off");
        assert!(!rows(&off.batches)
            .concat()
            .join("\n")
            .contains("was answered from rollup"));
    }
    // Percentiles: estimates from merged sketches, within a tenth of the value range of the
    // table's own estimate.
    let q = "SELECT fleet, approx_percentile_cont(v, 0.5) AS p50, approx_percentile_cont(0.9) WITHIN GROUP \
             (ORDER BY v) AS p90, max(v) - min(v) AS range FROM r.t GROUP BY 1";
    let (routed, raw) = (
        rows(&lake.sql(q).await.expect(q).batches),
        rows(&session.sql(q).await.expect(q).batches),
    );
    assert_eq!(routed.len(), raw.len());
    for (a, b) in routed.iter().zip(&raw) {
        // Columns by name: fleet, p50, p90, range.
        let range: f64 = b[3].parse().expect("range");
        for i in [1, 2] {
            let (x, y): (f64, f64) = (a[i].parse().expect("estimate"), b[i].parse().expect("estimate"));
            assert!((x - y).abs() <= range / 10.0, "{when}: {a:?} vs {b:?}");
        }
    }
    let text = rows(&lake.sql(&format!("EXPLAIN {q}")).await.expect("explain").batches)
        .concat()
        .join("\n");
    assert_eq!(
        text.contains("was answered from rollup r.t_15m"),
        state != Rollup::Behind,
        "{when}: {q}: {text}"
    );
}

async fn routed_answers_equal_raw_answers(backend: Backend) {
    let lake = backend.open();
    lake.sql(
        "CREATE TABLE r.t (ts TIMESTAMP NOT NULL, host TEXT, fleet TEXT, v DOUBLE) \
         WITH (time_column = 'ts', series_key = 'host', partition = 'hour')",
    )
    .await
    .expect("create");
    let mut g = Rng(0x726f_6c6c_7570_2121);
    for _ in 0..4 {
        append(&lake, &mut g, 150, BASE, 2 * 86_400).await;
    }
    let created = lake
        .create_rollup(ROLLUP)
        .await
        .expect("create rollup")
        .expect("a report");
    assert!(created.full && created.rows_written > 0, "{created:?}");
    check(&lake, "after the first fill", Rollup::UpToDate).await;

    // Appends, some in buckets the rollup holds: answered from the rollup and the newer rows.
    append(&lake, &mut g, 100, BASE, 2 * 86_400).await;
    append(&lake, &mut g, 50, BASE + 86_400_000_000, 3600).await;
    check(&lake, "after appends", Rollup::Appended).await;

    // A delete: the rollup waits for a refresh; the raw table answers meanwhile.
    lake.sql("DELETE FROM r.t WHERE host = 'h1' AND ts < '2024-02-29T06:00:00Z'")
        .await
        .expect("delete");
    check(&lake, "after a delete", Rollup::Behind).await;
    let r = lake.refresh_rollup("r.t_15m").await.expect("refresh");
    assert!(!r.full && !r.ranges.is_empty(), "an incremental refresh: {r:?}");
    check(&lake, "after the refresh", Rollup::UpToDate).await;
    let again = lake.refresh_rollup("r.t_15m").await.expect("refresh again");
    assert!(again.up_to_date, "{again:?}");

    // Late rows, then maintenance: compaction, then the rollup's refresh.
    append(&lake, &mut g, 80, BASE + 3_600_000_000, 600).await;
    let dry = MaintainOptions {
        dry_run: true,
        ..Default::default()
    };
    let d = lake.maintain("r.t", &dry).await.expect("dry run");
    assert!(d.actions.iter().any(|a| a == "refresh rollup r.t_15m"), "{d:?}");
    let m = lake
        .maintain("r.t", &MaintainOptions::default())
        .await
        .expect("maintain");
    assert_eq!(m.rollups_refreshed, 1, "{m:?}");
    check(&lake, "after maintenance", Rollup::UpToDate).await;
    let r = lake.refresh_rollup("r.t_15m").await.expect("refresh");
    assert!(r.up_to_date, "maintenance left the rollup up to date: {r:?}");

    let listed = lake.rollups(Some("r.t")).await.expect("rollups");
    assert_eq!(listed.len(), 1);
    assert!(listed[0].up_to_date);
    assert_readers_agree(&lake, &backend, "r", "t_15m").await;

    assert!(lake.drop_rollup("r.t_15m", false).await.expect("drop"));
    assert!(!lake.drop_rollup("r.t_15m", true).await.expect("drop if exists"));
    assert!(lake.rollups(None).await.expect("rollups").is_empty());
    for (q, _) in QUERIES {
        lake.sql(q).await.expect("the table alone");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn routed_answers_equal_raw_answers_on_local_disk() {
    routed_answers_equal_raw_answers(Backend::local()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn routed_answers_equal_raw_answers_on_s3() {
    routed_answers_equal_raw_answers(Backend::s3()).await;
}

/// Last-write-wins replacements change old rows: the rollup waits for a refresh, which recomputes
/// the buckets they touch.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replacements_are_recomputed() {
    let lake = Backend::local().open();
    lake.sql(
        "CREATE TABLE r.t (ts TIMESTAMP NOT NULL, host TEXT, fleet TEXT, v DOUBLE) \
         WITH (time_column = 'ts', series_key = 'host,fleet', dedup = 'last-write-wins')",
    )
    .await
    .expect("create");
    let mut g = Rng(0x6c77_7721_2121_2121);
    append(&lake, &mut g, 300, BASE, 86_400).await;
    lake.create_rollup(ROLLUP).await.expect("create rollup");
    check(&lake, "first fill", Rollup::UpToDate).await;
    // The same keys and times again, with other values.
    lake.sql("INSERT INTO r.t SELECT ts, host, fleet, v * 2 + 1 FROM r.t WHERE host IN ('h2', 'h3')")
        .await
        .expect("replace");
    check(&lake, "after replacements", Rollup::Behind).await;
    let r = lake.refresh_rollup("r.t_15m").await.expect("refresh");
    assert!(!r.full, "{r:?}");
    check(&lake, "after the refresh", Rollup::UpToDate).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rollup_statements_and_their_errors() {
    let lake = Backend::local().open();
    lake.sql(
        "CREATE TABLE r.t (ts TIMESTAMP NOT NULL, host TEXT, fleet TEXT, v DOUBLE) \
         WITH (time_column = 'ts', series_key = 'host')",
    )
    .await
    .expect("create");
    let err = |sql: &'static str| {
        let lake = lake.clone();
        async move { lake.sql(sql).await.expect_err(sql).to_string() }
    };
    assert!(err("CREATE ROLLUP x ON r.nope AS SELECT time_bucket(INTERVAL '1 hour', ts) AS b, count(*) AS n FROM r.nope GROUP BY 1")
        .await
        .contains("does not exist"));
    assert!(err("CREATE ROLLUP x ON r.t AS SELECT zone, time_bucket(INTERVAL '1 hour', ts) AS b, count(*) AS n FROM r.t GROUP BY 1, 2")
        .await
        .contains("has no column zone"));
    assert!(err(
        "CREATE ROLLUP x ON r.t AS SELECT time_bucket(INTERVAL '1 hour', v) AS b, count(*) AS n FROM r.t GROUP BY 1"
    )
    .await
    .contains("time column"));
    assert!(err("DROP ROLLUP r.t").await.contains("not a rollup"));
    assert!(err("ALTER TABLE r.t SET TBLPROPERTIES ('varve.rollups' = 'r.x')")
        .await
        .contains("rollup"));
    // An empty table: the rollup is created empty and waits for rows.
    let r = lake
        .sql("CREATE ROLLUP hourly ON r.t AS SELECT host, time_bucket(INTERVAL '1 hour', ts) AS b, count(*) AS n FROM r.t GROUP BY 1, 2")
        .await
        .expect("create on an empty table");
    assert_eq!(r.num_rows(), 1);
    assert!(err("CREATE ROLLUP hourly ON r.t AS SELECT host, time_bucket(INTERVAL '1 hour', ts) AS b, count(*) AS n FROM r.t GROUP BY 1, 2")
        .await
        .contains("exists already"));
    lake.sql("CREATE ROLLUP IF NOT EXISTS hourly ON r.t AS SELECT host, time_bucket(INTERVAL '1 hour', ts) AS b, count(*) AS n FROM r.t GROUP BY 1, 2")
        .await
        .expect("if not exists");
    lake.sql("INSERT INTO r.t VALUES ('2024-01-01T00:10:00Z', 'a', 'f', 1.0)")
        .await
        .expect("insert");
    let shown = lake.sql("SHOW ROLLUPS ON r.t").await.expect("show");
    let shown = rows(&shown.batches);
    assert_eq!(shown.len(), 1, "{shown:?}");
    lake.sql("REFRESH ROLLUP r.hourly").await.expect("refresh");
    let n = lake
        .sql("SELECT host, time_bucket(INTERVAL '1 day', ts) AS d, count(*) AS n FROM r.t GROUP BY 1, 2")
        .await
        .expect("routed");
    assert_eq!(
        rows(&n.batches),
        vec![vec!["1704067200000000".to_string(), "a".into(), "1".into()]]
    );
    // Its table takes no writes of its own; DROP TABLE on it takes it off the source's list.
    assert!(err("INSERT INTO r.hourly VALUES ('a', '2024-01-01T00:00:00Z', 5)")
        .await
        .contains("is a rollup of r.t"));
    assert!(err("DELETE FROM r.hourly").await.contains("is a rollup of r.t"));
    lake.sql("DROP TABLE r.hourly").await.expect("drop table");
    assert!(lake.rollups(Some("r.t")).await.expect("rollups").is_empty());
    let e = lake
        .sql("CREATE ROLLUP x ON r.t AS SELECT upper(host) AS h, time_bucket(INTERVAL '1 hour', ts) AS b, count(*) AS n FROM r.t GROUP BY 1, 2")
        .await
        .expect_err("an expression as group")
        .to_string();
    assert!(e.contains("groups by plain columns"), "{e}");
}

/// A coarser rollup is computed from a finer one that is up to date, and answers as the table.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_coarser_rollup_is_computed_from_a_finer_one() {
    let lake = Backend::local().open();
    lake.sql(
        "CREATE TABLE r.t (ts TIMESTAMP NOT NULL, host TEXT, fleet TEXT, v DOUBLE) \
         WITH (time_column = 'ts', series_key = 'host')",
    )
    .await
    .expect("create");
    let mut g = Rng(0x6669_6e65_7221_2121);
    append(&lake, &mut g, 400, BASE, 2 * 86_400).await;
    let fine = "CREATE ROLLUP t_1m ON r.t AS SELECT host, fleet, time_bucket(INTERVAL '1 minute', ts) AS bucket, \
                count(*) AS n, sum(v) AS s, min(v) AS lo, max(v) AS hi, avg(v) AS a FROM r.t GROUP BY 1, 2, 3";
    let r = lake.create_rollup(fine).await.expect("fine").expect("report");
    assert!(r.computed_from.is_empty(), "{r:?}");
    let coarse = "CREATE ROLLUP t_1h ON r.t AS SELECT fleet, time_bucket(INTERVAL '1 hour', ts) AS bucket, \
                  count(*) AS n, count(v) AS nv, sum(v) AS s, max(v) AS hi, avg(v) AS a FROM r.t GROUP BY 1, 2";
    let r = lake.create_rollup(coarse).await.expect("coarse").expect("report");
    assert!(
        r.computed_from.iter().any(|n| n.contains("rollup r.t_1m")),
        "computed from the finer rollup: {r:?}"
    );
    // A delete: the coarse rollup cannot answer for itself; the fine one, refreshed, can.
    append(&lake, &mut g, 100, BASE, 2 * 86_400).await;
    lake.sql("DELETE FROM r.t WHERE host = 'h2' AND ts < '2024-02-29T12:00:00Z'")
        .await
        .expect("delete");
    lake.refresh_rollup("r.t_1m").await.expect("refresh fine");
    let r = lake.refresh_rollup("r.t_1h").await.expect("refresh coarse");
    assert!(
        !r.full && r.computed_from.iter().any(|n| n.contains("rollup r.t_1m")),
        "{r:?}"
    );
    let stored = lake
        .sql("SELECT fleet, bucket, n, nv, s, hi, a FROM r.t_1h")
        .await
        .expect("coarse rows");
    let session = lake.session(Default::default()).expect("session");
    session.sql("SET varve.rollup_routing = off").await.expect("off");
    let raw = session
        .sql(
            "SELECT fleet, time_bucket(INTERVAL '1 hour', ts) AS bucket, count(*) AS n, count(v) AS nv, sum(v) AS s, \
             max(v) AS hi, avg(v) AS a FROM r.t GROUP BY 1, 2",
        )
        .await
        .expect("raw");
    same_rows(&rows(&stored.batches), &rows(&raw.batches), "the coarse rollup's rows");
}
