//! The input pipeline of the default model: how many samples per second reach the GPUs.
//!
//! A training step cannot start before its global batch has arrived. Three things can cap the
//! rate ([`Loader::rate`] takes the slowest):
//!
//! 1. **A measured rate** the user gives (`data_loader_samples_per_s`).
//! 2. **Decoding.** Images and video clips are stored compressed; each sample's frames are
//!    decoded on the nodes' CPU cores or by the GPUs' hardware decoders (NVDEC, which runs
//!    apart from the SMs: the training kernels do not slow it, nor it them). A decoder works at
//!    a rate in pixels per second, so a frame costs its pixels: a 1080p frame about 11 times a
//!    320-pixel-high one. A video decoder cannot start at any frame: it starts at the keyframe
//!    before it and decodes every frame up to the last one the clip samples (unless seeking to
//!    a later keyframe is cheaper). So a clip of `f` frames, `s` apart, in a video with a
//!    keyframe every `k` frames costs on average
//!    `F = (k - 1) / 2 + 1 + (f - 1) x min(s, (k + 1) / 2)` decoded frames (the clip starts
//!    anywhere in a keyframe interval), and the job decodes
//!    `n x (c x R_core + g x R_gpu) / (F x P)` samples/s: `n` nodes, `c` cores and `g` GPUs per
//!    node, `P` pixels per frame. An image is one frame with a keyframe interval of 1.
//! 3. **Storage**: `n x S / b` samples/s, each node reading `S` bytes/s and a sample being `b`
//!    bytes.
//!
//! Every node decodes and reads for the job, except that a pipeline's later stages read no
//! input (Megatron-LM's ranks of later stages load none): with the pipeline as the plan's
//! outermost level, only the nodes of its first stage, `ceil(nodes / pp)`, decode and read
//! ([`input_nodes`]). (A pipeline inside other levels has a first-stage rank on every node.)
//!
//! Re-encoding videos to a lower resolution and shorter keyframe intervals (Zhao and
//! Krähenbühl 2023, "Training a Large Video Model on a Single Machine in a Day", who cut
//! videos into 15-second chunks with a 288- or 320-pixel short side) cuts `P` and `F`.

use super::explain::term;
use crate::engine::reference::explain::{Explanation, Unit};
use crate::engine::report::LoaderBound;
use crate::engine::scenario::{Decode, Loader, Scenario, Storage};

/// Nodes whose GPUs take input: all of them, or with a pipeline as the transformer plan's
/// outermost level only those of its first stage (its GPUs are the first `1/pp` of the
/// cluster's): `ceil(nodes / pp)`.
pub fn input_nodes(s: &Scenario) -> u64 {
    let nodes = s.system.num_nodes;
    s.task.plan.transformer.as_ref().and_then(|t| t.outermost_pipeline()).map_or(nodes, |p| nodes.div_ceil(p))
}

impl Decode {
    /// Frames decoded per sample: `(k - 1) / 2 + 1 + (f - 1) x min(s, (k + 1) / 2)` (see the
    /// module documentation).
    pub fn frames_decoded_per_sample(&self) -> f64 {
        let k = self.keyframe_interval as f64;
        let to_next = (self.frame_stride as f64).min((k + 1.0) / 2.0);
        (k - 1.0) / 2.0 + 1.0 + (self.frames_per_sample as f64 - 1.0) * to_next
    }

    /// Pixels per second a node decodes: `c x R_core + g x R_gpu`.
    pub fn node_pixels_per_s(&self, gpus_per_node: u64) -> f64 {
        self.cores_per_node as f64 * self.core_pixels_per_s + gpus_per_node as f64 * self.gpu_pixels_per_s
    }

    /// Samples per second the job decodes: `n x (c x R_core + g x R_gpu) / (F x P)`, `n` the
    /// [`input_nodes`].
    pub fn samples_per_s(&self, s: &Scenario) -> f64 {
        input_nodes(s) as f64 * self.node_pixels_per_s(s.system.devices_per_node())
            / (self.frames_decoded_per_sample() * self.frame_pixels)
    }
}

