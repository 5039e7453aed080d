//! Integration tests of the `varve` command: one binary, one module per concern. They run the
//! real binary (`CARGO_BIN_EXE_varve`) on real files and the docs' examples, against local disk and a real S3 server,
//! and check answers with DuckDB and PyIceberg.

mod bad_input;
mod commands;
mod concurrency;
mod data_errors;
mod docs;
mod ingest;
mod maintenance;
mod pipes;
mod real_data;
mod real_files;
mod serve;
mod shell;

use std::process::{Command, Output};

/// Runs `varve` with `args`; returns its output.
pub(crate) fn varve(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_varve"))
        .args(args)
        .env_remove("VARVE_LAKE")
        .output()
        .expect("run varve")
}

/// Runs `varve` and asserts success; returns stdout.
pub(crate) fn varve_ok(args: &[&str]) -> String {
    let o = varve(args);
    assert!(
        o.status.success(),
        "varve {args:?} failed: {}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Runs `varve`, asserts failure with a one-line message; returns stderr.
pub(crate) fn varve_err(args: &[&str]) -> String {
    let o = varve(args);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(
        !o.status.success(),
        "varve {args:?} should fail; stdout: {}",
        String::from_utf8_lossy(&o.stdout)
    );
    assert_eq!(err.trim_end().lines().count(), 1, "one line of error, got: {err}");
    assert!(err.starts_with("error: "), "{err}");
    assert!(!err.contains("panicked") && !err.contains("RUST_BACKTRACE"), "{err}");
    err
}
