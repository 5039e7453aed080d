//! `varve serve`: the query server (`varve-server`) over the lake, until SIGINT or SIGTERM.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::Args;
use varve::Lake;
use varve_server::{Server, ServerConfig, Tokens};

#[derive(Debug, Args)]
pub(crate) struct ServeArgs {
    /// Address for HTTP (SQL at POST /v1/sql, tables at GET /v1/tables, /health, /metrics); port
    /// 0 picks a free one.
    #[arg(long, default_value = "127.0.0.1:8086", value_name = "ADDR:PORT")]
    http: SocketAddr,
    /// Address for the PostgreSQL wire protocol (psql, psycopg, JDBC, Grafana), or `off`; port 0
    /// picks a free one. Log in with any user and database name (`varve`) and a token as the
    /// password (SCRAM-SHA-256); without --token-file, with any password.
    #[arg(long, default_value = "127.0.0.1:5432", value_name = "ADDR:PORT|off")]
    pg: String,
    /// A token file made by `varve token add` (the tokens' hashes, scopes and namespaces): requests
    /// then need `Authorization: Bearer <token>`. Without it every client may read and write, so
    /// keep the default loopback address.
    #[arg(long, value_name = "FILE")]
    token_file: Option<PathBuf>,
    /// With --token-file: requests without a token may still read (queries that change nothing,
    /// table listings, metrics); over PostgreSQL, user `anonymous` logs in without a password.
    #[arg(long, requires = "token_file")]
    allow_anonymous_read: bool,
    /// Requests served at once; others wait up to 10 s for a slot, then get 503.
    #[arg(long, default_value_t = 16, value_name = "N")]
    max_in_flight: usize,
    /// Cancel a query after this long (e.g. 30s, 5m).
    #[arg(long, default_value = "5m", value_name = "DURATION")]
    query_timeout: String,
    /// Bound each query's memory (bytes, or 512MiB, 2GiB); sorts and aggregates spill first.
    #[arg(long, value_name = "BYTES")]
    memory_limit: Option<String>,
    /// Fail a query whose result has more rows than this.
    #[arg(long, value_name = "N")]
    max_result_rows: Option<usize>,
    /// Refuse a write body (line protocol) larger than this (bytes, or 16MiB) with 413.
    #[arg(long, default_value = "64MiB", value_name = "BYTES")]
    max_write_bytes: String,
}

pub(crate) async fn run(lake: Lake, args: ServeArgs) -> varve::Result<()> {
    let invalid = |m: String| varve::Error::invalid(m);
    let tokens = match &args.token_file {
        Some(f) => Some(Tokens::from_file(f).map_err(invalid)?),
        None => None,
    };
    let query_timeout = varve::parse_duration(&args.query_timeout)
        .map_err(|e| invalid(format!("--query-timeout {}: {}", args.query_timeout, e.message())))?;
    let pg = match args.pg.as_str() {
        "off" => None,
        addr => Some(addr.parse::<SocketAddr>().map_err(|e| {
            invalid(format!(
                "--pg {addr}: {e} (use ADDR:PORT, such as 127.0.0.1:5432, or off)"
            ))
        })?),
    };
    let config = ServerConfig {
        http: args.http,
        pg,
        tokens,
        allow_anonymous_read: args.allow_anonymous_read,
        max_in_flight: args.max_in_flight,
        query_timeout: Some(query_timeout),
        memory_limit: args.memory_limit.as_deref().map(crate::parse_bytes).transpose()?,
        max_result_rows: args.max_result_rows,
        max_write_bytes: crate::parse_bytes(&args.max_write_bytes)?,
        ..ServerConfig::default()
    };
    let open = config.tokens.is_none() && (!args.http.ip().is_loopback() || pg.is_some_and(|a| !a.ip().is_loopback()));
    let url = lake.url().to_string();
    let server = Server::bind(lake, config).await.map_err(|e| invalid(e.to_string()))?;
    eprintln!("varve serve: lake {url}");
    eprintln!(
        "varve serve: HTTP on http://{} (POST /v1/sql, /v1/write, /api/v2/write, GET /v1/tables, /health, /metrics)",
        server.http_addr()
    );
    if let Some(addr) = server.pg_addr() {
        eprintln!(
            "varve serve: PostgreSQL on {addr} (psql \"host={} port={} dbname=varve user=varve\")",
            addr.ip(),
            addr.port()
        );
    }
    if open {
        eprintln!(
            "varve serve: warning: no --token-file on a non-loopback address: anyone who reaches it may read and write"
        );
    }
    server
        .run(shutdown_signal())
        .await
        .map_err(|e| varve::Error::internal(e.to_string()))?;
    eprintln!("varve serve: stopped");
    Ok(())
}

/// SIGINT (Ctrl-C) or SIGTERM.
async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = term.recv() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}
