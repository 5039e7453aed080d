//! Indexes a commit keeps beside the Iceberg metadata, so that some queries need no scan of the
//! data files. Each index describes exactly one snapshot: it is computed inside the commit attempt
//! that makes the snapshot and named by that snapshot's summary, so a reader at any retained
//! snapshot (time travel included) finds the index of that snapshot, never a newer or older one.
//!
//! - [`last_value`]: the newest row of every series.
//!
//! This module reads data files (a rebuild) through `write::merge`'s scan and writes only its own
//! objects; it does not commit: `commit` calls it and puts what it made into the snapshot.

pub(crate) mod last_value;
