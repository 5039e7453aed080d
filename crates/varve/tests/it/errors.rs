//! Errors reading data files (issue 8, defect 12): classified by type and source, not message
//! text, and naming the object. A data file the store will not serve is a storage error, a
//! missing one is "not found", a truncated one is corruption: the same from `sql` and `info`, with
//! the source chain kept (`latest` reads the last-value index instead and still answers). A
//! missing last-value index makes `latest` scan; a damaged one is corruption naming it.

use std::fmt;
use std::ops::Range;
use std::path::{Path as FsPath, PathBuf};
use std::sync::Arc;

use arrow::array::{Float64Array, RecordBatch, StringArray, TimestampMicrosecondArray};
use arrow::datatypes::{DataType, Field, Schema, TimeUnit};
use async_trait::async_trait;
use bytes::Bytes;
use futures::stream::BoxStream;
use object_store::path::Path;
use object_store::{
    CopyOptions, GetOptions, GetResult, ListResult, MultipartUpload, ObjectMeta, ObjectStore, PutMultipartOptions,
    PutOptions, PutPayload, PutResult,
};
use varve::{AppendOptions, ErrorKind, Lake, TableContract};

async fn table(lake: &Lake) {
    let schema = Arc::new(Schema::new(vec![
        Field::new(
            "ts",
            DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            false,
        ),
        Field::new("host", DataType::Utf8, true),
        Field::new("v", DataType::Float64, true),
    ]));
    lake.create_table(
        "t",
        &schema,
        &TableContract::time_series("ts").with_series_key(["host"]),
    )
    .await
    .unwrap();
    let b = RecordBatch::try_new(
        schema,
        vec![
            Arc::new(TimestampMicrosecondArray::from(vec![0, 1_000_000]).with_timezone("UTC")),
            Arc::new(StringArray::from(vec!["a", "b"])),
            Arc::new(Float64Array::from(vec![1.0, 2.0])),
        ],
    )
    .unwrap();
    lake.append("t", vec![b], AppendOptions::default()).await.unwrap();
}

/// The first Parquet file under `root` in a folder named `folder` whose name starts with `prefix`.
fn parquet_file(root: &FsPath, folder: &str, prefix: &str) -> PathBuf {
    let mut todo = vec![root.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                todo.push(p);
            } else if p.extension().is_some_and(|x| x == "parquet")
                && p.components().any(|c| c.as_os_str() == folder)
                && p.file_name().unwrap().to_str().unwrap().starts_with(prefix)
            {
                return p;
            }
        }
    }
    panic!("no {folder}/{prefix}*.parquet under {}", root.display())
}

fn data_file(root: &FsPath) -> PathBuf {
    parquet_file(root, "data", "")
}

/// `sql` and `info` (which counts series with SQL) must both fail with `kind`, naming `name`,
/// with a source. `latest` reads the last-value index, not the data files: it still answers.
async fn all_fail(lake: &Lake, kind: ErrorKind, name: &str, also: &str) {
    let sql = lake.sql("SELECT sum(v) FROM t").await.expect_err("sql fails");
    let info = lake.info("t").await.expect_err("info fails");
    let latest = lake.latest("t").await.expect("latest reads the index");
    assert_eq!(latest.num_rows(), 2);
    for (what, e) in [("sql", sql), ("info", info)] {
        assert_eq!(e.kind(), kind, "{what}: {e}");
        assert!(e.message().contains(name), "{what}: {e} should name {name}");
        assert!(e.message().contains(also), "{what}: {e} should say {also:?}");
        assert!(
            std::error::Error::source(&e).is_some(),
            "{what}: the source chain is kept"
        );
    }
}

#[tokio::test]
async fn a_missing_data_file_is_not_found() {
    let dir = tempfile::tempdir().unwrap();
    let lake = Lake::open(dir.path().to_str().unwrap(), &Default::default()).unwrap();
    table(&lake).await;
    let f = data_file(dir.path());
    std::fs::remove_file(&f).unwrap();
    let name = f.file_name().unwrap().to_str().unwrap();
    all_fail(&lake, ErrorKind::NotFound, name, "does not exist").await;
}

