//! Validation: raw configs in, a trusted [`Scenario`] or every problem found out.
//!
//! Two steps, as in ripgrep: first each field is read with its type and range checked (a
//! missing key is reported by name), then the model's rules about the whole plan are checked
//! on the typed values ([`crate::engine::reference::rules`]). Every error names the field
//! (`task.transformer_parallel_degree`) and says the rule in a sentence. Nothing here panics on
//! any input.
//!
//! One job: checking input: raw configs to a trusted scenario or every problem found.

use super::extended::calibration::{CORE_PIXELS_PER_S, X264_KEYFRAME_INTERVAL};
use super::num::Num;
use super::raw::{short, Field, RawModel, RawScenario, RawSystem, RawTask, RawValue};
use super::reference::rules;
use super::scenario::*;
use serde::Serialize;
use std::fmt;
use std::sync::Arc;

/// A problem with one input field.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FieldError {
    /// Where: `model`, `system.num_nodes`, `task.mlp_parallel[1]`, ...
    pub field: String,
    /// What is wrong and what would be right, as a sentence.
    pub message: String,
    /// The MAD-Max reference's own message for this rejection, when it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
}

impl FieldError {
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> FieldError {
        FieldError { field: field.into(), message: message.into(), reference: None }
    }

    /// Attaches the reference's wording of the same rule.
    pub fn reference(mut self, text: impl Into<String>) -> FieldError {
        self.reference = Some(text.into());
        self
    }
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.message)
    }
}

/// Largest accepted layer count: keeps the op list (about ten ops per layer) small enough for a
/// browser tab.
pub const MAX_LAYERS: u64 = 10_000;
/// Largest accepted value of any other count (dimensions, tables, batches, devices).
pub const MAX_COUNT: u64 = 1 << 40;
/// Most cross-entropy losses a training loop may compute again per micro-batch for its metrics
/// (`task.metric_losses`): Composer's language models compute two.
pub const MAX_METRIC_LOSSES: u64 = 8;
/// Largest accepted image side and patch side, pixels (keeps patches per image and the patch
/// "vocabulary" `3 p^2` exact integers).
pub const MAX_IMAGE: u64 = 1 << 24;
/// Smallest CNN input side, pixels: every network here still has a pixel left after its
/// strides (32 for the ResNets).
pub const MIN_CNN_IMAGE: u64 = 32;
/// Longest accepted collective launch cycle (`task.collective_cycle_ms`), ms: a second, far
/// beyond Horovod's 1 ms default and the 5 ms of its early versions.
pub const MAX_COLLECTIVE_CYCLE_MS: f64 = 1000.0;

/// Most host time per engine step, and per request in it (`task.host_step_ms`,
/// `task.host_request_ms`), ms.
pub const MAX_HOST_MS: f64 = 1000.0;

/// Most decode steps per scheduling round (`task.scheduler_steps`); engines use up to a few
/// dozen.
pub const MAX_SCHEDULER_STEPS: u64 = 1024;
/// Largest accepted SM count per GPU (`system.sm_count`): far beyond a B200's 148 or an
/// MI300X's 304 compute units.
pub const MAX_SM_COUNT: u64 = 1 << 20;
/// Smallest accepted utilisation factor.
pub const UTIL_MIN: f64 = 1e-3;
/// Accepted ranges of the physical quantities: far beyond any real hardware, yet narrow enough
/// that with the count limits every time and rate the engine computes stays finite.
pub const RANGES: Ranges = Ranges {
    flops_per_s: (1.0, 1e21),
    bytes: (1.0, 1e16),
    bytes_per_s: (1.0, 1e16),
    links: (1e-3, 1e6),
    bytes_per_element: (1e-3, 64.0),
};

/// See [`RANGES`]; each pair is `(min, max)`.
pub struct Ranges {
    pub flops_per_s: (f64, f64),
    pub bytes: (f64, f64),
    pub bytes_per_s: (f64, f64),
    /// NVLinks per device, NIC ports per node.
    pub links: (f64, f64),
    /// Bytes per embedding element.
    pub bytes_per_element: (f64, f64),
}

/// Checks raw configs and builds the scenario, or returns every error found.
pub fn validate(raw: &RawScenario) -> Result<Scenario, Vec<FieldError>> {
    let mut v = Reader::default();
    let model = match &raw.model {
        Some(m) => read_model(&mut v, m),
        None => {
            v.push(FieldError::new("model", "missing: a model config (MAD-Max model_cfgs format) is required"));
            None
        }
    };
    let system = match &raw.system {
        Some(s) => read_system(&mut v, s),
        None => {
            v.push(FieldError::new("system", "missing: a system config (MAD-Max system_cfgs format) is required"));
            None
        }
    };
    let task = match (&raw.task, &model) {
        (Some(t), Some(m)) => read_task(&mut v, t, m.arch.family()),
        (Some(t), None) => {
            // Without a model the task's keys are unknown; still check what every task has.
            read_task_kind(&mut v, t);
            None
        }
        (None, _) => {
            v.push(FieldError::new("task", "missing: a task config (MAD-Max task_cfgs format) is required"));
            None
        }
    };
    if let (Some(model), Some(system), Some(task)) = (model, system, task) {
        if v.errors.is_empty() {
            return checked(Scenario { model, system, task, _validated: Validated(()) });
        }
    }
    Err(v.errors)
}

/// A scenario whose fields each passed their checks, checked against the structural rules of
/// the model that will evaluate it (the default model's where it covers the scenario, else
/// the reference's).
#[cfg_attr(not(target_arch = "wasm32"), inline)]
fn checked(scenario: Scenario) -> Result<Scenario, Vec<FieldError>> {
    let problems = if scenario.task.mode == Mode::Default && super::extended::covers(&scenario) {
        super::extended::rules::check(&scenario)
    } else {
        rules::check(&scenario)
    };
    if problems.is_empty() {
        Ok(scenario)
    } else {
        Err(problems)
    }
}

/// What is wrong with a count outside `min..=max`, in validation's words; `None` when it is in.
fn out_of_range(n: i128, min: u64, max: u64) -> Option<String> {
    if n < i128::from(min) {
        Some(format!("must be at least {min}, got {n}"))
    } else if n > i128::from(max) {
        Some(format!("must be at most {max}, got {n}"))
    } else {
        None
    }
}

/// What is wrong with a fraction of a peak outside `UTIL_MIN..=1`; `None` when it is one.
fn not_a_fraction(x: f64) -> Option<String> {
    (!(UTIL_MIN..=1.0).contains(&x)).then(|| format!("must be a fraction above 0 and at most 1, got {x}"))
}

/// The only ways to derive one scenario from another outside the engine: each checks what it
/// changes as [`validate`] checks that field, then the whole scenario against the rules.
impl Scenario {
    /// The same scenario as another kind of task (pre-training or inference: the explorer's
    /// task setting).
    pub fn with_kind(&self, kind: TaskKind) -> Result<Scenario, Vec<FieldError>> {
        let mut s = self.clone();
        s.task.kind = kind;
        checked(s)
    }

    /// The same scenario for the other model: the default model or MAD-Max paper mode
    /// (`task.mode`).
    pub fn with_mode(&self, mode: Mode) -> Result<Scenario, Vec<FieldError>> {
        let mut s = self.clone();
        s.task.mode = mode;
        checked(s)
    }

    /// The same scenario with other achievable fractions of the GPUs' peaks: GEMM FLOP/s, HBM
    /// bandwidth, NVLink and NIC bandwidth, each above 0 and at most 1 (`system.flops_util`,
    /// `mem_bw_util`, `nvlink_util`, `ibroce_util`).
    pub fn with_fractions(&self, [flops, mem_bw, nvlink, nic]: [f64; 4]) -> Result<Scenario, Vec<FieldError>> {
        let fractions = [("flops_util", flops), ("mem_bw_util", mem_bw), ("nvlink_util", nvlink), ("ibroce_util", nic)];
        let errors: Vec<FieldError> = fractions
            .iter()
            .filter_map(|&(key, f)| Some(FieldError::new(format!("system.{key}"), not_a_fraction(f)?)))
            .collect();
        if !errors.is_empty() {
            return Err(errors);
        }
        let mut s = self.clone();
        (s.system.flops_util, s.system.mem_bw_util, s.system.nvlink_util, s.system.ibroce_util) =
            (flops, mem_bw, nvlink, nic);
        checked(s)
    }

    /// The same scenario with another share of HBM bandwidth for GEMMs (`system.gemm_bw_util`;
    /// `None`: the HBM share, `mem_bw_util`), above 0 and at most 1.
    pub fn with_gemm_bw(&self, gemm_bw: Option<f64>) -> Result<Scenario, Vec<FieldError>> {
        if let Some(why) = gemm_bw.and_then(not_a_fraction) {
            return Err(vec![FieldError::new("system.gemm_bw_util", why)]);
        }
        let mut s = self.clone();
        s.system.gemm_bw_util = gemm_bw;
        checked(s)
    }

    /// The same scenario with another batch per GPU and micro-batch (`None`: the task's
    /// default), each at least 1 (`task.local_transformer_bs`, `task.micro_batch`).
    pub fn with_batch(&self, local: u64, micro: Option<u64>) -> Result<Scenario, Vec<FieldError>> {
        let errors: Vec<FieldError> = [("local_transformer_bs", Some(local)), ("micro_batch", micro)]
            .into_iter()
            .filter_map(|(key, n)| Some(FieldError::new(format!("task.{key}"), out_of_range(n?.into(), 1, MAX_COUNT)?)))
            .collect();
        if !errors.is_empty() {
            return Err(errors);
        }
        let mut s = self.clone();
        s.task.plan.local_transformer_batch = Some(local);
        s.task.setup.micro_batch = micro;
        checked(s)
    }
}

/// Reads fields, collecting errors.
#[derive(Default)]
struct Reader {
    errors: Vec<FieldError>,
}

/// Where a field is: rendered to text only when an error names it.
#[derive(Clone, Copy)]
struct At<'a> {
    config: &'static str,
    key: &'a str,
    index: Option<usize>,
}

fn at<'a>(config: &'static str, key: &'a str) -> At<'a> {
    At { config, key, index: None }
}

impl At<'_> {
    fn item(self, i: usize) -> Self {
        At { index: Some(i), ..self }
    }
}

impl fmt::Display for At<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.config, self.key)?;
        match self.index {
            Some(i) => write!(f, "[{i}]"),
            None => Ok(()),
        }
    }
}

/// Why a key is required, rendered only when it is missing.
struct Why {
    family: Family,
    what: &'static str,
}

impl fmt::Display for Why {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "required for {} {}", self.family, self.what)
    }
}

