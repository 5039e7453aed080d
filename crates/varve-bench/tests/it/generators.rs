use std::collections::{HashMap, HashSet};
use std::path::Path;

use arrow::array::{AsArray, RecordBatch};
use arrow::datatypes::TimestampMicrosecondType;
use varve_bench::gen::{generate, Dataset, FileFormat, GenSpec};
use varve_bench::probe::read_result;

fn spec(dataset: Dataset, scale: u32, hours: i64) -> GenSpec {
    GenSpec {
        dataset,
        scale,
        start_us: 1_767_225_600_000_000,
        duration_us: hours * 3_600_000_000,
        seed: 7,
        format: FileFormat::Parquet,
        out_of_order: 0.0,
        missing: 0.0,
        max_lateness_us: 300_000_000,
        rate: 0.5,
        file_rows: 5_000,
    }
}

fn read_table(dir: &Path, table: &str) -> Vec<RecordBatch> {
    let mut files: Vec<_> = std::fs::read_dir(dir.join(table))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    files.iter().flat_map(|f| read_result(f).unwrap().1).collect()
}

/// (series, ts) of every row, in file order.
fn keys(batches: &[RecordBatch], series: &str) -> Vec<(String, i64)> {
    let mut out = vec![];
    for b in batches {
        let s = arrow::compute::cast(b.column_by_name(series).unwrap(), &arrow::datatypes::DataType::Utf8).unwrap();
        let s = s.as_string::<i32>();
        let ts = b
            .column_by_name("ts")
            .unwrap()
            .as_primitive::<TimestampMicrosecondType>();
        for i in 0..b.num_rows() {
            out.push((s.value(i).to_string(), ts.value(i)));
        }
    }
    out
}

fn file_bytes(dir: &Path) -> HashMap<String, Vec<u8>> {
    let mut out = HashMap::new();
    for t in std::fs::read_dir(dir).unwrap() {
        let t = t.unwrap().path();
        if t.is_dir() {
            for f in std::fs::read_dir(&t).unwrap() {
                let f = f.unwrap().path();
                out.insert(
                    f.display().to_string().replace(&dir.display().to_string(), ""),
                    std::fs::read(&f).unwrap(),
                );
            }
        }
    }
    out
}

#[test]
fn same_seed_same_bytes_other_seed_other_data() {
    let tmp = tempfile::tempdir().unwrap();
    for dataset in [Dataset::Iot, Dataset::Devops, Dataset::Trades] {
        let mut s = spec(dataset, 6, 1);
        if dataset == Dataset::Iot {
            s.out_of_order = 0.1;
            s.missing = 0.02;
        }
        let a = tmp.path().join(format!("{}-a", dataset.name()));
        let b = tmp.path().join(format!("{}-b", dataset.name()));
        let c = tmp.path().join(format!("{}-c", dataset.name()));
        let ia = generate(&s, &a, &|_| {}).unwrap();
        let ib = generate(&s, &b, &|_| {}).unwrap();
        assert_eq!(ia.tables, ib.tables, "{}", dataset.name());
        assert_eq!(
            file_bytes(&a),
            file_bytes(&b),
            "{}: same seed, same files",
            dataset.name()
        );
        s.seed = 8;
        generate(&s, &c, &|_| {}).unwrap();
        assert_ne!(
            file_bytes(&a),
            file_bytes(&c),
            "{}: another seed, other data",
            dataset.name()
        );
        assert!(!Path::new(&format!("{}.partial", a.display())).exists());
    }
}

#[test]
fn iot_has_every_truck_every_10_seconds_and_the_tsbs_columns() {
    let tmp = tempfile::tempdir().unwrap();
    let s = spec(Dataset::Iot, 7, 2);
    let info = generate(&s, tmp.path(), &|_| {}).unwrap();
    let ticks = 2 * 360;
    for t in &info.tables {
        assert_eq!(t.rows, 7 * ticks, "{}", t.name);
        assert!(t.files.len() > 1, "file_rows splits files: {:?}", t.files);
    }
    let readings = read_table(tmp.path(), "readings");
    let schema = readings[0].schema();
    let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
    assert_eq!(
        names,
        [
            "ts",
            "name",
            "fleet",
            "driver",
            "model",
            "device_version",
            "load_capacity",
            "fuel_capacity",
            "nominal_fuel_consumption",
            "latitude",
            "longitude",
            "elevation",
            "velocity",
            "heading",
            "grade",
            "fuel_consumption"
        ]
    );
    let diag = read_table(tmp.path(), "diagnostics");
    let dnames: Vec<String> = diag[0].schema().fields().iter().map(|f| f.name().clone()).collect();
    assert_eq!(&dnames[9..], ["fuel_state", "current_load", "status"]);
    // In order, without late entries: each truck's times step by exactly 10 s.
    let mut last: HashMap<String, i64> = HashMap::new();
    for (name, ts) in keys(&readings, "name") {
        if let Some(prev) = last.insert(name.clone(), ts) {
            assert_eq!(ts - prev, 10_000_000, "{name}");
        }
    }
    assert_eq!(last.len(), 7);
}

