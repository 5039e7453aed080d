//! Manifests and manifest lists (Iceberg spec, "Manifests" and "Manifest Lists"), encoded to and
//! decoded from bytes. The Avro encoding is the `iceberg` crate's; this module only moves the bytes
//! through memory so that the engine's own object store does all the I/O.

use std::sync::Arc;

use bytes::Bytes;
use iceberg::io::FileIO;
use iceberg::spec::{
    DataFile, FormatVersion, Manifest, ManifestFile, ManifestList, ManifestListWriter, ManifestWriterBuilder,
    PartitionSpec, Schema,
};

use crate::error::Result;

/// Encodes a manifest of newly added data files for `snapshot_id`. `location` is the absolute
/// location the manifest will be stored at; the returned [`ManifestFile`] entry points there.
pub(crate) async fn encode_manifest(
    location: &str,
    snapshot_id: i64,
    sequence_number: i64,
    schema: Arc<Schema>,
    spec: PartitionSpec,
    files: Vec<DataFile>,
) -> Result<(ManifestFile, Bytes)> {
    let io = FileIO::new_with_memory();
    let scratch = format!("memory:///manifest-{}.avro", uuid::Uuid::new_v4());
    let out = io.new_output(&scratch)?;
    let mut writer = ManifestWriterBuilder::new(out, Some(snapshot_id), schema, spec).build_v2_data();
    for f in files {
        writer.add_file(f, sequence_number)?;
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

/// Decodes a manifest and returns its live data files (added or existing, not deleted).
pub(crate) fn decode_manifest(bytes: &[u8]) -> Result<Vec<DataFile>> {
    let manifest = Manifest::parse_avro(bytes)?;
    Ok(manifest
        .entries()
        .iter()
        .filter(|e| e.is_alive())
        .map(|e| e.data_file().clone())
        .collect())
}
