//! Table properties that steer maintenance (`varve.*` Iceberg table properties, so they travel with
//! the table and other engines ignore them): their names, defaults, parsing and validation.
//!
//! | property | default | meaning |
//! |---|---|---|
//! | `varve.target-file-size` | `256MiB` | compaction cuts output files at about this size |
//! | `varve.row-group-rows` | `262144` | rows per Parquet row group of data files (appends and compaction) |
//! | `varve.page-rows` | `8192` | rows per Parquet data page at most (the unit a page-index-pruned read decodes) |
//! | `varve.time-encoding` | `delta` | how the time column is encoded: `delta` (DELTA_BINARY_PACKED) or `dictionary` |
//! | `varve.encode-threads` | `0` | threads that encode a row group's columns; 0: one per core |
//! | `varve.merge-buffer-size` | `128MiB` | compressed input pages a merge holds at once (more inputs read smaller chunks); a compaction's window of encoded output is at most half of it |
//! | `varve.compact-min-files` | `8` | an append compacts a partition holding more small files than this |
//! | `varve.auto-maintain` | `true` | whether appends compact inline |
//! | `varve.retention` | none | rows older than now minus this are hidden from queries, and maintenance drops their files |
//! | `varve.snapshot-retention` | `1h` | maintenance expires snapshots older than this |
//! | `varve.min-snapshots` | `5` | maintenance keeps at least this many newest snapshots |
//! | `varve.max-snapshots` | `100` | a commit expires the oldest snapshots beyond this many newest (never below `varve.min-snapshots`) |
//! | `varve.version-check-interval` | the lake's (`1s`) | a reader uses the table version it saw this recently without asking the store |
//! | `varve.dedup` | `none` | `none` or `last-write-wins` on (series key, time); set at creation |
//!
//! The contract properties (`varve.time-column`, `varve.series-key`, `varve.partition`) and
//! `varve.dedup` are fixed at creation: changing them would change what stored data means.

use std::collections::HashMap;
use std::time::Duration;

use crate::error::{Error, Result};
use crate::format::contract::{PROP_DEDUP, PROP_PARTITION, PROP_SERIES_KEY, PROP_TIME_COLUMN};
use crate::units::{parse_bytes, parse_duration};

/// Compaction's output file size in bytes.
pub(crate) const PROP_TARGET_FILE_SIZE: &str = "varve.target-file-size";
/// Rows per row group of data files.
pub(crate) const PROP_ROW_GROUP_ROWS: &str = "varve.row-group-rows";
/// Rows per data page at most.
pub(crate) const PROP_PAGE_ROWS: &str = "varve.page-rows";

/// Rows per Parquet row group unless [`PROP_ROW_GROUP_ROWS`] says otherwise: large enough for
/// good compression and few footers, small enough that a time-range scan can skip most of a big
/// file by row-group statistics.
pub(crate) const DEFAULT_ROW_GROUP_ROWS: usize = 256 * 1024;

/// Rows per data page at most unless [`PROP_PAGE_ROWS`] says otherwise (parquet-rs's default is
/// 20,000). A read pruned by the page index (Parquet spec, "Page Index") decodes whole pages, so this bounds what a selective read of a
/// sorted file decodes: a series' newest rows, one series' hour. Smaller pages cost page headers
/// and page-index entries (122 per column per million rows at 8,192) and compress a little worse;
/// see bench/results/HISTORY.md "Page size, ..." (2026-12-05) for the measurement behind it.
pub(crate) const DEFAULT_PAGE_ROWS: usize = 8 * 1024;

/// Prefix of the table properties that keep stream positions (`varve.source.<source>.<stream>`,
/// written by `commit::checkpoint`).
pub(crate) const PROP_SOURCE_PREFIX: &str = "varve.source.";

/// Rollup table property: rollups (`rollup`) keep their definition and watermark in these.
/// Rollup table property: the table the rollup summarises (`ns.table`).
pub(crate) const PROP_ROLLUP_SOURCE: &str = "varve.rollup.source";
/// Rollup table property: the rollup's SELECT, as `rollup::definition` writes it.
pub(crate) const PROP_ROLLUP_DEFINITION: &str = "varve.rollup.definition";
/// Rollup table property: the source's snapshot id the rollup's rows cover (the watermark); set in
/// the same commit as the rows, so the two never disagree.
pub(crate) const PROP_ROLLUP_WATERMARK: &str = "varve.rollup.watermark";
/// Rollup table property: the sequence number of the watermark snapshot; the source's data files
/// with a higher one were added after it.
pub(crate) const PROP_ROLLUP_WATERMARK_SEQUENCE: &str = "varve.rollup.watermark-sequence";
/// Source table property: its rollups, `ns.name` separated by commas.
pub(crate) const PROP_ROLLUPS: &str = "varve.rollups";

