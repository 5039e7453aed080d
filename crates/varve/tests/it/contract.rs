//! The table contract, the write path and the query path, run against every backend; after the
//! sequence, DuckDB and PyIceberg must read exactly what Varve reads.

use std::sync::Arc;

use arrow::array::{
    Array, Float32Array, Float64Array, Int32Array, Int64Array, RecordBatch, StringArray, TimestampMicrosecondArray,
    TimestampNanosecondArray,
};
use arrow::datatypes::{DataType, Field, Schema, TimeUnit};
use varve::{AppendOptions, ErrorKind, Lake, Partitioning, TableContract};
use varve_testkit::{assert_readers_agree, Backend};

const DAY_US: i64 = 86_400_000_000;

fn schema() -> Arc<Schema> {
    Arc::new(Schema::new(vec![
        Field::new(
            "ts",
            DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            false,
        ),
        Field::new("host", DataType::Utf8, true),
        Field::new("cpu", DataType::Float64, true),
    ]))
}

/// `n` rows per host for hosts a, b, c, starting at `day`, one per hour.
fn batch(day: i64, n: i64) -> RecordBatch {
    let mut ts = vec![];
    let mut host = vec![];
    let mut cpu = vec![];
    for h in ["c", "a", "b"] {
        for i in (0..n).rev() {
            ts.push(day * DAY_US + i * 3_600_000_000);
            host.push(h);
            cpu.push(i as f64 / 10.0);
        }
    }
    RecordBatch::try_new(
        schema(),
        vec![
            Arc::new(TimestampMicrosecondArray::from(ts).with_timezone("UTC")),
            Arc::new(StringArray::from(host)),
            Arc::new(Float64Array::from(cpu)),
        ],
    )
    .unwrap()
}

async fn count(lake: &Lake, sql: &str) -> i64 {
    let r = lake.sql(sql).await.unwrap_or_else(|e| panic!("{sql}: {e}"));
    r.batches[0]
        .column(0)
        .as_any()
        .downcast_ref::<Int64Array>()
        .unwrap()
        .value(0)
}

async fn version(lake: &Lake, t: &str) -> (u64, Option<i64>) {
    let d = lake.describe(t).await.unwrap();
    (d.metadata_version, d.snapshot_id)
}

