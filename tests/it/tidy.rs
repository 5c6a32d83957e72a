//! Invariants of the code that ARCHITECTURE.md states, checked on the source text (as
//! rust-analyzer's `xtask/src/tidy.rs` does). Each rule is a function from a file's path and
//! text to its violations, so its own test can plant one and see it caught.
//!
//! Unit tests sit at the bottom of each file, after `#[cfg(test)]`; the rules read the code
//! above that line.

use std::path::{Path, PathBuf};

/// The repository's root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

/// Every `.rs` file under `dir`, as paths relative to the root with `/` separators, sorted.
fn rust_files(dir: &str) -> Vec<String> {
    fn walk(at: &Path, root: &Path, out: &mut Vec<String>) {
        let Ok(entries) = std::fs::read_dir(at) else { return };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, root, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                if let Ok(rel) = p.strip_prefix(root) {
                    out.push(rel.to_string_lossy().replace('\\', "/"));
                }
            }
        }
    }
    let mut out = Vec::new();
    walk(&root().join(dir), &root(), &mut out);
    out.sort();
    out
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(root().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// The code of a file above its unit tests, with each line's number.
fn code_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines().enumerate().map(|(i, l)| (i + 1, l)).take_while(|(_, l)| l.trim() != "#[cfg(test)]")
}

/// The part of a line before a `//` comment (good enough for these rules: none of their
/// patterns sits in a string that holds `//`).
fn uncommented(line: &str) -> &str {
    line.split("//").next().unwrap_or("")
}

/// What the engine may not use: the faces and the crate's other modules, browser and plotting
/// crates, clocks, files, randomness, and HashMap (whose iteration order would leak into
/// outputs).
const ENGINE_FORBIDDEN: [&str; 17] = [
    "crate::ui",
    "crate::presets",
    "crate::accuracy",
    "crate::doc",
    "crate::share",
    "crate::stories",
    "crate::units",
    "crate::wording",
    "yew",
    "web_sys",
    "gloo",
    "plotters",
    "wasm_bindgen",
    "std::time",
    "std::fs",
    "HashMap",
    "rand::",
];

/// Rule: `src/engine/` is pure (std and serde): nothing in [`ENGINE_FORBIDDEN`].
fn engine_is_pure(path: &str, text: &str) -> Vec<String> {
    if !path.starts_with("src/engine/") {
        return Vec::new();
    }
    let mut found = Vec::new();
    for (n, line) in code_lines(text) {
        let code = uncommented(line);
        for f in ENGINE_FORBIDDEN {
            let hit = code.match_indices(f).any(|(i, _)| {
                // A whole name: not the tail of a longer identifier (`my_yew`).
                !code[..i].ends_with(|c: char| c.is_alphanumeric() || c == '_')
            });
            if hit {
                found.push(format!("{path}:{n}: the engine uses {f}: {}", line.trim()));
            }
        }
    }
    found
}

/// Rule: every `f64` constant of the default model (`src/engine/extended/`) lives in
/// `calibration.rs`, with its source, so none hides in a formula's file.
fn constants_in_calibration(path: &str, text: &str) -> Vec<String> {
    if !path.starts_with("src/engine/extended/") || path.ends_with("/calibration.rs") {
        return Vec::new();
    }
    code_lines(text)
        .filter(|(_, l)| {
            let t = uncommented(l).trim_start();
            let t = t.strip_prefix("pub ").or_else(|| t.strip_prefix("pub(crate) ")).unwrap_or(t);
            let t = t.strip_prefix("pub(super) ").unwrap_or(t);
            t.starts_with("const ") && t.contains(": f64")
        })
        .map(|(n, l)| format!("{path}:{n}: a default-model constant outside calibration.rs: {}", l.trim()))
        .collect()
}

/// Rule: no `unwrap()` or `expect(` outside tests: input, DOM lookups and files fail with a
/// message, never a panic (a panic in wasm kills the page).
fn no_unwrap(path: &str, text: &str) -> Vec<String> {
    code_lines(text)
        .filter(|(_, l)| {
            let c = uncommented(l);
            c.contains(".unwrap()") || c.contains(".expect(")
        })
        .map(|(n, l)| format!("{path}:{n}: unwrap or expect outside tests: {}", l.trim()))
        .collect()
}

