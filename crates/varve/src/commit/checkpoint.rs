//! Source checkpoints: commits that carry a stream source's positions (Kafka offsets) with their
//! rows, so that a table knows how far each source stream is written and a writer resumes from
//! the table, never from a position kept elsewhere.
//!
//! A [`SourceCheckpoint`] names, per stream (`topic/partition` for Kafka), the position the
//! commit's rows start at (`from`, the next position the table had when the writer started
//! reading) and the position after its last row (`to`). The commit is a compare-and-set on every
//! attempt (the commit module's rebase rules): each stream's stored position must still be
//! `from`, or absent; then the commit stores `to`. This is what makes ingestion exactly once
//! under crashes, rebalances and zombie writers (the scheme of Flink's two-phase sinks and the
//! Iceberg Kafka Connect sink, with the table as the only source of truth):
//!
//! - every stream already at `to` or beyond: the commit is a replay of one that landed, so it is a
//!   duplicate and writes nothing;
//! - any stream at another position: a second writer committed those rows (a rebalance, a
//!   replayed write-ahead log): [`ErrorKind::Conflict`], nothing is written, and the writer
//!   resumes its streams from [`stored_positions`].
//!
//! Positions live in table properties `varve.source.<source>.<stream>` (so they survive snapshot
//! expiry and compaction) and in the new snapshot's summary as `varve.source.<source>` =
//! `stream:from-to,...` (Iceberg spec, "Snapshots": summary fields are free-form).

use std::collections::HashMap;

use crate::error::{Error, ErrorKind, Result};
use crate::format::properties::PROP_SOURCE_PREFIX;

/// One stream's part of a checkpoint: the commit's rows cover positions `from..to` (`to` is
/// exclusive; positions between may be absent, as Kafka offsets of transaction markers are).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourcePosition {
    /// The stream's name inside its source, e.g. `readings/3` (Kafka topic `readings`,
    /// partition 3). Any text without `,` or `:`.
    pub stream: String,
    /// The stream's stored position this commit continues from.
    pub from: i64,
    /// The stream's position after this commit.
    pub to: i64,
}

/// Positions a commit advances, for one source (a name such as `kafka`). See the module docs.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SourceCheckpoint {
    /// The source's name: letters, digits, `-` and `_`.
    pub source: String,
    /// The streams the commit advances.
    pub positions: Vec<SourcePosition>,
}

/// How a checkpoint stands against a table's stored positions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Standing {
    /// Every stream is at the commit's `from` (or has no position yet): commit.
    Continues,
    /// Every stream is at the commit's `to` or beyond: the commit landed before.
    Committed,
}

impl SourceCheckpoint {
    /// Checks names and ranges.
    ///
    /// Errors: [`ErrorKind::InvalidInput`] for an empty or malformed source or stream name, or a
    /// range with `to < from`.
    pub(crate) fn validate(&self) -> Result<()> {
        let ok = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        if !ok(&self.source) {
            return Err(Error::invalid(format!(
                "source name {:?}: use letters, digits, - and _",
                self.source
            )));
        }
        for p in &self.positions {
            if p.stream.is_empty() || p.stream.contains([',', ':', '\n']) {
                return Err(Error::invalid(format!(
                    "stream name {:?}: may not contain , or :",
                    p.stream
                )));
            }
            if p.to < p.from {
                return Err(Error::invalid(format!(
                    "stream {}: position range {}..{} ends before it starts",
                    p.stream, p.from, p.to
                )));
            }
        }
        Ok(())
    }

    fn key(&self, stream: &str) -> String {
        format!("{PROP_SOURCE_PREFIX}{}.{stream}", self.source)
    }

    /// How the checkpoint stands against `props` (a table's properties).
    ///
    /// Errors: [`ErrorKind::Conflict`] naming the first stream whose stored position is neither
    /// `from` nor at or past `to` (or past `from` while another stream still continues).
    pub(crate) fn standing(&self, table: &str, props: &HashMap<String, String>) -> Result<Standing> {
        let stored = |p: &SourcePosition| props.get(&self.key(&p.stream)).and_then(|v| v.parse::<i64>().ok());
        if !self.positions.is_empty()
            && self
                .positions
                .iter()
                .all(|p| stored(p).is_some_and(|s| s >= p.to && (s > p.from || p.to == p.from)))
        {
            return Ok(Standing::Committed);
        }
        for p in &self.positions {
            match stored(p) {
                None => {}
                Some(s) if s == p.from => {}
                Some(s) => {
                    return Err(Error::new(
                        ErrorKind::Conflict,
                        format!(
                            "table {table}: {} stream {} is at position {s}, not {} where this commit starts: \
                             another writer committed it; resume from the table's positions",
                            self.source, p.stream, p.from
                        ),
                    ))
                }
            }
        }
        Ok(Standing::Continues)
    }

    /// The table properties that store the new positions.
    pub(crate) fn properties(&self) -> HashMap<String, String> {
        self.positions
            .iter()
            .map(|p| (self.key(&p.stream), p.to.to_string()))
            .collect()
    }

    /// The snapshot summary entry: (`varve.source.<source>`, `stream:from-to,...`).
    pub(crate) fn summary(&self) -> (String, String) {
        let v: Vec<String> = self
            .positions
            .iter()
            .map(|p| format!("{}:{}-{}", p.stream, p.from, p.to))
            .collect();
        (format!("{PROP_SOURCE_PREFIX}{}", self.source), v.join(","))
    }
}

/// The stored positions of `source`'s streams in a table's properties: stream name → the next
/// position to read.
pub(crate) fn stored_positions(props: &HashMap<String, String>, source: &str) -> HashMap<String, i64> {
    let prefix = format!("{PROP_SOURCE_PREFIX}{source}.");
    props
        .iter()
        .filter_map(|(k, v)| Some((k.strip_prefix(&prefix)?.to_string(), v.parse().ok()?)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cp(positions: &[(&str, i64, i64)]) -> SourceCheckpoint {
        SourceCheckpoint {
            source: "kafka".into(),
            positions: positions
                .iter()
                .map(|(s, f, t)| SourcePosition {
                    stream: s.to_string(),
                    from: *f,
                    to: *t,
                })
                .collect(),
        }
    }

    #[test]
    fn compare_and_set() {
        let c = cp(&[("t/0", 10, 20), ("t/1", 0, 5)]);
        let mut props = HashMap::new();
        assert_eq!(c.standing("x", &props).unwrap(), Standing::Continues);
        props.insert("varve.source.kafka.t/0".to_string(), "10".to_string());
        assert_eq!(c.standing("x", &props).unwrap(), Standing::Continues);
        props.extend(c.properties());
        assert_eq!(stored_positions(&props, "kafka")["t/0"], 20);
        assert_eq!(c.standing("x", &props).unwrap(), Standing::Committed);
        // Another writer moved one stream on: a conflict, never a partial duplicate.
        props.insert("varve.source.kafka.t/1".to_string(), "0".to_string());
        let e = c.standing("x", &props).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Conflict);
        assert!(e.message().contains("t/0"), "{e}");
        props.insert("varve.source.kafka.t/0".to_string(), "15".to_string());
        assert_eq!(c.standing("x", &props).unwrap_err().kind(), ErrorKind::Conflict);
        assert_eq!(c.summary().1, "t/0:10-20,t/1:0-5");
        assert!(cp(&[("a:b", 0, 1)]).validate().is_err());
        assert!(cp(&[("a", 2, 1)]).validate().is_err());
    }
}
