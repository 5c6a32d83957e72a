//! Guided lessons: each compares two variants of a preset and says why they differ, with the
//! numbers computed live by the engine. Plain Rust; the page renders them.

use crate::doc::{Config, Doc};
use crate::engine::ops::Category;
use crate::engine::{evaluate, validate, Report};
use crate::presets;
use serde_json::json;

/// One side of a comparison.
#[derive(Debug)]
pub struct Variant {
    pub label: &'static str,
    pub doc: Doc,
    /// The evaluation, or why the variant is not valid.
    pub report: Result<Report, String>,
}

/// A lesson: a question, two variants, and the explanation.
#[derive(Debug)]
pub struct Lesson {
    pub id: &'static str,
    pub title: &'static str,
    pub intro: &'static str,
    pub variants: [Variant; 2],
    /// What to look at, with the figures that matter.
    pub takeaway: &'static str,
}

fn variant(label: &'static str, doc: Doc) -> Variant {
    let report = validate(&doc.to_raw())
        .map(|s| evaluate(&s))
        .map_err(|e| e.first().map_or_else(|| "invalid".to_owned(), |e| e.to_string()));
    Variant { label, doc, report }
}

/// A doc of a model preset and a system preset with the given task.
fn doc(model: &str, system: &str, task: serde_json::Value) -> Option<Doc> {
    let p = presets::all().ok()?;
    let serde_json::Value::Object(task) = task else { return None };
    Some(Doc::new([p.model(model)?.config.clone(), p.system(system)?.config.clone(), task]))
}

/// An LLM task: transformer spec and batch, embeddings data parallel over all GPUs.
fn llm_task(strategies: &[&str], degrees: &[u64], batch: u64, emb_batch: u64, gpus: u64) -> serde_json::Value {
    json!({
        "name": "lesson", "type": "pretrain",
        "transformer_parallel": strategies, "transformer_parallel_degree": degrees,
        "emb_parallel": ["ddp"], "emb_parallel_degree": [gpus],
        "local_transformer_bs": batch, "local_emb_bs": emb_batch,
    })
}

