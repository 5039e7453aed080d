//! Writes in InfluxDB line protocol, in Telegraf's format (ns timestamps, `Authorization: Token`),
//! at `/api/v2/write` and `/v1/write`: tables made with tags as series key, new fields added as
//! columns, answers read back through `/v1/sql` and the lake; bad lines, wrong types, sub-µs
//! times and bodies over the limit refused with nothing written; batch ids; token scopes.

use std::collections::HashMap;

use varve_server::{new_token, Scope, ServerConfig, Tokens};

use crate::http::{error_of, lake, start};

async fn csv(http: &reqwest::Client, base: &str, token: &str, q: &str) -> String {
    let r = http
        .post(format!("{base}/v1/sql?format=csv"))
        .bearer_auth(token)
        .body(q.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200, "{q}");
    r.text().await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn line_protocol_writes_make_evolve_and_guard_tables() {
    let dir = tempfile::tempdir().unwrap();
    let lake = lake(dir.path()).await;
    let path = dir.path().join("tokens");
    let mut secrets = HashMap::new();
    for (name, scope, ns) in [
        ("w", Scope::Write, None),
        ("r", Scope::Read, None),
        ("ops-w", Scope::Write, Some("ops")),
    ] {
        let (secret, entry) = new_token(scope, ns).unwrap();
        varve_server::add_to_file(&path, &entry).unwrap();
        secrets.insert(name, secret);
    }
    let s = start(
        lake,
        ServerConfig {
            tokens: Some(Tokens::from_file(&path).unwrap()),
            max_write_bytes: 4096,
            ..ServerConfig::default()
        },
    )
    .await;
    let http = reqwest::Client::new();
    let v2 = |who: &str, query: &str, body: &str| {
        http.post(format!("{}/api/v2/write?{query}", s.base))
            .header("Authorization", format!("Token {}", secrets[who]))
            .body(body.to_string())
            .send()
    };

    // Telegraf's format: two measurements, ns timestamps, integer, float, text and boolean fields.
    let body = "cpu,host=a,region=eu usage=0.5,cores=8i 1717200000000000000\n\
                cpu,host=b,region=eu usage=0.25,cores=4i 1717200000000000000\n\
                # a comment\n\
                \n\
                disk,host=a,path=/ used=10i,ok=t,label=\"root fs\" 1717200001000000000\n";
    let r = v2("w", "bucket=ops&org=ignored", body).await.unwrap();
    assert_eq!(r.status(), 204, "{:?}", r.text().await);
    let got = csv(
        &http,
        &s.base,
        &secrets["w"],
        "SELECT time, host, region, usage, cores FROM ops.cpu ORDER BY host",
    )
    .await;
    assert_eq!(
        got,
        "time,host,region,usage,cores\n2024-06-01T00:00:00Z,a,eu,0.5,8\n2024-06-01T00:00:00Z,b,eu,0.25,4\n"
    );
    let got = csv(
        &http,
        &s.base,
        &secrets["w"],
        "SELECT time, host, path, used, ok, label FROM ops.disk",
    )
    .await;
    assert_eq!(
        got,
        "time,host,path,used,ok,label\n2024-06-01T00:00:01Z,a,/,10,true,root fs\n"
    );
    // The tags are the new table's series key.
    let info = http
        .get(format!("{}/v1/tables/ops.cpu", s.base))
        .bearer_auth(&secrets["w"])
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(info.contains("\"varve.series-key\":\"host,region\""), "{info}");

    // A new field and a new tag add columns; µs precision; /v1/write names the table.
    let r = http
        .post(format!("{}/v1/write?table=ops.cpu&precision=us", s.base))
        .bearer_auth(&secrets["w"])
        .body("cpu,host=c,region=us,rack=r1 usage=0.75,temp=41.5 1717200002000000")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let report: serde_json::Value = r.json().await.unwrap();
    assert_eq!(report["tables"][0]["rows"], 1, "{report}");
    let got = csv(
        &http,
        &s.base,
        &secrets["r"],
        "SELECT host, rack, temp, cores FROM ops.cpu ORDER BY host",
    )
    .await;
    assert_eq!(got, "host,rack,temp,cores\na,,,8\nb,,,4\nc,r1,41.5,\n");

    // Refused, with nothing written: a bad line (named), a field of another type, a time with
    // digits below a µs, a body over the limit, a read token, a token of another namespace.
    let count = || csv(&http, &s.base, &secrets["w"], "SELECT count(*) FROM ops.cpu");
    let before = count().await;
    let (status, kind, message) = error_of(
        v2(
            "w",
            "bucket=ops",
            "cpu,host=d usage=1 1717200003000000000\ncpu,host=d usage= 1",
        )
        .await
        .unwrap(),
    )
    .await;
    assert_eq!((status, kind.as_str()), (400, "invalid_input"));
    assert!(message.starts_with("line 2: "), "{message}");
    let (status, _, message) = error_of(
        v2("w", "bucket=ops", "cpu,host=d usage=\"high\" 1717200003000000000")
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 400, "{message}");
    assert!(message.contains("usage"), "{message}");
    // Two measurements, the second with a field of another type: the first is not written either.
    let disk = || csv(&http, &s.base, &secrets["w"], "SELECT count(*) FROM ops.disk");
    let disk_before = disk().await;
    let (status, _, message) = error_of(
        v2(
            "w",
            "bucket=ops",
            "disk,host=d,path=/ used=1i 1717200003000000000
cpu,host=d usage=\"high\" 1717200003000000000",
        )
        .await
        .unwrap(),
    )
    .await;
    assert_eq!(status, 400, "{message}");
    assert!(message.contains("ops.cpu") && message.contains("usage"), "{message}");
    assert_eq!(
        disk().await,
        disk_before,
        "nothing written to the first measurement's table"
    );
    let (status, _, message) = error_of(
        v2("w", "bucket=ops", "cpu,host=d usage=1 1717200003000000001")
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 400, "{message}");
    let big = "cpu,host=d usage=1 1717200003000000000\n".repeat(200);
    assert_eq!(v2("w", "bucket=ops", &big).await.unwrap().status(), 413);
    assert_eq!(v2("r", "bucket=ops", "cpu,host=d usage=1").await.unwrap().status(), 403);
    assert_eq!(
        v2("ops-w", "bucket=m", "cpu,host=d usage=1").await.unwrap().status(),
        403
    );
    assert_eq!(
        v2("w", "precision=ns", "cpu,host=d usage=1").await.unwrap().status(),
        400
    );
    assert_eq!(count().await, before);

    // Sub-µs digits are kept only when truncation is asked; a batch id makes a retry a no-op.
    for _ in 0..2 {
        let r = http
            .post(format!("{}/api/v2/write?bucket=ops&truncate_ns=true", s.base))
            .header("Authorization", format!("Token {}", secrets["ops-w"]))
            .header("X-Varve-Batch-Id", "telegraf-42")
            .body("cpu,host=d,region=eu usage=1 1717200003000000001")
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 204);
    }
    let got = csv(
        &http,
        &s.base,
        &secrets["r"],
        "SELECT time FROM ops.cpu WHERE host = 'd'",
    )
    .await;
    assert_eq!(got, "time\n2024-06-01T00:00:03Z\n");

    // A field given twice: the last counts. /v1/write puts lines of any measurement into its one
    // table in one commit, also with a batch id. A compressed body and a `time` field are refused.
    let r = http
        .post(format!("{}/v1/write?table=ops.cpu&precision=s", s.base))
        .bearer_auth(&secrets["w"])
        .header("X-Varve-Batch-Id", "two-measurements")
        .body("cpu,host=e usage=1,usage=2 1717200004\nmem,host=f usage=3 1717200004")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let report: serde_json::Value = r.json().await.unwrap();
    assert_eq!(report["tables"].as_array().unwrap().len(), 1, "{report}");
    assert_eq!(report["tables"][0]["rows"], 2, "{report}");
    let got = csv(
        &http,
        &s.base,
        &secrets["r"],
        "SELECT host, usage FROM ops.cpu WHERE host IN ('e', 'f') ORDER BY host",
    )
    .await;
    assert_eq!(got, "host,usage\ne,2.0\nf,3.0\n");
    let gz = http
        .post(format!("{}/api/v2/write?bucket=ops", s.base))
        .header("Authorization", format!("Token {}", secrets["w"]))
        .header("Content-Encoding", "gzip")
        .body(vec![0x1f, 0x8b, 0x08, 0x00])
        .send()
        .await
        .unwrap();
    assert_eq!(gz.status(), 400, "a broken gzip body");
    // Telegraf's default: gzip.
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    std::io::Write::write_all(&mut enc, b"cpu,host=gz usage=4.5 1717200000000000000\n").unwrap();
    let gz = http
        .post(format!("{}/api/v2/write?bucket=ops", s.base))
        .header("Authorization", format!("Token {}", secrets["w"]))
        .header("Content-Encoding", "gzip")
        .body(enc.finish().unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(gz.status(), 204, "{}", gz.text().await.unwrap());
    let got = csv(
        &http,
        &s.base,
        &secrets["r"],
        "SELECT usage FROM ops.cpu WHERE host = 'gz'",
    )
    .await;
    assert_eq!(got, "usage\n4.5\n");
    let br = http
        .post(format!("{}/api/v2/write?bucket=ops", s.base))
        .header("Authorization", format!("Token {}", secrets["w"]))
        .header("Content-Encoding", "br")
        .body("x")
        .send()
        .await
        .unwrap();
    assert_eq!(br.status(), 415);
    let (status, _, message) = error_of(v2("w", "bucket=ops", "cpu,host=g time=1i 1").await.unwrap()).await;
    assert_eq!(status, 400);
    assert!(message.contains("time column"), "{message}");
    s.stop().await;
}

/// POSTs `body` to `/v1/write?{query}` with `content_type`; (status, JSON answer).
async fn post_body(base: &str, query: &str, content_type: &str, body: Vec<u8>) -> (u16, serde_json::Value) {
    let r = reqwest::Client::new()
        .post(format!("{base}/v1/write?{query}"))
        .header("Content-Type", content_type)
        .body(body)
        .send()
        .await
        .unwrap();
    let status = r.status().as_u16();
    (status, r.json().await.unwrap_or(serde_json::Value::Null))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn csv_ndjson_arrow_and_parquet_bodies_and_sql_parameters() {
    use std::sync::Arc;

    use arrow::array::{Float64Array, RecordBatch, StringArray, TimestampMicrosecondArray};

    let dir = tempfile::tempdir().unwrap();
    let lake = lake(dir.path()).await;
    let schema = lake.describe("m.cpu").await.unwrap().schema;
    let s = start(lake, ServerConfig::default()).await;
    let day = 4 * 86_400_000_000i64;
    let batch = |host: &str, v: f64| {
        RecordBatch::try_new(
            schema.clone(),
            vec![
                Arc::new(TimestampMicrosecondArray::from(vec![day]).with_timezone("UTC")),
                Arc::new(StringArray::from(vec![host])),
                Arc::new(Float64Array::from(vec![v])),
            ],
        )
        .unwrap()
    };

    let (st, j) = post_body(
        &s.base,
        "table=m.cpu",
        "text/csv",
        b"ts,host,v\n1970-01-05T00:00:00Z,csv,1.5\n".to_vec(),
    )
    .await;
    assert_eq!((st, &j["tables"][0]["rows"]), (200, &serde_json::json!(1)), "{j}");
    let (st, j) = post_body(
        &s.base,
        "table=m.cpu",
        "application/x-ndjson",
        b"{\"ts\":\"1970-01-05T00:00:00Z\",\"host\":\"ndjson\",\"v\":2.5}\n".to_vec(),
    )
    .await;
    assert_eq!((st, &j["tables"][0]["rows"]), (200, &serde_json::json!(1)), "{j}");
    let mut ipc = Vec::new();
    let mut w = arrow::ipc::writer::StreamWriter::try_new(&mut ipc, &schema).unwrap();
    w.write(&batch("arrow", 3.5)).unwrap();
    w.finish().unwrap();
    drop(w);
    let (st, j) = post_body(&s.base, "table=m.cpu", "application/vnd.apache.arrow.stream", ipc).await;
    assert_eq!((st, &j["tables"][0]["rows"]), (200, &serde_json::json!(1)), "{j}");
    let mut pq = Vec::new();
    let mut w = parquet::arrow::ArrowWriter::try_new(&mut pq, schema.clone(), None).unwrap();
    w.write(&batch("parquet", 4.5)).unwrap();
    w.close().unwrap();
    let (st, j) = post_body(
        &s.base,
        "table=m.cpu&format=parquet",
        "application/octet-stream",
        pq.clone(),
    )
    .await;
    assert_eq!((st, &j["tables"][0]["rows"]), (200, &serde_json::json!(1)), "{j}");
    // Without a Content-Type the body is read as line protocol; a plain CSV, NDJSON or Parquet
    // body is told how to say what it is (issue 57), and nothing is written.
    for (body, hint) in [
        (
            b"ts,host,v\n1970-01-05T00:00:00Z,csv,1.5\n".to_vec(),
            "Content-Type: text/csv",
        ),
        (b"{\"ts\":\"1970-01-05T00:00:00Z\"}\n".to_vec(), "application/x-ndjson"),
        (pq, "application/vnd.apache.parquet"),
    ] {
        let r = reqwest::Client::new()
            .post(format!("{}/v1/write?table=m.cpu", s.base))
            .body(body)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 400);
        let text = r.text().await.unwrap();
        assert!(text.contains("read as line protocol") && text.contains(hint), "{text}");
    }
    // A retry with the same batch id writes nothing.
    let retry = reqwest::Client::new()
        .post(format!("{}/v1/write?table=m.cpu", s.base))
        .header("Content-Type", "text/csv")
        .header("X-Varve-Batch-Id", "b1");
    for expect in [false, true] {
        let r = retry
            .try_clone()
            .unwrap()
            .body("ts,host,v\n1970-01-05T00:00:00Z,batch,1\n")
            .send()
            .await
            .unwrap();
        let j: serde_json::Value = r.json().await.unwrap();
        assert_eq!(j["tables"][0]["duplicate"], expect, "{j}");
    }
    // A table made by a CSV body, with its time column and series key.
    let (st, j) = post_body(
        &s.base,
        "table=n.made&time_column=at&series_key=k",
        "text/csv",
        b"at,k,x\n2024-01-01T00:00:00Z,a,1\n".to_vec(),
    )
    .await;
    assert_eq!(st, 200, "{j}");
    // A bad value: 400 naming it, nothing written.
    let (st, j) = post_body(
        &s.base,
        "table=m.cpu",
        "text/csv",
        b"ts,host,v\n1970-01-05T00:00:00Z,bad,abc\n".to_vec(),
    )
    .await;
    assert_eq!(st, 400, "{j}");
    assert!(j["error"].as_str().unwrap().contains("abc"), "{j}");
    let (st, _) = post_body(&s.base, "table=m.cpu", "image/png", b"x".to_vec()).await;
    assert_eq!(st, 415);

    let got = csv(
        &reqwest::Client::new(),
        &s.base,
        "",
        "SELECT host, v FROM m.cpu WHERE ts >= TIMESTAMP '1970-01-05T00:00:00Z' ORDER BY host",
    )
    .await;
    assert_eq!(got, "host,v\narrow,3.5\nbatch,1.0\ncsv,1.5\nndjson,2.5\nparquet,4.5\n");

    // SQL parameters, typed by their placeholders; a value of another type is refused.
    let sql = |body: serde_json::Value| {
        reqwest::Client::new()
            .post(format!("{}/v1/sql", s.base))
            .json(&body)
            .send()
    };
    let r = sql(serde_json::json!({
        "sql": "SELECT count(*) AS n, max(v) AS top FROM m.cpu WHERE host = $1 AND ts >= $2",
        "params": ["csv", "1970-01-05T00:00:00Z"]
    }))
    .await
    .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(
        r.json::<serde_json::Value>().await.unwrap(),
        serde_json::json!([{"n": 1, "top": 1.5}])
    );
    let r = sql(serde_json::json!({"sql": "SELECT count(*) FROM m.cpu WHERE ts >= $1", "params": ["soon"]}))
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
    let r = sql(serde_json::json!({"sql": "SELECT $1 + 1 AS x", "params": []}))
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
    s.stop().await;
}
