//! Reference mode: the rules MAD-Max checks on a plan (SPEC 5.2), each with a sentence that says
//! what is wrong and the reference's own message.

use crate::engine::scenario::{Arch, Family, Scenario, Spec, Strategy, TaskKind};
use crate::engine::validate::{undefined_strategy_message, FieldError, MAX_COUNT};

/// One parallel spec of a task and what the reference calls its component.
struct Component<'a> {
    key: &'static str,
    /// The reference's word in its messages ("MLP", "EMB", "Transformer").
    word: &'static str,
    spec: &'a Spec,
    allowed: &'static [Strategy],
}

const DENSE: &[Strategy] = &[Strategy::Ddp, Strategy::Fsdp, Strategy::Tp, Strategy::Pp];
const EMB: &[Strategy] = &[Strategy::Ddp, Strategy::Mp];

/// Every reference rule the scenario breaks.
pub fn check(s: &Scenario) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let plan = &s.task.plan;
    let n_all = s.system.num_devices;
    let per_node = s.system.devices_per_node();
    let family = s.model.arch.family();
    if let Some(g) = &s.system.second {
        errors.push(FieldError::new(
            "system.second_gpu_nodes",
            format!(
                "MAD-Max's paper model has one GPU type, not a second ({}) on {} nodes: evaluate this cluster with the default model (task.mode \"default\"), or remove the second type",
                g.name, g.nodes
            ),
        ));
    }
    if let Some(w) = &s.system.wan {
        errors.push(FieldError::new(
            "system.num_sites",
            format!(
                "MAD-Max's paper model has one network level between nodes, not {} sites joined by a wide-area link: evaluate this cluster with the default model (task.mode \"default\"), or set 1 site",
                w.sites
            ),
        ));
    }

    let components = [
        plan.mlp.as_ref().map(|spec| Component { key: "mlp_parallel", word: "MLP", spec, allowed: DENSE }),
        Some(Component { key: "emb_parallel", word: "EMB", spec: &plan.emb, allowed: EMB }),
        plan.transformer.as_ref().map(|spec| Component {
            key: "transformer_parallel",
            word: "Transformer",
            spec,
            allowed: DENSE,
        }),
    ];

    for c in components.iter().flatten() {
        // Field paths, built only for an error.
        let path = || format!("task.{}", c.key);
        for (i, level) in c.spec.levels().iter().enumerate() {
            let at = || format!("task.{}[{i}]", c.key);
            if c.spec.levels()[..i].iter().any(|l| l.strategy == level.strategy) {
                errors.push(
                    FieldError::new(
                        at(),
                        format!(
                            "{} appears twice; merge the two levels into one of their combined degree",
                            level.strategy
                        ),
                    )
                    .reference(format!("repeat {} parallelization strategies are refactorable", c.word)),
                );
            }
            if level.strategy == Strategy::Fsdp && i > 0 && c.key != "emb_parallel" {
                errors.push(
                    FieldError::new(
                        at(),
                        "fsdp must be the first level (sharded weights are gathered within the node)",
                    )
                    .reference("FSDP can only be applied as first degree of parallelism!"),
                );
            }
            if !c.allowed.contains(&level.strategy) {
                let names: Vec<&str> = c.allowed.iter().map(|s| s.config_name()).collect();
                errors.push(
                    FieldError::new(
                        at(),
                        format!("{} is not available for {}; use {}", level.strategy, c.word, names.join(" or ")),
                    )
                    .reference(format!(
                        "{}: {}",
                        undefined_strategy_message(c.key),
                        level.strategy
                    )),
                );
            }
            if level.degree < 2 {
                errors.push(
                    FieldError::new(
                        format!("{}_degree[{i}]", path()),
                        "a degree of 1 does nothing; remove the level (degrees must be at least 2)",
                    )
                    .reference(format!("{} parallelization degree of 1 is redundant", c.word)),
                );
            }
        }
        let product: u128 = c.spec.levels().iter().map(|l| l.degree as u128).product();
        if product != n_all as u128 {
            errors.push(
                FieldError::new(
                    format!("{}_degree", path()),
                    format!("degrees multiply to {product}, the cluster has {n_all} GPUs"),
                )
                .reference(format!("Mismatch in {} parallelization and number of devices", c.word)),
            );
        }
        if c.spec.len() > 2 {
            errors.push(
                FieldError::new(
                    path(),
                    format!("has {} levels; MAD-Max plans have at most 2 (within a node, across nodes)", c.spec.len()),
                )
                .reference("Only allow for up to 2D parallelism for now"),
            );
        } else if c.spec.len() == 2 && c.spec.first_degree() != per_node && c.spec.first_degree() != n_all {
            errors.push(
                FieldError::new(
                    format!("{}_degree[0]", path()),
                    format!(
                        "the first level of a 2-level plan spans one node: its degree must be {per_node} (GPUs per node), got {}",
                        c.spec.first_degree()
                    ),
                )
                .reference("Only allow for up to 2D parallelism for now"),
            );
        }
    }

    // DLRM-family MLP tensor parallelism pairs layers (Q24): both layer counts must be even.
    if let (Some(m), Arch::Dlrm(d) | Arch::DlrmMoe(d, _) | Arch::DlrmTransformer(d, _)) = (&plan.mlp, &s.model.arch) {
        if m.levels().iter().any(|l| l.strategy == Strategy::Tp) {
            for (key, n) in [("num_bot_mlp_layers", d.bot_mlp_layers), ("num_top_mlp_layers", d.top_mlp_layers)] {
                if n % 2 == 1 {
                    errors.push(FieldError::new(
                        format!("model.{key}"),
                        format!("is {n}; tensor-parallel MLPs all-reduce after pairs of layers, so it must be even"),
                    ));
                }
            }
        }
    }

    // Global batches must agree (SPEC 5.1).
    let dup = |spec: &Spec, set: &[Strategy]| -> u128 { spec.product_of(set) as u128 };
    let g_emb = plan.local_emb_batch as u128 * dup(&plan.emb, &[Strategy::Ddp]);
    if g_emb > MAX_COUNT as u128 {
        errors.push(FieldError::new(
            "task.local_emb_bs",
            format!("the global batch ({g_emb} samples) exceeds {MAX_COUNT}; use a smaller local batch"),
        ));
    }
    let batches = [
        (plan.mlp.as_ref(), plan.local_mlp_batch, "local_mlp_bs", "MLP"),
        (plan.transformer.as_ref(), plan.local_transformer_batch, "local_transformer_bs", "transformer"),
    ];
    for (spec, local, key, word) in batches {
        if let (Some(spec), Some(local)) = (spec, local) {
            let g = local as u128 * dup(spec, &[Strategy::Ddp, Strategy::Fsdp]);
            if g != g_emb {
                let mut e = FieldError::new(
                    format!("task.{key}"),
                    format!(
                        "global batches differ: {word} {local} x {} = {g}, embeddings {} x {} = {g_emb}",
                        dup(spec, &[Strategy::Ddp, Strategy::Fsdp]),
                        plan.local_emb_batch,
                        dup(&plan.emb, &[Strategy::Ddp]),
                    ),
                );
                if key == "local_mlp_bs" {
                    e = e.reference("Global MLP and EMB batch sizes must match");
                }
                errors.push(e);
            }
        }
    }

    // Fine-tuning must train something (SPEC 5.2, "At run time").
    if let TaskKind::Finetune(f) = &s.task.kind {
        let all_frozen = match family {
            Family::Dlrm | Family::DlrmMoe => f.top_mlp && f.bot_mlp && f.emb,
            Family::DlrmTransformer => f.top_mlp && f.bot_mlp && f.emb && f.transformer,
            Family::Llm | Family::LlmMoe | Family::Vit => f.emb && f.transformer,
            Family::Cnn | Family::EncDec => false,
        };
        if all_frozen {
            errors.push(
                FieldError::new(
                    "task.freeze_emb",
                    "every component is frozen, so fine-tuning would train nothing; unfreeze one",
                )
                .reference("need to have at least one component that needs to be trained."),
            );
        }
    }
    errors
}
