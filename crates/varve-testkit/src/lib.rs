//! Test support shared by Varve's crates: the storage backends a contract test runs against (local
//! disk, an S3 bucket on a real S3-compatible server, memory), and DuckDB and PyIceberg as
//! independent readers of the tables Varve writes.
//!
//! Python tools come from the venv `scripts/setup-python` makes: `$VARVE_PYTHON` and
//! `$VARVE_MOTO_SERVER`, by default under `~/.cache/varve-venv`. A missing tool fails the test
//! with a message saying how to install it; nothing is skipped.

#![warn(missing_docs)]

pub mod hook;
pub mod kafka;
pub mod store;

use std::collections::HashMap;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use arrow::array::{Array, ArrayRef, RecordBatch};
use arrow::compute::cast;
use arrow::datatypes::{DataType, TimeUnit};
use arrow::util::display::array_value_to_string;

/// Access key used with the test S3 server (any value works with moto).
pub const S3_KEY: &str = "testing";
/// Secret used with the test S3 server.
pub const S3_SECRET: &str = "testing";
/// Region used with the test S3 server.
pub const S3_REGION: &str = "us-east-1";

fn cache_dir(name: &str) -> PathBuf {
    let home = std::env::var("HOME").unwrap_or_else(|_| "/root".into());
    Path::new(&home).join(".cache").join(name)
}

fn venv() -> PathBuf {
    std::env::var("VARVE_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|_| cache_dir("varve-venv"))
}

/// A tool: `$<env>` if set, else `default`.
///
/// Errors: it does not exist, with the script that installs it.
fn tool(env: &str, default: PathBuf, installer: &str) -> Result<PathBuf, String> {
    let p = std::env::var(env).map(PathBuf::from).unwrap_or(default);
    if p.exists() {
        Ok(p)
    } else {
        Err(format!(
            "{} is missing: run {installer} first, or set {env}",
            p.display()
        ))
    }
}

/// A tool from the venv: `$<env>` if set, else `<venv>/bin/<name>`.
///
/// Errors: it does not exist, with how to install it.
fn venv_tool(env: &str, name: &str) -> Result<PathBuf, String> {
    tool(
        env,
        venv().join("bin").join(name),
        "scripts/setup-python (or scripts/test)",
    )
}

/// The venv's Python interpreter (`$VARVE_PYTHON`, else `<venv>/bin/python`).
///
/// Errors: it does not exist.
pub fn try_python() -> Result<PathBuf, String> {
    venv_tool("VARVE_PYTHON", "python")
}

/// The venv's moto server (`$VARVE_MOTO_SERVER`, else `<venv>/bin/moto_server`).
///
/// Errors: it does not exist.
pub fn try_moto_server() -> Result<PathBuf, String> {
    venv_tool("VARVE_MOTO_SERVER", "moto_server")
}

/// The `s3s-fs` S3 server (`$VARVE_S3S_FS`, else `~/.cache/varve-tools/bin/s3s-fs`, where
/// `scripts/setup-s3s-fs` installs it). Benchmarks only: the tests run against moto.
///
/// Errors: it does not exist, with how to install it.
pub fn try_s3s_fs() -> Result<PathBuf, String> {
    tool(
        "VARVE_S3S_FS",
        cache_dir("varve-tools/bin/s3s-fs"),
        "scripts/setup-s3s-fs",
    )
}

/// Which S3-compatible server an [`S3Server`] runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum S3Kind {
    /// moto (Python, objects in memory) through [`moto_launcher`]: atomic conditional writes;
    /// it serves one request at a time (about 2-2.7 ms each on this project's 2-core machines).
    /// What the tests use.
    #[default]
    Moto,
    /// `s3s-fs` (Rust, objects as files in a temporary directory): requests served in parallel,
    /// though each costs more than moto's on these machines (bench/results/HISTORY.md, 2026-12-07).
    /// Its `If-None-Match: *` check and write are two steps, so it is not safe for concurrent
    /// committers: benchmarks with one writer only.
    S3sFs,
}

