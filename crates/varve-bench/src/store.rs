//! The instrumented object store the benchmarks measure requests with: it lives in
//! `varve-testkit`, shared with the tests that assert request and round-trip counts.

pub use varve_testkit::store::*;
