//! Time-series SQL functions against a plain reference: `first`, `last`, `first_not_null`,
//! `last_not_null`, `vwap`, `delta`, `increase`, `rate` and `twa` on random appends (late rows,
//! repeated times, NULL values) over many files and after compaction, and hand-written cases of
//! their NULL, tie and empty-group rules and of `isfinite`.

use std::collections::BTreeMap;

use varve::{Lake, MaintainOptions};
use varve_testkit::{Backend, Rng};

async fn sql(lake: &Lake, q: &str) -> Vec<Vec<String>> {
    let r = lake.sql(q).await.unwrap_or_else(|e| panic!("{q}: {e}"));
    varve_testkit::rows(&r.batches)
}

/// One row of the reference: (series, time µs, value).
type Row = (String, i64, Option<i64>);

/// The module docs' rules, written plainly: order rows by (time, value) with NULL lowest, take the
/// smallest or the greatest, skipping NULL values for the `_not_null` variants.
fn reference(rows: &[Row], last: bool, skip_nulls: bool) -> BTreeMap<String, Option<i64>> {
    let mut out: BTreeMap<String, Option<(i64, Option<i64>)>> = BTreeMap::new();
    for (s, t, v) in rows {
        let slot = out.entry(s.clone()).or_default();
        if skip_nulls && v.is_none() {
            continue;
        }
        let cand = (*t, *v);
        let better = match slot {
            None => true,
            Some(b) => match last {
                true => cand > *b,
                false => cand < *b,
            },
        };
        if better {
            *slot = Some(cand);
        }
    }
    out.into_iter().map(|(s, b)| (s, b.and_then(|(_, v)| v))).collect()
}

/// The cells of a one-row answer, joined by commas (columns in name order).
async fn one(lake: &Lake, q: &str) -> String {
    sql(lake, q).await.concat().join(",")
}

