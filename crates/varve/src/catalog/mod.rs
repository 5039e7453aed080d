//! Catalog: namespaces and tables kept in the lake's own storage, with no catalog service.
//!
//! A table lives at `<lake>/<namespace>/<table>/`; its current state is the highest
//! `metadata/v<N>.metadata.json`, which only a successful put-if-absent can create (Iceberg spec,
//! "File System Tables"). `metadata/version-hint.text` holds `N` for readers such as DuckDB; it is
//! a hint: the catalog checks for newer versions after reading it. This module loads, creates,
//! lists and drops tables and reads the live data files of a snapshot. It does not write data.

use std::collections::HashMap;
use std::fmt;
use std::str::FromStr;
use std::sync::{Arc, LazyLock, Mutex};

use bytes::Bytes;
use iceberg::spec::{
    DataFile, FormatVersion, ManifestEntry, NullOrder, SortDirection, SortField, SortOrder, TableMetadata,
    TableMetadataBuilder, Transform, UnboundPartitionSpec,
};
use object_store::path::Path;

mod cache;
pub(crate) mod head;

pub(crate) use cache::{footer_in, DecodedFile, MetadataCache, FOOTER_BYTES};

use crate::error::{Error, ErrorKind, Result};
use crate::format::metadata_json::{self, Refs};
use crate::format::{manifest, schema, TableContract};
use crate::storage::Storage;

/// The namespace used when a table name has none.
pub const DEFAULT_NAMESPACE: &str = "default";

/// A table's name: `namespace.table`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TableIdent {
    /// The namespace, e.g. `default`.
    pub namespace: String,
    /// The table's name inside its namespace.
    pub name: String,
}

impl TableIdent {
    /// Parses `table` or `namespace.table`. Names are letters, digits, `_` and `-`, and start with a
    /// letter or `_`.
    ///
    /// Errors: [`ErrorKind::InvalidInput`] for an empty or malformed name.
    pub fn parse(s: &str) -> Result<Self> {
        let s = s.trim();
        let (ns, name) = match s.split_once('.') {
            Some((ns, name)) => (ns, name),
            None => (DEFAULT_NAMESPACE, s),
        };
        for part in [ns, name] {
            let ok = !part.is_empty()
                && part.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
                && !part.starts_with(|c: char| c.is_ascii_digit() || c == '-');
            if !ok {
                return Err(Error::invalid(format!(
                    "table name {s:?}: use namespace.table with letters, digits, _ and - (e.g. default.trades)"
                )));
            }
        }
        Ok(TableIdent {
            namespace: ns.to_string(),
            name: name.to_string(),
        })
    }

    pub(crate) fn prefix(&self) -> Path {
        Path::from_iter([self.namespace.as_str(), self.name.as_str()])
    }

    pub(crate) fn metadata_dir(&self) -> Path {
        self.prefix().clone().join("metadata")
    }

    pub(crate) fn metadata_file(&self, version: u64) -> Path {
        self.metadata_dir().clone().join(format!("v{version}.metadata.json"))
    }

    pub(crate) fn version_hint(&self) -> Path {
        self.metadata_dir().clone().join("version-hint.text")
    }
}

impl fmt::Display for TableIdent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.namespace, self.name)
    }
}

impl FromStr for TableIdent {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        TableIdent::parse(s)
    }
}

/// A table's metadata at one version.
#[derive(Debug, Clone)]
pub(crate) struct LoadedTable {
    pub(crate) ident: TableIdent,
    /// `N` of `v<N>.metadata.json`.
    pub(crate) version: u64,
    pub(crate) metadata: Arc<TableMetadata>,
    /// The snapshot references of this version (private in iceberg-rust's metadata; see
    /// [`crate::format::metadata_json`]).
    pub(crate) refs: Arc<Refs>,
    /// Taken from what this process saw, without asking the store whether it is still the newest
    /// ([`load_unchecked`]): a commit on it checks that at once with its uploads.
    pub(crate) unchecked: bool,
}

impl LoadedTable {
    pub(crate) fn contract(&self) -> Result<TableContract> {
        TableContract::from_properties(self.metadata.properties())
    }
}