async fn suite(backend: Backend) {
    let lake = backend.open();
    let contract = TableContract::time_series("ts")
        .with_series_key(["host"])
        .with_partitioning(Partitioning::Day);
    lake.create_table("metrics.cpu", &schema(), &contract).await.unwrap();
    let e = lake
        .create_table("metrics.cpu", &schema(), &contract)
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::AlreadyExists);
    assert_eq!(
        lake.tables()
            .await
            .unwrap()
            .iter()
            .map(|t| t.to_string())
            .collect::<Vec<_>>(),
        ["metrics.cpu"]
    );

    // Two appends over three days; the second is idempotent by batch id.
    let r = lake
        .append(
            "metrics.cpu",
            vec![batch(19_000, 30)],
            AppendOptions {
                batch_id: Some("b1".into()),
                note: Some("first".into()),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!((r.rows, r.duplicate), (90, false));
    assert_eq!(
        r.files, 2,
        "30 hourly rows per host span two days: one file per day partition"
    );
    let first = r.snapshot_id.unwrap();
    let again = lake
        .append(
            "metrics.cpu",
            vec![batch(19_000, 30)],
            AppendOptions {
                batch_id: Some("b1".into()),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert!(again.duplicate && again.snapshot_id.is_none());
    lake.append("metrics.cpu", vec![batch(19_002, 24)], AppendOptions::default())
        .await
        .unwrap();
    assert_eq!(count(&lake, "SELECT count(*) FROM metrics.cpu").await, 90 + 72);

    // Rows come back sorted by (series key, time) within each file; the newest row per series.
    let latest = lake.latest("metrics.cpu").await.unwrap();
    assert_eq!(latest.num_rows(), 3);
    let max_ts = count(&lake, "SELECT CAST(max(ts) AS BIGINT) FROM metrics.cpu").await;
    let l = &latest.batches[0];
    let ts = l
        .column_by_name("ts")
        .unwrap()
        .as_any()
        .downcast_ref::<TimestampMicrosecondArray>()
        .unwrap();
    assert!((0..ts.len()).all(|i| ts.value(i) == max_ts), "latest rows");

    // Pruning: a one-day range reads only that day's files, and EXPLAIN says so.
    let day_sql = "SELECT count(*) FROM metrics.cpu WHERE ts >= '2022-01-08T00:00:00Z' AND ts < '2022-01-09T00:00:00Z'";
    assert_eq!(count(&lake, day_sql).await, 72);
    let explain = lake.sql(&format!("EXPLAIN {day_sql}")).await.unwrap();
    let text = varve::arrow::util::pretty::pretty_format_batches(&explain.batches)
        .unwrap()
        .to_string();
    assert!(text.contains("1 of 3 data files read, 2 pruned"), "{text}");

    // time_bucket
    let r = lake
        .sql("SELECT time_bucket(INTERVAL '1 day', ts) AS d, count(*) AS n FROM metrics.cpu GROUP BY 1 ORDER BY 1")
        .await
        .unwrap();
    let n = r.batches.iter().map(|b| b.num_rows()).sum::<usize>();
    assert_eq!(n, 3);
    let shifted =
        "SELECT count(DISTINCT time_bucket(INTERVAL '1 day', ts, TIMESTAMP '2022-01-01 12:00:00')) FROM metrics.cpu";
    assert_eq!(count(&lake, shifted).await, 4, "buckets from noon to noon");

    // Schema evolution: a new column, a missing column, a widened type, ns timestamps.
    let evolved = Arc::new(Schema::new(vec![
        Field::new("ts", DataType::Timestamp(TimeUnit::Nanosecond, None), false),
        Field::new("host", DataType::Utf8, true),
        Field::new("mem", DataType::Int32, true),
    ]));
    let b = RecordBatch::try_new(
        evolved,
        vec![
            Arc::new(TimestampNanosecondArray::from(vec![19_010 * DAY_US * 1000 + 1])),
            Arc::new(StringArray::from(vec!["a"])),
            Arc::new(Int32Array::from(vec![512])),
        ],
    )
    .unwrap();
    // A time with nanoseconds is refused (the table keeps µs), unless truncation is asked for.
    let e = lake
        .append("metrics.cpu", vec![b.clone()], AppendOptions::default())
        .await
        .unwrap_err();
    assert!(
        e.message()
            .contains("row 1: 2022-01-18T00:00:00.000000001 has nanoseconds"),
        "{e}"
    );
    let truncate = AppendOptions {
        time: varve::TimeOptions {
            truncate_ns: true,
            ..Default::default()
        },
        ..Default::default()
    };
    let r = lake.append("metrics.cpu", vec![b], truncate).await.unwrap();
    assert_eq!(r.added_columns, ["mem"]);
    assert_eq!(r.truncated_times, 1);
    assert_eq!(
        count(&lake, "SELECT count(*) FROM metrics.cpu WHERE mem IS NULL").await,
        162
    );
    assert_eq!(
        count(&lake, "SELECT count(*) FROM metrics.cpu WHERE cpu IS NULL").await,
        1
    );
    // int32 into the int32 column from an int64 input fits; a float32 widens into cpu.
    let wide = Arc::new(Schema::new(vec![
        Field::new(
            "ts",
            DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            false,
        ),
        Field::new("mem", DataType::Int64, true),
        Field::new("cpu", DataType::Float32, true),
    ]));
    let b = RecordBatch::try_new(
        wide.clone(),
        vec![
            Arc::new(TimestampMicrosecondArray::from(vec![19_011 * DAY_US]).with_timezone("UTC")),
            Arc::new(Int64Array::from(vec![1024])),
            Arc::new(Float32Array::from(vec![0.5])),
        ],
    )
    .unwrap();
    lake.append("metrics.cpu", vec![b], AppendOptions::default())
        .await
        .unwrap();

    // Bad input: a clear error, and the table is unchanged.
    let before = version(&lake, "metrics.cpu").await;
    let lossy = RecordBatch::try_new(
        wide,
        vec![
            Arc::new(TimestampMicrosecondArray::from(vec![0, 1]).with_timezone("UTC")),
            Arc::new(Int64Array::from(vec![1, 5_000_000_000])),
            Arc::new(Float32Array::from(vec![0.5, 0.5])),
        ],
    )
    .unwrap();
    let e = lake
        .append("metrics.cpu", vec![lossy], AppendOptions::default())
        .await
        .unwrap_err();
    assert_eq!(
        e.message(),
        "column mem, row 2: 5000000000 cannot be stored as int32 without loss"
    );
    let text_schema = Arc::new(Schema::new(vec![
        Field::new("ts", DataType::Utf8, true),
        Field::new("cpu", DataType::Utf8, true),
    ]));
    let words = RecordBatch::try_new(
        text_schema.clone(),
        vec![
            Arc::new(StringArray::from(vec!["2022-01-01T00:00:00Z", "2022-01-01T00:01:00Z"])),
            Arc::new(StringArray::from(vec!["1.5", "fast"])),
        ],
    )
    .unwrap();
    let e = lake
        .append("metrics.cpu", vec![words], AppendOptions::default())
        .await
        .unwrap_err();
    assert_eq!(
        (e.kind(), e.message()),
        (ErrorKind::InvalidInput, "column cpu, row 2: 'fast' is not a float64")
    );
    let null_time = RecordBatch::try_new(
        text_schema.clone(),
        vec![
            Arc::new(StringArray::from(vec![Some("2022-01-01T00:00:00Z"), None])),
            Arc::new(StringArray::from(vec!["1", "2"])),
        ],
    )
    .unwrap();
    let e = lake
        .append("metrics.cpu", vec![null_time], AppendOptions::default())
        .await
        .unwrap_err();
    assert!(e.message().starts_with("column ts, row 2: the time is null"), "{e}");
    let bad_time = RecordBatch::try_new(
        text_schema,
        vec![
            Arc::new(StringArray::from(vec!["yesterday"])),
            Arc::new(StringArray::from(vec!["1"])),
        ],
    )
    .unwrap();
    let e = lake
        .append("metrics.cpu", vec![bad_time], AppendOptions::default())
        .await
        .unwrap_err();
    assert!(
        e.message().starts_with("column ts, row 1: 'yesterday' is not a time"),
        "{e}"
    );
    let list_schema = Arc::new(Schema::new(vec![
        Field::new(
            "ts",
            DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            false,
        ),
        Field::new(
            "tags",
            DataType::List(Arc::new(Field::new("item", DataType::Utf8, true))),
            true,
        ),
    ]));
    let lists = RecordBatch::new_empty(list_schema);
    let e = lake
        .append("metrics.cpu", vec![lists], AppendOptions::default())
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::SchemaMismatch);
    assert!(e.message().starts_with("column tags: type List"), "{e}");
    assert_eq!(
        version(&lake, "metrics.cpu").await,
        before,
        "a failed append must not change the table"
    );
    let e = lake
        .append("metrics.nope", vec![batch(0, 1)], AppendOptions::default())
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotFound);
    let e = lake.sql("SELECT * FROM metrics.nope").await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotFound, "{e}");

    // INSERT goes through the same append path.
    lake.sql("INSERT INTO metrics.cpu (ts, host, cpu) VALUES ('2022-02-01T00:00:00Z', 'z', 1.0)")
        .await
        .unwrap();
    lake.sql(
        "INSERT INTO metrics.cpu SELECT ts + INTERVAL '100 days', host, cpu, mem FROM metrics.cpu WHERE host = 'a'",
    )
    .await
    .unwrap();
    // INSERT converts with the same checks as an append.
    let before_insert = version(&lake, "metrics.cpu").await;
    let e = lake
        .sql("INSERT INTO metrics.cpu (ts, host, mem) SELECT ts, host, cpu + 0.25 FROM metrics.cpu WHERE host = 'b'")
        .await
        .unwrap_err();
    assert!(e.message().contains("cannot be stored as int32 without loss"), "{e}");
    let e = lake
        .sql("INSERT INTO metrics.cpu (ts, host) SELECT host AS t, host FROM metrics.cpu")
        .await
        .unwrap_err();
    assert!(e.message().contains("is not a time"), "{e}");
    assert_eq!(version(&lake, "metrics.cpu").await, before_insert);
    let total = count(&lake, "SELECT count(*) FROM metrics.cpu").await;
    assert_eq!(total, 162 + 1 + 1 + 1 + 55);

    // Time travel: by snapshot id and by commit time, in the Trino and Spark spellings.
    assert_eq!(
        count(
            &lake,
            &format!("SELECT count(*) FROM metrics.cpu FOR VERSION AS OF {first}")
        )
        .await,
        90
    );
    assert_eq!(
        count(
            &lake,
            &format!("SELECT count(*) FROM metrics.cpu VERSION AS OF {first}")
        )
        .await,
        90
    );
    let history = lake.history("metrics.cpu").await.unwrap();
    assert_eq!(history.len(), 6);
    assert_eq!(history[0].batch_id.as_deref(), Some("b1"));
    assert_eq!(history[0].note.as_deref(), Some("first"));
    for w in history.windows(2) {
        assert_eq!(w[1].parent_id, Some(w[0].snapshot_id), "history is linear");
    }
    let t = chrono_like(history[1].timestamp_ms);
    assert_eq!(
        count(
            &lake,
            &format!("SELECT count(*) FROM metrics.cpu FOR TIMESTAMP AS OF '{t}'")
        )
        .await,
        162
    );
    let e = lake
        .sql("SELECT count(*) FROM metrics.cpu FOR VERSION AS OF 12345")
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotFound);
    let e = lake
        .sql("SELECT count(*) FROM metrics.cpu FOR TIMESTAMP AS OF '1999-01-01T00:00:00Z'")
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotFound);

    // SHOW TABLES and information_schema.
    let r = lake
        .sql("SELECT table_schema, table_name FROM information_schema.tables WHERE table_schema = 'metrics'")
        .await
        .unwrap();
    assert_eq!(r.num_rows(), 1);
    lake.sql("SHOW TABLES").await.unwrap();

    // A plain table.
    let plain = Arc::new(Schema::new(vec![
        Field::new("k", DataType::Utf8, true),
        Field::new("v", DataType::Int64, true),
    ]));
    lake.create_table("ref", &plain, &TableContract::default())
        .await
        .unwrap();
    let b = RecordBatch::try_new(
        plain,
        vec![
            Arc::new(StringArray::from(vec!["x"])),
            Arc::new(Int64Array::from(vec![1])),
        ],
    )
    .unwrap();
    lake.append("default.ref", vec![b], AppendOptions::default())
        .await
        .unwrap();
    assert_eq!(count(&lake, "SELECT count(*) FROM ref").await, 1);

    if !matches!(backend, Backend::Memory) {
        assert_readers_agree(&lake, &backend, "metrics", "cpu").await;
        assert_readers_agree(&lake, &backend, "default", "ref").await;
    }

    lake.drop_table("ref").await.unwrap();
    assert_eq!(lake.drop_table("ref").await.unwrap_err().kind(), ErrorKind::NotFound);
    assert_eq!(lake.tables().await.unwrap().len(), 1);
}

