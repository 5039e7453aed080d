//! Last-write-wins dedup of appends (table property `varve.dedup = last-write-wins`): a row whose
//! (series key, time) is already stored replaces the stored row, as every Iceberg reader sees
//! right after the commit.
//!
//! How: copy-on-write. Within an append the later row of a key wins (`write::encode` keeps the
//! last of each key; a later flush rewrites the append's earlier files it overlaps). Against the
//! table, [`LastWriteWins`] runs on every commit attempt against the newest metadata (a
//! [`Rebase`] hook): each live file of a partition the append writes whose bounds overlap the
//! append's files is read by its key columns only; a file holding some of the append's keys is
//! rewritten without those rows (one file in, one file out, sorted as before), and the commit
//! removes it and adds the rewrite (an `overwrite` snapshot). Files resolved on an earlier attempt
//! are reused while still live; rewrites of files that another commit removed meanwhile are
//! deleted, and their replacements resolved in turn. So a concurrent append of the same key, a
//! compaction or a delete is always seen before this commit lands.
//!
//! Cost: reading the key columns of the overlapping files, and rewriting only those that hold a
//! replaced key.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use arrow::datatypes::SchemaRef;
use futures::future::BoxFuture;
use futures::TryStreamExt;
use iceberg::spec::{DataFile, Datum, Operation};
use object_store::path::Path;
use parquet::arrow::async_reader::{ParquetObjectReader, ParquetRecordBatchStreamBuilder};
use parquet::arrow::ProjectionMask;

use super::{Rebase, Transaction};
use crate::catalog::{self, LoadedTable, MetadataCache};
use crate::error::Result;
use crate::format::manifest::partition_of;
use crate::format::properties::MaintenanceSettings;
use crate::format::{schema, TableContract};
use crate::storage::Storage;
use crate::write::keys::{key_columns, KeySet};
use crate::write::merge_job::{Keep, MergeJob};

/// What resolving one stored file against an append's keys found.
#[derive(Debug, Clone)]
pub(crate) enum Resolution {
    /// The file holds none of the keys.
    Untouched,
    /// The file held `replaced` rows with the keys; `files` are its rows without them (none when
    /// every row was replaced).
    Rewritten {
        files: Vec<DataFile>,
        uploaded: Vec<Path>,
        replaced: u64,
    },
}

impl Resolution {
    fn uploaded(&self) -> &[Path] {
        match self {
            Resolution::Untouched => &[],
            Resolution::Rewritten { uploaded, .. } => uploaded,
        }
    }
}

/// How many rows of `file` have a key in `keys`, reading only its key columns.
async fn count_hits(storage: &Storage, file: &DataFile, contract: &TableContract, keys: &KeySet) -> Result<u64> {
    let path = storage.path_of(file.file_path())?;
    let reader = ParquetObjectReader::new(storage.store.clone(), path).with_file_size(file.file_size_in_bytes());
    let builder = ParquetRecordBatchStreamBuilder::new(reader).await?;
    let arrow_schema = builder.schema().clone();
    let roots = key_columns(contract)
        .iter()
        .map(|n| arrow_schema.index_of(n))
        .collect::<std::result::Result<Vec<_>, _>>()?;
    let mask = ProjectionMask::roots(builder.parquet_schema(), roots);
    let mut stream = builder.with_projection(mask).with_batch_size(64 * 1024).build()?;
    let mut hits = 0u64;
    while let Some(batch) = stream.try_next().await? {
        hits += keys.contains(&batch)?.true_count() as u64;
    }
    Ok(hits)
}

/// Resolves `file` against `keys`: untouched, or rewritten without the rows whose key is in `keys`.
pub(crate) async fn resolve(job: &MergeJob<'_>, file: &DataFile, keys: &Arc<KeySet>) -> Result<Resolution> {
    let hits = count_hits(job.storage, file, job.contract, keys).await?;
    if hits == 0 {
        return Ok(Resolution::Untouched);
    }
    let merged = job
        .merge(std::slice::from_ref(file), Some(Keep::KeysNotIn(keys.clone())))
        .await?;
    Ok(Resolution::Rewritten {
        replaced: file.record_count().saturating_sub(merged.rows),
        files: merged.files,
        uploaded: merged.uploaded,
    })
}

/// Whether `a` and `b` may share a key, by the Iceberg metrics of the key columns `ids`: for every
/// key column, their value ranges overlap, or both hold NULLs (a NULL series key is one series,
/// and the bounds leave NULLs out). A missing bound may hold anything.
fn bounds_overlap(a: &DataFile, b: &DataFile, ids: &[i32]) -> bool {
    ids.iter().all(|id| {
        let lo_a: Option<&Datum> = a.lower_bounds().get(id);
        let hi_a = a.upper_bounds().get(id);
        let lo_b = b.lower_bounds().get(id);
        let hi_b = b.upper_bounds().get(id);
        let le = |x: Option<&Datum>, y: Option<&Datum>| match (x, y) {
            (Some(x), Some(y)) => x.partial_cmp(y).is_none_or(|o| o != std::cmp::Ordering::Greater),
            _ => true,
        };
        let nulls = |f: &DataFile| f.null_value_counts().get(id).is_none_or(|n| *n > 0);
        (le(lo_a, hi_b) && le(lo_b, hi_a)) || (nulls(a) && nulls(b))
    })
}

/// The field ids of the key columns of `contract` in `s`.
fn key_field_ids(s: &iceberg::spec::Schema, contract: &TableContract) -> Vec<i32> {
    key_columns(contract)
        .iter()
        .filter_map(|n| s.field_by_name(n).map(|f| f.id))
        .collect()
}

