//! Bad input to `varve import` and commands on tables that do not exist: each case must fail with
//! one clear line naming the file, column and row where they apply, exit with the code of its
//! kind (2 bad input, 3 not found), and leave the lake as it was: an existing table keeps its
//! metadata version, snapshot, rows and files; a table the import was to create does not appear.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use varve::arrow::array::{Float64Array, ListBuilder, RecordBatch, StringBuilder, TimestampMicrosecondArray};
use varve::arrow::datatypes::{DataType, Field, Schema, TimeUnit};
use varve::Lake;
use varve_testkit::{data_file, Backend};

use crate::{varve, varve_err, varve_ok};

/// A local lake holding `default.readings` (time, sensor, velocity) from a good CSV, and a
/// directory for input files.
struct Fixture {
    backend: Backend,
    lake: Lake,
    inputs: tempfile::TempDir,
}

const TABLE: &str = "readings";

impl Fixture {
    fn new() -> Fixture {
        let backend = Backend::local();
        let lake = backend.open();
        let f = Fixture {
            backend,
            lake,
            inputs: tempfile::tempdir().expect("tempdir"),
        };
        let good = f.write(
            "good.csv",
            "time,sensor,velocity\n\
             2024-05-01T08:00:00Z,a,1.5\n\
             2024-05-01T08:01:00Z,a,2.5\n\
             2024-05-01T08:00:00Z,b,0.5\n",
        );
        let out = f.ok(&["import", TABLE, path(&good), "--series-key", "sensor"]);
        assert!(out.starts_with("imported 3 rows"), "{out}");
        f
    }

    /// Writes an input file; returns its path.
    fn write(&self, name: &str, content: &str) -> PathBuf {
        self.write_bytes(name, content.as_bytes())
    }

    fn write_bytes(&self, name: &str, content: &[u8]) -> PathBuf {
        let p = self.inputs.path().join(name);
        std::fs::write(&p, content).expect("write input");
        p
    }

    fn args(&self, args: &[&str]) -> Vec<String> {
        let mut all = self.backend.cli_args();
        all.extend(args.iter().map(|s| s.to_string()));
        all
    }

    fn ok(&self, args: &[&str]) -> String {
        let all = self.args(args);
        varve_ok(&all.iter().map(String::as_str).collect::<Vec<_>>())
    }

    /// Runs a command that must fail: one line on stderr, exit `code`, the same message when run
    /// again. Returns the message.
    fn fails(&self, args: &[&str], code: i32) -> String {
        let all = self.args(args);
        let all: Vec<&str> = all.iter().map(String::as_str).collect();
        let err = varve_err(&all);
        let again = varve(&all);
        assert_eq!(again.status.code(), Some(code), "exit code of varve {args:?}: {err}");
        assert_eq!(String::from_utf8_lossy(&again.stderr), err, "same message");
        err.trim_end().to_string()
    }

    /// Everything observable about the lake and the table.
    async fn state(&self) -> State {
        let d = self.lake.describe(TABLE).await.expect("describe");
        let r = self
            .lake
            .sql(&format!("SELECT count(*) FROM {TABLE}"))
            .await
            .expect("count");
        let rows = varve::arrow::util::display::array_value_to_string(r.batches[0].column(0), 0).expect("count");
        State {
            version: d.metadata_version,
            snapshot: d.snapshot_id,
            rows,
            info: self.ok(&["info", TABLE]),
            tables: self.ok(&["ls"]),
            files: files_under(Path::new(&self.backend.url())),
        }
    }

    /// Asserts that the failure left the lake exactly as `before`.
    async fn assert_unchanged(&self, before: &State, case: &str) {
        let after = self.state().await;
        assert_eq!(
            (after.version, after.snapshot, &after.rows),
            (before.version, before.snapshot, &before.rows),
            "{case}: metadata version, snapshot and rows must not change"
        );
        assert_eq!(after.info, before.info, "{case}: varve info");
        assert_eq!(after.tables, before.tables, "{case}: varve ls");
        assert_eq!(after.files, before.files, "{case}: no file may be added or removed");
    }

    /// Imports `file` into the existing table and into a new one; both must fail with a message
    /// containing every part of `expect`, exit 2, and change nothing.
    async fn rejects(&self, case: &str, file: &Path, extra: &[&str], expect: &[&str]) -> String {
        let before = self.state().await;
        let mut args = vec!["import", TABLE, path(file)];
        args.extend_from_slice(extra);
        let err = self.fails(&args, 2);
        for part in expect {
            assert!(err.contains(part), "{case}: {err:?} should contain {part:?}");
        }
        self.assert_unchanged(&before, case).await;

        // The same input as the first of a new table: an error, and no table left behind.
        let mut args = vec!["import", "fresh.table", path(file)];
        args.extend_from_slice(extra);
        let new_err = self.fails(&args, 2);
        assert!(
            new_err.contains(&file.display().to_string()),
            "{case} (new table): {new_err:?} should name the file"
        );
        self.assert_unchanged(&before, &format!("{case} (new table)")).await;
        assert!(
            !self.ok(&["ls"]).contains("fresh.table"),
            "{case}: the new table must not exist"
        );
        err
    }
}

