//! Small data files read from their decoded rows (`query::small_files`): a scan of more files than
//! partitions reads the small ones from memory. The answers equal those of a lake handle that
//! reads every file with the Parquet scan (`cache-decoded-bytes=0`), on random data, with filters,
//! top-k, aggregates and projections, a mix of small and large files, and across schema changes
//! (held rows of the old schema are read again), and under a top-k, where they are read by one
//! partition with the Parquet scan (`query::chain`). On local disk and S3.

use std::collections::HashMap;
use std::sync::Arc;

use arrow::array::{ArrayRef, Float64Array, RecordBatch, StringArray, TimestampMicrosecondArray};
use arrow::datatypes::{DataType, Field, Schema, TimeUnit};
use varve::{AppendOptions, Lake, TableContract};
use varve_testkit::{rows, Backend, Rng};

const T0: i64 = 1_700_000_000_000_000;

/// `n` rows of random hosts (some NULL), times within a day and values (some NULL).
fn random_batch(r: &mut Rng, n: usize) -> RecordBatch {
    let schema = Arc::new(Schema::new(vec![
        Field::new(
            "ts",
            DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            false,
        ),
        Field::new("host", DataType::Utf8, true),
        Field::new("v", DataType::Float64, true),
    ]));
    let host: Vec<Option<String>> = (0..n)
        .map(|_| match r.next(12) {
            0 => None,
            h => Some(format!("h{h}")),
        })
        .collect();
    let ts: Vec<i64> = (0..n).map(|_| T0 + r.next(86_400_000) as i64 * 1_000).collect();
    let v: Vec<Option<f64>> = (0..n)
        .map(|_| match r.next(20) {
            0 => None,
            x => Some(x as f64 * 0.5),
        })
        .collect();
    let columns: Vec<ArrayRef> = vec![
        Arc::new(TimestampMicrosecondArray::from(ts).with_timezone("UTC")),
        Arc::new(StringArray::from(host)),
        Arc::new(Float64Array::from(v)),
    ];
    RecordBatch::try_new(schema, columns).unwrap()
}

async fn answer(lake: &Lake, sql: &str, ordered: bool) -> Vec<Vec<String>> {
    let mut got = rows(&lake.sql(sql).await.unwrap_or_else(|e| panic!("{sql}: {e}")).batches);
    if !ordered {
        got.sort();
    }
    got
}

async fn explain(lake: &Lake, sql: &str) -> String {
    rows(&lake.sql(&format!("EXPLAIN {sql}")).await.unwrap().batches)
        .concat()
        .join("\n")
}

const QUERIES: &[(&str, bool)] = &[
    // One host first, while no file's rows are held: the files' access plans skip the row groups
    // without it, and the rows held must still be whole.
    ("SELECT count(*), sum(v) FROM s.t WHERE host = 'h7'", false),
    ("SELECT count(*), count(v), sum(v), min(ts), max(ts) FROM s.t", false),
    ("SELECT host, count(*), sum(v) FROM s.t GROUP BY host", false),
    ("SELECT ts, v FROM s.t WHERE host = 'h3' ORDER BY ts DESC, v LIMIT 10", true),
    ("SELECT host, ts, v FROM s.t ORDER BY ts DESC, host, v LIMIT 25", true),
    ("SELECT host, ts, v FROM s.t ORDER BY ts, host, v LIMIT 25", true),
    ("SELECT host, ts FROM s.t WHERE host IS NULL AND v > 5", false),
    (
        "SELECT count(*), avg(v) FROM s.t WHERE ts >= TIMESTAMP '2023-11-15T00:00:00Z' AND ts < TIMESTAMP '2023-11-15T03:00:00Z'",
        false,
    ),
    ("SELECT v FROM s.t WHERE host IN ('h1', 'h2') AND v IS NULL", false),
    ("SELECT host, max(ts) FROM s.t GROUP BY host", false),
    ("SELECT count(*) FROM (SELECT * FROM s.t LIMIT 5)", false),
    ("SELECT host, count(*) FROM s.t GROUP BY host", false),
];

async fn same_answers(lake: &Lake, parquet_only: &Lake, queries: &[(&str, bool)]) {
    for (sql, ordered) in queries {
        let got = answer(lake, sql, *ordered).await;
        let want = answer(parquet_only, sql, *ordered).await;
        assert_eq!(got, want, "{sql}");
    }
}