impl Reader {
    // Forced inlining (the hot path of `make bench`) on native builds only: in the wasm site it
    // copied each call's error formatting or lookup into every caller, 13 KB gzip in all.
    fn push(&mut self, e: FieldError) {
        self.errors.push(e);
    }

    #[cfg_attr(not(target_arch = "wasm32"), inline(always))]
    fn present<'r>(&mut self, f: &'r Field, path: At, why: &dyn fmt::Display) -> Option<&'r RawValue> {
        match f {
            Some(v) => Some(v),
            None => {
                let key = path.key;
                self.push(FieldError::new(path.to_string(), format!("missing key '{key}' ({why})")));
                None
            }
        }
    }

    /// A whole number in `min..=max`.
    #[cfg_attr(not(target_arch = "wasm32"), inline(always))]
    fn count(&mut self, f: &Field, path: At, why: &dyn fmt::Display, min: u64, max: u64) -> Option<u64> {
        let v = self.present(f, path, why)?;
        self.count_value(v, path, min, max)
    }

    #[cfg_attr(not(target_arch = "wasm32"), inline(always))]
    fn count_value(&mut self, v: &RawValue, path: At, min: u64, max: u64) -> Option<u64> {
        // A whole number written as a float (2048.0) is the same count.
        let whole;
        let v = match v {
            RawValue::Float(x) if x.fract() == 0.0 && x.abs() < 2f64.powi(63) => {
                whole = RawValue::Int(*x as i128);
                &whole
            }
            _ => v,
        };
        match v {
            RawValue::Int(i) => match out_of_range(*i, min, max) {
                None => Some(*i as u64),
                Some(why) => {
                    self.push(FieldError::new(path.to_string(), why));
                    None
                }
            },
            RawValue::Str(s) if s.trim().is_empty() => {
                self.push(FieldError::new(path.to_string(), format!("is empty: enter a whole number from {min}")));
                None
            }
            other => {
                self.push(FieldError::new(
                    path.to_string(),
                    format!("must be a whole number, got {} ({other})", other.kind()),
                ));
                None
            }
        }
    }

    /// A finite number; with `positive`, also greater than zero.
    #[cfg_attr(not(target_arch = "wasm32"), inline(always))]
    fn number(&mut self, f: &Field, path: At, why: &dyn fmt::Display) -> Option<Num> {
        let v = self.present(f, path, why)?;
        let n = match v {
            RawValue::Int(i) => Num::Int(*i),
            RawValue::Float(x) if x.is_finite() => Num::Float(*x),
            RawValue::Float(x) => {
                self.push(FieldError::new(path.to_string(), format!("must be a finite number, got {x}")));
                return None;
            }
            other => {
                self.push(FieldError::new(
                    path.to_string(),
                    format!("must be a number, got {} ({other})", other.kind()),
                ));
                return None;
            }
        };
        Some(n)
    }

    /// A number in `min..=max` (bounds keep every result finite; see [`RANGES`]).
    #[cfg_attr(not(target_arch = "wasm32"), inline(always))]
    fn within(&mut self, f: &Field, path: At, why: &dyn fmt::Display, (min, max): (f64, f64)) -> Option<f64> {
        let n = self.number(f, path, why)?.f64();
        if (min..=max).contains(&n) {
            Some(n)
        } else {
            self.push(FieldError::new(path.to_string(), format!("must be from {min:e} to {max:e}, got {n}")));
            None
        }
    }

    /// A fraction in `[0.001, 1]` (a utilisation).
    #[cfg_attr(not(target_arch = "wasm32"), inline(always))]
    fn fraction(&mut self, f: &Field, path: At, why: &dyn fmt::Display) -> Option<f64> {
        let n = self.number(f, path, why)?.f64();
        match not_a_fraction(n) {
            None => Some(n),
            Some(why) => {
                self.push(FieldError::new(path.to_string(), why));
                None
            }
        }
    }

    /// An optional non-negative quantity up to `max` in `unit` (a latency, a period): 0 when
    /// absent, what 0 means said in the message (`lead` opens the range: "a latency from").
    fn optional_upto(&mut self, f: &Field, path: At, lead: &str, (max, unit): (f64, &str), zero: &str) -> Option<f64> {
        let n = match f {
            None | Some(RawValue::Null) => return Some(0.0),
            f => self.number(f, path, &"optional")?.f64(),
        };
        if (0.0..=max).contains(&n) {
            Some(n)
        } else {
            self.push(FieldError::new(path.to_string(), format!("must be {lead} 0 to {max} {unit} ({zero}), got {n}")));
            None
        }
    }

    #[cfg_attr(not(target_arch = "wasm32"), inline(always))]
    fn text<'r>(&mut self, f: &'r Field, path: At, why: &dyn fmt::Display) -> Option<&'r str> {
        match self.present(f, path, why)? {
            RawValue::Str(s) => Some(s),
            other => {
                self.push(FieldError::new(path.to_string(), format!("must be text, got {} ({other})", other.kind())));
                None
            }
        }
    }

    /// An optional display name (the reference only prints it).
    #[cfg_attr(not(target_arch = "wasm32"), inline(always))]
    fn name(&mut self, f: &Field, path: At) -> Arc<str> {
        match f {
            Some(RawValue::Str(s)) => Arc::clone(s),
            Some(other) => {
                self.push(FieldError::new(path.to_string(), format!("must be text, got {} ({other})", other.kind())));
                Arc::from("")
            }
            None => Arc::from(""),
        }
    }

    /// An optional text choice: `default` when absent, else one of `options` by spelling.
    /// An optional value written as text that `parse` reads (a list in one string, such as a
    /// request mix): `Some(None)` when absent or null; `None`, the error said, when it is not
    /// text (`example` shows what is) or `parse` refuses it.
    fn parsed_text<T>(
        &mut self,
        f: &Field,
        path: At,
        example: &str,
        parse: impl Fn(&str) -> Result<T, String>,
    ) -> Option<Option<T>> {
        let message = match f {
            None | Some(RawValue::Null) => return Some(None),
            Some(RawValue::Str(text)) => match parse(text) {
                Ok(x) => return Some(Some(x)),
                Err(e) => e,
            },
            Some(other) => format!("must be text such as {example}, got {} ({other})", other.kind()),
        };
        self.push(FieldError::new(path.to_string(), message));
        None
    }

    fn choice<T: Copy>(&mut self, f: &Field, path: At, options: &[(&str, T)], default: T) -> Option<T> {
        let Some(value) = f else { return Some(default) };
        if let RawValue::Str(s) = value {
            if let Some(o) = options.iter().find(|o| o.0 == &**s) {
                return Some(o.1);
            }
        }
        self.not_an_option(value, path, &mut options.iter().map(|o| o.0));
        None
    }

    /// Says that `value` is none of the options `names` (written once, not for every type of
    /// choice).
    #[cold]
    fn not_an_option(&mut self, value: &RawValue, path: At, names: &mut dyn Iterator<Item = &str>) {
        let names = names.collect::<Vec<_>>().join(", ");
        let message = match value {
            RawValue::Str(s) => format!("\"{}\" is not an option; use {names}", short(s)),
            other => format!("must be one of {names}, got {} ({other})", other.kind()),
        };
        self.push(FieldError::new(path.to_string(), message));
    }

    /// An optional list of layer widths: whole numbers from 1, as a list (`[13, 512, 256]`) or
    /// as text the way the DLRM reference code's `--arch-mlp-bot` takes them (`13-512-256`;
    /// commas, spaces and brackets also separate). `Some(None)` when absent.
    fn widths(&mut self, f: &Field, path: At) -> Option<Option<Vec<u64>>> {
        let Some(value) = f else { return Some(None) };
        let bad = |v: &mut Reader, what: String| {
            v.push(FieldError::new(
                path.to_string(),
                format!("{what}: give layer widths such as 13-512-256-128 or [13, 512, 256, 128]"),
            ));
            None
        };
        let widths: Vec<u64> = match value {
            RawValue::List(items) => {
                let mut out = Vec::with_capacity(items.len());
                for (i, item) in items.iter().enumerate() {
                    out.push(self.count_value(item, path.item(i), 1, MAX_COUNT)?);
                }
                out
            }
            RawValue::Str(text) => {
                let mut out = Vec::new();
                // Brackets too: a list shown as text ("[13,512,256,128]") reads back the same.
                for part in text.split(['-', ',', ' ', '[', ']']).filter(|p| !p.is_empty()) {
                    match part.parse::<u64>() {
                        Ok(w) if (1..=MAX_COUNT).contains(&w) => out.push(w),
                        _ => return bad(self, format!("\"{}\" is not a width from 1 to {MAX_COUNT}", short(part))),
                    }
                }
                out
            }
            other => return bad(self, format!("got {} ({other})", other.kind())),
        };
        if widths.is_empty() {
            return bad(self, "is empty".into());
        }
        if widths.len() as u64 > MAX_LAYERS + 1 {
            return bad(self, format!("has {} widths; at most {} are supported", widths.len(), MAX_LAYERS + 1));
        }
        Some(Some(widths))
    }

    /// An optional flag: `default` when absent.
    fn optional_flag(&mut self, f: &Field, path: At, default: bool) -> Option<bool> {
        match f {
            None => Some(default),
            f => self.flag(f, path, &"optional"),
        }
    }

    #[cfg_attr(not(target_arch = "wasm32"), inline(always))]
    fn flag(&mut self, f: &Field, path: At, why: &dyn fmt::Display) -> Option<bool> {
        match self.present(f, path, why)? {
            RawValue::Bool(b) => Some(*b),
            RawValue::Int(0) => Some(false),
            RawValue::Int(1) => Some(true),
            other => {
                self.push(FieldError::new(path.to_string(), format!("must be true or false, got {other}")));
                None
            }
        }
    }
}

