//! The lake as a DataFusion catalog: one schema per namespace, one table per Varve table, made for
//! one statement ([`LakeCatalog::for_statement`]). The tables the statement names are loaded
//! before it is planned, all at once; nothing is listed, unless the statement reads
//! `information_schema` (`SHOW TABLES`, `\d`), which lists namespaces and tables. Each load is a
//! reader's (`catalog::load_recent`): the newest version, or the one this process saw within the
//! version-check interval. A name may end in [`LAST_VALUES_SUFFIX`] to read the table's last-value
//! index.

use std::collections::HashMap;
use std::sync::Arc;

use async_trait::async_trait;
use datafusion::catalog::{CatalogProvider, SchemaProvider};
use datafusion::datasource::TableProvider;
use datafusion::error::Result;

use crate::catalog::{self as lake_catalog, LoadedTable, TableIdent, DEFAULT_NAMESPACE};
use crate::error::{Error, ErrorKind};
use crate::query::references::{LAST_VALUES_SUFFIX, SINCE_SUFFIX};
use crate::query::scan::table::{QueryEnv, VarveTable};
use crate::query::statement::time_travel::{split_name, AsOf};
use crate::query::statement::Parsed;

/// The catalog name tables are registered under (`varve.<namespace>.<table>`).
pub(crate) const CATALOG: &str = "varve";

/// The lake as one statement sees it.
#[derive(Debug)]
pub(crate) struct LakeCatalog {
    pub(crate) env: QueryEnv,
    /// The namespaces and tables of the lake, when the statement reads `information_schema`:
    /// namespaces include those made by `CREATE SCHEMA` that hold no table yet.
    listed: Option<(Vec<String>, Vec<TableIdent>)>,
    /// The tables the statement names that exist, loaded before planning.
    loaded: HashMap<TableIdent, LoadedTable>,
    /// The statement changes rows: tables are loaded as writers load them.
    writes: bool,
    /// Schemas a front end adds beside the lake's namespaces (the PostgreSQL server's
    /// `pg_catalog`): they shadow a namespace of the same name.
    extra: ExtraSchemas,
}

/// Schemas added to every statement's catalog by name ([`crate::Session::register_schema`]).
pub(crate) type ExtraSchemas = Arc<std::sync::RwLock<HashMap<String, Arc<dyn SchemaProvider>>>>;

impl LakeCatalog {
    /// The catalog for `statement`: the tables it names loaded in parallel, and the lake listed
    /// only when it reads `information_schema` or its tables cannot be found in its parse.
    ///
    /// Errors: storage errors of the listing. A table that fails to load is left for planning,
    /// which loads it again and reports the error.
    pub(crate) async fn for_statement(
        env: QueryEnv,
        statement: &Parsed,
        extra: ExtraSchemas,
    ) -> crate::Result<LakeCatalog> {
        let extra_names: Vec<String> = extra.read().map(|m| m.keys().cloned().collect()).unwrap_or_default();
        let named = statement.tables().ok().map(|tables| {
            tables
                .into_iter()
                .filter(|t| !extra_names.contains(&t.namespace))
                .collect::<Vec<_>>()
        });
        let listed = match &named {
            Some(tables) if !tables.iter().any(|t| t.namespace == INFORMATION_SCHEMA) => None,
            _ => Some(lake_catalog::list_layout(&env.storage).await?),
        };
        let named = named.unwrap_or_default();
        let writes = statement.writes_rows();
        let (storage, cache) = (&env.storage, &env.cache);
        let loads = named
            .iter()
            .filter(|t| t.namespace != INFORMATION_SCHEMA)
            .map(|t| async move {
                match writes {
                    true => lake_catalog::load(storage, cache, t).await,
                    false => lake_catalog::load_recent(storage, cache, t).await,
                }
            });
        let loaded = futures::future::join_all(loads)
            .await
            .into_iter()
            .filter_map(|r| r.ok())
            .map(|t| (t.ident.clone(), t))
            .collect();
        Ok(LakeCatalog {
            env,
            listed,
            loaded,
            writes,
            extra,
        })
    }
}

