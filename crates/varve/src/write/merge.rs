//! Merging data files of one partition into new ones: a streaming k-way merge into files sorted
//! by (series key, time), cut at the target size on series boundaries (`write::output`),
//! optionally keeping only some rows. Compaction merges many files; a delete's or a
//! last-write-wins append's copy-on-write rewrite passes one file with a [`Keep`] filter.
//!
//! Each input file (sorted by the table's sort order, as every Varve data file is: see
//! `write::encode`) is read by a DataFusion Parquet scan partition of its own, as the table's
//! current schema, in a task that decodes a few batches ahead and encodes each batch's keys in
//! Arrow's row format. The merge then takes runs, not rows: the input with the smallest next key
//! gives all its rows up to the second-smallest head (ties go to the earlier input) as one slice,
//! found by exponential search. Appends of whole hours of many series so merge at the cost of a
//! few comparisons per series and file, and rows are copied once, into the output's batches
//! (`write::output`), so an input batch is freed as soon as the merge has passed it.
//!
//! What the runs become depends on the merge. A compaction (every row kept, a sorted table)
//! reads only the key columns here and hands the runs to `write::merge_columns`, which copies the
//! other columns one at a time; a rewrite that keeps some rows (a [`Keep`] filter, one input) and
//! a plain table (concatenated) read every column here and copy rows into `write::output`.
//!
//! Memory grows with the number of inputs, not with the partition's size: the inputs' fetched
//! pages of the columns read here, at most about `varve.merge-buffer-size` (compressed bytes,
//! default 128 MiB; above it each input reads its row groups in chunks of rows, a Parquet access
//! plan per chunk, so only the chunk's pages are fetched), plus per input a decoded batch or two
//! and a column reader per column read (each with its decompression context and current page),
//! plus the output's window or row group. bench/results/HISTORY.md measures it. More than
//! [`MAX_FAN_IN`] inputs are merged in passes.

use std::sync::Arc;

use arrow::datatypes::SchemaRef;
use arrow::row::{Row, RowConverter, Rows, SortField};
use datafusion::datasource::listing::PartitionedFile;
use datafusion::datasource::physical_plan::parquet::{ParquetAccessPlan, RowGroupAccess};
use datafusion::datasource::physical_plan::FileGroup;
use datafusion::execution::SendableRecordBatchStream;
use datafusion::physical_plan::filter::FilterExec;
use futures::StreamExt;
use iceberg::spec::DataFile;
use parquet::arrow::arrow_reader::{RowSelection, RowSelector};
use parquet::file::metadata::ParquetMetaData;
use tokio::sync::mpsc;
use tokio::task::JoinSet;

use crate::error::{Error, Result};
use crate::format::TableContract;
use crate::write::keys::{self, KeySet};
use crate::write::merge_columns::ColumnOutput;
use crate::write::merge_job::{Footer, InputBatch, Keep, MergeJob, Merged, RunSink, MERGE_BATCH_ROWS};
use crate::write::output::Output;

/// Files merged in one pass; more inputs are merged in passes through intermediate files. (Each
/// input's share of `varve.merge-buffer-size` shrinks with the fan-in, and with it the chunks it reads.)
const MAX_FAN_IN: usize = 64;

/// Batches each input's reader decodes ahead of the merge's current one.
const INPUT_READ_AHEAD: usize = 1;

