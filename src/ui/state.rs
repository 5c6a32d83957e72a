//! The page's state, its actions and the reducer: plain Rust (no Yew, no DOM), so that every
//! transition is unit-tested natively. Derived values (charts' data, labels) are computed from
//! the state, never stored, except the last good evaluation, which must survive invalid edits.
//!
//! One job: the page's state machine (state, actions, reducer).

use super::fields::{Field, Kind};
use super::plan;
use crate::doc::{Config, Doc};
use crate::engine::critical::CriticalPath;
use crate::engine::scenario::{Family, Mode, Scenario, TaskKind};
use crate::engine::{evaluate, validate, FieldError, Report};
use crate::presets;
use crate::share::{self, ShareError};
use serde_json::{json, Value};
use std::cell::OnceCell;
use std::rc::Rc;

/// Which page is shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum View {
    Calculator,
    Explorer,
    /// Lessons and the library of famous runs.
    Learn,
    /// Predicted vs measured for every shipped measured run.
    Validation,
    /// The MAD-Max paper's findings on its workload suite, in both models.
    Paper,
}

impl View {
    pub const ALL: [View; 5] = [View::Calculator, View::Explorer, View::Learn, View::Validation, View::Paper];

    /// The view's name in the page address (`?view=...`).
    pub fn name(self) -> &'static str {
        match self {
            View::Calculator => "calculator",
            View::Explorer => "explorer",
            View::Learn => "learn",
            View::Validation => "validation",
            View::Paper => "paper",
        }
    }

    /// The view a page address names, if any (other parameters are ignored).
    pub fn from_query(query: &str) -> Option<View> {
        let query = query.strip_prefix('?').unwrap_or(query);
        let name = query.split('&').find_map(|kv| kv.strip_prefix("view="))?;
        View::ALL.into_iter().find(|v| v.name() == name)
    }

    /// The view a page address shows: the one it names, else the calculator.
    pub fn of_query(query: &str) -> View {
        View::from_query(query).unwrap_or(View::Calculator)
    }

    /// The view's place in [`View::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }

    /// The page address's query for a view and a scenario query: the view is named unless it
    /// is the calculator.
    pub fn query(self, scenario: &str) -> String {
        match (self, scenario.is_empty()) {
            (View::Calculator, _) => scenario.to_owned(),
            (v, true) => format!("view={}", v.name()),
            (v, false) => format!("view={}&{scenario}", v.name()),
        }
    }
}

/// An evaluation that passed validation.
#[derive(Debug)]
pub struct Evaluated {
    /// Tells evaluations apart: each has its own.
    serial: u64,
    pub doc: Doc,
    pub scenario: Scenario,
    pub report: Report,
    /// The timeline's critical path and each op's slack (the timeline chart marks it, the
    /// explain view says it): found on first use, which the timeline chart makes a background
    /// task of its own, so that a timeline of a million ops does not lengthen the evaluation's.
    critical: OnceCell<CriticalPath>,
}

/// The same evaluation: two evaluations are equal when they are one (the page compares them on
/// every render, and a timeline may hold millions of ops).
impl PartialEq for Evaluated {
    fn eq(&self, o: &Evaluated) -> bool {
        self.serial == o.serial
    }
}

impl Evaluated {
    fn new(doc: Doc, scenario: Scenario, report: Report) -> Evaluated {
        use std::sync::atomic::{AtomicU64, Ordering};
        static NEXT: AtomicU64 = AtomicU64::new(1);
        Evaluated { serial: NEXT.fetch_add(1, Ordering::Relaxed), doc, scenario, report, critical: OnceCell::new() }
    }

    /// The timeline's critical path and each op's slack (computed on the first call).
    pub fn critical(&self) -> &CriticalPath {
        self.critical.get_or_init(|| self.report.critical_path())
    }

    /// The critical path if a call to [`Evaluated::critical`] has found it.
    pub fn critical_if_found(&self) -> Option<&CriticalPath> {
        self.critical.get()
    }
}

/// Everything the page shows.
#[derive(Clone, Debug, PartialEq)]
pub struct State {
    pub doc: Doc,
    /// The scenario preset the doc came from, until the user edits it (then `None`: custom).
    pub preset: Option<String>,
    /// Problems with the doc; empty when `good` is its evaluation.
    pub errors: Vec<FieldError>,
    /// Text typed into the GPUs-per-node field that is not a count (it has no config key).
    pub per_node_draft: Option<String>,
    /// Text typed into the nodes field that is not a count of at least 1 (the config keeps its
    /// last node count, so GPUs per node stays known and editable).
    pub nodes_draft: Option<String>,
    /// The last valid evaluation (kept, marked stale, while the doc is invalid).
    pub good: Option<Rc<Evaluated>>,
    /// A visible notice (a broken link, an import problem, a confirmation).
    pub notice: Option<Notice>,
    /// The op whose details and formula are shown.
    pub selected_op: Option<usize>,
    pub view: View,
    /// The kind of plan and GPU family the validation page opens filtered on, when the
    /// calculator's "runs like this" asked for them.
    pub runs_filter: Option<(String, &'static str)>,
    /// The scenario this browser keeps for the next visit: the last one the user's own action
    /// made valid. Opening the page or a link never sets it, so nothing but the user's work
    /// replaces what the browser kept.
    pub keep: Option<Doc>,
    /// What a source measured or reported for the scenario on screen (a validation row or a
    /// story opened here), until the scenario changes.
    pub yardstick: Option<Yardstick>,
}

/// A figure a source measured or reported for a scenario, and the model's figure for the same
/// metric, as the page shows them.
#[derive(Clone, Debug, PartialEq)]
pub struct Yardstick {
    /// Who measured or reported it ("Narayanan et al. 2021, run megatron-t1-1.7b").
    pub source: String,
    /// The metric, with its unit ("Iteration time (s)").
    pub metric: String,
    /// "measured" or "reported".
    pub verb: &'static str,
    pub measured: String,
    /// The model's figure for the same metric, if it has one.
    pub predicted: Option<String>,
    /// `(predicted - measured) / measured`.
    pub difference: Option<f64>,
    /// A serving measurement the throughput-latency chart can draw: output tokens/s over the
    /// cluster, or a time per output token.
    pub serving: Option<ServingMark>,
}

/// A measured serving figure on the axes of the throughput-latency chart.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ServingMark {
    OutputTokensPerS(f64),
    TimePerTokenS(f64),
}

/// What the page says when a scenario no longer fits in an address.
pub const TOO_LONG_FOR_A_LINK: &str = "This scenario is too long to travel in a link (many servers refuse addresses over 8,000 characters), so the address no longer holds it: share it with Share, import, export > Scenario (JSON).";

/// A message shown above the results.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Notice {
    pub text: String,
    pub is_error: bool,
}

impl Notice {
    fn error(text: impl Into<String>) -> Option<Notice> {
        Some(Notice { text: text.into(), is_error: true })
    }
    fn info(text: impl Into<String>) -> Option<Notice> {
        Some(Notice { text: text.into(), is_error: false })
    }
}

