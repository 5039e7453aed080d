//! Work a commit leaves running after it has answered its caller:
//!
//! - publishing the commit ([`spawn_publish`]): the version hint, which plain Iceberg readers
//!   (DuckDB) follow, and the head object, which Varve readers in other processes plan from
//!   (`catalog::publish_later`). Varve readers never need either to find a commit (they check
//!   for newer versions themselves), so an append waits on two dependent round trips (the
//!   uploads, then the conditional write of the metadata), not three;
//! - the check, after a version hint write, that no newer commit's hint was overwritten
//!   (`catalog::follow_version_hint_later`), with [`spawn`].
//!
//! Such work is best effort (the next load of the table repairs a hint left behind, and a reader falls back
//! from a stale head to the Iceberg metadata). [`settle`] waits for all of it, so that a process
//! about to exit (the CLI) leaves the hint right; [`settle_published`] waits for the publishing
//! only (the Python binding, whose callers read with DuckDB right after a write).
//!
//! What is pending is kept per process id: a process forked while work was running (Python's
//! `multiprocessing`) has none of the parent's tasks, and must not wait for them.

use std::future::Future;
use std::sync::{LazyLock, Mutex};

use tokio::task::JoinHandle;

/// Everything started and not yet waited for, by the process that started it.
static PENDING: LazyLock<Mutex<(u32, Vec<JoinHandle<()>>)>> = LazyLock::new(|| Mutex::new((0, Vec::new())));
/// The publishing of commits among them.
static PUBLISHING: LazyLock<Mutex<(u32, Vec<tokio::sync::watch::Receiver<bool>>)>> =
    LazyLock::new(|| Mutex::new((0, Vec::new())));

/// The list of this process: emptied first when it was filled by another (before a fork).
fn ours<T>(slot: &mut (u32, Vec<T>)) -> &mut Vec<T> {
    let pid = std::process::id();
    if slot.0 != pid {
        // The parent's tasks do not exist here; their handles are not ours to drop either.
        std::mem::forget(std::mem::take(&mut slot.1));
        slot.0 = pid;
    }
    &mut slot.1
}

/// Runs `work` on the current tokio runtime without waiting for it. Outside a runtime it is
/// dropped (it is only ever best effort).
pub(crate) fn spawn(work: impl Future<Output = ()> + Send + 'static) {
    let Ok(rt) = tokio::runtime::Handle::try_current() else {
        return;
    };
    let handle = rt.spawn(work);
    if let Ok(mut p) = PENDING.lock() {
        let p = ours(&mut p);
        p.retain(|h| !h.is_finished());
        p.push(handle);
    }
}

/// [`spawn`] for the publishing of a commit, which [`settle_published`] waits for too.
pub(crate) fn spawn_publish(work: impl Future<Output = ()> + Send + 'static) {
    let (done, watch) = tokio::sync::watch::channel(false);
    if let Ok(mut p) = PUBLISHING.lock() {
        let p = ours(&mut p);
        p.retain(|w| !*w.borrow());
        p.push(watch);
    }
    spawn(async move {
        work.await;
        let _ = done.send(true);
    });
}

/// Waits until the background work started so far (by any lake handle of this process) is done.
/// Call it before a process exits right after a commit, so that the version hint, which plain
/// Iceberg readers such as DuckDB follow, names the newest version.
pub async fn settle() {
    loop {
        let handles: Vec<JoinHandle<()>> = match PENDING.lock() {
            Ok(mut p) => std::mem::take(ours(&mut p)),
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

/// Waits until every commit of this process made so far is published: its version hint and
/// head object written (or failed). Plain Iceberg readers see a commit from then on. The check
/// that follows a hint write ([`settle`] waits for it too) may still be running.
pub async fn settle_published() {
    // Cloned, not taken: another thread settling at the same time waits for them too.
    let watches: Vec<tokio::sync::watch::Receiver<bool>> = match PUBLISHING.lock() {
        Ok(mut p) => {
            let p = ours(&mut p);
            p.retain(|w| !*w.borrow());
            p.clone()
        }
        Err(_) => return,
    };
    for mut w in watches {
        // An error: the task is gone (its runtime shut down), which is as done as it gets.
        let _ = w.wait_for(|done| *done).await;
    }
}
