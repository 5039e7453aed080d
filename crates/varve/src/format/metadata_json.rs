//! The table metadata file as JSON (Iceberg spec, "Table Metadata" and "Table Metadata Fields"):
//! writing `v<N>.metadata.json` and reading the snapshot references (branches and tags) out of it.
//!
//! iceberg-rust's serializer converts a deep copy of the whole metadata (every snapshot and its
//! summary) before writing, so a commit's cost grew with the table's history: 1,000 snapshots
//! made serializing the largest part of a small append's commit. [`to_json`] writes the same JSON
//! from borrowed fields instead, each snapshot's JSON encoded once and kept
//! ([`SnapshotJsonCache`]: snapshots never change), so a commit's cost is about a copy of the
//! file's bytes. The snapshot
//! references are private in iceberg-rust's `TableMetadata`, so Varve keeps them beside it
//! ([`Refs`]): read from the JSON when a metadata file is loaded ([`read_refs`]) and carried
//! forward by each commit (`commit::snapshot`). When they disagree with the metadata, or the table
//! is not format version 2, the writer falls back to iceberg-rust's serializer.

use std::collections::HashMap;
use std::sync::Arc;

use iceberg::spec::{
    FormatVersion, MetadataLog, PartitionSpec, PartitionStatisticsFile, Schema, Snapshot, SnapshotLog,
    SnapshotReference, SnapshotRetention, SortOrder, StatisticsFile, Summary, TableMetadata, MAIN_BRANCH,
};
use serde::{Deserialize, Serialize};

use crate::error::Result;

/// A table's snapshot references by name (Iceberg spec, "Snapshot References"): `main` and any
/// branches and tags.
pub(crate) type Refs = HashMap<String, SnapshotReference>;

/// The fields of a v2 metadata file, in the order iceberg-rust writes them, borrowed.
#[derive(Serialize)]
#[serde(rename_all = "kebab-case")]
struct MetadataV2<'a> {
    format_version: u8,
    table_uuid: uuid::Uuid,
    location: &'a str,
    last_sequence_number: i64,
    last_updated_ms: i64,
    last_column_id: i32,
    schemas: Vec<&'a Schema>,
    current_schema_id: i32,
    partition_specs: Vec<&'a PartitionSpec>,
    default_spec_id: i32,
    last_partition_id: i32,
    #[serde(skip_serializing_if = "Option::is_none")]
    properties: Option<&'a HashMap<String, String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    current_snapshot_id: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    snapshot_log: Option<&'a [SnapshotLog]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    metadata_log: Option<&'a [MetadataLog]>,
    sort_orders: Vec<&'a SortOrder>,
    default_sort_order_id: i64,
    refs: &'a Refs,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    statistics: Vec<&'a StatisticsFile>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    partition_statistics: Vec<&'a PartitionStatisticsFile>,
}

/// A v2 snapshot (Iceberg spec, "Snapshots"), borrowed.
#[derive(Serialize)]
#[serde(rename_all = "kebab-case")]
struct SnapshotV2<'a> {
    snapshot_id: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    parent_snapshot_id: Option<i64>,
    sequence_number: i64,
    timestamp_ms: i64,
    manifest_list: &'a str,
    summary: &'a Summary,
    #[serde(skip_serializing_if = "Option::is_none")]
    schema_id: Option<i32>,
}

/// The JSON of snapshots by manifest list location (unique to a snapshot), bounded by bytes:
/// when it would hold more, it is emptied (the next write encodes every snapshot once again).
/// One lock is taken per metadata file written, not one per snapshot.
#[derive(Debug)]
pub(crate) struct SnapshotJsonCache {
    max_bytes: usize,
    entries: std::sync::Mutex<(HashMap<String, Arc<str>>, usize)>,
}

impl SnapshotJsonCache {
    /// A cache holding up to `bytes` of snapshot JSON.
    pub(crate) fn new(bytes: u64) -> Self {
        SnapshotJsonCache {
            max_bytes: bytes as usize,
            entries: std::sync::Mutex::new((HashMap::new(), 0)),
        }
    }

