//! Every subcommand answers `--help`; output formats; create, ls, drop; errors are one line with
//! an exit code by kind.

use crate::{varve, varve_err, varve_ok};

#[test]
fn every_command_has_help() {
    let top = varve_ok(&["--help"]);
    for cmd in [
        "import", "sql", "create", "ls", "info", "latest", "history", "maintain", "delete", "alter", "drop", "demo",
        "serve", "rollup",
    ] {
        assert!(top.contains(cmd), "top-level help lists {cmd}");
        let h = varve_ok(&[cmd, "--help"]);
        assert!(h.contains("Usage: varve"), "{cmd} --help: {h}");
    }
    let import = varve_ok(&["import", "--help"]);
    for opt in [
        "--time-column",
        "--series-key",
        "--partition",
        "--time-format",
        "--timezone",
        "--time-unit",
        "--skip-rows",
        "--delimiter",
        "--batch-id",
        "--note",
        "--format",
    ] {
        assert!(import.contains(opt), "import --help mentions {opt}");
    }
}

#[test]
fn create_insert_query_in_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let lake = dir.path().join("lake");
    let lake = lake.to_str().unwrap();
    let created = varve_ok(&[
        "--lake",
        lake,
        "create",
        "iot.temps",
        "-c",
        "ts:timestamptz",
        "-c",
        "sensor:string",
        "-c",
        "celsius:float64",
        "--time-column",
        "ts",
        "--series-key",
        "sensor",
        "--partition",
        "hour",
    ]);
    assert!(created.starts_with("created iot.temps at "), "{created}");
    assert_eq!(varve_ok(&["--lake", lake, "ls"]).trim(), "iot.temps");
    let e = varve_err(&["--lake", lake, "create", "iot.temps", "-c", "ts:timestamptz"]);
    assert!(e.contains("exists already"), "{e}");
    assert_eq!(
        varve(&["--lake", lake, "create", "iot.temps", "-c", "ts:timestamptz"])
            .status
            .code(),
        Some(4)
    );
    varve_ok(&["--lake", lake, "sql", "INSERT INTO iot.temps VALUES ('2024-03-01T10:00:00Z', 's1', 20.5), ('2024-03-01T11:30:00Z', 's1', 21.0), ('2024-03-01T10:15:00Z', 's2', 19.0)"]);
    let q = "SELECT sensor, count(*) AS n, max(celsius) AS hi FROM iot.temps GROUP BY sensor ORDER BY sensor";
    let csv = varve_ok(&["--lake", lake, "sql", q, "--format", "csv"]);
    assert_eq!(csv, "sensor,n,hi\ns1,2,21.0\ns2,1,19.0\n");
    let table = varve_ok(&["--lake", lake, "sql", q, "--format", "table"]);
    assert!(table.contains("| sensor |") && table.contains("| s1     |"), "{table}");
    assert!(table.ends_with("\n2 rows\n"), "{table}");
    // One row; no rows (the header and `0 rows`); unaliased expressions get short names.
    let one = varve_ok(&[
        "--lake",
        lake,
        "sql",
        "SELECT min(celsius) FROM iot.temps",
        "--format",
        "table",
    ]);
    assert!(one.contains("| min(celsius) |") && one.ends_with("\n1 row\n"), "{one}");
    let none = varve_ok(&[
        "--lake",
        lake,
        "sql",
        "SELECT * FROM iot.temps WHERE false",
        "--format",
        "table",
    ]);
    assert!(none.contains("| ts ") && none.ends_with("\n0 rows\n"), "{none}");
    let bucket = varve_ok(&[
        "--lake",
        lake,
        "sql",
        "SELECT time_bucket(INTERVAL '1 hour', ts), count(*) FROM iot.temps GROUP BY 1 ORDER BY 1",
        "--format",
        "csv",
    ]);
    assert_eq!(
        bucket,
        "time_bucket,count(*)\n2024-03-01T10:00:00Z,2\n2024-03-01T11:00:00Z,1\n"
    );
    // A table wider than the terminal narrows its widest columns, then leaves out middle ones.
    let wide = "SELECT sensor AS a1, sensor AS a2, sensor AS a3, sensor AS a4, sensor AS a5, sensor AS a6, \
                repeat('x', 100) AS long FROM iot.temps LIMIT 1";
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_varve"))
        .args(["--lake", lake, "sql", wide, "--format", "table"])
        .env("COLUMNS", "40")
        .output()
        .unwrap();
    let narrow = String::from_utf8_lossy(&o.stdout);
    assert!(
        narrow
            .lines()
            .all(|l| l.chars().count() <= 40 || l.starts_with("1 row")),
        "{narrow}"
    );
    assert!(narrow.contains("| … |") && narrow.contains("columns, "), "{narrow}");
    // Off a terminal without COLUMNS, and with --format wide, values are whole; a wider
    // terminal cuts only what does not fit.
    let full = varve_ok(&["--lake", lake, "sql", wide, "--format", "table"]);
    assert!(full.contains(&"x".repeat(100)), "{full}");
    let all = varve_ok(&["--lake", lake, "sql", wide, "--format", "wide"]);
    assert!(all.contains(&"x".repeat(100)), "{all}");
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_varve"))
        .args(["--lake", lake, "sql", wide, "--format", "table"])
        .env("COLUMNS", "100")
        .output()
        .unwrap();
    let fitted = String::from_utf8_lossy(&o.stdout);
    assert!(
        fitted.contains("| a6 ") && fitted.contains("xxx…") && !fitted.contains(&"x".repeat(80)),
        "{fitted}"
    );
    assert!(
        fitted
            .lines()
            .all(|l| l.chars().count() <= 100 || l.starts_with("1 row")),
        "{fitted}"
    );
    // NULL members are kept, so every row has the same keys.
    let nulls = varve_ok(&["--lake", lake, "sql", "SELECT 1 AS a, NULL AS v", "--format", "json"]);
    assert_eq!(nulls, "[{\"a\":1,\"v\":null}]\n");
    let nulls = varve_ok(&["--lake", lake, "sql", "SELECT 1 AS a, NULL AS v", "--format", "ndjson"]);
    assert_eq!(nulls, "{\"a\":1,\"v\":null}\n");
    let json = varve_ok(&["--lake", lake, "sql", q, "--format", "json"]);
    assert!(json.ends_with("]\n"), "{json}");
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v[1]["sensor"], "s2");
    let nd = varve_ok(&["--lake", lake, "sql", q, "--format", "ndjson"]);
    assert_eq!(nd.lines().count(), 2);
    let out = dir.path().join("r.parquet");
    varve_ok(&["--lake", lake, "sql", q, "--output", out.to_str().unwrap()]);
    let batches = varve_testkit::read_parquet(&out);
    assert_eq!(batches.iter().map(|b| b.num_rows()).sum::<usize>(), 2);
    let e = varve_err(&["--lake", lake, "sql", q, "--format", "parquet"]);
    assert!(e.contains("needs --output"), "{e}");

    let info = varve_ok(&["--lake", lake, "info", "iot.temps"]);
    assert!(info.contains("rows         3"), "{info}");
    assert!(info.contains("partitions   2"), "two hours: {info}");
    assert!(info.contains("series       2"), "{info}");
    assert!(
        info.contains("time range   2024-03-01T10:00:00Z .. 2024-03-01T11:30:00Z"),
        "{info}"
    );
    let latest = varve_ok(&["--lake", lake, "latest", "iot.temps", "--format", "csv"]);
    assert_eq!(
        latest,
        "ts,sensor,celsius\n2024-03-01T11:30:00Z,s1,21.0\n2024-03-01T10:15:00Z,s2,19.0\n"
    );
    let history = varve_ok(&["--lake", lake, "history", "iot.temps"]);
    let lines: Vec<&str> = history.lines().collect();
    assert!(
        lines[1].contains("| time ") && lines[1].contains("| current"),
        "{history}"
    );
    assert!(
        lines[3].contains("| append ") && lines[3].contains("(current) |"),
        "{history}"
    );
    assert_eq!(lines.last(), Some(&"1 row"), "{history}");
    assert!(
        lines.iter().all(|l| l.len() == lines[0].len() || *l == "1 row"),
        "aligned: {history}"
    );
    let history = varve_ok(&["--lake", lake, "history", "iot.temps", "--format", "json"]);
    assert!(
        history.contains(r#""operation":"append","rows":3,"files":2"#),
        "{history}"
    );
    assert!(history.contains(r#""current":true"#), "{history}");
    let explain = varve_ok(&[
        "--lake",
        lake,
        "sql",
        "EXPLAIN SELECT * FROM iot.temps WHERE ts >= '2024-03-01T11:00:00Z'",
    ]);
    assert!(explain.contains("1 of 2 data files read, 1 pruned"), "{explain}");

    // Off a terminal drop does not ask; it says what it deleted, on stdout.
    let dropped = varve_ok(&["--lake", lake, "drop", "iot.temps"]);
    assert!(
        dropped.starts_with("dropped iot.temps (3 rows in 2 data files, "),
        "{dropped}"
    );
    assert_eq!(varve_ok(&["--lake", lake, "ls"]).trim(), "");
}

#[test]
fn errors_are_one_line_with_exit_codes() {
    let dir = tempfile::tempdir().unwrap();
    let lake = dir.path().join("lake");
    let lake = lake.to_str().unwrap();
    // Reading commands do not make a lake: a typo'd path is an error, not an empty lake.
    let e = varve_err(&["--lake", lake, "ls"]);
    assert!(e.contains("no lake at"), "{e}");
    assert!(!dir.path().join("lake").exists());
    assert!(varve_err(&["--lake", "s3:/bucket/x", "ls"]).contains("did you mean s3://bucket/x"));
    std::fs::create_dir(dir.path().join("lake")).unwrap();
    let e = varve_err(&["--lake", lake, "sql", "SELEC 1"]);
    assert!(e.contains("SELEC"), "{e}");
    assert_eq!(varve(&["--lake", lake, "sql", "SELEC 1"]).status.code(), Some(2));
    varve_err(&["--lake", lake, "info", "nope"]);
    assert_eq!(varve(&["--lake", lake, "info", "nope"]).status.code(), Some(3));
    let e = varve_err(&["--lake", "gs://bucket/x", "ls"]);
    assert!(e.contains("gs:// is not supported"), "{e}");
    let e = varve_err(&["--lake", lake, "create", "bad name", "-c", "a:int64"]);
    assert!(e.contains("table name"), "{e}");
}

#[test]
fn cli_reference_matches_the_binary() {
    let docs = std::fs::read_to_string(varve_testkit::repo_root().join("docs/cli.md")).unwrap();
    for cmd in [
        "import",
        "sql",
        "create",
        "ls",
        "info",
        "latest",
        "history",
        "maintain",
        "delete",
        "alter",
        "drop",
        "demo",
        "serve",
        "token",
        "token add",
        "token ls",
        "token revoke",
        "rollup",
        "rollup create",
        "rollup drop",
        "rollup ls",
        "rollup refresh",
    ] {
        let mut args: Vec<&str> = cmd.split(' ').collect();
        args.push("--help");
        let help = varve_ok(&args);
        assert!(
            docs.contains(help.trim_end()),
            "docs/cli.md is out of date for `varve {cmd} --help`: run scripts/gen-cli-docs"
        );
    }
}

/// `varve token add|ls|revoke`: the token is printed once and only its hash is stored; `ls` shows
/// ids, scopes and namespaces; `revoke` removes one; bad input is one line of error.
#[test]
fn token_commands_manage_a_token_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("tokens.txt");
    let f = file.to_str().unwrap();
    let w = varve_ok(&["token", "add", "--token-file", f, "--scope", "write"]);
    let r = varve_ok(&[
        "token",
        "add",
        "--token-file",
        f,
        "--scope",
        "read",
        "--namespace",
        "iot",
    ]);
    let (w, r) = (w.trim(), r.trim());
    assert!(w.starts_with("varve_") && r.starts_with("varve_") && w != r, "{w} {r}");
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(
        !text.contains(w) && !text.contains(r),
        "the file holds only hashes: {text}"
    );

    let ls = varve_ok(&["token", "ls", "--token-file", f]);
    let lines: Vec<&str> = ls.lines().collect();
    assert_eq!(lines.len(), 3, "{ls}");
    assert!(
        lines[0].starts_with("id") && lines[1].contains("write") && lines[2].contains("read"),
        "{ls}"
    );
    assert!(lines[1].contains(" * ") && lines[2].contains(" iot "), "{ls}");
    let id = lines[1].split_whitespace().next().unwrap();

    let out = varve_ok(&["token", "revoke", "--token-file", f, id]);
    assert!(out.contains(&format!("revoked token {id}")), "{out}");
    assert_eq!(varve_ok(&["token", "ls", "--token-file", f]).lines().count(), 2);
    let e = varve_err(&["token", "revoke", "--token-file", f, id]);
    assert!(e.contains("no token with id"), "{e}");
    let e = varve_err(&[
        "token",
        "add",
        "--token-file",
        f,
        "--scope",
        "read",
        "--namespace",
        "a.b",
    ]);
    assert!(e.contains("namespace"), "{e}");
    assert!(!varve(&["token", "add", "--token-file", f, "--scope", "admin"])
        .status
        .success());
    let e = varve_err(&["--lake", "x", "token", "ls", "--token-file", f]);
    assert!(e.contains("not a lake"), "{e}");
    let e = varve_err(&["token", "ls", "--token-file", f, "--lake", "x"]);
    assert!(e.contains("not a lake"), "{e}");
    assert!(!varve_ok(&["token", "add", "--help"]).contains("--lake"));
    // A file of plain tokens (not hashes) is refused, naming the line.
    std::fs::write(&file, "# old\ns3cret\n").unwrap();
    let e = varve_err(&["token", "ls", "--token-file", f]);
    assert!(e.contains("line 2") && e.contains("varve token add"), "{e}");
}

#[test]
fn lists_and_structs_print_in_csv_as_text() {
    let dir = tempfile::tempdir().unwrap();
    let lake = dir.path().join("lake");
    std::fs::create_dir_all(&lake).unwrap();
    let out = varve_ok(&[
        "--lake",
        lake.to_str().unwrap(),
        "sql",
        "SELECT [1, 2] AS l, named_struct('a', 1, 'b', 'x') AS s, CAST(NULL AS INT[]) AS n",
    ]);
    assert_eq!(out, "l,s,n\n\"[1, 2]\",\"{a: 1, b: x}\",\n", "{out}");
}
