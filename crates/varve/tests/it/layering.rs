//! The engine's layers hold: each module of `crates/varve/src` imports only modules below it in
//! [`ORDER`] (the order `docs/design.md` gives), so no two modules import each other. A failure
//! names the file and line of the import against the order. When a module seems to need one above
//! it, move the shared piece down or register it through an extension point of the lower module
//! (as rollups do through `query::extension`); never relax this test.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The engine's modules, lowest first: a module may import only the modules before it.
const ORDER: &[&str] = &[
    "error",      // the error type every layer returns
    "units",      // durations and sizes in options and properties
    "background", // the registry of work left running after a call answered
    "storage",    // the object store, conditional writes, block cache
    "format",     // Iceberg metadata, the table contract, every varve.* property
    "catalog",    // tables in the lake's storage: create, drop, list, load
    "input",      // decoding inputs, type inference, time parsing, checked casts
    "write",      // aligning, sorting, partitioning, Parquet, merging stored files
    "index",      // the last-value index
    "commit",     // the one transaction every change goes through
    "maintain",   // compaction, retention, deletes, expiry, orphan cleanup
    "query",      // the statement front end, planning, scans, execution nodes, functions
    "rollup",     // materialized rollups, a client of query
    "lake",       // the facade
    "import",     // inputs into a table in one commit, for the CLI and Python
];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every `.rs` file under `dir`, as (path relative to `src`, text).
fn sources(dir: &Path, out: &mut Vec<(String, String)>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let rel = path.strip_prefix(src()).unwrap().to_string_lossy().replace('\\', "/");
            out.push((rel, std::fs::read_to_string(&path).unwrap()));
        }
    }
}

/// The module a file belongs to: its first path component (`query/session.rs` → `query`).
fn module_of(rel: &str) -> &str {
    rel.split('/').next().unwrap().trim_end_matches(".rs")
}

/// The names the crate root re-exports, with the module each comes from (`pub use lake::Lake;`
/// makes `crate::Lake` an import of `lake`).
fn root_exports(lib: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let flat = lib.replace('\n', " ");
    for part in flat.split("pub use ").skip(1) {
        let statement = part.split(';').next().unwrap();
        let module = statement.split("::").next().unwrap().trim().to_string();
        let names = match (statement.find('{'), statement.rfind('}')) {
            (Some(a), Some(b)) => statement[a + 1..b].to_string(),
            _ => statement.rsplit("::").next().unwrap().to_string(),
        };
        for name in names.split(',') {
            let name = name.split(" as ").last().unwrap().trim();
            let name = name.rsplit("::").next().unwrap().trim();
            if !name.is_empty() {
                out.insert(name.to_string(), module.clone());
            }
        }
    }
    out
}

/// The first path segment of each `crate::` path in `code`, with its line: `crate::a::b` gives
/// `a`, and `crate::{a::b, c}` gives `a` and `c`.
fn crate_paths(code: &str) -> Vec<(String, usize)> {
    let mut out = Vec::new();
    let bytes = code.as_bytes();
    let mut at = 0;
    while let Some(i) = code[at..].find("crate::") {
        let start = at + i;
        at = start + "crate::".len();
        // `mycrate::x` is not `crate::x`.
        if start > 0 && (bytes[start - 1].is_ascii_alphanumeric() || bytes[start - 1] == b'_') {
            continue;
        }
        let line = code[..start].matches('\n').count() + 1;
        if code[at..].starts_with('{') {
            let mut depth = 0;
            let mut item = String::new();
            let mut items = Vec::new();
            for c in code[at..].chars() {
                match c {
                    '{' => {
                        depth += 1;
                        if depth == 1 {
                            continue;
                        }
                    }
                    '}' => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    ',' if depth == 1 => {
                        items.push(std::mem::take(&mut item));
                        continue;
                    }
                    _ => {}
                }
                item.push(c);
            }
            items.push(item);
            for item in items {
                let first = item.trim().split("::").next().unwrap().trim().to_string();
                if !first.is_empty() {
                    out.push((first, line));
                }
            }
        } else {
            let name: String = code[at..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            out.push((name, line));
        }
    }
    out
}

/// A file's code without comments and without its test modules (`#[cfg(test)] mod ... { }`,
/// whose closing brace rustfmt puts alone at the start of a line): tests may reach anywhere.
fn production_code(text: &str) -> String {
    let mut out = Vec::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let t = line.trim_start();
        if t.starts_with("#[cfg(test)]") && lines.peek().is_some_and(|n| n.trim_start().starts_with("mod ")) {
            let inline = lines.peek().is_some_and(|n| n.trim_end().ends_with('{'));
            lines.next();
            if inline {
                for inner in lines.by_ref() {
                    if inner == "}" {
                        break;
                    }
                }
            }
            continue;
        }
        out.push(if t.starts_with("//") { "" } else { line });
    }
    out.join("\n")
}

#[test]
fn engine_modules_import_only_modules_below_them() {
    let mut files = Vec::new();
    sources(&src(), &mut files);
    files.sort();
    let lib = files
        .iter()
        .find(|(f, _)| f == "lib.rs")
        .map(|(_, t)| t.clone())
        .unwrap();
    let exports = root_exports(&lib);
    let rank = |m: &str| ORDER.iter().position(|o| *o == m);
    let mut modules: Vec<&str> = files
        .iter()
        .map(|(f, _)| module_of(f))
        .filter(|m| *m != "lib")
        .collect();
    modules.dedup();
    for m in &modules {
        assert!(
            rank(m).is_some(),
            "module {m} is not in the layer order: add it to ORDER in tests/it/layering.rs and to docs/design.md"
        );
    }
    for o in ORDER {
        assert!(
            modules.contains(o),
            "ORDER names {o}, which crates/varve/src does not have"
        );
    }
    let mut wrong = Vec::new();
    for (file, text) in &files {
        let me = module_of(file);
        let Some(mine) = rank(me) else { continue };
        for (name, line) in crate_paths(&production_code(text)) {
            let target = match rank(&name) {
                Some(_) => name.clone(),
                None => match exports.get(&name) {
                    Some(m) => m.clone(),
                    None => continue,
                },
            };
            if target == me {
                continue;
            }
            if rank(&target).is_some_and(|theirs| theirs > mine) {
                wrong.push(format!(
                    "crates/varve/src/{file}:{line}: {me} imports {target} (crate::{name}), which is above it"
                ));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "imports against the layer order (lowest first: {}):\n{}",
        ORDER.join(", "),
        wrong.join("\n")
    );
}

/// The checker itself finds imports in the forms the code uses.
#[test]
fn the_checker_reads_every_form_of_import() {
    let code = "use crate::format::x;\nuse crate::{query::a, lake, storage::{b, c}};\nlet v = crate::Lake::open();\nmycrate::no;";
    let found: Vec<String> = crate_paths(code).into_iter().map(|(n, _)| n).collect();
    assert_eq!(found, ["format", "query", "lake", "storage", "Lake"]);
    assert_eq!(crate_paths(code)[1].1, 2);
    let exports = root_exports("pub use lake::{Lake, QueryResult};\npub use query::functions::function_reference;");
    assert_eq!(exports["Lake"], "lake");
    assert_eq!(exports["function_reference"], "query");
    let code =
        production_code("use crate::a;\n// crate::b\n#[cfg(test)]\nmod tests {\n    use crate::c;\n}\nuse crate::d;");
    let found: Vec<String> = crate_paths(&code).into_iter().map(|(n, _)| n).collect();
    assert_eq!(found, ["a", "d"]);
}