fn cell(v: Option<i64>) -> String {
    v.map(|v| v.to_string()).unwrap_or_else(|| "NULL".to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn first_and_last_match_a_plain_reference() {
    let backend = Backend::local();
    let lake = backend.open();
    sql(
        &lake,
        "CREATE TABLE m.readings (ts TIMESTAMP NOT NULL, sensor TEXT, v BIGINT) \
         WITH (time_column = 'ts', series_key = 'sensor', partition = 'day')",
    )
    .await;
    let mut g = Rng(0x9e37_79b9_7f4a_7c15);
    let mut all: Vec<Row> = Vec::new();
    // 12 appends, each a file per day it touches: times over three days in random order (late
    // rows into older partitions), few distinct times so that ties across files are common.
    for _ in 0..12 {
        let mut values = Vec::new();
        for _ in 0..40 {
            let s = format!("s{}", g.next(4));
            let t = g.next(3) as i64 * 86_400_000_000 + g.next(6) as i64 * 3_600_000_000;
            let v = match g.next(5) {
                0 => None,
                _ => Some(g.next(7) as i64 - 3),
            };
            values.push(format!(
                "(to_timestamp_micros({t}), '{s}', {})",
                v.map(|v| v.to_string()).unwrap_or_else(|| "NULL".into())
            ));
            all.push((s, t, v));
        }
        sql(&lake, &format!("INSERT INTO m.readings VALUES {}", values.join(", "))).await;
    }
    let q = "SELECT sensor, first(v, ts) AS a, last(v, ts) AS b, first_not_null(v, ts) AS c, \
             last_not_null(v, ts) AS d FROM m.readings GROUP BY sensor";
    let (first, last) = (reference(&all, false, false), reference(&all, true, false));
    let (first_nn, last_nn) = (reference(&all, false, true), reference(&all, true, true));
    let mut want: Vec<Vec<String>> = first
        .keys()
        .map(|s| {
            vec![
                cell(first[s]),
                cell(last[s]),
                cell(first_nn[s]),
                cell(last_nn[s]),
                s.clone(),
            ]
        })
        .collect();
    want.sort();
    assert_eq!(sql(&lake, q).await, want, "over {} appends", 12);

    // The same answers per day (a group by time bucket), and after compaction.
    let per_day = "SELECT sensor, time_bucket(INTERVAL '1 day', ts) AS day, last(v, ts) AS b, \
                   first_not_null(v, ts) AS c FROM m.readings GROUP BY sensor, day";
    let before = sql(&lake, per_day).await;
    let mut want_days = Vec::new();
    for day in 0..3i64 {
        let rows: Vec<Row> = all.iter().filter(|r| r.1 / 86_400_000_000 == day).cloned().collect();
        let (b, c) = (reference(&rows, true, false), reference(&rows, false, true));
        for s in b.keys() {
            want_days.push(vec![
                cell(b[s]),
                cell(c[s]),
                (day * 86_400_000_000).to_string(),
                s.clone(),
            ]);
        }
    }
    want_days.sort();
    assert_eq!(before, want_days);
    lake.maintain("m.readings", &MaintainOptions::default()).await.unwrap();
    assert_eq!(sql(&lake, q).await, want, "after compaction");
    assert_eq!(sql(&lake, per_day).await, want_days, "after compaction");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn first_and_last_rules_for_nulls_ties_and_empty_groups() {
    let backend = Backend::local();
    let lake = backend.open();
    // NULL is a value for first/last, skipped by the _not_null variants.
    assert_eq!(
        one(
            &lake,
            "SELECT last(v, t) FROM (VALUES (1, 10), (NULL, 30), (2, 20)) AS x(v, t)"
        )
        .await,
        "NULL"
    );
    assert_eq!(
        one(
            &lake,
            "SELECT last_not_null(v, t) FROM (VALUES (1, 10), (NULL, 30), (2, 20)) AS x(v, t)"
        )
        .await,
        "2"
    );
    assert_eq!(
        one(&lake, "SELECT first(v, t) FROM (VALUES (NULL, 1), (7, 2)) AS x(v, t)").await,
        "NULL"
    );
    assert_eq!(
        one(
            &lake,
            "SELECT first_not_null(v, t) FROM (VALUES (NULL, 1), (7, 2)) AS x(v, t)"
        )
        .await,
        "7"
    );
    // Rows with a NULL time are ignored.
    assert_eq!(
        one(
            &lake,
            "SELECT last(v, t) AS a, first(v, t) AS b FROM (VALUES (1, 10), (9, NULL)) AS x(v, t)"
        )
        .await,
        "1,1"
    );
    // Ties on time: last takes the greatest value, first the least, NULL below every value.
    assert_eq!(
        one(
            &lake,
            "SELECT last(v, t) AS a, first(v, t) AS b FROM (VALUES (3, 5), (8, 5), (1, 5)) AS x(v, t)"
        )
        .await,
        "8,1"
    );
    assert_eq!(
        one(
            &lake,
            "SELECT last(v, t) AS a, first(v, t) AS b FROM (VALUES (3, 5), (NULL, 5)) AS x(v, t)"
        )
        .await,
        "3,NULL"
    );
    // Strings and timestamps work as values and times.
    assert_eq!(
        one(
            &lake,
            "SELECT last(s, t) AS a, first(s, t) AS b FROM (VALUES ('b', TIMESTAMP '2024-02-29 00:00:00'), \
             ('a', TIMESTAMP '1969-12-31 23:59:59')) AS x(s, t)"
        )
        .await,
        "b,a"
    );
    // A group without a row gives NULL; so does a _not_null over only NULLs.
    assert_eq!(
        one(&lake, "SELECT last(v, t) FROM (VALUES (1, 10)) AS x(v, t) WHERE v > 5").await,
        "NULL"
    );
    assert_eq!(
        one(
            &lake,
            "SELECT last_not_null(v, t) FROM (VALUES (CAST(NULL AS BIGINT), 10)) AS x(v, t)"
        )
        .await,
        "NULL"
    );
    // Wrong arguments: one plain sentence.
    let e = lake.sql("SELECT last(1)").await.unwrap_err().to_string();
    assert!(e.contains("last(value, time) takes 2 arguments, got 1"), "{e}");
    let e = lake.sql("SELECT last(1, 'x')").await.unwrap_err().to_string();
    assert!(e.contains("the second argument must be a timestamp"), "{e}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn vwap_matches_a_plain_reference() {
    let backend = Backend::local();
    let lake = backend.open();
    sql(
        &lake,
        "CREATE TABLE m.trades (ts TIMESTAMP NOT NULL, sym TEXT, price DOUBLE, size BIGINT) \
         WITH (time_column = 'ts', series_key = 'sym', partition = 'day')",
    )
    .await;
    let mut g = Rng(0x2545_f491_4f6c_dd1d);
    // Prices in quarters and whole sizes: every product and sum is exact in a double, so the
    // answer does not depend on the order of the additions and compares as text.
    let mut sums: BTreeMap<String, (f64, f64, u32)> = BTreeMap::new();
    for _ in 0..8 {
        let mut values = Vec::new();
        for _ in 0..30 {
            let s = format!("x{}", g.next(3));
            let t = g.next(2) as i64 * 86_400_000_000 + g.next(1000) as i64 * 1_000_000;
            let p = (g.next(400) as f64 + 100.0) / 4.0;
            let (price, size) = match g.next(8) {
                0 => ("NULL".to_string(), g.next(50).to_string()),
                1 => (p.to_string(), "NULL".to_string()),
                _ => {
                    let size = g.next(50);
                    let e = sums.entry(s.clone()).or_default();
                    (e.0, e.1, e.2) = (e.0 + p * size as f64, e.1 + size as f64, e.2 + 1);
                    (p.to_string(), size.to_string())
                }
            };
            values.push(format!("(to_timestamp_micros({t}), '{s}', {price}, {size})"));
        }
        sql(&lake, &format!("INSERT INTO m.trades VALUES {}", values.join(", "))).await;
    }
    let got = sql(&lake, "SELECT sym, vwap(price, size) AS w FROM m.trades GROUP BY sym").await;
    let mut want: Vec<Vec<String>> = sums
        .iter()
        .map(|(s, (pv, v, n))| {
            let w = match *n > 0 && *v != 0.0 {
                true => (pv / v).to_string(),
                false => "NULL".to_string(),
            };
            vec![s.clone(), w]
        })
        .collect();
    want.sort();
    assert_eq!(got, want);
    lake.maintain("m.trades", &MaintainOptions::default()).await.unwrap();
    let after = sql(&lake, "SELECT sym, vwap(price, size) AS w FROM m.trades GROUP BY sym").await;
    assert_eq!(after, want, "after compaction");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn vwap_and_isfinite_rules() {
    let backend = Backend::local();
    let lake = backend.open();
    // NULL prices or volumes are skipped; a zero or missing volume gives NULL.
    assert_eq!(
        one(
            &lake,
            "SELECT vwap(p, v) FROM (VALUES (10.0, 1), (20.0, 3), (NULL, 5), (99.0, NULL)) AS x(p, v)"
        )
        .await,
        "17.5"
    );
    assert_eq!(
        one(&lake, "SELECT vwap(p, v) FROM (VALUES (10.0, 0)) AS x(p, v)").await,
        "NULL"
    );
    assert_eq!(
        one(
            &lake,
            "SELECT vwap(p, v) FROM (VALUES (10.0, 1)) AS x(p, v) WHERE p > 50"
        )
        .await,
        "NULL"
    );
    let e = lake.sql("SELECT vwap(1)").await.unwrap_err().to_string();
    assert!(e.contains("vwap(price, volume) takes 2 arguments, got 1"), "{e}");
    let e = lake.sql("SELECT vwap('a', 1)").await.unwrap_err().to_string();
    assert!(e.contains("price must be a number"), "{e}");

    assert_eq!(
        sql(
            &lake,
            "SELECT x, isfinite(x) AS f FROM (VALUES (1.5), (CAST('NaN' AS DOUBLE)), (CAST('inf' AS DOUBLE)), \
             (CAST('-inf' AS DOUBLE)), (NULL)) AS t(x)"
        )
        .await,
        vec![
            vec!["NULL".to_string(), "NULL".to_string()],
            vec!["false".to_string(), "-inf".to_string()],
            vec!["false".to_string(), "NaN".to_string()],
            vec!["false".to_string(), "inf".to_string()],
            vec!["true".to_string(), "1.5".to_string()],
        ]
    );
    assert_eq!(
        one(&lake, "SELECT isfinite(TIMESTAMP '2024-02-29 00:00:00')").await,
        "true"
    );
    assert_eq!(one(&lake, "SELECT isfinite(3)").await, "true");
    let e = lake.sql("SELECT isfinite('a')").await.unwrap_err().to_string();
    assert!(e.contains("isfinite(x): x must be a number, date or timestamp"), "{e}");
}

/// `time_bucket(width, ts [, origin])` is `date_bin` under the time-series name: the same bucket
/// for zoned (`AT TIME ZONE`), UTC and naive times, naive and zoned origins, dates and text, before
/// 1970 and on leap days. (Dates and text become timestamps in µs, Varve's unit; date_bin's are ns.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn time_bucket_equals_date_bin() {
    let backend = Backend::local();
    let lake = backend.open();
    let cases = [
        "INTERVAL '1 day', TIMESTAMPTZ '2024-03-31 12:00:00Z' AT TIME ZONE 'Europe/Berlin', TIMESTAMP '2024-01-01 00:00:00'",
        "INTERVAL '1 day', TIMESTAMPTZ '2024-03-31 12:00:00Z' AT TIME ZONE 'Europe/Berlin'",
        "INTERVAL '1 day', TIMESTAMPTZ '2024-03-31 12:00:00Z', TIMESTAMPTZ '2024-01-01 00:00:00+05:00'",
        "INTERVAL '15 minutes', TIMESTAMPTZ '2024-10-27 01:59:00Z' AT TIME ZONE 'America/New_York', \
         TIMESTAMPTZ '2024-01-01 00:05:00Z' AT TIME ZONE 'America/New_York'",
        "INTERVAL '1 day', DATE '2024-02-29'",
        "INTERVAL '1 hour', '2024-02-29 13:30:00'",
        "INTERVAL '1 day', TIMESTAMP '1969-12-31 23:59:59', TIMESTAMP '1900-01-01 00:07:00'",
        "INTERVAL '7 days', TIMESTAMP '1969-07-20 20:17:40', TIMESTAMP '2024-01-01 00:00:00'",
    ];
    for args in cases {
        let q = format!("SELECT time_bucket({args}) AS a, date_bin({args}) AS b");
        let r = lake.sql(&q).await.unwrap_or_else(|e| panic!("{q}: {e}"));
        let a = arrow::util::display::array_value_to_string(r.batches[0].column(0), 0).unwrap();
        let b = arrow::util::display::array_value_to_string(r.batches[0].column(1), 0).unwrap();
        assert_eq!(a, b, "{args}");
    }
}

/// A `TIMESTAMPTZ` literal stays a UTC timestamp and prints with `Z`, as the tables' time
/// columns do (the session's time zone is UTC).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn timestamptz_literals_stay_utc() {
    let backend = Backend::local();
    let lake = backend.open();
    let r = lake
        .sql("SELECT TIMESTAMPTZ '2024-02-29 00:00:00Z' AS a, TIMESTAMPTZ '2024-02-29 01:00:00+01:00' AS b")
        .await
        .unwrap();
    for i in 0..2 {
        let col = r.batches[0].column(i);
        assert!(
            matches!(col.data_type(), arrow::datatypes::DataType::Timestamp(_, Some(tz)) if tz.as_ref() == "UTC"),
            "{:?}",
            col.data_type()
        );
        let text = arrow::util::display::array_value_to_string(col, 0).unwrap();
        assert_eq!(text, "2024-02-29T00:00:00Z");
    }
}

/// The plain reference of `delta`, `increase`, `rate` and `twa` (step and linear): a group's
/// samples sorted by (time, value), then the definitions in docs/sql.md, written again here.
fn samples_reference(mut s: Vec<(i64, i64)>) -> [Option<f64>; 5] {
    s.sort();
    let n = s.len();
    if n == 0 {
        return [None; 5];
    }
    let mut inc = 0.0;
    for w in s.windows(2) {
        inc += if w[1].1 < w[0].1 { w[1].1 } else { w[1].1 - w[0].1 } as f64;
    }
    let span = (s[n - 1].0 - s[0].0) as f64;
    let (mut step, mut lin) = (0.0, 0.0);
    for w in s.windows(2) {
        let dt = (w[1].0 - w[0].0) as f64;
        step += w[0].1 as f64 * dt;
        lin += (w[0].1 + w[1].1) as f64 / 2.0 * dt;
    }
    let mean = s.iter().map(|x| x.1 as f64).sum::<f64>() / n as f64;
    let two = n >= 2;
    [
        two.then(|| (s[n - 1].1 - s[0].1) as f64),
        two.then_some(inc),
        (two && span > 0.0).then(|| inc / (span / 1e6)),
        Some(if span > 0.0 { step / span } else { mean }),
        Some(if span > 0.0 { lin / span } else { mean }),
    ]
}

async fn samples_match_a_plain_reference(backend: Backend) {
    let lake = backend.open();
    sql(
        &lake,
        "CREATE TABLE m.counters (ts TIMESTAMP NOT NULL, host TEXT, c BIGINT) \
         WITH (time_column = 'ts', series_key = 'host', partition = 'hour')",
    )
    .await;
    let mut g = Rng(0x636f_756e_7465_7273);
    let mut all: Vec<(String, i64, Option<i64>)> = Vec::new();
    // 10 appends of counters that rise and sometimes reset, times over three hours in random
    // order (late rows), repeated times, NULL values.
    for _ in 0..10 {
        let mut values = Vec::new();
        for _ in 0..60 {
            let host = format!("h{}", g.next(5));
            let t = g.next(3 * 3600) as i64 * 1_000_000;
            let c = match g.next(10) {
                0 => None,
                _ => Some(g.next(1000) as i64),
            };
            values.push(format!(
                "(to_timestamp_micros({t}), '{host}', {})",
                c.map(|v| v.to_string()).unwrap_or_else(|| "NULL".into())
            ));
            all.push((host, t, c));
        }
        sql(&lake, &format!("INSERT INTO m.counters VALUES {}", values.join(", "))).await;
    }
    let q = "SELECT host, time_bucket(INTERVAL '1 hour', ts) AS h, delta(c, ts) AS a, increase(c, ts) AS b, \
             rate(c, ts) AS c, twa(c, ts) AS d, twa(c, ts, 'linear') AS e FROM m.counters GROUP BY 1, 2";
    let mut groups: BTreeMap<(String, i64), Vec<(i64, i64)>> = BTreeMap::new();
    for (host, t, c) in &all {
        let slot = groups.entry((host.clone(), t / 3_600_000_000)).or_default();
        if let Some(c) = c {
            slot.push((*t, *c));
        }
    }
    let check = |got: Vec<Vec<String>>, when: &str| {
        assert_eq!(got.len(), groups.len(), "{when}");
        // Columns in name order: a..e, h, host; rows sorted as text, so look each group up.
        for row in &got {
            let key = (row[6].clone(), row[5].parse::<i64>().unwrap() / 3_600_000_000);
            let want = samples_reference(groups[&key].clone());
            for (i, w) in want.iter().enumerate() {
                let ok = match (w, row[i].as_str()) {
                    (None, "NULL") => true,
                    (Some(w), text) => text
                        .parse::<f64>()
                        .is_ok_and(|v| (v - w).abs() <= 1e-9 * w.abs().max(1.0)),
                    _ => false,
                };
                assert!(
                    ok,
                    "{when}: group {key:?}, column {i}: varve {} reference {w:?}",
                    row[i]
                );
            }
        }
    };
    check(sql(&lake, q).await, "over 10 appends");
    lake.maintain("m.counters", &MaintainOptions::default()).await.unwrap();
    check(sql(&lake, q).await, "after compaction");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn samples_match_a_plain_reference_on_local_disk() {
    samples_match_a_plain_reference(Backend::local()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn samples_match_a_plain_reference_on_s3() {
    samples_match_a_plain_reference(Backend::s3()).await;
}

/// Monday 2000-01-03 00:00 UTC in µs: `time_bucket`'s default origin, which `m4`'s buckets share.
const BUCKET_ORIGIN_US: i64 = 946_857_600_000_000;

/// The plain reference of `m4`: group the samples by bucket; in each take the earliest sample,
/// the latest, the least value (earliest first) and the greatest value (earliest first), as a set
/// of points in (time, value) order.
fn m4_reference(samples: &[(i64, i64)], width_us: i64) -> Vec<(i64, f64)> {
    let mut buckets: BTreeMap<i64, Vec<(i64, i64)>> = BTreeMap::new();
    for &(t, v) in samples {
        buckets
            .entry((t - BUCKET_ORIGIN_US).div_euclid(width_us))
            .or_default()
            .push((t, v));
    }
    let mut out = Vec::new();
    for (_, b) in buckets {
        let first = *b.iter().min().unwrap();
        let last = *b.iter().max().unwrap();
        let least = *b.iter().min_by_key(|p| (p.1, p.0)).unwrap();
        let greatest = *b.iter().min_by_key(|p| (-p.1, p.0)).unwrap();
        let set: std::collections::BTreeSet<(i64, i64)> = [first, last, least, greatest].into();
        out.extend(set.into_iter().map(|(t, v)| (t, v as f64)));
    }
    out
}

/// The plain reference of `lttb` (Steinarsson 2013): the samples in (time, value) order; all of
/// them when there are at most `points`; else the first, one per bucket of the middle samples
/// (`points - 2` buckets of equal count), the last. A bucket gives its sample of the largest
/// triangle (the earliest on a tie) with the point chosen before and the next bucket's average
/// (the last sample after the last bucket); x is µs from the first time.
fn lttb_reference(samples: &[(i64, i64)], points: usize) -> Vec<(i64, f64)> {
    let mut s = samples.to_vec();
    s.sort();
    let n = s.len();
    let all: Vec<(i64, f64)> = s.iter().map(|&(t, v)| (t, v as f64)).collect();
    if n <= points {
        return all;
    }
    let xy: Vec<(f64, f64)> = s.iter().map(|&(t, v)| ((t - s[0].0) as f64, v as f64)).collect();
    let k = points - 2;
    let bounds: Vec<usize> = (0..=k).map(|i| 1 + i * (n - 2) / k).collect();
    let mut chosen = vec![0];
    for i in 0..k {
        let next: Vec<usize> = match i + 1 < k {
            true => (bounds[i + 1]..bounds[i + 2]).collect(),
            false => vec![n - 1],
        };
        let cx = next.iter().map(|&j| xy[j].0).sum::<f64>() / next.len() as f64;
        let cy = next.iter().map(|&j| xy[j].1).sum::<f64>() / next.len() as f64;
        let (ax, ay) = xy[*chosen.last().unwrap()];
        let area = |j: usize| ((ax - cx) * (xy[j].1 - ay) - (ax - xy[j].0) * (cy - ay)).abs() / 2.0;
        let mut best = bounds[i];
        for j in bounds[i]..bounds[i + 1] {
            if area(j) > area(best) {
                best = j;
            }
        }
        chosen.push(best);
    }
    chosen.push(n - 1);
    chosen.into_iter().map(|i| all[i]).collect()
}

/// A list of {time, value} structs (a `m4` or `lttb` answer) as (µs, value) pairs.
fn points_of(list: &arrow::array::ArrayRef, row: usize) -> Vec<(i64, f64)> {
    use arrow::array::{Array, AsArray};
    use arrow::datatypes::{Float64Type, TimestampMicrosecondType};
    let list = list.as_list::<i32>();
    assert!(list.is_valid(row), "a NULL list");
    let points = list.value(row);
    let points = points.as_struct();
    let t = points
        .column_by_name("time")
        .unwrap()
        .as_primitive::<TimestampMicrosecondType>();
    let v = points.column_by_name("value").unwrap().as_primitive::<Float64Type>();
    (0..points.len()).map(|i| (t.value(i), v.value(i))).collect()
}

async fn downsample_matches_a_plain_reference(backend: Backend) {
    use arrow::array::{Array, AsArray};
    use arrow::datatypes::TimestampMicrosecondType;
    let lake = backend.open();
    sql(
        &lake,
        "CREATE TABLE m.gauges (ts TIMESTAMP NOT NULL, host TEXT, v BIGINT) \
         WITH (time_column = 'ts', series_key = 'host', partition = 'hour')",
    )
    .await;
    let mut g = Rng(0x646f_776e_7361_6d70);
    let mut all: Vec<(String, i64, Option<i64>)> = Vec::new();
    // 12 appends over three hours in random order: times on a 10-second grid (repeated times
    // within and across files), values from few levels (equal minima and maxima), NULLs, and a
    // rare host with fewer samples than `lttb`'s points.
    for _ in 0..12 {
        let mut values = Vec::new();
        for _ in 0..100 {
            let host = match g.next(50) {
                0 => "rare".to_string(),
                h => format!("h{}", h % 4),
            };
            let t = g.next(3 * 360) as i64 * 10_000_000;
            let v = match g.next(10) {
                0 => None,
                _ => Some(g.next(40) as i64 - 20),
            };
            values.push(format!(
                "(to_timestamp_micros({t}), '{host}', {})",
                v.map(|v| v.to_string()).unwrap_or_else(|| "NULL".into())
            ));
            all.push((host, t, v));
        }
        sql(&lake, &format!("INSERT INTO m.gauges VALUES {}", values.join(", "))).await;
    }
    const POINTS: usize = 40;
    const HOUR: i64 = 3_600_000_000;
    // Per series, and per series and hour (groups split over files and partial aggregates).
    let mut series: BTreeMap<String, Vec<(i64, i64)>> = BTreeMap::new();
    let mut hourly: BTreeMap<(String, i64), Vec<(i64, i64)>> = BTreeMap::new();
    for (host, t, v) in &all {
        series.entry(host.clone()).or_default();
        hourly.entry((host.clone(), t.div_euclid(HOUR) * HOUR)).or_default();
        if let Some(v) = v {
            series.get_mut(host).unwrap().push((*t, *v));
            hourly
                .get_mut(&(host.clone(), t.div_euclid(HOUR) * HOUR))
                .unwrap()
                .push((*t, *v));
        }
    }
    assert!(series["rare"].len() < POINTS && series["h0"].len() > 2 * POINTS);
    let per_series = format!(
        "SELECT host, lttb(ts, v, {POINTS}) AS l, m4(ts, v, INTERVAL '5 minutes') AS m FROM m.gauges GROUP BY host"
    );
    let per_hour = format!(
        "SELECT host, time_bucket(INTERVAL '1 hour', ts) AS h, lttb(ts, v, {POINTS}) AS l, \
         m4(ts, v, INTERVAL '7 minutes') AS m FROM m.gauges GROUP BY host, h"
    );
    for when in ["over 12 appends", "after compaction"] {
        if when == "after compaction" {
            lake.maintain("m.gauges", &MaintainOptions::default()).await.unwrap();
        }
        let (mut seen, mut seen_hourly) = (0, 0);
        for b in lake.sql(&per_series).await.unwrap().batches {
            let col = |name: &str| b.column_by_name(name).unwrap().clone();
            let hosts = arrow::compute::cast(&col("host"), &arrow::datatypes::DataType::Utf8).unwrap();
            for row in 0..b.num_rows() {
                let host = hosts.as_string::<i32>().value(row);
                let s = &series[host];
                assert_eq!(
                    points_of(&col("l"), row),
                    lttb_reference(s, POINTS),
                    "{when}: lttb of {host}"
                );
                assert_eq!(
                    points_of(&col("m"), row),
                    m4_reference(s, 300_000_000),
                    "{when}: m4 of {host}"
                );
                seen += 1;
            }
        }
        for b in lake.sql(&per_hour).await.unwrap().batches {
            let col = |name: &str| b.column_by_name(name).unwrap().clone();
            let hosts = arrow::compute::cast(&col("host"), &arrow::datatypes::DataType::Utf8).unwrap();
            let hours = col("h");
            for row in 0..b.num_rows() {
                assert!(hours.is_valid(row));
                let hour = hours.as_primitive::<TimestampMicrosecondType>().value(row);
                let key = (hosts.as_string::<i32>().value(row).to_string(), hour);
                let s = &hourly[&key];
                assert_eq!(
                    points_of(&col("l"), row),
                    lttb_reference(s, POINTS),
                    "{when}: lttb of {key:?}"
                );
                assert_eq!(
                    points_of(&col("m"), row),
                    m4_reference(s, 420_000_000),
                    "{when}: m4 of {key:?}"
                );
                seen_hourly += 1;
            }
        }
        assert_eq!((seen, seen_hourly), (series.len(), hourly.len()), "{when}: groups");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn downsample_matches_a_plain_reference_on_local_disk() {
    downsample_matches_a_plain_reference(Backend::local()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn downsample_matches_a_plain_reference_on_s3() {
    downsample_matches_a_plain_reference(Backend::s3()).await;
}

/// The largest rank error allowed of DataFusion's approximate percentiles (t-digest, 100
/// centroids): the answer's rank among the group's values is within this fraction of the
/// asked percentile's (0.02: `approx_percentile_cont(0.9)` lies between the exact 88th and 92nd
/// percentiles). Trials of this test saw at most 0.0085, varying from run to run: t-digests
/// merge partial states in the order they arrive.
const APPROX_RANK_TOLERANCE: f64 = 0.02;

/// The weighted rank error of `a` as the `p` percentile of `values` (value, weight): how far the
/// share of the weight below `a`, or at or below it, is from `p` (0 when `p` is between them).
fn rank_error(values: &[(f64, f64)], p: f64, a: f64) -> f64 {
    let total: f64 = values.iter().map(|x| x.1).sum();
    let below: f64 = values.iter().filter(|x| x.0 < a).map(|x| x.1).sum::<f64>() / total;
    let at_or_below: f64 = values.iter().filter(|x| x.0 <= a).map(|x| x.1).sum::<f64>() / total;
    (below - p).max(p - at_or_below).max(0.0)
}

/// The exact `percentile_cont`: linear interpolation at rank p (n - 1) of the sorted values; and
/// how far DataFusion's may be from it (it truncates the interpolation weight to 6 decimals).
fn percentile_cont_reference(values: &[(f64, f64)], p: f64) -> (f64, f64) {
    let mut v: Vec<f64> = values.iter().map(|x| x.0).collect();
    v.sort_by(f64::total_cmp);
    let at = p * (v.len() - 1) as f64;
    let (lo, hi) = (at.floor() as usize, at.ceil() as usize);
    let want = v[lo] + (v[hi] - v[lo]) * (at - lo as f64);
    (want, (v[hi] - v[lo]) * 1e-6 + 1e-12 * want.abs())
}

/// DataFusion's percentiles, documented in docs/sql.md: `approx_percentile_cont` (both
/// spellings), `approx_percentile_cont_with_weight` and `approx_median` within
/// [`APPROX_RANK_TOLERANCE`] of the exact ranks, `percentile_cont` exact, on heavy-tailed random
/// values with NULLs over 8 appends per series, before and after compaction; empty groups NULL.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approx_percentiles_are_within_a_rank_tolerance_of_exact() {
    let backend = Backend::local();
    let lake = backend.open();
    sql(
        &lake,
        "CREATE TABLE m.latency (ts TIMESTAMP NOT NULL, host TEXT, ms DOUBLE, w BIGINT) \
         WITH (time_column = 'ts', series_key = 'host', partition = 'hour')",
    )
    .await;
    let mut g = Rng(0x7065_7263_656e_7469);
    let mut values: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
    for _ in 0..8 {
        let mut rows = Vec::new();
        for _ in 0..1000 {
            let host = format!("h{}", g.next(2));
            let t = g.next(3 * 3600) as i64 * 1_000_000;
            // exp(7u) for uniform u: latencies from 1 ms to 1 s, most of them small.
            let ms = ((g.next(1_000_000) as f64 / 1e6 * 7.0).exp() * 1000.0).round() / 1000.0;
            let w = 1 + g.next(3);
            let cell = match g.next(20) {
                0 => "NULL".to_string(),
                _ => {
                    values.entry(host.clone()).or_default().push((ms, w as f64));
                    format!("{ms:?}")
                }
            };
            rows.push(format!("(to_timestamp_micros({t}), '{host}', {cell}, {w})"));
        }
        sql(&lake, &format!("INSERT INTO m.latency VALUES {}", rows.join(", "))).await;
    }
    let percentiles = [0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99];
    let mut columns = vec!["host".to_string(), "approx_median(ms) AS med".to_string()];
    for (i, p) in percentiles.iter().enumerate() {
        columns.push(format!(
            "approx_percentile_cont({p}) WITHIN GROUP (ORDER BY ms) AS a{i}"
        ));
        columns.push(format!("approx_percentile_cont(ms, {p}) AS b{i}"));
        columns.push(format!(
            "approx_percentile_cont_with_weight(w, {p}) WITHIN GROUP (ORDER BY ms) AS c{i}"
        ));
        columns.push(format!("percentile_cont({p}) WITHIN GROUP (ORDER BY ms) AS d{i}"));
    }
    let q = format!("SELECT {} FROM m.latency GROUP BY host", columns.join(", "));
    for when in ["over 8 appends", "after compaction"] {
        if when == "after compaction" {
            lake.maintain("m.latency", &MaintainOptions::default()).await.unwrap();
        }
        let r = lake.sql(&q).await.unwrap_or_else(|e| panic!("{q}: {e}"));
        let mut worst: f64 = 0.0;
        let mut seen = 0;
        for b in &r.batches {
            let get = |name: &str, row: usize| -> f64 {
                let c = arrow::compute::cast(b.column_by_name(name).unwrap(), &arrow::datatypes::DataType::Float64)
                    .unwrap();
                use arrow::array::AsArray;
                c.as_primitive::<arrow::datatypes::Float64Type>().value(row)
            };
            let hosts =
                arrow::compute::cast(b.column_by_name("host").unwrap(), &arrow::datatypes::DataType::Utf8).unwrap();
            for row in 0..b.num_rows() {
                use arrow::array::AsArray;
                let host = hosts.as_string::<i32>().value(row);
                let v = &values[host];
                let unweighted: Vec<(f64, f64)> = v.iter().map(|x| (x.0, 1.0)).collect();
                let mut check = |name: String, p: f64, weighted: bool| {
                    let e = rank_error(if weighted { v } else { &unweighted }, p, get(&name, row));
                    worst = worst.max(e);
                    assert!(
                        e <= APPROX_RANK_TOLERANCE,
                        "{when}: {host} {name} (p {p}): rank error {e}"
                    );
                };
                check("med".into(), 0.5, false);
                for (i, p) in percentiles.iter().enumerate() {
                    check(format!("a{i}"), *p, false);
                    check(format!("b{i}"), *p, false);
                    check(format!("c{i}"), *p, true);
                    let (got, (want, within)) = (get(&format!("d{i}"), row), percentile_cont_reference(v, *p));
                    assert!(
                        (got - want).abs() <= within,
                        "{when}: {host} percentile_cont({p}): {got} vs {want}"
                    );
                }
                seen += 1;
            }
        }
        assert_eq!(seen, values.len(), "{when}");
        eprintln!("{when}: worst rank error {worst}");
    }
    // NULLs only, or no rows: NULL.
    assert_eq!(
        one(
            &lake,
            "SELECT approx_median(ms) AS a, approx_percentile_cont(0.9) WITHIN GROUP (ORDER BY ms) AS b \
             FROM m.latency WHERE host = 'none'"
        )
        .await,
        "NULL,NULL"
    );
}