/// The error of a write to a rollup's table (`table`, whose properties are `props`), or `None`
/// for any other table: a rollup's rows change only by its refreshes.
pub(crate) fn refuse_rollup_writes(table: &dyn std::fmt::Display, props: &HashMap<String, String>) -> Option<Error> {
    props.get(PROP_ROLLUP_SOURCE).map(|source| {
        Error::invalid(format!(
            "{table} is a rollup of {source}: its rows change only by its refreshes (REFRESH ROLLUP {table}); \
             write to {source}"
        ))
    })
}

/// How float columns are encoded once their dictionary fills.
pub(crate) const PROP_FLOAT_ENCODING: &str = "varve.float-encoding";
/// How the time column is encoded.
pub(crate) const PROP_TIME_ENCODING: &str = "varve.time-encoding";
/// Threads that encode the columns of a row group (0: one per core).
pub(crate) const PROP_ENCODE_THREADS: &str = "varve.encode-threads";
/// Compressed bytes of input pages one merge pass holds at once.
pub(crate) const PROP_MERGE_BUFFER_SIZE: &str = "varve.merge-buffer-size";
/// Small files a partition may hold before an append compacts it.
pub(crate) const PROP_COMPACT_MIN_FILES: &str = "varve.compact-min-files";
/// Whether appends compact inline.
pub(crate) const PROP_AUTO_MAINTAIN: &str = "varve.auto-maintain";
/// How long rows are kept.
pub(crate) const PROP_RETENTION: &str = "varve.retention";
/// How long snapshots are kept.
pub(crate) const PROP_SNAPSHOT_RETENTION: &str = "varve.snapshot-retention";
/// How many newest snapshots are always kept.
pub(crate) const PROP_MIN_SNAPSHOTS: &str = "varve.min-snapshots";
/// How many newest snapshots a table keeps at most, whatever their age.
pub(crate) const PROP_MAX_SNAPSHOTS: &str = "varve.max-snapshots";
/// How long a reader may use the table version it loaded or checked before asking the store
/// again (a duration; overrides the lake's `version-check-interval` option).
pub(crate) const PROP_VERSION_CHECK_INTERVAL: &str = "varve.version-check-interval";
/// The most recent batch ids (a JSON array, newest first), kept by commits so that batch ids stay
/// idempotent after the snapshots that committed them expire.
pub(crate) const PROP_BATCH_IDS: &str = "varve.batch-ids";
/// The fence of the newest orphan cleanup (a random id, set by a metadata-only commit after the
/// cleanup listed the table's objects and before it deletes any): a commit whose data files went
/// up before it saw the current fence copies them to new names first (`commit`), since the
/// cleanup may have listed them as unreferenced (`maintain::expire`).
pub(crate) const PROP_ORPHAN_FENCE: &str = "varve.orphan-fence";

/// Default output file size: large enough that a day of a busy table is a few files (few footers
/// and requests per scan), small enough that one file is read in parallel by row groups.
pub(crate) const DEFAULT_TARGET_FILE_SIZE: u64 = 256 * 1024 * 1024;
/// Default merge buffer: with 64 inputs (a merge pass's most), 2 MiB of pages each, about a
/// seventh of a row group of 262,144 rows of sensor data.
pub(crate) const DEFAULT_MERGE_BUFFER_SIZE: u64 = 128 * 1024 * 1024;
/// Default small-file count that triggers inline compaction: 8 appends to one partition cost at
/// most 8 extra file opens per scan before they are merged.
pub(crate) const DEFAULT_COMPACT_MIN_FILES: usize = 8;
/// Default snapshot retention: time travel an hour back, while disk use stays near the live data.
pub(crate) const DEFAULT_SNAPSHOT_RETENTION: Duration = Duration::from_secs(3600);
/// Default number of newest snapshots kept whatever their age.
pub(crate) const DEFAULT_MIN_SNAPSHOTS: usize = 5;
/// Default bound on the snapshots a table keeps. Iceberg keeps every retained snapshot in each
/// metadata file (about 1 KB apiece), and each commit writes a whole new one: without a bound a
/// table committed every second writes 3.6 MB per commit after an hour. 100 keeps each metadata
/// file near 100 KB, so commit cost stays flat however often a table commits.
pub(crate) const DEFAULT_MAX_SNAPSHOTS: usize = 100;

