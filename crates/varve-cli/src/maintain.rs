//! `varve maintain`, `varve delete` and `varve alter`: table maintenance, deletes and table
//! properties.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use varve::{Lake, MaintainOptions, MaintainReport, Result};

use crate::output::{human_bytes, line};

/// `println!` that returns the write error (a closed pipe ends the command quietly).
macro_rules! out {
    ($($t:tt)*) => {
        line(&format!($($t)*))?
    };
}

/// Options of `varve maintain`.
#[derive(Debug, Args)]
pub(crate) struct MaintainArgs {
    /// Tables to maintain (namespace.table or table); every table of the lake when none is given.
    pub(crate) tables: Vec<String>,
    /// Do not merge small files.
    #[arg(long)]
    pub(crate) no_compact: bool,
    /// Do not remove rows older than the table's varve.retention.
    #[arg(long)]
    pub(crate) no_retention: bool,
    /// Do not expire old snapshots.
    #[arg(long)]
    pub(crate) no_expire: bool,
    /// Do not delete unreferenced files.
    #[arg(long)]
    pub(crate) no_orphans: bool,
    /// Do not refresh the tables' rollups.
    #[arg(long)]
    pub(crate) no_rollups: bool,
    /// Print what would be done and change nothing.
    #[arg(long)]
    pub(crate) dry_run: bool,
    /// Leave unreferenced files younger than this alone (a commit in flight may still need them),
    /// e.g. 1h, 30m, 0s.
    #[arg(long, value_name = "DURATION", default_value = "1h")]
    pub(crate) orphan_age: String,
    /// Expire snapshots older than this instead of the table's varve.snapshot-retention (e.g. 0s).
    #[arg(long, value_name = "DURATION")]
    pub(crate) snapshot_retention: Option<String>,
    /// Let retention drop every row of a table (without it, a table whose every row is past its
    /// varve.retention keeps them, and the run says so).
    #[arg(long)]
    pub(crate) yes: bool,
    /// Print the reports as JSON (one object per table, in an array).
    #[arg(long)]
    pub(crate) json: bool,
    /// Do not print the summary.
    #[arg(long, short = 'q')]
    pub(crate) quiet: bool,
}

/// Runs `varve maintain`.
pub(crate) async fn run(lake: &Lake, args: MaintainArgs) -> Result<()> {
    let tables: Vec<String> = if args.tables.is_empty() {
        lake.tables().await?.iter().map(|t| t.to_string()).collect()
    } else {
        args.tables.clone()
    };
    if tables.is_empty() && !args.quiet {
        out!("no tables in {}", lake.url());
    }
    let pb = if std::io::IsTerminal::is_terminal(&std::io::stderr()) && !args.quiet && !args.json {
        let pb = ProgressBar::new(0);
        pb.set_style(
            ProgressStyle::with_template("{spinner} {msg} [{bar:30}] {bytes}/{total_bytes} eta {eta}")
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> "),
        );
        Some(pb)
    } else {
        None
    };
    let mut opts = MaintainOptions {
        compact: !args.no_compact,
        retention: !args.no_retention,
        expire: !args.no_expire,
        orphans: !args.no_orphans,
        rollups: !args.no_rollups,
        drop_all_rows: args.yes,
        dry_run: args.dry_run,
        orphan_age: duration_arg("--orphan-age", &args.orphan_age)?,
        snapshot_retention: args
            .snapshot_retention
            .as_deref()
            .map(|v| duration_arg("--snapshot-retention", v))
            .transpose()?,
        progress: None,
    };
    if let Some(pb) = &pb {
        let pb = pb.clone();
        opts.progress = Some(Arc::new(move |p: &varve::MaintainProgress| {
            pb.set_message(format!("{} {}", p.table, p.step));
            pb.set_length(p.total);
            pb.set_position(p.done);
        }));
    }
    let mut reports = Vec::new();
    for t in &tables {
        let r = lake.maintain(t, &opts).await?;
        if !args.quiet && !args.json {
            match &pb {
                Some(pb) => pb.suspend(|| print_report(&r))?,
                None => print_report(&r)?,
            }
        }
        reports.push(r);
    }
    if let Some(pb) = &pb {
        pb.finish_and_clear();
    }
    if args.json {
        out!(
            "{}",
            serde_json::to_string_pretty(&reports).map_err(|e| varve::Error::internal(e.to_string()))?
        );
    }
    Ok(())
}

