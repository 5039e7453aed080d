//! Committing a sealed write-ahead log segment: its rows to the table in one commit that carries
//! the Kafka offsets they cover ([`varve::SourceCheckpoint`], source `kafka`, streams
//! `topic/partition`), then its rejected records to the rejects table `<table>__rejected`.
//!
//! Before each attempt the segment's partitions are checked against the table's stored offsets:
//! - stored offset absent or equal to the segment's start: the rows are committed;
//! - stored offset at or past the segment's end: committed before (a replayed segment): skipped;
//! - anything else: another ingestor committed those offsets (a rebalance, a zombie): the
//!   partition's rows are dropped here and reported, and the consumer resumes it from the table.
//!
//! The rejects table has last-write-wins on (topic, partition, offset), so writing a segment's
//! rejects again after a crash leaves one row per rejected record. Storage errors are retried
//! with back-off until they pass: nothing consumed is dropped while the segment is on disk.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use arrow::array::{
    ArrayRef, BinaryArray, Int32Array, Int64Array, RecordBatch, StringArray, TimestampMicrosecondArray,
};
use arrow::datatypes::{DataType, Field, Schema, TimeUnit};
use varve::{AppendOptions, ErrorKind, Lake, SourceCheckpoint, SourcePosition, TableContract};

use crate::metrics::{CommitLabels, Metrics, TableLabels};
use crate::wal::Frame;

/// The checkpoint source name of Kafka offsets.
pub const SOURCE: &str = "kafka";
/// Longest pause between two tries of a failing commit.
const MAX_BACKOFF: Duration = Duration::from_secs(10);

/// What the table is created with when the first rows arrive.
#[derive(Debug, Clone)]
pub struct Creation {
    pub series_key: Vec<String>,
}

/// What committing a segment did.
#[derive(Debug, Default)]
pub struct Committed {
    /// Rows committed to the table.
    pub rows: u64,
    /// Records put in the rejects table.
    pub rejected: u64,
    /// Partitions another writer had moved on: (stream, its stored offset). Their rows here were
    /// dropped; the consumer must resume them from the stored offset.
    pub conflicts: Vec<(String, i64)>,
    /// The table's offsets after the commit (stream → next offset).
    pub positions: HashMap<String, i64>,
    /// Columns the commit added to the table.
    pub added_columns: Vec<String>,
    /// The table's schema after the commit, when it exists.
    pub schema: Option<arrow::datatypes::SchemaRef>,
}

/// The rejects table of `table`.
pub fn rejects_table(table: &str) -> String {
    format!("{table}__rejected")
}

fn is_transient(e: &varve::Error) -> bool {
    matches!(e.kind(), ErrorKind::Storage | ErrorKind::Timeout | ErrorKind::Conflict)
}

async fn backoff(attempt: u32, m: &Metrics, table: &str, e: &varve::Error) {
    if attempt == 1 {
        m.pauses
            .get_or_create(&TableLabels {
                table: table.to_string(),
            })
            .inc();
    }
    let d = Duration::from_millis(100u64 << attempt.min(7)).min(MAX_BACKOFF);
    tracing::warn!(table, error = %e, retry_in_ms = d.as_millis() as u64, "commit failed; retrying");
    tokio::time::sleep(d).await;
}

