//! SQL DDL on the lake: `CREATE TABLE` (with columns, or `AS SELECT`; the table contract in
//! `WITH (...)`), `DROP TABLE`, `CREATE SCHEMA` / `DROP SCHEMA` for namespaces and `ALTER TABLE`
//! for column changes. Statements are recognised here before DataFusion plans them and run when
//! planned, as DataFusion's own DDL does, through the engine calls the CLI uses
//! (`catalog::create`, `catalog::drop_table`, `catalog::create_namespace`,
//! `commit::evolve_schema`); the insert of `CREATE TABLE ... AS` is left to the session, which
//! runs statements. Any other statement is left to DataFusion.

use std::sync::Arc;

use arrow::datatypes::{Field, Schema};
use datafusion::dataframe::DataFrame;
use datafusion::prelude::SessionContext;
use datafusion::sql::parser::Statement as DFStatement;
use datafusion::sql::sqlparser::ast::{
    AlterColumnOperation, AlterTableOperation, ColumnOption, CreateTableOptions, Expr, ObjectName, ObjectType,
    SchemaName, SqlOption, Statement, Value,
};
use futures::future::BoxFuture;

use crate::catalog::{self as lake_catalog, MetadataCache, TableIdent};
use crate::error::{Error, Result};
use crate::format::{ColumnChange, Dedup, Partitioning, TableContract};
use crate::query::catalog::CATALOG;
use crate::query::statement::{starts_with_ddl_word, Parsed};
use crate::storage::Storage;

/// A DDL statement Varve runs itself.
#[derive(Debug)]
pub(crate) enum Ddl {
    /// `ALTER TABLE t ADD [COLUMN] c type | RENAME COLUMN a TO b | DROP [COLUMN] c | ALTER
    /// [COLUMN] c [SET DATA] TYPE type`, several comma-separated.
    Alter {
        table: TableIdent,
        changes: Vec<ColumnChange>,
    },
    /// `CREATE TABLE [IF NOT EXISTS] t (c type, ...) [WITH (...)]` or `CREATE TABLE t [WITH (...)]
    /// AS <query>`.
    CreateTable {
        table: TableIdent,
        if_not_exists: bool,
        columns: Vec<Field>,
        contract: TableContract,
        /// The query of `CREATE TABLE ... AS`.
        query: Option<String>,
    },
    /// `DROP TABLE [IF EXISTS] t [, ...]`.
    DropTable { tables: Vec<TableIdent>, if_exists: bool },
    /// `CREATE SCHEMA [IF NOT EXISTS] ns`.
    CreateSchema { name: String, if_not_exists: bool },
    /// `DROP SCHEMA [IF EXISTS] ns [, ...] [CASCADE]`.
    DropSchema {
        names: Vec<String>,
        if_exists: bool,
        cascade: bool,
    },
}

/// The `WITH (...)` keys of `CREATE TABLE`, with what they take.
const WITH_KEYS: &str = "time_column = 'ts', series_key = 'host' (or 'a,b'), partition = 'hour'|'day'|'month'|'year' \
                         (default day), dedup = 'none'|'last-write-wins'";

