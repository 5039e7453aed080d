//! Sorting, partitioning and Parquet encoding of aligned batches.
//!
//! Rows are sorted by (partition, series key, time) so that each partition is one contiguous run
//! sorted by the table's sort order (DESIGN.md, "The table contract"). Each run is encoded as one
//! Parquet file: zstd, Iceberg field ids, page-level statistics and the page index (Parquet spec,
//! "PageIndex"), sorting columns declared; its Iceberg metrics come from `write::metrics`.

use std::collections::HashMap;
use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, Int32Array, RecordBatch, UInt32Array};
use arrow::compute::{concat_batches, lexsort_to_indices, take_record_batch, SortColumn};
use arrow::datatypes::{DataType, SchemaRef};
use arrow::row::{RowConverter, SortField};
use bytes::Bytes;
use iceberg::spec::DataFile;
use parquet::basic::{Compression, Encoding, ZstdLevel};
use parquet::file::metadata::SortingColumn;
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::schema::types::ColumnPath;

use crate::error::{Error, Result};
use crate::format::properties::{FloatEncoding, MaintenanceSettings, TimeEncoding};
use crate::format::{Dedup, TableContract};
use crate::write::keys;
use crate::write::metrics::FileMetrics;
use crate::write::parquet::ParquetWriter;

/// One sorted run of rows bound for one data file.
pub(crate) struct Run {
    /// Partition value (hours, days or months since the epoch) or `None` for a plain table.
    pub(crate) partition: Option<i32>,
    pub(crate) batch: RecordBatch,
}

/// Sorts `batches` (already aligned to `schema`) by (partition, series key, time) and cuts them into
/// one run per partition. With last-write-wins dedup, of rows with one (series key, time) only the
/// last in input order is kept; the second value is how many were dropped.
pub(crate) fn sort_and_partition(
    schema: &SchemaRef,
    batches: &[RecordBatch],
    contract: &TableContract,
) -> Result<(Vec<Run>, u64)> {
    let batch = concat_batches(schema, batches)?;
    if batch.num_rows() == 0 {
        return Ok((vec![], 0));
    }
    let Some(time_name) = contract.time_column.as_deref() else {
        return Ok((vec![Run { partition: None, batch }], 0));
    };
    let time = batch
        .column_by_name(time_name)
        .ok_or_else(|| Error::internal(format!("time column {time_name} missing after alignment")))?;
    let micros = time.as_primitive::<arrow::datatypes::TimestampMicrosecondType>();
    let parts: ArrayRef = Arc::new(Int32Array::from_iter_values(
        micros.values().iter().map(|v| contract.partitioning.value_of(*v)),
    ));
    let series: Vec<ArrayRef> = contract
        .series_key
        .iter()
        .map(|k| {
            batch
                .column_by_name(k)
                .cloned()
                .ok_or_else(|| Error::internal(format!("series key {k} missing")))
        })
        .collect::<Result<_>>()?;
    let dedup = contract.dedup == Dedup::LastWriteWins;
    let indices = if micros.null_count() == 0 {
        sort_order(
            parts.as_primitive::<arrow::datatypes::Int32Type>().values(),
            &series,
            micros.values(),
        )?
    } else {
        // Null times (only in tables that allow them) sort first, as lexsort puts them.
        let mut keys = vec![SortColumn {
            values: parts.clone(),
            options: None,
        }];
        keys.extend(series.iter().map(|c| SortColumn {
            values: c.clone(),
            options: None,
        }));
        keys.push(SortColumn {
            values: time.clone(),
            options: None,
        });
        // Input order breaks ties, so that the last row of a key is the last of its run.
        keys.push(SortColumn {
            values: Arc::new(UInt32Array::from_iter_values(0..batch.num_rows() as u32)),
            options: None,
        });
        lexsort_to_indices(&keys, None)?
    };
    let mut sorted = take_record_batch(&batch, &indices)?;
    let mut parts = arrow::compute::take(&parts, &indices, None)?;
    let mut dropped = 0;
    if dedup {
        // The partition is a function of the time, so rows of one key are in one run.
        if let Some(kept) = keys::last_of_each_key(&sorted, contract)? {
            dropped = (sorted.num_rows() - kept.len()) as u64;
            sorted = take_record_batch(&sorted, &kept)?;
            parts = arrow::compute::take(&parts, &kept, None)?;
        }
    }
    let parts = parts.as_primitive::<arrow::datatypes::Int32Type>();
    let mut runs = Vec::new();
    let mut start = 0;
    for i in 1..=parts.len() {
        if i == parts.len() || parts.value(i) != parts.value(start) {
            runs.push(Run {
                partition: Some(parts.value(start)),
                batch: sorted.slice(start, i - start),
            });
            start = i;
        }
    }
    Ok((runs, dropped))
}

