//! Files as spreadsheets, loggers and trading systems export them (issue 8, defects 1-6, 10, 11):
//! each loads as the file says, or is refused with one line naming the file, line or row and the
//! value. Answers are checked with `varve sql` and, where the stored values matter, DuckDB.

use std::io::Write;
use std::path::{Path, PathBuf};

use varve_testkit::{duckdb, rows, Backend};

use crate::{varve, varve_err, varve_ok};

struct Lake {
    backend: Backend,
    dir: tempfile::TempDir,
}

impl Lake {
    fn new() -> Lake {
        Lake {
            backend: Backend::local(),
            dir: tempfile::tempdir().expect("tempdir"),
        }
    }

    fn file(&self, name: &str, content: &[u8]) -> PathBuf {
        let p = self.dir.path().join(name);
        std::fs::write(&p, content).expect("write");
        p
    }

    fn gz(&self, name: &str, content: &[u8]) -> PathBuf {
        let p = self.dir.path().join(name);
        let mut e = flate2::write::GzEncoder::new(std::fs::File::create(&p).expect("create"), Default::default());
        e.write_all(content).expect("gzip");
        e.finish().expect("gzip");
        p
    }

    fn args<'a>(&'a self, url: &'a str, args: &[&'a str]) -> Vec<&'a str> {
        let mut all = vec!["--lake", url];
        all.extend_from_slice(args);
        all
    }

    fn ok(&self, args: &[&str]) -> String {
        let url = self.backend.url();
        varve_ok(&self.args(&url, args))
    }

    fn err(&self, args: &[&str]) -> (String, Option<i32>) {
        let url = self.backend.url();
        let all = self.args(&url, args);
        let e = varve_err(&all);
        (e, varve(&all).status.code())
    }

    /// `varve sql` as CSV lines without the header.
    fn sql(&self, q: &str) -> Vec<String> {
        let out = self.ok(&["sql", q, "--format", "csv"]);
        out.lines().skip(1).map(str::to_string).collect()
    }
}

fn p(path: &Path) -> &str {
    path.to_str().expect("utf-8")
}

#[test]
fn quoted_empty_strings_are_text_and_unquoted_empty_fields_null() {
    let l = Lake::new();
    let csv = b"time,host,v\n2024-05-01T00:00:00Z,\"\",1\n2024-05-01T00:00:00Z,,2\n";
    let f = l.file("q.csv", csv);
    l.ok(&["import", "t", p(&f), "--time-column", "time", "--series-key", "host"]);
    assert_eq!(
        l.sql("SELECT host IS NULL AS n, count(*) FROM t GROUP BY 1 ORDER BY 1"),
        ["false,1", "true,1"]
    );
    // `varve latest` keeps both series.
    assert_eq!(l.ok(&["latest", "t", "--format", "csv"]).lines().count(), 3);
    // DuckDB reads the empty string and the NULL as stored.
    let loc = l.backend.table_location("default", "t");
    let d = duckdb(
        &format!("SELECT host IS NULL AS n, length(host) AS len, v FROM iceberg_scan('{loc}') ORDER BY v"),
        None,
    );
    // (The helper lists columns by name: len, n, v.)
    assert_eq!(rows(&d), [["0", "false", "1"], ["NULL", "true", "2"]]);

    // The same for TSV, gzip and --null-value: only unquoted fields are NULL spellings.
    let tsv = l.gz(
        "q.tsv.gz",
        b"time\thost\tv\n2024-05-01T00:00:00Z\t\"NA\"\t3\n2024-05-01T00:00:00Z\tNA\t4\n",
    );
    l.ok(&["import", "u", p(&tsv), "--series-key", "host", "--null-value", "NA"]);
    assert_eq!(
        l.sql("SELECT coalesce(host, '<null>'), v FROM u ORDER BY v"),
        ["NA,3", "<null>,4"]
    );
}

