//! The reference engine: DuckDB (Python package) answering the same SQL over the same generated
//! Parquet files, in one long-lived child process (`duckdb_runner.py`, embedded in this binary).

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use serde::Deserialize;

/// The runner script, written next to the results of a run.
const RUNNER: &str = include_str!("duckdb_runner.py");

/// DuckDB's answer to one query.
#[derive(Debug, Clone, Deserialize)]
pub struct DuckAnswer {
    /// First run in a fresh connection, ms.
    pub first_ms: f64,
    /// Best warm run, ms.
    pub best_ms: f64,
    /// Result rows.
    pub rows: u64,
}

#[derive(Deserialize)]
struct Reply {
    #[serde(default)]
    error: Option<String>,
    #[serde(flatten)]
    answer: Option<DuckAnswer>,
    #[serde(default)]
    version: Option<String>,
}

/// A running DuckDB reference over one dataset.
pub struct DuckDb {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    /// DuckDB's version.
    pub version: String,
}

impl std::fmt::Debug for DuckDb {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "DuckDb({})", self.version)
    }
}

/// The Python interpreter with `duckdb` and `pyarrow`: `$VARVE_PYTHON`, else the venv that
/// `scripts/setup-python` makes (`~/.cache/varve-venv`, or `$VARVE_VENV`).
///
/// Errors: it does not exist.
pub fn python() -> Result<PathBuf, String> {
    varve_testkit::try_python().map_err(|e| format!("DuckDB (the reference engine) runs in Python: {e}"))
}

/// Checks that `python` can import `duckdb` and `pyarrow`, before any data is generated.
///
/// Errors: it cannot, with what Python said.
pub fn check_python(python: &Path) -> Result<(), String> {
    let out = Command::new(python)
        .args(["-c", "import duckdb, pyarrow"])
        .output()
        .map_err(|e| {
            format!(
                "DuckDB (the reference engine) runs in Python: cannot run {}: {e}",
                python.display()
            )
        })?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "DuckDB (the reference engine) runs in Python: {} cannot import duckdb and pyarrow \
             (run scripts/setup-python or set VARVE_PYTHON): {}",
            python.display(),
            String::from_utf8_lossy(&out.stderr).trim().lines().last().unwrap_or("")
        ))
    }
}

impl DuckDb {
    /// Starts DuckDB with a view `<namespace>.<table>` per table of the dataset in `dataset_dir`.
    /// `work_dir` receives the runner script.
    ///
    /// Errors: Python or DuckDB cannot start.
    pub fn start(python: &Path, dataset_dir: &Path, namespace: &str, work_dir: &Path) -> Result<DuckDb, String> {
        let script = work_dir.join("duckdb_runner.py");
        std::fs::write(&script, RUNNER).map_err(|e| format!("{}: {e}", script.display()))?;
        let mut child = Command::new(python)
            .arg(&script)
            .arg(dataset_dir)
            .arg(namespace)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", python.display()))?;
        let stdin = child.stdin.take().expect("piped");
        let mut stdout = BufReader::new(child.stdout.take().expect("piped"));
        let mut line = String::new();
        stdout.read_line(&mut line).map_err(|e| e.to_string())?;
        let reply: Reply = serde_json::from_str(&line).map_err(|_| {
            format!(
                "DuckDB runner did not start (is duckdb installed for {}?)",
                python.display()
            )
        })?;
        Ok(DuckDb {
            child,
            stdin,
            stdout,
            version: reply.version.unwrap_or_default(),
        })
    }

    /// Runs `sql` once fresh and `runs` times warm; writes the result to `out` (Parquet).
    ///
    /// Errors: DuckDB's error for the query, or a broken runner.
    pub fn run(&mut self, sql: &str, runs: u32, out: &Path) -> Result<DuckAnswer, String> {
        let cmd = serde_json::json!({"sql": sql, "runs": runs, "out": out});
        writeln!(self.stdin, "{cmd}").map_err(|e| format!("DuckDB runner: {e}"))?;
        self.stdin.flush().map_err(|e| format!("DuckDB runner: {e}"))?;
        let mut line = String::new();
        self.stdout
            .read_line(&mut line)
            .map_err(|e| format!("DuckDB runner: {e}"))?;
        if line.is_empty() {
            return Err("DuckDB runner exited".into());
        }
        let reply: Reply = serde_json::from_str(&line).map_err(|e| format!("DuckDB runner said {line:?}: {e}"))?;
        if let Some(e) = reply.error {
            return Err(format!("DuckDB: {e}"));
        }
        reply.answer.ok_or_else(|| format!("DuckDB runner said {line:?}"))
    }
}

impl Drop for DuckDb {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
