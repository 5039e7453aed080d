//! What both front ends (HTTP in `http`, PostgreSQL in `pg`) share: the lake, the server's
//! configuration, the request slots (`max_in_flight`) that queries and writes of both protocols
//! take, the metrics, and the writes in progress. Neither front end imports the other.

use std::sync::Arc;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use varve::Lake;

use crate::metrics::Metrics;
use crate::ServerConfig;

/// What every handler shares.
#[derive(Debug, Clone)]
pub(crate) struct AppState(pub(crate) Arc<Inner>);

#[derive(Debug)]
pub(crate) struct Inner {
    pub(crate) lake: Arc<Lake>,
    pub(crate) config: ServerConfig,
    pub(crate) slots: Arc<Semaphore>,
    pub(crate) metrics: Metrics,
    /// Line protocol commits in progress: they run to their end even when their client leaves
    /// or the server stops, and [`crate::Server::run`] waits for them.
    pub(crate) writes: tokio_util::task::TaskTracker,
}

impl AppState {
    pub(crate) fn new(lake: Arc<Lake>, config: ServerConfig) -> AppState {
        let slots = Arc::new(Semaphore::new(config.max_in_flight));
        AppState(Arc::new(Inner {
            lake,
            config,
            slots,
            metrics: Metrics::new(),
            writes: tokio_util::task::TaskTracker::new(),
        }))
    }
}

/// One of the `max_in_flight` slots, held while a statement or write runs (and counted in
/// `varve_queries_in_flight`).
#[derive(Debug)]
pub(crate) struct Slot {
    _permit: OwnedSemaphorePermit,
    state: AppState,
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.state.0.metrics.in_flight.dec();
    }
}

impl AppState {
    /// Waits for one of the `max_in_flight` slots that queries and writes of both protocols
    /// share; after `queue_timeout`, the error says the server is busy.
    pub(crate) async fn slot(&self) -> Result<Slot, String> {
        let wait = self.0.config.queue_timeout;
        let m = &self.0.metrics;
        m.queued.inc();
        let got = tokio::time::timeout(wait, self.0.slots.clone().acquire_owned()).await;
        m.queued.dec();
        match got {
            Ok(Ok(p)) => {
                m.in_flight.inc();
                Ok(Slot {
                    _permit: p,
                    state: self.clone(),
                })
            }
            _ => Err(format!(
                "the server is busy: {} requests are running and none finished within {:?}",
                self.0.config.max_in_flight, wait
            )),
        }
    }
}
