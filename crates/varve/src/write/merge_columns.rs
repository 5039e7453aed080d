//! Compaction column by column: the output side of a merge that keeps every row of its inputs
//! (`write::merge` reads only the key columns row by row and hands their runs here).
//!
//! The merge of the key columns (series key, time) gives the output order as a list of runs
//! (input, first row, rows). Runs gather into a window of whole row groups: about a page (20,000
//! rows) per input, at most half of `varve.merge-buffer-size` of encoded data. Then each other
//! column of the window is read on its own, from every input at once but only the rows the window
//! takes from it (each input gives one contiguous range to a window, as the merge consumes every
//! input in order), copied into the window's order run by run a row group at a time, and encoded,
//! several columns at a time on the engine's threads. Once every column of the window is encoded,
//! its row groups are written and uploaded.
//!
//! So the merge holds, per input, the key columns' reader only, and per column being copied one
//! reader per input; not a reader of every column of every input, whose pages, decompression
//! contexts and decoded batches made memory grow with inputs times columns (bench/results/HISTORY.md).
//! The price: a page that straddles two windows is fetched and decoded twice.
//!
//! Files are cut as `write::output` cuts them (same rule: at the target size, on a series
//! boundary), with the size of rows not written yet estimated from the last window's bytes per row.

use std::sync::Arc;

use arrow::array::{make_array, Array, ArrayData, ArrayRef, Capacities, MutableArrayData, StringArray};
use arrow::compute::BatchCoalescer;
use arrow::datatypes::SchemaRef;
use arrow::row::Rows;
use datafusion::datasource::listing::PartitionedFile;
use datafusion::datasource::physical_plan::parquet::{ParquetAccessPlan, RowGroupAccess};
use datafusion::datasource::physical_plan::FileGroup;
use datafusion::execution::TaskContext;
use datafusion::physical_plan::ExecutionPlan;
use datafusion::prelude::SessionContext;
use futures::StreamExt;
use iceberg::spec::DataFile;
use parquet::arrow::arrow_reader::{RowSelection, RowSelector};
use parquet::arrow::arrow_writer::ArrowColumnChunk;
use parquet::arrow::async_writer::{AsyncFileWriter, ParquetObjectWriter};
use parquet::file::metadata::ParquetMetaData;
use tokio::task::JoinSet;

use crate::error::{Error, Result};
use crate::write::encode;
use crate::write::keys;
use crate::write::merge_job::{Footer, InputBatch, MergeJob, Merged, RunSink};
use crate::write::metrics::{count_nan, FileMetrics};
use crate::write::output::{cut_point, series_key};
use crate::write::parquet::{default_threads, ColumnEncoder, ParquetWriter};

/// A row group holds at most this many Arrow bytes (estimated from the inputs' uncompressed
/// sizes), however many rows `varve.row-group-rows` allows.
const ROW_GROUP_MAX_BYTES: f64 = 128.0 * 1024.0 * 1024.0;

/// Rows of a page of an input file: Varve writes data pages of at most this many rows (parquet's
/// default page row limit), so a window of this many rows per input reads about a page of each.
const INPUT_PAGE_ROWS: usize = parquet::file::properties::DEFAULT_DATA_PAGE_ROW_COUNT_LIMIT;

/// Rows of a window at most, whatever the merge buffer allows (a run's length is a `u32`).
const MAX_WINDOW_ROWS: usize = 1 << 22;

/// Rows per batch when a column's window is read.
const COLUMN_BATCH_ROWS: usize = 65536;

/// Rows of one input taken in the output's order: rows `start..start + len` of input `input`.
#[derive(Debug, Clone, Copy)]
struct Run {
    input: u32,
    start: u64,
    len: u32,
}

/// An input file as the column reads need it.
struct InputFile {
    path: String,
    size: u64,
    footer: Arc<ParquetMetaData>,
    /// The first row of each row group, and the file's row count last.
    row_group_starts: Vec<u64>,
}

/// The rows gathered for the next row groups: their runs and their key columns, copied out of the
/// merge's input batches (so that those are freed as the merge passes them) into batches of
/// [`KEY_BATCH_ROWS`].
struct Window {
    runs: Vec<Run>,
    keys: BatchCoalescer,
    rows: usize,
}

/// Rows per batch of a window's key columns.
const KEY_BATCH_ROWS: usize = 8192;

