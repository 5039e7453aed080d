//! The output side of a merge: rows arrive as sorted runs, are copied into batches, encoded
//! (columns in parallel, `write::parquet`) a part of the row group at a time, and streamed to the
//! store with multipart uploads as row groups close, cut into files at the target size on series
//! boundaries.
//!
//! Cutting rule: when the file being written reaches the target size, it is closed at the next
//! series boundary, so a series that fits in one file is never split over two files of the
//! partition (no reader has to merge files to answer a one-series query). Only a series larger than
//! the target may be split, and then not before the file reaches twice the target.

use arrow::array::RecordBatch;
use arrow::compute::BatchCoalescer;
use arrow::row::Rows;
use bytes::Bytes;
use object_store::path::Path;
use parquet::arrow::async_writer::{AsyncFileWriter, ParquetObjectWriter};

use crate::error::Result;
use crate::write::encode;
use crate::write::merge_job::{InputBatch, MergeJob, Merged, RunSink};
use crate::write::metrics::FileMetrics;
use crate::write::parquet::ParquetWriter;

/// A row group closes when it has `varve.row-group-rows` rows or this many Arrow bytes
/// (estimated), whichever comes first; its bytes are then streamed to the store.
const ROW_GROUP_MAX_BYTES: usize = 128 * 1024 * 1024;

/// Rows of the row group in progress are copied out of the merge's runs into batches of this
/// many rows as they arrive, so that the runs' input batches are freed at once (a slice would keep
/// its whole input batch alive until the row group is encoded), and the encoder sees long arrays.
const COALESCE_ROWS: usize = 8192;

/// Rows of the row group in progress held as Arrow data at most: past this many, the buffered
/// batches are encoded into the row group's open column writers (`ParquetWriter::write_part`),
/// which keep only encoded pages. A row group of fewer rows is encoded whole, one column writer
/// at a time.
const PART_ROWS: usize = 65536;

/// Where the merged rows go: the file being written and what is needed to cut the next one.
pub(crate) struct Output<'j, 'a> {
    job: &'j MergeJob<'a>,
    writer: Option<OutputFile>,
    /// Encoded bytes per Arrow byte, carried from file to file.
    ratio: f64,
    /// The series key of the last row written, in row format (for the cut at a series boundary).
    last_series: Option<Vec<u8>>,
    /// Whether files are cut at the target size (an intermediate pass writes one file).
    cut: bool,
    pub(crate) merged: Merged,
}

impl<'j, 'a> Output<'j, 'a> {
    /// Output of `job`, its files cut at the table's target size when `cut`.
    pub(crate) fn new(job: &'j MergeJob<'a>, cut: bool) -> Self {
        Output {
            job,
            writer: None,
            ratio: 1.0,
            last_series: None,
            cut,
            merged: Merged::default(),
        }
    }

    /// Writes rows `start..end` of `batch`, which follow the rows written before in sort order.
    /// `series` gives the sort keys of `batch` in row format and the bytes at the end of each that
    /// encode the time (the rest is the series key); `None` for a table without a series key (a
    /// file may be cut anywhere). `row_bytes` estimates the Arrow bytes of a row.
    pub(crate) async fn push(
        &mut self,
        batch: &RecordBatch,
        series: Option<(&Rows, usize)>,
        mut start: usize,
        end: usize,
        row_bytes: usize,
    ) -> Result<()> {
        let target = match self.cut {
            true => self.job.settings.target_file_size as f64,
            false => f64::INFINITY,
        };
        while start < end {
            if self.writer.is_none() {
                let f = OutputFile::open(self.job, self.ratio)?;
                self.merged.uploaded.push(f.path.clone());
                self.writer = Some(f);
            }
            let size = self.writer.as_ref().map(|w| w.size()).unwrap_or(0);
            let mut stop = end;
            if let Some(b) = cut_point(series, self.last_series.as_deref(), start, end, size as f64, target) {
                if b == start {
                    if let Some(done) = self.writer.take() {
                        self.ratio = done.close(self.job, &mut self.merged).await?;
                    }
                    continue;
                }
                stop = b;
            }
            if let Some(w) = self.writer.as_mut() {
                w.write(&batch.slice(start, stop - start), row_bytes).await?;
            }
            if let Some((rows, suffix)) = series {
                let key = series_key(rows, stop - 1, suffix);
                let last = self.last_series.get_or_insert_with(Vec::new);
                last.clear();
                last.extend_from_slice(key);
            }
            start = stop;
        }
        Ok(())
    }

