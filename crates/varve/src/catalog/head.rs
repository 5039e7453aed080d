//! The head object: one object per table, `metadata/varve-head.bin`, written after every commit,
//! holding what a reader needs to plan on the table's newest version. A process that has never
//! seen the table learns its state in one round trip (the head, the LIST of metadata versions and
//! the version hint, asked at once) instead of six dependent ones (hint, versions, metadata file,
//! manifest list, manifests, last-value index).
//!
//! # The Iceberg metadata stays the truth
//!
//! `v<N>.metadata.json` is the commit point (module `catalog`), and the head is written after it,
//! so a head can be behind: its writer died between the commit and the head write, or two
//! writers' head writes crossed. A reader uses a head only when it describes the newest version:
//! its version is the highest `v<N>.metadata.json` the LIST found, the metadata it carries has
//! that file's size and (when the store gives e-tags) its e-tag, and the head was stored no
//! earlier than that file (so that a head left by a dropped table of the same name is never
//! taken for the new table's), to the second ([`stored_no_earlier`]). Otherwise (stale, missing,
//! unreadable, damaged, of another format) the reader loads the Iceberg metadata of the version
//! the LIST found, as it does for a table written by an older Varve or by another engine. Plain
//! Iceberg readers (DuckDB, PyIceberg, Spark) never look at it.
//!
//! # Format (version 1)
//!
//! ```text
//! "VARVHEAD"                 8 bytes, magic
//! format version             u32 little-endian, 1
//! header length H            u32 little-endian
//! header                     H bytes of JSON: {"table_uuid", "version", "metadata_e_tag"?,
//!                            "sections": [{"kind",
//!                            "location", "bytes", "object_bytes"?}]}
//! sections                   the bytes of each section, in the header's order, and nothing after
//! CRC-32                     u32 little-endian (IEEE), of every byte before it
//! ```
//!
//! Sections (the first four are the exact bytes of the object at `location`, so the reader
//! decodes them as it would the object, and hands them to the block cache):
//! - `metadata`: `v<N>.metadata.json`;
//! - `manifest-list`: the current snapshot's manifest list;
//! - `manifest`: each manifest it names, all or none ([`MAX_MANIFEST_BYTES`] in total);
//! - `last-value-index`: the snapshot's last-value index (`format::last_value_ref`), when at most
//!   [`MAX_INDEX_BYTES`]; larger ones are named by the snapshot summary, as always;
//! - `footer`: the footer (with its page indexes when the process read or wrote them) of a live
//!   data file (`location`; its size is `object_bytes`), written alone as Parquet writes metadata
//!   (`ParquetMetaDataWriter`): first the files the commit added, then the table's other live
//!   files by data sequence number, newest first, for the files whose footers the committing
//!   process holds, up to [`MAX_FOOTER_BYTES`] in all. A
//!   reader hands them to the query scans' footer cache, so that a query of recent rows reads
//!   only data after the head.
//!
//! The head is written best effort: a failed head write never fails a commit (readers then fall
//! back as above; the failure is logged as a warning).

use std::sync::Arc;

use bytes::{Buf, BufMut, Bytes, BytesMut};
use datafusion::execution::cache::cache_manager::FileMetadataCache;
use iceberg::spec::{DataFile, ManifestFile, TableMetadata};
use object_store::path::Path;
use serde::{Deserialize, Serialize};

use super::{LoadedTable, MetadataCache, TableIdent};
use crate::error::{Error, Result};
use crate::format::last_value_ref::{self, IndexRef};
use crate::format::manifest;
use crate::storage::Storage;

/// The head object's name in a table's `metadata/` folder.
pub(crate) const HEAD_FILE: &str = "varve-head.bin";
const MAGIC: &[u8; 8] = b"VARVHEAD";
/// The format this module writes; a head of any other is ignored.
const FORMAT: u32 = 1;
/// Manifests are carried while their sizes add up to at most this: a table's planning reads at
/// most `MANIFEST_MERGE_COUNT` manifests, a few KiB to a few MiB, so the head stays one small GET.
pub(crate) const MAX_MANIFEST_BYTES: u64 = 4 << 20;
/// A last-value index is carried when at most this size (about 100,000 series of a few columns).
pub(crate) const MAX_INDEX_BYTES: u64 = 2 << 20;
/// Footers (with page indexes) of the newest data files are carried while they add up to at most
/// this: a query of recent rows then opens its files without a footer read.
pub(crate) const MAX_FOOTER_BYTES: u64 = 1 << 20;