#[tokio::test]
async fn a_missing_last_value_index_falls_back_to_a_scan() {
    let dir = tempfile::tempdir().unwrap();
    let lake = Lake::open(dir.path().to_str().unwrap(), &Default::default()).unwrap();
    table(&lake).await;
    let index = parquet_file(dir.path(), "metadata", "last-value-");
    std::fs::remove_file(&index).unwrap();
    // The head object carries a copy of a small index: without it, readers go to the file.
    std::fs::remove_file(dir.path().join("default/t/metadata/varve-head.bin")).unwrap();
    // A new handle: the index is not in its cache.
    let lake = Lake::open(dir.path().to_str().unwrap(), &Default::default()).unwrap();
    let r = lake.latest("t").await.expect("latest scans instead");
    assert_eq!(r.num_rows(), 2);
    // Read as a table, the missing index is an error naming it.
    let e = lake
        .sql("SELECT * FROM \"t@last-values\"")
        .await
        .expect_err("the index is gone");
    assert_eq!(e.kind(), ErrorKind::NotFound, "{e}");
    let name = index.file_name().unwrap().to_str().unwrap();
    assert!(e.message().contains(name), "{e} should name {name}");
}

#[tokio::test]
async fn a_truncated_last_value_index_is_corruption_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let lake = Lake::open(dir.path().to_str().unwrap(), &Default::default()).unwrap();
    table(&lake).await;
    let index = parquet_file(dir.path(), "metadata", "last-value-");
    let bytes = std::fs::read(&index).unwrap();
    std::fs::write(&index, &bytes[..bytes.len() / 2]).unwrap();
    std::fs::remove_file(dir.path().join("default/t/metadata/varve-head.bin")).unwrap();
    let lake = Lake::open(dir.path().to_str().unwrap(), &Default::default()).unwrap();
    let e = lake.latest("t").await.expect_err("a damaged index");
    assert_eq!(e.kind(), ErrorKind::Corruption, "{e}");
    let name = index.file_name().unwrap().to_str().unwrap();
    assert!(e.message().contains(name), "{e} should name {name}");
    // The data is intact: SQL over the table still answers, and the damaged index does not stop
    // the next commit (made without an index: `latest` scans).
    assert_eq!(lake.sql("SELECT * FROM t").await.unwrap().num_rows(), 2);
    let schema = lake.describe("t").await.unwrap().schema;
    let b = RecordBatch::try_new(
        schema,
        vec![
            Arc::new(TimestampMicrosecondArray::from(vec![2_000_000]).with_timezone("UTC")),
            Arc::new(StringArray::from(vec!["a"])),
            Arc::new(Float64Array::from(vec![3.0])),
        ],
    )
    .unwrap();
    lake.append("t", vec![b], AppendOptions::default()).await.unwrap();
    let latest = lake.latest("t").await.unwrap();
    assert_eq!(latest.num_rows(), 2);
    let v = latest.batches[0].column_by_name("v").unwrap();
    assert_eq!(arrow::util::display::array_value_to_string(v, 0).unwrap(), "3.0");
}

#[tokio::test]
async fn a_truncated_data_file_is_corruption_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let lake = Lake::open(dir.path().to_str().unwrap(), &Default::default()).unwrap();
    table(&lake).await;
    let f = data_file(dir.path());
    let bytes = std::fs::read(&f).unwrap();
    std::fs::write(&f, &bytes[..bytes.len() / 2]).unwrap();
    let name = f.file_name().unwrap().to_str().unwrap();
    // The footer is lost: a process that holds it (the writer; a reader that got it from the
    // head object) still reads the intact data pages. One that has to read it finds the damage.
    std::fs::remove_file(dir.path().join("default/t/metadata/varve-head.bin")).unwrap();
    let fresh = Lake::open(dir.path().to_str().unwrap(), &Default::default()).unwrap();
    all_fail(&fresh, ErrorKind::Corruption, name, "is truncated").await;
    assert_eq!(lake.sql("SELECT sum(v) FROM t").await.unwrap().num_rows(), 1);
}