    /// Abandons the file being written, aborting its multipart upload (on S3 the parts uploaded
    /// so far would otherwise stay, unlisted, until a bucket lifecycle rule removes them).
    pub(crate) async fn abort(&mut self) {
        if let Some(w) = self.writer.take() {
            if let Err(e) = w.sink.into_inner().abort().await {
                tracing::debug!(error = %e, "aborting a merge's upload");
            }
        }
    }

    /// Closes the file being written ([`Output::merged`] then holds what the merge wrote).
    pub(crate) async fn finish(&mut self) -> Result<()> {
        if let Some(w) = self.writer.take() {
            w.close(self.job, &mut self.merged).await?;
        }
        Ok(())
    }
}

/// Where the file being written, at `size` bytes, is cut among rows `start..end` (the cutting rule
/// above, for the row merge and the column merge alike): at the first series boundary at or after
/// `start` once it reaches `target`, or at `start` itself past twice the target; `None` to go on.
/// `series` gives the rows' sort keys and the bytes of time at their end (`None`: no series key,
/// cut anywhere); `last` is the series key of the row written before `start`.
pub(crate) fn cut_point(
    series: Option<(&Rows, usize)>,
    last: Option<&[u8]>,
    start: usize,
    end: usize,
    size: f64,
    target: f64,
) -> Option<usize> {
    if size < target {
        return None;
    }
    let boundary = match series {
        None => Some(start),
        Some((rows, suffix)) => (start..end).find(|&i| {
            let prev = match i == start {
                true => last,
                false => Some(series_key(rows, i - 1, suffix)),
            };
            prev.is_none_or(|p| p != series_key(rows, i, suffix))
        }),
    };
    match boundary {
        Some(b) => Some(b),
        None if size >= 2.0 * target => Some(start),
        None => None,
    }
}

/// The series key of row `i` of `rows` (sort keys ending in `suffix` bytes of time), in row format.
pub(crate) fn series_key(rows: &Rows, i: usize, suffix: usize) -> &[u8] {
    let row = rows.row(i).data();
    &row[..row.len().saturating_sub(suffix)]
}

/// One output file being written: the rows of the row group in progress are buffered up to
/// [`PART_ROWS`] and encoded by [`ParquetWriter`] part by part; closed row groups are uploaded as
/// they close.
struct OutputFile {
    writer: ParquetWriter,
    sink: ParquetObjectWriter,
    /// Copies the rows of the row group in progress into batches of [`COALESCE_ROWS`].
    coalescer: BatchCoalescer,
    /// The batches the coalescer completed, not encoded yet.
    pending: Vec<RecordBatch>,
    /// Rows in `pending`.
    buffered_rows: usize,
    /// Rows of the row group in progress, encoded or not.
    pending_rows: usize,
    /// Estimated Arrow bytes of the row group in progress.
    pending_bytes: usize,
    row_group_rows: usize,
    /// Encoded bytes per Arrow byte of the last row group (1 before any: an over-estimate, so a
    /// file is cut early rather than late).
    ratio: f64,
    metrics: FileMetrics,
    uploaded: u64,
    path: Path,
    location: String,
}

impl OutputFile {
    /// Opens a new data file of the job's partition; `ratio` carries the encoded-size estimate
    /// of the file before.
    fn open(job: &MergeJob<'_>, ratio: f64) -> Result<Self> {
        let (storage, schema, contract) = (job.storage, &job.schema, job.contract);
        let path = job.new_data_file_path();
        let row_group_rows = job.settings.row_group_rows.max(1);
        let props = encode::writer_properties(schema, contract, row_group_rows, job.settings);
        Ok(OutputFile {
            writer: ParquetWriter::new(schema, props, job.settings.encode_threads)?,
            sink: ParquetObjectWriter::new(storage.store.clone(), path.clone()),
            coalescer: BatchCoalescer::new(schema.clone(), COALESCE_ROWS),
            pending: Vec::new(),
            buffered_rows: 0,
            pending_rows: 0,
            pending_bytes: 0,
            row_group_rows,
            ratio,
            metrics: FileMetrics::new(schema.clone()),
            uploaded: 0,
            location: storage.location(&path),
            path,
        })
    }

