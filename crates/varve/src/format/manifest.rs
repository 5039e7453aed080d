//! Manifests and manifest lists (Iceberg spec, "Manifests" and "Manifest Lists"), encoded to and
//! decoded from bytes. The Avro encoding is the `iceberg` crate's; this module only moves the bytes
//! through memory so that the engine's own object store does all the I/O.

use std::sync::Arc;

use bytes::Bytes;
use iceberg::io::FileIO;
use iceberg::spec::{
    DataContentType, DataFile, FormatVersion, Literal, Manifest, ManifestEntry, ManifestFile, ManifestList,
    ManifestListWriter, ManifestStatus, ManifestWriterBuilder, PartitionSpec, PrimitiveLiteral, Schema,
};

use crate::error::{Error, ErrorKind, Result};

/// The entries of one new manifest (Iceberg spec, "Manifest Entry Fields"): files the snapshot adds,
/// live files it carries over unchanged (`EXISTING`, sequence numbers kept), and files it removes
/// (`DELETED`, recorded once in the snapshot that removes them).
#[derive(Debug, Default)]
pub(crate) struct ManifestContents {
    pub(crate) added: Vec<DataFile>,
    pub(crate) existing: Vec<ManifestEntry>,
    pub(crate) deleted: Vec<ManifestEntry>,
}

impl ManifestContents {
    pub(crate) fn is_empty(&self) -> bool {
        self.added.is_empty() && self.existing.is_empty() && self.deleted.is_empty()
    }
}

/// Encodes a data manifest for `snapshot_id`. `location` is the absolute location the manifest will
/// be stored at; the returned [`ManifestFile`] entry points there.
pub(crate) async fn encode_manifest(
    location: &str,
    snapshot_id: i64,
    sequence_number: i64,
    schema: Arc<Schema>,
    spec: PartitionSpec,
    contents: ManifestContents,
) -> Result<(ManifestFile, Bytes)> {
    let io = FileIO::new_with_memory();
    let scratch = format!("memory:///manifest-{}.avro", uuid::Uuid::new_v4());
    let out = io.new_output(&scratch)?;
    let mut writer = ManifestWriterBuilder::new(out, Some(snapshot_id), schema, spec).build_v2_data();
    for f in contents.added {
        writer.add_file(f, sequence_number)?;
    }
    for e in contents.existing {
        let seq = e.sequence_number.unwrap_or(sequence_number);
        let file_seq = e.file_sequence_number.or(Some(seq));
        writer.add_existing_file(e.data_file, e.snapshot_id.unwrap_or(snapshot_id), seq, file_seq)?;
    }
    for e in contents.deleted {
        let seq = e.sequence_number.unwrap_or(sequence_number);
        let file_seq = e.file_sequence_number.or(Some(seq));
        writer.add_delete_file(e.data_file, seq, file_seq)?;
    }
    let mut entry = writer.write_manifest_file().await?;
    let bytes = io.new_input(&scratch)?.read().await?;
    entry.manifest_path = location.to_string();
    Ok((entry, bytes))
}

/// Encodes a v2 manifest list holding `manifests` for a snapshot.
pub(crate) async fn encode_manifest_list(
    snapshot_id: i64,
    parent_snapshot_id: Option<i64>,
    sequence_number: i64,
    manifests: Vec<ManifestFile>,
) -> Result<Bytes> {
    let io = FileIO::new_with_memory();
    let scratch = format!("memory:///list-{}.avro", uuid::Uuid::new_v4());
    let out = io.new_output(&scratch)?;
    let mut writer = ManifestListWriter::v2(out.writer().await?, snapshot_id, parent_snapshot_id, sequence_number);
    writer.add_manifests(manifests.into_iter())?;
    writer.close().await?;
    Ok(io.new_input(&scratch)?.read().await?)
}

/// Decodes a v2 manifest list.
pub(crate) fn decode_manifest_list(bytes: &[u8]) -> Result<Vec<ManifestFile>> {
    Ok(ManifestList::parse_with_version(bytes, FormatVersion::V2)?
        .consume_entries()
        .into_iter()
        .collect())
}

