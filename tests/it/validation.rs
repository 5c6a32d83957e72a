//! The default model against published measured runs (`src/presets/data/validation/training.csv`,
//! a copy of the shared validation set): every row is predicted, and the errors stay where the
//! model's calibration put them. `make validate` prints the full table.

use madmax::accuracy::{run, summarize, RowResult, RunSet, Summary};

/// Every row of `csv` (`count` of them), each predicted (none skipped), and their summary,
/// printed under `label`.
fn predicted_all(label: &str, csv: &str, count: usize) -> (Vec<RowResult>, Summary) {
    let rows = run(csv).expect("parses");
    assert_eq!(rows.len(), count);
    let skipped: Vec<_> = rows.iter().filter(|r| r.skipped.is_some()).map(|r| (&r.id, &r.skipped)).collect();
    assert!(skipped.is_empty(), "skipped rows: {skipped:?}");
    let s = summarize(&rows).expect("summary");
    eprintln!(
        "{label}: {} rows, median |error| {:.1}%, mean {:.1}%, max {:.1}% ({})",
        s.all.rows,
        s.all.median_abs_error * 100.0,
        s.all.mean_abs_error * 100.0,
        s.all.max_abs_error * 100.0,
        s.all.worst
    );
    (rows, s)
}

#[test]
fn the_default_model_predicts_measured_training_runs() {
    let (rows, s) = predicted_all("validation", madmax::accuracy::TRAINING_CSV, 127);
    // The bar for the median, per source as well.
    assert!(s.all.median_abs_error <= 0.10, "median {}", s.all.median_abs_error);
    for (src, st) in &s.by_source {
        assert!(st.median_abs_error <= 0.10, "{src}: median {}", st.median_abs_error);
    }
    // Nine in ten rows within 25%.
    let within = rows.iter().filter(|r| r.error.is_some_and(|e| e.abs() <= 0.25)).count();
    assert!(within * 10 >= rows.len() * 9, "{within} of {} rows within 25%", rows.len());
}

/// The runs madmax added: 697, each in its set. The odd-numbered half of vTrain's first 195
/// single-node runs is where the host time per block was fitted; it stays where the fit put it.
#[test]
fn the_fitted_runs_stay_where_the_fit_put_them() {
    let (_, s) = predicted_all("added", madmax::accuracy::ADDED_CSV, 713);
    let (_, fit) =
        s.by_source.iter().find(|(l, _)| l == "vTrain single-node ground truth: odd rows").expect("fitted rows");
    assert_eq!(fit.rows, 98);
    assert!(fit.median_abs_error <= 0.06, "median {}", fit.median_abs_error);
}

#[test]
fn blank_cells_say_which_default_they_took() {
    let csv = madmax::accuracy::TRAINING_CSV;
    let rows = run(csv).expect("parses");
    let megatron: Vec<_> = rows.iter().filter(|r| r.id.starts_with("megatron-t1-")).collect();
    assert_eq!(megatron.len(), 10);
    for r in &megatron {
        assert!(r.defaults.iter().any(|d| d.starts_with("microbatch blank")), "{}: {:?}", r.id, r.defaults);
        assert_eq!(r.metric, Some(madmax::accuracy::Metric::TflopsPerGpu));
    }
    // A fully specified row uses none.
    let v = rows.iter().find(|r| r.id == "vtrain-m-001").expect("row");
    assert!(v.defaults.is_empty(), "{:?}", v.defaults);
}

#[test]
fn the_serving_model_predicts_measured_inference_latencies() {
    let csv = madmax::accuracy::INFERENCE_CSV;
    let rows = run(csv).expect("parses");
    assert_eq!(rows.len(), 4);
    for r in &rows {
        let e = r.error.unwrap_or_else(|| panic!("{} skipped: {:?}", r.id, r.skipped));
        // Issue 6's bar: every row within 25%.
        assert!(e.abs() <= 0.25, "{}: {:+.1}%", r.id, e * 100.0);
    }
    let s = summarize(&rows).expect("summary");
    eprintln!(
        "serving validation: median |error| {:.1}%, max {:.1}%",
        s.all.median_abs_error * 100.0,
        s.all.max_abs_error * 100.0
    );
    assert!(s.all.median_abs_error <= 0.15);
}

/// The serving runs madmax added (SOURCES.md section 6): vLLM's latency benchmark before and
/// after its custom all-reduce kernels, on 4 and 2 A100s. The mechanism goes the right way (the
/// engine's kernels make each run faster, by 3-8% here against 10-12% measured). vLLM of 2023
/// ran every one of them 28-52% slower than the model first predicted: 12-22 ms per decode step
/// at a batch of 64, the engine's host work serialized with the GPU's (Python between steps,
/// every step's sequences sent to the workers through Ray). vidur's profile of that vLLM gives
/// its host time per step (`host_step_ms`, `host_request_ms`), which closes most of the gap.
#[test]
fn added_serving_runs_are_predicted_with_the_engines_host_time() {
    let (rows, s) = added_serving("vllm-2192-", 4);
    assert!(rows.iter().all(|r| !r.held_out()));
    let predicted = |id: &str| rows.iter().find(|r| r.id == id).and_then(|r| r.predicted).expect(id);
    for (nccl, custom) in [
        ("vllm-2192-llama2-70b-tp4-nccl", "vllm-2192-llama2-70b-tp4-custom"),
        ("vllm-2192-llama-33b-tp2-nccl", "vllm-2192-llama-33b-tp2-custom"),
    ] {
        let speedup = predicted(custom) / predicted(nccl);
        assert!((1.02..1.15).contains(&speedup), "{custom}: {speedup}");
    }
    // Every row within 18%, and every one's task states the host time it was given. (Within
    // 15% until the A100's GEMMs streamed at their profiled share of HBM bandwidth, 0.741 of
    // it rather than 0.836: LLaMA 33B's decode steps then took 3% longer, its custom
    // all-reduce run 17% slower than measured.)
    assert!(rows.iter().all(|r| r.error.is_some_and(|e| e.abs() < 0.18)), "{rows:?}");
    let host = |r: &RowResult| r.scenario.as_ref().and_then(|s| s["task"]["host_step_ms"].as_f64());
    assert!(rows.iter().all(|r| host(r).is_some_and(|ms| ms > 2.0)));
    assert!(
        s.all.median_abs_error < 0.1,
        "median {}: update SOURCES.md section 6 and the README",
        s.all.median_abs_error
    );
}

