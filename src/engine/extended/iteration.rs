//! One training (or inference) iteration of a transformer in the default model: the op timeline
//! of the pipeline's slowest stage on the shared two-stream scheduler, and the figures the report
//! needs (memory per GPU, utilisation, limits).
//!
//! In 1F1B every stage runs each micro-batch's forward and backward pass once, so the slowest
//! stage sets the pace and is the one drawn ([`TrainingCx::drawn_layers`]). Layers that do not divide evenly go
//! one more to each of the first `L mod p` stages ([`TrainingCx::stage_layers`]); the last stage also
//! runs the output layer, so the slowest is either it or the first stage. The drawn stage waits
//! `(p-1)/v` of its forward passes for the first micro-batch (pipeline fill), then alternates
//! forward and backward passes (1F1B), then waits `(p-1)/v` backward passes (drain). That is
//! the 1F1B bubble of Narayanan et al. 2021, `(p-1)/v x (t_f + t_b)` per iteration, i.e. a
//! fraction `(p-1)/(m+p-1)` of the pipeline time when v = 1. Gradient synchronisation and the
//! optimizer step follow.

use super::collective::Links;
pub(super) use super::timeline::{name, DataParallelStream, Timeline};
use super::training::{LayerTimes, TrainingCx};
use crate::engine::ops::{Block, Deps, Op, OpKind, Phase};
use crate::engine::report::{
    LayerWork, Limit, LoaderBound, Mode, ModelStats, Parts, Report, SystemStats, Utilization, Work,
};
use crate::engine::scenario::Scenario;
use crate::engine::schedule::Schedule;

/// Where the last op of a pass left off: the latest computation op and the communication op
/// the next computation must wait for.
#[derive(Clone, Copy, Debug, Default)]
struct Cursor {
    compute: Option<u32>,
    gate: Option<u32>,
}

impl Cursor {
    fn deps(&self) -> [Option<u32>; 2] {
        [self.compute, self.gate]
    }
}

impl TrainingCx<'_> {
    /// The pipeline's fill (or its drain) in passes of the drawn stage: p - 1 of its largest
    /// chunks. With v chunks splitting the stage evenly that is (p - 1) / v passes (Narayanan
    /// et al., SC21, section 2.2); with an uneven split the largest chunk paces the schedule, so
    /// 8 chunks over 10 layers (5 chunks of 2) save no more than 5.
    pub fn bubble_passes(&self) -> f64 {
        self.of_largest_chunk(self.stage, self.lay.pp.size.max(1) as f64 - 1.0)
    }

    /// `x` times the share of stage `stage`'s layers in its largest chunk: 1/v when v chunks
    /// split it evenly, more when they do not (then the largest chunk paces the schedule).
    pub(super) fn of_largest_chunk(&self, stage: u64, x: f64) -> f64 {
        let layers = self.stage_layers(stage).count() as u64;
        if layers == 0 {
            return x;
        }
        x * layers.div_ceil(self.chunks.max(1)) as f64 / layers as f64
    }

    /// The first layer of the drawn stage, and its layers per chunk (the last may hold fewer).
    pub fn drawn_layers(&self) -> (u64, u64) {
        let r = self.stage_layers(self.stage);
        (r.start, (r.end - r.start).div_ceil(self.chunks.max(1)).max(1))
    }

    /// The output layer's forward and backward time on the drawn stage, s: none unless it is
    /// the last stage.
    fn head_times(&self) -> (f64, f64) {
        if self.runs_head() {
            self.edge_times()
        } else {
            (0.0, 0.0)
        }
    }

    /// Emits one micro-batch's forward pass of a chunk of layers; `sync_params`: the pass in
    /// which ZeRO 1/2 gathers the layers' updated weights
    /// ([`TrainingCx::gathers_updated_weights_in_forward`]), the iteration's first.
    fn forward(
        &self,
        tl: &mut Timeline,
        mut c: Cursor,
        layers: std::ops::Range<u64>,
        mb: u32,
        times: &[LayerTimes],
        sync_params: bool,
    ) -> Cursor {
        let sp = self.setup.sequence_parallel;
        let blocking_tp = !self.setup.overlap_tp_comm;
        let first = layers.start;
        let mut lag = c.compute;
        for l in layers {
            let t = times[(l - first) as usize];
            // ZeRO-3: gather the layer's weights, prefetched one layer ahead: it may start
            // when the previous layer starts (FSDP's default prefetch depth). ZeRO 1/2 gathering
            // the updated weights in the first forward pass does the same: Megatron-core's
            // forward pre-hook waits for a bucket's gather and dispatches the next.
            let entry = c.compute;
            let (gather_s, prefetch) = if sync_params && t.param_sync_s > 0.0 {
                (t.param_sync_s, true)
            } else {
                (t.weight_gather_s, self.setup.prefetches_sharded_weights())
            };
            let gather_after = if prefetch { [lag, None] } else { c.deps() };
            let ag =
                tl.push(name(Block::Attn, l, Phase::Forward, OpKind::WeightAllGather, mb), gather_s, &gather_after);
            let mut gate = [c.compute, c.gate, ag];
            if sp {
                let g =
                    tl.push(name(Block::Attn, l, Phase::Forward, OpKind::ActAllGather, mb), t.attn_tp_comm_s, &gate);
                // Overlapped, the gather feeds the GEMM chunk by chunk (Transformer Engine's
                // userbuffers): no op waits for all of it, as none waits for an all-reduce.
                if blocking_tp {
                    gate = [c.compute, g, ag];
                }
            }
            let ring =
                tl.push(name(Block::Attn, l, Phase::Forward, OpKind::KvRing, mb), t.kv_ring_s, &[c.compute, c.gate]);
            let attn = tl.push(name(Block::Attn, l, Phase::Forward, OpKind::Compute, mb), t.attn_fwd_s, &gate);
            let kind = if sp { OpKind::ActReduceScatter } else { OpKind::ActAllReduce };
            let comm = tl.push(name(Block::Attn, l, Phase::Forward, kind, mb), t.attn_tp_comm_s, &[attn, ring]);
            let mut wait = if blocking_tp { comm } else { None };
            if sp {
                let g = tl.push(
                    name(Block::Fc, l, Phase::Forward, OpKind::ActAllGather, mb),
                    t.ffn_tp_comm_s,
                    &[attn, comm],
                );
                wait = if blocking_tp { g.or(wait) } else { None };
            }
            let dispatch =
                tl.push(name(Block::Moe, l, Phase::Forward, OpKind::MoeDispatch, mb), t.moe_a2a_s, &[attn, wait, ring]);
            let ffn = tl.push(
                name(Block::Fc, l, Phase::Forward, OpKind::Compute, mb),
                t.ffn_fwd_s,
                &[attn, wait, dispatch, ring],
            );
            let combine = tl.push(name(Block::Moe, l, Phase::Forward, OpKind::MoeCombine, mb), t.moe_a2a_s, &[ffn]);
            let comm = tl.push(name(Block::Fc, l, Phase::Forward, kind, mb), t.ffn_tp_comm_s, &[ffn, combine]);
            lag = entry;
            c = Cursor { compute: ffn.or(attn), gate: if blocking_tp { comm.or(combine) } else { combine } };
        }
        c
    }

    /// Emits one micro-batch's backward pass of a chunk of layers (in reverse).
    #[allow(clippy::too_many_arguments)]
    fn backward(
        &self,
        tl: &mut Timeline,
        mut c: Cursor,
        layers: std::ops::Range<u64>,
        mb: u32,
        times: &[LayerTimes],
        sync_grads: bool,
        grad_ops: &mut Vec<u32>,
    ) -> Cursor {
        let sp = self.setup.sequence_parallel;
        let blocking_tp = !self.setup.overlap_tp_comm;
        let first = layers.start;
        // A recomputed forward pass repeats its tensor-parallel communication and, in a
        // mixture of experts' feed-forward block, its all-to-alls.
        let again = |block: Block| if self.replays_forward_comm(block) { 2.0 } else { 1.0 };
        let (attn_again, ffn_again) = (again(Block::Attn), again(Block::Fc));
        let mut lag = c.compute;
        for l in layers.rev() {
            let t = times[(l - first) as usize];
            if t.attn_bwd_s + t.ffn_bwd_s <= 0.0 {
                continue;
            }
            let entry = c.compute;
            let gather_after = if self.setup.prefetches_sharded_weights() { [lag, None] } else { c.deps() };
            let ag = tl.push(
                name(Block::Fc, l, Phase::Backward, OpKind::WeightAllGather, mb),
                t.weight_gather_s,
                &gather_after,
            );
            // Without sequence parallelism each block's input gradient is all-reduced once;
            // with it, the output gradient is gathered first and the input gradient
            // reduce-scattered after (the transposes of the forward's collectives).
            let kind = if sp { OpKind::ActReduceScatter } else { OpKind::ActAllReduce };
            let combine = tl.push(
                name(Block::Moe, l, Phase::Backward, OpKind::MoeCombine, mb),
                ffn_again * t.moe_a2a_s,
                &c.deps(),
            );
            let mut wait = [c.gate, combine];
            if sp {
                let g = tl.push(
                    name(Block::Fc, l, Phase::Backward, OpKind::ActAllGather, mb),
                    ffn_again * t.ffn_tp_comm_s,
                    &[c.compute, c.gate, combine],
                );
                if blocking_tp {
                    wait = [g.or(c.gate), combine];
                }
            }
            let ffn = tl.push(
                name(Block::Fc, l, Phase::Backward, OpKind::Compute, mb),
                t.ffn_bwd_s,
                &[c.compute, wait[0], wait[1], ag],
            );
            let dispatch =
                tl.push(name(Block::Moe, l, Phase::Backward, OpKind::MoeDispatch, mb), ffn_again * t.moe_a2a_s, &[ffn]);
            let comm =
                tl.push(name(Block::Fc, l, Phase::Backward, kind, mb), ffn_again * t.ffn_tp_comm_s, &[ffn, dispatch]);
            let mut wait = if blocking_tp { comm.or(dispatch) } else { dispatch };
            if sp {
                let g = tl.push(
                    name(Block::Attn, l, Phase::Backward, OpKind::ActAllGather, mb),
                    attn_again * t.attn_tp_comm_s,
                    &[ffn, comm],
                );
                wait = if blocking_tp { g.or(wait) } else { dispatch };
            }
            let ring =
                tl.push(name(Block::Attn, l, Phase::Backward, OpKind::KvRing, mb), 2.0 * t.kv_ring_s, &[ffn, wait]);
            let attn = tl.push(name(Block::Attn, l, Phase::Backward, OpKind::Compute, mb), t.attn_bwd_s, &[ffn, wait]);
            let comm =
                tl.push(name(Block::Attn, l, Phase::Backward, kind, mb), attn_again * t.attn_tp_comm_s, &[attn, ring]);
            let gate = if blocking_tp { comm.or(ring) } else { ring };
            // Gradients: ZeRO-3 (and ZeRO-2 over several micro-batches) reduce-scatters every
            // micro-batch; otherwise bucketed reduction runs during the last micro-batch's
            // backward pass.
            if (self.reduces_every_micro_batch() || sync_grads) && t.grad_sync_s > 0.0 {
                let kind = self.grad_reduction().0;
                if let Some(g) = tl.push(name(Block::Attn, l, Phase::Backward, kind, mb), t.grad_sync_s, &[attn]) {
                    grad_ops.push(g);
                }
            }
            lag = entry;
            c = Cursor { compute: attn.or(ffn), gate };
        }
        c
    }

    /// The drawn stage's layers: the first one, each layer's op durations, and the layer
    /// ranges of its chunks.
    fn stage_work(&self) -> (u64, Vec<LayerTimes>, Vec<std::ops::Range<u64>>) {
        let (first, per_chunk) = self.drawn_layers();
        let last = self.stage_layers(self.stage).end;
        // A layer's durations depend on the layer only through its stack (an encoder-decoder's
        // encoder or decoder) and the backward work it does (`layer_times`), so runs of alike
        // layers share one computation: the explorer builds thousands of stages, each of tens
        // of layers.
        let mut times: Vec<LayerTimes> = Vec::with_capacity((last - first) as usize);
        let mut previous: Option<((bool, bool, bool), LayerTimes)> = None;
        for l in first..last {
            let (act, wgt) = self.backward_work(l);
            let work = (act, wgt, l < self.d.encoder_layers);
            let t = match previous {
                Some((w, t)) if w == work => t,
                _ => self.layer_times(l),
            };
            previous = Some((work, t));
            times.push(t);
        }
        let chunks = (0..self.chunks)
            .map(|c| (first + c * per_chunk).min(last)..(first + (c + 1) * per_chunk).min(last))
            .filter(|r| !r.is_empty())
            .collect();
        (first, times, chunks)
    }

    /// Which data-parallel collectives run on a stream of their own ([`Stream::DataParallel`]):
    /// those whose ranks span nodes, whose bytes then go over the NICs while the tensor-parallel
    /// and pipeline transfers use NVLink. PyTorch gives each process group its own NCCL stream,
    /// so Megatron-LM's bucketed gradient reduction (`--overlap-grad-reduce`) and FSDP's
    /// gathers run beside the tensor-parallel collectives instead of queueing with them.
    /// Only where the plan has other collectives (tensor, context, expert or pipeline
    /// parallelism): without them the communication stream would run the same ops in the same
    /// order, and the chart would draw an empty lane.
    fn data_parallel_stream(&self) -> DataParallelStream {
        let l = &self.lay;
        if [l.tp, l.cp, l.pp, l.ep].iter().all(|g| g.size <= 1) {
            return DataParallelStream::default();
        }
        let spans = |g: super::collective::Group| g.size > 1 && !g.within_node();
        // The gathers: ZeRO-3's of each layer's weights, or else ZeRO-1/2's of the updated
        // weights after the step.
        let gathers = if self.zero3_group().size > 1 { self.zero3_group() } else { self.zero_group() };
        DataParallelStream { gathers: spans(gathers), reductions: spans(self.lay.weight_dp) }
    }

    /// The micro-batch (1 to m) after whose backward pass through chunk `k` of `v` the timeline
    /// reduces that chunk's gradients, which it draws micro-batch after micro-batch. Without
    /// interleaving, the last: every layer's gradients are final after it. With interleaving
    /// the backward passes run in rounds of p micro-batches per chunk, the last chunk first
    /// (Megatron-LM's interleaved 1F1B, `get_model_chunk_id`), and each chunk's gradients are
    /// reduced once its last micro-batch is through (`is_last_microbatch_for_model_chunk`):
    /// chunk k's are final a fraction 1 - k / (R v) into the backward passes, R = m / p rounds,
    /// which is micro-batch m - floor(k p / v) of the timeline's m.
    pub fn last_backward_of_chunk(&self, k: u64, v: u64) -> u64 {
        let m = self.micro_batches;
        if v <= 1 {
            return m;
        }
        let p = self.lay.pp.size.max(1);
        m.saturating_sub(k * p / v).max(1)
    }

    /// One micro-batch's forward and backward time on the drawn stage, s, as the pipeline
    /// bubble needs them: measured on a scratch timeline of the same ops.
    pub fn pass_times(&self) -> (f64, f64) {
        let (first, times, chunks) = self.stage_work();
        let (head_f, head_b) = self.head_times();
        let p2p = self.p2p_s();
        let mut scratch = Timeline::with_collective_cycle(64, self.setup.collective_cycle_s)
            .with_data_parallel_stream(self.data_parallel_stream());
        let mut grad = Vec::new();
        let mut c = Cursor::default();
        for r in &chunks {
            let recv = scratch.push(name(Block::Pipeline, 0, Phase::Forward, OpKind::PipeTransfer, 1), p2p, &c.deps());
            c.gate = recv.or(c.gate);
            c = self.forward(&mut scratch, c, r.clone(), 1, &times[(r.start - first) as usize..], false);
        }
        let h = scratch.push(name(Block::Head, 0, Phase::Forward, OpKind::Compute, 1), head_f, &c.deps());
        c.compute = h.or(c.compute);
        let fwd_end = scratch.end_of(c.compute).max(scratch.end_of(c.gate));
        if !self.trains {
            return (fwd_end, 0.0);
        }
        let hb = scratch.push(name(Block::Head, 0, Phase::Backward, OpKind::Compute, 1), head_b, &c.deps());
        c.compute = hb.or(c.compute);
        for r in chunks.iter().rev() {
            c = self.backward(&mut scratch, c, r.clone(), 1, &times[(r.start - first) as usize..], false, &mut grad);
            let send = scratch.push(name(Block::Pipeline, 0, Phase::Backward, OpKind::PipeTransfer, 1), p2p, &c.deps());
            c.gate = send.or(c.gate);
        }
        let end = scratch.end_of(c.compute).max(scratch.end_of(c.gate));
        (fwd_end, (end - fwd_end).max(0.0))
    }

    /// The whole iteration's timeline, and the launch waits in its collectives' durations.
    fn timeline(&self) -> (Vec<Op>, Schedule, Vec<(u32, f64)>) {
        let p = self.lay.pp.size.max(1);
        let m = self.micro_batches;
        let (first, times, chunks) = self.stage_work();
        let per_chunk = self.drawn_layers().1;
        let (head_f, head_b) = self.head_times();
        let input_s = if p == 1 { self.input_time() } else { 0.0 };
        let p2p = self.p2p_s();
        let zero3 = self.zero3_group().size > 1;
        let overlap_grads = self.setup.overlap_grad_reduce && !zero3;
        let (t_f, t_b) = self.pass_times();

        let ops_per_mb = (per_chunk as usize * 16 + 8) * chunks.len();
        let mut tl = Timeline::with_collective_cycle(ops_per_mb * m as usize + 16, self.setup.collective_cycle_s)
            .with_data_parallel_stream(self.data_parallel_stream());
        let mut c = Cursor::default();
        let bubble = self.bubble_passes();
        let fill = tl.push(name(Block::Pipeline, 0, Phase::Forward, OpKind::Idle, 0), bubble * t_f, &[]);
        c.compute = fill;
        let mut grad_ops = Vec::new();
        for i in 1..=m {
            let mb = i.min(u32::MAX as u64) as u32;
            let e = tl.push(name(Block::Emb, 0, Phase::Forward, OpKind::Compute, mb), input_s, &c.deps());
            c.compute = e.or(c.compute);
            for r in &chunks {
                let recv = tl.push(name(Block::Pipeline, 0, Phase::Forward, OpKind::PipeTransfer, mb), p2p, &c.deps());
                c.gate = recv.or(c.gate);
                c = self.forward(&mut tl, c, r.clone(), mb, &times[(r.start - first) as usize..], i == 1);
            }
            let h = tl.push(name(Block::Head, 0, Phase::Forward, OpKind::Compute, mb), head_f, &c.deps());
            c.compute = h.or(c.compute);
            if !self.trains {
                continue;
            }
            let hb = tl.push(name(Block::Head, 0, Phase::Backward, OpKind::Compute, mb), head_b, &c.deps());
            c.compute = hb.or(c.compute);
            for (k, r) in chunks.iter().enumerate().rev() {
                let sync = overlap_grads && i == self.last_backward_of_chunk(k as u64, chunks.len() as u64);
                c = self.backward(&mut tl, c, r.clone(), mb, &times[(r.start - first) as usize..], sync, &mut grad_ops);
                let send = tl.push(name(Block::Pipeline, 0, Phase::Backward, OpKind::PipeTransfer, mb), p2p, &c.deps());
                c.gate = send.or(c.gate);
            }
        }
        if self.trains {
            let drain = tl.push(name(Block::Pipeline, 0, Phase::Backward, OpKind::Idle, 0), bubble * t_b, &c.deps());
            c.compute = drain.or(c.compute);
            // Gradient synchronisation not done during the backward pass.
            let mut after: Vec<Option<u32>> = vec![c.compute, c.gate];
            after.extend(grad_ops.iter().map(|g| Some(*g)));
            let (kind, sync_s) = self.final_grad_sync();
            let sync = tl.push(name(Block::Optimizer, 0, Phase::Backward, kind, 0), sync_s, &after);
            after.push(sync);
            let step = tl.push(
                name(Block::Optimizer, 0, Phase::Backward, OpKind::Compute, 0),
                self.optimizer_step_s(),
                &after,
            );
            tl.push(
                name(Block::Optimizer, 0, Phase::Backward, OpKind::WeightAllGather, 0),
                self.param_gather_s(),
                &[step],
            );
        }
        tl.finish_with_waits()
    }
}

