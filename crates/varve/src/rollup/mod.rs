//! Materialized rollups: a table's rows summarised per group and time bucket, kept as an Iceberg
//! table of its own (readable by any Iceberg reader), refreshed incrementally, and used to answer
//! coarser queries on the table.
//!
//! - [`definition`]: what `CREATE ROLLUP name ON table AS SELECT ...` may say, the states each
//!   aggregate is kept as, and where the definition is stored (the rollup table's properties; the
//!   source lists its rollups in `varve.rollups`).
//! - [`refresh`]: brings a rollup up to its source's newest snapshot, recomputing only the
//!   buckets that changed rows touch, in one commit that also moves the watermark.
//! - [`route`]: answers an aggregate query on the source from a rollup whose groups and bucket it
//!   can be computed from, merged with the source's rows newer than the watermark.
//!
//! A rollup's watermark is the source snapshot its rows cover, kept as a property of the rollup
//! table and set in the same commit as the rows: a refresh that stops part-way leaves the previous
//! rollup and its watermark as they were.

pub(crate) mod definition;
pub(crate) mod refresh;
pub(crate) mod route;

use std::collections::HashMap;
use std::sync::Arc;

use arrow::array::{BooleanArray, Int64Array, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Schema};
use iceberg::spec::Operation;

use crate::catalog::{self, MetadataCache, TableIdent};
use crate::commit::{self, Transaction};
use crate::error::{Error, ErrorKind, Result};
use crate::format::properties::{PROP_ROLLUPS, PROP_ROLLUP_DEFINITION, PROP_ROLLUP_SOURCE, PROP_ROLLUP_WATERMARK};
use crate::format::{Partitioning, TableContract};
use crate::query::session::Session;
use crate::query::session::{CustomStatement, QueryExtension};
use crate::query::statement::ddl::DropHook;
use crate::storage::Storage;
use datafusion::logical_expr::LogicalPlan;
use definition::{CreateRollup, RollupDef, RollupStatement};
use futures::future::BoxFuture;
pub use refresh::RefreshReport;

/// Rollups as an extension of statement handling ([`crate::query::session::QueryExtension`]): the rollup
/// statements (`CREATE ROLLUP`, `DROP ROLLUP`, `REFRESH ROLLUP`, `SHOW ROLLUPS`), routing of
/// aggregate queries to rollups (unless `SET varve.rollup_routing = off`), and unlisting a rollup
/// from its source when it is dropped with `DROP TABLE`. The facade registers it.
#[derive(Debug)]
pub(crate) struct Rollups;

impl QueryExtension for Rollups {
    fn parse(&self, text: &str) -> Result<Option<CustomStatement>> {
        Ok(definition::parse(text)?.map(|statement| CustomStatement {
            changes_lake: !matches!(statement, RollupStatement::Show { .. }),
            parsed: Box::new(statement),
        }))
    }

    fn run<'a>(&'a self, session: &'a Session, statement: CustomStatement) -> BoxFuture<'a, Result<RecordBatch>> {
        Box::pin(async move {
            match statement.parsed.downcast::<RollupStatement>() {
                Ok(statement) => run(session, *statement).await,
                Err(_) => Err(Error::internal("not a rollup statement")),
            }
        })
    }

    fn rewrite<'a>(
        &'a self,
        session: &'a Session,
        plan: LogicalPlan,
    ) -> BoxFuture<'a, Result<(LogicalPlan, Vec<String>)>> {
        // Boxed: the routing's future is large, and a statement's future lives on the caller's
        // stack (a debug build's test thread overflowed).
        Box::pin(async move {
            match route::rollup_routing(session)? {
                true => route::route(session, plan).await,
                false => Ok((plan, vec![])),
            }
        })
    }
}

impl DropHook for Rollups {
    fn before_drop<'a>(
        &'a self,
        storage: &'a Storage,
        cache: &'a MetadataCache,
        table: &'a TableIdent,
    ) -> BoxFuture<'a, Result<()>> {
        Box::pin(unlist_if_rollup(storage, cache, table))
    }
}