impl MergeJob<'_> {
    /// Merges `inputs` (files of one partition, each sorted by the contract) into new files,
    /// keeping only the rows `keep` allows when given. More than [`MAX_FAN_IN`] inputs are merged
    /// in passes: each group of them into one intermediate file (never committed, deleted at the
    /// end; not cut at the target size, so every pass divides the number of files by
    /// [`MAX_FAN_IN`]), then those. On error the files written so far are deleted.
    pub(crate) async fn merge(&self, inputs: &[DataFile], keep: Option<Keep>) -> Result<Merged> {
        if inputs.len() <= MAX_FAN_IN {
            return self.merge_pass(inputs, keep, true).await;
        }
        let mut intermediate = Merged::default();
        let mut result = Ok(());
        for chunk in inputs.chunks(MAX_FAN_IN) {
            match self.merge_pass(chunk, keep.clone(), false).await {
                Ok(m) => {
                    intermediate.files.extend(m.files);
                    intermediate.uploaded.extend(m.uploaded);
                }
                Err(e) => {
                    result = Err(e);
                    break;
                }
            }
        }
        let out = match result {
            Ok(()) => Box::pin(self.merge(&intermediate.files, None)).await,
            Err(e) => Err(e),
        };
        self.storage.delete_quietly(&intermediate.uploaded).await;
        out
    }

    /// One merge pass over at most [`MAX_FAN_IN`] inputs, into files cut at the target size when
    /// `cut` (else into one file). On error the files written so far are deleted.
    ///
    /// A compaction (no `keep`) of a table with a sort order merges column by column
    /// (`write::merge_columns`): only the key columns are read row by row, so memory does not
    /// grow with the number of columns times the number of inputs. A rewrite that keeps some rows,
    /// and a plain table (concatenated), go row by row into [`Output`].
    async fn merge_pass(&self, inputs: &[DataFile], keep: Option<Keep>, cut: bool) -> Result<Merged> {
        if keep.is_none() && !keys::key_columns(self.contract).is_empty() {
            let footers = self.footers(inputs).await?;
            let mut out = ColumnOutput::new(self, inputs, &footers, cut)?;
            let key_projection = out.key_projection().to_vec();
            let result = match self
                .merge_into(inputs, Some(&footers), Some(key_projection), None, &mut out)
                .await
            {
                Ok(()) => out.finish().await,
                Err(e) => Err(e),
            };
            if result.is_err() {
                out.abort().await;
                self.storage.delete_quietly(&out.merged.uploaded).await;
            }
            return result.map(|()| out.merged);
        }
        let mut out = Output::new(self, cut);
        let result = match self.merge_into(inputs, None, None, keep, &mut out).await {
            Ok(()) => out.finish().await,
            Err(e) => Err(e),
        };
        if result.is_err() {
            out.abort().await;
            self.storage.delete_quietly(&out.merged.uploaded).await;
        }
        result.map(|()| out.merged)
    }

    /// Merges `inputs` run by run into `sink`: the rows (projected to `projection` when given)
    /// that `keep` allows, in sort order. `footers` are the inputs' footers when already read.
    async fn merge_into(
        &self,
        inputs: &[DataFile],
        footers: Option<&[Arc<ParquetMetaData>]>,
        projection: Option<Vec<usize>>,
        keep: Option<Keep>,
        sink: &mut impl RunSink,
    ) -> Result<()> {
        let ctx = self.context()?;
        // One scan partition per input; with many inputs each reads its row groups in chunks of
        // rows, so that the pages held at once stay within the budget.
        let total: u64 = inputs.iter().map(|f| f.file_size_in_bytes()).sum();
        let budget = self.settings.merge_buffer_size.max(1);
        let per_input = match total <= budget {
            true => None,
            false => Some(budget / inputs.len().max(1) as u64),
        };
        let groups = futures::future::try_join_all(
            inputs
                .iter()
                .enumerate()
                .map(|(i, f)| self.file_group(f, footers.map(|f| f[i].clone()), per_input)),
        )
        .await?;
        let schema = match &projection {
            Some(p) => Arc::new(self.schema.project(p)?),
            None => self.schema.clone(),
        };
        let mut exec = self.scan(groups, projection, MERGE_BATCH_ROWS)?;
        let mut keys_not_in = None;
        match keep {
            // A filter keeps each file's order and partitioning.
            Some(Keep::Matching(p)) => exec = Arc::new(FilterExec::try_new(p, exec)?),
            Some(Keep::KeysNotIn(set)) => keys_not_in = Some(set),
            None => {}
        }

        let keys = Arc::new(KeyColumns::new(&schema, self.contract)?);
        // Each input is read, filtered and its keys encoded by a task of its own, a few batches
        // ahead of the merge (dropping the set stops them).
        let mut tasks = JoinSet::new();
        let mut receivers = Vec::with_capacity(inputs.len());
        for i in 0..inputs.len() {
            let stream = exec.execute(i, ctx.task_ctx())?;
            let (tx, rx) = mpsc::channel(INPUT_READ_AHEAD);
            tasks.spawn(read_input(stream, keys_not_in.clone(), keys.clone(), tx));
            receivers.push(rx);
        }
        // Every reader is started before the first batch is awaited: their first fetches overlap.
        let mut cursors = Vec::with_capacity(inputs.len());
        for (input, rx) in receivers.into_iter().enumerate() {
            let mut cursor = Cursor {
                input,
                rx,
                batch: None,
                pos: 0,
            };
            if cursor.advance().await? {
                cursors.push(cursor);
            }
        }
        if keys.sort.is_empty() {
            // A plain table has no order: its files are concatenated.
            for mut c in cursors {
                while let Some(b) = c.batch.take() {
                    sink.run(c.input, &b, None, 0, b.rows.num_rows()).await?;
                    c.advance().await?;
                }
            }
            return Ok(());
        }
        // The k-way merge, run by run: the input with the smallest head gives all its rows that
        // sort before the next input's head (ties go to the earlier input, as the files were
        // listed), as one slice.
        while !cursors.is_empty() {
            let (a, b) = smallest_two(&cursors);
            let c = &cursors[a];
            let Some(batch) = c.batch.as_ref() else {
                return Err(Error::internal("a merge input without a batch"));
            };
            let end = match (b.and_then(|b| cursors[b].head()), &batch.sort) {
                (Some(bound), Some(rows)) => run_end(rows, c.pos, bound, a < b.unwrap_or(0)),
                _ => batch.rows.num_rows(),
            };
            let series = batch.sort.as_ref().zip(keys.series_suffix);
            sink.run(c.input, batch, series, c.pos, end).await?;
            let c = &mut cursors[a];
            c.pos = end;
            if end == batch_rows(c) && !c.advance().await? {
                cursors.remove(a);
            }
        }
        Ok(())
    }

    /// The scan partition of one input: the whole file, or with `per_input` (compressed bytes an
    /// input may hold) one chunk of rows after another, each a Parquet access plan selecting a
    /// range of one row group (the reader then fetches only the pages of that range: Parquet
    /// spec, "PageIndex").
    async fn file_group(
        &self,
        file: &DataFile,
        footer: Option<Arc<ParquetMetaData>>,
        per_input: Option<u64>,
    ) -> Result<FileGroup> {
        let path = self.storage.path_of(file.file_path())?;
        let size = file.file_size_in_bytes();
        let whole = |footer: Option<Arc<ParquetMetaData>>| {
            let f = PartitionedFile::new(path.to_string(), size);
            FileGroup::new(vec![match footer {
                Some(meta) => f.with_extension(Footer(meta)),
                None => f,
            }])
        };
        let Some(per_input) = per_input.filter(|_| size > 0) else {
            return Ok(whole(footer));
        };
        let meta = match footer {
            Some(meta) => meta,
            None => self.footer(file).await?,
        };
        let row_groups = meta.row_groups();
        if row_groups.iter().all(|rg| rg.compressed_size() as u64 <= per_input) {
            // Read whole, with the footer just read (the scan does not read it again).
            return Ok(whole(Some(meta)));
        }
        let mut files = Vec::new();
        for (i, rg) in row_groups.iter().enumerate() {
            let rows = rg.num_rows().max(0) as usize;
            let parts = (rg.compressed_size().max(0) as u64).div_ceil(per_input.max(1)).max(1) as usize;
            let chunk = rows.div_ceil(parts).max(1);
            let mut start = 0;
            while start < rows {
                let len = chunk.min(rows - start);
                let mut plan = ParquetAccessPlan::new_none(row_groups.len());
                let mut selectors = Vec::with_capacity(3);
                if start > 0 {
                    selectors.push(RowSelector::skip(start));
                }
                selectors.push(RowSelector::select(len));
                if start + len < rows {
                    selectors.push(RowSelector::skip(rows - start - len));
                }
                // (`scan_selection` would leave a skipped row group skipped.)
                plan.set(i, RowGroupAccess::Selection(RowSelection::from(selectors)));
                files.push(
                    PartitionedFile::new(path.to_string(), size)
                        .with_extension(plan)
                        .with_extension(Footer(meta.clone())),
                );
                start += len;
            }
        }
        Ok(FileGroup::new(files))
    }
}

