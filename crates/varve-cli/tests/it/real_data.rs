//! The real files of `examples/data/` imported with `varve import` and its documented options.
//!
//! For every file, per-series counts, first and last times and sums computed by Varve from the
//! table must equal what DuckDB computes from the raw file with its own CSV reader and its own
//! time arithmetic (counts and times exactly, sums within a relative 1e-9). Then DuckDB's
//! `iceberg_scan` and PyIceberg must read exactly the rows Varve reads.

use std::path::Path;

use varve::arrow::array::{Array, RecordBatch};
use varve::arrow::util::display::array_value_to_string;
use varve::Lake;
use varve_testkit::{assert_readers_agree, data_file, duckdb, Backend};

use crate::{varve_err, varve_ok};

/// Relative tolerance of sums (the engines add in different orders).
const REL: f64 = 1e-9;

/// Rows of a result as text cells, in result order.
fn cells(batches: &[RecordBatch]) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for b in batches {
        for r in 0..b.num_rows() {
            out.push(
                b.columns()
                    .iter()
                    .map(|c| {
                        if c.is_null(r) {
                            "NULL".to_string()
                        } else {
                            array_value_to_string(c, r).expect("cell")
                        }
                    })
                    .collect(),
            );
        }
    }
    out
}

/// Asserts that two aggregate results agree: the first `exact` columns (keys, counts, times as
/// µs) as text, the rest (sums) as numbers within [`REL`].
fn assert_stats_agree(what: &str, ours: &[Vec<String>], duck: &[Vec<String>], exact: usize) {
    assert!(!duck.is_empty(), "{what}: DuckDB returned no rows");
    assert_eq!(ours.len(), duck.len(), "{what}: number of result rows");
    for (o, d) in ours.iter().zip(duck) {
        assert_eq!(o.len(), d.len(), "{what}: number of result columns");
        assert_eq!(o[..exact], d[..exact], "{what}: exact columns");
        for (i, (a, b)) in o.iter().zip(d).enumerate().skip(exact) {
            let x: f64 = a.parse().unwrap_or_else(|_| panic!("{what}: column {i}: {a}"));
            let y: f64 = b.parse().unwrap_or_else(|_| panic!("{what}: column {i}: {b}"));
            let rel = (x - y).abs() / x.abs().max(y.abs()).max(f64::MIN_POSITIVE);
            assert!(
                rel <= REL,
                "{what}: column {i}: Varve {x} vs DuckDB {y} (relative difference {rel:e})\nVarve:  {o:?}\nDuckDB: {d:?}"
            );
        }
    }
}

/// Runs `sql` in Varve and in DuckDB (`duck_sql`, over the raw file) and compares the results.
async fn compare(lake: &Lake, what: &str, sql: &str, duck_sql: &str, exact: usize) {
    let ours = lake
        .sql(sql)
        .await
        .unwrap_or_else(|e| panic!("{what}: varve: {sql}: {e}"));
    let duck = duckdb(duck_sql, None);
    assert_stats_agree(what, &cells(&ours.batches), &cells(&duck), exact);
}

/// `read_csv('<file>'<options>)` for DuckDB.
fn read_csv(file: &Path, options: &str) -> String {
    format!(
        "read_csv('{}'{options})",
        file.display().to_string().replace('\'', "''")
    )
}

