//! `varve serve` as a real process: it prints where it listens, answers HTTP and PostgreSQL (psql),
//! and stops cleanly on SIGTERM.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};

use crate::varve_ok;

/// One HTTP/1.1 request over a fresh connection; returns the whole response text.
fn http(addr: &str, request: &str) -> String {
    let mut s = TcpStream::connect(addr).unwrap();
    s.write_all(request.as_bytes()).unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    out
}

/// A `varve serve` process and where it listens.
struct Serving {
    child: std::process::Child,
    stderr: BufReader<std::process::ChildStderr>,
    /// Its stderr up to the listen lines.
    printed: String,
    /// The HTTP address, `host:port`.
    http: String,
    /// The PostgreSQL address, when `pg` was asked for.
    pg: Option<String>,
}

/// Starts `varve ARGS` (a `serve` command) and reads its stderr up to the line naming the HTTP
/// address, or, with `pg`, the PostgreSQL one after it.
fn serve(args: &[&str], pg: bool) -> Serving {
    let mut child = Command::new(env!("CARGO_BIN_EXE_varve"))
        .args(args)
        .env_remove("VARVE_LAKE")
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let (mut http, mut pg_addr) = (None, None);
    let mut printed = String::new();
    for _ in 0..10 {
        let mut line = String::new();
        if stderr.read_line(&mut line).unwrap() == 0 {
            break;
        }
        printed.push_str(&line);
        if let Some(rest) = line.split("HTTP on http://").nth(1) {
            http = rest.split_whitespace().next().map(str::to_string);
        }
        if let Some(rest) = line.split("PostgreSQL on ").nth(1) {
            pg_addr = rest.split_whitespace().next().map(str::to_string);
        }
        if http.is_some() && (!pg || pg_addr.is_some()) {
            break;
        }
    }
    let http = http.unwrap_or_else(|| panic!("no listen address in: {printed}"));
    Serving {
        child,
        stderr,
        printed,
        http,
        pg: pg_addr,
    }
}

/// Imports `csv` into the table `m` of `lake` (time column `ts`).
fn import_m(lake: &str, csv: &std::path::Path) {
    varve_ok(&[
        "--lake",
        lake,
        "import",
        "m",
        csv.to_str().unwrap(),
        "--time-column",
        "ts",
    ]);
}

#[test]
fn serve_answers_sql_and_stops_on_sigterm() {
    let dir = tempfile::tempdir().unwrap();
    let lake = dir.path().join("lake");
    let lake = lake.to_str().unwrap();
    let csv = dir.path().join("m.csv");
    std::fs::write(
        &csv,
        "ts,host,v\n2024-01-01T00:00:00Z,a,1.5\n2024-01-01T00:01:00Z,b,2.5\n",
    )
    .unwrap();
    import_m(lake, &csv);

    // The lake and the PostgreSQL address from a config file, HTTP's from the command line.
    let config = dir.path().join("varve.toml");
    std::fs::write(
        &config,
        format!("lake = {lake:?}\nhttp = \"127.0.0.1:9\"\npg = \"127.0.0.1:0\"\n"),
    )
    .unwrap();
    let Serving {
        mut child,
        mut stderr,
        printed,
        http: addr,
        pg,
    } = serve(
        &["serve", "--config", config.to_str().unwrap(), "--http", "127.0.0.1:0"],
        true,
    );
    let pg = pg.unwrap_or_else(|| panic!("no PostgreSQL address in: {printed}"));
    let port = pg.rsplit(':').next().unwrap();

    // The same answer over the PostgreSQL protocol (no token file: any password).
    let out = Command::new("psql")
        .arg(format!("host=127.0.0.1 port={port} dbname=varve user=varve"))
        .args(["-X", "-A", "-t", "-F", ",", "-c", "SELECT host, v FROM m ORDER BY ts"])
        .env("PGPASSWORD", "any")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "a,1.5\nb,2.5\n");

    let health = http(&addr, "GET /health HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
    assert!(health.starts_with("HTTP/1.1 200"), "{health}");
    let sql = "SELECT host, v FROM m ORDER BY ts";
    let req = format!(
        "POST /v1/sql?format=csv HTTP/1.1\r\nHost: t\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{sql}",
        sql.len()
    );
    let answer = http(&addr, &req);
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(answer.contains("host,v\r\n") || answer.contains("host,v\n"), "{answer}");
    assert!(answer.contains("a,1.5") && answer.contains("b,2.5"), "{answer}");

    let pid = child.id().to_string();
    assert!(Command::new("kill").args(["-TERM", &pid]).status().unwrap().success());
    let status = child.wait().unwrap();
    let mut rest = String::new();
    stderr.read_to_string(&mut rest).unwrap();
    assert!(status.success(), "exit {status:?}: {printed}{rest}");
    assert!(rest.contains("varve serve: stopped"), "{rest}");
}

