//! The ingestor's Prometheus metrics (OpenMetrics text at `GET /metrics` on `--metrics`), named
//! as the server's are (`varve_` prefix, seconds and bytes as units), labelled by table:
//! freshness (commit visible time minus each record's Kafka timestamp), commit latency, records
//! and bytes in, rejects, commits by outcome, write-ahead log bytes and segments, consumer lag,
//! and pauses (backpressure and storage back-off).

use std::net::SocketAddr;
use std::sync::Arc;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct TableLabels {
    pub table: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct CommitLabels {
    pub table: String,
    /// `committed`, `duplicate` (a replay of a landed commit), `conflict` (another writer owned
    /// some offsets) or `error` (storage; retried).
    pub outcome: String,
}

/// Freshness buckets (s): 50 ms steps up to 2 s (the target is a p95 under 2 s, so quantiles
/// read from the histogram are exact to 50 ms there), then coarser up to an hour.
fn freshness() -> Histogram {
    let fine = (1..=40).map(|i| i as f64 / 20.0);
    let coarse = [
        2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0, 15.0, 20.0, 30.0, 60.0, 120.0, 300.0, 600.0, 3600.0,
    ];
    Histogram::new(fine.chain(coarse))
}

fn commit_latency() -> Histogram {
    Histogram::new(prometheus_client::metrics::histogram::exponential_buckets(
        0.005, 2.0, 14,
    ))
}

/// All metrics of one ingestor process.
#[derive(Debug)]
pub struct Metrics {
    registry: Registry,
    pub freshness: Family<TableLabels, Histogram>,
    pub commit_seconds: Family<TableLabels, Histogram>,
    pub commits: Family<CommitLabels, Counter>,
    pub records: Family<TableLabels, Counter>,
    pub bytes: Family<TableLabels, Counter>,
    pub rows: Family<TableLabels, Counter>,
    pub rejected: Family<TableLabels, Counter>,
    pub pauses: Family<TableLabels, Counter>,
    pub wal_bytes: Family<TableLabels, Gauge>,
    pub wal_segments: Family<TableLabels, Gauge>,
    pub lag: Family<TableLabels, Gauge>,
}

impl Metrics {
    pub fn new() -> Arc<Metrics> {
        let mut r = Registry::with_prefix("varve_ingest");
        let m = Metrics {
            registry: Registry::default(),
            freshness: Family::new_with_constructor(freshness),
            commit_seconds: Family::new_with_constructor(commit_latency),
            commits: Family::default(),
            records: Family::default(),
            bytes: Family::default(),
            rows: Family::default(),
            rejected: Family::default(),
            pauses: Family::default(),
            wal_bytes: Family::default(),
            wal_segments: Family::default(),
            lag: Family::default(),
        };
        r.register(
            "freshness_seconds",
            "Commit visible time minus the record's Kafka timestamp",
            m.freshness.clone(),
        );
        r.register(
            "commit_duration_seconds",
            "Time to commit one write-ahead log segment",
            m.commit_seconds.clone(),
        );
        r.register("commits", "Segment commits by outcome", m.commits.clone());
        r.register("records", "Kafka records read", m.records.clone());
        r.register("bytes", "Kafka payload bytes read", m.bytes.clone());
        r.register("rows", "Rows committed to the table", m.rows.clone());
        r.register("rejected", "Records refused into the rejects table", m.rejected.clone());
        r.register(
            "pauses",
            "Times consumption paused (log full, or storage failing)",
            m.pauses.clone(),
        );
        r.register(
            "wal_bytes",
            "Bytes in write-ahead log segments not yet committed",
            m.wal_bytes.clone(),
        );
        r.register(
            "wal_segments",
            "Write-ahead log segments not yet deleted",
            m.wal_segments.clone(),
        );
        r.register(
            "consumer_lag_records",
            "Records in assigned partitions past the ingestor's position",
            m.lag.clone(),
        );
        let mut m = m;
        m.registry = r;
        Arc::new(m)
    }

    /// The OpenMetrics text.
    pub fn encode(&self) -> String {
        let mut s = String::new();
        prometheus_client::encoding::text::encode(&mut s, &self.registry).expect("writing to a String");
        s
    }
}

/// Serves `GET /metrics` on `addr` until the process ends.
///
/// Errors: the address cannot be bound.
pub async fn serve(addr: SocketAddr, metrics: Arc<Metrics>) -> std::io::Result<SocketAddr> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let bound = listener.local_addr()?;
    let app = axum::Router::new().route(
        "/metrics",
        axum::routing::get(move || {
            let m = metrics.clone();
            async move {
                (
                    [(
                        "content-type",
                        "application/openmetrics-text; version=1.0.0; charset=utf-8",
                    )],
                    m.encode(),
                )
            }
        }),
    );
    tokio::spawn(async move {
        if let Err(e) = axum::serve(listener, app).await {
            tracing::error!(error = %e, "metrics endpoint stopped");
        }
    });
    Ok(bound)
}
