//! The library of famous runs: each story is a published run (or claim) with its source, the
//! scenario that models it, optional what-if variants and a scaling sweep; computed here into
//! what the source reported, what the model predicts and the difference. Pure: the stories are
//! data (`presets/data/stories.json`), the numbers come from the engine.

use crate::accuracy::{RowResult, ShippedRow};
use crate::doc::Doc;
use crate::engine::{evaluate, validate, Report};
use crate::presets::{self, Cluster, Fabric};
use serde_json::{Map, Value};

/// A citation: the work and where to read it.
#[derive(Clone, Debug, PartialEq)]
pub struct Citation {
    pub text: String,
    pub url: String,
}

/// Which figure a story compares with its source.
#[derive(Clone, Copy, Debug, serde::Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    /// The story's validation row's predicted metric (the validation page's number).
    ValidationRow,
    /// Model FLOPs utilisation of the base scenario, 0..1.
    Mfu,
    /// Throughput of the base scenario, samples/s.
    SamplesPerS,
    /// Parameters of the base model, billions.
    ParamsB,
    /// Throughput of the first variant over the base's.
    Speedup,
    /// Strong scaling: throughput at the largest GPU count over the smallest's.
    ScalingSpeedup,
    /// Weak scaling: per-GPU throughput at the largest GPU count over the smallest's.
    ScalingEfficiency,
}

/// What the source reported.
#[derive(Clone, Debug, PartialEq)]
pub struct Reported {
    pub metric: Metric,
    pub value: f64,
    /// The unit as people read it (`MFU`, `TFLOP/s per GPU`, `x`).
    pub unit: String,
    /// The source's claim in words.
    pub text: String,
    /// Index into the story's citations; `None` when the number is an assumption.
    pub citation: Option<usize>,
}

/// Where a story's base scenario comes from.
#[derive(Clone, Debug, PartialEq)]
pub enum Base {
    /// A row of the shipped validation runs.
    Row { validation_row: String },
    /// A scenario preset, evaluated in a mode (`default` or `reference`).
    Preset { scenario: String, mode: String },
    /// A model preset (with `model_keys` set over its config) on a cluster with a task config;
    /// its row reads `label`, or the model's and the cluster's labels.
    Parts {
        model: String,
        model_keys: Map<String, Value>,
        cluster: Box<Cluster>,
        task: Map<String, Value>,
        label: Option<String>,
    },
}

/// A what-if: the base with another model (a preset's id: its config, with the base's
/// `model_keys`), another cluster and/or task keys.
#[derive(Clone, Debug, PartialEq)]
pub struct VariantSpec {
    pub label: String,
    pub model: Option<String>,
    pub cluster: Option<Cluster>,
    pub task: Map<String, Value>,
}

/// GPU counts for the scaling chart, and which kinds to draw.
#[derive(Clone, Debug, PartialEq)]
pub struct ScalingSpec {
    pub gpus: Vec<u64>,
    pub weak_only: bool,
    pub strong_only: bool,
}

/// A story as shipped.
#[derive(Clone, Debug, PartialEq)]
pub struct StorySpec {
    pub id: String,
    pub title: String,
    pub teaser: String,
    pub story: String,
    pub citations: Vec<Citation>,
    pub reported: Reported,
    pub base: Base,
    pub variants: Vec<VariantSpec>,
    pub scaling: Option<ScalingSpec>,
    pub assumptions: Vec<String>,
    /// `calculator` or `explorer`.
    pub open_in: String,
}

/// A scenario of a story, evaluated.
#[derive(Clone, Debug)]
pub struct Outcome {
    pub label: String,
    pub doc: Doc,
    /// The evaluation, or the first problem validation found.
    pub report: Result<Report, String>,
}

/// One GPU count of the scaling sweep: throughput (samples/s) with the same batch per GPU
/// (weak) and with the same global batch (strong); `None` where the plan does not fit that size.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ScalePoint {
    pub gpus: u64,
    pub weak: Option<f64>,
    pub strong: Option<f64>,
}

/// A story computed now.
#[derive(Clone, Debug)]
pub struct Story {
    pub spec: StorySpec,
    pub base: Outcome,
    pub variants: Vec<Outcome>,
    pub scaling: Vec<ScalePoint>,
    /// The model's figure for the reported metric, in the reported unit.
    pub predicted: Option<f64>,
}

impl Story {
    /// `(predicted - reported) / reported`.
    pub fn difference(&self) -> Option<f64> {
        let r = self.spec.reported.value;
        self.predicted.filter(|_| r != 0.0).map(|p| (p - r) / r)
    }
}

/// The stories' file name: the CLI and the tests embed it ([`specs`]); the page fetches it from
/// beside itself when the library is first shown (`ui::fetched`).
pub const STORIES_FILE: &str = "stories.json";

/// The shipped stories, or why the data could not be read (a defect the tests catch).
#[cfg(not(target_arch = "wasm32"))]
pub fn specs() -> Result<Vec<StorySpec>, String> {
    specs_of(include_str!("presets/data/stories.json"))
}