impl S3Kind {
    /// Every kind, in the order a command line lists them.
    pub const ALL: [S3Kind; 2] = [S3Kind::Moto, S3Kind::S3sFs];

    /// `moto` or `s3s-fs`.
    pub fn name(self) -> &'static str {
        match self {
            S3Kind::Moto => "moto",
            S3Kind::S3sFs => "s3s-fs",
        }
    }

    /// The kind of a [`S3Kind::name`].
    ///
    /// Errors: no kind has that name (the message lists the names).
    pub fn from_name(name: &str) -> Result<S3Kind, String> {
        S3Kind::ALL.into_iter().find(|k| k.name() == name).ok_or_else(|| {
            let names: Vec<&str> = S3Kind::ALL.iter().map(|k| k.name()).collect();
            format!("unknown S3 server {name:?}: one of {}", names.join(", "))
        })
    }

    /// The installed server's program: moto's (`try_moto_server`) or s3s-fs's (`try_s3s_fs`).
    ///
    /// Errors: it is not installed, with how to install it.
    pub fn installed(self) -> Result<PathBuf, String> {
        match self {
            S3Kind::Moto => try_moto_server(),
            S3Kind::S3sFs => try_s3s_fs(),
        }
    }
}

/// The venv's Python interpreter; panics (failing the test) when it is missing.
pub fn python() -> PathBuf {
    try_python().unwrap_or_else(|e| panic!("{e}"))
}

/// The launcher of moto's server with atomic conditional writes (`moto_server.py` beside this
/// crate's sources; see its docstring for why plain `moto_server` is not enough).
pub fn moto_launcher() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("moto_server.py")
}

/// The repository root.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("repo root")
}

/// A real data file from `examples/data/`.
pub fn data_file(name: &str) -> PathBuf {
    repo_root().join("examples/data").join(name)
}

/// A free TCP port on 127.0.0.1.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("free port")
}

/// An S3 server on 127.0.0.1, stopped when dropped: moto (with atomic conditional writes:
/// [`moto_launcher`]) for tests, or `s3s-fs` for benchmarks ([`S3Kind`]).
#[derive(Debug)]
pub struct S3Server {
    child: Child,
    /// Where `s3s-fs` keeps the objects (removed when dropped, after the server stops).
    _root: Option<tempfile::TempDir>,
    /// `http://127.0.0.1:<port>`.
    pub endpoint: String,
    /// `127.0.0.1:<port>`.
    pub host_port: String,
}

impl S3Server {
    /// Starts a moto server and waits until it answers.
    pub fn start() -> S3Server {
        S3Server::start_kind(S3Kind::Moto)
    }

