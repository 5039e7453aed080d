//! docs/sql.md's "Function reference" is generated from the registered functions'
//! documentation (`varve::function_reference`): this test fails when the file's copy differs, and
//! with `VARVE_BLESS=1` writes the new one. Its SQL examples run on the demo lake in the CLI's docs
//! test.

const START: &str = "<!-- function reference: generated from the functions' documentation; \
                     `VARVE_BLESS=1 cargo test -p varve --test it function_reference` rewrites it -->\n";
const END: &str = "<!-- end of the function reference -->";

#[test]
fn function_reference_in_sql_md_is_generated() {
    let path = varve_testkit::repo_root().join("docs/sql.md");
    let text = std::fs::read_to_string(&path).expect("docs/sql.md");
    let (Some(a), Some(b)) = (text.find(START), text.find(END)) else {
        panic!("docs/sql.md has no generated function reference between {START:?} and {END:?}");
    };
    let now = varve::function_reference();
    assert!(
        !now.contains("(undocumented)"),
        "a registered function has no documentation:\n{now}"
    );
    let stored = &text[a + START.len()..b];
    if stored.trim() != now.trim() {
        if std::env::var("VARVE_BLESS").is_ok_and(|v| v == "1") {
            let new = format!("{}{START}\n{}\n{}", &text[..a], now.trim(), &text[b..]);
            std::fs::write(&path, new).expect("write docs/sql.md");
        } else {
            panic!("docs/sql.md's function reference is out of date; run VARVE_BLESS=1 cargo test -p varve --test it function_reference");
        }
    }
}
