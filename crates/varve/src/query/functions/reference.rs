//! The reference text of Varve's SQL functions, in DataFusion's [`Documentation`] form: each
//! function's `documentation()` returns its entry here ([`doc`]), so `information_schema.routines`
//! shows it for the scalar ones, and [`render`] writes the "Function reference" of
//! docs/sql.md from the functions the query context registers (a test keeps that part of the
//! file equal to it). The rules for NULLs, ties and empty groups are in each function's section
//! of docs/sql.md, linked from its entry.

use std::collections::HashMap;
use std::sync::LazyLock;

use datafusion::logical_expr::{DocSection, Documentation};

/// The section every Varve function is listed under.
const SECTION: DocSection = DocSection {
    include: true,
    label: "Time-series functions",
    description: Some("Varve's time-series functions"),
};

/// (name, syntax, description, arguments, example on the demo lake, section of docs/sql.md).
type Entry = (
    &'static str,
    &'static str,
    &'static str,
    &'static [(&'static str, &'static str)],
    &'static str,
    &'static str,
);

const ENTRIES: &[Entry] = &[
    (
        "time_bucket",
        "time_bucket(width, ts [, timezone] [, origin] [, offset])",
        "The start of the bucket of `width` that holds `ts`: fixed lengths on the time line, days and months on the wall clock of `timezone`.",
        &[
            ("width", "an interval: a length (`'15 minutes'`) or calendar days or months (`'1 month'`), not a mix"),
            ("ts", "a timestamp (or a date or text)"),
            ("timezone", "an IANA name or offset; default UTC"),
            ("origin", "a time on the bucket grid; default Monday 2000-01-03 (2000-01-01 for months)"),
            ("offset", "an interval added to each bucket's start"),
        ],
        "SELECT time_bucket(INTERVAL '1 month', \"Date\", 'Europe/Berlin') AS month, max(\"Close\") FROM market.stocks GROUP BY 1 ORDER BY 1 LIMIT 3",
        "time_bucket",
    ),
    (
        "time_bucket_gapfill",
        "time_bucket_gapfill(width, ts [, timezone] [, start, finish])",
        "In GROUP BY: `time_bucket` with a row for every bucket from `start` to `finish` (else WHERE's bounds on `ts`) in every series.",
        &[
            ("width", "as time_bucket's"),
            ("ts", "the time"),
            ("timezone", "as time_bucket's"),
            ("start, finish", "the range, `finish` excluded; default from WHERE"),
        ],
        "SELECT time_bucket_gapfill(INTERVAL '1 day', \"Date\") AS day, avg(\"Close\") FROM market.stocks WHERE \"Date\" >= '2000-03-01' AND \"Date\" < '2000-03-08' GROUP BY 1 ORDER BY 1",
        "gap-filling-time_bucket_gapfill-locf-interpolate",
    ),
    (
        "locf",
        "locf(aggregate)",
        "In a query grouped by `time_bucket_gapfill`: the series' last non-NULL value carried into gaps and NULLs.",
        &[("aggregate", "an aggregate of the query, or an expression of aggregates")],
        "SELECT time_bucket_gapfill(INTERVAL '1 day', \"Date\") AS day, locf(avg(\"Close\")) FROM market.stocks WHERE \"Date\" >= '2000-03-01' AND \"Date\" < '2000-03-08' GROUP BY 1 ORDER BY 1",
        "gap-filling-time_bucket_gapfill-locf-interpolate",
    ),
    (
        "interpolate",
        "interpolate(aggregate)",
        "In a query grouped by `time_bucket_gapfill`: gaps and NULLs on a straight line in time between the nearest values before and after (a double).",
        &[("aggregate", "a numeric aggregate of the query")],
        "SELECT time_bucket_gapfill(INTERVAL '1 day', \"Date\") AS day, interpolate(avg(\"Close\")) FROM market.stocks WHERE \"Date\" >= '2000-03-01' AND \"Date\" < '2000-03-08' GROUP BY 1 ORDER BY 1",
        "gap-filling-time_bucket_gapfill-locf-interpolate",
    ),
    (
        "first",
        "first(value, time)",
        "The group's `value` at its earliest `time` (a NULL value is a value).",
        &[("value", "any type"), ("time", "any orderable type")],
        "SELECT \"Ticker\", first(\"Close\", \"Date\") FROM market.stocks GROUP BY 1 ORDER BY 1",
        "first-last",
    ),
    (
        "last",
        "last(value, time)",
        "The group's `value` at its latest `time` (a NULL value is a value).",
        &[("value", "any type"), ("time", "any orderable type")],
        "SELECT \"Ticker\", last(\"Close\", \"Date\") FROM market.stocks GROUP BY 1 ORDER BY 1",
        "first-last",
    ),
    (
        "first_not_null",
        "first_not_null(value, time)",
        "The group's earliest non-NULL `value`.",
        &[("value", "any type"), ("time", "any orderable type")],
        "SELECT \"Ticker\", first_not_null(\"Close\", \"Date\") FROM market.stocks GROUP BY 1 ORDER BY 1",
        "first-last",
    ),
    (
        "last_not_null",
        "last_not_null(value, time)",
        "The group's latest non-NULL `value`.",
        &[("value", "any type"), ("time", "any orderable type")],
        "SELECT \"Ticker\", last_not_null(\"Close\", \"Date\") FROM market.stocks GROUP BY 1 ORDER BY 1",
        "first-last",
    ),
    (
        "vwap",
        "vwap(price, volume)",
        "The volume-weighted average price: sum(price * volume) / sum(volume).",
        &[("price", "a number"), ("volume", "a number")],
        "SELECT \"Ticker\", round(vwap(\"Close\", \"Volume\"), 2) FROM market.stocks GROUP BY 1 ORDER BY 1",
        "vwap-isfinite",
    ),
    (
        "isfinite",
        "isfinite(x)",
        "False for NaN and infinities, true for other numbers, dates and timestamps.",
        &[("x", "a number, date or timestamp")],
        "SELECT count(*) FROM market.stocks WHERE isfinite(\"Close\")",
        "vwap-isfinite",
    ),
    (
        "delta",
        "delta(value, time)",
        "The last value minus the first, in time order (a double).",
        &[("value", "a number"), ("time", "a timestamp")],
        "SELECT \"Ticker\", round(delta(\"Close\", \"Date\"), 2) FROM market.stocks GROUP BY 1 ORDER BY 1",
        "counters-and-time-weighted-averages-delta-increase-rate-twa",
    ),
    (
        "increase",
        "increase(value, time)",
        "A counter's increase, counting a fall as a reset to 0 (Prometheus's rule).",
        &[("value", "a counter"), ("time", "a timestamp")],
        "SELECT \"Ticker\", increase(\"Volume\", \"Date\") > 0 FROM market.stocks GROUP BY 1 ORDER BY 1",
        "counters-and-time-weighted-averages-delta-increase-rate-twa",
    ),
    (
        "rate",
        "rate(value, time)",
        "A counter's increase per second over the span from its first sample to its last.",
        &[("value", "a counter"), ("time", "a timestamp")],
        "SELECT \"Ticker\", rate(\"Volume\", \"Date\") > 0 FROM market.stocks GROUP BY 1 ORDER BY 1",
        "counters-and-time-weighted-averages-delta-increase-rate-twa",
    ),
    (
        "twa",
        "twa(value, time [, 'step' | 'linear'])",
        "The time-weighted average over the span of the samples: each value held until the next (`step`) or joined by lines (`linear`).",
        &[("value", "a number"), ("time", "a timestamp"), ("method", "'step' (default) or 'linear'")],
        "SELECT \"Ticker\", round(twa(\"Close\", \"Date\", 'linear'), 2) FROM market.stocks GROUP BY 1 ORDER BY 1",
        "counters-and-time-weighted-averages-delta-increase-rate-twa",
    ),
    (
        "histogram",
        "histogram(value, min, max, buckets)",
        "Counts of the group's values in `buckets` equal-width buckets over [min, max), with one more below and one above: a list.",
        &[
            ("value", "a number"),
            ("min, max", "constants, min < max"),
            ("buckets", "a constant, 1 to 100,000"),
        ],
        "SELECT \"Ticker\", array_to_string(histogram(\"Close\", 0, 1000, 4), ' ') FROM market.stocks GROUP BY 1 ORDER BY 1",
        "histogram-ewma",
    ),
    (
        "ewma",
        "ewma(value, alpha) OVER (... ORDER BY time)",
        "The exponentially weighted moving average, a window function: alpha * value + (1 - alpha) * previous.",
        &[("value", "a number"), ("alpha", "a constant in (0, 1]")],
        "SELECT \"Date\", round(ewma(\"Close\", 0.2) OVER (ORDER BY \"Date\"), 2) FROM market.stocks WHERE \"Ticker\" = 'IBM' ORDER BY 1 LIMIT 3",
        "histogram-ewma",
    ),
    (
        "m4",
        "m4(time, value, width)",
        "The first, last, least and greatest samples of each `width` bucket (M4, Jugel et al. 2014): a list of {time, value} to unnest.",
        &[("time", "a timestamp"), ("value", "a number"), ("width", "a constant fixed-length interval")],
        "SELECT \"Ticker\", cardinality(m4(\"Date\", \"Close\", INTERVAL '365 days')) FROM market.stocks GROUP BY 1 ORDER BY 1",
        "downsampling-m4-lttb",
    ),
    (
        "lttb",
        "lttb(time, value, points)",
        "At most `points` samples chosen by Largest-Triangle-Three-Buckets (Steinarsson 2013): a list of {time, value} to unnest.",
        &[("time", "a timestamp or integer"), ("value", "a number"), ("points", "a constant, at least 3")],
        "SELECT \"Ticker\", cardinality(lttb(\"Date\", \"Close\", 10)) FROM market.stocks GROUP BY 1 ORDER BY 1",
        "downsampling-m4-lttb",
    ),
];