/// The row order by (partition, series key, time, input position) of rows whose partition values,
/// series key columns and times (µs, no nulls) are given: the order a multi-column lexsort gives
/// (ascending, nulls of a key first), with input order breaking ties so that the last row of a key
/// is the last of its run.
///
/// Series keys are compared once per distinct key, not per row pair: rows are grouped by their key
/// (arrow's row format, hashed), the few distinct keys sorted, and then plain
/// (partition, key rank, time, position) tuples sorted, which is several times faster than a
/// comparator over string columns.
fn sort_order(parts: &[i32], series: &[ArrayRef], time: &[i64]) -> Result<UInt32Array> {
    let n = time.len();
    let ranks: Vec<u32> = if series.is_empty() {
        vec![0; n]
    } else {
        let converter = RowConverter::new(series.iter().map(|c| SortField::new(c.data_type().clone())).collect())?;
        let rows = converter.convert_columns(series)?;
        let mut ids: HashMap<arrow::row::Row<'_>, u32> = HashMap::new();
        let group: Vec<u32> = (0..n)
            .map(|i| {
                let next = ids.len() as u32;
                *ids.entry(rows.row(i)).or_insert(next)
            })
            .collect();
        let mut distinct: Vec<(arrow::row::Row<'_>, u32)> = ids.into_iter().collect();
        distinct.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        let mut rank = vec![0u32; distinct.len()];
        for (r, (_, g)) in distinct.iter().enumerate() {
            rank[*g as usize] = r as u32;
        }
        group.iter().map(|g| rank[*g as usize]).collect()
    };
    let mut order: Vec<(i32, u32, i64, u32)> = (0..n).map(|i| (parts[i], ranks[i], time[i], i as u32)).collect();
    order.sort_unstable();
    Ok(UInt32Array::from_iter_values(order.into_iter().map(|t| t.3)))
}

/// The object path (relative to the table) of a new data file in `partition`.
pub(crate) fn data_file_name(contract: &TableContract, partition: Option<i32>) -> String {
    let id = uuid::Uuid::now_v7();
    match (partition, &contract.time_column) {
        (Some(p), Some(t)) => {
            format!(
                "data/{}={}/{id}.parquet",
                contract.partition_field_name(t),
                contract.partitioning.label(p)
            )
        }
        _ => format!("data/{id}.parquet"),
    }
}

/// The Parquet writer settings of a data file: zstd, page statistics (for the page index), row
/// groups of `row_group_rows`, data pages of about `varve.page-rows` rows (parquet-rs checks the limit
/// after each write of at most 1,024 rows, so a page may hold up to 1,023 more), and the table's
/// sort order declared as sorting columns; float columns per `varve.float-encoding` (`settings`).
pub(crate) fn writer_properties(
    schema: &SchemaRef,
    contract: &TableContract,
    row_group_rows: usize,
    settings: &MaintenanceSettings,
) -> WriterProperties {
    let page_rows = settings.page_rows;
    let mut sorting = Vec::new();
    for name in contract.series_key.iter().chain(contract.time_column.iter()) {
        if let Ok(i) = schema.index_of(name) {
            sorting.push(SortingColumn {
                column_idx: i as i32,
                descending: false,
                nulls_first: true,
            });
        }
    }
    let mut props = WriterProperties::builder()
        .set_compression(Compression::ZSTD(ZstdLevel::default()))
        .set_statistics_enabled(EnabledStatistics::Page)
        .set_max_row_group_row_count(Some(row_group_rows.max(1)))
        .set_data_page_row_count_limit(page_rows.max(1))
        .set_sorting_columns(if sorting.is_empty() { None } else { Some(sorting) });
    // Measurements are mostly distinct floats: a dictionary of them only costs (every value is
    // hashed until the dictionary reaches its limit, 1 MiB by default, and then the column falls
    // back). A small limit keeps the dictionary for the floats that repeat (a constant per series)
    // and gives up early on the rest.
    //
    // The fallback is BYTE_STREAM_SPLIT (Parquet spec, "Encodings": the k-th bytes of all values
    // together), not PLAIN: the sign and exponent bytes of sensor readings repeat and compress
    // well on their own, and the random low mantissa bytes are stored raw by zstd instead of
    // through its Huffman stage, whose decoding was a third of a rollup query's time. On the IoT
    // readings and a 1-minute rollup of them, files are 26% smaller and decode 20-40% faster
    // (bench/results/HISTORY.md). DuckDB (0.10+), pyarrow and Spark read it. Table property
    // `varve.float-encoding=plain` keeps PLAIN.
    for field in schema.fields() {
        if field.data_type().is_floating() {
            let path = ColumnPath::from(field.name().as_str());
            props = props.set_column_dictionary_page_size_limit(path.clone(), FLOAT_DICTIONARY_LIMIT_BYTES);
            // Float16 is a fixed-length byte array, for which readers came to the encoding later.
            if settings.float_encoding == FloatEncoding::ByteStreamSplit
                && matches!(field.data_type(), DataType::Float32 | DataType::Float64)
            {
                props = props.set_column_encoding(path, Encoding::BYTE_STREAM_SPLIT);
            }
        }
    }
    // The time column: DELTA_BINARY_PACKED (Parquet spec, "Encodings") instead of a dictionary.
    // Rows are sorted by (series key, time), so within a series the differences between
    // neighbouring times are nearly constant (a sensor's interval) and pack to a few bits per row;
    // only the jump back at the start of each series costs one wide miniblock of 32 values. A
    // dictionary costs about 14 bits per row for a day of 10-second readings and compresses only
    // when a page spans several series: a compacted IoT diagnostics file (8,640 rows per series,
    // pages of 8,192 rows) held 1.9 bytes per row of times, against 0.01 with the delta encoding.
    // DuckDB, pyarrow and Spark read it. Table property `varve.time-encoding=dictionary` keeps the
    // dictionary.
    if let Some(time) = &contract.time_column {
        if let Ok(field) = schema.field_with_name(time) {
            let integer = matches!(
                field.data_type(),
                DataType::Timestamp(_, _) | DataType::Date32 | DataType::Int32 | DataType::Int64
            );
            if integer && settings.time_encoding == TimeEncoding::Delta {
                let path = ColumnPath::from(time.as_str());
                props = props
                    .set_column_dictionary_enabled(path.clone(), false)
                    .set_column_encoding(path, Encoding::DELTA_BINARY_PACKED);
            }
        }
    }
    props.build()
}

/// The dictionary page size limit of float columns, bytes (4,096 distinct doubles).
const FLOAT_DICTIONARY_LIMIT_BYTES: usize = 32 * 1024;

/// Encodes a run as a Parquet file in row groups of the table's `varve.row-group-rows` (columns on
/// up to `varve.encode-threads` threads, 0: one per core; see `write::parquet`) and describes it
/// as an Iceberg data file at `location`.
pub(crate) fn encode(
    run: &Run,
    contract: &TableContract,
    location: &str,
    settings: &MaintenanceSettings,
) -> Result<(Bytes, DataFile)> {
    let batch = &run.batch;
    let schema = batch.schema();
    let row_group_rows = settings.row_group_rows.max(1);
    let props = writer_properties(&schema, contract, row_group_rows, settings);
    let mut writer = ParquetWriter::new(&schema, props, settings.encode_threads)?;
    let mut start = 0;
    while start < batch.num_rows() || (start == 0 && batch.num_rows() == 0) {
        let len = row_group_rows.min(batch.num_rows() - start);
        writer.write_row_group(&[batch.slice(start, len)])?;
        start += len.max(1);
    }
    let (buf, meta) = writer.finish()?;
    let mut metrics = FileMetrics::new(schema.clone());
    metrics.update(batch);
    let size = buf.len() as u64;
    let file = metrics.finish(&meta, contract, run.partition, location, size)?;
    Ok((buf, file))
}

/// The footer of a Parquet file held in memory, with its page indexes (what a scan reads before
/// the data), or `None` when it cannot be read (the file is then read as usual).
pub(crate) fn read_footer(file: &Bytes) -> Option<std::sync::Arc<parquet::file::metadata::ParquetMetaData>> {
    parquet::file::metadata::ParquetMetaDataReader::new()
        .with_page_index_policy(parquet::file::metadata::PageIndexPolicy::Optional)
        .parse_and_finish(file)
        .ok()
        .map(std::sync::Arc::new)
}

/// The footer (with page indexes) of a file of `file_size` bytes from `tail`, its last bytes as
/// written by [`crate::write::parquet`]'s `finish` (the page indexes and the footer). `None` when
/// the tail does not hold them all.
pub(crate) fn read_footer_from_tail(
    tail: &Bytes,
    file_size: u64,
) -> Option<std::sync::Arc<parquet::file::metadata::ParquetMetaData>> {
    let mut reader = parquet::file::metadata::ParquetMetaDataReader::new()
        .with_page_index_policy(parquet::file::metadata::PageIndexPolicy::Required);
    reader.try_parse_sized(tail, file_size).ok()?;
    reader.finish().ok().map(std::sync::Arc::new)
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{Int64Array, StringArray};

    /// Float columns fall back to BYTE_STREAM_SPLIT unless the table asks for PLAIN; other
    /// columns keep the writer's default.
    #[test]
    fn float_columns_fall_back_to_the_tables_float_encoding() {
        use arrow::datatypes::{Field, Schema};
        let schema: SchemaRef = Arc::new(Schema::new(vec![
            Field::new("v", DataType::Float64, true),
            Field::new("h", DataType::Float16, true),
            Field::new("n", DataType::Int64, true),
        ]));
        let contract = TableContract::time_series("ts");
        let col = |c: &str| ColumnPath::from(c);
        let settings = |encoding: Option<&str>| {
            let mut p = std::collections::HashMap::new();
            if let Some(e) = encoding {
                p.insert("varve.float-encoding".to_string(), e.to_string());
            }
            MaintenanceSettings::from_properties(&p).unwrap()
        };
        let bss = writer_properties(&schema, &contract, 1024, &settings(None));
        assert_eq!(bss.encoding(&col("v")), Some(Encoding::BYTE_STREAM_SPLIT));
        assert_eq!(bss.encoding(&col("h")), None);
        assert_eq!(bss.encoding(&col("n")), None);
        let plain = writer_properties(&schema, &contract, 1024, &settings(Some("plain")));
        assert_eq!(plain.encoding(&col("v")), None);
    }

    /// The time column is delta-encoded without a dictionary unless the table asks for the
    /// dictionary; a file written either way reads back the same times.
    #[test]
    fn the_time_column_is_delta_encoded() {
        use arrow::array::TimestampMicrosecondArray;
        use arrow::datatypes::{Field, Schema, TimeUnit};
        let schema: SchemaRef = Arc::new(Schema::new(vec![
            Field::new(
                "ts",
                DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
                false,
            ),
            Field::new("n", DataType::Int64, true),
        ]));
        let contract = TableContract::time_series("ts");
        let col = |c: &str| ColumnPath::from(c);
        let settings = |encoding: Option<&str>| {
            let mut p = HashMap::new();
            if let Some(e) = encoding {
                p.insert("varve.time-encoding".to_string(), e.to_string());
            }
            MaintenanceSettings::from_properties(&p).unwrap()
        };
        let delta = writer_properties(&schema, &contract, 1024, &settings(None));
        assert_eq!(delta.encoding(&col("ts")), Some(Encoding::DELTA_BINARY_PACKED));
        assert!(!delta.dictionary_enabled(&col("ts")));
        assert!(delta.dictionary_enabled(&col("n")));
        let dict = writer_properties(&schema, &contract, 1024, &settings(Some("dictionary")));
        assert_eq!(dict.encoding(&col("ts")), None);
        assert!(dict.dictionary_enabled(&col("ts")));

        // Three series of steady 10-second readings with a late row each, and the jump back at
        // each series' start; negative times (before 1970) too.
        let times: Vec<i64> = (0..3)
            .flat_map(|s| (0..5000).map(move |i| -86_400_000_000 + i * 10_000_000 + s * 7 + (i % 97 == 0) as i64))
            .collect();
        let batch = RecordBatch::try_new(
            schema.clone(),
            vec![
                Arc::new(TimestampMicrosecondArray::from(times.clone()).with_timezone("UTC")),
                Arc::new(Int64Array::from_iter((0..times.len() as i64).map(Some))),
            ],
        )
        .unwrap();
        let mut sizes = Vec::new();
        for props in [delta, dict] {
            let mut buf = Vec::new();
            let mut w = parquet::arrow::ArrowWriter::try_new(&mut buf, schema.clone(), Some(props)).unwrap();
            w.write(&batch).unwrap();
            w.close().unwrap();
            let bytes = Bytes::from(buf);
            let meta = read_footer(&bytes).unwrap();
            sizes.push(meta.row_group(0).column(0).compressed_size());
            let read: Vec<RecordBatch> = parquet::arrow::arrow_reader::ParquetRecordBatchReader::try_new(bytes, 8192)
                .unwrap()
                .collect::<std::result::Result<_, _>>()
                .unwrap();
            let got: Vec<i64> = read
                .iter()
                .flat_map(|b| {
                    b.column(0)
                        .as_primitive::<arrow::datatypes::TimestampMicrosecondType>()
                        .values()
                        .to_vec()
                })
                .collect();
            assert_eq!(got, times);
        }
        assert!(
            sizes[0] * 4 < sizes[1],
            "delta {} bytes, dictionary {}",
            sizes[0],
            sizes[1]
        );
    }

    /// The tuple sort gives exactly the order of arrow's lexsort with the input position as the
    /// last key, on random keys with repeats and nulls.
    #[test]
    fn sort_order_equals_lexsort() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = |m: u64| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 33) % m
        };
        for n in [0usize, 1, 7, 1000] {
            let parts: Vec<i32> = (0..n).map(|_| next(3) as i32 - 1).collect();
            let names: StringArray = (0..n)
                .map(|_| match next(12) {
                    0 => None,
                    k => Some(format!("s{}", k % 7)),
                })
                .collect();
            let zone: Int64Array = (0..n).map(|_| Some(next(3) as i64 - 1)).collect();
            let time: Vec<i64> = (0..n).map(|_| next(20) as i64 - 10).collect();
            let series: Vec<ArrayRef> = vec![Arc::new(names), Arc::new(zone)];
            let got = sort_order(&parts, &series, &time).unwrap();
            let mut keys = vec![SortColumn {
                values: Arc::new(Int32Array::from(parts.clone())),
                options: None,
            }];
            keys.extend(series.iter().map(|c| SortColumn {
                values: c.clone(),
                options: None,
            }));
            keys.push(SortColumn {
                values: Arc::new(Int64Array::from(time.clone())),
                options: None,
            });
            keys.push(SortColumn {
                values: Arc::new(UInt32Array::from_iter_values(0..n as u32)),
                options: None,
            });
            let want = lexsort_to_indices(&keys, None).unwrap();
            assert_eq!(got, want, "{n} rows");
        }
    }
}
