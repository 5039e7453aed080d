//! Write: turning caller batches into Parquet data files of a table.
//!
//! Owns validation and alignment of input to the table schema (`align`, with the checked casts
//! and time rules of `input`), sorting and partitioning by time (`encode`), Parquet files with columns encoded in
//! parallel (`parquet`), the Iceberg metrics of a data file (`metrics`), row keys for
//! last-write-wins dedup (`keys`), and merging stored files into new ones (`merge`, for compaction
//! and copy-on-write rewrites, writing column by column through `merge_columns` or row by row
//! through `output`). It
//! commits nothing: `commit` decides when files become part of a snapshot.

pub(crate) mod align;
pub(crate) mod encode;
pub(crate) mod keys;
pub(crate) mod merge;
pub(crate) mod merge_columns;
pub(crate) mod merge_job;
pub(crate) mod metrics;
pub(crate) mod output;
pub(crate) mod parquet;

/// The footer of a data file this process wrote, with its page indexes: path, size in bytes,
/// decoded metadata. A commit carries them to the head object and the footer cache, so that
/// readers of a fresh commit read no footer.
pub(crate) type WrittenFooter = (
    object_store::path::Path,
    u64,
    std::sync::Arc<::parquet::file::metadata::ParquetMetaData>,
);