/// Reads the table's current metadata, always asking the store which version is the newest (as
/// writers must): on first contact in this process through the head object ([`load_first`], one
/// round trip, which also reads the version hint); after it by checking the version this process
/// saw (two HEADs at once, one round trip), reading the hint and following it only when a newer
/// version exists. A hint found behind the newest version is repaired ([`repair_stale_hint`]).
///
/// Errors: [`ErrorKind::NotFound`] when the table does not exist.
pub(crate) async fn load(storage: &Storage, cache: &MetadataCache, ident: &TableIdent) -> Result<LoadedTable> {
    let known = cache.recent_version(ident).map(|(v, _)| v);
    load_checked(storage, cache, ident, known).await
}

/// [`load`], starting from `known`, a version this process saw ([`find_current_version`]).
async fn load_checked(
    storage: &Storage,
    cache: &MetadataCache,
    ident: &TableIdent,
    known: Option<u64>,
) -> Result<LoadedTable> {
    let checked_at = std::time::Instant::now();
    // No version known (`load` and `load_recent` pass the one this process saw): first contact.
    if known.is_none() {
        return load_first(storage, cache, ident, checked_at).await;
    }
    let found = find_current_version(storage, ident, known).await?;
    let Some((version, hint_stale)) = found else {
        cache.forget_version(Some(ident));
        return Err(Error::not_found(format!("table {ident} does not exist")));
    };
    let t = load_found(storage, cache, ident, version, checked_at).await?;
    if hint_stale {
        repair_stale_hint(storage, &t);
    }
    Ok(t)
}

/// [`load`] in a process that has not seen the table yet (or saw it dropped): the head object,
/// the metadata versions and the version hint are asked at once ([`head::probe`]); when the head
/// describes the newest version the table is loaded from it, with its manifests and last-value
/// index (one round trip in all); otherwise from the newest version's metadata file.
async fn load_first(
    storage: &Storage,
    cache: &MetadataCache,
    ident: &TableIdent,
    checked_at: std::time::Instant,
) -> Result<LoadedTable> {
    let probe = head::probe(storage, ident).await?;
    let Some((version, _)) = probe.newest else {
        cache.forget_version(Some(ident));
        return Err(Error::not_found(format!("table {ident} does not exist")));
    };
    let from_head = match probe.head {
        Some(h) => match head::install(storage, cache, ident, h) {
            Ok(t) => Some(t),
            Err(e) => {
                tracing::warn!(table = %ident, "head object not used: {e}");
                None
            }
        },
        None => None,
    };
    let t = match from_head {
        Some(t) => t,
        None => load_version(storage, cache, ident, version).await?,
    };
    if probe.hint != Some(version) {
        repair_stale_hint(storage, &t);
    }
    cache.saw_version(ident, t.metadata.uuid(), version, checked_at);
    Ok(t)
}

/// The table as this process last saw it, without a request when its metadata is cached, marked
/// [`LoadedTable::unchecked`]; [`load`] when the process has not seen the table. For writers: the
/// commit checks the version at once with its uploads (`commit`), so an append waits on two round
/// trips, the uploads and the conditional write; a stale base only costs that attempt's manifests.
///
/// Errors: as [`load`].
pub(crate) async fn load_unchecked(
    storage: &Storage,
    cache: &MetadataCache,
    ident: &TableIdent,
) -> Result<LoadedTable> {
    if let Some((version, _)) = cache.recent_version(ident) {
        if let Some((metadata, refs)) = cache.metadata(ident.metadata_file(version).as_ref()) {
            return Ok(LoadedTable {
                ident: ident.clone(),
                version,
                metadata,
                refs,
                unchecked: true,
            });
        }
    }
    load(storage, cache, ident).await
}

/// Loads `version`, which [`find_current_version`] found to be the newest at `checked_at`, and
/// remembers it as seen.
///
/// Errors: as [`load_version`].
pub(crate) async fn load_found(
    storage: &Storage,
    cache: &MetadataCache,
    ident: &TableIdent,
    version: u64,
    checked_at: std::time::Instant,
) -> Result<LoadedTable> {
    let t = load_version(storage, cache, ident, version).await?;
    cache.saw_version(ident, t.metadata.uuid(), version, checked_at);
    Ok(t)
}

