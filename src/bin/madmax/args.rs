//! The command line, parsed into a typed [`Command`] before anything runs (with `lexopt`: each
//! argument read once, a value taken right after its option, arguments that are not UTF-8
//! refused rather than a panic). Commands then read checked values, and every usage problem is
//! one sentence naming the command and the argument.

use lexopt::{Arg, Parser, ValueExt};
use madmax::engine::scenario::Mode;
use std::ffi::OsString;

/// Most local batches `explore --local-batches` takes (each one multiplies the plans).
pub const MAX_LOCAL_BATCHES: usize = 64;

/// `madmax eval FILE [--json] [--timeline] [--mode M]`.
#[derive(Debug, PartialEq)]
pub struct EvalArgs {
    pub file: String,
    pub json: bool,
    pub timeline: bool,
    /// Which model evaluates the file, overriding its `task.mode`.
    pub mode: Option<Mode>,
}

/// `madmax explore FILE [--json] [--top N] [--local-batches L] [--mode M] [--max-tpot-ms MS]
/// [--max-ttft-ms MS] [--weight-formats L] [--kv-formats L]`.
#[derive(Debug, PartialEq)]
pub struct ExploreArgs {
    pub file: String,
    pub json: bool,
    /// Plans printed.
    pub top: usize,
    /// Local batches to search; `None`: the task's global batch, fixed.
    pub local_batches: Option<Vec<u64>>,
    pub mode: Option<Mode>,
    /// Serving: most time per output token, s.
    pub max_tpot_s: Option<f64>,
    /// Serving: most time to the first token, s.
    pub max_ttft_s: Option<f64>,
    /// Serving: weight and KV-cache formats to try; empty: the task's.
    pub formats: madmax::engine::explore::Formats,
}

/// `madmax validate [FILE.csv ...] [--json]`.
#[derive(Debug, PartialEq)]
pub struct ValidateArgs {
    /// CSVs to read (`-`: standard input); none: the runs that ship with madmax.
    pub files: Vec<String>,
    pub json: bool,
}

/// `madmax bench DIR [--min-ms N] [--explore DIR]`.
#[derive(Debug, PartialEq)]
pub struct BenchArgs {
    pub dir: String,
    /// Milliseconds of repetitions per case.
    pub min_ms: f64,
    pub explore_dir: Option<String>,
}

/// What the command line asks for.
#[derive(Debug, PartialEq)]
pub enum Command {
    Eval(EvalArgs),
    Explore(ExploreArgs),
    Validate(ValidateArgs),
    Stories {
        json: bool,
    },
    /// `madmax paper [--json] [--mode M]`: the paper's findings; `mode` `None`: both models.
    Paper {
        json: bool,
        mode: Option<Mode>,
    },
    Bench(BenchArgs),
    Help,
    Version,
}

/// A usage problem, as the sentence printed after `madmax: `.
#[derive(Debug, PartialEq)]
pub struct Usage(pub String);

/// Parses the arguments after the program's name.
pub fn parse(args: impl IntoIterator<Item = OsString>) -> Result<Command, Usage> {
    let mut p = Parser::from_args(args);
    let first = p.next().map_err(|e| Usage(e.to_string()))?;
    match first {
        Some(Arg::Long("help") | Arg::Short('h')) => Ok(Command::Help),
        Some(Arg::Long("version") | Arg::Short('V')) => Ok(Command::Version),
        Some(Arg::Value(v)) => {
            let name = v.string().map_err(|e| Usage(e.to_string()))?;
            match name.as_str() {
                "help" => Ok(Command::Help),
                "eval" => eval(&mut p),
                "explore" => explore(&mut p),
                "validate" => validate(&mut p),
                "stories" => stories(&mut p),
                "paper" => paper(&mut p),
                "bench" => bench(&mut p),
                other => Err(Usage(format!("unknown command '{other}'"))),
            }
        }
        Some(other) => Err(Usage(format!("unknown command '{}'", shown(&other)))),
        None => Err(Usage("missing command".to_owned())),
    }
}

/// How an argument was written, for messages.
fn shown(a: &Arg) -> String {
    match a {
        Arg::Short(c) => format!("-{c}"),
        Arg::Long(l) => format!("--{l}"),
        Arg::Value(v) => v.to_string_lossy().into_owned(),
    }
}

