use std::sync::Arc;

use arrow::array::{
    ArrayRef, Decimal128Array, Float64Array, Int64Array, RecordBatch, StringArray, TimestampMicrosecondArray,
    TimestampNanosecondArray,
};
use arrow::datatypes::{Field, Schema};
use varve_bench::compare::{compare, Rows};

fn batch(cols: Vec<(&str, ArrayRef)>) -> RecordBatch {
    let fields: Vec<Field> = cols
        .iter()
        .map(|(n, a)| Field::new(*n, a.data_type().clone(), true))
        .collect();
    RecordBatch::try_new(
        Arc::new(Schema::new(fields)),
        cols.into_iter().map(|(_, a)| a).collect(),
    )
    .unwrap()
}

fn rows(b: RecordBatch) -> Rows {
    Rows::from_batches(&b.schema(), &[b]).unwrap()
}

fn same(a: RecordBatch, b: RecordBatch, ordered: bool) -> Option<String> {
    compare(&rows(a), &rows(b), ordered)
}

#[test]
fn the_same_answer_in_other_types_and_order_matches() {
    let ours = batch(vec![
        ("Host", Arc::new(StringArray::from(vec!["a", "b"])) as ArrayRef),
        ("n", Arc::new(Int64Array::from(vec![10, 20]))),
        ("avg", Arc::new(Float64Array::from(vec![0.1 + 0.2, 1.0 / 3.0]))),
        (
            "t",
            Arc::new(TimestampMicrosecondArray::from(vec![1_000_000, 2_000_000]).with_timezone("UTC")),
        ),
    ]);
    // DuckDB's shapes: sums as DECIMAL(38,0), nanosecond times, rows in another order, floats
    // summed in another order.
    let theirs = batch(vec![
        ("host", Arc::new(StringArray::from(vec!["b", "a"])) as ArrayRef),
        (
            "n",
            Arc::new(
                Decimal128Array::from(vec![20i128, 10])
                    .with_precision_and_scale(38, 0)
                    .unwrap(),
            ),
        ),
        ("avg", Arc::new(Float64Array::from(vec![0.333_333_333_333_333_4, 0.3]))),
        (
            "t",
            Arc::new(TimestampNanosecondArray::from(vec![2_000_000_000, 1_000_000_000])),
        ),
    ]);
    assert_eq!(same(ours, theirs, false), None);
}

#[test]
fn a_wrong_value_a_missing_row_or_a_null_is_a_mismatch() {
    let base = || {
        batch(vec![
            ("k", Arc::new(StringArray::from(vec!["a", "b"])) as ArrayRef),
            ("v", Arc::new(Float64Array::from(vec![Some(1.0), Some(2.0)]))),
        ])
    };
    let wrong = batch(vec![
        ("k", Arc::new(StringArray::from(vec!["a", "b"])) as ArrayRef),
        ("v", Arc::new(Float64Array::from(vec![Some(1.0), Some(2.001)]))),
    ]);
    let d = same(base(), wrong, false).expect("differs");
    assert!(d.contains("sorted row 1, column v: 2 vs 2.001"), "{d}");
    let short = batch(vec![
        ("k", Arc::new(StringArray::from(vec!["a"])) as ArrayRef),
        ("v", Arc::new(Float64Array::from(vec![1.0]))),
    ]);
    assert_eq!(same(base(), short, false).unwrap(), "2 rows vs 1 rows");
    let null = batch(vec![
        ("k", Arc::new(StringArray::from(vec!["a", "b"])) as ArrayRef),
        ("v", Arc::new(Float64Array::from(vec![Some(1.0), None]))),
    ]);
    assert!(same(base(), null, false).is_some());
    let renamed = batch(vec![
        ("key", Arc::new(StringArray::from(vec!["a", "b"])) as ArrayRef),
        ("v", Arc::new(Float64Array::from(vec![1.0, 2.0]))),
    ]);
    assert!(same(base(), renamed, false).unwrap().contains("columns"));
    let ints = batch(vec![("k", Arc::new(Int64Array::from(vec![1_000_000_001])) as ArrayRef)]);
    let ints2 = batch(vec![("k", Arc::new(Int64Array::from(vec![1_000_000_002])) as ArrayRef)]);
    assert!(same(ints, ints2, false).is_some(), "integers compare exactly");
    let int = batch(vec![("k", Arc::new(Int64Array::from(vec![1_000_000])) as ArrayRef)]);
    let float = batch(vec![("k", Arc::new(Float64Array::from(vec![1_000_000.5])) as ArrayRef)]);
    assert!(
        same(int, float, false).is_some(),
        "an integer equals a float only exactly"
    );
}

#[test]
fn an_ordered_answer_must_come_in_order_and_empty_answers_need_the_same_columns() {
    let asc = batch(vec![("k", Arc::new(Int64Array::from(vec![1, 2, 3])) as ArrayRef)]);
    let desc = batch(vec![("k", Arc::new(Int64Array::from(vec![3, 2, 1])) as ArrayRef)]);
    assert_eq!(same(asc.clone(), desc.clone(), false), None, "as sets they agree");
    let d = same(asc, desc, true).unwrap();
    assert!(
        d.starts_with("the same rows in another order: row 0, column k: 1 vs 3"),
        "{d}"
    );
    let empty_a = batch(vec![("k", Arc::new(Int64Array::from(Vec::<i64>::new())) as ArrayRef)]);
    let empty_b = batch(vec![("j", Arc::new(Int64Array::from(Vec::<i64>::new())) as ArrayRef)]);
    assert!(same(empty_a.clone(), empty_b, true).unwrap().contains("columns"));
    assert_eq!(same(empty_a.clone(), empty_a, true), None);
}

#[test]
fn check_reads_both_result_files() {
    let tmp = tempfile::tempdir().unwrap();
    let write = |name: &str, v: f64| {
        let path = tmp.path().join(name);
        let b = batch(vec![("v", Arc::new(Float64Array::from(vec![v])) as ArrayRef)]);
        let mut w =
            parquet::arrow::ArrowWriter::try_new(std::fs::File::create(&path).unwrap(), b.schema(), None).unwrap();
        w.write(&b).unwrap();
        w.close().unwrap();
        path
    };
    let (a, b, c) = (
        write("a.parquet", 1.0),
        write("b.parquet", 1.0),
        write("c.parquet", 5.0),
    );
    assert_eq!(varve_bench::run::check(&a, &b, true), "match");
    assert_eq!(
        varve_bench::run::check(&a, &c, true),
        "mismatch: sorted row 0, column v: 1 vs 5 (Varve vs DuckDB)"
    );
    assert!(varve_bench::run::check(&a, &tmp.path().join("missing.parquet"), false).starts_with("compare error"));
}
