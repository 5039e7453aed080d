//! Format: Iceberg v2 metadata as Varve writes and reads it.
//!
//! Owns the mapping between Arrow and Iceberg schemas (field ids in `PARQUET:field_id`), the table
//! contract and the maintenance settings kept in `varve.*` table properties, and the encoding of metadata files: the table
//! metadata JSON (Iceberg spec, "Table Metadata"), manifest lists and manifests (Avro, Iceberg spec
//! "Manifests"), schema evolution (`evolve`) and reading data files by field id (`field_ids`). It
//! does not decide what to commit or when; that is `commit`'s job.

pub(crate) mod contract;
pub(crate) mod evolve;
pub(crate) mod field_ids;
pub(crate) mod last_value_ref;
pub(crate) mod manifest;
pub(crate) mod metadata_json;
pub(crate) mod properties;
pub(crate) mod schema;
pub(crate) mod stats;

pub use contract::{Dedup, Partitioning, TableContract, PARTITION_ROWS};
pub use evolve::{parse_type, type_label, ColumnChange};
