//! Read-ahead of data files' row groups on object storage, for one scan.
//!
//! The Parquet reader asks for one row group's column chunks at a time and asks for the next only
//! when it has decoded the current one (parquet 58's `ParquetRecordBatchStream`), so a reader of
//! a range of n row groups waited on n GETs in a chain: on S3, 20-90 ms each before the first
//! byte. Here, when a reader asks for the chunks of row group r, the chunks of the same columns in
//! the next row groups of its range (those the file's access plan keeps) are fetched at once as
//! well, up to a byte budget not yet read, and its later requests are answered from them. A reader
//! that opens a file another reader of the scan has already read from (so the columns are known)
//! starts on its first row groups before it asks. A request the fetched chunks do not cover (a
//! column read for the first time, say) goes to the store as before.
//!
//! When the file's footer was cached at planning, the row groups the scan's predicate rules out
//! by their statistics are already left out of its access plan (`page_pruning::prune_row_groups`)
//! and never fetched ahead. Otherwise which row groups the statistics rule out, or which pages the
//! page index keeps, is not known here (the opener prunes after its reader exists), so a
//! read-ahead may fetch chunks that are never read. Two signs stop it for the rest of the file:
//! a request for parts of chunks (pages a page index kept), and a request that skips a row group
//! fetched ahead (one its statistics ruled out). Row groups the access plan itself reads in part
//! (pages `page_pruning` kept, or halves of a row group: `work_units`) are never read ahead, and
//! their requests are no such sign. Some waste stays possible,
//! which is why it is for object storage only (`LakeOptions::read_ahead_bytes`). And a reader
//! starts with one row group ahead, doubling the number each time the read-ahead answers it (as
//! TCP's slow start does), so a reader whose next row groups its statistics rule out (one
//! series' rows in a file of many) fetches one row group for nothing, not the budget.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use datafusion::datasource::listing::PartitionedFile;
use datafusion::datasource::physical_plan::parquet::{ParquetAccessPlan, RowGroupAccess};
use datafusion::physical_plan::metrics::Count;
use futures::future::{BoxFuture, Shared};
use futures::FutureExt;
use object_store::path::Path;
use object_store::ObjectStore;
use parquet::errors::ParquetError;
use parquet::file::metadata::ParquetMetaData;

/// The result of one read-ahead: the chunks' bytes, in the order of its ranges (`None`: it failed
/// or was stopped, and the reader reads the store itself).
type Fetched = Shared<BoxFuture<'static, Option<Arc<Vec<Bytes>>>>>;

/// The read-ahead of one scan: a [`ReadAhead`] for each reader, sharing what is learnt of each
/// file.
pub(crate) struct ReadAheads {
    store: Arc<dyn ObjectStore>,
    /// Bytes of chunks one reader has fetched ahead and not read yet, at most.
    budget: u64,
    files: Mutex<HashMap<Path, Arc<Mutex<FileState>>>>,
}

impl std::fmt::Debug for ReadAheads {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReadAheads")
            .field("budget", &self.budget)
            .finish_non_exhaustive()
    }
}

impl ReadAheads {
    /// Read-ahead through `store`, up to `budget` bytes per reader.
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
        let state = self
            .files
            .lock()
            .expect("read-ahead lock")
            .entry(path.clone())
            .or_default()
            .clone();
        ReadAhead {
            file: state,
            store: self.store.clone(),
            path,
            range: file.range.as_ref().map(|r| r.start.max(0) as u64..r.end.max(0) as u64),
            plan: file.extensions.get_arc::<ParquetAccessPlan>(),
            budget: self.budget,
            ahead: Vec::new(),
            started: Vec::new(),
            window: 1,
            scanned,
        }
    }
}

/// What the scan's readers have learnt of one file.
#[derive(Default)]
struct FileState {
    metadata: Option<Arc<ParquetMetaData>>,
    /// Columns (leaf indexes) the readers have asked for.
    columns: Vec<usize>,
    /// Whether a reader's requests showed a selective scan (module docs): no more read-ahead.
    selective: bool,
}

