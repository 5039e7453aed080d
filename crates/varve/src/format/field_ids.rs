//! Reading data files by Iceberg field id (Iceberg spec, "Column Projection": columns are matched
//! to a file's columns by field id, not by name). After a `RENAME COLUMN`, files written before
//! read under the new name; a column dropped and added again under the same name is a new field,
//! and files written before read it as NULL; a widened column (int to long, float to double) is
//! cast on read. This module owns the DataFusion scan adapter that does it: every scan of data
//! files (queries, compaction, copy-on-write rewrites) installs [`FieldIdAdapterFactory`].

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use arrow::datatypes::{Field, Schema, SchemaRef};
use datafusion::common::tree_node::{Transformed, TransformedResult, TreeNode};
use datafusion::common::Result as DFResult;
use datafusion::physical_expr::expressions::Column;
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_expr_adapter::{
    DefaultPhysicalExprAdapterFactory, PhysicalExprAdapter, PhysicalExprAdapterFactory,
};

pub(crate) fn field_id(f: &Field) -> Option<i32> {
    f.metadata()
        .get(parquet::arrow::PARQUET_FIELD_ID_META_KEY)?
        .parse()
        .ok()
}

/// Creates a [`FieldIdAdapter`] per data file.
#[derive(Debug, Default)]
pub(crate) struct FieldIdAdapterFactory;

impl PhysicalExprAdapterFactory for FieldIdAdapterFactory {
    fn create(&self, logical: SchemaRef, physical: SchemaRef) -> DFResult<Arc<dyn PhysicalExprAdapter>> {
        let by_id: HashMap<i32, &str> = physical
            .fields()
            .iter()
            .filter_map(|f| field_id(f).map(|id| (id, f.name().as_str())))
            .collect();
        if by_id.is_empty() {
            // A file without field ids (not written by an Iceberg writer): match by name.
            return DefaultPhysicalExprAdapterFactory.create(logical, physical);
        }
        let physical_names: HashSet<&str> = physical.fields().iter().map(|f| f.name().as_str()).collect();
        let mut names = Vec::with_capacity(logical.fields().len());
        let mut fields = Vec::with_capacity(logical.fields().len());
        for f in logical.fields() {
            let name = match field_id(f) {
                // The same field, maybe under the name it had when the file was written.
                Some(id) => match by_id.get(&id) {
                    Some(p) => p.to_string(),
                    // The file's column of this name is another field (dropped, then re-added).
                    None if physical_names.contains(f.name().as_str()) => format!("__varve_absent_field_{id}"),
                    None => f.name().clone(),
                },
                None => f.name().clone(),
            };
            fields.push(f.as_ref().clone().with_name(name.clone()));
            names.push(name);
        }
        let renamed = names.iter().zip(logical.fields()).any(|(n, f)| n != f.name());
        if !renamed {
            return DefaultPhysicalExprAdapterFactory.create(logical, physical);
        }
        let logical_by_file_names = Arc::new(Schema::new_with_metadata(fields, logical.metadata().clone()));
        Ok(Arc::new(FieldIdAdapter {
            names,
            inner: DefaultPhysicalExprAdapterFactory.create(logical_by_file_names, physical)?,
        }))
    }
}

/// Rewrites a scan's column references from the table's names to the file's names of the same
/// field ids, then lets DataFusion's default adapter cast types and fill absent columns with NULL.
#[derive(Debug)]
struct FieldIdAdapter {
    /// For each column of the table schema (by index), its name in the file.
    names: Vec<String>,
    inner: Arc<dyn PhysicalExprAdapter>,
}

impl PhysicalExprAdapter for FieldIdAdapter {
    fn rewrite(&self, expr: Arc<dyn PhysicalExpr>) -> DFResult<Arc<dyn PhysicalExpr>> {
        let expr = expr
            .transform(|e| {
                if let Some(c) = e.downcast_ref::<Column>() {
                    if let Some(n) = self.names.get(c.index()) {
                        if n != c.name() {
                            let renamed: Arc<dyn PhysicalExpr> = Arc::new(Column::new(n, c.index()));
                            return Ok(Transformed::yes(renamed));
                        }
                    }
                }
                Ok(Transformed::no(e))
            })
            .data()?;
        self.inner.rewrite(expr)
    }
}
