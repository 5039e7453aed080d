//! Every format end to end through a real broker: good records become rows, each bad one lands
//! in the rejects table with its offset, payload and reason, and nothing stops the pipeline.

use std::collections::BTreeSet;

use varve_testkit::kafka::Broker;

use crate::{config, count, query, run_until};

/// The bad seqs `kafka_tool.py produce` listed.
fn bad_list(out: &str) -> BTreeSet<i64> {
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    v["bad"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_i64().unwrap())
        .collect()
}

async fn check(lake: &varve::Lake, table: &str, n: i64, bad: &BTreeSet<i64>) {
    let (ns, t) = table.split_once('.').unwrap();
    let good: BTreeSet<i64> = query(lake, &format!("SELECT seq FROM {ns}.{t}"))
        .await
        .iter()
        .map(|r| r[0].parse().unwrap())
        .collect();
    let want: BTreeSet<i64> = (0..n).filter(|i| !bad.contains(i)).collect();
    assert_eq!(good, want, "{table}: the good records");
    assert_eq!(count(lake, table).await, want.len() as u64, "{table}: no duplicates");
    // One topic, one partition: a record's offset is its seq.
    let rejected = query(
        lake,
        &format!(
            "SELECT \"offset\", topic, \"partition\", length(payload), error FROM {ns}.\"{t}__rejected\" ORDER BY 1"
        ),
    )
    .await;
    let offsets: BTreeSet<i64> = rejected.iter().map(|r| r[0].parse().unwrap()).collect();
    assert_eq!(&offsets, bad, "{table}: the rejected records");
    assert_eq!(rejected.len(), bad.len(), "{table}: each rejected once");
    for r in &rejected {
        assert_eq!(r[1], "events");
        assert_eq!(r[2], "0");
        assert!(r[3].parse::<i64>().unwrap() > 0, "the raw payload is kept: {r:?}");
        assert!(!r[4].is_empty(), "a reason: {r:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_good_rows_bad_records_and_new_fields() {
    let broker = Broker::start();
    broker.tool(&["create-topic", "events", "--partitions", "1"]);
    let out = broker.tool(&["produce", "--topic", "events", "--count", "1000", "--bad-every", "10"]);
    let bad = bad_list(&out);
    assert_eq!(bad.len(), 100);
    let backend = varve_testkit::Backend::local();
    let lake = backend.open();
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = config(&broker.bootstrap(), "events", "iot.events", dir.path());
    cfg.series_key = vec!["device".into()];
    let s = run_until(&lake, cfg.clone(), 900, 100).await;
    assert_eq!((s.rows, s.rejected), (900, 100), "{s:?}");
    check(&lake, "iot.events", 1000, &bad).await;
    let errors = query(
        &lake,
        "SELECT error FROM iot.\"events__rejected\" ORDER BY \"offset\" LIMIT 4",
    )
    .await;
    assert!(errors[0][0].starts_with("not JSON"), "{errors:?}");
    assert!(errors[1][0].contains("no time field \"time\""), "{errors:?}");
    assert!(
        errors[2][0].contains("text \"x\" cannot be stored in its column of type Float64"),
        "{errors:?}"
    );
    assert!(errors[3][0].contains("'not a time' is not a time"), "{errors:?}");
    // Another engine reads what was ingested (it follows the version hint, written after each
    // commit answered).
    varve::settle_published().await;
    let duck = varve_testkit::duckdb_scan(&backend, "iot", "events");
    assert_eq!(duck.iter().map(|b| b.num_rows()).sum::<usize>(), 900);

    // New fields become columns; with --refuse-new-fields they are rejects instead.
    broker.tool(&[
        "produce", "--topic", "events", "--count", "100", "--first", "1000", "--fields", "3",
    ]);
    run_until(&lake, cfg.clone(), 1000, 100).await;
    let d = lake.describe("iot.events").await.unwrap();
    let names: Vec<&str> = d.schema.fields().iter().map(|f| f.name().as_str()).collect();
    assert!(names.contains(&"f1") && names.contains(&"f2"), "{names:?}");
    assert_eq!(query(&lake, "SELECT count(f2) FROM iot.events").await[0][0], "100");
    broker.tool(&[
        "produce", "--topic", "events", "--count", "10", "--first", "1100", "--fields", "4",
    ]);
    cfg.refuse_new_fields = true;
    run_until(&lake, cfg, 1000, 110).await;
    let refused = query(
        &lake,
        "SELECT error FROM iot.\"events__rejected\" WHERE \"offset\" >= 1100",
    )
    .await;
    assert_eq!(refused.len(), 10);
    assert!(
        refused[0][0].contains("field f3 is not a column of the table (--refuse-new-fields)"),
        "{refused:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn line_protocol_and_csv() {
    let broker = Broker::start();
    broker.tool(&["create-topic", "events", "--partitions", "1"]);
    let out = broker.tool(&[
        "produce",
        "--topic",
        "events",
        "--count",
        "700",
        "--bad-every",
        "7",
        "--format",
        "line-protocol",
    ]);
    let bad = bad_list(&out);
    let lake = varve_testkit::Backend::local().open();
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = config(&broker.bootstrap(), "events", "ops.lp", dir.path());
    cfg.format = varve_ingest::decode::Format::LineProtocol;
    cfg.time_unit = Some(arrow::datatypes::TimeUnit::Millisecond);
    run_until(&lake, cfg, 600, 100).await;
    check(&lake, "ops.lp", 700, &bad).await;
    // The tags are the series key of a table line protocol creates.
    let d = lake.describe("ops.lp").await.unwrap();
    assert_eq!(d.contract.series_key, vec!["device".to_string()]);

    let broker = Broker::start();
    broker.tool(&["create-topic", "events", "--partitions", "1"]);
    let out = broker.tool(&[
        "produce",
        "--topic",
        "events",
        "--count",
        "900",
        "--bad-every",
        "9",
        "--format",
        "csv",
    ]);
    let bad = bad_list(&out);
    let mut cfg = config(&broker.bootstrap(), "events", "ops.csv", dir.path());
    cfg.format = varve_ingest::decode::Format::Csv;
    cfg.csv_columns = ["time", "device", "seq", "p"].map(String::from).to_vec();
    run_until(&lake, cfg, 800, 100).await;
    check(&lake, "ops.csv", 900, &bad).await;
}
