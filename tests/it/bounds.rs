//! What a file, a pipe or an argument can do to the CLI (issue #21's findings, each with the
//! test that failed before the fix): inputs are bounded before any work, messages quote a short
//! prefix of a bad value, the terminal never receives control characters, validation is near
//! linear and always exits 0 or 2, a search too big to run says so, a closed pipe ends quietly.

use crate::support::{data_dir, madmax, madmax_stdin};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn adversarial(name: &str) -> String {
    data_dir().join("adversarial").join(name).to_str().expect("utf-8 path").to_owned()
}

/// A scenario file's text (a small, valid one).
fn small() -> String {
    std::fs::read_to_string(adversarial("control_names.json")).expect("file")
}

#[test]
fn a_byte_order_mark_is_read_in_json_as_in_csv() {
    let plain = madmax(&["eval", "--json", &adversarial("training_1m_ops.json")]);
    let bom = madmax(&["eval", "--json", &adversarial("bom.json")]);
    assert!(plain.status.success() && bom.status.success(), "{}", text(&bom.stderr));
    assert_eq!(plain.stdout, bom.stdout);
}

#[test]
fn a_key_given_twice_and_configs_beside_inputs_are_refused_by_name() {
    let o = madmax(&["eval", &adversarial("duplicate_keys.json")]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("the key \"type\" appears twice at model"), "{}", text(&o.stderr));
    let o = madmax(&["eval", "--json", &adversarial("model_beside_inputs.json")]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stdout).contains("both at its top level"), "{}", text(&o.stdout));
}

#[test]
fn a_ten_million_item_list_is_refused_at_once_in_a_short_message() {
    let list = format!("{{\"model\": {{\"name\": [{}1]}}}}", "1,".repeat(10_000_000));
    let o = madmax_stdin(&["eval", "-"], list.as_bytes());
    assert_eq!(o.status.code(), Some(2));
    let err = text(&o.stderr);
    assert!(err.len() < 200 && err.contains("more than the 1.05 MB madmax reads"), "{err}");
    // Within the size bound, a long list is named with its path, and a long value quoted short.
    let v: Value = serde_json::from_str(&small()).expect("json");
    let mut long = v.clone();
    long["model"]["name"] = json!(vec![1; 2000]);
    let o = madmax_stdin(&["eval", "-"], long.to_string().as_bytes());
    assert!(text(&o.stderr).contains("more than 1024 items at model.name"), "{}", text(&o.stderr));
    let mut wide = v;
    wide["task"]["transformer_parallel"] = json!(["x".repeat(100_000)]);
    let o = madmax_stdin(&["eval", "-"], wide.to_string().as_bytes());
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        err.len() < 400 && err.contains("... (100000 characters)"),
        "{} bytes: {}",
        err.len(),
        &err[..err.len().min(300)]
    );
}

