//! Basic time-series queries over a trades tape (`basic.trades`): a count, the newest row per
//! series, one series over a day, a high-cardinality GROUP BY series and 5-minute bucket, and an
//! `IN` list of 50 series.

use super::{distinct, in_list, params, window, Query};
use crate::gen::trades::symbol;
use crate::gen::GenSpec;

/// The basic suite.
pub fn queries(spec: &GenSpec) -> Vec<Query> {
    let mut q = vec![Query::new(
        "count",
        "count(*) of the whole table",
        "SELECT count(*) AS n FROM basic.trades".to_string(),
    )];
    q.push(Query::new(
        "newest-per-series",
        "the newest trade of each symbol",
        "SELECT symbol, ts, price, size FROM (SELECT symbol, ts, price, size, \
         row_number() OVER (PARTITION BY symbol ORDER BY ts DESC) AS rn FROM basic.trades) t \
         WHERE rn = 1 ORDER BY symbol"
            .to_string(),
    ));
    let mut r = params(spec, "one-series-day");
    let sym = symbol(distinct(&mut r, 1, spec.scale)[0]);
    let (a, b) = window(&mut r, spec, 86_400_000_000);
    q.push(Query::new(
        "one-series-day",
        "one symbol's trades over a day, in time order",
        format!("SELECT ts, price, size, side FROM basic.trades WHERE symbol = '{sym}' AND ts >= {a} AND ts < {b} ORDER BY ts"),
    ).over(86_400_000_000));
    q.push(Query::new(
        "series-5min-bars",
        "5-minute bars (count, volume, low, high, mean) of every symbol",
        "SELECT symbol, time_bucket(INTERVAL '5 minutes', ts) AS bucket, count(*) AS trades, sum(size) AS volume, \
         min(price) AS low, max(price) AS high, avg(price) AS mean FROM basic.trades \
         GROUP BY symbol, bucket ORDER BY symbol, bucket"
            .to_string(),
    ));
    let mut r = params(spec, "in-list-50");
    let syms = in_list(distinct(&mut r, 50, spec.scale).into_iter().map(symbol));
    q.push(Query::new(
        "in-list-50",
        "trade count, volume and mean price of 50 symbols",
        format!(
            "SELECT symbol, count(*) AS trades, sum(size) AS volume, avg(price) AS mean FROM basic.trades \
             WHERE symbol IN ({syms}) GROUP BY symbol ORDER BY symbol"
        ),
    ));
    q
}