/// Each shipped story's id and title, in the library's order: the calculator's scenario picker
/// lists them (the page embeds the file for this; the library still fetches it with the
/// measured runs its numbers need).
pub fn index() -> &'static [(String, String)] {
    static INDEX: std::sync::OnceLock<Vec<(String, String)>> = std::sync::OnceLock::new();
    INDEX.get_or_init(|| {
        let v: Value = serde_json::from_str(include_str!("presets/data/stories.json")).unwrap_or_default();
        v.as_array()
            .map(|list| list.iter().filter_map(|s| Some((text(s, "id").ok()?, text(s, "title").ok()?))).collect())
            .unwrap_or_default()
    })
}

/// The stories of a `stories.json` text, or why it could not be read.
pub fn specs_of(json: &str) -> Result<Vec<StorySpec>, String> {
    let v: Value = serde_json::from_str(json).map_err(|e| format!("stories.json: {e}"))?;
    v.as_array()
        .ok_or("stories.json: not a list")?
        .iter()
        .enumerate()
        .map(|(i, s)| read_story(s).map_err(|e| format!("stories.json: story {i}: {e}")))
        .collect()
}

// The stories are read from JSON by hand: serde's derived readers for these types would add
// tens of kilobytes to the page for one small file.

fn text(v: &Value, key: &str) -> Result<String, String> {
    v.get(key).and_then(Value::as_str).map(str::to_owned).ok_or(format!("{key} is missing or not text"))
}

fn texts(v: &Value, key: &str) -> Result<Vec<String>, String> {
    match v.get(key) {
        None => Ok(Vec::new()),
        Some(Value::Array(a)) => {
            a.iter().map(|x| x.as_str().map(str::to_owned).ok_or(format!("{key}: not text"))).collect()
        }
        Some(_) => Err(format!("{key} is not a list")),
    }
}

fn number(v: &Value, key: &str) -> Result<f64, String> {
    v.get(key).and_then(Value::as_f64).ok_or(format!("{key} is missing or not a number"))
}

fn count(v: &Value, key: &str) -> Result<u64, String> {
    v.get(key).and_then(Value::as_u64).ok_or(format!("{key} is missing or not a whole number"))
}

fn flag(v: &Value, key: &str) -> bool {
    v.get(key).and_then(Value::as_bool).unwrap_or(false)
}

fn map(v: &Value, key: &str) -> Result<Map<String, Value>, String> {
    match v.get(key) {
        None => Ok(Map::new()),
        Some(Value::Object(m)) => Ok(m.clone()),
        Some(_) => Err(format!("{key} is not an object")),
    }
}

/// An optional number, `default` when absent.
fn optional(v: &Value, key: &str, default: f64) -> Result<f64, String> {
    match v.get(key) {
        None => Ok(default),
        Some(_) => number(v, key),
    }
}

fn read_cluster(v: &Value) -> Result<Cluster, String> {
    let fabric = match text(v, "fabric")?.as_str() {
        "datacenter" => Fabric::Datacenter,
        "consumer" => Fabric::Consumer,
        other => return Err(format!("fabric \"{other}\" is not datacenter or consumer")),
    };
    Ok(Cluster {
        id: String::new(),
        label: text(v, "label")?,
        gpu: text(v, "gpu")?,
        gpus_per_node: count(v, "gpus_per_node")?,
        nodes: count(v, "nodes")?,
        nic_ports_per_node: count(v, "nic_ports_per_node")?,
        nic_gbit_s: number(v, "nic_gbit_s")?,
        fabric,
        link_latency_ms: optional(v, "link_latency_ms", 0.0)?,
        sites: match v.get("sites") {
            None => 1,
            Some(_) => count(v, "sites")?,
        },
        wan_gbit_s: optional(v, "wan_gbit_s", 0.0)?,
        wan_latency_ms: optional(v, "wan_latency_ms", 0.0)?,
        second_gpu: v.get("second_gpu").and_then(Value::as_str).unwrap_or_default().to_owned(),
        second_nodes: match v.get("second_nodes") {
            None => 0,
            Some(_) => count(v, "second_nodes")?,
        },
        source: String::new(),
    })
}

fn read_metric(name: &str) -> Result<Metric, String> {
    Ok(match name {
        "validation_row" => Metric::ValidationRow,
        "mfu" => Metric::Mfu,
        "samples_per_s" => Metric::SamplesPerS,
        "params_b" => Metric::ParamsB,
        "speedup" => Metric::Speedup,
        "scaling_speedup" => Metric::ScalingSpeedup,
        "scaling_efficiency" => Metric::ScalingEfficiency,
        other => return Err(format!("metric \"{other}\" is unknown")),
    })
}

