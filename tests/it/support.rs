//! Shared helpers: reading the test data.

use madmax::engine::{RawFile, RawScenario};
use serde_json::Value;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// `madmax ARGS`, run as a process.
pub fn madmax(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_madmax")).args(args).output().expect("madmax runs")
}

/// `madmax ARGS` with `input` on standard input (which the program may close early: a refused
/// input need not be read).
pub fn madmax_stdin(args: &[&str], input: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_madmax"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("madmax runs");
    let _ = child.stdin.take().expect("stdin").write_all(input);
    child.wait_with_output().expect("madmax ends")
}

pub fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

/// Every golden case file, sorted by name.
pub fn case_files() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(data_dir().join("reference/cases"))
        .expect("tests/data/reference/cases exists")
        .map(|e| e.expect("readable entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    v.sort();
    v
}

pub fn read_json(p: &Path) -> Value {
    let text = std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// The raw scenario of a JSON value in the MAD-Max case or scenario format.
pub fn raw_of(v: &Value) -> RawScenario {
    serde_json::from_value::<RawFile>(v.clone()).expect("a MAD-Max file").into_scenario().expect("one set of configs")
}

/// `math.isclose(got, want, rel_tol=rel, abs_tol=abs)`.
pub fn close(got: f64, want: f64, rel: f64, abs: f64) -> bool {
    (got - want).abs() <= (rel * got.abs().max(want.abs())).max(abs)
}