/// The lessons, computed now.
pub fn lessons() -> Vec<Lesson> {
    let mut out = Vec::new();
    if let (Some(fsdp), Some(tp)) = (
        doc("llama2_70b", "dc_a_2048", llm_task(&["fsdp"], &[2048], 1, 1, 2048)),
        doc("llama2_70b", "dc_a_2048", llm_task(&["tp", "ddp"], &[8, 256], 8, 1, 2048)),
    ) {
        out.push(Lesson {
            id: "fsdp",
            title: "Why FSDP exposes communication",
            intro: "Fully sharded data parallelism (FSDP) keeps only 1/N of every layer's weights on a GPU. Before each layer runs, forward and again backward, its weights are all-gathered from all GPUs, and after the backward pass the gradients are reduce-scattered. With LLaMA2-70B on 2,048 A100s, each layer's all-gather moves the whole layer over the network, and takes longer than the layer's GEMMs: the GPUs wait.",
            variants: [
                variant("FSDP over 2,048 GPUs", fsdp),
                variant("Tensor parallel 8 within a node x data parallel 256", tp),
            ],
            takeaway: "Compare the exposed communication: with FSDP the all-gathers of the next layers cannot all hide behind the current layer's compute, so the compute stream idles between layers (open the timeline). Tensor parallelism inside the node replaces them with activation all-reduces over NVLink, and data parallelism all-reduces each layer's gradients once per iteration, mostly overlapped with the backward pass.",
        });
    }
    if let (Some(inside), Some(across)) = (
        doc("llama_7b", "zionex_128", llm_task(&["tp", "ddp"], &[8, 16], 8, 1, 128)),
        doc("llama_7b", "zionex_128", llm_task(&["ddp", "tp"], &[8, 16], 16, 1, 128)),
    ) {
        out.push(Lesson {
            id: "tp-in-node",
            title: "Why tensor parallelism stays inside a node",
            intro: "Tensor parallelism splits every GEMM across GPUs and all-reduces the activations after each attention and feed-forward block: two collectives per layer, forward and backward, on the critical path. Inside a node they run over NVLink (here 200 GB/s per GPU); across nodes they share the NICs (7 GB/s per GPU).",
            variants: [
                variant("tp 8 within a node x ddp 16 across nodes", inside),
                variant("ddp 8 within a node x tp 16 across nodes", across),
            ],
            takeaway: "Same model, same GPUs, same degrees of parallelism: only the placement of the levels changes. Across nodes every activation all-reduce is roughly 30x slower, and since each one blocks the next layer, the iteration time balloons. Put the chattiest parallelism on the fastest links.",
        });
    }
    let dlrm_task = json!({
        "name": "lesson", "type": "pretrain",
        "mlp_parallel": ["fsdp"], "mlp_parallel_degree": [128],
        "emb_parallel": ["mp"], "emb_parallel_degree": [128],
        "local_mlp_bs": 512, "local_emb_bs": 65536,
    });
    if let Some(mp) = doc("dlrm_a", "zionex_128", dlrm_task) {
        let mut ddp = mp.clone();
        ddp.set(Config::Task, "emb_parallel", json!(["ddp"]));
        ddp.set(Config::Task, "local_emb_bs", json!(512));
        out.push(Lesson {
            id: "emb-a2a",
            title: "How embedding sharding turns into all-to-all",
            intro: "DLRM-A has 4,096 embedding tables of 2.08 M rows: about 1.6 TB of weights, far beyond one GPU's 40 GB. Model-parallel embeddings (mp) give each GPU a 1/128 share of the tables; every sample then needs rows from every GPU, so looked-up rows are exchanged with an all-to-all before the top MLP, and the gradients flow back with another.",
            variants: [
                variant("Tables sharded over 128 GPUs (mp)", mp),
                variant("Tables replicated on every GPU (ddp)", ddp),
            ],
            takeaway: "Look at memory per GPU: replicated tables need terabytes per GPU, so sharding is not a choice. Its price is the all-to-all time in the breakdown, charged at the inter-node bandwidth because the exchange spans all 128 GPUs. Replicating would not even save time: the embedding gradients would then be all-reduced every iteration (MAD-Max sizes that all-reduce by the rows looked up, quirk Q8).",
        });
    }
    out
}

/// The figures a lesson compares for a variant: (iteration s, exposed share, all-to-all s,
/// memory bytes per GPU).
pub fn figures(r: &Report) -> (f64, f64, f64, f64) {
    (r.iteration_s, r.exposed_share(), r.totals.get(Category::AllToAll), r.memory.total_bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lessons_compute_and_show_the_effect_they_teach() {
        let ls = lessons();
        assert_eq!(ls.len(), 3);
        for l in &ls {
            for v in &l.variants {
                assert!(v.report.is_ok(), "{}: {}: {:?}", l.id, v.label, v.report);
            }
        }
        let get = |id: &str| {
            let l = ls.iter().find(|l| l.id == id).expect("lesson");
            let f = |i: usize| figures(l.variants[i].report.as_ref().expect("valid"));
            (f(0), f(1))
        };
        let (fsdp, tp) = get("fsdp");
        assert!(fsdp.1 > 0.2, "FSDP exposes a good part of its communication: {}", fsdp.1);
        assert!(fsdp.1 > tp.1 || fsdp.0 > tp.0);
        let (inside, across) = get("tp-in-node");
        assert!(across.0 > 2.0 * inside.0, "tp across nodes is much slower: {} vs {}", across.0, inside.0);
        let (mp, ddp) = get("emb-a2a");
        assert!(ddp.3 > 100.0 * mp.3, "replicated tables need far more memory");
        assert!(mp.2 > 0.0 && ddp.2 == 0.0, "sharding brings the all-to-all");
        assert!(ddp.0 > mp.0, "and replicating is not faster: {} vs {}", ddp.0, mp.0);
    }
}
