//! The default model for convolutional networks (CNN): the published architectures layer by
//! layer, each convolution an implicit GEMM (how cuDNN runs it), trained or served data
//! parallel on the shared scheduler.
//!
//! - **Layers** ([`layers`]): ResNet-18 to -152 (He et al. 2016, Table 1, as torchvision builds
//!   them), GoogLeNet (Szegedy et al. 2015, Table 1) and Network-in-Network for ImageNet (Lin et
//!   al. 2014, the authors' Caffe model), with their parameters and multiply-adds; the tests pin
//!   them against the published figures.
//! - **Time**: a convolution of `C_in -> C_out` channels with a `k x k` kernel on `H x W`
//!   outputs is a GEMM of `m = B H W`, `n = C_out`, `k = C_in k^2` (its backward pass the
//!   activation- and weight-gradient GEMMs of the same shape, [`Gemm::dgrad`], [`Gemm::wgrad`]),
//!   charged by [`Gemm::compute_time_s`] but streamed as the tensors it really reads (the input
//!   once, not unfolded); normalisation, bias and ReLU passes and pooling run at HBM speed.
//! - **Data parallelism**: gradients are all-reduced in buckets of [`DDP_BUCKET_BYTES`] as the
//!   backward pass frees them (PyTorch DDP), or all at once after it (Caffe-era frameworks,
//!   `overlap_grad_reduce` off); the optimizer is SGD with momentum.
//!
//! One job: the default model of convolutional networks.

use super::calibration::{
    CONV_BIAS_BACKWARD_PASSES, CONV_BIAS_FORWARD_PASSES, CONV_NORM_BACKWARD_PASSES, CONV_NORM_FORWARD_PASSES,
    DDP_BUCKET_BYTES, SGD_STEP_BYTES_PER_PARAM, WORKSPACE_BYTES,
};
use super::collective::{time_s, Collective, Group, Links, Placement};
use super::explain::term;
use super::gemm::{Gemm, GemmGpu};
use super::iteration::{self, name, Timeline};
use super::layout::Layout;
use crate::engine::ops::{Block, OpKind, OpName, Phase};
use crate::engine::reference::explain::{Explanation, Term, Unit};
use crate::engine::report::{LayerWork, MemPart, Memory, ModelStats, Parts, Report, Work};
use crate::engine::scenario::{Cnn, ConvLayout, Network, Scenario, Setup};

/// What a layer computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LayerKind {
    /// A convolution (with its normalisation or bias, and ReLU).
    Conv,
    /// Max or average pooling: no weights, HBM-bound.
    Pool,
    /// The fully connected classifier.
    Linear,
}

/// One layer of a CNN for one image, on square feature maps.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Layer {
    pub kind: LayerKind,
    /// The block it belongs to: one op of the timeline per block and pass.
    pub block: u32,
    pub c_in: u64,
    pub c_out: u64,
    /// Kernel (or pooling window) side.
    pub kernel: u64,
    pub in_side: u64,
    pub out_side: u64,
    /// Batch normalisation after it (2 weights per channel, no bias); else a bias per channel.
    pub norm: bool,
}

impl Layer {
    /// Weights: `C_in C_out k^2` plus 2 per output channel (batch norm) or 1 (bias); a linear
    /// layer `C_in C_out + C_out`.
    pub fn params(&self) -> f64 {
        let per_channel = if self.norm { 2.0 } else { 1.0 };
        match self.kind {
            LayerKind::Conv => {
                (self.c_in * self.c_out * self.kernel * self.kernel) as f64 + per_channel * self.c_out as f64
            }
            LayerKind::Linear => (self.c_in * self.c_out + self.c_out) as f64,
            LayerKind::Pool => 0.0,
        }
    }

    /// Multiply-adds per image: `H W C_out C_in k^2` (the ResNet paper's "FLOPs").
    pub fn macs(&self) -> f64 {
        match self.kind {
            LayerKind::Pool => 0.0,
            _ => self.gemm(1.0).flops() / 2.0,
        }
    }

    /// The implicit GEMM of `b` images: `m = b H W`, `n = C_out`, `k = C_in k^2`.
    pub fn gemm(&self, b: f64) -> Gemm {
        match self.kind {
            LayerKind::Pool => Gemm::NONE,
            _ => Gemm {
                m: b * (self.out_side * self.out_side) as f64,
                n: self.c_out as f64,
                k: (self.c_in * self.kernel * self.kernel) as f64,
            },
        }
    }

    /// Input elements per image.
    pub fn in_elems(&self) -> f64 {
        (self.c_in * self.in_side * self.in_side) as f64
    }

    /// Output elements per image.
    pub fn out_elems(&self) -> f64 {
        (self.c_out * self.out_side * self.out_side) as f64
    }
}

/// Builds a network layer by layer, tracking the feature map's side and channels.
struct Builder {
    layers: Vec<Layer>,
    side: u64,
    channels: u64,
    block: u32,
    /// Pooled sides rounded up, as Caffe rounds them (GoogLeNet, NiN); down otherwise (PyTorch).
    caffe: bool,
}

/// The output side of a window of `k` moved by `stride` over `side` pixels padded by `pad`:
/// rounded down (PyTorch), or up (Caffe's pooling); at least 1.
fn out_side(side: u64, k: u64, stride: u64, pad: u64, ceil: bool) -> u64 {
    let span = (side + 2 * pad).saturating_sub(k);
    let steps = if ceil { span.div_ceil(stride) } else { span / stride };
    steps + 1
}

impl Builder {
    fn new(image_size: u64, caffe: bool) -> Builder {
        Builder { layers: Vec::with_capacity(200), side: image_size, channels: 3, block: 0, caffe }
    }

    /// A layer from `c_in` channels of `side` pixels; returns its output side (a pool's
    /// rounded up under Caffe's rounding).
    fn push(
        &mut self,
        kind: LayerKind,
        (c_in, side): (u64, u64),
        c_out: u64,
        (k, stride, pad): (u64, u64, u64),
        norm: bool,
    ) -> u64 {
        let out = out_side(side, k, stride, pad, kind == LayerKind::Pool && self.caffe);
        let block = self.block;
        self.layers.push(Layer { kind, block, c_in, c_out, kernel: k, in_side: side, out_side: out, norm });
        out
    }