    /// Starts a server of the given kind and waits until it answers; panics when it is not
    /// installed (with how to install it) or does not start within 30 s.
    pub fn start_kind(kind: S3Kind) -> S3Server {
        let port = free_port();
        let (child, root) = match kind {
            S3Kind::Moto => {
                kind.installed().unwrap_or_else(|e| panic!("{e}"));
                let child = Command::new(python())
                    .arg(moto_launcher())
                    .args(["-H", "127.0.0.1", "-p", &port.to_string()])
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .spawn()
                    .expect("start moto_server");
                (child, None)
            }
            S3Kind::S3sFs => {
                let bin = kind.installed().unwrap_or_else(|e| panic!("{e}"));
                let root = tempfile::Builder::new()
                    .prefix("varve-s3s-fs-")
                    .tempdir()
                    .expect("s3s-fs root directory");
                let child = Command::new(bin)
                    .args(["--host", "127.0.0.1", "--port", &port.to_string()])
                    .args(["--access-key", S3_KEY, "--secret-key", S3_SECRET])
                    .arg(root.path())
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .spawn()
                    .expect("start s3s-fs");
                (child, Some(root))
            }
        };
        let host_port = format!("127.0.0.1:{port}");
        let deadline = Instant::now() + Duration::from_secs(30);
        while std::net::TcpStream::connect(&host_port).is_err() {
            assert!(
                Instant::now() < deadline,
                "{} did not start on {host_port}",
                kind.name()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        S3Server {
            child,
            _root: root,
            endpoint: format!("http://{host_port}"),
            host_port,
        }
    }

    /// The server's process id (to stop it with SIGSTOP, for an outage).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Creates a bucket.
    pub fn create_bucket(&self, bucket: &str) {
        let code = format!(
            "import boto3; boto3.client('s3', endpoint_url='{}', aws_access_key_id='{S3_KEY}', \
             aws_secret_access_key='{S3_SECRET}', region_name='{S3_REGION}').create_bucket(Bucket='{bucket}')",
            self.endpoint
        );
        let out = Command::new(python()).args(["-c", &code]).output().expect("run python");
        assert!(
            out.status.success(),
            "create bucket: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// Storage options for a lake in this server.
    pub fn options(&self) -> HashMap<String, String> {
        HashMap::from([
            ("endpoint".to_string(), self.endpoint.clone()),
            ("access_key_id".to_string(), S3_KEY.to_string()),
            ("secret_access_key".to_string(), S3_SECRET.to_string()),
            ("region".to_string(), S3_REGION.to_string()),
            ("allow_http".to_string(), "true".to_string()),
        ])
    }
}

impl Drop for S3Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Where a test lake lives.
#[derive(Debug)]
pub enum Backend {
    /// A fresh local directory.
    Local(tempfile::TempDir),
    /// A fresh bucket on a moto server.
    S3 {
        /// The server.
        server: S3Server,
        /// The bucket.
        bucket: String,
    },
    /// Process memory.
    Memory,
}

impl Backend {
    /// A lake in a new temporary directory.
    pub fn local() -> Backend {
        Backend::Local(tempfile::tempdir().expect("tempdir"))
    }

    /// A lake in a new bucket on a new S3 server.
    pub fn s3() -> Backend {
        let server = S3Server::start();
        let bucket = "lake".to_string();
        server.create_bucket(&bucket);
        Backend::S3 { server, bucket }
    }

    /// The lake URL.
    pub fn url(&self) -> String {
        match self {
            Backend::Local(d) => d.path().join("lake").display().to_string(),
            Backend::S3 { bucket, .. } => format!("s3://{bucket}/warehouse"),
            Backend::Memory => "memory://".to_string(),
        }
    }

    /// Storage options for the lake.
    pub fn options(&self) -> HashMap<String, String> {
        match self {
            Backend::S3 { server, .. } => server.options(),
            _ => HashMap::new(),
        }
    }

    /// `--storage-option` arguments for the CLI.
    pub fn cli_args(&self) -> Vec<String> {
        let mut v = vec!["--lake".to_string(), self.url()];
        for (k, val) in self.options() {
            v.push("--storage-option".into());
            v.push(format!("{k}={val}"));
        }
        v
    }

    /// Opens the lake.
    pub fn open(&self) -> varve::Lake {
        varve::Lake::open(&self.url(), &self.options()).expect("open lake")
    }

    /// The location of a table as DuckDB and PyIceberg address it.
    pub fn table_location(&self, namespace: &str, table: &str) -> String {
        match self {
            Backend::Local(d) => d.path().join("lake").join(namespace).join(table).display().to_string(),
            Backend::S3 { bucket, .. } => format!("s3://{bucket}/warehouse/{namespace}/{table}"),
            Backend::Memory => panic!("memory lakes cannot be read by other engines"),
        }
    }

    fn s3_args(&self, with_scheme: bool) -> Vec<String> {
        match self {
            Backend::S3 { server, .. } => vec![
                "--s3-endpoint".into(),
                if with_scheme {
                    server.endpoint.clone()
                } else {
                    server.host_port.clone()
                },
                "--s3-key".into(),
                S3_KEY.into(),
                "--s3-secret".into(),
                S3_SECRET.into(),
                "--s3-region".into(),
                S3_REGION.into(),
            ],
            _ => vec![],
        }
    }
}

fn run_script(script: &str, args: &[String]) -> Vec<RecordBatch> {
    let out_dir = tempfile::tempdir().expect("tempdir");
    let out = out_dir.path().join("result.parquet");
    let path = repo_root().join("tests/py").join(script);
    let o = Command::new(python())
        .arg(&path)
        .args(args)
        .arg("--out")
        .arg(&out)
        .output()
        .expect("run python");
    assert!(
        o.status.success(),
        "{script} failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    read_parquet(&out)
}

/// Reads a Parquet file into batches.
pub fn read_parquet(path: &Path) -> Vec<RecordBatch> {
    let f = std::fs::File::open(path).expect("open parquet");
    parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(f)
        .expect("parquet")
        .build()
        .expect("reader")
        .collect::<Result<Vec<_>, _>>()
        .expect("batches")
}

/// Runs `sql` in a fresh DuckDB (with the iceberg extension, and S3 access to `backend`).
pub fn duckdb(sql: &str, backend: Option<&Backend>) -> Vec<RecordBatch> {
    let mut args = vec!["--sql".to_string(), sql.to_string()];
    if let Some(b) = backend {
        args.extend(b.s3_args(false));
    }
    run_script("duckdb_sql.py", &args)
}

/// DuckDB's `iceberg_scan` of a whole table.
pub fn duckdb_scan(backend: &Backend, namespace: &str, table: &str) -> Vec<RecordBatch> {
    let loc = backend.table_location(namespace, table);
    duckdb(&format!("SELECT * FROM iceberg_scan('{loc}')"), Some(backend))
}

/// PyIceberg's `StaticTable` scan of a table at its metadata version `version`.
pub fn pyiceberg_scan(backend: &Backend, namespace: &str, table: &str, version: u64) -> Vec<RecordBatch> {
    let loc = format!(
        "{}/metadata/v{version}.metadata.json",
        backend.table_location(namespace, table)
    );
    let mut args = vec!["--metadata".to_string(), loc];
    args.extend(backend.s3_args(true));
    run_script("pyiceberg_scan.py", &args)
}

fn normalise(a: &ArrayRef) -> ArrayRef {
    match a.data_type() {
        DataType::Timestamp(_, _) => {
            let us = cast(a, &DataType::Timestamp(TimeUnit::Microsecond, None)).expect("cast ts");
            cast(&us, &DataType::Int64).expect("cast int")
        }
        DataType::LargeUtf8 | DataType::Utf8View => cast(a, &DataType::Utf8).expect("cast str"),
        DataType::Int32 | DataType::Int16 | DataType::Int8 => cast(a, &DataType::Int64).expect("cast int"),
        DataType::Float32 => cast(a, &DataType::Float64).expect("cast float"),
        _ => a.clone(),
    }
}

/// Rows as sorted lists of text cells with columns in name order, so that results of different
/// engines compare equal when they hold the same values (timestamps as µs, all strings alike).
pub fn rows(batches: &[RecordBatch]) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for b in batches {
        let schema = b.schema();
        let mut idx: Vec<usize> = (0..schema.fields().len()).collect();
        idx.sort_by_key(|i| schema.field(*i).name().clone());
        let cols: Vec<ArrayRef> = idx.iter().map(|i| normalise(b.column(*i))).collect();
        for r in 0..b.num_rows() {
            out.push(
                cols.iter()
                    .map(|c| {
                        if c.is_null(r) {
                            "NULL".to_string()
                        } else {
                            array_value_to_string(c, r).unwrap_or_default()
                        }
                    })
                    .collect(),
            );
        }
    }
    out.sort();
    out
}

/// Column names of a result, sorted.
pub fn column_names(batches: &[RecordBatch]) -> Vec<String> {
    let mut v: Vec<String> = batches
        .first()
        .map(|b| b.schema().fields().iter().map(|f| f.name().clone()).collect())
        .unwrap_or_default();
    v.sort();
    v
}

/// Asserts that DuckDB and PyIceberg read exactly the rows Varve reads from `namespace.table`.
pub async fn assert_readers_agree(lake: &varve::Lake, backend: &Backend, namespace: &str, table: &str) {
    let name = format!("{namespace}.{table}");
    // DuckDB and PyIceberg follow the version hint, written after each commit answered.
    varve::settle_published().await;
    let ours = lake
        .sql(&format!("SELECT * FROM \"{namespace}\".\"{table}\""))
        .await
        .expect("varve scan");
    let version = lake.describe(&name).await.expect("describe").metadata_version;
    let expected = rows(&ours.batches);
    let duck = duckdb_scan(backend, namespace, table);
    assert_eq!(
        column_names(&duck),
        column_names(&ours.batches),
        "{name}: DuckDB columns"
    );
    assert_eq!(rows(&duck).len(), expected.len(), "{name}: DuckDB row count");
    assert!(rows(&duck) == expected, "{name}: DuckDB rows differ from Varve's");
    let py = pyiceberg_scan(backend, namespace, table, version);
    assert_eq!(
        column_names(&py),
        column_names(&ours.batches),
        "{name}: PyIceberg columns"
    );
    assert!(rows(&py) == expected, "{name}: PyIceberg rows differ from Varve's");
}

/// A small deterministic generator (xorshift64, Marsaglia 2003) for random test data that replays
/// from its seed: the tests need varied data, not statistics. The seed must not be 0.
pub struct Rng(pub u64);

impl Rng {
    /// The next value in `0..n`.
    pub fn next(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

/// A TCP proxy on 127.0.0.1 in front of a real server, which can be cut off to make an outage
/// the clients see as connection errors (resets and refused requests), then restored.
#[derive(Debug)]
pub struct OutageProxy {
    /// `127.0.0.1:<port>` of the proxy.
    pub addr: String,
    down: std::sync::Arc<std::sync::atomic::AtomicBool>,
    generation: std::sync::Arc<std::sync::atomic::AtomicU64>,
}

impl OutageProxy {
    /// Starts a proxy to `upstream` (`host:port`); it runs until the process ends.
    pub fn start(upstream: &str) -> OutageProxy {
        use std::sync::atomic::Ordering;
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind proxy");
        let addr = listener.local_addr().unwrap().to_string();
        let down = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let generation = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
        let (d, g, up) = (down.clone(), generation.clone(), upstream.to_string());
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(client) = client else { continue };
                if d.load(Ordering::SeqCst) {
                    drop(client);
                    continue;
                }
                let Ok(server) = std::net::TcpStream::connect(&up) else {
                    continue;
                };
                let born = g.load(Ordering::SeqCst);
                for (mut from, mut to) in [
                    (client.try_clone().unwrap(), server.try_clone().unwrap()),
                    (server, client),
                ] {
                    let (d, g) = (d.clone(), g.clone());
                    std::thread::spawn(move || {
                        use std::io::{Read, Write};
                        let _ = from.set_read_timeout(Some(Duration::from_millis(100)));
                        let mut buf = vec![0u8; 64 * 1024];
                        loop {
                            if d.load(Ordering::SeqCst) || g.load(Ordering::SeqCst) != born {
                                break;
                            }
                            match from.read(&mut buf) {
                                Ok(0) => break,
                                Ok(n) => {
                                    if to.write_all(&buf[..n]).is_err() {
                                        break;
                                    }
                                }
                                Err(e)
                                    if matches!(
                                        e.kind(),
                                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                                    ) => {}
                                Err(_) => break,
                            }
                        }
                        let _ = from.shutdown(std::net::Shutdown::Both);
                        let _ = to.shutdown(std::net::Shutdown::Both);
                    });
                }
            }
        });
        OutageProxy { addr, down, generation }
    }

    /// Cuts every connection and refuses new ones until [`OutageProxy::restore`].
    pub fn cut(&self) {
        self.down.store(true, std::sync::atomic::Ordering::SeqCst);
        self.generation.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }

    /// Lets connections through again.
    pub fn restore(&self) {
        self.down.store(false, std::sync::atomic::Ordering::SeqCst);
    }
}
