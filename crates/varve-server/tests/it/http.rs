//! The HTTP API: SQL in every format, errors by kind, tokens, limits, listings, metrics, shutdown.

use std::collections::HashMap;
use std::sync::Arc;

use arrow::array::{Array, Float64Array, RecordBatch, RecordBatchReader, StringArray, TimestampMicrosecondArray};
use arrow::compute::concat_batches;
use arrow::datatypes::{DataType, Field, Schema, TimeUnit};
use varve::{AppendOptions, Lake, TableContract};
use varve_server::{new_token, Scope, Server, ServerConfig, Tokens};

/// A lake with `m.cpu`: 3 hosts x 1,000 readings a minute apart, one of them with NULL values.
pub(crate) async fn lake(dir: &std::path::Path) -> Lake {
    let lake = Lake::open(dir.to_str().unwrap(), &HashMap::new()).unwrap();
    let schema = Arc::new(Schema::new(vec![
        Field::new(
            "ts",
            DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            false,
        ),
        Field::new("host", DataType::Utf8, true),
        Field::new("v", DataType::Float64, true),
    ]));
    let contract = TableContract::time_series("ts").with_series_key(["host"]);
    lake.create_table("m.cpu", &schema, &contract).await.unwrap();
    let n = 3000;
    let batch = RecordBatch::try_new(
        schema,
        vec![
            Arc::new(
                TimestampMicrosecondArray::from_iter_values((0..n).map(|i| (i / 3) * 60_000_000)).with_timezone("UTC"),
            ),
            Arc::new(StringArray::from_iter_values((0..n).map(|i| format!("h{}", i % 3)))),
            Arc::new(Float64Array::from_iter(
                (0..n).map(|i| (i % 7 != 0).then_some(i as f64 / 4.0)),
            )),
        ],
    )
    .unwrap();
    lake.append("m.cpu", vec![batch], AppendOptions::default())
        .await
        .unwrap();
    lake
}

/// A running server; dropping the sender stops it.
pub(crate) struct Running {
    pub(crate) base: String,
    /// The PostgreSQL port.
    pub(crate) pg_port: u16,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<Result<(), varve_server::ServerError>>,
}

pub(crate) async fn start(lake: Lake, config: ServerConfig) -> Running {
    let config = ServerConfig {
        http: "127.0.0.1:0".parse().unwrap(),
        pg: Some("127.0.0.1:0".parse().unwrap()),
        ..config
    };
    let server = Server::bind(lake, config).await.unwrap();
    let base = format!("http://{}", server.http_addr());
    let pg_port = server.pg_addr().unwrap().port();
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(server.run(async move {
        let _ = rx.await;
    }));
    Running {
        base,
        pg_port,
        stop: Some(tx),
        task,
    }
}

impl Running {
    pub(crate) async fn stop(mut self) {
        drop(self.stop.take());
        self.task.await.unwrap().unwrap();
    }
}

/// A server over [`lake`] in `dir` with one query slot (a query waits up to `queue_timeout`
/// for it).
pub(crate) async fn start_with_one_slot(dir: &std::path::Path, queue_timeout: std::time::Duration) -> Running {
    let config = ServerConfig {
        max_in_flight: 1,
        queue_timeout,
        ..ServerConfig::default()
    };
    start(lake(dir).await, config).await
}

/// Starts a streamed answer of 9M rows (far more than is read) and reads its first chunk: while
/// the response is alive, the query holds a slot.
async fn hold_a_slot(http: &reqwest::Client, base: &str) -> reqwest::Response {
    let mut r = http
        .post(format!("{base}/v1/sql?format=csv"))
        .body("SELECT a.v, b.v FROM m.cpu a, m.cpu b")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert!(r.chunk().await.unwrap().is_some());
    r
}

/// `SELECT 1 AS one` over HTTP.
async fn select_one(http: &reqwest::Client, base: &str) -> reqwest::Response {
    http.post(format!("{base}/v1/sql"))
        .body("SELECT 1 AS one")
        .send()
        .await
        .unwrap()
}