    /// A convolution on the current feature map, which it replaces.
    fn conv(&mut self, c_out: u64, k: u64, stride: u64, norm: bool) {
        let from = (self.channels, self.side);
        self.side = self.push(LayerKind::Conv, from, c_out, (k, stride, k / 2), norm);
        self.channels = c_out;
    }

    /// A pooling window of `k` moved by `stride` over the current feature map.
    fn pool(&mut self, k: u64, stride: u64, pad: u64) {
        let c = self.channels;
        self.side = self.push(LayerKind::Pool, (c, self.side), c, (k, stride, pad), false);
    }

    /// Global average pooling, then the classifier in a block of its own.
    fn head(&mut self, classes: u64) {
        self.block += 1;
        self.pool(self.side, 1, 0);
        let from = (self.channels, 1);
        self.push(LayerKind::Linear, from, classes, (1, 1, 0), false);
    }

    /// ResNet (torchvision): a 7x7 stem, then basic (two 3x3) or bottleneck (1x1, 3x3, 1x1 of 4x
    /// the width) blocks in four stages of widths 64 to 512, each block a timeline block.
    fn resnet(&mut self, bottleneck: bool, counts: [u64; 4]) {
        self.conv(64, 7, 2, true);
        self.pool(3, 2, 1);
        for (stage, n) in counts.into_iter().enumerate() {
            let width = 64u64 << stage;
            for i in 0..n {
                self.block += 1;
                let stride = if i == 0 && stage > 0 { 2 } else { 1 };
                let entry = (self.channels, self.side);
                let out = if bottleneck { 4 * width } else { width };
                if bottleneck {
                    self.conv(width, 1, 1, true);
                    self.conv(width, 3, stride, true);
                    self.conv(out, 1, 1, true);
                } else {
                    self.conv(width, 3, stride, true);
                    self.conv(width, 3, 1, true);
                }
                if stride != 1 || entry.0 != out {
                    // The shortcut's projection (1x1, strided).
                    self.push(LayerKind::Conv, entry, out, (1, stride, 0), true);
                }
            }
        }
    }

    /// An inception module: 1x1; 1x1 then 3x3; 1x1 then 5x5; 3x3 max pool then 1x1, side by
    /// side, their outputs concatenated.
    fn inception(&mut self, [n1, r3, n3, r5, n5, proj]: [u64; 6]) {
        let entry = (self.channels, self.side);
        let s = self.side;
        self.push(LayerKind::Conv, entry, n1, (1, 1, 0), false);
        self.push(LayerKind::Conv, entry, r3, (1, 1, 0), false);
        self.push(LayerKind::Conv, (r3, s), n3, (3, 1, 1), false);
        self.push(LayerKind::Conv, entry, r5, (1, 1, 0), false);
        self.push(LayerKind::Conv, (r5, s), n5, (5, 1, 2), false);
        self.push(LayerKind::Pool, entry, entry.0, (3, 1, 1), false);
        self.push(LayerKind::Conv, entry, proj, (1, 1, 0), false);
        self.channels = n1 + n3 + n5 + proj;
    }

    /// GoogLeNet (Table 1 of the paper; Caffe's rounding of pooled sides).
    fn googlenet(&mut self) {
        self.conv(64, 7, 2, false);
        self.pool(3, 2, 0);
        self.conv(64, 1, 1, false);
        self.conv(192, 3, 1, false);
        self.pool(3, 2, 0);
        const MODULES: [(bool, [u64; 6]); 9] = [
            (false, [64, 96, 128, 16, 32, 32]),
            (false, [128, 128, 192, 32, 96, 64]),
            (true, [192, 96, 208, 16, 48, 64]),
            (false, [160, 112, 224, 24, 64, 64]),
            (false, [128, 128, 256, 24, 64, 64]),
            (false, [112, 144, 288, 32, 64, 64]),
            (false, [256, 160, 320, 32, 128, 128]),
            (true, [256, 160, 320, 32, 128, 128]),
            (false, [384, 192, 384, 48, 128, 128]),
        ];
        for (pool_first, widths) in MODULES {
            self.block += 1;
            if pool_first {
                self.pool(3, 2, 0);
            }
            self.inception(widths);
        }
    }

    /// Network-in-Network for ImageNet: four mlpconv blocks (a convolution and two 1x1
    /// convolutions), the last giving one map per class, averaged.
    fn nin(&mut self, classes: u64) {
        const BLOCKS: [(u64, u64, u64); 4] = [(96, 11, 4), (256, 5, 1), (384, 3, 1), (1024, 3, 1)];
        for (i, (width, k, stride)) in BLOCKS.into_iter().enumerate() {
            if i > 0 {
                self.block += 1;
            }
            let from = (self.channels, self.side);
            // The first convolution is not padded; the others keep the side.
            let pad = if i == 0 { 0 } else { k / 2 };
            self.side = self.push(LayerKind::Conv, from, width, (k, stride, pad), false);
            self.channels = width;
            self.conv(width, 1, 1, false);
            let last = if i == 3 { classes } else { width };
            self.conv(last, 1, 1, false);
            if i < 3 {
                self.pool(3, 2, 0);
            }
        }
        self.block += 1;
        self.pool(self.side, 1, 0);
    }
}

/// The layers of a network at its input size, in forward order.
pub fn layers(c: &Cnn) -> Vec<Layer> {
    let mut b = Builder::new(c.image_size, matches!(c.network, Network::GoogLeNet | Network::Nin));
    match c.network {
        Network::ResNet18 => b.resnet(false, [2, 2, 2, 2]),
        Network::ResNet34 => b.resnet(false, [3, 4, 6, 3]),
        Network::ResNet50 => b.resnet(true, [3, 4, 6, 3]),
        Network::ResNet101 => b.resnet(true, [3, 4, 23, 3]),
        Network::ResNet152 => b.resnet(true, [3, 8, 36, 3]),
        Network::GoogLeNet => b.googlenet(),
        Network::Nin => {
            b.nin(c.classes);
            return b.layers;
        }
    }
    b.head(c.classes);
    b.layers
}