/// Evaluates a transformer scenario with the default model.
pub fn evaluate(cx: &TrainingCx) -> Report {
    let (mut ops, mut schedule, launch_waits) = cx.timeline();
    let mut limits = Vec::new();
    limits.extend(wait_for_input(&mut ops, &mut schedule, cx.global_batch, cx.setup.loader.rate(cx.s)));
    limits.extend(cx.host_bound());
    let memory = cx.memory();
    limits.extend(memory.does_not_fit());
    let n = cx.s.system.num_devices as f64;
    let per_sample_fwd = cx.d.forward_flops_per_sample();
    let local = cx.local_batch as f64 / (cx.lay.tp.size * cx.lay.cp.size) as f64;
    let enc_dec = cx.d.is_encoder_decoder();
    let work = Work {
        layers: cx
            .d
            .stacks()
            .enumerate()
            .map(|(i, (_, d))| {
                let fwd_layer = d.layer_flops().total() * d.seq;
                LayerWork {
                    label: match (enc_dec, i) {
                        (false, _) => "Transformer layer",
                        (true, 0) => "Encoder layer",
                        (true, _) => "Decoder layer",
                    },
                    local_flops: fwd_layer * local,
                    global_flops: fwd_layer * cx.global_batch as f64,
                }
            })
            .collect(),
        local_total_flops: per_sample_fwd * local,
        global_total_flops: per_sample_fwd * cx.global_batch as f64,
        lookup_bytes_per_local_batch: 0.0,
        lookup_bytes_per_global_batch: 0.0,
        lookup_bytes_per_device: 0.0,
    };
    let (input, output) = cx.d.edge_params();
    let model = ModelStats {
        params: cx.d.params(),
        dense_params: cx.d.params() - input - output,
        emb_params: input + output,
        flops_per_sample: per_sample_fwd,
        lookup_bytes_per_sample: 0.0,
    };
    let system = system_stats(cx.s, cx.flops_per_s, cx.hbm_bytes_per_s, &cx.links);
    let parts = Parts { ops, schedule, global_batch: cx.global_batch, memory, work, model, system };
    let mut r = Report::assemble(parts, Mode::Default);
    r.launch_waits = launch_waits;
    let model_flops = cx.model_flops_per_sample() * cx.global_batch as f64;
    let hardware_flops = cx.hardware_flops_per_sample() * cx.global_batch as f64;
    // On two GPU types (a pipeline placed by speed), each GPU's own peak.
    let peak = super::mixed::mean_peak_flops_per_s(cx.s);
    let denom = r.iteration_s * n * peak;
    r.utilization = Some(Utilization {
        model_flops,
        hardware_flops,
        peak_flops_per_s: peak,
        mfu: model_flops / denom,
        hfu: hardware_flops / denom,
        model_flops_per_s_per_gpu: model_flops / (r.iteration_s * n),
        formula: match (cx.trains, cx.fp8_flops_per_s.is_some()) {
            (true, true) => "MFU = model FLOPs per iteration (forward + backward, no recomputation) / (iteration time x GPUs x 16-bit peak FLOP/s per GPU; FP8 training is measured against the BF16 peak, as most sources quote it)",
            (true, false) => "MFU = model FLOPs per iteration (forward + backward, no recomputation) / (iteration time x GPUs x peak FLOP/s per GPU)",
            (false, _) => "MFU = model FLOPs per iteration (the forward pass) / (iteration time x GPUs x peak FLOP/s per GPU)",
        },
    });
    r.limits = limits;
    r
}

/// Holds the iteration until an input pipeline delivering `rate` samples/s to the whole job
/// (and what sets it, [`crate::engine::scenario::Loader::rate`]) has brought the global batch:
/// when the GPUs would finish first, an input wait after the last op, and the limit that says
/// so.
pub(super) fn wait_for_input(
    ops: &mut Vec<Op>,
    schedule: &mut Schedule,
    global_batch: u64,
    rate: Option<(f64, LoaderBound)>,
) -> Option<Limit> {
    let (rate, by) = rate?;
    let need_s = global_batch as f64 / rate;
    if need_s <= schedule.end_s {
        return None;
    }
    let wait = need_s - schedule.end_s;
    let start_s = schedule.end_s;
    ops.push(Op {
        name: name(Block::Input, 0, Phase::Forward, OpKind::Idle, 0),
        duration_s: wait,
        deps: Deps::default(),
        start_s,
    });
    schedule.end_s = need_s;
    schedule.totals.idle_s += wait;
    Some(Limit::InputBound { loader_samples_per_s: rate, compute_samples_per_s: global_batch as f64 / start_s, by })
}

/// The report of a run that recomputes nothing (the recommendation families, CNNs): its parts
/// assembled, with its collectives' launch waits and its limits, and a utilisation of
/// `forward_flops_per_sample` per sample of the global batch, 3x that when training (HFU =
/// MFU), against `peak_flops_per_s` per GPU.
pub(super) fn plain_report(
    parts: Parts,
    launch_waits: Vec<(u32, f64)>,
    limits: Vec<Limit>,
    forward_flops_per_sample: f64,
    trains: bool,
    peak_flops_per_s: f64,
    formula: &'static str,
) -> Report {
    let passes = if trains { 3.0 } else { 1.0 };
    let model_flops = forward_flops_per_sample * parts.global_batch as f64 * passes;
    let devices = parts.system.devices;
    let mut r = Report::assemble(parts, Mode::Default);
    let per_gpu_s = r.iteration_s * devices as f64;
    let mfu = model_flops / (per_gpu_s * peak_flops_per_s);
    r.launch_waits = launch_waits;
    r.limits = limits;
    r.utilization = Some(Utilization {
        model_flops,
        hardware_flops: model_flops,
        peak_flops_per_s,
        mfu,
        hfu: mfu,
        model_flops_per_s_per_gpu: model_flops / per_gpu_s,
        formula,
    });
    r
}

