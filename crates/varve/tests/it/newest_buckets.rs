//! Newest time buckets first (`query::newest_buckets`): `GROUP BY time_bucket(...) ORDER BY ...
//! DESC LIMIT k` reads only the newest buckets' rows, and answers exactly as the same query that
//! reads every row (the plan with a filter, which is never narrowed), on random data spread over
//! many files with late rows, before and after compaction, for fixed widths, calendar units, time
//! zones and origins.

use std::sync::Arc;

use arrow::array::{ArrayRef, Float64Array, RecordBatch, StringArray, TimestampMicrosecondArray};
use varve::{AppendOptions, Lake, MaintainOptions};
use varve_testkit::{Backend, Rng};

use crate::compaction::rows_of;
use crate::maintain::{create, schema};

const MINUTE_US: i64 = 60_000_000;
const HOUR_US: i64 = 60 * MINUTE_US;
/// 2024-03-28T00:00:00Z: the 16 commits' windows reach 2024-04-01, over the spring-forward night
/// in Berlin (2024-03-31) and a month's end.
const T0: i64 = 1_711_584_000_000_000;

/// `rows` rows in one commit's window: mostly within 6 hours after `from`, some late ones up to
/// 12 days before it.
fn batch(rng: &mut Rng, from: i64, rows: usize) -> RecordBatch {
    let (mut ts, mut host, mut v) = (vec![], vec![], vec![]);
    for _ in 0..rows {
        let t = match rng.next(10) {
            0 => from - rng.next(12 * 24 * 60) as i64 * MINUTE_US,
            _ => from + rng.next(6 * 60 * 60) as i64 * 1_000_000,
        };
        ts.push(t);
        host.push(match rng.next(5) {
            4 => None,
            h => Some(format!("h{h}")),
        });
        v.push((rng.next(8) != 0).then(|| rng.next(1000) as f64 / 4.0));
    }
    let columns: Vec<ArrayRef> = vec![
        Arc::new(TimestampMicrosecondArray::from(ts).with_timezone("UTC")),
        Arc::new(StringArray::from(host)),
        Arc::new(Float64Array::from(v)),
    ];
    RecordBatch::try_new(schema(), columns).unwrap()
}

/// The queries, `{k}` for the limit and `{w}` for where a filter goes.
const QUERIES: &[&str] = &[
    "SELECT time_bucket(INTERVAL '1 hour', ts) AS b, count(*) AS c, sum(v) AS s FROM m {w} GROUP BY b ORDER BY b DESC LIMIT {k}",
    "SELECT time_bucket(INTERVAL '15 minutes', ts) AS b, host, count(*) AS c, max(v) AS x FROM m {w} \
     GROUP BY 1, 2 ORDER BY 1 DESC, 2 LIMIT {k}",
    "SELECT time_bucket(INTERVAL '1 day', ts, 'Europe/Berlin') AS d, count(*) AS c, min(ts) AS first FROM m {w} \
     GROUP BY d ORDER BY d DESC LIMIT {k}",
    "SELECT time_bucket(INTERVAL '1 day', ts, 'Europe/Berlin') AT TIME ZONE 'UTC' AS d, count(*) AS c FROM m {w} \
     GROUP BY 1 ORDER BY 1 DESC LIMIT {k}",
    "SELECT time_bucket(INTERVAL '1 month', ts) AS mo, count(*) AS c FROM m {w} GROUP BY mo ORDER BY mo DESC LIMIT {k}",
    "SELECT time_bucket(INTERVAL '7 days', ts) AS wk, host, avg(v) AS a FROM m {w} GROUP BY wk, host \
     ORDER BY wk DESC, host NULLS FIRST LIMIT {k}",
    "SELECT time_bucket(INTERVAL '1 hour', ts, TIMESTAMP '2000-01-01 00:20:00Z') AS b, count(*) AS c FROM m {w} \
     GROUP BY b ORDER BY b DESC LIMIT {k}",
    "SELECT b, c FROM (SELECT time_bucket(INTERVAL '2 hours', ts) AS b, count(*) AS c FROM m {w} GROUP BY b) t \
     ORDER BY b DESC LIMIT {k}",
];

/// The EXPLAIN note of `sql`'s scan.
async fn note(lake: &Lake, sql: &str) -> String {
    let explain = rows_of(lake, &format!("EXPLAIN {sql}")).await;
    explain
        .into_iter()
        .find(|l| l.starts_with("varve_pruning"))
        .unwrap_or_else(|| panic!("{sql}: no scan note"))
}