/// The next argument of command `cmd`, with lexopt's problems (a value given to a flag, text
/// that is not UTF-8) said as usage problems.
fn next<'p>(p: &'p mut Parser, cmd: &str) -> Result<Option<Arg<'p>>, Usage> {
    p.next().map_err(|e| Usage(format!("{cmd}: {e}")))
}

/// A latency limit's value: a positive number of milliseconds, in seconds.
fn limit_s(p: &mut Parser, cmd: &str, option: &str) -> Result<f64, Usage> {
    let why = format!("--{option} needs a positive number of milliseconds");
    let ms = value(p, cmd, &why)?.parse::<f64>().ok().filter(|x| x.is_finite() && *x > 0.0);
    ms.map(|ms| ms / 1e3).ok_or_else(|| Usage(format!("{cmd}: {why}")))
}

/// The value after an option, as text.
fn value(p: &mut Parser, cmd: &str, what: &str) -> Result<String, Usage> {
    p.value().ok().and_then(|v| v.string().ok()).ok_or_else(|| Usage(format!("{cmd}: {what}")))
}

/// A positional argument as text (a file or a folder).
fn text(v: OsString, cmd: &str) -> Result<String, Usage> {
    v.string().map_err(|e| Usage(format!("{cmd}: {e}")))
}

fn unexpected(cmd: &str, a: &Arg) -> Usage {
    Usage(format!("{cmd}: unexpected argument '{}'", shown(a)))
}

fn mode(p: &mut Parser, cmd: &str) -> Result<Mode, Usage> {
    match value(p, cmd, "--mode takes default or reference")?.as_str() {
        "default" => Ok(Mode::Default),
        "reference" => Ok(Mode::Reference),
        _ => Err(Usage(format!("{cmd}: --mode takes default or reference"))),
    }
}

fn eval(p: &mut Parser) -> Result<Command, Usage> {
    const CMD: &str = "eval";
    let (mut file, mut json, mut timeline, mut m) = (None, false, false, None);
    while let Some(a) = next(p, CMD)? {
        match a {
            Arg::Long("json") => json = true,
            Arg::Long("timeline") => timeline = true,
            Arg::Long("mode") => m = Some(mode(p, CMD)?),
            Arg::Value(v) if file.is_none() => file = Some(text(v, CMD)?),
            other => return Err(unexpected(CMD, &other)),
        }
    }
    let file = file.ok_or_else(|| Usage(format!("{CMD}: missing FILE")))?;
    Ok(Command::Eval(EvalArgs { file, json, timeline, mode: m }))
}

fn explore(p: &mut Parser) -> Result<Command, Usage> {
    const CMD: &str = "explore";
    let mut a = ExploreArgs {
        file: String::new(),
        json: false,
        top: 15,
        local_batches: None,
        mode: None,
        max_tpot_s: None,
        max_ttft_s: None,
        formats: Default::default(),
    };
    let mut file = None;
    while let Some(arg) = next(p, CMD)? {
        match arg {
            Arg::Long("json") => a.json = true,
            Arg::Long("mode") => a.mode = Some(mode(p, CMD)?),
            Arg::Long("max-tpot-ms") => a.max_tpot_s = Some(limit_s(p, CMD, "max-tpot-ms")?),
            Arg::Long("max-ttft-ms") => a.max_ttft_s = Some(limit_s(p, CMD, "max-ttft-ms")?),
            Arg::Long(name @ ("weight-formats" | "kv-formats")) => {
                let kv = name == "kv-formats";
                let flag = if kv { "kv-formats" } else { "weight-formats" };
                let why = format!("--{flag} needs a list of formats like fp16,fp8,int4");
                let list = madmax::engine::explore::Formats::parse_list(&value(p, CMD, &why)?)
                    .map_err(|e| Usage(format!("{CMD}: --{flag}: {e}")))?;
                if list.is_empty() {
                    return Err(Usage(format!("{CMD}: {why}")));
                }
                if kv {
                    a.formats.kv = list;
                } else {
                    a.formats.weights = list;
                }
            }
            Arg::Long("top") => {
                let why = "--top needs a number";
                a.top = value(p, CMD, why)?.parse().map_err(|_| Usage(format!("{CMD}: {why}")))?;
            }
            Arg::Long("local-batches") => {
                let why = format!("--local-batches needs a list of 1 to {MAX_LOCAL_BATCHES} counts like 1,2,4,8");
                let list: Option<Vec<u64>> =
                    value(p, CMD, &why)?.split(',').map(|x| x.trim().parse::<u64>().ok().filter(|n| *n > 0)).collect();
                match list {
                    Some(l) if !l.is_empty() && l.len() <= MAX_LOCAL_BATCHES => a.local_batches = Some(l),
                    _ => return Err(Usage(format!("{CMD}: {why}"))),
                }
            }
            Arg::Value(v) if file.is_none() => file = Some(text(v, CMD)?),
            other => return Err(unexpected(CMD, &other)),
        }
    }
    a.file = file.ok_or_else(|| Usage(format!("{CMD}: missing FILE")))?;
    Ok(Command::Explore(a))
}