/// The system figures of a default-model report: the effective rates it used, and the
/// inter-node bandwidth for every collective (what bounds the ones that cross nodes).
pub(super) fn system_stats(s: &Scenario, flops_per_s: f64, hbm_bytes_per_s: f64, links: &Links) -> SystemStats {
    let sys = &s.system;
    SystemStats {
        devices: sys.num_devices,
        nodes: sys.num_nodes,
        devices_per_node: sys.devices_per_node(),
        flops_per_s,
        mem_bw_bytes_per_s: hbm_bytes_per_s,
        intra_node_bytes_per_s: links.intra_bytes_per_s,
        inter_node_bytes_per_s: links.inter_bytes_per_s,
        all2all_bytes_per_s: links.inter_bytes_per_s,
        allreduce_bytes_per_s: links.inter_bytes_per_s,
        allgather_bytes_per_s: links.inter_bytes_per_s,
        reducescatter_bytes_per_s: links.inter_bytes_per_s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::extended::calibration::{
        COLLECTIVE_BASE_S, EAGER_NORM_KERNELS, FP8_GEMM_EFFICIENCY, FUSED_DISPATCH, HOST_BLOCK_S, KERNEL_OVERHEAD_S,
        MOE_DISPATCH_COPY_GRAD_PASSES, MOE_DISPATCH_COPY_PASSES, MOE_DISPATCH_KERNELS, MOE_DISPATCH_TOKEN_PASSES,
    };
    use crate::engine::extended::collective::Collective;
    use crate::engine::extended::gemm::Gemm;
    use crate::engine::ops::Category;
    use crate::engine::report::MemPart;
    use crate::engine::scenario::{Elementwise, MoeDispatch, Positions};
    use crate::engine::{validate, RawScenario};
    use serde_json::{json, Value};

    /// A GPT-like model on `n` A100-80GB GPUs (8 per node), with task keys merged in.
    fn scenario(n: u64, task: Value) -> Scenario {
        scenario_with(n, task, json!({}))
    }

    /// [`scenario`] with model keys merged in as well.
    fn scenario_with(n: u64, task: Value, model: Value) -> Scenario {
        checked(doc(n, task, model)).unwrap_or_else(|e| panic!("{e:?}"))
    }

    fn checked(doc: Value) -> Result<Scenario, Vec<crate::engine::validate::FieldError>> {
        let raw: RawScenario = serde_json::from_value(doc).expect("raw");
        validate(&raw)
    }

    /// The config of [`scenario_with`].
    fn doc(n: u64, task: Value, model: Value) -> Value {
        let mut t = json!({
            "type": "pretrain", "mode": "default",
            "emb_parallel": ["ddp"], "emb_parallel_degree": [n],
            "local_emb_bs": 8, "local_transformer_bs": 8,
        });
        if let (Some(t), Value::Object(extra)) = (t.as_object_mut(), task) {
            t.extend(extra);
        }
        let mut m = json!({"type": "LLM", "bytes_per_nonemb_param": 2, "bytes_per_emb_param": 2,
            "entries_per_table": 51200, "num_transformer_layers": 32, "num_transformer_heads": 32,
            "attention_dim": 4096, "transformer_fc_dim": 16384, "transformer_seq_len": 2048,
            "attention": "materialized"});
        if let (Some(m), Value::Object(extra)) = (m.as_object_mut(), model) {
            m.extend(extra);
        }
        json!({
            "model": m,
            "system": {"type": "GPU", "num_devices": n, "num_nodes": n.div_ceil(8), "f64_flops": 9.7e12,
                "f32_flops": 156e12, "f16_flops": 312e12, "i8_ops": 624e12, "flops_util": 0.8, "mem_cap": 80e9,
                "mem_bw": 2039e9, "mem_bw_util": 0.836, "num_nvlinks": 12, "bw_per_nvlink": 50e9,
                "nvlink_util": 0.6667, "num_ibroce_ports": 8, "ibroce_bw": 50e9, "ibroce_util": 0.56,
                "ar_perc_intra": if n <= 8 { 1.0 } else { 0.5 }},
            "task": t,
        })
    }

    #[test]
    fn data_parallel_collectives_across_nodes_run_on_their_own_stream() {
        use crate::engine::ops::Stream;
        // TP 2 x DP with sequence parallelism, ZeRO-2 and the gradients reduced during the
        // backward pass; local batch 2 in micro-batches of 1.
        let task = |n: u64, sp: bool| {
            json!({"transformer_parallel": ["tp", "ddp"], "transformer_parallel_degree": [2, n / 2],
                "local_transformer_bs": 2, "micro_batch": 1, "zero_stage": 2, "sequence_parallel": sp,
                "overlap_grad_reduce": true, "overlap_tp_comm": true})
        };
        let on = |r: &Report, s: Stream| r.stream(s).count();
        // Within a node the reductions share NVLink with the tensor-parallel collectives: one
        // communication stream, as MAD-Max has.
        let one = crate::engine::evaluate(&scenario(8, task(8, true)));
        assert_eq!(on(&one, Stream::DataParallel), 0);
        // Across 16 nodes: every gradient reduction, and nothing else, on the data-parallel stream.
        let sp = crate::engine::evaluate(&scenario(128, task(128, true)));
        assert!(on(&sp, Stream::DataParallel) > 0);
        for op in &sp.timeline {
            assert_eq!(op.name.stream() == Stream::DataParallel, op.name.kind.is_data_parallel(), "{}", op.name);
        }
        // So the sequence-parallel all-gathers no longer queue behind a gradient reduction:
        // sequence parallelism moves the bytes of the all-reduces it replaces, and the plan
        // takes within 2% of its time without it (it took 45% longer on one stream).
        let plain = crate::engine::evaluate(&scenario(128, task(128, false)));
        assert!(sp.iteration_s < 1.02 * plain.iteration_s, "{} vs {}", sp.iteration_s, plain.iteration_s);
        // Each stream still runs one op at a time.
        for stream in Stream::ALL {
            let ops: Vec<&Op> = sp.stream(stream).collect();
            assert!(ops.windows(2).all(|w| w[1].start_s >= w[0].end_s() - 1e-12), "{stream:?}");
        }
        // ZeRO-3 across nodes: the weight gathers too.
        let fsdp = |tp: u64| {
            crate::engine::evaluate(&scenario(
                128,
                json!({"transformer_parallel": ["tp", "fsdp"], "transformer_parallel_degree": [tp, 128 / tp],
                    "local_transformer_bs": 2, "micro_batch": 1, "sequence_parallel": tp > 1}),
            ))
        };
        assert!(fsdp(2).stream(Stream::DataParallel).any(|op| op.name.kind == OpKind::WeightAllGather));
        // Plain FSDP has no other collective: its ops stay on the communication stream, where
        // they would run the same.
        let plain = fsdp(1);
        assert_eq!(on(&plain, Stream::DataParallel), 0);
        assert!(plain.stream(Stream::Communication).all(|op| op.name.kind.is_data_parallel()));
    }

    /// [`doc`] on H100 SXMs (the datasheet's dense FP8 peak included), checked.
    fn on_h100(n: u64, task: Value, model: Value) -> Result<Scenario, Vec<crate::engine::validate::FieldError>> {
        let mut d = doc(n, task, model);
        let h100 = json!({"f16_flops": 989.5e12, "i8_ops": 1979e12, "fp8_flops": 1979e12, "mem_bw": 3350e9,
            "num_nvlinks": 18});
        if let (Some(sys), Value::Object(h)) = (d["system"].as_object_mut(), h100) {
            sys.extend(h);
        }
        checked(d)
    }

    #[test]
    fn a_data_parallel_group_split_over_sites_pays_the_wide_area_link_and_nothing_else_does() {
        // tp 8 x dp 8 on 8 nodes, then the same nodes in 2 sites joined by 100 Gb/s, 5 ms apart.
        let task = json!({"transformer_parallel": ["tp", "ddp"], "transformer_parallel_degree": [8, 8]});
        let one = scenario(64, task.clone());
        let mut d = doc(64, task, json!({}));
        d["system"]["num_sites"] = json!(2);
        d["system"]["wan_bw"] = json!(12.5e9);
        d["system"]["wan_latency_s"] = json!(0.005);
        let two = checked(d).unwrap_or_else(|e| panic!("{e:?}"));
        let run = |s: &Scenario| TrainingCx::new(s).map(|cx| evaluate(&cx)).expect("a transformer");
        let (a, b) = (run(&one), run(&two));
        assert_eq!(a.timeline.len(), b.timeline.len());
        let mut slower = 0;
        for (x, y) in a.timeline.iter().zip(&b.timeline) {
            assert_eq!(x.name, y.name);
            if matches!(x.name.kind, OpKind::GradAllReduce | OpKind::EmbAllReduce) {
                // Each of the 8 GPUs of a site sends its 1/8 share of the gradients across
                // the link at 1/64 of its bandwidth (12.5 GB/s / 64 GPUs per site).
                assert!(y.duration_s > x.duration_s + 0.01, "{:?}: {} vs {}", x.name, y.duration_s, x.duration_s);
                slower += 1;
            } else {
                assert_eq!(x.duration_s, y.duration_s, "{:?}", x.name);
            }
        }
        assert!(slower > 0);
        assert!(b.iteration_s > a.iteration_s);
    }

    #[test]
    fn a_collective_launched_by_a_host_thread_starts_half_a_cycle_after_its_inputs() {
        let n = |layer: u64, kind: OpKind| name(Block::Attn, layer, Phase::Backward, kind, 0);
        let cycle_s = 1e-3;
        let mut tl = Timeline::with_collective_cycle(8, cycle_s);
        let c0 = tl.push(n(0, OpKind::Compute), 2e-3, &[]);
        let g0 = tl.push(n(0, OpKind::GradAllReduce), 1e-4, &[c0]);
        // Its inputs are ready at 2 ms: it ends half a cycle and its own 0.1 ms later.
        assert!((tl.end_of(g0) - 2.6e-3).abs() < 1e-15, "{}", tl.end_of(g0));
        // Computation does not wait for the thread.
        let c1 = tl.push(n(1, OpKind::Compute), 1e-4, &[c0]);
        assert!((tl.end_of(c1) - 2.1e-3).abs() < 1e-15);
        // A collective queued behind the first has waited long enough: it starts when the
        // stream is free and pays no second wait.
        let g1 = tl.push(n(1, OpKind::GradAllReduce), 1e-4, &[c1]);
        assert!((tl.end_of(g1) - 2.7e-3).abs() < 1e-15, "{}", tl.end_of(g1));
        // One whose inputs come later waits from then.
        let c2 = tl.push(n(2, OpKind::Compute), 1e-3, &[c1]);
        let g2 = tl.push(n(2, OpKind::GradAllReduce), 1e-4, &[c2]);
        assert!((tl.end_of(g2) - (3.1e-3 + 0.5e-3 + 1e-4)).abs() < 1e-15, "{}", tl.end_of(g2));
        // Without a cycle nothing waits.
        let mut direct = Timeline::new(2);
        let c = direct.push(n(0, OpKind::Compute), 2e-3, &[]);
        let g = direct.push(n(0, OpKind::GradAllReduce), 1e-4, &[c]);
        assert_eq!(direct.end_of(g), 2.1e-3);
        // The wait counts as the collective's time: exposed communication adds up.
        let (ops, sched) = tl.finish();
        let allreduce: f64 = ops.iter().filter(|o| o.name.kind == OpKind::GradAllReduce).map(|o| o.duration_s).sum();
        assert!((sched.totals.allreduce_s - allreduce).abs() < 1e-18);
        assert!((allreduce - (0.6e-3 + 0.1e-3 + 0.6e-3)).abs() < 1e-15, "{allreduce}");
    }

    #[test]
    fn a_training_step_on_horovod_waits_for_its_last_gradient_all_reduce() {
        // Data-parallel over 8 GPUs, gradients reduced after the backward pass: the step ends
        // with one all-reduce the optimizer waits for, half a 1 ms cycle later with Horovod.
        let task = json!({"transformer_parallel": ["ddp"], "transformer_parallel_degree": [8]});
        let direct = evaluate(&TrainingCx::new(&scenario(8, task.clone())).expect("transformer"));
        let mut with = task;
        with["collective_cycle_ms"] = json!(1);
        let horovod = evaluate(&TrainingCx::new(&scenario(8, with)).expect("transformer"));
        let extra_s = horovod.iteration_s - direct.iteration_s;
        assert!((extra_s - 0.5e-3).abs() < 1e-9, "{extra_s}");
    }

    #[test]
    fn alike_layers_share_their_durations_exactly() {
        // Pre-training, and fine-tuning with the embeddings frozen and layers 10 and up frozen:
        // layer 0 then passes no gradient down, 1-9 train, 10-31 pass gradients only.
        let pretrain = json!({"transformer_parallel": ["tp", "pp"], "transformer_parallel_degree": [4, 2]});
        let finetune = json!({"type": "finetune", "freeze_emb": true, "freeze_transformer": false,
            "min_frozen_layer": 10, "transformer_parallel": ["tp"], "transformer_parallel_degree": [8]});
        for task in [pretrain, finetune] {
            let s = scenario(8, task.clone());
            let cx = TrainingCx::new(&s).expect("transformer");
            let (first, times, _) = cx.stage_work();
            let each: Vec<LayerTimes> = (first..first + times.len() as u64).map(|l| cx.layer_times(l)).collect();
            assert_eq!(times, each, "{task}");
            if task.get("type").is_some() {
                assert!(times.windows(2).any(|w| w[0] != w[1]), "{task}: the frozen layers differ");
            }
        }
    }

    #[test]
    fn one_f_one_b_bubble_is_p_minus_1_over_m_plus_p_minus_1() {
        // 4 stages, 8 micro-batches, no other communication: the idle share of the pipeline
        // part of the iteration is (p-1)/(m+p-1) = 3/11.
        let s =
            scenario(4, json!({"transformer_parallel": ["pp"], "transformer_parallel_degree": [4], "micro_batch": 1}));
        let cx = TrainingCx::new(&s).expect("transformer");
        assert_eq!((cx.lay.pp.size, cx.micro_batches), (4, 8));
        let r = evaluate(&cx);
        let pipeline_s = r.iteration_s - r.totals.get(Category::Optimizer);
        let idle = r.totals.get(Category::Idle);
        let bubble = idle / pipeline_s;
        assert!((bubble - 3.0 / 11.0).abs() < 1e-9, "bubble share {bubble}");
        // Interleaving with v chunks divides the bubble by v.
        let s2 = scenario(
            4,
            json!({"transformer_parallel": ["pp"], "transformer_parallel_degree": [4],
            "micro_batch": 1, "virtual_stages": 2}),
        );
        let r2 = evaluate(&TrainingCx::new(&s2).expect("transformer"));
        let ratio = r2.totals.get(Category::Idle) / idle;
        assert!((ratio - 0.5).abs() < 0.01, "interleaved bubble ratio {ratio}");
    }

    /// A micro-batch of `tokens` tokens' dispatch, forward and backward: its bytes at the
    /// effective HBM bandwidth and `kernels` launches.
    fn dispatch_want(cx: &TrainingCx, tokens: f64, kernels: [f64; 2]) -> [f64; 2] {
        let (fwd, bwd) = cx.d.dispatch_bytes();
        let [k_fwd, k_bwd] = kernels;
        [
            tokens * fwd / cx.hbm_bytes_per_s + k_fwd * KERNEL_OVERHEAD_S,
            tokens * bwd / cx.hbm_bytes_per_s + k_bwd * KERNEL_OVERHEAD_S,
        ]
    }

    #[test]
    fn a_moe_dispatch_runs_on_every_tensor_parallel_gpu_over_all_its_tokens_and_is_kept() {
        // Top-2 of 8 experts of 16,384 against a dense model of 32,768: the same FFN FLOPs and
        // activations per token, so what differs is the router and the dispatch.
        let at = |tp: u64, model: Value| {
            let task = json!({"transformer_parallel": ["tp"], "transformer_parallel_degree": [tp],
                "micro_batch": 2, "sequence_parallel": tp > 1, "recompute": "selective"});
            scenario_with(tp, task, model)
        };
        let moe = || json!({"type": "LLM_MoE", "num_experts": 8, "num_active_experts": 2});
        let dense = || json!({"transformer_fc_dim": 32768});
        let (s1, s8, d8) = (at(1, moe()), at(8, moe()), at(8, dense()));
        fn run(s: &Scenario) -> TrainingCx<'_> {
            TrainingCx::new(s).expect("transformer")
        }
        let (one, eight) = (run(&s1), run(&s8));
        let tokens = 2.0 * 2048.0;
        let expected = dispatch_want(&one, tokens, MOE_DISPATCH_KERNELS);
        assert_eq!(one.dispatch_s(Block::Fc), expected);
        // Eight GPUs each dispatch the whole micro-batch to their eighths of the experts.
        assert_eq!(eight.dispatch_s(Block::Fc), expected);
        assert_eq!(one.dispatch_s(Block::Attn), [0.0; 2]);
        assert_eq!(run(&d8).dispatch_s(Block::Fc), [0.0; 2]);
        // The forward and activation-gradient passes carry it.
        assert!(eight.block_ew_s(Block::Fc) > expected[0] && eight.block_bwd_ew_s(Block::Fc).0 > expected[1]);
        // Selective recomputation keeps the copies into the experts and out of them: 2 x 2
        // copies of each token's 4,096 16-bit values in each of the 32 layers, on every GPU.
        for tp in [1, 8] {
            let (m, d) = (at(tp, moe()), at(tp, dense()));
            let kept = run(&m).stage_activations(0) - run(&d).stage_activations(0);
            let want = 32.0 * tokens * 2.0 * 2.0 * 2.0 * 4096.0;
            assert!((kept - want).abs() < 1e-6 * want, "tp {tp}: {kept} kept against {want}");
        }
    }

    #[test]
    fn overlapped_tensor_parallel_gathers_keep_no_gemm_waiting_as_all_reduces_do_not() {
        // tp 8 on one node, no data parallelism: the tensor-parallel collectives are all the
        // communication. Overlapped with the GEMMs, sequence parallelism's gathers and
        // scatters hide as the all-reduces do, so it runs no slower than without (it splits
        // the norms' work too); blocking, it waits for twice as many collectives of half the
        // bytes each.
        let time = |sp: bool, overlap: bool| {
            let task = json!({"transformer_parallel": ["tp"], "transformer_parallel_degree": [8],
                "micro_batch": 8, "sequence_parallel": sp, "overlap_tp_comm": overlap});
            crate::engine::evaluate(&scenario(8, task))
        };
        let (sp, plain) = (time(true, true), time(false, true));
        assert!(sp.iteration_s <= plain.iteration_s, "{} vs {}", sp.iteration_s, plain.iteration_s);
        assert!(sp.exposed_comm_s < 0.01 * sp.iteration_s, "{} of {}", sp.exposed_comm_s, sp.iteration_s);
        let blocking = time(true, false);
        assert!(blocking.exposed_comm_s > 0.1 * blocking.iteration_s, "{blocking:?}");
    }

    #[test]
    fn deepep_is_chosen_by_name_and_sends_fewer_bytes_across_nodes_only() {
        // Top-8 of 128 experts: 32-way expert parallelism spans 4 nodes, 8-way stays in one.
        let moe = |dispatch: &str, ep: u64| {
            let task = json!({"transformer_parallel": ["ep", "ddp"], "transformer_parallel_degree": [ep, 32 / ep],
                "micro_batch": 1, "recompute": "full"});
            let m = json!({"type": "LLM_MoE", "num_experts": 128, "num_active_experts": 8, "moe_dispatch": dispatch});
            scenario_with(32, task, m)
        };
        let a2a = |s: &Scenario| TrainingCx::new(s).expect("moe").moe_all_to_all_s();
        let (fused, deepep) = (moe("fused", 32), moe("deepep", 32));
        assert_eq!(deepep.model.shape.moe_dispatch, MoeDispatch::DeepEp);
        // Permuted the same way: the same element-wise work.
        let (f, d) = (TrainingCx::new(&fused).expect("moe"), TrainingCx::new(&deepep).expect("moe"));
        assert_eq!(f.dispatch_s(Block::Fc), d.dispatch_s(Block::Fc));
        // Across nodes each token goes once to each node of its experts (3.6 of 4, not 6 remote
        // copies of 8), at the NIC's line rate rather than NCCL's share of it.
        assert!(a2a(&deepep) < a2a(&fused) / 2.0, "{} against {}", a2a(&deepep), a2a(&fused));
        assert!(evaluate(&d).iteration_s < evaluate(&f).iteration_s);
        // Within a node it is NCCL's.
        assert_eq!(a2a(&moe("deepep", 8)), a2a(&moe("fused", 8)));
        // Its explanation says how it counts.
        let r = evaluate(&d);
        let op = r.timeline.iter().find(|o| o.name.kind == OpKind::MoeDispatch).expect("a dispatch");
        let e = crate::engine::extended::explain::explain(&d, &op.name).expect("explained");
        assert!(e.formula.contains("DeepEP"), "{}", e.formula);
        let v = |sym: &str| e.terms.iter().find(|t| t.symbol == sym).map(|t| t.value).expect(sym);
        let rdma_s = v("S") / v("a") * v("n_tok") / (v("r") * v("B_line"));
        let want = COLLECTIVE_BASE_S + rdma_s.max(v("S") / v("B_nvl"));
        assert!((e.seconds - want).abs() < 1e-9 * want, "{} against {want} from its terms", e.seconds);
    }

    #[test]
    fn a_fused_moe_dispatch_moves_and_keeps_less_says_so_and_is_chosen_by_name() {
        // Top-2 of 8 experts on tp 8: the whole micro-batch's dispatch on every GPU, eager
        // (Megatron-core 0.6) or by Transformer Engine's fused permute and unpermute.
        let task = json!({"transformer_parallel": ["tp"], "transformer_parallel_degree": [8],
            "micro_batch": 2, "sequence_parallel": true, "recompute": "selective"});
        let moe = |dispatch: &str| {
            let mut m = json!({"type": "LLM_MoE", "num_experts": 8, "num_active_experts": 2});
            if !dispatch.is_empty() {
                m["moe_dispatch"] = json!(dispatch);
            }
            scenario_with(8, task.clone(), m)
        };
        let (blank, eager, fused) = (moe(""), moe("eager"), moe("fused"));
        assert_eq!(blank.model.shape, eager.model.shape);
        assert_eq!(fused.model.shape.moe_dispatch, MoeDispatch::Fused);
        let (e, f) = (TrainingCx::new(&eager).expect("moe"), TrainingCx::new(&fused).expect("moe"));
        let tokens = 2.0 * 2048.0;
        let want = dispatch_want(&f, tokens, FUSED_DISPATCH.kernels);
        assert_eq!(f.dispatch_s(Block::Fc), want);
        let [ef, eb] = e.dispatch_s(Block::Fc);
        assert!(want[0] < ef / 3.0 && want[1] < eb / 3.0, "{want:?} against {ef} and {eb}");
        // Selective recomputation keeps one copy of each routed token fewer: 2 copies of 4,096
        // 16-bit values per token in each of the 32 layers.
        let less = e.stage_activations(0) - f.stage_activations(0);
        let copy = 32.0 * tokens * 2.0 * 2.0 * 4096.0;
        assert!((less - copy).abs() < 1e-6 * copy, "{less} against {copy}");
        let (re, rf) = (evaluate(&e), evaluate(&f));
        assert!(rf.iteration_s < re.iteration_s, "{} against {}", rf.iteration_s, re.iteration_s);
        // The explanation gives the counts the time used.
        let words = |s: &Scenario, phase: Phase| {
            let cx = TrainingCx::new(s).expect("moe");
            let r = evaluate(&cx);
            let op = r
                .timeline
                .iter()
                .find(|o| o.name.block == Block::Fc && o.name.phase == phase && o.name.kind == OpKind::Compute);
            let e = crate::engine::extended::explain::explain(&cx, &op.expect("a feed-forward op").name)
                .expect("explained");
            e.terms.iter().map(|t| t.meaning).collect::<Vec<_>>().join(" ")
        };
        let [(copy_f, token_f), (copy_b, token_b)] = FUSED_DISPATCH.passes;
        let [k_f, k_b] = FUSED_DISPATCH.kernels;
        let forward = words(&fused, Phase::Forward);
        assert!(
            forward.contains(&format!("({copy_f} passes over each copy, {token_f} over the token, {k_f} kernels")),
            "{forward}"
        );
        assert!(words(&fused, Phase::Backward).contains(&format!("({copy_b} and {token_b}, {k_b} kernels)")));
        let [k_ef, k_eb] = MOE_DISPATCH_KERNELS;
        let eager_words = words(&eager, Phase::Forward);
        assert!(eager_words.contains(&format!("({MOE_DISPATCH_COPY_PASSES} passes over each copy, {MOE_DISPATCH_TOKEN_PASSES} over the token, {k_ef} kernels")), "{eager_words}");
        assert!(words(&eager, Phase::Backward)
            .contains(&format!("({MOE_DISPATCH_COPY_GRAD_PASSES} and {MOE_DISPATCH_TOKEN_PASSES}, {k_eb} kernels)")));
        // An unknown value is refused, naming the key and the choices.
        let errs = checked(doc(
            8,
            task,
            json!({"type": "LLM_MoE", "num_experts": 8, "num_active_experts": 2, "moe_dispatch": "alltoall"}),
        ))
        .expect_err("refused");
        let named = |e: &crate::engine::validate::FieldError| {
            ["eager", "fused", "deepep"].iter().all(|c| e.message.contains(c))
        };
        assert!(errs.iter().any(|e| e.field == "model.moe_dispatch" && named(e)), "{errs:?}");
    }

    #[test]
    fn expert_tensor_parallelism_routes_each_ranks_share_of_the_tokens_to_whole_experts() {
        // Top-2 of 8 experts on tp 8 with sequence parallelism: every rank splits each expert
        // (blank, or 8), two ranks do (2), or none (1: each of the 8 holds one whole expert).
        let task = |etp: Option<u64>| {
            let mut t = json!({"transformer_parallel": ["tp"], "transformer_parallel_degree": [8],
                "micro_batch": 2, "sequence_parallel": true, "recompute": "selective"});
            if let Some(etp) = etp {
                t["expert_tp"] = json!(etp);
            }
            t
        };
        let moe = || json!({"type": "LLM_MoE", "num_experts": 8, "num_active_experts": 2});
        let at = |etp: Option<u64>| scenario_with(8, task(etp), moe());
        let (blank, all, two, none) = (at(None), at(Some(8)), at(Some(2)), at(Some(1)));
        fn cx(s: &Scenario) -> TrainingCx<'_> {
            TrainingCx::new(s).expect("moe")
        }
        assert_eq!(evaluate(&cx(&blank)).iteration_s, evaluate(&cx(&all)).iteration_s);
        let (split, whole) = (cx(&all), cx(&none));
        assert_eq!(
            (split.expert_token_share(), cx(&two).expert_token_share(), whole.expert_token_share()),
            (1.0, 0.25, 0.125)
        );
        // The same expert FLOPs and weights per GPU: one whole expert over an eighth of the
        // tokens' copies, or eighths of all eight experts over all of them.
        let expert_flops =
            |c: &TrainingCx| -> f64 { c.block_gemms(Block::Fc)[..2].iter().map(|(g, n)| g.flops() * n).sum() };
        assert_eq!(expert_flops(&whole), expert_flops(&split));
        let [(up, n_up), ..] = whole.block_gemms(Block::Fc);
        let [(up8, n_up8), ..] = split.block_gemms(Block::Fc);
        assert_eq!((n_up, up.n, up.m), (1.0, 8.0 * up8.n, up8.m));
        assert_eq!(n_up8, 8.0);
        assert_eq!(whole.layer_params_on_gpu(), split.layer_params_on_gpu());
        // Each rank dispatches its eighth of the micro-batch and keeps its copies only.
        let tokens = 2.0 * 2048.0;
        assert_eq!(whole.dispatch_s(Block::Fc), dispatch_want(&whole, tokens / 8.0, MOE_DISPATCH_KERNELS));
        let kept = split.stage_activations(0) - whole.stage_activations(0);
        let copies = 32.0 * tokens * 2.0 * 2.0 * 2.0 * 4096.0 * 7.0 / 8.0;
        assert!((kept - copies).abs() < 1e-6 * copies, "{kept} against {copies}");
        // No tensor-parallel collective around whole experts; the copies go all-to-all over
        // the eight ranks that hold them. Split in two, the pairs gather their tokens and the
        // four pairs exchange copies.
        let (lt, lt8, lt2) = (whole.layer_times(0), split.layer_times(0), cx(&two).layer_times(0));
        assert_eq!((lt.ffn_tp_comm_s, lt.tp_comm_s), (0.0, lt8.tp_comm_s));
        assert!(lt8.ffn_tp_comm_s == lt8.tp_comm_s && lt2.ffn_tp_comm_s > 0.0 && lt2.ffn_tp_comm_s < lt8.tp_comm_s);
        assert_eq!((split.expert_group().size, cx(&two).expert_group().size, whole.expert_group().size), (1, 4, 8));
        assert!(lt8.moe_a2a_s == 0.0 && lt.moe_a2a_s > lt2.moe_a2a_s && lt2.moe_a2a_s > 0.0);
        let r = evaluate(&whole);
        let kinds = |block: Block| {
            r.timeline.iter().filter(move |o| o.name.block == block).map(|o| o.name.kind).collect::<Vec<_>>()
        };
        assert!(!kinds(Block::Fc).iter().any(|k| matches!(k, OpKind::ActAllGather | OpKind::ActReduceScatter)));
        assert!(kinds(Block::Attn).contains(&OpKind::ActAllGather) && kinds(Block::Moe).contains(&OpKind::MoeDispatch));
        assert!(r.iteration_s < evaluate(&split).iteration_s);
        // The explanations say so.
        let explained = |kind: OpKind, block: Block| {
            let op = r.timeline.iter().find(|o| o.name.block == block && o.name.kind == kind).expect("an op");
            crate::engine::extended::explain::explain(&whole, &op.name).expect("explained")
        };
        let ffn = explained(OpKind::Compute, Block::Fc);
        assert!(ffn.terms.iter().any(|t| t.symbol == "etp" && t.value == 1.0), "{:?}", ffn.terms);
        let a2a = explained(OpKind::MoeDispatch, Block::Moe);
        assert!(a2a.terms.iter().any(|t| t.symbol == "d" && t.value == 8.0), "{:?}", a2a.terms);
        assert!(a2a.terms.iter().any(|t| t.symbol == "S" && t.value == whole.moe_routed_bytes()));
        // What it needs, each refusal naming its field.
        let refused = |task: Value, model: Value| checked(doc(8, task, model)).expect_err("refused");
        let says = |errs: &[crate::engine::validate::FieldError], field: &str, words: &str| {
            errs.iter().any(|e| e.field == field && e.message.contains(words))
        };
        assert!(says(&refused(task(Some(1)), json!({})), "task.expert_tp", "mixture of experts"));
        assert!(says(&refused(task(Some(3)), moe()), "task.expert_tp", "use 2"));
        let mut no_sp = task(Some(1));
        no_sp["sequence_parallel"] = json!(false);
        assert!(says(&refused(no_sp, moe()), "task.sequence_parallel", "needs sequence parallelism"));
        let mut wide = task(Some(1));
        wide["transformer_parallel"] = json!(["tp", "ep"]);
        wide["transformer_parallel_degree"] = json!([8, 2]);
        let errs = checked(doc(16, wide, moe())).expect_err("16 ranks for 8 experts");
        assert!(says(&errs, "task.expert_tp", "16 ranks do not divide the 8 experts"), "{errs:?}");
        let mut serve = task(Some(1));
        serve["type"] = json!("inference");
        assert!(says(&refused(serve, moe()), "task.expert_tp", "serving"));
    }

    #[test]
    fn context_parallel_ranks_can_hold_different_experts() {
        // Top-2 of 8 experts on tp 2 x cp 4 x ddp 2 (16 GPUs, tp x cp filling a node): the four
        // context-parallel ranks hold the same experts (blank), or each a quarter of them (4,
        // Megatron-core's folding), or pairs do (2).
        let task = |ecp: Option<u64>| {
            let mut t = json!({"transformer_parallel": ["tp", "cp", "ddp"], "transformer_parallel_degree": [2, 4, 2],
                "micro_batch": 1, "sequence_parallel": true});
            if let Some(ecp) = ecp {
                t["expert_cp"] = json!(ecp);
            }
            t
        };
        let moe = || json!({"type": "LLM_MoE", "num_experts": 8, "num_active_experts": 2});
        let at = |ecp: Option<u64>| scenario_with(16, task(ecp), moe());
        let (blank, one, two, four) = (at(None), at(Some(1)), at(Some(2)), at(Some(4)));
        fn cx(s: &Scenario) -> TrainingCx<'_> {
            TrainingCx::new(s).expect("moe")
        }
        assert_eq!(evaluate(&cx(&blank)).iteration_s, evaluate(&cx(&one)).iteration_s);
        let (same, folded) = (cx(&blank), cx(&four));
        assert_eq!((same.expert_ranks(), cx(&two).expert_ranks(), folded.expert_ranks()), (1.0, 2.0, 4.0));
        // A quarter of the experts' weights on each GPU, the dense ones alike; the same expert
        // FLOPs, as two experts over four ranks' tokens instead of eight over one's.
        let (dense, experts) = same.stage_params(0);
        assert_eq!(folded.stage_params(0), (dense, experts / 4.0));
        let expert_flops =
            |c: &TrainingCx| -> f64 { c.block_gemms(Block::Fc)[..2].iter().map(|(g, n)| g.flops() * n).sum() };
        assert_eq!(expert_flops(&folded), expert_flops(&same));
        let [(up4, n4), ..] = folded.block_gemms(Block::Fc);
        let [(up1, n1), ..] = same.block_gemms(Block::Fc);
        assert_eq!((n1, n4, up4.m), (8.0, 2.0, 4.0 * up1.m));
        // Each rank still routes its own tokens; the copies now go all-to-all over the four
        // context-parallel ranks, within the node.
        assert_eq!(folded.moe_routed_bytes(), same.moe_routed_bytes());
        assert_eq!(folded.expert_group(), crate::engine::extended::collective::Group::new(4, 4));
        let (lt1, lt2, lt4) = (same.layer_times(0), cx(&two).layer_times(0), folded.layer_times(0));
        assert!(lt1.moe_a2a_s == 0.0 && lt2.moe_a2a_s > 0.0 && lt4.moe_a2a_s > lt2.moe_a2a_s);
        let (r1, r4) = (evaluate(&same), evaluate(&folded));
        assert!(r4.memory.total_bytes < r1.memory.total_bytes);
        // With whole experts on each tensor-parallel rank too, the node's eight GPUs hold one
        // expert each (Megatron-core's EP 8 over TP 2 x CP 4 with expert TP 1).
        let mut both = task(Some(4));
        both["expert_tp"] = json!(1);
        let both = scenario_with(16, both, moe());
        assert_eq!(cx(&both).expert_group(), crate::engine::extended::collective::Group::new(8, 8));
        assert_eq!(cx(&both).block_gemms(Block::Fc)[0].1, 1.0);
        // The explanation says so.
        let op = r4.timeline.iter().find(|o| o.name.block == Block::Fc && o.name.kind == OpKind::Compute).expect("op");
        let ffn = crate::engine::extended::explain::explain(&folded, &op.name).expect("explained");
        assert!(ffn.terms.iter().any(|t| t.symbol == "ecp" && t.value == 4.0), "{:?}", ffn.terms);
        // What it needs, each refusal naming its field.
        let refused = |task: Value, model: Value| checked(doc(16, task, model)).expect_err("refused");
        let says = |errs: &[crate::engine::validate::FieldError], words: &str| {
            errs.iter().any(|e| e.field == "task.expert_cp" && e.message.contains(words))
        };
        assert!(says(&refused(task(Some(4)), json!({})), "mixture of experts"));
        assert!(says(&refused(task(Some(3)), moe()), "use 2"));
        // With whole experts too, only that count is refused, not the experts it would divide.
        let mut whole = task(Some(3));
        whole["expert_tp"] = json!(1);
        let errs = refused(whole, moe());
        assert!(says(&errs, "use 2") && errs.len() == 1, "{errs:?}");
        let mut flat = task(Some(2));
        flat["transformer_parallel"] = json!(["tp", "ddp"]);
        flat["transformer_parallel_degree"] = json!([2, 8]);
        assert!(says(&refused(flat, moe()), "no context parallelism"));
        let mut serve = task(Some(4));
        serve["type"] = json!("inference");
        assert!(says(&refused(serve, moe()), "serving"));
        let mut wide = task(Some(4));
        wide["transformer_parallel"] = json!(["tp", "cp", "ep"]);
        let errs = refused(wide, json!({"type": "LLM_MoE", "num_experts": 4, "num_active_experts": 2}));
        assert!(says(&errs, "8 ranks do not divide the 4 experts"), "{errs:?}");
    }

    #[test]
    fn selective_recomputation_drops_and_recomputes_the_modules_it_names() {
        // Top-2 of 8 experts on tp 2 with sequence parallelism, one micro-batch of 2 x 2048
        // tokens in flight (no pipeline), 32 layers.
        let task = |recompute: &str, modules: Option<&str>| {
            let mut t = json!({"transformer_parallel": ["tp", "ep"], "transformer_parallel_degree": [2, 4],
                "micro_batch": 2, "local_transformer_bs": 2, "sequence_parallel": true, "recompute": recompute});
            if let Some(m) = modules {
                t["recompute_modules"] = json!(m);
            }
            t
        };
        let moe = || json!({"type": "LLM_MoE", "num_experts": 8, "num_active_experts": 2, "attention": "flash"});
        let at = |modules: Option<&str>| scenario_with(8, task("selective", modules), moe());
        fn cx(s: &Scenario) -> TrainingCx<'_> {
            TrainingCx::new(s).expect("moe")
        }
        let (plain, norms, experts, act) =
            (at(None), at(Some("core_attn, layernorm")), at(Some("core_attn moe")), at(Some("core_attn,moe_act")));
        assert_eq!(evaluate(&cx(&plain)).iteration_s, evaluate(&cx(&at(Some("core_attn")))).iteration_s);
        let base = cx(&plain);
        let (tokens, h, f) = (2.0 * 2048.0, 4096.0, 16384.0 * 2.0);
        // Dropped from 32 layers, held again by the one whose backward pass recomputed them.
        let saved = |s: &Scenario| (base.stage_activations(0) - cx(s).stage_activations(0)) / (31.0 * tokens);
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * b.abs();
        // The two norms' outputs (2 bytes per unit, split over tp by sequence parallelism); the
        // experts' kept activations (GELU: its input and FC2's) and the dispatched copies; or
        // only FC2's input, the activation's output.
        assert!(close(saved(&norms), 2.0 * 2.0 * h / 2.0), "{}", saved(&norms));
        let kept = (2.0 * f + 2.0 * f) / 2.0 + base.d.dispatch_stored_bytes();
        assert!(close(saved(&experts), kept), "{} against {kept}", saved(&experts));
        assert!(close(saved(&act), 2.0 * f / 2.0), "{}", saved(&act));
        // Each runs its forward work again in the backward pass.
        let (b, n, e, a) =
            (base.layer_times(0), cx(&norms).layer_times(0), cx(&experts).layer_times(0), cx(&act).layer_times(0));
        assert!(close(n.attn_bwd_s - b.attn_bwd_s, base.norm_fwd_s(Block::Attn)));
        assert!(close(n.ffn_bwd_s - b.ffn_bwd_s, base.norm_fwd_s(Block::Fc)));
        assert!(close(e.ffn_bwd_s - b.ffn_bwd_s, b.ffn_fwd_s) && e.attn_bwd_s == b.attn_bwd_s);
        assert!(close(a.ffn_bwd_s - b.ffn_bwd_s, base.act_fwd_s()) && base.act_fwd_s() > 0.0);
        // A recomputed mixture of experts runs its all-to-alls and FLOPs again.
        let r = evaluate(&cx(&experts));
        let a2a = |phase: Phase| {
            r.timeline
                .iter()
                .find(|o| o.name.kind == OpKind::MoeDispatch && o.name.phase == phase)
                .expect("a2a")
                .duration_s
        };
        assert!(close(a2a(Phase::Backward), 2.0 * a2a(Phase::Forward)));
        let back = r
            .timeline
            .iter()
            .find(|o| o.name.kind == OpKind::MoeDispatch && o.name.phase == Phase::Backward)
            .expect("a2a");
        let said = crate::engine::extended::explain::explain(&cx(&experts), &back.name).expect("explained");
        assert!(said.seconds == back.duration_s && said.formula.starts_with("twice"), "{}", said.formula);
        let ffn_flops = base.d.layer_flops().ffn * 2048.0 * 32.0;
        assert!(close(cx(&experts).hardware_flops_per_sample() - base.hardware_flops_per_sample(), ffn_flops));
        let op = r
            .timeline
            .iter()
            .find(|o| o.name.block == Block::Fc && o.name.phase == Phase::Backward && o.name.kind == OpKind::Compute)
            .expect("op");
        let e = crate::engine::extended::explain::explain(&cx(&experts), &op.name).expect("explained");
        assert!(
            e.terms.iter().any(|t| t.symbol == "t_rec" && t.meaning.contains("forward pass again")),
            "{:?}",
            e.terms
        );
        // What it needs, each refusal naming its field.
        let refused = |task: Value, model: Value| checked(doc(8, task, model)).expect_err("refused");
        let says = |errs: &[crate::engine::validate::FieldError], words: &str| {
            errs.iter().any(|e| e.field == "task.recompute_modules" && e.message.contains(words))
        };
        assert!(says(&refused(task("none", Some("moe")), moe()), "set recompute to selective"));
        assert!(says(&refused(task("selective", Some("core_attn, attn")), moe()), "\"attn\" is not a module"));
        assert!(says(&refused(task("selective", Some("mlp")), moe()), "name moe"));
        let mut dense = task("selective", Some("moe_act"));
        dense["transformer_parallel"] = json!(["tp"]);
        dense["transformer_parallel_degree"] = json!([8]);
        assert!(says(&refused(dense, json!({})), "name mlp"));
    }

    #[test]
    fn uneven_chunks_save_what_their_largest_chunk_allows() {
        // 40 layers on 4 stages: 10 per stage. 8 chunks of at most 2 layers leave 5 chunks of
        // 2, which run exactly as 5 chunks do; 4 chunks (3, 3, 3, 1) are paced by 3 layers.
        let run = |v: u64| {
            let s = scenario_with(
                4,
                json!({"transformer_parallel": ["pp"], "transformer_parallel_degree": [4],
                    "micro_batch": 1, "local_transformer_bs": 8, "virtual_stages": v}),
                json!({"num_transformer_layers": 40}),
            );
            let cx = TrainingCx::new(&s).expect("transformer");
            (cx.bubble_passes(), evaluate(&cx))
        };
        let ((b1, r1), (b4, r4), (b5, r5), (b8, r8)) = (run(1), run(4), run(5), run(8));
        assert_eq!((b1, b4, b5, b8), (3.0, 9.0 / 10.0, 6.0 / 10.0, 6.0 / 10.0));
        assert_eq!(r8.iteration_s, r5.iteration_s);
        assert_eq!(r8.memory.total_bytes, r5.memory.total_bytes, "and hold as much in flight");
        assert_eq!(r8.totals.get(Category::Idle), r5.totals.get(Category::Idle));
        assert!(r5.iteration_s < r4.iteration_s && r4.iteration_s < r1.iteration_s);
    }

    #[test]
    fn an_uneven_pipeline_runs_at_the_pace_of_its_busiest_stage() {
        // GPT-3 175B's shape on 64 pipeline stages: 96 layers leave 32 stages with 2 layers and
        // 32 with 1, the last of which also runs the output layer (about a third of a layer).
        let run = |layers: u64| {
            let s = scenario_with(
                64,
                json!({"transformer_parallel": ["pp"], "transformer_parallel_degree": [64],
                    "micro_batch": 1, "local_transformer_bs": 128, "recompute": "full"}),
                json!({"num_transformer_layers": layers, "attention_dim": 12288, "num_transformer_heads": 96,
                    "transformer_fc_dim": 49152}),
            );
            let cx = TrainingCx::new(&s).expect("transformer");
            let drawn = cx.stage_layers(cx.stage).count();
            (cx.stage, drawn, evaluate(&cx).iteration_s)
        };
        let (stage96, drawn96, t96) = run(96);
        let (stage64, drawn64, t64) = run(64);
        let (stage128, drawn128, t128) = run(128);
        // 96 layers: a 2-layer stage (the first) is drawn, not the 1-layer last stage.
        assert_eq!((stage96, drawn96), (0, 2));
        assert_eq!((stage64, drawn64), (63, 1));
        assert_eq!((stage128, drawn128), (63, 2));
        // Paced by 2-layer stages: about 2 / (1 + 1/3) = 1.5 times the 64-layer model, and
        // between the 128-layer model less its output layer and that model.
        assert!(t96 > 1.35 * t64, "96 layers {t96} s vs 64 layers {t64} s");
        assert!(t96 < t128 && t96 > 0.8 * t128, "96 layers {t96} s vs 128 layers {t128} s");
        // Every layer is on exactly one stage; the first L mod p stages hold one more.
        let s = scenario_with(
            64,
            json!({"transformer_parallel": ["pp"], "transformer_parallel_degree": [64], "micro_batch": 1}),
            json!({"num_transformer_layers": 96}),
        );
        let cx = TrainingCx::new(&s).expect("transformer");
        let ranges: Vec<_> = (0..64).map(|k| cx.stage_layers(k)).collect();
        assert!(ranges.windows(2).all(|w| w[0].end == w[1].start));
        assert_eq!((ranges[0].start, ranges[63].end), (0, 96));
        assert!(
            ranges[..32].iter().all(|r| r.clone().count() == 2) && ranges[32..].iter().all(|r| r.clone().count() == 1)
        );
    }

    #[test]
    fn a_block_takes_at_least_the_host_time_to_issue_it() {
        // GPT-3 6.7B-like blocks with 8 x 2048 tokens per GPU: about 4 ms of GEMMs, far above
        // the host's 0.42 ms, which hides behind them.
        let big = scenario(8, json!({"transformer_parallel": ["ddp"], "transformer_parallel_degree": [8]}));
        let cx = TrainingCx::new(&big).expect("transformer");
        let ((ag, ae), l) = (cx.attn_fwd_parts(), cx.layer_times(0));
        assert!(ag + ae > 4.0 * HOST_BLOCK_S);
        assert_eq!(l.attn_fwd_s, ag + ae);
        // A 1024-wide model, one 512-token sequence per micro-batch, tensor parallel over 8:
        // microseconds of GPU work, so every block pass takes the host's time, backward passes
        // (activation and weight gradients) and full recomputation included.
        let small = scenario_with(
            8,
            json!({"transformer_parallel": ["tp"], "transformer_parallel_degree": [8], "micro_batch": 1,
                "recompute": "full"}),
            json!({"attention_dim": 1024, "transformer_fc_dim": 4096, "num_transformer_heads": 16,
                "transformer_seq_len": 512}),
        );
        let cx = TrainingCx::new(&small).expect("transformer");
        let ((ag, ae), (fg, fe), l) = (cx.attn_fwd_parts(), cx.ffn_fwd_parts(), cx.layer_times(0));
        // Each pass: the compute op and the all-reduce the GPU waits for take the host's time.
        let floor = HOST_BLOCK_S - l.tp_comm_s;
        assert!(l.tp_comm_s > 0.0 && floor > ag + ae && floor > fg + fe, "{floor} {} {}", ag + ae, fg + fe);
        assert_eq!((l.attn_fwd_s, l.ffn_fwd_s), (floor, floor));
        assert_eq!((l.attn_bwd_s, l.ffn_bwd_s), (3.0 * floor, 3.0 * floor));
        // With sequence parallelism the pass waits for a gather and a scatter instead.
        let mut sp = small.clone();
        sp.task.setup.sequence_parallel = true;
        let l = TrainingCx::new(&sp).expect("transformer").layer_times(0);
        assert!((l.attn_fwd_s - (HOST_BLOCK_S - 2.0 * l.tp_comm_s)).abs() < 1e-15, "{}", l.attn_fwd_s);
        // The report says so, and not for the large blocks.
        let r = evaluate(&TrainingCx::new(&small).expect("transformer"));
        match r.limits.first() {
            Some(Limit::HostBound { gpu_s, host_s, tp }) => {
                assert!(gpu_s < host_s && *host_s == 2.0 * HOST_BLOCK_S && *tp == 8)
            }
            other => panic!("{other:?}"),
        }
        let big_limits = evaluate(&TrainingCx::new(&big).expect("transformer")).limits;
        assert!(!big_limits.iter().any(|l| matches!(l, Limit::HostBound { .. })), "{big_limits:?}");
        // With the collectives overlapped, the compute op alone waits for the host.
        let mut overlapped = small.clone();
        overlapped.task.setup.overlap_tp_comm = true;
        let l = TrainingCx::new(&overlapped).expect("transformer").layer_times(0);
        assert_eq!((l.attn_fwd_s, l.ffn_fwd_s), (HOST_BLOCK_S, HOST_BLOCK_S));
    }

    #[test]
    fn a_fused_attention_kernel_runs_its_scores_slower_and_replays_them_backward() {
        // 8-way data parallel, local batch 8 in one micro-batch: T = 8 x 2048 tokens. Causal
        // FlashAttention-2: scores 4 (s/2) h per token, at 0.615 / 0.8 of the GEMM rate F = 0.8 x 312
        // TFLOP/s; Q, K, V and output projections 8 h^2 at F.
        let mut s = scenario(8, json!({"transformer_parallel": ["ddp"], "transformer_parallel_degree": [8]}));
        s.model.shape.attention = crate::engine::scenario::Attention::Flash;
        s.model.shape.causal = true;
        let cx = TrainingCx::new(&s).expect("transformer");
        let (t, h, f) = (8.0 * 2048.0, 4096.0, 0.8 * 312e12);
        let scores_s = t * 4.0 * 1024.0 * h / (0.615 / 0.8 * f);
        let (gemm, ew) = cx.attn_fwd_parts();
        // The projections at F, plus writing an output of `mn` elements with inner dimension `k`
        // at the effective HBM bandwidth B, less what F, taken on 8,192-wide square GEMMs,
        // already holds of it (gemm.rs).
        let b = 0.836 * cx.s.system.mem_bw_bytes_per_s;
        let out = |mn: f64, k: f64| mn * 2.0 * (1.0 - k / 8192.0) / b;
        // Q, K, V (3h per token) and the projection (h), both with inner dimension h.
        let expected = t * 8.0 * h * h / f + out(t * 4.0 * h, h) + scores_s;
        assert!((gemm / expected - 1.0).abs() < 1e-12, "{gemm} vs {expected}");
        // Backward without recomputation: activation gradients (t x h outputs with inner
        // dimensions 3h and h), weight gradients (3h^2 and h^2 with inner dimension t), the
        // scores' backward in each, plus Q K^T again, half the score GEMMs. Element-wise, in
        // bytes per token at e = 2 with dropout and biases: the activation gradients' residual
        // sum and norm input gradient (6 e h), dropout's (2 e + 1) h, and the Q, K and V
        // gradients copied into the projection's (2 e 3h); the weight gradients' norm scale and
        // shift (2 e h) and the biases of the output projection (e h) and of Q, K, V (e 3h).
        // Each pass also pays the block's kernel launches, as the forward pass does.
        let l = cx.layer_times(0);
        let dgrad = t * 8.0 * h * h / f + out(t * h, 3.0 * h) + out(t * h, h);
        let wgrad = t * 8.0 * h * h / f + out(3.0 * h * h, t) + out(h * h, t);
        // The forward pass: 14 passes of e h over the layer, half of them in this block.
        let launches = ew - t * 14.0 * 2.0 * h / 2.0 / b;
        let ew_a = t * (6.0 * 2.0 * h + 5.0 * h + 2.0 * 2.0 * 3.0 * h) / b + launches;
        let ew_w = t * (2.0 * 2.0 * h + 2.0 * h + 2.0 * 3.0 * h) / b + launches;
        let expected = dgrad + wgrad + 2.0 * scores_s + ew_a + ew_w + 0.5 * scores_s;
        assert!((l.attn_bwd_s / expected - 1.0).abs() < 1e-12, "{} vs {expected}", l.attn_bwd_s);
        // The replay is hardware work, not model work.
        let extra = cx.hardware_flops_per_sample() - cx.model_flops_per_sample();
        let replay = 0.5 * 4.0 * 1024.0 * h * 2048.0 * 32.0;
        assert!((extra / replay - 1.0).abs() < 1e-12, "{extra} vs {replay}");
    }

    #[test]
    fn gemms_run_slower_per_flop_when_hidden_sizes_are_small_or_split_by_tensor_parallelism() {
        // GEMM seconds per FLOP of a layer's forward pass (no scores: a fused kernel is timed
        // apart), relative to the GEMM rate F.
        let per_flop = |tp: u64, h: u64| {
            let s = scenario_with(
                8,
                json!({"transformer_parallel": ["tp", "ddp"], "transformer_parallel_degree": [tp, 8 / tp]}),
                json!({"attention_dim": h, "transformer_fc_dim": 4 * h, "num_transformer_heads": h / 64}),
            );
            let cx = TrainingCx::new(&s).expect("transformer");
            let gemm_s = cx.block_gemm_s(Block::Attn).0 + cx.block_gemm_s(Block::Fc).0;
            let f = cx.d.layer_flops();
            gemm_s * cx.flops_per_s / (cx.tokens * (f.attn_linear + f.ffn) / tp as f64)
        };
        // GPT-2 small's width loses about a seventh to its output writes; a layer wider than
        // the 8,192-wide GEMMs the rate was taken on runs a little faster than it.
        let (small, big) = (per_flop(1, 768), per_flop(1, 12288));
        assert!((1.10..1.20).contains(&small), "{small}");
        assert!((0.98..1.0).contains(&big), "{big}");
        // Tensor parallelism splits the inner dimension of the row-parallel GEMMs.
        let (tp1, tp8) = (per_flop(1, 4096), per_flop(8, 4096));
        assert!(tp8 > 1.02 * tp1, "{tp8} vs {tp1}");
        // Weight gradients (inner dimension: the tokens) run nearest the GEMM rate.
        let s = scenario(8, json!({"transformer_parallel": ["ddp"], "transformer_parallel_degree": [8]}));
        let cx = TrainingCx::new(&s).expect("transformer");
        let (fwd, dgrad, wgrad) = cx.block_gemm_s(Block::Fc);
        assert!(wgrad < dgrad && wgrad < fwd, "{fwd} {dgrad} {wgrad}");
    }

    #[test]
    fn a_fused_cross_entropy_keeps_no_fp32_copy_of_the_logits() {
        // One stage, 8 x 2048 tokens, vocabulary 51,200: PyTorch's loss holds 2 + 4 bytes per
        // logit, a fused kernel 2 + 2 (the logits and their gradient).
        let task = json!({"transformer_parallel": ["ddp"], "transformer_parallel_degree": [8]});
        let plain = scenario(8, task.clone());
        let mut fused = plain.clone();
        fused.task.setup.fused_loss = true;
        let (p, f) = (TrainingCx::new(&plain).expect("transformer"), TrainingCx::new(&fused).expect("transformer"));
        let logits = 8.0 * 2048.0 * 51200.0;
        assert_eq!(p.stage_activations(0) - f.stage_activations(0), logits * 2.0);
        // Its traffic too, forward and backward: written and read back at HBM speed.
        let b = 0.836 * plain.system.mem_bw_bytes_per_s;
        let ((pf, pb), (ff, fb)) = (p.edge_times(), f.edge_times());
        assert!(((pf - ff) / (logits * 2.0 * 2.0 / b) - 1.0).abs() < 1e-9, "{pf} {ff}");
        assert!(((pb - fb) / (logits * 2.0 * 2.0 / b) - 1.0).abs() < 1e-9, "{pb} {fb}");
        // The rest of the memory is the same.
        let weights = |cx: &TrainingCx| cx.stage_memory(0)[0].1;
        assert_eq!(weights(&p), weights(&f));
    }

    #[test]
    fn biases_cost_their_gradients_reductions_in_the_weight_gradient_pass_only() {
        // 8 x 2048 tokens, h = 4096, f = 16384, bf16: each bias gradient reads its
        // projection's output gradient once, 2 (3h + h + f + h) bytes per token and layer.
        let task = json!({"transformer_parallel": ["ddp"], "transformer_parallel_degree": [8]});
        let with = scenario(8, task.clone());
        assert!(with.model.shape.biases, "a GELU model has biases unless it says not");
        let without = scenario_with(8, task.clone(), json!({"biases": false}));
        let (w, o) = (TrainingCx::new(&with).expect("transformer"), TrainingCx::new(&without).expect("transformer"));
        let (lw, lo) = (w.layer_times(0), o.layer_times(0));
        assert_eq!((lw.attn_fwd_s, lw.ffn_fwd_s), (lo.attn_fwd_s, lo.ffn_fwd_s));
        let b = 0.836 * with.system.mem_bw_bytes_per_s;
        let (t, h, f) = (8.0 * 2048.0, 4096.0, 16384.0);
        let extra = (lw.attn_bwd_s + lw.ffn_bwd_s) - (lo.attn_bwd_s + lo.ffn_bwd_s);
        assert!((extra / (t * 2.0 * (5.0 * h + f) / b) - 1.0).abs() < 1e-9, "{extra}");
        assert_eq!(w.block_bwd_ew_s(Block::Fc).0, o.block_bwd_ew_s(Block::Fc).0);
        // A SwiGLU model has none unless it says so; the key takes true or false only.
        let swiglu = scenario_with(8, task.clone(), json!({"ffn_kind": "swiglu"}));
        assert!(!swiglu.model.shape.biases);
        let stated = scenario_with(8, task.clone(), json!({"ffn_kind": "swiglu", "biases": true}));
        assert!(stated.model.shape.biases);
        let errs = checked(doc(8, task, json!({"biases": "yes"}))).expect_err("refused");
        assert!(errs.iter().any(|e| e.field == "model.biases" && e.message.contains("true or false")), "{errs:?}");
    }

    #[test]
    fn position_encodings_cost_what_their_kernels_move_and_a_learned_table_is_whole_on_each_tp_rank() {
        // 8 x 2048 tokens per GPU (tensor parallelism 2 over 8 GPUs: the 8 samples of each
        // data-parallel rank), h = 4096 with 32 heads, bf16.
        let task = json!({"transformer_parallel": ["tp", "ddp"], "transformer_parallel_degree": [2, 4]});
        let at = |positions: &str| scenario_with(8, task.clone(), json!({"positions": positions}));
        fn cx(s: &Scenario) -> TrainingCx<'_> {
            TrainingCx::new(s).expect("transformer")
        }
        let (none, learned, fused, eager) = (at("none"), at("learned"), at("rope"), at("rope-unfused"));
        let (n, l, f, u) = (cx(&none), cx(&learned), cx(&fused), cx(&eager));
        let b = 0.836 * none.system.mem_bw_bytes_per_s;
        let (t, h, e) = (8.0 * 2048.0, 4096.0, 2.0);
        // Rotary: passes over the GPU's half of the queries and keys (h each, no grouped
        // query attention here) in the attention's forward and activation-gradient passes,
        // plus a launch per kernel; the feed-forward block is untouched.
        for (x, passes, kernels) in [(&f, 2.0, 2.0), (&u, 10.0, 10.0)] {
            let expected = t * passes * e * 2.0 * h / 2.0 / b + kernels * KERNEL_OVERHEAD_S;
            let fwd = x.block_ew_s(Block::Attn) - n.block_ew_s(Block::Attn);
            assert!((fwd / expected - 1.0).abs() < 1e-9, "{fwd} {expected}");
            let (xa, xw) = x.block_bwd_ew_s(Block::Attn);
            let (na, nw) = n.block_bwd_ew_s(Block::Attn);
            assert!(((xa - na) / expected - 1.0).abs() < 1e-9);
            assert_eq!((xw, x.block_ew_s(Block::Fc)), (nw, n.block_ew_s(Block::Fc)));
            assert!(x.layer_times(0).attn_bwd_s > n.layer_times(0).attn_bwd_s);
        }
        // A learned table of 2,048 x 4,096 weights sits whole on both tensor-parallel ranks of
        // the first stage (Megatron-LM's position embedding is not split), and its add costs
        // three passes of h per token in the embedding's forward pass.
        assert_eq!(l.stage_params(0).0 - n.stage_params(0).0, 2048.0 * h);
        let add = l.input_time() - n.input_time();
        assert!((add / (t * 3.0 * e * h / b) - 1.0).abs() < 1e-9, "{add}");
        assert_eq!(l.layer_times(0), n.layer_times(0));
        // Defaults: GELU models a learned table, SwiGLU models fused rotary embeddings; the key
        // takes the four names only.
        assert_eq!(scenario(8, task.clone()).model.shape.positions, Positions::Learned);
        let swiglu = scenario_with(8, task.clone(), json!({"ffn_kind": "swiglu"}));
        assert_eq!(swiglu.model.shape.positions, Positions::Rope);
        let errs = checked(doc(8, task, json!({"positions": "alibi"}))).expect_err("refused");
        assert!(errs.iter().any(|e| e.field == "model.positions" && e.message.contains("rope-unfused")), "{errs:?}");
    }

    #[test]
    fn eager_norms_and_activation_cost_their_passes_kernels_and_fp32_copies() {
        // A SwiGLU model on 8 GPUs, tensor parallelism 2: 8 x 2048 tokens per GPU, h = 4096.
        let task = json!({"transformer_parallel": ["tp", "ddp"], "transformer_parallel_degree": [2, 4]});
        let at = |elementwise: &str| {
            scenario_with(8, task.clone(), json!({"ffn_kind": "swiglu", "elementwise": elementwise}))
        };
        let (fused, eager) = (at("fused"), at("eager"));
        assert_eq!(fused.model.shape.elementwise, Elementwise::Fused);
        let (f, x) = (TrainingCx::new(&fused).expect("transformer"), TrainingCx::new(&eager).expect("transformer"));
        let b = 0.836 * fused.system.mem_bw_bytes_per_s;
        let (t, h) = (8.0 * 2048.0, 4096.0);
        // The attention block's forward pass: its norm's 32 more bytes a hidden unit over the
        // micro-batch's tokens (outside the tensor-parallel region, whole on each rank) and 7
        // more launches.
        let expected = t * 32.0 * h / b + 7.0 * KERNEL_OVERHEAD_S;
        let more = x.block_ew_s(Block::Attn) - f.block_ew_s(Block::Attn);
        assert!((more / expected - 1.0).abs() < 1e-9, "{more} {expected}");
        // Every pass of both blocks takes longer, and each layer keeps more.
        for block in [Block::Attn, Block::Fc] {
            let ((fa, fw), (xa, xw)) = (f.block_bwd_ew_s(block), x.block_bwd_ew_s(block));
            assert!(xa > fa && xw > fw && x.block_ew_s(block) > f.block_ew_s(block), "{block:?}");
        }
        assert!(x.stage_activations(0) > f.stage_activations(0));
        assert!(crate::engine::evaluate(&eager).iteration_s > crate::engine::evaluate(&fused).iteration_s);
        // The explanations' words give the counts the model charges (16-bit activations here).
        let r = evaluate(&x);
        let words = |phase: Phase| {
            let op = r.timeline.iter().find(|o| o.name.block == Block::Attn && o.name.phase == phase);
            let e =
                crate::engine::extended::explain::explain(&x, &op.expect("an attention op").name).expect("explained");
            e.terms.iter().map(|t| t.meaning).collect::<Vec<_>>().join(" ")
        };
        let [fwd, act, _] = x.d.norm_bytes();
        let [fwd_k, act_k, _] = EAGER_NORM_KERNELS;
        assert!(words(Phase::Forward).contains(&format!("each RMSNorm {fwd_k} kernels moving {fwd} bytes")));
        assert!(words(Phase::Backward).contains(&format!("each RMSNorm's {act_k} kernels move {act} bytes")));
        // Blank is fused; the key takes the two names only, naming itself when refused.
        assert_eq!(scenario(8, task.clone()).model.shape.elementwise, Elementwise::Fused);
        let errs = checked(doc(8, task, json!({"elementwise": "compiled"}))).expect_err("refused");
        assert!(errs.iter().any(|e| e.field == "model.elementwise" && e.message.contains("eager")), "{errs:?}");
    }

    #[test]
    fn training_metrics_recompute_the_cross_entropy_over_the_logits_after_the_backward_pass() {
        // One stage, 8 x 2048 tokens, vocabulary 51,200, bf16: Composer's two metrics each cast
        // the logits to fp32 (read 2, write 4 bytes) and take their log-softmax (3 reads and a
        // write of 4 bytes): 44 bytes per logit, charged once per micro-batch with the output
        // layer's backward, and nothing forward.
        let task = json!({"transformer_parallel": ["ddp"], "transformer_parallel_degree": [8], "micro_batch": 4});
        let plain = scenario(8, task.clone());
        let mut with = task.clone();
        with["metric_losses"] = json!(2);
        let metrics = scenario(8, with);
        assert_eq!(metrics.task.setup.metric_losses, 2);
        let (p, m) = (TrainingCx::new(&plain).expect("transformer"), TrainingCx::new(&metrics).expect("transformer"));
        let logits = 4.0 * 2048.0 * 51200.0;
        assert_eq!(m.metric_bytes_per_logit(), 44.0);
        let b = 0.836 * plain.system.mem_bw_bytes_per_s;
        let ((pf, pb), (mf, mb)) = (p.edge_times(), m.edge_times());
        assert_eq!(pf, mf);
        assert!(((mb - pb) / (logits * 44.0 / b) - 1.0).abs() < 1e-9, "{pb} {mb}");
        // Each of the two micro-batches pays it: the iteration is that much longer.
        let (rp, rm) = (crate::engine::evaluate(&plain), crate::engine::evaluate(&metrics));
        assert!(((rm.iteration_s - rp.iteration_s) / (2.0 * logits * 44.0 / b) - 1.0).abs() < 1e-6);
        // Memory: here the backward pass's activations outweigh the metrics' fp32 copies.
        assert_eq!(p.stage_activations(0), m.stage_activations(0));
        // With full recomputation, a fused loss and a 256,000-token vocabulary they do not: the
        // 16-bit logits and the fp32 copy and log-probabilities beside them (8 bytes per logit)
        // are the peak.
        let mut lean = task.clone();
        lean["recompute"] = json!("full");
        lean["fused_loss"] = json!(true);
        let wide = json!({"entries_per_table": 256000, "attention": "flash"});
        let at = |t: &Value| {
            TrainingCx::new(&scenario_with(8, t.clone(), wide.clone())).expect("transformer").stage_activations(0)
        };
        let lean_plain = at(&lean);
        lean["metric_losses"] = json!(2);
        let lean_metrics = at(&lean);
        assert_eq!(lean_metrics, 4.0 * 2048.0 * 256000.0 * (2.0 + 8.0));
        assert!(lean_metrics > 1.2 * lean_plain, "{lean_metrics} vs {lean_plain}");
        // fp32 logits need no cast: one log-softmax, 16 bytes each.
        let fp32 = scenario_with(
            8,
            json!({"transformer_parallel": ["ddp"], "transformer_parallel_degree": [8],
            "metric_losses": 1}),
            json!({"bytes_per_nonemb_param": 4, "bytes_per_emb_param": 4}),
        );
        assert_eq!(TrainingCx::new(&fp32).expect("transformer").metric_bytes_per_logit(), 16.0);
        // A count out of range, or not a whole number, is refused by name.
        for bad in [json!(9), json!(-1), json!(1.5), json!("two")] {
            let mut t = task.clone();
            t["metric_losses"] = bad.clone();
            let errs = checked(doc(8, t, json!({}))).expect_err("refused");
            assert!(errs.iter().any(|e| e.field == "task.metric_losses"), "{bad}: {errs:?}");
        }
    }

    #[test]
    fn zero_stages_shard_optimizer_then_gradients_then_weights() {
        // 8-way data parallel; per GPU: weights 2P, gradients 2P, optimizer 12P bytes (P params),
        // and each ZeRO stage divides one more of them by 8.
        let at = |zero: u64| {
            let s = scenario(
                8,
                json!({"transformer_parallel": ["ddp"], "transformer_parallel_degree": [8],
                "zero_stage": zero, "micro_batch": 1}),
            );
            let cx = TrainingCx::new(&s).expect("transformer");
            let parts = cx.stage_memory(0);
            let get = |p: MemPart| parts.iter().find(|x| x.0 == p).map_or(0.0, |x| x.1);
            (cx.d.params(), get(MemPart::Weights), get(MemPart::Gradients), get(MemPart::OptimizerStates))
        };
        let (p, w0, g0, o0) = at(0);
        assert_eq!((w0, g0, o0), (2.0 * p, 2.0 * p, 12.0 * p));
        let (_, w1, g1, o1) = at(1);
        assert_eq!((w1, g1, o1), (2.0 * p, 2.0 * p, 12.0 * p / 8.0));
        let (_, w2, g2, o2) = at(2);
        assert_eq!((w2, g2, o2), (2.0 * p, 2.0 * p / 8.0, 12.0 * p / 8.0));
        let (_, w3, g3, o3) = at(3);
        assert_eq!((w3, g3, o3), (2.0 * p / 8.0, 2.0 * p / 8.0, 12.0 * p / 8.0));
    }

    #[test]
    fn a_zero_group_within_the_node_shards_the_optimizer_there_and_all_reduces_the_gradients_across() {
        // 32 GPUs on 4 nodes, ZeRO-1: over all 32 ranks, or in groups of the node's 8 (InternLM's
        // zero1 = 8), each group holding a whole copy of the optimizer states.
        let run = |group: Option<u64>| {
            let mut t = json!({"transformer_parallel": ["ddp"], "transformer_parallel_degree": [32],
                "zero_stage": 1, "micro_batch": 2});
            if let Some(n) = group {
                t["zero_shard_ranks"] = json!(n);
            }
            let s = scenario(32, t);
            let cx = TrainingCx::new(&s).expect("transformer");
            let parts = cx.stage_memory(0);
            let optimizer = parts.iter().find(|x| x.0 == MemPart::OptimizerStates).map_or(0.0, |x| x.1);
            let plan = cx.final_grad_sync_plan().expect("a gradient synchronisation");
            (cx.zero_group(), optimizer, cx.optimizer_step_s(), cx.param_gather_s(), plan.collective, plan.group)
        };
        let (all, o_all, step_all, gather_all, sync_all, over_all) = run(None);
        let (node, o_node, step_node, gather_node, sync_node, over_node) = run(Some(8));
        assert_eq!((all.size, node.size), (32, 8));
        assert!(!all.within_node() && node.within_node());
        // The states over 8 ranks, not 32; each GPU updates 4 times the weights.
        assert!((o_node / o_all - 4.0).abs() < 1e-9 && (step_node / step_all - 4.0).abs() < 1e-9);
        // Every rank needs the whole sum of its group's shard: an all-reduce over all 32, where
        // ZeRO over all of them reduce-scatters.
        assert_eq!((sync_all, sync_node), (Collective::ReduceScatter, Collective::AllReduce));
        assert_eq!((over_all.size, over_node.size), (32, 32));
        // The updated weights come back over NVLink, not the network.
        assert!(gather_node < 0.5 * gather_all, "{gather_node} vs {gather_all}");
        // The whole group is ZeRO over every rank, as blank says.
        assert_eq!(run(Some(32)).1, o_all);
        // Refusals name the field: a group that does not divide the ranks, another ZeRO stage,
        // an fsdp level, serving.
        let refused = |task: Value| {
            let errs = checked(doc(32, task, json!({}))).expect_err("refused");
            errs.into_iter().find(|e| e.field == "task.zero_shard_ranks").map(|e| e.message).unwrap_or_default()
        };
        let base = |extra: Value| {
            let mut t = json!({"transformer_parallel": ["ddp"], "transformer_parallel_degree": [32], "zero_stage": 1});
            if let (Some(t), Value::Object(extra)) = (t.as_object_mut(), extra) {
                t.extend(extra);
            }
            t
        };
        assert!(refused(base(json!({"zero_shard_ranks": 12}))).contains("use 8"));
        assert!(refused(base(json!({"zero_shard_ranks": 8, "zero_stage": 2}))).contains("ZeRO stage 2"));
        let fsdp = json!({"transformer_parallel": ["fsdp", "ddp"], "transformer_parallel_degree": [8, 4],
            "zero_shard_ranks": 8});
        assert!(refused(fsdp).contains("fsdp level"));
        let serving = json!({"type": "inference", "transformer_parallel": ["ddp"], "transformer_parallel_degree": [32],
            "zero_shard_ranks": 8});
        assert!(refused(serving).contains("serving"));
    }

    #[test]
    fn zero1_sums_gradients_as_its_framework_does_during_the_backward_pass_or_after_it() {
        // 32 GPUs on 4 nodes, ZeRO-1 over all of them: Megatron-core's distributed optimizer
        // (and DeepSpeed's ZeRO-1) reduce-scatters the gradients, in buckets during the
        // backward pass or once after it; InternLM's ZeRO-1 all-reduces them; a ZeRO-1 group
        // within the node all-reduces them whatever the flag says; plain data parallelism
        // all-reduces.
        let run = |zero: u64, overlap: bool, all_reduce: bool, group: Option<u64>| {
            let mut t = json!({"transformer_parallel": ["ddp"], "transformer_parallel_degree": [32],
                "zero_stage": zero, "micro_batch": 2, "overlap_grad_reduce": overlap, "zero1_all_reduce": all_reduce});
            if let Some(n) = group {
                t["zero_shard_ranks"] = json!(n);
            }
            let s = scenario(32, t);
            let cx = TrainingCx::new(&s).expect("transformer");
            let r = evaluate(&cx);
            let grads: Vec<_> = r
                .timeline
                .iter()
                .filter(|o| {
                    matches!(o.name.kind, OpKind::GradAllReduce | OpKind::GradReduceScatter) && o.duration_s > 0.0
                })
                .collect();
            assert!(!grads.is_empty());
            let kind = grads[0].name.kind;
            assert!(grads.iter().all(|o| o.name.kind == kind));
            // Every bucket is where the backward pass produced it, or all after the backward
            // pass (ZeRO-2 over several micro-batches reduces in each one's backward pass).
            if zero < 2 {
                assert!(grads.iter().all(|o| (o.name.block == Block::Optimizer) != overlap), "{zero} {overlap}");
            }
            let per_layer = cx.layer_times(0).grad_sync_s;
            let bytes = cx.layer_params_on_gpu() * cx.grad_bytes();
            let over = |c| cx.collective(c, bytes, cx.lay.weight_dp);
            (kind, per_layer, over(Collective::ReduceScatter), over(Collective::AllReduce), cx.grad_reduction().1)
        };
        for overlap in [true, false] {
            let (kind, per_layer, rs, _, reduction) = run(1, overlap, false, None);
            assert_eq!((kind, reduction, per_layer), (OpKind::GradReduceScatter, Collective::ReduceScatter, rs));
            let (kind, per_layer, _, ar, reduction) = run(1, overlap, true, None);
            assert_eq!((kind, reduction, per_layer), (OpKind::GradAllReduce, Collective::AllReduce, ar));
            for (zero, group, all_reduce) in [(1, Some(8), false), (0, None, false), (0, None, true)] {
                assert_eq!(run(zero, overlap, all_reduce, group).0, OpKind::GradAllReduce, "{zero} {group:?}");
            }
            // Stage 2 reduce-scatters whatever the flag says.
            assert_eq!(run(2, overlap, true, None).0, OpKind::GradReduceScatter);
        }
        // An all-reduce moves twice a reduce-scatter's bytes.
        let (_, _, rs, ar, _) = run(1, true, false, None);
        assert!(ar > 1.8 * rs, "{ar} vs {rs}");
    }

    #[test]
    fn zero1_broadcasts_return_the_updated_shards_one_rank_after_another() {
        // InternLM's hybrid ZeRO returns each rank's updated shard by a broadcast of its own, d
        // of them in turn, each paying the ring's latency; Megatron-core gathers them once.
        let gather = |gpus: u64, group: Option<u64>, broadcast: bool| {
            let mut t = json!({"transformer_parallel": ["ddp"], "transformer_parallel_degree": [gpus],
                "zero_stage": 1, "micro_batch": 2, "zero1_broadcast": broadcast});
            if let Some(n) = group {
                t["zero_shard_ranks"] = json!(n);
            }
            let s = scenario(gpus, t);
            let cx = TrainingCx::new(&s).expect("transformer");
            let r = evaluate(&cx);
            let op =
                r.timeline.iter().find(|o| o.name.block == Block::Optimizer && o.name.kind == OpKind::WeightAllGather);
            (cx.param_gather_s(), op.map(|o| o.duration_s), r.iteration_s)
        };
        // Within a node the same bytes over NVLink, a few more hops: about the same time.
        let (all_gather, _, _) = gather(8, None, false);
        let (broadcasts, op, _) = gather(8, None, true);
        assert_eq!(op, Some(broadcasts));
        assert!(broadcasts > all_gather && broadcasts < 1.2 * all_gather, "{broadcasts} vs {all_gather}");
        // Over 1,024 ranks on 128 nodes the broadcasts' latency, d rings of d - 1 hops, takes
        // seconds where the all-gather takes a fraction of one, and the iteration waits for
        // them; twice the ranks, more than twice the extra time.
        let (all_gather, _, t_gather) = gather(1024, None, false);
        let (broadcasts, _, t_broadcast) = gather(1024, None, true);
        assert!(broadcasts > all_gather + 1.0, "{broadcasts} vs {all_gather}");
        assert!((t_broadcast - t_gather - (broadcasts - all_gather)).abs() < 1e-9 * t_gather);
        let (half, _, _) = gather(512, None, true);
        let (half_gather, _, _) = gather(512, None, false);
        assert!(broadcasts - all_gather > 2.0 * (half - half_gather), "{broadcasts} vs {half}");
        // A ZeRO-1 group within each node (InternLM's zero1 = 8) broadcasts over NVLink only.
        let (node, _, _) = gather(1024, Some(8), true);
        assert!(node < 0.1 * broadcasts, "{node} vs {broadcasts}");
        // Plain data parallelism gathers nothing, flag or not.
        let s = scenario(
            64,
            json!({"transformer_parallel": ["ddp"], "transformer_parallel_degree": [64],
            "zero1_broadcast": true}),
        );
        assert_eq!(TrainingCx::new(&s).expect("transformer").param_gather_s(), 0.0);
    }

    #[test]
    fn zero2_reduces_gradients_in_every_micro_batch() {
        // 16 GPUs over 2 nodes, 4 samples per GPU: ZeRO-2 keeps a sixteenth of the gradients,
        // so over 4 micro-batches it reduce-scatters them 4 times where ZeRO-1 accumulates and
        // reduces once; over 1 micro-batch both reduce once.
        let run = |zero: u64, micro: u64| {
            let s = scenario(
                16,
                json!({"transformer_parallel": ["ddp"], "transformer_parallel_degree": [16], "zero_stage": zero,
                    "local_emb_bs": 4, "local_transformer_bs": 4, "micro_batch": micro}),
            );
            let cx = TrainingCx::new(&s).expect("transformer");
            // The op's explanation reduces what the op does, as long.
            let r = evaluate(&cx);
            let op = r.timeline.iter().find(|o| {
                o.name.block == Block::Optimizer
                    && o.name.phase == Phase::Backward
                    && matches!(o.name.kind, OpKind::GradAllReduce | OpKind::GradReduceScatter)
            });
            let op = op.expect("the gradient synchronisation");
            let e = crate::engine::extended::explain::explain(&cx, &op.name).expect("explained");
            assert_eq!(e.seconds, op.duration_s);
            let params = e.terms.iter().find(|t| t.symbol == "P").map_or(0.0, |t| t.value);
            let (dense, expert) = cx.stage_params(0);
            if cx.reduces_every_micro_batch() {
                let edges = dense + expert - cx.stage_layer_params(0).0;
                assert!(e.what.contains("once per micro-batch") && (params - edges).abs() < 1.0, "{} {params}", e.what);
            } else {
                assert_eq!(params, dense + expert);
            }
            (cx.reduces_every_micro_batch(), cx.final_grad_sync().1, r)
        };
        let (every1, once1, z1) = run(1, 1);
        let (every2, once2, z2) = run(2, 1);
        // After the backward pass ZeRO-2 has only the embeddings' gradients left to reduce, once
        // per micro-batch.
        assert!(!every1 && every2 && once2 > 0.0 && once2 < 0.3 * once1, "{once2} vs {once1}");
        // Three more reductions of the whole gradient (per layer, so each a little dearer).
        assert!(z2.comm_s > z1.comm_s + 3.0 * once1, "{} vs {} + 3 x {once1}", z2.comm_s, z1.comm_s);
        let (every1, _, z1) = run(1, 4);
        let (every2, _, z2) = run(2, 4);
        assert!(!every1 && !every2);
        assert_eq!(z1.comm_s, z2.comm_s);
        assert!(z2.memory.total_bytes < z1.memory.total_bytes);
    }

    #[test]
    fn recomputation_trades_memory_for_time() {
        let run = |rc: &str| {
            let s = scenario(
                8,
                json!({"transformer_parallel": ["tp"], "transformer_parallel_degree": [8],
                "recompute": rc}),
            );
            evaluate(&TrainingCx::new(&s).expect("transformer"))
        };
        let (none, sel, full) = (run("none"), run("selective"), run("full"));
        let act = |r: &Report| r.memory.parts.iter().find(|x| x.0 == MemPart::Activations).map_or(0.0, |x| x.1);
        assert!(act(&none) > act(&sel) && act(&sel) > act(&full), "{} {} {}", act(&none), act(&sel), act(&full));
        assert!(none.iteration_s < sel.iteration_s && sel.iteration_s < full.iteration_s);
        // Full recomputation repeats the forward pass: about 4/3 of the time.
        let ratio = full.iteration_s / none.iteration_s;
        assert!((1.2..1.4).contains(&ratio), "{ratio}");
        let u = full.utilization.as_ref().expect("utilisation");
        assert!(u.hfu > u.mfu && (u.hfu / u.mfu - 4.0 / 3.0).abs() < 0.02);
    }

    #[test]
    fn a_plan_that_does_not_fit_says_what_overflows() {
        // 8 GPUs, no sharding, 8 x 2048 tokens per GPU without recomputation: activations
        // dominate and exceed 80 GB.
        let s =
            scenario(8, json!({"transformer_parallel": ["ddp"], "transformer_parallel_degree": [8], "zero_stage": 3}));
        let r = evaluate(&TrainingCx::new(&s).expect("transformer"));
        match r.limits.first() {
            Some(Limit::DoesNotFit { need_bytes, capacity_bytes, largest, .. }) => {
                assert!(need_bytes > capacity_bytes);
                assert_eq!(*largest, MemPart::Activations);
            }
            other => panic!("expected DoesNotFit, got {other:?}"),
        }
    }

    #[test]
    fn a_slow_input_pipeline_caps_throughput() {
        let s = scenario(
            8,
            json!({"transformer_parallel": ["tp"], "transformer_parallel_degree": [8],
            "recompute": "full", "data_loader_samples_per_s": 0.5}),
        );
        let r = evaluate(&TrainingCx::new(&s).expect("transformer"));
        assert!((r.throughput_samples_per_s - 0.5).abs() < 1e-9, "{}", r.throughput_samples_per_s);
        assert!(matches!(r.limits.first(), Some(Limit::InputBound { .. })));
    }

    #[test]
    fn overlapping_gradient_reduction_hides_it_behind_the_backward_pass() {
        let run = |overlap: bool| {
            let s = scenario(
                32,
                json!({"transformer_parallel": ["tp", "ddp"], "transformer_parallel_degree": [8, 4],
                "recompute": "full", "micro_batch": 4, "overlap_grad_reduce": overlap}),
            );
            evaluate(&TrainingCx::new(&s).expect("transformer"))
        };
        let (serial, overlapped) = (run(false), run(true));
        assert!(overlapped.iteration_s < serial.iteration_s);
        assert!(overlapped.exposed_comm_s < serial.exposed_comm_s);
    }

    #[test]
    fn sequence_parallelism_swaps_all_reduces_for_gathers_and_scatters() {
        let run = |sp: bool| {
            let s = scenario(
                8,
                json!({"transformer_parallel": ["tp"], "transformer_parallel_degree": [8],
                "recompute": "selective", "sequence_parallel": sp}),
            );
            evaluate(&TrainingCx::new(&s).expect("transformer"))
        };
        let (plain, sp) = (run(false), run(true));
        assert!(plain.totals.get(Category::AllReduce) > 0.0 && plain.totals.get(Category::AllGather) == 0.0);
        assert!(sp.totals.get(Category::AllReduce) == 0.0 && sp.totals.get(Category::ReduceScatter) > 0.0);
        // Same bytes on the wire; less memory with sp.
        assert!(sp.memory.total_bytes < plain.memory.total_bytes);
    }

    #[test]
    fn fp8_training_runs_block_gemms_at_the_fp8_rate_after_casting_their_inputs() {
        let task = |fp8: bool| json!({"transformer_parallel": ["ddp"], "transformer_parallel_degree": [8], "fp8": fp8});
        let (bf16, fp8) = (on_h100(8, task(false), json!({})), on_h100(8, task(true), json!({})));
        let (bf16, fp8) = (bf16.expect("valid"), fp8.expect("valid"));
        let (b, f) = (TrainingCx::new(&bf16).expect("transformer"), TrainingCx::new(&fp8).expect("transformer"));
        // FP8 GEMMs at the FP8 peak x the same utilisation x the FP8 efficiency (0.91).
        let rate = f.fp8_flops_per_s.expect("fp8");
        assert!((rate / (1979e12 * 0.8 * FP8_GEMM_EFFICIENCY) - 1.0).abs() < 1e-12);
        assert!((0.88..0.94).contains(&FP8_GEMM_EFFICIENCY), "{FP8_GEMM_EFFICIENCY}");
        assert_eq!(b.fp8_flops_per_s, None);
        // The feed-forward block: 8 x 2048 tokens through 4096 -> 16384 -> 4096.
        let (t, h, ff) = (8.0 * 2048.0, 4096.0, 16384.0);
        let up = Gemm { m: t, n: ff, k: h };
        let hbm = f.hbm_bytes_per_s;
        let cast = |g: Gemm| g.m * g.k * 4.0 / hbm;
        assert_eq!(f.block_gemm_pass_s(up, true), up.mixed_time_s(1.0, 2.0, f.gemm_gpu(rate)) + cast(up));
        assert_eq!(f.block_gemm_pass_s(up.wgrad(), false), up.wgrad().mixed_time_s(1.0, 2.0, f.gemm_gpu(rate)));
        assert_eq!(b.block_gemm_pass_s(up, true), b.gemm_s(up));
        // Forward, activation-gradient and weight-gradient GEMMs all gain, by less than the
        // 2x of the peaks: 0.91 x 2 on the rate, less the casts.
        let (bg, fg) = (b.block_gemm_s(Block::Fc), f.block_gemm_s(Block::Fc));
        for (x, y) in [(bg.0, fg.0), (bg.1, fg.1), (bg.2, fg.2)] {
            assert!((1.4..1.85).contains(&(x / y)), "{x} / {y} = {}", x / y);
        }
        assert!(bg.2 / fg.2 > bg.0 / fg.0, "the weight gradient casts nothing");
        // Attention's scores, the norms and the logits stay 16-bit: the iteration gains less.
        let (ib, i_f) = (evaluate(&b).iteration_s, evaluate(&f).iteration_s);
        assert!((1.2..1.7).contains(&(ib / i_f)), "{ib} / {i_f}");
        // Memory: FP8 copies of the blocks' weights (2 bytes per parameter), and the GEMM
        // inputs kept for the weight gradients in 1 byte instead of 2: 2h + h + f per token.
        let (mb, mf) = (b.stage_memory(0), f.stage_memory(0));
        let (dense, expert) = b.d.layer_params();
        assert!(dense + expert > 4.0 * h * h + 2.0 * h * ff);
        let copies = 2.0 * 32.0 * (dense + expert);
        assert!((mf[0].1 - mb[0].1 - copies).abs() < 1e3, "{} {}", mf[0].1, mb[0].1);
        let saved = 32.0 * t * (3.0 * h + ff);
        assert!((mb[3].1 - mf[3].1 - saved).abs() < 1e3, "{} {}", mb[3].1, mf[3].1);
    }

    #[test]
    fn zero1_gathers_the_updated_weights_during_the_first_forward_pass_when_asked() {
        // ZeRO-1 over 16 GPUs of 2 nodes, 4 micro-batches: by default (and when told no) the
        // updated weights are gathered after the optimizer step, all at once; with
        // overlap_param_gather each layer's are gathered during the first micro-batch's
        // forward pass, one layer ahead, and only the embedding's after the step.
        let task = |overlap: Value| {
            json!({"transformer_parallel": ["ddp"], "transformer_parallel_degree": [16], "zero_stage": 1,
                "local_transformer_bs": 4, "micro_batch": 1, "overlap_param_gather": overlap})
        };
        let (unset, no, yes) =
            (scenario(16, task(Value::Null)), scenario(16, task(json!(false))), scenario(16, task(json!(true))));
        let [a, b, c] = [&unset, &no, &yes].map(|s| TrainingCx::new(s).expect("transformer"));
        assert!(!a.gathers_updated_weights_in_forward() && !b.gathers_updated_weights_in_forward());
        assert!(c.gathers_updated_weights_in_forward());
        let (ra, rb, rc) = (evaluate(&a), evaluate(&b), evaluate(&c));
        assert_eq!(ra.iteration_s, rb.iteration_s);
        let gathers = |r: &Report| -> Vec<Op> {
            r.timeline.iter().filter(|o| o.name.kind == OpKind::WeightAllGather).copied().collect()
        };
        // Unset: one gather after the step, of every parameter on the GPU.
        let (dense, expert) = a.stage_params(0);
        let (blocks, _) = a.stage_layer_params(0);
        let g = a.zero_group();
        let all = gathers(&ra);
        assert!(all.len() == 1 && all[0].name.block == Block::Optimizer);
        assert_eq!(all[0].duration_s, a.collective(Collective::AllGather, (dense + expert) * 2.0, g));
        // Asked: a gather per layer in micro-batch 1's forward pass, each before its layer and
        // starting once the layer before it has started; the embedding's after the step.
        let split = gathers(&rc);
        let per_layer: Vec<&Op> = split.iter().filter(|o| o.name.block == Block::Attn).collect();
        assert_eq!(per_layer.len(), 32);
        let layer = c.collective(Collective::AllGather, c.layer_params_on_gpu() * 2.0, g);
        assert!(per_layer.iter().all(|o| o.name.micro == 1 && o.duration_s == layer && o.name.phase == Phase::Forward));
        let after = split.iter().find(|o| o.name.block == Block::Optimizer).expect("the embedding's gather");
        assert_eq!(after.duration_s, c.collective(Collective::AllGather, (dense + expert - blocks) * 2.0, g));
        let compute = |l: i32| {
            rc.timeline
                .iter()
                .find(|o| {
                    o.name.layer == l
                        && o.name.micro == 1
                        && o.name.kind == OpKind::Compute
                        && o.name.block == Block::Attn
                        && o.name.phase == Phase::Forward
                })
                .copied()
                .expect("layer")
        };
        for o in &per_layer {
            assert!(compute(o.name.layer).start_s >= o.end_s() - 1e-12, "layer {} waits for its weights", o.name.layer);
            if o.name.layer > 0 {
                assert!(o.start_s >= compute(o.name.layer - 1).start_s - 1e-12, "one layer ahead");
            }
        }
        assert!(rc.iteration_s < ra.iteration_s, "{} vs {}", rc.iteration_s, ra.iteration_s);
        // Each gather says what it is and takes what its explanation says.
        for o in split.iter().take(2).chain(std::iter::once(after)) {
            let e = crate::engine::extended::explain::explain(&c, &o.name).expect("explained");
            assert_eq!(e.seconds, o.duration_s, "{}", e.what);
            assert!(e.what.contains("ZeRO-1/2"), "{}", e.what);
        }
        // ZeRO-3 prefetches unless told not to: the flag's default differs by stage.
        let z3 = |overlap: Value| {
            let s = scenario(
                16,
                json!({"transformer_parallel": ["fsdp"], "transformer_parallel_degree": [16], "overlap_param_gather": overlap}),
            );
            TrainingCx::new(&s).map(|cx| cx.setup.prefetches_sharded_weights()).expect("transformer")
        };
        assert_eq!((z3(Value::Null), z3(json!(true)), z3(json!(false))), (true, true, false));
    }

    #[test]
    fn interleaved_chunks_reduce_their_gradients_once_their_last_micro_batch_is_through() {
        // 32 layers on 4 stages of 2 chunks each, 16-way data parallel across nodes, 8
        // micro-batches, gradients reduced during the backward pass: Megatron-LM's interleaved
        // schedule runs the backward passes in rounds of 4 micro-batches per chunk, the second
        // chunk first, so its gradients are final 3/4 of the way through (micro-batch
        // 8 - floor(1 x 4 / 2) = 6 of the timeline's 8), the first chunk's at the end.
        let task = |vpp: u64| {
            json!({"transformer_parallel": ["ddp", "pp"], "transformer_parallel_degree": [16, 4],
                "micro_batch": 1, "virtual_stages": vpp, "overlap_grad_reduce": true})
        };
        let s = scenario(64, task(2));
        let cx = TrainingCx::new(&s).expect("transformer");
        assert_eq!(cx.micro_batches, 8);
        assert_eq!((cx.last_backward_of_chunk(0, 2), cx.last_backward_of_chunk(1, 2)), (8, 6));
        // Without interleaving every layer's gradients are final after the last micro-batch.
        let plain = scenario(64, task(1));
        let p = TrainingCx::new(&plain).expect("transformer");
        assert_eq!(p.last_backward_of_chunk(0, 1), 8);
        let (_, _, chunks) = cx.stage_work();
        assert_eq!(chunks.len(), 2);
        let r = evaluate(&cx);
        let reductions: Vec<_> = r
            .timeline
            .iter()
            .filter(|o| {
                matches!(o.name.kind, OpKind::GradAllReduce | OpKind::GradReduceScatter)
                    && o.name.block != Block::Optimizer
            })
            .collect();
        assert!(!reductions.is_empty());
        for o in &reductions {
            let k = chunks.iter().position(|c| c.contains(&(o.name.layer as u64))).expect("a layer of the stage");
            assert_eq!(o.name.micro as u64, [8, 6][k], "{:?}", o.name);
        }
        // The second chunk's reductions start before the last micro-batch's backward pass.
        let last_backward = r
            .timeline
            .iter()
            .filter(|o| o.name.micro == 8 && o.name.phase == Phase::Backward && o.name.kind == OpKind::Compute)
            .map(|o| o.start_s)
            .fold(f64::INFINITY, f64::min);
        let early = reductions.iter().filter(|o| chunks[1].contains(&(o.name.layer as u64))).map(|o| o.start_s);
        assert!(early.clone().count() > 0 && early.fold(0.0, f64::max) < last_backward);
    }

    #[test]
    fn fp8_parameters_halve_the_blocks_weight_gathers_and_drop_their_16_bit_copy() {
        // FP8 training over 16 GPUs of 2 nodes, ZeRO-1 and ZeRO-3, the blocks' weights kept and
        // gathered in 16 bits or in FP8 (fp8_param_gather); without FP8 training the flag is
        // ignored.
        let task = |level: &str, zero: u64, fp8: bool, gather: bool| {
            json!({"transformer_parallel": [level], "transformer_parallel_degree": [16], "zero_stage": zero,
                "fp8": fp8, "fp8_param_gather": gather})
        };
        fn cx_of(s: &Scenario) -> TrainingCx<'_> {
            TrainingCx::new(s).expect("transformer")
        }
        let run = |t: Value| on_h100(16, t, json!({})).expect("valid");
        let (z1, z1_fp8) = (run(task("ddp", 1, true, false)), run(task("ddp", 1, true, true)));
        let (a, b) = (cx_of(&z1), cx_of(&z1_fp8));
        assert!(!a.fp8_params() && b.fp8_params());
        assert_eq!((a.gathered_bytes_per_param(), b.gathered_bytes_per_param()), (2.0, 1.0));
        // The gather after the step: the blocks' weights at 1 byte, the embedding at 2.
        let (blocks, _) = a.stage_layer_params(0);
        let (dense, expert) = a.stage_params(0);
        let bytes = |x: &TrainingCx| x.param_gather_s();
        let g = a.zero_group();
        let want = |by: f64| a.collective(Collective::AllGather, by, g);
        assert_eq!(bytes(&a), want((dense + expert) * 2.0));
        assert_eq!(bytes(&b), want(blocks + (dense + expert - blocks) * 2.0));
        assert!(bytes(&b) < 0.6 * bytes(&a));
        // The op on the timeline takes it, and the 16-bit copy of the blocks' weights is gone.
        let gather_op = |s: &Scenario| {
            let r = evaluate(&cx_of(s));
            r.timeline.iter().find(|o| o.name.kind == OpKind::WeightAllGather).map(|o| o.duration_s).expect("gather")
        };
        assert_eq!((gather_op(&z1), gather_op(&z1_fp8)), (bytes(&a), bytes(&b)));
        let (ma, mb) = (a.stage_memory(0), b.stage_memory(0));
        assert!((ma[0].1 - mb[0].1 - 2.0 * blocks).abs() < 1e3, "{} {}", ma[0].1, mb[0].1);
        // ZeRO-3: each layer's gather moves 1 byte per parameter, and only FP8 copies are gathered.
        let (s3, s3_fp8) = (run(task("fsdp", 3, true, false)), run(task("fsdp", 3, true, true)));
        let (z3, z3_fp8) = (cx_of(&s3), cx_of(&s3_fp8));
        let layer = z3.layer_params_on_gpu();
        let shard = z3.zero3_group();
        assert_eq!(z3.layer_times(0).weight_gather_s, z3.collective(Collective::AllGather, 2.0 * layer, shard));
        assert_eq!(z3_fp8.layer_times(0).weight_gather_s, z3.collective(Collective::AllGather, layer, shard));
        let (buffers, buffers_fp8) = (z3.stage_memory(0)[4].1, z3_fp8.stage_memory(0)[4].1);
        assert!((buffers - buffers_fp8 - 2.0 * layer * 2.0).abs() < 1e3, "{buffers} {buffers_fp8}");
        // Without FP8 training, or without ZeRO, nothing changes.
        for (t, u) in [
            (task("ddp", 1, false, false), task("ddp", 1, false, true)),
            (task("ddp", 0, true, false), task("ddp", 0, true, true)),
        ] {
            let (x, y) = (run(t), run(u));
            assert!(!cx_of(&y).fp8_params());
            assert_eq!(evaluate(&cx_of(&x)).iteration_s, evaluate(&cx_of(&y)).iteration_s);
            assert_eq!(cx_of(&x).stage_memory(0), cx_of(&y).stage_memory(0));
        }
    }

    #[test]
    fn fp8_training_needs_fp8_tensor_cores_a_16_bit_model_and_a_training_task() {
        let task = json!({"transformer_parallel": ["ddp"], "transformer_parallel_degree": [8], "fp8": true});
        let message = |r: Result<Scenario, Vec<crate::engine::validate::FieldError>>| {
            let e = r.expect_err("refused");
            assert_eq!(e.len(), 1, "{e:?}");
            assert_eq!(e[0].field, "task.fp8");
            e[0].message.clone()
        };
        // The A100 config has no fp8_flops.
        assert!(message(checked(doc(8, task.clone(), json!({})))).contains("no FP8 tensor cores"));
        let one_byte = json!({"bytes_per_nonemb_param": 1, "bytes_per_emb_param": 1});
        assert!(message(on_h100(8, task.clone(), one_byte)).contains("set 2 (bf16)"));
        let mut serve = task.clone();
        serve["type"] = json!("inference");
        assert!(message(on_h100(8, serve, json!({}))).contains("weight_format"));
        assert!(on_h100(8, task, json!({})).is_ok());
    }

    #[test]
    fn zero3_at_a_fixed_global_batch_loses_throughput_per_gpu_as_gpus_double() {
        // 2,048 sequences per step over n GPUs, one per micro-batch: each micro-batch every GPU
        // gathers and reduces the whole model, in rings whose latency grows with n.
        let per_gpu = |n: u64| {
            let task = json!({"transformer_parallel": ["fsdp"], "transformer_parallel_degree": [n],
                "local_emb_bs": 2048 / n, "local_transformer_bs": 2048 / n, "micro_batch": 1,
                "recompute": "full", "attention": "flash"});
            let r = evaluate(&TrainingCx::new(&scenario(n, task)).expect("transformer"));
            r.throughput_samples_per_s / n as f64
        };
        let (a, b, c) = (per_gpu(512), per_gpu(1024), per_gpu(2048));
        assert!(b < a && c < b);
        // (With a two-level latency, (k-1) NVLink hops and (m-1) network hops, it kept 0.87.)
        assert!(c / b < 0.8, "1,024 -> 2,048 GPUs keeps {:.2} of the throughput per GPU", c / b);
    }

    #[test]
    fn fp32_gradients_double_the_gradient_memory_and_the_bytes_reduced() {
        // 16 GPUs over 2 nodes, plain data parallelism then ZeRO-2: 16-bit against fp32 grads.
        for zero in [0, 2] {
            let task = |fp32: bool| {
                json!({"transformer_parallel": ["ddp"], "transformer_parallel_degree": [16], "zero_stage": zero,
                    "fp32_grads": fp32})
            };
            let (b, f) = (scenario(16, task(false)), scenario(16, task(true)));
            let (b, f) = (TrainingCx::new(&b).expect("transformer"), TrainingCx::new(&f).expect("transformer"));
            assert_eq!((b.grad_bytes(), f.grad_bytes()), (2.0, 4.0));
            let grads = |cx: &TrainingCx| cx.stage_memory(0)[1].1;
            assert!((grads(&f) / grads(&b) - 2.0).abs() < 1e-12);
            // The other parts do not change.
            assert_eq!(b.stage_memory(0)[0].1, f.stage_memory(0)[0].1);
            assert_eq!(b.stage_memory(0)[2].1, f.stage_memory(0)[2].1);
            // Twice the bytes: more than the collective's fixed costs, less than twice the time.
            let (tb, tf) = (b.final_grad_sync().1, f.final_grad_sync().1);
            assert!(tf > 1.9 * tb && tf < 2.0 * tb, "{tf} vs {tb}");
            let (lb, lf) = (b.layer_times(0).grad_sync_s, f.layer_times(0).grad_sync_s);
            assert!(lf > 1.5 * lb && lf < 2.0 * lb, "{lf} vs {lb}");
        }
    }

    /// A T5-Large-like encoder-decoder (24 + 24 layers, 1024 wide, 16 heads) reading
    /// `input` tokens and predicting `target`, with `task` merged in.
    fn encoder_decoder(n: u64, input: u64, target: u64, task: Value) -> Scenario {
        let model = json!({"type": "EncoderDecoder", "num_encoder_layers": 24, "num_decoder_layers": 24,
            "num_transformer_heads": 16, "attention_dim": 1024, "transformer_fc_dim": 4096,
            "transformer_seq_len": input, "target_seq_len": target, "entries_per_table": 32128,
            "tied_embeddings": true});
        scenario_with(n, task, model)
    }

    #[test]
    fn an_encoder_decoder_runs_each_stack_on_its_own_tokens() {
        let task = || {
            json!({"transformer_parallel": ["tp", "ddp"], "transformer_parallel_degree": [2, 4],
                "local_transformer_bs": 32, "local_emb_bs": 32})
        };
        let s = encoder_decoder(8, 512, 114, task());
        let cx = TrainingCx::new(&s).expect("transformer");
        // The encoder's layers take the input's tokens, the decoder's the target's.
        let (enc_tokens, dec_tokens) = (32.0 * 512.0, 32.0 * 114.0);
        assert_eq!((cx.at(0).tokens, cx.at(23).tokens, cx.at(24).tokens), (enc_tokens, enc_tokens, dec_tokens));
        assert_eq!((cx.tokens, cx.encoder_tokens()), (dec_tokens, enc_tokens));
        // The decoder's attention block ends in two all-reduces (self- and cross-attention).
        let (enc, dec) = (cx.layer_times(0), cx.layer_times(24));
        assert_eq!((enc.attn_tp_comm_s, dec.attn_tp_comm_s), (enc.tp_comm_s, 2.0 * dec.tp_comm_s));
        assert!(dec.attn_fwd_s < enc.attn_fwd_s && dec.ffn_fwd_s < enc.ffn_fwd_s);
        // Every layer runs once per micro-batch and pass, in its stack's durations.
        let r = evaluate(&cx);
        let fwd = |block: Block| {
            r.timeline.iter().filter(move |o| {
                o.name.block == block && o.name.phase == Phase::Forward && o.name.kind == OpKind::Compute
            })
        };
        assert_eq!(fwd(Block::Attn).count(), 48);
        for op in fwd(Block::Attn) {
            let want = cx.layer_times(op.name.layer as u64).attn_fwd_s;
            assert_eq!(op.duration_s, want, "{}", op.name);
        }
        // Model FLOPs: forward and twice that backward, each stack over its own tokens.
        assert!((cx.model_flops_per_sample() / (3.0 * cx.d.forward_flops_per_sample()) - 1.0).abs() < 1e-12);
        let u = r.utilization.expect("default model");
        assert!((u.model_flops / (cx.model_flops_per_sample() * 128.0) - 1.0).abs() < 1e-12);
        // Reading a longer input costs the encoder (and the cross-attention), not the logits.
        let long = encoder_decoder(8, 2048, 114, task());
        let long = TrainingCx::new(&long).expect("transformer");
        assert_eq!(long.edge_times(), cx.edge_times());
        assert!(long.layer_times(0).attn_fwd_s > 4.0 * enc.attn_fwd_s);
        assert!(long.layer_times(24).attn_fwd_s > dec.attn_fwd_s);
        assert_eq!(long.layer_times(24).ffn_fwd_s, dec.ffn_fwd_s);
    }

    #[test]
    fn an_encoder_decoder_pipeline_is_paced_and_sized_by_its_busiest_stage() {
        // 48 layers on 4 stages: two of encoder layers over 1,024 input tokens, two of decoder
        // layers over 128 target tokens. The encoder's stages are busier.
        let task = json!({"transformer_parallel": ["pp", "ddp"], "transformer_parallel_degree": [4, 2],
            "local_transformer_bs": 128, "local_emb_bs": 128, "micro_batch": 32});
        let s = encoder_decoder(8, 1024, 128, task);
        let cx = TrainingCx::new(&s).expect("transformer");
        let pass = |stage: u64| {
            let (f, b) = TrainingCx { stage, ..cx.clone() }.pass_times();
            f + b
        };
        assert!(cx.stage < 2, "drawn stage {}", cx.stage);
        for stage in 0..4 {
            assert!(pass(stage) <= pass(cx.stage), "stage {stage}");
        }
        // Stages of decoder layers receive the encoder's output beside their own activations.
        let p2p = |stage: u64| TrainingCx { stage, ..cx.clone() }.p2p_s();
        assert!(p2p(3) > p2p(0));
        // Memory is the busiest stage's, whichever it is.
        let busiest = (0..4).map(|k| cx.stage_memory(k).iter().map(|(_, b)| b).sum::<f64>()).fold(0.0, f64::max);
        assert!((cx.memory().total_bytes - busiest).abs() < 1.0, "{} vs {busiest}", cx.memory().total_bytes);
        // The stages' weights add up to the model's (the shared embedding on the first stage,
        // its tied copy for the logits on the last).
        let on_stages: f64 = (0..4).map(|k| cx.stage_params(k).0 + cx.stage_params(k).1).sum();
        let tied_copy = 1024.0 * 32128.0;
        assert!((on_stages - cx.d.params() - tied_copy).abs() < 1.0, "{on_stages} vs {}", cx.d.params());
    }

    #[test]
    fn an_encoder_decoder_is_host_bound_where_a_stack_is() {
        // One sequence per GPU: 32 input tokens give the encoder's layers a few microseconds of
        // work, 4,096 target tokens the decoder's milliseconds. The encoder waits for the host.
        let task = || {
            json!({"transformer_parallel": ["ddp"], "transformer_parallel_degree": [8],
            "local_transformer_bs": 1, "local_emb_bs": 1})
        };
        let short_input = encoder_decoder(8, 32, 4096, task());
        let cx = TrainingCx::new(&short_input).expect("transformer");
        assert!(matches!(cx.host_bound(), Some(Limit::HostBound { .. })));
        assert!(cx.at(0).host_bound().is_some() && cx.at(24).host_bound().is_none());
        // Long inputs too: nothing waits.
        let long = encoder_decoder(8, 4096, 4096, task());
        assert!(TrainingCx::new(&long).expect("transformer").host_bound().is_none());
    }

    #[test]
    fn zero_stages_shard_an_encoder_decoders_training_state() {
        let memory = |zero: u64| {
            let task = json!({"transformer_parallel": ["ddp"], "transformer_parallel_degree": [8],
                "zero_stage": zero, "micro_batch": 8});
            let s = encoder_decoder(8, 512, 114, task);
            let cx = TrainingCx::new(&s).expect("transformer");
            (cx.memory().total_bytes, evaluate(&cx).comm_s)
        };
        let m: Vec<(f64, f64)> = (0..4).map(memory).collect();
        // Each stage keeps less per GPU; ZeRO-3 also gathers the weights layer by layer, in
        // the forward and the backward pass: it communicates the most.
        assert!(m[1].0 < m[0].0 && m[2].0 < m[1].0 && m[3].0 < m[2].0, "{m:?}");
        assert!(m[3].1 > m[2].1 && m[3].1 > m[0].1, "{m:?}");
    }

    #[test]
    fn an_encoder_decoder_explains_its_layers_by_stack() {
        let task = json!({"transformer_parallel": ["tp", "ddp"], "transformer_parallel_degree": [2, 4]});
        let s = encoder_decoder(8, 512, 114, task);
        let cx = TrainingCx::new(&s).expect("transformer");
        let r = evaluate(&cx);
        for (layer, says) in [(3, "encoder layer 3"), (30, "decoder layer 6")] {
            for block in [Block::Attn, Block::Fc] {
                let op = r
                    .timeline
                    .iter()
                    .find(|o| o.name.layer == layer && o.name.block == block && o.name.kind == OpKind::Compute)
                    .expect("op");
                let e = crate::engine::extended::explain::explain(&cx, &op.name).expect("explained");
                assert!(e.what.contains(says), "{}", e.what);
                assert_eq!(e.what.contains("cross-attention"), layer == 30 && block == Block::Attn, "{}", e.what);
                assert!((e.seconds - op.duration_s).abs() < 1e-15, "{}: {} vs {}", e.what, e.seconds, op.duration_s);
            }
            // The attention block's tensor-parallel all-reduce: two in a decoder layer, as long
            // as the op and saying so.
            let comm = r
                .timeline
                .iter()
                .find(|o| o.name.layer == layer && o.name.block == Block::Attn && o.name.kind == OpKind::ActAllReduce)
                .expect("all-reduce");
            let e = crate::engine::extended::explain::explain(&cx, &comm.name).expect("explained");
            assert_eq!(e.seconds, comm.duration_s);
            assert_eq!(e.formula.starts_with("twice"), layer == 30, "{}", e.formula);
        }
    }

    #[test]
    fn context_parallel_ranks_reduce_and_shard_with_the_data_parallel_ranks() {
        // 64 GPUs: tp 4 x cp 2 x dp 8 and tp 4 x dp 16 both hold 16 copies of the weights, so
        // ZeRO shards them 16 ways and the gradients are reduced over 16 ranks; only the samples
        // differ (8 local batches with cp, 16 without).
        let plan = |levels: Value, degrees: Value, zero: u64| {
            scenario(
                64,
                json!({"transformer_parallel": levels, "transformer_parallel_degree": degrees,
                "zero_stage": zero, "sequence_parallel": true}),
            )
        };
        fn cx(s: &Scenario) -> TrainingCx<'_> {
            TrainingCx::new(s).expect("a transformer")
        }
        let part = |s: &Scenario, p: MemPart| cx(s).stage_memory(0).iter().find(|(q, _)| *q == p).expect("part").1;
        let (cp, flat) =
            (plan(json!(["tp", "cp", "ddp"]), json!([4, 2, 8]), 1), plan(json!(["tp", "ddp"]), json!([4, 16]), 1));
        assert_eq!((cx(&cp).global_batch, cx(&flat).global_batch), (64, 128));
        assert_eq!(part(&cp, MemPart::OptimizerStates), part(&flat, MemPart::OptimizerStates));
        let sync = cx(&cp).final_grad_sync_plan().expect("a gradient reduction");
        // The cp pairs share a node (tp 4 x cp 2 = 8 GPUs), the data-parallel ranks do not.
        assert_eq!(sync.group, crate::engine::extended::collective::Group { size: 16, per_node: 2, per_site: 16 });
        assert_eq!(cx(&cp).lay.weight_dp, cx(&cp).lay.dense_dp.with(cx(&cp).lay.cp));
        // Fully sharded: the shards span the fsdp and cp ranks.
        let (cp3, flat3) =
            (plan(json!(["tp", "cp", "fsdp"]), json!([4, 2, 8]), 0), plan(json!(["tp", "fsdp"]), json!([4, 16]), 0));
        assert_eq!(cx(&cp3).zero3_group().size, 16);
        assert_eq!(part(&cp3, MemPart::Weights), part(&flat3, MemPart::Weights));
        assert_eq!(part(&cp3, MemPart::Gradients), part(&flat3, MemPart::Gradients));
    }
}
