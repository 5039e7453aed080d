//! `varve sql` with several statements, scripts (`-f FILE`, `-`, a pipe) and shell commands: one
//! session for all statements, the first error stops a script.

use std::io::Write;
use std::process::{Command, Stdio};

use crate::{varve, varve_ok};

fn with_stdin(args: &[&str], input: &str) -> std::process::Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_varve"))
        .args(args)
        .env_remove("VARVE_LAKE")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run varve");
    child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    child.wait_with_output().unwrap()
}

#[test]
fn statements_run_in_order_in_one_session() {
    let dir = tempfile::tempdir().unwrap();
    let lake = dir.path().join("lake");
    std::fs::create_dir(&lake).unwrap();
    let lake = lake.to_str().unwrap();
    let out = varve_ok(&[
        "--lake",
        lake,
        "sql",
        "CREATE TABLE m (ts timestamptz, host string, v float64) WITH (time_column = 'ts', series_key = 'host'); \
         INSERT INTO m VALUES ('2026-01-01T00:00:00Z', 'a', 1.5), ('2026-01-01T00:01:00Z', 'b', 2.5); \
         SET datafusion.execution.batch_size = 1234; \
         SHOW datafusion.execution.batch_size; \
         SELECT host, v FROM m ORDER BY host",
    ]);
    assert!(
        out.contains("datafusion.execution.batch_size,1234"),
        "SET applies to what follows: {out}"
    );
    assert!(out.contains("host,v\na,1.5\nb,2.5\n"), "{out}");
}