/// Reads the table's metadata for a reader: the version this process saw (loaded, checked or
/// committed) within the version-check interval is used without asking the store (then, with
/// its metadata cached, nothing is read); past it, the version is checked from the one seen, in
/// one round trip ([`find_current_version`]). The interval is the table's
/// `varve.version-check-interval` property, else the lake's `version-check-interval` option.
/// Writers use [`load`]: a commit must build on the newest version.
///
/// Errors: as [`load`].
pub(crate) async fn load_recent(storage: &Storage, cache: &MetadataCache, ident: &TableIdent) -> Result<LoadedTable> {
    let Some((version, age)) = cache.recent_version(ident) else {
        return load(storage, cache, ident).await;
    };
    if let Ok(t) = load_version(storage, cache, ident, version).await {
        let interval = t
            .metadata
            .properties()
            .get(crate::format::properties::PROP_VERSION_CHECK_INTERVAL)
            .and_then(|v| crate::units::parse_duration(v).ok())
            .unwrap_or(storage.options.version_check_interval);
        if age < interval {
            return Ok(t);
        }
    }
    load_checked(storage, cache, ident, Some(version)).await
}

/// Rewrites a version hint found behind `t`, the newest version (a commit's hint write was lost,
/// or its process was killed between its commit and its hint), so that plain Iceberg readers
/// (DuckDB follows the hint) see the newest commit. Every load that asks the store for the newest
/// version repairs it, readers too: after a writer is killed, the next command of any kind puts
/// the hint right (issue 56). In the background, through the same gate as a commit's publishing
/// ([`publish_later`]), so this process never moves the hint back; best effort, as every hint
/// write.
/// Unlike a commit's publishing, it writes even when this process published `version` already:
/// the store's hint was found behind it, so something moved it back since.
fn repair_stale_hint(storage: &Storage, t: &LoadedTable) {
    publish_hint_and_head(storage, &t.ident, t.metadata.uuid(), t.version, None, true);
}

/// Reads `v<version>.metadata.json` of a table (from the cache when it was read or written before).
///
/// Errors: storage errors ([`ErrorKind::NotFound`] when the version does not exist);
/// [`ErrorKind::Corruption`] naming the file when it is not valid table metadata.
pub(crate) async fn load_version(
    storage: &Storage,
    cache: &MetadataCache,
    ident: &TableIdent,
    version: u64,
) -> Result<LoadedTable> {
    let path = ident.metadata_file(version);
    let (metadata, refs) = match cache.metadata(path.as_ref()) {
        Some(hit) => hit,
        None => {
            let bytes = storage.get(&path).await?;
            let (metadata, refs) = parse_metadata(&path, &bytes)?;
            cache.put_metadata(path.as_ref(), metadata.clone(), refs.clone(), bytes.len());
            (metadata, refs)
        }
    };
    Ok(LoadedTable {
        ident: ident.clone(),
        version,
        metadata,
        refs,
        unchecked: false,
    })
}

/// Decodes the table metadata file at `path` and its snapshot references.
///
/// Errors: [`ErrorKind::Corruption`] naming the file when it is not valid table metadata.
fn parse_metadata(path: &Path, bytes: &[u8]) -> Result<(Arc<TableMetadata>, Arc<Refs>)> {
    let metadata: TableMetadata = serde_json::from_slice(bytes).map_err(|e| Error::corrupt(format!("{path}: {e}")))?;
    let refs = metadata_json::read_refs(bytes).map_err(|e| Error::corrupt(format!("{path}: {e}")))?;
    Ok((Arc::new(metadata), Arc::new(refs)))
}

/// The highest committed metadata version, or `None` when the table does not exist.
pub(crate) async fn current_version(storage: &Storage, ident: &TableIdent) -> Result<Option<u64>> {
    Ok(find_current_version(storage, ident, None).await?.map(|(v, _)| v))
}