impl Storage {
    /// Samples per second the job reads: `n x S / b`, `n` the [`input_nodes`].
    pub fn samples_per_s(&self, s: &Scenario) -> f64 {
        input_nodes(s) as f64 * self.bytes_per_s_per_node / self.bytes_per_sample
    }
}

impl Loader {
    /// The pipeline's samples per second for the whole job and what sets it: the slowest of
    /// its parts (a tie goes to the measured rate, then decoding). `None`: unlimited.
    pub fn rate(&self, s: &Scenario) -> Option<(f64, LoaderBound)> {
        let parts = [
            self.given_samples_per_s.map(|r| (r, LoaderBound::Given)),
            self.decode.as_ref().map(|d| (d.samples_per_s(s), LoaderBound::Decoding)),
            self.storage.as_ref().map(|st| (st.samples_per_s(s), LoaderBound::Storage)),
        ];
        parts.into_iter().flatten().reduce(|a, b| if b.0 < a.0 { b } else { a })
    }

    /// Why the GPUs wait `wait_s` for the input at the end of an iteration whose global batch
    /// is `global_batch` samples: the rate's formula by what sets it, with its terms.
    pub fn explain_wait(&self, s: &Scenario, global_batch: u64, wait_s: f64) -> Explanation {
        let sys = &s.system;
        let batch = term("B", "global batch, samples", global_batch as f64, Unit::Count);
        let (rate, bound) = self.rate(s).unwrap_or((f64::INFINITY, LoaderBound::Given));
        let compute =
            term("t_compute", "iteration time without the wait", global_batch as f64 / rate - wait_s, Unit::Seconds);
        let nodes = term(
            "n",
            "nodes that take input (with a pipeline outermost, its first stage's)",
            input_nodes(s) as f64,
            Unit::Count,
        );
        let (formula, terms, note) = match (bound, &self.decode, &self.storage) {
            (LoaderBound::Decoding, Some(d), _) => (
                "B / (n x (c x R_core + g x R_gpu) / (F x P)) - t_compute",
                vec![
                    batch,
                    nodes,
                    term("c", "CPU cores per node that decode", d.cores_per_node as f64, Unit::Count),
                    term("R_core", "pixels one core decodes per second", d.core_pixels_per_s, Unit::Count),
                    term("g", "GPUs per node (their hardware decoders)", sys.devices_per_node() as f64, Unit::Count),
                    term("R_gpu", "pixels one GPU's decoders decode per second (0: not used)", d.gpu_pixels_per_s, Unit::Count),
                    term(
                        "F",
                        "frames decoded per sample: (k - 1) / 2 + 1 + (f - 1) x min(s, (k + 1) / 2), from the keyframe before the sample to its last frame",
                        d.frames_decoded_per_sample(),
                        Unit::Count,
                    ),
                    term("f", "frames a sample holds", d.frames_per_sample as f64, Unit::Count),
                    term("s", "frames between a sample's frames", d.frame_stride as f64, Unit::Count),
                    term("k", "frames from one keyframe to the next", d.keyframe_interval as f64, Unit::Count),
                    term("P", "pixels per frame", d.frame_pixels, Unit::Count),
                    compute,
                ],
                "Decoding caps throughput: a decoder starts at the keyframe before a clip and decodes every frame up to its last one. Fewer pixels per frame (re-encoding at a lower resolution), shorter keyframe intervals, more cores or the GPUs' decoders raise the rate; faster GPUs do not.",
            ),
            (LoaderBound::Storage, _, Some(s)) => (
                "B / (n x S / b) - t_compute",
                vec![
                    batch,
                    nodes,
                    term("S", "bytes per second each node reads from storage", s.bytes_per_s_per_node, Unit::BytesPerS),
                    term("b", "bytes read per sample", s.bytes_per_sample, Unit::Bytes),
                    compute,
                ],
                "Reading storage caps throughput: faster GPUs would not help; smaller files (a lower resolution or bitrate) or faster storage would.",
            ),
            _ => (
                "B / R - t_compute",
                vec![batch, term("R", "samples per second the input pipeline delivers", rate, Unit::Count), compute],
                "The input pipeline caps throughput: faster GPUs would not help.",
            ),
        };
        Explanation {
            what: "Waiting for the input pipeline (data loader)".into(),
            formula: formula.into(),
            terms,
            seconds: wait_s,
            note: Some(note),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::calibration::{A100_NVDEC_PIXELS_PER_S, CORE_PIXELS_PER_S, X264_KEYFRAME_INTERVAL};
    use super::*;
    use crate::engine::ops::OpKind;
    use crate::engine::report::Limit;
    use crate::engine::{evaluate, explain, validate, FieldError, RawScenario, RawTask, Report};
    use serde_json::{json, Value};

    /// ViT-L on 8 A100s in one node, 8 samples per GPU, with `loader` as task keys.
    fn raw(model: Value, loader: Value) -> RawScenario {
        let mut task = json!({"name": "t", "type": "pretrain", "mode": "default",
            "emb_parallel": ["ddp"], "emb_parallel_degree": [8],
            "transformer_parallel": ["ddp"], "transformer_parallel_degree": [8],
            "local_emb_bs": 8, "local_transformer_bs": 8});
        for (k, v) in loader.as_object().expect("keys") {
            task[k] = v.clone();
        }
        serde_json::from_value(json!({
            "model": model,
            "system": {"name": "s", "type": "GPU", "num_devices": 8, "num_nodes": 1,
                "f64_flops": 9.7e12, "f32_flops": 156e12, "f16_flops": 312e12, "i8_ops": 624e12,
                "flops_util": 0.8, "mem_cap": 85.9e9, "mem_bw": 2039e9, "mem_bw_util": 0.836,
                "num_nvlinks": 12, "bw_per_nvlink": 25e9, "nvlink_util": 0.6667,
                "num_ibroce_ports": 8, "ibroce_bw": 25e9, "ibroce_util": 0.56, "ar_perc_intra": 1},
            "task": task,
        }))
        .expect("a scenario")
    }

    fn vit() -> Value {
        json!({"name": "ViT-L", "type": "ViT", "bytes_per_nonemb_param": 2, "bytes_per_emb_param": 2,
            "num_transformer_layers": 24, "num_transformer_heads": 16, "attention_dim": 1024,
            "transformer_fc_dim": 4096, "image_size": 640, "patch_dim": 16})
    }

    fn run(loader: Value) -> Report {
        evaluate(&validate(&raw(vit(), loader)).expect("valid"))
    }

    fn refused(loader: Value) -> Vec<FieldError> {
        validate(&raw(vit(), loader)).expect_err("refused")
    }

    fn input_bound(r: &Report) -> (f64, f64, LoaderBound) {
        match r.limits.iter().find(|l| matches!(l, Limit::InputBound { .. })) {
            Some(Limit::InputBound { loader_samples_per_s, compute_samples_per_s, by }) => {
                (*loader_samples_per_s, *compute_samples_per_s, *by)
            }
            _ => panic!("not input-bound: {:?}", r.limits),
        }
    }

    #[test]
    fn decoding_1080p_clips_on_the_cpus_paces_the_gpus_and_says_why() {
        let clips = json!({"loader_frames_per_sample": 16, "loader_frame_stride": 4,
            "loader_frame_width": 1920, "loader_frame_height": 1080, "loader_cores_per_node": 128});
        let r = run(clips.clone());
        // 128 cores x 96 frames/s at 1080p over 185.5 frames per clip: 66 clips/s.
        let want = 128.0 * CORE_PIXELS_PER_S / (185.5 * 1920.0 * 1080.0);
        assert!((want - 66.2).abs() < 0.1, "{want}");
        let (rate, gpus, by) = input_bound(&r);
        assert_eq!(by, LoaderBound::Decoding);
        assert!((rate / want - 1.0).abs() < 1e-12 && (r.throughput_samples_per_s / want - 1.0).abs() < 1e-9);
        assert!(gpus > 4.0 * want, "the GPUs alone: {gpus}");
        // The wait's explanation: its formula's terms and its length, the op's.
        let s = validate(&raw(vit(), clips)).expect("valid");
        let wait = r.timeline.iter().find(|o| o.name.kind == OpKind::Idle).expect("an input wait");
        let e = explain(&s, &wait.name).expect("explained");
        assert_eq!(e.seconds, wait.duration_s);
        let value = |symbol| e.terms.iter().find(|t| t.symbol == symbol).map(|t| t.value);
        assert_eq!(value("F"), Some(185.5));
        assert_eq!(value("P"), Some(1920.0 * 1080.0));
        assert_eq!(value("c"), Some(128.0));
        let b = value("B").expect("B");
        let t_compute = value("t_compute").expect("t_compute");
        assert!((b / want - t_compute - e.seconds).abs() < 1e-9 * b / want);
        assert!((t_compute - b / gpus).abs() < 1e-9 * t_compute, "the GPUs' own time");
        // The GPUs' decoders add their pixels: 8 x 2,624 frames/s more.
        let both = run(json!({"loader_frames_per_sample": 16, "loader_frame_stride": 4,
            "loader_frame_width": 1920, "loader_frame_height": 1080, "loader_cores_per_node": 128,
            "loader_gpu_pixels_per_s": A100_NVDEC_PIXELS_PER_S}));
        let want = (128.0 * CORE_PIXELS_PER_S + 8.0 * A100_NVDEC_PIXELS_PER_S) / (185.5 * 1920.0 * 1080.0);
        assert!((input_bound(&both).0 / want - 1.0).abs() < 1e-12);
        // A tenth of the pixels (re-encoded at 320 lines) decodes 11 times as many clips: the
        // GPUs set the pace again, at their own rate.
        let small = run(json!({"loader_frames_per_sample": 16, "loader_frame_stride": 4,
            "loader_frame_width": 569, "loader_frame_height": 320, "loader_cores_per_node": 128}));
        assert!(small.limits.iter().all(|l| !matches!(l, Limit::InputBound { .. })), "{:?}", small.limits);
        assert!((small.throughput_samples_per_s / gpus - 1.0).abs() < 1e-9);
    }

    #[test]
    fn only_the_first_stage_of_an_outermost_pipeline_takes_input() {
        // ViT-L on 2 nodes of 8: a 2-stage pipeline outermost puts stage 0 on the first node,
        // whose 128 cores alone decode; inside the data parallelism every node has stage-0
        // ranks and decodes.
        let run = |levels: Value, degrees: Value| {
            let mut r = raw(
                vit(),
                json!({"loader_frames_per_sample": 16, "loader_frame_stride": 4,
                "loader_frame_width": 1920, "loader_frame_height": 1080, "loader_cores_per_node": 128}),
            );
            let sys = r.system.as_mut().expect("a system");
            sys.num_devices = Some(crate::engine::RawValue::Int(16));
            sys.num_nodes = Some(crate::engine::RawValue::Int(2));
            sys.ar_perc_intra = Some(crate::engine::RawValue::Float(0.5));
            let task = r.task.as_mut().expect("a task");
            task.transformer_parallel = serde_json::from_value(json!(levels)).ok();
            task.transformer_parallel_degree = serde_json::from_value(json!(degrees)).ok();
            task.emb_parallel_degree = serde_json::from_value(json!([16])).ok();
            let s = validate(&r).expect("valid");
            (input_nodes(&s), s.task().setup.loader.rate(&s).expect("a rate").0)
        };
        let one_node = 128.0 * CORE_PIXELS_PER_S / (185.5 * 1920.0 * 1080.0);
        let (nodes, rate) = run(json!(["ddp", "pp"]), json!([8, 2]));
        assert_eq!(nodes, 1);
        assert!((rate / one_node - 1.0).abs() < 1e-12, "{rate}");
        let (nodes, rate) = run(json!(["pp", "ddp"]), json!([2, 8]));
        assert_eq!(nodes, 2);
        assert!((rate / one_node - 2.0).abs() < 1e-12, "{rate}");
        let (nodes, _) = run(json!(["ddp"]), json!([16]));
        assert_eq!(nodes, 2);
    }

    #[test]
    fn the_slowest_part_of_the_pipeline_sets_its_rate() {
        let decode = json!({"loader_frames_per_sample": 1, "loader_frame_width": 500,
            "loader_frame_height": 375, "loader_cores_per_node": 1, "loader_core_pixels_per_s": 1.875e6});
        // One core decoding 10 images of 500 x 375 per second.
        assert_eq!(
            input_bound(&run(decode.clone())),
            (10.0, input_bound(&run(decode.clone())).1, LoaderBound::Decoding)
        );
        // Storage slower still: 1 MB per image at 5 MB/s.
        let mut slower = decode.clone();
        slower["loader_bytes_per_sample"] = json!(1e6);
        slower["loader_storage_bytes_per_s"] = json!(5e6);
        let (rate, _, by) = input_bound(&run(slower.clone()));
        assert_eq!((rate, by), (5.0, LoaderBound::Storage));
        // A measured rate lower than both.
        slower["data_loader_samples_per_s"] = json!(2.0);
        assert_eq!(input_bound(&run(slower)).0, 2.0);
        // Storage alone (text, say): its rate.
        let (rate, _, by) =
            input_bound(&run(json!({"loader_bytes_per_sample": 1e6, "loader_storage_bytes_per_s": 3e6})));
        assert_eq!((rate, by), (3.0, LoaderBound::Storage));
    }

    #[test]
    fn a_cnn_waits_for_its_jpeg_decoders_and_explains_the_wait_the_same_way() {
        // ResNet-50 on 8 A100s, 64 images each; ImageNet's JPEGs (about 500 x 375) decoded by 8
        // cores at 100 million pixels/s: 4,267 images/s, below what the GPUs would do.
        let resnet = json!({"name": "ResNet-50", "type": "CNN", "network": "resnet50", "image_size": 224,
            "num_classes": 1000, "bytes_per_nonemb_param": 2});
        let mut r = raw(resnet, json!({}));
        let task: RawTask = serde_json::from_value(json!({"name": "t", "type": "pretrain",
            "mlp_parallel": ["ddp"], "mlp_parallel_degree": [8], "local_mlp_bs": 64,
            "loader_frames_per_sample": 1, "loader_frame_width": 500, "loader_frame_height": 375,
            "loader_cores_per_node": 8, "loader_core_pixels_per_s": 1e8}))
        .expect("a task");
        r.task = Some(task);
        let s = validate(&r).expect("valid");
        let report = evaluate(&s);
        let want = 8.0 * 1e8 / (500.0 * 375.0);
        let (rate, _, by) = input_bound(&report);
        assert_eq!(by, LoaderBound::Decoding);
        assert!((rate / want - 1.0).abs() < 1e-12 && (report.throughput_samples_per_s / want - 1.0).abs() < 1e-9);
        let wait = report.timeline.iter().find(|o| o.name.kind == OpKind::Idle).expect("an input wait");
        let e = explain(&s, &wait.name).expect("explained");
        assert_eq!(e.seconds, wait.duration_s);
        assert!(e.formula.contains("R_core") && e.terms.iter().any(|t| t.symbol == "F" && t.value == 1.0));
    }

    #[test]
    fn an_image_is_its_own_keyframe_and_a_clip_defaults_to_x264_s_interval() {
        let scenario = |frames: u64| {
            let s = validate(&raw(
                vit(),
                json!({"loader_frames_per_sample": frames, "loader_frame_width": 224,
                "loader_frame_height": 224, "loader_cores_per_node": 8}),
            ))
            .expect("valid");
            s.task().setup.loader.decode.clone().expect("decoding")
        };
        assert_eq!(scenario(1).keyframe_interval, 1);
        assert_eq!(scenario(1).frames_decoded_per_sample(), 1.0);
        assert_eq!(scenario(16).keyframe_interval, X264_KEYFRAME_INTERVAL);
        assert_eq!(scenario(16).core_pixels_per_s, CORE_PIXELS_PER_S);
        assert_eq!(scenario(16).frame_stride, 1);
    }

    #[test]
    fn an_incomplete_pipeline_is_refused_at_the_field_that_is_missing() {
        let at = |e: Vec<FieldError>| e.into_iter().map(|e| (e.field, e.message)).collect::<Vec<_>>();
        // A decoding key without the frames per sample would do nothing.
        let e = at(refused(json!({"loader_cores_per_node": 64})));
        assert_eq!(e[0].0, "task.loader_cores_per_node");
        assert!(e[0].1.contains("task.loader_frames_per_sample"), "{e:?}");
        // The frame size.
        let e = at(refused(
            json!({"loader_frames_per_sample": 16, "loader_frame_width": 1920, "loader_cores_per_node": 64}),
        ));
        assert_eq!(e[0].0, "task.loader_frame_height");
        assert!(e[0].1.contains("frame size"), "{e:?}");
        // No decoder at all.
        let e = at(refused(json!({"loader_frames_per_sample": 16, "loader_frame_width": 1920,
            "loader_frame_height": 1080})));
        assert_eq!(e[0].0, "task.loader_cores_per_node");
        assert!(e[0].1.contains("loader_gpu_pixels_per_s"), "{e:?}");
        // Storage needs both its keys.
        let e = at(refused(json!({"loader_bytes_per_sample": 1e6})));
        assert_eq!(e[0].0, "task.loader_storage_bytes_per_s");
        // Out of range: a zero stride, a text.
        assert_eq!(
            at(refused(json!({"loader_frames_per_sample": 16, "loader_frame_width": 1920,
            "loader_frame_height": 1080, "loader_cores_per_node": 8, "loader_frame_stride": 0})))[0]
                .0,
            "task.loader_frame_stride"
        );
        assert_eq!(at(refused(json!({"loader_frames_per_sample": "many"})))[0].0, "task.loader_frames_per_sample");
    }

    fn clip(f: u64, s: u64, k: u64) -> Decode {
        Decode {
            frames_per_sample: f,
            frame_stride: s,
            keyframe_interval: k,
            frame_pixels: 1920.0 * 1080.0,
            cores_per_node: 128,
            core_pixels_per_s: CORE_PIXELS_PER_S,
            gpu_pixels_per_s: 0.0,
        }
    }

    #[test]
    fn a_clip_decodes_from_the_keyframe_before_it_to_its_last_frame() {
        // 16 frames 4 apart, a keyframe every 250: 124.5 frames before the clip on average,
        // then 1 + 15 x 4.
        assert_eq!(clip(16, 4, 250).frames_decoded_per_sample(), 124.5 + 1.0 + 60.0);
        // An image (or an all-intra video) decodes only its frames.
        assert_eq!(clip(1, 1, 1).frames_decoded_per_sample(), 1.0);
        assert_eq!(clip(8, 1, 1).frames_decoded_per_sample(), 8.0);
        // Frames further apart than half an interval: seeking to the next keyframe is cheaper
        // than decoding through, (k + 1) / 2 frames each.
        assert_eq!(clip(4, 100, 10).frames_decoded_per_sample(), 4.5 + 1.0 + 3.0 * 5.5);
        // Consecutive frames of a clip that starts on a keyframe cost one frame each.
        assert_eq!(clip(32, 1, 1).frames_decoded_per_sample(), 32.0);
    }

    #[test]
    fn the_default_rates_are_the_benchmark_s_frames_per_second_at_1080p() {
        let frames = |px: f64| px / (1920.0 * 1080.0);
        assert!((frames(CORE_PIXELS_PER_S) - 95.96).abs() < 0.01, "{}", frames(CORE_PIXELS_PER_S));
        assert!((frames(A100_NVDEC_PIXELS_PER_S) - 2623.7).abs() < 0.1, "{}", frames(A100_NVDEC_PIXELS_PER_S));
    }
}