/// What a section holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
enum Kind {
    /// `v<N>.metadata.json`.
    Metadata,
    /// The current snapshot's manifest list.
    ManifestList,
    /// A manifest of that list.
    Manifest,
    /// The current snapshot's last-value index.
    LastValueIndex,
    /// The footer of a data file, with its page indexes, as Parquet writes metadata alone
    /// (`ParquetMetaDataWriter`; `location` names the data file, `object_bytes` its size).
    Footer,
}

#[derive(Debug, Serialize, Deserialize)]
struct Section {
    kind: Kind,
    /// The absolute location of the object whose bytes these are.
    location: String,
    bytes: u64,
    /// For a footer: the size of the data file, bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    object_bytes: Option<u64>,
}

#[derive(Debug, Serialize, Deserialize)]
struct Header {
    table_uuid: String,
    version: u64,
    /// The e-tag the store gave `v<version>.metadata.json` when it was written, if it gave one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    metadata_e_tag: Option<String>,
    sections: Vec<Section>,
}

/// A decoded head object.
#[derive(Debug)]
pub(crate) struct Head {
    /// The metadata version it describes.
    pub(crate) version: u64,
    metadata_e_tag: Option<String>,
    sections: Vec<(Section, Bytes)>,
}

impl Head {
    /// The size of the metadata file it carries, bytes.
    fn metadata_bytes(&self) -> Option<u64> {
        self.sections
            .iter()
            .find(|(s, _)| s.kind == Kind::Metadata)
            .map(|(s, _)| s.bytes)
    }
}

/// The path of `ident`'s head object.
pub(crate) fn path(ident: &TableIdent) -> Path {
    ident.metadata_dir().join(HEAD_FILE)
}

fn encode(header: &Header, bodies: &[Bytes]) -> Result<Bytes> {
    let json = serde_json::to_vec(header).map_err(|e| Error::corrupt(format!("head object header: {e}")))?;
    let total: usize = bodies.iter().map(Bytes::len).sum();
    let mut out = BytesMut::with_capacity(20 + json.len() + total);
    out.put_slice(MAGIC);
    out.put_u32_le(FORMAT);
    out.put_u32_le(json.len() as u32);
    out.put_slice(&json);
    for b in bodies {
        out.put_slice(b);
    }
    let crc = crc32fast::hash(&out);
    out.put_u32_le(crc);
    Ok(out.freeze())
}

/// Decodes a head object; `None` when it is damaged or of another format (then it is ignored).
fn decode(raw: &Bytes) -> Option<Head> {
    if raw.len() < 20 || &raw[..8] != MAGIC {
        return None;
    }
    let (body, crc) = raw.split_at(raw.len() - 4);
    if crc32fast::hash(body) != u32::from_le_bytes(crc.try_into().ok()?) {
        return None;
    }
    let mut cur = &body[8..];
    if cur.get_u32_le() != FORMAT {
        return None;
    }
    let n = cur.get_u32_le() as usize;
    let header: Header = serde_json::from_slice(cur.get(..n)?).ok()?;
    let mut at = 16 + n;
    let mut sections = Vec::with_capacity(header.sections.len());
    for s in header.sections {
        let end = at.checked_add(usize::try_from(s.bytes).ok()?)?;
        if end > body.len() {
            return None;
        }
        let bytes = raw.slice(at..end);
        at = end;
        sections.push((s, bytes));
    }
    if at != body.len() {
        return None;
    }
    Some(Head {
        version: header.version,
        metadata_e_tag: header.metadata_e_tag,
        sections,
    })
}

/// A data file's footer (with page indexes) that a head may carry: its location, its object's
/// size (bytes) and the decoded footer.
pub(crate) type CarriedFooter = (String, u64, Arc<parquet::file::metadata::ParquetMetaData>);

/// The footers a head may carry ([`write`]): those of the data files the commit added, taken
/// when the commit was made (the head write may run later), then those of the table's other live
/// files, newest first, that the process's footer cache `held` holds when the head is written
/// (footers it read, or that the head it loaded carried: so a head passes its footers on).
#[derive(Clone, Default)]
pub(crate) struct Footers {
    pub(crate) added: Vec<CarriedFooter>,
    pub(crate) held: Option<Arc<dyn FileMetadataCache>>,
}