static DOCS: LazyLock<HashMap<&'static str, Documentation>> = LazyLock::new(|| {
    ENTRIES
        .iter()
        .map(|(name, syntax, description, args, example, section)| {
            let mut b = Documentation::builder(SECTION, format!("{description} (docs/sql.md#{section})"), *syntax)
                .with_sql_example(format!("```sql\n{example};\n```"));
            for (a, d) in args.iter() {
                b = b.with_argument(*a, *d);
            }
            (*name, b.build())
        })
        .collect()
});

/// Where `name` comes in the reference: its entry's place, after all entries when it has none.
pub(crate) fn position(name: &str) -> usize {
    ENTRIES.iter().position(|e| e.0 == name).unwrap_or(ENTRIES.len())
}

/// The documentation of the Varve function `name`, if it has one.
pub(crate) fn doc(name: &str) -> Option<&'static Documentation> {
    DOCS.get(name)
}

/// The function reference of docs/sql.md, from the documentation of the functions `functions`
/// (name, kind), in the order given: one entry per function, with its syntax, what it gives,
/// its arguments and an example that runs on the demo lake. A function without documentation
/// is listed as undocumented, which the docs test refuses.
pub(crate) fn render(functions: &[(String, &'static str, Option<&Documentation>)]) -> String {
    let mut out = String::new();
    for (name, kind, doc) in functions {
        out.push_str(&format!("### {name}\n\n"));
        let Some(d) = doc else {
            out.push_str("(undocumented)\n\n");
            continue;
        };
        let (text, section) = match d.description.rsplit_once(" (docs/sql.md#") {
            Some((t, s)) => (t, s.trim_end_matches(')')),
            None => (d.description.as_str(), ""),
        };
        out.push_str(&format!("`{}` ({kind})\n\n{text}", d.syntax_example));
        if !section.is_empty() {
            out.push_str(&format!(" Rules: [its section](#{section})."));
        }
        out.push_str("\n\n");
        for (a, desc) in d.arguments.iter().flatten() {
            out.push_str(&format!("- `{a}`: {desc}\n"));
        }
        if let Some(example) = &d.sql_example {
            out.push_str(&format!("\n{example}\n"));
        }
        out.push('\n');
    }
    out
}