impl Window {
    fn new(schema: SchemaRef) -> Window {
        Window {
            runs: Vec::new(),
            keys: BatchCoalescer::new(schema, KEY_BATCH_ROWS),
            rows: 0,
        }
    }
}

/// The output file being written.
struct ColumnFile {
    writer: ParquetWriter,
    sink: ParquetObjectWriter,
    metrics: FileMetrics,
    uploaded: u64,
    path: object_store::path::Path,
    location: String,
}

/// Where a column-by-column merge's runs go (see the module docs).
pub(crate) struct ColumnOutput<'j, 'a> {
    job: &'j MergeJob<'a>,
    ctx: SessionContext,
    inputs: Vec<InputFile>,
    /// The key columns (series key, then time) as indices of the table schema: what the merge
    /// reads row by row.
    keys: Vec<usize>,
    /// The file size (bytes) at which a file is cut on the next series boundary; infinite when
    /// files are not cut (an intermediate pass).
    target: f64,
    /// Encoded bytes per row: the inputs' at first, then the last window's, to estimate the size
    /// of the rows not written yet.
    bytes_per_row: f64,
    row_group_rows: usize,
    /// Rows of a window: whole row groups.
    window_rows: usize,
    threads: usize,
    window: Window,
    /// The schema of the key columns (as the merge reads them).
    key_schema: SchemaRef,
    file: Option<ColumnFile>,
    /// The series key of the last row taken, in row format.
    last_series: Option<Vec<u8>>,
    pub(crate) merged: Merged,
}

impl<'j, 'a> ColumnOutput<'j, 'a> {
    /// The output of `job` merging `inputs` (with their `footers`, page indexes included), cut
    /// at the table's target size when `cut`.
    ///
    /// Errors: a key column missing from the table schema.
    pub(crate) fn new(
        job: &'j MergeJob<'a>,
        inputs: &[DataFile],
        footers: &[Arc<ParquetMetaData>],
        cut: bool,
    ) -> Result<Self> {
        let keys = keys::key_columns(job.contract)
            .iter()
            .map(|k| job.schema.index_of(k))
            .collect::<std::result::Result<Vec<_>, _>>()?;
        let mut files = Vec::with_capacity(inputs.len());
        let (mut rows, mut bytes, mut arrow_bytes) = (0u64, 0u64, 0u64);
        for (f, footer) in inputs.iter().zip(footers) {
            let mut starts = vec![0u64];
            for rg in footer.row_groups() {
                starts.push(starts[starts.len() - 1] + rg.num_rows().max(0) as u64);
                arrow_bytes += rg.total_byte_size().max(0) as u64;
            }
            rows += starts[starts.len() - 1];
            bytes += f.file_size_in_bytes();
            files.push(InputFile {
                path: job.storage.path_of(f.file_path())?.to_string(),
                size: f.file_size_in_bytes(),
                footer: footer.clone(),
                row_group_starts: starts,
            });
        }
        let rows_f = rows.max(1) as f64;
        let bytes_per_row = (bytes as f64 / rows_f).max(1.0);
        let arrow_row_bytes = (arrow_bytes as f64 / rows_f).max(1.0);
        let settings = job.settings;
        let row_group_rows = settings
            .row_group_rows
            .max(1)
            .min(((ROW_GROUP_MAX_BYTES / arrow_row_bytes) as usize).max(1024));
        // About a page of each input per window (fewer rows re-read pages that straddle windows
        // more often; more rows only hold more), at most half the merge buffer of encoded output
        // (the rest for the pages and arrays of the columns being copied), in whole row groups.
        let budget_rows = (settings.merge_buffer_size as f64 / 2.0 / bytes_per_row) as usize;
        let wanted = (inputs.len() * INPUT_PAGE_ROWS).min(budget_rows).min(MAX_WINDOW_ROWS);
        let window_rows = match wanted.div_ceil(row_group_rows) * row_group_rows {
            w if w > budget_rows => (budget_rows / row_group_rows).max(1) * row_group_rows,
            w => w.max(row_group_rows),
        };
        let threads = match settings.encode_threads {
            0 => default_threads(),
            n => n,
        };
        let key_schema = Arc::new(job.schema.project(&keys)?);
        Ok(ColumnOutput {
            ctx: job.context()?,
            job,
            inputs: files,
            keys,
            target: match cut {
                true => settings.target_file_size as f64,
                false => f64::INFINITY,
            },
            bytes_per_row,
            row_group_rows,
            window_rows,
            threads,
            window: Window::new(key_schema.clone()),
            key_schema,
            file: None,
            last_series: None,
            merged: Merged::default(),
        })
    }

