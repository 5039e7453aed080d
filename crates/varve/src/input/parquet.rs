//! Parquet inputs: the schema from the footer, batches as stored.

use arrow::datatypes::Schema;
use bytes::Bytes;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

use crate::error::{Error, Result};

use super::source::io_error;
use super::{Batches, Data, Input, BATCH_ROWS};

fn builder(input: &Input) -> Result<(ParquetRecordBatchReaderBuilder<Reader>, Schema)> {
    let reader = match &input.data {
        Data::File(p) => {
            let f = std::fs::File::open(p).map_err(|e| io_error(&input.name, e))?;
            if f.metadata().map(|m| m.len()).unwrap_or(0) == 0 {
                return Err(Error::invalid(format!("{}: the file is empty", input.name)));
            }
            Reader::File(f)
        }
        Data::Bytes(b) if b.is_empty() => return Err(Error::invalid(format!("{}: the input is empty", input.name))),
        Data::Bytes(b) => Reader::Bytes(b.clone()),
    };
    let b = ParquetRecordBatchReaderBuilder::try_new(reader)
        .map_err(|e| Error::invalid(format!("{}: not a readable Parquet file ({e})", input.name)).with_source(e))?;
    let schema = b.schema().as_ref().clone();
    Ok((b, schema))
}

/// The file's Arrow schema.
pub(crate) fn schema(input: &Input) -> Result<Schema> {
    Ok(builder(input)?.1)
}

/// The file's rows.
pub(crate) fn batches(input: &Input) -> Result<Batches> {
    let (b, _) = builder(input)?;
    let reader = b
        .with_batch_size(BATCH_ROWS)
        .build()
        .map_err(|e| Error::invalid(format!("{}: {e}", input.name)).with_source(e))?;
    let name = input.name.clone();
    Ok(Box::new(reader.map(move |b| {
        b.map_err(|e| Error::invalid(format!("{name}: {e}")).with_source(e))
    })))
}

/// A file or bytes, for the Parquet reader.
enum Reader {
    File(std::fs::File),
    Bytes(Bytes),
}

impl parquet::file::reader::Length for Reader {
    fn len(&self) -> u64 {
        match self {
            Reader::File(f) => f.len(),
            Reader::Bytes(b) => b.len() as u64,
        }
    }
}

impl parquet::file::reader::ChunkReader for Reader {
    type T = Box<dyn std::io::Read + Send>;

    fn get_read(&self, start: u64) -> parquet::errors::Result<Self::T> {
        Ok(match self {
            Reader::File(f) => Box::new(f.get_read(start)?),
            Reader::Bytes(b) => Box::new(b.get_read(start)?),
        })
    }

    fn get_bytes(&self, start: u64, length: usize) -> parquet::errors::Result<Bytes> {
        match self {
            Reader::File(f) => f.get_bytes(start, length),
            Reader::Bytes(b) => b.get_bytes(start, length),
        }
    }
}
