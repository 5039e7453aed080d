//! A Varve table as one statement's scans see it: the snapshot, the schema SQL sees, and what
//! the optimizer rules marked on it (read the last-value index, a top-k's `k`, the newest time
//! buckets), with what the scans share (`QueryEnv`) and what each reports to `EXPLAIN`
//! (`ScanNote`). The provider (`provider`) and scan planning (`scan`) act on it; the rules that
//! mark it (`newest`, `newest_buckets`) and the index lookups (`newest_scan`) read it.

use std::sync::{Arc, Mutex};

use arrow::datatypes::{DataType, SchemaRef};
use datafusion::common::{Column, ScalarValue};
use datafusion::logical_expr::Expr;

use crate::catalog::{LoadedTable, MetadataCache};
use crate::error::Error;
use crate::format::schema;
use crate::index::last_value::IndexRef;
use crate::storage::Storage;

/// The URL under which the lake's object store is registered in a session.
pub(crate) const STORE_URL: &str = "varve://lake";

/// What one scan read: shown by `EXPLAIN`.
#[derive(Debug, Clone)]
pub(crate) struct ScanNote {
    pub(crate) table: String,
    pub(crate) snapshot_id: Option<i64>,
    pub(crate) files_total: usize,
    pub(crate) files_read: usize,
    /// Of the files read, the small ones read from their decoded rows (`query::scan::small_files`).
    pub(crate) files_decoded: usize,
    /// The scan read the snapshot's last-value index instead of its data files.
    pub(crate) last_values: bool,
    /// Under a top-k by time, the scan read only the series the last-value index named (k).
    pub(crate) newest_k: Option<usize>,
    /// Under a top-k by time, the k rows came from the last-value index (`newest_k` is k).
    pub(crate) newest_k_from_index: bool,
    /// A filter on series-constant columns selected this many series, by the last-value index
    /// (`query::scan::newest_scan::series_of_constant_filters`).
    pub(crate) constant_series: Option<usize>,
    /// Under a newest row per series with filters: the series answered from the index.
    pub(crate) index_series: Option<usize>,
    /// Under `GROUP BY time_bucket(...) ORDER BY ... DESC LIMIT k`: the scan kept the rows of the
    /// newest k buckets' time range only (`query::rules::newest_buckets`).
    pub(crate) newest_buckets: Option<usize>,
}

/// Shared by the providers of one session.
#[derive(Debug, Clone)]
pub(crate) struct QueryEnv {
    pub(crate) storage: Storage,
    pub(crate) cache: Arc<MetadataCache>,
    pub(crate) scans: Arc<Mutex<Vec<ScanNote>>>,
    pub(crate) deletes: Arc<Mutex<Vec<crate::maintain::delete::DeleteReport>>>,
    /// The statement sorts and keeps the first rows (`statement::Parsed::top_k`): with
    /// `filter-pushdown=auto`, scans on S3 apply filters row by row for it.
    pub(crate) top_k: bool,
}

/// A table at one snapshot.
#[derive(Debug, Clone)]
pub(crate) struct VarveTable {
    pub(crate) env: QueryEnv,
    pub(crate) table: LoadedTable,
    pub(crate) snapshot_id: Option<i64>,
    /// True when reading the current snapshot (inserts are allowed).
    pub(crate) is_current: bool,
    pub(crate) schema: SchemaRef,
    /// Read the snapshot's last-value index (the newest row of each series) instead of its data
    /// files.
    pub(crate) last_values: Option<IndexRef>,
    /// Read only the data files whose sequence number is above this one (the rows added after a
    /// snapshot, for a rollup's watermark).
    pub(crate) min_sequence: Option<i64>,
    /// The scan feeds `ORDER BY <time> DESC ... LIMIT k` (`query::rules::newest`): it prunes by the bound
    /// the last-value index gives (`query::scan::newest_scan::top_k_bound`).
    pub(crate) newest_k: Option<NewestK>,
    /// The scan feeds the newest row of each series among the rows its filters keep
    /// (`query::rules::newest`): it reads those series' rows from the index where it can
    /// (`query::scan::newest_scan::split_by_index`).
    pub(crate) newest_filtered: bool,
    /// The scan feeds the newest k time buckets of an aggregate (`query::rules::newest_buckets`): it
    /// keeps the rows of their time range only.
    pub(crate) newest_buckets: Option<NewestBuckets>,
}