/// Recognises a DDL statement Varve runs; `None` for anything else (left to DataFusion).
///
/// Errors: [`crate::ErrorKind::InvalidInput`] for a DDL statement with an unsupported part (a
/// column option, an unknown `WITH` key, `CREATE OR REPLACE`, an `ALTER TABLE` operation other
/// than the column changes), an unknown type or a bad name.
pub(crate) fn parse(statement: &Parsed) -> Result<Option<Ddl>> {
    if !starts_with_ddl_word(statement.text()) {
        return Ok(None);
    }
    let s = match statement.parsed() {
        Ok(DFStatement::Statement(s)) => s,
        Ok(_) => return Ok(None),
        Err(e) => return Err(Error::invalid(e.to_string())),
    };
    match s.as_ref() {
        Statement::AlterTable(at) => Ok(Some(Ddl::Alter {
            table: table_ident(&at.name)?,
            changes: column_changes(&at.operations)?,
        })),
        Statement::CreateTable(ct) if !ct.external => {
            if ct.or_replace {
                return Err(Error::invalid(
                    "CREATE OR REPLACE TABLE is not supported: DROP TABLE first (its data is deleted), then CREATE TABLE",
                ));
            }
            if ct.temporary {
                return Err(Error::invalid(
                    "CREATE TEMPORARY TABLE is not supported: every table is stored in the lake",
                ));
            }
            if !ct.constraints.is_empty() {
                return Err(Error::invalid(
                    "table constraints (PRIMARY KEY, UNIQUE, ...) are not supported: give the series key in \
                     WITH (series_key = '...') and dedup = 'last-write-wins' to keep one row per key and time",
                ));
            }
            let table = table_ident(&ct.name)?;
            let options = match &ct.table_options {
                CreateTableOptions::None => vec![],
                CreateTableOptions::With(o) => o.clone(),
                other => {
                    return Err(Error::invalid(format!(
                        "CREATE TABLE {table}: {other} is not supported; give the contract in WITH ({WITH_KEYS})"
                    )))
                }
            };
            let contract = contract_of(&table, &options)?;
            let query = ct.query.as_ref().map(|q| q.to_string());
            if query.is_some() && !ct.columns.is_empty() {
                return Err(Error::invalid(format!(
                    "CREATE TABLE {table} (...) AS SELECT: give either columns or a query (the columns then come \
                     from the query; rename them with AS)"
                )));
            }
            if query.is_none() && ct.columns.is_empty() {
                return Err(Error::invalid(format!(
                    "CREATE TABLE {table}: give its columns, e.g. CREATE TABLE {table} (ts timestamp, host text, v \
                     double) WITH (time_column = 'ts', series_key = 'host'), or AS SELECT ..."
                )));
            }
            let mut columns = Vec::new();
            for c in &ct.columns {
                let name = c.name.value.clone();
                let is_time = contract.time_column.as_deref() == Some(name.as_str());
                for o in &c.options {
                    match &o.option {
                        ColumnOption::Null => {}
                        ColumnOption::NotNull if is_time => {}
                        other => {
                            return Err(Error::invalid(format!(
                                "CREATE TABLE {table}: column {name} {other}: column options are not supported; \
                                 columns are nullable (the time column never holds NULL)"
                            )))
                        }
                    }
                }
                let data_type = crate::format::parse_type(&c.data_type.to_string())
                    .map_err(|e| Error::invalid(format!("CREATE TABLE {table}: column {name}: {}", e.message())))?;
                columns.push(Field::new(name, data_type, true));
            }
            Ok(Some(Ddl::CreateTable {
                table,
                if_not_exists: ct.if_not_exists,
                columns,
                contract,
                query,
            }))
        }
        Statement::Drop {
            object_type: ObjectType::Table,
            if_exists,
            names,
            ..
        } => Ok(Some(Ddl::DropTable {
            tables: names.iter().map(table_ident).collect::<Result<_>>()?,
            if_exists: *if_exists,
        })),
        Statement::Drop {
            object_type: ObjectType::Schema,
            if_exists,
            names,
            cascade,
            ..
        } => Ok(Some(Ddl::DropSchema {
            names: names.iter().map(namespace_name).collect::<Result<_>>()?,
            if_exists: *if_exists,
            cascade: *cascade,
        })),
        Statement::CreateSchema {
            schema_name,
            if_not_exists,
            ..
        } => match schema_name {
            SchemaName::Simple(name) => Ok(Some(Ddl::CreateSchema {
                name: namespace_name(name)?,
                if_not_exists: *if_not_exists,
            })),
            other => Err(Error::invalid(format!(
                "CREATE SCHEMA {other}: AUTHORIZATION is not supported; a namespace has no owner"
            ))),
        },
        _ => Ok(None),
    }
}

/// The parts of an object name, without quotes.
fn parts(name: &ObjectName) -> Vec<String> {
    name.0
        .iter()
        .map(|p| p.as_ident().map(|i| i.value.clone()).unwrap_or_else(|| p.to_string()))
        .collect()
}

/// `t`, `ns.t` or `varve.ns.t` as a table name.
fn table_ident(name: &ObjectName) -> Result<TableIdent> {
    let mut p = parts(name);
    if p.len() == 3 && p[0] == CATALOG {
        p.remove(0);
    }
    TableIdent::parse(&p.join("."))
}

/// `ns` or `varve.ns` as a namespace name.
fn namespace_name(name: &ObjectName) -> Result<String> {
    let mut p = parts(name);
    if p.len() == 2 && p[0] == CATALOG {
        p.remove(0);
    }
    let ns = p.join(".");
    lake_catalog::check_namespace(&ns)?;
    Ok(ns)
}