fn print_report(r: &MaintainReport) -> Result<()> {
    let verb = if r.dry_run { "would " } else { "" };
    out!(
        "{}{}:",
        r.table,
        if r.dry_run { " (dry run: nothing changed)" } else { "" }
    );
    for a in &r.actions {
        out!("  {verb}{a}");
    }
    if r.actions.is_empty() {
        out!("  nothing to do");
    }
    for s in &r.skipped {
        out!("  skipped {s}");
    }
    if !r.dry_run {
        out!(
            "  files {} -> {}, {} -> {}; {} rows rewritten, {} snapshots expired, {} objects deleted ({}) in {:.2} s",
            r.files_before,
            r.files_after,
            human_bytes(r.bytes_before),
            human_bytes(r.bytes_after),
            r.rows_rewritten,
            r.snapshots_expired,
            r.objects_deleted,
            human_bytes(r.bytes_deleted),
            r.seconds
        );
    }
    Ok(())
}

/// Options of `varve alter`.
#[derive(Debug, Args)]
pub(crate) struct AlterArgs {
    /// The table.
    pub(crate) table: String,
    /// Set a table property, e.g. --set varve.retention=30d. Repeatable.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub(crate) set: Vec<String>,
    /// Remove a table property (back to its default). Repeatable.
    #[arg(long = "unset", value_name = "KEY")]
    pub(crate) unset: Vec<String>,
    /// Add a nullable column, e.g. --add-column humidity:float64 (rows written before read it as
    /// NULL). Repeatable.
    #[arg(long = "add-column", value_name = "NAME:TYPE")]
    pub(crate) add_column: Vec<String>,
    /// Rename a column, e.g. --rename-column temp=temperature (rows written before read under the
    /// new name). Repeatable.
    #[arg(long = "rename-column", value_name = "OLD=NEW")]
    pub(crate) rename_column: Vec<String>,
    /// Drop a column (not the time column or a series key column). Repeatable.
    #[arg(long = "drop-column", value_name = "NAME")]
    pub(crate) drop_column: Vec<String>,
    /// Widen a column's type: int32 to int64, float32 to float64, e.g. --widen-column count:int64.
    /// Repeatable.
    #[arg(long = "widen-column", value_name = "NAME:TYPE")]
    pub(crate) widen_column: Vec<String>,
}