fn read_story(v: &Value) -> Result<StorySpec, String> {
    let r = v.get("reported").ok_or("reported is missing")?;
    let reported = Reported {
        metric: read_metric(&text(r, "metric")?)?,
        value: number(r, "value")?,
        unit: text(r, "unit")?,
        text: text(r, "text")?,
        citation: r.get("citation").and_then(Value::as_u64).map(|i| i as usize),
    };
    let b = v.get("base").ok_or("base is missing")?;
    let base = if let Some(row) = b.get("validation_row") {
        Base::Row { validation_row: row.as_str().ok_or("validation_row is not text")?.to_owned() }
    } else if b.get("scenario").is_some() {
        Base::Preset { scenario: text(b, "scenario")?, mode: text(b, "mode")? }
    } else {
        let cluster = read_cluster(b.get("cluster").ok_or("base.cluster is missing")?)?;
        let label = b.get("label").map(|_| text(b, "label")).transpose()?;
        Base::Parts {
            model: text(b, "model")?,
            model_keys: map(b, "model_keys")?,
            cluster: Box::new(cluster),
            task: map(b, "task")?,
            label,
        }
    };
    let citations = match v.get("citations") {
        Some(Value::Array(a)) => a
            .iter()
            .map(|c| Ok(Citation { text: text(c, "text")?, url: text(c, "url")? }))
            .collect::<Result<_, String>>()?,
        _ => Vec::new(),
    };
    let variants = match v.get("variants") {
        Some(Value::Array(a)) => a
            .iter()
            .map(|x| {
                let cluster = x.get("cluster").map(read_cluster).transpose()?;
                let model = x.get("model").map(|_| text(x, "model")).transpose()?;
                Ok(VariantSpec { label: text(x, "label")?, model, cluster, task: map(x, "task")? })
            })
            .collect::<Result<_, String>>()?,
        _ => Vec::new(),
    };
    let scaling = match v.get("scaling") {
        Some(sc) => Some(ScalingSpec {
            gpus: sc
                .get("gpus")
                .and_then(Value::as_array)
                .ok_or("scaling.gpus is missing")?
                .iter()
                .map(|g| g.as_u64().ok_or("scaling.gpus: not a count".to_owned()))
                .collect::<Result<_, String>>()?,
            weak_only: flag(sc, "weak_only"),
            strong_only: flag(sc, "strong_only"),
        }),
        None => None,
    };
    Ok(StorySpec {
        id: text(v, "id")?,
        title: text(v, "title")?,
        teaser: text(v, "teaser")?,
        story: text(v, "story")?,
        citations,
        reported,
        base,
        variants,
        scaling,
        assumptions: texts(v, "assumptions")?,
        open_in: text(v, "open_in")?,
    })
}

/// Every shipped story, computed now.
#[cfg(not(target_arch = "wasm32"))]
pub fn all() -> Result<Vec<Story>, String> {
    all_of(include_str!("presets/data/stories.json"), &crate::accuracy::shipped_rows())
}

/// Every story of a `stories.json` text, computed now; stories built on a measured run take it
/// from `rows` (the shipped rows, [`crate::accuracy::rows_of`]).
pub fn all_of(json: &str, rows: &[ShippedRow]) -> Result<Vec<Story>, String> {
    specs_of(json)?.into_iter().map(|spec| compute(spec, rows)).collect()
}

fn outcome(label: &str, doc: Doc) -> Outcome {
    let report = validate(&doc.to_raw())
        .map(|s| evaluate(&s))
        .map_err(|e| e.first().map_or_else(|| "invalid".to_owned(), |e| e.to_string()));
    Outcome { label: label.to_owned(), doc, report }
}

fn object(v: &Value, key: &str) -> Option<Map<String, Value>> {
    v.get(key)?.as_object().cloned()
}

/// The base scenario's doc and label; `measured_run` is the base's row when it is one.
fn base_doc(spec: &StorySpec, measured_run: Option<&RowResult>) -> Result<(Doc, String), String> {
    let p = presets::all()?;
    match &spec.base {
        Base::Row { validation_row } => {
            let row = measured_run.ok_or(format!("no validation row {validation_row}"))?;
            let v = row.scenario.as_ref().ok_or(format!("validation row {validation_row} was skipped"))?;
            let (Some(m), Some(s), Some(t)) = (object(v, "model"), object(v, "system"), object(v, "task")) else {
                return Err(format!("validation row {validation_row} has no scenario"));
            };
            Ok((Doc::new([m, s, t]), format!("{} on {} GPUs ({})", row.model, row.n_gpus, row.plan)))
        }
        Base::Preset { scenario, mode } => {
            let s = p.scenario(scenario).ok_or(format!("no scenario preset {scenario}"))?;
            let [m, sys, mut t] = p.configs(s).ok_or(format!("{scenario} names a missing preset"))?;
            t.insert("mode".into(), Value::String(mode.clone()));
            let model = if mode == "reference" { "MAD-Max paper mode" } else { "default model" };
            Ok((Doc::new([m, sys, t]), format!("{} ({model})", s.label)))
        }
        Base::Parts { model, model_keys, cluster, task, label } => {
            let m = p.model(model).ok_or(format!("no model preset {model}"))?;
            let label = label.clone().unwrap_or_else(|| format!("{} on {}", m.label, cluster.label));
            let mut config = m.config.clone();
            config.extend(model_keys.clone());
            Ok((Doc::new([config, cluster.system(&p.gpus)?, task.clone()]), label))
        }
    }
}

