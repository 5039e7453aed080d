//! `varve maintain`, `varve alter` and `varve info --json`, and crash safety: `varve maintain`
//! killed with SIGKILL at random points, 20 times, between imports; after each kill the table
//! answers with the rows of its last committed snapshot, DuckDB and PyIceberg agree, and the next
//! maintain finishes.

use std::process::{Command, Stdio};
use std::time::Duration;

use varve_testkit::{assert_readers_agree, Backend};

use crate::{varve, varve_err, varve_ok};

/// Writes a small CSV of `rows` rows for file number `n` (two days, three hosts).
fn csv(dir: &std::path::Path, n: usize, rows: usize) -> String {
    let mut text = String::from("ts,host,v\n");
    for r in 0..rows {
        let day = 1 + (n + r) % 2;
        text.push_str(&format!(
            "2024-05-0{day}T{:02}:{:02}:{:02}Z,h{},{}\n",
            r % 24,
            n % 60,
            r % 60,
            r % 3,
            n * 1000 + r
        ));
    }
    let path = dir.join(format!("in-{n}.csv"));
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

/// The `varve` binary under test with `args`, without the caller's `VARVE_LAKE`.
fn varve_command<S: AsRef<std::ffi::OsStr>>(args: impl IntoIterator<Item = S>) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_varve"));
    c.args(args).env_remove("VARVE_LAKE");
    c
}