/// The runs of `added_inference.csv` (420, every one predicted) whose ids start with `prefix`
/// (`count` of them), and their summary.
fn added_serving(prefix: &str, count: usize) -> (Vec<RowResult>, Summary) {
    let (all, _) = predicted_all("added serving", madmax::accuracy::ADDED_INFERENCE_CSV, 420);
    let rows: Vec<RowResult> = all.into_iter().filter(|r| r.id.starts_with(prefix)).collect();
    assert_eq!(rows.len(), count, "{prefix}");
    let s = summarize(&rows).expect("summary");
    (rows, s)
}

/// vLLM on eight MI300Xs (SOURCES.md section 6), FP8 weights and KV cache, predicted once in
/// December 2026 and held out: AMD's offline bursts of Llama 3.1 70B and 405B (500 to 3,200
/// prompts at once) 45-186% too fast in output tokens/s, Oracle's static batches of 405B 32-41%
/// short. Since serving's FP8 GEMMs keep the share of their peak training's do (Azure's FP8
/// runs led to it; nothing was chosen on these), the bursts 38-178% (median 72%), the batches
/// 32-39%; since each step pays its sampler (vLLM's scripts sample at temperature 1: a softmax
/// and a draw over the vocabulary), the bursts 37-171% (median 67%), the batches 32-39%. Pinned
/// where they are, so that a change that moves them shows here (and the README and SOURCES.md
/// say the new figures).
#[test]
fn mi300x_runs_are_held_out_and_their_gaps_are_known() {
    let (bursts, b) = added_serving("amdperf-", 8);
    let (batches, o) = added_serving("oci-", 9);
    assert!(bursts.iter().chain(&batches).all(RowResult::held_out));
    // Output tokens/s: too fast is a positive error; latency: too fast is a negative one.
    assert!(bursts.iter().all(|r| r.error.is_some_and(|e| (0.35..1.80).contains(&e))), "{bursts:?}");
    assert!(batches.iter().all(|r| r.error.is_some_and(|e| (-0.42..-0.31).contains(&e))), "{batches:?}");
    let update = "update SOURCES.md section 6 and the README";
    assert!((0.65..0.70).contains(&b.all.median_abs_error), "bursts' median {}: {update}", b.all.median_abs_error);
    assert!((0.31..0.35).contains(&o.all.median_abs_error), "batches' median {}: {update}", o.all.median_abs_error);
    // The longest requests miss the most: 2,048 prompt and 2,048 output tokens, on both models.
    let worst = |m: &str| {
        bursts.iter().filter(|r| r.id.contains(m)).max_by(|x, y| x.error.partial_cmp(&y.error).expect("errors"))
    };
    assert!(["-70b-", "-405b-"].iter().all(|m| worst(m).is_some_and(|r| r.id.contains("-i2048-o2048-"))));
}

/// Azure's AI benchmarking guide (SOURCES.md section 6): TensorRT-LLM's static batches of 64
/// prompts of 128 tokens generating 8 (16 to 96 on eight GPUs), on an A100 80GB node in FP16
/// and on H100 and H200 nodes in FP8 (the precision the guide's config sets; the pages do not
/// say), predicted once in December 2026: the A100's 1% to 15% too fast (held out), every H100
/// and H200 run 20% to 42% too fast. That gap led to running serving's FP8 GEMMs at the share
/// of their peak training's keep (`calibration::FP8_GEMM_EFFICIENCY`; they had the FP8 peak's
/// full share): the twelve are calibration since, 15% to 34% too fast. Pinned where they are,
/// so that a change that moves them shows here (and the README and SOURCES.md say the new
/// figures).
#[test]
fn tensorrt_llm_static_batches_on_three_gpus_are_known() {
    let (rows, _) = added_serving("azure-", 17);
    // Output tokens/s: too fast is a positive error.
    let on = |gpu: &str| rows.iter().filter(|r| r.gpu == gpu).collect::<Vec<&RowResult>>();
    let a100 = on("a100-80g");
    assert!(a100.len() == 5 && a100.iter().all(|r| r.held_out()));
    assert!(a100.iter().all(|r| r.error.is_some_and(|e| (0.0..0.16).contains(&e))), "{a100:?}");
    let hopper: Vec<&RowResult> = on("h100-80g").into_iter().chain(on("h200-141g")).collect();
    assert!(hopper.len() == 12 && hopper.iter().all(|r| !r.held_out()));
    let mut e: Vec<f64> = hopper.iter().filter_map(|r| r.error).collect();
    assert!(e.len() == 12 && e.iter().all(|e| (0.14..0.35).contains(e)), "{e:?}");
    madmax::engine::order::sort_f64(&mut e);
    let update = "update SOURCES.md section 6 and the README";
    assert!((0.25..0.31).contains(&e[6]), "Hopper's median {}: {update}", e[6]);
}

