//! The lake as a DataFusion catalog: one schema per namespace, one table per Varve table. Table
//! metadata is loaded when a statement names the table, so every statement sees the newest commit.
//! A name may end in [`LAST_VALUES_SUFFIX`] to read the table's last-value index.

use std::sync::Arc;

use async_trait::async_trait;
use datafusion::catalog::{CatalogProvider, SchemaProvider};
use datafusion::datasource::TableProvider;
use datafusion::error::Result;

use crate::catalog::{self as lake_catalog, TableIdent, DEFAULT_NAMESPACE};
use crate::error::{Error, ErrorKind};
use crate::query::provider::{QueryEnv, VarveTable};
use crate::query::time_travel::{split_name, AsOf};

/// A table name's suffix (after any time-travel suffix) that reads the snapshot's last-value
/// index, the newest row of each series, instead of its data files: `"stocks@last-values"`.
pub(crate) const LAST_VALUES_SUFFIX: &str = "@last-values";

/// The catalog name tables are registered under (`varve.<namespace>.<table>`).
pub(crate) const CATALOG: &str = "varve";

/// The lake's namespaces, listed when the session starts.
#[derive(Debug)]
pub(crate) struct LakeCatalog {
    pub(crate) env: QueryEnv,
    /// Namespaces, including those made by `CREATE SCHEMA` that hold no table yet.
    pub(crate) namespaces: Vec<String>,
    pub(crate) tables: Vec<TableIdent>,
}

impl CatalogProvider for LakeCatalog {
    fn schema_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.tables.iter().map(|t| t.namespace.clone()).collect();
        names.extend(self.namespaces.iter().cloned());
        names.push(DEFAULT_NAMESPACE.to_string());
        names.sort();
        names.dedup();
        names
    }

    fn schema(&self, name: &str) -> Option<Arc<dyn SchemaProvider>> {
        let tables: Vec<String> = self
            .tables
            .iter()
            .filter(|t| t.namespace == name)
            .map(|t| t.name.clone())
            .collect();
        if tables.is_empty() && name != DEFAULT_NAMESPACE && !self.namespaces.iter().any(|n| n == name) {
            return None;
        }
        Some(Arc::new(Namespace {
            env: self.env.clone(),
            namespace: name.to_string(),
            tables,
        }))
    }
}

/// One namespace of the lake.
#[derive(Debug)]
struct Namespace {
    env: QueryEnv,
    namespace: String,
    tables: Vec<String>,
}

#[async_trait]
impl SchemaProvider for Namespace {
    fn table_names(&self) -> Vec<String> {
        self.tables.clone()
    }

    async fn table(&self, name: &str) -> Result<Option<Arc<dyn TableProvider>>> {
        let (name, newest_rows) = match name.strip_suffix(LAST_VALUES_SUFFIX) {
            Some(base) => (base, true),
            None => (name, false),
        };
        let (table_name, as_of) = split_name(name)?;
        let ident = TableIdent {
            namespace: self.namespace.clone(),
            name: table_name.to_string(),
        };
        let loaded = match lake_catalog::load(&self.env.storage, &self.env.cache, &ident).await {
            Ok(t) => t,
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e.into()),
        };
        let md = loaded.metadata.clone();
        let current = md.current_snapshot_id();
        let snapshot = match as_of {
            None => current,
            Some(AsOf::Snapshot(id)) => {
                if md.snapshot_by_id(id).is_none() {
                    let oldest = md
                        .snapshots()
                        .min_by_key(|s| s.timestamp_ms())
                        .map(|s| {
                            let when = chrono::DateTime::from_timestamp_millis(s.timestamp_ms())
                                .map(|d| d.to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
                                .unwrap_or_default();
                            format!("; the oldest retained snapshot is {} ({when})", s.snapshot_id())
                        })
                        .unwrap_or_default();
                    return Err(Error::not_found(format!(
                        "table {ident} has no snapshot {id}: it never existed or was expired{oldest} (see its history)"
                    ))
                    .into());
                }
                Some(id)
            }
            Some(AsOf::Time(us)) => {
                let ms = us.div_euclid(1000);
                let id = md
                    .history()
                    .iter()
                    .filter(|l| l.timestamp_ms <= ms)
                    .max_by_key(|l| l.timestamp_ms)
                    .map(|l| l.snapshot_id);
                match id {
                    Some(id) => Some(id),
                    None => {
                        let when = chrono::DateTime::from_timestamp_micros(us)
                            .map(|d| d.to_rfc3339())
                            .unwrap_or_default();
                        return Err(
                            Error::not_found(format!("table {ident} has no snapshot at or before {when}")).into(),
                        );
                    }
                }
            }
        };
        let is_current = as_of.is_none();
        let table = VarveTable::new(self.env.clone(), loaded, snapshot, is_current)?;
        let table = if newest_rows { table.newest_rows()? } else { table };
        Ok(Some(Arc::new(table)))
    }

    fn table_exist(&self, name: &str) -> bool {
        let base = name.split('@').next().unwrap_or(name);
        self.tables.iter().any(|t| t == base)
    }
}