/// The maintenance settings of a table, read from its properties.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct MaintenanceSettings {
    pub(crate) target_file_size: u64,
    pub(crate) row_group_rows: usize,
    /// Rows per data page at most.
    pub(crate) page_rows: usize,
    pub(crate) float_encoding: FloatEncoding,
    pub(crate) time_encoding: TimeEncoding,
    /// 0: one per core.
    pub(crate) encode_threads: usize,
    /// Bytes.
    pub(crate) merge_buffer_size: u64,
    pub(crate) compact_min_files: usize,
    pub(crate) auto_maintain: bool,
    pub(crate) retention: Option<Duration>,
    pub(crate) snapshot_retention: Duration,
    pub(crate) min_snapshots: usize,
    /// Snapshots kept at most (never fewer than `min_snapshots`; see [`max_snapshots`]).
    pub(crate) max_snapshots: usize,
}

/// The encoding of a float column's values once its dictionary fills (Parquet spec, "Encodings").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum FloatEncoding {
    /// BYTE_STREAM_SPLIT: the k-th bytes of all values together (`byte-stream-split`, the
    /// default): smaller files that decode faster when whole pages are read.
    #[default]
    ByteStreamSplit,
    /// PLAIN: the values as they are (`plain`), for readers older than the encoding.
    Plain,
}

impl FloatEncoding {
    fn parse(v: &str) -> Result<Self> {
        one_of(
            v,
            &[
                ("byte-stream-split", FloatEncoding::ByteStreamSplit),
                ("plain", FloatEncoding::Plain),
            ],
        )
    }
}

/// The option that `v` names (case-insensitive) among `(name, value)` pairs; otherwise an error
/// "expected a or b" (`validate` adds the property and the value).
fn one_of<T: Copy>(v: &str, options: &[(&str, T)]) -> Result<T> {
    options
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case(v))
        .map(|(_, t)| *t)
        .ok_or_else(|| {
            let names: Vec<&str> = options.iter().map(|(name, _)| *name).collect();
            Error::invalid(format!("expected {}", names.join(" or ")))
        })
}

/// The encoding of the time column's values (Parquet spec, "Encodings").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum TimeEncoding {
    /// DELTA_BINARY_PACKED (`delta`, the default): differences between neighbouring values,
    /// bit-packed in miniblocks of 32. Within a series, rows are stored in time order at a
    /// steady interval, so the differences are nearly constant and pack to a few bits per row
    /// whatever the page size: a dictionary of the times costs about 14 bits per row and only
    /// compresses well when a page holds several series.
    #[default]
    Delta,
    /// A dictionary of the times with a PLAIN fallback (`dictionary`, the writer's default), for
    /// readers without the delta encoding.
    Dictionary,
}

impl TimeEncoding {
    fn parse(v: &str) -> Result<Self> {
        one_of(
            v,
            &[("delta", TimeEncoding::Delta), ("dictionary", TimeEncoding::Dictionary)],
        )
    }
}