/// Commits `frames` (one sealed segment) to `table`; see the module docs. Retries storage
/// failures until they pass.
///
/// Errors: what retrying cannot mend: rows that do not fit the table (another writer gave a new
/// column another type), a table that is not a time-series table.
pub async fn commit_segment(
    lake: &Lake,
    table: &str,
    creation: &Creation,
    frames: Vec<Frame>,
    metrics: &Metrics,
) -> varve::Result<Committed> {
    let label = TableLabels {
        table: table.to_string(),
    };
    let outcome = |o: &str| {
        metrics
            .commits
            .get_or_create(&CommitLabels {
                table: table.to_string(),
                outcome: o.to_string(),
            })
            .inc();
    };
    let started = Instant::now();
    let mut out = Committed::default();
    let mut frames = frames;
    let mut attempt = 0u32;
    let mut replayed: Vec<Frame> = Vec::new();
    loop {
        attempt += 1;
        let stored = match lake.source_positions(table, SOURCE).await {
            Ok(p) => p,
            Err(e) if e.kind() == ErrorKind::NotFound => HashMap::new(),
            Err(e) if is_transient(&e) => {
                outcome("error");
                backoff(attempt, metrics, table, &e).await;
                continue;
            }
            Err(e) => return Err(e),
        };
        // Each partition's range in this segment.
        let mut ranges: HashMap<String, (i64, i64)> = HashMap::new();
        for f in &frames {
            let r = ranges.entry(f.stream()).or_insert((f.from, f.to));
            r.0 = r.0.min(f.from);
            r.1 = r.1.max(f.to);
        }
        let mut keep = Vec::new();
        for f in std::mem::take(&mut frames) {
            let (from, to) = ranges[&f.stream()];
            match stored.get(&f.stream()) {
                None => keep.push(f),
                Some(&s) if s == from => keep.push(f),
                Some(&s) if s >= to && to > from => replayed.push(f),
                Some(&s) => {
                    if !out.conflicts.iter().any(|(n, _)| *n == f.stream()) {
                        out.conflicts.push((f.stream(), s));
                    }
                }
            }
        }
        out.positions = stored;
        if keep.is_empty() {
            if !replayed.is_empty() {
                outcome("duplicate");
            }
            break;
        }
        let checkpoint = SourceCheckpoint {
            source: SOURCE.to_string(),
            positions: {
                let mut p: Vec<SourcePosition> = Vec::new();
                for f in &keep {
                    let (from, to) = ranges[&f.stream()];
                    if !p.iter().any(|x| x.stream == f.stream()) {
                        p.push(SourcePosition {
                            stream: f.stream(),
                            from,
                            to,
                        });
                    }
                }
                p
            },
        };
        match append(lake, table, creation, &keep, checkpoint.clone()).await {
            Ok((None, _)) => {
                // No table yet: the rejects are written; no offsets are kept (the group's
                // offsets follow the table's, so they stay where they were too).
                replayed.extend(keep);
                break;
            }
            Ok((Some(r), unfit)) => {
                // The rows are visible to queries from now: freshness ends here.
                let now_ms = chrono::Utc::now().timestamp_millis();
                if !unfit.is_empty() {
                    tracing::warn!(
                        table,
                        frames = unfit.len(),
                        "rows whose column another writer created with another type: rejected"
                    );
                }
                replayed.extend(unfit);
                for p in &checkpoint.positions {
                    out.positions.insert(p.stream.clone(), p.to);
                }
                if r.duplicate {
                    outcome("duplicate");
                    replayed.extend(keep);
                } else {
                    outcome("committed");
                    out.rows = r.rows;
                    out.added_columns = r.added_columns;
                    let h = metrics.freshness.get_or_create(&label);
                    for f in &keep {
                        for ms in &f.kafka_ms {
                            h.observe((now_ms - ms).max(0) as f64 / 1000.0);
                        }
                    }
                    replayed.extend(keep);
                }
                out.schema = lake.describe(table).await.ok().map(|d| d.schema);
                break;
            }
            Err(e) if e.kind() == ErrorKind::Conflict => {
                // Another writer moved a partition on: check the offsets again.
                outcome("conflict");
                frames = keep;
                if attempt > 3 {
                    backoff(attempt, metrics, table, &e).await;
                }
            }
            Err(e) if is_transient(&e) => {
                outcome("error");
                frames = keep;
                backoff(attempt, metrics, table, &e).await;
            }
            Err(e) => return Err(e),
        }
    }
    metrics
        .commit_seconds
        .get_or_create(&label)
        .observe(started.elapsed().as_secs_f64());
    metrics.rows.get_or_create(&label).inc_by(out.rows);
    // Rejects of every partition this segment committed, now or before.
    let rejects: Vec<&Frame> = replayed.iter().filter(|f| !f.rejects.is_empty()).collect();
    if !rejects.is_empty() {
        let batch = rejects_batch(&rejects);
        out.rejected = batch.num_rows() as u64;
        let mut attempt = 0;
        loop {
            attempt += 1;
            match write_rejects(lake, table, batch.clone()).await {
                Ok(()) => break,
                Err(e) if is_transient(&e) => backoff(attempt, metrics, table, &e).await,
                Err(e) => return Err(e),
            }
        }
        metrics.rejected.get_or_create(&label).inc_by(out.rejected);
    }
    Ok(out)
}

