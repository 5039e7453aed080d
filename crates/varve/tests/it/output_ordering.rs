//! Scans declare the order of their files' rows (series key, time) where each partition reads one
//! unit (`query::output_ordering`): DataFusion then skips sorts the files already satisfy, and the
//! answers stay in the order asked for, on random data against a plain sort.

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, Int64Array, RecordBatch, StringArray, TimestampMicrosecondArray};
use arrow::datatypes::{DataType, Field, Int64Type, Schema, TimeUnit};
use varve::{AppendOptions, Lake, TableContract};
use varve_testkit::{rows, Backend};

const T0: i64 = 1_700_000_000_000_000;

/// A small deterministic generator (the tests need no randomness beyond a fixed seed).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) % n
    }
}

/// `n` rows of random hosts (some NULL) and times within an hour, in no order: (host, ts µs, v).
fn random_rows(seed: u64, n: usize) -> Vec<(Option<String>, i64, i64)> {
    random_rows_from(seed, n, T0)
}

/// As [`random_rows`], within the hour from `start` (µs).
fn random_rows_from(seed: u64, n: usize, start: i64) -> Vec<(Option<String>, i64, i64)> {
    let mut r = Lcg(seed);
    (0..n)
        .map(|i| {
            let host = match r.next(10) {
                0 => None,
                h => Some(format!("h{h}")),
            };
            (
                host,
                start + r.next(3_600) as i64 * 1_000_000,
                seed as i64 * 1_000_000 + i as i64,
            )
        })
        .collect()
}

fn batch(rows: &[(Option<String>, i64, i64)]) -> RecordBatch {
    let schema = Arc::new(Schema::new(vec![
        Field::new(
            "ts",
            DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            false,
        ),
        Field::new("host", DataType::Utf8, true),
        Field::new("v", DataType::Int64, false),
    ]));
    let columns: Vec<ArrayRef> = vec![
        Arc::new(TimestampMicrosecondArray::from(rows.iter().map(|r| r.1).collect::<Vec<_>>()).with_timezone("UTC")),
        Arc::new(StringArray::from(rows.iter().map(|r| r.0.clone()).collect::<Vec<_>>())),
        Arc::new(Int64Array::from(rows.iter().map(|r| r.2).collect::<Vec<_>>())),
    ];
    RecordBatch::try_new(schema, columns).unwrap()
}

async fn table(lake: &Lake, name: &str, appends: &[Vec<(Option<String>, i64, i64)>]) {
    let contract = TableContract::time_series("ts").with_series_key(["host"]);
    lake.create_table(name, &batch(&appends[0]).schema(), &contract)
        .await
        .unwrap();
    let props = std::collections::HashMap::from([("varve.auto-maintain".to_string(), "false".to_string())]);
    lake.set_properties(name, &props, &[]).await.unwrap();
    for a in appends {
        lake.append(name, vec![batch(a)], AppendOptions::default())
            .await
            .unwrap();
    }
}

/// The answer's (host, t, v) rows in the order they came.
fn in_order(batches: &[RecordBatch]) -> Vec<(Option<String>, i64, i64)> {
    let mut out = vec![];
    for b in batches {
        let host = b.column_by_name("host").unwrap().as_string::<i32>();
        let t = b.column_by_name("t").unwrap().as_primitive::<Int64Type>();
        let v = b.column_by_name("v").unwrap().as_primitive::<Int64Type>();
        for i in 0..b.num_rows() {
            let h = (!host.is_null(i)).then(|| host.value(i).to_string());
            out.push((h, t.value(i), v.value(i)));
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread")]
async fn a_sort_the_files_satisfy_is_skipped_and_answers_stay_ordered() {
    let backend = Backend::local();
    let lake = backend.open();
    // One file, and many files (five appends over the same hour).
    let one = vec![random_rows(1, 3_000)];
    let many: Vec<_> = (2..7).map(|s| random_rows(s, 600)).collect();
    // Two files a week apart: a partition each, both declaring their order.
    let two = vec![random_rows(7, 800), random_rows_from(8, 800, T0 + 7 * 86_400_000_000)];
    table(&lake, "m.one", &one).await;
    table(&lake, "m.many", &many).await;
    table(&lake, "m.two", &two).await;
    let plan = lake.sql("EXPLAIN SELECT host, ts FROM m.two").await.unwrap();
    let plan = rows(&plan.batches).concat().join("\n");
    assert!(plan.contains("2 groups"), "{plan}");
    assert!(
        plan.contains("output_ordering=[host@0 ASC, ts@1 ASC NULLS LAST]"),
        "{plan}"
    );

    // One series' rows by time: the file is sorted by (host, ts) and host is fixed.
    let plan = lake
        .sql("EXPLAIN SELECT ts, v FROM m.one WHERE host = 'h3' ORDER BY ts")
        .await
        .unwrap();
    let plan = rows(&plan.batches).concat().join("\n");
    assert!(!plan.contains("SortExec"), "{plan}");
    assert!(plan.contains("output_ordering=[ts@0 ASC NULLS LAST]"), "{plan}");
    // Without the filter: (host, ts), hosts with NULLs first as the files hold them.
    let plan = lake.sql("EXPLAIN SELECT host, ts FROM m.one").await.unwrap();
    let plan = rows(&plan.batches).concat().join("\n");
    assert!(
        plan.contains("output_ordering=[host@0 ASC, ts@1 ASC NULLS LAST]"),
        "{plan}"
    );

    for (name, data) in [
        ("m.one", one.concat()),
        ("m.many", many.concat()),
        ("m.two", two.concat()),
    ] {
        for (filter, order, limit) in [
            ("", "host, ts", ""),
            ("", "host, ts", " LIMIT 37"),
            ("WHERE host = 'h3'", "ts", ""),
            ("WHERE host = 'h3'", "ts", " LIMIT 5"),
            ("WHERE host IS NULL", "ts", ""),
            ("WHERE host >= 'h5'", "host, ts", ""),
            ("", "host DESC, ts DESC", " LIMIT 20"),
        ] {
            let sql =
                format!("SELECT host, arrow_cast(ts, 'Int64') AS t, v FROM {name} {filter} ORDER BY {order}, v{limit}");
            let got = in_order(&lake.sql(&sql).await.unwrap().batches);
            // The reference: a plain sort of the rows the filter keeps.
            let mut want: Vec<_> = data
                .iter()
                .filter(|r| match filter {
                    "WHERE host = 'h3'" => r.0.as_deref() == Some("h3"),
                    "WHERE host IS NULL" => r.0.is_none(),
                    "WHERE host >= 'h5'" => r.0.as_deref().is_some_and(|h| h >= "h5"),
                    _ => true,
                })
                .cloned()
                .collect();
            // DataFusion: ASC is NULLS LAST, DESC is NULLS FIRST.
            let key = |r: &(Option<String>, i64, i64)| (r.0.is_none(), r.0.clone(), r.1, r.2);
            want.sort_by_key(key);
            if order.contains("DESC") {
                use std::cmp::Reverse;
                want.sort_by_key(|r| (r.0.is_some(), Reverse(r.0.clone()), Reverse(r.1), r.2));
            }
            if let Some(k) = limit.strip_prefix(" LIMIT ") {
                want.truncate(k.parse().unwrap());
            }
            assert_eq!(got, want, "{sql}");
        }
    }
}
