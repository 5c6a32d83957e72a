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

/// A MAD-Max model config (`model_cfgs/*/*.json`). Which fields are required depends on `type`
/// (SPEC section 2.1).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct RawModel {
    pub name: Field,
    #[serde(rename = "type")]
    pub kind: Field,
    pub bytes_per_nonemb_param: Field,
    pub bytes_per_emb_param: Field,
    // DLRM family
    pub num_bot_mlp_layers: Field,
    pub num_top_mlp_layers: Field,
    pub mlp_dim: Field,
    pub num_tables: Field,
    pub entries_per_table: Field,
    pub emb_dim: Field,
    pub pooling_size: Field,
    /// Optional (the default model): the bottom MLP's input features and layer widths.
    pub bot_mlp_widths: Field,
    /// Optional (the default model): the top MLP's layer widths.
    pub top_mlp_widths: Field,
    // MoE
    pub num_experts: Field,
    pub num_active_experts: Field,
    // transformers
    pub num_transformer_layers: Field,
    pub num_transformer_heads: Field,
    pub attention_dim: Field,
    pub transformer_fc_dim: Field,
    pub transformer_seq_len: Field,
    // ViT
    pub image_size: Field,
    pub patch_dim: Field,
    // default model only (MAD-Max ignores these keys)
    pub num_kv_heads: Field,
    pub ffn_kind: Field,
    pub tied_embeddings: Field,
    pub attention: Field,
    pub causal: Field,
    pub capacity_factor: Field,
    pub dropout: Field,
}

/// A MAD-Max system config (`system_cfgs/*/*.json`, SPEC section 2.2).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct RawSystem {
    pub name: Field,
    #[serde(rename = "type")]
    pub kind: Field,
    pub num_devices: Field,
    pub num_nodes: Field,
    pub f64_flops: Field,
    pub f32_flops: Field,
    pub f16_flops: Field,
    pub i8_ops: Field,
    /// Optional: absent on GPUs without FP8 tensor cores.
    pub fp8_flops: Field,
    pub flops_util: Field,
    pub mem_cap: Field,
    pub mem_bw: Field,
    pub mem_bw_util: Field,
    pub num_nvlinks: Field,
    pub bw_per_nvlink: Field,
    pub nvlink_util: Field,
    pub num_ibroce_ports: Field,
    pub ibroce_bw: Field,
    pub ibroce_util: Field,
    pub ar_perc_intra: Field,
    // the default model's link latency (MAD-Max ignores it)
    pub nic_latency_s: Field,
}

/// A MAD-Max task config (`task_cfgs/*/*.json`, SPEC section 2.3). The task class is chosen by
/// the model's type, not by anything here.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct RawTask {
    pub name: Field,
    #[serde(rename = "type")]
    pub kind: Field,
    pub mlp_parallel: Field,
    pub mlp_parallel_degree: Field,
    pub emb_parallel: Field,
    pub emb_parallel_degree: Field,
    pub transformer_parallel: Field,
    pub transformer_parallel_degree: Field,
    pub local_mlp_bs: Field,
    pub local_emb_bs: Field,
    pub local_transformer_bs: Field,
    pub freeze_top_mlp: Field,
    pub freeze_bot_mlp: Field,
    pub freeze_emb: Field,
    pub freeze_transformer: Field,
    pub min_frozen_layer: Field,
    // which model evaluates the run, and the default model's settings (MAD-Max ignores these)
    pub mode: Field,
    pub micro_batch: Field,
    pub virtual_stages: Field,
    pub zero_stage: Field,
    pub recompute: Field,
    pub sequence_parallel: Field,
    pub collective: Field,
    pub overlap_grad_reduce: Field,
    pub overlap_param_gather: Field,
    pub overlap_tp_comm: Field,
    pub fused_loss: Field,
    pub fp8: Field,
    pub fp32_grads: Field,
    pub data_loader_samples_per_s: Field,
    pub emb_sharding: Field,
    pub input_tokens: Field,
    pub output_tokens: Field,
    pub weight_format: Field,
    pub kv_format: Field,
    pub batching: Field,
    pub kv_page_tokens: Field,
    pub step_tokens: Field,
    pub request_rate: Field,
    pub cuda_graphs: Field,
    pub custom_all_reduce: Field,
    pub request_mix: Field,
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
