//! Cancel requests (PostgreSQL's "Canceling Requests in Progress"): a client opens a second
//! connection that carries its first connection's process id and secret key; the statement that
//! connection is running then ends with SQLSTATE 57014, whether it is still planning or already
//! sending rows.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};

use bytes::Bytes;
use datafusion::execution::SendableRecordBatchStream;
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use futures::StreamExt;
use pgwire::api::cancel::CancelHandler;
use pgwire::messages::cancel::CancelRequest;
use pgwire::messages::startup::SecretKey;

use super::conn::PgConn;

/// The server's open connections by cancel key.
#[derive(Debug, Default)]
pub(crate) struct Cancels(Mutex<HashMap<(i32, Bytes), Weak<PgConn>>>);

/// Takes a connection off [`Cancels`] when it closes.
#[derive(Debug)]
pub(crate) struct Registered {
    cancels: Arc<Cancels>,
    key: (i32, Bytes),
}

impl Drop for Registered {
    fn drop(&mut self) {
        if let Ok(mut m) = self.cancels.0.lock() {
            m.remove(&self.key);
        }
    }
}

impl Cancels {
    /// Lists `conn` under its key until the returned guard drops.
    pub(crate) fn register(self: &Arc<Self>, pid: i32, secret: &SecretKey, conn: &Arc<PgConn>) -> Registered {
        let key = (pid, secret.to_bytes());
        if let Ok(mut m) = self.0.lock() {
            m.insert(key.clone(), Arc::downgrade(conn));
        }
        Registered {
            cancels: self.clone(),
            key,
        }
    }
}

#[async_trait::async_trait]
impl CancelHandler for Cancels {
    async fn on_cancel_request(&self, request: CancelRequest) {
        let key = (request.pid, request.secret_key.to_bytes());
        let conn = self.0.lock().ok().and_then(|m| m.get(&key).and_then(Weak::upgrade));
        if let Some(conn) = conn {
            conn.cancel.send_modify(|n| *n += 1);
        }
    }
}

/// The error of a cancelled statement (SQLSTATE 57014, query_canceled).
pub(crate) fn cancelled() -> varve::Error {
    varve::Error::new(varve::ErrorKind::Timeout, "canceling statement due to user request")
}

/// `fut`, unless a cancel request for this connection comes first.
pub(crate) async fn or_cancel<T>(
    mut watch: tokio::sync::watch::Receiver<u64>,
    fut: impl std::future::Future<Output = varve::Result<T>>,
) -> varve::Result<T> {
    tokio::select! {
        r = fut => r,
        _ = watch.changed() => Err(cancelled()),
    }
}

/// `stream`, ending with the cancel error when a cancel request for this connection comes.
pub(crate) fn cancellable(
    stream: SendableRecordBatchStream,
    watch: tokio::sync::watch::Receiver<u64>,
) -> SendableRecordBatchStream {
    let schema = stream.schema();
    let items = futures::stream::unfold(Some((stream, watch)), |state| async move {
        let (mut stream, mut watch) = state?;
        tokio::select! {
            biased;
            _ = watch.changed() => Some((Err(cancelled().into()), None)),
            next = stream.next() => next.map(|item| (item, Some((stream, watch)))),
        }
    });
    Box::pin(RecordBatchStreamAdapter::new(schema, items))
}
