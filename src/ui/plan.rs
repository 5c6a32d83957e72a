//! Keeping a task's plan consistent with its cluster and model family, so that one edit (more
//! nodes, another model) does not leave the user with a plan that no longer multiplies out.
//! Pure functions over the task config (a JSON object); no DOM.

use crate::engine::scenario::{Family, Mode};
use serde_json::{json, Map, Value};

/// The spec keys of a family's task, primary first: the component whose local batch the user
/// sets; the others follow it so that global batches agree.
pub fn spec_keys(family: Family) -> &'static [&'static str] {
    match family {
        Family::Dlrm | Family::DlrmMoe => &["mlp_parallel", "emb_parallel"],
        Family::DlrmTransformer => &["mlp_parallel", "transformer_parallel", "emb_parallel"],
        Family::Llm | Family::LlmMoe | Family::Vit | Family::EncDec => &["transformer_parallel", "emb_parallel"],
        Family::Cnn => &["mlp_parallel"],
    }
}

/// Whether the form offers task `kind` (`pretrain`, `finetune`, `inference`) for a family: a
/// CNN is not fine-tuned here (nothing says which layers it freezes), and an encoder-decoder
/// is not served (the default model does not model its decoding yet).
pub fn offers(family: Family, kind: &str) -> bool {
    !matches!((family, kind), (Family::Cnn, "finetune") | (Family::EncDec, "inference"))
}

/// The local-batch key of a spec key.
pub fn batch_key(spec_key: &str) -> &'static str {
    match spec_key {
        "mlp_parallel" => "local_mlp_bs",
        "emb_parallel" => "local_emb_bs",
        _ => "local_transformer_bs",
    }
}

/// Strategies a component accepts (cp and ep only in the default model; a CNN's network only
/// data parallel).
pub fn strategies(spec_key: &str, mode: Mode, family: Option<Family>) -> &'static [&'static str] {
    if family == Some(Family::Cnn) {
        return &["ddp"];
    }
    if family == Some(Family::EncDec) && spec_key == "transformer_parallel" {
        return &["ddp", "fsdp", "tp", "pp"];
    }
    match (spec_key, mode) {
        ("emb_parallel", _) => &["ddp", "mp"],
        ("transformer_parallel", Mode::Default) => &["ddp", "fsdp", "tp", "pp", "cp", "ep"],
        _ => &["ddp", "fsdp", "tp", "pp"],
    }
}

/// A spec's strategies and degrees, if well formed.
pub fn read_spec(task: &Map<String, Value>, key: &str) -> Option<(Vec<String>, Vec<u64>)> {
    let s = task.get(key)?.as_array()?;
    let d = task.get(&format!("{key}_degree"))?.as_array()?;
    let s: Option<Vec<String>> = s.iter().map(|v| v.as_str().map(str::to_owned)).collect();
    let d: Option<Vec<u64>> = d.iter().map(Value::as_u64).collect();
    Some((s?, d?))
}

pub fn write_spec(task: &mut Map<String, Value>, key: &str, strategies: &[String], degrees: &[u64]) {
    task.insert(key.to_owned(), json!(strategies));
    task.insert(format!("{key}_degree"), json!(degrees));
}

/// The batch-replicating factor of a spec (ddp and fsdp levels; ddp only for embeddings).
fn dup(key: &str, strategies: &[String], degrees: &[u64]) -> u64 {
    let counts = |s: &str| s == "ddp" || (s == "fsdp" && key != "emb_parallel");
    strategies.iter().zip(degrees).filter(|(s, _)| counts(s)).fold(1u64, |p, (_, d)| p.saturating_mul(*d))
}

/// Refits every spec of `task` to a cluster of `total` GPUs, `per_node` per node: a 1-level
/// spec spans all GPUs; a 2-level spec keeps its strategies, level 0 within a node and level 1
/// across nodes (collapsing to one level when one of them would be 1). Then batches follow the
/// primary component's global batch (see [`sync_batches`]).
pub fn fit_to_cluster(task: &mut Map<String, Value>, family: Family, per_node: u64, total: u64) {
    let nodes = total / per_node.max(1);
    for key in spec_keys(family) {
        let Some((strategies, degrees)) = read_spec(task, key) else { continue };
        let (s, d): (Vec<String>, Vec<u64>) = match strategies.len() {
            0 => continue,
            1 => (strategies, vec![total]),
            _ if per_node >= 2 && nodes >= 2 => (strategies[..2].to_vec(), vec![per_node, nodes]),
            _ if nodes >= 2 => (vec![strategies[1].clone()], vec![total]),
            _ => (vec![strategies[0].clone()], vec![total]),
        };
        let _ = degrees;
        write_spec(task, key, &s, &d);
    }
    sync_batches(task, family);
}

/// Sets the local batches of the non-primary components so that every component sees the
/// primary component's global batch (when it divides evenly; otherwise validation explains).
pub fn sync_batches(task: &mut Map<String, Value>, family: Family) {
    let keys = spec_keys(family);
    let Some(primary) = keys.first() else { return };
    let Some((ps, pd)) = read_spec(task, primary) else { return };
    let Some(local) = task.get(batch_key(primary)).and_then(Value::as_u64) else { return };
    // Past u64 no batch divides evenly: validation explains the typed number.
    let Some(global) = local.checked_mul(dup(primary, &ps, &pd)) else { return };
    for key in &keys[1..] {
        if let Some((s, d)) = read_spec(task, key) {
            let k = dup(key, &s, &d);
            if k > 0 && global.is_multiple_of(k) && global >= k {
                task.insert(batch_key(key).to_owned(), json!(global / k));
            }
        }
    }
}