/// The [`Footers`] of a commit that added `added`, from this process's `cache` (it holds the
/// footers of the files it wrote).
///
/// Errors: a file path outside the lake.
pub(crate) fn footers_of(storage: &Storage, cache: &MetadataCache, added: &[DataFile]) -> Result<Footers> {
    let mut out = Vec::new();
    for f in added {
        let size = f.file_size_in_bytes();
        if let Some(footer) = cache.footer(&storage.path_of(f.file_path())?, size) {
            out.push((f.file_path().to_string(), size, footer));
        }
    }
    Ok(Footers {
        added: out,
        held: Some(cache.footers.clone()),
    })
}

/// Writes the head of `ident` at `version`, whose metadata is `metadata` (as stored: `json`, with
/// the e-tag the store gave it), after that version was committed; `footers` ([`footers_of`]) are
/// carried newest first up to [`MAX_FOOTER_BYTES`]. The manifests and the index are read through
/// the block cache, which holds them when this process wrote or read them. Best effort: a failure is logged, and
/// readers fall back to the Iceberg metadata (module docs).
pub(crate) async fn write(
    storage: &Storage,
    ident: &TableIdent,
    version: u64,
    stored: (&TableMetadata, &Bytes, Option<&str>),
    footers: &Footers,
) {
    if let Err(e) = try_write(storage, ident, version, stored, footers).await {
        tracing::warn!(table = %ident, version, "head object not written (readers load the metadata instead): {e}");
    }
}

async fn try_write(
    storage: &Storage,
    ident: &TableIdent,
    version: u64,
    (metadata, json, e_tag): (&TableMetadata, &Bytes, Option<&str>),
    footers: &Footers,
) -> Result<()> {
    let mut sections = vec![Section {
        kind: Kind::Metadata,
        location: storage.location(&ident.metadata_file(version)),
        bytes: json.len() as u64,
        object_bytes: None,
    }];
    let mut bodies = vec![json.clone()];
    if let Some(snapshot) = metadata.current_snapshot() {
        let list_location = snapshot.manifest_list();
        let list = storage.get(&storage.path_of(list_location)?).await?;
        let manifests = manifest::decode_manifest_list(&list)?;
        sections.push(Section {
            kind: Kind::ManifestList,
            location: list_location.to_string(),
            bytes: list.len() as u64,
            object_bytes: None,
        });
        bodies.push(list);
        // The live data files (data sequence number, path, bytes), when the manifests are read.
        let mut live: Vec<(i64, String, u64)> = Vec::new();
        let total: u64 = manifests.iter().map(|m| m.manifest_length.max(0) as u64).sum();
        if total <= MAX_MANIFEST_BYTES {
            let reads = manifests.iter().map(|m| async move {
                let bytes = storage.get(&storage.path_of(&m.manifest_path)?).await?;
                Ok::<_, Error>((m.manifest_path.clone(), bytes))
            });
            for (location, bytes) in futures::future::try_join_all(reads).await? {
                if footers.held.is_some() {
                    if let Some(file) = manifests.iter().find(|m| m.manifest_path == location) {
                        for e in manifest::decode_manifest(&bytes, file).unwrap_or_default() {
                            if e.is_alive() {
                                let f = &e.data_file;
                                live.push((
                                    e.sequence_number().unwrap_or(0),
                                    f.file_path().to_string(),
                                    f.file_size_in_bytes(),
                                ));
                            }
                        }
                    }
                }
                sections.push(Section {
                    kind: Kind::Manifest,
                    location,
                    bytes: bytes.len() as u64,
                    object_bytes: None,
                });
                bodies.push(bytes);
            }
        }
        if let Some(ix) = IndexRef::of(snapshot).filter(|ix| ix.bytes <= MAX_INDEX_BYTES) {
            let bytes = storage.get(&storage.path_of(&ix.location)?).await?;
            sections.push(Section {
                kind: Kind::LastValueIndex,
                location: ix.location.clone(),
                bytes: bytes.len() as u64,
                object_bytes: None,
            });
            bodies.push(bytes);
        }
        // Footers of the data files the commit added, when this process holds them (it wrote
        // them): the newest files, which queries of recent rows read; then those of the other
        // live files it holds, newest first, looked up one at a time until the bound.
        live.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
        let held = live
            .into_iter()
            .filter(|(_, l, _)| !footers.added.iter().any(|(a, _, _)| a == l));
        let mut held = held.filter_map(|(_, location, size)| {
            let cache = footers.held.as_ref()?;
            let footer = super::cache::footer_in(cache.as_ref(), &storage.path_of(&location).ok()?, size)?;
            Some((location, size, footer))
        });
        let mut added = footers.added.iter().cloned();
        let mut footer_bytes = 0u64;
        while let Some((location, object_bytes, footer)) = added.next().or_else(|| held.next()) {
            let mut buf = Vec::new();
            parquet::file::metadata::ParquetMetaDataWriter::new(&mut buf, &footer).finish()?;
            if footer_bytes + buf.len() as u64 > MAX_FOOTER_BYTES {
                break;
            }
            footer_bytes += buf.len() as u64;
            sections.push(Section {
                kind: Kind::Footer,
                location,
                bytes: buf.len() as u64,
                object_bytes: Some(object_bytes),
            });
            bodies.push(Bytes::from(buf));
        }
    }
    let header = Header {
        table_uuid: metadata.uuid().to_string(),
        version,
        metadata_e_tag: e_tag.map(str::to_string),
        sections,
    };
    storage.put(&path(ident), encode(&header, &bodies)?).await
}

