//! Integration tests of the engine: one binary (see the developers' guide), one module per contract.
//! Each contract runs against every storage backend: local disk, S3 on a real S3-compatible server
//! (moto), and memory.

mod asof;
mod compaction;
mod concurrency;
mod contract;
mod ddl;
mod dedup;
mod errors;
mod fast_paths;
mod gapfill;
mod head_object;
mod last_value;
mod layering;
mod maintain;
mod names;
mod nan;
mod newest_buckets;
mod output_ordering;
mod read_ahead;
mod rollup;
mod schema_evolution;
mod slt;
mod small_files;
mod sql_functions;
mod sql_reference;
mod time_bucket;