fn read_model(v: &mut Reader, m: &RawModel) -> Option<Model> {
    let name = v.name(&m.name, at("model", "name"));
    let kind = v.text(&m.kind, at("model", "type"), &"it selects the model family");
    let family = match kind {
        Some(k) => match Family::ALL.iter().find(|f| f.config_name() == k) {
            Some(f) => Some(*f),
            None => {
                let all: Vec<&str> = Family::ALL.iter().map(|f| f.config_name()).collect();
                v.push(
                    FieldError::new(
                        "model.type",
                        format!("\"{}\" is not a model family; use one of {}", short(k), all.join(", ")),
                    )
                    .reference(format!("Model type \"{}\" undefined!", short(k))),
                );
                None
            }
        },
        None => None,
    };
    let dense =
        v.number(&m.bytes_per_nonemb_param, at("model", "bytes_per_nonemb_param"), &"bytes per dense parameter");
    let dense = dense.and_then(|b| {
        if [8, 4, 2, 1].iter().any(|x| b.equals(*x)) {
            Some(b)
        } else {
            v.push(
                FieldError::new(
                    "model.bytes_per_nonemb_param",
                    format!("must be 8 (FP64), 4 (FP32), 2 (FP16/BF16) or 1 (INT8), got {b}"),
                )
                .reference("Invalid dense parameter specification with respect to system specs."),
            );
            None
        }
    });
    // A CNN has no embeddings: its embedding bytes may be left out.
    let emb = if family == Some(Family::Cnn) && m.bytes_per_emb_param.is_none() {
        dense
    } else {
        v.number(&m.bytes_per_emb_param, at("model", "bytes_per_emb_param"), &"bytes per embedding element")
    };
    let emb = emb.and_then(|b| {
        let (lo, hi) = RANGES.bytes_per_element;
        if (lo..=hi).contains(&b.f64()) {
            Some(b)
        } else {
            v.push(FieldError::new("model.bytes_per_emb_param", format!("must be from {lo} to {hi} bytes, got {b}")));
            None
        }
    });
    let family = family?;
    let why = Why { family, what: "models" };
    let layers = |v: &mut Reader, f: &Field, key: &str| v.count(f, at("model", key), &why, 1, MAX_LAYERS);
    let dim = |v: &mut Reader, f: &Field, key: &str| v.count(f, at("model", key), &why, 1, MAX_COUNT);
    let arch = match family {
        Family::Dlrm | Family::DlrmMoe | Family::DlrmTransformer => {
            let mut dlrm = Dlrm {
                bot_mlp_layers: layers(v, &m.num_bot_mlp_layers, "num_bot_mlp_layers").unwrap_or(0),
                top_mlp_layers: layers(v, &m.num_top_mlp_layers, "num_top_mlp_layers").unwrap_or(0),
                mlp_dim: dim(v, &m.mlp_dim, "mlp_dim").unwrap_or(0),
                num_tables: dim(v, &m.num_tables, "num_tables").unwrap_or(0),
                entries_per_table: dim(v, &m.entries_per_table, "entries_per_table").unwrap_or(0),
                emb_dim: dim(v, &m.emb_dim, "emb_dim").unwrap_or(0),
                pooling_size: dim(v, &m.pooling_size, "pooling_size").unwrap_or(0),
                widths: None,
            };
            dlrm.widths = read_widths(v, m);
            match family {
                Family::Dlrm => Arch::Dlrm(dlrm),
                Family::DlrmMoe => Arch::DlrmMoe(dlrm, read_moe(v, m, &why)?),
                _ => {
                    let l = layers(v, &m.num_transformer_layers, "num_transformer_layers");
                    Arch::DlrmTransformer(dlrm, read_transformer(v, m, &why, l))
                }
            }
        }
        Family::Llm | Family::LlmMoe => {
            let l = layers(v, &m.num_transformer_layers, "num_transformer_layers");
            let llm = Llm {
                vocab: dim(v, &m.entries_per_table, "entries_per_table").unwrap_or(0),
                transformer: read_transformer(v, m, &why, l),
            };
            match family {
                Family::Llm => Arch::Llm(llm),
                _ => Arch::LlmMoe(llm, read_moe(v, m, &why)?),
            }
        }
        Family::Vit => Arch::Vit(Vit {
            image_size: v.count(&m.image_size, at("model", "image_size"), &why, 1, MAX_IMAGE).unwrap_or(0),
            patch_dim: v.count(&m.patch_dim, at("model", "patch_dim"), &why, 1, MAX_IMAGE).unwrap_or(0),
            layers: layers(v, &m.num_transformer_layers, "num_transformer_layers").unwrap_or(0),
            heads: dim(v, &m.num_transformer_heads, "num_transformer_heads").unwrap_or(0),
            attention_dim: dim(v, &m.attention_dim, "attention_dim").unwrap_or(0),
            fc_dim: dim(v, &m.transformer_fc_dim, "transformer_fc_dim").unwrap_or(0),
        }),
        Family::Cnn => {
            let path = at("model", "network");
            let network = match v.present(&m.network, path, &why) {
                Some(_) => v.choice(&m.network, path, &Network::ALL, Network::ResNet50),
                None => None,
            };
            let image_size = v.count(&m.image_size, at("model", "image_size"), &why, MIN_CNN_IMAGE, MAX_IMAGE);
            let classes = match &m.num_classes {
                None => Some(1000),
                f => v.count(f, at("model", "num_classes"), &"optional", 1, MAX_COUNT),
            };
            Arch::Cnn(Cnn { network: network?, image_size: image_size?, classes: classes? })
        }
        Family::EncDec => {
            let t = read_transformer(v, m, &why, Some(0));
            let encoder_layers = layers(v, &m.num_encoder_layers, "num_encoder_layers");
            let decoder_layers = layers(v, &m.num_decoder_layers, "num_decoder_layers");
            let target_len = dim(v, &m.target_seq_len, "target_seq_len");
            Arch::EncDec(EncDec {
                vocab: dim(v, &m.entries_per_table, "entries_per_table").unwrap_or(0),
                encoder_layers: encoder_layers.unwrap_or(0),
                decoder_layers: decoder_layers.unwrap_or(0),
                heads: t.heads,
                attention_dim: t.attention_dim,
                fc_dim: t.fc_dim,
                input_len: t.seq_len,
                target_len: target_len.unwrap_or(0),
            })
        }
    };
    let shape = read_shape(v, m, &arch);
    Some(Model { name, bytes_per_dense_param: dense?, bytes_per_emb_param: emb?, arch, shape: shape? })
}

/// A DLRM's optional layer widths (`bot_mlp_widths`, `top_mlp_widths`), read as written; a side
/// not given is empty. Whether they agree with the model (both given, as many as its layers, the
/// bottom ending at the embedding width) is the default model's rule
/// (`extended::rules::check`): paper mode does not use them, and its form does not show them.
fn read_widths(v: &mut Reader, m: &RawModel) -> Option<MlpWidths> {
    let bottom = v.widths(&m.bot_mlp_widths, at("model", "bot_mlp_widths"));
    let top = v.widths(&m.top_mlp_widths, at("model", "top_mlp_widths"));
    match (bottom?, top?) {
        (None, None) => None,
        (bottom, top) => Some(MlpWidths { bottom: bottom.unwrap_or_default(), top: top.unwrap_or_default() }),
    }
}

/// The default model's transformer details; absent keys take their defaults.
fn read_shape(v: &mut Reader, m: &RawModel, arch: &Arch) -> Option<Shape> {
    let heads = match arch {
        Arch::Llm(l) | Arch::LlmMoe(l, _) => l.transformer.heads,
        Arch::DlrmTransformer(_, t) => t.heads,
        Arch::Vit(x) => x.heads,
        Arch::EncDec(x) => x.heads,
        _ => 0,
    };
    let optional = &"optional";
    let kv_heads = match &m.num_kv_heads {
        None => None,
        f => {
            let kv = v.count(f, at("model", "num_kv_heads"), optional, 1, MAX_COUNT)?;
            if heads > 0 && heads % kv != 0 {
                v.push(FieldError::new(
                    "model.num_kv_heads",
                    format!(
                        "{heads} query heads do not split evenly into {kv} key/value groups: use a divisor of {heads}, such as {}",
                        divisor_at_most(heads, kv)
                    ),
                ));
                return None;
            }
            Some(kv)
        }
    };
    let head_dim = match &m.head_dim {
        None => None,
        f => Some(v.count(f, at("model", "head_dim"), optional, 1, MAX_COUNT)?),
    };
    let ffn =
        v.choice(&m.ffn_kind, at("model", "ffn_kind"), &[("gelu", Ffn::Gelu), ("swiglu", Ffn::Swiglu)], Ffn::Gelu)?;
    let attention = v.choice(
        &m.attention,
        at("model", "attention"),
        &[
            ("flash", Attention::Flash),
            ("flash2-h100", Attention::Flash2H100),
            ("flash1", Attention::Flash1),
            ("flash1-h100", Attention::Flash1H100),
            ("materialized", Attention::Materialized),
        ],
        Attention::Flash,
    )?;
    // An encoder-decoder's decoder masks its self-attention causally; its encoder never does.
    let decoder = matches!(arch, Arch::Llm(_) | Arch::LlmMoe(..) | Arch::EncDec(_));
    let causal = v.optional_flag(&m.causal, at("model", "causal"), decoder)?;
    let tied_embeddings = v.optional_flag(&m.tied_embeddings, at("model", "tied_embeddings"), false)?;
    let capacity_factor = match &m.capacity_factor {
        None => 1.0,
        f => v.within(f, at("model", "capacity_factor"), optional, (1.0, 64.0))?,
    };
    let dropout = v.optional_flag(&m.dropout, at("model", "dropout"), true)?;
    let biases = v.optional_flag(&m.biases, at("model", "biases"), ffn == Ffn::Gelu)?;
    // T5's relative position bias is counted with its weights; LLaMA-style (SwiGLU) models use
    // rotary embeddings, GPT-style (GELU) ones and ViT a learned table.
    let usual = match (arch, ffn) {
        (Arch::EncDec(_) | Arch::DlrmTransformer(..), _) => Positions::None,
        (_, Ffn::Swiglu) => Positions::Rope,
        (_, Ffn::Gelu) => Positions::Learned,
    };
    let positions = v.choice(
        &m.positions,
        at("model", "positions"),
        &[
            ("learned", Positions::Learned),
            ("rope", Positions::Rope),
            ("rope-unfused", Positions::RopeUnfused),
            ("none", Positions::None),
        ],
        usual,
    )?;
    let elementwise = v.choice(
        &m.elementwise,
        at("model", "elementwise"),
        &[("fused", Elementwise::Fused), ("eager", Elementwise::Eager)],
        Elementwise::Fused,
    )?;
    let moe_dispatch = v.choice(
        &m.moe_dispatch,
        at("model", "moe_dispatch"),
        &[("eager", MoeDispatch::Eager), ("fused", MoeDispatch::Fused), ("deepep", MoeDispatch::DeepEp)],
        MoeDispatch::Eager,
    )?;
    Some(Shape {
        kv_heads,
        head_dim,
        ffn,
        tied_embeddings,
        attention,
        causal,
        capacity_factor,
        dropout,
        biases,
        positions,
        elementwise,
        moe_dispatch,
    })
}

/// The layer-count errors were already recorded; unread keys of other families are ignored.
fn read_transformer(v: &mut Reader, m: &RawModel, why: &Why, layers: Option<u64>) -> Transformer {
    let mut dim = |f: &Field, key: &str| v.count(f, at("model", key), why, 1, MAX_COUNT).unwrap_or(0);
    Transformer {
        layers: layers.unwrap_or(0),
        heads: dim(&m.num_transformer_heads, "num_transformer_heads"),
        attention_dim: dim(&m.attention_dim, "attention_dim"),
        fc_dim: dim(&m.transformer_fc_dim, "transformer_fc_dim"),
        seq_len: dim(&m.transformer_seq_len, "transformer_seq_len"),
    }
}

