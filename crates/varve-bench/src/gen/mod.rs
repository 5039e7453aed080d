//! Data generators: TSBS-style IoT (trucks) and DevOps (`cpu`) and a trades tape, deterministic
//! for a seed and streamed to Parquet or CSV files of bounded size, so any scale fits in memory.
//!
//! Layout of a generated dataset directory:
//!
//! ```text
//! <dir>/dataset.json              what was generated (spec, tables, rows, files); written last
//! <dir>/<table>/part-00000.parquet
//! <dir>/<table>/part-00001.parquet ...
//! ```
//!
//! A directory without `dataset.json` is incomplete. Generation writes into `<dir>.partial` and
//! renames it when done, so an interrupted run never leaves a directory that looks complete.

pub mod devops;
pub mod iot;
mod sink;
pub mod trades;

use std::path::{Path, PathBuf};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

pub use sink::TableSink;

/// Default first timestamp: 2026-01-01T00:00:00Z, µs.
pub const DEFAULT_START_US: i64 = 1_767_225_600_000_000;
/// Default rows per generated file.
pub const DEFAULT_FILE_ROWS: usize = 1_000_000;

/// Interval between two readings of one truck or host in the TSBS use cases: 10 s, in µs.
pub const TSBS_INTERVAL_US: i64 = 10_000_000;
/// Rows per Arrow batch handed to a sink, at most.
const CHUNK_ROWS: usize = 65_536;

/// Rows per Arrow batch handed to a sink: small enough for files of `file_rows` rows.
pub(crate) fn chunk_rows(spec: &GenSpec) -> usize {
    CHUNK_ROWS.min(spec.file_rows).max(1)
}

/// Which workload a dataset is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Dataset {
    /// TSBS IoT: trucks, tables `readings` and `diagnostics`.
    Iot,
    /// TSBS DevOps: hosts, table `cpu`.
    Devops,
    /// A trades tape: table `trades`.
    Trades,
}

impl Dataset {
    /// The dataset's name as used in directory names and results.
    pub fn name(self) -> &'static str {
        match self {
            Dataset::Iot => "iot",
            Dataset::Devops => "devops",
            Dataset::Trades => "trades",
        }
    }

    /// The tables it generates.
    pub fn tables(self) -> &'static [&'static str] {
        match self {
            Dataset::Iot => &["readings", "diagnostics"],
            Dataset::Devops => &["cpu"],
            Dataset::Trades => &["trades"],
        }
    }

    /// The column identifying a series in each table (a truck, a host, a symbol).
    pub fn series_column(self) -> &'static str {
        match self {
            Dataset::Iot => "name",
            Dataset::Devops => "hostname",
            Dataset::Trades => "symbol",
        }
    }
}

/// File format of generated data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum FileFormat {
    /// Parquet, zstd, one row group per file (the benchmark runner reads only this).
    Parquet,
    /// CSV with a header row; times as RFC 3339 in UTC.
    Csv,
}

/// What to generate. Equal specs generate byte-identical files.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GenSpec {
    /// The workload.
    pub dataset: Dataset,
    /// Trucks (iot), hosts (devops) or symbols (trades).
    pub scale: u32,
    /// First timestamp, µs since the epoch (UTC).
    pub start_us: i64,
    /// Length of the generated period, µs.
    pub duration_us: i64,
    /// Seed of every random choice.
    pub seed: u64,
    /// Output format.
    pub format: FileFormat,
    /// IoT only: share of entries delivered late, after newer ones (0..1), as TSBS's IoT use case does.
    pub out_of_order: f64,
    /// IoT only: share of entries never delivered (0..1).
    pub missing: f64,
    /// IoT only: how late a late entry can be, µs.
    pub max_lateness_us: i64,
    /// Trades only: mean trades per second per symbol.
    pub rate: f64,
    /// Rows per file (files close at the first batch boundary past this).
    pub file_rows: usize,
}