fn validate(p: &mut Parser) -> Result<Command, Usage> {
    const CMD: &str = "validate";
    let (mut files, mut json) = (Vec::new(), false);
    while let Some(a) = next(p, CMD)? {
        match a {
            Arg::Long("json") => json = true,
            Arg::Value(v) => files.push(text(v, CMD)?),
            other => return Err(unexpected(CMD, &other)),
        }
    }
    Ok(Command::Validate(ValidateArgs { files, json }))
}

fn stories(p: &mut Parser) -> Result<Command, Usage> {
    const CMD: &str = "stories";
    let mut json = false;
    while let Some(a) = next(p, CMD)? {
        match a {
            Arg::Long("json") => json = true,
            other => return Err(unexpected(CMD, &other)),
        }
    }
    Ok(Command::Stories { json })
}

fn paper(p: &mut Parser) -> Result<Command, Usage> {
    const CMD: &str = "paper";
    let (mut json, mut m) = (false, None);
    while let Some(a) = next(p, CMD)? {
        match a {
            Arg::Long("json") => json = true,
            Arg::Long("mode") => m = Some(mode(p, CMD)?),
            other => return Err(unexpected(CMD, &other)),
        }
    }
    Ok(Command::Paper { json, mode: m })
}

fn bench(p: &mut Parser) -> Result<Command, Usage> {
    const CMD: &str = "bench";
    let (mut dir, mut min_ms, mut explore_dir) = (None, 20.0, None);
    while let Some(a) = next(p, CMD)? {
        match a {
            Arg::Long("min-ms") => {
                let why = "--min-ms needs a positive number";
                min_ms = value(p, CMD, why)?
                    .parse::<f64>()
                    .ok()
                    .filter(|v| v.is_finite() && *v > 0.0)
                    .ok_or_else(|| Usage(format!("{CMD}: {why}")))?;
            }
            Arg::Long("explore") => explore_dir = Some(value(p, CMD, "--explore needs a folder of scenarios")?),
            Arg::Value(v) if dir.is_none() => dir = Some(text(v, CMD)?),
            other => return Err(unexpected(CMD, &other)),
        }
    }
    let dir = dir.ok_or_else(|| Usage(format!("{CMD}: missing DIR")))?;
    Ok(Command::Bench(BenchArgs { dir, min_ms, explore_dir }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(args: &[&str]) -> Result<Command, Usage> {
        parse(args.iter().map(OsString::from))
    }

    fn problem(args: &[&str]) -> String {
        match parsed(args) {
            Err(Usage(m)) => m,
            Ok(c) => panic!("{args:?} parsed as {c:?}"),
        }
    }

    #[test]
    fn commands_parse_into_typed_arguments() {
        assert_eq!(
            parsed(&["eval", "-", "--json", "--mode", "default"]),
            Ok(Command::Eval(EvalArgs { file: "-".into(), json: true, timeline: false, mode: Some(Mode::Default) }))
        );
        let Ok(Command::Explore(e)) =
            parsed(&["explore", "f.json", "--top", "5", "--local-batches", "1, 2,4", "--max-tpot-ms", "50"])
        else {
            panic!("explore");
        };
        assert_eq!((e.file.as_str(), e.top, e.local_batches), ("f.json", 5, Some(vec![1, 2, 4])));
        assert_eq!((e.max_tpot_s, e.max_ttft_s, e.mode), (Some(0.05), None, None));
        let Ok(Command::Explore(e)) =
            parsed(&["explore", "f.json", "--weight-formats", "fp8, INT4,fp8", "--kv-formats", "fp8"])
        else {
            panic!("explore")
        };
        use madmax::engine::scenario::Precision;
        assert_eq!((e.formats.weights, e.formats.kv), (vec![Precision::Fp8, Precision::Int4], vec![Precision::Fp8]));
        assert_eq!(
            parsed(&["validate", "a.csv", "-", "--json"]),
            Ok(Command::Validate(ValidateArgs { files: vec!["a.csv".into(), "-".into()], json: true }))
        );
        assert_eq!(parsed(&["stories"]), Ok(Command::Stories { json: false }));
        assert_eq!(parsed(&["paper"]), Ok(Command::Paper { json: false, mode: None }));
        assert_eq!(
            parsed(&["paper", "--json", "--mode", "reference"]),
            Ok(Command::Paper { json: true, mode: Some(Mode::Reference) })
        );
        assert_eq!(problem(&["paper", "--mode", "both"]), "paper: --mode takes default or reference");
        assert_eq!(
            parsed(&["bench", "cases", "--min-ms", "1", "--explore", "ex"]),
            Ok(Command::Bench(BenchArgs { dir: "cases".into(), min_ms: 1.0, explore_dir: Some("ex".into()) }))
        );
        for help in [&["--help"][..], &["-h"], &["help"]] {
            assert_eq!(parsed(help), Ok(Command::Help));
        }
        assert_eq!(parsed(&["-V"]), Ok(Command::Version));
        // `--option=value` is the same as `--option value`.
        assert!(matches!(parsed(&["explore", "f", "--top=3"]), Ok(Command::Explore(ExploreArgs { top: 3, .. }))));
    }

    #[test]
    fn usage_problems_name_the_command_and_the_argument() {
        assert_eq!(problem(&[]), "missing command");
        assert_eq!(problem(&["frobnicate"]), "unknown command 'frobnicate'");
        assert_eq!(problem(&["eval"]), "eval: missing FILE");
        assert_eq!(problem(&["eval", "a", "b"]), "eval: unexpected argument 'b'");
        assert_eq!(problem(&["eval", "a", "--help"]), "eval: unexpected argument '--help'");
        assert_eq!(problem(&["eval", "a", "--mode", "fast"]), "eval: --mode takes default or reference");
        assert_eq!(problem(&["eval", "a", "--mode"]), "eval: --mode takes default or reference");
        assert!(problem(&["eval", "a", "--json=yes"]).starts_with("eval: "));
        assert_eq!(problem(&["explore", "f", "--top", "-1"]), "explore: --top needs a number");
        assert_eq!(
            problem(&["explore", "f", "--max-ttft-ms", "0"]),
            "explore: --max-ttft-ms needs a positive number of milliseconds"
        );
        let many = (1..=65).map(|b| b.to_string()).collect::<Vec<_>>().join(",");
        assert!(problem(&["explore", "f", "--local-batches", &many]).contains("1 to 64 counts"));
        assert!(problem(&["explore", "f", "--local-batches", "1,0"]).contains("1 to 64 counts"));
        assert_eq!(
            problem(&["explore", "f", "--weight-formats", "fp16,fp9"]),
            "explore: --weight-formats: \"fp9\" is not a number format: use fp16, bf16, fp8, int8, int4"
        );
        assert!(problem(&["explore", "f", "--kv-formats", " , "]).contains("--kv-formats needs a list of formats"));
        assert_eq!(problem(&["stories", "--bogus"]), "stories: unexpected argument '--bogus'");
        assert_eq!(problem(&["bench", "d", "--min-ms", "nan"]), "bench: --min-ms needs a positive number");
        assert_eq!(problem(&["bench"]), "bench: missing DIR");
    }

    #[cfg(unix)]
    #[test]
    fn a_file_name_that_is_not_utf8_is_a_usage_problem_not_a_panic() {
        use std::os::unix::ffi::OsStringExt;
        let args = vec![OsString::from("eval"), OsString::from_vec(vec![0x66, 0xff])];
        assert!(matches!(parse(args), Err(Usage(m)) if m.starts_with("eval: ")));
    }
}
