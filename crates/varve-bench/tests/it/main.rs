//! varve-bench's tests: generators are deterministic and shaped as specified, the comparison
//! catches wrong answers, the instrumented store counts and delays, and every suite runs end to
//! end at a small scale with every answer matching DuckDB's (local disk and S3 on moto).

mod compare;
mod generators;
mod runner;
mod store;