/// The stored files among `live` that may hold a key of `new` files: same partition, overlapping
/// bounds on every key column.
fn candidates<'a>(live: &'a [DataFile], new: &[DataFile], ids: &[i32]) -> Vec<&'a DataFile> {
    live.iter()
        .filter(|f| {
            new.iter()
                .any(|n| partition_of(n) == partition_of(f) && bounds_overlap(f, n, ids))
        })
        .collect()
}

/// The last-write-wins rebase of one append: resolves the table's live files against the
/// append's keys on every commit attempt (module docs).
pub(crate) struct LastWriteWins {
    pub(crate) contract: TableContract,
    pub(crate) settings: MaintenanceSettings,
    /// The append's own files and objects.
    pub(crate) own: Vec<DataFile>,
    pub(crate) own_uploaded: Vec<Path>,
    /// The keys of the append's rows.
    pub(crate) keys: Arc<KeySet>,
    state: tokio::sync::Mutex<State>,
}

#[derive(Default)]
struct State {
    /// The schema (field ids and names) the resolutions below were written with.
    schema: Vec<(i32, String)>,
    stored: HashMap<String, Resolution>,
    /// Stored rows and files the last prepared attempt replaces.
    replaced: u64,
    rewritten: u64,
}

impl LastWriteWins {
    pub(crate) fn new(
        contract: TableContract,
        settings: MaintenanceSettings,
        own: Vec<DataFile>,
        own_uploaded: Vec<Path>,
        keys: Arc<KeySet>,
    ) -> Self {
        LastWriteWins {
            contract,
            settings,
            own,
            own_uploaded,
            keys,
            state: Default::default(),
        }
    }

    /// Stored rows the committed attempt replaced.
    pub(crate) async fn replaced(&self) -> u64 {
        self.state.lock().await.replaced
    }

    /// Stored files the committed attempt rewrote.
    pub(crate) async fn rewritten(&self) -> u64 {
        self.state.lock().await.rewritten
    }

    async fn run(
        &self,
        storage: &Storage,
        cache: &MetadataCache,
        latest: &LoadedTable,
        txn: &mut Transaction,
    ) -> Result<()> {
        // Rewrites carry every column of the schema the commit will have.
        let table_schema = match &txn.schema_change {
            Some(c) => c.new.clone(),
            None => latest.metadata.current_schema().as_ref().clone(),
        };
        let fingerprint: Vec<(i32, String)> = table_schema
            .as_struct()
            .fields()
            .iter()
            .map(|f| (f.id, format!("{} {}", f.name, f.field_type)))
            .collect();
        let arrow_schema: SchemaRef = schema::to_arrow(&table_schema)?;
        let live = catalog::data_files(storage, cache, &latest.metadata, latest.metadata.current_snapshot_id()).await?;
        let ids = key_field_ids(&table_schema, &self.contract);
        let mut st = self.state.lock().await;
        let live_paths: HashSet<&str> = live.iter().map(|f| f.file_path()).collect();
        let stale_schema = st.schema != fingerprint;
        let gone: Vec<String> = st
            .stored
            .keys()
            .filter(|p| stale_schema || !live_paths.contains(p.as_str()))
            .cloned()
            .collect();
        for p in gone {
            if let Some(r) = st.stored.remove(&p) {
                // Never an object the table references (an earlier attempt that did commit).
                let unused: Vec<_> = r
                    .uploaded()
                    .iter()
                    .filter(|u| !live_paths.contains(storage.location(u).as_str()))
                    .cloned()
                    .collect();
                storage.delete_quietly(&unused).await;
            }
        }
        st.schema = fingerprint;
        let own_paths: HashSet<&str> = self.own.iter().map(|f| f.file_path()).collect();
        let todo: Vec<&DataFile> = candidates(&live, &self.own, &ids)
            .into_iter()
            .filter(|f| !own_paths.contains(f.file_path()) && !st.stored.contains_key(f.file_path()))
            .collect();
        for f in todo {
            let job = MergeJob {
                storage,
                table_prefix: latest.ident.prefix(),
                schema: arrow_schema.clone(),
                contract: &self.contract,
                settings: &self.settings,
                partition: partition_of(f),
            };
            match resolve(&job, f, &self.keys).await {
                Ok(r) => {
                    st.stored.insert(f.file_path().to_string(), r);
                }
                Err(e) => {
                    // The commit fails: what this and earlier attempts rewrote is not committed.
                    for r in st.stored.values() {
                        storage.delete_quietly(r.uploaded()).await;
                    }
                    st.stored.clear();
                    return Err(e);
                }
            }
        }
        txn.added = self.own.clone();
        txn.removed.clear();
        txn.uploaded = self.own_uploaded.clone();
        let mut replaced = 0;
        for f in &live {
            if let Some(Resolution::Rewritten {
                files,
                uploaded,
                replaced: n,
            }) = st.stored.get(f.file_path())
            {
                txn.removed.push(f.clone());
                txn.added.extend(files.iter().cloned());
                txn.uploaded.extend(uploaded.iter().cloned());
                replaced += n;
            }
        }
        st.replaced = replaced;
        st.rewritten = txn.removed.len() as u64;
        txn.operation = if txn.removed.is_empty() {
            Operation::Append
        } else {
            Operation::Overwrite
        };
        Ok(())
    }
}

impl Rebase for LastWriteWins {
    fn rebase<'a>(
        &'a self,
        storage: &'a Storage,
        cache: &'a MetadataCache,
        latest: &'a LoadedTable,
        txn: &'a mut Transaction,
    ) -> BoxFuture<'a, Result<()>> {
        Box::pin(self.run(storage, cache, latest, txn))
    }
}
