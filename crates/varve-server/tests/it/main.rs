//! Integration tests of `varve-server`: a real server on 127.0.0.1 and a free port, a real HTTP
//! client, answers checked against the lake's own query results and decoded by Arrow's and
//! Parquet's readers.

mod http;
mod write;
