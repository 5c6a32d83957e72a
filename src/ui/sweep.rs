//! Throughput sweeps for the charts: the current scenario re-evaluated at other cluster sizes
//! and local batch sizes, for pre-training and for inference. Plain Rust; no DOM.

use super::plan;
use crate::doc::{Config, Doc};
use crate::engine::scenario::Family;
use crate::engine::{evaluate, validate};
use crate::presets;
use serde_json::json;

/// One point of a sweep: the x value and the throughput there (None: the plan is not valid
/// at that size, e.g. the batches no longer divide evenly).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Point {
    pub x: f64,
    pub samples_per_s: Option<f64>,
    /// True for the scenario as configured.
    pub current: bool,
}

/// Which task a sweep evaluates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Pretrain,
    Inference,
}

impl Mode {
    fn config_name(self) -> &'static str {
        match self {
            Mode::Pretrain => "pretrain",
            Mode::Inference => "inference",
        }
    }
}

fn family(doc: &Doc) -> Option<Family> {
    let t = doc.text(Config::Model, "type")?;
    Family::ALL.iter().copied().find(|f| f.config_name() == t)
}

fn throughput(doc: &Doc) -> Option<f64> {
    let s = validate(&doc.to_raw()).ok()?;
    Some(evaluate(&s).throughput_samples_per_s)
}

fn with_mode(doc: &Doc, mode: Mode) -> Doc {
    let mut d = doc.clone();
    d.set(Config::Task, "type", json!(mode.config_name()));
    d
}

/// Throughput against the number of GPUs: the same GPUs per node, node counts from an eighth
/// to four times the current one (powers of two), the plan refitted at each size.
pub fn vs_gpus(doc: &Doc, mode: Mode) -> Vec<Point> {
    let (Some(f), Some(total), Some(nodes)) =
        (family(doc), doc.count(Config::System, "num_devices"), doc.count(Config::System, "num_nodes"))
    else {
        return Vec::new();
    };
    let per = total / nodes.max(1);
    let mut counts: Vec<u64> = (-3..=2)
        .map(|k: i32| if k < 0 { nodes >> (-k) as u32 } else { nodes << k as u32 })
        .filter(|&n| n >= 1)
        .collect();
    counts.push(nodes);
    counts.sort_unstable();
    counts.dedup();
    counts
        .into_iter()
        .map(|n| {
            let mut d = with_mode(doc, mode);
            d.set(Config::System, "num_nodes", json!(n));
            d.set(Config::System, "num_devices", json!(per * n));
            if n == 1 {
                d.set(Config::System, "ar_perc_intra", json!(1.0));
            } else if nodes == 1 {
                d.set(Config::System, "ar_perc_intra", json!(presets::DATACENTER_UTIL.ar_perc_intra));
            }
            plan::fit_to_cluster(&mut d.task, f, per, per * n);
            Point { x: (per * n) as f64, samples_per_s: throughput(&d), current: n == nodes }
        })
        .collect()
}

/// Throughput against the primary component's local batch (the other batches follow):
/// powers of two from an eighth to eight times the current batch.
pub fn vs_batch(doc: &Doc, mode: Mode) -> Vec<Point> {
    let Some(f) = family(doc) else { return Vec::new() };
    let Some(primary) = plan::spec_keys(f).first() else { return Vec::new() };
    let key = plan::batch_key(primary);
    let Some(b) = doc.count(Config::Task, key) else { return Vec::new() };
    let mut sizes: Vec<u64> =
        (-3..=3).map(|k: i32| if k < 0 { b >> (-k) as u32 } else { b << k as u32 }).filter(|&x| x >= 1).collect();
    sizes.push(b);
    sizes.sort_unstable();
    sizes.dedup();
    sizes
        .into_iter()
        .map(|x| {
            let mut d = with_mode(doc, mode);
            d.set(Config::Task, key, json!(x));
            plan::sync_batches(&mut d.task, f);
            Point { x: x as f64, samples_per_s: throughput(&d), current: x == b }
        })
        .collect()
}

/// One batch size of an LLM serving scenario.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ServePoint {
    pub batch: u64,
    /// Time per output token, s.
    pub tpot_s: f64,
    /// Output tokens per second over the cluster.
    pub tokens_per_s: f64,
    /// True when the batch's KV cache fits.
    pub fits: bool,
    pub current: bool,
}

