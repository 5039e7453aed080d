//! The process, not the data: a closed standard output ends any command quietly (issue 8,
//! defect 8), and a deep SQL expression is an answer or an error, never an abort (defect 9).

use std::io::Read;
use std::process::{Command, Stdio};

use varve_testkit::Backend;

use crate::varve_ok;

/// Runs `varve args` with stdout a pipe whose reader closes it after the first line.
fn closed_after_first_line(args: &[String]) -> (Option<i32>, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_varve"))
        .args(args)
        .env_remove("VARVE_LAKE")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn varve");
    let mut out = child.stdout.take().expect("stdout");
    let mut first = [0u8; 1];
    let _ = out.read(&mut first);
    drop(out);
    let o = child.wait_with_output().expect("wait");
    (o.status.code(), String::from_utf8_lossy(&o.stderr).into_owned())
}

#[test]
fn a_closed_stdout_ends_every_command_quietly() {
    let b = Backend::local();
    let dir = tempfile::tempdir().expect("tempdir");
    let f = dir.path().join("big.csv");
    let mut text = String::from("time,host,v\n");
    for i in 0..20_000 {
        text.push_str(&format!(
            "2024-05-01T{:02}:{:02}:{:02}Z,h{},{}\n",
            i / 3600 % 24,
            i / 60 % 60,
            i % 60,
            i % 500,
            i
        ));
    }
    std::fs::write(&f, text).expect("write");
    let lake = b.url();
    varve_ok(&[
        "--lake",
        &lake,
        "import",
        "t",
        f.to_str().expect("utf-8"),
        "--series-key",
        "host",
    ]);
    for cmd in [
        vec!["info", "t"],
        vec!["ls"],
        vec!["history", "t"],
        vec!["latest", "t"],
        vec!["latest", "t", "--format", "ndjson"],
        vec!["sql", "SELECT * FROM t"],
        vec!["sql", "SELECT * FROM t", "--format", "table"],
        vec!["sql", "SELECT * FROM t", "--format", "json"],
    ] {
        let mut args = vec!["--lake".to_string(), lake.clone()];
        args.extend(cmd.iter().map(|s| s.to_string()));
        let (code, err) = closed_after_first_line(&args);
        assert_eq!(code, Some(0), "varve {cmd:?}: {err}");
        assert!(err.is_empty(), "varve {cmd:?} printed: {err}");
    }
}

#[test]
fn a_deep_expression_is_answered_or_refused_never_an_abort() {
    let b = Backend::local();
    let lake = b.url();
    let cols: Vec<String> = (1..=400).map(|i| format!("c{i}:int64")).collect();
    let mut args = vec![
        "--lake",
        &lake,
        "create",
        "wide",
        "--time-column",
        "time",
        "-c",
        "time:timestamptz",
    ];
    for c in &cols {
        args.extend(["-c", c.as_str()]);
    }
    varve_ok(&args);
    let values: Vec<String> = (1..=400).map(|i| i.to_string()).collect();
    varve_ok(&[
        "--lake",
        &lake,
        "sql",
        &format!(
            "INSERT INTO wide VALUES (TIMESTAMP '2024-01-01T00:00:00Z', {})",
            values.join(", ")
        ),
    ]);
    let sum: Vec<String> = (1..=400).map(|i| format!("c{i}")).collect();
    let out = varve_ok(&[
        "--lake",
        &lake,
        "sql",
        &format!("SELECT sum({}) AS s FROM wide", sum.join(" + ")),
    ]);
    assert_eq!(out.trim(), format!("s\n{}", 400 * 401 / 2));
    // Deeper than the limit: refused (exit 2) quickly, never an abort. (One argument may be up to
    // 128 KiB on Linux: 20,000 terms fit.)
    for depth in [1_001usize, 20_000] {
        let q = format!("SELECT {} AS s", vec!["1"; depth].join(" + "));
        let o = crate::varve(&["--lake", &lake, "sql", &q]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "depth {depth}: {:?} {err}", o.status);
        assert!(
            err.contains("nests expressions more than 1000 deep"),
            "depth {depth}: {err}"
        );
    }
    // Nested parentheses, too.
    let q = format!("SELECT {}1{} AS s", "(".repeat(3_000), ")".repeat(3_000));
    let o = crate::varve(&["--lake", &lake, "sql", &q]);
    assert!(
        o.status.code().is_some(),
        "parentheses: killed by a signal: {:?}",
        o.status
    );
}
