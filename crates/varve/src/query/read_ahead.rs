//! Read-ahead of data files' row groups on object storage, for one scan.
//!
//! The Parquet reader asks for one row group's column chunks at a time and asks for the next only
//! when it has decoded the current one (parquet 58's `ParquetRecordBatchStream`), and the scan cuts
//! a large file into byte ranges read one after another by each thread (`query::work_units`). So
//! a scan of a file with n row groups waited on n GETs in a chain: on S3, 20-90 ms each before the
//! first byte. Here, when a reader asks for the chunks of row group r of a file, the chunks of the
//! same columns in the file's later row groups (those the file's access plan keeps, whichever of
//! the scan's ranges holds them) are fetched at once as well, up to a byte budget ahead of the
//! file's readers; the requests of the file's readers are answered from them. A request the
//! fetched chunks do not cover (a column read for the first time, say) goes to the store as
//! before.
//!
//! Which row groups the scan's predicate rules out by their statistics is not known here (the
//! opener prunes them after its reader exists), so a read-ahead may fetch chunks that are never
//! read: at most the budget per file. Hence it is for object storage only
//! (`LakeOptions::read_ahead_bytes`). Chunks are dropped once read, and all of a file's when its
//! last open reader closes.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use datafusion::datasource::listing::PartitionedFile;
use datafusion::datasource::physical_plan::parquet::ParquetAccessPlan;
use datafusion::physical_plan::metrics::Count;
use futures::future::{BoxFuture, Shared};
use futures::FutureExt;
use object_store::path::Path;
use object_store::ObjectStore;
use parquet::errors::ParquetError;
use parquet::file::metadata::ParquetMetaData;

/// The result of one read-ahead: the chunks' bytes, in the order of its ranges.
type Fetched = Shared<BoxFuture<'static, Result<Arc<Vec<Bytes>>, Arc<String>>>>;

/// The read-ahead of one scan: a [`ReadAhead`] for each reader, sharing one state per file.
pub(crate) struct ReadAheads {
    store: Arc<dyn ObjectStore>,
    /// Bytes of chunks fetched ahead of a file's readers and not read yet, at most.
    budget: u64,
    files: Mutex<HashMap<Path, Arc<Mutex<FileAhead>>>>,
}

impl std::fmt::Debug for ReadAheads {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReadAheads")
            .field("budget", &self.budget)
            .finish_non_exhaustive()
    }
}

impl ReadAheads {
    /// Read-ahead through `store`, up to `budget` bytes per file.
    pub(crate) fn new(store: Arc<dyn ObjectStore>, budget: u64) -> Self {
        ReadAheads {
            store,
            budget,
            files: Mutex::new(HashMap::new()),
        }
    }

    /// The read-ahead of a reader of `file`; the bytes it answers are added to `scanned`.
    pub(crate) fn reader(&self, file: &PartitionedFile, scanned: Count) -> ReadAhead {
        let path = file.object_meta.location.clone();
        let plan = file.extensions.get_arc::<ParquetAccessPlan>();
        let state = self
            .files
            .lock()
            .expect("read-ahead lock")
            .entry(path.clone())
            .or_insert_with(|| {
                Arc::new(Mutex::new(FileAhead {
                    plan,
                    metadata: None,
                    columns: Vec::new(),
                    ahead: Vec::new(),
                    next: 0,
                    readers: HashMap::new(),
                    next_reader: 0,
                }))
            })
            .clone();
        let id = {
            let mut s = state.lock().expect("read-ahead lock");
            s.next_reader += 1;
            let id = s.next_reader;
            s.readers.insert(id, None);
            id
        };
        ReadAhead {
            file: state,
            id,
            store: self.store.clone(),
            path,
            budget: self.budget,
            scanned,
        }
    }
}

/// One row group's chunks fetched (or being fetched) ahead of the readers.
struct Ahead {
    row_group: usize,
    ranges: Vec<Range<u64>>,
    /// Which of `ranges` a reader has been given.
    served: Vec<bool>,
    bytes: u64,
    data: Fetched,
    abort: tokio::task::AbortHandle,
}

/// The read-ahead state of one file in one scan.
struct FileAhead {
    /// Row groups the access plan keeps (`None`: all).
    plan: Option<Arc<ParquetAccessPlan>>,
    metadata: Option<Arc<ParquetMetaData>>,
    /// Columns (leaf indexes) the readers have asked for.
    columns: Vec<usize>,
    ahead: Vec<Ahead>,
    /// The first row group not yet considered for read-ahead.
    next: usize,
    /// The row group each open reader is at (`None`: it has read nothing yet).
    readers: HashMap<u64, Option<usize>>,
    next_reader: u64,
}

impl FileAhead {
    /// Whether row group `i` is one the scan reads, as far as is known here.
    fn kept(&self, i: usize) -> bool {
        match &self.plan {
            Some(plan) => i < plan.len() && plan.should_scan(i),
            None => true,
        }
    }

    /// Drops what every open reader has passed, and what has been read.
    fn drop_passed(&mut self) {
        let lowest = self.readers.values().flatten().min().copied();
        self.ahead.retain(|a| {
            let all_read = a.served.iter().all(|s| *s);
            let passed = lowest.is_some_and(|l| a.row_group < l);
            // A fetch a reader waits on runs on; one nobody will read is stopped.
            if passed && !a.served.iter().any(|s| *s) {
                a.abort.abort();
            }
            !all_read && !passed
        });
    }
}

/// The read-ahead of one reader of a data file (module docs).
pub(crate) struct ReadAhead {
    file: Arc<Mutex<FileAhead>>,
    id: u64,
    store: Arc<dyn ObjectStore>,
    path: Path,
    budget: u64,
    /// Bytes answered from the read-ahead (DataFusion's `bytes_scanned` of the file).
    scanned: Count,
}