/// The serving trade-off: the scenario at batch sizes 1, 2, 4, ... up to the largest that fits
/// (and one beyond, marked), each with its time per output token and token throughput.
pub fn serving(doc: &Doc) -> Vec<ServePoint> {
    let Some(b) = doc.count(Config::Task, "local_transformer_bs") else { return Vec::new() };
    let Some(f) = family(doc) else { return Vec::new() };
    let mut out = Vec::new();
    let mut x = 1u64;
    while x <= 4096 {
        let mut d = doc.clone();
        d.set(Config::Task, "local_transformer_bs", json!(x));
        plan::sync_batches(&mut d.task, f);
        let Some(r) = validate(&d.to_raw()).ok().map(|s| evaluate(&s)) else { break };
        let Some(sv) = r.serving else { break };
        let fits = r.memory.fits();
        out.push(ServePoint {
            batch: x,
            tpot_s: sv.tpot_s,
            tokens_per_s: sv.output_tokens_per_s,
            fits,
            current: x == b,
        });
        if !fits && x > b {
            break;
        }
        x *= 2;
    }
    if !out.iter().any(|p| p.current) {
        let mut d = doc.clone();
        plan::sync_batches(&mut d.task, f);
        if let Some(r) = validate(&d.to_raw()).ok().map(|s| evaluate(&s)) {
            if let Some(sv) = r.serving {
                out.push(ServePoint {
                    batch: b,
                    tpot_s: sv.tpot_s,
                    tokens_per_s: sv.output_tokens_per_s,
                    fits: r.memory.fits(),
                    current: true,
                });
                out.sort_by_key(|p| p.batch);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ui::state::State;

    #[test]
    fn sweeps_cover_the_current_point_and_other_sizes() {
        let s = State::initial();
        let now = s.good.as_ref().expect("good").report.throughput_samples_per_s;
        let g = vs_gpus(&s.doc, Mode::Pretrain);
        assert!(g.len() >= 5, "{g:?}");
        let cur = g.iter().find(|p| p.current).expect("current point");
        assert_eq!(cur.x, 2048.0);
        assert_eq!(cur.samples_per_s, Some(now));
        assert!(g.iter().all(|p| p.samples_per_s.is_some()), "{g:?}");
        let b = vs_batch(&s.doc, Mode::Inference);
        assert!(b.len() >= 4 && b.iter().any(|p| p.current));
        // Inference is faster per iteration than training on the same plan.
        let inf_now = b.iter().find(|p| p.current).and_then(|p| p.samples_per_s).expect("valid");
        assert!(inf_now > now);
    }

    #[test]
    fn serving_points_trade_latency_for_throughput_up_to_the_memory_limit() {
        let p = presets::all().expect("presets");
        let sc = p.scenarios.iter().find(|s| s.id == "serve__llama2_70b__h100_sxm_4__fp8").expect("serving preset");
        let mut doc = Doc::new(p.configs(sc).expect("configs"));
        crate::ui::state::default_model_settings(&mut doc, crate::engine::scenario::Mode::Default);
        let pts = serving(&doc);
        assert!(pts.len() >= 5, "{pts:?}");
        assert!(pts.iter().any(|p| p.current));
        for w in pts.windows(2) {
            assert!(w[1].tokens_per_s > w[0].tokens_per_s && w[1].tpot_s >= w[0].tpot_s, "{w:?}");
        }
        assert!(pts.iter().any(|p| p.fits) && pts.last().is_some_and(|p| !p.fits || p.batch == 4096));
    }

    #[test]
    fn dlrm_sweeps_keep_embedding_batches_consistent() {
        let p = presets::all().expect("presets");
        let sc = p.scenarios.iter().find(|s| s.id == "dlrm__dlrm_a__zionex_128__dlrm_train").expect("case");
        let doc = Doc::new(p.configs(sc).expect("configs"));
        assert!(vs_gpus(&doc, Mode::Pretrain).iter().all(|p| p.samples_per_s.is_some()));
        assert!(vs_batch(&doc, Mode::Pretrain).iter().all(|p| p.samples_per_s.is_some()));
    }
}