/// The highest committed metadata version, and whether the version hint is behind it.
///
/// With `known`, a version this process saw: when `v<known>` still exists and `v<known+1>` does
/// not, `known` is the newest (versions are made one after another by put-if-absent, and orphan
/// cleanup removes old ones oldest first, so none is removed before an older one); both are asked at once, one round trip. Otherwise the version
/// hint is read and followed forward, which also finds whether the hint is stale.
pub(crate) async fn find_current_version(
    storage: &Storage,
    ident: &TableIdent,
    known: Option<u64>,
) -> Result<Option<(u64, bool)>> {
    // Whether `v<v>` exists and whether `v<v+1>` does, asked at once.
    let both = |v: u64| async move {
        let (this, next) = (ident.metadata_file(v), ident.metadata_file(v + 1));
        let (this, next) = futures::join!(storage.exists(&this), storage.exists(&next));
        Ok::<_, Error>((this?, next?))
    };
    if let Some(v) = known {
        if let (true, false) = both(v).await? {
            return Ok(Some((v, false)));
        }
    }
    let hint = match storage.get_opt(&ident.version_hint()).await? {
        Some(b) => String::from_utf8_lossy(&b)
            .trim()
            .trim_start_matches('v')
            .parse::<u64>()
            .ok(),
        None => None,
    };
    let hinted = match hint {
        Some(v) => Some((v, both(v).await?)),
        None => None,
    };
    let mut version = match hinted {
        // The usual case, one round trip after the hint: it names the newest version.
        Some((v, (true, false))) => return Ok(Some((v, false))),
        Some((v, (true, true))) => v + 1,
        _ => {
            // No usable hint: list the metadata directory.
            let names = storage.list_files(&ident.metadata_dir()).await?;
            match names.iter().filter_map(|n| parse_version(n)).max() {
                Some(v) => v,
                None => return Ok(None),
            }
        }
    };
    // The hint may be stale: walk forward to the newest version.
    while storage.exists(&ident.metadata_file(version + 1)).await? {
        version += 1;
    }
    Ok(Some((version, hint != Some(version))))
}

/// `N` of a metadata file named `v<N>.metadata.json`.
pub(crate) fn parse_version(name: &str) -> Option<u64> {
    name.strip_prefix('v')?.strip_suffix(".metadata.json")?.parse().ok()
}

/// Creates a table with `arrow_schema` and `contract`: writes `v1.metadata.json` with
/// put-if-absent, so of two creators exactly one wins.
///
/// Errors: [`ErrorKind::AlreadyExists`]; [`ErrorKind::SchemaMismatch`] for an unusable schema or
/// contract.
///
/// The new `v1` goes into `cache` too: a table dropped and made again under the same name reuses
/// the names `v1`, `v2`, ..., and this process must not read the old table's entries for them
/// (the commits of the new table replace the later ones as they are written).
pub(crate) async fn create(
    storage: &Storage,
    cache: &MetadataCache,
    ident: &TableIdent,
    arrow_schema: &arrow::datatypes::Schema,
    contract: &TableContract,
) -> Result<LoadedTable> {
    create_with_properties(storage, cache, ident, arrow_schema, contract, HashMap::new()).await
}

