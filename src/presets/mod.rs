//! Presets: models, GPUs, clusters and scenarios shipped with madmax. Facts, not code.
//!
//! Every number lives once, in the JSON files under `data/`, each entry with its source:
//! - `models.json`, `systems.json`: the MAD-Max reference model and system configs, exactly as
//!   the golden cases inline them, the systems with one key added: `sm_count` (the GPU's SMs
//!   from its whitepaper: 108 on an A100, 132 on an H100, 80 on a V100), which the default
//!   model reads and MAD-Max ignores;
//! - `gpus.json`: current GPUs from vendor datasheets; `clusters.json`: clusters built from them
//!   (GPUs per node, nodes, NICs), turned into MAD-Max system configs here;
//! - `scenarios.json`: named (model, system, task) runs, from the golden cases and on current
//!   hardware. The first one is what the page opens on.
//! - `prices.json`: GPU-hour prices and power per GPU from the MAD-Max artifact.
//!
//! This module knows the MAD-Max config format (JSON objects) but nothing of the engine's
//! internals, the DOM or the URL.

use crate::engine::{RawFile, RawScenario};
use serde::Deserialize;
use serde_json::{json, Map, Value};
use std::sync::OnceLock;

/// A model config preset.
#[derive(Clone, Debug, Deserialize)]
pub struct ModelPreset {
    pub id: String,
    pub label: String,
    pub source: String,
    /// For a MAD-Max reference config: how it compares with the published model it is named
    /// after (as published, or how it differs), or that there is none to compare with.
    #[serde(default)]
    pub versus_published: Option<String>,
    /// A MAD-Max model config.
    pub config: Map<String, Value>,
}

/// A system config preset: a MAD-Max reference system, or a cluster of current GPUs.
#[derive(Clone, Debug, Deserialize)]
pub struct SystemPreset {
    pub id: String,
    pub label: String,
    pub source: String,
    /// A MAD-Max system config.
    pub config: Map<String, Value>,
}

/// A GPU's datasheet figures, in MAD-Max units (FLOP/s, bytes, bytes/s; link bandwidth both
/// directions together, as MAD-Max's `bw_per_nvlink`).
#[derive(Clone, Debug, Deserialize)]
pub struct GpuPreset {
    pub id: String,
    pub label: String,
    pub source: String,
    pub f64_flops: f64,
    pub f32_flops: f64,
    pub f16_flops: f64,
    pub i8_ops: f64,
    /// Dense FP8 tensor-core peak, FLOP/s; absent on GPUs without FP8 (A100 and older).
    #[serde(default)]
    pub fp8_flops: Option<f64>,
    pub mem_cap: f64,
    pub mem_bw: f64,
    pub num_nvlinks: f64,
    pub bw_per_nvlink: f64,
    /// Streaming multiprocessors (AMD: compute units), from the architecture whitepaper.
    pub sm_count: u64,
}