/// A variant's doc: the base with the variant's model, cluster and task keys.
fn variant_doc(spec: &StorySpec, base: &Doc, v: &VariantSpec) -> Result<Doc, String> {
    let mut d = base.clone();
    if let Some(id) = &v.model {
        let m = presets::all()?.model(id).ok_or(format!("no model preset {id}"))?;
        d.model = m.config.clone();
        if let Base::Parts { model_keys, .. } = &spec.base {
            d.model.extend(model_keys.clone());
        }
    }
    if let Some(c) = &v.cluster {
        d.system = c.system(&presets::all()?.gpus)?;
    }
    for (k, val) in &v.task {
        d.task.insert(k.clone(), val.clone());
    }
    Ok(d)
}

/// Computes a story: base, variants, scaling sweep and the predicted figure.
pub fn compute(spec: StorySpec, rows: &[ShippedRow]) -> Result<Story, String> {
    // A story built on a measured run predicts that row once.
    let measured_run = match &spec.base {
        Base::Row { validation_row } => rows.iter().find(|r| r.id() == validation_row).map(ShippedRow::predict),
        _ => None,
    };
    let (doc, label) = base_doc(&spec, measured_run.as_ref())?;
    let base = outcome(&label, doc);
    let variants = spec
        .variants
        .iter()
        .map(|v| variant_doc(&spec, &base.doc, v).map(|d| outcome(&v.label, d)))
        .collect::<Result<Vec<_>, String>>()?;
    let scaling = spec.scaling.as_ref().map(|s| scale(&base.doc, s)).unwrap_or_default();
    let predicted = predict(&spec, &base, &variants, &scaling, measured_run);
    Ok(Story { spec, base, variants, scaling, predicted })
}

/// The model's figure for the story's reported metric.
fn predict(
    spec: &StorySpec,
    base: &Outcome,
    variants: &[Outcome],
    scaling: &[ScalePoint],
    measured_run: Option<RowResult>,
) -> Option<f64> {
    let throughput = |o: &Outcome| o.report.as_ref().ok().map(|r| r.throughput_samples_per_s);
    match spec.reported.metric {
        Metric::ValidationRow => measured_run.and_then(|r| r.predicted),
        Metric::Mfu => base.report.as_ref().ok()?.utilization.as_ref().map(|u| u.mfu),
        Metric::SamplesPerS => throughput(base),
        Metric::ParamsB => base.report.as_ref().ok().map(|r| r.model.params / 1e9),
        Metric::Speedup => Some(throughput(variants.first()?)? / throughput(base)?),
        Metric::ScalingSpeedup => {
            let pts: Vec<f64> = scaling.iter().filter_map(|p| p.strong).collect();
            Some(pts.last()? / pts.first()?)
        }
        Metric::ScalingEfficiency => {
            let pts: Vec<(u64, f64)> = scaling.iter().filter_map(|p| Some((p.gpus, p.weak?))).collect();
            let (&(n0, t0), &(n1, t1)) = (pts.first()?, pts.last()?);
            Some((t1 / n1 as f64) / (t0 / n0 as f64))
        }
    }
}

/// The base scenario at other GPU counts: the cluster gets `n / per_node` nodes (or one node
/// of `n` GPUs), the data-parallel level of the transformer plan (a CNN's network plan)
/// absorbs the change, and the batch per GPU stays (weak scaling) or the global batch stays
/// (strong scaling).
pub fn scale(base: &Doc, spec: &ScalingSpec) -> Vec<ScalePoint> {
    spec.gpus
        .iter()
        .map(|&n| ScalePoint {
            gpus: n,
            weak: (!spec.strong_only).then(|| at_size(base, n, false)).flatten(),
            strong: (!spec.weak_only).then(|| at_size(base, n, true)).flatten(),
        })
        .collect()
}

fn counts(v: Option<&Value>) -> Option<Vec<u64>> {
    v?.as_array()?.iter().map(Value::as_u64).collect()
}

