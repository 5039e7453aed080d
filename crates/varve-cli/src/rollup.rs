//! `varve rollup create|drop|ls|refresh`: materialized rollups of a table (the same as SQL's
//! `CREATE ROLLUP`, `DROP ROLLUP`, `SHOW ROLLUPS` and `REFRESH ROLLUP`; see docs/sql.md).

use clap::{Args, Subcommand};
use varve::{Lake, Result};

use crate::output::line;

#[derive(Debug, Args)]
pub(crate) struct RollupArgs {
    #[command(subcommand)]
    command: RollupCommand,
}

#[derive(Debug, Subcommand)]
enum RollupCommand {
    /// Create a rollup of a table and fill it: varve rollup create NAME --on TABLE "SELECT <group
    /// columns>, time_bucket(<width>, <time>) AS bucket, <aggregates> AS <names> FROM TABLE GROUP BY
    /// ...". Aggregates: count, sum, min, max, avg, first, last, first_not_null, last_not_null,
    /// twa, approx_percentile_cont, approx_median.
    Create {
        /// The rollup's name (namespace.name; the table's namespace when none is given).
        name: String,
        /// The table it summarises.
        #[arg(long)]
        on: String,
        /// The SELECT defining it.
        select: String,
        /// Do nothing when it exists already.
        #[arg(long)]
        if_not_exists: bool,
    },
    /// Drop a rollup (its table, and its entry on its source).
    Drop {
        /// The rollup.
        name: String,
        /// Do nothing when it does not exist.
        #[arg(long)]
        if_exists: bool,
    },
    /// List rollups: of TABLE, or of every table.
    Ls {
        /// Only the rollups of this table.
        table: Option<String>,
        /// Print them as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Bring rollups up to their table's current snapshot, recomputing only the buckets that
    /// changed rows touch (`varve maintain` does it too, after compaction).
    Refresh {
        /// The rollups; every rollup of the lake when none is given.
        names: Vec<String>,
        /// Print the reports as JSON.
        #[arg(long)]
        json: bool,
    },
}

fn json<T: serde::Serialize>(v: &T) -> Result<String> {
    serde_json::to_string_pretty(v).map_err(|e| varve::Error::internal(e.to_string()))
}

/// Runs `varve rollup ...`.
pub(crate) async fn run(lake: &Lake, args: RollupArgs) -> Result<()> {
    match args.command {
        RollupCommand::Create {
            name,
            on,
            select,
            if_not_exists,
        } => {
            let sql = format!(
                "CREATE ROLLUP {}{name} ON {on} AS {select}",
                if if_not_exists { "IF NOT EXISTS " } else { "" }
            );
            match lake.create_rollup(&sql).await? {
                None => line(&format!("rollup {name} exists already")),
                Some(r) => line(&format!(
                    "created rollup {}: {} rows from snapshot {} of {} in {:.2} s",
                    r.rollup,
                    r.rows_written,
                    r.watermark
                        .map(|w| w.to_string())
                        .unwrap_or_else(|| "(none: the table is empty)".into()),
                    r.source,
                    r.seconds
                )),
            }
        }
        RollupCommand::Drop { name, if_exists } => match lake.drop_rollup(&name, if_exists).await? {
            true => line(&format!("dropped rollup {name}")),
            false => line(&format!("rollup {name} does not exist")),
        },
        RollupCommand::Ls { table, json: as_json } => {
            let rollups = lake.rollups(table.as_deref()).await?;
            if as_json {
                return line(&json(&rollups)?);
            }
            if rollups.is_empty() {
                eprintln!("no rollups");
            }
            for r in rollups {
                let state = match (r.watermark, r.up_to_date) {
                    (None, _) => "never refreshed".to_string(),
                    (Some(w), true) => format!("up to date at snapshot {w}"),
                    (Some(w), false) => format!("behind: covers snapshot {w}"),
                };
                line(&format!("{} on {} ({state})\n  {}", r.rollup, r.source, r.definition))?;
            }
            Ok(())
        }
        RollupCommand::Refresh { names, json: as_json } => {
            let names: Vec<String> = match names.is_empty() {
                true => lake.rollups(None).await?.into_iter().map(|r| r.rollup).collect(),
                false => names,
            };
            // Every rollup is tried; the first failure is returned at the end.
            let mut reports = Vec::new();
            let mut failed = None;
            for n in &names {
                match lake.refresh_rollup(n).await {
                    Ok(r) => {
                        if !as_json {
                            line(&r.summary())?;
                        }
                        reports.push(r);
                    }
                    Err(e) => {
                        eprintln!("error: rollup {n}: {e}");
                        failed.get_or_insert(e);
                    }
                }
            }
            if as_json {
                line(&json(&reports)?)?;
            } else if names.is_empty() {
                eprintln!("no rollups");
            }
            match failed {
                Some(e) => Err(e),
                None => Ok(()),
            }
        }
    }
}