/// What one round trip tells of a table: its newest metadata version (from a LIST of its metadata
/// folder), the version hint, and the head object, asked at once.
#[derive(Debug)]
pub(crate) struct Probe {
    /// The highest `v<N>.metadata.json` and its size, bytes; `None` when the table does not exist.
    pub(crate) newest: Option<(u64, u64)>,
    /// The version the hint names.
    pub(crate) hint: Option<u64>,
    /// The head, when it describes the newest version (module docs).
    pub(crate) head: Option<Head>,
}

/// Asks for the head, the metadata versions and the hint of `ident` at once.
///
/// Errors: storage errors of any of the three requests.
pub(crate) async fn probe(storage: &Storage, ident: &TableIdent) -> Result<Probe> {
    let dir = ident.metadata_dir();
    // `v<N>.metadata.json`, `varve-head.bin` and `version-hint.text` sort after `v`; manifests
    // (`<uuid>-m<k>.avro`, `snap-*.avro`) and indexes (`last-value-*`) before it.
    let offset = Path::from(format!("{dir}/v"));
    let (head_path, hint_path) = (path(ident), ident.version_hint());
    let (listed, head, hint) = futures::join!(
        storage.list_after(&dir, &offset),
        storage.get_with_meta(&head_path),
        storage.get_opt(&hint_path),
    );
    let newest = listed?
        .into_iter()
        .filter_map(|o| Some((super::parse_version(o.location.filename()?)?, o)))
        .max_by_key(|(v, _)| *v);
    // The head and the hint are hints: one that cannot be read is as good as none.
    let hint = match hint {
        Ok(b) => b.and_then(|b| String::from_utf8_lossy(&b).trim().trim_start_matches('v').parse().ok()),
        Err(e) => {
            tracing::warn!(table = %ident, "version hint not read: {e}");
            None
        }
    };
    let head = match head {
        Ok(h) => h,
        Err(e) => {
            tracing::warn!(table = %ident, "head object not read (loading the metadata instead): {e}");
            None
        }
    };
    let head = head.and_then(|(raw, stored)| {
        let (v, listed) = newest.as_ref()?;
        let h = decode(&raw)?;
        // The same file, when both e-tags are known (a table dropped and made again can reach
        // the same version with metadata of the same size).
        let same_file = match (&h.metadata_e_tag, &listed.e_tag) {
            (Some(a), Some(b)) => a == b,
            _ => true,
        };
        let fresh = h.version == *v
            && h.metadata_bytes() == Some(listed.size)
            && stored_no_earlier(stored.last_modified, listed.last_modified)
            && same_file;
        fresh.then_some(h)
    });
    Ok(Probe {
        newest: newest.map(|(v, o)| (v, o.size)),
        hint,
        head,
    })
}

/// Whether an object whose GET said it was stored at `stored` was stored no earlier than one a
/// LIST said was stored at `listed`, to the second.
///
/// A GET's time is the `Last-Modified` header, an HTTP-date of whole seconds (RFC 9110, 5.6.7),
/// while a LIST may give milliseconds (s3s-fs does; AWS S3 gives whole seconds there too): a head
/// written in the same second as its metadata file would read as older than it, and every first
/// read would ignore a fresh head. So `listed` is cut to its second first.
fn stored_no_earlier(stored: chrono::DateTime<chrono::Utc>, listed: chrono::DateTime<chrono::Utc>) -> bool {
    use chrono::SubsecRound;
    stored >= listed.trunc_subsecs(0)
}