/// Appends `frames` with `checkpoint`. Rows of a frame with a column whose type differs from the
/// table's (another writer created the column first) are not appended but returned as rejects
/// (one frame per such frame): an append would convert them, which ingestion never does.
async fn append(
    lake: &Lake,
    table: &str,
    creation: &Creation,
    frames: &[Frame],
    checkpoint: SourceCheckpoint,
) -> varve::Result<(Option<varve::AppendReport>, Vec<Frame>)> {
    let schema = match lake.describe(table).await {
        Ok(d) => d.schema,
        Err(e) if e.kind() == ErrorKind::NotFound => match frames.iter().find_map(|f| f.rows.as_ref()) {
            Some(b) => {
                create(lake, table, creation, b).await?;
                lake.describe(table).await?.schema
            }
            // Only rejected records so far, and no table to keep offsets in (its columns and
            // series key come from the first good records): nothing to commit. After a restart
            // these records are read again and rejected again, into the same rejects rows.
            None => return Ok((None, vec![])),
        },
        Err(e) => return Err(e),
    };
    let opts = AppendOptions {
        note: Some("varve ingest".to_string()),
        checkpoint: Some(checkpoint),
        ..Default::default()
    };
    let mut a = lake.appender(table, opts).await?;
    let mut unfit = Vec::new();
    for f in frames {
        let Some(b) = &f.rows else { continue };
        let clash = b.schema().fields().iter().skip(1).find_map(|c| {
            let t = schema.field_with_name(c.name()).ok()?;
            (t.data_type() != c.data_type()).then(|| (c.name().clone(), t.data_type().clone(), c.data_type().clone()))
        });
        match clash {
            None => a.push(b.clone()).await?,
            Some((name, table_type, ours)) => unfit.push(as_rejects(
                f,
                &format!("field {name}: its column became {table_type} (another writer added it first) but the value is {ours}"),
            )),
        }
    }
    Ok((Some(a.commit().await?), unfit))
}

/// The rows of `f` as rejected records, each row's values as a JSON object for its payload.
fn as_rejects(f: &Frame, error: &str) -> Frame {
    let mut rejects = Vec::new();
    if let Some(b) = &f.rows {
        for i in 0..b.num_rows() {
            let row = b.slice(i, 1);
            let mut w = arrow::json::LineDelimitedWriter::new(Vec::new());
            let payload = match w.write(&row).and_then(|_| w.finish()) {
                Ok(()) => w.into_inner(),
                Err(e) => format!("(the row could not be shown: {e})").into_bytes(),
            };
            rejects.push(crate::wal::Reject {
                offset: f.row_offsets.get(i).copied().unwrap_or(f.from),
                kafka_ms: chrono::Utc::now().timestamp_millis(),
                payload: payload.trim_ascii_end().to_vec(),
                error: error.to_string(),
            });
        }
    }
    Frame {
        rows: None,
        rejects,
        row_offsets: vec![],
        kafka_ms: vec![],
        ..f.clone()
    }
}

async fn create(lake: &Lake, table: &str, creation: &Creation, batch: &RecordBatch) -> varve::Result<()> {
    let schema = batch.schema();
    let time = schema.field(0).name().clone();
    let missing: Vec<&String> = creation
        .series_key
        .iter()
        .filter(|k| schema.field_with_name(k).is_err())
        .collect();
    if !missing.is_empty() {
        return Err(varve::Error::invalid(format!(
            "table {table}: series key column(s) {missing:?} are not in the first records' fields"
        )));
    }
    let contract = TableContract::time_series(time).with_series_key(creation.series_key.iter().cloned());
    match lake.create_table(table, &schema, &contract).await {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(e),
    }
}

