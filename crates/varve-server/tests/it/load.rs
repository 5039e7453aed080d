//! Load: 32 clients, half over HTTP and half over PostgreSQL (psycopg), run a basic query suite
//! for 30 s (`VARVE_LOAD_SECONDS`) beside two line-protocol writers: no errors, no wrong answer,
//! never more queries in flight than `max_in_flight`, every written row in the table, the
//! process's memory bounded. Prints p50/p99 latency per protocol.

use std::process::Command;
use std::time::Duration;

use varve_server::ServerConfig;

use crate::http::{lake, start};

/// The process's resident memory, bytes (Linux).
fn rss() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
        })
        .map(|kb| kb * 1024)
        .unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thirty_two_clients_and_writers_within_the_limits() {
    let seconds: f64 = std::env::var("VARVE_LOAD_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(30.0);
    let dir = tempfile::tempdir().unwrap();
    let lake = lake(dir.path()).await;
    let check = varve::Lake::open(dir.path().to_str().unwrap(), &Default::default()).unwrap();
    let max_in_flight = 4;
    let s = start(
        lake,
        ServerConfig {
            max_in_flight,
            queue_timeout: Duration::from_secs(60),
            memory_limit: Some(256 << 20),
            ..ServerConfig::default()
        },
    )
    .await;
    let peak = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let sampled = peak.clone();
    let sampling = tokio::spawn(async move {
        loop {
            sampled.fetch_max(rss(), std::sync::atomic::Ordering::Relaxed);
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    });
    let (base, port) = (s.base.clone(), s.pg_port.to_string());
    let out = tokio::task::spawn_blocking(move || {
        Command::new(varve_testkit::python())
            .args(["-c", include_str!("load_client.py")])
            .env("HTTP", base)
            .env("PG_PORT", port)
            .env("CLIENTS", "16")
            .env("SECONDS", seconds.to_string())
            .env("EXPECTED", r#"{"n": 3000}"#)
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    sampling.abort();
    let peak = peak.load(std::sync::atomic::Ordering::Relaxed).max(rss());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {stderr}"));
    println!("load over {seconds} s, 16 HTTP + 16 PostgreSQL clients, 2 writers: {j}; peak RSS {peak} bytes");
    assert_eq!(j["errors"], 0, "{j}");
    assert_eq!(j["wrong"], serde_json::json!([]), "{j}");
    assert!(j["max_in_flight"].as_u64().unwrap() <= max_in_flight as u64, "{j}");
    assert!(j["requests"]["http"].as_u64().unwrap() > 16, "{j}");
    assert!(j["requests"]["pg"].as_u64().unwrap() > 16, "{j}");
    let written = j["written"].as_u64().unwrap();
    assert!(written > 0, "{j}");
    let n = check.sql("SELECT count(*) FROM w.load").await.unwrap();
    let n = n.batches[0]
        .column(0)
        .as_any()
        .downcast_ref::<arrow::array::Int64Array>()
        .unwrap()
        .value(0);
    assert_eq!(n as u64, written);
    // The whole test process (other tests run beside this one) stays far under the machine.
    assert!(peak < 4 << 30, "peak RSS {peak} bytes");
    s.stop().await;
}
