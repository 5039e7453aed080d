//! `time_bucket` against DuckDB's (1.5.5, ICU) on random times: the same Iceberg table read by
//! both engines, on local disk and S3, bucketed in fixed widths, days, weeks, months, quarters
//! and years, in UTC and five zones (DST both ways and in both hemispheres, a 30-minute DST in
//! Lord Howe, a :45 offset in Kathmandu), with origins and an offset. Times span 1900-2100 and
//! crowd the DST months. The hand-written edge cases are in `tests/slt/time_bucket.slt`.
//!
//! Zones whose clocks jump at midnight (America/Havana, America/Sao_Paulo until 2019) are not
//! compared: on the day before such a jump DuckDB starts the day bucket at 01:00 local time (a
//! 23-hour day where the day has 24), e.g. `time_bucket(INTERVAL '1 day', 1971-04-24 16:43:44Z,
//! 'America/Havana')` is 06:00Z in DuckDB and 05:00Z (local midnight, UTC-5) in Varve. Where a
//! bucket starts at a midnight the clock shows twice (Berlin, 1916-10-01), DuckDB takes the later
//! instant, so that rows of the first 00:00 hour fall before their bucket's start; Varve takes
//! the earlier. The slt file checks both kinds of day.

use varve::Lake;
use varve_testkit::{Backend, Rng};

/// (width, time zone, origin or offset): the argument lists after `ts`, written once for both
/// engines. Month origins are on the first of a month: DuckDB drops an origin's day and time for
/// months, Varve keeps them (docs/sql.md).
const CASES: &[(&str, &str)] = &[
    ("INTERVAL '15 minutes'", ""),
    ("INTERVAL '1 hour'", ", 'Europe/Berlin'"),
    ("INTERVAL '90 minutes'", ", 'Asia/Kathmandu'"),
    ("INTERVAL '1 day'", ", 'Europe/Berlin'"),
    ("INTERVAL '1 day'", ", 'America/New_York'"),
    ("INTERVAL '2 days'", ", 'Australia/Sydney'"),
    ("INTERVAL '7 days'", ""),
    ("INTERVAL '7 days'", ", 'Europe/Berlin'"),
    ("INTERVAL '1 month'", ", 'America/New_York'"),
    ("INTERVAL '3 months'", ", 'Europe/Berlin'"),
    ("INTERVAL '1 year'", ", 'Australia/Lord_Howe'"),
    ("INTERVAL '1 month'", ""),
    ("INTERVAL '1 day'", ", TIMESTAMPTZ '2000-01-01 06:00:00+00'"),
    ("INTERVAL '3 months'", ", TIMESTAMPTZ '1969-02-01 00:00:00+00'"),
    ("INTERVAL '1 day'", ", INTERVAL '6 hours'"),
    ("INTERVAL '10 minutes'", ", TIMESTAMPTZ '2024-01-01 00:03:00+00'"),
];

/// Random instants (µs): half uniform over 1900-2100, half in March, April, October and
/// November of 1970-2040, where the zones change their clocks.
fn times(g: &mut Rng, n: usize) -> Vec<i64> {
    const DAY: i64 = 86_400_000_000;
    (0..n)
        .map(|i| match i % 2 {
            0 => -2_208_988_800_000_000 + (g.next(73_000) as i64) * DAY + g.next(86_400_000_000) as i64,
            _ => {
                let year = 1970 + g.next(71) as i32;
                let month = [3, 4, 10, 11][g.next(4) as usize];
                let day = 1 + g.next(30) as u32;
                let date = chrono::NaiveDate::from_ymd_opt(year, month, day.min(28)).expect("date");
                date.and_hms_opt(0, 0, 0).expect("time").and_utc().timestamp_micros()
                    + g.next(86_400) as i64 * 1_000_000
            }
        })
        .collect()
}