fn read_moe(v: &mut Reader, m: &RawModel, why: &Why) -> Option<Moe> {
    let experts = v.count(&m.num_experts, at("model", "num_experts"), why, 1, MAX_COUNT);
    let active = v.count(&m.num_active_experts, at("model", "num_active_experts"), why, 1, MAX_COUNT);
    let (experts, active) = (experts?, active?);
    if active > experts {
        v.push(
            FieldError::new(
                "model.num_active_experts",
                format!(
                    "{active} active experts per token exceed the {experts} experts of each layer: use at most {experts}"
                ),
            )
            .reference("Incorrect number of active experts."),
        );
        return None;
    }
    Some(Moe { experts, active_experts: active })
}

fn read_system(v: &mut Reader, s: &RawSystem) -> Option<System> {
    let name = v.name(&s.name, at("system", "name"));
    let why = &"every system config has it";
    let kind = v.text(&s.kind, at("system", "type"), why);
    if let Some(k) = kind {
        if k != "GPU" {
            v.push(
                FieldError::new(
                    "system.type",
                    format!("\"{}\" is not supported; the only system type is \"GPU\"", short(k)),
                )
                .reference(format!("System type \"{}\" undefined!", short(k))),
            );
        }
    }
    let devices = v.count(&s.num_devices, at("system", "num_devices"), why, 1, MAX_COUNT);
    let nodes = v.count(&s.num_nodes, at("system", "num_nodes"), why, 1, MAX_COUNT);
    let mut pos = |f: &Field, key: &str, range| v.within(f, at("system", key), why, range);
    let rates = [
        pos(&s.f64_flops, "f64_flops", RANGES.flops_per_s),
        pos(&s.f32_flops, "f32_flops", RANGES.flops_per_s),
        pos(&s.f16_flops, "f16_flops", RANGES.flops_per_s),
        pos(&s.i8_ops, "i8_ops", RANGES.flops_per_s),
        pos(&s.mem_cap, "mem_cap", RANGES.bytes),
        pos(&s.mem_bw, "mem_bw", RANGES.bytes_per_s),
        pos(&s.num_nvlinks, "num_nvlinks", RANGES.links),
        pos(&s.bw_per_nvlink, "bw_per_nvlink", RANGES.bytes_per_s),
        pos(&s.num_ibroce_ports, "num_ibroce_ports", RANGES.links),
        pos(&s.ibroce_bw, "ibroce_bw", RANGES.bytes_per_s),
    ];
    let mut frac = |f: &Field, key: &str| v.fraction(f, at("system", key), why);
    let utils = [
        frac(&s.flops_util, "flops_util"),
        frac(&s.mem_bw_util, "mem_bw_util"),
        frac(&s.nvlink_util, "nvlink_util"),
        frac(&s.ibroce_util, "ibroce_util"),
    ];
    let gemm_bw = match &s.gemm_bw_util {
        None | Some(RawValue::Null) => Some(None),
        f => v.fraction(f, at("system", "gemm_bw_util"), &"optional").map(Some),
    };
    let fp8 = match &s.fp8_flops {
        None | Some(RawValue::Null) => Some(None),
        f => v.within(f, at("system", "fp8_flops"), &"optional", RANGES.flops_per_s).map(Some),
    };
    let sm_count = sm_count(v, &s.sm_count, "sm_count");
    let pi = v.number(&s.ar_perc_intra, at("system", "ar_perc_intra"), why).and_then(|p| {
        let p = p.f64();
        if (0.0..=1.0).contains(&p) {
            Some(p)
        } else {
            v.push(FieldError::new("system.ar_perc_intra", format!("must be a fraction from 0 to 1, got {p}")));
            None
        }
    });
    let nic_latency_s = v.optional_upto(
        &s.nic_latency_s,
        at("system", "nic_latency_s"),
        "a latency from",
        (MAX_NIC_LATENCY_S, "s"),
        "0: a datacenter network",
    );
    let nvlink_latency_s = v.optional_upto(
        &s.nvlink_latency_s,
        at("system", "nvlink_latency_s"),
        "a latency from",
        (MAX_NIC_LATENCY_S, "s"),
        "0: NCCL's own hop latency",
    );
    let wan = wide_area(v, s);
    let second = second_gpu(v, s);
    let (devices, nodes) = (devices?, nodes?);
    if devices % nodes != 0 {
        v.push(
            FieldError::new(
                "system.num_nodes",
                format!(
                    "{devices} devices do not split evenly over {nodes} nodes: use a node count that divides {devices}, such as {}",
                    divisor_at_most(devices, nodes)
                ),
            )
            .reference("Number of devices must be evenly divisible by number of nodes!"),
        );
        return None;
    }
    let (wan, second) = (wan?, second?);
    if let Some(g) = &second {
        if g.nodes >= nodes {
            v.push(FieldError::new(
                "system.second_gpu_nodes",
                format!(
                    "must be fewer than the cluster's {nodes} nodes (the others hold the first GPU type), got {}",
                    g.nodes
                ),
            ));
            return None;
        }
    }
    if let Some(w) = &wan {
        if nodes % w.sites != 0 {
            v.push(FieldError::new(
                "system.num_sites",
                format!(
                    "{nodes} nodes do not split evenly over {} sites: use a site count that divides {nodes}, such as {}",
                    w.sites,
                    divisor_at_most(nodes, w.sites)
                ),
            ));
            return None;
        }
    }
    if let Some(p) = pi {
        if nodes == 1 && p != 1.0 {
            v.push(
                FieldError::new(
                    "system.ar_perc_intra",
                    format!("must be 1 on a single node (all traffic stays within the node): set 1, got {p}"),
                )
                .reference("For one node, only use intra-node networking."),
            );
            return None;
        }
    }
    if kind != Some("GPU") {
        return None;
    }
    let [f64f, f32f, f16f, i8f, cap, bw, nvl, nvl_bw, ports, port_bw] = rates;
    let [fu, mu, nu, iu] = utils;
    Some(System {
        name,
        num_devices: devices,
        num_nodes: nodes,
        f64_flops_per_s: f64f?,
        f32_flops_per_s: f32f?,
        f16_flops_per_s: f16f?,
        i8_ops_per_s: i8f?,
        fp8_flops_per_s: fp8?,
        sm_count: sm_count?,
        flops_util: fu?,
        mem_cap_bytes: cap?,
        mem_bw_bytes_per_s: bw?,
        mem_bw_util: mu?,
        gemm_bw_util: gemm_bw?,
        num_nvlinks: nvl?,
        bw_per_nvlink_bytes_per_s: nvl_bw?,
        nvlink_util: nu?,
        num_ibroce_ports: ports?,
        ibroce_bw_bytes_per_s: port_bw?,
        ibroce_util: iu?,
        ar_perc_intra: pi?,
        nic_latency_s: nic_latency_s?,
        nvlink_latency_s: nvlink_latency_s?,
        wan,
        second,
    })
}

/// A GPU's streaming multiprocessors at `key`: `None` inside when absent (no wave
/// quantization), or an error (`None` outside) naming the field.
fn sm_count(v: &mut Reader, f: &Option<RawValue>, key: &str) -> Option<Option<u64>> {
    match f {
        None | Some(RawValue::Null) => Some(None),
        f => v.count(f, at("system", key), &"optional", 1, MAX_SM_COUNT).map(Some),
    }
}

/// The second GPU type: `None` without one (`second_gpu_nodes` absent or 0), or an error
/// (`None` outside) naming the field.
fn second_gpu(v: &mut Reader, s: &RawSystem) -> Option<Option<SecondGpu>> {
    let nodes = match &s.second_gpu_nodes {
        None | Some(RawValue::Null) => 0,
        f => v.count(f, at("system", "second_gpu_nodes"), &"optional", 0, MAX_COUNT)?,
    };
    if nodes == 0 {
        return Some(None);
    }
    let name = match &s.second_gpu_name {
        None | Some(RawValue::Null) => Arc::from("second GPU type"),
        f => v.name(f, at("system", "second_gpu_name")),
    };
    let why = &"a second GPU type needs its datasheet figures";
    let mut rate = |f: &Field, key: &str| v.within(f, at("system", key), why, RANGES.flops_per_s);
    let rates = [
        rate(&s.second_f64_flops, "second_f64_flops"),
        rate(&s.second_f32_flops, "second_f32_flops"),
        rate(&s.second_f16_flops, "second_f16_flops"),
        rate(&s.second_i8_ops, "second_i8_ops"),
    ];
    let fp8 = match &s.second_fp8_flops {
        None | Some(RawValue::Null) => Some(None),
        f => v.within(f, at("system", "second_fp8_flops"), &"optional", RANGES.flops_per_s).map(Some),
    };
    let sm_count = sm_count(v, &s.second_sm_count, "second_sm_count");
    let cap = v.within(&s.second_mem_cap, at("system", "second_mem_cap"), why, RANGES.bytes);
    let bw = v.within(&s.second_mem_bw, at("system", "second_mem_bw"), why, RANGES.bytes_per_s);
    // Its NVLinks: both or neither (then the cluster's).
    let nvlinks = match (&s.second_num_nvlinks, &s.second_bw_per_nvlink) {
        (None | Some(RawValue::Null), None | Some(RawValue::Null)) => Some(None),
        (links, speed) => {
            let why = &"a second GPU type's NVLinks need both their count and their speed";
            let n = v.within(links, at("system", "second_num_nvlinks"), why, RANGES.links);
            let b = v.within(speed, at("system", "second_bw_per_nvlink"), why, RANGES.bytes_per_s);
            n.zip(b).map(Some)
        }
    };
    let [f64f, f32f, f16f, i8f] = rates;
    Some(Some(SecondGpu {
        name,
        nodes,
        f64_flops_per_s: f64f?,
        f32_flops_per_s: f32f?,
        f16_flops_per_s: f16f?,
        i8_ops_per_s: i8f?,
        fp8_flops_per_s: fp8?,
        sm_count: sm_count?,
        mem_cap_bytes: cap?,
        mem_bw_bytes_per_s: bw?,
        nvlinks: nvlinks?,
    }))
}

