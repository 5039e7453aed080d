//! Write: turning caller batches into Parquet data files of a table.
//!
//! Owns validation and alignment of input to the table schema (`align`), parsing of time values
//! (`time`), and sorting, partitioning by time and Parquet encoding with Iceberg metrics (`encode`).
//! It uploads nothing and commits nothing: `commit` decides when files become part of a snapshot.

pub(crate) mod align;
pub(crate) mod encode;
pub(crate) mod time;

pub use time::TimeOptions;