#[tokio::test]
async fn a_data_file_the_store_will_not_serve_is_a_storage_error() {
    let dir = tempfile::tempdir().unwrap();
    let url = dir.path().to_str().unwrap().to_string();
    table(&Lake::open(&url, &Default::default()).unwrap()).await;
    let lake = Lake::open_with_store_layer(&url, &Default::default(), |inner| Arc::new(Refusing { inner })).unwrap();
    let f = data_file(dir.path());
    let name = f.file_name().unwrap().to_str().unwrap();
    all_fail(&lake, ErrorKind::Storage, name, "503").await;
}

/// A real store that answers every read of a data file as S3 does when it gives up (a 503
/// after its retries).
#[derive(Debug)]
struct Refusing {
    inner: Arc<dyn ObjectStore>,
}

impl fmt::Display for Refusing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Refusing({})", self.inner)
    }
}

fn refused(location: &Path) -> object_store::Result<()> {
    // Data files only: the last-value index is served.
    if location.as_ref().ends_with(".parquet") && location.as_ref().contains("/data/") {
        return Err(object_store::Error::Generic {
            store: "S3",
            source: "Error after 10 retries in 2.1s: HTTP status server error (503 Service Unavailable)".into(),
        });
    }
    Ok(())
}

#[async_trait]
impl ObjectStore for Refusing {
    async fn put_opts(&self, l: &Path, p: PutPayload, o: PutOptions) -> object_store::Result<PutResult> {
        self.inner.put_opts(l, p, o).await
    }
    async fn put_multipart_opts(
        &self,
        l: &Path,
        o: PutMultipartOptions,
    ) -> object_store::Result<Box<dyn MultipartUpload>> {
        self.inner.put_multipart_opts(l, o).await
    }
    async fn get_opts(&self, l: &Path, o: GetOptions) -> object_store::Result<GetResult> {
        refused(l)?;
        self.inner.get_opts(l, o).await
    }
    async fn get_ranges(&self, l: &Path, r: &[Range<u64>]) -> object_store::Result<Vec<Bytes>> {
        refused(l)?;
        self.inner.get_ranges(l, r).await
    }
    fn delete_stream(
        &self,
        l: BoxStream<'static, object_store::Result<Path>>,
    ) -> BoxStream<'static, object_store::Result<Path>> {
        self.inner.delete_stream(l)
    }
    fn list(&self, p: Option<&Path>) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
        self.inner.list(p)
    }
    async fn list_with_delimiter(&self, p: Option<&Path>) -> object_store::Result<ListResult> {
        self.inner.list_with_delimiter(p).await
    }
    async fn copy_opts(&self, f: &Path, t: &Path, o: CopyOptions) -> object_store::Result<()> {
        self.inner.copy_opts(f, t, o).await
    }
}

#[tokio::test]
async fn a_missing_table_names_the_tables_of_that_name_elsewhere() {
    let dir = tempfile::tempdir().unwrap();
    let lake = Lake::open(dir.path().to_str().unwrap(), &Default::default()).unwrap();
    for t in ["market.trades", "archive.Trades"] {
        lake.sql(&format!(
            "CREATE TABLE {t} (ts TIMESTAMP, p DOUBLE) WITH (time_column = 'ts')"
        ))
        .await
        .unwrap();
    }
    let e = lake.sql("SELECT * FROM trades").await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotFound);
    assert_eq!(
        e.to_string(),
        "table default.trades does not exist; did you mean one of archive.Trades, market.trades? \
         (SHOW TABLES lists the tables)"
    );
    let e = lake.sql("SELECT * FROM nothing_like_it").await.unwrap_err();
    assert_eq!(
        e.to_string(),
        "table default.nothing_like_it does not exist (SHOW TABLES lists the tables)"
    );
    // A front end names its own way to list tables, and may keep suggestions in one namespace.
    let session = lake.session(Default::default()).unwrap();
    session.set_table_hint("\\dt lists the tables");
    session.scope_suggestions("market");
    let e = session.sql("SELECT * FROM archive2.trades").await.unwrap_err();
    assert_eq!(
        e.to_string(),
        "table archive2.trades does not exist; did you mean market.trades? (\\dt lists the tables)"
    );
}