/// The key columns of a merge: the sort order (series key, then time) by index in the merge's
/// schema, with its row converter. One converter serves every input: rows are compared across
/// inputs, and Arrow's row format orders only rows of one converter.
///
/// The series key of a row is its sort row without the time column's encoding: a row is the
/// concatenation of its columns' encodings, each self-delimiting, and a fixed-width column's
/// encoding has the same length for every value (arrow-row, "Row Format"). So equal series keys
/// are equal prefixes, and no second row per key is needed.
struct KeyColumns {
    sort: Vec<usize>,
    sort_rows: Option<RowConverter>,
    /// Bytes of the time column's encoding at the end of each sort row; `None` without a series key.
    series_suffix: Option<usize>,
}

impl KeyColumns {
    fn new(schema: &SchemaRef, contract: &TableContract) -> Result<Self> {
        let sort = keys::key_columns(contract)
            .iter()
            .map(|k| schema.index_of(k))
            .collect::<std::result::Result<Vec<_>, _>>()?;
        let field = |i: &usize| SortField::new(schema.field(*i).data_type().clone());
        let sort_rows = match sort.is_empty() {
            true => None,
            false => Some(RowConverter::new(sort.iter().map(field).collect())?),
        };
        let series_suffix = match (sort.split_last(), sort.len() > 1) {
            (Some((time, _)), true) => {
                let t = schema.field(*time).data_type();
                if !t.is_primitive() {
                    return Err(Error::internal(format!("time column of type {t} in a merge")));
                }
                let one = RowConverter::new(vec![field(time)])?;
                let rows = one.convert_columns(&[arrow::array::new_null_array(t, 1)])?;
                Some(rows.row(0).as_ref().len())
            }
            _ => None,
        };
        Ok(KeyColumns {
            sort_rows,
            series_suffix,
            sort,
        })
    }
}

