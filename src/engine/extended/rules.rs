//! What a transformer plan must satisfy in the default model, each rule with a sentence that
//! names the field and the fix. (Reference mode has its own rules: MAD-Max's.)
//!
//! One job: refusing the default model's scenarios it cannot evaluate, one function per rule.

use super::shape::Dims;
use crate::engine::scenario::{
    Arch, Dlrm, LengthSpread, PrefillSteps, RequestClass, Sampling, Scenario, Spec, Strategy,
};
use crate::engine::validate::{divisor_at_most, FieldError};

/// Most ops one default-model timeline may hold ([`timeline_ops`]): a timeline of the last
/// pipeline stage has 4 to 21 ops per layer per micro-batch (a 7B model with 32 layers may run
/// some 4,000 micro-batches per iteration). The limit keeps one evaluation under about 30 ms
/// natively and 70 ms in a browser (where the page must not block longer than a frame or
/// two) and its memory under 50 MB.
pub const MAX_OPS: u64 = 1_000_000;

/// Most tokens one request may generate: a decode step each, every step a little arithmetic.
pub const MAX_OUTPUT_TOKENS: u64 = 1_000_000;

/// Most requests a burst may send at once ([`crate::engine::scenario::Setup::burst_requests`]).
/// Throughput benchmarks send 1,000 to 5,000.
pub const MAX_BURST_REQUESTS: u64 = 20_000;

/// Most work a burst may take ([`burst_work`]): the page runs it on its main thread, so about
/// 40 ms natively and a few frames in a browser.
pub const MAX_BURST_WORK: u64 = 50_000_000;

/// The work of running a burst of `n` requests step by step, in request-visits: each of its
/// steps that carries a prompt chunk or ends a request passes over the requests in flight, at
/// most the batch. Its prompts take `ceil(input / step_tokens)` chunk steps each, on average
/// over its kinds of request ([`super::serving::request_classes`]).
pub fn burst_work(s: &Scenario, n: u64, seq: u64) -> f64 {
    let setup = &s.task.setup;
    let budget = setup.step_tokens.max(1) as f64;
    let classes = super::serving::request_classes(setup, seq);
    let chunks: f64 = classes.iter().map(|c| c.share * (c.input_tokens as f64 / budget).ceil()).sum();
    let in_flight = s.task.plan.local_transformer_batch.unwrap_or(1).clamp(1, n.max(1));
    n as f64 * (chunks + 1.0) * in_flight as f64
}

const ALLOWED: &[Strategy] = &[Strategy::Ddp, Strategy::Fsdp, Strategy::Tp, Strategy::Pp, Strategy::Cp, Strategy::Ep];