/// One row group's chunks fetched (or being fetched) ahead of the reader.
struct Ahead {
    row_group: usize,
    ranges: Vec<Range<u64>>,
    /// Which of `ranges` the reader has been given.
    served: Vec<bool>,
    bytes: u64,
    data: Fetched,
    abort: tokio::task::AbortHandle,
}

/// The read-ahead of one reader of a data file (module docs).
pub(crate) struct ReadAhead {
    file: Arc<Mutex<FileState>>,
    store: Arc<dyn ObjectStore>,
    path: Path,
    /// The reader's byte range of the file: its row groups are those whose first page starts in
    /// it (DataFusion's `prune_by_range`; `None`: the whole file).
    range: Option<Range<u64>>,
    /// Row groups the access plan keeps (`None`: all).
    plan: Option<Arc<ParquetAccessPlan>>,
    budget: u64,
    ahead: Vec<Ahead>,
    /// Row groups read or being read ahead: not to be fetched ahead again.
    started: Vec<bool>,
    /// Row groups fetched ahead and not read, at most: 1 at first, doubled each time a request is
    /// answered from the read-ahead (so a reader whose row groups its statistics rule out wastes
    /// at most one).
    window: usize,
    /// Bytes answered from the read-ahead (DataFusion's `bytes_scanned` of the file).
    scanned: Count,
}

/// The bytes of column `c`'s chunk in row group `rg`.
fn chunk(meta: &ParquetMetaData, rg: usize, c: usize) -> Range<u64> {
    let (start, len) = meta.row_group(rg).column(c).byte_range();
    start..start + len
}

impl ReadAhead {
    /// Whether the access plan reads row group `rg` in part (pages a page index kept, or half of
    /// it: `work_units`): its pages are read as asked, never ahead, and say nothing of the scan.
    fn partial(&self, rg: usize) -> bool {
        self.plan
            .as_ref()
            .is_some_and(|p| matches!(p.inner().get(rg), Some(RowGroupAccess::Selection(_))))
    }

    /// Whether row group `rg` is one this reader reads whole, as far as is known here.
    fn mine(&self, meta: &ParquetMetaData, rg: usize) -> bool {
        if let Some(plan) = &self.plan {
            if rg >= plan.len() || !plan.should_scan(rg) || self.partial(rg) {
                return false;
            }
        }
        let first = crate::query::scan::work_units::row_group_start(meta.row_group(rg));
        self.range.as_ref().is_none_or(|r| r.contains(&first))
    }

    /// The file's footer, once the reader has it: row groups and chunks are known from then on.
    /// When another reader of the file has already asked for chunks (so the columns are known),
    /// this reader's first row group is fetched at once, before it asks for it.
    pub(crate) fn set_metadata(&mut self, metadata: Arc<ParquetMetaData>) {
        let (meta, columns) = {
            let mut file = self.file.lock().expect("read-ahead lock");
            let meta = file.metadata.get_or_insert(metadata).clone();
            if file.selective {
                return;
            }
            (meta, file.columns.clone())
        };
        if !columns.is_empty() {
            self.start(&meta, &columns, 0);
        }
    }