impl MaintenanceSettings {
    /// Reads the settings; a value that does not parse is an error naming the property.
    ///
    /// Errors: [`crate::ErrorKind::InvalidInput`].
    pub(crate) fn from_properties(p: &HashMap<String, String>) -> Result<Self> {
        let get = |k: &str| p.get(k).map(|v| v.trim()).filter(|v| !v.is_empty());
        let checked = |k: &str| -> Result<Option<&str>> {
            match get(k) {
                Some(v) => validate(k, v).map(|_| Some(v)),
                None => Ok(None),
            }
        };
        Ok(MaintenanceSettings {
            target_file_size: match checked(PROP_TARGET_FILE_SIZE)? {
                Some(v) => parse_bytes(v)?,
                None => DEFAULT_TARGET_FILE_SIZE,
            },
            row_group_rows: match checked(PROP_ROW_GROUP_ROWS)? {
                Some(v) => parse_count(PROP_ROW_GROUP_ROWS, v)?,
                None => DEFAULT_ROW_GROUP_ROWS,
            },
            page_rows: match checked(PROP_PAGE_ROWS)? {
                Some(v) => parse_count(PROP_PAGE_ROWS, v)?,
                None => DEFAULT_PAGE_ROWS,
            },
            float_encoding: match checked(PROP_FLOAT_ENCODING)? {
                Some(v) => FloatEncoding::parse(v)?,
                None => FloatEncoding::default(),
            },
            time_encoding: match checked(PROP_TIME_ENCODING)? {
                Some(v) => TimeEncoding::parse(v)?,
                None => TimeEncoding::default(),
            },
            encode_threads: match checked(PROP_ENCODE_THREADS)? {
                Some(v) => parse_count(PROP_ENCODE_THREADS, v)?,
                None => 0,
            },
            merge_buffer_size: match checked(PROP_MERGE_BUFFER_SIZE)? {
                Some(v) => parse_bytes(v)?,
                None => DEFAULT_MERGE_BUFFER_SIZE,
            },
            compact_min_files: match checked(PROP_COMPACT_MIN_FILES)? {
                Some(v) => parse_count(PROP_COMPACT_MIN_FILES, v)?,
                None => DEFAULT_COMPACT_MIN_FILES,
            },
            auto_maintain: match checked(PROP_AUTO_MAINTAIN)? {
                Some(v) => parse_bool(PROP_AUTO_MAINTAIN, v)?,
                None => true,
            },
            retention: checked(PROP_RETENTION)?.map(parse_duration).transpose()?,
            snapshot_retention: match checked(PROP_SNAPSHOT_RETENTION)? {
                Some(v) => parse_duration(v)?,
                None => DEFAULT_SNAPSHOT_RETENTION,
            },
            min_snapshots: match checked(PROP_MIN_SNAPSHOTS)? {
                Some(v) => parse_count(PROP_MIN_SNAPSHOTS, v)?,
                None => DEFAULT_MIN_SNAPSHOTS,
            },
            max_snapshots: max_snapshots(p),
        })
    }
}

/// A warning for a table whose partition is coarser than its `retention`: rows then age out
/// of a file long before the whole file does, so maintenance rewrites the file to remove them
/// (every run, as the cutoff moves) instead of dropping whole files. `None` when the partition
/// fits.
pub(crate) fn retention_warning(
    contract: &crate::format::contract::TableContract,
    retention: Duration,
) -> Option<String> {
    use crate::format::contract::Partitioning;
    contract.time_column.as_ref()?;
    let (unit, span) = match contract.partitioning {
        Partitioning::Hour => ("hour", Duration::from_secs(3600)),
        Partitioning::Day => ("day", Duration::from_secs(86_400)),
        Partitioning::Month => ("month", Duration::from_secs(28 * 86_400)),
        Partitioning::Year => ("year", Duration::from_secs(365 * 86_400)),
    };
    (span > retention).then(|| {
        format!(
            "the table is partitioned by {unit}, coarser than its retention of {}: rows age out of a file long \
             before the file does, so maintenance rewrites files to remove them (once a tenth of a file's rows \
             is past the retention) rather than dropping whole files; a partition much shorter than the \
             retention lets most old rows go as whole files",
            humantime_like(retention)
        )
    })
}

/// A duration as `varve.retention` spells it (`30d`, `12h`, `90m`, `45s`).
fn humantime_like(d: Duration) -> String {
    let s = d.as_secs();
    match s {
        s if s >= 86_400 && s % 86_400 == 0 => format!("{}d", s / 86_400),
        s if s >= 3600 && s % 3600 == 0 => format!("{}h", s / 3600),
        s if s >= 60 && s % 60 == 0 => format!("{}m", s / 60),
        s => format!("{s}s"),
    }
}

/// The most snapshots a table with properties `p` keeps: `varve.max-snapshots` (default
/// [`DEFAULT_MAX_SNAPSHOTS`]), raised to `varve.min-snapshots` when that is larger, and at least 1
/// (the current snapshot). A value that does not parse counts as the default here, so that a
/// commit never fails on it; `alter` refuses such values ([`validate_alter`]).
pub(crate) fn max_snapshots(p: &HashMap<String, String>) -> usize {
    count_of(p, PROP_MAX_SNAPSHOTS)
        .unwrap_or(DEFAULT_MAX_SNAPSHOTS)
        .max(count_of(p, PROP_MIN_SNAPSHOTS).unwrap_or(DEFAULT_MIN_SNAPSHOTS))
        .max(1)
}

/// The whole-number property `k` of `p` ([`parse_count`]); `None` when absent or not a number.
fn count_of(p: &HashMap<String, String>, k: &str) -> Option<usize> {
    p.get(k).and_then(|v| parse_count(k, v.trim()).ok())
}

