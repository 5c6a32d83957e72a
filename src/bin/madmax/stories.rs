//! `madmax stories`: the famous runs against what their sources reported.

use crate::io::out_json;
use std::process::ExitCode;

/// `madmax stories [--json]`: the famous runs against their sources.
pub fn run(json_out: bool) -> ExitCode {
    let list = match madmax::stories::all() {
        Ok(l) => l,
        Err(e) => {
            errln!("madmax: {e}");
            return ExitCode::from(1);
        }
    };
    if json_out {
        let rows: Vec<serde_json::Value> = list
            .iter()
            .map(|s| {
                let r = &s.spec.reported;
                serde_json::json!({
                    "id": s.spec.id, "title": s.spec.title, "metric": r.metric, "unit": r.unit,
                    "reported": r.value, "predicted": s.predicted, "difference": s.difference(),
                    "citation": r.citation.and_then(|i| s.spec.citations.get(i)).map(|c| &c.text),
                })
            })
            .collect();
        out_json(&serde_json::Value::Array(rows));
        return ExitCode::SUCCESS;
    }
    outln!("{:<16} {:>14} {:>14} {:>9}  unit", "story", "reported", "predicted", "diff");
    for s in &list {
        let r = &s.spec.reported;
        let p = s.predicted.map_or("-".to_owned(), |p| format!("{p:.4}"));
        let d = s.difference().map_or("-".to_owned(), |d| format!("{:+.1}%", d * 100.0));
        outln!("{:<16} {:>14.4} {:>14} {:>9}  {}", s.spec.id, r.value, p, d, r.unit);
    }
    ExitCode::SUCCESS
}