/// Every rule the scenario breaks (empty when the default model can evaluate it).
pub fn check(s: &Scenario) -> Vec<FieldError> {
    let mut errors = Vec::new();
    fp8(&mut errors, s);
    expert_tp(&mut errors, s);
    expert_cp(&mut errors, s);
    recompute_modules(&mut errors, s);
    zero_shard_ranks(&mut errors, s);
    zero1_broadcast(&mut errors, s);
    if s.system.second.is_some() && super::serving::serves(s) {
        errors.push(FieldError::new(
            "system.second_gpu_nodes",
            "serving on two GPU types is not modelled yet (replicas on each type would serve at their own pace): remove the second type, or train",
        ));
    }
    if let (Arch::Cnn(_), Some(spec)) = (&s.model.arch, &s.task.plan.mlp) {
        levels(&mut errors, "mlp_parallel", spec, &[Strategy::Ddp], s.system.num_devices);
        return errors;
    }
    if s.model.arch.family().is_dlrm() {
        if let Arch::Dlrm(m) | Arch::DlrmMoe(m, _) | Arch::DlrmTransformer(m, _) = &s.model.arch {
            widths_agree(&mut errors, m);
        }
        let plan = &s.task.plan;
        let dense = &[Strategy::Ddp, Strategy::Fsdp, Strategy::Tp][..];
        for (key, spec, allowed) in [
            ("mlp_parallel", plan.mlp.as_ref(), dense),
            ("emb_parallel", Some(&plan.emb), &[Strategy::Ddp, Strategy::Mp][..]),
            ("transformer_parallel", plan.transformer.as_ref(), dense),
        ] {
            if let Some(spec) = spec {
                levels(&mut errors, key, spec, allowed, s.system.num_devices);
            }
        }
        return errors;
    }
    let Some(d) = Dims::of(&s.model) else { return errors };
    let Some(spec) = s.task.plan.transformer.as_ref() else { return errors };
    let key = "task.transformer_parallel";
    levels(&mut errors, "transformer_parallel", spec, ALLOWED, s.system.num_devices);
    let degree = |st: Strategy| spec.product_of(&[st]);
    let (tp, pp, cp, ep) = (degree(Strategy::Tp), degree(Strategy::Pp), degree(Strategy::Cp), degree(Strategy::Ep));
    if d.is_encoder_decoder() {
        encoder_decoder(&mut errors, s, cp, ep);
    }
    let heads = d.heads as u64;
    if tp > 1 && !heads.is_multiple_of(tp) {
        errors.push(FieldError::new(
            format!("{key}_degree"),
            format!("tensor parallelism of {tp} does not divide the {heads} attention heads; use a divisor of {heads}"),
        ));
    }
    if pp > d.layers {
        errors.push(FieldError::new(
            format!("{key}_degree"),
            format!(
                "{pp} pipeline stages for {} layers: every stage needs at least one layer; use at most {} stages",
                d.layers, d.layers
            ),
        ));
    }
    let seq = d.seq as u64;
    if cp > 1 && !seq.is_multiple_of(cp) {
        errors.push(FieldError::new(
            format!("{key}_degree"),
            format!(
                "context parallelism of {cp} does not divide the sequence of {seq} tokens; use a divisor of {seq}, such as {}",
                divisor_at_most(seq, cp)
            ),
        ));
    }
    if ep > 1 {
        let experts = d.experts as u64;
        if experts <= 1 {
            errors.push(FieldError::new(
                format!("{key}_degree"),
                "expert parallelism needs a mixture-of-experts model (LLM_MoE); remove the ep level",
            ));
        } else if !experts.is_multiple_of(ep) {
            errors.push(FieldError::new(
                format!("{key}_degree"),
                format!(
                    "expert parallelism of {ep} does not divide the {experts} experts; use a divisor of {experts}, such as {}",
                    divisor_at_most(experts, ep)
                ),
            ));
        }
    }
    let setup = &s.task.setup;
    let local = s.task.plan.local_transformer_batch.unwrap_or(1);
    if let Some(mb) = setup.micro_batch {
        if mb > local || !local.is_multiple_of(mb) {
            errors.push(FieldError::new(
                "task.micro_batch",
                format!(
                    "a micro-batch of {mb} does not divide the local batch of {local} samples; use a divisor of {local}, such as {}",
                    divisor_at_most(local, mb)
                ),
            ));
        }
    }
    // Bounded work: micro-batches x layers of a stage (training), decode steps (serving).
    let serving = matches!(s.task.kind, crate::engine::scenario::TaskKind::Inference);
    let ops = timeline_ops(s);
    if !serving && ops > MAX_OPS {
        let micro = setup.micro_batch.unwrap_or(if pp > 1 { 1 } else { local }).clamp(1, local.max(1));
        errors.push(FieldError::new(
            "task.micro_batch",
            format!(
                "{} micro-batches of {} layers would make a timeline of about {} ops (at most {}); use bigger micro-batches or a smaller batch per GPU",
                grouped(local / micro),
                d.layers.div_ceil(pp.max(1)),
                grouped(ops),
                grouped(MAX_OPS)
            ),
        ));
    }
    let inflight = setup.batching == crate::engine::scenario::Batching::InFlight;
    if setup.request_rate.is_some() && !inflight {
        errors.push(FieldError::new(
            "task.request_rate",
            "a request rate needs in-flight batching (set batching to inflight): a static batch starts its requests together",
        ));
    }
    if serving && setup.prefill_steps == PrefillSteps::Separate && !inflight {
        errors.push(FieldError::new(
            "task.prefill_steps",
            "where prompts are prefilled is a choice of in-flight batching (set batching to inflight): a static batch prefills its prompts together before decoding",
        ));
    }
    if serving && setup.scheduler_steps > 1 && (!inflight || setup.prefill_steps != PrefillSteps::Separate) {
        errors.push(FieldError::new(
            "task.scheduler_steps",
            "rounds of several decode steps are modelled with in-flight batching and prompts in steps of their own (set batching to inflight and prefill steps to separate), as vLLM 0.6 and SGLang run them",
        ));
    }
    if let Some(n) = setup.burst_requests {
        let why = if !inflight {
            Some("a burst needs in-flight batching (set batching to inflight): a static batch is one batch".to_string())
        } else if setup.request_rate.is_some() {
            Some(
                "a burst sends its requests at once and a request rate spreads them out: clear one of the two"
                    .to_string(),
            )
        } else if n > MAX_BURST_REQUESTS {
            Some(format!("at most {} requests in a burst (it is run step by step)", grouped(MAX_BURST_REQUESTS)))
        } else if burst_work(s, n, d.seq as u64) > MAX_BURST_WORK as f64 {
            Some(format!(
                "a burst of {} requests, up to {} in flight, their prompts in steps of {} tokens, is too long to run step by step here (about {} request-steps, at most {}): send fewer requests, keep fewer in flight or allow more tokens per step",
                grouped(n),
                grouped(s.task.plan.local_transformer_batch.unwrap_or(1).min(n)),
                grouped(setup.step_tokens),
                grouped(burst_work(s, n, d.seq as u64).min(u64::MAX as f64) as u64),
                grouped(MAX_BURST_WORK)
            ))
        } else {
            None
        };
        errors.extend(why.map(|why| FieldError::new("task.burst_requests", why)));
    }
    if serving && setup.output_tokens.unwrap_or(0) > MAX_OUTPUT_TOKENS {
        errors.push(FieldError::new(
            "task.output_tokens",
            format!("at most {} generated tokens per request (one decode step each)", grouped(MAX_OUTPUT_TOKENS)),
        ));
    }
    if serving && setup.input_tokens.unwrap_or(0).saturating_add(setup.output_tokens.unwrap_or(0)) > 1 << 24 {
        errors.push(FieldError::new("task.input_tokens", "prompt and generated tokens together: at most 16,777,216"));
    }
    if !setup.request_mix.is_empty() {
        let mix = |message: String| FieldError::new("task.request_mix", message);
        if !serving {
            errors.push(mix("a request mix is for LLM serving (an inference task)".into()));
        } else if !inflight {
            errors.push(mix("a request mix needs in-flight batching (set batching to inflight): a static batch's requests share one length".into()));
        }
        if setup.input_tokens.is_some() || setup.output_tokens.is_some() {
            errors
                .push(mix("a request mix gives every request's lengths: clear the prompt and generated tokens".into()));
        }
        for c in &setup.request_mix {
            if c.output_tokens > MAX_OUTPUT_TOKENS {
                errors.push(mix(format!(
                    "{}/{}: at most {} generated tokens per request (one decode step each)",
                    c.input_tokens,
                    c.output_tokens,
                    grouped(MAX_OUTPUT_TOKENS)
                )));
            } else if c.input_tokens.saturating_add(c.output_tokens) > 1 << 24 {
                errors.push(mix(format!(
                    "{}/{}: prompt and generated tokens together: at most 16,777,216",
                    c.input_tokens, c.output_tokens
                )));
            }
        }
    }
    if !serving && setup.sampling != Sampling::Greedy {
        errors.push(FieldError::new(
            "task.sampling",
            "a way of sampling the next token is for LLM serving (an inference task)",
        ));
    }
    if setup.length_spread == LengthSpread::Exponential {
        let spread = |message: String| FieldError::new("task.length_spread", message);
        if !serving {
            errors.push(spread("a spread of request lengths is for LLM serving (an inference task)".into()));
        } else if !inflight {
            errors.push(spread("a spread of request lengths needs in-flight batching (set batching to inflight): a static batch's requests share one length".into()));
        } else if !setup.request_mix.is_empty() {
            errors.push(spread(
                "a request mix lists its kinds' lengths itself: set the spread to fixed, or clear the mix".into(),
            ));
        } else if let Some(d) = Dims::of(&s.model) {
            let classes = super::serving::request_classes(setup, d.seq as u64);
            let longest = |f: fn(&RequestClass) -> u64| classes.iter().map(f).max().unwrap_or(0);
            let (i, o) = (longest(|c| c.input_tokens), longest(|c| c.output_tokens));
            if o > MAX_OUTPUT_TOKENS {
                errors.push(spread(format!(
                    "the longest answers of the spread would generate {} tokens: at most {} (lower the generated tokens)",
                    grouped(o),
                    grouped(MAX_OUTPUT_TOKENS)
                )));
            } else if i.saturating_add(o) > 1 << 24 {
                errors.push(spread(format!(
                    "the longest requests of the spread would hold {} tokens: at most 16,777,216 (lower the prompt or generated tokens)",
                    grouped(i + o)
                )));
            }
        }
    }
    let v = setup.virtual_stages;
    if v > 1 {
        let m = local / setup.micro_batch.unwrap_or(1).clamp(1, local.max(1));
        if pp <= 1 {
            errors.push(FieldError::new(
                "task.virtual_stages",
                "interleaving needs pipeline parallelism (a pp level of degree 2 or more); set 1",
            ));
        } else if pp.saturating_mul(v) > d.layers {
            errors.push(FieldError::new(
                "task.virtual_stages",
                format!("{pp} stages x {v} chunks exceed the {} layers; every chunk needs a layer", d.layers),
            ));
        } else if !m.is_multiple_of(pp) {
            errors.push(FieldError::new(
                "task.virtual_stages",
                format!("the interleaved schedule needs the {m} micro-batches to be a multiple of the {pp} stages"),
            ));
        }
    }
    errors
}