impl GenSpec {
    /// A directory name that identifies the data (not the format or file size): e.g.
    /// `iot-s1000-d86400s-seed1` or `iot-s10-d3600s-seed1-ooo0.1-miss0.01`.
    pub fn dir_name(&self) -> String {
        let mut s = format!(
            "{}-s{}-d{}s-seed{}",
            self.dataset.name(),
            self.scale,
            self.duration_us / 1_000_000,
            self.seed
        );
        if self.start_us != DEFAULT_START_US {
            let t = chrono::DateTime::from_timestamp_micros(self.start_us).unwrap_or_default();
            s.push_str(&format!("-from{}", t.format("%Y%m%dT%H%M%SZ")));
        }
        if self.out_of_order > 0.0 || self.missing > 0.0 {
            s.push_str(&format!(
                "-ooo{}-late{}s-miss{}",
                self.out_of_order,
                self.max_lateness_us / 1_000_000,
                self.missing
            ));
        }
        if self.dataset == Dataset::Trades {
            s.push_str(&format!("-rate{}", self.rate));
        }
        if self.file_rows != DEFAULT_FILE_ROWS {
            s.push_str(&format!("-f{}", self.file_rows));
        }
        if self.format == FileFormat::Csv {
            s.push_str("-csv");
        }
        s
    }

    /// Checks the spec. Errors name the offending option.
    pub fn validate(&self) -> Result<(), String> {
        if self.scale == 0 {
            return Err("--scale must be at least 1".into());
        }
        if self.duration_us < TSBS_INTERVAL_US && self.dataset != Dataset::Trades {
            return Err("--duration must be at least 10s (one reading interval)".into());
        }
        if self.duration_us < 1_000_000 {
            return Err("--duration must be at least 1s".into());
        }
        for (name, v) in [("--out-of-order", self.out_of_order), ("--missing", self.missing)] {
            if !(0.0..1.0).contains(&v) {
                return Err(format!("{name} must be in [0, 1), got {v}"));
            }
            if v > 0.0 && self.dataset != Dataset::Iot {
                return Err(format!("{name} applies to the iot dataset only"));
            }
        }
        if self.out_of_order + self.missing >= 1.0 {
            return Err("--out-of-order and --missing together must leave some entries on time".into());
        }
        if self.out_of_order > 0.0 && self.max_lateness_us < TSBS_INTERVAL_US {
            return Err("--max-lateness must be at least 10s".into());
        }
        if self.dataset == Dataset::Trades && !(self.rate > 0.0 && self.rate <= 10_000.0) {
            return Err(format!(
                "--rate must be in (0, 10000] trades/s per symbol, got {}",
                self.rate
            ));
        }
        if self.dataset == Dataset::Trades && self.scale as usize > trades::MAX_SYMBOLS {
            return Err(format!("--scale for trades is at most {} symbols", trades::MAX_SYMBOLS));
        }
        if self.file_rows == 0 {
            return Err("--file-rows must be at least 1".into());
        }
        Ok(())
    }
}

/// One generated table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GeneratedTable {
    /// Table name (`readings`, `cpu`, ...).
    pub name: String,
    /// Rows written.
    pub rows: u64,
    /// Files written, in order.
    pub files: Vec<String>,
    /// Bytes written.
    pub bytes: u64,
}

/// `dataset.json`: what a directory holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DatasetInfo {
    /// The spec it was generated from.
    pub spec: GenSpec,
    /// Its tables.
    pub tables: Vec<GeneratedTable>,
}

impl DatasetInfo {
    /// Reads `<dir>/dataset.json`; `None` when the directory holds no complete dataset.
    pub fn read(dir: &Path) -> Option<DatasetInfo> {
        let text = std::fs::read_to_string(dir.join("dataset.json")).ok()?;
        serde_json::from_str(&text).ok()
    }

    /// The table's files as absolute paths.
    pub fn files(&self, dir: &Path, table: &str) -> Vec<PathBuf> {
        self.tables
            .iter()
            .filter(|t| t.name == table)
            .flat_map(|t| t.files.iter().map(|f| dir.join(table).join(f)))
            .collect()
    }

    /// Total rows over all tables.
    pub fn rows(&self) -> u64 {
        self.tables.iter().map(|t| t.rows).sum()
    }
}

