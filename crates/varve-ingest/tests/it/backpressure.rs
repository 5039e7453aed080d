//! Backpressure: a write-ahead log whose file system is over `--disk-high-watermark` stops
//! reading (counted as a pause) and reads again when there is room; nothing is lost meanwhile.

use std::time::Duration;

use varve_ingest::metrics::{Metrics, TableLabels};
use varve_testkit::kafka::Broker;

use crate::{config, count, run_until};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_disk_pauses_reading_until_there_is_room() {
    let broker = Broker::start();
    broker.tool(&["create-topic", "events", "--partitions", "1"]);
    broker.tool(&["produce", "--topic", "events", "--count", "200"]);
    let lake = varve_testkit::Backend::local().open();
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = config(&broker.bootstrap(), "events", "bp.events", dir.path());
    // Any file system in use is over this.
    cfg.disk_high_watermark = 1e-9;
    let metrics = Metrics::new();
    let (tx, mut rx) = tokio::sync::watch::channel(false);
    let (l, c, m) = (lake.clone(), cfg.clone(), metrics.clone());
    let task = tokio::spawn(async move {
        let stop = async move {
            let _ = rx.wait_for(|s| *s).await;
        };
        Box::pin(varve_ingest::run(l, c, m, stop)).await
    });
    tokio::time::sleep(Duration::from_secs(4)).await;
    let label = TableLabels {
        table: "bp.events".into(),
    };
    assert!(metrics.pauses.get_or_create(&label).get() >= 1, "the pause is counted");
    assert_eq!(
        metrics.records.get_or_create(&label).get(),
        0,
        "nothing read while paused"
    );
    assert_eq!(count(&lake, "bp.events").await, 0);
    tx.send(true).unwrap();
    task.await.unwrap().unwrap();
    // With room on the disk, every record arrives.
    cfg.disk_high_watermark = 100.0;
    let s = run_until(&lake, cfg, 200, 0).await;
    assert_eq!(s.rows, 200, "{s:?}");
    assert_eq!(count(&lake, "bp.events").await, 200);
}