/// FasterTransformer's GPT guide (SOURCES.md section 6): 320 static-batch latencies, predicted
/// once at a median error of 22.8%, almost all too fast, but for Megatron 530B on TP 8 x PP 3,
/// up to 134% too slow at large batches. That table led to prefilling through a pipeline in
/// micro-batches (calibration since: from 25% too fast to 3% too slow now); the other 293 stay
/// held out.
/// Pinned with the two trends that first prediction showed (the error grows as the model
/// shrinks on one GPU, and with tensor parallelism on GPT 20B), so that a change that moves
/// them shows here.
#[test]
fn fastertransformer_latencies_are_held_out_and_their_gaps_are_known() {
    let (rows, s) = added_serving("ftguide-", 320);
    let pp3 = |r: &RowResult| r.id.starts_with("ftguide-530b-tp8-pp3-");
    assert!(rows.iter().all(|r| r.held_out() != pp3(r)));
    // The pipeline's table: every run within 30% faster and 5% slower than measured, most
    // faster, as the guide's other 530B tables (TP 16, TP 32) are at most batches.
    let table: Vec<f64> = rows.iter().filter(|r| pp3(r)).filter_map(|r| r.error).collect();
    assert!(table.len() == 27 && table.iter().all(|e| (-0.3..0.05).contains(e)), "{table:?}");
    assert!(table.iter().filter(|e| **e < 0.0).count() >= 25, "{table:?}");
    assert!(
        (0.14..0.2).contains(&s.all.median_abs_error),
        "median {}: update SOURCES.md section 6 and the README",
        s.all.median_abs_error
    );
    let median = |prefix: &str| {
        let mut e: Vec<f64> = rows.iter().filter(|r| r.id.starts_with(prefix)).filter_map(|r| r.error).collect();
        assert!(!e.is_empty(), "{prefix}");
        madmax::engine::order::sort_f64(&mut e);
        e[e.len() / 2]
    };
    // Signed errors: negative is faster than measured.
    let one_gpu = ["ftguide-20b-tp1-", "ftguide-6.7b-", "ftguide-1.3b-", "ftguide-350m-"].map(median);
    assert!(one_gpu.windows(2).all(|w| w[0] > w[1]) && one_gpu[0] > -0.1 && one_gpu[3] < -0.3, "{one_gpu:?}");
    let tp = ["ftguide-20b-tp1-", "ftguide-20b-tp2-", "ftguide-20b-tp4-", "ftguide-20b-tp8-"].map(median);
    assert!(tp.windows(2).all(|w| w[0] > w[1]), "{tp:?}");
}

/// GPUStack's performance lab (SOURCES.md section 6): vLLM 0.11 batching in flight on one H100
/// or A100, Qwen3 8B at 1 to 8 requests in flight and Qwen3 14B given 100 to 1,000 requests at
/// once; 32 rows, predicted once at a median error of 37%, all but one too fast. Qwen3 8B's
/// time per token, 21-23% short by about 1.6 ms a step whatever the batch, then led to costing
/// a CUDA graph's kernels at a small kernel's measured run (3 us, not the 0.6 us launch alone):
/// those 12 rows are calibration since, the other 20 held out. Pinned with what the rows show,
/// so that a change that moves it shows here.
#[test]
fn vllm_in_flight_runs_are_known_and_their_gaps_too() {
    let (rows, _) = added_serving("gpustack-", 32);
    let error = |id: &str| rows.iter().find(|r| r.id == id).and_then(|r| r.error).unwrap_or_else(|| panic!("{id}"));
    let (in_flight, bursts): (Vec<RowResult>, Vec<RowResult>) =
        rows.iter().cloned().partition(|r| r.id.starts_with("gpustack-qwen3-8b-h100-c"));
    // All calibration: each informed a change (a CUDA graph's kernel cost; running bursts).
    assert!(in_flight.len() == 12 && rows.iter().all(|r| !r.held_out()));
    let burst = |r: &RowResult| r.scenario.as_ref().and_then(|s| s["task"]["burst_requests"].as_u64());
    // Every burst runs step by step: random prompts of one length, and ShareGPT's with their
    // lengths spread around the means (until lengths could vary, those kept the steady state:
    // at the mean lengths the requests finished in waves).
    assert!(in_flight.iter().all(|r| burst(r).is_none()));
    assert!(bursts.iter().all(|r| burst(r).is_some()));
    // Time per token at 1 to 8 in flight: within 10% since kernels from a graph cost their run.
    for c in [1, 2, 4, 8] {
        let e = error(&format!("gpustack-qwen3-8b-h100-c{c}-sharegpt-tpot"));
        assert!(e.abs() < 0.1, "c{c}: {e}");
    }
    // The first token at 1 to 8 requests in flight: the model has the GPU's prefill, not vLLM's
    // HTTP server in front of it (measured 59-75 ms, predicted about 7).
    for c in [1, 2, 4, 8] {
        let e = error(&format!("gpustack-qwen3-8b-h100-c{c}-sharegpt-ttft"));
        assert!(e < -0.8, "c{c}: {e}");
    }
    // Output tokens/s at 1 to 8 in flight: too fast (the first token's wait is short), more so
    // the more requests share a step.
    let otps = [1, 2, 4, 8].map(|c| error(&format!("gpustack-qwen3-8b-h100-c{c}-sharegpt-otps")));
    assert!(otps.windows(2).all(|w| w[0] < w[1]) && otps[0] > 0.0, "{otps:?}");
    let s = summarize(&bursts).expect("summary");
    assert!(
        (0.25..0.45).contains(&s.all.median_abs_error),
        "median {}: update SOURCES.md section 6 and the README",
        s.all.median_abs_error
    );
    // Given every request at once, every case runs further from its measured throughput on the
    // H100 (up to 1,024 requests in flight, 8,192 tokens a step) than on the A100 (256, 2,048),
    // ramp, drain and preemptions included.
    for case in ["sharegpt-n1000", "i32000-o100-n100", "i4000-o200-n500", "i2000-o100-n500", "i128-o4-n1000"] {
        let (a100, h100) = (
            error(&format!("gpustack-qwen3-14b-a100-{case}-otps")),
            error(&format!("gpustack-qwen3-14b-h100-{case}-otps")),
        );
        assert!(0.2 < a100 && a100 < h100, "{case}: A100 {a100}, H100 {h100}");
    }
}