/// Rule: only reference mode builds a graph by name or schedules with MAD-Max's phase barrier
/// (`GraphBuilder`, `Scheduler::with_phase_barrier`): the machinery that carries the
/// reference's quirks stays in `src/engine/reference/` (the barrier is defined in
/// `schedule.rs`, and used only by the reference's graph builder).
fn reference_machinery_stays_in_reference(path: &str, text: &str) -> Vec<String> {
    if path.starts_with("src/engine/reference/") {
        return Vec::new();
    }
    code_lines(text)
        .filter(|(_, l)| {
            let c = uncommented(l);
            c.contains("GraphBuilder") || (c.contains("with_phase_barrier()") && !c.contains("fn with_phase_barrier"))
        })
        .map(|(n, l)| format!("{path}:{n}: reference-only machinery outside src/engine/reference/: {}", l.trim()))
        .collect()
}

/// Rule: a file of more than [`LONG_FILE_LINES`] lines of code (above its tests) does one job
/// and says which in its header (`//! One job: ...`); otherwise it is split by job.
fn long_files_say_their_job(path: &str, text: &str) -> Vec<String> {
    let lines = code_lines(text).count();
    let says = text.lines().take_while(|l| l.starts_with("//!")).any(|l| l.starts_with("//! One job: "));
    if lines > LONG_FILE_LINES && !says {
        vec![format!("{path}: {lines} lines of code and no \"//! One job: ...\" in its header: split it by job, or say its one job")]
    } else {
        Vec::new()
    }
}

/// Lines of code above which a file must say its one job ([`long_files_say_their_job`]).
const LONG_FILE_LINES: usize = 600;

/// Backticked names in a document that look like files of this repository: `src/...`,
/// `tests/...`, or a bare `name.rs` / `dir/name.rs`.
fn file_names(doc: &str) -> Vec<&str> {
    doc.split('`')
        .skip(1)
        .step_by(2)
        .filter(|t| !t.contains(' ') && !t.contains('*') && !t.contains('<'))
        .filter(|t| t.ends_with(".rs") || t.ends_with(".mjs") || t.starts_with("src/") || t.starts_with("tests/"))
        .collect()
}

/// Rule: every file the code map names exists: a path from the root as given, a bare name as
/// some file's path or the tail of one (`scripts/csp.mjs`, `mod.rs`, `accuracy/floor.rs`).
fn code_map_paths_exist(doc: &str, files: &[String]) -> Vec<String> {
    file_names(doc)
        .into_iter()
        .filter(|name| {
            let from_root = name.starts_with("src/") || name.starts_with("tests/");
            let exists = if from_root {
                files.iter().any(|f| f == name || f.starts_with(&format!("{}/", name.trim_end_matches('/'))))
            } else {
                files.iter().any(|f| f == name || f.ends_with(&format!("/{name}")))
            };
            !exists
        })
        .map(|name| format!("ARCHITECTURE.md names `{name}`, which does not exist"))
        .collect()
}

/// Every file of the repository that the code map may name (sources, tests, scripts, data).
fn repository_files() -> Vec<String> {
    fn walk(at: &Path, root: &Path, out: &mut Vec<String>) {
        let Ok(entries) = std::fs::read_dir(at) else { return };
        for e in entries.flatten() {
            let p = e.path();
            let name = e.file_name();
            if name == "target" || name == "node_modules" || name == ".git" || name == "dist" {
                continue;
            }
            if p.is_dir() {
                walk(&p, root, out);
            } else if let Ok(rel) = p.strip_prefix(root) {
                out.push(rel.to_string_lossy().replace('\\', "/"));
            }
        }
    }
    let mut out = Vec::new();
    walk(&root(), &root(), &mut out);
    out
}

/// Rule: the crate sorts through `engine::order` only. Every `sort_by` of its own element type
/// or closure instantiates the standard library's sort again in the WebAssembly (about 76 KB
/// over the page's twenty call sites before `order` existed).
fn one_sort_routine(path: &str, text: &str) -> Vec<String> {
    if path == "src/engine/order.rs" {
        return Vec::new();
    }
    code_lines(text)
        .filter(|(_, l)| {
            let c = uncommented(l);
            [".sort(", ".sort_by(", ".sort_by_key(", ".sort_unstable", ".sort_by_cached_key("]
                .iter()
                .any(|p| c.contains(p))
        })
        .map(|(n, l)| format!("{path}:{n}: sort through engine::order, not the slice's own sort: {}", l.trim()))
        .collect()
}

/// A rule over one source file: its path from the root and its text, to its violations.
type Rule = fn(&str, &str) -> Vec<String>;

#[test]
fn the_code_keeps_its_invariants() {
    let rules: [Rule; 6] = [
        engine_is_pure,
        one_sort_routine,
        constants_in_calibration,
        no_unwrap,
        long_files_say_their_job,
        reference_machinery_stays_in_reference,
    ];
    let files = rust_files("src");
    assert!(files.len() > 40, "the walk found the sources: {files:?}");
    let mut found = Vec::new();
    for f in &files {
        let text = read(f);
        for rule in &rules {
            found.extend(rule(f, &text));
        }
    }
    found.extend(code_map_paths_exist(&read("ARCHITECTURE.md"), &repository_files()));
    assert!(found.is_empty(), "{} violation(s):\n{}", found.len(), found.join("\n"));
}

