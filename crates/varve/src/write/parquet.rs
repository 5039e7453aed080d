//! Writing Parquet files row group by row group, the columns of each row group encoded in
//! parallel. Appends (`write::encode`) and merges (`write::merge`: compaction and copy-on-write
//! rewrites) write every data file through [`ParquetWriter`].
//!
//! Parquet column chunks are independent (Parquet spec, "File Format"), so each thread takes the
//! next column of the row group and holds one column writer at a time. Arrow's `ArrowWriter` opens
//! a writer for every column of a row group at once, and each holds buffers (a dictionary encoder
//! alone takes tens of KiB) whatever the data: a 20-row file of 2,000 columns took over 100 MiB.
//! Here a column's writer exists only while that column is encoded, so memory follows the data.
//! Each column writer is made from a one-column schema whose column descriptor equals the file's,
//! so the chunks append to the file's row group as usual.
//!
//! A compaction encodes each column of a window on a task of its own ([`ColumnEncoder`]) and writes
//! the row groups from the encoded chunks ([`ParquetWriter::append_row_group`]). A row-by-row
//! merge's large row groups are encoded as they arrive instead ([`ParquetWriter::write_part`]):
//! every column's writer stays open for the row group and holds its encoded pages, so only a
//! part of the row group is held as Arrow data (compressed pages are several times smaller).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use arrow::array::{ArrayRef, RecordBatch};
use arrow::datatypes::{Schema, SchemaRef};
use bytes::Bytes;
use parquet::arrow::arrow_writer::{compute_leaves, ArrowColumnChunk, ArrowColumnWriter, ArrowRowGroupWriterFactory};
use parquet::arrow::{add_encoded_arrow_schema_to_metadata, ArrowSchemaConverter};
use parquet::file::metadata::ParquetMetaData;
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;

use crate::error::{Error, Result};

/// Row groups smaller than this are encoded on the calling thread: threads would cost more than
/// they save.
pub(crate) const PARALLEL_MIN_ROWS: usize = 16 * 1024;

/// The encoder threads to use when the table does not say (`varve.encode-threads` = 0 or unset):
/// one per core.
pub(crate) fn default_threads() -> usize {
    std::thread::available_parallelism().map(|p| p.get()).unwrap_or(1)
}

/// A Parquet file being written into memory, one row group at a time. The caller takes the
/// encoded bytes after each row group ([`ParquetWriter::take_bytes`]) to stream them to the
/// store, or all at the end ([`ParquetWriter::finish`]).
pub(crate) struct ParquetWriter {
    file: SerializedFileWriter<Vec<u8>>,
    encoder: Arc<ColumnEncoder>,
    threads: usize,
    /// The column writers of a row group written in parts, per field (one per Parquet leaf).
    open: Option<Vec<Mutex<Vec<ArrowColumnWriter>>>>,
}

impl ParquetWriter {
    /// A writer of files of `schema` (the Arrow schema is embedded in the footer, as `ArrowWriter`
    /// does) with `props`, encoding on up to `threads` threads (0: one per core).
    ///
    /// Errors: a schema Parquet cannot represent.
    pub(crate) fn new(schema: &SchemaRef, props: WriterProperties, threads: usize) -> Result<Self> {
        let mut props = props;
        add_encoded_arrow_schema_to_metadata(schema, &mut props);
        let props = Arc::new(props);
        let converter = ArrowSchemaConverter::new().with_coerce_types(props.coerce_types());
        let parquet_schema = converter.convert(schema)?;
        let file = SerializedFileWriter::new(Vec::new(), parquet_schema.root_schema_ptr(), props.clone())?;
        // One factory per column, over a one-column schema (its writer's sink is never written to).
        let mut factories = Vec::with_capacity(schema.fields().len());
        for field in schema.fields() {
            let one = Arc::new(Schema::new(vec![field.clone()]));
            let desc = converter.convert(&one)?;
            let sink = SerializedFileWriter::new(std::io::sink(), desc.root_schema_ptr(), props.clone())?;
            factories.push(ArrowRowGroupWriterFactory::new(&sink, one));
        }
        let threads = if threads == 0 { default_threads() } else { threads };
        Ok(ParquetWriter {
            file,
            encoder: Arc::new(ColumnEncoder {
                factories,
                schema: schema.clone(),
            }),
            threads,
            open: None,
        })
    }

    /// The writer's column encoder, to encode columns on other threads or tasks
    /// ([`ParquetWriter::append_row_group`] then writes them).
    pub(crate) fn encoder(&self) -> Arc<ColumnEncoder> {
        self.encoder.clone()
    }