    /// The columns the merge reads row by row (indices of the table schema).
    pub(crate) fn key_projection(&self) -> &[usize] {
        &self.keys
    }

    /// Abandons the file being written, aborting its multipart upload.
    pub(crate) async fn abort(&mut self) {
        if let Some(f) = self.file.take() {
            if let Err(e) = f.sink.into_inner().abort().await {
                tracing::debug!(error = %e, "aborting a merge's upload");
            }
        }
    }

    /// Writes the last window and closes the file ([`ColumnOutput::merged`] then holds what the
    /// merge wrote).
    pub(crate) async fn finish(&mut self) -> Result<()> {
        self.close_file().await
    }

    fn open_file(&mut self) -> Result<()> {
        let job = self.job;
        let path = job.new_data_file_path();
        let props = encode::writer_properties(&job.schema, job.contract, self.row_group_rows, job.settings);
        self.merged.uploaded.push(path.clone());
        self.file = Some(ColumnFile {
            writer: ParquetWriter::new(&job.schema, props, self.threads)?,
            sink: ParquetObjectWriter::new(job.storage.store.clone(), path.clone()),
            metrics: FileMetrics::new(job.schema.clone()),
            uploaded: 0,
            location: job.storage.location(&path),
            path,
        });
        Ok(())
    }

    /// Adds rows `start..end` of `batch` (input `input`) to the window.
    ///
    /// Errors: the key batch does not have the window's key schema (an internal error).
    fn take(
        &mut self,
        input: usize,
        batch: &InputBatch,
        series: Option<(&Rows, usize)>,
        start: usize,
        end: usize,
    ) -> Result<()> {
        let len = end - start;
        let first = batch.offset + start as u64;
        match self.window.runs.last_mut() {
            Some(r) if r.input as usize == input && r.start + r.len as u64 == first => r.len += len as u32,
            _ => self.window.runs.push(Run {
                input: input as u32,
                start: first,
                len: len as u32,
            }),
        }
        self.window.keys.push_batch(batch.rows.slice(start, len))?;
        self.window.rows += len;
        if let Some((rows, suffix)) = series {
            let key = series_key(rows, end - 1, suffix);
            let last = self.last_series.get_or_insert_with(Vec::new);
            last.clear();
            last.extend_from_slice(key);
        }
        Ok(())
    }

