pub mod pg_catalog;
pub mod sql;

pub use pg_catalog::setup_pg_catalog;
