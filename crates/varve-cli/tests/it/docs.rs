//! The docs' examples run as shown. Each Markdown file below is worked through in a fresh directory
//! (holding a link to the repository's `examples`, so `examples/data/...` paths work as from the
//! repository root), its fenced blocks in order:
//!
//! - ```` ```console ````: `$ command` lines (a trailing `\` continues a command on the next line) run
//!   with `sh -c`; the lines after a command, up to the next `$`, are its expected output (stdout and
//!   stderr, as a terminal shows them). In expected lines `[..]` matches any text within a line and a
//!   line `...` matches any number of lines. A command must exit 0 unless its expected output ends
//!   with a line `? <code>`.
//! - ```` ```sh ````: the block runs as one `sh -e` script and must exit 0 (its output is not compared).
//!   Lines that build the binary (`cargo build ...`, `export PATH=...`) are skipped: the `varve` under
//!   test is first on `PATH`.
//! - ```` ```sql ````: each statement (ending in `;` at the end of a line, comments after it) runs with
//!   `varve --lake LAKE sql`, where LAKE is `varve-lake` unless the doc says
//!   `<!-- docs-test lake: DIR -->`; it must succeed, or fail when its comment starts with `error:`.
//! - A block whose info string has `no-run` (an S3 bucket, a build or install, a snapshot id that
//!   differs per run, another engine's SQL) is only shown; `python` blocks are run by the Python
//!   package's tests (`test_docs.py`); other languages are not run.
//!
//! Commands run with no `VARVE_LAKE` and `COLUMNS=100`.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The Markdown files whose blocks are run, relative to the repository root.
const DOCS: &[&str] = &[
    "README.md",
    "docs/quickstart.md",
    "docs/concepts.md",
    "docs/sql.md",
    "docs/operations.md",
    "docs/python.md",
];

/// One fenced block: its info string's words (language first) and its lines.
struct Block {
    line: usize,
    info: Vec<String>,
    lines: Vec<String>,
}

impl Block {
    fn lang(&self) -> &str {
        self.info.first().map(|s| s.as_str()).unwrap_or("")
    }
    fn runs(&self) -> bool {
        !self.info.iter().any(|w| w == "no-run")
    }
}

/// One `$ command` of a console block and the output lines shown under it.
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

/// The fenced blocks of `text` (info strings split at spaces and commas), with the line each body
/// starts on (1-based).
fn blocks(text: &str) -> Vec<Block> {
    let mut out: Vec<Block> = Vec::new();
    let mut open = false;
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        if let Some(info) = trimmed.strip_prefix("```") {
            if open {
                open = false;
            } else {
                open = true;
                out.push(Block {
                    line: i + 2,
                    info: info
                        .split([' ', ','])
                        .filter(|w| !w.is_empty())
                        .map(str::to_string)
                        .collect(),
                    lines: vec![],
                });
            }
            continue;
        }
        if open {
            out.last_mut().unwrap().lines.push(line.to_string());
        }
    }
    out
}