    /// Writes the window's rows as row groups of the file being written.
    async fn flush_window(&mut self) -> Result<()> {
        let mut window = std::mem::replace(&mut self.window, Window::new(self.key_schema.clone()));
        if window.rows == 0 {
            return Ok(());
        }
        let schema = self.job.schema.clone();
        let Some(encoder) = self.file.as_ref().map(|f| f.writer.encoder()) else {
            return Err(Error::internal("a merge window without a file"));
        };
        let row_groups: Vec<(usize, usize)> = (0..window.rows)
            .step_by(self.row_group_rows)
            .map(|s| (s, self.row_group_rows.min(window.rows - s)))
            .collect();
        // The rows each input gives the window: one range, as every input is consumed in order.
        let mut ranges: Vec<Option<(u64, u64)>> = vec![None; self.inputs.len()];
        for r in &window.runs {
            let range = ranges[r.input as usize].get_or_insert((r.start, r.start));
            if range.1 != r.start {
                return Err(Error::internal("a merge input's rows taken out of order"));
            }
            range.1 = r.start + r.len as u64;
        }
        let runs = Arc::new(window.runs);
        window.keys.finish_buffered_batch()?;
        let mut keys = Vec::new();
        while let Some(b) = window.keys.next_completed_batch() {
            keys.push(b);
        }
        let rows = window.rows;

        let columns = schema.fields().len();
        let mut done: Vec<Option<EncodedColumn>> = (0..columns).map(|_| None).collect();
        let mut tasks = JoinSet::new();
        let mut next = 0;
        loop {
            while tasks.len() < self.threads && next < columns {
                let c = next;
                next += 1;
                let source = match self.keys.iter().position(|k| *k == c) {
                    Some(j) => Source::Ready(keys.iter().map(|b| b.column(j).clone()).collect()),
                    None => {
                        let (exec, inputs) = self.column_scan(c, &ranges)?;
                        let lows = ranges.iter().map(|r| r.map(|r| r.0).unwrap_or(0)).collect();
                        Source::Scan {
                            exec,
                            inputs,
                            lows,
                            ctx: self.ctx.task_ctx(),
                        }
                    }
                };
                let job = ColumnJob {
                    column: c,
                    source,
                    runs: runs.clone(),
                    rows,
                    row_groups: row_groups.clone(),
                    encoder: encoder.clone(),
                };
                tasks.spawn(job.run());
            }
            let Some(joined) = tasks.join_next().await else {
                break;
            };
            let (c, encoded) = joined.map_err(|e| Error::internal(format!("a column merge task: {e}")))??;
            done[c] = Some(encoded);
        }
        let Some(file) = self.file.as_mut() else {
            return Err(Error::internal("a merge window without a file"));
        };
        let mut per_group: Vec<Vec<Vec<ArrowColumnChunk>>> =
            row_groups.iter().map(|_| Vec::with_capacity(columns)).collect();
        for (c, column) in done.into_iter().enumerate() {
            let encoded = column.ok_or_else(|| Error::internal("a column of a merge window not encoded"))?;
            file.metrics.add_nans(c, encoded.nans);
            for (g, c) in encoded.chunks.into_iter().enumerate() {
                per_group[g].push(c);
            }
        }
        let before = file.writer.bytes_written();
        for group in per_group {
            file.writer.append_row_group(group)?;
        }
        self.bytes_per_row = ((file.writer.bytes_written() - before) as f64 / rows as f64).max(1.0);
        file.metrics.add_rows(rows);
        let bytes = file.writer.take_bytes()?;
        if !bytes.is_empty() {
            file.uploaded += bytes.len() as u64;
            file.sink.write(bytes).await?;
        }
        Ok(())
    }

    /// A scan of column `c` over the rows each input gives the window (`ranges`), one partition
    /// per input that gives any; returns it with the input of each partition. Each range is a
    /// Parquet access plan, so that only its pages are fetched (Parquet spec, "PageIndex").
    fn column_scan(&self, c: usize, ranges: &[Option<(u64, u64)>]) -> Result<(Arc<dyn ExecutionPlan>, Vec<usize>)> {
        let mut groups = Vec::new();
        let mut inputs = Vec::new();
        for (i, range) in ranges.iter().enumerate() {
            let Some((lo, hi)) = *range else {
                continue;
            };
            let f = &self.inputs[i];
            let starts = &f.row_group_starts;
            let mut plan = ParquetAccessPlan::new_none(starts.len() - 1);
            for g in 0..starts.len() - 1 {
                let (s, e) = (starts[g], starts[g + 1]);
                let (a, b) = (lo.max(s), hi.min(e));
                if a >= b {
                    continue;
                }
                if a == s && b == e {
                    plan.scan(g);
                    continue;
                }
                let mut selectors = Vec::with_capacity(3);
                if a > s {
                    selectors.push(RowSelector::skip((a - s) as usize));
                }
                selectors.push(RowSelector::select((b - a) as usize));
                if b < e {
                    selectors.push(RowSelector::skip((e - b) as usize));
                }
                plan.set(g, RowGroupAccess::Selection(RowSelection::from(selectors)));
            }
            let file = PartitionedFile::new(f.path.clone(), f.size)
                .with_extension(plan)
                .with_extension(Footer(f.footer.clone()));
            groups.push(FileGroup::new(vec![file]));
            inputs.push(i);
        }
        let exec = self.job.scan(groups, Some(vec![c]), COLUMN_BATCH_ROWS)?;
        Ok((exec, inputs))
    }

    /// Writes the window and closes the file being written, if any.
    async fn close_file(&mut self) -> Result<()> {
        self.flush_window().await?;
        let Some(mut f) = self.file.take() else {
            return Ok(());
        };
        let (rest, meta) = f.writer.finish()?;
        f.uploaded += rest.len() as u64;
        if let Some(footer) = crate::write::encode::read_footer_from_tail(&rest, f.uploaded) {
            self.merged.footers.push((f.path.clone(), f.uploaded, footer));
        }
        f.sink.write(rest).await?;
        f.sink.complete().await?;
        let job = self.job;
        let file = f
            .metrics
            .finish(&meta, job.contract, job.partition, &f.location, f.uploaded)?;
        self.merged.rows += file.record_count();
        self.merged.bytes += f.uploaded;
        self.merged.files.push(file);
        Ok(())
    }
}

