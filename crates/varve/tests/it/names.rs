//! Result column names: what a query's columns are called when the statement does not alias
//! them (`query::names`).

use varve_testkit::Backend;

#[tokio::test]
async fn unaliased_literals_are_named_by_their_value() {
    let lake = Backend::local().open();
    let r = lake
        .sql("SELECT 1, 'it''s', 2.5, true, NULL, 3 AS three")
        .await
        .unwrap();
    let names: Vec<String> = r.schema.fields().iter().map(|f| f.name().clone()).collect();
    assert_eq!(names, ["1", "'it''s'", "2.5", "true", "NULL", "three"]);
}
