//! One pipeline: Kafka topics → decode and fit → write-ahead log → commits to one table.
//!
//! The consumer (rdkafka, in a consumer group, offsets never auto-committed) hands records to the
//! loop below, which keeps, per partition, the next offset it expects. A record below it is a
//! duplicate delivery (or already in the table) and is skipped. Records are decoded and fitted in
//! chunks (every [`CHUNK_MS`] or [`CHUNK_RECORDS`]), appended to the open log segment as one frame
//! per partition and synced; every `commit_interval` (or when the segment reaches
//! `max_batch_bytes`) the segment is sealed and committed ([`crate::commit`]) while the next one
//! fills. After a commit the group's offsets in Kafka are set to the table's (they follow the
//! table, never lead it). On a partition assignment the consumer starts each partition at the
//! table's offset. A commit that finds a partition moved on by another ingestor drops that
//! partition's rows from the log and seeks back to the table's offset when this consumer read
//! past it.
//!
//! Backpressure: while a commit is in flight and the open segment is full (`max_batch_bytes`),
//! or the log holds more than `wal_max_bytes`, the loop stops reading from Kafka (a pause) until
//! the commit lands; storage failures make the commit retry with back-off meanwhile. It also
//! pauses while the log's file system is fuller than `disk_high_watermark` percent, committing
//! what it logged, until space is freed.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use arrow::datatypes::TimeUnit;
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, CommitMode, Consumer, ConsumerContext, StreamConsumer};
use rdkafka::message::Message;
use rdkafka::topic_partition_list::{Offset, TopicPartitionList};
use rdkafka::types::RDKafkaRespErr;
use rdkafka::ClientContext;
use tokio::sync::mpsc;
use varve::{ErrorKind, Lake, TimeOptions};

use crate::commit::{self, Committed, Creation};
use crate::decode::{Decoder, Format};
use crate::metrics::{Metrics, TableLabels};
use crate::rows::{fit_rows, Columns, Decoded};
use crate::wal::{self, Frame, Fsync, Reject, Segment};

/// Records are decoded and logged at least this often (ms) while they arrive.
const CHUNK_MS: u64 = 50;
/// ... or when this many records wait.
const CHUNK_RECORDS: usize = 10_000;

/// One pipeline's settings (`varve ingest` options, or one `[[pipeline]]` of a config file).
#[derive(Debug, Clone)]
pub struct PipelineConfig {
    /// Kafka bootstrap servers, `HOST:PORT[,HOST:PORT...]`.
    pub brokers: String,
    pub topics: Vec<String>,
    /// The table, `ns.t` (created on the first good record when missing).
    pub table: String,
    /// The consumer group; default `varve-<table>`.
    pub group: Option<String>,
    pub format: Format,
    /// The field (JSON) or column (CSV) with each record's time. Default `time`.
    pub time_field: String,
    /// Unit of numeric times (JSON, CSV: default ms) and of line protocol timestamps (default ns).
    pub time_unit: Option<TimeUnit>,
    /// strftime format of text times; default RFC 3339 and `YYYY-MM-DD HH:MM:SS[.f]`.
    pub time_format: Option<String>,
    /// Zone of zone-less text times; default UTC.
    pub timezone: Option<String>,
    /// Store times with digits below a µs truncated instead of rejecting them.
    pub truncate_ns: bool,
    /// The series key of a table the pipeline creates (line protocol: default its tags).
    pub series_key: Vec<String>,
    /// CSV column names, in order.
    pub csv_columns: Vec<String>,
    /// Directory of the write-ahead log (one subdirectory per table).
    pub wal_dir: PathBuf,
    pub fsync: Fsync,
    /// How often the log is committed.
    pub commit_interval: Duration,
    /// A log segment is committed early when it holds this many bytes; with a commit in flight,
    /// reading pauses at this size.
    pub max_batch_bytes: u64,
    /// Reading pauses while the log holds more than this many bytes.
    pub wal_max_bytes: u64,
    /// Reading pauses while the file system of the log is fuller than this, in percent of its
    /// size (statvfs: blocks in use over blocks a non-root user may fill), until commits free it.
    pub disk_high_watermark: f64,
    /// Refuse records with fields the table does not have (into the rejects table).
    pub refuse_new_fields: bool,
    /// Extra librdkafka settings (`key=value`), e.g. `security.protocol=ssl`.
    pub kafka: Vec<(String, String)>,
}