/// [`create`] with more table properties (a rollup's definition) besides the contract's.
pub(crate) async fn create_with_properties(
    storage: &Storage,
    cache: &MetadataCache,
    ident: &TableIdent,
    arrow_schema: &arrow::datatypes::Schema,
    contract: &TableContract,
    extra: HashMap<String, String>,
) -> Result<LoadedTable> {
    if current_version(storage, ident).await?.is_some() {
        return Err(Error::new(
            ErrorKind::AlreadyExists,
            format!("table {ident} exists already"),
        ));
    }
    let time = contract.time_column.as_deref();
    if time.is_none() && contract.dedup != crate::format::Dedup::None {
        return Err(Error::invalid(format!(
            "table {ident}: dedup {} needs a time column (rows are matched on series key and time)",
            contract.dedup
        )));
    }
    let schema = schema::from_arrow(arrow_schema, time)?;
    for k in &contract.series_key {
        if schema.field_by_name(k).is_none() {
            return Err(Error::schema(format!("series key column {k} is not among the columns")));
        }
        if Some(k.as_str()) == time {
            return Err(Error::schema(format!(
                "column {k} cannot be both the time column and in the series key"
            )));
        }
    }
    let mut spec = UnboundPartitionSpec::builder();
    let mut sort = SortOrder::builder();
    if let Some(t) = time {
        let id = schema.field_by_name(t).map(|f| f.id).unwrap_or_default();
        spec = spec.add_partition_field(id, contract.partition_field_name(t), contract.partitioning.transform())?;
        for k in &contract.series_key {
            let kid = schema.field_by_name(k).map(|f| f.id).unwrap_or_default();
            sort.with_sort_field(sort_field(kid));
        }
        sort.with_sort_field(sort_field(id));
        sort.with_order_id(1);
    }
    let sort = if time.is_some() {
        sort.build(&schema)?
    } else {
        SortOrder::unsorted_order()
    };
    let location = storage.location(&ident.prefix());
    let built = TableMetadataBuilder::new(
        schema,
        spec.build(),
        sort,
        location,
        FormatVersion::V2,
        contract.to_properties().into_iter().chain(extra).collect(),
    )?
    .build()?;
    // A new table has no snapshots, so no references.
    let refs = Arc::new(Refs::new());
    let json = Bytes::from(metadata_json::to_json(&built.metadata, &refs, &cache.snapshot_json)?);
    let size = json.len();
    let Some(e_tag) = storage.put_if_absent(&ident.metadata_file(1), json.clone()).await? else {
        return Err(Error::new(
            ErrorKind::AlreadyExists,
            format!("table {ident} exists already"),
        ));
    };
    let no_footers = head::Footers::default();
    let (hint, ()) = futures::join!(
        write_version_hint(storage, ident, 1),
        head::write(
            storage,
            ident,
            1,
            (&built.metadata, &json, e_tag.as_deref()),
            &no_footers
        )
    );
    hint?;
    let metadata = Arc::new(built.metadata);
    cache.put_metadata(ident.metadata_file(1).as_ref(), metadata.clone(), refs.clone(), size);
    cache.saw_version(ident, metadata.uuid(), 1, std::time::Instant::now());
    Ok(LoadedTable {
        ident: ident.clone(),
        version: 1,
        metadata,
        refs,
        unchecked: false,
    })
}

fn sort_field(source_id: i32) -> SortField {
    SortField::builder()
        .source_id(source_id)
        .transform(Transform::Identity)
        .direction(SortDirection::Ascending)
        .null_order(NullOrder::First)
        .build()
}

/// Writes `metadata/version-hint.text` (the version number, as DuckDB and Iceberg's Hadoop tables
/// read it). Only ever moves forward in practice; a stale hint is corrected by the next load that
/// finds it behind ([`repair_stale_hint`]).
pub(crate) async fn write_version_hint(storage: &Storage, ident: &TableIdent, version: u64) -> Result<()> {
    storage
        .put(&ident.version_hint(), Bytes::from(version.to_string()))
        .await
}

/// What a head object write takes of a commit this process won: the metadata as stored (its
/// JSON, with the e-tag the store gave it) and the footers it can carry ([`head::footers_of`]).
pub(crate) type HeadWrite = (Arc<TableMetadata>, Bytes, Option<String>, head::Footers);

/// The newest version of each table (by its hint's location and its uuid) whose publishing this
/// process started: publishing one version waits for the one before, and is skipped when a
/// newer one went first, so that neither the hint nor the head moves back. Keyed by process id
/// too: a forked child must not wait on a gate its parent held at the fork.
static PUBLISHED: LazyLock<Mutex<HashMap<String, Arc<tokio::sync::Mutex<u64>>>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

/// The gate of [`PUBLISHED`] for the table `ident` whose uuid is `uuid`; `None` when the lock is
/// poisoned (publishing is best effort).
fn publish_gate(storage: &Storage, ident: &TableIdent, uuid: uuid::Uuid) -> Option<Arc<tokio::sync::Mutex<u64>>> {
    let key = format!(
        "{}#{uuid}#{}",
        storage.location(&ident.version_hint()),
        std::process::id()
    );
    Some(PUBLISHED.lock().ok()?.entry(key).or_default().clone())
}

