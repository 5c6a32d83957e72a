//! Throughput sweeps for the charts: the current scenario re-evaluated at other cluster sizes
//! and local batch sizes, for pre-training and for inference. Plain Rust; no DOM.

use super::plan;
use crate::doc::{Config, Doc};
use crate::engine::scenario::Family;
use crate::engine::{evaluate, validate};
use crate::presets;
use crate::units;
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
pub enum SweepTask {
    Pretrain,
    Inference,
}

impl SweepTask {
    fn config_name(self) -> &'static str {
        match self {
            SweepTask::Pretrain => "pretrain",
            SweepTask::Inference => "inference",
        }
    }
}

fn family(doc: &Doc) -> Option<Family> {
    let t = doc.text(Config::Model, "type")?;
    Family::ALL.iter().copied().find(|f| f.config_name() == t)
}

/// A scenario a sweep evaluates: where it sits on the chart and its doc. Sweeps are lists of
/// probes so that the page can evaluate them one at a time, between frames.
#[derive(Clone, Debug, PartialEq)]
pub struct Probe {
    pub x: f64,
    /// True for the scenario as configured.
    pub current: bool,
    pub doc: Doc,
}

/// The throughput at a probe.
pub fn throughput(p: &Probe) -> Point {
    let samples_per_s = validate(&p.doc.to_raw()).ok().map(|s| evaluate(&s).throughput_samples_per_s);
    Point { x: p.x, samples_per_s, current: p.current }
}

fn with_task(doc: &Doc, task: SweepTask) -> Doc {
    let mut d = doc.clone();
    d.set(Config::Task, "type", json!(task.config_name()));
    d
}

/// Throughput against the number of GPUs: the same GPUs per node, node counts from an eighth
/// to four times the current one (powers of two), the plan refitted at each size.
pub fn vs_gpus(doc: &Doc, task: SweepTask) -> Vec<Probe> {
    let (Some(f), Some(total), Some(nodes)) =
        (family(doc), doc.count(Config::System, "num_devices"), doc.count(Config::System, "num_nodes"))
    else {
        return Vec::new();
    };
    let per = total / nodes.max(1);
    let mut counts: Vec<u64> = (-3..=2)
        .map(|k: i32| if k < 0 { nodes >> (-k) as u32 } else { nodes.saturating_mul(1 << k) })
        .filter(|&n| n >= 1)
        .collect();
    counts.push(nodes);
    crate::engine::order::sort(&mut counts);
    counts.dedup();
    counts
        .into_iter()
        .map(|n| {
            let mut d = with_task(doc, task);
            d.set(Config::System, "num_nodes", json!(n));
            d.set(Config::System, "num_devices", json!(per.saturating_mul(n)));
            if n == 1 {
                d.set(Config::System, "ar_perc_intra", json!(1.0));
            } else if nodes == 1 {
                d.set(Config::System, "ar_perc_intra", json!(presets::DATACENTER_UTIL.ar_perc_intra));
            }
            plan::fit_to_cluster(&mut d.task, f, per, per.saturating_mul(n));
            Probe { x: per.saturating_mul(n) as f64, current: n == nodes, doc: d }
        })
        .collect()
}

/// Throughput against the primary component's local batch (the other batches follow):
/// powers of two from an eighth to eight times the current batch.
pub fn vs_batch(doc: &Doc, task: SweepTask) -> Vec<Probe> {
    let Some(f) = family(doc) else { return Vec::new() };
    let Some(primary) = plan::spec_keys(f).first() else { return Vec::new() };
    let key = plan::batch_key(primary);
    let Some(b) = doc.count(Config::Task, key) else { return Vec::new() };
    let sizes = (-3..=3).map(|k: i32| if k < 0 { b >> (-k) as u32 } else { b.saturating_mul(1 << k) });
    batch_probes(&with_task(doc, task), f, key, b, sizes.filter(|&x| x >= 1).collect())
}

/// The doc at each batch size of `sizes` and at its own batch `b` (under `key`; the other
/// batches follow), in batch order.
fn batch_probes(doc: &Doc, f: Family, key: &str, b: u64, mut sizes: Vec<u64>) -> Vec<Probe> {
    sizes.push(b);
    crate::engine::order::sort(&mut sizes);
    sizes.dedup();
    sizes
        .into_iter()
        .map(|x| {
            let mut d = doc.clone();
            d.set(Config::Task, key, json!(x));
            plan::sync_batches(&mut d.task, f);
            Probe { x: x as f64, current: x == b, doc: d }
        })
        .collect()
}

