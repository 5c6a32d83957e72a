//! Plans and outcomes in words, as the explorer's tables and the CLI print them.

use super::*;
use crate::engine::extended::training::unset_micro_batch;

/// A short description of an explored plan: [`describe`], and for a default-model transformer
/// in training the settings the explorer chose (`micro-batch 2, selective recomputation`).
pub fn describe_outcome(s: &Scenario, o: &Outcome) -> String {
    let plan = describe(s, &o.plan);
    if searches_emb_sharding(s) && o.plan.emb.product_of(&[Strategy::Mp]) > 1 {
        let bottom = match o.setup.bot_mlp {
            BotMlpPlacement::DataParallel => "",
            BotMlpPlacement::OneGpu => ", bottom MLP on one GPU",
        };
        return format!("{plan}, {}-wise sharding{bottom}", o.setup.emb_sharding.config_name());
    }
    if serves_in_default_model(s) {
        let own = format!("the model's {}-bit", s.model.bytes_per_dense_param.f64() * 8.0);
        let format = |p: Option<Precision>| p.map_or(own.clone(), |p| p.label().to_owned());
        return format!("{plan}, {} weights, {} KV cache", format(o.setup.weight_format), format(o.setup.kv_format));
    }
    if s.model.arch.family() == Family::Cnn {
        let when = if o.setup.overlap_grad_reduce { "during" } else { "after" };
        // The layout is named when the search could change it (the base's is channels first).
        let layout = match (s.task().setup.conv_layout, o.setup.conv_layout) {
            (ConvLayout::Nhwc, _) => "",
            (ConvLayout::Nchw, ConvLayout::Nhwc) => ", channels last (NHWC)",
            (ConvLayout::Nchw, ConvLayout::Nchw) => ", channels first (NCHW)",
        };
        return format!("{plan}, gradients reduced {when} the backward pass{}{layout}", collective_words(s, o));
    }
    if !searches_settings(s) {
        return plan;
    }
    let stages = o.plan.transformer.as_ref().map_or(1, |t| t.product_of(&[Strategy::Pp]));
    let local = o.plan.local_transformer_batch.unwrap_or(1);
    let micro = o.setup.micro_batch.unwrap_or(unset_micro_batch(stages, local));
    let micro = if o.setup.micro_batch.is_none() && micro == local {
        "micro-batch: the local batch".to_owned()
    } else {
        format!("micro-batch {micro}")
    };
    let recompute = match o.setup.recompute {
        Recompute::None => "no recomputation",
        Recompute::Selective => "selective recomputation",
        Recompute::Full => "full recomputation",
    };
    let mut text = format!("{plan}, {micro}, {recompute}");
    let modules = o.setup.recompute_modules;
    if o.setup.recompute == Recompute::Selective && modules != crate::engine::scenario::RecomputeModules::default() {
        text += &format!(" of {}", modules.config_text());
    }
    if o.setup.zero_stage > 0 && o.plan.transformer.as_ref().is_some_and(|t| t.product_of(&[Strategy::Ddp]) > 1) {
        text += &format!(", ZeRO-{}", o.setup.zero_stage);
        if let Some(n) = o.setup.zero_shard_ranks {
            text += &format!(" within groups of {n} data-parallel ranks");
        }
    }
    if o.setup.sequence_parallel && o.plan.transformer.as_ref().is_some_and(|t| t.product_of(&[Strategy::Tp]) > 1) {
        text += ", sequence parallel";
    }
    let tp = o.plan.transformer.as_ref().map_or(1, |t| t.product_of(&[Strategy::Tp]));
    match o.setup.experts_split_by(tp) {
        etp if etp >= tp => {}
        1 => text += ", experts whole on each tensor-parallel rank",
        etp => text += &format!(", experts split {etp} ways"),
    }
    match o.setup.experts_spread_over_cp() {
        1 => {}
        ecp if o.plan.transformer.as_ref().is_some_and(|t| t.product_of(&[Strategy::Cp]) == ecp) => {
            text += ", experts spread over the context-parallel ranks"
        }
        ecp => text += &format!(", experts spread over {ecp} context-parallel ranks"),
    }
    if o.setup.virtual_stages > 1 {
        text += &format!(", {} chunks per GPU (interleaved)", o.setup.virtual_stages);
    }
    let transformer = |st: Strategy| o.plan.transformer.as_ref().is_some_and(|t| t.product_of(&[st]) > 1);
    if o.setup.overlap_grad_reduce && transformer(Strategy::Ddp) {
        text += ", gradients reduced during the backward pass";
    }
    if o.setup.overlap_tp_comm && transformer(Strategy::Tp) {
        text += ", tensor-parallel communication overlapped with GEMMs";
    }
    // The weight gathers' options, where the plan gathers weights ([`overlapped`]).
    if let Some(shape) = PlanShape::of_plan(&o.plan, None) {
        if settings::gathers_updated_weights(&o.setup, shape) && o.setup.gathers_updated_weights_in_forward() {
            text += ", updated weights gathered during the next forward pass";
        }
        let zero3 = shape.sharded > 1 || (shape.replicas > 1 && o.setup.zero_stage >= 3);
        if zero3 && !o.setup.prefetches_sharded_weights() {
            text += ", weights gathered without prefetch";
        }
        if o.setup.fp8 && o.setup.fp8_param_gather && settings::gathers_weights(&o.setup, shape) {
            text += ", weights gathered in FP8";
        }
    }
    text += collective_words(s, o);
    if let Some((inner, outer)) = o.plan.transformer.as_ref().and_then(out_of_megatron_order) {
        text += &format!(", {inner} nested inside {outer} (Megatron-LM nests {outer} inside {inner})");
    }
    text
}