impl RunSink for ColumnOutput<'_, '_> {
    async fn run(
        &mut self,
        input: usize,
        batch: &InputBatch,
        series: Option<(&Rows, usize)>,
        mut start: usize,
        end: usize,
    ) -> Result<()> {
        while start < end {
            if self.file.is_none() {
                self.open_file()?;
            }
            let written = self.file.as_ref().map(|f| f.writer.bytes_written()).unwrap_or(0);
            let size = written as f64 + self.window.rows as f64 * self.bytes_per_row;
            let mut stop = end.min(start + (self.window_rows - self.window.rows));
            let mut close = false;
            if let Some(b) = cut_point(series, self.last_series.as_deref(), start, end, size, self.target) {
                if b == start {
                    self.close_file().await?;
                    continue;
                }
                if b <= stop {
                    (stop, close) = (b, true);
                }
            }
            self.take(input, batch, series, start, stop)?;
            start = stop;
            if close {
                self.close_file().await?;
            } else if self.window.rows >= self.window_rows {
                self.flush_window().await?;
            }
        }
        Ok(())
    }
}

/// Where a column's values for a window come from.
enum Source {
    /// A key column, already in the window's order (the merge read it), in batches.
    Ready(Vec<ArrayRef>),
    /// A scan with a partition per input in `inputs` (by index), each reading its range of the
    /// window from its first row (`lows`, by input).
    Scan {
        exec: Arc<dyn ExecutionPlan>,
        inputs: Vec<usize>,
        lows: Vec<u64>,
        ctx: Arc<TaskContext>,
    },
}

/// One column of a window: read, put in the window's order, and encoded by row group.
struct ColumnJob {
    column: usize,
    source: Source,
    runs: Arc<Vec<Run>>,
    rows: usize,
    row_groups: Vec<(usize, usize)>,
    encoder: Arc<ColumnEncoder>,
}

/// A column of a window, encoded: its chunks by row group (one per Parquet leaf each), and its NaN
/// values (for the file's metrics; the rest come from the chunks' statistics).
struct EncodedColumn {
    chunks: Vec<Vec<ArrowColumnChunk>>,
    nans: u64,
}

/// A column's index with its encoded window.
type ColumnDone = (usize, EncodedColumn);

impl ColumnJob {
    async fn run(self) -> Result<ColumnDone> {
        let mut nans = 0;
        let mut chunks = Vec::with_capacity(self.row_groups.len());
        match self.source {
            Source::Ready(arrays) => {
                let got: usize = arrays.iter().map(|a| a.len()).sum();
                if got != self.rows {
                    return Err(Error::internal(format!(
                        "key column {} of a merge window has {got} rows of {}",
                        self.column, self.rows
                    )));
                }
                for a in &arrays {
                    nans += count_nan(a);
                }
                for &(start, len) in &self.row_groups {
                    chunks.push(self.encoder.encode(self.column, &slices(&arrays, start, len))?);
                }
            }
            Source::Scan {
                exec,
                inputs,
                lows,
                ctx,
            } => {
                // Every input's range is fetched at once (on an object store each is a request).
                let read = inputs.iter().enumerate().map(|(p, &i)| {
                    let (exec, ctx) = (exec.clone(), ctx.clone());
                    async move {
                        let mut arrays = Vec::new();
                        let mut stream = exec.execute(p, ctx)?;
                        while let Some(b) = stream.next().await {
                            let b = b?;
                            if b.num_rows() > 0 {
                                arrays.push(b.column(0).to_data());
                            }
                        }
                        Ok::<_, Error>((i, arrays))
                    }
                });
                let mut parts: Vec<Vec<ArrayData>> = vec![Vec::new(); lows.len()];
                for (i, arrays) in futures::future::try_join_all(read).await? {
                    parts[i] = arrays;
                }
                let got: usize = parts.iter().flatten().map(|a| a.len()).sum();
                if got != self.rows {
                    return Err(Error::internal(format!(
                        "column {} of a merge window read {got} rows of {}",
                        self.column, self.rows
                    )));
                }
                // One row group at a time, so that only one is held in the window's order.
                let mut order = RunOrder::new(&self.runs, &parts, &lows);
                for &(_, len) in &self.row_groups {
                    let array = order.next(len)?;
                    nans += count_nan(&array);
                    chunks.push(self.encoder.encode(self.column, [&array])?);
                }
            }
        }
        Ok((self.column, EncodedColumn { chunks, nans }))
    }
}

