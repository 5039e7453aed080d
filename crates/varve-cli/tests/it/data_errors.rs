//! Exit codes of errors reading data files (issue 8, defect 12; docs/cli.md lists the codes): a
//! missing data file is 3 (not found), a truncated one 1 (corruption), the same from `sql` and
//! `info`, each naming the file (`latest` reads the last-value index and still answers). (A store that refuses reads, exit 6, is tested in
//! the engine's tests/it/errors.rs with the same classification.)

use std::path::{Path, PathBuf};

use varve_testkit::Backend;

use crate::{varve, varve_ok};

fn data_file(root: &Path) -> PathBuf {
    let mut todo = vec![root.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).expect("read dir") {
            let p = e.expect("entry").path();
            if p.is_dir() {
                todo.push(p);
            } else if p.extension().is_some_and(|x| x == "parquet") && p.components().any(|c| c.as_os_str() == "data") {
                return p;
            }
        }
    }
    panic!("no data file")
}

fn lake_with_table() -> (Backend, tempfile::TempDir) {
    let b = Backend::local();
    let dir = tempfile::tempdir().expect("tempdir");
    let f = dir.path().join("t.csv");
    std::fs::write(&f, "time,host,v\n2024-05-01T00:00:00Z,a,1\n2024-05-01T00:01:00Z,b,2\n").expect("write");
    varve_ok(&[
        "--lake",
        &b.url(),
        "import",
        "t",
        f.to_str().expect("utf-8"),
        "--series-key",
        "host",
    ]);
    (b, dir)
}

fn every_reader_fails(b: &Backend, code: i32, name: &str) {
    let url = b.url();
    // `latest` reads the last-value index, not the data files: it still answers.
    let latest = varve_ok(&["--lake", url.as_str(), "latest", "t", "--format", "csv"]);
    assert_eq!(latest.lines().count(), 3, "{latest}");
    for args in [vec!["sql", "SELECT sum(v) FROM t"], vec!["info", "t"]] {
        let mut all = vec!["--lake", url.as_str()];
        all.extend(args.iter());
        let o = varve(&all);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(code), "varve {args:?}: {err}");
        assert!(err.contains(name), "varve {args:?}: {err} should name {name}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    }
}

#[test]
fn a_missing_data_file_exits_3_naming_it() {
    let (b, _dir) = lake_with_table();
    let f = data_file(Path::new(&b.url()));
    std::fs::remove_file(&f).expect("remove");
    every_reader_fails(&b, 3, f.file_name().and_then(|n| n.to_str()).expect("name"));
}

#[test]
fn a_truncated_data_file_exits_1_naming_it() {
    let (b, _dir) = lake_with_table();
    let f = data_file(Path::new(&b.url()));
    let bytes = std::fs::read(&f).expect("read");
    std::fs::write(&f, &bytes[..bytes.len() - 100]).expect("truncate");
    // The footer is what was cut. The table's head object carries a copy, with which a reader
    // reads the intact data pages; without it, the reader finds the damage.
    let head = Path::new(&b.url()).join("default/t/metadata/varve-head.bin");
    std::fs::remove_file(head).expect("remove the head object");
    every_reader_fails(&b, 1, f.file_name().and_then(|n| n.to_str()).expect("name"));
}
