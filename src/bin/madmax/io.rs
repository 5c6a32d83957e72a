//! What the command line reads and writes: output made safe for a terminal (and quiet on a
//! closed pipe), files read within bounds, scenario files parsed and validated, and input
//! problems said one way for every command.

use madmax::engine::{validate, FieldError, RawFile, RawScenario, Scenario};
use madmax::input::printable;
use madmax::units;
use serde_json::{json, Value};
use std::process::ExitCode;

/// Writes text to standard output, made safe for a terminal ([`printable`]). A closed pipe
/// (`madmax explore ... | head -1`) ends the program quietly, as Unix tools do; another write
/// error ends it with status 1.
pub fn out(text: &str) {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    if let Err(e) = stdout.write_all(printable(text).as_bytes()).and_then(|()| stdout.flush()) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        let _ = writeln!(std::io::stderr(), "madmax: cannot write the output: {e}");
        std::process::exit(1);
    }
}

/// Writes a JSON value and a newline to standard output, with the characters a terminal would
/// act on escaped the JSON way ([`madmax::input::printable_json`]).
pub fn out_json(v: &Value) {
    out(&madmax::input::printable_json(&v.to_string()));
    out("\n");
}

/// Writes text to standard error, made safe for a terminal; write errors are ignored.
pub fn err(text: &str) {
    use std::io::Write;
    let _ = std::io::stderr().lock().write_all(printable(text).as_bytes());
}

/// A line on standard output ([`out`]).
macro_rules! outln {
    () => { $crate::io::out("\n") };
    ($($t:tt)*) => { $crate::io::out(&format!("{}\n", format_args!($($t)*))) };
}
/// Text on standard output, no newline added ([`out`]).
macro_rules! outp {
    ($($t:tt)*) => { $crate::io::out(&format!($($t)*)) };
}
/// A line on standard error ([`err`]).
macro_rules! errln {
    ($($t:tt)*) => { $crate::io::err(&format!("{}\n", format_args!($($t)*))) };
}

/// Reads a file (standard input for `-`) of at most `max` bytes: a larger one is refused
/// before it is read.
pub fn read_bounded(path: &str, max: usize) -> Result<String, String> {
    use std::io::Read;
    let too_big = |n: usize| {
        format!("the file is {}, more than the {} madmax reads", units::bytes(n as f64), units::bytes(max as f64))
    };
    let mut bytes = Vec::new();
    let read = if path == "-" {
        std::io::stdin().lock().take(max as u64 + 1).read_to_end(&mut bytes)
    } else {
        let file = std::fs::File::open(path).map_err(|e| format!("cannot read the file: {e}"))?;
        if let Ok(m) = file.metadata() {
            if m.len() > max as u64 {
                return Err(too_big(m.len() as usize));
            }
        }
        file.take(max as u64 + 1).read_to_end(&mut bytes)
    };
    read.map_err(|e| format!("cannot read the file: {e}"))?;
    if bytes.len() > max {
        return Err(too_big(bytes.len()));
    }
    String::from_utf8(bytes).map_err(|e| format!("not UTF-8 text (byte {})", e.utf8_error().valid_up_to()))
}

/// An input problem: where, and what.
pub struct InputError {
    pub field: String,
    message: String,
    reference: Option<String>,
    more: usize,
}

impl InputError {
    pub fn from_fields(errors: &[FieldError]) -> InputError {
        match errors.first() {
            Some(e) => InputError {
                field: e.field.clone(),
                message: e.message.clone(),
                reference: e.reference.clone(),
                more: errors.len() - 1,
            },
            None => InputError { field: String::new(), message: "invalid input".to_owned(), reference: None, more: 0 },
        }
    }

    pub fn line(&self) -> String {
        let more = match self.more {
            0 => String::new(),
            1 => " (and 1 more problem)".to_owned(),
            n => format!(" (and {n} more problems)"),
        };
        let reference = match &self.reference {
            Some(r) if !r.is_empty() => format!(" [MAD-Max: {r}]"),
            _ => String::new(),
        };
        if self.field.is_empty() {
            format!("{}{more}{reference}", self.message)
        } else {
            format!("{}: {}{more}{reference}", self.field, self.message)
        }
    }
}

/// Reads and parses a scenario file; errors name the file or the JSON path.
fn read_scenario(path: &str) -> Result<RawScenario, InputError> {
    let text = read_bounded(path, madmax::input::MAX_JSON_BYTES).map_err(|message| InputError {
        field: path.to_owned(),
        message,
        reference: None,
        more: 0,
    })?;
    parse_scenario(&text)
}

pub fn parse_scenario(text: &str) -> Result<RawScenario, InputError> {
    let fail = |field: String, message: String| InputError { field, message, reference: None, more: 0 };
    let value = madmax::input::parse_json(text).map_err(|e| fail(String::new(), e))?;
    if !value.is_object() {
        return Err(fail(
            String::new(),
            "the file must hold a JSON object with \"model\", \"system\" and \"task\" (or a case file with \"inputs\")"
                .to_owned(),
        ));
    }
    match serde_path_to_error::deserialize::<_, RawFile>(&value) {
        Ok(file) => file.into_scenario().map_err(|e| fail(String::new(), e)),
        Err(e) => {
            let field = e.path().to_string();
            Err(fail(field, format!("must be a MAD-Max config object: {}", e.into_inner())))
        }
    }
}

/// Reads, parses and validates a scenario file; `mode` overrides the file's `task.mode`.
pub fn load(path: &str, mode: Option<madmax::engine::scenario::Mode>) -> Result<Scenario, InputError> {
    let raw = load_raw(path, mode)?;
    validate(&raw).map_err(|errors| InputError::from_fields(&errors))
}

/// The scenario file's configs, not yet validated, with `mode` (when given) as its task's.
pub fn load_raw(
    path: &str,
    mode: Option<madmax::engine::scenario::Mode>,
) -> Result<madmax::engine::RawScenario, InputError> {
    let mut raw = read_scenario(path)?;
    if let (Some(m), Some(task)) = (mode, raw.task.as_mut()) {
        task.mode = Some(madmax::engine::RawValue::Str(m.config_name().into()));
    }
    Ok(raw)
}

/// Says why a scenario file cannot be evaluated, on standard error and, with `json`, as
/// `{"error", "field", "reference_message"}` on standard output (every command that reads a
/// scenario says it the same way); exit status 2.
pub fn input_failed(e: &InputError, json: bool) -> ExitCode {
    errln!("madmax: {}", e.line());
    if json {
        let mut v = json!({"error": e.line(), "field": e.field});
        if let Some(r) = &e.reference {
            v["reference_message"] = json!(r);
        }
        out_json(&v);
    }
    ExitCode::from(2)
}