/// What the default model does not model for an encoder-decoder: serving it (a decoder that
/// decodes against a cached encoder output), and splitting its sequences (context parallelism;
/// its input and target lengths differ) or its feed-forward layers into experts.
fn encoder_decoder(errors: &mut Vec<FieldError>, s: &Scenario, cp: u64, ep: u64) {
    if matches!(s.task.kind, crate::engine::scenario::TaskKind::Inference) {
        errors.push(FieldError::new(
            "task.type",
            "serving an encoder-decoder model is not modelled yet (its decoder decodes against the encoder's cached keys and values): use pretrain or finetune",
        ));
    }
    for (degree, what) in [(cp, "context parallelism (cp)"), (ep, "expert parallelism (ep)")] {
        if degree > 1 {
            errors.push(FieldError::new(
                "task.transformer_parallel",
                format!("{what} is not modelled for an encoder-decoder model: use ddp, fsdp, tp and pp levels"),
            ));
        }
    }
}

/// The model of a scenario that sets `key`, a setting only a mixture of experts in training
/// takes; `None`, with `dense` or `serving` said as the refusal, for any other.
fn moe_in_training(
    errors: &mut Vec<FieldError>,
    s: &Scenario,
    key: &str,
    dense: &'static str,
    serving: &'static str,
) -> Option<Dims> {
    let Some(d) = Dims::of(&s.model).filter(|d| d.is_moe()) else {
        errors.push(FieldError::new(key, dense));
        return None;
    };
    if matches!(s.task.kind, crate::engine::scenario::TaskKind::Inference) {
        errors.push(FieldError::new(key, serving));
        return None;
    }
    Some(d)
}