impl GpuPreset {
    /// The datasheet figures a system config takes from the GPU, by config key (FP8 and the
    /// links apart).
    pub fn figures(&self) -> [(&'static str, f64); 6] {
        [
            ("f64_flops", self.f64_flops),
            ("f32_flops", self.f32_flops),
            ("f16_flops", self.f16_flops),
            ("i8_ops", self.i8_ops),
            ("mem_cap", self.mem_cap),
            ("mem_bw", self.mem_bw),
        ]
    }

    /// Its NVLinks by config key: count per GPU and bidirectional bytes/s each.
    pub fn links(&self) -> [(&'static str, f64); 2] {
        [("num_nvlinks", self.num_nvlinks), ("bw_per_nvlink", self.bw_per_nvlink)]
    }
}

/// A GPU-hour price and the power drawn per GPU, for cost and energy.
///
/// Source: the MAD-Max artifact's spreadsheet "\[A\] Cloud Provider Results" (samhsia/MADMAX-AE),
/// as transcribed in the project's `cloud_prices.md`. Power is the per-GPU share of an 8-GPU
/// node with its host (5,000 / 6,500 / 10,200 W for V100 / A100 / H100 nodes), as the
/// spreadsheet's energy formula uses.
#[derive(Clone, Debug, Deserialize)]
pub struct PricePreset {
    pub id: String,
    pub label: String,
    pub usd_per_gpu_hour: f64,
    pub watts_per_gpu: f64,
}

/// A named run: a model preset, a system preset and a task config.
#[derive(Clone, Debug, Deserialize)]
pub struct ScenarioPreset {
    pub id: String,
    pub label: String,
    pub source: String,
    /// Id of a [`ModelPreset`].
    pub model: String,
    /// Id of a [`SystemPreset`].
    pub system: String,
    /// A MAD-Max task config.
    pub task: Map<String, Value>,
}

impl ScenarioPreset {
    /// The group the scenario picker lists it under: runs on current hardware, serving setups,
    /// then the MAD-Max paper's golden cases by model family (the id's first part says which).
    pub fn group(&self) -> &'static str {
        let kind = self.id.split("__").next().unwrap_or_default();
        SCENARIO_GROUPS[match kind {
            "current" => 0,
            "serve" => 1,
            "llm" | "llm_moe" => 2,
            "vit" => 3,
            _ => 4,
        }]
    }
}

/// The picker's groups, in the order it lists them.
pub const SCENARIO_GROUPS: [&str; 5] = [
    "Current GPUs: training and inference",
    "Current GPUs: serving",
    "MAD-Max paper: language models",
    "MAD-Max paper: vision transformers",
    "MAD-Max paper: recommendation models",
];

/// A cluster of GPU presets (see `clusters.json`; the famous runs describe theirs the same way).
#[derive(Clone, Debug, Deserialize, serde::Serialize, PartialEq)]
pub struct Cluster {
    #[serde(default)]
    pub id: String,
    pub label: String,
    /// Id of a [`GpuPreset`].
    pub gpu: String,
    pub gpus_per_node: u64,
    pub nodes: u64,
    pub nic_ports_per_node: u64,
    /// Line rate per NIC port, Gb/s in each direction (as vendors quote it).
    pub nic_gbit_s: f64,
    pub fabric: Fabric,
    /// One-way latency each hop between nodes adds, ms (0: a datacenter network; the
    /// system's `nic_latency_s`).
    #[serde(default)]
    pub link_latency_ms: f64,
    /// Sites the nodes are spread over, joined by a wide-area link (1: one site; the
    /// system's `num_sites`).
    #[serde(default = "one")]
    pub sites: u64,
    /// Each site's wide-area bandwidth, Gb/s in each direction (with more than one site).
    #[serde(default)]
    pub wan_gbit_s: f64,
    /// One-way latency of a hop between sites, ms.
    #[serde(default)]
    pub wan_latency_ms: f64,
    /// Id of a second [`GpuPreset`] on the last `second_nodes` nodes ("" for none).
    #[serde(default)]
    pub second_gpu: String,
    #[serde(default)]
    pub second_nodes: u64,
    #[serde(default)]
    pub source: String,
}

fn one() -> u64 {
    1
}

/// Which utilisation calibration a cluster takes.
#[derive(Clone, Copy, Debug, Deserialize, serde::Serialize, PartialEq)]
#[serde(rename_all = "lowercase")]
pub enum Fabric {
    /// NVLink and InfiniBand/RoCE: [`DATACENTER_UTIL`].
    Datacenter,
    /// PCIe and Ethernet: [`CONSUMER_UTIL`].
    Consumer,
}

impl Cluster {
    /// The cluster's MAD-Max system config, with `gpu` looked up in `gpus`.
    pub fn system(&self, gpus: &[GpuPreset]) -> Result<Map<String, Value>, String> {
        let gpu = gpus.iter().find(|g| g.id == self.gpu).ok_or(format!("{}: no GPU {}", self.label, self.gpu))?;
        let util = match self.fabric {
            Fabric::Datacenter => DATACENTER_UTIL,
            Fabric::Consumer => CONSUMER_UTIL,
        };
        let nic = (self.nic_ports_per_node, self.nic_gbit_s);
        let mut cfg = system_config(&self.label, gpu, self.gpus_per_node, self.nodes, nic, util);
        if self.link_latency_ms > 0.0 {
            cfg.insert("nic_latency_s".into(), (self.link_latency_ms / 1e3).into());
        }
        if !self.second_gpu.is_empty() {
            let g = gpus
                .iter()
                .find(|g| g.id == self.second_gpu)
                .ok_or(format!("{}: no GPU {}", self.label, self.second_gpu))?;
            cfg.extend(second_gpu_config(g, self.second_nodes));
        }
        if self.sites > 1 {
            cfg.insert("num_sites".into(), self.sites.into());
            cfg.insert("wan_bw".into(), (self.wan_gbit_s * 1e9 / 8.0).into());
            if self.wan_latency_ms > 0.0 {
                cfg.insert("wan_latency_s".into(), (self.wan_latency_ms / 1e3).into());
            }
        }
        Ok(cfg)
    }
}

/// Utilisation factors for a cluster: the MAD-Max reference calibrations.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Utilisation {
    pub flops: f64,
    pub mem_bw: f64,
    pub nvlink: f64,
    pub nic: f64,
    /// Share of the multi-node all-reduce bandwidth mix taken from the intra-node bandwidth.
    pub ar_perc_intra: f64,
    /// Share of HBM bandwidth a GEMM reaches (`gemm_bw_util`); `None`: [`Utilisation::mem_bw`].
    pub gemm_bw: Option<f64>,
}