/// The wide-area level: `None` for one site (the key absent or 1), or an error (`None`
/// outside) naming the field.
fn wide_area(v: &mut Reader, s: &RawSystem) -> Option<Option<Wan>> {
    let sites = match &s.num_sites {
        None | Some(RawValue::Null) => 1,
        f => v.count(f, at("system", "num_sites"), &"optional", 1, MAX_COUNT)?,
    };
    let latency_s = v.optional_upto(
        &s.wan_latency_s,
        at("system", "wan_latency_s"),
        "a latency from",
        (MAX_NIC_LATENCY_S, "s"),
        "0: a network hop's own latency",
    );
    if sites == 1 {
        return Some(None);
    }
    let why = &"a cluster of several sites needs each site's wide-area bandwidth in each direction";
    let bytes_per_s = v.within(&s.wan_bw, at("system", "wan_bw"), why, RANGES.bytes_per_s);
    Some(Some(Wan { sites, bytes_per_s: bytes_per_s?, latency_s: latency_s? }))
}

/// The longest link latency a system may state, s: a geostationary satellite hop is about
/// 0.25 s; 10 s is past any network.
const MAX_NIC_LATENCY_S: f64 = 10.0;

/// The largest divisor of `n` that is at most `k` (1 at least): a legal degree, count or batch
/// near the one asked for, for messages that say the fix.
pub(crate) fn divisor_at_most(n: u64, k: u64) -> u64 {
    // A bounded walk down from k: inputs may be large, and 1 always divides.
    let top = k.min(n);
    (top.saturating_sub(100_000).max(1)..=top).rev().find(|d| n.is_multiple_of(*d)).unwrap_or(1)
}

/// The task type and name, which every task has.
fn read_task_kind(v: &mut Reader, t: &RawTask) -> Option<(Arc<str>, &'static str)> {
    let name = v.name(&t.name, at("task", "name"));
    let kind = v.text(&t.kind, at("task", "type"), &"it says what the run does")?;
    match ["pretrain", "finetune", "inference"].iter().find(|k| **k == kind) {
        Some(k) => Some((name, k)),
        None => {
            v.push(
                FieldError::new(
                    "task.type",
                    format!("\"{}\" is not a task type; use pretrain, finetune or inference", short(kind)),
                )
                .reference(format!("Unknown task type: {kind}")),
            );
            None
        }
    }
}

fn read_task(v: &mut Reader, t: &RawTask, family: Family) -> Option<Task> {
    let kind = read_task_kind(v, t);
    let why = Why { family, what: "tasks" };
    let cnn = family == Family::Cnn;
    let needs_mlp = family.has_mlp_plan();
    let needs_transformer = family.has_transformer_plan();
    let mlp = if needs_mlp {
        read_spec(v, (&t.mlp_parallel, &t.mlp_parallel_degree), ("mlp_parallel", "mlp_parallel_degree"), &why)
    } else {
        None
    };
    // A CNN has no embeddings: its network's plan stands for them.
    let emb = if cnn {
        mlp
    } else {
        read_spec(v, (&t.emb_parallel, &t.emb_parallel_degree), ("emb_parallel", "emb_parallel_degree"), &why)
    };
    let transformer = if !needs_transformer {
        None
    } else {
        read_spec(
            v,
            (&t.transformer_parallel, &t.transformer_parallel_degree),
            ("transformer_parallel", "transformer_parallel_degree"),
            &why,
        )
    };
    let mut batch = |f: &Field, key: &str| v.count(f, at("task", key), &why, 1, MAX_COUNT);
    let local_mlp_batch = if needs_mlp { batch(&t.local_mlp_bs, "local_mlp_bs") } else { None };
    let local_emb_batch = if cnn { local_mlp_batch } else { batch(&t.local_emb_bs, "local_emb_bs") };
    let local_transformer_batch = if transformer.is_some() || needs_transformer {
        batch(&t.local_transformer_bs, "local_transformer_bs")
    } else {
        None
    };
    // MAD-Max has no CNNs and no encoder-decoders: the default model evaluates them, unless the
    // task asks otherwise.
    let own = family.default_model_only();
    let mode = v.choice(
        &t.mode,
        at("task", "mode"),
        &[("default", Mode::Default), ("reference", Mode::Reference)],
        if own { Mode::Default } else { Mode::Reference },
    );
    if own && mode == Some(Mode::Reference) {
        let what = if cnn { "CNNs" } else { "encoder-decoder models" };
        v.push(FieldError::new(
            "task.mode",
            format!("MAD-Max's paper model has no {what}: evaluate this model with the default model (\"default\")"),
        ));
    }
    let setup = read_setup(v, t);
    let ((name, kind), mode, setup) = (kind?, mode?, setup?);
    let kind = match kind {
        "pretrain" => TaskKind::Pretrain,
        "inference" => TaskKind::Inference,
        _ if cnn => {
            v.push(FieldError::new(
                "task.type",
                "fine-tuning a CNN is not modelled (nothing says which layers it freezes): use pretrain or inference",
            ));
            return None;
        }
        _ => TaskKind::Finetune(read_freeze(v, t, family)?),
    };
    if (needs_mlp && (mlp.is_none() || local_mlp_batch.is_none()))
        || (needs_transformer && (transformer.is_none() || local_transformer_batch.is_none()))
    {
        return None;
    }
    Some(Task {
        name,
        kind,
        plan: Plan {
            mlp,
            emb: emb?,
            transformer,
            local_mlp_batch,
            local_emb_batch: local_emb_batch?,
            local_transformer_batch,
        },
        mode,
        setup,
    })
}

/// The default model's training settings; absent keys take their defaults.
fn read_setup(v: &mut Reader, t: &RawTask) -> Option<Setup> {
    let d = Setup::default();
    let optional = &"optional";
    let micro_batch = match &t.micro_batch {
        None => None,
        f => Some(v.count(f, at("task", "micro_batch"), optional, 1, MAX_COUNT)?),
    };
    let virtual_stages = match &t.virtual_stages {
        None => d.virtual_stages,
        f => v.count(f, at("task", "virtual_stages"), optional, 1, MAX_LAYERS)?,
    };
    let zero_stage = match &t.zero_stage {
        None => d.zero_stage,
        f => v.count(f, at("task", "zero_stage"), optional, 0, 3)? as u8,
    };
    let recompute = v.choice(
        &t.recompute,
        at("task", "recompute"),
        &[("none", Recompute::None), ("selective", Recompute::Selective), ("full", Recompute::Full)],
        d.recompute,
    )?;
    let modules_at = at("task", "recompute_modules");
    let recompute_modules =
        match v.parsed_text(&t.recompute_modules, modules_at, "\"layernorm, moe\"", RecomputeModules::parse)? {
            None => d.recompute_modules,
            Some(m) if recompute == Recompute::Selective => m,
            Some(_) => {
                let e = "names what selective recomputation recomputes: set recompute to selective, or remove it";
                v.push(FieldError::new(modules_at.to_string(), e));
                return None;
            }
        };
    let algorithms = Algorithm::ALL.map(|a| (a.config_name(), a));
    let collective = v.choice(&t.collective, at("task", "collective"), &algorithms, d.collective)?;
    let sequence_parallel =
        v.optional_flag(&t.sequence_parallel, at("task", "sequence_parallel"), d.sequence_parallel)?;
    let expert_tp = match &t.expert_tp {
        None | Some(RawValue::Null) => d.expert_tp,
        f => Some(v.count(f, at("task", "expert_tp"), optional, 1, MAX_COUNT)?),
    };
    let expert_cp = match &t.expert_cp {
        None | Some(RawValue::Null) => d.expert_cp,
        f => Some(v.count(f, at("task", "expert_cp"), optional, 1, MAX_COUNT)?),
    };
    let zero_shard_ranks = match &t.zero_shard_ranks {
        None | Some(RawValue::Null) => d.zero_shard_ranks,
        f => Some(v.count(f, at("task", "zero_shard_ranks"), optional, 1, MAX_COUNT)?),
    };
    let zero1_all_reduce = v.optional_flag(&t.zero1_all_reduce, at("task", "zero1_all_reduce"), d.zero1_all_reduce)?;
    let zero1_broadcast = v.optional_flag(&t.zero1_broadcast, at("task", "zero1_broadcast"), d.zero1_broadcast)?;
    let overlap_grad_reduce =
        v.optional_flag(&t.overlap_grad_reduce, at("task", "overlap_grad_reduce"), d.overlap_grad_reduce)?;
    let overlap_param_gather = match &t.overlap_param_gather {
        None | Some(RawValue::Null) => d.overlap_param_gather,
        f => Some(v.optional_flag(f, at("task", "overlap_param_gather"), false)?),
    };
    let overlap_tp_comm = v.optional_flag(&t.overlap_tp_comm, at("task", "overlap_tp_comm"), d.overlap_tp_comm)?;
    let fused_loss = v.optional_flag(&t.fused_loss, at("task", "fused_loss"), d.fused_loss)?;
    let metric_losses = match &t.metric_losses {
        None => d.metric_losses,
        f => v.count(f, at("task", "metric_losses"), optional, 0, MAX_METRIC_LOSSES)? as u8,
    };
    let fp8 = v.optional_flag(&t.fp8, at("task", "fp8"), d.fp8)?;
    let fp8_param_gather = v.optional_flag(&t.fp8_param_gather, at("task", "fp8_param_gather"), d.fp8_param_gather)?;
    let fp32_grads = v.optional_flag(&t.fp32_grads, at("task", "fp32_grads"), d.fp32_grads)?;
    let loader = read_loader(v, t)?;
    let shardings = EmbSharding::ALL.map(|e| (e.config_name(), e));
    let emb_sharding = v.choice(&t.emb_sharding, at("task", "emb_sharding"), &shardings, d.emb_sharding)?;
    let placements = BotMlpPlacement::ALL.map(|p| (p.config_name(), p));
    let bot_mlp = v.choice(&t.bot_mlp, at("task", "bot_mlp"), &placements, d.bot_mlp)?;
    let layouts = ConvLayout::ALL.map(|l| (l.config_name(), l));
    let conv_layout = v.choice(&t.conv_layout, at("task", "conv_layout"), &layouts, d.conv_layout)?;
    let cycle_ms = v.optional_upto(
        &t.collective_cycle_ms,
        at("task", "collective_cycle_ms"),
        "from",
        (MAX_COLLECTIVE_CYCLE_MS, "ms"),
        "0: collectives launched directly",
    )?;
    let collective_cycle_s = cycle_ms / 1e3;
    let tokens = |v: &mut Reader, f: &Field, key: &str| match f {
        None | Some(RawValue::Null) => Some(None),
        f => v.count(f, at("task", key), optional, 1, MAX_COUNT).map(Some),
    };
    let input_tokens = tokens(v, &t.input_tokens, "input_tokens")?;
    let output_tokens = tokens(v, &t.output_tokens, "output_tokens")?;
    let formats = Precision::ALL.map(|p| (p.config_name(), Some(p)));
    let weight_format = v.choice(&t.weight_format, at("task", "weight_format"), &formats, None)?;
    let kv_format = v.choice(&t.kv_format, at("task", "kv_format"), &formats, None)?;
    let batchings = Batching::ALL.map(|b| (b.config_name(), b));
    let batching = v.choice(&t.batching, at("task", "batching"), &batchings, d.batching)?;
    let kv_page_tokens = match &t.kv_page_tokens {
        None | Some(RawValue::Null) => d.kv_page_tokens,
        f => v.count(f, at("task", "kv_page_tokens"), optional, 1, 1 << 16)?,
    };
    let step_tokens = match &t.step_tokens {
        None | Some(RawValue::Null) => d.step_tokens,
        f => v.count(f, at("task", "step_tokens"), optional, 1, 1 << 24)?,
    };
    let prefills = PrefillSteps::ALL.map(|p| (p.config_name(), p));
    let prefill_steps = v.choice(&t.prefill_steps, at("task", "prefill_steps"), &prefills, d.prefill_steps)?;
    let scheduler_steps = match &t.scheduler_steps {
        None | Some(RawValue::Null) => d.scheduler_steps,
        f => v.count(f, at("task", "scheduler_steps"), optional, 1, MAX_SCHEDULER_STEPS)?,
    };
    let host_ms = |v: &mut Reader, f: &Field, key: &str| {
        v.optional_upto(f, at("task", key), "from", (MAX_HOST_MS, "ms"), "0: the host keeps ahead of the GPU")
    };
    let host_step_s = host_ms(v, &t.host_step_ms, "host_step_ms")? / 1e3;
    let host_request_s = host_ms(v, &t.host_request_ms, "host_request_ms")? / 1e3;
    let request_rate = match &t.request_rate {
        None | Some(RawValue::Null) => None,
        f => Some(v.within(f, at("task", "request_rate"), optional, (1e-6, 1e9))?),
    };
    let burst_requests = match &t.burst_requests {
        None | Some(RawValue::Null) => None,
        f => Some(v.count(f, at("task", "burst_requests"), optional, 1, 1 << 40)?),
    };
    let request_mix = v
        .parsed_text(&t.request_mix, at("task", "request_mix"), "\"512/128:3, 2048/256:1\"", RequestClass::parse_mix)?
        .unwrap_or_default();
    let spreads = LengthSpread::ALL.map(|l| (l.config_name(), l));
    let length_spread = v.choice(&t.length_spread, at("task", "length_spread"), &spreads, d.length_spread)?;
    let cuda_graphs = v.optional_flag(&t.cuda_graphs, at("task", "cuda_graphs"), d.cuda_graphs)?;
    let custom_all_reduce =
        v.optional_flag(&t.custom_all_reduce, at("task", "custom_all_reduce"), d.custom_all_reduce)?;
    let samplings = Sampling::ALL.map(|s| (s.config_name(), s));
    let sampling = v.choice(&t.sampling, at("task", "sampling"), &samplings, d.sampling)?;
    Some(Setup {
        sampling,
        request_mix,
        length_spread,
        cuda_graphs,
        custom_all_reduce,
        batching,
        kv_page_tokens,
        step_tokens,
        prefill_steps,
        scheduler_steps,
        host_step_s,
        host_request_s,
        request_rate,
        burst_requests,
        input_tokens,
        output_tokens,
        weight_format,
        kv_format,
        emb_sharding,
        bot_mlp,
        conv_layout,
        collective_cycle_s,
        micro_batch,
        virtual_stages,
        zero_stage,
        recompute,
        sequence_parallel,
        expert_tp,
        expert_cp,
        zero_shard_ranks,
        zero1_all_reduce,
        zero1_broadcast,
        recompute_modules,
        collective,
        overlap_grad_reduce,
        overlap_param_gather,
        overlap_tp_comm,
        fused_loss,
        metric_losses,
        fp8,
        fp8_param_gather,
        fp32_grads,
        loader,
    })
}

