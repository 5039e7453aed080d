//! Whole runs of the `varve-bench` binary at a small scale: the CI correctness check of the
//! suite (every answer must match DuckDB's; a run with a mismatch exits 1).

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

fn bench(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_varve-bench"))
        .args(args)
        .arg("--data-dir")
        .arg(dir.join("data"))
        .arg("--results-dir")
        .arg(dir.join("results"))
        .output()
        .expect("run varve-bench")
}

fn records(dir: &Path) -> Vec<Vec<Value>> {
    let mut files: Vec<_> = std::fs::read_dir(dir.join("results"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    files.sort();
    files
        .iter()
        .map(|f| {
            std::fs::read_to_string(f)
                .unwrap()
                .lines()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect()
        })
        .collect()
}

fn assert_success(out: &Output) {
    assert!(
        out.status.success(),
        "varve-bench failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Checks one run's records: a run record with machine, commit and command, ingest records,
/// and every query matching DuckDB with timings and request counts.
fn check_run(recs: &[Value], suite: &str, queries: usize) {
    let run = &recs[0];
    assert_eq!(run["kind"], "run");
    assert_eq!(run["suite"], suite);
    for k in ["command", "commit", "cpu", "build", "duckdb", "started"] {
        assert!(run[k].as_str().is_some_and(|s| !s.is_empty()), "run.{k}: {run}");
    }
    let ingest: Vec<&Value> = recs.iter().filter(|r| r["kind"] == "ingest").collect();
    assert!(!ingest.is_empty());
    for i in &ingest {
        assert!(
            i["rows"].as_u64().unwrap() > 0 && i["rows_per_s"].as_f64().unwrap() > 0.0,
            "{i}"
        );
        assert!(
            i["requests"]["put"].as_u64().unwrap() >= 3,
            "data file, manifest, list, metadata: {i}"
        );
    }
    let q: Vec<&Value> = recs.iter().filter(|r| r["kind"] == "query").collect();
    assert_eq!(q.len(), queries);
    for r in q {
        assert_eq!(r["check"], "match", "{r}");
        let v = &r["varve"];
        assert!(v["first_ms"].as_f64().unwrap() > 0.0 && v["best_ms"].as_f64().unwrap() > 0.0);
        assert!(v["peak_rss_bytes"].as_u64().unwrap() > 0);
        let first = &v["requests_first"];
        assert!(
            first["get"].as_u64().unwrap() >= 1,
            "a first run reads the table's metadata: {r}"
        );
        assert!(r["duckdb_best_ms"].as_f64().unwrap() > 0.0 && r["ratio"].as_f64().unwrap() > 0.0);
    }
}

#[test]
fn iot_suite_with_late_and_missing_entries_matches_duckdb() {
    let tmp = tempfile::tempdir().unwrap();
    let args = [
        "run",
        "iot",
        "--scale",
        "40",
        "--duration",
        "3h",
        "--out-of-order",
        "0.05",
        "--missing",
        "0.01",
        "--runs",
        "1",
        "--commit-rows",
        "20000",
    ];
    let out = bench(tmp.path(), &args);
    assert_success(&out);
    let recs = records(tmp.path());
    check_run(&recs[0], "iot", 14);
    let ingest: Vec<&Value> = recs[0].iter().filter(|r| r["kind"] == "ingest").collect();
    assert_eq!(ingest.len(), 2);
    assert!(ingest[0]["commits"].as_u64().unwrap() >= 2, "{}", ingest[0]);
    // The Markdown summary is printed and saved.
    let md = String::from_utf8_lossy(&out.stdout);
    assert!(
        md.contains("| last-loc |") && md.contains("**geomean**") && md.contains("14/14 match"),
        "{md}"
    );
    // A second run reuses the generated data.
    let out = bench(tmp.path(), &[&args[..], &["--query", "newest-10"]].concat());
    assert_success(&out);
    assert!(String::from_utf8_lossy(&out.stderr).contains("data: reusing"));
}

#[test]
fn devops_suite_matches_duckdb() {
    let tmp = tempfile::tempdir().unwrap();
    let out = bench(
        tmp.path(),
        &["run", "devops", "--scale", "10", "--duration", "13h", "--runs", "2"],
    );
    assert_success(&out);
    check_run(&records(tmp.path())[0], "devops", 15);
}

#[test]
fn basic_suite_on_trades_matches_duckdb() {
    let tmp = tempfile::tempdir().unwrap();
    let out = bench(
        tmp.path(),
        &[
            "run",
            "basic",
            "--scale",
            "60",
            "--duration",
            "2h",
            "--rate",
            "0.1",
            "--runs",
            "1",
        ],
    );
    assert_success(&out);
    check_run(&records(tmp.path())[0], "basic", 5);
}

#[test]
fn s3_with_injected_delay_counts_requests() {
    let tmp = tempfile::tempdir().unwrap();
    let out = bench(
        tmp.path(),
        &[
            "run",
            "devops",
            "--scale",
            "3",
            "--duration",
            "1h",
            "--runs",
            "1",
            "--target",
            "s3",
            "--delay",
            "40ms",
            "--bandwidth",
            "20MiB",
            "--query",
            "lastpoint",
            "--query",
            "single-groupby-1-1-1",
        ],
    );
    assert_success(&out);
    let recs = &records(tmp.path())[0];
    check_run(recs, "devops", 2);
    assert_eq!(recs[0]["target"], "s3");
    assert_eq!(recs[0]["latency"]["delay_ms"], 40.0);
    for q in recs.iter().filter(|r| r["kind"] == "query") {
        let first = &q["varve"]["requests_first"];
        let total: u64 = ["get", "ranged_get", "head", "list"]
            .iter()
            .map(|k| first[k].as_u64().unwrap())
            .sum();
        // The head object, the LIST of metadata versions and the version hint, at least.
        assert!(total >= 3, "{q}");
        // A first run waits for at least one round trip of 40 ms (the table's state, in one
        // when the head object is used; the data after it): the record counts those round trips,
        // and the time shows them.
        let round_trips = first["round_trips"].as_u64().unwrap();
        assert!((1..=total).contains(&round_trips), "{q}");
        assert!(
            q["varve"]["first_ms"].as_f64().unwrap() >= round_trips as f64 * 40.0,
            "{q}"
        );
    }
}

#[test]
fn bad_options_are_refused_before_any_work() {
    let tmp = tempfile::tempdir().unwrap();
    let out = bench(
        tmp.path(),
        &["run", "iot", "--scale", "2", "--duration", "1h", "--query", "nope"],
    );
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no query \"nope\" in the iot suite (it has last-loc,"),
        "{err}"
    );
    let out = bench(tmp.path(), &["run", "devops", "--bandwidth", "fast"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("is not a size like 50MiB"));
    let out = bench(tmp.path(), &["run", "devops", "--missing", "0.1"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("--missing applies to the iot dataset only"));
    let out = bench(tmp.path(), &["run", "devops", "--runs", "0"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("--runs must be at least 1"));
    let out = bench(tmp.path(), &["run", "devops", "--target", "s3", "--keep-lake"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("--keep-lake applies to --target local"));
    let out = bench(tmp.path(), &["run", "devops", "--start", "yesterday"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("neither an RFC 3339 time"));
    assert!(!tmp.path().join("data").exists(), "nothing generated");
}

#[test]
fn queries_prints_the_sql_with_parameters_from_the_seed() {
    let run = |seed: &str| {
        let out = Command::new(env!("CARGO_BIN_EXE_varve-bench"))
            .args(["queries", "devops", "--scale", "50", "--seed", seed])
            .output()
            .unwrap();
        assert!(out.status.success());
        String::from_utf8(out.stdout).unwrap()
    };
    let a = run("1");
    assert_eq!(a, run("1"), "the same seed asks the same questions");
    assert_ne!(a, run("2"));
    assert!(a.contains("-- single-groupby-5-8-1:") && a.contains("FROM devops.cpu"));
}

#[test]
fn a_query_past_its_timeout_fails_the_run_and_is_recorded() {
    let tmp = tempfile::tempdir().unwrap();
    let out = bench(
        tmp.path(),
        &[
            "run",
            "devops",
            "--scale",
            "2",
            "--duration",
            "1h",
            "--start",
            "2026-02-01",
            "--runs",
            "1",
            "--delay",
            "50ms",
            "--timeout",
            "20ms",
            "--query",
            "lastpoint",
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("FAILED lastpoint: varve error"), "{err}");
    let recs = &records(tmp.path())[0];
    let q = recs.iter().find(|r| r["kind"] == "query").unwrap();
    assert!(q["check"].as_str().unwrap().starts_with("varve error"), "{q}");
    assert!(q["varve"].is_null());
    assert_eq!(recs[0]["timeout_ms"], 20);
    assert_eq!(recs[0]["only"][0], "lastpoint");
    assert_eq!(recs[0]["spec"]["start_us"], 1_769_904_000_000_000i64);
    // The file name says the run was partial and which latency it had.
    let names: Vec<String> = std::fs::read_dir(tmp.path().join("results"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        names
            .iter()
            .any(|n| n.contains("-devops-local-50ms-partial-devops-s2-d3600s-seed1-from20260201T000000Z.jsonl")),
        "{names:?}"
    );
}

#[test]
fn windows_longer_than_the_data_are_noted() {
    let out = Command::new(env!("CARGO_BIN_EXE_varve-bench"))
        .args(["queries", "iot", "--scale", "5", "--duration", "2h"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let line = text.lines().find(|l| l.starts_with("-- long-daily-sessions:")).unwrap();
    assert!(line.contains("window cut to the data: 7200 s of 86400 s"), "{line}");
    let line = text.lines().find(|l| l.starts_with("-- stationary-trucks:")).unwrap();
    assert!(!line.contains("window cut"), "{line}");
}

#[test]
fn maintain_step_runs_queries_before_and_after() {
    let tmp = tempfile::tempdir().unwrap();
    let out = bench(
        tmp.path(),
        &[
            "run",
            "basic",
            "--scale",
            "20",
            "--duration",
            "2h",
            "--rate",
            "0.1",
            "--runs",
            "1",
            "--commit-rows",
            "500",
            "--maintain",
        ],
    );
    assert_success(&out);
    let recs = &records(tmp.path())[0];
    let m: Vec<&Value> = recs.iter().filter(|r| r["kind"] == "maintain").collect();
    assert_eq!(m.len(), 1, "one maintain record");
    let m = m[0];
    assert!(m["seconds"].as_f64().unwrap() > 0.0, "{m}");
    assert!(m["peak_rss_bytes"].as_u64().unwrap() > 0, "{m}");
    assert!(
        m["files_after"].as_u64().unwrap() < m["files_before"].as_u64().unwrap(),
        "small commits are compacted: {m}"
    );
    // The before side is a second lake loaded by the same commits, left unmaintained.
    let copies = recs
        .iter()
        .filter(|r| r["kind"] == "ingest" && r["table"].as_str().is_some_and(|t| t.ends_with(" (unmaintained copy)")))
        .count();
    assert_eq!(copies, 1, "one table loaded again as the unmaintained copy");
    let q: Vec<&Value> = recs.iter().filter(|r| r["kind"] == "query").collect();
    let before = q.iter().filter(|r| r["phase"] == "before").count();
    let after = q.iter().filter(|r| r["phase"] == "after").count();
    assert!(before == 5 && after == 5, "{before} before, {after} after");
    assert!(
        q.iter().all(|r| r["check"] == "match"),
        "answers match DuckDB before and after"
    );
    let md = std::fs::read_dir(tmp.path().join("results"))
        .unwrap()
        .filter_map(|e| e.ok())
        .find(|e| e.path().extension().is_some_and(|x| x == "md"))
        .map(|e| std::fs::read_to_string(e.path()).unwrap())
        .unwrap();
    assert!(md.contains("## Maintenance") && md.contains("(after)"), "{md}");
}