/// The schema DataFusion answers `SHOW TABLES` and the like from.
const INFORMATION_SCHEMA: &str = "information_schema";

impl CatalogProvider for LakeCatalog {
    fn schema_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.loaded.keys().map(|t| t.namespace.clone()).collect();
        if let Some((namespaces, tables)) = &self.listed {
            names.extend(tables.iter().map(|t| t.namespace.clone()));
            names.extend(namespaces.iter().cloned());
        }
        names.push(DEFAULT_NAMESPACE.to_string());
        if let Ok(extra) = self.extra.read() {
            names.extend(extra.keys().cloned());
        }
        names.sort();
        names.dedup();
        names
    }

    fn schema(&self, name: &str) -> Option<Arc<dyn SchemaProvider>> {
        if let Some(extra) = self.extra.read().ok().and_then(|m| m.get(name).cloned()) {
            return Some(extra);
        }
        let loaded: HashMap<String, LoadedTable> = self
            .loaded
            .iter()
            .filter(|(t, _)| t.namespace == name)
            .map(|(t, l)| (t.name.clone(), l.clone()))
            .collect();
        let tables = match &self.listed {
            Some((namespaces, tables)) => {
                let tables: Vec<String> = tables
                    .iter()
                    .filter(|t| t.namespace == name)
                    .map(|t| t.name.clone())
                    .collect();
                if tables.is_empty() && name != DEFAULT_NAMESPACE && !namespaces.iter().any(|n| n == name) {
                    return None;
                }
                tables
            }
            // Not listed: any name may be a namespace; a table in it is looked up when named.
            None => {
                lake_catalog::check_namespace(name).ok()?;
                let mut names: Vec<String> = loaded.keys().cloned().collect();
                names.sort();
                names
            }
        };
        Some(Arc::new(Namespace {
            env: self.env.clone(),
            namespace: name.to_string(),
            tables,
            loaded,
            writes: self.writes,
        }))
    }
}

/// One namespace of the lake.
#[derive(Debug)]
struct Namespace {
    env: QueryEnv,
    namespace: String,
    /// Its tables, as far as the statement's catalog knows them.
    tables: Vec<String>,
    /// Its tables that the statement names, loaded before planning.
    loaded: HashMap<String, LoadedTable>,
    /// The statement changes rows: tables are loaded as writers load them.
    writes: bool,
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
        // `<table>@since=<sequence number>`: the rows of the data files added after it (a
        // rollup's watermark), at the current snapshot.
        let (name, since) = match name.split_once(SINCE_SUFFIX) {
            Some((base, seq)) => (
                base,
                Some(seq.parse::<i64>().map_err(|_| {
                    Error::invalid(format!("table {name}: expected {base}{SINCE_SUFFIX}<sequence number>"))
                })?),
            ),
            None => (name, None),
        };
        let (table_name, as_of) = split_name(name)?;
        let ident = TableIdent {
            namespace: self.namespace.clone(),
            name: table_name.to_string(),
        };
        let loaded = match self.loaded.get(table_name) {
            Some(t) => t.clone(),
            None => match match self.writes {
                true => lake_catalog::load(&self.env.storage, &self.env.cache, &ident).await,
                false => lake_catalog::load_recent(&self.env.storage, &self.env.cache, &ident).await,
            } {
                Ok(t) => t,
                Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
                Err(e) => return Err(e.into()),
            },
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
        let mut table = if newest_rows { table.newest_rows()? } else { table };
        if since.is_some() {
            table.is_current = false;
            table.min_sequence = since;
        }
        Ok(Some(Arc::new(table)))
    }

    fn table_exist(&self, name: &str) -> bool {
        let base = name.split('@').next().unwrap_or(name);
        self.tables.iter().any(|t| t == base) || self.loaded.contains_key(base)
    }
}