/// The input pipeline: a measured rate, a model of decoding (`loader_frames_per_sample` turns
/// it on and needs the frame size and a decoder), and of reading storage (both its keys or
/// neither). A decoding key without the frames per sample is refused: it would do nothing.
fn read_loader(v: &mut Reader, t: &RawTask) -> Option<Loader> {
    let optional = &"optional";
    let absent = |f: &Field| matches!(f, None | Some(RawValue::Null));
    let given_samples_per_s = match &t.data_loader_samples_per_s {
        f if absent(f) => None,
        f => Some(v.within(f, at("task", "data_loader_samples_per_s"), optional, (1e-6, 1e15))?),
    };
    let decoding = [
        (&t.loader_frame_stride, "loader_frame_stride"),
        (&t.loader_keyframe_interval, "loader_keyframe_interval"),
        (&t.loader_frame_width, "loader_frame_width"),
        (&t.loader_frame_height, "loader_frame_height"),
        (&t.loader_cores_per_node, "loader_cores_per_node"),
        (&t.loader_core_pixels_per_s, "loader_core_pixels_per_s"),
        (&t.loader_gpu_pixels_per_s, "loader_gpu_pixels_per_s"),
    ];
    let decode = if absent(&t.loader_frames_per_sample) {
        if let Some((_, key)) = decoding.iter().find(|(f, _)| !absent(f)) {
            let e =
                "models decoding, which needs task.loader_frames_per_sample (1 for an image, 16 for a 16-frame clip)";
            v.push(FieldError::new(at("task", key).to_string(), e.to_string()));
            return None;
        }
        None
    } else {
        let frames =
            v.count(&t.loader_frames_per_sample, at("task", "loader_frames_per_sample"), optional, 1, 1 << 20)?;
        let why = &"decoding needs the frame size";
        let width = v.count(&t.loader_frame_width, at("task", "loader_frame_width"), why, 1, 1 << 16);
        let height = v.count(&t.loader_frame_height, at("task", "loader_frame_height"), why, 1, 1 << 16);
        let count = |v: &mut Reader, f: &Field, key: &str, (default, min): (u64, u64)| match f {
            f if absent(f) => Some(default),
            f => v.count(f, at("task", key), optional, min, 1 << 20),
        };
        let stride = count(v, &t.loader_frame_stride, "loader_frame_stride", (1, 1));
        // Clips default to x264's keyframe interval; an image is its own keyframe.
        let keyframes = if frames == 1 { 1 } else { X264_KEYFRAME_INTERVAL };
        let keyframe_interval = count(v, &t.loader_keyframe_interval, "loader_keyframe_interval", (keyframes, 1));
        let cores = count(v, &t.loader_cores_per_node, "loader_cores_per_node", (0, 0));
        let rate = |v: &mut Reader, f: &Field, key: &str, (default, min): (f64, f64)| match f {
            f if absent(f) => Some(default),
            f => v.within(f, at("task", key), optional, (min, 1e15)),
        };
        let core_rate = rate(v, &t.loader_core_pixels_per_s, "loader_core_pixels_per_s", (CORE_PIXELS_PER_S, 1.0));
        // 0: the GPUs' decoders are not used.
        let gpu_rate = rate(v, &t.loader_gpu_pixels_per_s, "loader_gpu_pixels_per_s", (0.0, 0.0));
        let d = Decode {
            frames_per_sample: frames,
            frame_stride: stride?,
            keyframe_interval: keyframe_interval?,
            frame_pixels: (width? * height?) as f64,
            cores_per_node: cores?,
            core_pixels_per_s: core_rate?,
            gpu_pixels_per_s: gpu_rate?,
        };
        if d.cores_per_node == 0 && d.gpu_pixels_per_s == 0.0 {
            let e = "no decoder: give the CPU cores per node that decode, or the GPUs' decoding rate (task.loader_gpu_pixels_per_s)";
            v.push(FieldError::new(at("task", "loader_cores_per_node").to_string(), e.to_string()));
            return None;
        }
        Some(d)
    };
    let storage = match (&t.loader_bytes_per_sample, &t.loader_storage_bytes_per_s) {
        (b, s) if absent(b) && absent(s) => None,
        (b, s) => {
            let why = &"reading storage needs both the bytes per sample and the storage bandwidth";
            let b = v.within(b, at("task", "loader_bytes_per_sample"), why, RANGES.bytes);
            let s = v.within(s, at("task", "loader_storage_bytes_per_s"), why, RANGES.bytes_per_s);
            Some(Storage { bytes_per_sample: b?, bytes_per_s_per_node: s? })
        }
    };
    Some(Loader { given_samples_per_s, decode, storage })
}

fn read_freeze(v: &mut Reader, t: &RawTask, family: Family) -> Option<Freeze> {
    let why = Why { family, what: "finetune tasks" };
    let mut flag = |f: &Field, key: &str| v.flag(f, at("task", key), &why);
    let freeze = if family.is_dlrm() {
        let top = flag(&t.freeze_top_mlp, "freeze_top_mlp");
        let bot = flag(&t.freeze_bot_mlp, "freeze_bot_mlp");
        let emb = flag(&t.freeze_emb, "freeze_emb");
        let tr = if family == Family::DlrmTransformer {
            flag(&t.freeze_transformer, "freeze_transformer")
        } else {
            Some(false)
        };
        Freeze { top_mlp: top?, bot_mlp: bot?, emb: emb?, transformer: tr?, min_frozen_layer: None }
    } else {
        let emb = flag(&t.freeze_emb, "freeze_emb");
        let tr = flag(&t.freeze_transformer, "freeze_transformer");
        let mu = v.count(&t.min_frozen_layer, at("task", "min_frozen_layer"), &why, 0, MAX_COUNT);
        Freeze { top_mlp: false, bot_mlp: false, emb: emb?, transformer: tr?, min_frozen_layer: Some(mu?) }
    };
    Some(freeze)
}