/// Checks a property that `alter` is asked to set: known `varve.*` names with valid values;
/// creation-only properties are refused. Properties outside `varve.` are the Iceberg table's own
/// (for other engines) and pass unchecked.
///
/// Errors: [`crate::ErrorKind::InvalidInput`] naming the property and what it takes.
pub(crate) fn validate_alter(key: &str, value: Option<&str>) -> Result<()> {
    if [PROP_TIME_COLUMN, PROP_SERIES_KEY, PROP_PARTITION, PROP_DEDUP].contains(&key) {
        return Err(Error::invalid(format!(
            "{key} is fixed when the table is created (it decides how stored data is laid out or read); \
             create a new table and INSERT INTO it ... SELECT to change it"
        )));
    }
    if key.starts_with("varve.rollup") {
        return Err(Error::invalid(format!(
            "{key} is kept by Varve's rollups and cannot be set; use CREATE ROLLUP, DROP ROLLUP and REFRESH ROLLUP"
        )));
    }
    if key.starts_with(PROP_SOURCE_PREFIX) {
        return Err(Error::invalid(format!(
            "{key} is a source position kept by `varve ingest` commits and cannot be set"
        )));
    }
    if key == PROP_BATCH_IDS || key == PROP_ORPHAN_FENCE {
        return Err(Error::invalid(format!(
            "{key} is kept by Varve's commits and cannot be set"
        )));
    }
    if !key.starts_with("varve.") {
        return Ok(());
    }
    match value {
        Some(v) => validate(key, v),
        None if KNOWN.contains(&key) => Ok(()),
        None => Err(unknown(key)),
    }
}

/// Checks the rules between properties, on a table's properties as `alter` would leave them.
///
/// Errors: [`crate::ErrorKind::InvalidInput`] when `varve.max-snapshots` is set below
/// `varve.min-snapshots` (left at its default, the bound rises to `min-snapshots`).
pub(crate) fn validate_together(p: &HashMap<String, String>) -> Result<()> {
    let min = count_of(p, PROP_MIN_SNAPSHOTS).unwrap_or(DEFAULT_MIN_SNAPSHOTS);
    let Some(max) = count_of(p, PROP_MAX_SNAPSHOTS) else {
        return Ok(());
    };
    if max < min {
        return Err(Error::invalid(format!(
            "{PROP_MAX_SNAPSHOTS}={max} is below {PROP_MIN_SNAPSHOTS}={min}: a table cannot keep fewer \
             snapshots than it must keep; lower {PROP_MIN_SNAPSHOTS} too"
        )));
    }
    Ok(())
}

const KNOWN: [&str; 14] = [
    PROP_TARGET_FILE_SIZE,
    PROP_ROW_GROUP_ROWS,
    PROP_PAGE_ROWS,
    PROP_FLOAT_ENCODING,
    PROP_TIME_ENCODING,
    PROP_ENCODE_THREADS,
    PROP_MERGE_BUFFER_SIZE,
    PROP_COMPACT_MIN_FILES,
    PROP_AUTO_MAINTAIN,
    PROP_RETENTION,
    PROP_SNAPSHOT_RETENTION,
    PROP_MIN_SNAPSHOTS,
    PROP_MAX_SNAPSHOTS,
    PROP_VERSION_CHECK_INTERVAL,
];

fn unknown(key: &str) -> Error {
    Error::invalid(format!(
        "unknown table property {key}; Varve's are {} (see docs/operations.md)",
        KNOWN.join(", ")
    ))
}

