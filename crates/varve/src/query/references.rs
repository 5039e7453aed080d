//! The spelling of Varve's table-name suffixes ([`LAST_VALUES_SUFFIX`], [`SINCE_SUFFIX`]), which
//! the lake's catalog resolves and the statement front end (`statement`) strips from the tables a
//! statement names.

/// A table name's suffix (after any time-travel suffix) that reads the snapshot's last-value
/// index, the newest row of each series, instead of its data files: `"stocks@last-values"`.
pub(crate) const LAST_VALUES_SUFFIX: &str = "@last-values";

/// A table name's suffix reading only the data files added after a sequence number:
/// `"readings@since=12"` (Iceberg spec, "Sequence Numbers"). Read-only; used by rollups.
pub(crate) const SINCE_SUFFIX: &str = "@since=";
