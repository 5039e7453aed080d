//! Varve: an open time-series lakehouse.
//!
//! Tables live in your own storage (a local directory, an S3-compatible bucket) as Parquet data
//! files under Apache Iceberg v2 metadata, so any Iceberg reader can read them. Varve adds what a
//! time-series database gives: appends that validate and sort by (series key, time), partitions by
//! time, a commit protocol with no lock service, and a SQL dialect on DataFusion with
//! `time_bucket`, file pruning and time travel.
//!
//! ```
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! use std::collections::HashMap;
//! use std::sync::Arc;
//! use arrow::array::{Float64Array, RecordBatch, StringArray, TimestampMicrosecondArray};
//! use arrow::datatypes::{DataType, Field, Schema, TimeUnit};
//! use varve::{AppendOptions, Lake, TableContract};
//!
//! let lake = Lake::open("memory://", &HashMap::new())?;
//! let schema = Arc::new(Schema::new(vec![
//!     Field::new("ts", DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())), false),
//!     Field::new("host", DataType::Utf8, true),
//!     Field::new("cpu", DataType::Float64, true),
//! ]));
//! let contract = TableContract::time_series("ts").with_series_key(["host"]);
//! lake.create_table("metrics.cpu", &schema, &contract).await?;
//!
//! let batch = RecordBatch::try_new(schema, vec![
//!     Arc::new(TimestampMicrosecondArray::from(vec![0, 60_000_000, 0]).with_timezone("UTC")),
//!     Arc::new(StringArray::from(vec!["a", "a", "b"])),
//!     Arc::new(Float64Array::from(vec![0.5, 0.7, 0.2])),
//! ])?;
//! let report = lake.append("metrics.cpu", vec![batch], AppendOptions::default()).await?;
//! assert_eq!(report.rows, 3);
//!
//! let r = lake.sql("SELECT host, max(cpu) AS peak FROM metrics.cpu GROUP BY host ORDER BY host").await?;
//! assert_eq!(r.num_rows(), 2);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # }).unwrap();
//! ```
//!
//! # Modules (imports run one way, top to bottom)
//!
//! | module | owns |
//! |---|---|
//! | `error` | [`Error`] and its [`ErrorKind`] |
//! | `units` | durations and sizes in options and properties ([`parse_duration`], [`parse_bytes`]) |
//! | `background` | work left running after a call answered (publishing a commit), [`settle`] |
//! | `storage` | the object store opened from a URL, conditional writes, the block cache |
//! | `format` | Iceberg metadata (schemas, manifests), the table contract and every `varve.*` property |
//! | `catalog` | tables in the lake's storage: create, drop, list, load, data files of a snapshot |
//! | [`input`] | decoding inputs: format detection, CSV/TSV, NDJSON, Parquet, type inference, NULL spellings, input times, checked casts |
//! | `write` | aligning and validating batches, sorting, partitioning, Parquet, merging stored files |
//! | `index` | the last-value index (newest row of every series), derived at each commit from the parent snapshot's |
//! | `commit` | the one transaction every change goes through: added/removed files, operation, summary, schema and property changes, expiry, batch ids; put-if-absent with rebase and retry; the version hint |
//! | `maintain` | compaction, retention, deletes, snapshot expiry, orphan cleanup |
//! | `query` | the DataFusion catalog, table provider, pruning, INSERT, functions, time travel, extension points |
//! | `rollup` | materialized rollups, registered through `query`'s extension points |
//! | `lake` | the facade, [`Lake`] |
//! | [`import`](mod@import) | inputs into a table in one commit (create if missing, report), shared by CLI and Python |
//!
//! A module imports only modules above it in this table; the test `layering` enforces it.
//! `index` sits between `write` and `commit`: a commit attempt derives the new snapshot's index
//! (reading data files through `write::merge` when it must rebuild one). `rollup` plans
//! statements through `query`, and `query` reaches rollups only through the extensions the facade
//! registers (`query::session::QueryExtension`).

#![forbid(unsafe_code)]
#![warn(missing_docs, missing_debug_implementations, rustdoc::broken_intra_doc_links)]

mod background;
mod catalog;
mod commit;
mod error;
mod format;
pub mod import;
mod index;
pub mod input;
mod lake;
mod maintain;
mod query;
mod rollup;
mod storage;
mod units;
mod write;

pub use background::{settle, settle_published};
pub use catalog::{TableIdent, DEFAULT_NAMESPACE};
pub use commit::{AppendOptions, AppendReport, InlineMaintenance, SourceCheckpoint, SourcePosition};
pub use error::{Error, ErrorKind, Result};
pub use format::{parse_type, type_label, ColumnChange, Dedup, Partitioning, TableContract, PARTITION_ROWS};
pub use import::{import, ImportOptions, ImportReport};
pub use input::time::{parse_time_unit, times_to_micros};
pub use input::TimeOptions;
pub use input::{Input, InputFormat, MostlyTyped, TextOptions};
pub use lake::{Lake, SnapshotInfo, TableAppender, TableDescription, TableInfo};
pub use maintain::delete::DeleteReport;
pub use maintain::{MaintainOptions, MaintainProgress, MaintainReport, ProgressFn, DEFAULT_ORPHAN_AGE};
pub use query::functions::function_reference;
pub use query::limits::QueryOptions;
pub use query::session::{Described, QueryResult, Scans, Session};
pub use query::statement::{referenced_tables, split_statements};
pub use query::text::nested_as_text;
pub use rollup::{RefreshReport, RollupInfo};
pub use storage::{default_lake_url, CacheMode, CacheStats, StorageKind, DEFAULT_LAKE, LAKE_ENV};
pub use units::{parse_bytes, parse_duration};

/// Stack bytes for the threads that plan and run queries (the runtime's workers): DataFusion walks
/// expressions recursively, and `SELECT sum(c1 + ... + c400)` needs several MiB in a debug build.
/// With DataFusion's `recursive_protection` (enabled) deeper recursion grows onto the heap; this
/// leaves room for the parts that do not. Give it to `tokio::runtime::Builder::thread_stack_size`.
pub const THREAD_STACK_BYTES: usize = 64 << 20;

/// Re-exported so callers use the same Arrow as the engine.
pub use arrow;
/// Re-exported so callers wrap the lake's store ([`Lake::open_with_store_layer`]) with the same version.
pub use object_store;