/// NVLink + InfiniBand/RoCE datacenter nodes: the ZionEX calibration of the MAD-Max reference
/// (`system_cfgs/zionex/zionex_128.json`).
pub const DATACENTER_UTIL: Utilisation =
    Utilisation { flops: 0.705, mem_bw: 0.836, nvlink: 0.6667, nic: 0.56, ar_perc_intra: 0.2746, gemm_bw: None };

/// PCIe within a node and Ethernet between nodes: the MAD-Max reference's calibration of its
/// only system without NVLink (Cloud B NC96ds_A100_v4, `system_cfgs/cloud_B/*.json`).
pub const CONSUMER_UTIL: Utilisation =
    Utilisation { flops: 0.705, mem_bw: 0.836, nvlink: 0.45, nic: 0.62, ar_perc_intra: 0.1465, gemm_bw: None };

/// All presets, parsed once.
pub struct Presets {
    pub models: Vec<ModelPreset>,
    pub systems: Vec<SystemPreset>,
    pub gpus: Vec<GpuPreset>,
    pub scenarios: Vec<ScenarioPreset>,
    pub prices: Vec<PricePreset>,
}

static PRESETS: OnceLock<Result<Presets, String>> = OnceLock::new();

/// The presets, or why the shipped data could not be read (a build defect the tests catch).
pub fn all() -> Result<&'static Presets, &'static str> {
    PRESETS.get_or_init(load).as_ref().map_err(String::as_str)
}

fn parse<T: for<'de> Deserialize<'de>>(what: &str, text: &str) -> Result<T, String> {
    serde_json::from_str(text).map_err(|e| format!("presets/{what}: {e}"))
}

fn load() -> Result<Presets, String> {
    let models: Vec<ModelPreset> = parse("models.json", include_str!("data/models.json"))?;
    let mut systems: Vec<SystemPreset> = parse("systems.json", include_str!("data/systems.json"))?;
    let gpus: Vec<GpuPreset> = parse("gpus.json", include_str!("data/gpus.json"))?;
    let clusters: Vec<Cluster> = parse("clusters.json", include_str!("data/clusters.json"))?;
    let scenarios: Vec<ScenarioPreset> = parse("scenarios.json", include_str!("data/scenarios.json"))?;
    let prices: Vec<PricePreset> = parse("prices.json", include_str!("data/prices.json"))?;
    for c in &clusters {
        let config = c.system(&gpus).map_err(|e| format!("clusters.json: {e}"))?;
        let gpu_source = gpus.iter().find(|g| g.id == c.gpu).map_or("", |g| g.source.as_str());
        systems.push(SystemPreset {
            id: c.id.clone(),
            label: c.label.clone(),
            source: format!("{gpu_source}; {}", c.source),
            config,
        });
    }
    Ok(Presets { models, systems, gpus, scenarios, prices })
}