/// SGLang's benchmark of SGLang 0.3 and vLLM 0.6 (SOURCES.md section 6): Llama 3.1 8B on one
/// A100 and 70B on four H100s, ShareGPT requests at 4 and 8 per second (medians of the first
/// token, of each request's time per token, of the gaps between tokens and of the whole
/// request), and vLLM given 5,000 at once; 30 rows first held out, predicted once at a median
/// error of 27.4%. They led to prefilling in steps of their own (both engines) and to vLLM 0.6's
/// rounds of 10 decode steps, and are calibration since. Pinned with what is left, so that a
/// change that moves it shows here.
#[test]
fn request_rate_runs_led_to_prefill_steps_and_rounds_and_their_gaps_are_known() {
    let (all, _) = added_serving("sglang060-", 30);
    assert!(all.iter().all(|r| !r.held_out()));
    let (offline, rows): (Vec<RowResult>, Vec<RowResult>) =
        all.into_iter().partition(|r| r.id.ends_with("-offline-otps"));
    assert_eq!(offline.len(), 2);
    let s = summarize(&rows).expect("summary");
    assert!(
        (0.15..0.22).contains(&s.all.median_abs_error),
        "median {}: update SOURCES.md section 6 and the README",
        s.all.median_abs_error
    );
    // Signed errors of the rows whose ids start with `prefix` and end with `suffix`.
    let errors = |prefix: &str, suffix: &str| -> Vec<f64> {
        let ours = rows.iter().filter(|r| r.id.starts_with(prefix) && r.id.ends_with(suffix));
        ours.map(|r| r.error.unwrap_or_else(|| panic!("{}", r.id))).collect()
    };
    // Each request's time per token, and the gaps between tokens: still shorter than measured
    // (first predicted 17-37% short with prompt chunks mixed into decode steps), with no host
    // time between the engines' steps; on the A100 3-17% since its GEMMs stream at their
    // profiled share of HBM bandwidth (12-25% before), on the H100s 19-33%.
    let (tpot, itl) = (errors("sglang060-", "-tpot"), errors("sglang060-", "-itl"));
    assert!(tpot.len() == 8 && tpot.iter().all(|e| (-0.35..0.0).contains(e)), "{tpot:?}");
    assert!(itl.len() == 4 && itl.iter().all(|e| (-0.3..0.0).contains(e)), "{itl:?}");
    // The first token: vLLM 0.6's rounds of 10 decode steps make a new prompt wait (first
    // predicted 78-86% short), still short by the HTTP server's share.
    let vllm_ttft = errors("sglang060-vllm", "-ttft");
    assert!(vllm_ttft.len() == 4 && vllm_ttft.iter().all(|e| (-0.45..-0.15).contains(e)), "{vllm_ttft:?}");
    let sglang_ttft = errors("sglang060-sglang", "-ttft");
    assert!(sglang_ttft.len() == 4 && sglang_ttft.iter().all(|e| (-0.45..-0.05).contains(e)), "{sglang_ttft:?}");
    // The whole request's median: at the mean lengths it came out longer than measured
    // (+11% to +50%: ShareGPT's median reply is shorter than its mean); with the lengths
    // spread exponentially around the means the median request is a shorter one, and it falls
    // short as the time per token does, but for Llama 3.1 8B on the A100 at 4 requests/s,
    // 8-10% long since the A100's GEMMs stream at their profiled share of HBM bandwidth.
    let e2e = errors("sglang060-", "-e2e");
    assert!(e2e.len() == 8 && e2e.iter().all(|e| (-0.3..0.12).contains(e)), "{e2e:?}");
    assert!(e2e.iter().filter(|e| **e > 0.0).count() == 2, "{e2e:?}");
    // vLLM's bursts, run step by step with the lengths spread: rounds batch the prompts into
    // fewer prefill steps and the model has no host time per round, so they run faster than
    // measured.
    assert!(offline.iter().all(|r| r.error.is_some_and(|e| (0.15..0.35).contains(&e))), "{offline:?}");
}