#[test]
fn a_byte_order_mark_is_not_part_of_the_first_name() {
    let l = Lake::new();
    let text = b"\xef\xbb\xbftime,v\r\n2024-01-10T06:00:00Z,1\r\n";
    let f = l.file("b.csv", text);
    l.ok(&["import", "b", p(&f), "--time-column", "time"]);
    assert_eq!(l.sql("SELECT time, v FROM b"), ["2024-01-10T06:00:00Z,1"]);
    // Inside gzip, and without --time-column (the name is guessed), and in TSV.
    let g = l.gz("b.csv.gz", text);
    l.ok(&["import", "g", p(&g)]);
    assert_eq!(l.sql("SELECT v FROM g WHERE time = '2024-01-10T06:00:00Z'"), ["1"]);
    let t = l.file("b.tsv", b"\xef\xbb\xbftime\tv\r\n2024-01-10T06:00:00Z\t2\r\n");
    l.ok(&["import", "t", p(&t)]);
    assert_eq!(l.sql("SELECT v FROM t"), ["2"]);
    // NDJSON with a BOM.
    let j = l.file(
        "b.ndjson",
        b"\xef\xbb\xbf{\"time\":\"2024-01-10T06:00:00Z\",\"v\":3}\r\n",
    );
    l.ok(&["import", "j", p(&j)]);
    assert_eq!(l.sql("SELECT v FROM j"), ["3"]);
}

#[test]
fn nanoseconds_are_refused_unless_truncation_is_asked() {
    let l = Lake::new();
    let f = l.file(
        "ns.csv",
        b"time,sensor,v\n2019-06-15T00:00:12.868214000Z,a,1\n2019-06-15T00:00:12.868214001Z,a,2\n",
    );
    let (e, code) = l.err(&["import", "ns", p(&f), "--series-key", "sensor"]);
    assert_eq!(code, Some(2));
    assert!(
        e.contains("column time, row 2: 2019-06-15T00:00:12.868214001Z has nanoseconds; the table keeps microseconds; --truncate-ns"),
        "{e}"
    );
    assert!(e.contains("ns.csv"), "{e}");
    assert!(!l.ok(&["ls"]).contains("ns"), "no table is left behind");
    let out = l.ok(&["import", "ns", p(&f), "--series-key", "sensor", "--truncate-ns"]);
    assert!(
        out.contains("; 1 time truncated to microseconds, 1 key now holding more than one time"),
        "{out}"
    );
    assert_eq!(l.sql("SELECT count(*), count(DISTINCT time) FROM ns"), ["2,1"]);

    // NDJSON numbers in ns, and a Parquet file with ns timestamps.
    let j = l.file("ns.ndjson", b"{\"t\":1560556812868214001,\"v\":1}\n");
    let (e, _) = l.err(&["import", "j", p(&j), "--time-column", "t", "--time-unit", "ns"]);
    assert!(
        e.contains("row 1: 1560556812868214001 (Nanosecond) has nanoseconds"),
        "{e}"
    );
    let out = l.ok(&[
        "import",
        "j",
        p(&j),
        "--time-column",
        "t",
        "--time-unit",
        "ns",
        "--truncate-ns",
    ]);
    assert!(out.contains("1 time truncated"), "{out}");
    let pq = l.dir.path().join("ns.parquet");
    l.ok(&[
        "sql",
        "SELECT arrow_cast('2019-06-15T00:00:12.868214001', 'Timestamp(Nanosecond, None)') AS t, 1 AS v",
        "--output",
        p(&pq),
    ]);
    let (e, _) = l.err(&["import", "pq", p(&pq), "--time-column", "t"]);
    assert!(e.contains("2019-06-15T00:00:12.868214001 has nanoseconds"), "{e}");
}

#[test]
fn infinity_spellings_are_floats() {
    let l = Lake::new();
    let f = l.file(
        "inf.csv",
        b"time,v\n2024-01-01T00:00:00Z,1.5\n2024-01-01T00:01:00Z,Infinity\n2024-01-01T00:02:00Z,-Infinity\n\
          2024-01-01T00:03:00Z,+inf\n2024-01-01T00:04:00Z,NaN\n2024-01-01T00:05:00Z,+Infinity\n",
    );
    l.ok(&["import", "inf", p(&f)]);
    let info = l.ok(&["info", "inf"]);
    assert!(
        info.lines()
            .any(|x| x.trim_start().starts_with('v') && x.contains("Float64")),
        "{info}"
    );
    assert_eq!(
        l.sql("SELECT count(*) FILTER (WHERE v = 'Infinity'::double), count(*) FILTER (WHERE v = '-Infinity'::double), count(*) FILTER (WHERE isnan(v)) FROM inf"),
        ["3,1,1"]
    );
    // Appending text to the float column takes the same spellings.
    let g = l.file(
        "more.csv",
        b"time,v\n2024-01-02T00:00:00Z,-INFINITY\n2024-01-02T00:01:00Z,inf\n",
    );
    l.ok(&["import", "inf", p(&g)]);
    assert_eq!(
        l.sql("SELECT count(*) FROM inf WHERE NOT isnan(v) AND (v > 1e308 OR v < -1e308)"),
        ["6"]
    );
}

