//! Integration tests of `varve-server`: a real server on 127.0.0.1 and free ports, a real HTTP
//! client, real `psql` and psycopg, answers checked against the lake's own query results and decoded by Arrow's and
//! Parquet's readers.

mod http;
mod load;
mod pg;
mod write;
