//! Query: Varve tables in DataFusion.
//!
//! Owns the DataFusion catalog over the lake (`catalog`), the table provider that lists a
//! snapshot's data files from its manifests and prunes them by partition and column bounds before
//! any data is read (`provider`), `INSERT` through the append path (`sink`), the time-series
//! functions (`functions`), ASOF joins (`asof`), gap filling (`gapfill`), nested values as text for CSV (`text`), time travel in SQL (`time_travel`), the object store as queries read
//! it, naming the object in every read error (`store`), the Parquet reader with the lake's footer
//! cache (`footers`), SQL DDL (`ddl`: CREATE/DROP TABLE and
//! SCHEMA, ALTER TABLE), the rewrite that answers newest-row queries from the last-value index
//! (`newest`), the bound that reads only the newest time buckets' rows under `GROUP BY time_bucket(...) ORDER BY ... DESC LIMIT k` (`newest_buckets`), the rule that reads a top-k sort's files in order (`file_order`) and the union it reads in one partition (`chain`), the statement front end that reads a statement once for every pass (`statement`), the context the lake's sessions share (`context`), readable result column names (`names`), and the session that runs a
//! statement (`session`). It must not write metadata except through `commit`.

pub(crate) mod asof;
pub(crate) mod catalog;
pub(crate) mod chain;
pub(crate) mod context;
pub(crate) mod ddl;
pub(crate) mod file_order;
pub(crate) mod footers;
pub(crate) mod functions;
pub(crate) mod gapfill;
pub(crate) mod limits;
pub(crate) mod names;
pub(crate) mod nan_guard;
pub(crate) mod newest;
pub(crate) mod newest_buckets;
pub(crate) mod newest_scan;
pub(crate) mod output_ordering;
pub(crate) mod page_pruning;
pub(crate) mod provider;
pub(crate) mod read_ahead;
pub(crate) mod references;
pub(crate) mod scan;
pub(crate) mod session;
pub(crate) mod sink;
pub(crate) mod small_files;
pub(crate) mod statement;
pub(crate) mod store;
pub(crate) mod table;
pub(crate) mod text;
pub(crate) mod time_travel;
pub(crate) mod work_units;
