//! The engine's layers hold: each module of `crates/varve/src` imports only modules below it in
//! [`ORDER`] (the order `docs/design.md` gives), so no two modules import each other. A failure
//! names the file and line of the import against the order. When a module seems to need one above
//! it, move the shared piece down or register it through an extension point of the lower module
//! (as rollups do through `query::extension`); never relax this test.
//!
//! Inside every crate of the workspace, no source file imports one that imports it back, directly
//! or through others ([`no_file_imports_a_file_that_imports_it`]).

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
    collect(&src(), &src(), &mut files);
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
        for (path, line) in full_paths(&production_code(text), &module_path(file)) {
            let Some(name) = path.first().cloned() else { continue };
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
    let code = "use crate::format::x;\nuse crate::{query::a, lake, storage::{b, c}};\nlet v = crate::Lake::open();\nmycrate::no;\nuse super::super::d::E;";
    let found: Vec<(String, usize)> = full_paths(code, &module_path("write/merge/inner.rs"))
        .into_iter()
        .map(|(p, l)| (p.join("::"), l))
        .collect();
    let want = [
        ("format::x", 1),
        ("query::a", 2),
        ("lake", 2),
        ("storage::b", 2),
        ("storage::c", 2),
        ("Lake::open", 3),
        ("write::d::E", 5),
    ];
    assert_eq!(found, want.map(|(p, l)| (p.to_string(), l)));
    let exports = root_exports("pub use lake::{Lake, QueryResult};\npub use query::functions::function_reference;");
    assert_eq!(exports["Lake"], "lake");
    assert_eq!(exports["function_reference"], "query");
    let code =
        production_code("use crate::a;\n// crate::b\n#[cfg(test)]\nmod tests {\n    use crate::c;\n}\nuse crate::d;");
    let found: Vec<String> = full_paths(&code, &[]).into_iter().map(|(p, _)| p.join("::")).collect();
    assert_eq!(found, ["a", "d"]);
}

/// A file's module path: `query/session.rs` is `["query", "session"]`, `pg/mod.rs` is `["pg"]`.
fn module_path(file: &str) -> Vec<String> {
    let mut segs: Vec<String> = file.trim_end_matches(".rs").split('/').map(String::from).collect();
    if matches!(segs.last().map(String::as_str), Some("mod" | "lib" | "main")) {
        segs.pop();
    }
    segs
}

/// Every `crate::`/`super::` path in `code` as its segments from the crate root (a group
/// `crate::a::{b, c::d}` gives `a::b` and `a::c::d`), with its line. `me` is the importing file's
/// [`module_path`].
fn full_paths(code: &str, me: &[String]) -> Vec<(Vec<String>, usize)> {
    /// The paths of one item of a `use` tree under `prefix`.
    fn expand(prefix: &[String], text: &str, out: &mut Vec<Vec<String>>) {
        let (head, group) = match text.find('{') {
            Some(open) => (
                &text[..open],
                Some(&text[open + 1..text.rfind('}').unwrap_or(text.len())]),
            ),
            None => (text.split(" as ").next().unwrap(), None),
        };
        let mut base = prefix.to_vec();
        base.extend(
            head.split("::")
                .map(str::trim)
                .filter(|s| !s.is_empty() && *s != "self")
                .map(String::from),
        );
        let Some(group) = group else {
            out.push(base);
            return;
        };
        let (mut depth, mut item) = (0, String::new());
        for c in group.chars().chain([',']) {
            match c {
                ',' if depth == 0 => {
                    if !item.trim().is_empty() {
                        expand(&base, item.trim(), out);
                    }
                    item.clear();
                    continue;
                }
                '{' => depth += 1,
                '}' => depth -= 1,
                _ => {}
            }
            item.push(c);
        }
    }
    let mut out = Vec::new();
    let bytes = code.as_bytes();
    for root in ["crate::", "super::"] {
        let mut at = 0;
        while let Some(i) = code[at..].find(root) {
            let start = at + i;
            at = start + root.len();
            if start > 0
                && (bytes[start - 1].is_ascii_alphanumeric() || bytes[start - 1] == b'_' || bytes[start - 1] == b':')
            {
                continue; // `mycrate::`, or the second `super::` of `super::super::`
            }
            let line = code[..start].matches('\n').count() + 1;
            let mut base: Vec<String> = match root {
                "crate::" => vec![],
                _ => me[..me.len().saturating_sub(1)].to_vec(),
            };
            let mut rest = &code[at..];
            while let Some(r) = rest.strip_prefix("super::") {
                base.pop();
                rest = r;
            }
            // The path's text: identifiers and `::`, then a `{...}` group if one follows.
            let mut end = rest
                .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                .unwrap_or(rest.len());
            if rest[end..].starts_with('{') {
                let mut depth = 0;
                for (i, c) in rest[end..].char_indices() {
                    depth += match c {
                        '{' => 1,
                        '}' => -1,
                        _ => 0,
                    };
                    if depth == 0 {
                        end += i + 1;
                        break;
                    }
                }
            }
            let mut paths = Vec::new();
            expand(&base, rest[..end].trim_end_matches("::"), &mut paths);
            out.extend(paths.into_iter().map(|p| (p, line)));
        }
    }
    out
}