#[test]
fn iot_late_entries_arrive_after_newer_ones_and_missing_ones_never() {
    let tmp = tempfile::tempdir().unwrap();
    let mut s = spec(Dataset::Iot, 20, 2);
    s.out_of_order = 0.1;
    s.missing = 0.05;
    s.max_lateness_us = 120_000_000;
    generate(&s, tmp.path(), &|_| {}).unwrap();
    let rows = keys(&read_table(tmp.path(), "readings"), "name");
    let total = 20 * 2 * 360;
    let delivered = rows.len() as f64 / total as f64;
    assert!((0.93..0.97).contains(&delivered), "about 5% missing: {delivered}");
    let unique: HashSet<_> = rows.iter().collect();
    assert_eq!(unique.len(), rows.len(), "no entry is delivered twice");
    // Late: a row older than one delivered before it for the same truck, by at most 120 s.
    let mut newest: HashMap<&str, i64> = HashMap::new();
    let mut late = 0;
    for (name, ts) in &rows {
        let n = newest.entry(name).or_insert(i64::MIN);
        if *ts < *n {
            late += 1;
            assert!(*n - *ts <= 120_000_000, "late by at most --max-lateness");
        }
        *n = (*n).max(*ts);
    }
    let share = late as f64 / rows.len() as f64;
    assert!((0.05..0.15).contains(&share), "about 10% out of order: {share}");
}

#[test]
fn devops_hosts_have_ten_tags_and_ten_fields_in_range() {
    let tmp = tempfile::tempdir().unwrap();
    generate(&spec(Dataset::Devops, 4, 1), tmp.path(), &|_| {}).unwrap();
    let batches = read_table(tmp.path(), "cpu");
    assert_eq!(batches[0].num_columns(), 21);
    let rows: usize = batches.iter().map(|b| b.num_rows()).sum();
    assert_eq!(rows, 4 * 360);
    for b in &batches {
        for f in varve_bench::gen::devops::FIELDS {
            let c = b
                .column_by_name(f)
                .unwrap()
                .as_primitive::<arrow::datatypes::Float64Type>();
            assert!(c.iter().all(|v| v.is_some_and(|v| (0.0..=100.0).contains(&v))), "{f}");
        }
    }
}

#[test]
fn trades_are_unique_per_symbol_and_time_ordered() {
    let tmp = tempfile::tempdir().unwrap();
    let s = spec(Dataset::Trades, 30, 1);
    generate(&s, tmp.path(), &|_| {}).unwrap();
    let rows = keys(&read_table(tmp.path(), "trades"), "symbol");
    let expected = 30.0 * 3600.0 * 0.5;
    assert!(
        (rows.len() as f64 - expected).abs() < expected * 0.05,
        "{} rows",
        rows.len()
    );
    assert!(rows.windows(2).all(|w| w[0].1 <= w[1].1), "sorted by time");
    let unique: HashSet<_> = rows.iter().collect();
    assert_eq!(unique.len(), rows.len());
    let symbols: HashSet<_> = rows.iter().map(|r| r.0.clone()).collect();
    assert_eq!(symbols.len(), 30);
    assert!(symbols
        .iter()
        .all(|s| s.len() == 4 && s.chars().all(|c| c.is_ascii_uppercase())));
}

#[test]
fn csv_output_has_a_header_and_the_same_rows() {
    let tmp = tempfile::tempdir().unwrap();
    let mut s = spec(Dataset::Devops, 2, 1);
    s.format = FileFormat::Csv;
    let info = generate(&s, tmp.path(), &|_| {}).unwrap();
    let text = std::fs::read_to_string(tmp.path().join("cpu").join(&info.tables[0].files[0])).unwrap();
    let mut lines = text.lines();
    assert!(lines.next().unwrap().starts_with("ts,hostname,region,datacenter"));
    assert_eq!(text.lines().count(), 1 + 2 * 360);
    assert!(text
        .lines()
        .nth(1)
        .unwrap()
        .starts_with("2026-01-01T00:00:00.000000Z,host_0,"));
}

#[test]
fn bad_specs_are_refused_with_the_option_named() {
    let tmp = tempfile::tempdir().unwrap();
    let mut s = spec(Dataset::Devops, 2, 1);
    s.out_of_order = 0.1;
    let e = generate(&s, tmp.path(), &|_| {}).unwrap_err();
    assert!(e.contains("--out-of-order applies to the iot dataset"), "{e}");
    let mut s = spec(Dataset::Iot, 0, 1);
    assert!(generate(&s, tmp.path(), &|_| {}).unwrap_err().contains("--scale"));
    s.scale = 1;
    s.missing = 1.5;
    assert!(generate(&s, tmp.path(), &|_| {}).unwrap_err().contains("--missing"));
}