#[test]
fn new_columns_of_a_later_file_get_inferred_types() {
    let l = Lake::new();
    let a = l.file("a.csv", b"time,k,a\n2024-01-01T00:00:00Z,x,1\n");
    let b = l.file(
        "b.csv",
        b"time,k,a,b,c\n2024-01-01T00:01:00Z,x,2,10,0.5\n2024-01-01T00:02:00Z,x,3,11,1.25\n",
    );
    l.ok(&["import", "t", p(&a), "--series-key", "k"]);
    let out = l.ok(&["import", "t", p(&b)]);
    assert!(out.contains("new columns: b, c"), "{out}");
    let info = l.ok(&["info", "t"]);
    let ty = |c: &str| {
        info.lines()
            .find(|x| x.split_whitespace().next() == Some(c))
            .unwrap_or("")
            .to_string()
    };
    assert!(ty("b").contains("Int64"), "{info}");
    assert!(ty("c").contains("Float64"), "{info}");
    assert_eq!(l.sql("SELECT sum(b), sum(c) FROM t"), ["21,1.75"]);
    // Both files in one import, too.
    l.ok(&["import", "u", p(&a), p(&b), "--series-key", "k"]);
    assert_eq!(l.sql("SELECT sum(b), sum(c) FROM u"), ["21,1.75"]);
    // An empty field in a new column is NULL.
    let nulls = l.file(
        "c.csv",
        b"time,k,d\n2024-01-01T00:03:00Z,x,1\n2024-01-01T00:04:00Z,x,\n",
    );
    l.ok(&["import", "t", p(&nulls)]);
    assert_eq!(l.sql("SELECT count(d), sum(d) FROM t"), ["1,1"]);
    // A value past the inferred rows that does not fit the inferred type is an error, never text.
    let mut text = String::from("time,k,e\n");
    for i in 0..100_000 {
        text.push_str(&format!("2024-01-02T00:00:00Z,y{i},{i}\n"));
    }
    text.push_str("2024-01-02T00:00:00Z,z,oops\n");
    let late = l.file("late.csv", text.as_bytes());
    let (e, code) = l.err(&["import", "t", p(&late)]);
    assert_eq!(code, Some(2));
    assert!(
        e.contains("late.csv: column e, row 100001: 'oops' is not an int64 (the column is new to the table"),
        "{e}"
    );
}

#[test]
fn a_leap_second_is_refused() {
    let l = Lake::new();
    let f = l.file("leap.csv", b"time,v\n2016-12-31T23:59:59Z,1\n2016-12-31T23:59:60Z,2\n");
    let (e, code) = l.err(&["import", "leap", p(&f)]);
    assert_eq!(code, Some(2));
    assert!(e.contains("leap.csv"), "{e}");
    assert!(
        e.contains("column time, row 2: 2016-12-31T23:59:60Z is a leap second"),
        "{e}"
    );
    let g = l.file("leap2.csv", b"time,v\n2016-12-31 23:59:60,2\n");
    let (e, _) = l.err(&["import", "leap", p(&g)]);
    assert!(e.contains("is a leap second"), "{e}");
    // In a timestamp column that is not the time column, too (Arrow's cast would move it).
    let a = l.file("seen.csv", b"time,seen\n2024-01-01T00:00:00Z,2016-12-31T23:59:59Z\n");
    l.ok(&["import", "s", p(&a)]);
    let b = l.file("seen2.csv", b"time,seen\n2024-01-01T00:01:00Z,2016-12-31T23:59:60Z\n");
    let (e, _) = l.err(&["import", "s", p(&b)]);
    assert!(
        e.contains("column seen, row 1: 2016-12-31T23:59:60Z is a leap second"),
        "{e}"
    );
}