/// A parallel spec: a list of strategies and a list of degrees.
fn read_spec(
    v: &mut Reader,
    (strategies, degrees): (&Field, &Field),
    (key, degree_key): (&'static str, &'static str),
    why: &Why,
) -> Option<Spec> {
    let s_path = at("task", key);
    let d_path = at("task", degree_key);
    let s = v.present(strategies, s_path, why);
    let d = v.present(degrees, d_path, why);
    let (s, d) = (s?, d?);
    let names = match s {
        RawValue::List(items) if !items.is_empty() => items,
        RawValue::List(_) => {
            v.push(FieldError::new(s_path.to_string(), "must list at least one strategy"));
            return None;
        }
        other => {
            v.push(FieldError::new(
                s_path.to_string(),
                format!("must be a list of strategies such as [\"ddp\"], got {other}"),
            ));
            return None;
        }
    };
    let degs = match d {
        RawValue::List(items) => items,
        other => {
            v.push(FieldError::new(d_path.to_string(), format!("must be a list of degrees such as [8], got {other}")));
            return None;
        }
    };
    if names.len() != degs.len() {
        v.push(
            FieldError::new(
                d_path.to_string(),
                format!(
                    "gives {} degree(s) for {} strateg{}; give one degree per level",
                    degs.len(),
                    names.len(),
                    if names.len() == 1 { "y" } else { "ies" }
                ),
            )
            .reference("Mismatch in parallelism specification"),
        );
        return None;
    }
    if names.len() > MAX_LEVELS {
        let n = names.len();
        v.push(FieldError::new(s_path.to_string(), format!("has {n} levels; at most {MAX_LEVELS} are supported")));
        return None;
    }
    let mut levels = [Level { strategy: Strategy::Ddp, degree: 1 }; MAX_LEVELS];
    let mut ok = true;
    for (i, (n, d)) in names.iter().zip(degs).enumerate() {
        let strategy = match n {
            RawValue::Str(s) => match Strategy::parse(s) {
                Some(st) => Some(st),
                None => {
                    v.push(
                        FieldError::new(
                            s_path.item(i).to_string(),
                            format!("\"{}\" is not a strategy; use ddp, fsdp, tp or pp (mp for embeddings)", short(s)),
                        )
                        .reference(format!(
                            "{}: {}",
                            undefined_strategy_message(key),
                            short(s)
                        )),
                    );
                    None
                }
            },
            other => {
                v.push(FieldError::new(s_path.item(i).to_string(), format!("must be a strategy name, got {other}")));
                None
            }
        };
        let degree = v.count_value(d, d_path.item(i), 1, MAX_COUNT);
        match (strategy, degree) {
            (Some(strategy), Some(degree)) => levels[i] = Level { strategy, degree },
            _ => ok = false,
        }
    }
    if !ok {
        return None;
    }
    Spec::new(&levels[..names.len()])
}

