//! `varve serve`: the query server (`varve-server`) over the lake, until SIGINT or SIGTERM.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::Args;
use varve::Lake;
use varve_server::{Server, ServerConfig, Tokens};

#[derive(Debug, Args)]
pub(crate) struct ServeArgs {
    /// A TOML file with any of the options below (kebab-case keys: `http = "0.0.0.0:8086"`,
    /// `max-in-flight = 32`), the lake (`lake = "s3://bucket/lake"`) and its storage options (a
    /// `[storage]` table); options on the command line win.
    #[arg(long, value_name = "FILE")]
    pub(crate) config: Option<PathBuf>,
    /// Address for HTTP (SQL at POST /v1/sql, tables at GET /v1/tables, /health, /metrics); port
    /// 0 picks a free one. [default: 127.0.0.1:8086]
    #[arg(long, value_name = "ADDR:PORT")]
    http: Option<String>,
    /// Address for the PostgreSQL wire protocol (psql, psycopg, JDBC, Grafana), or `off`; port 0
    /// picks a free one. Log in with any user and database name (`varve`) and a token as the
    /// password (SCRAM-SHA-256); without --token-file, with any password. [default:
    /// 127.0.0.1:5432]
    #[arg(long, value_name = "ADDR:PORT|off")]
    pg: Option<String>,
    /// A token file made by `varve token add` (the tokens' hashes, scopes and namespaces): requests
    /// then need `Authorization: Bearer <token>`. Without it every client may read and write, so
    /// keep the default loopback address.
    #[arg(long, value_name = "FILE")]
    token_file: Option<PathBuf>,
    /// With --token-file: requests without a token may still read (queries that change nothing,
    /// table listings, metrics); over PostgreSQL, user `anonymous` logs in without a password.
    #[arg(long)]
    allow_anonymous_read: bool,
    /// Requests served at once; others wait up to 10 s for a slot, then get 429 (PostgreSQL:
    /// SQLSTATE 53300). [default: 16]
    #[arg(long, value_name = "N")]
    max_in_flight: Option<usize>,
    /// Cancel a query after this long (e.g. 30s, 5m). [default: 5m]
    #[arg(long, value_name = "DURATION")]
    query_timeout: Option<String>,
    /// Bound each query's memory (bytes, or 512MiB, 2GiB); sorts and aggregates spill first.
    #[arg(long, value_name = "BYTES")]
    memory_limit: Option<String>,
    /// Fail a query whose result has more rows than this.
    #[arg(long, value_name = "N")]
    max_result_rows: Option<usize>,
    /// Refuse a write body (line protocol, CSV, NDJSON, Arrow, Parquet, COPY) larger than this
    /// (bytes, or 16MiB) with 413. [default: 64MiB]
    #[arg(long, value_name = "BYTES")]
    max_write_bytes: Option<String>,
    /// TLS on both listeners (HTTPS, and PostgreSQL's sslmode=require and stronger): the
    /// certificate chain, PEM.
    #[arg(long, value_name = "FILE", requires = "tls_key")]
    tls_cert: Option<PathBuf>,
    /// The private key of --tls-cert, PEM.
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    tls_key: Option<PathBuf>,
}

/// `varve serve --config FILE`: the same settings as the options, and the lake.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub(crate) struct ServeFile {
    /// The lake, when `--lake` and `$VARVE_LAKE` do not name one.
    pub(crate) lake: Option<String>,
    /// Storage options (as `-o KEY=VALUE`; those on the command line win).
    #[serde(default)]
    pub(crate) storage: std::collections::HashMap<String, String>,
    http: Option<String>,
    pg: Option<String>,
    token_file: Option<PathBuf>,
    allow_anonymous_read: Option<bool>,
    max_in_flight: Option<usize>,
    query_timeout: Option<String>,
    memory_limit: Option<String>,
    max_result_rows: Option<usize>,
    max_write_bytes: Option<String>,
    tls_cert: Option<PathBuf>,
    tls_key: Option<PathBuf>,
}

