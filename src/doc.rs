//! The scenario document: the three MAD-Max configs (model, system, task) as JSON objects, the
//! form the page edits, imports, exports and shares. Values are kept as typed or given (a
//! half-typed number stays text), so validation can point at the field. Knows nothing of the
//! DOM or the URL.

use crate::engine::{RawFile, RawScenario};
use serde_json::{json, Map, Value};

/// Which of the three configs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Config {
    Model,
    System,
    Task,
}

impl Config {
    pub const ALL: [Config; 3] = [Config::Model, Config::System, Config::Task];

    /// The key of this config in a scenario file, and the first part of a field path.
    pub fn key(self) -> &'static str {
        match self {
            Config::Model => "model",
            Config::System => "system",
            Config::Task => "task",
        }
    }
}

/// A scenario as three MAD-Max config objects.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Doc {
    pub model: Map<String, Value>,
    pub system: Map<String, Value>,
    pub task: Map<String, Value>,
}

impl Doc {
    pub fn new([model, system, task]: [Map<String, Value>; 3]) -> Doc {
        Doc { model, system, task }
    }

    pub fn config(&self, c: Config) -> &Map<String, Value> {
        match c {
            Config::Model => &self.model,
            Config::System => &self.system,
            Config::Task => &self.task,
        }
    }

    pub fn config_mut(&mut self, c: Config) -> &mut Map<String, Value> {
        match c {
            Config::Model => &mut self.model,
            Config::System => &mut self.system,
            Config::Task => &mut self.task,
        }
    }

    /// A field's value, if present.
    pub fn get(&self, c: Config, key: &str) -> Option<&Value> {
        self.config(c).get(key)
    }

    /// A numeric field as f64 (None when absent or not a number).
    pub fn num(&self, c: Config, key: &str) -> Option<f64> {
        self.get(c, key).and_then(Value::as_f64)
    }

    /// A whole-number field (None when absent, fractional or not a number).
    pub fn count(&self, c: Config, key: &str) -> Option<u64> {
        let v = self.get(c, key)?;
        v.as_u64().or_else(|| v.as_f64().filter(|x| x.fract() == 0.0 && *x >= 0.0 && *x < 9e15).map(|x| x as u64))
    }

    /// A text field.
    pub fn text(&self, c: Config, key: &str) -> Option<&str> {
        self.get(c, key).and_then(Value::as_str)
    }

    pub fn set(&mut self, c: Config, key: &str, v: Value) {
        self.config_mut(c).insert(key.to_owned(), v);
    }

    /// The raw configs the engine validates.
    pub fn to_raw(&self) -> RawScenario {
        // RawFile's fields are all optional and typed as "any value", so this cannot fail;
        // the fallback keeps it total anyway.
        serde_json::from_value::<RawFile>(self.to_json()).ok().and_then(|f| f.into_scenario().ok()).unwrap_or_default()
    }

    /// `{"model": {...}, "system": {...}, "task": {...}}`, the CLI's input format.
    pub fn to_json(&self) -> Value {
        json!({ "model": self.model, "system": self.system, "task": self.task })
    }

    /// Reads MAD-Max JSON: a scenario file, a golden case file (configs under `inputs`), or a
    /// single config, which replaces the matching part of `base` (a model config has a model
    /// `type`, a system config `num_devices`, a task config parallel specs).
    pub fn import(text: &str, base: &Doc) -> Result<Doc, String> {
        let v = crate::input::parse_json(text)?;
        let Value::Object(mut obj) = v else {
            return Err("expected a JSON object: a MAD-Max config or {\"model\", \"system\", \"task\"}".to_owned());
        };
        if let Some(Value::Object(inputs)) = obj.remove("inputs") {
            if ["model", "system", "task"].iter().any(|k| obj.contains_key(*k)) {
                return Err(crate::engine::raw::BOTH_INPUTS.to_owned());
            }
            obj = inputs;
        }
        let part = |obj: &Map<String, Value>, key: &str| match obj.get(key) {
            Some(Value::Object(m)) => Some(m.clone()),
            _ => None,
        };
        let (m, s, t) = (part(&obj, "model"), part(&obj, "system"), part(&obj, "task"));
        if m.is_some() || s.is_some() || t.is_some() {
            return Ok(Doc {
                model: m.unwrap_or_else(|| base.model.clone()),
                system: s.unwrap_or_else(|| base.system.clone()),
                task: t.unwrap_or_else(|| base.task.clone()),
            });
        }
        let mut doc = base.clone();
        if obj.contains_key("num_devices") || obj.get("type") == Some(&json!("GPU")) {
            doc.system = obj;
        } else if obj.keys().any(|k| k.ends_with("_parallel")) {
            doc.task = obj;
        } else if obj.contains_key("type") {
            doc.model = obj;
        } else {
            return Err("not a MAD-Max config: no model type, system num_devices or task parallel specs".to_owned());
        }
        Ok(doc)
    }
}