/// The reference's message for an unknown strategy name.
pub(crate) fn undefined_strategy_message(key: &str) -> &'static str {
    match key {
        "mlp_parallel" => "Undefined parallelization strategy for MLPs",
        "emb_parallel" => "Undefined parallelization strategy for EMBs",
        _ => "Undefined parallelization strategy for Transformer Layers",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::RawFile;

    /// What validation says of LLaMA2-70B on DC_A-2048 with these model and system keys.
    fn problems(model: serde_json::Value, system: serde_json::Value) -> Vec<String> {
        let mut v: serde_json::Value = serde_json::from_str(include_str!(
            "../../tests/data/reference/cases/llm__llama2_70b__dc_A_2048__llm_train.json"
        ))
        .expect("case");
        for (config, keys) in [("model", model), ("system", system)] {
            if let (Some(c), Some(keys)) = (v["inputs"][config].as_object_mut(), keys.as_object()) {
                c.extend(keys.clone());
            }
        }
        let raw = serde_json::from_value::<RawFile>(v).expect("case").into_scenario().expect("case");
        validate(&raw).err().unwrap_or_default().iter().map(|e| e.to_string()).collect()
    }

    #[test]
    fn model_and_system_errors_say_the_fix() {
        let said = problems(serde_json::json!({"num_kv_heads": 6}), serde_json::json!({}));
        assert!(said.iter().any(|m| m.contains("key/value groups: use a divisor of 64, such as 4")), "{said:?}");
        let said = problems(serde_json::json!({}), serde_json::json!({"num_nodes": 3}));
        assert!(said.iter().any(|m| m.contains("use a node count that divides 2048, such as 2")), "{said:?}");
        let said = problems(
            serde_json::json!({}),
            serde_json::json!({"num_devices": 8, "num_nodes": 1, "ar_perc_intra": 0.5}),
        );
        assert!(said.iter().any(|m| m.contains("set 1, got 0.5")), "{said:?}");
        let said = problems(serde_json::json!({"head_dim": 0}), serde_json::json!({}));
        assert!(said.iter().any(|m| m.starts_with("model.head_dim")), "{said:?}");
        assert!(problems(serde_json::json!({"head_dim": 128}), serde_json::json!({})).is_empty());
    }

    #[test]
    fn a_collective_launch_cycle_is_milliseconds_from_0_to_a_second() {
        let said = |cycle: serde_json::Value| -> Result<f64, Vec<String>> {
            flagship(serde_json::json!({"mode": "default", "collective_cycle_ms": cycle}))
                .map(|s| s.task().setup.collective_cycle_s)
                .map_err(|e| e.iter().map(|e| e.to_string()).collect())
        };
        assert_eq!(said(serde_json::json!(1)), Ok(1e-3));
        assert_eq!(said(serde_json::json!(0.5)), Ok(5e-4));
        assert_eq!(said(serde_json::Value::Null), Ok(0.0));
        for bad in [serde_json::json!(-1), serde_json::json!(1001), serde_json::json!("fast")] {
            let e = said(bad.clone()).expect_err("refused");
            assert!(e.len() == 1 && e[0].starts_with("task.collective_cycle_ms: must be"), "{bad}: {e:?}");
        }
        let e = said(serde_json::json!(-1)).expect_err("refused");
        assert_eq!(
            e[0],
            "task.collective_cycle_ms: must be from 0 to 1000 ms (0: collectives launched directly), got -1"
        );
    }

    #[test]
    fn a_text_choice_is_read_by_spelling_and_a_wrong_one_lists_the_options() {
        let said = |key: &str, value: serde_json::Value| -> Result<Scenario, Vec<String>> {
            let mut task = serde_json::json!({"mode": "default"});
            task[key] = value;
            flagship(task).map_err(|e| e.iter().map(|e| e.to_string()).collect())
        };
        let s = said("collective", serde_json::json!("tree")).expect("valid");
        assert_eq!(s.task().setup.collective, Algorithm::Tree);
        let s = said("kv_format", serde_json::json!("fp8")).expect("valid");
        assert_eq!(s.task().setup.kv_format, Some(Precision::Fp8));
        assert_eq!(said("batching", serde_json::Value::Null).map(|s| s.task().setup.batching), Ok(Batching::Static));
        let s = said("prefill_steps", serde_json::json!("separate")).expect("valid");
        assert_eq!((s.task().setup.prefill_steps, s.task().setup.scheduler_steps), (PrefillSteps::Separate, 1));
        assert_eq!(said("scheduler_steps", serde_json::json!(10)).map(|s| s.task().setup.scheduler_steps), Ok(10));
        assert_eq!(
            said("conv_layout", serde_json::json!("nchw")).map(|s| s.task().setup.conv_layout),
            Ok(ConvLayout::Nchw)
        );
        // Read, then refused for this training task: a spread of lengths is for serving.
        assert_eq!(
            said("length_spread", serde_json::json!("exponential")).map(|_| ()),
            Err(vec![
                "task.length_spread: a spread of request lengths is for LLM serving (an inference task)".to_string()
            ])
        );
        assert_eq!(
            said("length_spread", serde_json::json!("fixed")).map(|s| s.task().setup.length_spread),
            Ok(LengthSpread::Fixed)
        );
        assert_eq!(
            said("sampling", serde_json::json!("top-p")).map(|_| ()),
            Err(vec![
                "task.sampling: a way of sampling the next token is for LLM serving (an inference task)".to_string()
            ])
        );
        assert_eq!(
            said("sampling", serde_json::json!("greedy")).map(|s| s.task().setup.sampling),
            Ok(Sampling::Greedy)
        );
        // An option's other spellings are named with the ones there are.
        for (key, bad, options) in [
            ("sampling", "top_p", "greedy, random, top-p"),
            ("prefill_steps", "chunked", "mixed, separate"),
            ("conv_layout", "NCHW", "nhwc, nchw"),
            ("length_spread", "normal", "fixed, exponential"),
        ] {
            assert_eq!(
                said(key, serde_json::json!(bad)).map(|_| ()),
                Err(vec![format!("task.{key}: \"{bad}\" is not an option; use {options}")])
            );
        }
        assert_eq!(said("host_step_ms", serde_json::json!(2.5)).map(|s| s.task().setup.host_step_s), Ok(2.5e-3));
        assert_eq!(
            said("host_request_ms", serde_json::json!(-1)).map(|_| ()),
            Err(vec!["task.host_request_ms: must be from 0 to 1000 ms (0: the host keeps ahead of the GPU), got -1"
                .to_string()])
        );
        for bad in [serde_json::json!(0), serde_json::json!(MAX_SCHEDULER_STEPS + 1), serde_json::json!(2.5)] {
            let e = said("scheduler_steps", bad.clone()).map(|_| ()).expect_err("refused");
            assert!(e.len() == 1 && e[0].starts_with("task.scheduler_steps: "), "{bad}: {e:?}");
        }
        let options = Algorithm::ALL.iter().map(|a| a.config_name()).collect::<Vec<_>>().join(", ");
        assert_eq!(
            said("collective", serde_json::json!("star")).map(|_| ()),
            Err(vec![format!("task.collective: \"star\" is not an option; use {options}")])
        );
        assert_eq!(
            said("recompute", serde_json::json!(2)).map(|_| ()),
            Err(vec!["task.recompute: must be one of none, selective, full, got a whole number (2)".to_string()])
        );
    }

    /// What validation says of a Criteo-sized DLRM (3 bottom, 5 top layers, 128-wide
    /// embeddings) with these model keys, in `mode` ("default" or "reference").
    fn dlrm_problems_in(mode: &str, keys: serde_json::Value) -> Vec<String> {
        let mut v: serde_json::Value = serde_json::from_str(include_str!(
            "../../tests/data/reference/cases/dlrm__dlrm_a__zionex_128__dlrm_train.json"
        ))
        .expect("case");
        v["inputs"]["task"]["mode"] = serde_json::json!(mode);
        let base = serde_json::json!({"num_bot_mlp_layers": 3, "num_top_mlp_layers": 5, "emb_dim": 128});
        for k in [base, keys] {
            if let (Some(m), Some(k)) = (v["inputs"]["model"].as_object_mut(), k.as_object()) {
                m.extend(k.clone());
            }
        }
        let raw = serde_json::from_value::<RawFile>(v).expect("case").into_scenario().expect("case");
        validate(&raw).err().unwrap_or_default().iter().map(|e| e.to_string()).collect()
    }

    fn dlrm_problems(keys: serde_json::Value) -> Vec<String> {
        dlrm_problems_in("default", keys)
    }

    #[test]
    fn mlp_widths_are_optional_go_together_and_agree_with_the_model() {
        let ok = serde_json::json!({"bot_mlp_widths": "13-512-256-128", "top_mlp_widths": "1024-1024-512-256-1"});
        assert!(dlrm_problems(ok).is_empty());
        let list =
            serde_json::json!({"bot_mlp_widths": [13, 512, 256, 128], "top_mlp_widths": [1024, 1024, 512, 256, 1]});
        assert!(dlrm_problems(list).is_empty());
        let shown =
            serde_json::json!({"bot_mlp_widths": "[13,512,256,128]", "top_mlp_widths": "1024, 1024, 512, 256, 1"});
        assert!(dlrm_problems(shown).is_empty());
        assert!(dlrm_problems(serde_json::json!({})).is_empty());
        let cases = [
            (
                serde_json::json!({"bot_mlp_widths": "13-512-256-128"}),
                "model.top_mlp_widths: missing: bot_mlp_widths is given",
            ),
            (
                serde_json::json!({"bot_mlp_widths": "13-512-128", "top_mlp_widths": "1024-1024-512-256-1"}),
                "gives 2 layer(s) (input features first, then each layer's width) but num_bot_mlp_layers is 3",
            ),
            (
                serde_json::json!({"bot_mlp_widths": "13-512-256-64", "top_mlp_widths": "1024-1024-512-256-1"}),
                "ends at 64 but the embeddings are 128 wide",
            ),
            (
                serde_json::json!({"bot_mlp_widths": "13-512-256-128", "top_mlp_widths": "1024-1"}),
                "gives 2 layer width(s) but num_top_mlp_layers is 5",
            ),
            (
                serde_json::json!({"bot_mlp_widths": "13-wide-128", "top_mlp_widths": "1024-1024-512-256-1"}),
                "model.bot_mlp_widths: \"wide\" is not a width from 1",
            ),
            (
                serde_json::json!({"bot_mlp_widths": [13, 0, 256, 128], "top_mlp_widths": "1024-1024-512-256-1"}),
                "model.bot_mlp_widths[1]: must be at least 1, got 0",
            ),
            (
                serde_json::json!({"bot_mlp_widths": 13, "top_mlp_widths": "1"}),
                "give layer widths such as 13-512-256-128",
            ),
            (serde_json::json!({"bot_mlp_widths": "", "top_mlp_widths": "1"}), "model.bot_mlp_widths: is empty"),
        ];
        for (keys, says) in cases {
            let said = dlrm_problems(keys.clone());
            assert!(said.iter().any(|m| m.contains(says)), "{keys}: {said:?}");
        }
        // Paper mode uses square layers: widths that disagree with the layer counts are no error
        // there (its form does not show them); only unreadable ones are.
        let disagree = serde_json::json!({"bot_mlp_widths": "13-512-128", "top_mlp_widths": "1024-1"});
        assert!(dlrm_problems_in("reference", disagree).is_empty());
        let unreadable = serde_json::json!({"bot_mlp_widths": "13-wide-128", "top_mlp_widths": "1"});
        assert_eq!(dlrm_problems_in("reference", unreadable).len(), 1);
    }

    #[test]
    fn a_link_latency_is_optional_and_must_be_a_latency() {
        assert!(problems(serde_json::json!({}), serde_json::json!({"nic_latency_s": 0.02})).is_empty());
        assert!(problems(serde_json::json!({}), serde_json::json!({"nic_latency_s": null})).is_empty());
        for bad in [serde_json::json!(-1), serde_json::json!(11), serde_json::json!("far")] {
            let said = problems(serde_json::json!({}), serde_json::json!({ "nic_latency_s": bad }));
            assert!(said.len() == 1 && said[0].starts_with("system.nic_latency_s"), "{said:?}");
        }
        let said = problems(serde_json::json!({}), serde_json::json!({"nic_latency_s": -1}));
        assert!(said[0].contains("must be a latency from 0 to 10 s (0: a datacenter network), got -1"), "{said:?}");
    }

    #[test]
    fn a_gemms_share_of_hbm_is_optional_and_a_fraction() {
        use serde_json::json;
        assert!(problems(json!({}), json!({"gemm_bw_util": 0.75})).is_empty());
        assert!(problems(json!({}), json!({"gemm_bw_util": null})).is_empty());
        for bad in [json!(0), json!(1.2), json!("most")] {
            let said = problems(json!({}), json!({ "gemm_bw_util": bad }));
            assert!(said.len() == 1 && said[0].starts_with("system.gemm_bw_util"), "{said:?}");
        }
    }

    #[test]
    fn an_sm_count_is_optional_and_must_be_a_whole_number_of_sms() {
        use serde_json::json;
        assert!(problems(json!({}), json!({"sm_count": 108})).is_empty());
        assert!(problems(json!({}), json!({"sm_count": null})).is_empty());
        for (key, bad) in [("sm_count", json!(0)), ("sm_count", json!(13.5)), ("sm_count", json!("many"))] {
            let said = problems(json!({}), json!({ key: bad }));
            assert!(said.len() == 1 && said[0].starts_with("system.sm_count"), "{said:?}");
        }
        let said = problems(json!({}), json!({"sm_count": 0}));
        assert!(said[0].contains("at least 1"), "{said:?}");
        // The second GPU type's, read beside its figures.
        let second = json!({"second_gpu_nodes": 128, "second_f64_flops": 34e12, "second_f32_flops": 495e12,
            "second_f16_flops": 989e12, "second_i8_ops": 1979e12, "second_mem_cap": 80e9, "second_mem_bw": 3.35e12});
        let mut sys = second.clone();
        sys["second_sm_count"] = json!(-132);
        let said = problems(json!({}), sys);
        assert!(said.len() == 1 && said[0].starts_with("system.second_sm_count"), "{said:?}");
    }

    #[test]
    fn sites_divide_the_nodes_and_need_their_bandwidth_and_paper_mode_refuses_them() {
        use serde_json::json;
        // DC_A-2048: 256 nodes. Reference mode (the case has no mode key) has no site level.
        let said = problems(json!({}), json!({"num_sites": 4, "wan_bw": 1.25e9, "wan_latency_s": 0.01}));
        assert!(
            said.len() == 1 && said[0].starts_with("system.num_sites") && said[0].contains("default model"),
            "{said:?}"
        );
        let said = problems(json!({}), json!({"num_sites": 3, "wan_bw": 1.25e9}));
        assert!(said.len() == 1 && said[0].contains("256 nodes do not split evenly over 3 sites"), "{said:?}");
        let said = problems(json!({}), json!({"num_sites": 4}));
        assert!(said.len() == 1 && said[0].starts_with("system.wan_bw"), "{said:?}");
        for (key, bad) in [("num_sites", json!(0)), ("wan_latency_s", json!(-1)), ("nvlink_latency_s", json!("slow"))] {
            let mut sys = json!({"num_sites": 1, "wan_bw": 1e9});
            sys[key] = bad;
            let said = problems(json!({}), sys);
            assert!(said.len() == 1 && said[0].starts_with(&format!("system.{key}")), "{said:?}");
        }
        // One site is no wide-area level; the default model takes several.
        assert!(problems(json!({}), json!({"num_sites": 1, "nvlink_latency_s": 1e-6})).is_empty());
        let mut v: serde_json::Value = serde_json::from_str(include_str!(
            "../../tests/data/reference/cases/llm__llama2_70b__dc_A_2048__llm_train.json"
        ))
        .expect("case");
        v["inputs"]["task"]["mode"] = json!("default");
        v["inputs"]["system"]["num_sites"] = json!(4);
        v["inputs"]["system"]["wan_bw"] = json!(1.25e9);
        v["inputs"]["system"]["wan_latency_s"] = json!(0.01);
        let raw = serde_json::from_value::<RawFile>(v).expect("case").into_scenario().expect("case");
        let s = validate(&raw).expect("four sites");
        assert_eq!(s.system.wan, Some(Wan { sites: 4, bytes_per_s: 1.25e9, latency_s: 0.01 }));
        assert_eq!((s.system.devices_per_site(), s.system.devices_per_node()), (512, 8));
    }

    /// LLaMA2-70B on DC_A-2048 with these task keys, validated.
    fn flagship(task: serde_json::Value) -> Result<Scenario, Vec<FieldError>> {
        let mut v: serde_json::Value = serde_json::from_str(include_str!(
            "../../tests/data/reference/cases/llm__llama2_70b__dc_A_2048__llm_train.json"
        ))
        .expect("case");
        if let (Some(t), Some(keys)) = (v["inputs"]["task"].as_object_mut(), task.as_object()) {
            t.extend(keys.clone());
        }
        validate(&serde_json::from_value::<RawFile>(v).expect("case").into_scenario().expect("case"))
    }

    #[test]
    fn a_scenario_derived_from_another_is_the_one_validation_builds_or_refused_as_it_would_be() {
        let base = flagship(serde_json::json!({"mode": "default"})).expect("valid");
        // Each derivation gives what validating the changed configs gives.
        let same = |derived: Result<Scenario, Vec<FieldError>>, keys| {
            assert_eq!(derived.expect("valid"), flagship(keys).expect("valid"));
        };
        same(base.with_kind(TaskKind::Inference), serde_json::json!({"mode": "default", "type": "inference"}));
        same(base.with_mode(Mode::Reference), serde_json::json!({"mode": "reference"}));
        same(
            base.with_batch(4, Some(2)),
            serde_json::json!({"mode": "default", "local_transformer_bs": 4, "micro_batch": 2}),
        );
        let sys = base.system();
        let tuned = base.with_fractions([0.5, sys.mem_bw_util, sys.nvlink_util, sys.ibroce_util]).expect("valid");
        assert_eq!(tuned.system().flops_util, 0.5);
        assert_eq!(Scenario { system: System { flops_util: sys.flops_util, ..tuned.system.clone() }, ..tuned }, base);
        // Out of range, or against the rules: refused, with the field and the fix.
        let said = |r: Result<Scenario, Vec<FieldError>>| -> Vec<String> {
            r.expect_err("refused").iter().map(|e| e.to_string()).collect()
        };
        assert_eq!(
            said(base.with_fractions([0.0, 1.5, 0.5, 0.5])),
            [
                "system.flops_util: must be a fraction above 0 and at most 1, got 0",
                "system.mem_bw_util: must be a fraction above 0 and at most 1, got 1.5"
            ]
        );
        let streaming = base.with_gemm_bw(Some(0.75)).expect("valid");
        assert_eq!((streaming.system().gemm_bw_fraction(), base.system().gemm_bw_fraction()), (0.75, sys.mem_bw_util));
        assert_eq!(
            said(base.with_gemm_bw(Some(0.0))),
            ["system.gemm_bw_util: must be a fraction above 0 and at most 1, got 0"]
        );
        assert_eq!(said(base.with_batch(0, None)), ["task.local_transformer_bs: must be at least 1, got 0"]);
        let said = said(base.with_batch(4, Some(3)));
        assert!(
            said.len() == 1 && said[0].starts_with("task.micro_batch: a micro-batch of 3 does not divide"),
            "{said:?}"
        );
        assert_eq!(
            said,
            flagship(serde_json::json!({"mode": "default", "local_transformer_bs": 4, "micro_batch": 3}))
                .expect_err("refused")
                .iter()
                .map(|e| e.to_string())
                .collect::<Vec<_>>()
        );
    }
}