/// The server's `/metrics` text.
pub(crate) async fn metrics_text(base: &str) -> String {
    reqwest::get(format!("{base}/metrics"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap()
}

const QUERY: &str = "SELECT ts, host, v FROM m.cpu WHERE ts < TIMESTAMP '1970-01-01T05:00:00Z' ORDER BY host, ts";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sql_answers_in_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let lake = lake(dir.path()).await;
    let want = lake.sql(QUERY).await.unwrap();
    let want = concat_batches(&want.batches[0].schema(), &want.batches).unwrap();
    assert_eq!(want.num_rows(), 900);
    let s = start(lake, ServerConfig::default()).await;
    let http = reqwest::Client::new();
    let url = format!("{}/v1/sql", s.base);

    assert_eq!(
        http.get(format!("{}/health", s.base))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap(),
        "ok\n"
    );

    // JSON: an array of objects, NULLs as null, timestamps as text.
    let r = http.post(&url).body(QUERY).send().await.unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["content-type"], "application/json");
    let rows: Vec<serde_json::Value> = serde_json::from_str(&r.text().await.unwrap()).unwrap();
    assert_eq!(rows.len(), 900);
    let hosts = want.column(1).as_any().downcast_ref::<StringArray>().unwrap();
    let values = want.column(2).as_any().downcast_ref::<Float64Array>().unwrap();
    for (i, row) in rows.iter().enumerate() {
        assert_eq!(row["host"], hosts.value(i), "row {i}");
        match values.is_null(i) {
            true => assert!(row["v"].is_null(), "row {i}: {row}"),
            false => assert_eq!(row["v"].as_f64(), Some(values.value(i)), "row {i}"),
        }
    }
    assert_eq!(rows[0]["ts"], "1970-01-01T00:00:00Z");

    // The JSON body form, NDJSON by ?format=.
    let r = http
        .post(format!("{url}?format=ndjson"))
        .header("content-type", "application/json")
        .body(serde_json::json!({ "sql": QUERY }).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(r.headers()["content-type"], "application/x-ndjson");
    let text = r.text().await.unwrap();
    assert_eq!(text.lines().count(), 900);
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(text.lines().next().unwrap()).unwrap(),
        rows[0]
    );

    // CSV: a header, then one line per row.
    let text = http
        .post(format!("{url}?format=csv"))
        .body(QUERY)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "ts,host,v");
    assert_eq!(lines.len(), 901);

    // Arrow IPC stream by Accept, and Parquet: the same batches as the lake's own answer.
    let r = http
        .post(&url)
        .header("accept", "application/vnd.apache.arrow.stream")
        .body(QUERY)
        .send()
        .await
        .unwrap();
    assert_eq!(r.headers()["content-type"], "application/vnd.apache.arrow.stream");
    let bytes = r.bytes().await.unwrap();
    let reader = arrow::ipc::reader::StreamReader::try_new(std::io::Cursor::new(bytes.to_vec()), None).unwrap();
    let schema = reader.schema();
    let got: Vec<RecordBatch> = reader.collect::<Result<_, _>>().unwrap();
    assert_eq!(concat_batches(&schema, &got).unwrap(), want);

    let bytes = http
        .post(format!("{url}?format=parquet"))
        .body(QUERY)
        .send()
        .await
        .unwrap()
        .bytes()
        .await
        .unwrap();
    let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(bytes)
        .unwrap()
        .build()
        .unwrap();
    let schema = reader.schema();
    let got: Vec<RecordBatch> = reader.collect::<Result<_, _>>().unwrap();
    assert_eq!(concat_batches(&schema, &got).unwrap(), want);

    // An empty result is still a whole document in each format.
    let empty = "SELECT host, v FROM m.cpu WHERE v > 1e9";
    assert_eq!(
        http.post(&url).body(empty).send().await.unwrap().text().await.unwrap(),
        "[]"
    );
    assert_eq!(
        http.post(format!("{url}?format=csv"))
            .body(empty)
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap(),
        "host,v\n"
    );

    // Listings and metrics.
    let t: serde_json::Value = http
        .get(format!("{}/v1/tables", s.base))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(t, serde_json::json!({"tables": ["m.cpu"]}));
    let info: serde_json::Value = http
        .get(format!("{}/v1/tables/m.cpu", s.base))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(info["rows"], 3000);
    let missing = http
        .post(format!("{}/v1/sql", s.base))
        .body("SELECT * FROM m.nope")
        .send()
        .await
        .unwrap();
    assert_eq!(missing.status(), 404);
    let m = http
        .get(format!("{}/metrics", s.base))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        m.contains("varve_http_requests_total{route=\"/v1/sql\",status=\"200\"}"),
        "{m}"
    );
    assert!(m.contains("varve_result_rows_total"), "{m}");
    for metric in [
        "varve_query_duration_seconds_count{protocol=\"http\",outcome=\"ok\"}",
        "varve_query_duration_seconds_count{protocol=\"http\",outcome=\"error\"}",
        "varve_errors_total{protocol=\"http\",kind=\"not_found\"}",
        "varve_data_files_scanned_total",
        "varve_data_files_pruned_total",
        "varve_cache_blocks_total{result=\"miss\"}",
        "varve_storage_read_bytes_total",
    ] {
        assert!(m.contains(metric), "{metric} in {m}");
    }
    let scanned: f64 = m
        .lines()
        .find_map(|l| l.strip_prefix("varve_data_files_scanned_total "))
        .unwrap()
        .parse()
        .unwrap();
    assert!(scanned >= 1.0, "{m}");
    s.stop().await;
}

