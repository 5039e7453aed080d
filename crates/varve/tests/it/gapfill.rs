//! `time_bucket_gapfill` with `locf` and `interpolate` against a plain reference on random data:
//! appends of rows in random time order (late rows, NULL values, a NULL series, series with few
//! rows so that gaps are long), a range from WHERE that cuts into the data, 15-minute buckets,
//! before and after compaction, on local disk and S3. Hand-written edge cases (DST, months,
//! before 1970, empty ranges, errors) are in `tests/slt/gapfill.slt`.

use std::collections::{BTreeMap, BTreeSet};

use arrow::array::{Array, AsArray};
use arrow::datatypes::{Float64Type, TimestampMicrosecondType};
use varve::{Lake, MaintainOptions};
use varve_testkit::{Backend, Rng};

const BUCKET: i64 = 15 * 60 * 1_000_000;
const BASE: i64 = 1_709_164_800_000_000; // 2024-02-29T00:00:00Z, µs

type Row = (Option<String>, i64, Option<f64>);
type Answer = BTreeMap<(Option<String>, i64), [Option<f64>; 3]>;

/// The reference: per series present in [from, to), every bucket from the one holding `from`
/// to the last starting before `to`, with the bucket's average, the last average carried
/// forward, and the averages joined by straight lines in time.
fn reference(rows: &[Row], from: i64, to: i64) -> Answer {
    let mut sums: BTreeMap<(Option<String>, i64), (f64, u32)> = BTreeMap::new();
    let mut series = BTreeSet::new();
    for (host, t, v) in rows.iter().filter(|(_, t, _)| *t >= from && *t < to) {
        series.insert(host.clone());
        let slot = sums.entry((host.clone(), t.div_euclid(BUCKET) * BUCKET)).or_default();
        if let Some(v) = v {
            slot.0 += v;
            slot.1 += 1;
        }
    }
    let buckets: Vec<i64> = (from.div_euclid(BUCKET)..)
        .map(|b| b * BUCKET)
        .take_while(|b| *b < to)
        .collect();
    let mut out = Answer::new();
    for host in series {
        let avg: Vec<Option<f64>> = buckets
            .iter()
            .map(|b| match sums.get(&(host.clone(), *b)) {
                Some((s, n)) if *n > 0 => Some(s / *n as f64),
                _ => None,
            })
            .collect();
        let known: Vec<usize> = (0..buckets.len()).filter(|i| avg[*i].is_some()).collect();
        for (i, b) in buckets.iter().enumerate() {
            let locf = known.iter().rev().find(|k| **k <= i).and_then(|k| avg[*k]);
            let before = known.iter().rev().find(|k| **k <= i);
            let after = known.iter().find(|k| **k >= i);
            let interp = match (before, after) {
                (Some(&k0), Some(&k1)) if k0 == k1 => avg[k0],
                (Some(&k0), Some(&k1)) => {
                    let (v0, v1) = (avg[k0].unwrap_or(0.0), avg[k1].unwrap_or(0.0));
                    let (t0, t1) = (buckets[k0] as f64, buckets[k1] as f64);
                    Some(v0 + (v1 - v0) * (*b as f64 - t0) / (t1 - t0))
                }
                _ => None,
            };
            out.insert((host.clone(), *b), [avg[i], locf, interp]);
        }
    }
    out
}

async fn answer(lake: &Lake, from: i64, to: i64) -> Answer {
    let q = format!(
        "SELECT time_bucket_gapfill(INTERVAL '15 minutes', ts) AS b, host, avg(v) AS a, locf(avg(v)) AS l, \
         interpolate(avg(v)) AS i FROM g.r WHERE ts >= to_timestamp_micros({from}) AND ts < to_timestamp_micros({to}) \
         GROUP BY 1, 2"
    );
    let r = lake.sql(&q).await.unwrap_or_else(|e| panic!("{q}: {e}"));
    let mut out = Answer::new();
    for b in &r.batches {
        let t = b.column(0).as_primitive::<TimestampMicrosecondType>();
        let host = arrow::compute::cast(b.column(1), &arrow::datatypes::DataType::Utf8).expect("host");
        let host = host.as_string::<i32>();
        let f = |c: usize, i: usize| {
            let a = b.column(c).as_primitive::<Float64Type>();
            a.is_valid(i).then(|| a.value(i))
        };
        for i in 0..b.num_rows() {
            let h = host.is_valid(i).then(|| host.value(i).to_string());
            let key = (h, t.value(i));
            assert!(
                out.insert(key.clone(), [f(2, i), f(3, i), f(4, i)]).is_none(),
                "{key:?} twice"
            );
        }
    }
    out
}

fn same(ours: &Answer, theirs: &Answer, when: &str) {
    assert_eq!(
        ours.keys().collect::<Vec<_>>(),
        theirs.keys().collect::<Vec<_>>(),
        "{when}: rows"
    );
    for (k, a) in ours {
        for (j, (x, y)) in a.iter().zip(&theirs[k]).enumerate() {
            let ok = match (x, y) {
                (None, None) => true,
                (Some(x), Some(y)) => (x - y).abs() <= 1e-9 * y.abs().max(1.0),
                _ => false,
            };
            assert!(ok, "{when}: {k:?} column {j}: varve {x:?}, reference {y:?}");
        }
    }
}

async fn matches_a_plain_reference(backend: Backend) {
    let lake = backend.open();
    lake.sql(
        "CREATE TABLE g.r (ts TIMESTAMP NOT NULL, host TEXT, v DOUBLE) \
         WITH (time_column = 'ts', series_key = 'host', partition = 'hour')",
    )
    .await
    .expect("create");
    let mut g = Rng(0x6761_7066_696c_6c21);
    let mut rows: Vec<Row> = Vec::new();
    for _ in 0..6 {
        let mut values = Vec::new();
        for _ in 0..80 {
            // h0 and h1 often, h2 rarely (long gaps), NULL hosts sometimes.
            let host = match g.next(20) {
                0..=8 => Some("h0".to_string()),
                9..=15 => Some("h1".to_string()),
                16..=17 => Some("h2".to_string()),
                _ => None,
            };
            let t = BASE + g.next(12 * 3600) as i64 * 1_000_000;
            let v = (g.next(8) != 0).then(|| g.next(1000) as f64 / 4.0);
            let sql = |s: &Option<String>| s.as_ref().map_or("NULL".to_string(), |s| format!("'{s}'"));
            let vs = v.map_or("NULL".to_string(), |v| v.to_string());
            values.push(format!("(to_timestamp_micros({t}), {}, {vs})", sql(&host)));
            rows.push((host, t, v));
        }
        lake.sql(&format!("INSERT INTO g.r VALUES {}", values.join(", ")))
            .await
            .expect("insert");
    }
    // A range that starts and ends inside buckets and inside the data.
    let (from, to) = (BASE + 3_600_000_000 + 7 * 60_000_000, BASE + 10 * 3_600_000_000 + 1);
    let want = reference(&rows, from, to);
    assert!(want.len() > 100, "{} rows", want.len());
    same(&answer(&lake, from, to).await, &want, "over 6 appends");
    lake.maintain("g.r", &MaintainOptions::default())
        .await
        .expect("maintain");
    same(&answer(&lake, from, to).await, &want, "after compaction");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gapfill_matches_a_plain_reference_on_local_disk() {
    matches_a_plain_reference(Backend::local()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gapfill_matches_a_plain_reference_on_s3() {
    matches_a_plain_reference(Backend::s3()).await;
}
