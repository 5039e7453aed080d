//! The offsets a table keeps decide what is committed: a replayed segment is a duplicate, a
//! zombie's segment (offsets another ingestor committed) is refused, and a torn log tail is read
//! up to its last whole frame.

use std::sync::Arc;

use arrow::array::{Int64Array, RecordBatch, TimestampMicrosecondArray};
use arrow::datatypes::{DataType, Field, Schema, TimeUnit};
use varve_ingest::commit::{commit_segment, Creation};
use varve_ingest::metrics::Metrics;
use varve_ingest::wal::{self, Frame, Fsync, Segment};

use crate::{count, query};

/// Partition `p`'s records `from..to` as a frame (one row per offset, `seq` = offset).
fn frame(p: i32, from: i64, to: i64) -> Frame {
    let schema = Arc::new(Schema::new(vec![
        Field::new(
            "time",
            DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            false,
        ),
        Field::new("seq", DataType::Int64, true),
    ]));
    let rows = RecordBatch::try_new(
        schema,
        vec![
            Arc::new(TimestampMicrosecondArray::from_iter_values((from..to).map(|o| o * 1000)).with_timezone("UTC")),
            Arc::new(Int64Array::from_iter_values(from..to)),
        ],
    )
    .unwrap();
    Frame {
        topic: "t".into(),
        partition: p,
        from,
        to,
        rows: Some(rows),
        row_offsets: (from..to).collect(),
        rejects: vec![],
        kafka_ms: vec![],
    }
}

#[tokio::test]
async fn replays_are_duplicates_and_zombies_are_refused() {
    let lake = varve_testkit::Backend::local().open();
    let m = Metrics::new();
    let c = Creation { series_key: vec![] };
    let a = commit_segment(&lake, "k.t", &c, vec![frame(0, 0, 100), frame(1, 0, 50)], &m)
        .await
        .unwrap();
    assert_eq!(a.rows, 150);
    assert!(a.conflicts.is_empty());
    // The same segment again (a crash after the commit, before the log was deleted): nothing.
    let again = commit_segment(&lake, "k.t", &c, vec![frame(0, 0, 100), frame(1, 0, 50)], &m)
        .await
        .unwrap();
    assert_eq!(again.rows, 0);
    assert!(again.conflicts.is_empty());
    // A zombie that read partition 0 from 0 again, after the table moved on: refused for that
    // partition, while its partition 1 rows that continue the table are committed.
    let z = commit_segment(&lake, "k.t", &c, vec![frame(0, 0, 120), frame(1, 50, 60)], &m)
        .await
        .unwrap();
    assert_eq!(z.conflicts, vec![("t/0".to_string(), 100)]);
    assert_eq!(z.rows, 10);
    assert_eq!(count(&lake, "k.t").await, 160);
    // The next owner continues from the table's offset.
    let next = commit_segment(&lake, "k.t", &c, vec![frame(0, 100, 120)], &m)
        .await
        .unwrap();
    assert_eq!(next.rows, 20);
    assert_eq!(
        query(
            &lake,
            "SELECT count(DISTINCT seq), min(seq), max(seq) FROM k.t WHERE seq < 120"
        )
        .await,
        vec![vec!["120".to_string(), "0".into(), "119".into()]]
    );
    let pos = lake.source_positions("k.t", "kafka").await.unwrap();
    assert_eq!((pos["t/0"], pos["t/1"]), (120, 60));
    // The offsets are in each commit's snapshot summary too, and `varve.source.*` is not settable.
    let e = lake
        .set_properties(
            "k.t",
            &[("varve.source.kafka.t/0".to_string(), "0".to_string())].into(),
            &[],
        )
        .await
        .unwrap_err();
    assert!(e.message().contains("source position"), "{e}");
}

#[tokio::test]
async fn a_torn_log_replays_its_whole_frames_once() {
    let lake = varve_testkit::Backend::local().open();
    let dir = tempfile::tempdir().unwrap();
    let mut s = Segment::create(dir.path(), 0, Fsync::Batch).unwrap();
    s.append(vec![frame(0, 0, 10)]).unwrap();
    s.append(vec![frame(0, 10, 20)]).unwrap();
    let path = s.path.clone();
    drop(s);
    let len = std::fs::metadata(&path).unwrap().len();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(len - 5)
        .unwrap();
    let sealed = wal::read_all(dir.path()).unwrap();
    assert!(sealed[0].torn);
    assert_eq!(sealed[0].frames.len(), 1);
    let m = Metrics::new();
    let c = Creation { series_key: vec![] };
    let r = commit_segment(&lake, "k.t", &c, sealed[0].frames.clone(), &m)
        .await
        .unwrap();
    assert_eq!(r.rows, 10);
    // Records 10..20 are read from Kafka again and continue the table.
    let r = commit_segment(&lake, "k.t", &c, vec![frame(0, 10, 20)], &m)
        .await
        .unwrap();
    assert_eq!(r.rows, 10);
    assert_eq!(count(&lake, "k.t").await, 20);
}

#[tokio::test]
async fn rows_whose_column_another_writer_typed_differently_are_rejected_not_converted() {
    let lake = varve_testkit::Backend::local().open();
    let schema = Schema::new(vec![
        Field::new(
            "time",
            DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            false,
        ),
        Field::new("seq", DataType::Utf8, true),
    ]);
    lake.create_table("k.t", &schema, &varve::TableContract::time_series("time"))
        .await
        .unwrap();
    // A rejects table as ingestors made it before it had a payload_text column: it gains one.
    let old_rejects = Schema::new(vec![
        Field::new(
            "time",
            DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            false,
        ),
        Field::new("topic", DataType::Utf8, false),
        Field::new("partition", DataType::Int32, false),
        Field::new("offset", DataType::Int64, false),
        Field::new("payload", DataType::Binary, false),
        Field::new("error", DataType::Utf8, false),
    ]);
    let contract = varve::TableContract::time_series("time")
        .with_series_key(["topic", "partition", "offset"])
        .with_dedup(varve::Dedup::LastWriteWins);
    lake.create_table("k.t__rejected", &old_rejects, &contract)
        .await
        .unwrap();
    let m = Metrics::new();
    let c = Creation { series_key: vec![] };
    // Our rows carry `seq` as Int64; the table has it as text: an append would cast 5 to "5".
    let r = commit_segment(&lake, "k.t", &c, vec![frame(0, 0, 5)], &m)
        .await
        .unwrap();
    assert_eq!((r.rows, r.rejected), (0, 5));
    assert_eq!(count(&lake, "k.t").await, 0);
    let rej = query(
        &lake,
        "SELECT \"offset\", CAST(payload AS VARCHAR), error, payload_text FROM k.\"t__rejected\" ORDER BY 1",
    )
    .await;
    assert_eq!(rej.len(), 5);
    assert!(rej[2][1].contains("\"seq\":2"), "{rej:?}");
    assert!(rej[2][2].contains("its column became Utf8"), "{rej:?}");
    assert_eq!(rej[2][3], rej[2][1], "a UTF-8 payload reads as itself");
    // The offsets moved on: the records are accounted for, in the rejects table.
    assert_eq!(lake.source_positions("k.t", "kafka").await.unwrap()["t/0"], 5);
}