/// The outcome's collective algorithm in words when it is not the scenario's own (else nothing).
fn collective_words(s: &Scenario, o: &Outcome) -> &'static str {
    if o.setup.collective == s.task.setup.collective {
        return "";
    }
    match o.setup.collective {
        Algorithm::Ring => ", ring collectives",
        Algorithm::Tree => ", tree all-reduces across nodes",
        Algorithm::Hierarchical => ", two-level collectives (node, then network)",
        Algorithm::InNetwork => ", all-reduces summed in the network",
    }
}

/// How Megatron-LM ranks GPUs, innermost (consecutive GPUs) first: tensor, context, expert,
/// data (sharded, then replicated) and pipeline parallelism.
pub(super) const MEGATRON_ORDER: [Strategy; 6] =
    [Strategy::Tp, Strategy::Cp, Strategy::Ep, Strategy::Fsdp, Strategy::Ddp, Strategy::Pp];

/// The first two neighbouring levels of `spec` (innermost first) that Megatron-LM nests the
/// other way round ([`MEGATRON_ORDER`]), if any.
pub(super) fn out_of_megatron_order(spec: &Spec) -> Option<(Strategy, Strategy)> {
    let rank = |s: Strategy| {
        let s = if s == Strategy::Mp { Strategy::Ddp } else { s };
        MEGATRON_ORDER.iter().position(|&m| m == s)
    };
    spec.levels().windows(2).find(|w| rank(w[0].strategy) > rank(w[1].strategy)).map(|w| (w[0].strategy, w[1].strategy))
}

/// A short description of a plan: `transformer tp 8 x ddp 256, embeddings ddp 2048, batch 8`
/// (the default model places a transformer's embeddings with its layers: they are not listed).
pub fn describe(s: &Scenario, p: &Plan) -> String {
    let arch = &s.model.arch;
    // The default model places a transformer's embeddings with its layers; DLRM tables have
    // their own plan.
    let family = arch.family();
    let default = uses_default_model(s) && !family.is_dlrm();
    let mut parts = Vec::new();
    if let Some(m) = &p.mlp {
        parts.push(if family == Family::Cnn { format!("network {m}") } else { format!("MLP {m}") });
    }
    if let Some(t) = &p.transformer {
        parts.push(format!("transformer {t}"));
    }
    if !default {
        parts.push(format!("embeddings {}", p.emb));
    }
    let batch = if family.has_mlp_plan() { p.local_mlp_batch } else { p.local_transformer_batch };
    if let Some(b) = batch {
        parts.push(format!("local batch {b}"));
    }
    parts.join(", ")
}