/// Publishes the commit of `version` of the table `ident` (whose uuid is `uuid`) after the
/// commit has answered its caller ([`crate::background::spawn_publish`]): writes the version
/// hint (plain Iceberg readers, such as DuckDB, follow it) and, with `head`, the head object, at
/// once, then checks in the background that no newer commit's hint was overwritten. Varve
/// readers do not wait for either: they check for newer versions themselves (the hint is
/// followed forward, and a head is used only when it describes the newest version).
pub(crate) fn publish_later(
    storage: &Storage,
    ident: &TableIdent,
    uuid: uuid::Uuid,
    version: u64,
    head: Option<HeadWrite>,
) {
    publish_hint_and_head(storage, ident, uuid, version, head, false);
}

/// [`publish_later`]'s work, in order per table through its gate: skipped when this process
/// published a newer version already, or (unless `again`, a repair) this one.
fn publish_hint_and_head(
    storage: &Storage,
    ident: &TableIdent,
    uuid: uuid::Uuid,
    version: u64,
    head: Option<HeadWrite>,
    again: bool,
) {
    let Some(gate) = publish_gate(storage, ident, uuid) else {
        return;
    };
    let (storage, ident) = (storage.clone(), ident.clone());
    crate::background::spawn_publish(async move {
        let mut published = gate.lock().await;
        if *published > version || (*published == version && !again) {
            return;
        }
        let head = async {
            if let Some((metadata, json, e_tag, footers)) = &head {
                head::write(&storage, &ident, version, (metadata, json, e_tag.as_deref()), footers).await;
            }
        };
        let (hinted, ()) = futures::join!(write_version_hint(&storage, &ident, version), head);
        *published = version;
        drop(published);
        if hinted.is_ok() {
            follow_version_hint_later(&storage, &ident, version);
        }
    });
}

/// After the hint `version` was written: a newer commit's hint, written before ours landed, would
/// be behind now. That is checked after the caller has its answer ([`follow_version_hint`] in the
/// background; `crate::background::settle` waits for it).
pub(crate) fn follow_version_hint_later(storage: &Storage, ident: &TableIdent, version: u64) {
    let (storage, ident) = (storage.clone(), ident.clone());
    crate::background::spawn(async move { follow_version_hint(&storage, &ident, version).await });
}

/// After writing the hint `version`: when a newer version exists (a commit whose hint write our
/// write may have overtaken), writes the newest into the hint.
async fn follow_version_hint(storage: &Storage, ident: &TableIdent, version: u64) {
    let mut written = version;
    // Usually nobody committed meanwhile: one HEAD says so.
    match storage.exists(&ident.metadata_file(version + 1)).await {
        Ok(true) => {}
        _ => return,
    }
    for _ in 0..3 {
        match current_version(storage, ident).await {
            Ok(Some(v)) if v > written => {
                written = v;
                if write_version_hint(storage, ident, v).await.is_err() {
                    return;
                }
            }
            _ => return,
        }
    }
}

/// Every table in the lake, sorted by name (each checked to have committed metadata).
pub(crate) async fn list(storage: &Storage) -> Result<Vec<TableIdent>> {
    let candidates = list_candidates(storage).await?;
    let checks = candidates.iter().map(|t| current_version(storage, t));
    let versions = futures::future::try_join_all(checks).await?;
    Ok(candidates
        .into_iter()
        .zip(versions)
        .filter(|(_, v)| v.is_some())
        .map(|(t, _)| t)
        .collect())
}

/// The `<namespace>/<table>` directories of the lake, sorted, without checking their metadata: one
/// LIST per namespace. Used where a leftover directory is harmless (naming tables for SQL, where
/// loading a table that has no metadata finds nothing).
pub(crate) async fn list_candidates(storage: &Storage) -> Result<Vec<TableIdent>> {
    Ok(list_layout(storage).await?.1)
}