/// Per-scenario quantities of the CNN default model.
#[derive(Clone, Debug)]
pub struct CnnCx<'a> {
    pub s: &'a Scenario,
    pub cnn: &'a Cnn,
    pub layers: Vec<Layer>,
    /// The data-parallel group (every GPU).
    pub dp: Group,
    pub links: Links,
    pub setup: &'a Setup,
    pub trains: bool,
    pub flops_per_s: f64,
    pub peak_flops_per_s: f64,
    pub hbm_bytes_per_s: f64,
    /// HBM bandwidth a GEMM's own reads and writes reach, bytes/s (`gemm_bw_util`).
    pub gemm_hbm_bytes_per_s: f64,
    /// Bytes per weight and activation element.
    pub e: f64,
    /// Images per GPU.
    pub local_batch: f64,
    pub global_batch: u64,
    /// Whether every convolution kernel transposes its activation operands: channels-first
    /// activations ([`ConvLayout::Nchw`]) on tensor cores ([`tensor_cores`]).
    pub transposes: bool,
}

/// Whether the scenario's convolutions run on tensor cores: the peak of its precision
/// ([`crate::engine::report::peak_flops_per_s`]) is at least
/// [`super::calibration::TENSOR_CORE_OVER_FP64`] times the
/// GPU's FP64 peak. So 16-bit from V100 on, 32-bit (TF32, cuDNN's and PyTorch's default for
/// convolutions) from A100 on, neither on a P100.
pub fn tensor_cores(s: &Scenario) -> bool {
    let f64_peak = s.system.f64_flops_per_s;
    f64_peak > 0.0 && crate::engine::report::peak_flops_per_s(s) >= super::calibration::TENSOR_CORE_OVER_FP64 * f64_peak
}

