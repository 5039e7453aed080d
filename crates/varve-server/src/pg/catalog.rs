//! What PostgreSQL clients read about the server before and beside their queries: the
//! `pg_catalog` tables and functions (from `datafusion-pg-catalog`, over the lake's namespaces
//! and tables), the rewrite of their catalog queries into SQL DataFusion plans (`::regclass`,
//! `OPERATOR(pg_catalog.~)`, ...), `version()`, `current_setting()`, and the run-time parameters
//! a client may `SET` and `SHOW` (`DateStyle`, `search_path`, ...).

use std::collections::HashMap;
use std::sync::Arc;

use async_trait::async_trait;
use datafusion::arrow::datatypes::{DataType, SchemaRef};
use datafusion::datasource::TableType;
use datafusion::error::DataFusionError;
use datafusion::logical_expr::{ColumnarValue, ScalarUDF, Volatility};
use datafusion::prelude::create_udf;
use datafusion::scalar::ScalarValue;
use datafusion_pg_catalog::pg_catalog::catalog_info::CatalogInfo;
use datafusion_pg_catalog::pg_catalog::context::EmptyContextProvider;
use datafusion_pg_catalog::pg_catalog::{self as pgc, PgCatalogSchemaProvider, PgCatalogStaticTables};
use datafusion_pg_catalog::sql::PostgresCompatibilityParser;
use varve::Lake;

/// The PostgreSQL version clients are told (`server_version`, `version()`): the protocol and
/// catalog queries Varve answers are those of PostgreSQL 16.
pub(crate) const SERVER_VERSION: &str = "16.6";
/// [`SERVER_VERSION`] as `server_version_num` (Grafana and JDBC read it).
const SERVER_VERSION_NUM: &str = "160006";

/// The database name Varve reports (`current_database()`, `pg_database`): a server serves one
/// lake, whatever database name a client asks for.
pub(crate) const DATABASE: &str = "varve";

/// What every PostgreSQL connection of a server shares: the static `pg_catalog` tables (parsed
/// once) and the SQL rewriter of catalog queries.
pub(crate) struct Shared {
    tables: Arc<PgCatalogStaticTables>,
    rewriter: PostgresCompatibilityParser,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("pg::catalog::Shared")
    }
}

impl Shared {
    /// Parses the static tables.
    ///
    /// Errors: the embedded tables do not parse (a build defect).
    pub(crate) fn new() -> Result<Shared, String> {
        Ok(Shared {
            tables: Arc::new(PgCatalogStaticTables::try_new().map_err(|e| format!("pg_catalog: {e}"))?),
            rewriter: PostgresCompatibilityParser::new(),
        })
    }

    /// `sql` as DataFusion can plan it when it is a client's catalog query (it names `pg_`
    /// tables or functions, `information_schema`, `::reg...` casts or `OPERATOR(...)`); other
    /// statements, and text the PostgreSQL parser cannot read, are left as they are (Varve's own
    /// syntax, such as `ASOF JOIN`, is not PostgreSQL's).
    pub(crate) fn rewrite(&self, sql: &str) -> String {
        let lower = sql.to_ascii_lowercase();
        const MARKS: [&str; 12] = [
            "pg_",
            "information_schema",
            "::reg",
            "operator(",
            "current_schema",
            "current_database",
            "current_user",
            "session_user",
            "format_type",
            "quote_ident",
            "has_table_privilege",
            "has_schema_privilege",
        ];
        if !MARKS.iter().any(|m| lower.contains(m)) {
            return sql.to_string();
        }
        match self.rewriter.parse(sql) {
            Ok(statements) if statements.len() == 1 => statements[0].to_string(),
            _ => sql.to_string(),
        }
    }