/// Status and kind of an error answer, and its message.
pub(crate) async fn error_of(r: reqwest::Response) -> (u16, String, String) {
    let status = r.status().as_u16();
    let body: serde_json::Value = r.json().await.unwrap();
    (
        status,
        body["kind"].as_str().unwrap().to_string(),
        body["error"].as_str().unwrap().to_string(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn errors_have_a_status_and_a_kind() {
    let dir = tempfile::tempdir().unwrap();
    let s = start(
        lake(dir.path()).await,
        ServerConfig {
            max_result_rows: Some(100),
            ..ServerConfig::default()
        },
    )
    .await;
    let http = reqwest::Client::new();
    let url = format!("{}/v1/sql", s.base);
    let post = |body: &'static str| http.post(&url).body(body).send();

    let (status, _, msg) = error_of(http.get(&url).send().await.unwrap()).await;
    assert_eq!(status, 405, "{msg}");
    assert!(msg.contains("POST /v1/sql"), "{msg}");
    let (status, kind, msg) = error_of(post("SELEC 1").await.unwrap()).await;
    assert_eq!((status, kind.as_str()), (400, "invalid_input"), "{msg}");
    let (status, kind, msg) = error_of(post("SELECT * FROM m.nope").await.unwrap()).await;
    assert_eq!((status, kind.as_str()), (404, "not_found"), "{msg}");
    assert!(
        msg.contains("nope") && msg.contains("GET /v1/tables lists the tables"),
        "{msg}"
    );
    let (status, _, msg) = error_of(post("SELECT * FROM cpu").await.unwrap()).await;
    assert_eq!(status, 404, "{msg}");
    assert!(
        msg.contains("table default.cpu does not exist; did you mean m.cpu?"),
        "{msg}"
    );
    let (status, kind, msg) = error_of(post("SELECT 1; SELECT 2").await.unwrap()).await;
    assert_eq!((status, kind.as_str()), (400, "invalid_input"));
    assert!(msg.contains("one SQL statement per request, got 2"), "{msg}");
    let (status, _, msg) = error_of(post("   ").await.unwrap()).await;
    assert_eq!(status, 400, "{msg}");
    let (status, kind, msg) = error_of(post("SELECT * FROM m.cpu").await.unwrap()).await;
    assert_eq!((status, kind.as_str()), (413, "limit_exceeded"));
    assert!(msg.contains("more than 100 rows"), "{msg}");
    let r = http
        .post(format!("{url}?format=xml"))
        .body("SELECT 1")
        .send()
        .await
        .unwrap();
    let (status, _, msg) = error_of(r).await;
    assert_eq!(status, 400);
    assert!(msg.contains("use json, ndjson, csv, arrow or parquet"), "{msg}");
    let (status, kind, _) = error_of(http.get(format!("{}/v1/tables/m.nope", s.base)).send().await.unwrap()).await;
    assert_eq!((status, kind.as_str()), (404, "not_found"));
    // Within the limit the query answers.
    let ok = post("SELECT * FROM m.cpu LIMIT 100").await.unwrap();
    assert_eq!(ok.status(), 200);
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tokens_guard_reads_and_writes() {
    let dir = tempfile::tempdir().unwrap();
    let lake = lake(dir.path()).await;
    let (secret, entry) = new_token(Scope::Write, None).unwrap();
    let tokens = Tokens::parse(&format!("# the test's token\n{}\n", entry.line())).unwrap();
    let s = start(
        lake,
        ServerConfig {
            tokens: Some(tokens),
            allow_anonymous_read: true,
            ..ServerConfig::default()
        },
    )
    .await;
    let http = reqwest::Client::new();
    let url = format!("{}/v1/sql", s.base);
    let insert = "INSERT INTO m.cpu VALUES (TIMESTAMP '2000-01-01T00:00:00Z', 'h9', 1.5)";

    // Without a token: reads yes, writes no.
    assert_eq!(
        http.post(&url)
            .body("SELECT count(*) FROM m.cpu")
            .send()
            .await
            .unwrap()
            .status(),
        200
    );
    let r = http.post(&url).body(insert).send().await.unwrap();
    assert_eq!(r.headers()["www-authenticate"], "Bearer");
    let (status, kind, msg) = error_of(r).await;
    assert_eq!((status, kind.as_str()), (401, "unauthorized"));
    assert!(msg.contains("needs a token"), "{msg}");
    let r = http.post(&url).bearer_auth("wrong").body(insert).send().await.unwrap();
    let (status, _, msg) = error_of(r).await;
    assert_eq!(status, 401);
    assert!(
        msg.contains("the token given is not valid"),
        "a wrong token is named as such: {msg}"
    );
    // With it the insert commits.
    let r = http.post(&url).bearer_auth(&secret).body(insert).send().await.unwrap();
    assert_eq!(r.status(), 200, "{}", r.text().await.unwrap());
    let r = http
        .post(format!("{url}?format=csv"))
        .body("SELECT count(*) AS n FROM m.cpu WHERE host = 'h9'")
        .send()
        .await
        .unwrap();
    assert_eq!(r.text().await.unwrap(), "n\n1\n");
    s.stop().await;

    // Without anonymous reads, a read needs the token too; /health never does.
    let s = start(
        Lake::open(dir.path().to_str().unwrap(), &HashMap::new()).unwrap(),
        ServerConfig {
            tokens: Some(Tokens::parse(&entry.line()).unwrap()),
            ..ServerConfig::default()
        },
    )
    .await;
    assert_eq!(
        http.post(format!("{}/v1/sql", s.base))
            .body("SELECT 1")
            .send()
            .await
            .unwrap()
            .status(),
        401
    );
    assert_eq!(
        http.get(format!("{}/v1/tables", s.base)).send().await.unwrap().status(),
        401
    );
    let r = http
        .post(format!("{}/v1/sql", s.base))
        .bearer_auth("revoked-or-mistyped")
        .body("SELECT 1")
        .send()
        .await
        .unwrap();
    let (status, _, msg) = error_of(r).await;
    assert_eq!(status, 401);
    assert!(msg.contains("the token given is not valid"), "{msg}");
    assert_eq!(
        http.get(format!("{}/health", s.base)).send().await.unwrap().status(),
        200
    );
    let r = http
        .get(format!("{}/v1/tables", s.base))
        .bearer_auth(&secret)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    s.stop().await;
}

/// A client that goes away in the middle of a streamed result frees its request slot: the query
/// stops and the in-flight gauge returns to 0.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_leaves_mid_stream_frees_its_slot() {
    let dir = tempfile::tempdir().unwrap();
    let s = start_with_one_slot(dir.path(), std::time::Duration::from_secs(30)).await;
    let http = reqwest::Client::new();
    drop(hold_a_slot(&http, &s.base).await);
    // With one slot, this query runs only once the abandoned one has let go of it.
    let r = select_one(&http, &s.base).await;
    assert_eq!(r.text().await.unwrap(), r#"[{"one":1}]"#);
    let m = metrics_text(&s.base).await;
    assert!(m.contains("varve_queries_in_flight 0"), "{m}");
    assert!(m.contains("varve_queries_queued 0"), "{m}");
    s.stop().await;
}

/// With every slot taken, a request waits `queue_timeout`, then gets 429 `busy` over HTTP and
/// SQLSTATE 53300 over PostgreSQL; once the slot is free, both are served again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_server_answers_busy_in_both_protocols() {
    let dir = tempfile::tempdir().unwrap();
    let s = start_with_one_slot(dir.path(), std::time::Duration::from_millis(300)).await;
    let http = reqwest::Client::new();
    let held = hold_a_slot(&http, &s.base).await;
    let (status, kind, message) = error_of(select_one(&http, &s.base).await).await;
    assert_eq!((status, kind.as_str()), (429, "busy"), "{message}");
    let port = s.pg_port.to_string();
    let out = tokio::task::spawn_blocking(move || {
        std::process::Command::new(varve_testkit::python())
            .args([
                "-c",
                "import psycopg, sys\n\
                 try:\n    psycopg.connect(host='127.0.0.1', port=int(sys.argv[1]), dbname='varve', user='varve', password='x').execute('SELECT 1')\n\
                 except psycopg.Error as e:\n    print(e.sqlstate)\n",
                &port,
            ])
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "53300",
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    drop(held);
    let r = select_one(&http, &s.base).await;
    assert_eq!(r.text().await.unwrap(), r#"[{"one":1}]"#);
    s.stop().await;
}

/// Scopes and namespaces: a read token cannot write (403), a token scoped to a namespace reads
/// and writes only that namespace's tables (SQL, listings, table info) and runs no schema
/// statement; an unscoped write token does everything.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn token_scopes_and_namespaces() {
    let dir = tempfile::tempdir().unwrap();
    let lake = lake(dir.path()).await;
    lake.sql("CREATE TABLE ops.disk (ts TIMESTAMPTZ NOT NULL, host VARCHAR, used DOUBLE) WITH (time_column = 'ts')")
        .await
        .unwrap();
    let path = dir.path().join("tokens");
    let mut secrets = HashMap::new();
    for (name, scope, ns) in [
        ("admin", Scope::Write, None),
        ("reader", Scope::Read, None),
        ("m-writer", Scope::Write, Some("m")),
        ("m-reader", Scope::Read, Some("m")),
    ] {
        let (secret, entry) = new_token(scope, ns).unwrap();
        varve_server::add_to_file(&path, &entry).unwrap();
        secrets.insert(name, secret);
    }
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(
        secrets.values().all(|s| !text.contains(s.as_str())),
        "the file holds only hashes"
    );
    let s = start(
        lake,
        ServerConfig {
            tokens: Some(Tokens::from_file(&path).unwrap()),
            ..ServerConfig::default()
        },
    )
    .await;
    let http = reqwest::Client::new();
    let sql = |who: &str, q: &str| {
        http.post(format!("{}/v1/sql?format=csv", s.base))
            .bearer_auth(&secrets[who])
            .body(q.to_string())
            .send()
    };
    let insert_m = "INSERT INTO m.cpu VALUES (TIMESTAMP '2000-01-01T00:00:00Z', 'h9', 1.5)";
    let insert_ops = "INSERT INTO ops.disk VALUES (TIMESTAMP '2000-01-01T00:00:00Z', 'h9', 0.5)";

    // Reads: everyone but across namespaces.
    for who in ["admin", "reader", "m-writer", "m-reader"] {
        assert_eq!(
            sql(who, "SELECT count(*) FROM m.cpu").await.unwrap().status(),
            200,
            "{who}"
        );
    }
    for (who, want) in [("admin", 200), ("reader", 200), ("m-writer", 403), ("m-reader", 403)] {
        let r = sql(who, "SELECT count(*) FROM ops.disk").await.unwrap();
        assert_eq!(r.status(), want, "{who}");
    }
    let (status, kind, msg) = error_of(
        sql("m-reader", "SELECT * FROM m.cpu JOIN ops.disk USING (ts)")
            .await
            .unwrap(),
    )
    .await;
    assert_eq!((status, kind.as_str()), (403, "forbidden"));
    assert!(msg.contains("namespace m") && msg.contains("ops.disk"), "{msg}");

    // Writes: write scope, in the token's namespace.
    let (status, _, msg) = error_of(sql("reader", insert_m).await.unwrap()).await;
    assert_eq!(status, 403);
    assert!(msg.contains("scope read"), "{msg}");
    assert_eq!(sql("m-reader", insert_m).await.unwrap().status(), 403);
    assert_eq!(sql("m-writer", insert_m).await.unwrap().status(), 200);
    assert_eq!(sql("m-writer", insert_ops).await.unwrap().status(), 403);
    assert_eq!(
        sql("m-writer", "INSERT INTO m.cpu SELECT ts, host, used FROM ops.disk")
            .await
            .unwrap()
            .status(),
        403
    );
    assert_eq!(sql("m-writer", "CREATE SCHEMA m2").await.unwrap().status(), 403);
    assert_eq!(sql("admin", insert_ops).await.unwrap().status(), 200);
    let r = sql(
        "admin",
        "SELECT (SELECT count(*) FROM m.cpu WHERE host = 'h9') AS m, (SELECT count(*) FROM ops.disk) AS ops",
    )
    .await
    .unwrap();
    assert_eq!(r.text().await.unwrap(), "m,ops\n1,1\n");

    // Listings and table info follow the namespace.
    let tables = |who: &str| {
        http.get(format!("{}/v1/tables", s.base))
            .bearer_auth(&secrets[who])
            .send()
    };
    let all: serde_json::Value = tables("reader").await.unwrap().json().await.unwrap();
    assert_eq!(all["tables"], serde_json::json!(["m.cpu", "ops.disk"]));
    let mine: serde_json::Value = tables("m-reader").await.unwrap().json().await.unwrap();
    assert_eq!(mine["tables"], serde_json::json!(["m.cpu"]));
    let info = |who: &str, t: &str| {
        http.get(format!("{}/v1/tables/{t}", s.base))
            .bearer_auth(&secrets[who])
            .send()
    };
    assert_eq!(info("m-reader", "m.cpu").await.unwrap().status(), 200);
    assert_eq!(info("m-reader", "ops.disk").await.unwrap().status(), 403);

    // A revoked token no longer works once the server reads the file again.
    let id = Tokens::from_file(&path).unwrap().entries()[0].id.clone();
    varve_server::revoke_in_file(&path, &id).unwrap();
    assert_eq!(Tokens::from_file(&path).unwrap().entries().len(), 3);
    s.stop().await;
}

/// TLS on both listeners with a self-signed certificate (made by openssl): curl over HTTPS and
/// psql with sslmode=verify-full trust it; a plain-HTTP request gets no answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_on_http_and_postgresql() {
    let dir = tempfile::tempdir().unwrap();
    let (cert, key) = (dir.path().join("cert.pem"), dir.path().join("key.pem"));
    let made = std::process::Command::new("openssl")
        .args([
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "1",
            "-subj",
            "/CN=localhost",
        ])
        .args(["-addext", "subjectAltName=IP:127.0.0.1"])
        .arg("-keyout")
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .output()
        .unwrap();
    assert!(made.status.success(), "{}", String::from_utf8_lossy(&made.stderr));
    let lake = lake(&dir.path().join("lake")).await;
    let s = start(
        lake,
        ServerConfig {
            tls: Some((cert.clone(), key.clone())),
            ..ServerConfig::default()
        },
    )
    .await;
    let https = s.base.replace("http://", "https://");
    let (pg_port, cert_path) = (s.pg_port, cert.to_str().unwrap().to_string());
    let plain = s.base.clone();
    tokio::task::spawn_blocking(move || {
        let out = std::process::Command::new("curl")
            .args(["-sS", "--cacert", &cert_path, "-d", "SELECT count(*) AS n FROM m.cpu"])
            .arg(format!("{https}/v1/sql"))
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(String::from_utf8_lossy(&out.stdout), r#"[{"n":3000}]"#);
        let out = std::process::Command::new("curl")
            .args(["-sS", "-m", "5", &format!("{plain}/health")])
            .output()
            .unwrap();
        assert!(!out.status.success(), "plain HTTP to the TLS port answered");
        let out = std::process::Command::new("psql")
            .arg(format!(
                "host=127.0.0.1 port={pg_port} dbname=varve user=varve sslmode=verify-full sslrootcert={cert_path}"
            ))
            .args([
                "-X",
                "-A",
                "-t",
                "-c",
                "SELECT ssl FROM (VALUES (1)) t(x) CROSS JOIN (SELECT true AS ssl) s",
            ])
            .env("PGPASSWORD", "any")
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(String::from_utf8_lossy(&out.stdout), "t\n");
    })
    .await
    .unwrap();
    // A missing key file is a clear error at bind.
    let err = varve_server::Server::bind(
        Lake::open(dir.path().join("lake").to_str().unwrap(), &HashMap::new()).unwrap(),
        ServerConfig {
            http: "127.0.0.1:0".parse().unwrap(),
            tls: Some((cert, dir.path().join("nope.pem"))),
            ..ServerConfig::default()
        },
    )
    .await
    .unwrap_err()
    .to_string();
    assert!(err.contains("nope.pem"), "{err}");
    s.stop().await;
}

/// Stateless servers: two servers (two processes' worth: each its own `Lake`) over one lake; a
/// write through one is visible to the other's next query within the version-check interval, and
/// a table one creates is listed by the other.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_servers_over_one_lake_see_each_others_writes() {
    let dir = tempfile::tempdir().unwrap();
    let first = lake(dir.path()).await;
    let second = Lake::open(dir.path().to_str().unwrap(), &HashMap::new()).unwrap();
    let (a, b) = (
        start(first, ServerConfig::default()).await,
        start(second, ServerConfig::default()).await,
    );
    let http = reqwest::Client::new();
    let count = |base: String, sql: &'static str| {
        let http = http.clone();
        async move {
            let r = http
                .post(format!("{base}/v1/sql?format=csv"))
                .body(sql)
                .send()
                .await
                .unwrap();
            assert_eq!(r.status(), 200);
            r.text().await.unwrap()
        }
    };
    assert_eq!(
        count(b.base.clone(), "SELECT count(*) AS n FROM m.cpu").await,
        "n\n3000\n"
    );
    let w = http
        .post(format!("{}/v1/write?table=m.cpu", a.base))
        .body("cpu,host=z v=1.5 86400000000000000")
        .send()
        .await
        .unwrap();
    assert_eq!(w.status(), 200, "{}", w.text().await.unwrap());
    let w = http
        .post(format!("{}/api/v2/write?bucket=ops", a.base))
        .body("mem,host=z used=2i 86400000000000000")
        .send()
        .await
        .unwrap();
    assert_eq!(w.status(), 204);
    // The version-check interval is seconds: poll for a while.
    let mut seen = String::new();
    for _ in 0..100 {
        seen = count(b.base.clone(), "SELECT count(*) AS n FROM m.cpu").await;
        if seen == "n\n3001\n" {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(seen, "n\n3001\n");
    assert_eq!(count(b.base.clone(), "SELECT used FROM ops.mem").await, "used\n2\n");
    let tables: serde_json::Value = http
        .get(format!("{}/v1/tables", b.base))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(
        tables["tables"].as_array().unwrap().iter().any(|t| t == "ops.mem"),
        "{tables}"
    );
    a.stop().await;
    b.stop().await;
}
