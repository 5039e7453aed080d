//! TSBS DevOps `cpu`: hosts with the ten TSBS host tags reporting the ten `usage_*` CPU fields
//! (percent, 0..100) every 10 s. Each field is a bounded random walk, so some hosts run hot
//! (`usage_user` > 90) for a while, which the high-cpu queries look for.

use std::path::Path;
use std::sync::Arc;

use arrow::array::{ArrayRef, Float64Builder, RecordBatch, StringBuilder, TimestampMicrosecondBuilder};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef, TimeUnit};
use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::{chunk_rows, normal, pick, stream, GenSpec, GeneratedTable, TableSink, TSBS_INTERVAL_US};

const REGIONS: &[&str] = &[
    "us-east-1",
    "us-west-1",
    "us-west-2",
    "eu-west-1",
    "eu-central-1",
    "ap-southeast-1",
    "ap-southeast-2",
    "ap-northeast-1",
    "sa-east-1",
];
const OSES: &[&str] = &["Ubuntu16.10", "Ubuntu16.04LTS", "Ubuntu15.10"];
const ARCHES: &[&str] = &["x64", "x86"];
const TEAMS: &[&str] = &["SF", "NYC", "LON", "CHI"];
const ENVIRONMENTS: &[&str] = &["production", "staging", "test"];

/// The tag columns after `hostname`.
pub const TAGS: [&str; 10] = [
    "hostname",
    "region",
    "datacenter",
    "rack",
    "os",
    "arch",
    "team",
    "service",
    "service_version",
    "service_environment",
];

/// The ten CPU fields, in TSBS order.
pub const FIELDS: [&str; 10] = [
    "usage_user",
    "usage_system",
    "usage_idle",
    "usage_nice",
    "usage_iowait",
    "usage_irq",
    "usage_softirq",
    "usage_steal",
    "usage_guest",
    "usage_guest_nice",
];

/// A host's name: `host_<index>`.
pub fn host_name(i: u32) -> String {
    format!("host_{i}")
}

/// Schema of `cpu`: `ts`, the ten tags (strings), the ten fields (float64).
pub fn cpu_schema() -> SchemaRef {
    let mut f = vec![Field::new(
        "ts",
        DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
        false,
    )];
    for (i, t) in TAGS.iter().enumerate() {
        f.push(Field::new(*t, DataType::Utf8, i != 0));
    }
    for name in FIELDS {
        f.push(Field::new(name, DataType::Float64, true));
    }
    Arc::new(Schema::new(f))
}

struct Host {
    tags: [String; 10],
    usage: [f64; 10],
    rng: ChaCha8Rng,
}

impl Host {
    fn new(seed: u64, i: u32) -> Host {
        let mut t = stream(seed, "devops.host.tags", i as u64);
        let region = pick(&mut t, REGIONS);
        let dc = format!("{region}{}", pick(&mut t, &["a", "b", "c"]));
        let tags = [
            host_name(i),
            region.to_string(),
            dc,
            t.random_range(0..100).to_string(),
            pick(&mut t, OSES).to_string(),
            pick(&mut t, ARCHES).to_string(),
            pick(&mut t, TEAMS).to_string(),
            t.random_range(0..20).to_string(),
            t.random_range(0..2).to_string(),
            pick(&mut t, ENVIRONMENTS).to_string(),
        ];
        let mut rng = stream(seed, "devops.host.values", i as u64);
        let usage = std::array::from_fn(|_| rng.random_range(0.0..100.0));
        Host { tags, usage, rng }
    }

    fn step(&mut self) {
        for u in &mut self.usage {
            *u = (*u + 1.5 * normal(&mut self.rng)).clamp(0.0, 100.0);
        }
    }
}

fn batch(schema: &SchemaRef, rows: &[(i64, u32, [f64; 10])], hosts: &[Host]) -> Result<RecordBatch, String> {
    let mut ts = TimestampMicrosecondBuilder::with_capacity(rows.len()).with_timezone("UTC");
    let mut tags: Vec<StringBuilder> = (0..10).map(|_| StringBuilder::new()).collect();
    let mut fields: Vec<Float64Builder> = (0..10).map(|_| Float64Builder::with_capacity(rows.len())).collect();
    for (t, h, usage) in rows {
        ts.append_value(*t);
        for (b, v) in tags.iter_mut().zip(&hosts[*h as usize].tags) {
            b.append_value(v);
        }
        for (b, v) in fields.iter_mut().zip(usage) {
            b.append_value((v * 100.0).round() / 100.0);
        }
    }
    let mut cols: Vec<ArrayRef> = vec![Arc::new(ts.finish())];
    cols.extend(tags.iter_mut().map(|b| Arc::new(b.finish()) as ArrayRef));
    cols.extend(fields.iter_mut().map(|b| Arc::new(b.finish()) as ArrayRef));
    RecordBatch::try_new(schema.clone(), cols).map_err(|e| e.to_string())
}

/// Generates `cpu` into `dir`.
pub(super) fn generate(spec: &GenSpec, dir: &Path, progress: &dyn Fn(f64)) -> Result<Vec<GeneratedTable>, String> {
    let chunk = chunk_rows(spec);
    let mut hosts: Vec<Host> = (0..spec.scale).map(|i| Host::new(spec.seed, i)).collect();
    let mut sink = TableSink::new(dir, "cpu", cpu_schema(), spec.format, spec.file_rows)?;
    let schema = sink.schema();
    let ticks = spec.duration_us / TSBS_INTERVAL_US;
    let mut rows = Vec::with_capacity(chunk);
    for tick in 0..ticks {
        let ts = spec.start_us + tick * TSBS_INTERVAL_US;
        for (i, h) in hosts.iter_mut().enumerate() {
            h.step();
            rows.push((ts, i as u32, h.usage));
        }
        if rows.len() >= chunk {
            sink.write(&batch(&schema, &rows, &hosts)?)?;
            rows.clear();
        }
        if tick % 360 == 0 {
            progress(tick as f64 / ticks as f64);
        }
    }
    sink.write(&batch(&schema, &rows, &hosts)?)?;
    progress(1.0);
    Ok(vec![sink.finish()?])
}