/// The cycles among the files of the crate whose source is in `dir`: each a sorted list of the
/// files (relative to `dir`) that import each other, directly or through the others.
fn file_cycles(dir: &Path) -> Vec<Vec<String>> {
    let mut files = Vec::new();
    collect(dir, dir, &mut files);
    files.sort();
    let names: Vec<&String> = files.iter().map(|(f, _)| f).collect();
    let resolve = |segs: &[String]| -> Option<usize> {
        (1..=segs.len()).rev().find_map(|n| {
            let pre = segs[..n].join("/");
            names
                .iter()
                .position(|f| **f == format!("{pre}.rs") || **f == format!("{pre}/mod.rs"))
        })
    };
    let mut edges = vec![std::collections::BTreeSet::new(); files.len()];
    for (i, (file, text)) in files.iter().enumerate() {
        for (path, _) in full_paths(&production_code(text), &module_path(file)) {
            if let Some(j) = resolve(&path) {
                if j != i {
                    edges[i].insert(j);
                }
            }
        }
    }
    let reach = |from: usize| -> Vec<bool> {
        let mut seen = vec![false; files.len()];
        let mut stack = vec![from];
        while let Some(n) = stack.pop() {
            for &m in &edges[n] {
                if !seen[m] {
                    seen[m] = true;
                    stack.push(m);
                }
            }
        }
        seen
    };
    let reaches: Vec<Vec<bool>> = (0..files.len()).map(reach).collect();
    let mut cycles: Vec<Vec<String>> = Vec::new();
    for (i, reached) in reaches.iter().enumerate() {
        if !reached[i] {
            continue;
        }
        let cycle: Vec<String> = (0..files.len())
            .filter(|&j| reached[j] && reaches[j][i])
            .map(|j| files[j].0.clone())
            .collect();
        if !cycles.contains(&cycle) {
            cycles.push(cycle);
        }
    }
    cycles
}

/// Every `.rs` file under `dir`, relative to `root`, with its text.
fn collect(root: &Path, dir: &Path, out: &mut Vec<(String, String)>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            collect(root, &path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let rel = path.strip_prefix(root).unwrap().to_string_lossy().replace('\\', "/");
            out.push((rel, std::fs::read_to_string(&path).unwrap()));
        }
    }
}

#[test]
fn no_file_imports_a_file_that_imports_it() {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let mut wrong = Vec::new();
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(crates)
        .unwrap()
        .map(|e| e.unwrap().path().join("src"))
        .collect();
    dirs.sort();
    for dir in dirs.iter().filter(|d| d.is_dir()) {
        let name = dir.parent().unwrap().file_name().unwrap().to_string_lossy().to_string();
        for c in file_cycles(dir) {
            wrong.push(format!(
                "crates/{name}/src: these files import each other: {}",
                c.join(", ")
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_file_checker_finds_a_cycle() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path();
    std::fs::create_dir_all(src.join("pg")).unwrap();
    std::fs::write(src.join("lib.rs"), "mod pg;\nmod state;\n").unwrap();
    std::fs::write(src.join("state.rs"), "pub struct S;\n").unwrap();
    std::fs::write(src.join("pg/mod.rs"), "mod a;\nmod b;\n").unwrap();
    std::fs::write(
        src.join("pg/a.rs"),
        "use super::b::B;\nuse crate::state::S;\npub struct A;\n",
    )
    .unwrap();
    std::fs::write(src.join("pg/b.rs"), "use crate::{pg::a::A, state};\npub struct B;\n").unwrap();
    assert_eq!(file_cycles(src), [["pg/a.rs".to_string(), "pg/b.rs".to_string()]]);
    std::fs::write(src.join("pg/b.rs"), "use crate::state;\npub struct B;\n").unwrap();
    assert!(file_cycles(src).is_empty());
}