/// The product of a transformer plan's levels of `strategy` (1 without a transformer plan).
fn plan_degree(s: &Scenario, strategy: Strategy) -> u64 {
    s.task.plan.transformer.as_ref().map_or(1, |spec| spec.product_of(&[strategy]))
}

/// Expert tensor parallelism ([`crate::engine::scenario::Setup::expert_tp`]): a mixture of
/// experts trained with tensor parallelism, its experts split by a divisor of that degree. The
/// tensor-parallel ranks that do not split an expert join expert parallelism, so together with
/// the ep level they must divide the experts, and each needs its own share of the tokens:
/// sequence parallelism (Megatron-core asserts it for a mixture of experts with tensor
/// parallelism).
fn expert_tp(errors: &mut Vec<FieldError>, s: &Scenario) {
    let Some(etp) = s.task.setup.expert_tp else { return };
    let key = "task.expert_tp";
    let Some(d) = moe_in_training(
        errors,
        s,
        key,
        "expert tensor parallelism splits the experts of a mixture of experts (LLM_MoE); remove it for this model",
        "serving splits each expert by tensor parallelism, as the engines do; remove expert_tp",
    ) else {
        return;
    };
    let (tp, ep) = (plan_degree(s, Strategy::Tp), plan_degree(s, Strategy::Ep));
    if etp > tp || !tp.is_multiple_of(etp) {
        errors.push(FieldError::new(
            key,
            format!(
                "expert tensor parallelism of {etp} must divide the tensor parallelism of {tp}: use {}, or 1 for whole experts",
                divisor_at_most(tp, etp)
            ),
        ));
        return;
    }
    let experts = d.experts as u64;
    // With context-parallel ranks holding different experts too, they join; a count of them
    // that does not divide cp is [`expert_cp`]'s to refuse.
    let ecp = s.task.setup.experts_spread_over_cp();
    let joined = ep * (tp / etp) * ecp;
    if plan_degree(s, Strategy::Cp).is_multiple_of(ecp) && !experts.is_multiple_of(joined) {
        errors.push(FieldError::new(
            key,
            format!(
                "with expert tensor parallelism of {etp}, {} ranks of each tensor-parallel group of {tp} hold experts of their own and join the {ep}-way expert parallelism: {joined} ranks do not divide the {experts} experts; use an expert tensor parallelism or an ep degree whose product with it divides them",
                tp / etp
            ),
        ));
    }
    if etp < tp && !s.task.setup.sequence_parallel {
        errors.push(FieldError::new(
            "task.sequence_parallel",
            format!("expert tensor parallelism of {etp} below the tensor parallelism of {tp} needs sequence parallelism: each rank routes its own share of the tokens to whole experts (Megatron-core requires it); turn it on"),
        ));
    }
}