/// The text of an option value: a string literal, a number or a bare word.
fn option_text(v: &Expr) -> String {
    match v {
        Expr::Value(v) => match &v.value {
            Value::SingleQuotedString(s) | Value::DoubleQuotedString(s) => s.clone(),
            other => other.to_string(),
        },
        Expr::Identifier(i) => i.value.clone(),
        other => other.to_string(),
    }
}

/// The table contract of `WITH (...)`: without `time_column` a plain table.
fn contract_of(table: &TableIdent, options: &[SqlOption]) -> Result<TableContract> {
    let (mut time, mut key, mut partition, mut dedup) = (None, vec![], None, Dedup::None);
    for o in options {
        let SqlOption::KeyValue { key: k, value } = o else {
            return Err(Error::invalid(format!(
                "CREATE TABLE {table}: WITH option {o} is not supported; the options are {WITH_KEYS}"
            )));
        };
        let v = option_text(value);
        match k.value.to_ascii_lowercase().as_str() {
            "time_column" => time = Some(v),
            "series_key" => {
                key = v
                    .split(',')
                    .map(|s| s.trim().to_string())
                    .filter(|s| !s.is_empty())
                    .collect();
            }
            "partition" => partition = Some(v.parse::<Partitioning>()?),
            "dedup" => dedup = v.parse()?,
            other => {
                return Err(Error::invalid(format!(
                    "CREATE TABLE {table}: unknown WITH option {other}; the options are {WITH_KEYS} (other table \
                     properties are set with `varve alter --set`)"
                )))
            }
        }
    }
    match time {
        Some(t) => Ok(TableContract::time_series(t)
            .with_series_key(key)
            .with_partitioning(partition.unwrap_or(Partitioning::Day))
            .with_dedup(dedup)),
        None if !key.is_empty() || partition.is_some() || dedup != Dedup::None => Err(Error::invalid(format!(
            "CREATE TABLE {table}: series_key, partition and dedup need time_column (they order, cut and match rows \
             by time)"
        ))),
        None => Ok(TableContract::default()),
    }
}

/// The `ALTER TABLE` column changes.
fn column_changes(ops: &[AlterTableOperation]) -> Result<Vec<ColumnChange>> {
    let mut changes = Vec::new();
    for op in ops {
        match op {
            AlterTableOperation::AddColumn { column_def, .. } if !column_def.options.is_empty() => {
                return Err(Error::invalid(format!(
                    "ALTER TABLE ... ADD COLUMN {}: column options (NOT NULL, DEFAULT, ...) are not supported; \
                     a new column is nullable and rows written before read NULL",
                    column_def.name.value
                )))
            }
            AlterTableOperation::AddColumn { column_def, .. } => changes.push(ColumnChange::Add {
                name: column_def.name.value.clone(),
                data_type: crate::format::parse_type(&column_def.data_type.to_string())?,
            }),
            AlterTableOperation::RenameColumn {
                old_column_name,
                new_column_name,
            } => changes.push(ColumnChange::Rename {
                from: old_column_name.value.clone(),
                to: new_column_name.value.clone(),
            }),
            AlterTableOperation::DropColumn { column_names, .. } => changes.extend(
                column_names
                    .iter()
                    .map(|c| ColumnChange::Drop { name: c.value.clone() }),
            ),
            AlterTableOperation::AlterColumn {
                column_name,
                op: AlterColumnOperation::SetDataType { data_type, .. },
            } => changes.push(ColumnChange::Widen {
                name: column_name.value.clone(),
                to: crate::format::parse_type(&data_type.to_string())?,
            }),
            other => {
                return Err(Error::invalid(format!(
                    "ALTER TABLE ... {other} is not supported: Varve alters columns (ADD COLUMN, RENAME \
                     COLUMN, DROP COLUMN, ALTER COLUMN ... TYPE); table properties change with `varve alter \
                     --set`"
                )))
            }
        }
    }
    Ok(changes)
}

/// What running a DDL statement left to do.
pub(crate) enum Ran {
    /// Done; the statement's result (no rows).
    Done(Box<DataFrame>),
    /// `CREATE TABLE ... AS`: the table was created empty; the session runs `insert` (an `INSERT
    /// INTO table <query>`) and, if it fails, drops the table again ([`undo_create`]).
    Fill { table: TableIdent, insert: String },
}