/// A rollup as `SHOW ROLLUPS` and `varve rollup ls` list it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RollupInfo {
    /// The rollup's table, `namespace.name`.
    pub rollup: String,
    /// The table it summarises.
    pub source: String,
    /// Its SELECT.
    pub definition: String,
    /// The source snapshot its rows cover; `None` before its first refresh.
    pub watermark: Option<i64>,
    /// Whether the watermark is the source's current snapshot.
    pub up_to_date: bool,
}

/// The rollups a source table lists in its properties.
pub(crate) fn listed(props: &HashMap<String, String>) -> Vec<TableIdent> {
    props
        .get(PROP_ROLLUPS)
        .map(|v| {
            v.split(',')
                .filter(|s| !s.trim().is_empty())
                .filter_map(|s| TableIdent::parse(s.trim()).ok())
                .collect()
        })
        .unwrap_or_default()
}

/// The partitioning of a rollup whose buckets last about `nanos`: a partition holds many buckets.
fn partitioning_for(nanos: i128) -> Partitioning {
    const MINUTE: i128 = 60_000_000_000;
    match nanos {
        n if n <= MINUTE => Partitioning::Day,
        n if n <= 60 * MINUTE => Partitioning::Month,
        _ => Partitioning::Year,
    }
}

/// Sets the source's list of rollups (one commit, no snapshot).
pub(crate) async fn set_listed(
    storage: &Storage,
    cache: &MetadataCache,
    source: &TableIdent,
    edit: impl Fn(&mut Vec<TableIdent>),
) -> Result<()> {
    let base = catalog::load(storage, cache, source).await?;
    let mut list = listed(base.metadata.properties());
    edit(&mut list);
    let mut txn = Transaction::new(Operation::Append);
    if list.is_empty() {
        txn.unset_properties = vec![PROP_ROLLUPS.to_string()];
    } else {
        let names: Vec<String> = list.iter().map(|t| t.to_string()).collect();
        txn.set_properties.insert(PROP_ROLLUPS.to_string(), names.join(","));
    }
    commit::commit(storage, cache, base, txn).await?;
    Ok(())
}

/// Runs `CREATE ROLLUP`: checks the definition against the source, creates the rollup table,
/// lists it on the source and fills it (a first refresh). Returns `None` when it existed and
/// `IF NOT EXISTS` was given.
///
/// Errors: [`ErrorKind::NotFound`] for a missing source; [`ErrorKind::AlreadyExists`];
/// [`ErrorKind::InvalidInput`] for a column the source lacks, a time column other than the
/// source's, or an aggregate that does not plan on its column's type. When the first fill fails,
/// the rollup stays, empty and without watermark (never used to answer), and the error says so.
pub(crate) async fn create(session: &Session, c: CreateRollup) -> Result<Option<RefreshReport>> {
    let def = c.def;
    let (storage, cache) = (session.storage(), session.cache());
    let source = catalog::load(storage, cache, &def.source).await?;
    if catalog::current_version(storage, &def.rollup).await?.is_some() {
        if c.if_not_exists {
            return Ok(None);
        }
        return Err(Error::new(
            ErrorKind::AlreadyExists,
            format!("table {} exists already", def.rollup),
        ));
    }
    if source.metadata.properties().contains_key(PROP_ROLLUP_SOURCE) {
        return Err(Error::invalid(format!(
            "{} is itself a rollup; define the rollup on the table it summarises ({})",
            def.source,
            source.metadata.properties()[PROP_ROLLUP_SOURCE]
        )));
    }
    let contract = source.contract()?;
    if contract.time_column.as_deref() != Some(def.time.as_str()) {
        return Err(Error::invalid(format!(
            "rollup {}: time_bucket's second argument must be the time column of {} ({}), not {}",
            def.rollup,
            def.source,
            contract.time_column.as_deref().unwrap_or("it has none"),
            def.time
        )));
    }
    let schema = crate::format::schema::to_arrow(source.metadata.current_schema())?;
    for c in def
        .groups
        .iter()
        .chain(def.aggregates.iter().filter_map(|a| a.column.as_ref()))
    {
        if schema.field_with_name(c).is_err() {
            let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
            return Err(Error::invalid(format!(
                "rollup {}: {} has no column {c} (its columns: {})",
                def.rollup,
                def.source,
                names.join(", ")
            )));
        }
    }
    let bucketer = refresh::bucketer(session, &def).await?;
    // The rollup's columns: those of its rows, as the query computing them types them.
    let probe = session
        .internal_schema(&def.state_sql(&refresh::table_at(&def.source, None), Some("false")))
        .await
        .map_err(|e| Error::invalid(format!("rollup {}: {}", def.rollup, e.message())))?;
    let fields: Vec<Field> = probe
        .fields()
        .iter()
        .map(|f| f.as_ref().clone().with_nullable(true))
        .collect();
    let contract = TableContract::time_series(def.bucket.clone())
        .with_series_key(def.groups.clone())
        .with_partitioning(partitioning_for(bucketer.nominal_nanos()));
    let mut props = HashMap::new();
    props.insert(PROP_ROLLUP_SOURCE.to_string(), def.source.to_string());
    props.insert(PROP_ROLLUP_DEFINITION.to_string(), def.select_sql());
    catalog::create_with_properties(storage, cache, &def.rollup, &Schema::new(fields), &contract, props).await?;
    let name = def.rollup.clone();
    if let Err(e) = set_listed(storage, cache, &def.source, |l| {
        if !l.contains(&name) {
            l.push(name.clone());
        }
    })
    .await
    {
        let _ = catalog::drop_table(storage, cache, &def.rollup).await;
        return Err(e);
    }
    refresh::refresh(session, &def.rollup).await.map(Some).map_err(|e| {
        Error::new(
            e.kind(),
            format!(
                "rollup {} was created but its first refresh failed (it is not used until a refresh succeeds: \
                 REFRESH ROLLUP {}): {}",
                def.rollup,
                def.rollup,
                e.message()
            ),
        )
    })
}

