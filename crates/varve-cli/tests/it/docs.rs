//! The docs' examples run as shown: every ```` ```console ```` block of the Markdown files below is
//! run, in order, in a fresh directory per file (holding a link to the repository's `examples`, so
//! `examples/data/...` paths work as from the repository root), and what each command prints
//! (stdout and stderr, as a terminal shows them) is compared with the lines the doc shows under it.
//!
//! Block format: `$ command` lines (a trailing `\` continues a command on the next line) run with
//! `sh -c`, with the `varve` under test first on `PATH` and no `VARVE_LAKE`; the lines after a
//! command, up to the next `$`, are its expected output. In expected lines `[..]` matches any text
//! within a line and a line `...` matches any number of lines. A command must exit 0 unless its
//! expected output ends with a line `? <code>`.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The Markdown files whose `console` blocks are run, relative to the repository root.
const DOCS: &[&str] = &["docs/quickstart.md", "docs/sql.md", "docs/operations.md"];

struct Example {
    line: usize,
    command: String,
    expected: Vec<String>,
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// The `console` blocks' commands of `text`, with the line each starts on (1-based).
fn examples(text: &str) -> Vec<Example> {
    let mut out: Vec<Example> = Vec::new();
    let mut in_block = false;
    let mut continued = false;
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("```") {
            in_block = !in_block && trimmed.trim_start_matches('`').trim() == "console";
            continue;
        }
        if !in_block {
            continue;
        }
        if continued {
            let e = out.last_mut().unwrap();
            e.command.push('\n');
            e.command.push_str(line);
            continued = line.ends_with('\\');
        } else if let Some(cmd) = line.strip_prefix("$ ") {
            out.push(Example {
                line: i + 1,
                command: cmd.to_string(),
                expected: vec![],
            });
            continued = cmd.ends_with('\\');
        } else if let Some(e) = out.last_mut() {
            e.expected.push(line.to_string());
        }
    }
    out
}

/// Whether `got` matches the `pattern` line (`[..]` matches any text).
fn line_matches(pattern: &str, got: &str) -> bool {
    let parts: Vec<&str> = pattern.split("[..]").collect();
    if parts.len() == 1 {
        return pattern == got;
    }
    let mut rest = got;
    for (k, part) in parts.iter().enumerate() {
        if k == 0 {
            let Some(r) = rest.strip_prefix(part) else { return false };
            rest = r;
        } else if k == parts.len() - 1 {
            return rest.ends_with(part);
        } else {
            let Some(at) = rest.find(part) else { return false };
            rest = &rest[at + part.len()..];
        }
    }
    true
}

/// Whether the output lines match the expected lines (`...` lines match any run of lines).
fn output_matches(expected: &[String], got: &[&str]) -> bool {
    match expected.split_first() {
        None => got.is_empty(),
        Some((first, rest)) if first == "..." => (0..=got.len()).any(|skip| output_matches(rest, &got[skip..])),
        Some((first, rest)) => got
            .split_first()
            .is_some_and(|(g, grest)| line_matches(first, g) && output_matches(rest, grest)),
    }
}

fn run_doc(doc: &str) -> Vec<String> {
    let text = std::fs::read_to_string(root().join(doc)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(root().join("examples"), dir.path().join("examples")).unwrap();
    let bin = Path::new(env!("CARGO_BIN_EXE_varve")).parent().unwrap().to_path_buf();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let mut failures = Vec::new();
    for e in examples(&text) {
        let mut expected = e.expected.clone();
        while expected.last().is_some_and(|l| l.trim().is_empty()) {
            expected.pop();
        }
        let code = match expected.last().and_then(|l| l.strip_prefix("? ")) {
            Some(c) => {
                let c = c.trim().parse::<i32>().expect("? <exit code>");
                expected.pop();
                c
            }
            None => 0,
        };
        // stdout and stderr into one file, in the order a terminal shows them.
        let out_path = dir.path().join(".out");
        let out = std::fs::File::create(&out_path).unwrap();
        let status = Command::new("sh")
            .arg("-c")
            .arg(&e.command)
            .current_dir(dir.path())
            .env("PATH", &path)
            .env("COLUMNS", "100")
            .env_remove("VARVE_LAKE")
            .stdout(out.try_clone().unwrap())
            .stderr(out)
            .status()
            .unwrap();
        let shown = std::fs::read_to_string(&out_path).unwrap();
        let got: Vec<&str> = shown.trim_end().lines().collect();
        let status = status.code().unwrap_or(-1);
        if status != code || !output_matches(&expected, &got) {
            failures.push(format!(
                "{doc}:{}: $ {}\n  exit {status} (want {code})\n  --- the doc shows\n{}\n  --- it printed\n{}",
                e.line,
                e.command,
                expected.join("\n"),
                got.join("\n")
            ));
        }
    }
    failures
}

#[test]
fn console_examples_in_the_docs_print_what_they_show() {
    let mut failures = Vec::new();
    let mut ran = 0;
    for doc in DOCS {
        ran += examples(&std::fs::read_to_string(root().join(doc)).unwrap()).len();
        failures.extend(run_doc(doc));
    }
    assert!(ran >= 10, "only {ran} console examples found");
    assert!(
        failures.is_empty(),
        "{} of {ran} examples differ:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

#[test]
fn patterns_match_as_documented() {
    assert!(line_matches("created [..] at [..]", "created a at b"));
    assert!(!line_matches("created [..] at", "created a at b"));
    let lines = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    assert!(output_matches(&lines(&["a", "...", "d"]), &["a", "b", "c", "d"]));
    assert!(output_matches(&lines(&["a", "..."]), &["a"]));
    assert!(!output_matches(&lines(&["a", "d"]), &["a", "b", "d"]));
}
