//! Varve's benchmark suite: standard time-series workloads generated at any scale, loaded into
//! a lake, queried, timed and checked against DuckDB.
//!
//! | module | owns |
//! |---|---|
//! | `gen` | deterministic data generators (TSBS IoT and DevOps, trades) writing Parquet or CSV |
//! | `suites` | the queries of each suite, with seeded parameters |
//! | `store` | the instrumented object store: request counts, injected latency |
//! | `ingest` | loading a dataset into a lake, timed per commit |
//! | `probe` | one query in one process: first run and warm runs |
//! | `reference` | DuckDB on the same Parquet files |
//! | `compare` | whether two results are the same answer |
//! | `report` | JSON lines and Markdown, with machine, commit and command |
//! | `run` | a whole suite end to end |
//! | `maintain_step` | `Lake::maintain` over a loaded lake, in its own process |
//! | `writes` | write-path experiments: encoding threads, micro-commits, compaction of 1 GiB |

#![warn(missing_docs)]

pub mod compare;
pub mod gen;
pub mod ingest;
pub mod maintain_step;
pub mod probe;
pub mod reference;
pub mod report;
pub mod run;
pub mod store;
pub mod suites;
pub mod writes;
