//! The reference from a snapshot to its last-value index (`index::last_value`, which owns the
//! index itself): the two snapshot summary keys that name the file, and the decoding of its bytes
//! (one Parquet file of whole rows). Kept in `format` so that the catalog (the head object carries
//! small indexes) reads it without depending on the index's maintenance.

use arrow::array::RecordBatch;
use bytes::Bytes;
use iceberg::spec::Snapshot;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

use crate::error::{Error, Result};

/// Snapshot summary key: the absolute location of the snapshot's last-value index.
pub(crate) const SUMMARY_LOCATION: &str = "varve.last-value-index";
/// Snapshot summary key: the size of that file, bytes.
pub(crate) const SUMMARY_BYTES: &str = "varve.last-value-index-bytes";
/// Snapshot summary key: the Iceberg field ids of the series-constant columns, comma-separated
/// (empty when none): see [`IndexRef::series_constant`].
pub(crate) const SUMMARY_SERIES_CONSTANT: &str = "varve.last-value-index-series-constant";
/// Snapshot summary key: [`IndexRef::older_bound`], µs.
pub(crate) const SUMMARY_OLDER_BOUND: &str = "varve.last-value-index-older-bound";

/// The index a snapshot names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct IndexRef {
    /// Absolute location of the Parquet file.
    pub(crate) location: String,
    /// Its size, bytes.
    pub(crate) bytes: u64,
    /// The Iceberg field ids of the columns (besides the series key and the time column) whose
    /// value is the same in every row of each series at this snapshot (NULL counting as a value),
    /// such as a truck's fleet: a filter on them and the series key keeps or drops whole series,
    /// so the index answers it (`query::rules::newest`). Maintained with the index
    /// (`index::last_value`); empty for an index written before it was kept (the key absent).
    pub(crate) series_constant: Vec<i32>,
    /// A time (µs since the epoch, the time column's value) that no row of the snapshot is later
    /// than unless it is its series' newest row (the index's entry): so when the index's k-th
    /// newest entry is later, the k newest rows of the table are the index's k newest entries
    /// (`query::scan::newest_scan`). `i64::MIN` when every row is an entry; `None` when not known (an
    /// index written before it was kept). An upper bound, not always the least: a delete or
    /// retention may remove the row that set it.
    pub(crate) older_bound: Option<i64>,
}

impl IndexRef {
    /// The index `snapshot` names in its summary, if any.
    pub(crate) fn of(snapshot: &Snapshot) -> Option<IndexRef> {
        let p = &snapshot.summary().additional_properties;
        Some(IndexRef {
            location: p.get(SUMMARY_LOCATION)?.clone(),
            bytes: p.get(SUMMARY_BYTES)?.parse().ok()?,
            // An entry that does not parse claims nothing.
            series_constant: p
                .get(SUMMARY_SERIES_CONSTANT)
                .and_then(|v| v.split(',').filter(|s| !s.is_empty()).map(|s| s.parse().ok()).collect())
                .unwrap_or_default(),
            older_bound: p.get(SUMMARY_OLDER_BOUND).and_then(|v| v.parse().ok()),
        })
    }

    /// The summary entries naming this index.
    pub(crate) fn summary(&self) -> Vec<(String, String)> {
        let constant: Vec<String> = self.series_constant.iter().map(i32::to_string).collect();
        let mut out = vec![
            (SUMMARY_LOCATION.to_string(), self.location.clone()),
            (SUMMARY_BYTES.to_string(), self.bytes.to_string()),
            (SUMMARY_SERIES_CONSTANT.to_string(), constant.join(",")),
        ];
        out.extend(
            self.older_bound
                .map(|b| (SUMMARY_OLDER_BOUND.to_string(), b.to_string())),
        );
        out
    }
}

/// The rows of the index file at `location`, whose bytes are `bytes`.
///
/// Errors: [`ErrorKind::Corruption`] naming the file when it is not Parquet.
pub(crate) fn decode(location: &str, bytes: Bytes) -> Result<RecordBatch> {
    let corrupt = |e: &dyn std::fmt::Display| Error::corrupt(format!("last-value index {location}: {e}"));
    let reader = ParquetRecordBatchReaderBuilder::try_new(bytes)
        .map_err(|e| corrupt(&e))?
        .build()
        .map_err(|e| corrupt(&e))?;
    let schema = arrow::array::RecordBatchReader::schema(&reader);
    let batches: Vec<RecordBatch> = reader.collect::<std::result::Result<_, _>>().map_err(|e| corrupt(&e))?;
    Ok(arrow::compute::concat_batches(&schema, &batches)?)
}