    /// Answers `ranges` from the read-ahead when it covers all of them (waiting for the fetches
    /// still under way), after starting the read-ahead of the row groups after the one `ranges`
    /// belong to. `None`: the caller reads `ranges` from the store.
    pub(crate) fn read(
        &mut self,
        ranges: &[Range<u64>],
    ) -> Option<BoxFuture<'static, parquet::errors::Result<Vec<Bytes>>>> {
        let (meta, columns, selective, rg) = {
            let state = self.file.clone();
            let mut file = state.lock().expect("read-ahead lock");
            let meta = file.metadata.clone()?;
            let first = ranges.first()?;
            // The row group the reader is at, and the columns it asks for.
            let rg = (0..meta.num_row_groups()).find(|&rg| {
                (0..meta.row_group(rg).num_columns()).any(|c| chunk(&meta, rg, c).contains(&first.start))
            })?;
            if self.partial(rg) {
                return None;
            }
            let touched: Vec<Range<u64>> = (0..meta.row_group(rg).num_columns())
                .filter_map(|c| {
                    let cr = chunk(&meta, rg, c);
                    let hit = ranges.iter().any(|r| r.start < cr.end && cr.start < r.end);
                    if hit && !file.columns.contains(&c) {
                        file.columns.push(c);
                    }
                    hit.then_some(cr)
                })
                .collect();
            file.columns.sort_unstable();
            // Parts of chunks (pages a page index kept), or a row group fetched ahead and
            // skipped (ruled out by its statistics): a selective scan.
            let asked: u64 = ranges.iter().map(|r| r.end - r.start).sum();
            let whole: u64 = touched.iter().map(|r| r.end - r.start).sum();
            if asked * 10 < whole * 9
                || self
                    .ahead
                    .iter()
                    .any(|a| a.row_group < rg && !a.served.iter().any(|s| *s))
            {
                file.selective = true;
            }
            self.mark(meta.num_row_groups(), rg);
            (meta, file.columns.clone(), file.selective, rg)
        };
        // Answered from the read-ahead when every range lies in one of its chunks.
        let mut parts = Vec::with_capacity(ranges.len());
        for r in ranges {
            let found = self.ahead.iter().enumerate().find_map(|(ai, a)| {
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
                let a = &mut self.ahead[ai];
                a.served[i] = true;
                (
                    a.data.clone(),
                    i,
                    (r.start - a.ranges[i].start) as usize,
                    (r.end - r.start) as usize,
                )
            })
            .collect();
        // What is read, or passed without being read, is not kept.
        self.ahead.retain(|a| {
            let read = a.served.iter().all(|s| *s);
            let skipped = a.row_group < rg && !a.served.iter().any(|s| *s);
            if skipped {
                a.abort.abort();
            }
            !read && !skipped
        });
        if !parts.is_empty() {
            self.window = (self.window * 2).min(1 << 10);
        }
        if !selective {
            self.start(&meta, &columns, rg + 1);
        }
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
                        Some(chunks) => out.push(chunks[i].slice(offset..offset + len)),
                        // A failed read-ahead is read again, so that the error the reader sees
                        // is the store's own (a missing file stays "not found").
                        None => {
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

    /// Notes that row group `rg` (of `n`) is read or being read.
    fn mark(&mut self, n: usize, rg: usize) {
        if self.started.len() < n {
            self.started.resize(n, false);
        }
        self.started[rg] = true;
    }

    /// Starts fetching the chunks of `columns` in this reader's row groups from `from` on that are
    /// not read or being read yet, while the bytes fetched and not yet read stay within the
    /// budget.
    fn start(&mut self, meta: &ParquetMetaData, columns: &[usize], from: usize) {
        let mut ahead: u64 = self.ahead.iter().map(|a| a.bytes).sum();
        let mut count = self.ahead.len();
        for rg in from..meta.num_row_groups() {
            if ahead >= self.budget || count >= self.window {
                break;
            }
            if self.started.get(rg).copied().unwrap_or(false) || !self.mine(meta, rg) {
                continue;
            }
            self.mark(meta.num_row_groups(), rg);
            let group = meta.row_group(rg);
            let ranges: Vec<Range<u64>> = columns
                .iter()
                .filter(|&&c| c < group.num_columns())
                .map(|&c| chunk(meta, rg, c))
                .collect();
            let bytes: u64 = ranges.iter().map(|r| r.end - r.start).sum();
            if bytes == 0 {
                continue;
            }
            let (store, path, wanted) = (self.store.clone(), self.path.clone(), ranges.clone());
            let task = tokio::spawn(async move { store.get_ranges(&path, &wanted).await });
            let abort = task.abort_handle();
            let data: Fetched = async move { task.await.ok().and_then(|r| r.ok()).map(Arc::new) }
                .boxed()
                .shared();
            ahead += bytes;
            count += 1;
            self.ahead.push(Ahead {
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
        // What this reader fetched ahead and never read, nobody else reads.
        for a in &self.ahead {
            if !a.served.iter().any(|s| *s) {
                a.abort.abort();
            }
        }
    }
}