/// Expert parallelism over context-parallel ranks ([`crate::engine::scenario::Setup::expert_cp`]):
/// a mixture of experts trained with context parallelism, a divisor of that degree of its
/// ranks holding different experts; with the ep level (and the tensor-parallel ranks that hold
/// whole experts, checked by [`expert_tp`] when it is given) they must divide the experts.
fn expert_cp(errors: &mut Vec<FieldError>, s: &Scenario) {
    let Some(ecp) = s.task.setup.expert_cp else { return };
    let key = "task.expert_cp";
    let Some(d) = moe_in_training(
        errors,
        s,
        key,
        "expert parallelism over context-parallel ranks spreads the experts of a mixture of experts (LLM_MoE); remove it for this model",
        "serving has no context parallelism to spread experts over; remove expert_cp",
    ) else {
        return;
    };
    let (cp, ep) = (plan_degree(s, Strategy::Cp), plan_degree(s, Strategy::Ep));
    if cp == 1 && ecp > 1 {
        errors.push(FieldError::new(
            key,
            "the plan has no context parallelism to spread experts over: add a cp level, or remove expert_cp",
        ));
        return;
    }
    if ecp > cp || !cp.is_multiple_of(ecp) {
        errors.push(FieldError::new(
            key,
            format!(
                "{ecp} context-parallel ranks holding different experts must divide the context parallelism of {cp}: use {}, or 1 for the same experts on each",
                divisor_at_most(cp, ecp)
            ),
        ));
        return;
    }
    let experts = d.experts as u64;
    let joined = ep * ecp;
    if s.task.setup.expert_tp.is_none() && !experts.is_multiple_of(joined) {
        errors.push(FieldError::new(
            key,
            format!(
                "{ecp} context-parallel ranks holding different experts join the {ep}-way expert parallelism: {joined} ranks do not divide the {experts} experts; use an expert_cp or an ep degree whose product divides them"
            ),
        ));
    }
}

/// Selective recomputation's modules ([`crate::engine::scenario::Setup::recompute_modules`])
/// must exist in the model: `moe` and `moe_act` in a mixture of experts, `mlp` in a dense
/// transformer (a mixture of experts' feed-forward blocks are `moe`).
fn recompute_modules(errors: &mut Vec<FieldError>, s: &Scenario) {
    let m = s.task.setup.recompute_modules;
    let Some(d) = Dims::of(&s.model) else { return };
    let key = "task.recompute_modules";
    if d.is_moe() && m.mlp {
        errors.push(FieldError::new(
            key,
            "a mixture of experts' feed-forward blocks are its experts: name moe (or moe_act) instead of mlp",
        ));
    }
    if !d.is_moe() && (m.moe || m.moe_act) {
        errors.push(FieldError::new(key, "moe and moe_act recompute a mixture of experts' feed-forward blocks; this model is dense: name mlp instead"));
    }
}

