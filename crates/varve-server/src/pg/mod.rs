//! The PostgreSQL wire protocol (version 3, PostgreSQL's "Frontend/Backend Protocol" chapter)
//! over `pgwire`: psql, psycopg, JDBC tools and Grafana's PostgreSQL data source query the lake
//! as they would a PostgreSQL server.
//!
//! | module | owns |
//! |---|---|
//! | `startup` | the login (SCRAM-SHA-256 with a token as the password), reported parameters, cancel keys |
//! | `query` | statements by the simple and extended protocols: classification, parameters, results |
//! | `cancel` | cancel requests: a connection's running statement ends with 57014 |
//! | `copy` | `COPY ... FROM STDIN` in CSV (psql's `\copy`) |
//! | `catalog` | `pg_catalog`, PostgreSQL's functions, catalog-query rewriting, run-time parameters |
//! | `error` | Varve's errors as SQLSTATE codes |

mod cancel;
mod catalog;
mod conn;
mod copy;
mod error;
mod query;
mod startup;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use pgwire::api::auth::StartupHandler;
use pgwire::api::cancel::CancelHandler;
use pgwire::api::copy::CopyHandler;
use pgwire::api::query::{ExtendedQueryHandler, SimpleQueryHandler};
use pgwire::api::{PgWireServerHandlers, RandomPidSecretKeyGenerator};
use tokio::net::TcpListener;
use tokio::task::JoinSet;
use varve::QueryOptions;

use crate::auth::Grant;
use crate::state::AppState;

/// The PostgreSQL listener of a server and what its connections share.
#[derive(Debug)]
pub(crate) struct PgServer {
    listener: TcpListener,
    app: AppState,
    shared: Arc<catalog::Shared>,
    cancels: Arc<cancel::Cancels>,
    keys: Arc<RandomPidSecretKeyGenerator>,
    tls: Option<crate::tls::Acceptor>,
}

/// One connection's handlers.
struct Handlers {
    conn: Arc<conn::PgConn>,
    extended: Arc<query::Extended>,
    startup: Arc<startup::Startup>,
    cancel: Arc<cancel::Cancels>,
}

impl PgWireServerHandlers for Handlers {
    fn simple_query_handler(&self) -> Arc<impl SimpleQueryHandler> {
        self.conn.clone()
    }

    fn extended_query_handler(&self) -> Arc<impl ExtendedQueryHandler> {
        self.extended.clone()
    }

    fn startup_handler(&self) -> Arc<impl StartupHandler> {
        self.startup.clone()
    }

    fn copy_handler(&self) -> Arc<impl CopyHandler> {
        self.conn.clone()
    }

    fn cancel_handler(&self) -> Arc<impl CancelHandler> {
        self.cancel.clone()
    }
}

impl PgServer {
    /// The server over `listener`.
    ///
    /// Errors: the static `pg_catalog` tables do not load (a build defect).
    pub(crate) fn new(
        listener: TcpListener,
        app: AppState,
        tls: Option<crate::tls::Acceptor>,
    ) -> Result<PgServer, String> {
        Ok(PgServer {
            listener,
            app,
            shared: Arc::new(catalog::Shared::new()?),
            cancels: Arc::new(cancel::Cancels::default()),
            keys: Arc::new(RandomPidSecretKeyGenerator::default()),
            tls,
        })
    }

    /// The address the listener is bound to.
    pub(crate) fn addr(&self) -> std::io::Result<std::net::SocketAddr> {
        self.listener.local_addr()
    }

    /// A new connection's handlers: its own Varve session within the server's limits.
    fn handlers(&self) -> varve::Result<Handlers> {
        let cfg = &self.app.0.config;
        let session = self.app.0.lake.session(QueryOptions {
            timeout: cfg.query_timeout,
            max_rows: cfg.max_result_rows,
            memory_limit: cfg.memory_limit,
        })?;
        session.refuse_file_access();
        session.set_table_hint("\\dt lists the tables");
        let conn = Arc::new(conn::PgConn {
            app: self.app.clone(),
            shared: self.shared.clone(),
            session,
            grant: Mutex::new(Grant {
                scope: None,
                namespace: None,
                token: false,
                rejected: false,
            }),
            copy: Mutex::new(None),
            cancel: tokio::sync::watch::channel(0).0,
            block: Mutex::new(conn::Block::default()),
        });
        Ok(Handlers {
            extended: Arc::new(query::Extended(conn.clone())),
            startup: Arc::new(startup::Startup::new(
                conn.clone(),
                self.cancels.clone(),
                self.keys.clone(),
            )),
            cancel: self.cancels.clone(),
            conn,
        })
    }

    /// Accepts connections until `stop` turns true, then lets open connections run on for
    /// `grace` and closes those still open.
    pub(crate) async fn run(self, mut stop: tokio::sync::watch::Receiver<bool>, grace: Duration) {
        let mut conns = JoinSet::new();
        loop {
            tokio::select! {
                accepted = self.listener.accept() => match accepted {
                    Ok((socket, _)) => {
                        let _ = socket.set_nodelay(true);
                        let handlers = match self.handlers() {
                            Ok(h) => h,
                            Err(e) => {
                                tracing::warn!("PostgreSQL connection refused: {e}");
                                continue;
                            }
                        };
                        let metrics = self.app.clone();
                        let tls = self.tls.clone();
                        conns.spawn(async move {
                            metrics.0.metrics.pg_connections.inc();
                            if let Err(e) = pgwire::tokio::process_socket(socket, tls.map(|t| t.0), handlers).await {
                                tracing::debug!("PostgreSQL connection ended: {e}");
                            }
                            metrics.0.metrics.pg_connections.dec();
                        });
                    }
                    Err(e) => tracing::warn!("PostgreSQL accept: {e}"),
                },
                Some(_) = conns.join_next(), if !conns.is_empty() => {}
                _ = stop.wait_for(|s| *s) => break,
            }
        }
        drop(self.listener);
        let _ = tokio::time::timeout(grace, async { while conns.join_next().await.is_some() {} }).await;
        conns.abort_all();
    }
}
