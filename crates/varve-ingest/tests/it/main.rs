//! Integration tests of `varve-ingest`, one binary, one module per concern: pipelines run in
//! this process against a real Kafka-protocol broker (tansu) fed by confluent-kafka, and the
//! commit rules against a real lake. The `varve ingest` process tests (kill -9, a broker restart,
//! an S3 outage, freshness) are in `varve-cli`'s.

mod backpressure;
mod formats;
mod offsets;

use std::time::{Duration, Instant};

use varve::Lake;
use varve_ingest::metrics::Metrics;
use varve_ingest::PipelineConfig;

/// A pipeline with the defaults, reading `topic` into `table`.
pub(crate) fn config(broker: &str, topic: &str, table: &str, wal: &std::path::Path) -> PipelineConfig {
    let mut f = varve_ingest::config::PipelineFile {
        table: Some(table.into()),
        brokers: Some(broker.into()),
        topics: Some(vec![topic.into()]),
        wal_dir: Some(wal.to_path_buf()),
        commit_interval: Some("200ms".into()),
        ..Default::default()
    };
    f.group = Some(format!("g-{table}"));
    f.build().unwrap()
}

/// Runs `cfg` until `table` holds `rows` rows and its rejects table `rejects` rows; returns what
/// the pipeline did.
pub(crate) async fn run_until(lake: &Lake, cfg: PipelineConfig, rows: u64, rejects: u64) -> varve_ingest::Summary {
    let (tx, mut rx) = tokio::sync::watch::channel(false);
    let table = cfg.table.clone();
    let l = lake.clone();
    let task = tokio::spawn(async move {
        let stop = async move {
            let _ = rx.wait_for(|s| *s).await;
        };
        Box::pin(varve_ingest::run(l, cfg, Metrics::new(), stop)).await
    });
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        let n = count(lake, &table).await;
        let r = count(lake, &format!("{table}__rejected")).await;
        if n >= rows && r >= rejects {
            break;
        }
        assert!(!task.is_finished(), "the pipeline stopped early");
        assert!(
            Instant::now() < deadline,
            "{table}: {n} of {rows} rows, {r} of {rejects} rejects after 90 s"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    tx.send(true).unwrap();
    task.await.unwrap().unwrap()
}

pub(crate) async fn count(lake: &Lake, table: &str) -> u64 {
    let (ns, t) = table.split_once('.').unwrap();
    match lake.sql(&format!("SELECT count(*) FROM \"{ns}\".\"{t}\"")).await {
        Ok(r) => {
            use arrow::array::AsArray;
            r.batches[0]
                .column(0)
                .as_primitive::<arrow::datatypes::Int64Type>()
                .value(0) as u64
        }
        Err(_) => 0,
    }
}

/// The text of each row of a query's answer, columns in the query's order.
pub(crate) async fn query(lake: &Lake, sql: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for b in &lake.sql(sql).await.unwrap().batches {
        for r in 0..b.num_rows() {
            out.push(
                b.columns()
                    .iter()
                    .map(|c| arrow::util::display::array_value_to_string(c, r).unwrap())
                    .collect(),
            );
        }
    }
    out
}