/// Before `table` is dropped as a table (`DROP TABLE`): when it is a rollup, its source stops
/// listing it. A table that is not a rollup, or is gone, is left alone.
///
/// Errors: storage errors of the source's commit.
pub(crate) async fn unlist_if_rollup(storage: &Storage, cache: &MetadataCache, table: &TableIdent) -> Result<()> {
    let Ok(t) = catalog::load(storage, cache, table).await else {
        return Ok(());
    };
    let Some(source) = t.metadata.properties().get(PROP_ROLLUP_SOURCE) else {
        return Ok(());
    };
    let Ok(source) = TableIdent::parse(source) else {
        return Ok(());
    };
    match set_listed(storage, cache, &source, |l| l.retain(|x| x != table)).await {
        Err(e) if e.kind() != ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

/// Loads a rollup's definition.
///
/// Errors: [`ErrorKind::NotFound`] for a missing table; [`ErrorKind::InvalidInput`] for a table
/// that is not a rollup.
pub(crate) async fn load_def(session: &Session, rollup: &TableIdent) -> Result<(catalog::LoadedTable, RollupDef)> {
    let t = catalog::load(session.storage(), session.cache(), rollup).await?;
    match RollupDef::from_properties(rollup, t.metadata.properties())? {
        Some(def) => Ok((t, def)),
        None => Err(Error::invalid(format!(
            "{rollup} is a table, not a rollup (DROP TABLE drops a table)"
        ))),
    }
}

/// Runs `DROP ROLLUP`: unlists it from its source and drops its table. Returns whether it existed.
///
/// Errors: [`ErrorKind::NotFound`] unless `if_exists`; [`ErrorKind::InvalidInput`] for a table
/// that is not a rollup.
pub(crate) async fn drop(session: &Session, rollup: &TableIdent, if_exists: bool) -> Result<bool> {
    let def = match load_def(session, rollup).await {
        Ok((_, def)) => def,
        Err(e) if e.kind() == ErrorKind::NotFound && if_exists => return Ok(false),
        Err(e) if e.kind() == ErrorKind::NotFound => {
            return Err(Error::not_found(format!("rollup {rollup} does not exist")))
        }
        Err(e) => return Err(e),
    };
    match set_listed(session.storage(), session.cache(), &def.source, |l| {
        l.retain(|t| t != rollup)
    })
    .await
    {
        Ok(()) => {}
        // The source was dropped: nothing lists the rollup.
        Err(e) if e.kind() == ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    catalog::drop_table(session.storage(), session.cache(), rollup).await?;
    Ok(true)
}

/// The rollups of `source`, or of every table when `None`.
///
/// Errors: [`ErrorKind::NotFound`] for a missing source; storage errors.
pub(crate) async fn list(session: &Session, source: Option<&TableIdent>) -> Result<Vec<RollupInfo>> {
    let (storage, cache) = (session.storage(), session.cache());
    let candidates: Vec<TableIdent> = match source {
        Some(s) => listed(catalog::load(storage, cache, s).await?.metadata.properties()),
        None => catalog::list(storage).await?,
    };
    let mut out = Vec::new();
    for ident in candidates {
        let t = match catalog::load(storage, cache, &ident).await {
            Ok(t) => t,
            Err(e) if e.kind() == ErrorKind::NotFound => continue,
            Err(e) => return Err(e),
        };
        let Some(def) = RollupDef::from_properties(&ident, t.metadata.properties())? else {
            continue;
        };
        let watermark = t
            .metadata
            .properties()
            .get(PROP_ROLLUP_WATERMARK)
            .and_then(|v| v.parse::<i64>().ok());
        let current = match catalog::load(storage, cache, &def.source).await {
            Ok(s) => s.metadata.current_snapshot_id(),
            Err(_) => None,
        };
        out.push(RollupInfo {
            rollup: ident.to_string(),
            source: def.source.to_string(),
            definition: def.select_sql(),
            watermark,
            up_to_date: watermark.is_some() && watermark == current,
        });
    }
    out.sort_by(|a, b| a.rollup.cmp(&b.rollup));
    Ok(out)
}

/// Runs a rollup statement in `session` and answers it as one batch.
pub(crate) async fn run(session: &Session, statement: RollupStatement) -> Result<RecordBatch> {
    let message = |text: String| -> Result<RecordBatch> {
        let schema = Arc::new(Schema::new(vec![Field::new("result", DataType::Utf8, false)]));
        Ok(RecordBatch::try_new(
            schema,
            vec![Arc::new(StringArray::from(vec![text]))],
        )?)
    };
    match statement {
        RollupStatement::Create(c) => {
            let name = c.def.rollup.clone();
            match create(session, c).await? {
                None => message(format!("rollup {name} exists already")),
                Some(r) => message(format!(
                    "created rollup {name}: {} rows from snapshot {} of {}",
                    r.rows_written,
                    r.watermark
                        .map(|w| w.to_string())
                        .unwrap_or_else(|| "(none: empty)".into()),
                    r.source
                )),
            }
        }
        RollupStatement::Drop { rollup, if_exists } => match drop(session, &rollup, if_exists).await? {
            true => message(format!("dropped rollup {rollup}")),
            false => message(format!("rollup {rollup} does not exist")),
        },
        RollupStatement::Refresh { rollup } => {
            let r = refresh::refresh(session, &rollup).await?;
            message(r.summary())
        }
        RollupStatement::Show { source } => {
            let rows = list(session, source.as_ref()).await?;
            let schema = Arc::new(Schema::new(vec![
                Field::new("rollup", DataType::Utf8, false),
                Field::new("source", DataType::Utf8, false),
                Field::new("watermark", DataType::Int64, true),
                Field::new("up_to_date", DataType::Boolean, false),
                Field::new("definition", DataType::Utf8, false),
            ]));
            Ok(RecordBatch::try_new(
                schema,
                vec![
                    Arc::new(StringArray::from_iter_values(rows.iter().map(|r| r.rollup.clone()))),
                    Arc::new(StringArray::from_iter_values(rows.iter().map(|r| r.source.clone()))),
                    Arc::new(Int64Array::from_iter(rows.iter().map(|r| r.watermark))),
                    Arc::new(BooleanArray::from_iter(rows.iter().map(|r| Some(r.up_to_date)))),
                    Arc::new(StringArray::from_iter_values(rows.iter().map(|r| r.definition.clone()))),
                ],
            )?)
        }
    }
}