/// Runs `varve alter`.
pub(crate) async fn alter(lake: &Lake, args: AlterArgs) -> Result<()> {
    let mut changes = Vec::new();
    let name_type = |opt: &str, v: &str| -> Result<(String, varve::arrow::datatypes::DataType)> {
        let (n, t) = v
            .rsplit_once(':')
            .ok_or_else(|| varve::Error::invalid(format!("{opt} {v:?}: expected NAME:TYPE, e.g. load:float64")))?;
        let t = varve::parse_type(t).map_err(|e| varve::Error::invalid(format!("{opt} {v:?}: {}", e.message())))?;
        Ok((n.trim().to_string(), t))
    };
    for v in &args.add_column {
        let (name, data_type) = name_type("--add-column", v)?;
        changes.push(varve::ColumnChange::Add { name, data_type });
    }
    for v in &args.rename_column {
        let (from, to) = v
            .split_once('=')
            .ok_or_else(|| varve::Error::invalid(format!("--rename-column {v:?}: expected OLD=NEW")))?;
        changes.push(varve::ColumnChange::Rename {
            from: from.trim().to_string(),
            to: to.trim().to_string(),
        });
    }
    for v in &args.drop_column {
        changes.push(varve::ColumnChange::Drop {
            name: v.trim().to_string(),
        });
    }
    for v in &args.widen_column {
        let (name, to) = name_type("--widen-column", v)?;
        changes.push(varve::ColumnChange::Widen { name, to });
    }
    if args.set.is_empty() && args.unset.is_empty() && changes.is_empty() {
        return Err(varve::Error::invalid(
            "nothing to change: give --set KEY=VALUE, --unset KEY or a column change such as --add-column \
             NAME:TYPE (see varve alter --help)",
        ));
    }
    let ident = varve::TableIdent::parse(&args.table)?;
    if !changes.is_empty() {
        let d = lake.alter_columns(&args.table, &changes).await?;
        let cols: Vec<String> = d
            .schema
            .fields()
            .iter()
            .map(|f| format!("{} {}", f.name(), f.data_type()))
            .collect();
        out!("{ident}: columns now {}", cols.join(", "));
    }
    if args.set.is_empty() && args.unset.is_empty() {
        return Ok(());
    }
    // In the order given (a later --set of the same key wins).
    let mut given: Vec<(String, String)> = Vec::new();
    for kv in &args.set {
        let (k, v) = kv
            .split_once('=')
            .ok_or_else(|| varve::Error::invalid(format!("--set {kv:?}: expected KEY=VALUE")))?;
        given.retain(|(key, _)| key != k.trim());
        given.push((k.trim().to_string(), v.trim().to_string()));
    }
    let set: HashMap<String, String> = given.iter().cloned().collect();
    lake.set_properties(&args.table, &set, &args.unset).await?;
    for (k, v) in &given {
        out!("{ident}: {k} = {v}");
    }
    for k in &args.unset {
        out!("{ident}: {k} removed");
    }
    if set.contains_key("varve.retention") {
        // What the new retention hides now, and what other engines read until maintenance.
        let i = lake.info(&args.table).await?;
        if let Some(n) = i.rows_past_retention {
            out!(
                "{ident}: the retention hides {n} of {} rows from Varve's queries now; `varve maintain` removes them \
                 from the table (other engines read them until then)",
                i.rows
            );
            if n > 0 && n == i.rows {
                eprintln!("warning: every row of {ident} is older than the retention: `varve maintain` will ask for --yes before it drops them all");
            }
        }
        if let Some(w) = &i.retention_warning {
            eprintln!("warning: {w}");
        }
    }
    Ok(())
}

/// Parses a duration for an option, naming the option in the error.
fn duration_arg(name: &str, v: &str) -> Result<Duration> {
    varve::parse_duration(v).map_err(|e| varve::Error::invalid(format!("{name}: {}", e.message())))
}

/// Options of `varve delete`.
#[derive(Debug, Args)]
pub(crate) struct DeleteArgs {
    /// The table.
    pub(crate) table: String,
    /// The rows to delete, as a SQL condition, e.g. --where "host = 'a' AND ts < '2024-01-01'".
    #[arg(long = "where", value_name = "PREDICATE", conflicts_with = "all")]
    pub(crate) predicate: Option<String>,
    /// Delete every row (the table stays, empty).
    #[arg(long)]
    pub(crate) all: bool,
}

/// Runs `varve delete`.
pub(crate) async fn delete(lake: &Lake, args: DeleteArgs) -> Result<()> {
    if args.predicate.is_none() && !args.all {
        return Err(varve::Error::invalid(
            "give --where PREDICATE for the rows to delete, or --all to delete every row",
        ));
    }
    let r = lake.delete(&args.table, args.predicate.as_deref()).await?;
    out!(
        "deleted {} row{} from {}: {} data file{} removed, {} written{}",
        r.rows_deleted,
        if r.rows_deleted == 1 { "" } else { "s" },
        r.table,
        r.files_removed,
        if r.files_removed == 1 { "" } else { "s" },
        r.files_written,
        r.snapshot_id.map(|s| format!(", snapshot {s}")).unwrap_or_default()
    );
    Ok(())
}