/// ZeRO-1 over part of the data-parallel ranks ([`crate::engine::scenario::Setup::zero_shard_ranks`]):
/// a transformer trained with ZeRO stage 1 and no fsdp level, the group dividing the ranks that
/// hold the same weights (data, expert and context parallelism).
fn zero_shard_ranks(errors: &mut Vec<FieldError>, s: &Scenario) {
    let Some(n) = s.task.setup.zero_shard_ranks else { return };
    let key = "task.zero_shard_ranks";
    let why = if Dims::of(&s.model).is_none() {
        "ZeRO groups are modelled for transformers; remove zero_shard_ranks for this model".to_string()
    } else if matches!(s.task.kind, crate::engine::scenario::TaskKind::Inference) {
        "serving keeps no optimizer states to shard; remove zero_shard_ranks".to_string()
    } else {
        let replicas: u64 =
            [Strategy::Ddp, Strategy::Fsdp, Strategy::Ep, Strategy::Cp].iter().map(|&st| plan_degree(s, st)).product();
        let fsdp = plan_degree(s, Strategy::Fsdp) > 1;
        if fsdp || s.task.setup.zero_stage != 1 {
            format!(
                "a ZeRO group of some data-parallel ranks shards the optimizer states (ZeRO stage 1); this plan has {}: set zero_stage 1, or for sharded weights put an fsdp level within and a ddp level across",
                if fsdp { "an fsdp level (ZeRO-3)".to_string() } else { format!("ZeRO stage {}", s.task.setup.zero_stage) }
            )
        } else if n > replicas || !replicas.is_multiple_of(n) {
            format!(
                "{n} ranks per copy of the optimizer states must divide the {replicas} data-parallel ranks that hold the same weights: use {}, or leave it empty for all of them",
                divisor_at_most(replicas, n)
            )
        } else {
            return;
        }
    };
    errors.push(FieldError::new(key, why));
}

/// Updated weights broadcast from each rank after the step
/// ([`crate::engine::scenario::Setup::zero1_broadcast`], InternLM's hybrid ZeRO) are not also
/// gathered during the next forward pass (Megatron-core's `--overlap-param-gather`): a
/// framework does one or the other.
fn zero1_broadcast(errors: &mut Vec<FieldError>, s: &Scenario) {
    let setup = &s.task.setup;
    if setup.zero1_broadcast && (1..=2).contains(&setup.zero_stage) && setup.gathers_updated_weights_in_forward() {
        errors.push(FieldError::new(
            "task.zero1_broadcast",
            "broadcasting the updated weights from each rank after the step (InternLM's ZeRO) and gathering them during the next forward pass (overlap_param_gather, Megatron-core's) are two frameworks' ways: turn one of them off",
        ));
    }
}

/// FP8 training needs FP8 tensor cores, a 16-bit model to cast from, and a transformer trained
/// or run through its blocks (serving names its formats in `weight_format` and `kv_format`).
fn fp8(errors: &mut Vec<FieldError>, s: &Scenario) {
    if !s.task.setup.fp8 {
        return;
    }
    let why = if s.model.arch.family().is_dlrm() {
        "FP8 GEMMs are modelled for transformer families only: turn FP8 training off".to_string()
    } else if super::serving::serves(s) {
        "serving takes its formats from weight_format and kv_format; set weight_format to fp8 instead".to_string()
    } else if s.system.second.as_ref().is_some_and(|g| g.fp8_flops_per_s.is_none()) {
        "the cluster's second GPU type has no FP8 tensor cores (no FP8 peak is set): every GPU of a synchronous step runs the same kernels, so turn FP8 training off or drop the second type".to_string()
    } else if s.system.fp8_flops_per_s.is_none() {
        "this GPU has no FP8 tensor cores (no FP8 peak is set: the A100 and older have none): pick an H100 or later, or turn FP8 training off".to_string()
    } else if s.model.bytes_per_dense_param.f64() != 2.0 {
        format!(
            "FP8 training casts a 16-bit model's activations and weights; the model has {} bytes per parameter: set 2 (bf16)",
            s.model.bytes_per_dense_param
        )
    } else {
        return;
    };
    errors.push(FieldError::new("task.fp8", why));
}

