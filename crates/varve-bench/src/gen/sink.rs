//! Writing one generated table: batches into a sequence of Parquet or CSV files of bounded size.

use std::fs::File;
use std::path::{Path, PathBuf};

use arrow::array::RecordBatch;
use arrow::datatypes::SchemaRef;
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::WriterProperties;

use super::{FileFormat, GeneratedTable};

enum Writer {
    Parquet(ArrowWriter<File>),
    Csv(arrow::csv::Writer<File>),
}

/// A table being generated: files `part-NNNNN.<ext>` under `<dir>/<name>/`, each closed once it
/// holds at least `file_rows` rows.
pub struct TableSink {
    dir: PathBuf,
    schema: SchemaRef,
    format: FileFormat,
    file_rows: usize,
    writer: Option<(Writer, PathBuf)>,
    rows_in_file: usize,
    table: GeneratedTable,
}

impl TableSink {
    /// A sink for table `name` in dataset directory `dir`.
    ///
    /// Errors: the table directory cannot be created.
    pub fn new(
        dir: &Path,
        name: &str,
        schema: SchemaRef,
        format: FileFormat,
        file_rows: usize,
    ) -> Result<Self, String> {
        let dir = dir.join(name);
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        Ok(TableSink {
            dir,
            schema,
            format,
            file_rows,
            writer: None,
            rows_in_file: 0,
            table: GeneratedTable {
                name: name.to_string(),
                rows: 0,
                files: vec![],
                bytes: 0,
            },
        })
    }

    /// The table's schema.
    pub fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    /// Writes one batch.
    ///
    /// Errors: I/O or encoding errors, naming the file.
    pub fn write(&mut self, batch: &RecordBatch) -> Result<(), String> {
        if batch.num_rows() == 0 {
            return Ok(());
        }
        if self.writer.is_none() {
            let (ext, idx) = (
                match self.format {
                    FileFormat::Parquet => "parquet",
                    FileFormat::Csv => "csv",
                },
                self.table.files.len(),
            );
            let file_name = format!("part-{idx:05}.{ext}");
            let path = self.dir.join(&file_name);
            let file = File::create(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            let w = match self.format {
                FileFormat::Parquet => {
                    let props = WriterProperties::builder()
                        .set_compression(Compression::ZSTD(ZstdLevel::default()))
                        .set_max_row_group_row_count(Some(self.file_rows.max(1)))
                        .build();
                    Writer::Parquet(
                        ArrowWriter::try_new(file, self.schema.clone(), Some(props))
                            .map_err(|e| format!("{}: {e}", path.display()))?,
                    )
                }
                FileFormat::Csv => Writer::Csv(
                    arrow::csv::WriterBuilder::new()
                        .with_header(true)
                        .with_timestamp_tz_format("%Y-%m-%dT%H:%M:%S%.6fZ".to_string())
                        .build(file),
                ),
            };
            self.table.files.push(file_name);
            self.writer = Some((w, path));
            self.rows_in_file = 0;
        }
        let (w, path) = self.writer.as_mut().expect("writer open");
        match w {
            Writer::Parquet(w) => w.write(batch).map_err(|e| format!("{}: {e}", path.display()))?,
            Writer::Csv(w) => w.write(batch).map_err(|e| format!("{}: {e}", path.display()))?,
        }
        self.rows_in_file += batch.num_rows();
        self.table.rows += batch.num_rows() as u64;
        if self.rows_in_file >= self.file_rows {
            self.close_file()?;
        }
        Ok(())
    }

    fn close_file(&mut self) -> Result<(), String> {
        if let Some((w, path)) = self.writer.take() {
            match w {
                Writer::Parquet(w) => {
                    w.close().map_err(|e| format!("{}: {e}", path.display()))?;
                }
                Writer::Csv(w) => drop(w.into_inner()),
            }
            self.table.bytes += std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
        }
        Ok(())
    }

    /// Closes the open file and reports what was written.
    ///
    /// Errors: the last file cannot be completed.
    pub fn finish(mut self) -> Result<GeneratedTable, String> {
        self.close_file()?;
        Ok(self.table)
    }
}
