//! The server's Prometheus metrics, served at `GET /metrics` in the OpenMetrics text format:
//! requests by route and status, query latency, rows and bytes sent, and requests in flight.

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::Registry;

/// Labels of a request counter.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct RequestLabels {
    pub(crate) route: String,
    pub(crate) status: u16,
}

/// Every metric of one server.
#[derive(Debug)]
pub(crate) struct Metrics {
    registry: Registry,
    pub(crate) requests: Family<RequestLabels, Counter>,
    pub(crate) query_seconds: Histogram,
    pub(crate) rows_sent: Counter,
    pub(crate) bytes_sent: Counter,
    pub(crate) in_flight: Gauge,
    pub(crate) rows_written: Counter,
    pub(crate) write_seconds: Histogram,
    pub(crate) pg_statements: Family<OutcomeLabels, Counter>,
    pub(crate) pg_connections: Gauge,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct OutcomeLabels {
    pub(crate) outcome: String,
}

impl Metrics {
    pub(crate) fn new() -> Metrics {
        let mut registry = Registry::with_prefix("varve");
        let requests = Family::<RequestLabels, Counter>::default();
        // 1 ms to about 65 s.
        let query_seconds = Histogram::new(exponential_buckets(0.001, 2.0, 17));
        let (rows_sent, bytes_sent, in_flight) = (Counter::default(), Counter::default(), Gauge::default());
        registry.register("http_requests", "HTTP requests by route and status", requests.clone());
        registry.register(
            "query_duration_seconds",
            "Time from a SQL request to its last byte, seconds",
            query_seconds.clone(),
        );
        registry.register("result_rows", "Result rows sent", rows_sent.clone());
        registry.register("result_bytes", "Result body bytes sent", bytes_sent.clone());
        registry.register("requests_in_flight", "Requests being served", in_flight.clone());
        let (rows_written, write_seconds) = (Counter::default(), Histogram::new(exponential_buckets(0.001, 2.0, 17)));
        registry.register(
            "written_rows",
            "Rows written through /v1/write and /api/v2/write",
            rows_written.clone(),
        );
        registry.register(
            "write_duration_seconds",
            "Time to append a write's rows and commit, seconds",
            write_seconds.clone(),
        );
        let pg_statements = Family::<OutcomeLabels, Counter>::default();
        registry.register(
            "pg_statements",
            "Statements run over the PostgreSQL protocol, by outcome (ok, error)",
            pg_statements.clone(),
        );
        let pg_connections = Gauge::default();
        registry.register("pg_connections", "Open PostgreSQL connections", pg_connections.clone());
        Metrics {
            registry,
            pg_statements,
            pg_connections,
            requests,
            query_seconds,
            rows_sent,
            bytes_sent,
            in_flight,
            rows_written,
            write_seconds,
        }
    }

    /// Counts a committed write of `rows` that took `seconds`.
    pub(crate) fn pg_statement(&self, outcome: &str) {
        self.pg_statements
            .get_or_create(&OutcomeLabels {
                outcome: outcome.to_string(),
            })
            .inc();
    }

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

    /// The OpenMetrics text of every metric.
    pub(crate) fn encode(&self) -> String {
        let mut out = String::new();
        if prometheus_client::encoding::text::encode(&mut out, &self.registry).is_err() {
            out.clear();
        }
        out
    }
}