impl PipelineConfig {
    /// The consumer group.
    pub fn group(&self) -> String {
        self.group.clone().unwrap_or_else(|| format!("varve-{}", self.table))
    }

    fn decoder(&self) -> Decoder {
        Decoder {
            format: self.format,
            time_field: self.time_field.clone(),
            line_unit: self.time_unit.unwrap_or(TimeUnit::Nanosecond),
            csv_columns: self.csv_columns.clone(),
        }
    }

    fn time_options(&self) -> TimeOptions {
        TimeOptions {
            timezone: self.timezone.clone(),
            format: self.time_format.clone(),
            unit: Some(self.time_unit.unwrap_or(TimeUnit::Millisecond)),
            origin: None,
            truncate_ns: self.truncate_ns,
        }
    }

    /// Checks the settings.
    ///
    /// Errors: [`ErrorKind::InvalidInput`] naming the option.
    pub fn validate(&self) -> varve::Result<()> {
        varve::TableIdent::parse(&self.table)?;
        if self.topics.is_empty() {
            return Err(varve::Error::invalid("give at least one --topic"));
        }
        if self.brokers.trim().is_empty() {
            return Err(varve::Error::invalid("--brokers is empty"));
        }
        if self.format == Format::Csv && self.csv_columns.is_empty() {
            return Err(varve::Error::invalid(
                "--format csv needs --csv-columns (the names of the values in each line, in order)",
            ));
        }
        if self.format == Format::Csv && !self.csv_columns.contains(&self.time_field) {
            return Err(varve::Error::invalid(format!(
                "--csv-columns does not name the time column {:?} (--time-field)",
                self.time_field
            )));
        }
        if !(self.disk_high_watermark > 0.0 && self.disk_high_watermark <= 100.0) {
            return Err(varve::Error::invalid(format!(
                "--disk-high-watermark {}: expected a percentage above 0 and at most 100",
                self.disk_high_watermark
            )));
        }
        if self.commit_interval < Duration::from_millis(10) {
            return Err(varve::Error::invalid("--commit-interval must be at least 10ms"));
        }
        Ok(())
    }

    fn wal_path(&self) -> PathBuf {
        self.wal_dir.join(&self.table)
    }
}

/// Shared with the consumer's rebalance callback: the offsets to start assigned partitions at,
/// and the channel that tells the loop about assignments.
struct Context {
    positions: Arc<Mutex<HashMap<String, i64>>>,
    events: mpsc::UnboundedSender<Vec<(String, i32)>>,
}

impl ClientContext for Context {}

impl ConsumerContext for Context {
    fn rebalance(&self, consumer: &BaseConsumer<Self>, err: RDKafkaRespErr, tpl: &mut TopicPartitionList) {
        match err {
            RDKafkaRespErr::RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS => {
                let positions = self.positions.lock().expect("positions lock").clone();
                let mut assigned = Vec::new();
                for e in tpl.elements() {
                    assigned.push((e.topic().to_string(), e.partition()));
                }
                for (t, p) in &assigned {
                    if let Some(&o) = positions.get(&wal::stream_name(t, *p)) {
                        let _ = tpl.set_partition_offset(t, *p, Offset::Offset(o));
                    }
                }
                if let Err(e) = consumer.assign(tpl) {
                    tracing::error!(error = %e, "assigning partitions failed");
                }
                tracing::info!(partitions = ?assigned, "partitions assigned");
                let _ = self.events.send(assigned);
            }
            RDKafkaRespErr::RD_KAFKA_RESP_ERR__REVOKE_PARTITIONS => {
                tracing::info!(partitions = tpl.count(), "partitions revoked");
                let _ = consumer.unassign();
            }
            other => {
                tracing::warn!(error = ?other, "rebalance error");
                let _ = consumer.unassign();
            }
        }
    }
}