async fn check_all(lake: &Lake, rng: &mut Rng, when: &str) -> usize {
    let mut narrowed = 0;
    for q in QUERIES {
        for k in [1, 2, 3, 1 + rng.next(12) as usize] {
            let sql = q.replace("{k}", &k.to_string());
            let plain = sql.replace("{w}", "");
            // A filter keeps the scan whole: the reference.
            let reference = sql.replace("{w}", "WHERE ts IS NOT NULL");
            let (a, b) = (rows_of(lake, &plain).await, rows_of(lake, &reference).await);
            assert!(!a.is_empty() && a.len() <= k, "{when}: {plain}");
            assert_eq!(a, b, "{when}: {plain}");
            let n = note(lake, &plain).await;
            if n.contains("newest time buckets") {
                narrowed += 1;
            }
            assert!(
                !note(lake, &reference).await.contains("newest time buckets"),
                "{reference}"
            );
        }
    }
    narrowed
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn newest_buckets_answer_as_a_full_scan() {
    let backend = Backend::local();
    let lake = backend.open();
    // Small pages, and no compaction until asked.
    create(
        &lake,
        "m",
        &[("varve.page-rows", "1000"), ("varve.auto-maintain", "false")],
    )
    .await;
    let mut rng = Rng(0x6e65_7773_6275_636b);
    // 16 commits, 6 hours apart, with late rows: files with narrow and wide time bounds.
    for i in 0..16 {
        let b = batch(&mut rng, T0 + i * 6 * HOUR_US, 2000);
        lake.append("m", vec![b], AppendOptions::default()).await.unwrap();
    }
    let before = check_all(&lake, &mut rng, "before maintenance").await;
    // The newest hour reads fewer files than there are.
    let n = note(
        &lake,
        "SELECT time_bucket(INTERVAL '1 hour', ts) AS b, count(*) FROM m GROUP BY b ORDER BY b DESC LIMIT 2",
    )
    .await;
    assert!(n.contains("newest time buckets"), "{n}");
    let (read, total) = files(&n);
    assert!(read < total, "{n}");
    lake.maintain("m", &MaintainOptions::default()).await.unwrap();
    let after = check_all(&lake, &mut rng, "after maintenance").await;
    // After compaction each day's file spans its whole day (the file bounds show its first and
    // last hour only): the 5 newest hours are found from the page bounds of the newest day's
    // footer, which the queries above read, and only that file is read.
    let n = note(
        &lake,
        "SELECT time_bucket(INTERVAL '1 hour', ts) AS b, count(*) FROM m GROUP BY b ORDER BY b DESC LIMIT 5",
    )
    .await;
    assert!(n.contains("newest time buckets") && files(&n).0 == 1, "{n}");
    // Most shapes are narrowed (a bucket of another type than the time column, as a zoned day
    // shown in UTC is, is not).
    assert!(
        before >= QUERIES.len() * 2 && after >= QUERIES.len() * 2,
        "{before}, {after}"
    );
    // Not narrowed: HAVING (it may drop buckets), ascending order, a filter.
    for sql in [
        "SELECT time_bucket(INTERVAL '1 hour', ts) AS b, count(*) AS c FROM m GROUP BY b HAVING count(*) > 5 \
         ORDER BY b DESC LIMIT 3",
        "SELECT time_bucket(INTERVAL '1 hour', ts) AS b, count(*) AS c FROM m GROUP BY b ORDER BY b LIMIT 3",
        "SELECT time_bucket(INTERVAL '1 hour', ts) AS b, count(*) AS c FROM m WHERE host = 'h1' GROUP BY b \
         ORDER BY b DESC LIMIT 3",
        "SELECT host, count(*) AS c FROM m GROUP BY host ORDER BY host DESC LIMIT 3",
    ] {
        assert!(!note(&lake, sql).await.contains("newest time buckets"), "{sql}");
    }
}

/// (files read, files in the snapshot) from a scan note.
fn files(note: &str) -> (usize, usize) {
    let words: Vec<&str> = note.split_whitespace().collect();
    let at = words.iter().position(|w| *w == "of").expect("n of m");
    (words[at - 1].parse().unwrap(), words[at + 1].parse().unwrap())
}