/// A MAD-Max system config for `nodes` nodes of `per_node` GPUs, with `nic.0` NIC ports per
/// node of `nic.1` Gb/s each way. MAD-Max counts a port's bandwidth in both directions, in
/// bytes/s: `2 x Gb/s / 8 x 1e9`.
pub fn system_config(
    name: &str,
    gpu: &GpuPreset,
    per_node: u64,
    nodes: u64,
    nic: (u64, f64),
    util: Utilisation,
) -> Map<String, Value> {
    let cfg = json!({
        "name": name,
        "type": "GPU",
        "num_devices": per_node * nodes,
        "num_nodes": nodes,
        "f64_flops": gpu.f64_flops,
        "f32_flops": gpu.f32_flops,
        "f16_flops": gpu.f16_flops,
        "i8_ops": gpu.i8_ops,
        "flops_util": util.flops,
        "mem_cap": gpu.mem_cap,
        "mem_bw": gpu.mem_bw,
        "mem_bw_util": util.mem_bw,
        "num_nvlinks": gpu.num_nvlinks,
        "bw_per_nvlink": gpu.bw_per_nvlink,
        "nvlink_util": util.nvlink,
        "num_ibroce_ports": nic.0,
        "ibroce_bw": nic_gbit_to_bytes(nic.1),
        "ibroce_util": util.nic,
        "ar_perc_intra": if nodes == 1 { 1.0 } else { util.ar_perc_intra },
    });
    match cfg {
        Value::Object(mut m) => {
            if let Some(f) = gpu.fp8_flops {
                m.insert("fp8_flops".into(), json!(f));
            }
            m.insert("sm_count".into(), json!(gpu.sm_count));
            if let Some(g) = util.gemm_bw {
                m.insert("gemm_bw_util".into(), json!(g));
            }
            m
        }
        _ => Map::new(),
    }
}

/// The system keys of a second GPU type, `gpu`, on `nodes` nodes: its datasheet figures
/// under the `second_` keys.
pub fn second_gpu_config(gpu: &GpuPreset, nodes: u64) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("second_gpu_nodes".into(), json!(nodes));
    m.insert("second_gpu_name".into(), json!(gpu.label));
    for (k, v) in gpu.figures().into_iter().chain(gpu.links()) {
        m.insert(format!("second_{k}"), json!(v));
    }
    if let Some(f) = gpu.fp8_flops {
        m.insert("second_fp8_flops".into(), json!(f));
    }
    m.insert("second_sm_count".into(), json!(gpu.sm_count));
    m
}

/// A NIC port's line rate in Gb/s each way, as MAD-Max's `ibroce_bw` (bytes/s, both ways).
pub fn nic_gbit_to_bytes(gbit_s: f64) -> f64 {
    2.0 * gbit_s / 8.0 * 1e9
}

/// MAD-Max's `ibroce_bw` (bytes/s, both ways) as a line rate in Gb/s each way.
pub fn nic_bytes_to_gbit(bytes_per_s: f64) -> f64 {
    bytes_per_s / 2.0 * 8.0 / 1e9
}

impl Presets {
    pub fn model(&self, id: &str) -> Option<&ModelPreset> {
        self.models.iter().find(|m| m.id == id)
    }

    pub fn system(&self, id: &str) -> Option<&SystemPreset> {
        self.systems.iter().find(|s| s.id == id)
    }

    pub fn scenario(&self, id: &str) -> Option<&ScenarioPreset> {
        self.scenarios.iter().find(|s| s.id == id)
    }

    pub fn gpu(&self, id: &str) -> Option<&GpuPreset> {
        self.gpus.iter().find(|g| g.id == id)
    }