/// The task config keys of an explored plan, for loading it into the calculator (and for the
/// CLI's `explore --json`): each component's strategies and degrees, the local batches, and for
/// a default-model transformer in training the micro-batch (`null`: the key goes, the default
/// applies) and the recomputation the explorer chose.
pub fn plan_task_keys(
    base: &crate::engine::scenario::Scenario,
    o: &crate::engine::explore::Outcome,
) -> Map<String, Value> {
    let p = &o.plan;
    let mut m = Map::new();
    let mut spec = |key: &str, s: &crate::engine::scenario::Spec| {
        let (st, dg): (Vec<&str>, Vec<u64>) = s.levels().iter().map(|l| (l.strategy.config_name(), l.degree)).unzip();
        m.insert(key.to_owned(), json!(st));
        m.insert(format!("{key}_degree"), json!(dg));
    };
    // A CNN's network plan stands for the embeddings it does not have.
    let cnn = base.model().arch.family() == crate::engine::scenario::Family::Cnn;
    if let Some(s) = &p.mlp {
        spec("mlp_parallel", s);
    }
    if !cnn {
        spec("emb_parallel", &p.emb);
    }
    if let Some(s) = &p.transformer {
        spec("transformer_parallel", s);
    }
    if !cnn {
        m.insert("local_emb_bs".into(), json!(p.local_emb_batch));
    }
    if let Some(b) = p.local_mlp_batch {
        m.insert("local_mlp_bs".into(), json!(b));
    }
    if let Some(b) = p.local_transformer_batch {
        m.insert("local_transformer_bs".into(), json!(b));
    }
    if crate::engine::explore::searches_emb_sharding(base) {
        m.insert("emb_sharding".into(), json!(o.setup.emb_sharding.config_name()));
        m.insert("bot_mlp".into(), json!(o.setup.bot_mlp.config_name()));
    }
    if crate::engine::explore::serves_in_default_model(base) {
        m.insert("weight_format".into(), json!(o.setup.weight_format.map(|p| p.config_name())));
        m.insert("kv_format".into(), json!(o.setup.kv_format.map(|p| p.config_name())));
    }
    if crate::engine::explore::searches_settings(base) {
        m.insert("micro_batch".into(), json!(o.setup.micro_batch));
        m.insert("recompute".into(), json!(o.setup.recompute.config_name()));
        m.insert("zero_stage".into(), json!(o.setup.zero_stage));
        m.insert("zero_shard_ranks".into(), json!(o.setup.zero_shard_ranks));
        m.insert("sequence_parallel".into(), json!(o.setup.sequence_parallel));
        m.insert("virtual_stages".into(), json!(o.setup.virtual_stages));
        m.insert("overlap_tp_comm".into(), json!(o.setup.overlap_tp_comm));
        m.insert("overlap_param_gather".into(), json!(o.setup.overlap_param_gather));
        m.insert("fp8_param_gather".into(), json!(o.setup.fp8_param_gather));
        m.insert("expert_tp".into(), json!(o.setup.expert_tp));
        m.insert("expert_cp".into(), json!(o.setup.expert_cp));
        // The scenario's recomputed modules go with selective recomputation only.
        let selective = o.setup.recompute == crate::engine::scenario::Recompute::Selective;
        let modules = o.setup.recompute_modules;
        let named = selective && modules != crate::engine::scenario::RecomputeModules::default();
        m.insert("recompute_modules".into(), json!(named.then(|| modules.config_text())));
    }
    if cnn {
        m.insert("conv_layout".into(), json!(o.setup.conv_layout.config_name()));
    }
    if cnn || crate::engine::explore::searches_settings(base) {
        m.insert("overlap_grad_reduce".into(), json!(o.setup.overlap_grad_reduce));
        m.insert("collective".into(), json!(o.setup.collective.config_name()));
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc() -> Doc {
        let obj = |v: Value| match v {
            Value::Object(m) => m,
            _ => Map::new(),
        };
        Doc::new([
            obj(json!({"type": "LLM", "name": "m"})),
            obj(json!({"type": "GPU", "num_devices": 8})),
            obj(json!({"type": "pretrain", "emb_parallel": ["ddp"]})),
        ])
    }

    #[test]
    fn import_reads_whole_scenarios_cases_and_single_configs() {
        let base = doc();
        let whole = Doc::import(&base.to_json().to_string(), &Doc::default()).expect("scenario");
        assert_eq!(whole, base);
        let case = json!({"case": "x", "inputs": {"model": {"type": "ViT"}}}).to_string();
        assert_eq!(Doc::import(&case, &base).expect("case").model["type"], json!("ViT"));
        let system = json!({"type": "GPU", "num_devices": 16}).to_string();
        let d = Doc::import(&system, &base).expect("system");
        assert_eq!(d.num(Config::System, "num_devices"), Some(16.0));
        assert_eq!(d.model, base.model);
        let task = json!({"type": "inference", "transformer_parallel": ["tp"]}).to_string();
        assert_eq!(Doc::import(&task, &base).expect("task").text(Config::Task, "type"), Some("inference"));
        assert!(Doc::import("[1]", &base).is_err());
        assert!(Doc::import("{\"a\": 1}", &base).is_err());
        assert!(Doc::import("nope", &base).is_err());
    }

    #[test]
    fn counts_accept_whole_floats_only() {
        let mut d = doc();
        d.set(Config::System, "num_nodes", json!(2.0));
        assert_eq!(d.count(Config::System, "num_nodes"), Some(2));
        d.set(Config::System, "num_nodes", json!(2.5));
        assert_eq!(d.count(Config::System, "num_nodes"), None);
        d.set(Config::System, "num_nodes", json!("2"));
        assert_eq!(d.count(Config::System, "num_nodes"), None);
    }
}
