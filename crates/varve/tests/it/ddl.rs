//! SQL DDL: CREATE TABLE with the contract in WITH (...), CREATE TABLE ... AS SELECT, DROP TABLE
//! [IF EXISTS], CREATE / DROP SCHEMA for namespaces, and clear errors for what is not supported;
//! tables made by SQL read the same in DuckDB and PyIceberg.

use varve::{ErrorKind, Lake};
use varve_testkit::{assert_readers_agree, Backend};

async fn sql(lake: &Lake, q: &str) -> Vec<Vec<String>> {
    let r = lake.sql(q).await.unwrap_or_else(|e| panic!("{q}: {e}"));
    varve_testkit::rows(&r.batches)
}

async fn err(lake: &Lake, q: &str) -> varve::Error {
    lake.sql(q).await.expect_err(q)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_insert_ctas_drop() {
    let backend = Backend::local();
    let lake = backend.open();
    assert_eq!(
        sql(
            &lake,
            "CREATE TABLE metrics.cpu (ts TIMESTAMP NOT NULL, host TEXT, usage DOUBLE, cores INT) \
         WITH (time_column = 'ts', series_key = 'host', partition = 'month')"
        )
        .await,
        vec![vec!["created table metrics.cpu".to_string()]]
    );
    let d = lake.describe("metrics.cpu").await.unwrap();
    assert_eq!(d.contract.time_column.as_deref(), Some("ts"));
    assert_eq!(d.contract.series_key, vec!["host".to_string()]);
    assert_eq!(d.contract.partitioning, varve::Partitioning::Month);
    let e = err(
        &lake,
        "CREATE TABLE metrics.cpu (ts TIMESTAMP) WITH (time_column = 'ts')",
    )
    .await;
    assert_eq!(e.kind(), ErrorKind::AlreadyExists, "{e}");
    assert_eq!(
        sql(
            &lake,
            "CREATE TABLE IF NOT EXISTS metrics.cpu (ts TIMESTAMP) WITH (time_column = 'ts')"
        )
        .await,
        vec![vec!["table metrics.cpu exists already (left as it is)".to_string()]]
    );
    sql(
        &lake,
        "INSERT INTO metrics.cpu VALUES ('2026-01-01T00:00:00Z', 'a', 0.5, 4), ('2026-01-01T00:00:10Z', 'b', 0.25, 8), \
         ('2026-02-01T00:00:00Z', 'a', 0.75, 4)",
    )
    .await;

    // CTAS: columns from the query, contract from WITH; answers like INSERT (rows written).
    let r = sql(
        &lake,
        "CREATE TABLE metrics.cpu_a WITH (time_column = 'ts', series_key = 'host', dedup = 'last-write-wins') AS \
         SELECT ts, host, usage * 100 AS pct FROM metrics.cpu WHERE host = 'a'",
    )
    .await;
    assert_eq!(r, vec![vec!["2".to_string()]]);
    let d = lake.describe("metrics.cpu_a").await.unwrap();
    assert_eq!(d.contract.dedup, varve::Dedup::LastWriteWins);
    assert_eq!(
        sql(&lake, "SELECT host, pct FROM metrics.cpu_a ORDER BY ts").await,
        vec![
            vec!["a".to_string(), "50.0".to_string()],
            vec!["a".to_string(), "75.0".to_string()]
        ]
    );
    assert_readers_agree(&lake, &backend, "metrics", "cpu").await;
    assert_readers_agree(&lake, &backend, "metrics", "cpu_a").await;

    // A CTAS whose insert fails leaves no table: NULL times are refused.
    let e = err(
        &lake,
        "CREATE TABLE metrics.bad WITH (time_column = 'ts') AS SELECT CAST(NULL AS TIMESTAMP) AS ts, 1 AS v",
    )
    .await;
    assert!(e.to_string().contains("not kept"), "{e}");
    assert!(!lake.table_exists("metrics.bad").await.unwrap());

    // DROP TABLE, IF EXISTS, several at once.
    sql(&lake, "CREATE TABLE metrics.tmp1 (x BIGINT)").await;
    sql(&lake, "CREATE TABLE metrics.tmp2 (x BIGINT)").await;
    assert_eq!(
        sql(&lake, "DROP TABLE metrics.tmp1, metrics.tmp2").await,
        vec![vec!["dropped tables metrics.tmp1, metrics.tmp2".to_string()]],
        "a DDL statement answers with what it did"
    );
    assert!(!lake.table_exists("metrics.tmp1").await.unwrap());
    let e = err(&lake, "DROP TABLE metrics.tmp1").await;
    assert_eq!(e.kind(), ErrorKind::NotFound, "{e}");
    assert_eq!(
        sql(&lake, "DROP TABLE IF EXISTS metrics.tmp1").await,
        vec![vec!["no table dropped (none existed)".to_string()]]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn schemas_are_namespaces() {
    let backend = Backend::local();
    let lake = backend.open();
    sql(&lake, "CREATE SCHEMA sensors").await;
    let e = err(&lake, "CREATE SCHEMA sensors").await;
    assert_eq!(e.kind(), ErrorKind::AlreadyExists, "{e}");
    sql(&lake, "CREATE SCHEMA IF NOT EXISTS sensors").await;
    // An empty namespace is listed, and its (no) tables can be asked for.
    let names = sql(&lake, "SELECT schema_name FROM information_schema.schemata ORDER BY 1").await;
    assert!(names.contains(&vec!["sensors".to_string()]), "{names:?}");
    sql(
        &lake,
        "CREATE TABLE sensors.t (ts TIMESTAMP, v DOUBLE) WITH (time_column = 'ts')",
    )
    .await;
    sql(&lake, "INSERT INTO sensors.t VALUES ('2026-01-01T00:00:00Z', 1.5)").await;
    let e = err(&lake, "DROP SCHEMA sensors").await;
    assert_eq!(e.kind(), ErrorKind::InvalidInput, "{e}");
    assert!(e.to_string().contains("CASCADE"), "{e}");
    assert!(lake.table_exists("sensors.t").await.unwrap());
    sql(&lake, "DROP SCHEMA sensors CASCADE").await;
    assert!(!lake.table_exists("sensors.t").await.unwrap());
    let e = err(&lake, "DROP SCHEMA sensors").await;
    assert_eq!(e.kind(), ErrorKind::NotFound, "{e}");
    sql(&lake, "DROP SCHEMA IF EXISTS sensors").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unsupported_ddl_is_refused_clearly() {
    let lake = Backend::local().open();
    for (q, says) in [
        (
            "CREATE TABLE t (ts TIMESTAMP, v DOUBLE NOT NULL) WITH (time_column = 'ts')",
            "column v",
        ),
        (
            "CREATE TABLE t (ts TIMESTAMP, id INT PRIMARY KEY) WITH (time_column = 'ts')",
            "column id",
        ),
        (
            "CREATE TABLE t (ts TIMESTAMP) WITH (time_column = 'ts', colour = 'red')",
            "unknown WITH option colour",
        ),
        (
            "CREATE TABLE t (ts TIMESTAMP) WITH (time_column = 'ts', partition = 'week')",
            "hour, day, month or year",
        ),
        ("CREATE TABLE t (v DOUBLE) WITH (series_key = 'v')", "need time_column"),
        ("CREATE OR REPLACE TABLE t (v DOUBLE)", "DROP TABLE first"),
        (
            "CREATE TABLE t (ts TIMESTAMP) WITH (time_column = 'time')",
            "time column time is not among the columns",
        ),
        (
            "CREATE TABLE t (v DOUBLE) AS SELECT 1.0 AS v",
            "either columns or a query",
        ),
    ] {
        let e = err(&lake, q).await;
        assert!(e.to_string().contains(says), "{q}: {e}");
        assert!(!lake.table_exists("t").await.unwrap(), "{q} left a table");
    }
}

/// A table dropped and made again under its name in the same process: the new table's
/// `v1.metadata.json` has the old one's name, and the lake must read the new one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_table_made_again_under_its_name_is_the_new_one() {
    let backend = Backend::local();
    let lake = backend.open();
    sql(
        &lake,
        "CREATE TABLE m.t (ts TIMESTAMP, a DOUBLE) WITH (time_column = 'ts')",
    )
    .await;
    sql(&lake, "INSERT INTO m.t VALUES ('2026-01-01T00:00:00Z', 1.5)").await;
    sql(&lake, "DROP TABLE m.t").await;
    sql(
        &lake,
        "CREATE TABLE m.t (ts TIMESTAMP, b TEXT) WITH (time_column = 'ts')",
    )
    .await;
    let columns: Vec<String> = lake
        .describe("m.t")
        .await
        .unwrap()
        .schema
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect();
    assert_eq!(columns, vec!["ts", "b"]);
    sql(&lake, "INSERT INTO m.t VALUES ('2026-01-02T00:00:00Z', 'x')").await;
    assert_eq!(sql(&lake, "SELECT b FROM m.t").await, vec![vec!["x".to_string()]]);
}
