//! Query: Varve tables in DataFusion. It must not write metadata except through `commit`.
//!
//! A statement goes through these parts in order:
//!
//! - `statement`: the front end. A statement is read once (`Parsed`: time travel as table-name
//!   suffixes, `time_travel`; ASOF marks; DataFusion's parse) into what every later pass needs: its
//!   kind, tables, top-k mark and depth; SQL DDL Varve runs itself (`ddl`: CREATE/DROP TABLE and
//!   SCHEMA, ALTER TABLE); scripts cut into statements.
//! - `session`: runs a statement within its `limits` (timeout, rows, memory): loads the tables it
//!   names into the statement's `catalog`, plans it (with the time-series `functions`' rewrites,
//!   ASOF joins, `asof`; gap filling, `gapfill`), and holds the extension points modules above
//!   `query` register (custom statements, plan rewrites, drop hooks); the DataFusion state its
//!   sessions share is `context`, readable result column names `names`, plain errors for DataFusion's planning errors
//!   `plan_errors`.
//! - `rules`: optimizer rules that change where a scan reads from, never what a plan computes:
//!   newest rows from the last-value index (`newest`), only the newest time buckets' rows
//!   (`newest_buckets`), a top-k's files in sort order (`file_order`) and the union it reads in one
//!   partition (`chain`).
//! - `scan`: a table at a snapshot (`table`) as a DataFusion provider (`provider`), its scans
//!   planned in named steps (file, page and row-group pruning, small files from memory, work units,
//!   the files' order), with the footer cache and the store as queries read it.
//! - `sink`: `INSERT` through the append path. `text`: nested values as text for CSV.
//!
//! `references` spells the table-name suffixes (`@last-values`, `@since=`) the catalog resolves.

pub(crate) mod asof;
pub(crate) mod catalog;
pub(crate) mod context;
pub(crate) mod functions;
pub(crate) mod gapfill;
pub(crate) mod limits;
pub(crate) mod names;
pub(crate) mod plan_errors;
pub(crate) mod references;
pub(crate) mod rules;
pub(crate) mod scan;
pub(crate) mod session;
pub(crate) mod sink;
pub(crate) mod statement;
pub(crate) mod text;
