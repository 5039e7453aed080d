//! The server's settings: where it listens, who may do what, and the limits every query runs in.

use std::net::SocketAddr;
use std::time::Duration;

use crate::auth::Tokens;
use crate::ServerError;

/// Settings of one server process. `Default` listens on 127.0.0.1:8086 (HTTP only) with no tokens (every
/// client may read and write: right for a loopback address only), 16 queries in flight, a 5 min
/// query timeout, no memory or row limit, a 10 s shutdown grace period and 64 MiB write bodies.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// The HTTP listen address (port 0: any free port).
    pub http: SocketAddr,
    /// The PostgreSQL listen address; `None`: no PostgreSQL listener.
    pub pg: Option<SocketAddr>,
    /// The certificate chain and private key (PEM files) of TLS on both listeners (HTTPS; the
    /// PostgreSQL protocol's SSLRequest); `None`: no TLS.
    pub tls: Option<(std::path::PathBuf, std::path::PathBuf)>,
    /// Bearer tokens; `None`: no authentication.
    pub tokens: Option<Tokens>,
    /// With tokens: whether a request without one may read (SQL that changes nothing, table
    /// listings). Writes always need a token then.
    pub allow_anonymous_read: bool,
    /// Requests served at once; more wait for a slot up to `queue_timeout`, then get 429
    /// (PostgreSQL: SQLSTATE 53300).
    pub max_in_flight: usize,
    /// How long a request waits for a slot before 429 Too Many Requests.
    pub queue_timeout: Duration,
    /// Each query is cancelled after this long (504 Gateway Timeout before its first row; a
    /// streamed body is cut off after).
    pub query_timeout: Option<Duration>,
    /// Bytes each query's sorts, aggregates and joins may hold before they spill, then fail.
    pub memory_limit: Option<usize>,
    /// A query whose result passes this many rows fails (413 before the first row is sent; a
    /// streamed body is cut off after).
    pub max_result_rows: Option<usize>,
    /// How long requests in flight may run on after the shutdown signal.
    pub shutdown_grace: Duration,
    /// The largest write body, bytes; a larger one gets 413 and nothing is written.
    pub max_write_bytes: usize,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            http: SocketAddr::from(([127, 0, 0, 1], 8086)),
            pg: None,
            tls: None,
            tokens: None,
            allow_anonymous_read: false,
            max_in_flight: 16,
            queue_timeout: Duration::from_secs(10),
            query_timeout: Some(Duration::from_secs(300)),
            memory_limit: None,
            max_result_rows: None,
            shutdown_grace: Duration::from_secs(10),
            max_write_bytes: 64 << 20,
        }
    }
}

impl ServerConfig {
    /// Checks the limits: none may be zero.
    ///
    /// Errors: [`ServerError::Config`] naming the setting.
    pub fn validate(&self) -> Result<(), ServerError> {
        if self.max_in_flight == 0 {
            return Err(ServerError::Config("max-in-flight must be at least 1".into()));
        }
        if self.query_timeout.is_some_and(|t| t.is_zero()) {
            return Err(ServerError::Config("query-timeout must be more than 0 seconds".into()));
        }
        if self.memory_limit == Some(0) {
            return Err(ServerError::Config("memory-limit must be more than 0 bytes".into()));
        }
        if self.max_write_bytes == 0 {
            return Err(ServerError::Config("max-write-bytes must be more than 0".into()));
        }
        if self.max_result_rows == Some(0) {
            return Err(ServerError::Config("max-result-rows must be at least 1".into()));
        }
        if self.allow_anonymous_read && self.tokens.is_none() {
            return Err(ServerError::Config(
                "allow-anonymous-read needs a token file (without one every client may read and write)".into(),
            ));
        }
        Ok(())
    }
}