/// What the user (or the page) did.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    /// Load a scenario preset by id.
    LoadScenario(String),
    /// Use a model preset; the task is rebuilt when the family changes.
    SetModel(String),
    /// Use a system preset; the plan is refitted to its GPUs.
    SetSystem(String),
    /// Put a GPU's datasheet figures into the system.
    SetGpu(String),
    /// Put a second GPU type's datasheet figures into the system (on half the nodes unless
    /// set), or none ("").
    SetSecondGpu(String),
    /// Text typed into a field of the table in `fields.rs`.
    SetField(Field, String),
    /// Which model evaluates the scenario: the default model or MAD-Max paper mode.
    SetMode(Mode),
    SetPerNode(String),
    SetNodes(String),
    SetTaskKind(String),
    SetFlag(&'static str, bool),
    SetStrategy {
        spec: &'static str,
        level: usize,
        strategy: String,
    },
    SetDegree {
        spec: &'static str,
        level: usize,
        text: String,
    },
    AddLevel(&'static str),
    RemoveLevel(&'static str, usize),
    /// Pasted or uploaded MAD-Max JSON.
    Import(String),
    /// A whole document (from a lesson).
    LoadDoc(Doc),
    /// A whole document with what a source measured for it (a validation row, a story).
    LoadMeasured(Doc, Yardstick),
    /// Task config keys of a plan found by the explorer: merged into the task, then shown.
    ApplyPlan(serde_json::Map<String, Value>),
    SelectOp(Option<usize>),
    SetView(View),
    /// The validation page, filtered on one kind of plan (`TP+PP+DP`) and GPU family (`A100`).
    ShowRuns(String, &'static str),
    /// Shows an informational notice.
    Notify(String),
    /// Shows an error notice (something the page could not do).
    Alert(String),
    DismissNotice,
}

impl State {
    /// The state for a doc, evaluated; `preset` names the scenario preset it is, or else the
    /// preset it equals is found (a shared or reloaded preset is still that preset).
    pub fn from_doc(doc: Doc, preset: Option<String>) -> State {
        let preset = preset.or_else(|| preset_of(&doc));
        let mut s = State {
            doc,
            preset,
            errors: Vec::new(),
            per_node_draft: None,
            nodes_draft: None,
            good: None,
            notice: None,
            selected_op: None,
            view: View::Calculator,
            runs_filter: None,
            keep: None,
            yardstick: None,
        };
        s.refresh();
        s
    }

    /// The page's first state, from what the address holds (`link`, `view`) and the scenario
    /// this browser kept (`saved`). Nothing here is kept for the next visit: only the user's
    /// own edits are.
    ///
    /// - A link that opens: its scenario. When it has problems, the results shown (marked
    ///   stale) are those of the kept scenario, the user's last valid one, if there is one.
    /// - No scenario in the address: the kept scenario, else the default preset.
    /// - A broken link: the kept scenario, else the default, with a notice saying so.
    pub fn open(link: Result<Doc, ShareError>, saved: Option<Doc>, view: Option<View>) -> State {
        // The kept scenario, if it is still valid (a newer build may refuse an old one).
        let kept = || saved.clone().map(|d| State::from_doc(d, None)).filter(|s| s.good.is_some());
        let mut s = match link {
            Ok(doc) => {
                let mut s = State::from_doc(doc, None);
                if s.good.is_none() {
                    let fallback = kept().and_then(|k| k.good);
                    s.notice = Notice::error(if fallback.is_some() {
                        "This link's scenario has problems, listed on the left. Until they are fixed, the results are those of your last valid scenario in this browser."
                    } else {
                        "This link's scenario has problems, listed on the left: fix them to see results."
                    });
                    s.good = fallback;
                }
                s
            }
            Err(ShareError::Empty) => kept()
                .map(|mut k| {
                    k.notice =
                        Notice::info("Your last scenario in this browser. Choose a scenario preset to start afresh.");
                    k
                })
                .unwrap_or_else(State::initial),
            Err(e) => {
                let (mut s, fallback) = match kept() {
                    Some(k) => (k, "your last scenario in this browser"),
                    None => (State::initial(), "the default scenario"),
                };
                s.notice = Notice::error(format!("This link could not be opened: {e}. Showing {fallback} instead."));
                s
            }
        };
        s.view = view.unwrap_or(View::Calculator);
        s
    }

    /// What another module of the page carried over with the page (`ui/handover.rs`): the
    /// validation page's filter (of a GPU family the bands know), the notice that was on
    /// screen, in place of any a link would get (the address is the user's own scenario), and
    /// while the scenario has problems, the results that were on screen (`good`'s).
    pub fn carry_over(&mut self, runs: Option<(String, String)>, notice: Option<(String, bool)>, good: Option<Doc>) {
        self.runs_filter = runs.and_then(|(kind, gpu)| {
            crate::accuracy::BANDS
                .iter()
                .find(|b| b.of == crate::accuracy::BandRuns::Training && b.gpu == gpu)
                .map(|b| (kind, b.gpu))
        });
        self.notice = notice.map(|(text, is_error)| Notice { text, is_error });
        if self.stale() {
            if let Some(shown) = good.and_then(|d| State::from_doc(d, None).good) {
                self.good = Some(shown);
            }
        }
    }

    /// The page's first state: the default preset.
    pub fn initial() -> State {
        match presets::all().ok().and_then(|p| Some((p, p.scenario(presets::DEFAULT_SCENARIO)?))) {
            Some((p, s)) => match p.configs(s) {
                Some(c) => {
                    let mut doc = Doc::new(c);
                    default_model_settings(&mut doc, Mode::Default);
                    State::from_doc(doc, Some(s.id.clone()))
                }
                None => State::from_doc(Doc::default(), None),
            },
            None => State::from_doc(Doc::default(), None),
        }
    }

    /// True when the shown results are from an earlier, valid version of the doc.
    pub fn stale(&self) -> bool {
        !self.errors.is_empty() || self.per_node_draft.is_some() || self.nodes_draft.is_some()
    }

    /// The error for a field path, if any.
    pub fn error_for(&self, path: &str) -> Option<&FieldError> {
        self.errors.iter().find(|e| e.field == path)
    }

    /// Which model the doc asks for (a MAD-Max config without `mode` means paper mode).
    pub fn mode(&self) -> Mode {
        doc_mode(&self.doc)
    }

    /// Switches models, keeping everything else.
    fn set_mode(&mut self, mode: Mode) {
        default_model_settings(&mut self.doc, mode);
    }

    /// The model family the doc names, if it names a valid one.
    pub fn family(&self) -> Option<Family> {
        let t = self.doc.text(Config::Model, "type")?;
        Family::ALL.iter().copied().find(|f| f.config_name() == t)
    }

    /// GPUs per node as shown: the typed text, or devices / nodes.
    pub fn per_node(&self) -> Option<u64> {
        let d = self.doc.count(Config::System, "num_devices")?;
        let n = self.doc.count(Config::System, "num_nodes")?;
        (n > 0 && d % n == 0).then(|| d / n)
    }

    /// Re-validates the doc and evaluates it when valid.
    fn refresh(&mut self) {
        match validate(&self.doc.to_raw()) {
            Ok(scenario) => {
                // Should evaluation ever panic, the crash notice offers this scenario.
                ATTEMPT.with(|a| *a.borrow_mut() = Some(self.doc.clone()));
                let report = evaluate(&scenario);
                ATTEMPT.with(|a| *a.borrow_mut() = None);
                self.errors.clear();
                self.good = Some(Rc::new(Evaluated::new(self.doc.clone(), scenario, report)));
                if self.selected_op.is_some_and(|i| i >= self.good.as_ref().map_or(0, |g| g.report.timeline.len())) {
                    self.selected_op = None;
                }
            }
            Err(errors) => self.errors = errors,
        }
        if self.per_node_draft.is_some() {
            self.errors.push(FieldError::new(
                "system.gpus_per_node",
                "must be a whole number of GPUs, at least 1 (it sets the intra-node group)",
            ));
        }
        if self.nodes_draft.is_some() {
            self.errors.push(FieldError::new("system.num_nodes", "must be a whole number of nodes, at least 1"));
        }
    }

    /// Applies an action (the reducer).
    pub fn next(&self, action: Action) -> State {
        let mut s = self.clone();
        s.apply(action);
        if s.doc != self.doc {
            // An edit makes an information notice ("Link copied") stale; errors stay.
            if s.notice.as_ref().is_some_and(|n| !n.is_error) && s.notice == self.notice {
                s.notice = None;
            }
            if s.link().is_none() && self.link().is_some() {
                s.notice = Notice::error(TOO_LONG_FOR_A_LINK);
            }
        }
        s
    }

    /// After a user's change: re-evaluates, and keeps the scenario for the next visit when it
    /// is valid.
    fn changed(&mut self) {
        // A source's figure was for the scenario before this change.
        self.yardstick = None;
        self.refresh();
        if !self.stale() {
            self.keep = Some(self.doc.clone());
        }
    }

    /// The share query of the scenario on screen, with its view; `None` when the scenario is too
    /// long for an address ([`share::MAX_LINK_CHARS`]).
    pub fn link(&self) -> Option<String> {
        let scenario = share::encode(&self.doc);
        (scenario.len() <= share::MAX_LINK_CHARS).then(|| self.view.query(&scenario))
    }

    /// After a user's edit of the scenario (no longer a preset).
    fn edited(&mut self) {
        self.preset = None;
        self.changed();
    }

    fn apply(&mut self, action: Action) {
        let presets = presets::all().ok();
        match action {
            Action::LoadScenario(id) => {
                if let Some((p, sc)) = presets.and_then(|p| Some((p, p.scenario(&id)?))) {
                    if let Some(c) = p.configs(sc) {
                        let current = self.mode();
                        self.doc = Doc::new(c);
                        let mode = mode_for(&self.doc, current);
                        default_model_settings(&mut self.doc, mode);
                        self.clear_drafts();
                        self.selected_op = None;
                        self.preset = Some(id);
                        self.changed();
                    }
                }
            }
            Action::SetModel(id) => {
                let Some(m) = presets.and_then(|p| p.model(&id)) else { return };
                let old_family = self.family();
                self.doc.model = m.config.clone();
                let new_family = self.family();
                if let (Some(f), true) = (new_family, old_family != new_family) {
                    let mut kind = self.doc.text(Config::Task, "type").unwrap_or("pretrain").to_owned();
                    if !plan::offers(f, &kind) {
                        // CNNs are not fine-tuned here, encoder-decoders not served.
                        kind = "pretrain".into();
                    }
                    let total = self.doc.count(Config::System, "num_devices").unwrap_or(8);
                    let mode = mode_for(&self.doc, self.mode());
                    self.doc.task = plan::default_task(f, &kind, total, self.layers());
                    default_model_settings(&mut self.doc, mode);
                }
                self.edited();
            }
            Action::SetSystem(id) => {
                let Some(sys) = presets.and_then(|p| p.system(&id)) else { return };
                self.doc.system = sys.config.clone();
                self.clear_drafts();
                self.refit();
                self.edited();
            }
            Action::SetGpu(id) => {
                let Some(g) = presets.and_then(|p| p.gpu(&id)) else { return };
                for (k, v) in g.figures().into_iter().chain(g.links()) {
                    self.doc.set(Config::System, k, json!(v));
                }
                match g.fp8_flops {
                    Some(f) => self.doc.set(Config::System, "fp8_flops", json!(f)),
                    None => {
                        self.doc.config_mut(Config::System).remove("fp8_flops");
                    }
                }
                self.doc.set(Config::System, "sm_count", json!(g.sm_count));
                self.edited();
            }
            Action::SetSecondGpu(id) => {
                let nodes = self.doc.count(Config::System, "num_nodes").unwrap_or(2);
                let sys = self.doc.config_mut(Config::System);
                if id.is_empty() {
                    sys.retain(|k, _| !k.starts_with("second_"));
                    return self.edited();
                }
                let Some(g) = presets.and_then(|p| p.gpu(&id)) else { return };
                let kept = sys.remove("second_gpu_nodes");
                sys.remove("second_fp8_flops");
                sys.remove("second_sm_count");
                sys.extend(presets::second_gpu_config(g, (nodes / 2).max(1)));
                if let Some(n) = kept {
                    sys.insert("second_gpu_nodes".into(), n);
                }
                self.edited();
            }
            Action::SetMode(mode) => {
                self.set_mode(mode);
                self.changed();
            }
            Action::SetField(field, text) => {
                match parse_field(&field, &text) {
                    Value::Null => {
                        self.doc.config_mut(field.config).remove(field.key);
                    }
                    v => self.doc.set(field.config, field.key, v),
                }
                if field.key == "num_transformer_layers" {
                    self.clamp_frozen_layer();
                }
                self.edited();
            }
            Action::SetPerNode(text) => {
                match parse_count(&text) {
                    Some(per) if per >= 1 => {
                        self.per_node_draft = None;
                        if let Some(nodes) = self.doc.count(Config::System, "num_nodes") {
                            self.doc.set(Config::System, "num_devices", json!(per.saturating_mul(nodes)));
                            self.refit();
                        }
                    }
                    _ => self.per_node_draft = Some(text),
                }
                self.edited();
            }
            Action::SetNodes(text) => {
                match parse_count(&text) {
                    Some(nodes) if nodes >= 1 => {
                        self.nodes_draft = None;
                        let was_single = self.doc.count(Config::System, "num_nodes") == Some(1);
                        match self.per_node() {
                            Some(per) => {
                                self.doc.set(Config::System, "num_nodes", json!(nodes));
                                self.doc.set(Config::System, "num_devices", json!(per.saturating_mul(nodes)));
                            }
                            // GPUs per node unknown (an imported config whose devices do not
                            // split over its nodes): the nodes alone, for validation to judge.
                            None => self.doc.set(Config::System, "num_nodes", json!(nodes)),
                        }
                        // MAD-Max requires ar_perc_intra = 1 on one node; restore a multi-node
                        // calibration when leaving a single node.
                        if nodes == 1 {
                            self.doc.set(Config::System, "ar_perc_intra", json!(1.0));
                        } else if was_single && self.doc.num(Config::System, "ar_perc_intra") == Some(1.0) {
                            self.doc.set(
                                Config::System,
                                "ar_perc_intra",
                                json!(presets::DATACENTER_UTIL.ar_perc_intra),
                            );
                        }
                        self.refit();
                    }
                    _ => self.nodes_draft = Some(text),
                }
                self.edited();
            }
            Action::SetTaskKind(kind) => {
                self.doc.set(Config::Task, "type", json!(kind));
                if kind == "finetune" {
                    if let Some(f) = self.family() {
                        let layers = self.layers();
                        plan::add_freeze_defaults(&mut self.doc.task, f, layers);
                    }
                }
                self.edited();
            }
            Action::SetFlag(key, on) => {
                self.doc.set(Config::Task, key, json!(on));
                self.edited();
            }
            Action::SetStrategy { spec, level, strategy } => {
                self.edit_spec(spec, |s, _| {
                    if let Some(x) = s.get_mut(level) {
                        *x = json!(strategy);
                    }
                });
            }
            Action::SetDegree { spec, level, text } => {
                self.edit_spec(spec, |_, d| {
                    if let Some(x) = d.get_mut(level) {
                        *x = parse_text_or_count(&text);
                    }
                });
            }
            Action::AddLevel(spec) => {
                let used: Vec<String> = self
                    .doc
                    .get(Config::Task, spec)
                    .and_then(Value::as_array)
                    .map(|a| a.iter().filter_map(|v| v.as_str().map(str::to_owned)).collect())
                    .unwrap_or_default();
                let next = plan::strategies(spec, self.mode(), self.family())
                    .iter()
                    .find(|s| !used.iter().any(|u| u == *s))
                    .copied();
                self.edit_spec(spec, |s, d| {
                    s.push(json!(next.unwrap_or("ddp")));
                    d.push(json!(2));
                });
            }
            Action::RemoveLevel(spec, level) => {
                self.edit_spec(spec, |s, d| {
                    if level < s.len() && s.len() > 1 {
                        s.remove(level);
                    }
                    if level < d.len() && d.len() > 1 {
                        d.remove(level);
                    }
                });
            }
            Action::Import(text) => match Doc::import(&text, &self.doc) {
                Ok(doc) => {
                    self.doc = doc;
                    self.clear_drafts();
                    self.edited();
                    self.notice = if self.errors.is_empty() {
                        Notice::info("Imported. The numbers below are for the imported configs.")
                    } else {
                        Notice::error("Imported, but the configs have problems: see the messages under the fields.")
                    };
                }
                Err(e) => self.notice = Notice::error(format!("Could not import: {e}")),
            },
            Action::LoadDoc(doc) => {
                self.doc = doc;
                self.clear_drafts();
                self.selected_op = None;
                self.view = View::Calculator;
                self.edited();
            }
            Action::LoadMeasured(doc, yardstick) => {
                self.apply(Action::LoadDoc(doc));
                self.yardstick = Some(yardstick);
            }
            Action::ApplyPlan(keys) => {
                let before = self.good.as_ref().map(|g| g.report.clone());
                // A null value removes the key: its default applies.
                for (k, v) in keys {
                    if v.is_null() {
                        self.doc.task.remove(&k);
                    } else {
                        self.doc.task.insert(k, v);
                    }
                }
                self.selected_op = None;
                self.view = View::Calculator;
                self.edited();
                // Say what it changed, before and after.
                if let (Some(before), Some(after), false) = (before, self.good.as_ref(), self.stale()) {
                    self.notice = Notice::info(crate::wording::applied(&before, &after.report));
                }
            }
            Action::SelectOp(op) => self.selected_op = op,
            Action::SetView(v) => {
                self.view = v;
                self.runs_filter = None;
            }
            Action::ShowRuns(parallelism, gpu) => {
                self.view = View::Validation;
                self.runs_filter = Some((parallelism, gpu));
            }
            Action::Notify(text) => self.notice = Notice::info(text),
            Action::Alert(text) => self.notice = Notice::error(text),
            Action::DismissNotice => self.notice = None,
        }
    }

    /// Forgets text typed into the hardware shape fields (the system was replaced).
    fn clear_drafts(&mut self) {
        self.per_node_draft = None;
        self.nodes_draft = None;
    }

    /// Layer count of a transformer model (0 otherwise).
    /// The model's transformer layers: an encoder-decoder's two stacks together.
    fn layers(&self) -> u64 {
        let count = |key| self.doc.count(Config::Model, key).unwrap_or(0);
        if self.family() == Some(Family::EncDec) {
            count("num_encoder_layers").saturating_add(count("num_decoder_layers"))
        } else {
            count("num_transformer_layers")
        }
    }

    /// Keeps "first frozen layer" at most the layer count, so that "train all" stays all.
    fn clamp_frozen_layer(&mut self) {
        let layers = self.layers();
        if let Some(mu) = self.doc.count(Config::Task, "min_frozen_layer") {
            if mu > layers {
                self.doc.set(Config::Task, "min_frozen_layer", json!(layers));
            }
        }
    }

    /// Refits the plan to the system's GPUs.
    fn refit(&mut self) {
        let (Some(family), Some(total)) = (self.family(), self.doc.count(Config::System, "num_devices")) else {
            return;
        };
        let per = self.per_node().unwrap_or(total);
        plan::fit_to_cluster(&mut self.doc.task, family, per, total);
    }

    /// Edits a spec's two lists (strategies, degrees), creating them if absent.
    fn edit_spec(&mut self, spec: &str, f: impl FnOnce(&mut Vec<Value>, &mut Vec<Value>)) {
        let list = |v: Option<&Value>| v.and_then(Value::as_array).cloned().unwrap_or_default();
        let mut s = list(self.doc.get(Config::Task, spec));
        let mut d = list(self.doc.get(Config::Task, &format!("{spec}_degree")));
        f(&mut s, &mut d);
        self.doc.set(Config::Task, spec, Value::Array(s));
        self.doc.set(Config::Task, &format!("{spec}_degree"), Value::Array(d));
        if let Some(family) = self.family() {
            plan::sync_batches(&mut self.doc.task, family);
        }
        self.edited();
    }
}

/// The text of a number as Rust reads it: thousands separators taken out when the number is
/// grouped in threes (`2,048`, `1 000 000`, `12_288`, with or without a sign or a decimal part
/// after the last group), and an SI suffix multiplied out as the page writes numbers (`2k` is
/// 2000, `1.5 M` 1500000, `1T` 1e12); any other text as it is (`1,5` stays: it may mean one and
/// a half).
pub fn plain_number(text: &str) -> String {
    let t = text.trim();
    const SUFFIXES: [(char, f64); 4] = [('k', 1e3), ('M', 1e6), ('G', 1e9), ('T', 1e12)];
    if let Some((x, scale)) = SUFFIXES.iter().find_map(|&(c, scale)| {
        let mantissa = t.strip_suffix(c).or_else(|| t.strip_suffix(c.to_ascii_uppercase()))?;
        Some((ungrouped_digits(mantissa.trim_end()).parse::<f64>().ok()?, scale))
    }) {
        return format!("{}", x * scale);
    }
    ungrouped_digits(t)
}

fn ungrouped_digits(t: &str) -> String {
    for sep in [',', ' ', '_', '\u{a0}', '\u{202f}'] {
        let unsigned = t.strip_prefix('-').unwrap_or(t);
        let int = unsigned.split('.').next().unwrap_or("");
        let groups: Vec<&str> = int.split(sep).collect();
        let grouped = groups.len() > 1
            && (1..=3).contains(&groups[0].len())
            && groups[1..].iter().all(|g| g.len() == 3)
            && groups.iter().all(|g| g.chars().all(|c| c.is_ascii_digit()));
        if grouped {
            return t.replace(sep, "");
        }
    }
    t.to_owned()
}

/// A whole number in the text (`2048`, `2,048`, `2048.0`, `2e3`), if any.
fn parse_count(text: &str) -> Option<u64> {
    let t = plain_number(text);
    t.parse::<u64>()
        .ok()
        .or_else(|| t.parse::<f64>().ok().filter(|x| x.fract() == 0.0 && *x >= 0.0 && *x < 9e15).map(|x| x as u64))
}

/// A count as a JSON integer; any other number as that number (`-5`, `80.5`: validation then
/// says what is wrong with it); else the text itself (validation names the field).
fn parse_text_or_count(text: &str) -> Value {
    if let Some(n) = parse_count(text) {
        return json!(n);
    }
    let t = plain_number(text);
    match (t.parse::<i64>(), t.parse::<f64>()) {
        (Ok(i), _) => json!(i),
        (_, Ok(x)) if x.is_finite() => json!(x),
        _ => json!(text.trim()),
    }
}

/// The config value for text typed into a field.
pub fn parse_field(field: &Field, text: &str) -> Value {
    let number = |text: &str| match plain_number(text).parse::<f64>() {
        Ok(x) if x.is_finite() => json!(x * field.scale),
        _ => json!(text.trim()),
    };
    match field.kind {
        Kind::Count => parse_text_or_count(text),
        Kind::Number => number(text),
        // Empty: the key goes, and the default applies.
        Kind::OptionalCount | Kind::OptionalNumber | Kind::OptionalText | Kind::Flag | Kind::Choice(_)
            if text.trim().is_empty() =>
        {
            Value::Null
        }
        Kind::OptionalText => json!(text.trim()),
        Kind::OptionalCount => parse_text_or_count(text),
        Kind::OptionalNumber => number(text),
        Kind::Flag => json!(text == "true"),
        // Choices that are numbers (the ZeRO stage) are stored as numbers.
        Kind::Choice(_) => text.parse::<u64>().map_or_else(|_| json!(text), |n| json!(n)),
    }
}

/// A field's value as shown: the config value over the field's scale, or the text kept.
pub fn show_field(doc: &Doc, field: &Field) -> String {
    match doc.get(field.config, field.key) {
        Some(Value::Number(n)) => match (n.as_u64(), n.as_f64()) {
            (Some(i), _) if field.scale == 1.0 => i.to_string(),
            (_, Some(x)) => {
                let shown = x / field.scale;
                // Undo scaling noise (1555e9 / 1e9 is exact; 0.705 stays 0.705).
                let rounded = (shown * 1e9).round() / 1e9;
                format!("{rounded}")
            }
            _ => n.to_string(),
        },
        Some(Value::String(s)) => s.clone(),
        Some(Value::Bool(b)) => b.to_string(),
        Some(other) => other.to_string(),
        None => String::new(),
    }
}

thread_local! {
    /// The scenario being evaluated right now (cleared when evaluation returns).
    static ATTEMPT: std::cell::RefCell<Option<Doc>> = const { std::cell::RefCell::new(None) };
}

/// The scenario whose evaluation was under way, if one was interrupted (by a panic).
pub fn interrupted_scenario() -> Option<Doc> {
    ATTEMPT.with(|a| a.borrow().clone())
}

/// Which model a doc asks for (`task.mode`; absent: MAD-Max paper mode).
/// The mode a newly loaded model is shown in, `current` being the one chosen: a CNN's or an
/// encoder-decoder's is the default model (MAD-Max has neither; paper mode would only refuse
/// it).
fn mode_for(doc: &Doc, current: Mode) -> Mode {
    let family = doc.text(Config::Model, "type").and_then(|t| Family::ALL.into_iter().find(|f| f.config_name() == t));
    if family.is_some_and(Family::default_model_only) {
        Mode::Default
    } else {
        current
    }
}

pub fn doc_mode(doc: &Doc) -> Mode {
    match doc.text(Config::Task, "mode") {
        Some("default") => Mode::Default,
        // Without a mode key, as validation reads it: paper mode, but for a CNN or an
        // encoder-decoder (MAD-Max has neither).
        None => mode_for(doc, Mode::Reference),
        _ => Mode::Reference,
    }
}

/// Writes the mode into the doc. For the default model, a transformer training task without a
/// recomputation setting gets full recomputation: MAD-Max's tasks put a whole batch of long
/// sequences on each GPU, whose activations would not fit without it.
/// The scenario preset `doc` is, as loading it in either mode (and switching mode after)
/// makes it; `None` when it is none.
fn preset_of(doc: &Doc) -> Option<String> {
    let p = presets::all().ok()?;
    let modes: [&[Mode]; 3] = [&[Mode::Default], &[Mode::Reference], &[Mode::Default, Mode::Reference]];
    p.scenarios.iter().find_map(|sc| {
        let configs = p.configs(sc)?;
        modes.iter().find_map(|steps| {
            let mut d = Doc::new(configs.clone());
            for &mode in *steps {
                default_model_settings(&mut d, mode);
            }
            (d == *doc).then(|| sc.id.clone())
        })
    })
}

pub fn default_model_settings(doc: &mut Doc, mode: Mode) {
    doc.set(Config::Task, "mode", json!(mode.config_name()));
    let transformer = matches!(doc.text(Config::Model, "type"), Some("LLM" | "LLM_MoE" | "ViT"));
    if mode == Mode::Default && transformer && doc.get(Config::Task, "recompute").is_none() {
        doc.set(Config::Task, "recompute", json!("full"));
    }
}

/// The task kind of a scenario, as its config names it.
pub fn task_kind_name(s: &Scenario) -> &'static str {
    match s.task().kind {
        TaskKind::Pretrain => "pre-training",
        TaskKind::Finetune(_) => "fine-tuning",
        TaskKind::Inference => "inference",
    }
}

#[cfg(test)]
mod tests {
    use super::super::fields;
    use super::*;
    use crate::share;

    fn field(key: &str) -> Field {
        fields::system_fields().into_iter().find(|f| f.key == key).expect("field")
    }

    /// The MAD-Max paper's LLaMA2-70B on 2,048 A100s, opened as the page opens a preset.
    fn paper_llama() -> State {
        State::initial().next(Action::LoadScenario(presets::PAPER_LLAMA2_70B.into()))
    }

    /// The LLM form's transformer-layers field.
    fn layers_field() -> Field {
        fields::model_fields(Family::Llm).into_iter().find(|f| f.key == "num_transformer_layers").expect("layers field")
    }

    #[test]
    fn a_measured_figure_stays_until_the_scenario_changes() {
        let s = State::initial();
        let y = Yardstick {
            source: "A source, run x".into(),
            metric: "Iteration time (s)".into(),
            verb: "measured",
            measured: "1.000".into(),
            predicted: Some("0.9000".into()),
            difference: Some(-0.1),
            serving: None,
        };
        let opened = s.next(Action::LoadMeasured(s.doc.clone(), y.clone()));
        assert_eq!((opened.view, opened.yardstick.as_ref()), (View::Calculator, Some(&y)));
        // Looking elsewhere and coming back keeps it; an edit, a mode switch or another load
        // ends it.
        let back = opened.next(Action::SetView(View::Validation)).next(Action::SetView(View::Calculator));
        assert_eq!(back.yardstick.as_ref(), Some(&y));
        assert_eq!(opened.next(Action::SetField(layers_field(), "80".into())).yardstick, None);
        assert_eq!(opened.next(Action::SetMode(Mode::Reference)).yardstick, None);
        assert_eq!(opened.next(Action::LoadDoc(s.doc.clone())).yardstick, None);
    }

    #[test]
    fn the_page_opens_on_a_computed_preset() {
        let s = State::initial();
        assert_eq!(s.preset.as_deref(), Some(presets::DEFAULT_SCENARIO));
        assert!(s.errors.is_empty() && !s.stale());
        let good = s.good.as_ref().expect("evaluated");
        // The default model, on a plan that fits, of Llama 2 70B as published: 69 B parameters
        // (Touvron et al. 2023), not the reference config's 50.9 B.
        assert_eq!(s.mode(), Mode::Default);
        assert_eq!(good.report.mode, Mode::Default);
        assert!(good.report.memory.fits() && good.report.limits.is_empty(), "{:?}", good.report.limits);
        assert!((68e9..70e9).contains(&good.report.model.params), "{}", good.report.model.params);
        // MAD-Max paper mode runs it too, and back again gives the same numbers.
        let paper = s.next(Action::SetMode(Mode::Reference));
        assert!(paper.errors.is_empty() && !paper.stale(), "{:?}", paper.errors);
        assert_eq!(paper.good.as_ref().map(|g| g.report.mode), Some(Mode::Reference));
        let back = paper.next(Action::SetMode(Mode::Default));
        assert_eq!(back.good.as_ref().map(|g| g.report.iteration_s), Some(good.report.iteration_s));
        // The paper's own LLaMA2-70B run in paper mode gives the golden case's number.
        let golden = paper_llama().next(Action::SetMode(Mode::Reference));
        let r = &golden.good.as_ref().expect("evaluated").report;
        assert_eq!(r.mode, Mode::Reference);
        assert!((r.iteration_s - 7.275722345349711).abs() < 1e-12);
    }

    #[test]
    fn invalid_input_keeps_the_last_results_marked_stale() {
        let s = paper_llama();
        let before = s.good.clone();
        let s = s.next(Action::SetDegree { spec: "transformer_parallel", level: 0, text: "96".into() });
        assert!(s.stale());
        let e = s.error_for("task.transformer_parallel_degree").expect("named error");
        assert!(e.message.contains("96") && e.message.contains("2048"), "{}", e.message);
        assert_eq!(s.good, before, "results kept");
        let s = s.next(Action::SetField(field("mem_bw"), "fast".into()));
        assert!(s.error_for("system.mem_bw").is_some());
        // Fixing both brings fresh results.
        let s = s.next(Action::SetDegree { spec: "transformer_parallel", level: 0, text: "2048".into() });
        let s = s.next(Action::SetField(field("mem_bw"), "2039".into()));
        assert!(!s.stale(), "{:?}", s.errors);
        assert_eq!(s.doc.num(Config::System, "mem_bw"), Some(2039e9));
        assert_ne!(s.good, before);
        assert_eq!(s.preset, None, "edited: a custom scenario");
    }

    #[test]
    fn the_view_travels_in_the_address() {
        for (i, v) in View::ALL.into_iter().enumerate() {
            let q = v.query("v=1&s=abc");
            assert_eq!(View::of_query(&format!("?{q}")), v, "{q}");
            assert!(q.ends_with("v=1&s=abc"));
            assert_eq!(v.index(), i, "{v:?}: the scroll positions are kept by index");
        }
        assert_eq!(View::from_query("?view=nonsense&v=1"), None);
        assert_eq!(View::of_query("?view=nonsense&v=1"), View::Calculator);
        assert_eq!(View::from_query(""), None);
    }

    #[test]
    fn a_second_gpu_type_goes_on_half_the_nodes_and_the_slower_type_paces() {
        use crate::engine::report::Limit;
        let s = paper_llama().next(Action::SetMode(Mode::Default)).next(Action::SetGpu("a100_80".into()));
        let alone = s.good.as_ref().expect("good").report.iteration_s;
        let s = s.next(Action::SetSecondGpu("h100_sxm".into()));
        assert!(!s.stale(), "{:?}", s.errors);
        let nodes = s.doc.count(Config::System, "num_nodes").expect("nodes");
        assert_eq!(s.doc.count(Config::System, "second_gpu_nodes"), Some(nodes / 2));
        assert_eq!(s.doc.text(Config::System, "second_gpu_name"), Some("NVIDIA H100 SXM 80GB"));
        let r = &s.good.as_ref().expect("good").report;
        // The A100s pace the step: the same time as a cluster of A100s alone.
        assert_eq!(r.iteration_s, alone);
        assert!(r.limits.iter().any(|l| matches!(l, Limit::PacedBy { second_paces: false, .. })), "{:?}", r.limits);
        // Paper mode has one GPU type: the field says so and the last results stay.
        let t = s.clone().next(Action::SetMode(Mode::Reference));
        assert!(t.stale() && t.error_for("system.second_gpu_nodes").is_some(), "{:?}", t.errors);
        // None removes every key of the second type.
        let s = s.next(Action::SetSecondGpu(String::new()));
        assert!(!s.stale() && s.doc.system.keys().all(|k| !k.starts_with("second_")));
        assert_eq!(s.good.as_ref().expect("good").report.iteration_s, alone);
    }

    #[test]
    fn changing_gpu_and_nodes_keeps_a_valid_plan() {
        let s = paper_llama().next(Action::SetMode(Mode::Reference)).next(Action::SetGpu("h100_sxm".into()));
        assert!(!s.stale(), "{:?}", s.errors);
        let before = s.good.as_ref().expect("good").report.throughput_samples_per_s;
        let s = s.next(Action::SetNodes("16".into()));
        assert!(!s.stale(), "{:?}", s.errors);
        assert_eq!(s.doc.count(Config::System, "num_devices"), Some(128));
        let g = s.good.as_ref().expect("good");
        assert_eq!(g.scenario.system().num_devices, 128);
        // FSDP with a fixed local batch: 16x fewer GPUs, 16x fewer samples per iteration
        // (MAD-Max's FSDP step time does not depend on the GPU count).
        assert!((before / g.report.throughput_samples_per_s - 16.0).abs() < 1e-9);
        // One node: MAD-Max's single-node rule is kept.
        let s = s.next(Action::SetNodes("1".into()));
        assert!(!s.stale(), "{:?}", s.errors);
        let s = s.next(Action::SetPerNode("x".into()));
        assert!(s.stale() && s.error_for("system.gpus_per_node").is_some());
        let s = s.next(Action::SetPerNode("4".into()));
        assert!(!s.stale(), "{:?}", s.errors);
        assert_eq!(s.doc.count(Config::System, "num_devices"), Some(4));
    }

    #[test]
    fn runs_like_this_open_the_validation_page_filtered_until_another_view_is_chosen() {
        let s = State::initial();
        // The page opens on the default model with a band for its plan.
        let Some(crate::accuracy::Expectation::Like { band, .. }) =
            s.good.as_ref().and_then(|g| crate::accuracy::expectation(&g.scenario, &g.report))
        else {
            panic!("the first scenario has no band");
        };
        let s = s.next(Action::ShowRuns(band.parallelism.to_owned(), band.gpu));
        assert_eq!((s.view, s.runs_filter.clone()), (View::Validation, Some((band.parallelism.to_owned(), band.gpu))));
        let s = s.next(Action::SetView(View::Calculator)).next(Action::SetView(View::Validation));
        assert_eq!((s.view, s.runs_filter), (View::Validation, None));
    }

    #[test]
    fn switching_families_builds_a_task_that_validates() {
        let p = presets::all().expect("presets");
        let mut s = State::initial();
        for m in &p.models {
            s = s.next(Action::SetModel(m.id.clone()));
            assert!(s.errors.is_empty(), "{}: {:?}", m.id, s.errors);
        }
        for kind in ["inference", "finetune", "pretrain"] {
            // The form offers no fine-tuning for a CNN, no serving for an encoder-decoder.
            if s.family().is_some_and(|f| !plan::offers(f, kind)) {
                continue;
            }
            s = s.next(Action::SetTaskKind(kind.into()));
            assert!(s.errors.is_empty(), "{kind}: {:?}", s.errors);
        }
        // Fine-tuning an LLM, then choosing a CNN: it pre-trains, in the default model.
        s = s.next(Action::SetModel("gpt3_175b".into())).next(Action::SetMode(Mode::Reference));
        s = s.next(Action::SetTaskKind("finetune".into())).next(Action::SetModel("resnet50".into()));
        assert!(s.errors.is_empty(), "{:?}", s.errors);
        assert_eq!((s.doc.text(Config::Task, "type"), s.mode()), (Some("pretrain"), Mode::Default));
    }

    #[test]
    fn every_scenario_and_system_preset_loads() {
        let p = presets::all().expect("presets");
        let mut s = State::initial().next(Action::SetMode(Mode::Reference));
        for sc in &p.scenarios {
            s = s.next(Action::LoadScenario(sc.id.clone()));
            assert!(!s.stale(), "{}: {:?}", sc.id, s.errors);
            if s.family().is_some_and(Family::default_model_only) {
                // MAD-Max has no CNNs or encoder-decoders: such a preset opens in the default
                // model, and paper mode, chosen again, refuses it and says why.
                assert_eq!(s.mode(), Mode::Default, "{}", sc.id);
                s = s.next(Action::SetMode(Mode::Reference));
                assert_eq!(s.errors.first().map(|e| e.field.as_str()), Some("task.mode"));
                continue;
            }
            assert_eq!(s.mode(), Mode::Reference, "loading a preset keeps the mode");
        }
        // The default model may refuse a MAD-Max plan it cannot run (tensor parallelism that
        // does not divide the heads), always naming the task field.
        let mut d = State::initial();
        let mut refused = 0;
        for sc in &p.scenarios {
            d = d.next(Action::LoadScenario(sc.id.clone()));
            assert_eq!(d.mode(), Mode::Default);
            if d.stale() {
                refused += 1;
                assert!(d.errors.iter().all(|e| e.field.starts_with("task.")), "{}: {:?}", sc.id, d.errors);
            }
        }
        assert!(refused * 10 < p.scenarios.len(), "{refused} presets refused");
        s = s.next(Action::LoadScenario(presets::DEFAULT_SCENARIO.into()));
        for sys in &p.systems {
            let t = s.next(Action::SetSystem(sys.id.clone()));
            assert!(!t.stale(), "{}: {:?}", sys.id, t.errors);
        }
    }

    #[test]
    fn levels_can_be_added_and_removed() {
        let s = paper_llama().next(Action::AddLevel("transformer_parallel"));
        assert_eq!(s.doc.get(Config::Task, "transformer_parallel"), Some(&json!(["fsdp", "ddp"])));
        assert!(s.error_for("task.transformer_parallel_degree").is_some());
        let s = s.next(Action::SetDegree { spec: "transformer_parallel", level: 0, text: "8".into() });
        let s = s.next(Action::SetDegree { spec: "transformer_parallel", level: 1, text: "256".into() });
        assert!(!s.stale(), "{:?}", s.errors);
        let s = s.next(Action::RemoveLevel("transformer_parallel", 1));
        assert_eq!(s.doc.get(Config::Task, "transformer_parallel"), Some(&json!(["fsdp"])));
    }

    #[test]
    fn links_restore_exactly_and_broken_links_fall_back_with_a_notice() {
        let s = State::initial().next(Action::SetNodes("16".into()));
        let link = share::decode(&share::encode(&s.doc));
        let restored = State::open(link, None, None);
        assert_eq!(restored.doc, s.doc);
        assert_eq!(restored.good.as_ref().map(|g| g.report.iteration_s), s.good.as_ref().map(|g| g.report.iteration_s));

        let broken = State::open(share::decode("v=1&s=garbage!"), None, None);
        assert!(broken.notice.as_ref().is_some_and(|n| n.is_error && n.text.contains("default")));
        assert_eq!(broken.doc, State::initial().doc);
        let saved = State::open(share::decode("v=7&s=x"), Some(s.doc.clone()), Some(View::Explorer));
        assert_eq!((&saved.doc, saved.view), (&s.doc, View::Explorer));
        assert!(saved.notice.as_ref().is_some_and(|n| n.text.contains("last scenario")));
    }

    /// A scenario with `layers: 0`: valid JSON, invalid scenario.
    fn invalid_doc() -> Doc {
        let mut d = State::initial().doc;
        d.set(Config::Model, "num_transformer_layers", json!(0));
        d
    }

    #[test]
    fn only_the_users_own_valid_edits_are_kept_for_the_next_visit() {
        // The user's work: a valid edit is kept, an invalid one is not.
        let user = State::initial().next(Action::SetNodes("16".into()));
        let kept = user.keep.clone().expect("a valid edit is kept");
        assert_eq!(kept, user.doc);
        let broken = user.next(Action::SetField(field("mem_bw"), "fast".into()));
        assert_eq!(broken.keep.as_ref(), Some(&kept), "an invalid edit keeps what was kept");
        let imported = user.next(Action::Import(share_json(&invalid_doc())));
        assert!(imported.stale());
        assert_eq!(imported.keep.as_ref(), Some(&kept), "an invalid import keeps what was kept");
        for a in [Action::SetView(View::Explorer), Action::SelectOp(Some(0)), Action::DismissNotice] {
            assert_eq!(user.next(a).keep.as_ref(), Some(&kept));
        }
        let kept_iteration = user.good.as_ref().map(|g| g.report.iteration_s);

        // Opening the page never keeps anything, whatever the address holds...
        let links = [
            share::decode(""),
            share::decode("?view=explorer"),
            share::decode("v=1&s=garbage!"),
            share::decode(&share::encode(&State::initial().doc)),
            share::decode(&share::encode(&invalid_doc())),
        ];
        for link in links {
            for saved in [None, Some(kept.clone())] {
                assert_eq!(State::open(link.clone(), saved, None).keep, None, "{link:?}");
            }
        }
        // ... the bare address (or a view alone) reopens the kept scenario ...
        for query in ["", "?view=explorer"] {
            let s = State::open(share::decode(query), Some(kept.clone()), View::from_query(query));
            assert_eq!(s.doc, kept, "{query}");
            assert_eq!(s.good.as_ref().map(|g| g.report.iteration_s), kept_iteration);
        }
        assert_eq!(State::open(share::decode(""), None, None).doc, State::initial().doc);
        // ... and a link to an invalid scenario shows its problems with the kept scenario's
        // results (its last valid one), never the default's.
        let s = State::open(share::decode(&share::encode(&invalid_doc())), Some(kept.clone()), None);
        assert_eq!(s.doc, invalid_doc());
        assert!(s.stale() && s.error_for("model.num_transformer_layers").is_some(), "{:?}", s.errors);
        assert_eq!(s.good.as_ref().map(|g| g.report.iteration_s), kept_iteration);
        assert!(s.notice.as_ref().is_some_and(|n| n.is_error && n.text.contains("last valid scenario")));
        let s = State::open(share::decode(&share::encode(&invalid_doc())), None, None);
        assert!(s.good.is_none() && s.stale(), "no results rather than the default's");
        // Fixing it makes it the user's: kept.
        let fixed = s.next(Action::SetField(model_field("num_transformer_layers"), "80".into()));
        assert!(!fixed.stale(), "{:?}", fixed.errors);
        assert_eq!(fixed.keep.as_ref(), Some(&fixed.doc));
    }

    #[test]
    fn a_page_handed_over_keeps_its_notice_filter_and_results_not_a_links() {
        // The page's module hands the page over on the user's invalid edit of the opening
        // scenario: the views module opens it from the address as a link, and nothing was kept
        // in this browser, so it has no results and a link's notice...
        let shown = State::initial();
        let mut s = State::open(share::decode(&share::encode(&invalid_doc())), None, Some(View::Explorer));
        assert!(s.notice.as_ref().is_some_and(|n| n.text.contains("link")) && s.good.is_none());
        // ... then takes what was carried: the notice on screen (here none), not a link's, and
        // the results that were on screen.
        let band = &crate::accuracy::BANDS[0];
        s.carry_over(Some((band.parallelism.to_owned(), band.gpu.to_owned())), None, Some(shown.doc.clone()));
        assert_eq!((s.notice.clone(), s.runs_filter.clone()), (None, Some((band.parallelism.to_owned(), band.gpu))));
        assert!(s.stale() && s.error_for("model.num_transformer_layers").is_some(), "the problem stays");
        let iteration = |s: &State| s.good.as_ref().map(|g| g.report.iteration_s);
        assert_eq!(iteration(&s), iteration(&shown), "the last valid results stay");
        // A valid scenario's own results are never replaced.
        let mut valid = State::open(Ok(shown.doc.clone()), None, None);
        valid.carry_over(None, None, Some(invalid_doc()));
        assert_eq!(iteration(&valid), iteration(&shown));
        s.carry_over(
            Some(("TP".into(), "a GPU the bands do not know".into())),
            Some(("Link copied".into(), false)),
            None,
        );
        assert_eq!(s.runs_filter, None);
        assert_eq!(s.notice, Some(Notice { text: "Link copied".into(), is_error: false }));
    }

    fn share_json(d: &Doc) -> String {
        d.to_json().to_string()
    }

    fn model_field(key: &str) -> Field {
        let family = State::initial().family().expect("family");
        fields::model_fields(family).into_iter().find(|f| f.key == key).expect("field")
    }

    #[test]
    fn nodes_and_gpus_per_node_of_zero_are_errors_not_crashes() {
        let s = State::initial();
        for text in ["0", "-1", "", "x", "1e30", "0.5"] {
            let t = s.next(Action::SetNodes(text.into()));
            assert!(t.stale(), "{text}");
            // What the page reads while it draws the form.
            let _ = (t.per_node(), t.family(), t.mode());
            // Further edits of the hardware still work.
            let t = t.next(Action::SetPerNode("4".into())).next(Action::SetNodes("2".into()));
            assert!(!t.stale(), "{text}: {:?}", t.errors);
            assert_eq!(t.doc.count(Config::System, "num_devices"), Some(8));
        }
        let t = s.next(Action::SetPerNode("0".into()));
        assert!(t.stale() && t.error_for("system.gpus_per_node").is_some());
    }

    #[test]
    fn a_scenario_too_long_for_an_address_says_so_and_leaves_the_address() {
        let s = State::initial();
        assert!(s.link().is_some_and(|l| l.len() < share::MAX_LINK_CHARS));
        let mut doc = s.doc.clone();
        doc.set(Config::Model, "name", json!("n".repeat(share::MAX_LINK_CHARS)));
        let long = s.next(Action::Import(share_json(&doc)));
        assert!(!long.stale(), "{:?}", long.errors);
        assert_eq!(long.link(), None);
        assert!(long.notice.as_ref().is_some_and(|n| n.is_error && n.text.contains("too long to travel in a link")));
    }
    #[test]
    fn imports_replace_configs_or_explain() {
        let case = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/data/reference/cases/dlrm__dlrm_a__zionex_128__dlrm_train.json"
        ))
        .expect("case file");
        let s = State::initial().next(Action::Import(case));
        assert!(!s.stale(), "{:?}", s.errors);
        assert_eq!(s.family(), Some(Family::Dlrm));
        let bad = s.next(Action::Import("{oops".into()));
        assert!(bad.notice.as_ref().is_some_and(|n| n.is_error));
        assert_eq!(bad.doc, s.doc, "a failed import changes nothing");
        // A CNN config without a mode key: the default model evaluates it, and the page says so.
        let cnn = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/cnn/resnet50_a100_8.json"))
            .expect("CNN file");
        let c = s.next(Action::Import(cnn));
        assert!(!c.stale(), "{:?}", c.errors);
        assert_eq!((c.family(), c.mode(), c.doc.get(Config::Task, "mode")), (Some(Family::Cnn), Mode::Default, None));
    }

    #[test]
    fn fields_show_in_their_units_and_parse_back() {
        let s = paper_llama();
        assert_eq!(show_field(&s.doc, &field("mem_bw")), "1555");
        assert_eq!(show_field(&s.doc, &field("ibroce_bw")), "100");
        assert_eq!(show_field(&s.doc, &field("flops_util")), "0.705");
        assert_eq!(parse_field(&field("ibroce_bw"), "400"), json!(100e9));
        assert_eq!(parse_field(&field("mem_bw"), " 12a "), json!("12a"));
    }

    #[test]
    fn typed_numbers_reach_validation_as_numbers_so_it_can_say_what_is_wrong() {
        let layers = layers_field();
        // Thousands separators in threes are read; "1,5" is not a grouped number.
        for text in ["2,048", "2 048", "2_048", " 2048 ", "2048.0"] {
            assert_eq!(parse_field(&layers, text), json!(2048), "{text}");
        }
        assert_eq!(parse_field(&layers, "1,5"), json!("1,5"));
        // SI suffixes as the page writes numbers: 2k is 2,000 (not 2,048).
        for (text, n) in [("2k", 2000), ("2K", 2000), ("1.5 M", 1_500_000), ("1T", 1_000_000_000_000u64)] {
            assert_eq!(parse_field(&layers, text), json!(n), "{text}");
        }
        assert_eq!(parse_field(&layers, "1e12"), json!(1_000_000_000_000u64));
        assert_eq!(parse_field(&layers, "k"), json!("k"));
        assert_eq!(parse_field(&layers, "2kB"), json!("2kB"));
        assert_eq!(parse_field(&field("mem_bw"), "1,555"), json!(1555e9));
        // Negative and fractional counts stay numbers: validation says what is wrong.
        assert_eq!(parse_field(&layers, "-5"), json!(-5));
        assert_eq!(parse_field(&layers, "80.5"), json!(80.5));
        let s = State::initial();
        let said = |text: &str| {
            let t = s.clone().next(Action::SetField(layers, text.into()));
            t.error_for("model.num_transformer_layers").map(|e| e.message.clone()).unwrap_or_default()
        };
        assert!(said("-5").contains("at least 1, got -5"), "{}", said("-5"));
        assert!(said("80.5").contains("whole number, got a number (80.5)"), "{}", said("80.5"));
        assert!(said("").contains("is empty"), "{}", said(""));
        assert!(said("2,048").is_empty(), "{}", said("2,048"));
    }

    #[test]
    fn a_shared_or_reloaded_preset_is_still_that_preset() {
        let s = State::initial();
        assert!(s.preset.is_some());
        // Opened from its own link, or kept by the browser: the same preset, not "custom".
        let linked = State::open(Ok(s.doc.clone()), None, None);
        assert_eq!(linked.preset, s.preset);
        let kept = State::open(Err(ShareError::Empty), Some(s.doc.clone()), None);
        assert_eq!(kept.preset, s.preset);
        // In paper mode too.
        let paper = s.clone().next(Action::SetMode(Mode::Reference));
        let id = paper.preset.clone().or(s.preset.clone());
        let reloaded = State::open(Ok(paper.doc.clone()), None, None);
        assert!(reloaded.preset.is_some() && reloaded.preset == id, "{:?}", reloaded.preset);
        // An edited scenario is custom.
        let mut doc = s.doc.clone();
        doc.set(Config::Task, "micro_batch", json!(1));
        assert_eq!(State::open(Ok(doc), None, None).preset, None);
    }

    #[test]
    fn an_edit_clears_an_information_notice_but_not_an_error() {
        let layers = layers_field();
        let s = State::initial().next(Action::Notify("Link copied.".into()));
        assert!(s.notice.is_some());
        // Choosing a view changes nothing in the scenario: the notice stays.
        assert!(s.next(Action::SetView(View::Explorer)).notice.is_some());
        // An edit: the copied link is no longer this scenario's.
        assert_eq!(s.next(Action::SetField(layers, "64".into())).notice, None);
        let alert = State::initial().next(Action::Alert("Could not read the file.".into()));
        assert!(alert.next(Action::SetField(layers, "64".into())).notice.is_some_and(|n| n.is_error));
    }
}