/// Generates `spec` into `dir` (which must not hold a complete dataset), calling `progress` with
/// the share done (0..1) now and then.
///
/// Errors: an invalid spec; I/O errors naming the file.
pub fn generate(spec: &GenSpec, dir: &Path, progress: &dyn Fn(f64)) -> Result<DatasetInfo, String> {
    spec.validate()?;
    let partial = PathBuf::from(format!("{}.partial", dir.display()));
    if partial.exists() {
        std::fs::remove_dir_all(&partial).map_err(|e| format!("{}: {e}", partial.display()))?;
    }
    std::fs::create_dir_all(&partial).map_err(|e| format!("{}: {e}", partial.display()))?;
    let tables = match spec.dataset {
        Dataset::Iot => iot::generate(spec, &partial, progress)?,
        Dataset::Devops => devops::generate(spec, &partial, progress)?,
        Dataset::Trades => trades::generate(spec, &partial, progress)?,
    };
    let info = DatasetInfo {
        spec: spec.clone(),
        tables,
    };
    let json = serde_json::to_string_pretty(&info).map_err(|e| e.to_string())?;
    std::fs::write(partial.join("dataset.json"), json).map_err(|e| format!("{}: {e}", partial.display()))?;
    if dir.exists() {
        std::fs::remove_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    std::fs::rename(&partial, dir).map_err(|e| format!("{} -> {}: {e}", partial.display(), dir.display()))?;
    Ok(info)
}

/// A random stream for one purpose, derived from the run's seed and a label (an entity index
/// and a stream name), so adding an entity or a stream leaves the others unchanged.
pub fn stream(seed: u64, label: &str, index: u64) -> ChaCha8Rng {
    // FNV-1a over the label, mixed with the index and the seed (SplitMix64 finaliser).
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in label.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    let mut z = seed ^ h ^ index.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    ChaCha8Rng::seed_from_u64(z ^ (z >> 31))
}

/// A standard normal variate (Box-Muller).
pub(crate) fn normal(rng: &mut ChaCha8Rng) -> f64 {
    let u1: f64 = rng.random::<f64>().max(1e-300);
    let u2: f64 = rng.random::<f64>();
    (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
}

/// Picks one of `items`.
pub(crate) fn pick<'a>(rng: &mut ChaCha8Rng, items: &[&'a str]) -> &'a str {
    items[rng.random_range(0..items.len())]
}

/// Entries delivered late and out of order, or never, as TSBS's IoT use case does: each entry is
/// held back with probability `out_of_order` for up to `max_lateness` ticks, or dropped with
/// probability `missing`. Decisions come from their own random stream, so the values generated
/// do not depend on them.
pub(crate) struct Delivery<T> {
    rng: ChaCha8Rng,
    out_of_order: f64,
    missing: f64,
    max_lateness_ticks: u64,
    held: std::collections::BTreeMap<u64, Vec<T>>,
}

impl<T> Delivery<T> {
    pub(crate) fn new(spec: &GenSpec, label: &str) -> Self {
        Delivery {
            rng: stream(spec.seed, label, 0),
            out_of_order: spec.out_of_order,
            missing: spec.missing,
            max_lateness_ticks: (spec.max_lateness_us / TSBS_INTERVAL_US).max(1) as u64,
            held: Default::default(),
        }
    }

    /// Offers an entry generated at `tick`: pushed to `out` now, held for later, or dropped. A
    /// held entry comes out after the entries of 1 to `max_lateness` later ticks (so it is late
    /// by up to `max_lateness`, and always after at least one newer entry).
    pub(crate) fn offer(&mut self, tick: u64, entry: T, out: &mut Vec<T>) {
        if self.missing == 0.0 && self.out_of_order == 0.0 {
            out.push(entry);
            return;
        }
        let r: f64 = self.rng.random();
        if r < self.missing {
            return;
        }
        if r < self.missing + self.out_of_order {
            // Released at the start of tick + delay, before that tick's entries: delay 2 puts it
            // after one newer tick.
            let delay = self.rng.random_range(2..=self.max_lateness_ticks + 1);
            self.held.entry(tick + delay).or_default().push(entry);
        } else {
            out.push(entry);
        }
    }

    /// Moves entries due at or before `tick` to `out`.
    pub(crate) fn release(&mut self, tick: u64, out: &mut Vec<T>) {
        while let Some((&due, _)) = self.held.first_key_value() {
            if due > tick {
                break;
            }
            out.extend(self.held.pop_first().map(|(_, v)| v).unwrap_or_default());
        }
    }

    /// Moves every held entry to `out` (the end of the stream).
    pub(crate) fn drain(&mut self, out: &mut Vec<T>) {
        while let Some((_, v)) = self.held.pop_first() {
            out.extend(v);
        }
    }
}