    /// The JSON of each of `list`, in order.
    fn fragments(&self, list: &[&Arc<Snapshot>]) -> Result<Vec<Arc<str>>> {
        let mut guard = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        let (map, bytes) = &mut *guard;
        let mut out = Vec::with_capacity(list.len());
        for s in list {
            if let Some(hit) = map.get(s.manifest_list()) {
                out.push(hit.clone());
                continue;
            }
            let json: Arc<str> = serde_json::to_string(&SnapshotV2 {
                snapshot_id: s.snapshot_id(),
                parent_snapshot_id: s.parent_snapshot_id(),
                sequence_number: s.sequence_number(),
                timestamp_ms: s.timestamp_ms(),
                manifest_list: s.manifest_list(),
                summary: s.summary(),
                schema_id: s.schema_id(),
            })?
            .into();
            let size = json.len() + s.manifest_list().len();
            if *bytes + size > self.max_bytes {
                map.clear();
                *bytes = 0;
            }
            *bytes += size;
            map.insert(s.manifest_list().to_string(), json.clone());
            out.push(json);
        }
        Ok(out)
    }
}

/// `metadata` as the JSON of a metadata file (compact), with `refs` as its snapshot references.
/// Snapshots are written oldest first, their JSON taken from `snapshots` when it has it.
///
/// Errors: JSON encoding errors (none for valid metadata).
pub(crate) fn to_json(metadata: &TableMetadata, refs: &Refs, snapshots: &SnapshotJsonCache) -> Result<Vec<u8>> {
    if metadata.format_version() != FormatVersion::V2 || !refs_agree(metadata, refs) {
        tracing::debug!("table metadata written by iceberg's serializer");
        return Ok(serde_json::to_vec(metadata)?);
    }
    let mut list: Vec<_> = metadata.snapshots().collect();
    list.sort_by_key(|s| (s.sequence_number(), s.timestamp_ms(), s.snapshot_id()));
    let doc = MetadataV2 {
        format_version: 2,
        table_uuid: metadata.uuid(),
        location: metadata.location(),
        last_sequence_number: metadata.last_sequence_number(),
        last_updated_ms: metadata.last_updated_ms(),
        last_column_id: metadata.last_column_id(),
        schemas: metadata.schemas_iter().map(|s| s.as_ref()).collect(),
        current_schema_id: metadata.current_schema_id(),
        partition_specs: metadata.partition_specs_iter().map(|s| s.as_ref()).collect(),
        default_spec_id: metadata.default_partition_spec_id(),
        last_partition_id: metadata.last_partition_id(),
        properties: Some(metadata.properties()).filter(|p| !p.is_empty()),
        current_snapshot_id: metadata.current_snapshot_id(),
        snapshot_log: Some(metadata.history()).filter(|l| !l.is_empty()),
        metadata_log: Some(metadata.metadata_log()).filter(|l| !l.is_empty()),
        sort_orders: metadata.sort_orders_iter().map(|s| s.as_ref()).collect(),
        default_sort_order_id: metadata.default_sort_order_id(),
        refs,
        statistics: metadata.statistics_iter().collect(),
        partition_statistics: metadata.partition_statistics_iter().collect(),
    };
    let mut out = serde_json::to_vec(&doc)?;
    if !list.is_empty() {
        // `{...}` becomes `{...,"snapshots":[...]}`.
        let fragments = snapshots.fragments(&list)?;
        let len: usize = fragments.iter().map(|f| f.len() + 1).sum();
        out.pop();
        out.reserve(len + 16);
        out.extend_from_slice(b",\"snapshots\":[");
        for (i, f) in fragments.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            out.extend_from_slice(f.as_bytes());
        }
        out.extend_from_slice(b"]}");
    }
    Ok(out)
}