fn validate(key: &str, v: &str) -> Result<()> {
    let r = match key {
        PROP_TARGET_FILE_SIZE => parse_bytes(v).and_then(|n| {
            if n < 1024 * 1024 {
                Err(Error::invalid("must be at least 1MiB"))
            } else {
                Ok(())
            }
        }),
        PROP_ROW_GROUP_ROWS | PROP_PAGE_ROWS | PROP_COMPACT_MIN_FILES | PROP_MIN_SNAPSHOTS | PROP_MAX_SNAPSHOTS => {
            parse_count(key, v).and_then(|n| {
                if n == 0 && key != PROP_MIN_SNAPSHOTS {
                    Err(Error::invalid("must be at least 1"))
                } else {
                    Ok(())
                }
            })
        }
        PROP_ENCODE_THREADS => parse_count(key, v).map(|_| ()),
        PROP_MERGE_BUFFER_SIZE => parse_bytes(v).and_then(|n| match n {
            0 => Err(Error::invalid("must be at least 1 byte")),
            _ => Ok(()),
        }),
        PROP_AUTO_MAINTAIN => parse_bool(key, v).map(|_| ()),
        PROP_FLOAT_ENCODING => FloatEncoding::parse(v).map(|_| ()),
        PROP_TIME_ENCODING => TimeEncoding::parse(v).map(|_| ()),
        PROP_RETENTION | PROP_SNAPSHOT_RETENTION | PROP_VERSION_CHECK_INTERVAL => parse_duration(v).map(|_| ()),
        PROP_DEDUP => match v {
            "none" | "last-write-wins" => Ok(()),
            _ => Err(Error::invalid("expected none or last-write-wins")),
        },
        k if k.starts_with("varve.")
            && !KNOWN.contains(&k)
            && ![PROP_TIME_COLUMN, PROP_SERIES_KEY, PROP_PARTITION].contains(&k) =>
        {
            return Err(unknown(k))
        }
        _ => Ok(()),
    };
    r.map_err(|e| Error::invalid(format!("{key}={v:?}: {}", e.message())))
}

fn parse_count(key: &str, v: &str) -> Result<usize> {
    v.replace('_', "")
        .parse()
        .map_err(|_| Error::invalid(format!("{key}={v:?}: expected a whole number")))
}

fn parse_bool(key: &str, v: &str) -> Result<bool> {
    match v.to_ascii_lowercase().as_str() {
        "true" | "on" | "yes" | "1" => Ok(true),
        "false" | "off" | "no" | "0" => Ok(false),
        _ => Err(Error::invalid(format!("{key}={v:?}: expected true or false"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The settings of a table with `key` set to `v` (or unset).
    fn settings_with(key: &str, v: Option<&str>) -> Result<MaintenanceSettings> {
        let p: HashMap<String, String> = v.map(|v| (key.to_string(), v.to_string())).into_iter().collect();
        MaintenanceSettings::from_properties(&p)
    }

    #[test]
    fn float_encoding() {
        let settings = |v: Option<&str>| settings_with(PROP_FLOAT_ENCODING, v);
        assert_eq!(settings(None).unwrap().float_encoding, FloatEncoding::ByteStreamSplit);
        assert_eq!(settings(Some("PLAIN")).unwrap().float_encoding, FloatEncoding::Plain);
        let e = settings(Some("gorilla")).unwrap_err().to_string();
        assert!(
            e.contains("varve.float-encoding") && e.contains("byte-stream-split or plain"),
            "{e}"
        );
    }

    #[test]
    fn time_encoding() {
        let settings = |v: Option<&str>| settings_with(PROP_TIME_ENCODING, v);
        assert_eq!(settings(None).unwrap().time_encoding, TimeEncoding::Delta);
        assert_eq!(
            settings(Some("Dictionary")).unwrap().time_encoding,
            TimeEncoding::Dictionary
        );
        let e = settings(Some("gorilla")).unwrap_err().to_string();
        assert!(
            e.contains("varve.time-encoding") && e.contains("delta or dictionary"),
            "{e}"
        );
    }

    #[test]
    fn alter_rules() {
        assert!(validate_alter("varve.retention", Some("30d")).is_ok());
        assert!(validate_alter("varve.retention", Some("thirty")).is_err());
        assert!(validate_alter("varve.dedup", Some("none")).is_err());
        assert!(validate_alter("varve.time-column", Some("t")).is_err());
        assert!(validate_alter("varve.nonsense", Some("1")).is_err());
        assert!(validate_alter("write.format.default", Some("parquet")).is_ok());
        assert!(validate_alter("varve.target-file-size", Some("10")).is_err());
        let props = |kv: &[(&str, &str)]| -> HashMap<String, String> {
            kv.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
        };
        // An unset bound rises to min-snapshots; one set below it is refused.
        let p = props(&[(PROP_MIN_SNAPSHOTS, "1000")]);
        assert!(validate_together(&p).is_ok());
        assert_eq!(max_snapshots(&p), 1000);
        assert!(validate_together(&props(&[(PROP_MAX_SNAPSHOTS, "3")])).is_err());
        assert!(validate_together(&props(&[(PROP_MAX_SNAPSHOTS, "3"), (PROP_MIN_SNAPSHOTS, "2")])).is_ok());
        assert_eq!(max_snapshots(&props(&[])), DEFAULT_MAX_SNAPSHOTS);
    }
}
