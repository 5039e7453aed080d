//! Extension points of statement handling: what a module above `query` adds to every session
//! without `query` importing it. The facade (`lake`) registers the extensions when it builds the
//! long-lived query context (`context::QueryContext`); rollups are one (`rollup::Rollups`).
//!
//! An extension may add statements the SQL parser does not know (`CREATE ROLLUP`), rewrite each
//! planned query (answering an aggregate from a rollup), and act before `DROP TABLE` drops a
//! table (a rollup's source stops listing it). It must not depend on being called in any order
//! relative to another extension.

use std::any::Any;
use std::fmt::Debug;

use arrow::array::RecordBatch;
use datafusion::logical_expr::LogicalPlan;
use futures::future::BoxFuture;

use crate::catalog::{MetadataCache, TableIdent};
use crate::error::Result;
use crate::query::session::Session;
use crate::storage::Storage;

/// A statement an extension parsed, for its [`QueryExtension::run`].
pub(crate) struct CustomStatement {
    /// The extension's own parse of the statement.
    pub(crate) parsed: Box<dyn Any + Send + Sync>,
    /// Whether running it changes the lake (as DDL does), so that describing it must not plan it
    /// ([`Session::describe`]); `false` for statements that only read (`SHOW ROLLUPS`).
    pub(crate) changes_lake: bool,
}

/// What an extension adds to statement handling. Each method has a default that adds nothing.
pub(crate) trait QueryExtension: Send + Sync + Debug {
    /// Parses `text` (after the time-travel and ASOF rewrites) as one of the extension's
    /// statements; `Ok(None)` when it is not one.
    ///
    /// Errors: [`crate::ErrorKind::InvalidInput`] for a statement of the extension's that is
    /// malformed, with the usage.
    fn parse(&self, _text: &str) -> Result<Option<CustomStatement>> {
        Ok(None)
    }

    /// Runs a statement this extension's [`QueryExtension::parse`] returned, in `session`; its
    /// answer as one batch.
    fn run<'a>(&'a self, _session: &'a Session, _statement: CustomStatement) -> BoxFuture<'a, Result<RecordBatch>> {
        Box::pin(async { Err(crate::Error::internal("the extension runs no statements")) })
    }

    /// Rewrites a planned query before it runs; returns the plan and notes of what was done,
    /// which `EXPLAIN` shows. Statements the extension leaves alone come back as they were, with
    /// no notes.
    fn rewrite<'a>(
        &'a self,
        _session: &'a Session,
        plan: LogicalPlan,
    ) -> BoxFuture<'a, Result<(LogicalPlan, Vec<String>)>> {
        Box::pin(async { Ok((plan, vec![])) })
    }

    /// Called before `DROP TABLE` drops `table` (which may not exist).
    fn before_drop<'a>(
        &'a self,
        _storage: &'a Storage,
        _cache: &'a MetadataCache,
        _table: &'a TableIdent,
    ) -> BoxFuture<'a, Result<()>> {
        Box::pin(async { Ok(()) })
    }
}

/// The extensions of a query context, in registration order.
pub(crate) type Extensions = std::sync::Arc<[std::sync::Arc<dyn QueryExtension>]>;