/// The rejects table's column that shows a payload as text ([`payload_text`]); added to a
/// rejects table made before it had one.
const PAYLOAD_TEXT: &str = "payload_text";

/// A rejected payload as text: itself when it is UTF-8, else its bytes in hex after `\x`, as
/// PostgreSQL prints `bytea` (`\x7b6e6f74`), so that any payload can be read with SQL (a `CAST`
/// of the raw bytes fails on the first one that is not UTF-8).
fn payload_text(payload: &[u8]) -> String {
    match std::str::from_utf8(payload) {
        Ok(text) => text.to_string(),
        Err(_) => {
            let mut hex = String::with_capacity(2 + 2 * payload.len());
            hex.push_str("\\x");
            for b in payload {
                hex.push_str(&format!("{b:02x}"));
            }
            hex
        }
    }
}

fn rejects_schema() -> Arc<Schema> {
    Arc::new(Schema::new(vec![
        Field::new(
            "time",
            DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            false,
        ),
        Field::new("topic", DataType::Utf8, false),
        Field::new("partition", DataType::Int32, false),
        Field::new("offset", DataType::Int64, false),
        Field::new("payload", DataType::Binary, false),
        Field::new(PAYLOAD_TEXT, DataType::Utf8, true),
        Field::new("error", DataType::Utf8, false),
    ]))
}

fn rejects_batch(frames: &[&Frame]) -> RecordBatch {
    let all: Vec<(&Frame, &crate::wal::Reject)> = frames
        .iter()
        .flat_map(|f| f.rejects.iter().map(move |r| (*f, r)))
        .collect();
    let cols: Vec<ArrayRef> = vec![
        Arc::new(
            TimestampMicrosecondArray::from_iter_values(all.iter().map(|(_, r)| r.kafka_ms * 1000))
                .with_timezone("UTC"),
        ),
        Arc::new(StringArray::from_iter_values(all.iter().map(|(f, _)| f.topic.as_str()))),
        Arc::new(Int32Array::from_iter_values(all.iter().map(|(f, _)| f.partition))),
        Arc::new(Int64Array::from_iter_values(all.iter().map(|(_, r)| r.offset))),
        Arc::new(BinaryArray::from_iter_values(
            all.iter().map(|(_, r)| r.payload.as_slice()),
        )),
        Arc::new(StringArray::from_iter_values(
            all.iter().map(|(_, r)| payload_text(&r.payload)),
        )),
        Arc::new(StringArray::from_iter_values(all.iter().map(|(_, r)| r.error.as_str()))),
    ];
    RecordBatch::try_new(rejects_schema(), cols).expect("columns of equal length")
}

async fn write_rejects(lake: &Lake, table: &str, batch: RecordBatch) -> varve::Result<()> {
    let name = rejects_table(table);
    if !lake.table_exists(&name).await? {
        let contract = TableContract::time_series("time")
            .with_series_key(["topic", "partition", "offset"])
            .with_dedup(varve::Dedup::LastWriteWins);
        match lake.create_table(&name, &rejects_schema(), &contract).await {
            Ok(_) => {}
            Err(e) if e.kind() == ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e),
        }
    } else if lake
        .describe(&name)
        .await?
        .schema
        .field_with_name(PAYLOAD_TEXT)
        .is_err()
    {
        let add = varve::ColumnChange::Add {
            name: PAYLOAD_TEXT.into(),
            data_type: DataType::Utf8,
        };
        if let Err(e) = lake.alter_columns(&name, &[add]).await {
            // Another ingestor may have added it first.
            if lake
                .describe(&name)
                .await?
                .schema
                .field_with_name(PAYLOAD_TEXT)
                .is_err()
            {
                return Err(e);
            }
        }
    }
    lake.append(&name, vec![batch], AppendOptions::default()).await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::payload_text;

    #[test]
    fn payloads_read_as_text_or_hex() {
        assert_eq!(payload_text(b"{not json 7"), "{not json 7");
        assert_eq!(payload_text(&[0x7b, 0xff, 0x00]), "\\x7bff00");
        assert_eq!(payload_text(b""), "");
    }
}