/// The runs madmax added (SOURCES.md section 5), in the order they came. The first 74 (BLOOM
/// 176B, MT-NLG 530B, MosaicML's MPT benchmarks at 2,048 tokens) led to two effects with
/// published constants, the H100's matmul fraction and fused attention's speed; the next 121
/// (the same MPT tables at 512 to 65,536 tokens), predicted once (median 23.7%), showed the error
/// growing with the sequence length, which led to telling the kernels apart (MPT's Triton kernel
/// at the first FlashAttention's published speed). Then vTrain's first 195 single-node runs,
/// predicted once at 35% median error: the host time per block was fitted on the odd-numbered
/// half and tested on the even half. On H100s the MPT errors still grew with the sequence
/// length, and the Triton kernel took the share FlashAttention-2 keeps there. Every one of those
/// rows informed a change, so all are in the calibration set, MPT's included. What no change
/// looked at: BLOOM and MT-NLG (their errors informed nothing), and vTrain's single-node rows
/// 196 to 395, added and predicted once after all of that (median 7.5%, max 31%); the held-out
/// set. The pipeline fix that costs uneven splits at their slowest stage came from the physics
/// (an issue's 96 layers on 64 stages), not from BLOOM, whose 70 layers on 12 stages it moved
/// from 32% to 18%. MPT's FP8 runs on H100s came after FP8 training was modelled: held out. OLMo-core's
/// runs were held out until their gap led to FlashAttention-2's own speed on an H100. This pins the medians per source, that the model stays close where it is
/// (MPT 30B and 70B on A100s, FSDP on 8 to 128 GPUs), that iteration time does not drift with
/// the sequence length on A100s or H100s, and that it gets right how MT-NLG's iteration time
/// falls as data parallelism widens.
#[test]
fn added_runs_are_predicted_with_the_same_constants() {
    let (rows, s) = predicted_all("added", madmax::accuracy::ADDED_CSV, 713);
    let held = |id: &str| rows.iter().find(|r| r.id == id).is_some_and(|r| r.held_out());
    assert!(held("bloom-176b-384") && held("mtnlg-530b-2240") && held("vtrain-s-196"));
    assert!(!held("mpt-7b-a100-80g-n8-s1024-mb64") && !held("vtrain-s-002") && !held("vtrain-s-001"));
    // OLMo-core's README table (FSDP2 with torch.compile on a node of H100s, BF16 and torchao's
    // FP8): each model's FP8 speed-up over BF16 within 10% of the one measured (the model's 3% to
    // 9% larger when added). Held out when added, 9% to 20% too fast; calibration since that gap
    // led to FlashAttention-2's own speed on an H100 (PyTorch 2.5.1's SDPA runs it): 6% to 14%.
    for model in ["1b", "7b", "llama8b", "13b"] {
        let error = |dtype: &str| {
            let id = format!("olmocore-{model}-h100-n8-{dtype}");
            let r = rows.iter().find(|r| r.id == id).unwrap_or_else(|| panic!("{id}"));
            assert!(!r.held_out(), "{id}");
            r.error.expect("predicted")
        };
        // Iteration times: predicted / measured speed-up = (1 + e_bf16) / (1 + e_fp8).
        let (bf16, fp8) = (error("bf16"), error("fp8"));
        let ratio = (1.0 + bf16) / (1.0 + fp8);
        assert!((ratio - 1.0).abs() <= 0.10, "{model}: FP8 speed-up {ratio:.3} of the measured one");
        assert!(bf16.abs() <= 0.12 && fp8.abs() <= 0.15, "{model}: {bf16:+.3} {fp8:+.3}");
    }
    // FlagPerf's DeepSpeed runs, each group's time and memory errors. ZeRO-3 with Hugging Face's
    // Llama 2 7B on A800s or H800s came out 8% to 14% too fast when first predicted, and
    // ChatGLM3-6B on H100s (PyTorch's fused attention, two key/value groups expanded to every
    // head) 23%, their stated memory a third or more above the model's; with their norms and
    // activation run as eager PyTorch (calibration since) they are within 7% and 15% too fast,
    // the memory 15% to 31% under (DeepSpeed's buffers and what else the model does not count);
    // with the attention kernel each ran on a Hopper GPU (FlashAttention-2 on the H800,
    // PyTorch 2.1's first FlashAttention on the H100), ChatGLM3-6B 8% too fast.
    // Megatron-DeepSpeed's ZeRO-1 runs of Llama 2 7B on A800s and A100s, held out, 17% and 19%
    // too fast, their memory within 5%.
    let deepspeed = [
        ("flagperf-ds-llama2-7b-", 4, false, (-0.07, 0.02), (-0.26, -0.14)),
        ("flagperf-ds-chatglm3-6b-", 1, false, (-0.10, -0.06), (-0.34, -0.28)),
        ("flagperf-mds-llama2-7b-", 2, true, (-0.25, -0.10), (-0.05, 0.05)),
    ];
    for (prefix, count, held_out, time, memory) in deepspeed {
        let group: Vec<_> = rows.iter().filter(|r| r.id.starts_with(prefix)).collect();
        assert_eq!(group.len(), count, "{prefix}");
        for r in group {
            let (t, m) = (r.error.expect("predicted"), r.memory_error.expect("stated"));
            assert!(r.held_out() == held_out && (time.0..=time.1).contains(&t), "{}: {t:+.3}", r.id);
            assert!((memory.0..=memory.1).contains(&m), "{}: memory {m:+.3}", r.id);
        }
    }
    let set = |want: RunSet| s.by_set.iter().find(|x| x.0 == want).map(|x| x.1.clone()).expect("set");
    let (calibration, held_out) = (set(RunSet::Calibration), set(RunSet::HeldOut));
    assert_eq!((calibration.rows, held_out.rows), (489, 224));
    // MLPerf Training v4.0's and v4.1's GPT-3 175B in FP8: on 512 H100s (NVIDIA's and
    // Supermicro's) and 10,752 and 11,616 (NVIDIA's Eos), then on 256 and 512 H100s, 1,536 of
    // Oracle's and 64 B200s. Added and predicted once with their tensor-parallel collectives
    // blocking, since the schema could not say otherwise: every one 12-42% slower than measured.
    // Their configs overlap those collectives with the GEMMs (TP_COMM_OVERLAP=True, Transformer
    // Engine's userbuffers), which the overlap_tp_comm column now says: within 11% on 512 GPUs
    // or fewer and on Oracle's 1,536, still 31-33% too slow on Eos's 10,752 and 11,616, where
    // the data-parallel gathers and reduce-scatters over 448 nodes are what is left exposed;
    // 16-17% once their weights were gathered in FP8, as their configs say (fp8_param_gather),
    // and within 7% since each interleaved chunk reduces its gradients once its last
    // micro-batch is through, as Megatron-LM's interleaved schedule does. Calibration since.
    // With both columns blank today's model has them 11-28% too slow (the two largest 20%, 42%
    // when first predicted, before the interleaved chunks' reduction).
    let gpt3: Vec<_> = rows.iter().filter(|r| r.id.starts_with("mlperf4") && r.id.contains("-gpt3-175b-")).collect();
    assert_eq!(gpt3.len(), 8);
    for r in &gpt3 {
        let e = r.error.unwrap_or_else(|| panic!("{}: {:?}", r.id, r.skipped));
        let fits = r.memory_bytes.zip(r.capacity_bytes).is_some_and(|(m, c)| m < c);
        assert!(!r.held_out() && (-0.08..=0.12).contains(&e) && fits, "{}: {e:+.3}", r.id);
    }
    let header = madmax::accuracy::ADDED_CSV.lines().next().expect("header");
    assert!(header.ends_with(
        ",zero1_all_reduce,overlap_tp_comm,fp8_param_gather,overlap_param_gather,zero1_broadcast,tp_pp_dp_mapping"
    ));
    // The shipped rows whose id starts with `prefix` (and that `keep`), predicted again with
    // their last cells `from` rewritten as `to`: the settings those cells say, taken back.
    let rewritten = |prefix: &str, keep: &dyn Fn(&str) -> bool, from: &str, to: &str| {
        let rows: String = madmax::accuracy::ADDED_CSV
            .lines()
            .filter(|l| l.starts_with(prefix) && keep(l))
            .map(|l| format!("{}{to}\n", l.strip_suffix(from).unwrap_or_else(|| panic!("{l} ends with {from}"))))
            .collect();
        run(&format!("{header}\n{rows}")).expect("parses")
    };
    // overlap_tp_comm, fp8_param_gather and overlap_param_gather 1, taken back.
    let before = rewritten("mlperf4", &|_| true, ",1,1,1,,", ",,,,,");
    assert_eq!(before.len(), 8);
    for r in &before {
        let e = r.error.unwrap_or_else(|| panic!("{:?}", r.skipped));
        assert!((0.11..=0.30).contains(&e), "{} with the three columns blank: {e:+.3}", r.id);
    }
    // MLPerf Training v5.1's Llama 3.1 8B runs in FP8 (Megatron-core's distributed optimizer,
    // gradients reduced in buckets during the backward pass, the blocks' weights kept and
    // gathered in FP8 during the next forward pass): on one and two DGX B200s 8-14% too fast,
    // with context parallelism on 4 to 32 of them 0-26% too fast, on 64 and 128 H100s 26% and
    // 42% too fast (the 128 with TP 2 overlap its collectives with the GEMMs, overlap_tp_comm).
    // With the weights gathered in 16 bits after the step they were 4-5% too fast, 9-22% too
    // slow and 13% and 27% too fast. When they were
    // added the model all-reduced those buckets, as InternLM's ZeRO-1 does
    // (`zero1_all_reduce`), and the context-parallel runs came out 40-61% too slow;
    // calibration since that gap led to reduce-scattering them, as the distributed optimizer does.
    let mlperf: Vec<_> = rows.iter().filter(|r| r.id.starts_with("mlperf51-llama31-8b-")).collect();
    assert!(mlperf.len() == 10 && mlperf.iter().all(|r| !r.held_out()));
    for r in &mlperf {
        let e = r.error.expect("predicted");
        let (lo, hi) = match r.scenario.as_ref().map(|s| s["task"]["transformer_parallel"].to_string()) {
            _ if r.id.contains("-h100-") => (-0.45, -0.20),
            Some(p) if p.contains("cp") => (-0.30, 0.0),
            _ => (-0.16, -0.06),
        };
        assert!((lo..=hi).contains(&e), "{}: {e:+.3}", r.id);
    }
    // As first predicted: zero1_all_reduce 1, fp8_param_gather and overlap_param_gather blank.
    let context_parallel = |l: &str| !l.contains("-n8,") && !l.contains("-n16,");
    let before = rewritten("mlperf51-llama31-8b-b200-uf-n", &context_parallel, ",,,1,1,,", ",1,,,,,");
    assert_eq!(before.len(), 4);
    for r in &before {
        let e = r.error.unwrap_or_else(|| panic!("{:?}", r.skipped));
        assert!((0.38..=0.62).contains(&e), "{} as first predicted: {e:+.3}", r.id);
    }
    // MLPerf Training v5.0's Llama 3.1 405B in FP8 (TP 8 or 4, 8 interleaved pipeline stages
    // of 8 chunks, context parallelism 2, the distributed optimizer): on 512 to 8,192 H100s,
    // 512 and 1,024 H200s and 256 to 2,496 GB200s. Added and predicted once: every run
    // predicted, every one fits, every one too fast, the H100s by 6-10%, the H200s by 5%, the
    // GB200s by 7-18% (the GB200 at the B200's sustained GEMM rate: no published figure
    // measures the 1,200 W part's). The GB200 runs with 8 or more replicas order their ranks
    // TP, PP, then data parallelism (TP_PP_DP_MAPPING=True), which keeps each replica in its
    // rack; the model had put data parallelism inside the pipeline, Megatron-core's default,
    // so their pipelines crossed racks. That gap led to the tp_pp_dp_mapping column, and those
    // six to the calibration set: 17-18% too fast since, as the 256 in the default order.
    let l405: Vec<_> = rows.iter().filter(|r| r.id.starts_with("mlperf50-llama31-405b-")).collect();
    assert_eq!(l405.len(), 14);
    for r in &l405 {
        let e = r.error.unwrap_or_else(|| panic!("{}: {:?}", r.id, r.skipped));
        let fits = r.memory_bytes.zip(r.capacity_bytes).is_some_and(|(m, c)| m < c);
        let mapped = r
            .scenario
            .as_ref()
            .is_some_and(|s| s["task"]["transformer_parallel"].to_string().ends_with("\"pp\",\"ddp\"]"));
        let (lo, hi) = if r.gpu == "gb200-186g" { (-0.20, -0.15) } else { (-0.11, -0.04) };
        assert!(r.held_out() != mapped && fits && (lo..=hi).contains(&e), "{}: {e:+.3}", r.id);
    }
    assert_eq!(l405.iter().filter(|r| !r.held_out()).count(), 6);
    // MLPerf Training v5.1's Llama 3.1 405B on 256 and 448 B200s (University of Florida's DGX
    // B200s: TP 4 without overlapping its collectives, the ranks ordered TP, PP, data), added
    // after the column and predicted once, held out: within 2%, a little slow.
    let b200: Vec<_> = rows.iter().filter(|r| r.id.starts_with("mlperf51-llama31-405b-b200-")).collect();
    assert_eq!(b200.len(), 2);
    for r in &b200 {
        let e = r.error.unwrap_or_else(|| panic!("{}: {:?}", r.id, r.skipped));
        let fits = r.memory_bytes.zip(r.capacity_bytes).is_some_and(|(m, c)| m < c);
        assert!(r.held_out() && fits && (0.0..=0.03).contains(&e), "{}: {e:+.3}", r.id);
    }
    // As first predicted, the column blank: 7-10% too fast, the pipelines' transfers crossing
    // racks.
    let before = rewritten("mlperf50-llama31-405b-gb200-", &|l| l.ends_with(",1"), ",1", ",");
    assert_eq!(before.len(), 6);
    for r in &before {
        let e = r.error.unwrap_or_else(|| panic!("{:?}", r.skipped));
        assert!((-0.11..=-0.06).contains(&e), "{} as first predicted: {e:+.3}", r.id);
    }
    // InternLM's tables (7B on 8 to 1,024 A100s, 4 x 100 Gb RoCE per node): every run too fast
    // when first predicted (median 12.6%), one node 13% to 18%; with the optimizer sharded over
    // every rank (zero1 = -1) the gap grew with the GPUs to 37% at 1,024, where sharding within
    // each node (zero_shard_ranks) kept it at 7% (12% since the data-parallel stream). Their
    // optimizer returns the updated weights by one broadcast from each rank of the group
    // (`broadcast_params`), which the zero1_broadcast column now says: calibration since. The
    // zero1 = -1 runs with tp 1 then miss by no more than one node's runs do, at any size.
    let intern: Vec<_> = rows.iter().filter(|r| r.id.starts_with("internlm-7b-")).collect();
    assert!(intern.len() == 46 && intern.iter().all(|r| !r.held_out() && r.error.is_some()));
    let error = |id: &str| rows.iter().find(|r| r.id == id).and_then(|r| r.error).unwrap_or_else(|| panic!("{id}"));
    let whole: Vec<f64> =
        intern.iter().filter(|r| r.id.contains("-tp1-zero1-all-")).map(|r| r.error.unwrap_or(f64::NAN)).collect();
    assert!(whole.len() == 8 && whole.iter().all(|e| (-0.16..=0.0).contains(e)), "{whole:?}");
    assert!(error("internlm-7b-a100-n1024-tp1-zero1-all-mb2-x4") > -0.10);
    // With the column blank, one all-gather as first predicted: 30% too fast at 1,024 GPUs.
    let before = rewritten("internlm-7b-", &|_| true, ",1,", ",,");
    assert_eq!(before.len(), 46);
    let was = |id: &str| before.iter().find(|r| r.id == id).and_then(|r| r.error).unwrap_or_else(|| panic!("{id}"));
    assert!(was("internlm-7b-a100-n1024-tp1-zero1-all-mb2-x4") < -0.30);
    assert!(was("internlm-7b-a100-n1024-tp2-zero1-z4-mb4-x4") > -0.13);
    // FlagPerf's Mixtral 8x7B on 32 H100s (Megatron-core 0.6, TP 8, PP 2, DP 2), the one
    // mixture-of-experts run in the calibration set: 39% too fast with 29% too little memory until the token dispatch
    // was counted (calibration since); now as far under as FlagPerf's dense runs on H100s.
    let moe = rows.iter().find(|r| r.id == "flagperf-mixtral-8x7b-h100-n32-tp8-pp2-dp2").expect("Mixtral");
    let time = moe.error.expect("predicted");
    assert!(!moe.held_out() && (-0.30..=-0.20).contains(&time), "Mixtral: {time:+.3}");
    let memory = moe.memory_error.expect("stated");
    assert!(memory.abs() <= 0.12, "Mixtral's memory: {memory:+.3}");
    // Megatron-MoE-ModelZoo's Qwen3-235B-A22B at 16K to 128K tokens (TP 4, CP 1 to 8, EP 8 over
    // two context-parallel ranks, the norms and MoE layers recomputed): with the router forced
    // to balance the experts, as the model assumes, within 3% of the measured TFLOP/s; with
    // its own routing (dropless: some experts get more tokens) 10% to 25% too fast, less as
    // attention's share grows. Calibration: 8-15% too fast and predicted not to fit until the
    // recomputed modules were modelled.
    for (kind, band) in [("forced", -0.03..=0.03), ("dropless", 0.10..=0.25)] {
        let runs: Vec<_> = rows
            .iter()
            .filter(|r| r.id.starts_with("qwen3moe-235b-h100-n256-tp4-cp") && r.id.ends_with(kind))
            .collect();
        assert_eq!(runs.len(), 4, "{kind}");
        for r in runs {
            let e = r.error.expect("predicted");
            assert!(!r.held_out() && band.contains(&e), "{}: {e:+.3}", r.id);
        }
    }
    assert!(held_out.median_abs_error <= 0.08, "held-out median {}", held_out.median_abs_error);
    assert!(calibration.median_abs_error <= 0.09, "calibration median {}", calibration.median_abs_error);
    let median = |label: &str| {
        let (_, st) = s.by_source.iter().find(|(l, _)| l == label).unwrap_or_else(|| panic!("{label}"));
        st.median_abs_error
    };
    // 12% until the MPT rows said what their configs say (no dropout, flash-attn's fused
    // cross-entropy): the model had charged them dropout passes they do not make, which hid
    // time it misses elsewhere on small models (SOURCES.md section 5). Their memory is right
    // since (every_published_training_run_fits_in_its_gpus_memory). Back under 12% since FSDP's
    // gathers and reduce-scatters across nodes pay NCCL's ring latency.
    let at_2048 = median("MosaicML llm-foundry MPT training benchmarks");
    assert!(at_2048 <= 0.12, "MPT at 2,048 tokens: median {at_2048}");
    let other = median("MosaicML MPT benchmarks at other sequence lengths");
    assert!(other <= 0.12, "MPT at other lengths: median {other}");
    let single = median("vTrain single-node ground truth: even rows");
    assert!(single <= 0.08, "vTrain single-node, the half the host time was tested on: median {single}");
    let unseen = median("vTrain single-node ground truth: rows 196 to 395");
    assert!(unseen <= 0.08, "vTrain single-node rows 196 to 395, unseen by every choice: median {unseen}");
    // MPT-7B on one node of A100 80GB from 1,024 to 65,536 tokens (the attention share of the
    // FLOPs from 2% to 57%): the errors stay within 5 points of each other.
    let sweep: Vec<f64> =
        rows.iter().filter(|r| r.id.starts_with("mpt-7b-a100-80g-n8-s")).filter_map(|r| r.error).collect();
    assert_eq!(sweep.len(), 6);
    let spread = sweep.iter().cloned().fold(f64::MIN, f64::max) - sweep.iter().cloned().fold(f64::MAX, f64::min);
    assert!(spread <= 0.05, "MPT-7B errors across sequence lengths: {sweep:?}");
    // The same on H100s (1,024 to 65,536 tokens): within 10 points (21 when the Triton kernel
    // ran at its A100 share of the H100's peak).
    let sweep: Vec<f64> =
        rows.iter().filter(|r| r.id.starts_with("mpt-7b-h100-80g-n8-s")).filter_map(|r| r.error).collect();
    assert_eq!(sweep.len(), 5);
    let spread = sweep.iter().cloned().fold(f64::MIN, f64::max) - sweep.iter().cloned().fold(f64::MAX, f64::min);
    assert!(spread <= 0.10, "MPT-7B errors across sequence lengths on H100s: {sweep:?}");
    let time = |id: &str| {
        let r = rows.iter().find(|r| r.id == id).unwrap_or_else(|| panic!("{id}"));
        (r.iteration_s.expect("predicted"), r.measured)
    };
    // Same model, plan and batch; DP 8 -> 12: fewer micro-batches per pipeline, a larger bubble.
    let (p8, m8) = time("mtnlg-530b-2240");
    let (p12, m12) = time("mtnlg-530b-3360");
    let (predicted, measured) = (p12 / p8, m12 / m8);
    assert!((predicted / measured - 1.0).abs() <= 0.05, "time ratio {predicted:.3} vs measured {measured:.3}");
    // Large models with FSDP on A100s: GEMM-bound, the regime the calibration describes.
    let mut large: Vec<f64> = rows
        .iter()
        .filter(|r| r.id.starts_with("mpt-70b-a100") || r.id.starts_with("mpt-30b-a100"))
        .filter(|r| !r.id.contains("-s"))
        .filter_map(|r| r.error.map(f64::abs))
        .collect();
    large.sort_by(f64::total_cmp);
    assert_eq!(large.len(), 7);
    assert!(large[3] <= 0.05, "median |error| of MPT 30B/70B on A100s: {:.3}", large[3]);
}