/// The fill level of the log's file system, read at most once a second (one `statvfs`).
struct DiskWatch {
    dir: PathBuf,
    watermark: f64,
    /// Percent in use at the last reading.
    used: f64,
    read_at: Option<std::time::Instant>,
}

impl DiskWatch {
    fn new(dir: &std::path::Path, watermark: f64) -> DiskWatch {
        DiskWatch {
            dir: dir.to_path_buf(),
            watermark,
            used: 0.0,
            read_at: None,
        }
    }

    /// Whether the file system is fuller than the watermark. A file system that cannot be read
    /// counts as not full (the log's own writes report real errors).
    fn over(&mut self) -> bool {
        if self.read_at.is_none_or(|t| t.elapsed() >= Duration::from_secs(1)) {
            self.read_at = Some(std::time::Instant::now());
            if let Some(u) = used_percent(&self.dir) {
                self.used = u;
            }
        }
        self.used > self.watermark
    }
}

/// Percent of a file system in use, as `df` reports it: used blocks over used plus the blocks
/// available to unprivileged users (POSIX `statvfs`).
fn used_percent(dir: &std::path::Path) -> Option<f64> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
    // SAFETY: `c` is a NUL-terminated path and `st` a zeroed struct statvfs that the call fills.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return None;
    }
    let used = st.f_blocks.saturating_sub(st.f_bfree) as f64;
    let total = used + st.f_bavail as f64;
    (total > 0.0).then(|| 100.0 * used / total)
}

/// What a pipeline did, when it stops.
#[derive(Debug, Default, Clone, serde::Serialize)]
pub struct Summary {
    pub records: u64,
    pub rows: u64,
    pub rejected: u64,
    pub commits: u64,
    /// Log segments replayed at start.
    pub replayed_segments: u64,
}

/// A received record waiting to be decoded.
struct Pending {
    offset: i64,
    kafka_ms: i64,
    payload: Vec<u8>,
}

/// Locks the log directory for this process (a second ingestor on one log would corrupt it).
fn lock_dir(dir: &std::path::Path) -> varve::Result<std::fs::File> {
    let path = dir.join("LOCK");
    let f = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| varve::Error::invalid(format!("{}: {e}", path.display())))?;
    use std::os::fd::AsRawFd;
    // SAFETY: flock on a file descriptor this function owns; the lock ends with the file.
    let r = unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    if r != 0 {
        return Err(varve::Error::invalid(format!(
            "{}: another varve ingest uses this write-ahead log; give each ingestor its own --wal-dir",
            dir.display()
        )));
    }
    Ok(f)
}

fn io(dir: &std::path::Path, e: std::io::Error) -> varve::Error {
    varve::Error::new(ErrorKind::Storage, format!("write-ahead log {}: {e}", dir.display()))
}

