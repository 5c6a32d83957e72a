//! No input makes the engine panic: golden inputs with one field broken in every way we can
//! think of are either rejected with a named field or evaluated to finite numbers.

use crate::support::{case_files, raw_of, read_json};
use madmax::engine::{evaluate, validate};
use serde_json::{json, Value};

fn nasty_values() -> Vec<Value> {
    vec![
        Value::Null,
        json!(0),
        json!(-1),
        json!(1),
        json!(2),
        json!(3),
        json!(0.5),
        json!(1e308),
        json!(-1e308),
        json!(i64::MAX),
        json!(u64::MAX),
        // The largest accepted counts: integer arithmetic must not overflow anywhere.
        json!(1u64 << 40),
        json!(1u64 << 24),
        json!(10_000),
        json!(1e-300),
        json!("x"),
        json!(""),
        json!(true),
        json!([]),
        json!([1]),
        json!(["tp", "ddp", "fsdp"]),
        json!({}),
    ]
}

#[test]
fn broken_fields_never_panic_and_results_stay_finite() {
    let values = nasty_values();
    let mut evaluated = 0;
    let mut rejected = 0;
    // Every 10th case keeps this fast while covering all families.
    for f in case_files().iter().step_by(10) {
        let case = read_json(f);
        for config in ["model", "system", "task"] {
            let keys: Vec<String> =
                case["inputs"][config].as_object().map(|o| o.keys().cloned().collect()).unwrap_or_default();
            for key in &keys {
                for v in values.iter().cloned().chain([Value::String("__delete__".into())]) {
                    let mut inputs = case["inputs"].clone();
                    if v == "__delete__" {
                        inputs[config].as_object_mut().map(|o| o.remove(key));
                    } else {
                        inputs[config][key] = v.clone();
                    }
                    let raw = raw_of(&json!({ "inputs": inputs }));
                    let outcome = std::panic::catch_unwind(|| match validate(&raw) {
                        Ok(s) => Ok(evaluate(&s)),
                        Err(e) => Err(e),
                    });
                    match outcome {
                        Err(_) => panic!("panic with {config}.{key} = {v} in {}", f.display()),
                        Ok(Err(errors)) => {
                            assert!(errors.iter().all(|e| !e.field.is_empty()), "{errors:?}");
                            rejected += 1;
                        }
                        Ok(Ok(r)) => {
                            assert!(r.iteration_s.is_finite() && r.iteration_s > 0.0, "{config}.{key} = {v}");
                            assert!(r.throughput_samples_per_s.is_finite());
                            assert!(r.timeline.iter().all(|op| op.start_s.is_finite() && op.duration_s >= 0.0));
                            evaluated += 1;
                        }
                    }
                }
            }
        }
    }
    assert!(evaluated > 100 && rejected > 1000, "evaluated {evaluated}, rejected {rejected}");
}

#[test]
fn schedule_invariants_hold_on_every_golden_case() {
    use madmax::engine::ops::Stream;
    for f in case_files() {
        let case = read_json(&f);
        let r = evaluate(&validate(&raw_of(&case)).expect("golden inputs are valid"));
        // Each stream runs one op at a time, in order.
        for s in [Stream::Computation, Stream::Communication] {
            let mut end = 0.0f64;
            for op in r.stream(s) {
                assert!(op.start_s >= end, "{}: {} overlaps its predecessor", f.display(), op.name);
                end = op.end_s();
            }
        }
        // Every op starts after its dependencies end.
        for op in &r.timeline {
            for d in op.deps.ids() {
                assert!(op.start_s >= r.timeline[d as usize].end_s(), "{}: {}", f.display(), op.name);
            }
        }
        // Iteration time bounds: at least the busiest stream, at most everything in series.
        assert!(r.iteration_s >= r.compute_s.max(r.comm_s) * (1.0 - 1e-12));
        assert!(r.iteration_s <= (r.compute_s + r.comm_s) * (1.0 + 1e-12));
    }
}
