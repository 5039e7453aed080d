//! The SQL dialect's sqllogictest files (`crates/varve/tests/slt/*.slt`, one per feature), run
//! with the `sqllogictest` crate against a Varve session on a fresh local lake per file, so
//! tables made with `CREATE TABLE` and filled by several `INSERT`s are real Iceberg tables of
//! several files. Cells print as Varve prints them (timestamps in RFC 3339 with `Z`), NULL as
//! `NULL` and the empty string as `(empty)`. Every file runs; the test fails listing, for each
//! failing file, its first failing record with its line.
//!
//! Run one file: `cargo test -p varve --test it slt -- --nocapture` with `VARVE_SLT=time_bucket`.

use std::path::PathBuf;

use arrow::util::display::{ArrayFormatter, FormatOptions};
use sqllogictest::{DBOutput, DefaultColumnType};
use varve::{Lake, QueryOptions, Session};
use varve_testkit::Backend;

/// One file's database: a session over its own lake (statements share `SET`s).
struct Db {
    _backend: Backend,
    _lake: Lake,
    session: Session,
}

#[derive(Debug)]
struct DbError(String);

impl std::fmt::Display for DbError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for DbError {}

#[async_trait::async_trait]
impl sqllogictest::AsyncDB for Db {
    type Error = DbError;
    type ColumnType = DefaultColumnType;

    async fn run(&mut self, sql: &str) -> Result<DBOutput<DefaultColumnType>, DbError> {
        let r = self.session.sql(sql).await.map_err(|e| DbError(e.to_string()))?;
        let options = FormatOptions::default().with_null("NULL");
        let mut rows = Vec::new();
        for b in &r.batches {
            let formatters = b
                .columns()
                .iter()
                .map(|c| ArrayFormatter::try_new(c.as_ref(), &options))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| DbError(e.to_string()))?;
            for i in 0..b.num_rows() {
                rows.push(
                    formatters
                        .iter()
                        .map(|f| match f.value(i).to_string() {
                            s if s.is_empty() => "(empty)".to_string(),
                            s => s,
                        })
                        .collect(),
                );
            }
        }
        let types = vec![DefaultColumnType::Any; r.schema.fields().len()];
        Ok(DBOutput::Rows { types, rows })
    }

    async fn shutdown(&mut self) {}

    fn engine_name(&self) -> &str {
        "varve"
    }
}

fn files() -> Vec<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/slt");
    let only = std::env::var("VARVE_SLT").ok();
    let mut out: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "slt"))
        .filter(|p| only.as_deref().is_none_or(|o| p.file_stem().is_some_and(|s| s == o)))
        .collect();
    out.sort();
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqllogictest_files() {
    let files = files();
    assert!(!files.is_empty(), "no .slt files");
    let mut failures = Vec::new();
    for file in &files {
        let mut runner = sqllogictest::Runner::new(|| async {
            let backend = Backend::local();
            let lake = backend.open();
            let session = lake
                .session(QueryOptions::default())
                .map_err(|e| DbError(e.to_string()))?;
            Ok(Db {
                _backend: backend,
                _lake: lake,
                session,
            })
        });
        runner.with_column_validator(|_, _| true);
        if let Err(e) = runner.run_file_async(file).await {
            failures.push(format!("{}: {e}", file.display()));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
