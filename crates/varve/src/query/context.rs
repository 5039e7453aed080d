//! The lake's query context: what every SQL session of a lake shares, built once when the lake is
//! opened. It holds a DataFusion `SessionState` with the lake's settings, its object store (behind
//! the block cache), the footer cache, Varve's functions and optimizer rules. Each session is made
//! from it by DataFusion's `SessionStateBuilder::new_from_existing`, with a catalog list of its own
//! (so that sessions never see each other's registrations) and, when asked, a memory pool of its
//! own. A server shares one context across all its queries.

use std::sync::Arc;

use datafusion::catalog::MemoryCatalogProviderList;
use datafusion::execution::cache::cache_manager::CacheManagerConfig;
use datafusion::execution::memory_pool::FairSpillPool;
use datafusion::execution::runtime_env::RuntimeEnvBuilder;
use datafusion::execution::session_state::{SessionState, SessionStateBuilder};
use datafusion::execution::FunctionRegistry;
use datafusion::prelude::{SessionConfig, SessionContext};
use url::Url;

use crate::catalog::{MetadataCache, DEFAULT_NAMESPACE, FOOTER_BYTES};
use crate::error::Result;
use crate::query::catalog::CATALOG;
use crate::query::limits::QueryOptions;
use crate::query::rules::{file_order, newest};
use crate::query::scan::store;
use crate::query::scan::table::STORE_URL;
use crate::query::{asof, functions, gapfill};
use crate::storage::Storage;

datafusion::common::extensions_options! {
    /// Varve's session settings, set with `SET varve.<name> = <value>`.
    pub(crate) struct VarveOptions {
        /// `on` (the default) lets aggregate queries be answered from the table's rollups;
        /// `off` always reads the table (`rollup::route`).
        pub rollup_routing: String, default = "on".to_string()
    }
}

impl datafusion::common::config::ConfigExtension for VarveOptions {
    const PREFIX: &'static str = "varve";
}

/// What the sessions of one lake share (module docs). Cheap to clone.
#[derive(Clone)]
pub(crate) struct QueryContext {
    base: SessionState,
    /// What modules above `query` add to every session (`session::QueryExtension`).
    pub(crate) extensions: crate::query::session::Extensions,
}

impl std::fmt::Debug for QueryContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("QueryContext")
    }
}

impl QueryContext {
    /// The context of the lake in `storage`, whose footers go into `cache`.
    ///
    /// Errors: [`crate::ErrorKind::Internal`] when DataFusion refuses the runtime.
    pub(crate) fn new(
        storage: &Storage,
        cache: &MetadataCache,
        extensions: crate::query::session::Extensions,
    ) -> Result<QueryContext> {
        let config = SessionConfig::new()
            .with_information_schema(true)
            .with_default_catalog_and_schema(CATALOG, DEFAULT_NAMESPACE)
            .with_create_default_catalog_and_schema(false)
            // Column names are kept as the data has them (`Ticker`, `time (UTC)`): identifiers are
            // case-sensitive, as in the Iceberg schema.
            .set_bool("datafusion.sql_parser.enable_ident_normalization", false)
            // `now()`, `to_timestamp(...)` and the like are in UTC and print with `Z`, as the
            // tables' time columns do (`SET datafusion.execution.time_zone` changes it).
            .set_str("datafusion.execution.time_zone", "UTC")
            // A child hashed on a subset of an operator's keys is not taken as hashed on them: the
            // ASOF join's two sides must be split by exactly the same keys.
            .set_usize("datafusion.optimizer.subset_repartition_threshold", usize::MAX)
            // A rollup's rows and the newer rows of its source meet in a union whose columns carry
            // different Parquet field ids (`rollup::route`); the aggregate above compares them.
            .set_bool("datafusion.execution.skip_physical_aggregate_schema_check", true)
            .with_option_extension(VarveOptions::default());
        // The lake's footer cache, shared by its sessions.
        let caches = CacheManagerConfig::default()
            .with_file_metadata_cache(Some(cache.footers.clone()))
            .with_metadata_cache_limit(FOOTER_BYTES);
        let runtime = RuntimeEnvBuilder::new().with_cache_manager(caches).build_arc()?;
        let url = Url::parse(STORE_URL).map_err(|e| crate::Error::internal(e.to_string()))?;
        runtime.register_object_store(&url, store::NamingStore::wrap(storage.store.clone()));
        let mut base = SessionStateBuilder::new()
            .with_config(config)
            .with_runtime_env(runtime)
            .with_default_features()
            // After DataFusion's rules: newest-row queries read the last-value index.
            .with_optimizer_rule(Arc::new(newest::NewestFromIndex))
            // After DataFusion's physical rules: a top-k sort's scan reads its files in order.
            .with_physical_optimizer_rule(Arc::new(file_order::FilesInSortOrder))
            // ASOF joins (`asof::plan_joins`) become sorted merges.
            .with_query_planner(Arc::new(Planner))
            .build();
        base.register_udf(Arc::new(asof::Marker::udf()))?;
        for f in gapfill::FillMarker::all() {
            base.register_udf(Arc::new(f))?;
        }
        for f in functions::scalar() {
            base.register_udf(f)?;
        }
        for f in functions::aggregates() {
            base.register_udaf(Arc::new(f))?;
        }
        // The mergeable aggregate states (`__varve_...`), which rollups' SQL uses.
        for f in crate::query::functions::states::all() {
            base.register_udaf(Arc::new(f))?;
        }
        for f in functions::windows() {
            base.register_udwf(Arc::new(f))?;
        }
        Ok(QueryContext { base, extensions })
    }