/// Whether `refs` can be the references of `metadata`: each names a snapshot the metadata holds,
/// as the metadata resolves that name, and `main` is the current snapshot.
fn refs_agree(metadata: &TableMetadata, refs: &Refs) -> bool {
    let each = refs
        .iter()
        .all(|(name, r)| metadata.snapshot_for_ref(name).map(|s| s.snapshot_id()) == Some(r.snapshot_id));
    let main = refs.get(MAIN_BRANCH).map(|r| r.snapshot_id) == metadata.current_snapshot_id();
    each && main
}

/// The snapshot references of a metadata file's JSON. A file without `refs` has `main` at its
/// current snapshot, as iceberg-rust reads it (Iceberg spec: "if refs is missing, main is the
/// current-snapshot-id").
///
/// Errors: JSON that is not an object with valid references.
pub(crate) fn read_refs(json: &[u8]) -> std::result::Result<Refs, serde_json::Error> {
    #[derive(Deserialize)]
    #[serde(rename_all = "kebab-case")]
    struct OnlyRefs {
        #[serde(default)]
        refs: Option<Refs>,
        #[serde(default)]
        current_snapshot_id: Option<i64>,
    }
    let r: OnlyRefs = serde_json::from_slice(json)?;
    Ok(match r.refs {
        Some(refs) => refs,
        None => match r.current_snapshot_id.filter(|id| *id != -1) {
            Some(id) => HashMap::from([(MAIN_BRANCH.to_string(), main_branch(id))]),
            None => HashMap::new(),
        },
    })
}

