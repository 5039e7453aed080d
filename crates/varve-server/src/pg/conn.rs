//! One PostgreSQL connection's state ([`PgConn`]): its Varve session, what its login may do, a
//! `COPY ... FROM STDIN` under way, its cancel counter and its transaction block. The statement
//! handling (`query`), `COPY` (`copy`) and cancel requests (`cancel`) each import it, and none of
//! them imports another.

use std::sync::{Arc, Mutex};

use varve::TableIdent;

use super::catalog::Shared;
use crate::auth::Grant;
use crate::state::AppState;

/// One connection's state: the Varve session its statements run in and what its login may do.
pub(crate) struct PgConn {
    pub(crate) app: AppState,
    pub(crate) shared: Arc<Shared>,
    pub(crate) session: varve::Session,
    pub(crate) grant: Mutex<Grant>,
    /// A `COPY ... FROM STDIN` under way.
    pub(crate) copy: Mutex<Option<PendingCopy>>,
    /// Counts cancel requests; a statement ends when it changes (`cancel`).
    pub(crate) cancel: tokio::sync::watch::Sender<u64>,
    /// The writes committed since `BEGIN` ([`Block`]).
    pub(crate) block: Mutex<Block>,
}

/// A transaction block (`BEGIN` ... `COMMIT` / `ROLLBACK`) as Varve keeps it: every statement
/// commits when it runs, so a `ROLLBACK` after a write cannot undo it. It is refused with an
/// error that says what was committed, never answered as if it had undone anything.
#[derive(Debug, Default)]
pub(crate) struct Block {
    /// Inside `BEGIN` ... `COMMIT` / `ROLLBACK`.
    pub(super) open: bool,
    /// Tags of the writes committed inside the block (`INSERT 0 5`, `COPY 3`), oldest first.
    pub(super) committed: Vec<String>,
}

/// A `COPY ... FROM STDIN` under way on a connection.
#[derive(Debug)]
pub(crate) struct PendingCopy {
    pub(super) table: TableIdent,
    /// The CSV header line Varve reads the data with: the columns in COPY's order.
    pub(super) header: String,
    /// Skip the client's first line (`HEADER`).
    pub(super) skip_header: bool,
    pub(super) delimiter: u8,
    pub(super) null: Option<String>,
    pub(super) data: Vec<u8>,
    /// Set when the data passed the write body limit; the rest is dropped and the COPY fails.
    pub(super) too_large: bool,
}