    /// Writes one row group from its encoded columns, in the schema's column order (each made by
    /// [`ColumnEncoder::encode`] from the same number of rows).
    ///
    /// Errors: a row group written in parts still open, or the Parquet writer's (e.g. columns of
    /// different lengths).
    pub(crate) fn append_row_group(&mut self, columns: Vec<Vec<ArrowColumnChunk>>) -> Result<()> {
        if self.open.is_some() {
            return Err(Error::internal("a whole row group written while one is open"));
        }
        let mut rg = self.file.next_row_group()?;
        for chunks in columns {
            for chunk in chunks {
                chunk.append_to_row_group(&mut rg)?;
            }
        }
        rg.close()?;
        Ok(())
    }

    /// Encodes `batches` (of the writer's schema) as one row group, one column writer at a time.
    ///
    /// Errors: the Parquet encoder's, or a row group written in parts still open.
    pub(crate) fn write_row_group(&mut self, batches: &[RecordBatch]) -> Result<()> {
        if self.open.is_some() {
            return Err(Error::internal("a whole row group written while one is open"));
        }
        let rows: usize = batches.iter().map(|b| b.num_rows()).sum();
        let encoder = &self.encoder;
        let encode = |i: usize| encoder.encode(i, batches.iter().map(|b| b.column(i)));
        let columns = per_column(encoder.schema.fields().len(), self.threads, rows, encode)?;
        self.append_row_group(columns)
    }

    /// Encodes `batches` as the next rows of the row group in progress, opening one when none is
    /// ([`ParquetWriter::close_row_group`] closes it). Every column's writer stays open until
    /// then, holding its encoded pages.
    ///
    /// Errors: the Parquet encoder's.
    pub(crate) fn write_part(&mut self, batches: &[RecordBatch]) -> Result<()> {
        if self.open.is_none() {
            let writers = self
                .encoder
                .factories
                .iter()
                .map(|f| Ok(Mutex::new(f.create_column_writers(0)?)))
                .collect::<Result<Vec<_>>>()?;
            self.open = Some(writers);
        }
        let (schema, Some(open)) = (&self.encoder.schema, self.open.as_ref()) else {
            return Err(Error::internal("no row group open"));
        };
        let rows: usize = batches.iter().map(|b| b.num_rows()).sum();
        per_column(schema.fields().len(), self.threads, rows, |i| {
            let mut writers = open[i]
                .lock()
                .map_err(|_| Error::internal("a column encoder thread panicked"))?;
            write_leaves(schema, i, batches.iter().map(|b| b.column(i)), &mut writers)
        })?;
        Ok(())
    }

    /// Whether a row group written in parts is open.
    pub(crate) fn in_row_group(&self) -> bool {
        self.open.is_some()
    }

    /// Closes the row group written in parts (nothing when none is open).
    ///
    /// Errors: the Parquet encoder's.
    pub(crate) fn close_row_group(&mut self) -> Result<()> {
        let Some(open) = self.open.take() else {
            return Ok(());
        };
        let mut rg = self.file.next_row_group()?;
        for writers in open {
            let writers = writers
                .into_inner()
                .map_err(|_| Error::internal("a column encoder thread panicked"))?;
            for w in writers {
                w.close()?.append_to_row_group(&mut rg)?;
            }
        }
        rg.close()?;
        Ok(())
    }

    /// Bytes of the file encoded so far (row groups closed), taken or not.
    pub(crate) fn bytes_written(&self) -> usize {
        self.file.bytes_written()
    }

    /// The encoded bytes not taken yet.
    pub(crate) fn take_bytes(&mut self) -> Result<Bytes> {
        self.file
            .flush()
            .map_err(|e| Error::internal(format!("parquet buffer: {e}")))?;
        Ok(Bytes::from(std::mem::take(self.file.inner_mut())))
    }

    /// Writes the footer; returns the bytes not taken yet and the file's metadata.
    pub(crate) fn finish(mut self) -> Result<(Bytes, ParquetMetaData)> {
        let meta = self.file.finish()?;
        Ok((self.take_bytes()?, meta))
    }
}

/// Encodes the columns of a file's schema one at a time, each into a column writer of its own
/// (shared by the threads or tasks that encode a row group's columns).
pub(crate) struct ColumnEncoder {
    factories: Vec<ArrowRowGroupWriterFactory>,
    schema: SchemaRef,
}

impl ColumnEncoder {
    /// Encodes `arrays` (values of column `i` of the schema, in order) as that column's chunk of
    /// one row group: one chunk per Parquet leaf.
    ///
    /// Errors: the Parquet encoder's (e.g. an array of another type).
    pub(crate) fn encode<'a>(
        &self,
        i: usize,
        arrays: impl IntoIterator<Item = &'a ArrayRef>,
    ) -> Result<Vec<ArrowColumnChunk>> {
        let mut writers = self.factories[i].create_column_writers(0)?;
        write_leaves(&self.schema, i, arrays, &mut writers)?;
        writers.into_iter().map(|w| Ok(w.close()?)).collect()
    }
}

