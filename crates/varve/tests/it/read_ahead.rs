//! Read-ahead on object storage (`read-ahead-bytes`): a scan of a file of many row groups fetches
//! the next row groups' chunks while it decodes, so a fresh full scan waits on a few round trips
//! instead of one per row group, and answers the same as without it.

use std::collections::HashMap;
use std::sync::Arc;

use arrow::array::{ArrayRef, Float64Array, RecordBatch, StringArray, TimestampMicrosecondArray};
use varve::{AppendOptions, TableContract};
use varve_testkit::store::Latency;
use varve_testkit::{rows, Backend};

use crate::fast_paths::{batch, counted_with, requests};

const DAY0: i64 = 1_699_920_000_000_000; // 2023-11-14T00:00:00Z

/// `hosts` x `per_host` readings a second apart from 2023-11-14, values that do not compress.
pub(crate) fn readings(hosts: usize, per_host: usize) -> RecordBatch {
    let schema = batch(1, 1, DAY0).schema();
    let (mut ts, mut host, mut v) = (vec![], vec![], vec![]);
    for h in 0..hosts {
        for i in 0..per_host {
            ts.push(DAY0 + i as i64 * 1_000_000);
            host.push(format!("h{h}"));
            let x = (i as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (h as u64) << 7;
            v.push(x as f64 / 3.0);
        }
    }
    let columns: Vec<ArrayRef> = vec![
        Arc::new(TimestampMicrosecondArray::from(ts).with_timezone("UTC")),
        Arc::new(StringArray::from(host)),
        Arc::new(Float64Array::from(v)),
    ];
    RecordBatch::try_new(schema, columns).unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_fresh_scan_reads_row_groups_ahead_on_s3() {
    let backend = Backend::s3();
    let writer = backend.open();
    let data = readings(4, 60_000);
    let contract = TableContract::time_series("ts").with_series_key(["host"]);
    writer
        .create_table("iot.readings", &data.schema(), &contract)
        .await
        .unwrap();
    // One file of 24 row groups.
    let props = HashMap::from([
        ("varve.row-group-rows".to_string(), "10000".to_string()),
        ("varve.auto-maintain".to_string(), "false".to_string()),
    ]);
    writer.set_properties("iot.readings", &props, &[]).await.unwrap();
    writer
        .append("iot.readings", vec![data], AppendOptions::default())
        .await
        .unwrap();
    let info = writer.info("iot.readings").await.unwrap();
    assert_eq!(info.live_files, 1);

    let sql = "SELECT host, count(*), sum(v), min(ts), max(ts) FROM iot.readings GROUP BY host ORDER BY host";
    let latency = Latency {
        delay_ms: 20.0,
        bandwidth: None,
    };
    // The block cache off, so that its 1 MiB blocks do not stand in for the read-ahead.
    let mut answers = vec![];
    let mut trips = vec![];
    let mut bytes = vec![];
    for extra in [
        &[("cache", "off")][..],
        &[("cache", "off"), ("read-ahead-bytes", "0")][..],
        &[("read-ahead-bytes", "256KiB")][..],
        &[][..],
    ] {
        let (lake, counters) = counted_with(&backend, extra, latency);
        let (answer, r) = requests(&counters, lake.sql(sql)).await;
        eprintln!("{extra:?}: {r:?}");
        answers.push(rows(&answer.unwrap().batches));
        trips.push(r.round_trips);
        bytes.push(r.bytes_read);
    }
    for a in &answers[1..] {
        assert_eq!(&answers[0], a);
    }
    assert_eq!(answers[0].len(), 4);
    // With the block cache, the read-ahead and the readers fetch each block once (a block being
    // fetched is waited for): no more than the file and its metadata.
    for b in &bytes[2..] {
        assert!(*b <= info.bytes + (1 << 20), "{bytes:?}, file {}", info.bytes);
    }
    assert!(trips[3] <= 5, "{trips:?}");
    // Without read-ahead: about one round trip per row group the scan's threads read in turn.
    assert!(trips[1] >= 10, "{trips:?}");
    // With it: the state, the first row groups with the read-ahead of the rest, and a few more.
    assert!(trips[0] <= 5, "{trips:?}");

    // One series (a quarter of the row groups, the others ruled out by their statistics, at
    // planning since the head carries the footer): the read-ahead fetches nothing that is not
    // read.
    let one = "SELECT count(*), sum(v) FROM iot.readings WHERE host = 'h2'";
    let mut got = vec![];
    for extra in [
        &[("cache", "off")][..],
        &[("cache", "off"), ("read-ahead-bytes", "0")][..],
    ] {
        let (lake, counters) = counted_with(&backend, extra, latency);
        let (answer, r) = requests(&counters, lake.sql(one)).await;
        eprintln!("one series, {extra:?}: {r:?}");
        got.push((rows(&answer.unwrap().batches), r.bytes_read, r.round_trips));
    }
    assert_eq!(got[0].0, got[1].0);
    assert_eq!(got[0].0[0][0], "60000");
    assert_eq!(got[0].1, got[1].1, "{got:?}");
    assert!(got[0].2 < got[1].2, "{got:?}");
}