impl<'a> CnnCx<'a> {
    pub fn new(s: &'a Scenario, cnn: &'a Cnn) -> Option<CnnCx<'a>> {
        let plan = &s.task.plan;
        let sys = &s.system;
        let lay = Layout::of(plan.mlp.as_ref()?, Placement::of(sys));
        let e = s.model.bytes_per_dense_param.f64();
        let peak = crate::engine::report::peak_flops_per_s(s);
        let local = plan.local_mlp_batch?;
        Some(CnnCx {
            s,
            cnn,
            layers: layers(cnn),
            dp: lay.dp,
            links: Links::of(sys),
            setup: &s.task.setup,
            trains: s.task.kind.trains(),
            flops_per_s: peak * sys.flops_util,
            peak_flops_per_s: peak,
            hbm_bytes_per_s: sys.mem_bw_bytes_per_s * sys.mem_bw_util,
            gemm_hbm_bytes_per_s: sys.mem_bw_bytes_per_s * sys.gemm_bw_fraction(),
            e,
            local_batch: local as f64,
            global_batch: local.saturating_mul(lay.dp.size),
            transposes: s.task.setup.conv_layout == ConvLayout::Nchw && tensor_cores(s),
        })
    }

    /// What block `b` is, in words: the stem, a residual block, an inception module, an
    /// mlpconv block, or the classifier.
    pub fn block_label(&self, b: u32) -> String {
        let last = self.blocks().saturating_sub(1);
        let (stem, kind) = match self.cnn.network {
            Network::GoogLeNet => (true, "inception module"),
            Network::Nin => (false, "mlpconv block"),
            _ => (true, "residual block"),
        };
        match b {
            0 if stem => "the stem".into(),
            b if b == last => "the classifier".into(),
            b if stem => format!("{kind} {b}"),
            b => format!("{kind} {}", b + 1),
        }
    }

    /// Blocks of the network (ops per pass).
    pub fn blocks(&self) -> u32 {
        self.layers.last().map_or(0, |l| l.block + 1)
    }

    /// The layers of block `b`.
    fn block_layers(&self, b: u32) -> impl Iterator<Item = &Layer> {
        self.layers.iter().filter(move |l| l.block == b)
    }

    /// Weights of the whole network.
    pub fn params(&self) -> f64 {
        self.layers.iter().map(Layer::params).sum()
    }

    /// Weights of block `b`.
    pub fn block_params(&self, b: u32) -> f64 {
        self.block_layers(b).map(Layer::params).sum()
    }

    /// Forward FLOPs per image: 2 per multiply-add.
    pub fn flops_per_sample(&self) -> f64 {
        2.0 * self.layers.iter().map(Layer::macs).sum::<f64>()
    }

    /// Forward FLOPs per image of block `b`.
    pub fn block_flops(&self, b: u32) -> f64 {
        2.0 * self.block_layers(b).map(Layer::macs).sum::<f64>()
    }

    /// A GEMM of this GPU's images, s: its compute time, or streaming the `bytes` it really
    /// moves if that takes longer.
    fn gemm_s(&self, g: Gemm, bytes: f64) -> f64 {
        let gpu = GemmGpu::new(self.flops_per_s, self.gemm_hbm_bytes_per_s, self.s.system.sm_count);
        g.compute_time_s(self.e, gpu).max(bytes / self.gemm_hbm_bytes_per_s)
    }

    /// `passes` passes over a layer's outputs for this GPU's images, s.
    fn passes_s(&self, l: &Layer, passes: f64) -> f64 {
        self.local_batch * l.out_elems() * self.e * passes / self.hbm_bytes_per_s
    }

    /// The transposes of one convolution kernel's activation operands on channels-first
    /// tensors, s: the forward kernel's input in and output back out, the activation
    /// gradient's output gradient in and input gradient out, the weight gradient's input and
    /// output gradient in; each is read and written once, `2 b (in + out) e` bytes a kernel.
    /// 0 when there are none ([`CnnCx::transposes`]) and for layers that are not convolutions.
    fn transpose_s(&self, l: &Layer) -> f64 {
        if !self.transposes || l.kind != LayerKind::Conv {
            return 0.0;
        }
        2.0 * self.local_batch * (l.in_elems() + l.out_elems()) * self.e / self.hbm_bytes_per_s
    }

    /// Layer `l`'s forward pass on this GPU, s: its GEMM (input, weights and output streamed
    /// once at least), then its normalisation or bias and ReLU passes, and the transposes of
    /// channels-first activations ([`CnnCx::transpose_s`]); a pool reads its input and writes
    /// its output.
    pub fn layer_fwd_s(&self, l: &Layer) -> f64 {
        let b = self.local_batch;
        let io_bytes = b * (l.in_elems() + l.out_elems()) * self.e;
        match l.kind {
            LayerKind::Pool => io_bytes / self.hbm_bytes_per_s,
            _ => {
                let passes = if l.norm { CONV_NORM_FORWARD_PASSES } else { CONV_BIAS_FORWARD_PASSES };
                self.gemm_s(l.gemm(b), io_bytes + l.params() * self.e) + self.passes_s(l, passes) + self.transpose_s(l)
            }
        }
    }

    /// Layer `l`'s backward pass on this GPU, s: the activation-gradient GEMM (none for the
    /// first layer: the image needs no gradient), the weight-gradient GEMM, each with its
    /// transposes of channels-first activations, and the element-wise passes; a pool reads the
    /// output's gradient and writes the input's.
    pub fn layer_bwd_s(&self, l: &Layer, first: bool) -> f64 {
        let b = self.local_batch;
        let io_bytes = b * (l.in_elems() + l.out_elems()) * self.e;
        match l.kind {
            LayerKind::Pool => io_bytes / self.hbm_bytes_per_s,
            _ => {
                let g = l.gemm(b);
                let w = l.params() * self.e;
                let dgrad = if first { 0.0 } else { self.gemm_s(g.dgrad(), io_bytes + w) + self.transpose_s(l) };
                let passes = if l.norm { CONV_NORM_BACKWARD_PASSES } else { CONV_BIAS_BACKWARD_PASSES };
                dgrad + self.gemm_s(g.wgrad(), io_bytes + w) + self.transpose_s(l) + self.passes_s(l, passes)
            }
        }
    }

    /// Block `b`'s forward pass on this GPU, s.
    pub fn block_fwd_s(&self, b: u32) -> f64 {
        self.block_layers(b).map(|l| self.layer_fwd_s(l)).sum()
    }

    /// Block `b`'s backward pass on this GPU, s.
    pub fn block_bwd_s(&self, b: u32) -> f64 {
        if !self.trains {
            return 0.0;
        }
        let first = self.layers.first();
        self.block_layers(b).map(|l| self.layer_bwd_s(l, Some(l) == first)).sum()
    }

    /// Bytes per gradient element: 4 when gradients are kept in fp32.
    fn grad_bytes(&self) -> f64 {
        if self.setup.fp32_grads {
            4.0
        } else {
            self.e
        }
    }

    /// The gradient buckets in the order the backward pass fills them: (the block whose
    /// backward pass completes the bucket, its bytes). Blocks join the bucket until it holds
    /// [`DDP_BUCKET_BYTES`]; without `overlap_grad_reduce` one bucket holds every gradient.
    pub fn buckets(&self) -> Vec<(u32, f64)> {
        let cap = if self.setup.overlap_grad_reduce { DDP_BUCKET_BYTES } else { f64::INFINITY };
        let mut out = Vec::new();
        let mut bytes = 0.0;
        for b in (0..self.blocks()).rev() {
            bytes += self.block_params(b) * self.grad_bytes();
            if bytes >= cap || b == 0 {
                out.push((b, bytes));
                bytes = 0.0;
            }
        }
        out
    }

    /// All-reduce of `bytes` of gradients over the data-parallel group, s.
    pub fn all_reduce_s(&self, bytes: f64) -> f64 {
        time_s(Collective::AllReduce, bytes, self.dp, &self.links, self.setup.collective)
    }

    /// The optimizer step (SGD with momentum, memory-bound), s.
    pub fn optimizer_step_s(&self) -> f64 {
        if !self.trains {
            return 0.0;
        }
        self.params() * SGD_STEP_BYTES_PER_PARAM / self.hbm_bytes_per_s
    }

    /// Memory per GPU by part. Training keeps, for the backward pass, every convolution's output
    /// (and with batch norm its normalised output too), every pool's output and the images;
    /// inference needs the largest layer's input and output at once.
    pub fn memory(&self) -> Memory {
        let p = self.params();
        let weights = p * self.e;
        let (grads, opt) = if self.trains {
            // Momentum in fp32, and an fp32 master copy under 32-bit weights.
            let master = if self.e < 4.0 { 4.0 } else { 0.0 };
            (p * self.grad_bytes(), p * (4.0 + master))
        } else {
            (0.0, 0.0)
        };
        let b = self.local_batch;
        let activations = if self.trains {
            let image = self.layers.first().map_or(0.0, Layer::in_elems);
            let kept: f64 = self
                .layers
                .iter()
                .map(|l| l.out_elems() * if l.kind == LayerKind::Conv && l.norm { 2.0 } else { 1.0 })
                .sum();
            b * (image + kept) * self.e
        } else {
            b * self.layers.iter().map(|l| l.in_elems() + l.out_elems()).fold(0.0, f64::max) * self.e
        };
        let parts = vec![
            (MemPart::Weights, weights),
            (MemPart::Gradients, grads),
            (MemPart::OptimizerStates, opt),
            (MemPart::Activations, activations),
            (MemPart::Buffers, WORKSPACE_BYTES),
        ];
        Memory::of_parts(parts, self.s.system.mem_cap_bytes)
    }

    /// The iteration's timeline, and the launch waits in its collectives' durations.
    fn timeline(&self) -> (Vec<crate::engine::ops::Op>, crate::engine::schedule::Schedule, Vec<(u32, f64)>) {
        let blocks = self.blocks();
        let mut tl = Timeline::with_collective_cycle(8 + 3 * blocks as usize, self.setup.collective_cycle_s);
        let mut compute = None;
        for b in 0..blocks {
            let c = tl.push(
                name(Block::Conv, b as u64, Phase::Forward, OpKind::Compute, 0),
                self.block_fwd_s(b),
                &[compute],
            );
            compute = c.or(compute);
        }
        if self.trains {
            let buckets = self.buckets();
            let overlap = self.setup.overlap_grad_reduce;
            let mut after = Vec::with_capacity(buckets.len() + 1);
            for b in (0..blocks).rev() {
                let c = tl.push(
                    name(Block::Conv, b as u64, Phase::Backward, OpKind::Compute, 0),
                    self.block_bwd_s(b),
                    &[compute],
                );
                compute = c.or(compute);
                if let (true, Some((_, bytes))) = (overlap, buckets.iter().find(|x| x.0 == b)) {
                    after.push(tl.push(
                        name(Block::Conv, b as u64, Phase::Backward, OpKind::GradAllReduce, 0),
                        self.all_reduce_s(*bytes),
                        &[c],
                    ));
                }
            }
            after.push(compute);
            if !overlap {
                let bytes = buckets.iter().map(|x| x.1).sum();
                after.push(tl.push(
                    name(Block::Optimizer, 0, Phase::Backward, OpKind::GradAllReduce, 0),
                    self.all_reduce_s(bytes),
                    &after,
                ));
            }
            tl.push(name(Block::Optimizer, 0, Phase::Backward, OpKind::Compute, 0), self.optimizer_step_s(), &after);
        }
        tl.finish_with_waits()
    }
}