async fn small_files(backend: Backend) {
    let lake = backend.open();
    let mut opts = backend.options();
    opts.insert("cache-decoded-bytes".into(), "0".into());
    // (It sees the other handle's commits at once.)
    opts.insert("version-check-interval".into(), "0s".into());
    let parquet_only = Lake::open(&backend.url(), &opts).unwrap();
    let mut r = Rng(7);
    let first = random_batch(&mut r, 300);
    let contract = TableContract::time_series("ts").with_series_key(["host"]);
    lake.create_table("s.t", &first.schema(), &contract).await.unwrap();
    // Row groups of 100 rows, so that a filter on the series key rules some out.
    let props = HashMap::from([
        ("varve.auto-maintain".to_string(), "false".to_string()),
        ("varve.row-group-rows".to_string(), "100".to_string()),
    ]);
    lake.set_properties("s.t", &props, &[]).await.unwrap();
    // One large file (more rows than a small one has), then twelve small ones.
    lake.append("s.t", vec![random_batch(&mut r, 20_000)], AppendOptions::default())
        .await
        .unwrap();
    lake.append("s.t", vec![first], AppendOptions::default()).await.unwrap();
    for _ in 0..11 {
        let n = 1 + r.next(400) as usize;
        lake.append("s.t", vec![random_batch(&mut r, n)], AppendOptions::default())
            .await
            .unwrap();
    }
    let plan = explain(&lake, "SELECT count(*) FROM s.t").await;
    // (Each append's rows span two days: two partitions, two files; of the large append's, the
    // one of the first day's 1h47m is small too.)
    assert!(
        plan.contains("26 of 26 data files read")
            && plan.contains("25 small files of them read from their decoded rows"),
        "{plan}"
    );
    let plan = explain(&parquet_only, "SELECT count(*) FROM s.t").await;
    assert!(!plan.contains("decoded rows"), "{plan}");
    // Twice: rows read from the files, then rows held.
    same_answers(&lake, &parquet_only, QUERIES).await;
    same_answers(&lake, &parquet_only, QUERIES).await;
    // Under a top-k by time, the small files' rows and the scan of the one large file are read
    // by one partition (`query::chain`); the answers above are the same. (On local disk, with
    // two or more partitions, the large file is cut into ranges for them, `query::work_units`,
    // and a union stays.)
    if let Backend::S3 { .. } = &backend {
        let plan = explain(
            &lake,
            "SELECT ts, v FROM s.t WHERE host = 'h3' ORDER BY ts DESC, v LIMIT 10",
        )
        .await;
        assert!(plan.contains("ChainExec: 2 inputs in one partition"), "{plan}");
    }
    // A statement's own rows in memory (VALUES, whose columns are not the table's: no field ids,
    // not null) beside the table's scan under a top-k: the newest rows of both. (`rows` sorts
    // the rows it prints: the top-k's are the last of all.)
    let both = "SELECT ts, v FROM s.t WHERE host = 'h5' UNION ALL SELECT * FROM \
                (VALUES (TIMESTAMP '2023-11-15T12:00:00Z', 1.25), (TIMESTAMP '2030-01-01T00:00:00Z', 2.5)) AS x(ts, v)";
    let top = answer(&lake, &format!("{both} ORDER BY ts DESC, v LIMIT 4"), true).await;
    let all = answer(&lake, &format!("{both} ORDER BY ts DESC, v"), true).await;
    assert_eq!(top, all[all.len() - 4..].to_vec());

    // A schema change: held rows were read in the old schema and are read again in the new one.
    lake.sql("ALTER TABLE s.t ADD COLUMN note VARCHAR").await.unwrap();
    lake.sql("ALTER TABLE s.t RENAME COLUMN v TO value").await.unwrap();
    lake.sql("INSERT INTO s.t VALUES (TIMESTAMP '2023-11-15T01:00:00Z', 'h3', 99.5, 'new')")
        .await
        .unwrap();
    let renamed: Vec<(String, bool)> = QUERIES
        .iter()
        .map(|(q, o)| (renamed_v(q), *o))
        .chain([
            (
                "SELECT host, ts, value, note FROM s.t WHERE note IS NOT NULL".to_string(),
                false,
            ),
            ("SELECT count(note), count(*) FROM s.t".to_string(), false),
        ])
        .collect();
    let renamed: Vec<(&str, bool)> = renamed.iter().map(|(q, o)| (q.as_str(), *o)).collect();
    same_answers(&lake, &parquet_only, &renamed).await;
    assert_eq!(
        answer(
            &lake,
            "SELECT count(note), sum(value) FILTER (WHERE note = 'new') FROM s.t",
            false
        )
        .await,
        vec![vec!["1".to_string(), "99.5".to_string()]]
    );
}

/// `q` with the column `v` (a word of its own) named `value`.
fn renamed_v(q: &str) -> String {
    let chars: Vec<char> = q.chars().collect();
    let word = |c: Option<&char>| c.is_some_and(|c| c.is_alphanumeric() || *c == '_');
    let mut out = String::new();
    for (i, c) in chars.iter().enumerate() {
        let alone = *c == 'v' && !word(i.checked_sub(1).and_then(|j| chars.get(j))) && !word(chars.get(i + 1));
        match alone {
            true => out.push_str("value"),
            false => out.push(*c),
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread")]
async fn small_files_from_decoded_rows_on_local_disk() {
    small_files(Backend::local()).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn small_files_from_decoded_rows_on_s3() {
    small_files(Backend::s3()).await;
}