#[test]
fn names_reach_the_terminal_with_their_control_characters_escaped() {
    let o = madmax(&["eval", &adversarial("control_names.json")]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert!(out.contains("GPT\\u{1b}[2J\\u{0}\\u{202e}evil"), "{}", out.lines().next().unwrap_or(""));
    assert!(!out.contains('\u{1b}') && !out.contains('\u{202e}') && !out.contains('\u{0}'));
    // JSON keeps the name, escaped the JSON way.
    let o = madmax(&["eval", "--json", &adversarial("control_names.json")]);
    let j = text(&o.stdout);
    assert!(!j.contains('\u{202e}') && !j.contains('\u{1b}'), "{j}");
    assert!(serde_json::from_str::<Value>(&j).is_ok());
}

#[test]
fn a_closed_pipe_ends_the_program_quietly() {
    let case = data_dir().join("reference/cases/llm__llama2_70b__dc_A_2048__llm_train.json");
    let mut child = Command::new(env!("CARGO_BIN_EXE_madmax"))
        .args(["explore", case.to_str().expect("utf-8 path"), "--top", "100"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("madmax runs");
    let mut first = String::new();
    BufReader::new(child.stdout.take().expect("stdout")).read_line(&mut first).expect("a line");
    // The reader has gone (as `| head -1` does); the rest of the output meets a closed pipe.
    let out = child.wait_with_output().expect("madmax ends");
    assert!(first.contains("plans evaluated"), "{first}");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(!text(&out.stderr).contains("panicked"), "{}", text(&out.stderr));
}

#[test]
fn a_search_too_big_to_run_and_too_many_local_batches_exit_2_saying_why() {
    let f = adversarial("training_1m_ops.json");
    let o =
        madmax(&["explore", &f, "--local-batches", &(4000..4064).map(|b| b.to_string()).collect::<Vec<_>>().join(",")]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("million timeline ops in all, more than the 50 million"), "{}", text(&o.stderr));
    let o = madmax(&[
        "explore",
        "--json",
        &f,
        "--local-batches",
        &(1..=3000).map(|b| b.to_string()).collect::<Vec<_>>().join(","),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("1 to 64 counts"), "{}", text(&o.stderr));
}

/// A training CSV of `rows` copies of the shared file's first row, each changed by `edit`.
fn csv_of(rows: usize, edit: impl Fn(usize, &mut Vec<String>, &[String])) -> String {
    let shared = madmax::accuracy::TRAINING_CSV;
    let parsed = madmax::accuracy::parse_csv(shared);
    let (header, first) = (&parsed[0], &parsed[1]);
    let mut out = header.join(",");
    for i in 0..rows {
        let mut cells = first.clone();
        edit(i, &mut cells, header);
        out.push('\n');
        out.push_str(&cells.iter().map(|c| format!("\"{}\"", c.replace('"', "\"\""))).collect::<Vec<_>>().join(","));
    }
    out.push('\n');
    out
}

fn set(cells: &mut [String], header: &[String], key: &str, value: &str) {
    if let Some(i) = header.iter().position(|h| h == key) {
        cells[i] = value.to_owned();
    }
}

#[test]
fn validate_groups_same_work_pairs_instead_of_listing_them() {
    // 1,000 rows of one run in two micro-batch sizes: 250,000 contradicting pairs, counted, not
    // listed (the quadratic version held them all and aborted at 40,000 rows).
    let csv = csv_of(1000, |i, c, h| {
        set(c, h, "id", &format!("r{i}"));
        set(c, h, "microbatch", if i % 2 == 0 { "8" } else { "4" });
        set(c, h, "measured", &format!("{}", 3.0 + (i % 7) as f64 / 10.0));
    });
    let o = madmax_stdin(&["validate", "--json", "-"], csv.as_bytes());
    assert!(o.status.success(), "{}", text(&o.stderr));
    let v: Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(v["floor"]["pairs"], 500 * 500);
    assert!((v["floor"]["error"].as_f64().unwrap_or(0.0) - (3.6 - 3.0) / 6.6).abs() < 1e-12, "{}", v["floor"]);
    // Distinct sources: each its own line of the summary.
    let csv = csv_of(300, |i, c, h| {
        set(c, h, "id", &format!("r{i}"));
        set(c, h, "source", &format!("source {i}"));
    });
    let o = madmax_stdin(&["validate", "--json", "-"], csv.as_bytes());
    let v: Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(v["summary"]["by_source"].as_array().map(Vec::len), Some(300));
}

#[test]
fn validate_refuses_what_is_not_a_run_and_exits_0_or_2() {
    let csv = csv_of(5, |i, c, h| {
        set(c, h, "id", &format!("r{i}"));
        match i {
            0 => set(c, h, "zero", "9"),
            1 => set(c, h, "measured", "1e-320"),
            2 => set(c, h, "measured", "-3.2"),
            3 => set(c, h, "id", "evil\u{1b}[2J\u{202e}"),
            _ => {}
        }
    });
    let o = madmax_stdin(&["validate", "-"], csv.as_bytes());
    let out = text(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(out.contains("r0") && out.contains("ZeRO has stages 0 to 3, not 9"), "{out}");
    assert!(out.contains("measured must be a positive number, got \"1e-320\""), "{out}");
    assert!(out.contains("measured must be a positive number, got \"-3.2\""), "{out}");
    assert!(!out.contains("inf") && !out.contains("NaN"), "{out}");
    assert!(out.contains("evil\\u{1b}[2J\\u{202e}") && !out.contains('\u{1b}'), "{out}");
    // CR-only line ends are line ends.
    let cr = csv_of(2, |i, c, h| set(c, h, "id", &format!("r{i}"))).replace('\n', "\r");
    let o = madmax_stdin(&["validate", "--json", "-"], cr.as_bytes());
    assert!(o.status.success(), "{}", text(&o.stderr));
    let v: Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(v["rows"].as_array().map(|r| r.iter().filter(|x| x["predicted"].is_number()).count()), Some(2));
    // No row predicted: exit 2, saying why.
    let none = csv_of(2, |_, c, h| set(c, h, "gpu", "tpu-v4"));
    let o = madmax_stdin(&["validate", "-"], none.as_bytes());
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains(
            "no row could be predicted (the first row: gpu \"tpu-v4\" is not one of v100-32g, a100-40g, a100-80g,"
        ),
        "{}",
        text(&o.stderr)
    );
    let o = madmax_stdin(&["validate", "-"], b"id,metric,measured\n");
    assert_eq!(o.status.code(), Some(2));
    // A misspelled column is refused by name, not read as blank cells that take defaults.
    let typo = csv_of(1, |_, _, _| ()).replacen(",tp,", ",tensor_par,", 1);
    assert!(typo.contains("tensor_par"));
    let o = madmax_stdin(&["validate", "-"], typo.as_bytes());
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("the CSV's column \"tensor_par\" is not one madmax reads"), "{}", text(&o.stderr));
}