/// The commands of a console block.
fn examples(block: &Block) -> Vec<Example> {
    let mut out: Vec<Example> = Vec::new();
    let mut continued = false;
    for (i, line) in block.lines.iter().enumerate() {
        if continued {
            let e = out.last_mut().unwrap();
            e.command.push('\n');
            e.command.push_str(line);
            continued = line.ends_with('\\');
        } else if let Some(cmd) = line.strip_prefix("$ ") {
            out.push(Example {
                line: block.line + i,
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

/// The statements of a SQL block: (line, statement, whether it must fail).
fn statements(block: &Block) -> Vec<(usize, String, bool)> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut first = 0;
    for (i, line) in block.lines.iter().enumerate() {
        let (code, comment) = match line.find("--") {
            Some(at) => (&line[..at], line[at + 2..].trim()),
            None => (line.as_str(), ""),
        };
        if code.trim().is_empty() {
            continue;
        }
        if current.is_empty() {
            first = block.line + i;
        }
        current.push_str(code.trim_end());
        current.push('\n');
        if code.trim_end().ends_with(';') {
            out.push((first, std::mem::take(&mut current), comment.starts_with("error:")));
        }
    }
    assert!(current.trim().is_empty(), "a statement without ';' at line {first}");
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

/// Runs `script` with `sh` (and `args` before it) in `dir`; returns the exit code and what it printed
/// (stdout and stderr into one file, in the order a terminal shows them).
fn run_sh(dir: &Path, args: &[&str], script: &str) -> (i32, String) {
    let bin = Path::new(env!("CARGO_BIN_EXE_varve")).parent().unwrap().to_path_buf();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let out_path = dir.join(".out");
    let out = std::fs::File::create(&out_path).unwrap();
    let status = Command::new("sh")
        .args(args)
        .arg("-c")
        .arg(script)
        .current_dir(dir)
        .env("PATH", &path)
        .env("COLUMNS", "100")
        .env_remove("VARVE_LAKE")
        .stdout(out.try_clone().unwrap())
        .stderr(out)
        .status()
        .unwrap();
    (status.code().unwrap_or(-1), std::fs::read_to_string(&out_path).unwrap())
}

/// Quotes `s` for `sh`.
fn sh_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// Counts of what a doc ran.
#[derive(Default)]
struct Ran {
    commands: usize,
    scripts: usize,
    statements: usize,
    shown_only: usize,
}

fn run_doc(doc: &str, ran: &mut Ran) -> Vec<String> {
    let text = std::fs::read_to_string(root().join(doc)).unwrap();
    let lake = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("<!-- docs-test lake:"))
        .map(|l| l.trim_end_matches("-->").trim().to_string())
        .unwrap_or_else(|| "varve-lake".into());
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    std::os::unix::fs::symlink(root().join("examples"), dir.join("examples")).unwrap();
    let mut failures = Vec::new();
    for block in blocks(&text) {
        if !block.runs() {
            ran.shown_only += 1;
            continue;
        }
        match block.lang() {
            "console" => {
                for e in examples(&block) {
                    ran.commands += 1;
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
                    let (status, shown) = run_sh(dir, &[], &e.command);
                    let got: Vec<&str> = shown.trim_end().lines().collect();
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
            }
            "sh" => {
                ran.scripts += 1;
                let script: Vec<&str> = block
                    .lines
                    .iter()
                    .map(|l| l.as_str())
                    .filter(|l| !l.starts_with("cargo build") && !l.starts_with("export PATH="))
                    .collect();
                let (status, shown) = run_sh(dir, &["-e"], &script.join("\n"));
                if status != 0 {
                    failures.push(format!(
                        "{doc}:{}: the sh block exited {status}\n  --- it printed\n{}",
                        block.line,
                        shown.trim_end()
                    ));
                }
            }
            "sql" => {
                for (line, sql, must_fail) in statements(&block) {
                    ran.statements += 1;
                    let cmd = format!("varve --lake {} sql {}", sh_quote(&lake), sh_quote(sql.trim()));
                    let (status, shown) = run_sh(dir, &[], &cmd);
                    if (status == 0) == must_fail {
                        let want = if must_fail { "an error" } else { "success" };
                        failures.push(format!(
                            "{doc}:{line}: {}\n  exit {status} (want {want})\n  --- it printed\n{}",
                            sql.trim(),
                            shown.trim_end()
                        ));
                    }
                }
            }
            _ => ran.shown_only += 1,
        }
    }
    failures
}

#[test]
fn examples_in_the_docs_run_and_print_what_they_show() {
    let mut failures = Vec::new();
    let mut ran = Ran::default();
    for doc in DOCS {
        failures.extend(run_doc(doc, &mut ran));
    }
    eprintln!(
        "docs: {} console commands, {} sh blocks, {} SQL statements run; {} blocks shown only",
        ran.commands, ran.scripts, ran.statements, ran.shown_only
    );
    assert!(ran.commands >= 20 && ran.statements >= 20, "too few examples found");
    assert!(
        failures.is_empty(),
        "{} examples differ:\n\n{}",
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