impl VarveTable {
    pub(crate) fn new(
        env: QueryEnv,
        table: LoadedTable,
        snapshot_id: Option<i64>,
        is_current: bool,
    ) -> crate::Result<Self> {
        let md = &table.metadata;
        let iceberg_schema = match snapshot_id
            .and_then(|id| md.snapshot_by_id(id))
            .and_then(|s| s.schema_id())
        {
            Some(sid) if !is_current => md
                .schema_by_id(sid)
                .cloned()
                .unwrap_or_else(|| md.current_schema().clone()),
            _ => md.current_schema().clone(),
        };
        // Every column is nullable to SQL, so that a null time in an INSERT reaches the append's
        // check (which names the column and row) instead of DataFusion's generic nullability error.
        let stored = schema::to_arrow(&iceberg_schema)?;
        let fields: Vec<arrow::datatypes::Field> = stored
            .fields()
            .iter()
            .map(|f| f.as_ref().clone().with_nullable(true))
            .collect();
        let schema = Arc::new(arrow::datatypes::Schema::new(fields));
        Ok(VarveTable {
            env,
            table,
            snapshot_id,
            is_current,
            schema,
            last_values: None,
            min_sequence: None,
            newest_k: None,
            newest_filtered: false,
            newest_buckets: None,
        })
    }

    /// The same snapshot's newest row of each series, from its last-value index.
    ///
    /// Errors: [`crate::ErrorKind::NotFound`] when the snapshot has no index (written before the
    /// index existed, or with rows but no index to build on; module docs of `index::last_value`).
    pub(crate) fn newest_rows(mut self) -> crate::Result<Self> {
        let snapshot = self.snapshot_id.and_then(|id| self.table.metadata.snapshot_by_id(id));
        match snapshot {
            Some(s) => match IndexRef::of(s) {
                Some(ix) => self.last_values = Some(ix),
                None => {
                    return Err(Error::not_found(format!(
                        "table {} has no last-value index at snapshot {}",
                        self.table.ident,
                        s.snapshot_id()
                    )))
                }
            },
            // No snapshot: no rows, and so no file to read.
            None => self.last_values = None,
        }
        Ok(self)
    }
}

impl VarveTable {
    /// `time >= now - retention` for a table with `varve.retention`.
    pub(crate) fn retention_filter(&self) -> datafusion::common::Result<Option<Expr>> {
        let props = self.table.metadata.properties();
        let settings = crate::format::properties::MaintenanceSettings::from_properties(props)?;
        let contract = self.table.contract()?;
        let (Some(retention), Some(time)) = (settings.retention, contract.time_column) else {
            return Ok(None);
        };
        let cutoff = crate::maintain::retention_cutoff_us(retention);
        let tz = match self.schema.field_with_name(&time)?.data_type() {
            DataType::Timestamp(_, tz) => tz.clone(),
            _ => return Ok(None),
        };
        Ok(Some(datafusion::prelude::col(Column::new_unqualified(time)).gt_eq(
            datafusion::prelude::lit(ScalarValue::TimestampMicrosecond(Some(cutoff), tz)),
        )))
    }
}

/// What a scan under `ORDER BY <time> DESC [, <series key columns>] LIMIT k` is told (`query::rules::newest`): `k`, and the sort keys after the time, as (table column, ascending, nulls first).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct NewestK {
    pub(crate) k: usize,
    pub(crate) then_by: Vec<(String, bool, bool)>,
}

/// What a marked scan needs (`query::rules::newest_buckets`): `k`, and the bucket expression over the table's time
/// column (unqualified).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct NewestBuckets {
    pub(crate) k: usize,
    pub(crate) bucket: Expr,
}
