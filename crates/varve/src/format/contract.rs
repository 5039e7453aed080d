//! The table contract: time column, series key and partition granularity, stored as `varve.*`
//! Iceberg table properties so that it travels with the table (DESIGN.md, "The table contract").

use std::collections::HashMap;
use std::fmt;
use std::str::FromStr;

use crate::error::{Error, Result};

/// Property holding the time column's name.
pub(crate) const PROP_TIME_COLUMN: &str = "varve.time-column";
/// Property holding the comma-separated series key columns.
pub(crate) const PROP_SERIES_KEY: &str = "varve.series-key";
/// Property holding the partition granularity (`hour`, `day`, `month`, `year`).
pub(crate) const PROP_PARTITION: &str = "varve.partition";
/// Property holding the deduplication mode (`none`, `last-write-wins`).
pub(crate) const PROP_DEDUP: &str = "varve.dedup";

/// Rows a partition should hold at least, when [`Partitioning::for_data`] chooses the granularity.
pub const PARTITION_ROWS: u64 = 1_000_000;

/// How a time-series table's data files are split by time: an Iceberg partition transform of the
/// time column (Iceberg spec, "Partition Transforms": `hour`, `day`, `month`, `year`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Partitioning {
    /// One partition per hour (UTC).
    Hour,
    /// One partition per day (UTC); the default.
    #[default]
    Day,
    /// One partition per month (UTC).
    Month,
    /// One partition per year (UTC).
    Year,
}

impl Partitioning {
    /// The partition value of a time in µs since the epoch: hours, days or months since 1970-01-01,
    /// as the Iceberg transforms define them.
    pub fn value_of(self, micros: i64) -> i32 {
        const HOUR: i64 = 3_600_000_000;
        match self {
            Partitioning::Hour => micros.div_euclid(HOUR) as i32,
            Partitioning::Day => micros.div_euclid(24 * HOUR) as i32,
            Partitioning::Month => {
                use chrono::Datelike;
                let dt = chrono::DateTime::from_timestamp_micros(micros).unwrap_or_default();
                (dt.year() - 1970) * 12 + dt.month0() as i32
            }
            Partitioning::Year => {
                use chrono::Datelike;
                chrono::DateTime::from_timestamp_micros(micros)
                    .unwrap_or_default()
                    .year()
                    - 1970
            }
        }
    }

    /// The directory name of a partition value, e.g. `2024-03-01` for a day.
    pub fn label(self, value: i32) -> String {
        match self {
            Partitioning::Hour => {
                let dt = chrono::DateTime::from_timestamp(value as i64 * 3600, 0).unwrap_or_default();
                dt.format("%Y-%m-%d-%H").to_string()
            }
            Partitioning::Day => {
                let dt = chrono::DateTime::from_timestamp(value as i64 * 86400, 0).unwrap_or_default();
                dt.format("%Y-%m-%d").to_string()
            }
            Partitioning::Month => format!("{:04}-{:02}", 1970 + value.div_euclid(12), value.rem_euclid(12) + 1),
            Partitioning::Year => format!("{:04}", 1970 + value),
        }
    }

    /// The granularity for data with `rows` rows over `span_us` µs (a sample when `whole` is
    /// false): the finest whose partitions hold at least about [`PARTITION_ROWS`] rows, else
    /// `year` (a partition holds a million rows or a year, so that files are few and large).
    /// When the data is `whole` and smaller than [`PARTITION_ROWS`], no partition can reach it:
    /// `year`.
    pub fn for_data(rows: u64, span_us: i64, whole: bool) -> Partitioning {
        const HOUR_US: f64 = 3_600_000_000.0;
        if rows == 0 || (whole && rows < PARTITION_ROWS) {
            return Partitioning::Year;
        }
        let per_hour = rows as f64 / (span_us.max(1) as f64 / HOUR_US).max(1.0 / 3600.0);
        let target = PARTITION_ROWS as f64;
        if per_hour >= target {
            Partitioning::Hour
        } else if per_hour * 24.0 >= target {
            Partitioning::Day
        } else if per_hour * 24.0 * 30.44 >= target {
            Partitioning::Month
        } else {
            Partitioning::Year
        }
    }

    pub(crate) fn transform(self) -> iceberg::spec::Transform {
        match self {
            Partitioning::Hour => iceberg::spec::Transform::Hour,
            Partitioning::Day => iceberg::spec::Transform::Day,
            Partitioning::Month => iceberg::spec::Transform::Month,
            Partitioning::Year => iceberg::spec::Transform::Year,
        }
    }
}

impl fmt::Display for Partitioning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Partitioning::Hour => "hour",
            Partitioning::Day => "day",
            Partitioning::Month => "month",
            Partitioning::Year => "year",
        })
    }
}

impl FromStr for Partitioning {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s.to_ascii_lowercase().as_str() {
            "hour" | "hourly" => Ok(Partitioning::Hour),
            "day" | "daily" => Ok(Partitioning::Day),
            "month" | "monthly" => Ok(Partitioning::Month),
            "year" | "yearly" => Ok(Partitioning::Year),
            other => Err(Error::invalid(format!(
                "partition {other:?}: expected hour, day, month or year"
            ))),
        }
    }
}

/// What a table does with a row whose (series key, time) is already stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Dedup {
    /// Keep every row; the default.
    #[default]
    None,
    /// The newest write of a (series key, time) replaces the stored row, within an append (the
    /// later row wins) and across appends, as every Iceberg reader sees right after the commit
    /// (copy-on-write of the data files holding replaced rows).
    LastWriteWins,
}

