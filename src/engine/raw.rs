//! Raw inputs: the three MAD-Max JSON config formats (model, system, task) as serde types.
//!
//! Every key the reference reads is a named field; keys it does not read are ignored. Values are
//! kept as given ([`RawValue`]) so that [`crate::engine::validate()`] can say *which* field is
//! wrong and why, instead of a parser's line and column. Nothing here checks a value: only
//! validation builds a [`crate::engine::Scenario`]. This module does not know JSON (any
//! self-describing serde format works).

use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

/// A config value exactly as the input gave it.
#[derive(Clone, Debug, PartialEq)]
pub enum RawValue {
    Null,
    Bool(bool),
    /// An integer literal (Python `int`).
    Int(i128),
    /// A number with a fraction or exponent (Python `float`).
    Float(f64),
    /// Text; shared, so that names flow into a scenario without copying.
    Str(Arc<str>),
    List(Vec<RawValue>),
    /// An object; key order as given.
    Map(Vec<(String, RawValue)>),
}

impl RawValue {
    /// A short description of the value's kind, for error messages.
    pub fn kind(&self) -> &'static str {
        match self {
            RawValue::Null => "null",
            RawValue::Bool(_) => "a true/false value",
            RawValue::Int(_) => "a whole number",
            RawValue::Float(_) => "a number",
            RawValue::Str(_) => "text",
            RawValue::List(_) => "a list",
            RawValue::Map(_) => "an object",
        }
    }
}

/// Most characters of an input's text that a message quotes ([`short`]).
pub const QUOTE_CHARS: usize = 40;
/// Most items of an input's list that a message shows ([`RawValue`]'s `Display`).
pub const QUOTE_ITEMS: usize = 8;

/// Text from an input as a message quotes it: at most [`QUOTE_CHARS`] characters (then `...`
/// and the text's length), with control and bidirectional-override characters written as
/// `\u{..}`, so that a message stays short and prints as itself whatever the input holds.
pub fn short(text: &str) -> Cow<'_, str> {
    let n = text.chars().count();
    let prefix = match text.char_indices().nth(QUOTE_CHARS) {
        Some((end, _)) => &text[..end],
        None => text,
    };
    match escaped(prefix, unprintable, |c| format!("\\u{{{c:x}}}")) {
        quoted if n <= QUOTE_CHARS => quoted,
        quoted => Cow::Owned(format!("{quoted}... ({n} characters)")),
    }
}

/// Characters a message or a terminal must not receive as they are: control characters (they
/// can move a cursor, clear a screen, retitle a window) and [`is_bidi_control`] ones.
pub fn unprintable(c: char) -> bool {
    c.is_control() || is_bidi_control(c)
}

/// `text` with every character `escape` picks written as `spell` spells its code point.
pub fn escaped(text: &str, escape: impl Fn(char) -> bool, spell: impl Fn(u32) -> String) -> Cow<'_, str> {
    if !text.chars().any(&escape) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if escape(c) {
            out.push_str(&spell(c as u32));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Characters that reorder the text around them on screen (U+202A-U+202E, U+2066-U+2069) or
/// mark a direction invisibly (U+200E, U+200F, U+061C).
pub fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}' | '\u{061c}')
}

/// A value as a message shows it: text through [`short`], lists up to [`QUOTE_ITEMS`] items.
impl fmt::Display for RawValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RawValue::Null => write!(f, "null"),
            RawValue::Bool(b) => write!(f, "{b}"),
            RawValue::Int(i) => write!(f, "{i}"),
            RawValue::Float(x) => write!(f, "{x}"),
            RawValue::Str(s) => write!(f, "\"{}\"", short(s)),
            RawValue::List(items) => {
                write!(f, "[")?;
                for (i, item) in items.iter().take(QUOTE_ITEMS).enumerate() {
                    if i > 0 {
                        write!(f, ", ")?;
                    }
                    match item {
                        RawValue::List(_) => write!(f, "[...]")?,
                        item => write!(f, "{item}")?,
                    }
                }
                if items.len() > QUOTE_ITEMS {
                    write!(f, ", ... ({} items)", items.len())?;
                }
                write!(f, "]")
            }
            RawValue::Map(_) => write!(f, "{{...}}"),
        }
    }
}