/// Evaluates a CNN scenario with the default model.
pub fn evaluate(cx: &CnnCx) -> Report {
    let (mut ops, mut schedule, launch_waits) = cx.timeline();
    let mut limits = Vec::new();
    limits.extend(iteration::wait_for_input(&mut ops, &mut schedule, cx.global_batch, cx.setup.loader.rate(cx.s)));
    let memory = cx.memory();
    limits.extend(memory.does_not_fit());
    let per_sample = cx.flops_per_sample();
    let g = cx.global_batch as f64;
    let mean_block = per_sample / cx.blocks().max(1) as f64;
    let work = Work {
        layers: vec![LayerWork {
            label: "Convolution block (mean)",
            local_flops: mean_block * cx.local_batch,
            global_flops: mean_block * g,
        }],
        local_total_flops: per_sample * cx.local_batch,
        global_total_flops: per_sample * g,
        lookup_bytes_per_local_batch: 0.0,
        lookup_bytes_per_global_batch: 0.0,
        lookup_bytes_per_device: 0.0,
    };
    let params = cx.params();
    let model = ModelStats {
        params,
        dense_params: params,
        emb_params: 0.0,
        flops_per_sample: per_sample,
        lookup_bytes_per_sample: 0.0,
    };
    let system = iteration::system_stats(cx.s, cx.flops_per_s, cx.hbm_bytes_per_s, &cx.links);
    let parts = Parts { ops, schedule, global_batch: cx.global_batch, memory, work, model, system };
    iteration::plain_report(
        parts,
        launch_waits,
        limits,
        per_sample,
        cx.trains,
        cx.peak_flops_per_s,
        "MFU = model FLOPs per iteration (2 per multiply-add; 3 x forward when training) / (iteration time x GPUs x peak FLOP/s per GPU)",
    )
}

/// `n` things in words (`4 convolutions`, `1 pooling layer`), or nothing for none. (The
/// engine does not use the faces' `units`.)
fn units_of(n: u64, what: &str) -> String {
    match n {
        0 => String::new(),
        1 => format!("1 {what}"),
        n => format!("{n} {what}s"),
    }
}

/// A convolution block's formula, without and with the transposes of channels-first
/// activations ([`explain`]).
macro_rules! conv_block_formula {
    () => {
        "sum over its layers of max(GEMM FLOPs / F, bytes moved / B_gemm) + element-wise passes x output bytes / B_mem"
    };
}

/// A convolution block's note, without and with the transposes ([`explain`]).
macro_rules! conv_block_note {
    () => {
        "Each convolution runs as an implicit GEMM (m = images x output pixels, n = output channels, k = input channels x kernel area); small early layers and 1x1 convolutions on few channels are bound by HBM."
    };
}