fn with_lake<'a>(lake: &'a [String], rest: &[&'a str]) -> Vec<&'a str> {
    let mut v: Vec<&str> = lake.iter().map(String::as_str).collect();
    v.extend_from_slice(rest);
    v
}

fn import(lake: &[String], file: &str) {
    varve_ok(&with_lake(
        lake,
        &[
            "import",
            "t",
            file,
            "--time-column",
            "ts",
            "--series-key",
            "host",
            "--partition",
            "day",
            "--no-maintain",
            "-q",
        ],
    ));
}

fn count_and_sum(lake: &[String]) -> String {
    varve_ok(&with_lake(
        lake,
        &["sql", "SELECT count(*), sum(v) FROM t", "--format", "csv"],
    ))
}

#[test]
fn maintain_alter_and_info_json() {
    let backend = Backend::local();
    let dir = tempfile::tempdir().unwrap();
    let lake = backend.cli_args();
    for n in 0..12 {
        import(&lake, &csv(dir.path(), n, 10));
    }
    let info: serde_json::Value = serde_json::from_str(&varve_ok(&with_lake(&lake, &["info", "t", "--json"]))).unwrap();
    for key in [
        "rows",
        "live_files",
        "delete_files",
        "bytes",
        "manifests",
        "snapshots",
        "partitions",
        "min_time",
        "max_time",
        "series",
        "properties",
    ] {
        assert!(info.get(key).is_some(), "info --json lacks {key}: {info}");
    }
    assert_eq!(info["rows"], 120);
    assert_eq!(info["live_files"], 24);
    assert_eq!(info["min_time"], "2024-05-01T00:00:00Z");
    let before = count_and_sum(&lake);

    let dry = varve_ok(&with_lake(&lake, &["maintain", "--dry-run"]));
    assert!(
        dry.contains("dry run") && dry.contains("would compact partition 2024-05-01"),
        "{dry}"
    );
    let out = varve_ok(&with_lake(&lake, &["maintain", "t"]));
    assert!(out.contains("files 24 -> 2"), "{out}");
    assert_eq!(count_and_sum(&lake), before);
    let reports: serde_json::Value =
        serde_json::from_str(&varve_ok(&with_lake(&lake, &["maintain", "--json"]))).unwrap();
    assert_eq!(reports[0]["partitions_compacted"], 0, "{reports}");
    let history = varve_ok(&with_lake(&lake, &["history", "t"]));
    assert!(
        history.contains("replace") && history.contains("compaction: 12 files into 1"),
        "{history}"
    );

    let out = varve_ok(&with_lake(&lake, &["alter", "t", "--set", "varve.retention=3650d"]));
    assert!(out.contains("varve.retention = 3650d"), "{out}");
    let info: serde_json::Value = serde_json::from_str(&varve_ok(&with_lake(&lake, &["info", "t", "--json"]))).unwrap();
    assert_eq!(info["properties"]["varve.retention"], "3650d");
    let e = varve_err(&with_lake(
        &lake,
        &["alter", "t", "--set", "varve.dedup=last-write-wins"],
    ));
    assert!(e.contains("fixed when the table is created"), "{e}");
    assert_eq!(
        varve(&with_lake(
            &lake,
            &["alter", "t", "--set", "varve.target-file-size=huge"]
        ))
        .status
        .code(),
        Some(2)
    );
    let e = varve_err(&with_lake(&lake, &["alter", "t", "--set", "varve.nonsense=1"]));
    assert!(e.contains("unknown table property"), "{e}");
    assert!(varve_err(&with_lake(&lake, &["alter", "t"])).contains("nothing to change"));
    varve_ok(&with_lake(&lake, &["alter", "t", "--unset", "varve.retention"]));
    let e = varve_err(&with_lake(&lake, &["maintain", "t", "--orphan-age", "soon"]));
    assert!(e.contains("--orphan-age"), "{e}");

    // Deletes: a predicate or --all is required; the count is reported and holds.
    let e = varve_err(&with_lake(&lake, &["delete", "t"]));
    assert!(e.contains("--where") && e.contains("--all"), "{e}");
    let out = varve_ok(&with_lake(&lake, &["delete", "t", "--where", "host = 'h1'"]));
    assert!(out.starts_with("deleted 36 rows from default.t"), "{out}");
    let left = varve_ok(&with_lake(
        &lake,
        &["sql", "SELECT count(*) FROM t WHERE host = 'h1'", "--format", "csv"],
    ));
    assert_eq!(left.lines().nth(1), Some("0"));
    assert_eq!(
        varve(&with_lake(&lake, &["delete", "t", "--where", "nope = 1"]))
            .status
            .code(),
        Some(2)
    );
    let out = varve_ok(&with_lake(&lake, &["delete", "t", "--all"]));
    assert!(out.starts_with("deleted 84 rows"), "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn maintain_survives_sigkill() {
    let backend = Backend::local();
    let dir = tempfile::tempdir().unwrap();
    let lake = backend.cli_args();
    let opened = backend.open();
    let mut n = 0;
    // A cheap deterministic sequence of kill delays (0-600 ms).
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    for run in 0..20 {
        for _ in 0..4 {
            import(&lake, &csv(dir.path(), n, 50));
            n += 1;
        }
        let expected = count_and_sum(&lake);
        seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        let delay = Duration::from_millis((seed >> 33) % 600);
        let mut child = varve_command(with_lake(
            &lake,
            &[
                "maintain",
                "t",
                "--orphan-age",
                "0s",
                "--snapshot-retention",
                "0s",
                "-q",
            ],
        ))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
        std::thread::sleep(delay);
        let _ = child.kill();
        let _ = child.wait();
        // Whatever the kill interrupted, the table answers with its last committed rows.
        assert_eq!(count_and_sum(&lake), expected, "run {run}, killed after {delay:?}");
        if run % 5 == 4 {
            assert_readers_agree(&opened, &backend, "default", "t").await;
        }
    }
    let out = varve_ok(&with_lake(&lake, &["maintain", "t", "--orphan-age", "0s"]));
    assert!(out.contains("files"), "{out}");
    assert_eq!(
        varve_ok(&with_lake(&lake, &["sql", "SELECT count(*) FROM t", "--format", "csv"]))
            .lines()
            .nth(1),
        Some("4000")
    );
    assert_readers_agree(&opened, &backend, "default", "t").await;
}

#[test]
fn import_and_create_with_last_write_wins() {
    let backend = Backend::local();
    let lake = backend.cli_args();
    let dir = tempfile::tempdir().unwrap();
    let first = dir.path().join("a.csv");
    // Two rows of one key in one file: the later wins.
    std::fs::write(
        &first,
        "ts,host,v\n2024-05-01T00:00:00Z,h1,1\n2024-05-01T00:00:00Z,h1,2\n2023-02-01T00:00:00Z,h2,3\n",
    )
    .unwrap();
    let out = varve_ok(&with_lake(
        &lake,
        &[
            "import",
            "w",
            first.to_str().unwrap(),
            "--time-column",
            "ts",
            "--series-key",
            "host",
            "--dedup",
            "last-write-wins",
            "--partition",
            "year",
        ],
    ));
    assert!(
        out.contains("imported 2 rows") && out.contains("1 input row superseded"),
        "{out}"
    );
    let second = dir.path().join("b.csv");
    std::fs::write(
        &second,
        "ts,host,v\n2023-02-01T00:00:00Z,h2,30\n2024-06-01T00:00:00Z,h1,4\n",
    )
    .unwrap();
    varve_ok(&with_lake(&lake, &["import", "w", second.to_str().unwrap(), "-q"]));
    let rows = varve_ok(&with_lake(
        &lake,
        &["sql", "SELECT host, v FROM w ORDER BY ts", "--format", "csv"],
    ));
    assert_eq!(rows, "host,v\nh2,30\nh1,2\nh1,4\n");
    let d = varve_ok(&with_lake(&lake, &["info", "w"]));
    assert!(
        d.contains("dedup        last-write-wins") && d.contains("partition    year"),
        "{d}"
    );
    let files = walk(&backend.table_location("default", "w"));
    assert!(files.iter().any(|f| f.contains("ts_year=2023")), "{files:?}");

    let err = varve_err(&with_lake(
        &lake,
        &["create", "p", "-c", "v:int64", "--dedup", "last-write-wins"],
    ));
    assert!(err.contains("--dedup needs --time-column"), "{err}");
    let err = varve_err(&with_lake(
        &lake,
        &[
            "create",
            "q",
            "-c",
            "ts:timestamptz",
            "--time-column",
            "ts",
            "--dedup",
            "newest",
        ],
    ));
    assert!(err.contains("expected none or last-write-wins"), "{err}");
}

fn walk(dir: &str) -> Vec<String> {
    let mut out = vec![];
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(p.to_str().unwrap()));
        } else {
            out.push(p.display().to_string());
        }
    }
    out
}