fn at_size(base: &Doc, n: u64, strong: bool) -> Option<f64> {
    let mut d = base.clone();
    let per_node = d.system.get("num_devices")?.as_u64()? / d.system.get("num_nodes")?.as_u64()?.max(1);
    let (per, nodes) = if n < per_node { (n, 1) } else { (per_node, n / per_node) };
    if per * nodes != n {
        return None;
    }
    d.system.insert("num_devices".into(), n.into());
    d.system.insert("num_nodes".into(), nodes.into());
    if nodes == 1 {
        d.system.insert("ar_perc_intra".into(), 1.0.into());
    }
    let (key, batch) = if d.task.contains_key("transformer_parallel") {
        ("transformer_parallel", "local_transformer_bs")
    } else {
        ("mlp_parallel", "local_mlp_bs")
    };
    let degree_key = format!("{key}_degree");
    let names: Vec<String> =
        d.task.get(key)?.as_array()?.iter().map(|v| v.as_str().map(str::to_owned)).collect::<Option<_>>()?;
    let mut degrees = counts(d.task.get(&degree_key))?;
    let i = names.iter().rposition(|s| s == "ddp" || s == "fsdp")?;
    let others: u64 = degrees.iter().enumerate().filter(|(j, _)| *j != i).map(|(_, x)| *x).product();
    if others == 0 || !n.is_multiple_of(others) {
        return None;
    }
    let (old_dp, new_dp) = (degrees[i], n / others);
    degrees[i] = new_dp;
    d.task.insert(degree_key, degrees.into());
    if counts(d.task.get("emb_parallel_degree")).is_some_and(|e| e.len() == 1) {
        d.task.insert("emb_parallel_degree".into(), vec![n].into());
    }
    if strong {
        let local = d.task.get(batch)?.as_u64()?;
        let global = local * old_dp;
        if !global.is_multiple_of(new_dp) {
            return None;
        }
        d.task.insert(batch.into(), (global / new_dp).into());
        if d.task.contains_key("local_emb_bs") {
            d.task.insert("local_emb_bs".into(), (global / new_dp).into());
        }
    }
    let s = validate(&d.to_raw()).ok()?;
    Some(evaluate(&s).throughput_samples_per_s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::accuracy;

    #[test]
    fn every_story_computes_and_cites_its_source() {
        let stories = all().expect("stories compute");
        assert!(stories.len() >= 10);
        for s in &stories {
            let id = &s.spec.id;
            if let Err(e) = &s.base.report {
                panic!("{id}: base does not evaluate: {e}");
            }
            for v in &s.variants {
                assert!(v.report.is_ok(), "{id}: variant {}: {:?}", v.label, v.report.as_ref().err());
            }
            let p = s.predicted.unwrap_or_else(|| panic!("{id}: no prediction"));
            assert!(p.is_finite() && p > 0.0, "{id}: {p}");
            match s.spec.reported.citation {
                Some(i) => assert!(s.spec.citations.get(i).is_some_and(|c| c.url.starts_with("https://")), "{id}"),
                None => assert!(s.spec.reported.text.contains("assumption"), "{id}: an uncited number must say so"),
            }
            if let Some(sc) = &s.spec.scaling {
                assert_eq!(s.scaling.len(), sc.gpus.len());
                assert!(
                    s.scaling.iter().filter(|p| p.weak.or(p.strong).is_some()).count() >= 3,
                    "{id}: {:?}",
                    s.scaling
                );
            }
        }
    }

    /// The shipped story `id`, computed, and the validation row `row` it is built on.
    fn story_on_row(id: &str, row: &str) -> (Story, accuracy::RowResult) {
        let spec = specs().expect("parse").into_iter().find(|s| s.id == id).expect("story");
        let story = compute(spec, &accuracy::shipped_rows()).expect("computes");
        (story, accuracy::shipped_row(row).expect("row"))
    }

    #[test]
    fn the_megatron_story_is_its_validation_row() {
        let (story, row) = story_on_row("megatron-1t", "megatron-t1-1008b");
        assert_eq!(story.predicted, row.predicted);
        assert_eq!(story.difference(), row.error);
    }

    /// The story `id` on validation row `row`, checked to predict the row's figure and to
    /// report the row's measurement.
    fn story_true_to_row(id: &str, row: &str) -> Story {
        let (story, row) = story_on_row(id, row);
        assert_eq!(story.predicted, row.predicted);
        assert_eq!(story.spec.reported.value, row.measured);
        story
    }

    fn time(o: &Outcome) -> f64 {
        o.report.as_ref().expect("evaluates").iteration_s
    }

    #[test]
    fn the_horovod_story_is_its_row_and_launching_directly_saves_three_half_cycles() {
        let story = story_true_to_row("horovod-dlrm", "nvidia-tf2-dlrm-a10080g-8gpu-large-fp16");
        // The forward exchange, the backward exchange and the gradient all-reduce: 3 x 0.5 ms.
        let saved_s = time(&story.base) - time(&story.variants[0]);
        assert!((saved_s - 1.5e-3).abs() < 1e-9, "{saved_s}");
        // PyTorch's placement of the bottom MLP costs the whole batch's bottom MLP on one GPU.
        assert!(time(&story.variants[1]) > time(&story.variants[0]));
    }

    #[test]
    fn the_composer_story_is_its_row_and_its_metrics_cost_44_bytes_a_logit_each_micro_batch() {
        let story = story_true_to_row("composer-metrics", "mpt-125m-a100-40g-n8-mb26");
        // Three micro-batches of 26 x 2,048 tokens, 50,368 logits each, at 83.6% of the A100
        // 40GB's 1,555 GB/s: the metrics' two cross-entropies move 44 bytes a logit.
        let logits = 3.0 * 26.0 * 2048.0 * 50368.0;
        let saved_s = time(&story.base) - time(&story.variants[0]);
        let want_s = logits * 44.0 / (0.836 * 1555e9);
        assert!((saved_s / want_s - 1.0).abs() < 1e-9, "{saved_s} {want_s}");
        // The story's "about a fifth of the step".
        let share = saved_s / time(&story.base);
        assert!((0.18..0.23).contains(&share), "{share}");
    }

    #[test]
    fn paper_mode_reproduces_the_dlrm_number_the_story_quotes() {
        let spec = specs().expect("parse").into_iter().find(|s| s.id == "dlrm-a-zionex").expect("story");
        let story = compute(spec, &accuracy::shipped_rows()).expect("computes");
        let paper = story.variants[0].report.as_ref().expect("paper mode");
        assert_eq!(paper.throughput_samples_per_s, story.spec.reported.value);
    }

    #[test]
    fn weak_scaling_keeps_the_batch_per_gpu_and_strong_scaling_the_global_batch() {
        let spec = specs().expect("parse").into_iter().find(|s| s.id == "firecaffe").expect("story");
        let (doc, _) = base_doc(&spec, None).expect("doc");
        let pts = scale(&doc, &ScalingSpec { gpus: vec![1, 8, 128], weak_only: false, strong_only: false });
        let (w, s) = (pts.iter().map(|p| p.weak.expect("weak")), pts.iter().map(|p| p.strong.expect("strong")));
        let (w, s): (Vec<f64>, Vec<f64>) = (w.collect(), s.collect());
        // Strong scaling at one GPU runs the whole batch on it: the slowest per step but the
        // same samples/s as weak scaling would get with that batch; more GPUs never beat ideal.
        for (i, n) in [1.0, 8.0, 128.0].into_iter().enumerate() {
            assert!(s[i] / s[0] <= n * 1.0001, "strong speed-up {} at {n}", s[i] / s[0]);
            assert!(w[i] / w[0] <= n * 1.0001, "weak speed-up {} at {n}", w[i] / w[0]);
        }
        assert!(s[2] > s[0] && w[2] > w[0]);
    }

    #[test]
    fn a_what_if_changes_only_what_it_names() {
        let spec = specs().expect("parse").into_iter().find(|s| s.id == "switchml").expect("story");
        let story = compute(spec, &accuracy::shipped_rows()).expect("computes");
        let (b, v) = (&story.base.doc, &story.variants[0].doc);
        assert_eq!((&b.model, &b.system), (&v.model, &v.system));
        assert_eq!(v.task.get("collective"), Some(&Value::String("in_network".into())));
        // Halving the bytes each host sends can at most double a communication-bound step.
        let up = story.predicted.expect("speed-up");
        assert!(up > 1.0 && up <= 2.0, "{up}");
    }

    #[test]
    fn homes_across_a_city_pay_their_latency_on_every_network_step() {
        // FusionAI's 1 Gb/s PCs, then the same 10 ms apart: the same system but for the link
        // latency, and every ZeRO-3 gather and reduction across 50 PCs pays 49 hops of it each
        // way, so the step is at least that much slower.
        let spec = specs().expect("parse").into_iter().find(|s| s.id == "fusionai").expect("story");
        let story = compute(spec, &accuracy::shipped_rows()).expect("computes");
        let (near, far) = (&story.variants[0], &story.variants[1]);
        assert_eq!(far.doc.system.get("nic_latency_s"), Some(&Value::from(0.01)));
        let mut same = far.doc.system.clone();
        same.remove("nic_latency_s");
        same.insert("name".into(), near.doc.system["name"].clone());
        assert_eq!(same, near.doc.system);
        let (near, far) = (near.report.as_ref().expect("runs"), far.report.as_ref().expect("runs"));
        // At least one gather of the weights per layer forward (32 layers) crosses 49 hops.
        assert!(
            far.iteration_s - near.iteration_s >= 32.0 * 49.0 * 0.01,
            "{} vs {}",
            far.iteration_s,
            near.iteration_s
        );
    }

    #[test]
    fn mixed_cards_share_a_pipeline_placed_by_speed() {
        // 8 RTX 4090s and 8 RTX 3080s: three layers on each 4090, one on each 3080, a little
        // faster than 32 RTX 3080s in a 32-stage pipeline, as the story says.
        let spec = specs().expect("parse").into_iter().find(|s| s.id == "fusionai").expect("story");
        let story = compute(spec, &accuracy::shipped_rows()).expect("computes");
        let find = |start: &str| story.variants.iter().find(|v| v.label.starts_with(start)).expect("variant");
        let (mixed, cards) = (find("8 RTX 4090s and 8 RTX 3080s"), find("32 x RTX 3080 as a 32-stage"));
        let s = crate::engine::validate(&mixed.doc.to_raw()).expect("valid");
        let cx = crate::engine::extended::training::TrainingCx::new(&s).expect("transformer");
        let held: Vec<u64> =
            cx.by_type.as_ref().expect("placed by speed").starts.windows(2).map(|w| w[1] - w[0]).collect();
        assert_eq!(held, [[3; 8], [1; 8]].concat());
        let (m, c) = (mixed.report.as_ref().expect("runs"), cards.report.as_ref().expect("runs"));
        assert!(m.limits.is_empty(), "{:?}", m.limits);
        let faster = m.throughput_samples_per_s / c.throughput_samples_per_s;
        assert!((1.0..1.2).contains(&faster), "a little faster: {faster}");
    }

    #[test]
    fn offices_joined_by_a_slow_link_want_a_pipeline_across_them() {
        // FusionAI's 50 PCs in 5 offices: the wide-area level reaches the system config, ZeRO-3
        // over all 50 is about ten times slower than data parallelism inside each office with a
        // pipeline across them (as the story says), and that pipeline's time between offices is
        // its transfers over their links.
        use crate::engine::ops::OpKind;
        let spec = specs().expect("parse").into_iter().find(|s| s.id == "fusionai").expect("story");
        let story = compute(spec, &accuracy::shipped_rows()).expect("computes");
        let [.., spread, piped] = &story.variants[..] else { panic!("variants") };
        for o in [spread, piped] {
            assert_eq!(o.doc.system.get("num_sites"), Some(&Value::from(5)));
            assert_eq!(o.doc.system.get("wan_bw"), Some(&Value::from(1e9 / 8.0)));
            assert_eq!(o.doc.system.get("wan_latency_s"), Some(&Value::from(0.01)));
        }
        let (spread, piped) = (spread.report.as_ref().expect("runs"), piped.report.as_ref().expect("runs"));
        assert!(spread.limits.is_empty() && piped.limits.is_empty());
        let faster = spread.iteration_s / piped.iteration_s;
        assert!((8.0..=14.0).contains(&faster), "about ten times: {faster}");
        let transfers_s: f64 =
            piped.timeline.iter().filter(|o| o.name.kind == OpKind::PipeTransfer).map(|o| o.duration_s).sum();
        assert!(transfers_s > 0.5 * piped.comm_s, "{transfers_s} of {}", piped.comm_s);
        // Each office's 10 PCs share its 1 Gb/s: a sequence's activations (2,048 x 4,096 x 2
        // bytes) take 10 x 16.8 MB / 125 MB/s, about 1.3 s, to reach the next office.
        let one = piped.timeline.iter().find(|o| o.name.kind == OpKind::PipeTransfer).expect("a transfer");
        assert!((1.3..1.4).contains(&one.duration_s), "{}", one.duration_s);
    }

    #[test]
    fn powerai_ddl_and_firecaffe_run_the_networks_they_measured() {
        let network = |o: &Outcome| o.doc.model.get("network").and_then(Value::as_str).map(str::to_owned);
        let bytes = |o: &Outcome| o.doc.model.get("bytes_per_nonemb_param").and_then(Value::as_u64);
        for (id, base, variant) in [("powerai-ddl", "resnet50", "resnet101"), ("firecaffe", "nin", "googlenet")] {
            let spec = specs().expect("parse").into_iter().find(|s| s.id == id).expect("story");
            let story = compute(spec, &accuracy::shipped_rows()).expect("computes");
            assert_eq!(network(&story.base).as_deref(), Some(base), "{id}");
            let v = story.variants.iter().find(|v| network(v).as_deref() == Some(variant)).expect("the other network");
            // Caffe trained in 32-bit floats: the base's model keys carry over to the variant's model.
            assert_eq!((bytes(&story.base), bytes(v)), (Some(4), Some(4)), "{id}");
            assert!(v.report.is_ok() && story.base.report.is_ok(), "{id}");
            // The figures their texts quote: FireCaffe's compute and wait per step on 128
            // GPUs; PowerAI DDL's flat ring's extra time at 32 and at 4 images per GPU.
            let text = &story.spec.story;
            let iteration_s = |o: &Outcome| o.report.as_ref().map_or(f64::NAN, |r| r.iteration_s);
            if id == "firecaffe" {
                let r = story.base.report.as_ref().expect("runs");
                let said = format!(
                    "in about {:.0} ms, then waits some {:.0} ms",
                    (r.iteration_s - r.comm_s) * 1e3,
                    r.comm_s * 1e3
                );
                assert!(text.contains(&said), "{said}");
            } else {
                let extra =
                    |ring: usize, multi: &Outcome| iteration_s(&story.variants[ring]) / iteration_s(multi) - 1.0;
                let said = format!(
                    "{:.1}% of a step at 32 images per GPU, about {:.0}% at 4",
                    100.0 * extra(0, &story.base),
                    100.0 * extra(2, &story.variants[1])
                );
                assert!(text.contains(&said), "{said}");
            }
        }
    }

    #[test]
    fn the_mt5_story_compares_the_zero_stages_at_five_sizes_as_it_says() {
        let spec = specs().expect("parse").into_iter().find(|s| s.id == "mt5-zero").expect("story");
        let story = compute(spec, &accuracy::shipped_rows()).expect("computes");
        let model = |o: &Outcome| o.doc.model.get("name").and_then(Value::as_str).unwrap_or("").to_owned();
        let zero = |o: &Outcome| o.doc.task.get("zero_stage").and_then(Value::as_u64).unwrap_or(0);
        let all: Vec<&Outcome> = std::iter::once(&story.base).chain(&story.variants).collect();
        let at = |name: &str, stage: u64| {
            let o = all.iter().find(|o| model(o) == name && zero(o) == stage).expect("a row");
            let r = o.report.as_ref().expect("evaluates");
            let fits = !r.limits.iter().any(|l| matches!(l, crate::engine::report::Limit::DoesNotFit { .. }));
            (r.throughput_samples_per_s, fits)
        };
        // Five sizes at three stages each, every one an encoder-decoder.
        assert_eq!(all.len(), 15);
        assert!(all.iter().all(|o| o.doc.model.get("type") == Some(&Value::from("EncoderDecoder"))));
        let sizes = ["mT5-Small", "mT5-Base", "mT5-Large", "mT5-XL", "mT5-XXL"];
        let mut penalty = 0.0;
        for (i, name) in sizes.into_iter().enumerate() {
            let ((z1, fits1), (z2, fits2), (z3, fits3)) = (at(name, 1), at(name, 2), at(name, 3));
            // Only mT5-XXL fails to fit, and only with stage 1.
            assert_eq!((fits1, fits2, fits3), (i < 4, true, true), "{name}");
            // Stages 1 and 2 run alike; stage 3 is slower, and more so the larger the model.
            assert!((z2 / z1 - 1.0).abs() < 0.01, "{name}: {z1} {z2}");
            let cost = 1.0 - z3 / z2;
            assert!(cost > penalty, "{name}: stage 3 costs {cost}, the smaller size {penalty}");
            penalty = cost;
        }
        // The story's figures: 14% at Small, 30% at XL.
        let cost = |name: &str| 1.0 - at(name, 3).0 / at(name, 2).0;
        assert!((0.135..0.145).contains(&cost("mT5-Small")) && (0.295..0.305).contains(&cost("mT5-XL")));
        // At 4 sequences per micro-batch the decoders of the three smaller models are host-bound.
        for o in &all {
            let host_bound = o
                .report
                .as_ref()
                .is_ok_and(|r| r.limits.iter().any(|l| matches!(l, crate::engine::report::Limit::HostBound { .. })));
            let small = ["mT5-Small", "mT5-Base", "mT5-Large"].contains(&model(o).as_str());
            assert_eq!(host_bound, small, "{}", o.label);
        }
        // The compared figure: the released mT5-XXL's weights against the paper's 13B.
        assert!(story.predicted.is_some_and(|p| (p - 12.92).abs() < 0.01), "{:?}", story.predicted);
    }

    #[test]
    fn the_video_story_decodes_its_clips_as_it_says() {
        use crate::engine::report::{Limit, LoaderBound};
        let spec = specs().expect("parse").into_iter().find(|s| s.id == "video-loader").expect("story");
        let text = spec.story.clone();
        let story = compute(spec, &accuracy::shipped_rows()).expect("computes");
        let all: Vec<&Outcome> = std::iter::once(&story.base).chain(&story.variants).collect();
        let run = |i: usize| {
            let r = all[i].report.as_ref().expect("evaluates");
            let bound = r.limits.iter().find_map(|l| match l {
                Limit::InputBound { loader_samples_per_s, compute_samples_per_s, by } => {
                    Some((*loader_samples_per_s, *compute_samples_per_s, *by))
                }
                _ => None,
            });
            (r.throughput_samples_per_s, bound)
        };
        let said = |x: f64| text.contains(&format!("{x:.0}"));
        // 1080p on 128 cores: decoding paces the GPUs at 66 clips/s of the 312 they could do.
        let (base, bound) = run(0);
        let (loader, gpus, by) = bound.expect("input-bound");
        assert_eq!(by, LoaderBound::Decoding);
        assert!((base - 66.2).abs() < 0.1 && (gpus - 312.0).abs() < 0.5, "{base} {gpus}");
        assert_eq!(base, loader);
        assert!(said(base) && said(gpus) && text.contains("a fifth"), "{text}");
        // NVDEC and a short keyframe interval both reach 179, still input-bound.
        for i in [1, 2] {
            let (t, bound) = run(i);
            assert!(bound.is_some() && (t - 179.3).abs() < 0.2, "{}: {t}", all[i].label);
        }
        assert!(said(179.3) && text.contains("69 decoded frames"), "{text}");
        // A 320-pixel short side: the GPUs set the pace, as if the loader were unlimited; its
        // decoders would manage 754 clips/s.
        let (small, bound) = run(3);
        assert!(bound.is_none() && small == run(4).0 && (small - gpus).abs() < 1e-9);
        let decode_320 = 128.0 * crate::engine::extended::calibration::CORE_PIXELS_PER_S / (185.5 * 569.0 * 320.0);
        assert!((decode_320 - 754.0).abs() < 1.0 && said(decode_320), "{decode_320}");
        // The compared figure is the base's own rate, derived from the benchmark, and says so.
        assert!(story.predicted.is_some_and(|p| (p - story.spec.reported.value).abs() < 1e-3));
        assert!(story.spec.reported.text.contains("derived"));
    }

    #[test]
    fn the_index_lists_every_story_by_id_and_title() {
        let specs = specs().expect("stories");
        let index = index();
        assert_eq!(index.len(), specs.len());
        assert!(index.iter().zip(&specs).all(|((id, title), s)| *id == s.id && *title == s.title));
    }
}
