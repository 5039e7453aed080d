//! Query suites: the questions asked of each dataset, in one SQL text that both Varve and DuckDB
//! answer (tables are `<suite>.<table>` in both). Random parameters (which fleet, truck, host or
//! window) come from the run's seed and the query's name, so two runs ask the same questions.

pub mod basic;
pub mod devops;
pub mod iot;

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use crate::gen::{stream, Dataset, GenSpec};

/// A suite of queries over one dataset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Suite {
    /// TSBS IoT queries over trucks' readings and diagnostics.
    Iot,
    /// TSBS DevOps queries over hosts' cpu.
    Devops,
    /// Basic time-series queries over a trades tape (also accepted as `trades`).
    #[value(alias = "trades")]
    Basic,
}

impl Suite {
    /// The suite's name.
    pub fn name(self) -> &'static str {
        match self {
            Suite::Iot => "iot",
            Suite::Devops => "devops",
            Suite::Basic => "basic",
        }
    }

    /// The dataset it queries.
    pub fn dataset(self) -> Dataset {
        match self {
            Suite::Iot => Dataset::Iot,
            Suite::Devops => Dataset::Devops,
            Suite::Basic => Dataset::Trades,
        }
    }

    /// The SQL namespace its tables live in.
    pub fn namespace(self) -> &'static str {
        self.name()
    }

    /// The suite's queries for a dataset generated from `spec`. A query whose window is longer
    /// than the data says so in its description ("window cut to the data").
    pub fn queries(self, spec: &GenSpec) -> Vec<Query> {
        let mut q = match self {
            Suite::Iot => iot::queries(spec),
            Suite::Devops => devops::queries(spec),
            Suite::Basic => basic::queries(spec),
        };
        for query in &mut q {
            if let Some(len) = query.window_us.filter(|l| *l > spec.duration_us) {
                query.description.push_str(&format!(
                    " (window cut to the data: {} s of {} s, so thresholds may not be reachable)",
                    spec.duration_us / 1_000_000,
                    len / 1_000_000
                ));
            }
        }
        q
    }
}

/// One query of a suite.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Query {
    /// Its name, e.g. `last-loc` (TSBS names where TSBS has the query).
    pub name: String,
    /// What it asks.
    pub description: String,
    /// The SQL, with its parameters filled in.
    pub sql: String,
    /// Whether the SQL ends with an ORDER BY on unique keys, so the order of the answer is
    /// checked too.
    pub ordered: bool,
    /// The length of its time window, µs, when it has one.
    #[serde(default)]
    pub window_us: Option<i64>,
}

impl Query {
    pub(crate) fn new(name: &str, description: &str, sql: String) -> Query {
        // The outer ORDER BY is the last one, with no closing parenthesis after it (an ORDER BY
        // inside OVER (...) or a subquery has one).
        let ordered = sql.rfind("ORDER BY").is_some_and(|i| !sql[i..].contains(')'));
        Query {
            name: name.to_string(),
            description: description.to_string(),
            sql,
            ordered,
            window_us: None,
        }
    }

    /// The same query, noting the length of its time window.
    pub(crate) fn over(mut self, window_us: i64) -> Query {
        self.window_us = Some(window_us);
        self
    }
}

/// The random stream for one query's parameters.
pub(crate) fn params(spec: &GenSpec, query: &str) -> ChaCha8Rng {
    stream(spec.seed, &format!("query.{query}"), 0)
}

/// A window of `len_us` inside the dataset's period, starting on a whole 10 minutes (so windows
/// hold whole 10-minute buckets); the whole period when it is shorter. Returns SQL literals for
/// (start, end).
pub(crate) fn window(rng: &mut ChaCha8Rng, spec: &GenSpec, len_us: i64) -> (String, String) {
    let (a, b) = window_us(rng, spec, len_us);
    (ts_literal(a), ts_literal(b))
}

pub(crate) fn window_us(rng: &mut ChaCha8Rng, spec: &GenSpec, len_us: i64) -> (i64, i64) {
    if spec.duration_us <= len_us {
        return (spec.start_us, spec.start_us + spec.duration_us);
    }
    const STEP: i64 = 600_000_000;
    let steps = (spec.duration_us - len_us) / STEP;
    let a = spec.start_us + rng.random_range(0..=steps) * STEP;
    (a, a + len_us)
}

/// A time as a SQL string literal both engines read as a UTC timestamp.
pub(crate) fn ts_literal(us: i64) -> String {
    let t = chrono::DateTime::from_timestamp_micros(us).expect("time in range");
    format!("'{}'", t.format("%Y-%m-%dT%H:%M:%SZ"))
}

/// `n` distinct indexes below `of`, sorted (all of them when `n >= of`).
pub(crate) fn distinct(rng: &mut ChaCha8Rng, n: usize, of: u32) -> Vec<u32> {
    let mut all: Vec<u32> = (0..of).collect();
    let n = n.min(of as usize);
    for i in 0..n {
        let j = rng.random_range(i..all.len());
        all.swap(i, j);
    }
    let mut v = all[..n].to_vec();
    v.sort_unstable();
    v
}

/// A SQL `IN` list of string literals.
pub(crate) fn in_list(values: impl IntoIterator<Item = String>) -> String {
    values
        .into_iter()
        .map(|v| format!("'{v}'"))
        .collect::<Vec<_>>()
        .join(", ")
}