/// Runs a pipeline until `stop` resolves (then commits what is logged and returns).
///
/// Errors: bad settings, a log directory that cannot be used, a Kafka client that cannot be
/// made, and commits that retrying cannot mend (see [`commit::commit_segment`]).
pub async fn run(
    lake: Lake,
    cfg: PipelineConfig,
    metrics: Arc<Metrics>,
    stop: impl std::future::Future<Output = ()>,
) -> varve::Result<Summary> {
    cfg.validate()?;
    let label = TableLabels {
        table: cfg.table.clone(),
    };
    let dir = cfg.wal_path();
    std::fs::create_dir_all(&dir).map_err(|e| io(&dir, e))?;
    let _lock = lock_dir(&dir)?;
    let creation = Creation {
        series_key: cfg.series_key.clone(),
    };
    let mut summary = Summary::default();

    // Replay what an earlier run logged and did not commit.
    for sealed in wal::read_all(&dir).map_err(|e| io(&dir, e))? {
        if sealed.torn {
            tracing::warn!(segment = %sealed.path.display(), "dropped a torn last frame (a crash mid-write); Kafka still has those records");
        }
        let n = sealed.frames.len();
        if n == 0 {
            std::fs::remove_file(&sealed.path).map_err(|e| io(&dir, e))?;
            continue;
        }
        let c = Box::pin(commit::commit_segment(
            &lake,
            &cfg.table,
            &creation,
            sealed.frames,
            &metrics,
        ))
        .await?;
        tracing::info!(segment = %sealed.path.display(), frames = n, rows = c.rows, "replayed a log segment");
        summary.rows += c.rows;
        summary.rejected += c.rejected;
        summary.replayed_segments += 1;
        std::fs::remove_file(&sealed.path).map_err(|e| io(&dir, e))?;
    }

    // The table's columns and offsets.
    let mut columns = match lake.describe(&cfg.table).await {
        Ok(d) => {
            let Some(time) = d.contract.time_column.clone() else {
                return Err(varve::Error::invalid(format!(
                    "table {} has no time column: ingestion writes to time-series tables",
                    cfg.table
                )));
            };
            Columns {
                required: cfg.series_key.clone(),
                ..Columns::of_table(&d.schema, &time, cfg.refuse_new_fields)
            }
        }
        Err(e) if e.kind() == ErrorKind::NotFound => Columns {
            time: cfg.time_field.clone(),
            types: vec![],
            refuse_new: cfg.refuse_new_fields,
            required: cfg.series_key.clone(),
        },
        Err(e) => return Err(e),
    };
    let stored = match lake.source_positions(&cfg.table, commit::SOURCE).await {
        Ok(p) => p,
        Err(e) if e.kind() == ErrorKind::NotFound => HashMap::new(),
        Err(e) => return Err(e),
    };
    let positions = Arc::new(Mutex::new(stored));

    let (events_tx, mut events) = mpsc::unbounded_channel();
    let mut client = ClientConfig::new();
    client
        .set("bootstrap.servers", &cfg.brokers)
        .set("group.id", cfg.group())
        .set("enable.auto.commit", "false")
        .set("enable.auto.offset.store", "false")
        .set("auto.offset.reset", "earliest")
        .set("session.timeout.ms", "6000")
        .set("partition.assignment.strategy", "range,roundrobin")
        .set("client.id", format!("varve-ingest-{}", std::process::id()));
    for (k, v) in &cfg.kafka {
        client.set(k, v);
    }
    let consumer: StreamConsumer<Context> = client
        .create_with_context(Context {
            positions: positions.clone(),
            events: events_tx,
        })
        .map_err(|e| varve::Error::invalid(format!("Kafka client: {e}")))?;
    let topics: Vec<&str> = cfg.topics.iter().map(String::as_str).collect();
    consumer
        .subscribe(&topics)
        .map_err(|e| varve::Error::invalid(format!("subscribing to {topics:?}: {e}")))?;
    let consumer = Arc::new(consumer);
    let lag = tokio::spawn(measure_lag(consumer.clone(), metrics.clone(), label.clone()));

    let decoder = cfg.decoder();
    let time = cfg.time_options();
    // Line protocol: the first record's tags are the series key of a table the pipeline creates.
    let mut first_tags: Option<Vec<String>> = None;
    let mut seq = wal::next_seq(&dir).map_err(|e| io(&dir, e))?;
    let mut open = Segment::create(&dir, seq, cfg.fsync).map_err(|e| io(&dir, e))?;
    seq += 1;
    // Next offset expected per partition (`topic/partition`).
    let mut next: HashMap<String, i64> = HashMap::new();
    let mut pending: HashMap<(String, i32), Vec<Pending>> = HashMap::new();
    let mut pending_n = 0usize;
    let mut inflight: Option<tokio::task::JoinHandle<(PathBuf, varve::Result<Committed>)>> = None;
    let mut sealed_bytes = 0u64;
    let mut commit_tick = tokio::time::interval(cfg.commit_interval);
    commit_tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut chunk_tick = tokio::time::interval(Duration::from_millis(CHUNK_MS));
    chunk_tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut paused = false;
    let mut stop = std::pin::pin!(stop);
    let mut stopping = false;
    let mut tick_due = false;
    // On stop, a commit that keeps failing (storage down) is given this long; its segment stays
    // in the log and is committed at the next start.
    let mut give_up = std::pin::pin!(tokio::time::sleep(Duration::from_secs(3600 * 24 * 365)));

    let mut disk = DiskWatch::new(&dir, cfg.disk_high_watermark);

    loop {
        let full =
            inflight.is_some() && (open.bytes >= cfg.max_batch_bytes || open.bytes + sealed_bytes >= cfg.wal_max_bytes);
        let disk_full = disk.over();
        if (full || disk_full) && !paused {
            paused = true;
            metrics.pauses.get_or_create(&label).inc();
            if disk_full {
                tracing::warn!(table = %cfg.table, used = %format!("{:.1}%", disk.used), watermark = %format!("{}%", cfg.disk_high_watermark),
                    "reading paused: the file system of the write-ahead log is over --disk-high-watermark; reading resumes when commits (or others) free space");
            } else {
                tracing::debug!(table = %cfg.table, "reading paused: the log is full until the commit in flight lands");
            }
        }
        if !full && !disk_full {
            paused = false;
        }
        metrics
            .wal_bytes
            .get_or_create(&label)
            .set((open.bytes + sealed_bytes) as i64);
        metrics
            .wal_segments
            .get_or_create(&label)
            .set(1 + inflight.is_some() as i64);
        tokio::select! {
            biased;
            _ = &mut stop, if !stopping => {
                stopping = true;
                give_up.as_mut().reset(tokio::time::Instant::now() + Duration::from_secs(30));
            }
            _ = &mut give_up, if stopping && inflight.is_some() => {
                tracing::warn!(table = %cfg.table, "stopping with a commit still failing after 30 s: its records stay in the write-ahead log and are committed at the next start");
                if let Some(t) = inflight.take() {
                    t.abort();
                }
                break;
            }
            done = async { inflight.as_mut().expect("checked").await }, if inflight.is_some() => {
                inflight = None;
                sealed_bytes = 0;
                let (path, result) = done.map_err(|e| varve::Error::new(ErrorKind::Internal, e.to_string()))?;
                let c = result?;
                std::fs::remove_file(&path).map_err(|e| io(&dir, e))?;
                summary.rows += c.rows;
                summary.rejected += c.rejected;
                summary.commits += 1;
                after_commit(&c, &consumer, &positions, &mut next, &mut open, &mut pending, &dir)?;
                pending_n = pending.values().map(Vec::len).sum();
                refresh_columns(&c, &mut columns);
            }
            assigned = events.recv() => {
                // Newly assigned partitions start at the table's offsets (set in the rebalance
                // callback); forget what this process expected of them before.
                if let Some(assigned) = assigned {
                    let known = positions.lock().expect("positions lock").clone();
                    for (t, p) in assigned {
                        let s = wal::stream_name(&t, p);
                        let logged = open.frames.iter().any(|f| f.stream() == s);
                        if !logged {
                            match known.get(&s) {
                                Some(&o) => { next.insert(s, o); }
                                None => { next.remove(&s); }
                            }
                        }
                    }
                }
            }
            _ = commit_tick.tick() => { tick_due = true; }
            _ = chunk_tick.tick() => {}
            m = consumer.recv(), if !paused && !stopping => {
                match m {
                    Ok(m) => {
                        let payload = m.payload().unwrap_or_default().to_vec();
                        metrics.records.get_or_create(&label).inc();
                        metrics.bytes.get_or_create(&label).inc_by(payload.len() as u64);
                        summary.records += 1;
                        pending.entry((m.topic().to_string(), m.partition())).or_default().push(Pending {
                            offset: m.offset(),
                            kafka_ms: m.timestamp().to_millis().unwrap_or_else(|| chrono::Utc::now().timestamp_millis()),
                            payload,
                        });
                        pending_n += 1;
                        if pending_n < CHUNK_RECORDS {
                            continue;
                        }
                    }
                    Err(e) => {
                        tracing::warn!(error = %e, "Kafka");
                        continue;
                    }
                }
            }
        }
        // Decode, fit and log what arrived.
        if pending_n > 0 {
            let frames = chunk(&mut pending, &mut next, &decoder, &mut columns, &time, &mut first_tags);
            pending_n = 0;
            open.append(frames).map_err(|e| io(&dir, e))?;
        }
        // Commit the open segment when due.
        let due = tick_due || open.bytes >= cfg.max_batch_bytes || stopping;
        if due && inflight.is_none() && !open.frames.is_empty() {
            tick_due = false;
            let mut sealed = Segment::create(&dir, seq, cfg.fsync).map_err(|e| io(&dir, e))?;
            seq += 1;
            std::mem::swap(&mut sealed, &mut open);
            sealed_bytes = sealed.bytes;
            let lake = lake.clone();
            let table = cfg.table.clone();
            let mut creation = creation.clone();
            if creation.series_key.is_empty() {
                creation.series_key = first_tags.clone().unwrap_or_default();
            }
            let metrics = metrics.clone();
            let path = sealed.path.clone();
            let frames = std::mem::take(&mut sealed.frames);
            inflight = Some(tokio::spawn(async move {
                let r = Box::pin(commit::commit_segment(&lake, &table, &creation, frames, &metrics)).await;
                (path, r)
            }));
        }
        if stopping && inflight.is_none() && open.frames.is_empty() && pending_n == 0 {
            let _ = std::fs::remove_file(&open.path);
            break;
        }
    }
    lag.abort();
    Ok(summary)
}

