//! `varve ingest --config FILE`: pipelines from a TOML file, one `[[pipeline]]` per table, with
//! the same keys as the command's options (kebab-case); a `[defaults]` table holds keys every
//! pipeline takes unless it sets its own (`brokers`, `wal-dir`, `format`, ...). Top-level keys
//! are the lake (`lake`, `[storage]`) and the metrics address (`metrics`); options on the command
//! line win over the file.
//!
//! ```toml
//! lake = "/var/lib/varve/lake"
//! metrics = "127.0.0.1:9464"
//!
//! [defaults]
//! brokers = "127.0.0.1:9092"
//! wal-dir = "/var/lib/varve/wal"
//!
//! [[pipeline]]
//! table = "iot.readings"
//! topics = ["readings"]
//! time-field = "ts"
//! time-unit = "ms"
//! series-key = ["device"]
//!
//! [[pipeline]]
//! table = "ops.cpu"
//! topics = ["telegraf"]
//! format = "line-protocol"
//! ```

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;

use crate::decode::Format;
use crate::pipeline::PipelineConfig;
use crate::wal::Fsync;

/// Keys a pipeline takes (each also a top-level default).
#[derive(Debug, Default, Clone, serde::Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct PipelineFile {
    pub table: Option<String>,
    pub brokers: Option<String>,
    pub topics: Option<Vec<String>>,
    pub group: Option<String>,
    pub format: Option<Format>,
    pub time_field: Option<String>,
    pub time_unit: Option<String>,
    pub time_format: Option<String>,
    pub timezone: Option<String>,
    pub truncate_ns: Option<bool>,
    pub series_key: Option<Vec<String>>,
    pub csv_columns: Option<Vec<String>>,
    pub wal_dir: Option<PathBuf>,
    pub fsync: Option<Fsync>,
    pub commit_interval: Option<String>,
    pub max_batch_bytes: Option<String>,
    pub wal_max_bytes: Option<String>,
    /// Percent, `95` or `"95%"`.
    pub disk_high_watermark: Option<String>,
    pub refuse_new_fields: Option<bool>,
    /// librdkafka settings.
    #[serde(default)]
    pub kafka: HashMap<String, String>,
}

/// A `--config` file.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct IngestFile {
    /// The lake, when `--lake` and `$VARVE_LAKE` do not name one.
    pub lake: Option<String>,
    /// Storage options of the lake.
    #[serde(default)]
    pub storage: HashMap<String, String>,
    /// Address of the metrics endpoint.
    pub metrics: Option<String>,
    /// Defaults of every pipeline.
    #[serde(default)]
    pub defaults: PipelineFile,
    #[serde(default)]
    pub pipeline: Vec<PipelineFile>,
}

impl PipelineFile {
    /// `self` where set, else `other`.
    pub fn or(self, other: &PipelineFile) -> PipelineFile {
        let o = other.clone();
        let mut kafka = o.kafka;
        kafka.extend(self.kafka);
        PipelineFile {
            table: self.table.or(o.table),
            brokers: self.brokers.or(o.brokers),
            topics: self.topics.or(o.topics),
            group: self.group.or(o.group),
            format: self.format.or(o.format),
            time_field: self.time_field.or(o.time_field),
            time_unit: self.time_unit.or(o.time_unit),
            time_format: self.time_format.or(o.time_format),
            timezone: self.timezone.or(o.timezone),
            truncate_ns: self.truncate_ns.or(o.truncate_ns),
            series_key: self.series_key.or(o.series_key),
            csv_columns: self.csv_columns.or(o.csv_columns),
            wal_dir: self.wal_dir.or(o.wal_dir),
            fsync: self.fsync.or(o.fsync),
            commit_interval: self.commit_interval.or(o.commit_interval),
            max_batch_bytes: self.max_batch_bytes.or(o.max_batch_bytes),
            wal_max_bytes: self.wal_max_bytes.or(o.wal_max_bytes),
            disk_high_watermark: self.disk_high_watermark.or(o.disk_high_watermark),
            refuse_new_fields: self.refuse_new_fields.or(o.refuse_new_fields),
            kafka,
        }
    }