impl ReadAhead {
    /// The file's footer, once the reader has it: row groups and chunks are known from then on.
    pub(crate) fn set_metadata(&mut self, metadata: Arc<ParquetMetaData>) {
        self.file
            .lock()
            .expect("read-ahead lock")
            .metadata
            .get_or_insert(metadata);
    }

    /// Answers `ranges` from the read-ahead when it covers all of them (waiting for the fetches
    /// still under way), after starting the read-ahead of the row groups after the one `ranges`
    /// belong to. `None`: the caller reads `ranges` from the store.
    pub(crate) fn read(
        &mut self,
        ranges: &[Range<u64>],
    ) -> Option<BoxFuture<'static, parquet::errors::Result<Vec<Bytes>>>> {
        let mut file = self.file.lock().expect("read-ahead lock");
        let meta = file.metadata.clone()?;
        let first = ranges.first()?;
        let chunk = |rg: usize, c: usize| {
            let (start, len) = meta.row_group(rg).column(c).byte_range();
            start..start + len
        };
        // The row group the reader is at, and the columns it asks for.
        let rg = (0..meta.num_row_groups())
            .find(|&rg| (0..meta.row_group(rg).num_columns()).any(|c| chunk(rg, c).contains(&first.start)))?;
        for c in 0..meta.row_group(rg).num_columns() {
            let cr = chunk(rg, c);
            if !file.columns.contains(&c) && ranges.iter().any(|r| r.start < cr.end && cr.start < r.end) {
                file.columns.push(c);
            }
        }
        file.columns.sort_unstable();
        file.readers.insert(self.id, Some(rg));
        // Answered from the read-ahead when every range lies in one of its chunks.
        let mut parts = Vec::with_capacity(ranges.len());
        for r in ranges {
            let found = file.ahead.iter().enumerate().find_map(|(ai, a)| {
                a.ranges
                    .iter()
                    .position(|c| c.start <= r.start && r.end <= c.end)
                    .map(|i| (ai, i))
            });
            match found {
                Some(at) => parts.push(at),
                None => {
                    parts.clear();
                    break;
                }
            }
        }
        let parts: Vec<_> = parts
            .into_iter()
            .zip(ranges)
            .map(|((ai, i), r)| {
                let a = &mut file.ahead[ai];
                a.served[i] = true;
                (
                    a.data.clone(),
                    i,
                    (r.start - a.ranges[i].start) as usize,
                    (r.end - r.start) as usize,
                )
            })
            .collect();
        file.drop_passed();
        self.start(&mut file, &meta, rg);
        drop(file);
        if parts.is_empty() {
            return None;
        }
        let total: u64 = ranges.iter().map(|r| r.end - r.start).sum();
        self.scanned.add(total as usize);
        let (store, path, wanted) = (self.store.clone(), self.path.clone(), ranges.to_vec());
        Some(
            async move {
                let mut out = Vec::with_capacity(parts.len());
                for (data, i, offset, len) in parts {
                    match data.await {
                        Ok(chunks) => out.push(chunks[i].slice(offset..offset + len)),
                        // A failed read-ahead is read again, so that the error the reader sees
                        // is the store's own (a missing file stays "not found").
                        Err(_) => {
                            return store
                                .get_ranges(&path, &wanted)
                                .await
                                .map_err(|e| ParquetError::External(Box::new(e)))
                        }
                    }
                }
                Ok(out)
            }
            .boxed(),
        )
    }

    /// Starts fetching the chunks of the columns read so far in the row groups after `at`, while
    /// the bytes fetched and not yet read stay within the budget.
    fn start(&self, file: &mut FileAhead, meta: &ParquetMetaData, at: usize) {
        file.next = file.next.max(at + 1);
        let mut ahead: u64 = file.ahead.iter().map(|a| a.bytes).sum();
        while file.next < meta.num_row_groups() && ahead < self.budget {
            let rg = file.next;
            file.next += 1;
            if !file.kept(rg) {
                continue;
            }
            let group = meta.row_group(rg);
            let ranges: Vec<Range<u64>> = file
                .columns
                .iter()
                .filter(|&&c| c < group.num_columns())
                .map(|&c| {
                    let (start, len) = group.column(c).byte_range();
                    start..start + len
                })
                .collect();
            let bytes: u64 = ranges.iter().map(|r| r.end - r.start).sum();
            if bytes == 0 {
                continue;
            }
            let (store, path, wanted) = (self.store.clone(), self.path.clone(), ranges.clone());
            let task = tokio::spawn(async move { store.get_ranges(&path, &wanted).await });
            let abort = task.abort_handle();
            let data: Fetched = async move {
                match task.await {
                    Ok(Ok(chunks)) => Ok(Arc::new(chunks)),
                    Ok(Err(e)) => Err(Arc::new(e.to_string())),
                    Err(e) => Err(Arc::new(format!("read-ahead stopped: {e}"))),
                }
            }
            .boxed()
            .shared();
            ahead += bytes;
            file.ahead.push(Ahead {
                row_group: rg,
                served: vec![false; ranges.len()],
                ranges,
                bytes,
                data,
                abort,
            });
        }
    }
}

impl Drop for ReadAhead {
    fn drop(&mut self) {
        let mut file = self.file.lock().expect("read-ahead lock");
        file.readers.remove(&self.id);
        if file.readers.is_empty() {
            for a in file.ahead.drain(..) {
                a.abort.abort();
            }
            file.next = 0;
        } else {
            file.drop_passed();
        }
    }
}