    /// Adds `pg_catalog` and the PostgreSQL functions to `session`, listing the lake's tables
    /// (only namespace `namespace`'s when the login's token is scoped to one).
    ///
    /// Errors: DataFusion refuses a function (a build defect).
    pub(crate) fn install(&self, session: &varve::Session, lake: Arc<Lake>, namespace: Option<String>) {
        let info = LakeInfo { lake, namespace };
        if let Ok(provider) = PgCatalogSchemaProvider::try_new(info, self.tables.clone(), EmptyContextProvider) {
            session.register_schema("pg_catalog", Arc::new(provider));
        }
        let ctx = session.context();
        for udf in [
            pgc::create_current_database_udf(DATABASE),
            pgc::create_current_schema_udf(),
            pgc::create_current_schemas_udf(),
            pgc::create_pg_get_userbyid_udf(),
            pgc::has_privilege_udf::create_has_privilege_udf("has_table_privilege"),
            pgc::has_privilege_udf::create_has_privilege_udf("has_schema_privilege"),
            pgc::has_privilege_udf::create_has_privilege_udf("has_database_privilege"),
            pgc::has_privilege_udf::create_has_privilege_udf("has_any_column_privilege"),
            pgc::create_pg_table_is_visible(),
            pgc::format_type::create_format_type_udf(),
            pgc::create_session_user_udf(),
            pgc::pg_get_expr_udf::create_pg_get_expr_udf(),
            pgc::create_pg_get_partkeydef_udf(),
            pgc::create_pg_relation_is_publishable_udf(),
            pgc::create_pg_get_statisticsobjdef_columns_udf(),
            pgc::create_pg_encoding_to_char_udf(),
            pgc::create_pg_backend_pid_udf(),
            pgc::create_pg_relation_size_udf(),
            pgc::create_pg_total_relation_size_udf(),
            pgc::create_pg_stat_get_numscans(),
            pgc::create_pg_get_constraintdef(),
            pgc::create_pg_get_partition_ancestors_udf(),
            pgc::quote_ident_udf::create_quote_ident_udf(),
            pgc::quote_ident_udf::create_parse_ident_udf(),
            pgc::array_bounds_udf::create_array_upper_udf(),
            pgc::array_bounds_udf::create_array_lower_udf(),
            version_udf(),
            current_setting_udf(),
        ] {
            ctx.register_udf(udf);
        }
        ctx.register_udtf("pg_get_keywords", self.tables.pg_get_keywords.clone());
        {
            use datafusion::execution::session_state::SessionStateBuilder;
            let state = ctx.state_ref();
            let existing = state.read().clone();
            let new_state = SessionStateBuilder::new_from_existing(existing)
                .with_type_planner(Arc::new(pgc::oid_type_planner::PgOidTypePlanner))
                .build();
            *state.write() = new_state;
        }
        pgc::generate_series_arg_coercion::CoerceIntArgsToBigInt::widen(ctx);
    }
}

/// The lake as `pg_catalog` lists it: one database, one schema per namespace.
#[derive(Debug, Clone)]
struct LakeInfo {
    lake: Arc<Lake>,
    /// The only namespace listed (a login scoped to one); `None`: all.
    namespace: Option<String>,
}

impl LakeInfo {
    async fn tables(&self) -> Result<Vec<varve::TableIdent>, DataFusionError> {
        let tables = self
            .lake
            .tables()
            .await
            .map_err(|e| DataFusionError::External(Box::new(e)))?;
        Ok(tables
            .into_iter()
            .filter(|t| self.namespace.as_ref().is_none_or(|ns| *ns == t.namespace))
            .collect())
    }
}

#[async_trait]
impl CatalogInfo for LakeInfo {
    async fn catalog_names(&self) -> Result<Vec<String>, DataFusionError> {
        Ok(vec![DATABASE.to_string()])
    }

    async fn schema_names(&self, catalog: &str) -> Result<Option<Vec<String>>, DataFusionError> {
        if catalog != DATABASE {
            return Ok(None);
        }
        let mut names: Vec<String> = self.tables().await?.into_iter().map(|t| t.namespace).collect();
        names.push(varve::DEFAULT_NAMESPACE.to_string());
        names.sort();
        names.dedup();
        Ok(Some(names))
    }

    async fn table_names(&self, catalog: &str, schema: &str) -> Result<Option<Vec<String>>, DataFusionError> {
        if catalog != DATABASE {
            return Ok(None);
        }
        let names: Vec<String> = self
            .tables()
            .await?
            .into_iter()
            .filter(|t| t.namespace == schema)
            .map(|t| t.name)
            .collect();
        Ok(Some(names))
    }

    async fn table_schema(
        &self,
        catalog: &str,
        schema: &str,
        table: &str,
    ) -> Result<Option<SchemaRef>, DataFusionError> {
        if catalog != DATABASE || self.namespace.as_ref().is_some_and(|ns| ns != schema) {
            return Ok(None);
        }
        match self.lake.describe(&format!("{schema}.{table}")).await {
            Ok(d) => Ok(Some(d.schema)),
            Err(e) if e.kind() == varve::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(DataFusionError::External(Box::new(e))),
        }
    }

    async fn table_type(&self, catalog: &str, schema: &str, table: &str) -> Result<Option<TableType>, DataFusionError> {
        Ok(self
            .table_schema(catalog, schema, table)
            .await?
            .map(|_| TableType::Base))
    }
}