/// About how many ops the default model's timeline of a transformer scenario holds, never fewer:
/// per layer of the busiest pipeline stage and per micro-batch, a forward (and when training a
/// backward) computation of attention and feed-forward, and the collectives the plan adds
/// (tensor parallelism 2 per pass, sequence parallelism 2 more, context 1, experts 2, ZeRO-3's
/// gather, and its gradient reduction); a few per micro-batch and per iteration. An LLM
/// serving: 4 per layer, 2 per run of decode steps and a quarter per step (the arithmetic of
/// the steps a run folds together). 0 when the scenario has no transformer plan.
pub fn timeline_ops(s: &Scenario) -> u64 {
    let Some(d) = Dims::of(&s.model) else { return 0 };
    let Some(spec) = s.task.plan.transformer.as_ref() else { return 0 };
    let setup = &s.task.setup;
    let degree = |st: Strategy| spec.product_of(&[st]);
    let pp = degree(Strategy::Pp).max(1);
    if super::serving::serves(s) {
        // Runs of decode steps share an op; each step still costs a little arithmetic.
        let output = super::serving::output_tokens(setup.output_tokens, d.seq as u64);
        let decode_ops = output.min(super::serving::MAX_DECODE_OPS).saturating_mul(2);
        return d
            .layers
            .saturating_mul(4)
            .saturating_add(decode_ops)
            .saturating_add(output / 4)
            .saturating_add(pp + 64);
    }
    let tp = u64::from(degree(Strategy::Tp) > 1);
    let sp = tp * u64::from(setup.sequence_parallel);
    let cp = u64::from(degree(Strategy::Cp) > 1);
    let ep = u64::from(d.is_moe());
    let zero3 = u64::from(degree(Strategy::Fsdp) > 1 || setup.zero_stage >= 3);
    let pass = 2 + 2 * tp + 2 * sp + cp + 2 * ep + zero3;
    let per_layer = if s.task.kind.trains() { 2 * pass + zero3 } else { pass };
    // A pipeline placed by speed on two GPU types gives the faster stages more layers.
    let stage_layers = match super::mixed::StagesByType::of(s, d.layers) {
        Some(_) => d.layers.saturating_sub(pp - 1),
        None => d.layers.div_ceil(pp),
    };
    let local = s.task.plan.local_transformer_batch.unwrap_or(1);
    let micro = setup.micro_batch.unwrap_or(if pp > 1 { 1 } else { local }).clamp(1, local.max(1));
    (local / micro)
        .saturating_mul(stage_layers.saturating_mul(per_layer).saturating_add(8))
        .saturating_add(stage_layers.saturating_mul(2))
        .saturating_add(64)
}

/// A count with its thousands grouped: `1,000,000` (error messages here; the page's and the
/// CLI's counts through `units::grouped`).
pub fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The rules every spec follows: allowed strategies, each at most once, degrees multiplying to
/// the GPU count.
/// A DLRM's layer widths, when given, are both given and agree with the model: the bottom's input
/// and one width per bottom layer, ending at the embedding width (the dot interaction pairs the
/// bottom MLP's output with each embedding), and one width per top layer.
fn widths_agree(errors: &mut Vec<FieldError>, d: &Dlrm) {
    let Some(w) = &d.widths else { return };
    for (missing, given, side) in
        [("bot_mlp_widths", "top_mlp_widths", &w.bottom), ("top_mlp_widths", "bot_mlp_widths", &w.top)]
    {
        if side.is_empty() {
            errors.push(FieldError::new(
                format!("model.{missing}"),
                format!("missing: {given} is given, and the two MLPs' widths go together (leave both out for square layers of mlp_dim)"),
            ));
            return;
        }
    }
    let bottom_layers = w.bottom.len() as u64 - 1;
    if bottom_layers == 0 {
        errors.push(FieldError::new(
            "model.bot_mlp_widths",
            "needs the input features and at least one layer's width, such as 13-512-256-128",
        ));
    } else if bottom_layers != d.bot_mlp_layers {
        errors.push(FieldError::new(
            "model.bot_mlp_widths",
            format!(
                "gives {bottom_layers} layer(s) (input features first, then each layer's width) but num_bot_mlp_layers is {}: make them agree",
                d.bot_mlp_layers
            ),
        ));
    } else if w.bottom.last() != Some(&d.emb_dim) {
        errors.push(FieldError::new(
            "model.bot_mlp_widths",
            format!(
                "ends at {} but the embeddings are {} wide: the dot interaction pairs the bottom MLP's output with each embedding, so its last width must be emb_dim",
                w.bottom.last().copied().unwrap_or(0),
                d.emb_dim
            ),
        ));
    }
    if w.top.len() as u64 != d.top_mlp_layers {
        errors.push(FieldError::new(
            "model.top_mlp_widths",
            format!(
                "gives {} layer width(s) but num_top_mlp_layers is {}: make them agree",
                w.top.len(),
                d.top_mlp_layers
            ),
        ));
    }
}