/// Reads a `--config` file (`varve serve`, `varve ingest`).
///
/// Errors: the file cannot be read, is not TOML, or has a key Varve does not know (the message
/// names the file, line and key).
pub(crate) fn read_config<T: serde::de::DeserializeOwned>(path: &std::path::Path) -> varve::Result<T> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| varve::Error::invalid(format!("--config {}: {e}", path.display())))?;
    toml::from_str(&text).map_err(|e| {
        let line = e
            .span()
            .map(|s| {
                let start = s.start.min(text.len());
                let n = text[..start].matches('\n').count();
                let shown = text.lines().nth(n).unwrap_or("").trim();
                format!("line {} ({shown}): ", n + 1)
            })
            .unwrap_or_default();
        varve::Error::invalid(format!("--config {}: {line}{}", path.display(), e.message().trim()))
    })
}

pub(crate) async fn run(lake: Lake, args: ServeArgs, file: ServeFile) -> varve::Result<()> {
    let invalid = |m: String| varve::Error::invalid(m);
    let addr = |what: &str, v: &str| {
        v.parse::<SocketAddr>()
            .map_err(|e| invalid(format!("--{what} {v}: {e} (use ADDR:PORT, such as 127.0.0.1:8086)")))
    };
    let http = addr(
        "http",
        args.http
            .as_deref()
            .or(file.http.as_deref())
            .unwrap_or("127.0.0.1:8086"),
    )?;
    let pg = match args.pg.as_deref().or(file.pg.as_deref()).unwrap_or("127.0.0.1:5432") {
        "off" => None,
        v => Some(addr("pg", v)?),
    };
    let token_file = args.token_file.or(file.token_file);
    let tokens = match &token_file {
        Some(f) => Some(Tokens::from_file(f).map_err(invalid)?),
        None => None,
    };
    let allow_anonymous_read = args.allow_anonymous_read || file.allow_anonymous_read.unwrap_or(false);
    let timeout = args.query_timeout.or(file.query_timeout).unwrap_or_else(|| "5m".into());
    let query_timeout =
        varve::parse_duration(&timeout).map_err(|e| invalid(format!("--query-timeout {timeout}: {}", e.message())))?;
    let memory_limit = args.memory_limit.or(file.memory_limit);
    let max_write_bytes = args
        .max_write_bytes
        .or(file.max_write_bytes)
        .unwrap_or_else(|| "64MiB".into());
    let tls = match (args.tls_cert.or(file.tls_cert), args.tls_key.or(file.tls_key)) {
        (Some(cert), Some(key)) => Some((cert, key)),
        (None, None) => None,
        _ => {
            return Err(invalid(
                "TLS needs both a certificate (tls-cert) and its key (tls-key)".into(),
            ))
        }
    };
    let scheme = if tls.is_some() { "https" } else { "http" };
    let config = ServerConfig {
        http,
        pg,
        tls,
        tokens,
        allow_anonymous_read,
        max_in_flight: args.max_in_flight.or(file.max_in_flight).unwrap_or(16),
        query_timeout: Some(query_timeout),
        memory_limit: memory_limit.as_deref().map(crate::parse_bytes).transpose()?,
        max_result_rows: args.max_result_rows.or(file.max_result_rows),
        max_write_bytes: crate::parse_bytes(&max_write_bytes)?,
        ..ServerConfig::default()
    };
    let open = config.tokens.is_none() && (!http.ip().is_loopback() || pg.is_some_and(|a| !a.ip().is_loopback()));
    let token_note = match (&config.tokens, &token_file) {
        (Some(t), Some(f)) => Some(format!(
            "varve serve: tokens on: {} loaded from {}{}",
            t.len(),
            f.display(),
            if allow_anonymous_read {
                " (reads without a token allowed)"
            } else {
                ""
            }
        )),
        _ => None,
    };
    let url = lake.url().to_string();
    let server = Server::bind(lake, config).await.map_err(|e| invalid(e.to_string()))?;
    eprintln!("varve serve: lake {url}");
    eprintln!(
        "varve serve: HTTP on {scheme}://{} (POST /v1/sql, /v1/write, /api/v2/write, GET /v1/tables, /health, /metrics)",
        server.http_addr()
    );
    if let Some(addr) = server.pg_addr() {
        eprintln!(
            "varve serve: PostgreSQL on {addr} (psql \"host={} port={} dbname=varve user=varve\")",
            addr.ip(),
            addr.port()
        );
    }
    if let Some(note) = token_note {
        eprintln!("{note}");
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
pub(crate) async fn shutdown_signal() {
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