/// Rows `start..start + len` of the concatenation of `arrays`, as slices of them.
fn slices(arrays: &[ArrayRef], start: usize, len: usize) -> Vec<ArrayRef> {
    let (mut out, mut at) = (Vec::new(), 0);
    for a in arrays {
        let (from, to) = (start.max(at), (start + len).min(at + a.len()));
        if from < to {
            out.push(a.slice(from - at, to - from));
        }
        at += a.len();
    }
    out
}

/// The window's values of one column in output order, a row group at a time: `runs` copied out of
/// `parts` (per input, its arrays in order, starting at the input's row `lows[input]`).
struct RunOrder<'r> {
    runs: &'r [Run],
    parts: &'r [Vec<ArrayData>],
    /// Every input's arrays, in input order (what `MutableArrayData` indexes).
    all: Vec<&'r ArrayData>,
    /// Per input: the index in `all` of its first array.
    first: Vec<usize>,
    /// Per input: the array at which its next run starts, and that array's first row.
    at: Vec<(usize, u64)>,
    /// The next run, and the rows of it already given.
    run: usize,
    done_in_run: u64,
    /// Value bytes per row of a string column (to size its buffer); 0 for other types.
    string_bytes_per_row: f64,
}

impl<'r> RunOrder<'r> {
    fn new(runs: &'r [Run], parts: &'r [Vec<ArrayData>], lows: &[u64]) -> RunOrder<'r> {
        let mut all: Vec<&ArrayData> = Vec::new();
        let mut first = Vec::with_capacity(parts.len());
        for p in parts {
            first.push(all.len());
            all.extend(p.iter());
        }
        let (mut bytes, mut rows) = (0usize, 0usize);
        for a in &all {
            if *a.data_type() == arrow::datatypes::DataType::Utf8 {
                let s = StringArray::from((*a).clone());
                let o = s.value_offsets();
                bytes += (o[o.len() - 1] - o[0]).max(0) as usize;
            }
            rows += a.len();
        }
        RunOrder {
            runs,
            parts,
            all,
            first,
            at: lows.iter().map(|&l| (0, l)).collect(),
            run: 0,
            done_in_run: 0,
            string_bytes_per_row: bytes as f64 / rows.max(1) as f64,
        }
    }

    /// The next `len` rows in output order.
    ///
    /// Errors: a run past the rows read from its input.
    fn next(&mut self, len: usize) -> Result<ArrayRef> {
        if self.all.is_empty() {
            return Err(Error::internal("a merge window's column read no rows"));
        }
        let capacities = match self.all[0].data_type() {
            arrow::datatypes::DataType::Utf8 => {
                Capacities::Binary(len, Some((len as f64 * self.string_bytes_per_row * 1.05) as usize + 64))
            }
            _ => Capacities::Array(len),
        };
        let mut out = MutableArrayData::with_capacities(self.all.clone(), false, capacities);
        let mut left = len as u64;
        while left > 0 {
            let Some(r) = self.runs.get(self.run) else {
                return Err(Error::internal("a merge window's runs end before its rows"));
            };
            let i = r.input as usize;
            let (mut pos, mut want) = (r.start + self.done_in_run, (r.len as u64 - self.done_in_run).min(left));
            let took = want;
            while want > 0 {
                let (k, base) = self.at[i];
                let Some(a) = self.parts[i].get(k) else {
                    return Err(Error::internal("a merge run past its input's rows"));
                };
                let n = a.len() as u64;
                if pos >= base + n {
                    self.at[i] = (k + 1, base + n);
                    continue;
                }
                let from = pos - base;
                let take = want.min(n - from);
                out.extend(self.first[i] + k, from as usize, (from + take) as usize);
                pos += take;
                want -= take;
            }
            left -= took;
            self.done_in_run += took;
            if self.done_in_run == r.len as u64 {
                (self.run, self.done_in_run) = (self.run + 1, 0);
            }
        }
        Ok(make_array(out.freeze()))
    }
}