#[test]
fn each_rule_catches_a_planted_violation() {
    let planted = "use crate::ui::state::State;\nfn f() {}\n";
    assert_eq!(engine_is_pure("src/engine/extended/iteration.rs", planted).len(), 1);
    assert!(engine_is_pure("src/ui/app.rs", planted).is_empty(), "the faces may");
    assert_eq!(engine_is_pure("src/engine/x.rs", "let m: std::collections::HashMap<u8, u8>;").len(), 1);
    assert_eq!(engine_is_pure("src/engine/x.rs", "let t = std::time::Instant::now();").len(), 1);
    assert!(engine_is_pure("src/engine/x.rs", "// a HashMap would leak its order").is_empty(), "comments");
    assert!(engine_is_pure("src/engine/x.rs", "let my_yew = 1;").is_empty(), "a longer name");

    let constant = "/// A fudge.\nconst FUDGE: f64 = 1.07;\n";
    assert_eq!(constants_in_calibration("src/engine/extended/serving.rs", constant).len(), 1);
    assert_eq!(constants_in_calibration("src/engine/extended/gemm.rs", "pub(crate) const K: f64 = 2.0;").len(), 1);
    assert!(constants_in_calibration("src/engine/extended/calibration.rs", constant).is_empty());
    assert!(constants_in_calibration("src/engine/extended/rules.rs", "pub const MAX_OPS: u64 = 1;").is_empty());
    let in_tests = "fn f() {}\n#[cfg(test)]\nmod tests {\n    const F: f64 = 1.0;\n}\n";
    assert!(constants_in_calibration("src/engine/extended/gemm.rs", in_tests).is_empty(), "tests may");

    assert_eq!(no_unwrap("src/ui/app.rs", "let el = doc.get_element_by_id(\"x\").unwrap();").len(), 1);
    assert_eq!(no_unwrap("src/input.rs", "let v = s.parse::<u64>().expect(\"a number\");").len(), 1);
    assert!(no_unwrap("src/input.rs", "#[cfg(test)]\nmod tests { fn t() { x.unwrap(); } }").is_empty());

    let builder = "let mut g = GraphBuilder::new(4, 8);";
    assert_eq!(reference_machinery_stays_in_reference("src/engine/extended/iteration.rs", builder).len(), 1);
    assert!(reference_machinery_stays_in_reference("src/engine/reference/dlrm.rs", builder).is_empty());
    let barrier = "let s = Scheduler::with_phase_barrier();";
    assert_eq!(reference_machinery_stays_in_reference("src/engine/extended/serving.rs", barrier).len(), 1);

    assert_eq!(one_sort_routine("src/ui/sweep.rs", "    sizes.sort_unstable();").len(), 1);
    assert_eq!(one_sort_routine("src/paper.rs", "v.sort_by(|a, b| a.1.total_cmp(&b.1));").len(), 1);
    assert!(one_sort_routine("src/paper.rs", "crate::engine::order::sort_by(&mut v, f64::total_cmp);").is_empty());
    assert!(one_sort_routine("src/engine/order.rs", "order.sort_by(|a, b| cmp(*a, *b));").is_empty());

    let long = "fn f() {}\n".repeat(LONG_FILE_LINES + 1);
    assert_eq!(long_files_say_their_job("src/x.rs", &format!("//! Many things.\n{long}")).len(), 1);
    assert!(long_files_say_their_job("src/x.rs", &format!("//! Things.\n//!\n//! One job: things.\n{long}")).is_empty());
    let tested = format!("//! Short.\nfn f() {{}}\n#[cfg(test)]\nmod tests {{\n{long}}}\n");
    assert!(long_files_say_their_job("src/x.rs", &tested).is_empty(), "tests do not count");

    let files = vec!["src/engine/mod.rs".to_owned(), "src/accuracy/floor.rs".to_owned()];
    let doc = "- `src/engine/mod.rs`: the front door.\n  - `floor.rs`, `accuracy/floor.rs`\n- `src/gone.rs`: moved.\n  - `gone.rs`";
    assert_eq!(
        code_map_paths_exist(doc, &files),
        [
            "ARCHITECTURE.md names `src/gone.rs`, which does not exist",
            "ARCHITECTURE.md names `gone.rs`, which does not exist"
        ]
    );
    assert!(code_map_paths_exist("- `src/engine/`: the model", &files).is_empty(), "a folder");
}
