//! Work a commit leaves running after it has answered its caller: the check, after a version hint
//! write, that no newer commit's hint was overwritten (`catalog::write_version_hint_forward`).
//! Such work is best effort (the next writer repairs a hint left behind); [`settle`] waits for it,
//! so that a process about to exit (the CLI) leaves the hint right.

use std::future::Future;
use std::sync::{LazyLock, Mutex};

use tokio::task::JoinHandle;

static PENDING: LazyLock<Mutex<Vec<JoinHandle<()>>>> = LazyLock::new(|| Mutex::new(Vec::new()));

/// Runs `work` on the current tokio runtime without waiting for it. Outside a runtime it is
/// dropped (it is only ever best effort).
pub(crate) fn spawn(work: impl Future<Output = ()> + Send + 'static) {
    let Ok(rt) = tokio::runtime::Handle::try_current() else {
        return;
    };
    let handle = rt.spawn(work);
    if let Ok(mut p) = PENDING.lock() {
        p.retain(|h| !h.is_finished());
        p.push(handle);
    }
}

/// Waits until the background work started so far (by any lake handle of this process) is done.
/// Call it before a process exits right after a commit, so that the version hint, which plain
/// Iceberg readers such as DuckDB follow, names the newest version.
pub async fn settle() {
    loop {
        let handles: Vec<JoinHandle<()>> = match PENDING.lock() {
            Ok(mut p) => std::mem::take(&mut *p),
            Err(_) => return,
        };
        if handles.is_empty() {
            return;
        }
        for h in handles {
            let _ = h.await;
        }
    }
}