    /// A new DataFusion context for one session: the shared state with an empty catalog list of
    /// its own, and with `limits.memory_limit` its own memory pool.
    ///
    /// Errors: [`crate::ErrorKind::Internal`] when DataFusion refuses the runtime.
    pub(crate) fn session(&self, limits: &QueryOptions) -> Result<SessionContext> {
        let mut builder = SessionStateBuilder::new_from_existing(self.base.clone())
            .with_catalog_list(Arc::new(MemoryCatalogProviderList::new()));
        let mut config = self.base.config().clone();
        if let Some(bytes) = limits.memory_limit {
            let runtime = RuntimeEnvBuilder::from_runtime_env(self.base.runtime_env())
                .with_memory_pool(Arc::new(FairSpillPool::new(bytes)))
                .build_arc()?;
            builder = builder.with_runtime_env(runtime);
            // A sort keeps this much back to merge its spill files; DataFusion's default (10 MiB)
            // would not fit a small limit at all.
            config = config.set_usize(
                "datafusion.execution.sort_spill_reservation_bytes",
                (bytes / 4).min(10 << 20),
            );
        }
        Ok(SessionContext::new_with_state(builder.with_config(config).build()))
    }
}

/// DataFusion's physical planner with Varve's plan nodes (the ASOF join, gap filling).
#[derive(Debug)]
struct Planner;

#[async_trait::async_trait]
impl datafusion::execution::context::QueryPlanner for Planner {
    async fn create_physical_plan(
        &self,
        plan: &datafusion::logical_expr::LogicalPlan,
        state: &SessionState,
    ) -> datafusion::common::Result<Arc<dyn datafusion::physical_plan::ExecutionPlan>> {
        use datafusion::physical_planner::PhysicalPlanner;
        let planner = datafusion::physical_planner::DefaultPhysicalPlanner::with_extension_planners(vec![
            Arc::new(asof::exec::AsofPlanner),
            Arc::new(gapfill::exec::GapFillPlanner),
        ]);
        // A scan the last-value index narrowed to the newest rows reads a few pages: splitting its
        // files into byte ranges (DataFusion does for files over `repartition_file_min_size`)
        // would open and prune each file once per range for nothing. The setting is statement-wide.
        if newest::narrowed_by_index(plan)? {
            let mut state = state.clone();
            state.config_mut().options_mut().optimizer.repartition_file_scans = false;
            return planner.create_physical_plan(plan, &state).await;
        }
        planner.create_physical_plan(plan, state).await
    }
}