/// Explains an op of a CNN default-model timeline.
pub fn explain(cx: &CnnCx, op: &OpName) -> Option<Explanation> {
    let rate = term("F", "effective FLOP rate per GPU (peak x utilisation)", cx.flops_per_s, Unit::FlopsPerS);
    let hbm = term("B_mem", "effective HBM bandwidth per GPU", cx.hbm_bytes_per_s, Unit::BytesPerS);
    let images = term("B", "images per GPU", cx.local_batch, Unit::Count);
    let b = u32::try_from(op.layer).ok().filter(|b| *b < cx.blocks());
    let (what, formula, terms, seconds, note): (String, &'static str, Vec<Term>, f64, Option<&'static str>) = match (
        op.kind, op.block, b,
    ) {
        (OpKind::Compute, Block::Conv, Some(b)) => {
            let fwd = op.phase == Phase::Forward;
            let count = |kind: LayerKind| cx.block_layers(b).filter(|l| l.kind == kind).count() as u64;
            let mut layers = vec![
                units_of(count(LayerKind::Conv), "convolution"),
                units_of(count(LayerKind::Pool), "pooling layer"),
            ];
            if count(LayerKind::Linear) > 0 {
                layers.push("the fully connected layer".into());
            }
            layers.retain(|x| !x.is_empty());
            let flops = cx.block_flops(b) * cx.local_batch * if fwd { 1.0 } else { 2.0 };
            (
                format!(
                    "{} pass of {} ({})",
                    if fwd { "Forward" } else { "Backward" },
                    cx.block_label(b),
                    layers.join(", ")
                ),
                if cx.transposes {
                    concat!(
                        conv_block_formula!(),
                        " + each convolution kernel's transposes, 2 x (input + output bytes) / B_mem"
                    )
                } else {
                    conv_block_formula!()
                },
                vec![
                    images,
                    term(
                        "W",
                        "FLOPs of the block for this GPU's images (backward: activation and weight gradients)",
                        flops,
                        Unit::Flops,
                    ),
                    rate,
                    hbm,
                    super::explain::gemm_bandwidth_term(cx.gemm_hbm_bytes_per_s),
                ],
                if fwd { cx.block_fwd_s(b) } else { cx.block_bwd_s(b) },
                Some(if cx.transposes {
                    concat!(conv_block_note!(), " The activations are channels first (NCHW) and tensor cores compute on channels last (NHWC), so cuDNN transposes each kernel's input and output (forward: the input in, the output back; backward: the gradients likewise) and reads and writes each once more: set the convolution layout to NHWC (PyTorch's channels_last) to save that.")
                } else {
                    conv_block_note!()
                }),
            )
        }
        (OpKind::GradAllReduce, Block::Conv, Some(b)) => {
            let bytes = cx.buckets().iter().find(|x| x.0 == b).map_or(0.0, |x| x.1);
            (
                format!("All-reduce of a gradient bucket, closed by the backward pass of {}", cx.block_label(b)),
                "ring or tree all-reduce of the bucket over the data-parallel GPUs",
                vec![
                    term(
                        "bucket",
                        "gradient bytes of the blocks in this bucket (up to 25 MiB, PyTorch DDP's bucket_cap_mb)",
                        bytes,
                        Unit::Bytes,
                    ),
                    term("d", "data-parallel GPUs", cx.dp.size as f64, Unit::Count),
                ],
                cx.all_reduce_s(bytes),
                None,
            )
        }
        (OpKind::GradAllReduce, Block::Optimizer, _) => {
            let bytes = cx.buckets().iter().map(|x| x.1).sum();
            (
                "All-reduce of every gradient after the backward pass".into(),
                "ring or tree all-reduce of all gradients over the data-parallel GPUs",
                vec![term("grads", "gradient bytes of the whole network", bytes, Unit::Bytes), term("d", "data-parallel GPUs", cx.dp.size as f64, Unit::Count)],
                cx.all_reduce_s(bytes),
                Some("Turn on overlap_grad_reduce to reduce gradients in buckets during the backward pass, as PyTorch DDP does."),
            )
        }
        (OpKind::Compute, Block::Optimizer, _) => (
            "Optimizer step (SGD with momentum), memory-bound".into(),
            "P x 20 bytes / B_mem",
            vec![term("P", "weights", cx.params(), Unit::Params), hbm],
            cx.optimizer_step_s(),
            None,
        ),
        (OpKind::Idle, Block::Input, _) => {
            let r = evaluate(cx);
            let wait = r.timeline.iter().find(|o| o.name == *op).map_or(0.0, |o| o.duration_s);
            return Some(cx.setup.loader.explain_wait(cx.s, cx.global_batch, wait));
        }
        _ => return None,
    };
    Some(Explanation { what, formula: formula.into(), terms, seconds, note })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{evaluate, validate, RawScenario};
    use serde_json::{json, Value};

    fn net(network: Network, image_size: u64) -> Vec<Layer> {
        layers(&Cnn { network, image_size, classes: 1000 })
    }

    fn sums(layers: &[Layer]) -> (f64, f64) {
        (layers.iter().map(Layer::params).sum(), layers.iter().map(Layer::macs).sum())
    }

    #[test]
    fn resnets_have_their_published_weights_and_multiply_adds() {
        // torchvision's model table: parameters exactly, GMACs ("GFLOPS") to its two decimals;
        // the ResNet paper's Table 1 FLOPs (multiply-adds) for the basic-block nets, whose
        // layers v1.5 does not change.
        for (network, params, gmacs, paper) in [
            (Network::ResNet18, 11_689_512.0, 1.81, Some(1.8)),
            (Network::ResNet34, 21_797_672.0, 3.66, Some(3.6)),
            (Network::ResNet50, 25_557_032.0, 4.09, None),
            (Network::ResNet101, 44_549_160.0, 7.80, None),
            (Network::ResNet152, 60_192_808.0, 11.51, None),
        ] {
            let (p, macs) = sums(&net(network, 224));
            assert_eq!(p, params, "{network:?}");
            assert!((macs / 1e9 - gmacs).abs() < 0.005 + 1e-9, "{network:?}: {macs}");
            if let Some(paper) = paper {
                assert!((macs / 1e9 / paper - 1.0).abs() < 0.025, "{network:?}: {macs}");
            }
        }
        // The bottleneck nets are over the paper's 3.8, 7.6 and 11.3 billion: v1.5 strides in the
        // 3x3 convolution of each stage's first block, so that convolution runs at the larger
        // side: 7.6% more for ResNet-50, 2.6% and 1.9% for the deeper two.
        for (network, paper, over) in
            [(Network::ResNet50, 3.8e9, 0.076), (Network::ResNet101, 7.6e9, 0.026), (Network::ResNet152, 11.3e9, 0.019)]
        {
            let (_, macs) = sums(&net(network, 224));
            assert!((macs / paper - 1.0 - over).abs() < 0.002, "{network:?}: {macs}");
        }
    }

    #[test]
    fn googlenets_inception_modules_match_the_papers_table() {
        // Table 1: parameters (in units of 1,024) and multiply-adds (millions) per module. The
        // table rounds (its multiply-adds are its weights times the module's pixels): most rows
        // come within 2% of the branches counted here.
        let layers = net(Network::GoogLeNet, 224);
        let table =
            [(159, 128), (380, 304), (364, 73), (437, 88), (463, 100), (580, 119), (840, 170), (1072, 54), (1388, 71)];
        for (i, (kparams, mops)) in table.into_iter().enumerate() {
            let block: Vec<Layer> = layers.iter().filter(|l| l.block == i as u32 + 1).copied().collect();
            // The table counts weights without biases.
            let weights: f64 =
                block.iter().map(|l| l.params() - if l.kind == LayerKind::Conv { l.c_out as f64 } else { 0.0 }).sum();
            let (_, macs) = sums(&block);
            // Two rows disagree with their own widths: 4c's weights (its multiply-adds match) and
            // 5a's (5% over the module's branches).
            if i != 4 {
                assert!((weights / 1024.0 / kparams as f64 - 1.0).abs() < 0.055, "module {i}: {weights}");
            }
            assert!((macs / 1e6 / mops as f64 - 1.0).abs() < 0.055, "module {i}: {macs}");
        }
        // The classifier: 1,000K weights, 1M multiply-adds; about 1.5 billion in all (the paper's
        // "computational budget of 1.5 billion multiply-adds").
        let (p, macs) = sums(&layers);
        assert!((macs / 1.5e9 - 1.0).abs() < 0.06, "{macs}");
        assert!(p > 6.5e6 && p < 7.1e6, "{p}");
        let fc = layers.last().expect("a classifier");
        assert_eq!((fc.kind, fc.c_in, fc.c_out), (LayerKind::Linear, 1024, 1000));
    }

    #[test]
    fn nin_and_resnet_sides_follow_their_frameworks_rounding() {
        // NiN (Caffe): 224 -> 54 (11x11 stride 4) -> 27 -> 13 -> 6 after its three pools.
        let sides: Vec<u64> =
            net(Network::Nin, 224).iter().filter(|l| l.kind == LayerKind::Pool).map(|l| l.out_side).collect();
        assert_eq!(sides, [27, 13, 6, 1]);
        let (p, _) = sums(&net(Network::Nin, 224));
        // Its four mlpconv blocks: 7.6 million weights (the classifier is the last 1x1 layer).
        assert!((p / 7.6e6 - 1.0).abs() < 0.01, "{p}");
        // ResNet (PyTorch): 224 -> 112 -> 56 -> 28 -> 14 -> 7; the last block's output is 7x7.
        let r = net(Network::ResNet50, 224);
        let last_conv = r.iter().rev().find(|l| l.kind == LayerKind::Conv).expect("convolutions");
        assert_eq!((last_conv.out_side, last_conv.c_out), (7, 2048));
        // A small image keeps at least a pixel.
        assert!(net(Network::ResNet18, 32).iter().all(|l| l.out_side >= 1));
    }

    fn scenario(task: Value) -> Scenario {
        let mut t = json!({"name": "t", "type": "pretrain", "mlp_parallel": ["ddp"], "mlp_parallel_degree": [16],
            "local_mlp_bs": 32, "overlap_grad_reduce": true});
        if let (Some(t), Some(extra)) = (t.as_object_mut(), task.as_object()) {
            t.extend(extra.clone());
        }
        let n = t["mlp_parallel_degree"][0].as_u64().unwrap_or(16);
        let raw: RawScenario = serde_json::from_value(json!({
            "model": {"name": "ResNet-50", "type": "CNN", "network": "resnet50", "image_size": 224, "bytes_per_nonemb_param": 2},
            "system": {"name": "s", "type": "GPU", "num_devices": n, "num_nodes": n.div_ceil(8), "f64_flops": 19.5e12, "f32_flops": 19.5e12,
                "f16_flops": 312e12, "i8_ops": 624e12, "flops_util": 0.8, "mem_cap": 80e9, "mem_bw": 2.039e12, "mem_bw_util": 0.836,
                "num_nvlinks": 12, "bw_per_nvlink": 50e9, "nvlink_util": 0.6667, "num_ibroce_ports": 8, "ibroce_bw": 25e9,
                "ibroce_util": 0.56, "ar_perc_intra": 0.5},
            "task": t,
        }))
        .expect("raw");
        validate(&raw).unwrap_or_else(|e| panic!("{e:?}"))
    }

    #[test]
    fn a_resnet_trains_data_parallel_with_bucketed_gradients_hidden_behind_the_backward_pass() {
        let s = scenario(json!({}));
        let crate::engine::Evaluator::Cnn(cx) = crate::engine::Evaluator::of(&s) else { panic!("not the CNN model") };
        let r = evaluate(&s);
        // ResNet-50's 25.6M fp16 gradients fill two 25 MiB buckets and a partial one.
        let buckets = cx.buckets();
        assert_eq!(buckets.len(), 2, "{buckets:?}");
        let total: f64 = buckets.iter().map(|b| b.1).sum();
        assert_eq!(total, 25_557_032.0 * 2.0);
        let reduces = r.timeline.iter().filter(|o| o.name.kind == OpKind::GradAllReduce).count();
        assert_eq!(reduces, buckets.len());
        // Forward and backward of every block, the reductions and the step.
        assert_eq!(r.timeline.len(), 2 * cx.blocks() as usize + reduces + 1);
        // The images per second: the global batch over the iteration; FLOPs 3 x forward.
        assert_eq!(r.global_batch, 32 * 16);
        let u = r.utilization.as_ref().expect("MFU");
        assert!(u.mfu > 0.2 && u.mfu < 0.8, "{}", u.mfu);
        // Without overlap, one all-reduce of everything after the backward pass: slower.
        let plain = evaluate(&scenario(json!({"overlap_grad_reduce": false})));
        assert!(plain.iteration_s > r.iteration_s, "{} vs {}", plain.iteration_s, r.iteration_s);
        let last = plain.timeline.iter().find(|o| o.name.kind == OpKind::GradAllReduce).expect("one all-reduce");
        assert_eq!(last.name.block, Block::Optimizer);
        // Every op is explained, and the explanation gives the op's duration.
        for op in &r.timeline {
            let e = explain(&cx, &op.name).unwrap_or_else(|| panic!("{} unexplained", op.name));
            assert!((e.seconds - op.duration_s).abs() <= 1e-12 * op.duration_s.max(1.0), "{}", op.name);
        }
    }

    #[test]
    fn channels_first_activations_are_transposed_around_tensor_core_convolutions() {
        fn cx(s: &Scenario) -> CnnCx<'_> {
            match crate::engine::Evaluator::of(s) {
                crate::engine::Evaluator::Cnn(cx) => cx,
                _ => panic!("not the CNN model"),
            }
        }
        let nhwc = scenario(json!({}));
        let nchw = scenario(json!({"conv_layout": "nchw"}));
        let (last, first) = (cx(&nhwc), cx(&nchw));
        assert!(!last.transposes && first.transposes);
        // Each convolution kernel reads and writes its input and output once more: the forward
        // kernel, and the activation- and weight-gradient kernels (the first layer has no
        // activation gradient). Pooling and the classifier are untouched.
        let bytes_s = |l: &Layer| 2.0 * 32.0 * (l.in_elems() + l.out_elems()) * 2.0 / (2.039e12 * 0.836);
        for (i, l) in first.layers.iter().enumerate() {
            let conv = if l.kind == LayerKind::Conv { 1.0 } else { 0.0 };
            let fwd = first.layer_fwd_s(l) - last.layer_fwd_s(l);
            let bwd = first.layer_bwd_s(l, i == 0) - last.layer_bwd_s(l, i == 0);
            let kernels_bwd = if i == 0 { 1.0 } else { 2.0 };
            assert!((fwd - conv * bytes_s(l)).abs() <= 1e-9 * bytes_s(l), "layer {i}: {fwd}");
            assert!((bwd - conv * kernels_bwd * bytes_s(l)).abs() <= 1e-9 * bytes_s(l), "layer {i}: {bwd}");
        }
        let (fast, slow) = (evaluate(&nhwc), evaluate(&nchw));
        assert!(slow.iteration_s > fast.iteration_s, "{} vs {}", slow.iteration_s, fast.iteration_s);
        // The block's explanation says why, and still gives the op's duration.
        let op = slow.timeline.iter().find(|o| o.name.kind == OpKind::Compute).expect("a block");
        let e = explain(&first, &op.name).expect("explained");
        assert!(e.formula.contains("transposes") && (e.seconds - op.duration_s).abs() <= 1e-12, "{}", e.formula);

        // Without tensor cores for the precision, convolutions run channels first natively: FP32
        // on a V100 (twice its FP64 rate) or FP16 on a P100 (four times).
        let system = |f64_flops: f64, bytes: u64| {
            let mut s = scenario(json!({"conv_layout": "nchw"}));
            s.system.f64_flops_per_s = f64_flops;
            s.model.bytes_per_dense_param = crate::engine::num::Num::Int(bytes.into());
            s
        };
        assert!(tensor_cores(&nchw));
        assert!(!tensor_cores(&system(312e12 / 4.0, 2)));
        assert!(!tensor_cores(&system(19.5e12 / 2.0, 4)) && !cx(&system(19.5e12 / 2.0, 4)).transposes);
        assert!(tensor_cores(&system(312e12 / 16.0, 2)));
    }

    #[test]
    fn a_bigger_batch_costs_memory_and_inference_keeps_only_one_layers_tensors() {
        let small = evaluate(&scenario(json!({"local_mlp_bs": 32})));
        let big = evaluate(&scenario(json!({"local_mlp_bs": 256})));
        let act = |r: &Report| r.memory.parts.iter().find(|p| p.0 == MemPart::Activations).map_or(0.0, |p| p.1);
        assert_eq!(act(&big) / act(&small), 8.0);
        // NVIDIA trains ResNet-50 v1.5 with 256 images per 16 GB V100 in mixed precision
        // (DeepLearningExamples, PyTorch ResNet50 v1.5 README): they fit, twice as many do not.
        let per_image = act(&small) / 32.0;
        let fixed = small.memory.total_bytes - act(&small);
        assert!(fixed + 256.0 * per_image < 16e9, "{per_image}");
        assert!(fixed + 512.0 * per_image > 16e9, "{per_image}");
        let serve = evaluate(&scenario(json!({"type": "inference"})));
        assert!(act(&serve) < act(&small) / 10.0);
        assert!(serve.timeline.iter().all(|o| o.name.phase == Phase::Forward));
    }

    #[test]
    fn cnns_are_refused_in_paper_mode_and_plans_other_than_data_parallel() {
        let raw = |task: Value| -> RawScenario {
            serde_json::from_value(json!({
                "model": {"name": "n", "type": "CNN", "network": "nin", "image_size": 224, "bytes_per_nonemb_param": 4},
                "system": {"name": "s", "type": "GPU", "num_devices": 8, "num_nodes": 1, "f64_flops": 1e13, "f32_flops": 1e13,
                    "f16_flops": 1e14, "i8_ops": 1e14, "flops_util": 0.8, "mem_cap": 16e9, "mem_bw": 9e11, "mem_bw_util": 0.8,
                    "num_nvlinks": 4, "bw_per_nvlink": 40e9, "nvlink_util": 0.7, "num_ibroce_ports": 1, "ibroce_bw": 12.5e9,
                    "ibroce_util": 0.6, "ar_perc_intra": 1.0},
                "task": task,
            }))
            .expect("raw")
        };
        let base = json!({"name": "t", "type": "pretrain", "mlp_parallel": ["ddp"], "mlp_parallel_degree": [8], "local_mlp_bs": 16});
        if let Err(e) = validate(&raw(base.clone())) {
            panic!("{e:?}");
        }
        let mut paper = base.clone();
        paper["mode"] = "reference".into();
        let e = validate(&raw(paper)).expect_err("paper mode");
        assert_eq!(e[0].field, "task.mode");
        let mut tp = base.clone();
        tp["mlp_parallel"] = json!(["tp"]);
        let e = validate(&raw(tp)).expect_err("tp");
        assert!(e[0].message.contains("data parallel"), "{}", e[0].message);
        let mut tune = base;
        tune["type"] = "finetune".into();
        assert_eq!(validate(&raw(tune)).expect_err("finetune")[0].field, "task.type");
    }
}
