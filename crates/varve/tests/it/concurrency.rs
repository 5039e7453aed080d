//! Concurrent writers in one process: every row is there exactly once, the history is linear,
//! and other engines read the result. (The CLI's tests run writers in separate processes.)

use std::sync::Arc;

use arrow::array::{Int64Array, RecordBatch, TimestampMicrosecondArray};
use arrow::datatypes::{DataType, Field, Schema, TimeUnit};
use varve::{AppendOptions, TableContract};
use varve_testkit::{assert_readers_agree, Backend};

async fn writers(backend: Backend, tasks: i64, batches: i64) {
    let lake = backend.open();
    let schema = Arc::new(Schema::new(vec![
        Field::new(
            "ts",
            DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            false,
        ),
        Field::new("writer", DataType::Int64, true),
        Field::new("seq", DataType::Int64, true),
    ]));
    lake.create_table(
        "t",
        &schema,
        &TableContract::time_series("ts").with_series_key(["writer"]),
    )
    .await
    .unwrap();
    // The whole history is checked below: keep every snapshot (commits keep 100 by default).
    lake.set_properties(
        "t",
        &std::collections::HashMap::from([("varve.max-snapshots".to_string(), "1000".to_string())]),
        &[],
    )
    .await
    .unwrap();
    let mut handles = vec![];
    for w in 0..tasks {
        let lake = lake.clone();
        let schema = schema.clone();
        handles.push(tokio::spawn(async move {
            for s in 0..batches {
                let b = RecordBatch::try_new(
                    schema.clone(),
                    vec![
                        Arc::new(TimestampMicrosecondArray::from(vec![s * 1_000_000]).with_timezone("UTC")),
                        Arc::new(Int64Array::from(vec![w])),
                        Arc::new(Int64Array::from(vec![s])),
                    ],
                )
                .unwrap();
                let opts = AppendOptions {
                    batch_id: Some(format!("{w}-{s}")),
                    ..Default::default()
                };
                lake.append("t", vec![b], opts).await.unwrap();
            }
        }));
    }
    for h in handles {
        h.await.unwrap();
    }
    let r = lake
        .sql("SELECT count(*) AS n, count(DISTINCT (writer, seq)) AS d FROM t")
        .await
        .unwrap();
    let b = &r.batches[0];
    let n = b.column(0).as_any().downcast_ref::<Int64Array>().unwrap().value(0);
    let d = b.column(1).as_any().downcast_ref::<Int64Array>().unwrap().value(0);
    let h = lake.history("t").await.unwrap();
    if (n, d) != (tasks * batches, tasks * batches) {
        let seen = lake.sql("SELECT writer, seq FROM t ORDER BY 1, 2").await.unwrap();
        let seen = varve_testkit::rows(&seen.batches);
        for w in 0..tasks {
            for s in 0..batches {
                if !seen.contains(&vec![w.to_string(), s.to_string()]) {
                    eprintln!("missing row writer {w} seq {s}");
                }
            }
        }
        for s in &h {
            eprintln!("{s:?}");
        }
    }
    assert_eq!((n, d), (tasks * batches, tasks * batches), "every row exactly once");
    // Appends, and the replace snapshots of inline compaction between them.
    let appends = h.iter().filter(|s| s.operation == "append").count() as i64;
    assert_eq!(appends, tasks * batches);
    assert!(h.iter().all(|s| s.operation == "append" || s.operation == "replace"));
    for w in h.windows(2) {
        assert_eq!(w[1].parent_id, Some(w[0].snapshot_id), "history is linear");
    }
    // The last-value index followed every rebased commit: each writer's newest row is its last
    // (`rows` gives columns by name: seq, writer).
    let newest = lake
        .sql("SELECT writer, seq FROM \"t@last-values\" ORDER BY writer")
        .await
        .unwrap();
    let expected: Vec<Vec<String>> = (0..tasks)
        .map(|w| vec![(batches - 1).to_string(), w.to_string()])
        .collect();
    assert_eq!(varve_testkit::rows(&newest.batches), expected, "the last-value index");
    assert_readers_agree(&lake, &backend, "default", "t").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn eight_writers_on_local_disk() {
    writers(Backend::local(), 8, 10).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn eight_writers_on_s3() {
    writers(Backend::s3(), 8, 10).await;
}