/// Each vTrain single-node row is what its notes quote from the source file: the same GPUs,
/// batches, shape and plan, and `measured` the quoted milliseconds / 1000 exactly (the decimal
/// point moved, no rounding), so a transcription slip in a cell shows here.
#[test]
fn vtrain_single_node_rows_match_the_source_lines_their_notes_quote() {
    let mut checked = 0;
    for csv in [madmax::accuracy::ADDED_CSV] {
        let table = madmax::accuracy::parse_csv(csv);
        let (header, body) = table.split_first().expect("header");
        let col = |name: &str| header.iter().position(|h| h == name).unwrap_or_else(|| panic!("{name}"));
        for row in body.iter().filter(|r| r[0].starts_with("vtrain-s-")) {
            let notes = &row[col("notes")];
            let cell = |name: &str| row[col(name)].as_str();
            let expect = format!(
                "{} GPUs, global batch {}, micro batch {}, hidden {}, {} heads, {} layers, sequence {}, TP {} DP {} PP {}, ",
                cell("n_gpus"),
                cell("global_batch"),
                cell("microbatch"),
                cell("hidden"),
                cell("heads"),
                cell("layers"),
                cell("seq_len"),
                cell("tp"),
                cell("dp"),
                cell("pp")
            );
            let at = notes.find(&expect).unwrap_or_else(|| panic!("{}: notes do not quote {expect}", row[0]));
            let ms = notes[at + expect.len()..].split(" ms").next().expect("ms");
            // ms / 1000 by moving the decimal point three places.
            let (int, frac) = ms.split_once('.').unwrap_or((ms, ""));
            let padded = format!("{int:0>4}");
            let (head, tail) = padded.split_at(padded.len() - 3);
            let head = head.trim_start_matches('0');
            let seconds = format!("{}.{tail}{frac}", if head.is_empty() { "0" } else { head });
            assert_eq!(cell("measured"), seconds.trim_end_matches('0'), "{}", row[0]);
            let n: u64 = cell("n_gpus").parse().expect("n");
            let degrees: u64 = ["tp", "dp", "pp"].iter().map(|k| cell(k).parse::<u64>().expect("degree")).product();
            assert_eq!(n, degrees, "{}", row[0]);
            checked += 1;
        }
    }
    assert_eq!(checked, 395);
}