async fn load(lake: &Lake, g: &mut Rng) {
    lake.sql("CREATE TABLE tb.times (ts TIMESTAMP NOT NULL, k BIGINT) WITH (time_column = 'ts', partition = 'year')")
        .await
        .expect("create");
    // Five appends, so the table is many files with times in no order.
    for a in 0..5 {
        let values: Vec<String> = times(g, 120)
            .iter()
            .enumerate()
            .map(|(i, t)| format!("(to_timestamp_micros({t}), {})", a * 1000 + i))
            .collect();
        lake.sql(&format!("INSERT INTO tb.times VALUES {}", values.join(", ")))
            .await
            .expect("insert");
    }
}

/// Compares `time_bucket` of every case in `cases` between Varve and DuckDB on the rows `filter`
/// selects; returns how many rows were compared.
fn compare(backend: &Backend, ours: &[Vec<String>], cases: &[(&str, &str)], filter: &str) -> usize {
    let loc = backend.table_location("tb", "times");
    let theirs = varve_testkit::duckdb(
        &format!(
            "SELECT k AS a_k, ts AS a_ts, {} FROM iceberg_scan('{loc}') WHERE {filter}",
            columns(cases)
        ),
        Some(backend),
    );
    let theirs = varve_testkit::rows(&theirs);
    assert_eq!(ours.len(), theirs.len(), "rows where {filter}");
    for (a, b) in ours.iter().zip(&theirs) {
        if a != b {
            // Columns in name order: a_k, a_ts, b00, b01, ... (rows sorted by the unique k).
            let diff: Vec<String> = (0..cases.len())
                .filter(|i| a[i + 2] != b[i + 2])
                .map(|i| {
                    let (width, rest) = cases[i];
                    format!("time_bucket({width}, ts{rest}): varve {} duckdb {}", a[i + 2], b[i + 2])
                })
                .collect();
            panic!(
                "k = {} (duckdb's row: k = {}), ts = {} µs:\n{}",
                a[0],
                b[0],
                a[1],
                diff.join("\n")
            );
        }
    }
    ours.len()
}

fn columns(cases: &[(&str, &str)]) -> String {
    let columns: Vec<String> = cases
        .iter()
        .enumerate()
        .map(|(i, (width, rest))| format!("time_bucket({width}, ts{rest}) AS b{i:02}"))
        .collect();
    columns.join(", ")
}

async fn matches_duckdb(backend: Backend) {
    let lake = backend.open();
    let mut g = Rng(0x7469_6d65_5f62_6b74);
    load(&lake, &mut g).await;
    // DuckDB below follows the version hint, written after each commit answered.
    varve::settle_published().await;
    let query = |cases: &[(&str, &str)], filter: &str| {
        format!(
            "SELECT k AS a_k, ts AS a_ts, {} FROM tb.times WHERE {filter}",
            columns(cases)
        )
    };
    // Every case from 1970 on. Before 1970 the zones' clocks changed at midnight often (Berlin
    // fell back from 01:00 to 00:00 on 1916-10-01), where DuckDB's answers are off by an hour
    // (module docs); there the UTC cases are compared.
    let since_1970 = "ts >= TIMESTAMPTZ '1970-01-01 00:00:00Z'";
    let ours = lake.sql(&query(CASES, since_1970)).await.expect("varve");
    let n = compare(&backend, &varve_testkit::rows(&ours.batches), CASES, since_1970);
    assert!(n > 400, "{n} rows since 1970");
    let utc: Vec<(&str, &str)> = CASES.iter().copied().filter(|(_, rest)| !rest.contains('/')).collect();
    let ours = lake.sql(&query(&utc, "true")).await.expect("varve");
    assert_eq!(
        compare(&backend, &varve_testkit::rows(&ours.batches), &utc, "true"),
        600
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn time_bucket_matches_duckdb_on_local_disk() {
    matches_duckdb(Backend::local()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn time_bucket_matches_duckdb_on_s3() {
    matches_duckdb(Backend::s3()).await;
}
