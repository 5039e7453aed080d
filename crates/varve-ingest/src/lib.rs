//! `varve ingest`: Kafka topics into Varve tables through a local write-ahead log, exactly once
//! across crashes and rebalances, with rows visible to queries within about a second.
//!
//! The data flow, one module per step:
//! - [`decode`]: a record's payload (JSON, line protocol, CSV) into rows of typed values;
//! - [`rows`]: rows fitted to the table's columns (new fields become columns), bad records set aside;
//! - [`wal`]: the fitted rows logged to segment files with checksums and fsync;
//! - [`commit`]: a sealed segment committed with the Kafka offsets it covers (a source
//!   checkpoint in the table: the only place offsets are trusted from), rejects to `<table>__rejected`;
//! - [`pipeline`]: the consumer group member that drives the steps, and backpressure;
//! - [`metrics`]: freshness, lag, log size, commit latency in Prometheus text;
//! - [`config`]: pipelines from a TOML file.
pub mod commit;
pub mod config;
pub mod decode;
pub mod metrics;
pub mod pipeline;
pub mod rows;
pub mod wal;

pub use pipeline::{run, PipelineConfig, Summary};