#[test]
fn a_repeated_header_name_is_refused_or_renamed() {
    let l = Lake::new();
    let f = l.file("dup.csv", b"time,series,value,value\n2024-01-01T00:00:00Z,z_2,7,8\n");
    let (e, code) = l.err(&["import", "d", p(&f), "--series-key", "series"]);
    assert_eq!(code, Some(2));
    assert!(e.contains("dup.csv: columns 3 and 4 are both named \"value\""), "{e}");
    let t = l.file(
        "dup2.tsv",
        b"time\ttime\tv\n2024-01-01T00:00:00Z\t2024-01-01T00:00:01Z\t1\n",
    );
    let (e, _) = l.err(&["import", "d", p(&t)]);
    assert!(e.contains("columns 1 and 2 are both named \"time\""), "{e}");
    l.ok(&["import", "d", p(&f), "--series-key", "series", "--rename-duplicates"]);
    assert_eq!(l.sql("SELECT value, value_2 FROM d"), ["7,8"]);
    // NDJSON: a key given twice in one object (Arrow's decoder would keep the last), at any depth.
    let j = l.file(
        "dup.ndjson",
        b"{\"time\":\"2024-01-01T00:00:00Z\",\"v\":1}\n{\"time\":\"2024-01-01T00:01:00Z\",\"v\":7,\"v\":8}\n",
    );
    let (e, code) = l.err(&["import", "j", p(&j)]);
    assert_eq!(code, Some(2));
    assert!(
        e.contains("dup.ndjson: line 2: the key \"v\" appears twice in one object"),
        "{e}"
    );
}

#[test]
fn long_values_are_cut_in_messages() {
    let l = Lake::new();
    let good = l.file("good.csv", b"time,v\n2024-01-01T00:00:00Z,1\n");
    l.ok(&["import", "long", p(&good)]);
    let mut text = b"time,v\n2024-01-01T00:01:00Z,".to_vec();
    text.extend(std::iter::repeat_n(b'x', 4 << 20));
    text.push(b'\n');
    let f = l.file("long.csv", &text);
    let (e, _) = l.err(&["import", "long", p(&f)]);
    assert!(e.len() < 400, "{} bytes of message", e.len());
    assert!(
        e.contains(&format!("'{}... ({} bytes)' is not an int64", "x".repeat(80), 4 << 20)),
        "{e}"
    );
    let mut t = b"time,v\n".to_vec();
    t.extend(std::iter::repeat_n(b'y', 1 << 20));
    t.extend(b",1\n");
    let g = l.file("longtime.csv", &t);
    let (e, _) = l.err(&["import", "long2", p(&g), "--time-column", "time"]);
    assert!(e.len() < 400 && e.contains("(1048576 bytes)"), "{e}");
}

#[test]
fn a_wide_file_imports_in_memory_that_follows_its_size() {
    let l = Lake::new();
    let cols = 2_000;
    let mut text = String::from("time");
    for c in 1..cols {
        text.push_str(&format!(",s{c}"));
    }
    text.push('\n');
    for r in 0..20 {
        text.push_str(&format!("2024-05-01T00:{r:02}:00Z"));
        for c in 1..cols {
            text.push_str(&format!(",{}", (r * c) % 97));
        }
        text.push('\n');
    }
    let f = l.file("wide.csv", text.as_bytes());
    // Peak resident memory of the import process, as the kernel counts it for a child.
    let script = "import resource, subprocess, sys\n\
                  r = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n\
                  print(r.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n\
                  sys.stderr.write(r.stderr)";
    let url = l.backend.url();
    let o = std::process::Command::new(varve_testkit::python())
        .args([
            "-c",
            script,
            env!("CARGO_BIN_EXE_varve"),
            "--lake",
            &url,
            "import",
            "wide",
            p(&f),
        ])
        .output()
        .expect("run python");
    let out = String::from_utf8_lossy(&o.stdout);
    let mut parts = out.split_whitespace();
    assert_eq!(
        parts.next(),
        Some("0"),
        "import failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let kib: u64 = parts.next().and_then(|v| v.parse().ok()).expect("maxrss");
    assert!(
        kib < 200 * 1024,
        "peak RSS {} MiB for a {} KiB file",
        kib / 1024,
        text.len() / 1024
    );
    assert_eq!(l.sql("SELECT count(*), sum(s1999) FROM wide"), ["20,928"]);
    let loc = l.backend.table_location("default", "wide");
    let d = duckdb(
        &format!("SELECT count(*) AS n, sum(s1999) AS s FROM iceberg_scan('{loc}')"),
        None,
    );
    assert_eq!(rows(&d), [["20", "928"]]);
}