/// `version()`: the PostgreSQL version clients parse, then Varve's.
fn version_udf() -> ScalarUDF {
    let text = format!(
        "PostgreSQL {SERVER_VERSION} (Varve {}) on {}, a time-series lakehouse",
        env!("CARGO_PKG_VERSION"),
        std::env::consts::ARCH
    );
    create_udf(
        "version",
        vec![],
        DataType::Utf8,
        Volatility::Stable,
        Arc::new(move |_| Ok(ColumnarValue::Scalar(ScalarValue::Utf8(Some(text.clone()))))),
    )
}

/// `current_setting(name)`: a run-time parameter's server default ([`parameter_default`]);
/// NULL for one Varve does not know.
fn current_setting_udf() -> ScalarUDF {
    create_udf(
        "current_setting",
        vec![DataType::Utf8],
        DataType::Utf8,
        Volatility::Stable,
        Arc::new(|args: &[ColumnarValue]| match &args[0] {
            ColumnarValue::Scalar(s) => {
                let name = match s {
                    ScalarValue::Utf8(v) | ScalarValue::LargeUtf8(v) | ScalarValue::Utf8View(v) => v.clone(),
                    _ => None,
                };
                let value = name.and_then(|n| parameter_default(&n).map(str::to_string));
                Ok(ColumnarValue::Scalar(ScalarValue::Utf8(value)))
            }
            ColumnarValue::Array(a) => {
                let names = datafusion::arrow::compute::cast(a, &DataType::Utf8)?;
                let names = datafusion::common::cast::as_string_array(&names)?;
                let values: datafusion::arrow::array::StringArray =
                    names.iter().map(|n| n.and_then(parameter_default)).collect();
                Ok(ColumnarValue::Array(Arc::new(values)))
            }
        }),
    )
}

/// The server's value of run-time parameter `name` (case-insensitive), before a client's `SET`.
pub(crate) fn parameter_default(name: &str) -> Option<&'static str> {
    Some(match name.to_ascii_lowercase().as_str() {
        "server_version" => SERVER_VERSION,
        "server_version_num" => SERVER_VERSION_NUM,
        "server_encoding" | "client_encoding" => "UTF8",
        "datestyle" => "ISO, MDY",
        "intervalstyle" => "postgres",
        "timezone" => "UTC",
        "integer_datetimes" | "standard_conforming_strings" => "on",
        "default_transaction_read_only" | "transaction_read_only" | "is_superuser" | "in_hot_standby" => "off",
        "transaction_isolation" | "default_transaction_isolation" => "read committed",
        "search_path" => "public",
        "max_identifier_length" => "63",
        "max_index_keys" => "32",
        "lc_collate" | "lc_ctype" | "lc_messages" | "lc_monetary" | "lc_numeric" | "lc_time" => "C",
        "extra_float_digits" => "1",
        "application_name" => "",
        "statement_timeout" | "lock_timeout" | "idle_in_transaction_session_timeout" => "0",
        "bytea_output" => "hex",
        "block_size" => "8192",
        _ => return None,
    })
}

/// The parameters a server reports to every client at login (PostgreSQL's protocol, "Asynchronous
/// Operations"; psycopg reads `server_version`, `server_encoding`, `client_encoding` and
/// `DateStyle`).
pub(crate) fn reported_parameters(user: Option<&str>, application: Option<&str>) -> HashMap<String, String> {
    let mut p: HashMap<String, String> = [
        "server_version",
        "server_encoding",
        "client_encoding",
        "DateStyle",
        "IntervalStyle",
        "TimeZone",
        "integer_datetimes",
        "standard_conforming_strings",
        "is_superuser",
        "default_transaction_read_only",
        "in_hot_standby",
    ]
    .iter()
    .filter_map(|n| parameter_default(n).map(|v| (n.to_string(), v.to_string())))
    .collect();
    p.insert("session_authorization".into(), user.unwrap_or("varve").to_string());
    p.insert("application_name".into(), application.unwrap_or("").to_string());
    p
}

/// The parameter names PostgreSQL reports again when a client sets them (`ParameterStatus`).
pub(crate) fn is_reported(name: &str) -> bool {
    matches!(
        name.to_ascii_lowercase().as_str(),
        "datestyle" | "intervalstyle" | "timezone" | "client_encoding" | "application_name" | "search_path"
    )
}

/// A parameter name as PostgreSQL spells it in `ParameterStatus` (`DateStyle`, `TimeZone`).
pub(crate) fn canonical_name(name: &str) -> String {
    match name.to_ascii_lowercase().as_str() {
        "datestyle" => "DateStyle".into(),
        "intervalstyle" => "IntervalStyle".into(),
        "timezone" => "TimeZone".into(),
        other => other.to_string(),
    }
}