/// The `main` branch at `snapshot_id`, with no retention settings of its own.
pub(crate) fn main_branch(snapshot_id: i64) -> SnapshotReference {
    SnapshotReference::new(snapshot_id, SnapshotRetention::branch(None, None, None))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use iceberg::spec::{
        NestedField, Operation, PrimitiveType, Snapshot, TableMetadataBuilder, Type, UnboundPartitionSpec,
    };

    use super::*;

    fn schema(id: i32, extra: bool) -> Schema {
        let mut fields = vec![
            Arc::new(NestedField::required(
                1,
                "ts",
                Type::Primitive(PrimitiveType::Timestamptz),
            )),
            Arc::new(NestedField::optional(2, "host", Type::Primitive(PrimitiveType::String))),
        ];
        if extra {
            fields.push(Arc::new(NestedField::optional(
                3,
                "v",
                Type::Primitive(PrimitiveType::Double),
            )));
        }
        Schema::builder()
            .with_schema_id(id)
            .with_fields(fields)
            .build()
            .unwrap()
    }

    /// A table with a history: schemas, properties, 40 snapshots (one of them tagged), an expiry.
    fn table() -> (TableMetadata, Refs) {
        let props = HashMap::from([("varve.time-column".to_string(), "ts".to_string())]);
        let mut md = TableMetadataBuilder::new(
            schema(0, false),
            UnboundPartitionSpec::builder().build(),
            SortOrder::unsorted_order(),
            "file:///lake/ns/t".to_string(),
            FormatVersion::V2,
            props,
        )
        .unwrap()
        .build()
        .unwrap()
        .metadata;
        let mut refs = read_refs(&serde_json::to_vec(&md).unwrap()).unwrap();
        let mut parent = None;
        // Snapshot times may not be before the metadata's last update (now).
        let start = chrono::Utc::now().timestamp_millis() + 600_000;
        let mut ids = vec![];
        for i in 0..40i64 {
            let id = 1000 + i * 7;
            let mut b = TableMetadataBuilder::new_from_metadata(md.clone(), Some(format!("v{}", i + 1)));
            if i == 10 {
                b = b.add_current_schema(schema(1, true)).unwrap();
            }
            let summary = Summary {
                operation: if i % 5 == 4 {
                    Operation::Replace
                } else {
                    Operation::Append
                },
                additional_properties: HashMap::from([
                    ("added-records".to_string(), (i * 10).to_string()),
                    ("varve.note".to_string(), format!("note \"{i}\"\n")),
                ]),
            };
            let snap = Snapshot::builder()
                .with_snapshot_id(id)
                .with_parent_snapshot_id(parent)
                .with_sequence_number(i + 1)
                .with_timestamp_ms(start + i * 1000)
                .with_manifest_list(format!("file:///lake/ns/t/metadata/snap-{id}.avro"))
                .with_summary(summary)
                .with_schema_id(if i >= 10 { 1 } else { 0 })
                .build();
            b = b
                .add_snapshot(snap)
                .unwrap()
                .set_ref(MAIN_BRANCH, main_branch(id))
                .unwrap();
            refs.insert(MAIN_BRANCH.into(), main_branch(id));
            if i == 20 {
                let tag = SnapshotReference::new(
                    id,
                    SnapshotRetention::Tag {
                        max_ref_age_ms: Some(86_400_000),
                    },
                );
                b = b.set_ref("release", tag.clone()).unwrap();
                refs.insert("release".into(), tag);
            }
            if i == 30 {
                b = b
                    .set_properties(HashMap::from([("k".to_string(), "v \u{e9}".to_string())]))
                    .unwrap();
                let gone: Vec<i64> = ids[..5].to_vec();
                b = b.remove_snapshots(&gone);
            }
            md = b.build().unwrap().metadata;
            parent = Some(id);
            ids.push(id);
        }
        (md, refs)
    }

    fn sorted_snapshots(mut v: serde_json::Value) -> serde_json::Value {
        if let Some(serde_json::Value::Array(s)) = v.get_mut("snapshots") {
            s.sort_by_key(|x| x["snapshot-id"].as_i64());
        }
        v
    }

    #[test]
    fn writes_what_iceberg_writes() {
        let (md, refs) = table();
        assert!(refs_agree(&md, &refs));
        let ours: serde_json::Value =
            serde_json::from_slice(&to_json(&md, &refs, &SnapshotJsonCache::new(1 << 20)).unwrap()).unwrap();
        let theirs = serde_json::to_value(&md).unwrap();
        assert_eq!(sorted_snapshots(ours), sorted_snapshots(theirs));
        // ... and iceberg reads it back as the same metadata, with the same references.
        let cache = SnapshotJsonCache::new(1 << 20);
        let json = to_json(&md, &refs, &cache).unwrap();
        assert_eq!(
            to_json(&md, &refs, &cache).unwrap(),
            json,
            "the same from cached snapshots"
        );
        let tiny = SnapshotJsonCache::new(2000);
        assert_eq!(
            to_json(&md, &refs, &tiny).unwrap(),
            json,
            "from a cache that empties itself"
        );
        assert_eq!(to_json(&md, &refs, &tiny).unwrap(), json);
        let back: TableMetadata = serde_json::from_slice(&json).unwrap();
        assert_eq!(back, md);
        assert_eq!(read_refs(&json).unwrap(), refs);
        assert_eq!(read_refs(&serde_json::to_vec(&md).unwrap()).unwrap(), refs);
    }

    #[test]
    fn references_that_disagree_fall_back_to_iceberg() {
        let (md, mut refs) = table();
        refs.remove("release");
        // Missing a tag cannot be seen here (names are private), but a wrong main can:
        refs.insert(MAIN_BRANCH.into(), main_branch(1000 + 7 * 20));
        assert!(!refs_agree(&md, &refs));
        let json = to_json(&md, &refs, &SnapshotJsonCache::new(1 << 20)).unwrap();
        assert_eq!(json, serde_json::to_vec(&md).unwrap());
    }

    #[test]
    fn a_file_without_refs_has_main_at_its_current_snapshot() {
        let refs = read_refs(br#"{"current-snapshot-id": 5, "x": [1, 2]}"#).unwrap();
        assert_eq!(refs, HashMap::from([(MAIN_BRANCH.to_string(), main_branch(5))]));
        assert!(read_refs(br#"{"current-snapshot-id": -1}"#).unwrap().is_empty());
        assert!(read_refs(b"{}").unwrap().is_empty());
    }
}