/// What pointing at each point of a throughput sweep says: its size and throughput, and over
/// GPUs (`over_gpus`) its throughput per GPU against the smallest size's (scaling efficiency).
pub fn point_sentences(points: &[Point], over_gpus: bool) -> Vec<String> {
    let first = points.iter().find_map(|p| Some((p.x, p.samples_per_s?))).filter(|f| f.0 > 0.0 && f.1 > 0.0);
    points
        .iter()
        .map(|p| {
            let size = if over_gpus { format!("{} GPUs", p.x) } else { format!("local batch {}", p.x) };
            let this = if p.current { " (this scenario)" } else { "" };
            match (p.samples_per_s, first) {
                (None, _) => format!("{size}{this}: no valid plan"),
                (Some(t), Some((x0, t0))) if over_gpus && p.x > x0 => format!(
                    "{size}{this}: {}, {} of perfect scaling from {} GPUs",
                    units::si(t, "samples/s"),
                    units::percent(t / p.x / (t0 / x0)),
                    x0
                ),
                (Some(t), _) => format!("{size}{this}: {}", units::si(t, "samples/s")),
            }
        })
        .collect()
}

/// What pointing at each point of the serving trade-off says.
pub fn serve_sentences(points: &[ServePoint]) -> Vec<String> {
    points
        .iter()
        .map(|p| {
            format!(
                "batch {}{}: {}, {} per output token{}",
                p.batch,
                if p.current { " (this scenario)" } else { "" },
                units::si(p.tokens_per_s, "tokens/s"),
                units::duration(p.tpot_s),
                if p.fits { "" } else { " (does not fit in memory)" }
            )
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
    /// In-flight batching: the KV cache holds fewer requests than the batch asks for, so a
    /// larger batch changes nothing.
    pub capped: bool,
    pub current: bool,
}

/// Largest batch the serving trade-off tries.
const MAX_SERVING_BATCH: u64 = 4096;

/// The serving trade-off's probes: batch sizes 1, 2, 4, ... up to 4096, and the scenario's own
/// batch ([`serving_curve`] keeps those up to the largest that fits, and one beyond).
pub fn serving(doc: &Doc) -> Vec<Probe> {
    let key = "local_transformer_bs";
    let (Some(b), Some(f)) = (doc.count(Config::Task, key), family(doc)) else { return Vec::new() };
    let sizes = std::iter::successors(Some(1u64), |x| Some(x * 2)).take_while(|x| *x <= MAX_SERVING_BATCH);
    batch_probes(doc, f, key, b, sizes.collect())
}

/// The serving figures at a probe; `None` when the scenario is not valid there or not serving.
pub fn serve_point(p: &Probe) -> Option<ServePoint> {
    let r = evaluate(&validate(&p.doc.to_raw()).ok()?);
    let sv = r.serving?;
    Some(ServePoint {
        batch: p.x as u64,
        tpot_s: sv.tpot_s,
        tokens_per_s: sv.output_tokens_per_s,
        fits: r.memory.fits(),
        capped: sv.in_flight < sv.batch as f64,
        current: p.current,
    })
}

/// The serving trade-off from its probes and their points ([`serve_point`]), in batch order:
/// powers of two up to the first that is not valid, or to the first past the scenario's own
/// batch that does not fit (or, in flight, that the KV cache caps or that gains no throughput);
/// and the scenario's own batch.
pub fn serving_curve(probes: &[Probe], points: &[Option<ServePoint>]) -> Vec<ServePoint> {
    let own = probes.iter().zip(points).find(|(p, _)| p.current);
    let b = own.map_or(0, |(p, _)| p.x as u64);
    let mut out: Vec<ServePoint> = Vec::new();
    for (probe, point) in probes.iter().zip(points).filter(|(p, _)| (p.x as u64).is_power_of_two()) {
        let Some(q) = point else { break };
        // In flight, a step budget full of prompts caps throughput: more requests only wait.
        let saturated = out.last().is_some_and(|p| q.tokens_per_s <= p.tokens_per_s * 1.001);
        out.push(*q);
        if (!q.fits || q.capped || saturated) && probe.x as u64 > b {
            break;
        }
    }
    if !out.iter().any(|p| p.current) {
        if let Some(q) = own.and_then(|(_, q)| *q) {
            out.push(q);
            crate::engine::order::sort_by_key(&mut out, |p| p.batch);
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
        let g: Vec<Point> = vs_gpus(&s.doc, SweepTask::Pretrain).iter().map(throughput).collect();
        assert!(g.len() >= 5, "{g:?}");
        let cur = g.iter().find(|p| p.current).expect("current point");
        // The page's scenario: 128 GPUs.
        assert_eq!(s.doc.count(Config::System, "num_devices"), Some(128));
        assert_eq!(cur.x, 128.0);
        assert_eq!(cur.samples_per_s, Some(now));
        assert!(g.iter().all(|p| p.samples_per_s.is_some()), "{g:?}");
        let b: Vec<Point> = vs_batch(&s.doc, SweepTask::Inference).iter().map(throughput).collect();
        assert!(b.len() >= 4 && b.iter().any(|p| p.current));
        // Serving swept, not training: its own figure at the page's batch (a prefill and the
        // decode of every generated token), and more requests per second at larger batches
        // (each step's weights read once for the whole batch).
        let inf_now = b.iter().find(|p| p.current).and_then(|p| p.samples_per_s).expect("valid");
        assert!((inf_now / now - 1.0).abs() > 0.01, "{inf_now} {now}");
        assert!(b.windows(2).all(|w| w[1].samples_per_s > w[0].samples_per_s), "{b:?}");
    }

    /// LLaMA-2-70B served in FP8 on 4 H100s (a preset), in the default model.
    fn serving_doc() -> Doc {
        let p = presets::all().expect("presets");
        let sc = p.scenarios.iter().find(|s| s.id == "serve__llama2_70b__h100_sxm_4__fp8").expect("serving preset");
        let mut doc = Doc::new(p.configs(sc).expect("configs"));
        crate::ui::state::default_model_settings(&mut doc, crate::engine::scenario::Mode::Default);
        doc
    }

    /// The serving trade-off of `doc`, as the page draws it.
    fn curve_of(doc: &Doc) -> Vec<ServePoint> {
        let probes = serving(doc);
        serving_curve(&probes, &probes.iter().map(serve_point).collect::<Vec<_>>())
    }

    #[test]
    fn serving_points_trade_latency_for_throughput_up_to_the_memory_limit() {
        let pts = curve_of(&serving_doc());
        assert!(pts.len() >= 5, "{pts:?}");
        assert!(pts.iter().any(|p| p.current));
        for w in pts.windows(2) {
            assert!(w[1].tokens_per_s > w[0].tokens_per_s && w[1].tpot_s >= w[0].tpot_s, "{w:?}");
        }
        assert!(pts.iter().any(|p| p.fits) && pts.last().is_some_and(|p| !p.fits || p.batch == 4096));
    }

    #[test]
    fn in_flight_serving_points_stop_where_more_requests_gain_nothing() {
        let mut doc = serving_doc();
        doc.set(Config::Task, "batching", serde_json::json!("inflight"));
        let pts = curve_of(&doc);
        // The engine admits what fits: every point fits. The curve ends where more requests
        // gain nothing: the KV cache caps them, or prompts fill the steps' token budget.
        assert!(pts.iter().all(|p| p.fits), "{pts:?}");
        assert!(pts.len() >= 5 && pts.last().is_some_and(|p| p.batch < 4096), "{pts:?}");
        let (last, before) = (pts[pts.len() - 1], pts[pts.len() - 2]);
        assert!(last.capped || last.tokens_per_s <= before.tokens_per_s * 1.001, "{pts:?}");
        for w in pts[..pts.len() - 1].windows(2) {
            assert!(w[1].tokens_per_s > w[0].tokens_per_s && w[1].tpot_s >= w[0].tpot_s, "{w:?}");
        }
    }

    #[test]
    fn pointing_at_a_sweep_point_says_its_size_throughput_and_scaling() {
        let pts = [
            Point { x: 256.0, samples_per_s: Some(100.0), current: false },
            Point { x: 512.0, samples_per_s: Some(180.0), current: true },
            Point { x: 1024.0, samples_per_s: None, current: false },
        ];
        let said = point_sentences(&pts, true);
        assert_eq!(said[0], "256 GPUs: 100 samples/s");
        assert_eq!(said[1], "512 GPUs (this scenario): 180 samples/s, 90.0 % of perfect scaling from 256 GPUs");
        assert_eq!(said[2], "1024 GPUs: no valid plan");
        assert_eq!(point_sentences(&pts, false)[1], "local batch 512 (this scenario): 180 samples/s");
        let serve =
            [ServePoint { batch: 8, tpot_s: 0.0125, tokens_per_s: 640.0, fits: false, capped: false, current: false }];
        assert_eq!(
            serve_sentences(&serve),
            ["batch 8: 640 tokens/s, 12.5 ms per output token (does not fit in memory)"]
        );
    }

    #[test]
    fn dlrm_sweeps_keep_embedding_batches_consistent() {
        let p = presets::all().expect("presets");
        let sc = p.scenarios.iter().find(|s| s.id == "dlrm__dlrm_a__zionex_128__dlrm_train").expect("case");
        let doc = Doc::new(p.configs(sc).expect("configs"));
        assert!(vs_gpus(&doc, SweepTask::Pretrain).iter().all(|p| throughput(p).samples_per_s.is_some()));
        assert!(vs_batch(&doc, SweepTask::Pretrain).iter().all(|p| throughput(p).samples_per_s.is_some()));
    }
}
