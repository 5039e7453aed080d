//! `varve demo`: the main job on real data, end to end, in a fresh lake.
//!
//! The data files are compiled into the binary (copies of `examples/data/`), so the demo runs from
//! any directory: daily stock prices of five tickers (2000-2013) and a continuous glucose monitor's
//! 5-minute readings (2010).

use std::path::PathBuf;
use std::time::Instant;

use varve::{Error, Lake, Result};

use crate::import::ImportArgs;
use crate::output::{write_batches, OutputFormat};

const STOCKS: &[u8] = include_bytes!("../../../examples/data/stocks.csv.gz");
const CGM: &[u8] = include_bytes!("../../../examples/data/CGM.csv.gz");

/// `println!` that returns the write error (a closed pipe ends the demo quietly, see `output`).
macro_rules! say {
    ($($t:tt)*) => {
        crate::output::line(&format!($($t)*))?
    };
}

fn import_args(table: &str, file: PathBuf) -> ImportArgs {
    ImportArgs {
        table: table.to_string(),
        files: vec![file],
        format: None,
        time_columns: vec![],
        time_name: "time".into(),
        series_key: vec![],
        partition: None,
        dedup: "none".into(),
        plain: false,
        time_format: None,
        timezone: "UTC".into(),
        time_unit: None,
        time_origin: None,
        skip_rows: 0,
        null_values: vec![],
        delimiter: None,
        batch_id: None,
        note: None,
        truncate_ns: false,
        rename_duplicates: false,
        quiet: false,
        no_maintain: false,
        strict_types: false,
    }
}

async fn show(lake: &Lake, title: &str, sql: &str) -> Result<varve::QueryResult> {
    say!("\n== {title}\n{sql}");
    let t = Instant::now();
    let r = lake.sql(sql).await?;
    let mut out = std::io::stdout().lock();
    write_batches(&mut out, &r.schema, &r.batches, OutputFormat::Table, false)?;
    say!("({:.1} ms)", t.elapsed().as_secs_f64() * 1e3);
    Ok(r)
}

/// Runs the demo in `dir` (a new directory under the temporary directory when `None`).
pub(crate) async fn run(dir: Option<PathBuf>) -> Result<()> {
    let dir = match dir {
        Some(d) => {
            if d.exists() {
                return Err(Error::new(
                    varve::ErrorKind::AlreadyExists,
                    format!("{}: exists already; the demo needs a fresh directory", d.display()),
                ));
            }
            d
        }
        None => {
            let stamp = chrono::Utc::now().format("%Y%m%d-%H%M%S");
            std::env::temp_dir().join(format!("varve-demo-{stamp}-{}", std::process::id()))
        }
    };
    let data = dir.join("input");
    std::fs::create_dir_all(&data).map_err(|e| Error::invalid(format!("{}: {e}", data.display())))?;
    let stocks = data.join("stocks.csv.gz");
    let cgm = data.join("CGM.csv.gz");
    std::fs::write(&stocks, STOCKS)
        .and_then(|_| std::fs::write(&cgm, CGM))
        .map_err(|e| Error::invalid(e.to_string()))?;
    let lake_dir = dir.join("lake");
    let lake = Lake::open(&lake_dir.to_string_lossy(), &Default::default())?;
    say!("Varve demo: a lake in {}\n", lake.url());

    let mut a = import_args("market.stocks", stocks);
    a.series_key = vec!["Ticker".into()];
    a.note = Some("daily prices, 5 tickers".into());
    crate::import::run(&lake, a).await?;
    let mut a = import_args("health.cgm", cgm);
    a.null_values = vec!["nil".into()];
    a.note = Some("glucose monitor, 5-minute readings".into());
    crate::import::run(&lake, a).await?;
    let first_cgm = lake.describe("health.cgm").await?.snapshot_id.unwrap_or_default();

    show(&lake, "Tables", "SHOW TABLES").await?;
    say!("\n== The newest row of every series (varve latest market.stocks)");
    let r = lake.latest("market.stocks").await?;
    write_batches(
        &mut std::io::stdout().lock(),
        &r.schema,
        &r.batches,
        OutputFormat::Table,
        false,
    )?;
    show(
        &lake,
        "Daily glucose: time_bucket aggregate",
        "SELECT time_bucket(INTERVAL '1 day', datetime) AS day, count(*) AS readings, \
         round(avg(glucose), 1) AS avg_glucose, min(glucose) AS low, max(glucose) AS high \
         FROM health.cgm GROUP BY 1 ORDER BY 1 LIMIT 7",
    )
    .await?;
    show(
        &lake,
        "Monthly volume-weighted average price: time_bucket per series",
        "SELECT Ticker, time_bucket(INTERVAL '1 month', Date) AS month, \
         round(sum(Close * Volume) / sum(Volume), 2) AS vwap, sum(Volume) AS volume \
         FROM market.stocks WHERE Date >= '2013-01-01' GROUP BY 1, 2 ORDER BY 2, 1 LIMIT 10",
    )
    .await?;
    let range = "SELECT Ticker, Date, Close FROM market.stocks \
                 WHERE Date >= '2012-05-14' AND Date < '2012-05-19' AND Ticker = 'AAPL' ORDER BY Date";
    show(&lake, "A time-range scan", range).await?;
    let r = lake.sql(&format!("EXPLAIN {range}")).await?;
    for b in &r.batches {
        let kinds = b.column(0).as_any().downcast_ref::<varve::arrow::array::StringArray>();
        let texts = b.column(1).as_any().downcast_ref::<varve::arrow::array::StringArray>();
        if let (Some(k), Some(t)) = (kinds, texts) {
            for i in 0..b.num_rows() {
                if k.value(i) == "varve_pruning" {
                    say!("pruning: {}", t.value(i));
                }
            }
        }
    }

    say!("\n== Time travel: a late reading arrives");
    let insert = "INSERT INTO health.cgm VALUES (21.0, TIMESTAMP '2010-10-10 12:00:00', 131)";
    say!("{insert}");
    lake.sql(insert).await?;
    show(
        &lake,
        "Now",
        "SELECT count(*) AS readings, max(datetime) AS newest FROM health.cgm",
    )
    .await?;
    show(
        &lake,
        "As of the import's snapshot",
        &format!("SELECT count(*) AS readings, max(datetime) AS newest FROM health.cgm FOR VERSION AS OF {first_cgm}"),
    )
    .await?;
    say!("\n== History of health.cgm (varve history health.cgm)");
    crate::output::print_history(&lake.history("health.cgm").await?, None, None)?;
    say!(
        "\nThe lake stays in {}. Try:\n  varve --lake {} info market.stocks\n  \
         varve --lake {} sql \"SELECT Ticker, count(*) FROM market.stocks GROUP BY Ticker\"",
        lake_dir.display(),
        lake_dir.display(),
        lake_dir.display()
    );
    Ok(())
}