/// What acts before `DROP TABLE` drops a table: a module above `query` that keeps state about
/// tables (a rollup's source lists its rollups) registers one as part of its
/// `session::QueryExtension`.
pub(crate) trait DropHook: Send + Sync {
    /// Called before `DROP TABLE` drops `table` (which may not exist).
    ///
    /// Errors: the hook's; the table is then not dropped.
    fn before_drop<'a>(
        &'a self,
        _storage: &'a Storage,
        _cache: &'a MetadataCache,
        _table: &'a TableIdent,
    ) -> BoxFuture<'a, Result<()>> {
        Box::pin(async { Ok(()) })
    }
}

/// Runs `ddl`, with `hooks` called before a table is dropped; `ctx` plans the query of `CREATE
/// TABLE ... AS` (for its columns).
///
/// Errors: the engine call's (for example [`crate::ErrorKind::AlreadyExists`],
/// [`crate::ErrorKind::NotFound`]).
pub(crate) async fn run(
    ddl: Ddl,
    storage: &Storage,
    cache: &Arc<MetadataCache>,
    ctx: &SessionContext,
    hooks: &[&dyn DropHook],
) -> Result<Ran> {
    // What the statement did, as one row of one column `result` (a shell prints it).
    let done = |text: String| -> Result<Ran> {
        let schema = Arc::new(Schema::new(vec![Field::new(
            "result",
            arrow::datatypes::DataType::Utf8,
            false,
        )]));
        let batch =
            arrow::array::RecordBatch::try_new(schema, vec![Arc::new(arrow::array::StringArray::from(vec![text]))])?;
        Ok(Ran::Done(Box::new(ctx.read_batch(batch)?)))
    };
    match ddl {
        Ddl::Alter { table, changes } => {
            crate::commit::evolve_schema(storage, cache, &table, &changes).await?;
            done(format!("altered table {table}"))
        }
        Ddl::CreateTable {
            table,
            if_not_exists,
            columns,
            contract,
            query,
        } => {
            if if_not_exists && lake_catalog::current_version(storage, &table).await?.is_some() {
                return done(format!("table {table} exists already (left as it is)"));
            }
            let Some(query) = query else {
                lake_catalog::create(storage, cache, &table, &Schema::new(columns), &contract).await?;
                return done(format!("created table {table}"));
            };
            let planned = ctx.sql(&query).await?;
            let fields: Vec<Field> = planned
                .schema()
                .as_arrow()
                .fields()
                .iter()
                .map(|f| f.as_ref().clone().with_nullable(true))
                .collect();
            lake_catalog::create(storage, cache, &table, &Schema::new(fields), &contract).await?;
            let insert = format!("INSERT INTO {table} {query}");
            Ok(Ran::Fill { table, insert })
        }
        Ddl::DropTable { tables, if_exists } => {
            let mut dropped = Vec::new();
            for t in &tables {
                for hook in hooks {
                    hook.before_drop(storage, cache, t).await?;
                }
                match lake_catalog::drop_table(storage, cache, t).await {
                    Ok(_) => dropped.push(t.to_string()),
                    Err(e) if if_exists && e.kind() == crate::ErrorKind::NotFound => {}
                    Err(e) => return Err(e),
                }
            }
            done(match dropped.len() {
                0 => "no table dropped (none existed)".to_string(),
                1 => format!("dropped table {}", dropped[0]),
                _ => format!("dropped tables {}", dropped.join(", ")),
            })
        }
        Ddl::CreateSchema { name, if_not_exists } => {
            lake_catalog::create_namespace(storage, &name, if_not_exists).await?;
            done(format!("created schema {name}"))
        }
        Ddl::DropSchema {
            names,
            if_exists,
            cascade,
        } => {
            for n in &names {
                lake_catalog::drop_namespace(storage, cache, n, if_exists, cascade).await?;
            }
            done(format!("dropped schema {}", names.join(", ")))
        }
    }
}

/// Drops a table `CREATE TABLE ... AS` created when its insert failed; `error` gets a note saying
/// so.
pub(crate) async fn undo_create(storage: &Storage, cache: &MetadataCache, table: &TableIdent, error: Error) -> Error {
    let _ = lake_catalog::drop_table(storage, cache, table).await;
    error.context(format!("CREATE TABLE {table} AS: the table was not kept"))
}