/// The namespaces of the lake (directories at its root: made by `CREATE SCHEMA` or holding
/// tables) and its candidate tables ([`list_candidates`]), both sorted.
pub(crate) async fn list_layout(storage: &Storage) -> Result<(Vec<String>, Vec<TableIdent>)> {
    let mut namespaces = Vec::new();
    let mut out = Vec::new();
    for ns in storage.list_dirs(None).await? {
        let ns_path = Path::from(ns.as_str());
        for t in storage.list_dirs(Some(&ns_path)).await? {
            if let Ok(ident) = TableIdent::parse(&format!("{ns}.{t}")) {
                out.push(ident);
            }
        }
        if check_namespace(&ns).is_ok() {
            namespaces.push(ns);
        }
    }
    namespaces.sort();
    out.sort();
    Ok((namespaces, out))
}

/// The object that keeps a namespace made by `CREATE SCHEMA` while it holds no tables (an
/// object store has no empty directories).
fn namespace_marker(namespace: &str) -> Path {
    Path::from_iter([namespace, "namespace.json"])
}

/// Checks a namespace name: the rules of [`TableIdent::parse`].
///
/// Errors: [`ErrorKind::InvalidInput`].
pub(crate) fn check_namespace(namespace: &str) -> Result<()> {
    TableIdent::parse(&format!("{namespace}.t")).map(|_| ()).map_err(|_| {
        Error::invalid(format!(
            "namespace {namespace:?}: use letters, digits, _ and -, starting with a letter or _"
        ))
    })
}

/// Creates a namespace: writes its marker object. A namespace exists when it has the marker or
/// holds a table; tables can also be created in a namespace that does not exist yet.
///
/// Errors: [`ErrorKind::AlreadyExists`] (unless `if_not_exists`), [`ErrorKind::InvalidInput`] for
/// a bad name.
pub(crate) async fn create_namespace(storage: &Storage, namespace: &str, if_not_exists: bool) -> Result<()> {
    check_namespace(namespace)?;
    let marker = namespace_marker(namespace);
    let has_tables = list(storage).await?.iter().any(|t| t.namespace == namespace);
    if has_tables || storage.exists(&marker).await? {
        if if_not_exists {
            return Ok(());
        }
        return Err(Error::new(
            ErrorKind::AlreadyExists,
            format!("namespace {namespace} exists already"),
        ));
    }
    let body = serde_json::json!({ "namespace": namespace, "created_by": "varve" }).to_string();
    storage.put(&marker, Bytes::from(body)).await
}

/// Drops a namespace; with `cascade`, its tables first. Returns the tables dropped.
///
/// Errors: [`ErrorKind::NotFound`] (unless `if_exists`); [`ErrorKind::InvalidInput`] when it
/// holds tables and `cascade` is not given (nothing is dropped then).
pub(crate) async fn drop_namespace(
    storage: &Storage,
    cache: &MetadataCache,
    namespace: &str,
    if_exists: bool,
    cascade: bool,
) -> Result<Vec<TableIdent>> {
    check_namespace(namespace)?;
    let marker = namespace_marker(namespace);
    let tables: Vec<TableIdent> = list(storage)
        .await?
        .into_iter()
        .filter(|t| t.namespace == namespace)
        .collect();
    if tables.is_empty() && !storage.exists(&marker).await? {
        if if_exists {
            return Ok(vec![]);
        }
        return Err(Error::not_found(format!("namespace {namespace} does not exist")));
    }
    if !tables.is_empty() && !cascade {
        let names: Vec<String> = tables.iter().map(|t| t.to_string()).collect();
        return Err(Error::invalid(format!(
            "namespace {namespace} holds tables ({}); drop them first, or DROP SCHEMA {namespace} CASCADE to drop them too",
            names.join(", ")
        )));
    }
    for t in &tables {
        drop_table(storage, cache, t).await?;
    }
    storage.delete_quietly(&[marker]).await;
    Ok(tables)
}