impl fmt::Display for Dedup {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Dedup::None => "none",
            Dedup::LastWriteWins => "last-write-wins",
        })
    }
}

impl FromStr for Dedup {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "none" | "" => Ok(Dedup::None),
            "last-write-wins" | "last_write_wins" | "lww" => Ok(Dedup::LastWriteWins),
            other => Err(Error::invalid(format!(
                "dedup {other:?}: expected none or last-write-wins"
            ))),
        }
    }
}

/// What makes a table a time-series table. A plain table has no time column.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TableContract {
    /// The time column (stored as Iceberg `timestamptz`, µs, UTC); `None` for a plain table.
    pub time_column: Option<String>,
    /// Columns that identify a series, e.g. `["host", "region"]`; may be empty.
    pub series_key: Vec<String>,
    /// Partition granularity of the time column (ignored for plain tables).
    pub partitioning: Partitioning,
    /// What an append does with a (series key, time) already stored (time-series tables only).
    pub dedup: Dedup,
}

impl TableContract {
    /// A time-series contract on `time_column` with daily partitions and no series key.
    pub fn time_series(time_column: impl Into<String>) -> Self {
        TableContract {
            time_column: Some(time_column.into()),
            ..Default::default()
        }
    }

    /// The same contract with `series_key` as its series key.
    pub fn with_series_key<S: Into<String>>(mut self, series_key: impl IntoIterator<Item = S>) -> Self {
        self.series_key = series_key.into_iter().map(Into::into).collect();
        self
    }

    /// The same contract with another partition granularity.
    pub fn with_partitioning(mut self, p: Partitioning) -> Self {
        self.partitioning = p;
        self
    }

    /// The same contract with another deduplication mode.
    pub fn with_dedup(mut self, d: Dedup) -> Self {
        self.dedup = d;
        self
    }

    /// The name of the partition field (and data directory prefix) for time column `time`:
    /// `<time>_<granularity>` with every character outside `[A-Za-z0-9_]` replaced by `_`, since
    /// manifests store the partition tuple as an Avro record whose field names must be Avro names
    /// (Avro spec, "Names").
    pub(crate) fn partition_field_name(&self, time: &str) -> String {
        let raw = format!("{time}_{}", self.partitioning);
        let mut name: String = raw
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' })
            .collect();
        if name.starts_with(|c: char| c.is_ascii_digit()) {
            name.insert(0, '_');
        }
        name
    }

    pub(crate) fn to_properties(&self) -> HashMap<String, String> {
        let mut m = HashMap::new();
        if let Some(t) = &self.time_column {
            m.insert(PROP_TIME_COLUMN.to_string(), t.clone());
            m.insert(PROP_PARTITION.to_string(), self.partitioning.to_string());
            m.insert(PROP_SERIES_KEY.to_string(), self.series_key.join(","));
            if self.dedup != Dedup::None {
                m.insert(PROP_DEDUP.to_string(), self.dedup.to_string());
            }
        }
        m
    }

    pub(crate) fn from_properties(p: &HashMap<String, String>) -> Result<Self> {
        let time_column = p.get(PROP_TIME_COLUMN).filter(|s| !s.is_empty()).cloned();
        let series_key = p
            .get(PROP_SERIES_KEY)
            .map(|s| s.split(',').filter(|x| !x.is_empty()).map(str::to_string).collect())
            .unwrap_or_default();
        let partitioning = match p.get(PROP_PARTITION) {
            Some(s) => s.parse()?,
            None => Partitioning::Day,
        };
        let dedup = match p.get(PROP_DEDUP) {
            Some(s) => s.parse()?,
            None => Dedup::None,
        };
        Ok(TableContract {
            time_column,
            series_key,
            partitioning,
            dedup,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DAY_US: i64 = 86_400_000_000;

    #[test]
    fn granularity_follows_the_density_of_the_data() {
        // 12,154 daily prices over 13 years: fewer than a million rows in all.
        assert_eq!(
            Partitioning::for_data(12_154, 13 * 365 * DAY_US, true),
            Partitioning::Year
        );
        // 1,000 trucks every 10 s: 8.64M rows a day.
        assert_eq!(Partitioning::for_data(2_000_000, DAY_US / 4, false), Partitioning::Day);
        // 2M rows in 5 minutes: 24M an hour.
        assert_eq!(
            Partitioning::for_data(2_000_000, DAY_US / 288, false),
            Partitioning::Hour
        );
        // 100k rows a day: 3M a month.
        assert_eq!(
            Partitioning::for_data(2_000_000, 20 * DAY_US, false),
            Partitioning::Month
        );
        // 1,000 rows a day: a year holds 365k.
        assert_eq!(
            Partitioning::for_data(2_000_000, 2000 * DAY_US, false),
            Partitioning::Year
        );
        // A sample of one instant is dense, not empty.
        assert_eq!(Partitioning::for_data(2_000_000, 0, false), Partitioning::Hour);
        assert_eq!(Partitioning::for_data(0, 0, true), Partitioning::Year);
    }

    #[test]
    fn year_partitions() {
        let p: Partitioning = "year".parse().unwrap();
        assert_eq!(p.value_of(0), 0);
        assert_eq!(p.value_of(-1), -1, "1969");
        assert_eq!(p.label(54), "2024");
    }
}