/// `varve <lake args> import <table> <file> <extra...>`; returns stdout.
fn import(backend: &Backend, table: &str, file: &Path, extra: &[&str]) -> String {
    let mut args = backend.cli_args();
    args.push("import".into());
    args.push(table.into());
    args.push(file.display().to_string());
    args.extend(extra.iter().map(|s| s.to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = varve_ok(&args);
    assert!(out.starts_with("imported "), "{out}");
    out
}

/// `varve <lake args> <args...>`; returns stdout.
fn cli(backend: &Backend, args: &[&str]) -> String {
    let mut all = backend.cli_args();
    all.extend(args.iter().map(|s| s.to_string()));
    let all: Vec<&str> = all.iter().map(String::as_str).collect();
    varve_ok(&all)
}

/// µs since the epoch as `varve info` prints it.
fn rfc3339(us: i64) -> String {
    chrono::DateTime::from_timestamp_micros(us)
        .expect("time")
        .format("%Y-%m-%dT%H:%M:%S%.fZ")
        .to_string()
}

// ---------------------------------------------------------------------------------------------
// stocks.csv.gz: five tickers, daily, a calendar date as the time.

const STOCKS_SQL: &str = "SELECT \"Ticker\", count(*), CAST(min(\"Date\") AS BIGINT), \
     CAST(max(\"Date\") AS BIGINT), CAST(sum(\"Close\") AS DOUBLE), CAST(sum(\"Volume\") AS DOUBLE) \
     FROM market.stocks GROUP BY \"Ticker\" ORDER BY \"Ticker\"";

fn stocks_duck_sql() -> String {
    format!(
        "SELECT Ticker, count(*), epoch_us(CAST(min(Date) AS TIMESTAMP)), \
         epoch_us(CAST(max(Date) AS TIMESTAMP)), CAST(sum(Close) AS DOUBLE), \
         CAST(sum(Volume) AS DOUBLE) FROM {} GROUP BY Ticker ORDER BY Ticker",
        read_csv(&data_file("stocks.csv.gz"), "")
    )
}

async fn stocks(backend: &Backend) {
    let file = data_file("stocks.csv.gz");
    let out = import(
        backend,
        "market.stocks",
        &file,
        &[
            "--series-key",
            "Ticker",
            "--partition",
            "month",
            "--note",
            "first load",
            "--batch-id",
            "stocks-2013-03",
        ],
    );
    assert!(
        out.contains("imported 12154 rows from 1 file into market.stocks"),
        "{out}"
    );
    let lake = backend.open();
    compare(&lake, "stocks", STOCKS_SQL, &stocks_duck_sql(), 4).await;
    // Dates are midnight UTC.
    let r = lake
        .sql("SELECT count(*) FROM market.stocks WHERE date_trunc('day', \"Date\") <> \"Date\"")
        .await
        .unwrap();
    assert_eq!(cells(&r.batches), [["0"]], "every Date is midnight UTC");
    assert_readers_agree(&lake, backend, "market", "stocks").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stocks_on_local_disk_with_info_latest_and_history() {
    let backend = Backend::local();
    stocks(&backend).await;

    // varve info: the contract, the size, the time range and the series, as DuckDB sees the file.
    let duck = cells(&duckdb(&stocks_duck_sql(), None));
    let first = duck.iter().map(|r| r[2].parse::<i64>().unwrap()).min().unwrap();
    let last = duck.iter().map(|r| r[3].parse::<i64>().unwrap()).max().unwrap();
    let info = cli(&backend, &["info", "market.stocks"]);
    for line in [
        "table        market.stocks".to_string(),
        "time column  Date".to_string(),
        "series key   Ticker".to_string(),
        "partition    month".to_string(),
        "rows         12154".to_string(),
        "snapshots    1".to_string(),
        "series       5".to_string(),
        format!("time range   {} .. {}", rfc3339(first), rfc3339(last)),
    ] {
        assert!(
            info.lines().any(|l| l.trim_end() == line),
            "info lacks {line:?}:\n{info}"
        );
    }
    assert!(
        info.lines()
            .any(|l| l.trim_start().starts_with("Date ") && l.contains("Timestamp")),
        "Date is stored as a timestamp:\n{info}"
    );

    // varve latest: one row per ticker, its newest date and that day's close.
    let latest = cli(&backend, &["latest", "market.stocks", "--format", "csv"]);
    let mut lines = latest.lines();
    let header: Vec<&str> = lines.next().expect("header").split(',').collect();
    let col = |name: &str| {
        header
            .iter()
            .position(|h| *h == name)
            .unwrap_or_else(|| panic!("latest lacks {name}: {latest}"))
    };
    let (ticker, date, close) = (col("Ticker"), col("Date"), col("Close"));
    let mut got: Vec<(String, String, f64)> = lines
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (
                f[ticker].to_string(),
                f[date].to_string(),
                f[close].parse().expect("close"),
            )
        })
        .collect();
    got.sort_by(|a, b| a.0.cmp(&b.0));
    let expected = duckdb(
        &format!(
            "SELECT Ticker, strftime(Date, '%Y-%m-%dT00:00:00Z') AS d, Close FROM {} \
             QUALIFY row_number() OVER (PARTITION BY Ticker ORDER BY Date DESC) = 1 ORDER BY Ticker",
            read_csv(&data_file("stocks.csv.gz"), "")
        ),
        None,
    );
    let expected: Vec<(String, String, f64)> = cells(&expected)
        .into_iter()
        .map(|r| (r[0].clone(), r[1].clone(), r[2].parse().unwrap()))
        .collect();
    assert_eq!(expected.len(), 5);
    assert_eq!(got, expected, "varve latest:\n{latest}");

    // varve history: the snapshot with its batch id and note.
    let history = cli(&backend, &["history", "market.stocks", "--format", "csv"]);
    let snaps: Vec<&str> = history.lines().skip(1).collect();
    assert_eq!(snaps.len(), 1, "{history}");
    for part in [",append,12154,", "stocks-2013-03", "first load", ",true"] {
        assert!(snaps[0].contains(part), "history lacks {part:?}:\n{history}");
    }

    // The same batch again: nothing written, and it says so.
    let file = data_file("stocks.csv.gz");
    let again = cli(
        &backend,
        &[
            "import",
            "market.stocks",
            file.to_str().unwrap(),
            "--batch-id",
            "stocks-2013-03",
        ],
    );
    assert_eq!(
        again.trim_end(),
        "batch stocks-2013-03 was imported into market.stocks before; nothing written"
    );
    assert_eq!(cli(&backend, &["info", "market.stocks"]), info);
    assert_eq!(cli(&backend, &["history", "market.stocks", "--format", "csv"]), history);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stocks_on_s3() {
    let backend = Backend::s3();
    stocks(&backend).await;
    let info = cli(&backend, &["info", "market.stocks"]);
    assert!(
        info.contains("location     s3://lake/warehouse/market/stocks"),
        "{info}"
    );
    assert!(cli(&backend, &["ls"]).lines().any(|l| l == "market.stocks"));
}

// ---------------------------------------------------------------------------------------------
// CGM.csv.gz: local wall-clock times without a zone; `isig` holds 'nil' for missing values.

/// DuckDB's reading of the CGM file: every column as text ('nil' stands in a numeric column),
/// converted in SQL; not strict, since the file's lines end in CRLF except the last one, which
/// DuckDB's strict mode rejects.
fn cgm_duck(time_expr: &str) -> String {
    format!(
        "SELECT count(*), epoch_us(min({time_expr})), epoch_us(max({time_expr})), \
         CAST(sum(CAST(glucose AS BIGINT)) AS DOUBLE), sum(TRY_CAST(isig AS DOUBLE)) \
         FROM {}",
        read_csv(&data_file("CGM.csv.gz"), CGM_CSV)
    )
}

/// Without --null-value, `isig` is text because of its 'nil's: the import says so and how to fix
/// it, `--strict-types` refuses, and `avg(isig)` gives a plain error naming the column.
#[test]
fn cgm_mostly_numeric_text_is_reported() {
    let backend = Backend::local();
    let file = data_file("CGM.csv.gz");
    let mut args = backend.cli_args();
    args.extend([
        "import".to_string(),
        "cgm".into(),
        file.display().to_string(),
        "--time-column".into(),
        "datetime".into(),
    ]);
    let strict: Vec<String> = args.iter().cloned().chain(["--strict-types".to_string()]).collect();
    let strict: Vec<&str> = strict.iter().map(String::as_str).collect();
    let err = varve_err(&strict);
    assert!(
        err.contains("column isig is text") && err.contains("\"nil\" (1061 rows)"),
        "{err}"
    );
    assert!(
        cli(&backend, &["ls"]).trim().is_empty(),
        "strict types imported something"
    );

    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = crate::varve(&args);
    assert!(o.status.success());
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.contains("warning: column isig is text, though 98.0% of 52281 sampled values are numbers (Float64)")
            && stderr.contains("--null-value \"nil\""),
        "{stderr}"
    );
    let mut q = backend.cli_args();
    q.extend(["sql".to_string(), "SELECT avg(isig) FROM cgm".into()]);
    let q: Vec<&str> = q.iter().map(String::as_str).collect();
    let err = varve_err(&q);
    assert!(
        err.starts_with("error: avg needs a number; column isig is text."),
        "{err}"
    );
    assert!(!err.contains("bug report"), "{err}");
}

const CGM_EXACT: usize = 3;
const CGM_CSV: &str = ", all_varchar = true, strict_mode = false";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cgm_local_times() {
    let backend = Backend::local();
    let file = data_file("CGM.csv.gz");
    let out = import(
        &backend,
        "cgm",
        &file,
        &["--time-column", "datetime", "--null-value", "nil"],
    );
    assert!(out.contains("imported 52281 rows"), "{out}");
    let lake = backend.open();
    // Read as UTC wall clock by default; with --null-value nil, isig is a number column.
    compare(
        &lake,
        "cgm (UTC)",
        "SELECT count(*), CAST(min(datetime) AS BIGINT), CAST(max(datetime) AS BIGINT), \
         CAST(sum(glucose) AS DOUBLE), sum(isig) FROM cgm",
        &cgm_duck("CAST(datetime AS TIMESTAMP)"),
        CGM_EXACT,
    )
    .await;
    // Every 'nil' became a null.
    let nil = lake.sql("SELECT count(*) FROM cgm WHERE isig IS NULL").await.unwrap();
    let duck_nil = duckdb(
        &format!("SELECT count(*) FROM {} WHERE isig = 'nil'", read_csv(&file, CGM_CSV)),
        None,
    );
    assert_eq!(cells(&nil.batches), cells(&duck_nil));
    assert_readers_agree(&lake, &backend, "default", "cgm").await;

    // The same wall-clock times in Los Angeles (PDT, UTC-7, the whole file: 2010-03-24 to
    // 2010-10-10 has no DST change) are 7 hours later in UTC; DuckDB converts with timezone().
    let out = import(
        &backend,
        "cgm_la",
        &file,
        &[
            "--time-column",
            "datetime",
            "--timezone",
            "America/Los_Angeles",
            "--null-value",
            "nil",
        ],
    );
    assert!(out.contains("imported 52281 rows"), "{out}");
    compare(
        &lake,
        "cgm (America/Los_Angeles)",
        "SELECT count(*), CAST(min(datetime) AS BIGINT), CAST(max(datetime) AS BIGINT), \
         CAST(sum(glucose) AS DOUBLE), sum(isig) FROM cgm_la",
        &cgm_duck("timezone('America/Los_Angeles', CAST(datetime AS TIMESTAMP))"),
        CGM_EXACT,
    )
    .await;
    // Row by row: every UTC row has its twin 7 hours later in the Los Angeles table.
    let unmatched = lake
        .sql(
            "SELECT count(*) FROM cgm a WHERE NOT EXISTS (SELECT 1 FROM cgm_la b \
             WHERE b.glucose = a.glucose AND (b.isig IS NOT DISTINCT FROM a.isig) \
             AND b.datetime = a.datetime + INTERVAL '7 hours')",
        )
        .await
        .unwrap();
    assert_eq!(cells(&unmatched.batches), [["0"]], "every row shifted by 7 h");
    assert_readers_agree(&lake, &backend, "default", "cgm_la").await;
}

// ---------------------------------------------------------------------------------------------
// sea_surface_temperature.csv.gz: column names with spaces and parentheses.

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sea_surface_temperature_odd_column_names() {
    let backend = Backend::local();
    let file = data_file("sea_surface_temperature.csv.gz");
    // No --time-column: `time (UTC)` is found by its name.
    let out = import(&backend, "sst", &file, &[]);
    assert!(out.contains("imported 19226 rows"), "{out}");
    let info = cli(&backend, &["info", "sst"]);
    assert!(
        info.lines().any(|l| l.trim_end() == "time column  time (UTC)"),
        "{info}"
    );
    let lake = backend.open();
    compare(
        &lake,
        "sea surface temperature",
        "SELECT count(*), CAST(min(\"time (UTC)\") AS BIGINT), CAST(max(\"time (UTC)\") AS BIGINT), \
         sum(\"temperature (celsius)\") FROM sst",
        &format!(
            "SELECT count(*), epoch_us(min(CAST(\"time (UTC)\" AS TIMESTAMPTZ))), \
             epoch_us(max(CAST(\"time (UTC)\" AS TIMESTAMPTZ))), \
             sum(CAST(\"temperature (celsius)\" AS DOUBLE)) FROM {}",
            read_csv(&file, ", all_varchar = true")
        ),
        3,
    )
    .await;
    assert_readers_agree(&lake, &backend, "default", "sst").await;
}

// ---------------------------------------------------------------------------------------------
// cycling.csv.gz: an unnamed first column and elapsed times ("0 days 00:00:01").

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cycling_elapsed_times() {
    let backend = Backend::local();
    let file = data_file("cycling.csv.gz");
    // Without the origin, the error says which option fixes it.
    let mut args = backend.cli_args();
    args.extend([
        "import".into(),
        "rides.cycling".into(),
        file.display().to_string(),
        "--time-column".into(),
        "time".into(),
    ]);
    let e = crate::varve_err(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(e.contains("is an elapsed time") && e.contains("--time-origin"), "{e}");
    let out = import(
        &backend,
        "rides.cycling",
        &file,
        &["--time-column", "time", "--time-origin", "2016-06-05T09:00:00Z"],
    );
    assert!(out.contains("imported 4391 rows"), "{out}");
    let info = cli(&backend, &["info", "rides.cycling"]);
    assert!(
        info.lines().any(|l| l.trim_start().starts_with("column_1 ")),
        "the unnamed first column is column_1:\n{info}"
    );
    let lake = backend.open();
    // DuckDB: the origin plus the elapsed text as an INTERVAL (naive arithmetic = UTC).
    compare(
        &lake,
        "cycling",
        "SELECT count(*), CAST(min(time) AS BIGINT), CAST(max(time) AS BIGINT), \
         sum(CAST(CAST(time AS BIGINT) AS DOUBLE)), CAST(sum(column_1) AS DOUBLE), \
         CAST(sum(power) AS DOUBLE), sum(speed), sum(distance), sum(altitude) \
         FROM rides.cycling",
        &format!(
            "SELECT count(*), epoch_us(min(t)), epoch_us(max(t)), sum(CAST(epoch_us(t) AS DOUBLE)), \
             CAST(sum(column0) AS DOUBLE), CAST(sum(power) AS DOUBLE), sum(speed), sum(distance), \
             sum(altitude) FROM (SELECT *, TIMESTAMP '2016-06-05 09:00:00' + CAST(time AS INTERVAL) AS t \
             FROM {})",
            read_csv(&file, "")
        ),
        3,
    )
    .await;
    // Row by row: each row's time as Varve stored it and as DuckDB computes it.
    let ours = lake
        .sql("SELECT column_1, CAST(time AS BIGINT) FROM rides.cycling ORDER BY 1, 2")
        .await
        .unwrap();
    let theirs = duckdb(
        &format!(
            "SELECT column0, epoch_us(TIMESTAMP '2016-06-05 09:00:00' + CAST(time AS INTERVAL)) \
             FROM {} ORDER BY 1, 2",
            read_csv(&file, "")
        ),
        None,
    );
    let (ours, theirs) = (cells(&ours.batches), cells(&theirs));
    assert_eq!(ours.len(), 4391);
    assert!(ours == theirs, "cycling: per-row times differ from DuckDB's");
    assert_readers_agree(&lake, &backend, "rides", "cycling").await;
}

// ---------------------------------------------------------------------------------------------
// tmy3_723170.csv: a station line before the header, date and time of day in two columns, 24:00
// for the end of a day, local standard time UTC-5.

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tmy3_two_time_columns_and_24_00() {
    let backend = Backend::local();
    let file = data_file("tmy3_723170.csv");
    let out = import(
        &backend,
        "weather.tmy3",
        &file,
        &[
            "--skip-rows",
            "1",
            "--time-column",
            "Date (MM/DD/YYYY)",
            "--time-column",
            "Time (HH:MM)",
            "--time-format",
            "%m/%d/%Y %H:%M",
            "--timezone=-05:00",
        ],
    );
    assert!(out.contains("imported 8760 rows"), "{out}");
    let lake = backend.open();
    // DuckDB computes UTC itself: the date at midnight, plus the time of day as an interval
    // (24:00 is a whole day), plus 5 hours.
    let utc = "strptime(\"Date (MM/DD/YYYY)\", '%m/%d/%Y') + CAST(\"Time (HH:MM)\" AS INTERVAL) \
               + INTERVAL 5 HOUR";
    compare(
        &lake,
        "tmy3",
        "SELECT count(*), count(DISTINCT time), CAST(min(time) AS BIGINT), CAST(max(time) AS BIGINT), \
         sum(CAST(CAST(time AS BIGINT) AS DOUBLE)), CAST(sum(\"GHI (W/m^2)\") AS DOUBLE), \
         sum(\"Dry-bulb (C)\") FROM weather.tmy3",
        &format!(
            "SELECT count(*), count(DISTINCT t), epoch_us(min(t)), epoch_us(max(t)), \
             sum(CAST(epoch_us(t) AS DOUBLE)), CAST(sum(CAST(\"GHI (W/m^2)\" AS BIGINT)) AS DOUBLE), \
             sum(CAST(\"Dry-bulb (C)\" AS DOUBLE)) FROM (SELECT *, {utc} AS t FROM {})",
            read_csv(&file, ", skip = 1, all_varchar = true")
        ),
        4,
    )
    .await;
    // Each row's time, checked one by one: the joined text read by Varve vs DuckDB's arithmetic.
    let ours = lake
        .sql(
            "SELECT \"Date (MM/DD/YYYY)\", \"Time (HH:MM)\", CAST(time AS BIGINT) FROM weather.tmy3 \
             ORDER BY 3",
        )
        .await
        .unwrap();
    let theirs = duckdb(
        &format!(
            "SELECT \"Date (MM/DD/YYYY)\", \"Time (HH:MM)\", epoch_us({utc}) FROM {} ORDER BY 3",
            read_csv(&file, ", skip = 1, all_varchar = true")
        ),
        None,
    );
    let (ours, theirs) = (cells(&ours.batches), cells(&theirs));
    assert_eq!(ours.len(), 8760);
    assert!(ours == theirs, "tmy3: per-row times differ from DuckDB's");
    let midnight = ours.iter().filter(|r| r[1] == "24:00").count();
    assert_eq!(midnight, 365, "one 24:00 per day");
    assert_readers_agree(&lake, &backend, "weather", "tmy3").await;
}