    /// The three configs of a scenario preset, as JSON objects.
    pub fn configs(&self, s: &ScenarioPreset) -> Option<[Map<String, Value>; 3]> {
        Some([self.model(&s.model)?.config.clone(), self.system(&s.system)?.config.clone(), s.task.clone()])
    }
}

/// The id of the scenario the page opens on: Llama 2 70B as published (grouped-query attention,
/// SwiGLU; 69 B parameters) pre-training with FSDP on 128 H100s. A model with a published
/// architecture on a cluster people rent today; the MAD-Max reference configs' LLaMA2-70B
/// (50.9 B, no GQA) is one pick away.
pub const DEFAULT_SCENARIO: &str = "current__llama2_70b__h100_sxm_128__fsdp";

/// The MAD-Max paper's LLaMA2-70B on DC_A-2048 (FSDP over 2,048 A100-40GB): the golden case that
/// tests of the paper's own scenario take.
#[cfg(test)]
pub const PAPER_LLAMA2_70B: &str = "llm__llama2_70b__dc_A_2048__llm_train";

/// The raw configs of the default scenario.
pub fn default_scenario() -> Result<RawScenario, String> {
    scenario_raw(DEFAULT_SCENARIO)
}

/// The raw configs of scenario preset `id`.
pub fn scenario_raw(id: &str) -> Result<RawScenario, String> {
    let p = all().map_err(str::to_owned)?;
    let s = p.scenario(id).ok_or(format!("no scenario preset {id}"))?;
    let [model, system, task] = p.configs(s).ok_or(format!("scenario preset {id} names a missing preset"))?;
    let file = json!({ "model": model, "system": system, "task": task });
    serde_json::from_value::<RawFile>(file).map_err(|e| e.to_string())?.into_scenario()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::validate;

    #[test]
    fn every_reference_model_says_how_it_compares_with_the_published_one() {
        let p = all().expect("presets parse");
        for m in p.models.iter().filter(|m| m.source.starts_with("MAD-Max reference config")) {
            let v = m.versus_published.as_deref().unwrap_or_else(|| panic!("{}: no comparison", m.id));
            assert!(v.ends_with('.') && v.len() > 40, "{}: {v}", m.id);
        }
        // The two the issue names: ViT-H's 4 layers, DINOv2-B's 18.
        let said = |id: &str| p.model(id).and_then(|m| m.versus_published.clone()).unwrap_or_default();
        assert!(said("vit_h").contains("4 layers where it has 32"), "{}", said("vit_h"));
        assert!(said("dinov2_b").contains("18 layers where it has 12"), "{}", said("dinov2_b"));
        // Each says what its config holds: the layer counts it quotes are the config's.
        let layers = |id: &str| p.model(id).and_then(|m| m.config["num_transformer_layers"].as_u64()).unwrap_or(0);
        assert_eq!((layers("vit_h"), layers("dinov2_b")), (4, 18));
    }

    #[test]
    fn gpu_memory_is_what_the_gpu_reports_in_the_datasheets_gib() {
        // "80GB" on a datasheet is 80 GiB of HBM; nvidia-smi's total is that less what the
        // driver keeps (81,559 MiB on an H100 SXM). Decimal GB would make a run that fits look
        // 7% short of memory.
        let p = all().expect("presets parse");
        for g in &p.gpus {
            let gb = g
                .label
                .split_whitespace()
                .find_map(|w| w.trim_end_matches(")").strip_suffix("GB")?.parse::<f64>().ok());
            let gb = gb.unwrap_or_else(|| panic!("{}: no memory size in its label", g.label));
            let share = g.mem_cap / (gb * (1u64 << 30) as f64);
            assert!((0.99..=1.0).contains(&share), "{}: {share}", g.label);
        }
    }

    #[test]
    fn the_shipped_data_parses_and_every_scenario_validates() {
        let p = all().expect("presets parse");
        assert!(p.models.len() >= 39 && p.systems.len() >= 33 + 8 && p.gpus.len() >= 8);
        assert_eq!(p.scenarios[0].id, DEFAULT_SCENARIO);
        for s in &p.scenarios {
            let [model, system, task] = p.configs(s).unwrap_or_else(|| panic!("{}: missing preset", s.id));
            let raw: RawScenario =
                serde_json::from_value::<RawFile>(json!({"model": model, "system": system, "task": task}))
                    .expect("configs")
                    .into_scenario()
                    .expect("configs");
            if let Err(e) = validate(&raw) {
                panic!("{}: {e:?}", s.id);
            }
        }
    }

    #[test]
    fn every_scenario_is_grouped_by_its_kind_and_named_by_its_gpus() {
        let p = all().expect("presets parse");
        for s in &p.scenarios {
            let group = s.group();
            assert!(SCENARIO_GROUPS.contains(&group), "{}", s.id);
            // The paper's golden cases sit under the paper's groups, the others never do.
            assert_eq!(group.starts_with("MAD-Max paper"), s.source.starts_with("MAD-Max"), "{}", s.id);
            let dlrm = s.id.starts_with("dlrm") || s.id.contains("__dlrm_");
            assert_eq!(group == SCENARIO_GROUPS[4], dlrm && group.starts_with("MAD-Max"), "{}", s.id);
            // Named by the GPUs they run on ("128 x A100-40GB"), not a cluster's code name
            // ("CloudC-128-a2-megagpu-16g").
            let system = p.system(&s.system).expect("the scenario's system");
            let name = system.config.get("name").and_then(|n| n.as_str()).unwrap_or_default();
            assert!(s.label.contains(" x "), "{}", s.label);
            assert!(name.is_empty() || !s.label.contains(name), "{}: {name}", s.label);
        }
        for g in SCENARIO_GROUPS {
            assert!(p.scenarios.iter().any(|s| s.group() == g), "{g} is empty");
        }
    }

    #[test]
    fn every_reference_model_and_system_is_a_preset() {
        let p = all().expect("presets parse");
        for name in ["LLaMA2_70B", "GPT3_175B", "GPT4_1.8T", "ViT_120B", "DINOv2_g", "DLRM_I_Transformer"] {
            assert!(p.models.iter().any(|m| m.config.get("name") == Some(&json!(name))), "{name}");
        }
        for name in ["ZionEX-8", "ZionEX-128", "ZionEX-2048", "DC_A-2048", "CloudC-2048-a2-megagpu-16g"] {
            assert!(p.systems.iter().any(|s| s.config.get("name") == Some(&json!(name))), "{name}");
        }
    }

    #[test]
    fn clusters_become_mad_max_system_configs() {
        let p = all().expect("presets parse");
        let h100 = p.system("h100_sxm_128").expect("H100 cluster");
        assert_eq!(h100.config["num_devices"], json!(128));
        // 400 Gb/s each way = 50 GB/s each way = 100 GB/s both ways, MAD-Max's unit.
        assert_eq!(h100.config["ibroce_bw"], json!(100e9));
        assert_eq!(nic_bytes_to_gbit(100e9), 400.0);
        // A GB200 NVL72 rack is one NVLink domain of 64 GPUs as training jobs use it.
        let gb200 = p.system("gb200_nvl72_256").expect("GB200 cluster");
        assert_eq!((&gb200.config["num_devices"], &gb200.config["num_nodes"]), (&json!(256), &json!(4)));
        assert_eq!((&gb200.config["num_ibroce_ports"], &gb200.config["ibroce_bw"]), (&json!(64), &json!(100e9)));
        let rtx = p.system("rtx3080_8_1gbe").expect("consumer cluster");
        assert_eq!(rtx.config["num_nodes"], json!(8));
        assert_eq!(rtx.config["ibroce_bw"], json!(0.25e9));
    }

    #[test]
    fn the_default_scenario_is_a_published_model() {
        assert!(validate(&default_scenario().expect("shipped preset")).is_ok());
        // Not a reference config (the page's own test checks its 69 B parameters and that it
        // fits as the page opens it).
        let p = all().expect("presets parse");
        let preset = p.scenario(DEFAULT_SCENARIO).expect("listed");
        assert!(p.models.iter().any(|m| m.id == preset.model && !m.source.starts_with("MAD-Max reference config")));
    }
}
