//! Concurrent writers in separate processes: 4 `varve import` loops of 50 batches each on one
//! table (with inline compaction, on by default), on local disk and on S3. Every row is there
//! exactly once and the history is linear.

use std::process::Command;

use varve_testkit::{assert_readers_agree, Backend};

const WRITERS: usize = 4;
const BATCHES: usize = 50;

async fn four_processes(backend: Backend) {
    let dir = tempfile::tempdir().unwrap();
    let lake_args = backend.cli_args();
    let mut args: Vec<&str> = lake_args.iter().map(String::as_str).collect();
    args.extend([
        "create",
        "ticks",
        "-c",
        "ts:timestamptz",
        "-c",
        "writer:int64",
        "-c",
        "seq:int64",
        "-c",
        "price:float64",
    ]);
    args.extend(["--time-column", "ts", "--series-key", "writer"]);
    crate::varve_ok(&args);
    // The whole history is checked below: keep every snapshot (commits keep 100 by default).
    let mut alter: Vec<&str> = lake_args.iter().map(String::as_str).collect();
    alter.extend(["alter", "ticks", "--set", "varve.max-snapshots=1000"]);
    crate::varve_ok(&alter);
    for w in 0..WRITERS {
        for s in 0..BATCHES {
            let csv = format!(
                "ts,writer,seq,price\n2024-01-01T00:{:02}:{:02}Z,{w},{s},{}.5\n2024-01-02T00:{:02}:{:02}Z,{w},{},1.25\n",
                s / 60,
                s % 60,
                s,
                s / 60,
                s % 60,
                s + 1000
            );
            std::fs::write(dir.path().join(format!("w{w}-{s}.csv")), csv).unwrap();
        }
    }
    let quoted: Vec<String> = lake_args.iter().map(|a| format!("'{a}'")).collect();
    let children: Vec<_> = (0..WRITERS)
        .map(|w| {
            let script = format!(
                "for s in $(seq 0 {}); do '{}' {} import ticks {}/w{w}-$s.csv --batch-id w{w}-$s -q || exit 1; done",
                BATCHES - 1,
                env!("CARGO_BIN_EXE_varve"),
                quoted.join(" "),
                dir.path().display()
            );
            Command::new("bash").args(["-c", &script]).spawn().unwrap()
        })
        .collect();
    for mut c in children {
        assert!(c.wait().unwrap().success(), "a writer failed");
    }
    let lake = backend.open();
    let r = lake
        .sql("SELECT count(*) AS n, count(DISTINCT (writer, seq)) AS d, sum(seq) AS s FROM ticks")
        .await
        .unwrap();
    let b = &r.batches[0];
    let get = |i: usize| {
        b.column(i)
            .as_any()
            .downcast_ref::<varve::arrow::array::Int64Array>()
            .unwrap()
            .value(0)
    };
    let total = (WRITERS * BATCHES * 2) as i64;
    let seq_sum: i64 = (0..BATCHES as i64).map(|s| s + s + 1000).sum::<i64>() * WRITERS as i64;
    assert_eq!(
        (get(0), get(1), get(2)),
        (total, total, seq_sum),
        "every row exactly once"
    );
    let history = lake.history("ticks").await.unwrap();
    // One append per batch; inline compaction adds `replace` snapshots between them.
    let appends = history.iter().filter(|h| h.operation == "append").count();
    assert_eq!(appends, WRITERS * BATCHES);
    assert!(history
        .iter()
        .all(|h| h.operation == "append" || h.operation == "replace"));
    for w in history.windows(2) {
        assert_eq!(w[1].parent_id, Some(w[0].snapshot_id), "history is linear");
    }
    let mut ids: Vec<String> = history.iter().filter_map(|h| h.batch_id.clone()).collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), WRITERS * BATCHES, "one snapshot per batch id");
    assert_readers_agree(&lake, &backend, "default", "ticks").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn four_processes_on_local_disk() {
    four_processes(Backend::local()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn four_processes_on_s3() {
    four_processes(Backend::s3()).await;
}

/// 3 `varve import` loops appending while one process loops `varve maintain` (compaction and
/// snapshot expiry) and another deletes rows written before: every committed row is there exactly
/// once, deleted rows never come back (a compaction that read them before the delete loses), and
/// the retained history is linear.
async fn append_maintain_delete(backend: Backend) {
    const APPENDERS: usize = 3;
    const BATCHES: usize = 20;
    const DOOMED: usize = 20;
    let dir = tempfile::tempdir().unwrap();
    let lake_args = backend.cli_args();
    let with = |rest: &[&str]| -> Vec<String> {
        let mut v = lake_args.clone();
        v.extend(rest.iter().map(|s| s.to_string()));
        v
    };
    let csv = |w: usize, s: usize| {
        let path = dir.path().join(format!("w{w}-{s}.csv"));
        std::fs::write(
            &path,
            format!(
                "ts,writer,seq\n2024-01-01T00:{:02}:{:02}Z,{w},{s}\n2024-01-02T00:{:02}:{:02}Z,{w},{}\n",
                s / 60,
                s % 60,
                s / 60,
                s % 60,
                s + 1000
            ),
        )
        .unwrap();
        path.display().to_string()
    };
    // Writer 0's rows, committed before anything else starts: the deleter removes the first DOOMED.
    for s in 0..2 * DOOMED {
        let f = csv(0, s);
        let args = with(&[
            "import",
            "t",
            &f,
            "--time-column",
            "ts",
            "--series-key",
            "writer",
            "--batch-id",
            &format!("w0-{s}"),
            "-q",
        ]);
        crate::varve_ok(&args.iter().map(String::as_str).collect::<Vec<_>>());
    }
    for w in 1..=APPENDERS {
        for s in 0..BATCHES {
            csv(w, s);
        }
    }
    let bin = env!("CARGO_BIN_EXE_varve");
    let quoted: Vec<String> = lake_args.iter().map(|a| format!("'{a}'")).collect();
    let lake = quoted.join(" ");
    let done = dir.path().join("done");
    let spawn = |script: String| {
        std::process::Command::new("bash")
            .args(["-c", &script])
            .spawn()
            .unwrap()
    };
    let appenders: Vec<_> = (1..=APPENDERS)
        .map(|w| {
            spawn(format!(
                "for s in $(seq 0 {}); do '{bin}' {lake} import t {}/w{w}-$s.csv --batch-id w{w}-$s -q || exit 1; done",
                BATCHES - 1,
                dir.path().display()
            ))
        })
        .collect();
    let maintainer = spawn(format!(
        "n=0; while [ ! -f '{}' ]; do '{bin}' {lake} maintain t --snapshot-retention 0s -q || exit 1; n=$((n+1)); done; \
         echo \"maintain runs: $n\" >&2",
        done.display()
    ));
    // A delete that loses to a commit removing its files starts again (5 times); past that it is
    // an error, and the caller runs it again.
    let deleter = spawn(format!(
        "for s in $(seq 0 {}); do k=0; until '{bin}' {lake} delete t --where \"writer = 0 AND seq IN ($s, $((s+1000)))\" >/dev/null; \
         do k=$((k+1)); [ $k -lt 20 ] || exit 1; sleep 0.2; done; done",
        DOOMED - 1
    ));
    for mut c in appenders {
        assert!(c.wait().unwrap().success(), "an appender failed");
    }
    let mut deleter = deleter;
    assert!(deleter.wait().unwrap().success(), "the deleter failed");
    std::fs::write(&done, "").unwrap();
    let mut maintainer = maintainer;
    assert!(maintainer.wait().unwrap().success(), "the maintainer failed");

    let lake = backend.open();
    let r = lake
        .sql("SELECT writer, count(*) AS n, count(DISTINCT seq) AS d, min(seq % 1000) AS lo FROM t GROUP BY writer ORDER BY writer")
        .await
        .unwrap();
    let rows = varve_testkit::rows(&r.batches);
    // Columns in name order: d, lo, n, writer.
    let mut expected = vec![vec![
        (2 * DOOMED).to_string(),
        DOOMED.to_string(),
        (2 * DOOMED).to_string(),
        "0".to_string(),
    ]];
    for w in 1..=APPENDERS {
        expected.push(vec![
            (2 * BATCHES).to_string(),
            "0".to_string(),
            (2 * BATCHES).to_string(),
            w.to_string(),
        ]);
    }
    expected.sort();
    let mut rows = rows;
    rows.sort();
    assert_eq!(rows, expected, "every committed row once, deleted rows gone");
    let history = lake.history("t").await.unwrap();
    for w in history.windows(2) {
        assert_eq!(w[1].parent_id, Some(w[0].snapshot_id), "history is linear");
    }
    assert_readers_agree(&lake, &backend, "default", "t").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn append_maintain_delete_on_local_disk() {
    append_maintain_delete(Backend::local()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn append_maintain_delete_on_s3() {
    append_maintain_delete(Backend::s3()).await;
}