#[test]
fn serve_config_files_are_checked() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.toml");
    std::fs::write(&bad, "htp = \"127.0.0.1:1\"\n").unwrap();
    let err = crate::varve_err(&["serve", "--config", bad.to_str().unwrap()]);
    assert!(err.contains("bad.toml") && err.contains("unknown field `htp`"), "{err}");
    let worse = dir.path().join("worse.toml");
    std::fs::write(&worse, "max-in-flight = \"many\"\n").unwrap();
    let err = crate::varve_err(&["serve", "--config", worse.to_str().unwrap()]);
    assert!(err.contains("worse.toml") && err.contains("max-in-flight"), "{err}");
    let missing = crate::varve_err(&["serve", "--config", "/nonexistent/varve.toml"]);
    assert!(missing.contains("/nonexistent/varve.toml"), "{missing}");
}

/// A `varve serve` process's memory (`VmRSS` or `VmHWM`, bytes) from /proc.
fn memory(pid: u32, key: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix(key))
        .and_then(|v| v.trim_start_matches(':').split_whitespace().next()?.parse::<u64>().ok())
        .unwrap()
        * 1024
}

/// `--memory-limit` bounds each query: two clients (`--max-in-flight 2`) run an aggregation with
/// millions of groups at once; each answers correctly (spilling to disk) or with a clear
/// out-of-memory error, at least one answers, and the server process grows by no more than its
/// slots times the limit, plus a margin for what the limit does not count (buffers being sent,
/// the data read).
#[test]
fn serve_keeps_queries_within_the_memory_limit() {
    let dir = tempfile::tempdir().unwrap();
    let lake = dir.path().join("lake");
    let lake = lake.to_str().unwrap();
    let csv = dir.path().join("m.csv");
    let mut text = String::from("ts,host,v\n");
    let n = 2000;
    for i in 0..n {
        text.push_str(&format!(
            "2024-01-01T00:{:02}:{:02}Z,h{},{}\n",
            i / 60 % 60,
            i % 60,
            i % 7,
            i
        ));
    }
    std::fs::write(&csv, text).unwrap();
    import_m(lake, &csv);
    let limit: u64 = 32 << 20;
    // The server's stderr stays open (kept in `_stderr`) until it has stopped.
    let Serving {
        mut child,
        http: addr,
        stderr: _stderr,
        ..
    } = serve(
        &[
            "--lake",
            lake,
            "serve",
            "--http",
            "127.0.0.1:0",
            "--pg",
            "off",
            "--max-in-flight",
            "2",
            "--memory-limit",
            &limit.to_string(),
        ],
        false,
    );
    let post = |sql: &str| {
        http(
            &addr,
            &format!(
                "POST /v1/sql?format=csv HTTP/1.1\r\nHost: t\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{sql}",
                sql.len()
            ),
        )
    };
    assert!(post("SELECT count(*) FROM m").contains("\n2000"));
    let base = memory(child.id(), "VmRSS");
    // 4M distinct groups: far more than 32 MiB of hash table.
    let heavy = "SELECT count(*) AS groups FROM (SELECT a.v * 10000 + b.v AS k, count(*) FROM m a, m b GROUP BY 1)";
    let answers: Vec<String> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..2).map(|_| s.spawn(|| post(heavy))).collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let mut spilled = 0;
    for a in &answers {
        if a.starts_with("HTTP/1.1 200") {
            assert!(a.contains(&format!("\n{}", n * n)), "a wrong answer: {a}");
            spilled += 1;
        } else {
            assert!(
                a.to_lowercase().contains("resources exhausted") || a.contains("memory"),
                "{a}"
            );
        }
    }
    assert!(spilled >= 1, "no query answered within the limit: {answers:?}");
    let peak = memory(child.id(), "VmHWM");
    eprintln!(
        "2 queries of 4M groups, --memory-limit {limit} x 2 slots: {spilled} answered, server RSS {base} -> peak {peak} bytes"
    );
    assert!(
        peak < base + 2 * limit + (256 << 20),
        "the server grew from {base} to {peak} bytes with 2 slots of {limit}"
    );
    let pid = child.id().to_string();
    assert!(Command::new("kill").args(["-TERM", &pid]).status().unwrap().success());
    assert!(child.wait().unwrap().success());
}