    /// Bytes encoded plus the estimated encoded size of the row group in progress.
    fn size(&self) -> usize {
        self.writer.bytes_written() + (self.pending_bytes as f64 * self.ratio) as usize
    }

    /// Buffers `batch` (`row_bytes` Arrow bytes per row, estimated), encoding row groups as they
    /// fill.
    async fn write(&mut self, batch: &RecordBatch, row_bytes: usize) -> Result<()> {
        let mut start = 0;
        while start < batch.num_rows() {
            let len = (self.row_group_rows - self.pending_rows).min(batch.num_rows() - start);
            self.pending_bytes += len * row_bytes;
            self.pending_rows += len;
            self.coalescer.push_batch(batch.slice(start, len))?;
            self.take_completed();
            start += len;
            if self.pending_rows >= self.row_group_rows || self.pending_bytes >= ROW_GROUP_MAX_BYTES {
                self.flush_row_group().await?;
            } else if self.buffered_rows >= PART_ROWS {
                let part = self.take_pending();
                self.writer.write_part(&part)?;
            }
        }
        Ok(())
    }

    fn take_completed(&mut self) {
        while let Some(b) = self.coalescer.next_completed_batch() {
            self.buffered_rows += b.num_rows();
            self.pending.push(b);
        }
    }

    /// The buffered batches, counted into the file's metrics.
    fn take_pending(&mut self) -> Vec<RecordBatch> {
        self.buffered_rows = 0;
        let part = std::mem::take(&mut self.pending);
        for b in &part {
            self.metrics.update(b);
        }
        part
    }

    /// Encodes the buffered rows as the end of the row group, closes it and uploads its bytes.
    async fn flush_row_group(&mut self) -> Result<()> {
        self.coalescer.finish_buffered_batch()?;
        self.take_completed();
        let rest = self.take_pending();
        let before = self.writer.bytes_written();
        match self.writer.in_row_group() {
            true => {
                self.writer.write_part(&rest)?;
                self.writer.close_row_group()?;
            }
            false if rest.is_empty() => return Ok(()),
            false => self.writer.write_row_group(&rest)?,
        }
        drop(rest);
        if self.pending_bytes > 0 {
            self.ratio = (self.writer.bytes_written() - before) as f64 / self.pending_bytes as f64;
        }
        (self.pending_rows, self.pending_bytes) = (0, 0);
        let bytes = self.writer.take_bytes()?;
        self.upload(bytes).await
    }

    async fn upload(&mut self, bytes: Bytes) -> Result<()> {
        if !bytes.is_empty() {
            self.uploaded += bytes.len() as u64;
            self.sink.write(bytes).await?;
        }
        Ok(())
    }

    /// Finishes the file; returns the encoded-size estimate for the next one.
    async fn close(mut self, job: &MergeJob<'_>, out: &mut Merged) -> Result<f64> {
        self.flush_row_group().await?;
        let ratio = self.ratio;
        let (rest, meta) = self.writer.finish()?;
        self.uploaded += rest.len() as u64;
        if let Some(footer) = crate::write::encode::read_footer_from_tail(&rest, self.uploaded) {
            out.footers.push((self.path.clone(), self.uploaded, footer));
        }
        self.sink.write(rest).await?;
        self.sink.complete().await?;
        let size = self.uploaded;
        let file = self
            .metrics
            .finish(&meta, job.contract, job.partition, &self.location, size)?;
        out.rows += file.record_count();
        out.bytes += size;
        out.files.push(file);
        Ok(ratio)
    }
}

/// The row path's [`Output`] takes a merge's runs as they come.
impl RunSink for Output<'_, '_> {
    async fn run(
        &mut self,
        _input: usize,
        batch: &InputBatch,
        series: Option<(&Rows, usize)>,
        start: usize,
        end: usize,
    ) -> Result<()> {
        self.push(&batch.rows, series, start, end, batch.row_bytes).await
    }
}
