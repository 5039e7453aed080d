use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::TryStreamExt;
use varve::object_store::memory::InMemory;
use varve::object_store::path::Path;
use varve::object_store::{ObjectStoreExt, PutPayload};
use varve_bench::store::{instrument, Counters, Latency};

#[tokio::test]
async fn every_request_is_counted_by_kind() {
    let counters = Arc::new(Counters::default());
    let store = instrument(Arc::new(InMemory::new()), Latency::default(), counters.clone());
    let p = Path::from("t/a.bin");
    store.put(&p, PutPayload::from(vec![7u8; 1000])).await.unwrap();
    store.get(&p).await.unwrap().bytes().await.unwrap();
    store.get_range(&p, 10..20).await.unwrap();
    // Ranges far apart are two requests; close ones are coalesced into one.
    store.get_ranges(&p, &[0..10, 20..30]).await.unwrap();
    store.head(&p).await.unwrap();
    let listed: Vec<_> = store.list(Some(&Path::from("t"))).try_collect().await.unwrap();
    assert_eq!(listed.len(), 1);
    store.delete(&p).await.unwrap();
    let r = counters.snapshot();
    assert_eq!((r.put, r.get, r.head, r.list, r.delete), (1, 1, 1, 1, 1), "{r:?}");
    assert_eq!(r.ranged_get, 2, "get_range + one coalesced get_ranges: {r:?}");
    assert_eq!(r.bytes_written, 1000);
    assert_eq!(r.bytes_read, 1000 + 10 + 30);
    assert_eq!(r.total(), 7);
}

#[tokio::test]
async fn injected_delay_applies_to_each_request() {
    let counters = Arc::new(Counters::default());
    let latency = Latency {
        delay_ms: 40.0,
        bandwidth: None,
    };
    let store = instrument(Arc::new(InMemory::new()), latency, counters.clone());
    let p = Path::from("x");
    let t = Instant::now();
    store.put(&p, PutPayload::from(vec![1u8; 10])).await.unwrap();
    store.get(&p).await.unwrap().bytes().await.unwrap();
    store.head(&p).await.unwrap();
    // Three requests, each delayed: a lower bound only (a slow machine may take longer).
    assert!(t.elapsed() >= Duration::from_millis(120), "{:?}", t.elapsed());
    assert_eq!(counters.snapshot().total(), 3);
}

#[tokio::test]
async fn a_bandwidth_cap_slows_large_responses() {
    let counters = Arc::new(Counters::default());
    let latency = Latency {
        delay_ms: 0.0,
        bandwidth: Some(10 * 1024 * 1024),
    };
    let store = instrument(Arc::new(InMemory::new()), latency, counters.clone());
    let p = Path::from("big");
    store
        .put(&p, PutPayload::from(vec![0u8; 2 * 1024 * 1024]))
        .await
        .unwrap();
    let t = Instant::now();
    store.get(&p).await.unwrap().bytes().await.unwrap();
    // 2 MiB at 10 MiB/s: at least 200 ms (a lower bound only).
    assert!(t.elapsed() >= Duration::from_millis(200), "{:?}", t.elapsed());
    assert_eq!(counters.snapshot().bytes_read, 2 * 1024 * 1024);
}