/// Loads `ident` at the head's version from the head alone: the metadata is decoded and kept in
/// `cache` (with the manifest list, the manifests and the last-value index), and their bytes go
/// to the block cache.
///
/// Errors: [`crate::ErrorKind::Corruption`] when a section cannot be decoded (the caller then
/// loads the Iceberg metadata instead).
pub(crate) fn install(storage: &Storage, cache: &MetadataCache, ident: &TableIdent, head: Head) -> Result<LoadedTable> {
    let mut loaded = None;
    let mut lists: Vec<ManifestFile> = Vec::new();
    for (s, bytes) in &head.sections {
        match s.kind {
            Kind::Metadata => {
                let path = ident.metadata_file(head.version);
                let (metadata, refs) = super::parse_metadata(&path, bytes)?;
                cache.put_metadata(path.as_ref(), metadata.clone(), refs.clone(), bytes.len());
                loaded = Some(LoadedTable {
                    ident: ident.clone(),
                    version: head.version,
                    metadata,
                    refs,
                    unchecked: false,
                });
            }
            Kind::ManifestList => {
                let list = manifest::decode_manifest_list(bytes)
                    .map_err(|e| e.context(format!("head object: manifest list {}", s.location)))?;
                lists.extend(list.iter().cloned());
                cache.put_manifest_list(&s.location, Arc::new(list), bytes.len());
                storage.keep_object(&storage.path_of(&s.location)?, bytes);
            }
            Kind::Manifest => {
                let file = lists
                    .iter()
                    .find(|m| m.manifest_path == s.location)
                    .ok_or_else(|| Error::corrupt(format!("head object: manifest {} is not listed", s.location)))?;
                let entries = manifest::decode_manifest(bytes, file)
                    .map_err(|e| e.context(format!("head object: manifest {}", s.location)))?;
                cache.put_manifest(&s.location, Arc::new(entries), bytes.len());
                storage.keep_object(&storage.path_of(&s.location)?, bytes);
            }
            Kind::Footer => {
                let size = s
                    .object_bytes
                    .ok_or_else(|| Error::corrupt(format!("head object: footer of {} without a size", s.location)))?;
                let footer = parquet::file::metadata::ParquetMetaDataReader::new()
                    .with_page_index_policy(parquet::file::metadata::PageIndexPolicy::Optional)
                    .parse_and_finish(bytes)
                    .map_err(|e| Error::corrupt(format!("head object: footer of {}: {e}", s.location)))?;
                cache.keep_footer(&storage.path_of(&s.location)?, size, Arc::new(footer));
            }
            Kind::LastValueIndex => {
                let rows = last_value_ref::decode(&s.location, bytes.clone())?;
                cache.put_last_values(&s.location, rows);
                storage.keep_object(&storage.path_of(&s.location)?, bytes);
            }
        }
    }
    loaded.ok_or_else(|| Error::corrupt(format!("head object of {ident}: no metadata section")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_head_stored_in_the_second_of_its_metadata_is_not_older() {
        let t = |s: &str| chrono::DateTime::parse_from_rfc3339(s).unwrap().to_utc();
        // The GET's HTTP-date (whole seconds) of a head written 200 ms after the metadata file.
        assert!(stored_no_earlier(
            t("2026-12-07T08:24:19Z"),
            t("2026-12-07T08:24:19.771Z")
        ));
        assert!(stored_no_earlier(
            t("2026-12-07T08:24:20Z"),
            t("2026-12-07T08:24:19.771Z")
        ));
        // A head from a second before the metadata file (a dropped table's) is older.
        assert!(!stored_no_earlier(
            t("2026-12-07T08:24:18Z"),
            t("2026-12-07T08:24:19.001Z")
        ));
    }

    #[test]
    fn heads_round_trip_and_damage_is_refused() {
        let header = Header {
            table_uuid: "u".into(),
            version: 7,
            metadata_e_tag: None,
            sections: vec![
                Section {
                    kind: Kind::Metadata,
                    location: "a".into(),
                    bytes: 3,
                    object_bytes: None,
                },
                Section {
                    kind: Kind::Manifest,
                    location: "b".into(),
                    bytes: 2,
                    object_bytes: None,
                },
            ],
        };
        let raw = encode(&header, &[Bytes::from_static(b"abc"), Bytes::from_static(b"de")]).unwrap();
        let head = decode(&raw).unwrap();
        assert_eq!(head.version, 7);
        assert_eq!(head.metadata_bytes(), Some(3));
        assert_eq!(&head.sections[1].1[..], b"de");
        for i in [0, 9, 20, raw.len() - 1] {
            let mut bad = raw.to_vec();
            bad[i] ^= 1;
            assert!(decode(&Bytes::from(bad)).is_none(), "damage at byte {i} is noticed");
        }
        assert!(decode(&raw.slice(..raw.len() - 1)).is_none());
    }
}