#[test]
fn scripts_from_a_file_or_stdin_with_shell_commands() {
    let dir = tempfile::tempdir().unwrap();
    let lake = dir.path().join("lake");
    std::fs::create_dir(&lake).unwrap();
    let lake = lake.to_str().unwrap();
    let script = "\
-- a comment line
CREATE TABLE ev (ts timestamptz, \"Name\" string) WITH (time_column = 'ts', partition = 'month');
.tables
.schema ev
INSERT INTO ev VALUES
  ('2026-01-01T00:00:00Z', 'semi;colon');
.mode json
SELECT \"Name\" FROM ev
";
    let file = dir.path().join("s.sql");
    std::fs::write(&file, script).unwrap();
    let from_file = varve_ok(&["--lake", lake, "sql", "-f", file.to_str().unwrap()]);
    assert!(from_file.contains("default.ev\n"), ".tables: {from_file}");
    assert!(
        from_file.contains(
            "CREATE TABLE default.ev (ts timestamptz, \"Name\" string) WITH (time_column = 'ts', partition = 'month');"
        ),
        ".schema: {from_file}"
    );
    assert!(
        from_file.trim_end().ends_with(r#"[{"Name":"semi;colon"}]"#),
        "{from_file}"
    );

    // The same script from stdin, as `-` and as a pipe with no statement: the table exists now,
    // so only the query part.
    for args in [vec!["--lake", lake, "sql", "-"], vec!["--lake", lake, "sql"]] {
        let o = with_stdin(&args, ".mode csv\nSELECT count(*) AS n\n  FROM ev;\n");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert_eq!(String::from_utf8_lossy(&o.stdout), "n\n1\n");
    }
}

#[test]
fn the_first_error_stops_a_script() {
    let dir = tempfile::tempdir().unwrap();
    let lake = dir.path().join("lake");
    std::fs::create_dir(&lake).unwrap();
    let lake = lake.to_str().unwrap();
    let o = varve(&[
        "--lake",
        lake,
        "sql",
        "SELECT 1 AS a; SELECT * FROM nope; SELECT 3 AS c",
    ]);
    assert_eq!(o.status.code(), Some(3), "a missing table is not found");
    let out = String::from_utf8_lossy(&o.stdout);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(out, "a\n1\n", "the statement before the error ran, none after it");
    assert!(err.starts_with("error: statement 2: "), "{err}");
    let o = with_stdin(&["--lake", lake, "sql", "-"], ".mode yaml\n");
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("use table, wide, csv, json or ndjson"));
    let o = with_stdin(&["--lake", lake, "sql", "-"], "SELECT 'open\n");
    assert_eq!(o.status.code(), Some(2), "an unterminated string is bad input");
}

/// The interactive shell on a real terminal (a pseudo-terminal from util-linux's `script`): each
/// line is typed after the prompt asking for it, as a person types; a statement may span lines
/// (the `  ...> ` prompt), shell commands work, an error is printed and the shell goes on.
#[test]
fn the_interactive_shell_on_a_terminal() {
    use std::io::Read;
    use std::sync::{Arc, Mutex};
    use std::time::{Duration, Instant};

    if Command::new("script").arg("--version").output().is_err() {
        panic!("util-linux `script` is needed to give the shell a terminal");
    }
    let dir = tempfile::tempdir().unwrap();
    let lake = dir.path().join("lake");
    std::fs::create_dir(&lake).unwrap();
    let cmd = format!("{} --lake {} sql", env!("CARGO_BIN_EXE_varve"), lake.to_str().unwrap());
    let mut child = Command::new("script")
        .args(["-qfec", &cmd, "/dev/null"])
        .env_remove("VARVE_LAKE")
        .env("HOME", dir.path())
        .env("TERM", "dumb")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run script");
    let screen = Arc::new(Mutex::new(String::new()));
    let mut stdout = child.stdout.take().unwrap();
    let reader = {
        let screen = screen.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = stdout.read(&mut buf) {
                if n == 0 {
                    break;
                }
                screen.lock().unwrap().push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        })
    };
    let prompts = |s: &str| s.matches("varve> ").count() + s.matches("  ...> ").count();
    let mut stdin = child.stdin.take().unwrap();
    let lines = [
        "CREATE TABLE m.t (ts TIMESTAMP, v INT) WITH (time_column = 'ts');",
        "INSERT INTO m.t VALUES",
        "  ('2026-01-01T00:00:00Z', 41 + 1);",
        ".tables",
        "SELECT nosuch FROM m.t;",
        ".mode csv",
        "SELECT v AS answer FROM m.t;",
        "\\dt",
        "\\q",
    ];
    for (k, line) in lines.iter().enumerate() {
        let deadline = Instant::now() + Duration::from_secs(60);
        while prompts(&screen.lock().unwrap()) <= k {
            assert!(
                Instant::now() < deadline,
                "no prompt for line {}; the screen:\n{}",
                k + 1,
                screen.lock().unwrap()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        stdin.write_all(format!("{line}\r").as_bytes()).unwrap();
        stdin.flush().unwrap();
    }
    let status = child.wait().unwrap();
    reader.join().unwrap();
    let screen = screen.lock().unwrap().replace('\r', "");
    assert!(status.success(), "the shell exits 0 on \\q:\n{screen}");
    assert!(screen.contains("created table m.t"), "{screen}");
    assert!(screen.contains("  ...> "), "a continuation prompt: {screen}");
    assert!(screen.contains("1 row"), "the insert's count: {screen}");
    assert!(screen.contains("\nm.t\n"), ".tables lists it: {screen}");
    assert!(screen.contains("nosuch"), "the error names the column: {screen}");
    assert!(
        !screen.contains("statement 4"),
        "an error at the prompt is not numbered as a script's: {screen}"
    );
    assert_eq!(
        screen.matches("\nm.t\n").count(),
        2,
        ".tables and \\dt list it: {screen}"
    );
    assert!(screen.contains("answer\n42\n"), ".mode csv then the answer: {screen}");
}

/// What psql users type works, or says what to type (issue 57): `exit`, `quit` and `\q` leave,
/// `help` helps, `\dt` and `\d TABLE` show the tables, another psql command names the dot
/// commands.
#[test]
fn psql_words_in_the_shell() {
    let dir = tempfile::tempdir().unwrap();
    let lake = dir.path().join("lake");
    std::fs::create_dir(&lake).unwrap();
    let lake = lake.to_str().unwrap();
    varve_ok(&[
        "--lake",
        lake,
        "sql",
        "CREATE TABLE m.t (ts TIMESTAMP, v INT) WITH (time_column = 'ts')",
    ]);
    let o = with_stdin(
        &["--lake", lake, "sql", "-"],
        "\\dt\n\\d m.t\nhelp\nquit\nSELECT nosuch;\n",
    );
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "quit leaves before the bad statement: {out}");
    assert!(out.contains("m.t\n"), "{out}");
    assert!(out.contains("CREATE TABLE m.t"), "{out}");
    assert!(out.contains(".tables"), "help prints the commands: {out}");
    for word in ["exit", "\\q", "exit;"] {
        let o = with_stdin(&["--lake", lake, "sql", "-"], &format!("{word}\nSELECT nosuch;\n"));
        assert!(o.status.success(), "{word} leaves");
    }
    let o = with_stdin(&["--lake", lake, "sql", "-"], "\\x\n");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(err.contains("\\x is a psql command") && err.contains(".help"), "{err}");
}