/// Writes `arrays` of column `i` to its writers (one per Parquet leaf of the field, in order).
fn write_leaves<'a>(
    schema: &SchemaRef,
    i: usize,
    arrays: impl IntoIterator<Item = &'a ArrayRef>,
    writers: &mut [ArrowColumnWriter],
) -> Result<()> {
    for array in arrays {
        let leaves = compute_leaves(schema.field(i), array)?;
        if leaves.len() != writers.len() {
            return Err(Error::internal(format!(
                "column {i}: {} leaves for {} writers",
                leaves.len(),
                writers.len()
            )));
        }
        for (leaf, writer) in leaves.iter().zip(writers.iter_mut()) {
            writer.write(leaf)?;
        }
    }
    Ok(())
}

/// Runs `f` for each of `n` columns, in column order of the results, on up to `threads` threads
/// (on the calling thread for fewer than [`PARALLEL_MIN_ROWS`] `rows`).
fn per_column<T: Send>(n: usize, threads: usize, rows: usize, f: impl Fn(usize) -> Result<T> + Sync) -> Result<Vec<T>> {
    let threads = threads.min(n);
    if threads <= 1 || rows < PARALLEL_MIN_ROWS {
        return (0..n).map(f).collect();
    }
    let next = AtomicUsize::new(0);
    let results: Vec<Mutex<Option<Result<T>>>> = (0..n).map(|_| Mutex::new(None)).collect();
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= n {
                    break;
                }
                let r = f(i);
                if let Ok(mut slot) = results[i].lock() {
                    *slot = Some(r);
                }
            });
        }
    });
    results
        .into_iter()
        .map(|m| {
            m.into_inner()
                .ok()
                .flatten()
                .unwrap_or_else(|| Err(Error::internal("a column encoder thread stopped")))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{Float64Array, Int64Array, StringArray};
    use arrow::compute::concat_batches;
    use arrow::datatypes::{DataType, Field};
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

    fn sample(n: usize, offset: usize) -> RecordBatch {
        let schema = Arc::new(Schema::new(vec![
            Field::new("a", DataType::Int64, false),
            Field::new("b", DataType::Utf8, true),
            Field::new("c", DataType::Float64, true),
            Field::new("d", DataType::Int64, true),
        ]));
        let r = offset..offset + n;
        RecordBatch::try_new(
            schema,
            vec![
                Arc::new(Int64Array::from_iter_values(r.clone().map(|i| i as i64))),
                Arc::new(StringArray::from_iter(
                    r.clone().map(|i| (i % 7 != 0).then(|| format!("s{}", i % 100))),
                )),
                Arc::new(Float64Array::from_iter(
                    r.clone().map(|i| (i % 5 != 0).then_some(i as f64 / 3.0)),
                )),
                Arc::new(Int64Array::from_iter(r.map(|i| (i % 3 != 0).then_some(-(i as i64))))),
            ],
        )
        .unwrap()
    }

    /// Columns encoded on several threads land in order, row groups made of several batches (at
    /// once or in parts) and bytes taken between row groups make one file that reads back as the
    /// input, serial or not.
    #[test]
    fn parallel_column_encoding_round_trips() {
        for (threads, in_parts) in [(1, false), (2, false), (4, false), (1, true), (2, true)] {
            let n = 3 * PARALLEL_MIN_ROWS + 17;
            let parts = [sample(n, 0), sample(5, n), sample(n, n + 5)];
            let schema = parts[0].schema();
            let mut w = ParquetWriter::new(&schema, WriterProperties::builder().build(), threads).unwrap();
            match in_parts {
                false => w.write_row_group(&parts[..2]).unwrap(),
                true => {
                    w.write_part(&parts[..1]).unwrap();
                    assert!(w.in_row_group());
                    w.write_part(&parts[1..2]).unwrap();
                    w.close_row_group().unwrap();
                    assert!(!w.in_row_group());
                }
            }
            let mut buf = w.take_bytes().unwrap().to_vec();
            assert_eq!(buf.len(), w.bytes_written());
            w.write_row_group(&parts[2..]).unwrap();
            let (rest, meta) = w.finish().unwrap();
            buf.extend_from_slice(&rest);
            assert_eq!(meta.num_row_groups(), 2);
            assert_eq!(meta.file_metadata().num_rows() as usize, 2 * n + 5);
            let reader = ParquetRecordBatchReaderBuilder::try_new(Bytes::from(buf))
                .unwrap()
                .with_batch_size(4 * n)
                .build()
                .unwrap();
            let back: Vec<RecordBatch> = reader.collect::<std::result::Result<_, _>>().unwrap();
            let back = concat_batches(&schema, &back).unwrap();
            let want = concat_batches(&schema, &parts).unwrap();
            for i in 0..4 {
                assert_eq!(
                    back.column(i).as_ref(),
                    want.column(i).as_ref(),
                    "column {i}, {threads} threads"
                );
            }
        }
    }
}