/// Every 5 s: records in the assigned partitions past the consumer's position (the partitions'
/// high watermarks minus the positions), as `varve_ingest_consumer_lag_records`.
async fn measure_lag(consumer: Arc<StreamConsumer<Context>>, metrics: Arc<Metrics>, label: TableLabels) {
    loop {
        tokio::time::sleep(Duration::from_secs(5)).await;
        let c = consumer.clone();
        let lag = tokio::task::spawn_blocking(move || {
            let positions = c.position().ok()?;
            let mut lag = 0i64;
            for e in positions.elements() {
                let Offset::Offset(pos) = e.offset() else { continue };
                let (_, high) = c
                    .fetch_watermarks(e.topic(), e.partition(), Duration::from_secs(2))
                    .ok()?;
                lag += (high - pos).max(0);
            }
            Some(lag)
        })
        .await;
        if let Ok(Some(lag)) = lag {
            metrics.lag.get_or_create(&label).set(lag);
        }
    }
}

/// After a commit: the columns follow the table's schema (another writer may have added a
/// column first, with its own type); columns only this process has seen stay.
fn refresh_columns(c: &Committed, columns: &mut Columns) {
    let Some(schema) = &c.schema else { return };
    let table = Columns::of_table(schema, &columns.time, columns.refuse_new);
    let mut types = table.types;
    for (n, t) in &columns.types {
        if !types.iter().any(|(m, _)| m == n) {
            types.push((n.clone(), t.clone()));
        }
    }
    columns.types = types;
}