/// Decodes a manifest and returns its live entries (added or existing, not deleted), with the
/// snapshot id and sequence numbers that entries leave null inherited from the manifest list's
/// entry `file` (Iceberg spec, "Sequence Number Inheritance").
///
/// Errors: [`crate::ErrorKind::Unsupported`] when the manifest lists live delete files (Iceberg
/// spec, "Row-level Deletes"): Varve writes none (its deletes and last-write-wins dedup rewrite
/// files) and does not apply those of other engines yet, so reading on would return deleted rows
/// and a rewrite would bring them back.
pub(crate) fn decode_manifest(bytes: &[u8], file: &ManifestFile) -> Result<Vec<ManifestEntry>> {
    let (entries, _) = Manifest::parse_avro(bytes)?.into_parts();
    let deletes: Vec<&ManifestEntry> = entries
        .iter()
        .map(|e| e.as_ref())
        .filter(|e| e.is_alive() && e.data_file.content_type() != DataContentType::Data)
        .collect();
    if let Some(first) = deletes.first() {
        return Err(Error::new(
            ErrorKind::Unsupported,
            format!(
                "the table has {} row-level delete file(s) written by another engine (first: {}); Varve does not \
                 apply delete files yet and refuses to read or rewrite the table rather than return deleted rows. \
                 Compact the table with that engine (rewrite data files) so the deletes are applied, then use Varve",
                deletes.len(),
                first.data_file.file_path()
            ),
        ));
    }
    Ok(entries
        .into_iter()
        .filter(|e| e.is_alive())
        .map(|e| {
            let mut e = Arc::unwrap_or_clone(e);
            if e.snapshot_id.is_none() {
                e.snapshot_id = Some(file.added_snapshot_id);
            }
            // Iceberg spec: null sequence numbers are inherited for ADDED entries (and for every
            // entry of a manifest written in the initial sequence, 0).
            let inherit = e.status == ManifestStatus::Added || file.sequence_number == 0;
            if e.sequence_number.is_none() && inherit {
                e.sequence_number = Some(file.sequence_number);
            }
            if e.file_sequence_number.is_none() && inherit {
                e.file_sequence_number = Some(file.sequence_number);
            }
            e
        })
        .collect())
}

/// The partition value of a data file (its first partition field: hours, days or months since the
/// epoch), `None` for a plain table.
pub(crate) fn partition_of(f: &DataFile) -> Option<i32> {
    match f.partition().fields().first() {
        Some(Some(Literal::Primitive(PrimitiveLiteral::Int(v)))) => Some(*v),
        _ => None,
    }
}

/// `f` stored at `location` instead: every other field kept (partition spec 0, the only spec a
/// Varve table has). For a data file copied to a new name before its commit (`commit`).
///
/// Errors: [`ErrorKind::Internal`] when the entry cannot be built (a missing required field).
pub(crate) fn with_location(f: &DataFile, location: String) -> Result<DataFile> {
    let mut b = iceberg::spec::DataFileBuilder::default();
    b.content(f.content_type())
        .file_path(location)
        .file_format(f.file_format())
        .partition(f.partition().clone())
        .partition_spec_id(0)
        .record_count(f.record_count())
        .file_size_in_bytes(f.file_size_in_bytes())
        .column_sizes(f.column_sizes().clone())
        .value_counts(f.value_counts().clone())
        .null_value_counts(f.null_value_counts().clone())
        .nan_value_counts(f.nan_value_counts().clone())
        .lower_bounds(f.lower_bounds().clone())
        .upper_bounds(f.upper_bounds().clone())
        .key_metadata(f.key_metadata().map(|k| k.to_vec()))
        .split_offsets(f.split_offsets().map(|s| s.to_vec()))
        .equality_ids(f.equality_ids())
        .first_row_id(f.first_row_id())
        .referenced_data_file(f.referenced_data_file())
        .content_offset(f.content_offset())
        .content_size_in_bytes(f.content_size_in_bytes());
    if let Some(id) = f.sort_order_id() {
        b.sort_order_id(id);
    }
    b.build().map_err(|e| Error::internal(format!("data file entry: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use iceberg::spec::{DataFileBuilder, DataFileFormat, NestedField, PrimitiveType, Struct, Type};

    /// A manifest of position deletes (as Spark or PyIceberg write them in merge-on-read mode)
    /// is refused with an error naming a delete file, never read as data.
    #[tokio::test]
    async fn delete_files_of_other_engines_are_refused() {
        let schema = Arc::new(
            Schema::builder()
                .with_fields(vec![Arc::new(NestedField::required(
                    1,
                    "x",
                    Type::Primitive(PrimitiveType::Long),
                ))])
                .build()
                .unwrap(),
        );
        let io = FileIO::new_with_memory();
        let out = io.new_output("memory:///deletes.avro").unwrap();
        let mut writer =
            ManifestWriterBuilder::new(out, Some(1), schema, PartitionSpec::unpartition_spec()).build_v2_deletes();
        let file = DataFileBuilder::default()
            .content(DataContentType::PositionDeletes)
            .file_path("file:///lake/ns/t/data/pos-del-1.parquet".into())
            .file_format(DataFileFormat::Parquet)
            .partition(Struct::empty())
            .record_count(3)
            .file_size_in_bytes(100)
            .build()
            .unwrap();
        writer.add_file(file, 2).unwrap();
        let entry = writer.write_manifest_file().await.unwrap();
        let bytes = io.new_input("memory:///deletes.avro").unwrap().read().await.unwrap();
        let err = decode_manifest(&bytes, &entry).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Unsupported);
        assert!(err.message().contains("pos-del-1.parquet"), "{}", err.message());
    }
}