#[test]
fn alter_changes_columns_and_duckdb_and_pyiceberg_follow() {
    let backend = Backend::local();
    let lake = backend.cli_args();
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("a.csv");
    std::fs::write(
        &f,
        "ts,host,temp,n\n2024-05-01T00:00:00Z,h1,1.5,1\n2024-05-01T00:01:00Z,h2,2.5,2\n",
    )
    .unwrap();
    let p = f.to_str().unwrap();
    varve_ok(&with_lake(&lake, &["import", "t", p, "--series-key", "host", "-q"]));
    let out = varve_ok(&with_lake(
        &lake,
        &[
            "alter",
            "t",
            "--add-column",
            "humidity:float64",
            "--rename-column",
            "temp=temperature",
            "--drop-column",
            "n",
        ],
    ));
    assert!(
        out.contains("temperature Float64") && out.contains("humidity Float64") && !out.contains(" n "),
        "{out}"
    );
    let rows = varve_ok(&with_lake(
        &lake,
        &[
            "sql",
            "SELECT host, temperature, humidity FROM t ORDER BY host",
            "--format",
            "csv",
        ],
    ));
    assert_eq!(rows, "host,temperature,humidity\nh1,1.5,\nh2,2.5,\n");
    let t = varve_testkit::Backend::open(&backend);
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(assert_readers_agree(&t, &backend, "default", "t"));
    let err = varve_err(&with_lake(&lake, &["alter", "t", "--drop-column", "ts"]));
    assert!(err.contains("time column"), "{err}");
    let err = varve_err(&with_lake(
        &lake,
        &["alter", "t", "--widen-column", "temperature:int32"],
    ));
    assert!(err.contains("widening"), "{err}");
    let err = varve_err(&with_lake(&lake, &["alter", "t", "--add-column", "x"]));
    assert!(err.contains("expected NAME:TYPE"), "{err}");
}

/// The daily totals per host, with rollup routing on or off.
fn daily(lake: &[String], routing: bool) -> String {
    let q = "SELECT host, time_bucket(INTERVAL '1 day', ts) AS d, count(*) AS n, sum(v) AS s FROM t GROUP BY 1, 2 \
             ORDER BY 1, 2";
    let sql = match routing {
        true => q.to_string(),
        false => format!("SET varve.rollup_routing = off; {q}"),
    };
    varve_ok(&with_lake(lake, &["sql", &sql, "--format", "csv"]))
}