/// Reads one input's batches, drops the rows `keys_not_in` holds, encodes the keys and sends the
/// non-empty batches, then `None` (so that a reader that stops early is never mistaken for the
/// end of its input). The next batch is decoded only once the channel has room for it, so an
/// input holds at most the merge's current batch and one decoded ahead.
async fn read_input(
    mut stream: SendableRecordBatchStream,
    keys_not_in: Option<Arc<KeySet>>,
    keys: Arc<KeyColumns>,
    tx: mpsc::Sender<Result<Option<InputBatch>>>,
) {
    let mut offset = 0u64;
    loop {
        let Ok(permit) = tx.reserve().await else {
            return; // the merge stopped
        };
        match next_batch(&mut stream, keys_not_in.as_deref(), &keys, offset).await {
            Ok(b) => {
                offset += b.as_ref().map(|b| b.rows.num_rows() as u64).unwrap_or(0);
                let end = b.is_none();
                permit.send(Ok(b));
                if end {
                    return;
                }
            }
            Err(e) => {
                permit.send(Err(e));
                return;
            }
        }
    }
}

/// The next non-empty batch of `stream` without the rows `keys_not_in` holds, with its keys in
/// row format; `None` at the end.
async fn next_batch(
    stream: &mut SendableRecordBatchStream,
    keys_not_in: Option<&KeySet>,
    keys: &KeyColumns,
    offset: u64,
) -> Result<Option<InputBatch>> {
    while let Some(batch) = stream.next().await {
        let mut batch = batch?;
        if let Some(set) = keys_not_in {
            let kept = arrow::compute::not(&set.contains(&batch)?)?;
            batch = arrow::compute::filter_record_batch(&batch, &kept)?;
        }
        if batch.num_rows() == 0 {
            continue;
        }
        let sort = match &keys.sort_rows {
            Some(c) => {
                let cols: Vec<_> = keys.sort.iter().map(|i| batch.column(*i).clone()).collect();
                Some(c.convert_columns(&cols)?)
            }
            None => None,
        };
        let row_bytes = batch.get_array_memory_size() / batch.num_rows();
        return Ok(Some(InputBatch {
            rows: batch,
            sort,
            row_bytes,
            offset,
        }));
    }
    Ok(None)
}