impl<'de> Deserialize<'de> for RawValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<RawValue, D::Error> {
        d.deserialize_any(RawVisitor)
    }
}

struct RawVisitor;

impl<'de> Visitor<'de> for RawVisitor {
    type Value = RawValue;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "any value")
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<RawValue, E> {
        Ok(RawValue::Bool(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<RawValue, E> {
        Ok(RawValue::Int(v as i128))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<RawValue, E> {
        Ok(RawValue::Int(v as i128))
    }
    fn visit_i128<E: de::Error>(self, v: i128) -> Result<RawValue, E> {
        Ok(RawValue::Int(v))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<RawValue, E> {
        Ok(RawValue::Float(v))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<RawValue, E> {
        Ok(RawValue::Str(Arc::from(v)))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<RawValue, E> {
        Ok(RawValue::Str(Arc::from(v)))
    }
    fn visit_unit<E: de::Error>(self) -> Result<RawValue, E> {
        Ok(RawValue::Null)
    }
    fn visit_none<E: de::Error>(self) -> Result<RawValue, E> {
        Ok(RawValue::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<RawValue, D::Error> {
        d.deserialize_any(RawVisitor)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<RawValue, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(RawValue::List(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawValue, A::Error> {
        let mut entries = Vec::new();
        while let Some((k, v)) = map.next_entry::<String, RawValue>()? {
            entries.push((k, v));
        }
        Ok(RawValue::Map(entries))
    }
}

/// A field of a raw config: absent, `null`, or a value as given.
pub type Field = Option<RawValue>;

/// Defines a raw config: a struct of [`Field`]s, each read from the key of its name (or the key
/// written beside it: `kind = "type"`), and its `Deserialize` (any keys, each read once; unknown
/// keys ignored, `null` as absent). Written by hand, not derived: serde's derive expands every
/// field's reading inline, about 77 KB of the page's WebAssembly for the three configs; here the
/// fields are filled by one shared function ([`fill`]) from the map [`RawValue`] already reads.
macro_rules! raw_config {
    ($(#[$meta:meta])* $name:ident, $what:literal; $($(#[$doc:meta])* $field:ident $(= $key:literal)?,)*) => {
        $(#[$meta])*
        #[derive(Clone, Debug, Default)]
        pub struct $name {
            $($(#[$doc])* pub $field: Field,)*
        }

        impl Slots for $name {
            fn slot(&mut self, key: &str) -> Option<&mut Field> {
                $(if key == config_key!($field $($key)?) {
                    return Some(&mut self.$field);
                })*
                None
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<$name, D::Error> {
                let mut config = $name::default();
                fill(RawValue::deserialize(d)?, $what, &mut config).map_err(de::Error::custom)?;
                Ok(config)
            }
        }
    };
}

/// A raw config field's key: the one written beside it, or its name.
macro_rules! config_key {
    ($field:ident) => {
        stringify!($field)
    };
    ($field:ident $key:literal) => {
        $key
    };
}

/// A raw config's fields by key.
trait Slots {
    /// The field read from `key`; `None` for a key the config does not read.
    fn slot(&mut self, key: &str) -> Option<&mut Field>;
}

/// Fills `config` from an object of keys: each key the config reads once (`null` is absent),
/// others ignored. Anything but an object is refused, as is a key given twice.
fn fill(value: RawValue, what: &str, config: &mut dyn Slots) -> Result<(), String> {
    let RawValue::Map(entries) = value else {
        return Err(format!("got {value} for the {what} config, not an object of keys and values"));
    };
    let mut seen: Vec<String> = Vec::new();
    for (key, v) in entries {
        if let Some(slot) = config.slot(&key) {
            if seen.contains(&key) {
                return Err(format!("duplicate field `{key}`"));
            }
            *slot = (v != RawValue::Null).then_some(v);
            seen.push(key);
        }
    }
    Ok(())
}

raw_config! {
    /// A MAD-Max model config (`model_cfgs/*/*.json`). Which fields are required depends on `type`
    /// (SPEC section 2.1).
    RawModel, "model";
    name,
    kind = "type",
    bytes_per_nonemb_param,
    bytes_per_emb_param,
    // DLRM family
    num_bot_mlp_layers,
    num_top_mlp_layers,
    mlp_dim,
    num_tables,
    entries_per_table,
    emb_dim,
    pooling_size,
    /// Optional (the default model): the bottom MLP's input features and layer widths.
    bot_mlp_widths,
    /// Optional (the default model): the top MLP's layer widths.
    top_mlp_widths,
    // MoE
    num_experts,
    num_active_experts,
    // transformers
    num_transformer_layers,
    num_transformer_heads,
    attention_dim,
    transformer_fc_dim,
    transformer_seq_len,
    // encoder-decoder (the default model only)
    num_encoder_layers,
    num_decoder_layers,
    target_seq_len,
    // ViT (and CNN)
    image_size,
    patch_dim,
    // CNN (the default model only)
    network,
    num_classes,
    // default model only (MAD-Max ignores these keys)
    num_kv_heads,
    head_dim,
    ffn_kind,
    tied_embeddings,
    attention,
    causal,
    capacity_factor,
    dropout,
    biases,
    positions,
    elementwise,
    moe_dispatch,
}

raw_config! {
    /// A MAD-Max system config (`system_cfgs/*/*.json`, SPEC section 2.2).
    RawSystem, "system";
    name,
    kind = "type",
    num_devices,
    num_nodes,
    f64_flops,
    f32_flops,
    f16_flops,
    i8_ops,
    /// Optional: absent on GPUs without FP8 tensor cores.
    fp8_flops,
    /// Optional, the default model only: streaming multiprocessors per GPU.
    sm_count,
    flops_util,
    mem_cap,
    mem_bw,
    mem_bw_util,
    /// Optional, the default model only: the HBM share a GEMM reaches.
    gemm_bw_util,
    num_nvlinks,
    bw_per_nvlink,
    nvlink_util,
    num_ibroce_ports,
    ibroce_bw,
    ibroce_util,
    ar_perc_intra,
    // the default model's link latencies (MAD-Max ignores them)
    nic_latency_s,
    nvlink_latency_s,
    // the default model's wide-area level between sites (MAD-Max refuses more than one site)
    num_sites,
    wan_bw,
    wan_latency_s,
    // the default model's second GPU type on the last nodes (MAD-Max has one)
    second_gpu_nodes,
    second_gpu_name,
    second_f64_flops,
    second_f32_flops,
    second_f16_flops,
    second_i8_ops,
    second_fp8_flops,
    second_sm_count,
    second_mem_cap,
    second_mem_bw,
    second_num_nvlinks,
    second_bw_per_nvlink,
}

raw_config! {
    /// A MAD-Max task config (`task_cfgs/*/*.json`, SPEC section 2.3). The task class is chosen by
    /// the model's type, not by anything here.
    RawTask, "task";
    name,
    kind = "type",
    mlp_parallel,
    mlp_parallel_degree,
    emb_parallel,
    emb_parallel_degree,
    transformer_parallel,
    transformer_parallel_degree,
    local_mlp_bs,
    local_emb_bs,
    local_transformer_bs,
    freeze_top_mlp,
    freeze_bot_mlp,
    freeze_emb,
    freeze_transformer,
    min_frozen_layer,
    // which model evaluates the run, and the default model's settings (MAD-Max ignores these)
    mode,
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
    fp8_param_gather,
    overlap_tp_comm,
    fused_loss,
    metric_losses,
    fp8,
    fp32_grads,
    data_loader_samples_per_s,
    loader_frames_per_sample,
    loader_frame_stride,
    loader_keyframe_interval,
    loader_frame_width,
    loader_frame_height,
    loader_cores_per_node,
    loader_core_pixels_per_s,
    loader_gpu_pixels_per_s,
    loader_bytes_per_sample,
    loader_storage_bytes_per_s,
    emb_sharding,
    bot_mlp,
    conv_layout,
    collective_cycle_ms,
    input_tokens,
    output_tokens,
    weight_format,
    kv_format,
    batching,
    kv_page_tokens,
    step_tokens,
    prefill_steps,
    scheduler_steps,
    host_step_ms,
    host_request_ms,
    request_rate,
    burst_requests,
    cuda_graphs,
    custom_all_reduce,
    sampling,
    request_mix,
    length_spread,
}

/// The three configs of one run. `None` means the config is absent (or `null`).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct RawScenario {
    pub model: Option<RawModel>,
    pub system: Option<RawSystem>,
    pub task: Option<RawTask>,
}

/// A file holding a run: either `{"model", "system", "task"}` or a golden case file, whose
/// configs sit under `inputs`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct RawFile {
    pub model: Option<RawModel>,
    pub system: Option<RawSystem>,
    pub task: Option<RawTask>,
    pub inputs: Option<RawScenario>,
}

impl RawFile {
    /// The scenario this file describes: its configs, or those under `inputs` (a case file).
    /// A file with both is refused: which of the two it means cannot be told.
    pub fn into_scenario(self) -> Result<RawScenario, String> {
        match self.inputs {
            Some(_) if self.model.is_some() || self.system.is_some() || self.task.is_some() => Err(BOTH_INPUTS.into()),
            Some(inputs) => Ok(inputs),
            None => Ok(RawScenario { model: self.model, system: self.system, task: self.task }),
        }
    }
}

/// Why a file with configs both at its top level and under `inputs` is refused.
pub const BOTH_INPUTS: &str = "the file has configs both at its top level (model, system or task) and under \"inputs\" (a case file); keep one of the two";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_config_reads_its_keys_once_ignores_others_and_takes_null_as_absent() {
        let text = r#"{"name": "m", "type": "LLM", "num_kv_heads": null, "comment": [1, 2], "attention_dim": 4096}"#;
        let m: RawModel = serde_json::from_str(text).expect("a model");
        assert_eq!(m.name, Some(RawValue::Str(Arc::from("m"))));
        assert_eq!(m.kind, Some(RawValue::Str(Arc::from("LLM"))), "`type` fills `kind`");
        assert_eq!(m.attention_dim, Some(RawValue::Int(4096)));
        assert_eq!((m.num_kv_heads, m.emb_dim), (None, None), "null and missing are alike");
        // The same from a JSON value (the page's path) as from text (the CLI's).
        let value: serde_json::Value = serde_json::from_str(text).expect("JSON");
        let from_value: RawModel = serde_json::from_value(value).expect("a model");
        assert_eq!(
            format!("{from_value:?}"),
            format!("{:?}", serde_json::from_str::<RawModel>(text).expect("a model"))
        );
    }

    #[test]
    fn a_config_that_is_not_an_object_or_repeats_a_key_is_refused() {
        let e = serde_json::from_str::<RawTask>("[1, 2]").expect_err("a list");
        assert!(e.to_string().starts_with("got [1, 2] for the task config, not an object"), "{e}");
        let e = serde_json::from_str::<RawSystem>(r#"{"num_nodes": 1, "num_nodes": 2}"#).expect_err("twice");
        assert!(e.to_string().starts_with("duplicate field `num_nodes`"), "{e}");
        // A key the config does not read may repeat: it is ignored.
        assert!(serde_json::from_str::<RawSystem>(r#"{"x": 1, "x": 2}"#).is_ok());
        // A file's absent or null config is `None`.
        let f: RawFile = serde_json::from_str(r#"{"model": null, "task": {"name": "t"}}"#).expect("a file");
        assert!(f.model.is_none() && f.system.is_none());
        assert_eq!(f.task.and_then(|t| t.name), Some(RawValue::Str(Arc::from("t"))));
    }
}
