//! The PostgreSQL wire protocol with real clients: `psql` (catalog commands, a query, `\copy`,
//! logins) and psycopg 3 (parameters, prepared statements, binary results, writes, errors, what
//! Grafana sends, cancel requests, scoped tokens), answers checked against the lake's own.

use std::process::Command;

use arrow::array::{Array, AsArray};
use arrow::datatypes::Float64Type;
use varve_server::{new_token, Scope, ServerConfig, Tokens};

use crate::http::{lake, start};

/// Runs `psql` against the server on `port` as `user` with `password`; (success, stdout, stderr).
fn psql(port: u16, user: &str, password: Option<&str>, args: &[&str]) -> (bool, String, String) {
    let mut cmd = Command::new("psql");
    cmd.arg(format!("host=127.0.0.1 port={port} dbname=varve user={user}"))
        .args(["-X", "-v", "ON_ERROR_STOP=1", "-v", "VERBOSITY=verbose"])
        .args(args)
        .env_remove("PGPASSWORD")
        .env("PGCONNECT_TIMEOUT", "10");
    match password {
        Some(p) => cmd.env("PGPASSWORD", p),
        // No password: psql must not wait for one on a terminal.
        None => cmd.arg("-w"),
    };
    let out = cmd.output().expect("psql runs (postgresql-client)");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A server over `lake` whose token file has a write token and a read token scoped to namespace
/// `m`: the server and the two tokens.
async fn start_with_tokens(lake: varve::Lake) -> (crate::http::Running, String, String) {
    let (write, w) = new_token(Scope::Write, None).unwrap();
    let (read, r) = new_token(Scope::Read, Some("m")).unwrap();
    let tokens = Tokens::parse(&format!("{}\n{}\n", w.line(), r.line())).unwrap();
    let config = ServerConfig {
        tokens: Some(tokens),
        ..ServerConfig::default()
    };
    (start(lake, config).await, write, read)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn psql_lists_describes_queries_copies_and_logs_in_with_tokens() {
    let dir = tempfile::tempdir().unwrap();
    let lake = lake(dir.path()).await;
    let expected = lake
        .sql("SELECT host, v FROM m.cpu WHERE ts < TIMESTAMP '1970-01-01T01:00:00Z' ORDER BY host, ts")
        .await
        .unwrap();
    let (s, write, read) = start_with_tokens(lake).await;
    let port = s.pg_port;
    let csv = dir.path().join("more.csv");
    std::fs::write(
        &csv,
        "ts,host,v\n2001-01-01T00:00:00Z,copied,1.5\n2001-01-01T00:01:00Z,\"copied, too\",\n",
    )
    .unwrap();
    let csv = csv.to_str().unwrap().to_string();
    let (w, r) = (write.clone(), read.clone());
    tokio::task::spawn_blocking(move || {
        // Catalog commands.
        let (ok, out, err) = psql(port, "varve", Some(&w), &["-c", "\\dt m.*"]);
        assert!(ok, "{err}");
        assert!(out.contains("cpu") && out.contains("table"), "{out}");
        let (ok, out, err) = psql(port, "varve", Some(&w), &["-c", "\\d m.cpu"]);
        assert!(ok, "{err}");
        assert!(out.contains("host") && out.contains("double precision"), "{out}");
        let ts = out
            .lines()
            .find(|l| l.trim_start().starts_with("ts "))
            .unwrap_or_default();
        assert!(ts.contains("timestamp with time zone"), "the time column's type: {out}");
        let (ok, out, err) = psql(port, "varve", Some(&w), &["-c", "\\dn"]);
        assert!(ok, "{err}");
        assert!(out.lines().any(|l| l.trim_start().starts_with("m ")), "{out}");
        let (ok, out, err) = psql(port, "varve", Some(&w), &["-c", "\\l"]);
        assert!(ok, "{err}");
        assert!(out.contains("varve"), "{out}");

        // A query, unaligned, equal to the lake's answer.
        let (ok, out, err) = psql(
            port,
            "any-name",
            Some(&w),
            &[
                "-A",
                "-t",
                "-F",
                ",",
                "-c",
                "SELECT host, v FROM m.cpu WHERE ts < TIMESTAMP '1970-01-01T01:00:00Z' ORDER BY host, ts",
            ],
        );
        assert!(ok, "{err}");
        let got: Vec<(String, Option<f64>)> = out
            .lines()
            .map(|l| {
                let (h, v) = l.split_once(',').unwrap();
                (h.to_string(), (!v.is_empty()).then(|| v.parse().unwrap()))
            })
            .collect();
        let b = arrow::compute::concat_batches(&expected.schema, &expected.batches).unwrap();
        let hosts = b.column(0).as_string::<i32>();
        let vs = b.column(1).as_primitive::<Float64Type>();
        let want: Vec<(String, Option<f64>)> = (0..b.num_rows())
            .map(|i| (hosts.value(i).to_string(), (!vs.is_null(i)).then(|| vs.value(i))))
            .collect();
        assert_eq!(got, want);

        // \copy in: CSV with a header, a quoted comma and an empty (NULL) value.
        let copy = format!("\\copy m.cpu FROM '{csv}' WITH (FORMAT csv, HEADER)");
        let (ok, out, err) = psql(port, "varve", Some(&w), &["-c", &copy]);
        assert!(ok, "{err}");
        assert!(out.contains("COPY 2"), "{out}");
        let (ok, out, err) = psql(
            port,
            "varve",
            Some(&w),
            &[
                "-A",
                "-t",
                "-c",
                "SELECT host, v IS NULL FROM m.cpu WHERE host LIKE 'copied%' ORDER BY host",
            ],
        );
        assert!(ok, "{err}");
        assert_eq!(out, "copied|f\ncopied, too|t\n");
        // A bad row fails the whole COPY and names it; nothing is written.
        let bad = format!("{csv}.bad");
        std::fs::write(
            &bad,
            "ts,host,v\n2001-01-02T00:00:00Z,x,1\n2001-01-02T00:01:00Z,y,abc\n",
        )
        .unwrap();
        let (ok, _, err) = psql(
            port,
            "varve",
            Some(&w),
            &["-c", &format!("\\copy m.cpu FROM '{bad}' WITH (FORMAT csv, HEADER)")],
        );
        assert!(!ok && err.contains("row 2") && err.contains("abc"), "{err}");
        let (_, out, _) = psql(
            port,
            "varve",
            Some(&w),
            &["-A", "-t", "-c", "SELECT count(*) FROM m.cpu WHERE host IN ('x', 'y')"],
        );
        assert_eq!(out, "0\n");

        // Errors carry SQLSTATE codes.
        let (ok, _, err) = psql(port, "varve", Some(&w), &["-c", "SELECT * FROM m.nope"]);
        assert!(!ok && err.contains("42P01"), "{err}");
        // The error says how psql lists tables, and which table of that name exists.
        assert!(err.contains("\\dt lists the tables"), "{err}");
        let (ok, _, err) = psql(port, "varve", Some(&w), &["-c", "SELECT * FROM cpu"]);
        assert!(!ok && err.contains("did you mean m.cpu?"), "{err}");

        // Logins: none, a wrong token, a read token that may not write.
        let (ok, _, err) = psql(port, "varve", None, &["-c", "SELECT 1"]);
        assert!(!ok && err.contains("password"), "{err}");
        let (ok, _, err) = psql(port, "varve", Some("varve_0000"), &["-c", "SELECT 1"]);
        assert!(!ok && err.contains("password authentication failed"), "{err}");
        let (ok, out, err) = psql(
            port,
            "varve",
            Some(&r),
            &["-A", "-t", "-c", "SELECT count(*) > 0 FROM m.cpu"],
        );
        assert!(ok && out == "t\n", "{out}{err}");
        let (ok, _, err) = psql(
            port,
            "varve",
            Some(&r),
            &["-c", "\\copy m.cpu FROM '/dev/null' WITH (FORMAT csv)"],
        );
        assert!(!ok && err.contains("42501"), "{err}");
    })
    .await
    .unwrap();
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn psycopg_parameters_prepared_binary_writes_grafana_cancel_and_scopes() {
    let dir = tempfile::tempdir().unwrap();
    let lake = lake(dir.path()).await;
    let h1 = lake
        .sql("SELECT count(*) AS n, sum(v) AS s FROM m.cpu WHERE host = 'h1' AND ts < TIMESTAMP '1970-01-01T05:00:00Z'")
        .await
        .unwrap();
    let over = lake
        .sql(
            "SELECT count(*) FILTER (WHERE v > 0), count(*) FILTER (WHERE v > 100), count(*) FILTER (WHERE v > 200), \
             count(*) FILTER (WHERE v > 300), count(*) FILTER (WHERE v > 400), count(*) FILTER (WHERE v > 500), \
             count(*) FILTER (WHERE v > 600) FROM m.cpu",
        )
        .await
        .unwrap();
    let series = lake
        .sql(
            "SELECT date_trunc('hour', ts) AS t, avg(v) AS v FROM m.cpu \
             WHERE ts BETWEEN TIMESTAMP '1970-01-01T00:00:00Z' AND TIMESTAMP '1970-01-01T04:59:59Z' GROUP BY 1 ORDER BY 1",
        )
        .await
        .unwrap();
    let (s, write, read) = start_with_tokens(lake).await;
    let port = s.pg_port.to_string();
    let metrics_token = write.clone();
    let out = tokio::task::spawn_blocking(move || {
        Command::new(varve_testkit::python())
            .args(["-c", include_str!("pg_client.py")])
            .env("PORT", port)
            .env("TOKEN", write)
            .env("READ_TOKEN", read)
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {stderr}"));

    assert_eq!(j["server_version"], 160006);
    assert_eq!(j["parameters"]["server_encoding"], "UTF8");
    assert_eq!(j["parameters"]["DateStyle"], "ISO, MDY");
    let b = &h1.batches[0];
    let n = b.column(0).as_primitive::<arrow::datatypes::Int64Type>().value(0);
    let sum = b.column(1).as_primitive::<Float64Type>().value(0);
    assert_eq!(j["h1_before_5h"][0], n);
    assert!(
        (j["h1_before_5h"][1].as_f64().unwrap() - sum).abs() < 1e-9,
        "{}",
        j["h1_before_5h"]
    );
    let counts: Vec<i64> = (0..7)
        .map(|i| {
            over.batches[0]
                .column(i)
                .as_primitive::<arrow::datatypes::Int64Type>()
                .value(0)
        })
        .collect();
    assert_eq!(j["counts_over"], serde_json::json!(counts));
    let types = serde_json::json!([
        true,
        2,
        3,
        4,
        1.5,
        2.25,
        "x",
        "2024-02-29",
        "2024-02-29T12:00:00+00:00",
        "1.25"
    ]);
    assert_eq!(j["types_text"], types);
    assert_eq!(j["types_binary"], types);
    assert_eq!(j["bytea"], "00ff");
    assert_eq!(j["insert_rowcount"], 1);
    assert_eq!(j["py_rows"], serde_json::json!([4, 7.0]));
    assert_eq!(j["bad_column"], "42000");
    assert_eq!(j["missing_table"], "42P01");
    assert_eq!(j["int_for_time"], "22023");
    assert_eq!(j["float_for_text"], "22023");
    assert_eq!(j["copy_to_file"], "0A000");
    assert_eq!(j["copy_to_file_exists"], false);
    assert_eq!(j["set_runtime"], "42501");
    assert_eq!(j["copy_typo"], "42703");
    assert_eq!(j["copied"], serde_json::json!([2, 1.25]));
    assert_eq!(j["application_name"], "varve-test");
    assert_eq!(j["show_server_version"], "16.6");

    // Grafana.
    assert_eq!(j["grafana_version"], 1600);
    assert_eq!(j["grafana_timescaledb"], serde_json::json!([]));
    assert!(
        j["grafana_tables"].as_array().unwrap().iter().any(|t| t == "m.cpu"),
        "{}",
        j["grafana_tables"]
    );
    assert_eq!(j["grafana_columns"], serde_json::json!(["ts", "host", "v"]));
    let b = &series.batches[0];
    let want: Vec<f64> = (0..b.num_rows())
        .map(|i| b.column(1).as_primitive::<Float64Type>().value(i))
        .collect();
    let got = j["grafana_series"].as_array().unwrap();
    assert_eq!(got.len(), want.len());
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_eq!(g[0].as_f64().unwrap(), (i * 3600) as f64);
        assert!((g[1].as_f64().unwrap() - w).abs() < 1e-9);
    }

    // Cancel, then the connection goes on.
    assert_eq!(j["cancelled"], "57014");
    assert!(j["cancel_seconds"].as_f64().unwrap() < 30.0, "{}", j["cancel_seconds"]);
    assert_eq!(j["after_cancel"], 1);

    // A read token scoped to namespace m.
    assert!(j["read_token_count"].as_i64().unwrap() > 3000);
    assert_eq!(j["read_token_insert"], "42501");
    assert_eq!(j["read_token_other"], "42501");
    assert!(
        j["wrong_password"]
            .as_str()
            .unwrap()
            .contains("password authentication failed"),
        "{}",
        j["wrong_password"]
    );
    // Metrics count PostgreSQL statements by outcome and errors by kind.
    let m = reqwest::Client::new()
        .get(format!("{}/metrics", s.base))
        .bearer_auth(&metrics_token)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    for metric in [
        "varve_query_duration_seconds_count{protocol=\"pg\",outcome=\"ok\"}",
        "varve_errors_total{protocol=\"pg\",kind=\"timeout\"}",
        "varve_errors_total{protocol=\"pg\",kind=\"not_found\"}",
        "varve_queries_in_flight 0",
    ] {
        assert!(m.contains(metric), "{metric} in {m}");
    }
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jdbc_metadata_prepared_statements_binary_and_writes() {
    let dir = tempfile::tempdir().unwrap();
    let lake = lake(dir.path()).await;
    let mut counts = Vec::new();
    for i in 0..8 {
        let r = lake
            .sql(&format!(
                "SELECT count(*) FROM m.cpu WHERE host = 'h1' AND v > {}",
                i as f64 * 50.0
            ))
            .await
            .unwrap();
        counts.push(
            r.batches[0]
                .column(0)
                .as_primitive::<arrow::datatypes::Int64Type>()
                .value(0)
                .to_string(),
        );
    }
    let (s, write, _) = start_with_tokens(lake).await;
    let port = s.pg_port.to_string();
    let source = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/it/JdbcClient.java");
    let out = tokio::task::spawn_blocking(move || {
        Command::new("java")
            .args(["-cp", "/usr/share/java/postgresql.jar", source, &port, &write])
            .output()
            .expect("java runs (scripts/setup-system installs it and pgjdbc)")
    })
    .await
    .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    let got: std::collections::HashMap<&str, &str> = stdout.lines().filter_map(|l| l.split_once('=')).collect();
    assert_eq!(got["product"], "PostgreSQL 16.6");
    assert_eq!(got["tables"], "m.cpu");
    assert_eq!(got["columns"], "ts host v");
    assert_eq!(got["counts"], counts.join(" "));
    assert_eq!(got["first_ts"], "1970-01-01T00:01Z");
    assert_eq!(got["inserted"], "1");
    assert_eq!(got["jdbc_rows"], "1");
    s.stop().await;
}

/// A PostgreSQL client that goes away in the middle of a streamed result (its socket closed
/// after the first rows) frees its slot: with one slot, the next client's query runs, and the
/// in-flight gauge returns to 0.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_leaves_mid_stream_frees_its_slot() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let dir = tempfile::tempdir().unwrap();
    let s = crate::http::start_with_one_slot(dir.path(), std::time::Duration::from_secs(30)).await;
    let mut sock = tokio::net::TcpStream::connect(("127.0.0.1", s.pg_port)).await.unwrap();
    // StartupMessage (protocol 3.0), then a simple Query for 9M rows: far more than is read.
    let mut body = 196608i32.to_be_bytes().to_vec();
    body.extend_from_slice(b"user\0varve\0database\0varve\0\0");
    let mut msg = ((body.len() + 4) as i32).to_be_bytes().to_vec();
    msg.extend_from_slice(&body);
    sock.write_all(&msg).await.unwrap();
    let mut seen = Vec::new();
    let mut buf = vec![0u8; 1 << 16];
    // Up to ReadyForQuery ('Z', length 5, status 'I').
    while !seen.windows(6).any(|w| w == b"Z\0\0\0\x05I") {
        let n = sock.read(&mut buf).await.unwrap();
        assert!(
            n > 0,
            "the server closed the connection: {:?}",
            String::from_utf8_lossy(&seen)
        );
        seen.extend_from_slice(&buf[..n]);
    }
    let sql = b"SELECT a.v, b.v FROM m.cpu a, m.cpu b\0";
    let mut q = vec![b'Q'];
    q.extend_from_slice(&((sql.len() + 4) as i32).to_be_bytes());
    q.extend_from_slice(sql);
    sock.write_all(&q).await.unwrap();
    // Some rows arrive ('D' messages), then the client is gone.
    let mut rows = 0usize;
    while rows < (1 << 16) {
        let n = sock.read(&mut buf).await.unwrap();
        assert!(n > 0, "the stream ended early");
        rows += n;
    }
    drop(sock);
    // With one slot, this query runs only once the abandoned one has let go of it.
    let (ok, out, err) = psql(s.pg_port, "varve", None, &["-At", "-c", "SELECT 1 AS one"]);
    assert!(ok, "{err}");
    assert_eq!(out.trim(), "1");
    let m = crate::http::metrics_text(&s.base).await;
    assert!(m.contains("varve_queries_in_flight 0"), "{m}");
    s.stop().await;
}

/// `BEGIN; INSERT ...; ROLLBACK` from psql (issue 57): the INSERT committed when it ran, so the
/// ROLLBACK is refused with an error that says so, never answered as an undo; a second ROLLBACK
/// ends the block; a block without a write rolls back as PostgreSQL's does. DuckDB and PyIceberg
/// read the inserted row, as the error said.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rollback_after_a_write_is_refused_not_pretended() {
    let backend = varve_testkit::Backend::local();
    let lake = lake(std::path::Path::new(&backend.url())).await;
    let before = lake.sql("SELECT count(*) FROM m.cpu").await.unwrap();
    let before = before.batches[0]
        .column(0)
        .as_primitive::<arrow::datatypes::Int64Type>()
        .value(0);
    let (s, write, _) = start_with_tokens(lake.clone()).await;
    let port = s.pg_port;
    tokio::task::spawn_blocking(move || {
        let insert = "INSERT INTO m.cpu VALUES (TIMESTAMP '2002-01-01T00:00:00Z', 'rolled', 1.0)";
        let (ok, _, err) = psql(
            port,
            "varve",
            Some(&write),
            // A BEGIN inside the block changes nothing: the ROLLBACK still answers for the INSERT.
            &["-c", "BEGIN", "-c", insert, "-c", "BEGIN", "-c", "ROLLBACK"],
        );
        assert!(!ok, "ROLLBACK after a write must fail");
        assert!(
            err.contains("ROLLBACK cannot undo INSERT (1 rows)") && err.contains("commits each statement"),
            "{err}"
        );
        // Without ON_ERROR_STOP, the second ROLLBACK ends the block.
        let (_, out, err) = psql(
            port,
            "varve",
            Some(&write),
            &[
                "-v",
                "ON_ERROR_STOP=0",
                "-c",
                "BEGIN",
                "-c",
                insert,
                "-c",
                "ROLLBACK",
                "-c",
                "ROLLBACK",
            ],
        );
        assert!(err.contains("ROLLBACK cannot undo"), "{err}");
        assert!(out.trim_end().ends_with("ROLLBACK"), "{out}");
        // A block that only read rolls back; one that wrote and committed commits.
        let (ok, out, err) = psql(
            port,
            "varve",
            Some(&write),
            &[
                "-c",
                "BEGIN",
                "-c",
                "SELECT 1",
                "-c",
                // A write of no row leaves nothing to undo.
                "INSERT INTO m.cpu SELECT * FROM m.cpu WHERE false",
                "-c",
                "ROLLBACK",
                "-c",
                "BEGIN",
                "-c",
                insert,
                "-c",
                "COMMIT",
            ],
        );
        assert!(ok, "{err}");
        assert!(out.contains("ROLLBACK") && out.trim_end().ends_with("COMMIT"), "{out}");
    })
    .await
    .unwrap();
    s.stop().await;
    let fresh = backend.open();
    let after = fresh
        .sql("SELECT count(*) FROM m.cpu WHERE host = 'rolled'")
        .await
        .unwrap();
    let after = after.batches[0]
        .column(0)
        .as_primitive::<arrow::datatypes::Int64Type>()
        .value(0);
    assert_eq!(after, 3, "every INSERT committed when it ran, as the errors said");
    let total = fresh.sql("SELECT count(*) FROM m.cpu").await.unwrap();
    let total = total.batches[0]
        .column(0)
        .as_primitive::<arrow::datatypes::Int64Type>()
        .value(0);
    assert_eq!(total, before + 3);
    varve_testkit::assert_readers_agree(&fresh, &backend, "m", "cpu").await;
}