/// `varve rollup` commands, and a refresh killed with SIGKILL at random points, 10 times, after
/// imports and deletes: after each kill the rollup and the table answer as before (routed answers
/// equal the table's), and DuckDB and PyIceberg read the rollup; the last refresh catches up.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rollup_refresh_survives_sigkill() {
    let backend = Backend::local();
    let dir = tempfile::tempdir().unwrap();
    let lake = backend.cli_args();
    let opened = backend.open();
    for n in 0..4 {
        import(&lake, &csv(dir.path(), n, 200));
    }
    let select = "SELECT host, time_bucket(INTERVAL '1 hour', ts) AS bucket, count(*) AS n, sum(v) AS s FROM t \
                  GROUP BY host, bucket";
    let out = varve_ok(&with_lake(&lake, &["rollup", "create", "t_1h", "--on", "t", select]));
    assert!(out.starts_with("created rollup default.t_1h"), "{out}");
    let e = varve_err(&with_lake(&lake, &["rollup", "create", "t_1h", "--on", "t", select]));
    assert!(e.contains("exists already"), "{e}");
    let ls = varve_ok(&with_lake(&lake, &["rollup", "ls", "t", "--json"]));
    assert!(ls.contains("\"up_to_date\": true"), "{ls}");
    assert_eq!(daily(&lake, true), daily(&lake, false));
    let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
    let mut n = 4;
    for run in 0..10 {
        import(&lake, &csv(dir.path(), n, 200));
        n += 1;
        let cut = 200 * n;
        varve_ok(&with_lake(
            &lake,
            &["delete", "t", "--where", &format!("v % 7 = 0 AND v < {cut}")],
        ));
        let expected = daily(&lake, false);
        seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        let delay = Duration::from_millis((seed >> 33) % 400);
        let mut child = varve_command(with_lake(&lake, &["rollup", "refresh"]))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(delay);
        let _ = child.kill();
        let _ = child.wait();
        // Refreshed or not, routed answers are the table's, and the rollup reads.
        assert_eq!(daily(&lake, true), expected, "run {run}, killed after {delay:?}");
        varve_ok(&with_lake(&lake, &["sql", "SELECT count(*) FROM t_1h"]));
        if run % 5 == 4 {
            assert_readers_agree(&opened, &backend, "default", "t_1h").await;
        }
    }
    let out = varve_ok(&with_lake(&lake, &["rollup", "refresh", "--json"]));
    assert!(out.contains("\"rollup\": \"default.t_1h\""), "{out}");
    let ls = varve_ok(&with_lake(&lake, &["rollup", "ls"]));
    assert!(ls.contains("up to date"), "{ls}");
    assert_eq!(daily(&lake, true), daily(&lake, false));
    let explain = varve_ok(&with_lake(
        &lake,
        &[
            "sql",
            "EXPLAIN SELECT host, count(*) FROM t GROUP BY host",
            "--format",
            "csv",
        ],
    ));
    assert!(explain.contains("answered from rollup default.t_1h"), "{explain}");
    assert_readers_agree(&opened, &backend, "default", "t_1h").await;
    assert_eq!(
        varve_ok(&with_lake(&lake, &["rollup", "drop", "t_1h"])).trim(),
        "dropped rollup t_1h"
    );
    assert!(varve_err(&with_lake(&lake, &["rollup", "drop", "t_1h"])).contains("does not exist"));
    assert!(varve_ok(&with_lake(&lake, &["rollup", "drop", "t_1h", "--if-exists"])).contains("does not exist"));
}