/// Decodes and fits the pending records into one frame per partition.
fn chunk(
    pending: &mut HashMap<(String, i32), Vec<Pending>>,
    next: &mut HashMap<String, i64>,
    decoder: &Decoder,
    columns: &mut Columns,
    time: &TimeOptions,
    first_tags: &mut Option<Vec<String>>,
) -> Vec<Frame> {
    let mut frames = Vec::new();
    for ((topic, partition), records) in pending.drain() {
        let stream = wal::stream_name(&topic, partition);
        let expected = next.get(&stream).copied();
        // Records below the expected offset are in the table or the log already.
        let records: Vec<Pending> = records
            .into_iter()
            .filter(|r| expected.is_none_or(|e| r.offset >= e))
            .collect();
        let Some(last) = records.last() else { continue };
        let from = expected.unwrap_or(records[0].offset);
        let to = last.offset + 1;
        let mut decoded = Vec::with_capacity(records.len());
        let mut rejects = Vec::new();
        for r in &records {
            match decoder.decode(&r.payload, r.kafka_ms) {
                Ok(rows) => {
                    if first_tags.is_none() {
                        *first_tags = rows.first().map(|r| r.tags.clone());
                    }
                    decoded.push(Decoded { offset: r.offset, rows })
                }
                Err(e) => rejects.push(Reject {
                    offset: r.offset,
                    kafka_ms: r.kafka_ms,
                    payload: r.payload.clone(),
                    error: e,
                }),
            }
        }
        let fitted = fit_rows(&decoded, columns, time);
        for (offset, error) in fitted.rejected {
            let r = records.iter().find(|r| r.offset == offset).expect("a pending record");
            rejects.push(Reject {
                offset,
                kafka_ms: r.kafka_ms,
                payload: r.payload.clone(),
                error,
            });
        }
        rejects.sort_by_key(|r| r.offset);
        next.insert(stream, to);
        frames.push(Frame {
            topic,
            partition,
            from,
            to,
            rows: fitted.batch,
            row_offsets: fitted.offsets,
            rejects,
            kafka_ms: records.iter().map(|r| r.kafka_ms).collect(),
        });
    }
    frames
}