/// One input of the merge: its current batch and the position of its next row.
struct Cursor {
    /// The input's index in the merge's list.
    input: usize,
    rx: mpsc::Receiver<Result<Option<InputBatch>>>,
    batch: Option<InputBatch>,
    pos: usize,
}

impl Cursor {
    /// Moves to the input's next batch; false (and no batch) at its end.
    ///
    /// Errors: the input's read error, or its reader stopping before the end.
    async fn advance(&mut self) -> Result<bool> {
        self.pos = 0;
        self.batch = match self.rx.recv().await {
            Some(Ok(b)) => b,
            Some(Err(e)) => return Err(e),
            None => return Err(Error::internal("a merge input's reader stopped before its end")),
        };
        Ok(self.batch.is_some())
    }

    /// The key of the next row.
    fn head(&self) -> Option<Row<'_>> {
        let b = self.batch.as_ref()?;
        b.sort.as_ref().map(|rows| rows.row(self.pos))
    }
}

fn batch_rows(c: &Cursor) -> usize {
    c.batch.as_ref().map(|b| b.rows.num_rows()).unwrap_or(0)
}

/// The cursors with the smallest and the second smallest head (the earlier on ties).
fn smallest_two(cursors: &[Cursor]) -> (usize, Option<usize>) {
    let (mut a, mut b) = (0, None::<usize>);
    for i in 1..cursors.len() {
        let h = cursors[i].head();
        if h < cursors[a].head() {
            (a, b) = (i, Some(a));
        } else if b.is_none_or(|j| h < cursors[j].head()) {
            b = Some(i);
        }
    }
    (a, b)
}

/// The end of the run starting at `pos` in `rows`: the first row after `pos` that sorts after
/// `bound` (at or after it when `inclusive` is false). `rows[pos]` itself belongs to the run.
/// Exponential search, then binary: a run of n rows costs O(log n) comparisons.
fn run_end(rows: &Rows, pos: usize, bound: Row<'_>, inclusive: bool) -> usize {
    let len = rows.num_rows();
    let within = |i: usize| match inclusive {
        true => rows.row(i) <= bound,
        false => rows.row(i) < bound,
    };
    let (mut lo, mut step) = (pos, 1);
    let mut hi = loop {
        let probe = pos + step;
        if probe >= len {
            break len;
        }
        if !within(probe) {
            break probe;
        }
        lo = probe;
        step *= 2;
    };
    while lo + 1 < hi {
        let mid = lo + (hi - lo) / 2;
        match within(mid) {
            true => lo = mid,
            false => hi = mid,
        }
    }
    hi
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{ArrayRef, Int64Array};
    use arrow::datatypes::DataType;

    fn rows(values: &[i64]) -> Rows {
        let c = RowConverter::new(vec![SortField::new(DataType::Int64)]).unwrap();
        let a: ArrayRef = Arc::new(Int64Array::from(values.to_vec()));
        c.convert_columns(&[a]).unwrap()
    }

    /// The run from `pos` ends at the first row past the bound, found by galloping, against a
    /// plain scan for every position, bound and tie rule.
    #[test]
    fn run_end_matches_a_scan() {
        let values: Vec<i64> = (0..300).map(|i| i / 3).collect();
        let r = rows(&values);
        for bound in [-1i64, 0, 1, 7, 50, 99, 100, 1000] {
            let b = rows(&[bound]);
            for inclusive in [true, false] {
                for pos in 0..values.len() {
                    let within = |v: i64| if inclusive { v <= bound } else { v < bound };
                    if !within(values[pos]) {
                        continue;
                    }
                    let want = (pos + 1..values.len())
                        .find(|&i| !within(values[i]))
                        .unwrap_or(values.len());
                    assert_eq!(run_end(&r, pos, b.row(0), inclusive), want, "pos {pos} bound {bound}");
                }
            }
        }
    }
}