/// A sensible task for a family on a cluster: FSDP over all GPUs (the paper's default),
/// embeddings data-parallel (transformers) or model-parallel (DLRMs).
pub fn default_task(family: Family, kind: &str, total: u64, layers: u64) -> Map<String, Value> {
    let mut t = Map::new();
    t.insert("name".into(), json!(format!("{}_{}", family.config_name().to_lowercase(), kind)));
    t.insert("type".into(), json!(kind));
    match family {
        Family::Dlrm | Family::DlrmMoe | Family::DlrmTransformer => {
            write_spec(&mut t, "mlp_parallel", &["fsdp".into()], &[total]);
            write_spec(&mut t, "emb_parallel", &["mp".into()], &[total]);
            t.insert("local_mlp_bs".into(), json!(512));
            t.insert("local_emb_bs".into(), json!(total.saturating_mul(512)));
            if family == Family::DlrmTransformer {
                write_spec(&mut t, "transformer_parallel", &["fsdp".into()], &[total]);
                t.insert("local_transformer_bs".into(), json!(512));
            }
        }
        Family::Llm | Family::LlmMoe | Family::Vit | Family::EncDec => {
            write_spec(&mut t, "transformer_parallel", &["fsdp".into()], &[total]);
            write_spec(&mut t, "emb_parallel", &["ddp".into()], &[total]);
            let b = if family == Family::Vit { 16 } else { 1 };
            t.insert("local_transformer_bs".into(), json!(b));
            t.insert("local_emb_bs".into(), json!(b));
        }
        Family::Cnn => {
            write_spec(&mut t, "mlp_parallel", &["ddp".into()], &[total]);
            t.insert("local_mlp_bs".into(), json!(32));
            t.insert("overlap_grad_reduce".into(), json!(true));
        }
    }
    add_freeze_defaults(&mut t, family, layers);
    t
}

/// Adds the finetune keys a family needs, if missing: nothing frozen.
pub fn add_freeze_defaults(task: &mut Map<String, Value>, family: Family, layers: u64) {
    let mut put = |k: &str, v: Value| {
        task.entry(k.to_owned()).or_insert(v);
    };
    match family {
        Family::Dlrm | Family::DlrmMoe | Family::DlrmTransformer => {
            put("freeze_top_mlp", json!(false));
            put("freeze_bot_mlp", json!(false));
            put("freeze_emb", json!(false));
            if family == Family::DlrmTransformer {
                put("freeze_transformer", json!(false));
            }
        }
        Family::Llm | Family::LlmMoe | Family::Vit | Family::EncDec => {
            put("freeze_emb", json!(false));
            put("freeze_transformer", json!(false));
            put("min_frozen_layer", json!(layers));
        }
        // CNNs are not fine-tuned here.
        Family::Cnn => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obj(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => Map::new(),
        }
    }

    #[test]
    fn plans_follow_the_cluster() {
        let mut t = obj(json!({
            "transformer_parallel": ["tp", "ddp"], "transformer_parallel_degree": [8, 256],
            "emb_parallel": ["ddp"], "emb_parallel_degree": [2048],
            "local_transformer_bs": 8, "local_emb_bs": 1
        }));
        fit_to_cluster(&mut t, Family::Llm, 8, 128);
        assert_eq!(read_spec(&t, "transformer_parallel"), Some((vec!["tp".into(), "ddp".into()], vec![8, 16])));
        assert_eq!(read_spec(&t, "emb_parallel"), Some((vec!["ddp".into()], vec![128])));
        // Global batch 8 x 16 = 128 = 1 x 128.
        assert_eq!(t["local_emb_bs"], json!(1));
        // One node: the inter-node level disappears.
        fit_to_cluster(&mut t, Family::Llm, 8, 8);
        assert_eq!(read_spec(&t, "transformer_parallel"), Some((vec!["tp".into()], vec![8])));
    }

    #[test]
    fn dlrm_embedding_batches_follow_the_mlp() {
        let mut t = default_task(Family::Dlrm, "pretrain", 128, 10);
        assert_eq!(t["local_emb_bs"], json!(512 * 128));
        fit_to_cluster(&mut t, Family::Dlrm, 8, 64);
        assert_eq!(t["local_emb_bs"], json!(512 * 64));
        assert_eq!(read_spec(&t, "mlp_parallel"), Some((vec!["fsdp".into()], vec![64])));
    }

    #[test]
    fn default_tasks_validate_for_every_family() {
        use crate::doc::Doc;
        use crate::engine::validate;
        use crate::presets;
        let p = presets::all().expect("presets");
        let system = p.system("zionex_128").expect("system").config.clone();
        for family in Family::ALL {
            let model = p.models.iter().find(|m| m.config["type"] == json!(family.config_name())).expect("a model");
            // The kinds the form offers the family (no fine-tuned CNN, no served encoder-decoder).
            for kind in ["pretrain", "finetune", "inference"].into_iter().filter(|k| offers(family, k)) {
                let doc = Doc::new([model.config.clone(), system.clone(), default_task(family, kind, 128, 10)]);
                assert!(validate(&doc.to_raw()).is_ok(), "{family} {kind}: {:?}", validate(&doc.to_raw()).err());
            }
        }
    }
}