#[derive(Debug)]
struct State {
    version: u64,
    snapshot: Option<i64>,
    rows: String,
    info: String,
    tables: String,
    files: Vec<PathBuf>,
}

fn path(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

/// All files under `dir`, sorted.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries {
            let p = e.expect("dir entry").path();
            if p.is_dir() {
                todo.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_word_in_a_number_column_names_file_column_and_row() {
    let f = Fixture::new();
    // Two files in one import: the first is good, the second has 'fast' in row 70,000 (in its
    // second batch of rows). Nothing of either may be committed.
    let more = f.write("more.csv", "time,sensor,velocity\n2024-05-02T00:00:00Z,a,3.5\n");
    let mut text = String::from("time,sensor,velocity\n");
    for i in 0..70_000u32 {
        let v = if i == 69_999 {
            "fast".to_string()
        } else {
            format!("{}.25", i % 50)
        };
        text.push_str(&format!(
            "2024-05-03T{:02}:{:02}:{:02}Z,c,{v}\n",
            i / 3600 % 24,
            i / 60 % 60,
            i % 60
        ));
    }
    let bad = f.write("later.csv", &text);
    let before = f.state().await;
    let err = f.fails(&["import", TABLE, path(&more), path(&bad)], 2);
    assert_eq!(
        err,
        format!(
            "error: {}: column velocity, row 70000: 'fast' is not a float64",
            bad.display()
        )
    );
    f.assert_unchanged(&before, "lossy cast").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_empty_time_is_refused() {
    let f = Fixture::new();
    let file = f.write(
        "null_time.csv",
        "time,sensor,velocity\n2024-05-02T00:00:00Z,a,1\n2024-05-02T00:01:00Z,a,2\n,a,3\n",
    );
    let err = f
        .rejects(
            "null time",
            &file,
            &["--time-column", "time"],
            &["column time, row 3: the time is null"],
        )
        .await;
    assert!(err.starts_with(&format!("error: {}: ", file.display())), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unparsable_time_is_refused() {
    let f = Fixture::new();
    let file = f.write(
        "bad_time.csv",
        "time,sensor,velocity\n2024-05-02T00:00:00Z,a,1\nyesterday,a,2\n",
    );
    let err = f
        .rejects(
            "unparsable time",
            &file,
            &["--time-column", "time"],
            &["column time, row 2: 'yesterday' is not a time"],
        )
        .await;
    assert!(err.starts_with(&format!("error: {}: ", file.display())), "{err}");
    // With a format given, the message names the format expected.
    let err = f.fails(&["import", TABLE, path(&file), "--time-format", "%d/%m/%Y %H:%M"], 2);
    assert!(err.contains("'2024-05-02T00:00:00Z' is not a time"), "{err}");
    assert!(err.contains("%d/%m/%Y %H:%M"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_local_time_in_a_dst_gap_is_refused_clearly() {
    let f = Fixture::new();
    // 2010-03-14 02:30 did not happen in Los Angeles (clocks went from 02:00 to 03:00).
    let file = f.write(
        "dst_gap.csv",
        "time,sensor,velocity\n2010-03-14 01:30:00,a,1\n2010-03-14 02:30:00,a,2\n",
    );
    f.rejects(
        "DST gap",
        &file,
        &["--time-column", "time", "--timezone", "America/Los_Angeles"],
        &[
            "column time, row 2",
            "2010-03-14 02:30:00",
            "does not exist in time zone America/Los_Angeles",
        ],
    )
    .await;
}

/// A Parquet file with a list column, which Varve cannot store.
fn list_parquet(path: &Path) {
    let schema = Arc::new(Schema::new(vec![
        Field::new(
            "time",
            DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            false,
        ),
        Field::new("velocity", DataType::Float64, true),
        Field::new(
            "tags",
            DataType::List(Arc::new(Field::new("item", DataType::Utf8, true))),
            true,
        ),
    ]));
    let mut tags = ListBuilder::new(StringBuilder::new());
    tags.values().append_value("x");
    tags.values().append_value("y");
    tags.append(true);
    tags.append(false);
    let batch = RecordBatch::try_new(
        schema.clone(),
        vec![
            Arc::new(
                TimestampMicrosecondArray::from(vec![1_714_550_400_000_000, 1_714_550_460_000_000])
                    .with_timezone("UTC"),
            ),
            Arc::new(Float64Array::from(vec![1.0, 2.0])),
            Arc::new(tags.finish()),
        ],
    )
    .expect("batch");
    let file = std::fs::File::create(path).expect("create parquet");
    let mut w = parquet::arrow::ArrowWriter::try_new(file, schema, None).expect("writer");
    w.write(&batch).expect("write");
    w.close().expect("close");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_column_of_an_unknown_type_is_refused() {
    let f = Fixture::new();
    let file = f.inputs.path().join("tags.parquet");
    list_parquet(&file);
    let err = f
        .rejects("list column", &file, &[], &["column tags", "List", "not supported"])
        .await;
    assert!(err.contains(&file.display().to_string()), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_file_is_not_found() {
    let f = Fixture::new();
    let before = f.state().await;
    let missing = f.inputs.path().join("nope.csv");
    let err = f.fails(&["import", TABLE, path(&missing)], 3);
    assert_eq!(err, format!("error: {}: no such file", missing.display()));
    f.assert_unchanged(&before, "missing file").await;
    // Also when a good file comes first, and into a new table.
    let good = f.write("ok.csv", "time,sensor,velocity\n2024-05-04T00:00:00Z,a,1\n");
    let err = f.fails(&["import", TABLE, path(&good), path(&missing)], 3);
    assert!(err.contains("nope.csv: no such file"), "{err}");
    let err = f.fails(&["import", "fresh.table", path(&missing)], 3);
    assert!(err.contains("nope.csv: no such file"), "{err}");
    f.assert_unchanged(&before, "missing file").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_truncated_gzip_file_is_refused() {
    let f = Fixture::new();
    // A table of stock prices from the head of the real file, then the real file cut in half.
    let real = std::fs::read(data_file("stocks.csv.gz")).expect("read stocks");
    let mut head = String::new();
    std::io::Read::read_to_string(&mut flate2::read::MultiGzDecoder::new(&real[..]), &mut head).expect("gunzip");
    let head: Vec<&str> = head.lines().take(101).collect();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all((head.join("\n") + "\n").as_bytes()).unwrap();
    let head = f.write_bytes("stocks_head.csv.gz", &gz.finish().unwrap());
    let out = f.ok(&["import", "market.stocks", path(&head), "--series-key", "Ticker"]);
    assert!(out.starts_with("imported 100 rows"), "{out}");

    let cut = f.write_bytes("stocks_cut.csv.gz", &real[..real.len() / 2]);
    let before = f.state().await;
    let stocks_before = f.ok(&["info", "market.stocks"]);
    let err = f.fails(&["import", "market.stocks", path(&cut)], 2);
    assert_eq!(
        err,
        format!(
            "error: {}: the file is truncated (unexpected end of input)",
            cut.display()
        )
    );
    assert_eq!(f.ok(&["info", "market.stocks"]), stocks_before);
    f.assert_unchanged(&before, "truncated gzip").await;
    let err = f.fails(&["import", "fresh.table", path(&cut)], 2);
    assert!(err.contains("the file is truncated"), "{err}");
    f.assert_unchanged(&before, "truncated gzip (new table)").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_empty_file_is_refused() {
    let f = Fixture::new();
    let file = f.write("empty.csv", "");
    let err = f.rejects("empty file", &file, &[], &["the file is empty"]).await;
    assert_eq!(err, format!("error: {}: the file is empty", file.display()));
    let gz = f.write_bytes("empty.csv.gz", &[]);
    f.rejects("empty gzip file", &gz, &[], &["the file is empty"]).await;
    let pq = f.write_bytes("empty.parquet", &[]);
    f.rejects("empty parquet file", &pq, &[], &["the file is empty"]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_header_only_file_is_refused() {
    let f = Fixture::new();
    let file = f.write("header.csv", "time,sensor,velocity\n");
    let err = f.rejects("header only", &file, &[], &["the file has no rows"]).await;
    assert_eq!(err, format!("error: {}: the file has no rows", file.display()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_table_that_does_not_exist_is_not_found() {
    let f = Fixture::new();
    let before = f.state().await;
    for args in [
        vec!["sql", "SELECT * FROM nope"],
        vec!["info", "nope"],
        vec!["latest", "nope"],
        vec!["history", "nope"],
        vec!["drop", "nope"],
        vec!["info", "other.nope"],
    ] {
        let err = f.fails(&args, 3);
        assert!(err.contains("nope"), "{args:?}: {err}");
    }
    f.assert_unchanged(&before, "missing table").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_import_into_a_new_table_leaves_no_table() {
    let f = Fixture::new();
    let before = f.state().await;
    // The table is created from the first rows, then a later row is bad: the table made for
    // the import must go again, files and all.
    let mut text = String::from("time,sensor,velocity\n");
    for i in 0..10 {
        text.push_str(&format!("2024-05-05T00:00:{i:02}Z,a,{i}\n"));
    }
    text.push_str("2024-05-05T00:01:00Z,a,\n2024-05-05T00:01:01Z,a,1\nlater,a,2\n");
    let file = f.write("late_error.csv", &text);
    let err = f.fails(&["import", "fresh.table", path(&file)], 2);
    assert!(err.contains("column time, row 13: 'later' is not a time"), "{err}");
    f.assert_unchanged(&before, "failed import into a new table").await;
    assert_eq!(f.ok(&["ls"]).trim_end(), "default.readings");
    let e = f.lake.describe("fresh.table").await.unwrap_err();
    assert_eq!(e.kind(), varve::ErrorKind::NotFound, "{e}");
    // And the name is free for a good import.
    let good = f.write("fresh.csv", "time,sensor,velocity\n2024-05-05T00:00:00Z,a,1\n");
    let out = f.ok(&["import", "fresh.table", path(&good)]);
    assert!(out.starts_with("imported 1 row from"), "{out}");
}
