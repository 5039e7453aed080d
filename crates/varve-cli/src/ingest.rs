//! `varve ingest`: Kafka topics into tables (`varve-ingest`), until SIGINT or SIGTERM.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use varve::Lake;
use varve_ingest::config::{IngestFile, PipelineFile};
use varve_ingest::decode::Format;
use varve_ingest::metrics::{Metrics, TableLabels};
use varve_ingest::wal::Fsync;

#[derive(Debug, Args)]
pub(crate) struct IngestArgs {
    /// A TOML file with one `[[pipeline]]` per table (keys as the options below, kebab-case), a
    /// `[defaults]` table for all of them, the lake (`lake`, `[storage]`) and `metrics`; options
    /// on the command line apply to every pipeline and win (docs/ingest.md).
    #[arg(long, value_name = "FILE")]
    pub(crate) config: Option<PathBuf>,
    /// Kafka bootstrap servers.
    #[arg(long, value_name = "HOST:PORT[,HOST:PORT]")]
    brokers: Option<String>,
    /// A topic to read (repeat for several).
    #[arg(long = "topic", value_name = "TOPIC")]
    topics: Vec<String>,
    /// The table to write, created on the first good record when missing (with the time column
    /// named by --time-field and the series key of --series-key).
    #[arg(long, value_name = "NS.TABLE")]
    table: Option<String>,
    /// Consumer group: ingestors with the same group share the topics' partitions. [default:
    /// varve-<table>]
    #[arg(long, value_name = "GROUP")]
    group: Option<String>,
    /// Payload format: one JSON object per record, InfluxDB line protocol, or CSV lines (with
    /// --csv-columns). [default: json]
    #[arg(long, value_enum)]
    format: Option<Format>,
    /// The JSON field or CSV column with each record's time; it becomes the table's time column.
    /// [default: time]
    #[arg(long, value_name = "FIELD")]
    time_field: Option<String>,
    /// Unit of numeric times (JSON, CSV; default ms) or of line protocol timestamps (default ns).
    #[arg(long, value_name = "s|ms|us|ns")]
    time_unit: Option<String>,
    /// strftime format of text times (e.g. `%d/%m/%Y %H:%M:%S`). [default: RFC 3339 and
    /// YYYY-MM-DD HH:MM:SS[.f]]
    #[arg(long, value_name = "FMT")]
    time_format: Option<String>,
    /// Zone of text times without one: an IANA name or an offset. [default: UTC]
    #[arg(long, value_name = "TZ")]
    timezone: Option<String>,
    /// Store times with digits below a microsecond truncated (counted) instead of rejecting them.
    #[arg(long)]
    truncate_ns: bool,
    /// Series key of a table this creates (comma-separated or repeated). [default: none; line
    /// protocol: the first record's tags]
    #[arg(long, value_name = "COLUMNS", value_delimiter = ',')]
    series_key: Vec<String>,
    /// CSV: the names of the values of each line, in order (one must be --time-field).
    #[arg(long, value_name = "NAMES", value_delimiter = ',')]
    csv_columns: Vec<String>,
    /// Directory of the write-ahead log (one subdirectory per table; give each ingestor process
    /// its own). [default: ./varve-wal]
    #[arg(long, value_name = "DIR")]
    wal_dir: Option<PathBuf>,
    /// When logged records reach the disk: after each batch (a machine crash loses nothing), or
    /// left to the OS. [default: batch]
    #[arg(long, value_enum)]
    fsync: Option<Fsync>,
    /// How often logged records are committed to the table (rows are visible to queries after
    /// their commit). [default: 1s]
    #[arg(long, value_name = "DURATION")]
    commit_interval: Option<String>,
    /// Commit early when the log segment holds this much; with a commit in flight, reading
    /// pauses at this size. [default: 64MiB]
    #[arg(long, value_name = "BYTES")]
    max_batch_bytes: Option<String>,
    /// Pause reading while the write-ahead log holds more than this. [default: 1GiB]
    #[arg(long, value_name = "BYTES")]
    wal_max_bytes: Option<String>,
    /// Pause reading while the file system of the write-ahead log is fuller than this (percent
    /// of its size) until commits free space. [default: 95%]
    #[arg(long, value_name = "PERCENT")]
    disk_high_watermark: Option<String>,
    /// Refuse records with fields the table does not have (into the rejects table) instead of
    /// adding columns.
    #[arg(long)]
    refuse_new_fields: bool,
    /// A librdkafka setting, KEY=VALUE (repeat), e.g. -X security.protocol=ssl.
    #[arg(short = 'X', long = "kafka", value_name = "KEY=VALUE")]
    kafka: Vec<String>,
    /// Serve Prometheus metrics at http://ADDR/metrics (freshness, lag, log size, commits).
    #[arg(long, value_name = "ADDR:PORT")]
    metrics: Option<String>,
}