/// Deletes a table: every object under its prefix, metadata first so that readers stop seeing it.
///
/// Errors: [`ErrorKind::NotFound`].
pub(crate) async fn drop_table(storage: &Storage, cache: &MetadataCache, ident: &TableIdent) -> Result<usize> {
    // This process's commits are published first: a hint or head written after the drop would
    // outlive the table (and name a version of it to a table made again under the same name).
    crate::background::settle_published().await;
    let Some(last) = current_version(storage, ident).await? else {
        return Err(Error::not_found(format!("table {ident} does not exist")));
    };
    // The head first: a drop that stops part-way must not leave a head behind the metadata.
    storage.delete_quietly(&[head::path(ident)]).await;
    let n = storage.delete_prefix(&ident.metadata_dir()).await?;
    cache.forget_version(Some(ident));
    cache.forget_metadata(ident, last);
    Ok(n + storage.delete_prefix(&ident.prefix()).await?)
}

/// The live data files of `snapshot_id` (none for a table without snapshots).
pub(crate) async fn data_files(
    storage: &Storage,
    cache: &MetadataCache,
    metadata: &TableMetadata,
    snapshot_id: Option<i64>,
) -> Result<Vec<DataFile>> {
    Ok(live_entries(storage, cache, metadata, snapshot_id)
        .await?
        .into_iter()
        .map(|e| e.data_file)
        .collect())
}

/// The live manifest entries of `snapshot_id`, with their sequence numbers (none for a table
/// without snapshots).
///
/// Errors: [`ErrorKind::NotFound`] for an unknown snapshot; [`ErrorKind::Corruption`] naming the
/// object when the snapshot's manifest list or one of its manifests is missing.
pub(crate) async fn live_entries(
    storage: &Storage,
    cache: &MetadataCache,
    metadata: &TableMetadata,
    snapshot_id: Option<i64>,
) -> Result<Vec<ManifestEntry>> {
    let Some(id) = snapshot_id else {
        return Ok(vec![]);
    };
    let snapshot = metadata
        .snapshot_by_id(id)
        .ok_or_else(|| Error::not_found(format!("snapshot {id} does not exist")))?;
    let manifests = manifest_list(storage, cache, snapshot).await?;
    let fetches = manifests.iter().map(|m| async move {
        if let Some(hit) = cache.manifest(&m.manifest_path) {
            return Ok::<_, Error>(hit);
        }
        let bytes = get_metadata_object(storage, &m.manifest_path, "manifest").await?;
        let entries = Arc::new(
            manifest::decode_manifest(&bytes, m).map_err(|e| e.context(format!("manifest {}", m.manifest_path)))?,
        );
        cache.put_manifest(&m.manifest_path, entries.clone(), bytes.len());
        Ok(entries)
    });
    let mut out = Vec::new();
    for entries in futures::future::try_join_all(fetches).await? {
        out.extend(entries.iter().cloned());
    }
    Ok(out)
}

/// The manifests of a snapshot, from its manifest list.
///
/// Errors: [`ErrorKind::Corruption`] when the manifest list is missing or cannot be decoded.
pub(crate) async fn manifest_list(
    storage: &Storage,
    cache: &MetadataCache,
    snapshot: &iceberg::spec::Snapshot,
) -> Result<Arc<Vec<iceberg::spec::ManifestFile>>> {
    let location = snapshot.manifest_list();
    if let Some(hit) = cache.manifest_list(location) {
        return Ok(hit);
    }
    let bytes = get_metadata_object(storage, location, "manifest list").await?;
    let list =
        Arc::new(manifest::decode_manifest_list(&bytes).map_err(|e| e.context(format!("manifest list {location}")))?);
    cache.put_manifest_list(location, list.clone(), bytes.len());
    Ok(list)
}

/// Reads a metadata object that a committed snapshot references: missing means corruption.
async fn get_metadata_object(storage: &Storage, location: &str, what: &str) -> Result<Bytes> {
    match storage.get(&storage.path_of(location)?).await {
        Ok(b) => Ok(b),
        Err(e) if e.kind() == ErrorKind::NotFound => Err(Error::corrupt(format!(
            "{what} {location} is missing: the table's metadata references an object that is gone"
        ))),
        Err(e) => Err(e),
    }
}