    /// The pipeline these settings describe, with the defaults filled in.
    ///
    /// Errors: [`varve::ErrorKind::InvalidInput`] naming the missing or bad key.
    pub fn build(self) -> varve::Result<PipelineConfig> {
        let invalid = |m: String| varve::Error::invalid(m);
        let table = self
            .table
            .ok_or_else(|| invalid("a pipeline needs a table (--table ns.t)".into()))?;
        let at = |key: &str, e: varve::Error| invalid(format!("{table}: {key}: {}", e.message()));
        let bytes = |key: &str, v: Option<String>, default: u64| -> varve::Result<u64> {
            match v {
                Some(v) => varve::parse_bytes(&v).map_err(|e| at(key, e)),
                None => Ok(default),
            }
        };
        let cfg = PipelineConfig {
            brokers: self
                .brokers
                .ok_or_else(|| invalid(format!("{table}: no Kafka brokers (--brokers HOST:PORT)")))?,
            topics: self.topics.unwrap_or_default(),
            group: self.group,
            format: self.format.unwrap_or(Format::Json),
            time_field: self.time_field.unwrap_or_else(|| "time".into()),
            time_unit: self
                .time_unit
                .map(|u| varve::parse_time_unit(&u))
                .transpose()
                .map_err(|e| at("time-unit", e))?,
            time_format: self.time_format,
            timezone: self.timezone,
            truncate_ns: self.truncate_ns.unwrap_or(false),
            series_key: self.series_key.unwrap_or_default(),
            csv_columns: self.csv_columns.unwrap_or_default(),
            wal_dir: self.wal_dir.unwrap_or_else(default_wal_dir),
            fsync: self.fsync.unwrap_or(Fsync::Batch),
            commit_interval: match self.commit_interval {
                Some(v) => varve::parse_duration(&v).map_err(|e| at("commit-interval", e))?,
                None => Duration::from_secs(1),
            },
            max_batch_bytes: bytes("max-batch-bytes", self.max_batch_bytes, 64 << 20)?,
            wal_max_bytes: bytes("wal-max-bytes", self.wal_max_bytes, 1 << 30)?,
            disk_high_watermark: match self.disk_high_watermark {
                Some(v) => parse_percent(&v).map_err(|e| at("disk-high-watermark", e))?,
                None => 95.0,
            },
            refuse_new_fields: self.refuse_new_fields.unwrap_or(false),
            kafka: self.kafka.into_iter().collect(),
            table,
        };
        cfg.validate()?;
        Ok(cfg)
    }
}

/// `95`, `95%` or `97.5%` as a percentage.
///
/// Errors: [`varve::ErrorKind::InvalidInput`] when it is not a number.
pub fn parse_percent(v: &str) -> varve::Result<f64> {
    let t = v.trim();
    t.strip_suffix('%')
        .unwrap_or(t)
        .trim()
        .parse::<f64>()
        .ok()
        .filter(|p| p.is_finite())
        .ok_or_else(|| varve::Error::invalid(format!("{v:?} is not a percentage (e.g. 95%)")))
}

/// `./varve-wal`, beside the default lake.
pub fn default_wal_dir() -> PathBuf {
    PathBuf::from("varve-wal")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_with_defaults_and_errors() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("ingest.toml");
        std::fs::write(
            &p,
            "[defaults]\nbrokers = \"127.0.0.1:9092\"\ncommit-interval = \"2s\"\n\n[[pipeline]]\ntable = \"a.b\"\ntopics = [\"t\"]\n\
             format = \"line-protocol\"\n[pipeline.kafka]\n\"fetch.min.bytes\" = \"1\"\n",
        )
        .unwrap();
        let f: IngestFile = toml::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
        let defaults = f.defaults.clone();
        let cfgs: Vec<PipelineConfig> = f
            .pipeline
            .into_iter()
            .map(|x| x.or(&defaults).build().unwrap())
            .collect();
        assert_eq!(cfgs[0].commit_interval, Duration::from_secs(2));
        assert_eq!(cfgs[0].format, Format::LineProtocol);
        assert_eq!(cfgs[0].kafka, vec![("fetch.min.bytes".to_string(), "1".to_string())]);
        assert_eq!(cfgs[0].disk_high_watermark, 95.0);
        assert_eq!(parse_percent("97.5%").unwrap(), 97.5);
        assert!(parse_percent("full").is_err());
        let e = toml::from_str::<IngestFile>("[[pipeline]]\ntable = \"a.b\"\nnonsense = 1\n").unwrap_err();
        assert!(e.message().contains("nonsense"), "{e}");
    }
}