/// RFC 3339 text of a time in ms.
fn chrono_like(ms: i64) -> String {
    let secs = ms.div_euclid(1000);
    let d = secs.div_euclid(86_400);
    let s = secs.rem_euclid(86_400);
    // Civil date from days since the epoch (H. Hinnant's algorithm).
    let z = d + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + if month <= 2 { 1 } else { 0 };
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        s / 3600,
        s % 3600 / 60,
        s % 60,
        ms.rem_euclid(1000)
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_local_disk() {
    suite(Backend::local()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_s3() {
    suite(Backend::s3()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_memory() {
    suite(Backend::Memory).await;
}

#[tokio::test]
async fn unsupported_lake_urls_are_refused() {
    let e = Lake::open("ftp://host/lake", &Default::default()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidInput);
    assert!(e.message().contains("ftp:// is not supported"), "{e}");
}

/// Every query on an empty table, or whose filters prune every file, answers with no rows
/// (sorted and per-series plans included).
#[tokio::test]
async fn empty_tables_and_fully_pruned_scans_answer() {
    let lake = varve_testkit::Backend::Memory.open();
    let schema = std::sync::Arc::new(arrow::datatypes::Schema::new(vec![
        arrow::datatypes::Field::new(
            "ts",
            arrow::datatypes::DataType::Timestamp(arrow::datatypes::TimeUnit::Microsecond, Some("UTC".into())),
            false,
        ),
        arrow::datatypes::Field::new("host", arrow::datatypes::DataType::Utf8, true),
        arrow::datatypes::Field::new("v", arrow::datatypes::DataType::Float64, true),
    ]));
    lake.create_table(
        "e",
        &schema,
        &varve::TableContract::time_series("ts").with_series_key(["host"]),
    )
    .await
    .unwrap();
    let queries = [
        "SELECT * FROM e ORDER BY ts DESC LIMIT 1",
        "SELECT host, max(v) FROM e GROUP BY host ORDER BY host",
        "SELECT * FROM e WHERE host = 'a' ORDER BY ts",
    ];
    for q in queries {
        let r = lake.sql(q).await.unwrap_or_else(|e| panic!("{q}: {e}"));
        assert_eq!(r.batches.iter().map(|b| b.num_rows()).sum::<usize>(), 0, "{q}");
    }
    assert_eq!(
        lake.latest("e")
            .await
            .unwrap()
            .batches
            .iter()
            .map(|b| b.num_rows())
            .sum::<usize>(),
        0
    );
    lake.sql("INSERT INTO e VALUES ('2024-01-01T00:00:00Z', 'a', 1.0)")
        .await
        .unwrap();
    let r = lake
        .sql("SELECT * FROM e WHERE ts > '2100-01-01T00:00:00Z' ORDER BY ts DESC LIMIT 1")
        .await
        .unwrap();
    assert_eq!(
        r.batches.iter().map(|b| b.num_rows()).sum::<usize>(),
        0,
        "every file pruned"
    );
}
