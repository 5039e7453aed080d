//! Schema evolution by field id (ALTER TABLE ADD / RENAME / DROP COLUMN, widening), each step read
//! by Varve, DuckDB and PyIceberg: renamed columns read under the new name in old files, a column
//! dropped and added again is a new field that old rows do not fill, widened columns read as the
//! wider type, and compaction afterwards keeps every value.

use std::sync::Arc;

use arrow::array::{Float32Array, Int32Array, RecordBatch, StringArray, TimestampMicrosecondArray};
use arrow::datatypes::{DataType, Field, Schema, TimeUnit};
use varve::{AppendOptions, Lake, MaintainOptions, TableContract};
use varve_testkit::{assert_readers_agree, Backend};

const DAY_US: i64 = 86_400_000_000;

async fn sql(lake: &Lake, q: &str) -> Vec<Vec<String>> {
    let r = lake.sql(q).await.unwrap_or_else(|e| panic!("{q}: {e}"));
    varve_testkit::rows(&r.batches)
}

async fn err(lake: &Lake, q: &str) -> String {
    lake.sql(q).await.expect_err(q).to_string()
}

async fn evolution(backend: Backend) {
    let lake = backend.open();
    let schema = Arc::new(Schema::new(vec![
        Field::new(
            "ts",
            DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            false,
        ),
        Field::new("host", DataType::Utf8, true),
        Field::new("temp", DataType::Float32, true),
        Field::new("n", DataType::Int32, true),
    ]));
    lake.create_table(
        "e",
        &schema,
        &TableContract::time_series("ts").with_series_key(["host"]),
    )
    .await
    .unwrap();
    let b = RecordBatch::try_new(
        schema.clone(),
        vec![
            Arc::new(TimestampMicrosecondArray::from(vec![19_000 * DAY_US, 19_001 * DAY_US]).with_timezone("UTC")),
            Arc::new(StringArray::from(vec!["a", "b"])),
            Arc::new(Float32Array::from(vec![20.5, 30.5])),
            Arc::new(Int32Array::from(vec![1, 2])),
        ],
    )
    .unwrap();
    lake.append("e", vec![b], AppendOptions::default()).await.unwrap();

    // ADD COLUMN: old rows read NULL.
    assert_eq!(
        sql(&lake, "ALTER TABLE e ADD COLUMN humidity DOUBLE").await,
        vec![vec!["altered table default.e".to_string()]]
    );
    lake.sql("INSERT INTO e (ts, host, temp, n, humidity) VALUES ('2022-01-08T01:00:00Z', 'c', 40.5, 3, 0.25)")
        .await
        .unwrap();
    assert_eq!(
        sql(&lake, "SELECT host, humidity FROM e ORDER BY host").await,
        [["a", "NULL"], ["b", "NULL"], ["c", "0.25"]]
    );
    assert_readers_agree(&lake, &backend, "default", "e").await;

    // RENAME COLUMN: old files read under the new name, filters included.
    sql(&lake, "ALTER TABLE e RENAME COLUMN temp TO temperature").await;
    assert_eq!(
        sql(
            &lake,
            "SELECT host, temperature FROM e WHERE temperature > 25 ORDER BY host"
        )
        .await,
        [["b", "30.5"], ["c", "40.5"]]
    );
    assert!(err(&lake, "SELECT temp FROM e").await.contains("temp"));
    assert_readers_agree(&lake, &backend, "default", "e").await;

    // DROP COLUMN, then ADD it again: a new field, which old rows do not fill.
    sql(&lake, "ALTER TABLE e DROP COLUMN n").await;
    assert!(err(&lake, "SELECT n FROM e").await.contains("n"));
    assert_readers_agree(&lake, &backend, "default", "e").await;
    sql(&lake, "ALTER TABLE e ADD COLUMN n BIGINT").await;
    lake.sql("INSERT INTO e (ts, host, temperature, n) VALUES ('2022-01-08T02:00:00Z', 'd', 50.5, 4)")
        .await
        .unwrap();
    assert_eq!(
        sql(&lake, "SELECT host, n FROM e ORDER BY host").await,
        [["a", "NULL"], ["b", "NULL"], ["c", "NULL"], ["d", "4"]]
    );
    assert_readers_agree(&lake, &backend, "default", "e").await;

    // Widening: float32 to float64.
    sql(&lake, "ALTER TABLE e ALTER COLUMN temperature TYPE DOUBLE").await;
    let d = lake.describe("e").await.unwrap();
    assert_eq!(
        d.schema.field_with_name("temperature").unwrap().data_type(),
        &DataType::Float64
    );
    assert_eq!(
        sql(
            &lake,
            "SELECT host, temperature FROM e WHERE temperature < 45 ORDER BY host"
        )
        .await,
        [["a", "20.5"], ["b", "30.5"], ["c", "40.5"]]
    );
    assert_readers_agree(&lake, &backend, "default", "e").await;

    // Refused changes name the column and leave the table as it is.
    let version = lake.describe("e").await.unwrap().metadata_version;
    assert!(err(&lake, "ALTER TABLE e DROP COLUMN ts").await.contains("time column"));
    assert!(err(&lake, "ALTER TABLE e DROP COLUMN host")
        .await
        .contains("series key"));
    assert!(err(&lake, "ALTER TABLE e RENAME COLUMN host TO h")
        .await
        .contains("series key"));
    assert!(err(&lake, "ALTER TABLE e ADD COLUMN humidity DOUBLE")
        .await
        .contains("exists already"));
    assert!(err(&lake, "ALTER TABLE e DROP COLUMN nope")
        .await
        .contains("does not exist"));
    assert!(err(&lake, "ALTER TABLE e ALTER COLUMN humidity TYPE INT")
        .await
        .contains("widening"));
    assert_eq!(lake.describe("e").await.unwrap().metadata_version, version);

    // Compaction reads every file by field id: the same rows after it.
    let before = sql(&lake, "SELECT * FROM e ORDER BY host").await;
    let mut props = std::collections::HashMap::new();
    props.insert("varve.compact-min-files".to_string(), "1".to_string());
    lake.set_properties("e", &props, &[]).await.unwrap();
    let r = lake.maintain("e", &MaintainOptions::default()).await.unwrap();
    assert!(r.partitions_compacted >= 1, "{r:?}");
    assert_eq!(sql(&lake, "SELECT * FROM e ORDER BY host").await, before);
    assert_readers_agree(&lake, &backend, "default", "e").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn schema_evolution_on_local_disk() {
    evolution(Backend::local()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn schema_evolution_on_s3() {
    evolution(Backend::s3()).await;
}