/// The options given on the command line, as pipeline keys.
fn from_args(a: &IngestArgs) -> varve::Result<PipelineFile> {
    let mut kafka = std::collections::HashMap::new();
    for kv in &a.kafka {
        let (k, v) = kv
            .split_once('=')
            .ok_or_else(|| varve::Error::invalid(format!("-X {kv}: expected KEY=VALUE")))?;
        kafka.insert(k.trim().to_string(), v.to_string());
    }
    let list = |v: &Vec<String>| (!v.is_empty()).then(|| v.clone());
    Ok(PipelineFile {
        table: a.table.clone(),
        brokers: a.brokers.clone(),
        topics: list(&a.topics),
        group: a.group.clone(),
        format: a.format,
        time_field: a.time_field.clone(),
        time_unit: a.time_unit.clone(),
        time_format: a.time_format.clone(),
        timezone: a.timezone.clone(),
        truncate_ns: a.truncate_ns.then_some(true),
        series_key: list(&a.series_key),
        csv_columns: list(&a.csv_columns),
        wal_dir: a.wal_dir.clone(),
        fsync: a.fsync,
        commit_interval: a.commit_interval.clone(),
        max_batch_bytes: a.max_batch_bytes.clone(),
        wal_max_bytes: a.wal_max_bytes.clone(),
        disk_high_watermark: a.disk_high_watermark.clone(),
        refuse_new_fields: a.refuse_new_fields.then_some(true),
        kafka,
    })
}

pub(crate) async fn run(lake: Lake, args: IngestArgs, file: IngestFile) -> varve::Result<()> {
    let cli = from_args(&args)?;
    let pipelines = match args.config.is_some() {
        true => {
            if cli.table.is_some() || cli.topics.is_some() {
                return Err(varve::Error::invalid(
                    "with --config the pipelines (tables and topics) come from the file; drop --table and --topic",
                ));
            }
            if file.pipeline.is_empty() {
                return Err(varve::Error::invalid("--config names no [[pipeline]]"));
            }
            file.pipeline
                .into_iter()
                .map(|p| cli.clone().or(&p.or(&file.defaults)).build())
                .collect::<varve::Result<Vec<_>>>()?
        }
        false => {
            if cli.table.is_none() {
                return Err(varve::Error::invalid("give --table NS.TABLE (or --config FILE)"));
            }
            vec![cli.build()?]
        }
    };
    let mut tables: Vec<&str> = pipelines.iter().map(|p| p.table.as_str()).collect();
    tables.sort();
    if tables.windows(2).any(|w| w[0] == w[1]) {
        return Err(varve::Error::invalid(
            "two pipelines write one table; give each table one pipeline",
        ));
    }
    let metrics = Metrics::new();
    if let Some(addr) = args.metrics.or(file.metrics) {
        let a: SocketAddr = addr
            .parse()
            .map_err(|e| varve::Error::invalid(format!("--metrics {addr}: {e} (use ADDR:PORT)")))?;
        let bound = varve_ingest::metrics::serve(a, metrics.clone())
            .await
            .map_err(|e| varve::Error::invalid(format!("--metrics {addr}: {e}")))?;
        eprintln!("varve ingest: metrics on http://{bound}/metrics");
    }
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let mut tasks = Vec::new();
    for p in pipelines {
        eprintln!(
            "varve ingest: {} <- {} on {} (group {}, {:?}, commit every {:?}, log in {})",
            p.table,
            p.topics.join(","),
            p.brokers,
            p.group(),
            p.format,
            p.commit_interval,
            p.wal_dir.join(&p.table).display()
        );
        let lake = lake.clone();
        let metrics = metrics.clone();
        let mut rx = stop_rx.clone();
        let table = p.table.clone();
        tasks.push((
            table,
            tokio::spawn(async move {
                let stop = async move {
                    let _ = rx.wait_for(|s| *s).await;
                };
                Box::pin(varve_ingest::run(lake, p, metrics, stop)).await
            }),
        ));
    }
    // Progress every 10 s while records arrive.
    let status = {
        let metrics = metrics.clone();
        let tables: Vec<String> = tasks.iter().map(|(t, _)| t.clone()).collect();
        tokio::spawn(async move {
            let mut last = vec![0u64; tables.len()];
            loop {
                tokio::time::sleep(Duration::from_secs(10)).await;
                for (i, t) in tables.iter().enumerate() {
                    let l = TableLabels { table: t.clone() };
                    let records = metrics.records.get_or_create(&l).get();
                    if records != last[i] {
                        eprintln!(
                            "varve ingest: {t}: {records} records read, {} rows committed, {} rejected",
                            metrics.rows.get_or_create(&l).get(),
                            metrics.rejected.get_or_create(&l).get()
                        );
                        last[i] = records;
                    }
                }
            }
        })
    };
    let signal = tokio::spawn(async move {
        crate::serve::shutdown_signal().await;
        eprintln!("varve ingest: stopping: committing what is logged");
        let _ = stop_tx.send(true);
    });
    let mut failed = None;
    for (table, t) in tasks {
        match t.await {
            Ok(Ok(s)) => eprintln!(
                "varve ingest: {table}: stopped: {} records read, {} rows committed in {} commits, {} rejected",
                s.records, s.rows, s.commits, s.rejected
            ),
            Ok(Err(e)) => {
                eprintln!("varve ingest: {table}: {e}");
                failed.get_or_insert(e);
            }
            Err(e) => {
                failed.get_or_insert(varve::Error::internal(e.to_string()));
            }
        }
    }
    status.abort();
    signal.abort();
    match failed {
        Some(e) => Err(e),
        None => Ok(()),
    }
}