/// After a commit: the offsets it left become the group's committed offsets and the start of
/// partitions assigned later; partitions another writer moved on are resumed from the table.
fn after_commit(
    c: &Committed,
    consumer: &StreamConsumer<Context>,
    positions: &Mutex<HashMap<String, i64>>,
    next: &mut HashMap<String, i64>,
    open: &mut Segment,
    pending: &mut HashMap<(String, i32), Vec<Pending>>,
    dir: &std::path::Path,
) -> varve::Result<()> {
    positions.lock().expect("positions lock").extend(c.positions.clone());
    let assignment = consumer.assignment().unwrap_or_default();
    let mut group = TopicPartitionList::new();
    for e in assignment.elements() {
        if let Some(&o) = c.positions.get(&wal::stream_name(e.topic(), e.partition())) {
            let _ = group.add_partition_offset(e.topic(), e.partition(), Offset::Offset(o));
        }
    }
    if group.count() > 0 {
        if let Err(e) = consumer.commit(&group, CommitMode::Async) {
            tracing::debug!(error = %e, "committing group offsets (they follow the table; the table is what counts)");
        }
    }
    for (stream, stored) in &c.conflicts {
        let Some((topic, partition)) = stream.rsplit_once('/') else {
            continue;
        };
        let Ok(partition) = partition.parse::<i32>() else {
            continue;
        };
        tracing::info!(
            stream,
            stored,
            "another ingestor committed this partition; resuming it from the table"
        );
        open.discard(topic, partition).map_err(|e| io(dir, e))?;
        // Records received but not logged yet continue the dropped frames: they go too (the
        // seek below reads them again).
        pending.remove(&(topic.to_string(), partition));
        let ahead = next.get(stream).is_some_and(|&n| n > *stored);
        next.insert(stream.clone(), *stored);
        if ahead {
            let owned = assignment
                .elements()
                .iter()
                .any(|e| e.topic() == topic && e.partition() == partition);
            if owned {
                // Without the seek this consumer would never read the records from the table's
                // offset to where it is: stop rather than leave a gap (a restart resumes every
                // partition from the table).
                let mut tries = 0;
                while let Err(e) = consumer.seek(topic, partition, Offset::Offset(*stored), Duration::from_secs(5)) {
                    tries += 1;
                    if tries == 5 {
                        return Err(varve::Error::new(
                            ErrorKind::Internal,
                            format!("{stream}: seeking back to the table's offset {stored} failed ({e}); restart to resume from the table"),
                        ));
                    }
                    std::thread::sleep(Duration::from_millis(200));
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn disk_use_is_a_percentage() {
        let dir = tempfile::tempdir().unwrap();
        let u = used_percent(dir.path()).unwrap();
        assert!((0.0..=100.0).contains(&u), "{u}");
        assert_eq!(used_percent(&dir.path().join("missing")), None);
        let mut w = DiskWatch::new(dir.path(), 1e-9);
        assert!(w.over() || u == 0.0);
    }
}