/// `varve maintain --orphan-age 0s` in a loop while 8 `varve import`s commit to the same table
/// (issue 56): every import that exits 0 has its rows in the table exactly once, every query
/// answers, and DuckDB and PyIceberg read the same rows. Before the orphan fence, the sweep
/// deleted data files that a commit landing after its listing referenced (every query then
/// failed), and deleted old metadata versions that a slow writer then wrote again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn orphan_cleanup_at_age_zero_races_imports() {
    let backend = Backend::local();
    let dir = tempfile::tempdir().unwrap();
    let lake = backend.cli_args();
    let opened = backend.open();
    // The table exists before the writers race (creation is not what is tested here).
    import(&lake, &csv(dir.path(), 0, 20));
    let mut expected = (20u64, (0..20u64).sum::<u64>());
    for round in 0..2 {
        let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let sweeper = {
            let (lake, done) = (lake.clone(), done.clone());
            std::thread::spawn(move || {
                let mut runs = 0;
                while !done.load(std::sync::atomic::Ordering::SeqCst) || runs == 0 {
                    let out = varve_command(with_lake(&lake, &["maintain", "t", "--orphan-age", "0s", "-q"]))
                        .output()
                        .unwrap();
                    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
                    runs += 1;
                }
                runs
            })
        };
        let writers: Vec<_> = (0..8)
            .map(|w| {
                let n = 1 + round * 8 + w;
                let file = csv(dir.path(), n, 30);
                let args: Vec<String> = with_lake(
                    &lake,
                    &[
                        "import",
                        "t",
                        &file,
                        "--time-column",
                        "ts",
                        "--series-key",
                        "host",
                        "--partition",
                        "day",
                        "-q",
                    ],
                )
                .into_iter()
                .map(str::to_string)
                .collect();
                std::thread::spawn(move || {
                    let out = varve_command(&args).output().unwrap();
                    (n, out)
                })
            })
            .collect();
        for w in writers {
            let (n, out) = w.join().unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            if out.status.success() {
                expected.0 += 30;
                expected.1 += (0..30u64).map(|r| n as u64 * 1000 + r).sum::<u64>();
            } else {
                // A commit may give up (nothing committed) but only with a clear, retryable error.
                assert!(
                    err.contains("run it again") || err.contains("retry"),
                    "import {n}: {err}"
                );
            }
        }
        done.store(true, std::sync::atomic::Ordering::SeqCst);
        let runs = sweeper.join().unwrap();
        assert!(runs >= 1);
        assert_eq!(
            count_and_sum(&lake).lines().nth(1).unwrap(),
            format!("{},{}", expected.0, expected.1),
            "round {round}: every acknowledged import exactly once"
        );
        assert_readers_agree(&opened, &backend, "default", "t").await;
    }
    // The history holds every acknowledged commit: none was written to a reused version number.
    varve_ok(&with_lake(&lake, &["maintain", "t", "--orphan-age", "0s"]));
    assert_eq!(
        count_and_sum(&lake).lines().nth(1).unwrap(),
        format!("{},{}", expected.0, expected.1)
    );
}

/// `varve alter --set varve.retention` says how many rows the retention hides; `varve maintain`
/// keeps a table whose every row is past the retention until `--yes` (issue 57).
#[test]
fn retention_says_what_it_hides_and_asks_before_dropping_everything() {
    let backend = Backend::local();
    let dir = tempfile::tempdir().unwrap();
    let lake = backend.cli_args();
    import(&lake, &csv(dir.path(), 0, 30));
    let o = varve(&with_lake(&lake, &["alter", "t", "--set", "varve.retention=30d"]));
    assert!(o.status.success());
    let out = String::from_utf8_lossy(&o.stdout);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(out.contains("the retention hides 30 of 30 rows"), "{out}");
    assert!(
        err.contains("every row of default.t is older than the retention"),
        "{err}"
    );
    let info = varve_ok(&with_lake(&lake, &["info", "t"]));
    assert!(info.contains("past retention 30 rows"), "{info}");
    let out = varve_ok(&with_lake(&lake, &["maintain", "t"]));
    assert!(out.contains("every row of the table") && out.contains("--yes"), "{out}");
    let info: serde_json::Value = serde_json::from_str(&varve_ok(&with_lake(&lake, &["info", "t", "--json"]))).unwrap();
    assert_eq!(info["rows"], 30);
    let out = varve_ok(&with_lake(&lake, &["maintain", "t", "--yes"]));
    assert!(out.contains("retention: drop 2 files (30 rows) older than"), "{out}");
    let info: serde_json::Value = serde_json::from_str(&varve_ok(&with_lake(&lake, &["info", "t", "--json"]))).unwrap();
    assert_eq!(info["rows"], 0);
}
