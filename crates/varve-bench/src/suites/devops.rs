//! The TSBS DevOps queries over `devops.cpu`. `single-groupby-M-H-T` is the per-minute maximum of
//! M metrics for H random hosts over T hours; `cpu-max-all-H` the hourly maximum of all ten metrics
//! for H hosts over 8 hours; `double-groupby-M` the hourly mean of M metrics per host over 12 hours;
//! `high-cpu-*` the readings with usage_user above 90 over 12 hours; `lastpoint` each host's newest
//! reading; `groupby-orderby-limit` the last 5 per-minute maxima before a random time.

use super::{distinct, in_list, params, ts_literal, window, window_us, Query};
use crate::gen::devops::{host_name, FIELDS, TAGS};
use crate::gen::GenSpec;

const HOUR: i64 = 3_600_000_000;

fn hosts(spec: &GenSpec, query: &str, n: usize) -> (rand_chacha::ChaCha8Rng, String) {
    let mut r = params(spec, query);
    let list = in_list(distinct(&mut r, n, spec.scale).into_iter().map(host_name));
    (r, list)
}

fn aggs(f: &str, metrics: &[&str]) -> String {
    metrics
        .iter()
        .map(|m| format!("{f}({m}) AS {f}_{m}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The DevOps suite.
pub fn queries(spec: &GenSpec) -> Vec<Query> {
    let mut q = vec![];
    for (m, h, t) in [(1, 1, 1), (1, 1, 12), (1, 8, 1), (5, 1, 1), (5, 1, 12), (5, 8, 1)] {
        let name = format!("single-groupby-{m}-{h}-{t}");
        let (mut r, hosts) = hosts(spec, &name, h);
        let (a, b) = window(&mut r, spec, t * HOUR);
        q.push(
            Query::new(
                &name,
                &format!("per-minute maximum of {m} metric(s) for {h} host(s) over {t} hour(s)"),
                format!(
                    "SELECT time_bucket(INTERVAL '1 minute', ts) AS minute, {} FROM devops.cpu \
                 WHERE hostname IN ({hosts}) AND ts >= {a} AND ts < {b} GROUP BY minute ORDER BY minute",
                    aggs("max", &FIELDS[..m])
                ),
            )
            .over(t * HOUR),
        );
    }
    for h in [1, 8] {
        let name = format!("cpu-max-all-{h}");
        let (mut r, hosts) = hosts(spec, &name, h);
        let (a, b) = window(&mut r, spec, 8 * HOUR);
        q.push(
            Query::new(
                &name,
                &format!("hourly maximum of all ten metrics for {h} host(s) over 8 hours"),
                format!(
                    "SELECT time_bucket(INTERVAL '1 hour', ts) AS hour, {} FROM devops.cpu \
                 WHERE hostname IN ({hosts}) AND ts >= {a} AND ts < {b} GROUP BY hour ORDER BY hour",
                    aggs("max", &FIELDS)
                ),
            )
            .over(8 * HOUR),
        );
    }
    for (label, m) in [("1", 1), ("5", 5), ("all", 10)] {
        let name = format!("double-groupby-{label}");
        let mut r = params(spec, &name);
        let (a, b) = window(&mut r, spec, 12 * HOUR);
        q.push(
            Query::new(
                &name,
                &format!("hourly mean of {m} metric(s) per host over 12 hours"),
                format!(
                    "SELECT time_bucket(INTERVAL '1 hour', ts) AS hour, hostname, {} FROM devops.cpu \
                 WHERE ts >= {a} AND ts < {b} GROUP BY hour, hostname ORDER BY hour, hostname",
                    aggs("avg", &FIELDS[..m])
                ),
            )
            .over(12 * HOUR),
        );
    }
    let (mut r, host) = hosts(spec, "high-cpu-1", 1);
    let (a, b) = window(&mut r, spec, 12 * HOUR);
    q.push(
        Query::new(
            "high-cpu-1",
            "readings of one host with usage_user above 90 over 12 hours",
            format!(
                "SELECT * FROM devops.cpu WHERE usage_user > 90.0 AND ts >= {a} AND ts < {b} \
             AND hostname IN ({host}) ORDER BY ts"
            ),
        )
        .over(12 * HOUR),
    );
    let mut r = params(spec, "high-cpu-all");
    let (a, b) = window(&mut r, spec, 12 * HOUR);
    q.push(
        Query::new(
            "high-cpu-all",
            "readings of all hosts with usage_user above 90 over 12 hours",
            format!(
                "SELECT * FROM devops.cpu WHERE usage_user > 90.0 AND ts >= {a} AND ts < {b} ORDER BY ts, hostname"
            ),
        )
        .over(12 * HOUR),
    );
    let cols = std::iter::once("ts")
        .chain(TAGS)
        .chain(FIELDS)
        .collect::<Vec<_>>()
        .join(", ");
    q.push(Query::new(
        "lastpoint",
        "the newest reading of each host",
        format!(
            "SELECT {cols} FROM (SELECT {cols}, row_number() OVER (PARTITION BY hostname ORDER BY ts DESC) AS rn \
             FROM devops.cpu) t WHERE rn = 1 ORDER BY hostname"
        ),
    ));
    let mut r = params(spec, "groupby-orderby-limit");
    let (_, end) = window_us(&mut r, spec, HOUR);
    let end = ts_literal(end);
    q.push(Query::new(
        "groupby-orderby-limit",
        "the last 5 per-minute maxima of usage_user before a random time",
        format!(
            "SELECT time_bucket(INTERVAL '1 minute', ts) AS minute, max(usage_user) AS max_usage_user \
             FROM devops.cpu WHERE ts < {end} GROUP BY minute ORDER BY minute DESC LIMIT 5"
        ),
    ));
    q
}
