//! The server's Prometheus metrics, served at `GET /metrics` in the OpenMetrics text format:
//! queries by protocol and outcome with their latency, errors by kind, rows and bytes sent, data
//! files scanned and pruned, the lake's block cache, queries in flight and queued, writes, HTTP
//! requests by route and status, PostgreSQL connections.

use std::sync::Mutex;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::Registry;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct RequestLabels {
    pub(crate) route: String,
    pub(crate) status: u16,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct QueryLabels {
    /// `http` or `pg`.
    pub(crate) protocol: String,
    /// `ok` or `error`.
    pub(crate) outcome: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct ErrorLabels {
    pub(crate) protocol: String,
    /// Varve's error kind code (`invalid_input`, `not_found`, `timeout`, ...).
    pub(crate) kind: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct CacheLabels {
    /// `memory_hit`, `disk_hit` or `miss`.
    pub(crate) result: String,
}

fn latency() -> Histogram {
    // 1 ms to about 65 s.
    Histogram::new(exponential_buckets(0.001, 2.0, 17))
}

#[derive(Debug)]
pub(crate) struct Metrics {
    registry: Registry,
    pub(crate) requests: Family<RequestLabels, Counter>,
    queries: Family<QueryLabels, Histogram>,
    errors: Family<ErrorLabels, Counter>,
    pub(crate) rows_sent: Counter,
    pub(crate) bytes_sent: Counter,
    pub(crate) in_flight: Gauge,
    pub(crate) queued: Gauge,
    files_scanned: Counter,
    files_pruned: Counter,
    cache: Family<CacheLabels, Counter>,
    storage_bytes: Counter,
    /// The lake's cache statistics at the last scrape, to count what came since.
    cache_seen: Mutex<varve::CacheStats>,
    pub(crate) rows_written: Counter,
    pub(crate) write_seconds: Histogram,
    pub(crate) pg_connections: Gauge,
}

impl Metrics {
    pub(crate) fn new() -> Metrics {
        let mut r = Registry::with_prefix("varve");
        let m = Metrics {
            registry: Registry::default(),
            requests: Family::default(),
            queries: Family::new_with_constructor(latency),
            errors: Family::default(),
            rows_sent: Counter::default(),
            bytes_sent: Counter::default(),
            in_flight: Gauge::default(),
            queued: Gauge::default(),
            files_scanned: Counter::default(),
            files_pruned: Counter::default(),
            cache: Family::default(),
            storage_bytes: Counter::default(),
            cache_seen: Mutex::new(varve::CacheStats::default()),
            rows_written: Counter::default(),
            write_seconds: latency(),
            pg_connections: Gauge::default(),
        };
        r.register("http_requests", "HTTP requests by route and status", m.requests.clone());
        r.register(
            "query_duration_seconds",
            "Time from a statement's arrival to its last row, seconds, by protocol (http, pg) and outcome (ok, error)",
            m.queries.clone(),
        );
        r.register(
            "errors",
            "Statements and writes that failed, by protocol and error kind",
            m.errors.clone(),
        );
        r.register("result_rows", "Result rows sent", m.rows_sent.clone());
        r.register("result_bytes", "Result body bytes sent (HTTP)", m.bytes_sent.clone());
        r.register(
            "queries_in_flight",
            "Statements and writes running",
            m.in_flight.clone(),
        );
        r.register(
            "queries_queued",
            "Statements and writes waiting for one of the max-in-flight slots",
            m.queued.clone(),
        );
        r.register(
            "data_files_scanned",
            "Data files queries read (after pruning)",
            m.files_scanned.clone(),
        );
        r.register(
            "data_files_pruned",
            "Data files queries skipped by partition and column bounds",
            m.files_pruned.clone(),
        );
        r.register(
            "cache_blocks",
            "Blocks of data files the lake's block cache served from memory or disk, or fetched (object storage)",
            m.cache.clone(),
        );
        r.register(
            "storage_read_bytes",
            "Bytes fetched from object storage through the block cache",
            m.storage_bytes.clone(),
        );
        r.register(
            "written_rows",
            "Rows written (line protocol, bodies, COPY, INSERT over PostgreSQL excluded)",
            m.rows_written.clone(),
        );
        r.register(
            "write_duration_seconds",
            "Time to append a write's rows and commit, seconds",
            m.write_seconds.clone(),
        );
        r.register(
            "pg_connections",
            "Open PostgreSQL connections",
            m.pg_connections.clone(),
        );
        Metrics { registry: r, ..m }
    }

    /// Counts a finished statement of `protocol` that took `seconds`; `error` is its error kind
    /// code when it failed.
    pub(crate) fn query(&self, protocol: &str, seconds: f64, error: Option<&str>) {
        self.queries
            .get_or_create(&QueryLabels {
                protocol: protocol.to_string(),
                outcome: if error.is_some() { "error" } else { "ok" }.to_string(),
            })
            .observe(seconds);
        if let Some(kind) = error {
            self.error(protocol, kind);
        }
    }

    /// Counts a failed statement or write.
    pub(crate) fn error(&self, protocol: &str, kind: &str) {
        self.errors
            .get_or_create(&ErrorLabels {
                protocol: protocol.to_string(),
                kind: kind.to_string(),
            })
            .inc();
    }

    /// Counts the data files a statement read (`read`) of those its snapshots held (`total`).
    pub(crate) fn scanned(&self, read: u64, total: u64) {
        self.files_scanned.inc_by(read);
        self.files_pruned.inc_by(total.saturating_sub(read));
    }

    /// Counts a committed write of `rows` that took `seconds`.
    pub(crate) fn write(&self, rows: u64, seconds: f64) {
        self.rows_written.inc_by(rows);
        self.write_seconds.observe(seconds);
    }

    /// Counts a finished request.
    pub(crate) fn request(&self, route: &str, status: u16) {
        self.requests
            .get_or_create(&RequestLabels {
                route: route.to_string(),
                status,
            })
            .inc();
    }

    /// The OpenMetrics text of every metric, the cache's counted up to `cache` (the lake's
    /// statistics now).
    pub(crate) fn encode(&self, cache: varve::CacheStats) -> String {
        if let Ok(mut seen) = self.cache_seen.lock() {
            let d = cache.since(&seen);
            for (result, n) in [
                ("memory_hit", d.memory_hits),
                ("disk_hit", d.disk_hits),
                ("miss", d.misses),
            ] {
                self.cache
                    .get_or_create(&CacheLabels {
                        result: result.to_string(),
                    })
                    .inc_by(n);
            }
            self.storage_bytes.inc_by(d.fetched_bytes);
            *seen = cache;
        }
        let mut out = String::new();
        if prometheus_client::encoding::text::encode(&mut out, &self.registry).is_err() {
            out.clear();
        }
        out
    }
}