fn levels(errors: &mut Vec<FieldError>, key: &str, spec: &Spec, allowed: &[Strategy], n: u64) {
    for (i, l) in spec.levels().iter().enumerate() {
        if !allowed.contains(&l.strategy) {
            let names: Vec<&str> = allowed.iter().map(|s| s.config_name()).collect();
            let why = match (l.strategy, key) {
                (Strategy::Pp, "mlp_parallel") => {
                    "the default model does not pipeline DLRM MLPs (MAD-Max's pp only divides their memory)"
                }
                (Strategy::Mp, _) => "mp shards embedding tables",
                (Strategy::Cp | Strategy::Ep, _) => "context and expert parallelism apply to transformer LLMs",
                (_, "mlp_parallel") if allowed == [Strategy::Ddp] => {
                    "a CNN trains data parallel here (each GPU holds the whole network)"
                }
                _ => "this component cannot use it",
            };
            errors.push(FieldError::new(
                format!("task.{key}[{i}]"),
                format!("{}: {why}; use {}", l.strategy, names.join(", ")),
            ));
        }
        if spec.levels()[..i].iter().any(|x| x.strategy == l.strategy) {
            errors.push(FieldError::new(
                format!("task.{key}[{i}]"),
                format!("{} appears twice; merge the two levels into one of their combined degree", l.strategy),
            ));
        }
    }
    let product: u128 = spec.levels().iter().map(|l| l.degree as u128).product();
    if product != n as u128 {
        // The fix: the last level's degree that makes the product the GPU count, if there is one.
        let others: u128 = spec.levels().iter().rev().skip(1).map(|l| l.degree as u128).product();
        let fix = match spec.levels() {
            [only] => format!("; set its degree ({}) to {n}", only.strategy),
            [.., last] if others > 0 && (n as u128).is_multiple_of(others) => {
                format!("; set the last level ({}) to {}", last.strategy, n as u128 / others)
            }
            _ => format!("; choose degrees whose product is {n}"),
        };
        errors.push(FieldError::new(
            format!("task.{key}_degree"),
            format!("degrees multiply to {product}, the cluster has {n} GPUs{fix}"),
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{validate, RawFile};

    /// What validation says of LLaMA2-70B (80 layers, 64 heads, 4,096 tokens) on 2,048 GPUs in
    /// the default model, with these task keys.
    fn problems(task: serde_json::Value) -> Vec<String> {
        let mut v: serde_json::Value = serde_json::from_str(include_str!(
            "../../../tests/data/reference/cases/llm__llama2_70b__dc_A_2048__llm_train.json"
        ))
        .expect("case");
        if let (Some(t), Some(keys)) = (v["inputs"]["task"].as_object_mut(), task.as_object()) {
            t.insert("mode".into(), "default".into());
            t.extend(keys.clone());
        }
        let raw = serde_json::from_value::<RawFile>(v).expect("case").into_scenario().expect("case");
        validate(&raw).err().unwrap_or_default().iter().map(|e| e.to_string()).collect()
    }

    #[test]
    fn plan_errors_say_the_fix() {
        let said = problems(
            serde_json::json!({"transformer_parallel": ["tp", "ddp"], "transformer_parallel_degree": [8, 128]}),
        );
        assert!(
            said.iter()
                .any(|m| m
                    .contains("degrees multiply to 1024, the cluster has 2048 GPUs; set the last level (ddp) to 256")),
            "{said:?}"
        );
        let said = problems(
            serde_json::json!({"transformer_parallel": ["pp", "ddp"], "transformer_parallel_degree": [128, 16]}),
        );
        assert!(said.iter().any(|m| m.contains("use at most 80 stages")), "{said:?}");
        let said = problems(
            serde_json::json!({"transformer_parallel": ["cp", "ddp"], "transformer_parallel_degree": [3, 2048]}),
        );
        assert!(said.iter().any(|m| m.contains("use a divisor of 4096, such as 2")), "{said:?}");
        let said = problems(serde_json::json!({"local_transformer_bs": 12, "micro_batch": 5}));
        assert!(said.iter().any(|m| m.contains("use a divisor of 12, such as 4")), "{said:?}");
        assert_eq!(divisor_at_most(4096, 3), 2);
        assert_eq!(divisor_at_most(7, 100), 7);
        assert_eq!(divisor_at_most(1 << 40, (1 << 40) - 1), 1);
    }

    #[test]
    fn counts_in_messages_group_their_thousands() {
        assert_eq!(grouped(0), "0");
        assert_eq!(grouped(999), "999");
        assert_eq!(grouped(1000), "1,000");
        assert_eq!(grouped(232_000_000_128), "232,000,000,128");
    }
}
