//! Varve's query server, started by `varve serve`: SQL over HTTP and the PostgreSQL wire protocol
//! for many clients from one stateless process over a lake (a local directory or a bucket that
//! other processes write too).
//!
//! | module | owns |
//! |---|---|
//! | `config` | [`ServerConfig`]: listen address, tokens, limits |
//! | `auth` | bearer tokens and the token file of their hashes: who may read, write, and in which namespace |
//! | `pg` | the PostgreSQL wire protocol: logins, the simple and extended query protocols, `pg_catalog` |
//! | `tls` | TLS for both listeners (rustls): certificates, the HTTPS listener |
//! | `scram` | SCRAM-SHA-256 with tokens as passwords (PostgreSQL logins) |
//! | `http` | the routes: `POST /v1/sql`, `GET /v1/tables`, `GET /v1/tables/{name}`, `GET /health`, `GET /metrics` |
//! | `params` | `/v1/sql`'s JSON parameters as typed placeholder values |
//! | `results` | a query's batches as a streamed body: JSON, NDJSON, CSV, Arrow IPC stream, Parquet |
//! | `bodies` | `/v1/write` bodies in CSV, NDJSON, Arrow IPC and Parquet; gzip bodies |
//! | `write` | writes in InfluxDB line protocol (`/v1/write`, `/api/v2/write`): parsing, tables made and evolved |
//! | `metrics` | Prometheus counters and histograms (OpenMetrics text at `/metrics`) |
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use std::collections::HashMap;
//! let lake = varve::Lake::open("./lake", &HashMap::new())?;
//! let server = varve_server::Server::bind(lake, varve_server::ServerConfig::default()).await?;
//! println!("listening on http://{}", server.http_addr());
//! server.run(async { tokio::signal::ctrl_c().await.ok(); }).await?;
//! # Ok(()) }
//! ```

#![forbid(unsafe_code)]
#![warn(missing_docs, missing_debug_implementations)]

mod auth;
mod bodies;
mod config;
mod http;
mod metrics;
mod params;
mod pg;
mod results;
mod scram;
mod state;
mod tls;
mod write;

use std::future::{Future, IntoFuture};
use std::net::SocketAddr;
use std::sync::Arc;

pub use auth::{add_to_file, new_token, revoke_in_file, Scope, TokenEntry, Tokens};
pub use config::ServerConfig;

/// Why the server could not start or stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// The listen address could not be bound (in use, not permitted).
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address asked for.
        addr: SocketAddr,
        /// The system's error.
        source: std::io::Error,
    },
    /// A configuration value is invalid (the message names it).
    #[error("{0}")]
    Config(String),
    /// Serving failed.
    #[error("server: {0}")]
    Io(#[from] std::io::Error),
}

/// A bound server: its listener is open (so [`Server::http_addr`] is known, also for port 0) and
/// [`Server::run`] serves until the shutdown future completes.
#[derive(Debug)]
pub struct Server {
    state: state::AppState,
    http: tokio::net::TcpListener,
    tls: Option<crate::tls::Acceptor>,
    pg: Option<pg::PgServer>,
    grace: std::time::Duration,
}

impl Server {
    /// Binds the HTTP listener of `config` over `lake`, and the PostgreSQL one when
    /// `config.pg` is set.
    ///
    /// Errors: [`ServerError::Bind`] when the address cannot be bound; [`ServerError::Config`] for
    /// invalid limits.
    pub async fn bind(lake: varve::Lake, config: ServerConfig) -> Result<Server, ServerError> {
        config.validate()?;
        let http = tokio::net::TcpListener::bind(config.http)
            .await
            .map_err(|source| ServerError::Bind {
                addr: config.http,
                source,
            })?;
        let pg_listener = match config.pg {
            Some(addr) => Some(
                tokio::net::TcpListener::bind(addr)
                    .await
                    .map_err(|source| ServerError::Bind { addr, source })?,
            ),
            None => None,
        };
        let tls = match &config.tls {
            Some((cert, key)) => Some(tls::acceptor(cert, key).map_err(ServerError::Config)?),
            None => None,
        };
        let grace = config.shutdown_grace;
        let state = state::AppState::new(Arc::new(lake), config);
        let pg = match pg_listener {
            Some(l) => Some(pg::PgServer::new(l, state.clone(), tls.clone()).map_err(ServerError::Config)?),
            None => None,
        };
        Ok(Server {
            state,
            http,
            tls,
            pg,
            grace,
        })
    }

    /// The address the PostgreSQL listener is bound to, when there is one.
    pub fn pg_addr(&self) -> Option<SocketAddr> {
        self.pg.as_ref().and_then(|p| p.addr().ok())
    }

    /// The address the HTTP listener is bound to.
    pub fn http_addr(&self) -> SocketAddr {
        self.http
            .local_addr()
            .unwrap_or_else(|_| SocketAddr::from(([127, 0, 0, 1], 0)))
    }

    /// Serves until `shutdown` completes, then stops accepting connections and lets requests in
    /// flight finish for up to the configured grace period (`shutdown_grace`); those still running
    /// then are dropped, which cancels their queries. A write is one commit per table: it either
    /// committed or did not happen; a line protocol body's commits, once started, are finished
    /// before this returns, even past the grace period.
    ///
    /// Errors: [`ServerError::Io`] when accepting connections fails.
    pub async fn run(self, shutdown: impl Future<Output = ()> + Send + 'static) -> Result<(), ServerError> {
        let writes = self.state.0.writes.clone();
        let app = http::router(self.state);
        let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
        let mut stopped = stop_rx.clone();
        let stop = async move {
            shutdown.await;
            let _ = stop_tx.send(true);
        };
        let grace = self.grace;
        let pg = self.pg.map(|p| tokio::spawn(p.run(stop_rx.clone(), grace)));
        let deadline = async move {
            let _ = stopped.wait_for(|s| *s).await;
            tokio::time::sleep(grace).await;
        };
        let serve = async move {
            match self.tls {
                Some(acceptor) => {
                    let listener = tls::TlsListener::new(self.http, acceptor)?;
                    axum::serve(listener, app)
                        .with_graceful_shutdown(stop)
                        .into_future()
                        .await
                }
                None => {
                    axum::serve(self.http, app)
                        .with_graceful_shutdown(stop)
                        .into_future()
                        .await
                }
            }
        };
        let r = tokio::select! {
            r = serve => r.map_err(ServerError::Io),
            _ = deadline => {
                tracing::warn!("requests still running after the shutdown grace period were cancelled");
                Ok(())
            }
        };
        if let Some(pg) = pg {
            let _ = pg.await;
        }
        // Line protocol bodies whose commits started finish them (each is bounded by the
        // commit's retries), so no body is left half committed.
        writes.close();
        if !writes.is_empty() {
            tracing::info!(writes = writes.len(), "waiting for writes to finish their commits");
            writes.wait().await;
        }
        r
    }
}
