//! One job: the default model's calibration, every constant that is not a property of the
//! scenario, with where it comes from. They are shared by every scenario and every validation
//! row; none is fit to one row (`madmax validate` prints how well the set does on published runs).
//!
//! The achievable fractions of peak (FLOPs, HBM, NVLink, NIC) are *inputs* of a system config
//! (`flops_util`, `mem_bw_util`, `nvlink_util`, `ibroce_util`); [`UTIL`] is what the validation
//! rows use for them (on H100s with [`H100_GEMM_UTIL`] for FLOPs), so the published accuracy is
//! the accuracy at [`UTIL`]. The scenario and
//! cluster presets carry MAD-Max's own ZionEX calibration instead (`presets::DATACENTER_UTIL`,
//! FLOPs 0.705, an end-to-end figure), which the default model reads as its GEMM rate: on them
//! it runs about 12% slower than at [`UTIL`] where GEMMs dominate.

use crate::engine::scenario::Sampling;

/// Achievable fractions of datasheet peak for the default model's hardware.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Util {
    /// Dense fp16/bf16 GEMMs of training size. cuBLAS reaches about 80% of the A100's 312
    /// TFLOP/s on large GEMMs (NVIDIA's published GEMM benchmarks; Megatron-LM reports 44-52%
    /// end to end with everything else included). The default model counts element-wise
    /// kernels separately, so it uses the GEMM figure, not MAD-Max's end-to-end 0.705.
    pub flops: f64,
    /// HBM streaming: MAD-Max's measured ZionEX figure (`system_cfgs/zionex/*.json`; A100 40GB
    /// GPUs). GEMMs on a GPU whose own kernels were profiled stream at its share instead
    /// ([`gemm_bw_util`]).
    pub mem_bw: f64,
    /// NVLink collectives: MAD-Max's measured ZionEX figure.
    pub nvlink: f64,
    /// InfiniBand/RoCE collectives: MAD-Max's measured ZionEX figure.
    pub nic: f64,
}

/// See [`Util`].
pub const UTIL: Util = Util { flops: 0.80, mem_bw: 0.836, nvlink: 0.6667, nic: 0.56 };

/// The largest BF16 matmul rate measured on an A100 SXM, as a fraction of its datasheet peak:
/// 267.9 of 312 TFLOP/s (Bekman, *Machine Learning Engineering*, "Maximum Achievable Matmul
/// FLOPS comparison table", CUDA 12.1).
pub const MAMF_A100: f64 = 267.9 / 312.0;

/// The same for an H100 SXM: 792.1 of 989 TFLOP/s (same table, CUDA 12.1).
pub const MAMF_H100: f64 = 792.1 / 989.0;

/// The largest BF16 matmul rate an H200 SXM *sustains*, as a fraction of its peak: 708.5 of 989
/// TFLOP/s once the chip draws its 700 W and its clock settles (about 1,465 MHz against the
/// 1,980 MHz boost at which the peak is counted and at which short bursts run: 841.9 TFLOP/s).
/// Bekman, *Machine Learning Engineering*, "Maximum Achievable Matmul FLOPS comparison table",
/// MAMF and MSMF columns (branch `fast-mamf`, August 2026, torch 2.13 with CUDA 13), measured
/// on one GPU after a thermal soak: the rate a training step, which keeps the SMs busy for
/// hours, lives at. The H200 is the H100 SXM's chip at the same power (the table's H100 row:
/// "H200 is the same").
pub const MSMF_H200: f64 = 708.5 / 989.0;

/// The same for FP8 (`float8_e4m3fn`) on an H200 SXM: 1,288.7 of 1,979 TFLOP/s (same table).
pub const MSMF_H200_FP8: f64 = 1288.7 / 1979.0;

/// The same for BF16 on a B200 SXM: 1,456.3 of 2,250 TFLOP/s at its 1,000 W, about 1,339 MHz
/// against a 1,965 MHz boost (same table).
pub const MSMF_B200: f64 = 1456.3 / 2250.0;

/// [`UTIL`]'s GEMM fraction on a GPU whose sustained matmul rate is `sustained` of its peak: the
/// A100 figure scaled by that over the A100's sustained rate. The A100's comes from Azure's
/// benchmark after 10,000 warm-up GEMMs ([`AZURE_A100_FP16`], 82.2%): an A100 at 400 W loses
/// little of its 1,410 MHz, so its sustained and burst rates differ by a few percent (85.9-86.9%
/// in the maximum achievable matmul table), where Hopper and Blackwell, whose peaks assume a
/// boost clock their power limit does not hold, lose 15-18%.
pub const fn sustained_gemm_util(sustained: f64) -> f64 {
    UTIL.flops * sustained / AZURE_A100_FP16
}

/// [`UTIL`]'s GEMM fraction on an H100 SXM (and the H200, the same chip):
/// [`sustained_gemm_util`] of [`MSMF_H200`], 0.697. The H100 sustains a smaller share of a
/// peak that is 3.2 times the A100's; the other fractions are shared. Until December 2026 the
/// model took the H100's burst rate ([`MAMF_H100`], 0.746 then) and predicted MosaicML's MPT
/// models 2.4-2.6 times as fast on 8 H100s as on 8 A100s at 2,048 tokens, where they ran
/// 2.0-2.3 times as fast.
pub const H100_GEMM_UTIL: f64 = sustained_gemm_util(MSMF_H200);

/// The same for the Hopper GPU of a GH200: 821.0 of 989 TFLOP/s (same table, CUDA 12.5); it
/// draws more power than an H100 SXM and holds its clock better.
pub const MAMF_GH200: f64 = 821.0 / 989.0;

/// The same for an AMD MI300X: 781.9 of 1,300 TFLOP/s (same table, ROCm 6.2).
pub const MAMF_MI300X: f64 = 781.9 / 1300.0;

/// The same for a V100, which that table does not list: cuBLAS's FP16 GEMM of 8,192 on a side
/// reaches about 101 of the 112 TFLOP/s a V100 PCIe's tensor cores peak at (NVIDIA developer
/// forums, "Understanding IPC and issue slot utilization when using Tensor Cores", 2019). The
/// SXM2 part runs the same chip at a higher clock (125 TFLOP/s) and is assumed to keep the share.
pub const MAMF_V100: f64 = 101.0 / 112.0;

/// [`UTIL`]'s GEMM fraction on a GPU family of the validation rows (`accuracy::gpu_family`):
/// the A100 figure scaled by the family's sustained matmul fraction over the A100's
/// ([`sustained_gemm_util`]) where one is measured (H100 and H200, B200), else by its maximum
/// achievable (burst) fraction over the A100's: GH200 (1,000 W, which holds its clock better;
/// no sustained figure published), MI300X (which reaches its power limit within one kernel, so
/// its burst rate is its sustained rate), V100. The H100 NVL is the same Hopper chip as the
/// H100 SXM (other memory, other power) and takes its figure. A GB200's Blackwell GPU takes the
/// B200's: the same chip, though at 1,200 W against 1,000 W it may hold a higher clock, which
/// no published figure measures.
pub fn gemm_util(family: &str) -> f64 {
    match family {
        "A100" => UTIL.flops,
        "B200" | "GB200" => sustained_gemm_util(MSMF_B200),
        "GH200" => UTIL.flops * MAMF_GH200 / MAMF_A100,
        "MI300X" => UTIL.flops * MAMF_MI300X / MAMF_A100,
        "V100" => UTIL.flops * MAMF_V100 / MAMF_A100,
        _ => H100_GEMM_UTIL,
    }
}

/// Share of HBM bandwidth an A100 80GB's GEMMs reach when they stream their operands
/// (decoding's thin GEMMs, bound by reading the weights), from vidur's profile of the four
/// GEMMs of a transformer layer on that GPU (`gemm_kernels.csv`, SOURCES.md section 9): the share at
/// which the model's times for the profile's streaming kernels (compute under a third of
/// streaming) have a median error of zero, each kernel charged its bytes at this share plus a
/// small kernel's run ([`GRAPH_KERNEL_S`]) as the check charges it. [`UTIL`]'s 0.836 (MAD-Max's
/// ZionEX figure) left them 11.9% slower than the model; the large weight reads alone, over
/// 128 MB, reach 0.78 of the datasheet's 2,039 GB/s. A unit test recomputes it from the
/// profile.
pub const GEMM_BW_A100: f64 = 0.741;

/// The same for an H100 SXM (80 GB, 3.35 TB/s), from the same profile: its streaming GEMMs
/// are timed within a percent of [`UTIL`]'s share (0.7% faster), so the root is a hair above
/// it.
pub const GEMM_BW_H100: f64 = 0.843;

/// The share of HBM bandwidth GEMMs reach on a GPU of a validation row's family
/// (`accuracy::gpu_family`) with the datasheet's HBM bandwidth `mem_bw_bytes_per_s`, where a
/// measurement of that very GPU gives one: the A100 80GB (2,039 GB/s) and the H100 SXM
/// (3,350 GB/s, the H800's too) profiled ([`GEMM_BW_A100`], [`GEMM_BW_H100`]). The A100 40GB
/// (1,555 GB/s of HBM2, not HBM2e) keeps [`UTIL`]'s share, measured on ZionEX's A100 40GB, and
/// the GPUs nothing profiled (H200, B200, MI300X, GH200, V100, H100 NVL) stream at it too, as
/// every other kernel does: `None`.
pub fn gemm_bw_util(family: &str, mem_bw_bytes_per_s: f64) -> Option<f64> {
    match (family, mem_bw_bytes_per_s) {
        ("A100", 2039e9) => Some(GEMM_BW_A100),
        ("H100", 3350e9) => Some(GEMM_BW_H100),
        _ => None,
    }
}

/// The largest FP16 cuBLASLt GEMM rate Microsoft's Azure AI benchmarking guide measured on an
/// A100 SXM 80GB (ND A100 v4), as a fraction of its peak: 256.5 of 312 TFLOP/s at 16,384 on a
/// side (Azure/AI-benchmarking-guide, `Azure_Results/ND_A100_v4_results.md`).
pub const AZURE_A100_FP16: f64 = 256.5 / 312.0;

/// The same guide's largest FP8 cuBLASLt GEMM rate on an H100 SXM (ND H100 v5), as a fraction
/// of its FP8 peak: 1,382.2 of 1,979 TFLOP/s at 32,768 on a side (`ND_H100_v5_results.md`).
pub const AZURE_H100_FP8: f64 = 1382.2 / 1979.0;

/// Share of a GPU's 16-bit GEMM efficiency that its FP8 GEMMs keep, as fractions of their own
/// peaks: the H200's sustained FP8 fraction over its sustained BF16 fraction, 0.651 / 0.716 =
/// 0.909 ([`MSMF_H200_FP8`], [`MSMF_H200`]: one chip, one harness, both at full power). Azure's
/// guide, which measures FP8 on the H100 and FP16 on the A100, gives 0.911 through the maximum
/// achievable matmul table ([`AZURE_H100_FP8`]). FP8 GEMMs run at `fp8_flops x flops_util x`
/// this.
pub const FP8_GEMM_EFFICIENCY: f64 = MSMF_H200_FP8 / MSMF_H200;

/// Bytes an FP8 GEMM's 16-bit activation operand writes per element before the GEMM, besides
/// reading it (Transformer Engine's cast-transpose kernels): the FP8 copy (1) and its FP8
/// transpose for the weight gradient (1). The forward pass casts each GEMM's input, the backward
/// pass each output gradient; the weight gradient reads the transposes.
pub const FP8_CAST_WRITE_BYTES: f64 = 2.0;

/// FP8 weight copies Transformer Engine keeps per parameter between micro-batches, bytes: the
/// weight and its transpose (Hopper's FP8 GEMMs read both operands K-major), 1 byte each.
pub const FP8_WEIGHT_COPY_BYTES_PER_PARAM: f64 = 2.0;

/// Edge of the output tile a GEMM kernel computes at a time, elements: 128 x 128 is the tile
/// of CUTLASS's and cuBLAS's default fp16/bf16 tensor-core kernels on the A100 and H100
/// (NVIDIA, *Matrix Multiplication Background User's Guide*, "Tile quantization"). See
/// [`super::gemm`].
pub const GEMM_TILE: f64 = 128.0;

/// Bytes per element of a split-K GEMM's partial outputs: each slice writes its `m x n`
/// partial sums in FP32 and a reduction reads them back (CUTLASS's split-K "parallel"
/// reduction; cuBLAS's workspace holds them the same way).
pub const SPLIT_K_PARTIAL_BYTES: f64 = 4.0;

/// Side of the square GEMM at which the GEMM rate ([`Util::flops`], [`gemm_util`]) is taken,
/// elements: the large square GEMMs of NVIDIA's GEMM benchmarks and of the maximum achievable
/// matmul searches are 8,192 on a side or more. The default model times a GEMM of another shape
/// against it ([`super::gemm`]).
pub const GEMM_REFERENCE_DIM: f64 = 8192.0;

/// Speed of the attention-score FLOPs in FlashAttention-2 (and later) relative to the GEMMs at
/// [`Util::flops`]. Dao (2023, FlashAttention-2) measures FlashAttention-2 at 50-73% of the
/// A100's peak; the middle of that range, 61.5%, over the GEMMs' 80% gives 0.77. On an H100,
/// FlashAttention-3 reaches up to 75% of peak and FlashAttention-2 only about 35% (Shah et al.
/// 2024): at [`H100_GEMM_UTIL`] the first matches this setting, the second is
/// [`FLASH2_H100_EFFICIENCY`]'s. Materialized scores are batched GEMMs and run at the GEMM rate.
pub const FLASH2_EFFICIENCY: f64 = 0.615 / 0.8;

/// The same for the first FlashAttention and Triton ports of it, which Dao (2023) measures at
/// 25-40% of the A100's peak: the middle, 32.5%, over 80% gives 0.41.
pub const FLASH1_EFFICIENCY: f64 = 0.325 / 0.8;

/// Share of its A100 speed (as a fraction of peak) that an attention kernel written for the
/// A100 keeps on an H100: FlashAttention-2 reaches 61.5% of an A100's peak (the middle of Dao
/// 2023's 50-73%) but only 35% of an H100's (Shah et al. 2024, FlashAttention-3), because it
/// cannot use the Hopper matrix instructions (wgmma) and asynchronous copies (TMA) that the
/// H100's peak assumes. So 0.57.
pub const PRE_HOPPER_KERNEL_ON_H100: f64 = 0.35 / 0.615;

/// Speed of the score FLOPs of the first FlashAttention or its Triton ports on an H100, relative
/// to the H100's GEMMs at [`H100_GEMM_UTIL`]: their A100 share, 32.5% of peak, times
/// [`PRE_HOPPER_KERNEL_ON_H100`] gives 18.5% of the H100's peak; over 69.7%, 0.27. No benchmark of
/// these kernels on an H100 is published; the figure assumes that, written for the A100 as
/// FlashAttention-2 was, they lose on an H100 what it loses.
pub const FLASH1_H100_EFFICIENCY: f64 = pre_hopper_on_h100(0.325);

/// Speed of the score FLOPs of FlashAttention-2 on an H100, relative to the H100's GEMMs at
/// [`H100_GEMM_UTIL`]: its A100 share, 61.5% of peak, times [`PRE_HOPPER_KERNEL_ON_H100`] is the
/// 35% of the H100's peak that Shah et al. (2024, FlashAttention-3) measure for it; over 69.7%,
/// 0.50. PyTorch's `scaled_dot_product_attention` runs this kernel on an H100 unless cuDNN's is
/// asked for (PyTorch 2.2 to 2.10, but 2.5.0, which preferred cuDNN's until 2.5.1 made it the
/// last choice, pytorch/pytorch#138522); PyTorch's issue #142132 measures it at 329 TFLOP/s
/// there (33% of peak) against 631 for cuDNN's and 632 for FlashAttention-3 on the same shape.
pub const FLASH2_H100_EFFICIENCY: f64 = pre_hopper_on_h100(0.615);

/// Speed, relative to the H100's GEMMs at [`H100_GEMM_UTIL`], of an attention kernel written for
/// the A100 that reaches `a100_share` of an A100's peak: on an H100 it keeps
/// [`PRE_HOPPER_KERNEL_ON_H100`] of that share.
const fn pre_hopper_on_h100(a100_share: f64) -> f64 {
    a100_share * PRE_HOPPER_KERNEL_ON_H100 / H100_GEMM_UTIL
}

/// Share of the forward score FLOPs a fused kernel's backward pass computes again: it does not
/// store the attention matrix, so it recomputes `Q K^T` (one of the two score GEMMs) before the
/// four gradient GEMMs, 2.5 forward passes in all instead of 2 (Dao et al. 2022, algorithm 4).
pub const FUSED_BACKWARD_SCORE_REPLAY: f64 = 0.5;

/// DeepEP's all-to-all across nodes, as a share of the NIC's line rate: the bandwidth its
/// normal (training and prefill) kernels reach on H800s with a 400 Gb/s ConnectX-7 each (about
/// 50 GB/s), counted as DeepEP counts it, over every (token, node) pair a dispatch sends its
/// own node included: 43, 58 and 51 GB/s at 16, 32 and 64 ranks (deepseek-ai/DeepEP,
/// `docs/legacy.md`, "Normal kernels with NVLink and RDMA forwarding"; `tests/test_internode.py`
/// counts the pairs). The middle one, 51 of 50.
pub const DEEPEP_RDMA_SHARE: f64 = 51.0 / 50.0;

/// Fixed cost of one collective call: kernel launch and the first synchronisation between the
/// ranks, s. NCCL's tuning model (`src/graph/tuning.cc`) uses a base latency of 8.4 us for
/// ring collectives with its bandwidth ("Simple") protocol.
pub const COLLECTIVE_BASE_S: f64 = 8.4e-6;

/// Latency of one step of a collective within a node (one hop over NVLink), s: NCCL's
/// hardware latency for an NVLink ring hop with the Simple protocol, 3.4 us.
pub const NVLINK_STEP_S: f64 = 3.4e-6;

/// Latency of one step of a collective across nodes (one network hop: NIC, switch, NIC), s:
/// NCCL's hardware latency for a network ring hop with the Simple protocol, 14 us.
pub const NIC_STEP_S: f64 = 14e-6;

/// How NCCL moves a collective's bytes: its base latency, the latency of each hop within and
/// across nodes, and the share of the link bandwidth its payload gets (for all-reduces, and for
/// all-gathers and reduce-scatters). NCCL's tuner (`src/graph/tuning.cc`, ring algorithm)
/// predicts every protocol's time for the message and runs the fastest.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Protocol {
    pub name: &'static str,
    pub base_s: f64,
    pub nvlink_step_s: f64,
    pub nic_step_s: f64,
    pub all_reduce_bw_share: f64,
    pub gather_bw_share: f64,
    /// Used only by groups within one node.
    pub within_node_only: bool,
    /// The share of the tree all-reduce's bandwidth NCCL's tuner keeps at each message size
    /// (`treeCorrectionFactor`: trees fall short of their model at medium sizes), per power of
    /// two from 64 B to 128 MB; 1 beyond.
    pub tree_correction: [f64; 22],
    /// A tree hop's latency across nodes, s (NCCL's tuner's network latency for trees: each hop
    /// forwards a chunk, so Simple's is long).
    pub tree_nic_step_s: f64,
}

/// The share of the two-level path's bandwidth a tree all-reduce gets: NCCL's tuner charges
/// trees 0.9 of the channels' bus bandwidth (`src/graph/tuning.cc`).
pub const TREE_BW_SHARE: f64 = 0.9;

/// A network hop of NCCL's low-latency protocol (LL) on a ring or the two-level path (trees
/// keep [`Protocol::tree_nic_step_s`]), s: measured, where NCCL's tuner has 2.7 us. nccl-tests
/// on Azure's NDm A100 v4 (8 A100 80GB SXM per node on NVSwitch, one 200 Gb/s HDR InfiniBand
/// NIC per GPU; NCCL 2.17.1, in-place) time a 1 KB all-reduce between two nodes of one GPU
/// each at 21.27 us (microsoft/mscclpp, `docs/performance-ndmv4.md` at commit 85e664c, June
/// 2023): LL's 6.6 us base and the two network hops of a ring of two, 7.3 us each. Within a
/// node the same page agrees with the tuner's figures (8 GPUs: 16.96 us measured, 15.0 us from
/// LL's base and 14 NVLink hops of 0.6 us), which are kept; two nodes of 8 GPUs (35.85 us
/// measured) check the hop: a ring of 16 crosses the network twice each way, 38.1 us.
pub const LL_NIC_STEP_S: f64 = 7.3e-6;

/// NCCL's protocols, bandwidth first. Simple: the full bandwidth at the highest latency. LL128:
/// 120 of every 128 bytes are payload (NCCL charges 0.92 of the bandwidth), lower hop latency,
/// a higher base; NCCL enables it across nodes only where each NIC shares a PCIe switch with
/// its GPUs (GPUDirect RDMA), so the model keeps it within nodes (across them, rings of
/// thousands of GPUs would lose less to latency than published ZeRO-3 runs at scale do). LL ("low latency"): a flag with every 4 bytes of data, so a quarter of the
/// bandwidth for all-reduces (a third for gathers and scatters), the lowest latency: NCCL's
/// choice for small messages, such as the tensor-parallel all-reduces of a decode step.
pub const PROTOCOLS: [Protocol; 3] = [
    Protocol {
        name: "Simple",
        base_s: COLLECTIVE_BASE_S,
        nvlink_step_s: NVLINK_STEP_S,
        nic_step_s: NIC_STEP_S,
        all_reduce_bw_share: 1.0,
        gather_bw_share: 1.0,
        within_node_only: false,
        tree_correction: [
            0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.8, 0.7, 0.6, 0.6, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.6, 0.6, 0.7, 0.8,
            0.9,
        ],
        tree_nic_step_s: 50e-6,
    },
    Protocol {
        name: "LL128",
        base_s: 14e-6,
        nvlink_step_s: 1.9e-6,
        nic_step_s: 4e-6,
        all_reduce_bw_share: 0.92,
        gather_bw_share: 0.92,
        within_node_only: true,
        tree_correction: [
            1.0, 1.0, 1.0, 1.0, 1.0, 0.9, 0.8, 0.8, 0.8, 0.7, 0.6, 0.6, 0.6, 0.5, 0.6, 0.6, 0.7, 0.7, 0.8, 0.9, 0.9,
            1.0,
        ],
        tree_nic_step_s: 8.5e-6,
    },
    Protocol {
        name: "LL",
        base_s: 6.6e-6,
        nvlink_step_s: 0.6e-6,
        nic_step_s: LL_NIC_STEP_S,
        all_reduce_bw_share: 0.25,
        gather_bw_share: 1.0 / 3.0,
        within_node_only: false,
        tree_correction: [
            1.0, 1.0, 1.0, 1.0, 0.9, 0.8, 0.7, 0.7, 0.7, 0.7, 0.6, 0.5, 0.4, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.0,
            1.0,
        ],
        tree_nic_step_s: 5e-6,
    },
];

/// Element-wise passes over a token's hidden vector per transformer layer in the forward pass,
/// counted from the kernels of a Megatron-style layer: two layer norms (read + write each: 4),
/// two bias-dropout-residual adds (read two, write one, plus a 1-byte mask: about 3 each with
/// the mask folded in: 6), two dropouts' masks and outputs (4). Each pass moves the activation
/// element size in bytes.
pub const HIDDEN_PASSES: f64 = 14.0;

/// The passes of [`HIDDEN_PASSES`] that dropout adds: the two dropouts' masks and outputs. A
/// model trained without dropout (LLaMA, MPT) does not make them.
pub const DROPOUT_PASSES: f64 = 4.0;

/// Passes over a residual stream's gradient where two of them meet in the backward pass: a
/// block's input feeds both its norm and the residual connection, so autograd adds the two
/// gradients (reads both, writes the sum), once per residual sub-layer. Counted from the
/// kernels, as are the other backward passes below.
pub const RESIDUAL_JOIN_GRAD_PASSES: f64 = 3.0;

/// Passes of a norm's input gradient (LayerNorm or RMSNorm): read the output gradient and the
/// input, write the input gradient (PyTorch's `layer_norm_backward`, apex's
/// `cuComputeGradInput`).
pub const NORM_INPUT_GRAD_PASSES: f64 = 3.0;

/// Passes of a norm's weight gradients: a second kernel reads the output gradient and the
/// input again and reduces them over the tokens (PyTorch's `GammaBetaBackward`, apex's
/// `cuComputePartGradGammaBeta`).
pub const NORM_WEIGHT_GRAD_PASSES: f64 = 2.0;

/// Passes of a bias gradient: a reduction over the tokens reads the gradient of the
/// projection's output once (autograd sums the broadcast bias's gradient, `sum_to`; Megatron-LM
/// `grad_output.sum(dim=0)`). Only models with biases ([`crate::engine::scenario::Shape::biases`]).
pub const BIAS_GRAD_PASSES: f64 = 1.0;

/// Passes that copy the query, key and value gradients into the gradient of the fused
/// projection's output they were split from (the backward of the split is a concatenation:
/// read and write them once).
pub const QKV_GRAD_COPY_PASSES: f64 = 2.0;

/// Passes of the feed-forward activation's gradient: GELU reads the output gradient and its
/// input and writes the input gradient (3 of `f`); a fused SwiGLU reads the gradient, the gate
/// and the up projection and writes the gate's and the up projection's gradients (5 of `f`).
pub const GELU_GRAD_PASSES: f64 = 3.0;

/// See [`GELU_GRAD_PASSES`].
pub const SWIGLU_GRAD_PASSES: f64 = 5.0;

/// Passes of one fused norm's forward pass over the hidden vector: read the input, write the
/// output (part of [`HIDDEN_PASSES`], which counts two norms).
pub const NORM_PASSES: f64 = 2.0;

/// Bytes per element of the FP32 copies an eager norm computes in.
pub const FP32_BYTES: f64 = 4.0;

/// An RMSNorm written as eager PyTorch operations (Hugging Face's `LlamaRMSNorm` and its copies
/// in Mistral, Qwen, ChatGLM and T5): its passes at the activations' element size over the
/// hidden vector in (the forward pass, the activation-gradient pass, the weight-gradient pass),
/// counted from the operations and autograd's formulas for them. Forward: the cast to FP32
/// reads the input (1), the cast back writes (1), the product by the scale reads and writes
/// (2): 4. Activation gradient: the gradient times the scale (read, write: 2), the cast's
/// gradient reads it (1), the last cast back writes the input's gradient (1): 4. Weight
/// gradient: the gradient times the normalized input (read two, write one: 3) and its sum over
/// the tokens (1): 4. [`crate::engine::scenario::Elementwise::Eager`].
pub const EAGER_NORM_PASSES: [f64; 3] = [4.0, 4.0, 4.0];

/// The FP32 passes of the same operations ([`EAGER_NORM_PASSES`]), [`FP32_BYTES`] each.
/// Forward: the cast writes the copy (1), the square reads and writes it (2), the mean reads
/// (1), the product by the reciprocal root reads and writes (2), the cast back reads (1): 7.
/// Activation gradient: the cast's gradient writes (1); the product's two gradients, by the
/// root (read, write: 2) and by the copy (read two, write one: 3), the latter summed over the
/// hidden units (1); the mean's gradient spread back (1); the square's, as PyTorch's
/// `pow_backward` computes it, `grad * (2 * x.pow(1))`: a copy (2), its scaling (2) and the
/// product (read two, write one: 3); the two gradients of the copy added (3); the first cast's
/// gradient reads (1): 19.
pub const EAGER_NORM_FP32_PASSES: [f64; 3] = [7.0, 19.0, 0.0];

/// Kernels of an eager RMSNorm in each pass ([`EAGER_NORM_PASSES`]): forward the two casts,
/// the square, the mean, the epsilon's add, the reciprocal root and the two products (8);
/// activation gradient the products' gradients (3), the sum over the hidden units, the root's
/// and the mean's gradients (3), the square's (3), the add of the two paths and the two casts'
/// (3): 12 (the root's on one value a token); weight gradient the product and its sum over the
/// tokens (2). A fused norm launches one in each.
pub const EAGER_NORM_KERNELS: [f64; 3] = [8.0, 12.0, 2.0];

/// A gated feed-forward activation as eager PyTorch computes it (`silu(gate) * up`, Hugging
/// Face's `LlamaMLP`): its passes of the feed-forward width in (the forward pass, the
/// activation-gradient pass). Forward: the SiLU reads the gate and writes (2), the product
/// reads both and writes (3): 5. Backward: the product's gradients by the up projection and
/// by the SiLU's output (read two, write one each: 6), the SiLU's gradient (read the gradient
/// and the gate, write: 3): 9. Against a fused kernel's 3 and [`SWIGLU_GRAD_PASSES`].
pub const EAGER_SWIGLU_PASSES: [f64; 2] = [5.0, 9.0];

/// Kernels of the eager gated activation in (the forward pass, the activation-gradient pass):
/// the SiLU and the product (2); the two products' gradients and the SiLU's (3). A fused kernel
/// launches one in each.
pub const EAGER_SWIGLU_KERNELS: [f64; 2] = [2.0, 3.0];

/// Passes over the queries and keys of rotary position embeddings applied by one fused kernel
/// (Transformer Engine's `fused_apply_rotary_pos_emb`, flash-attn's rotary kernel): it reads
/// them and writes the rotated ones, and its backward reads their gradients and writes the
/// rotated-back ones. The same count each way. [`crate::engine::scenario::Positions::Rope`].
pub const ROPE_FUSED_PASSES: f64 = 2.0;

/// Passes over the queries and keys of rotary position embeddings as eager PyTorch computes
/// them, each way, counted from the kernels. Forward, Hugging Face's `q * cos + rotate_half(q)
/// * sin`: the product by `cos` (read, write: 2), the negated half (1) and the concatenation
/// of `rotate_half` (2), the product by `sin` (2) and the sum (read two, write one: 3), 10;
/// torchtitan's and Meta's complex product moves the same bytes (a cast to FP32: 2 + 4 bytes,
/// the product: 4 + 4, the cast back: 4 + 2, 20 bytes, ten 16-bit passes). Backward: the
/// gradient times `cos` (2) and times `sin` (2), the negation's gradient (1), the halves
/// joined (2) and the two paths' gradients summed (3), 10. The tables of `cos` and `sin` (a
/// sequence by a head) are small. [`crate::engine::scenario::Positions::RopeUnfused`].
pub const ROPE_UNFUSED_PASSES: f64 = 10.0;

/// Passes over a token's hidden vector that learned position embeddings add to the input
/// embedding's forward pass: the sum reads the word embedding and the position embedding and
/// writes their sum (3). Their gradient, a sum over the micro-batch's sequences (one pass), is
/// left out, as is the word embedding's backward.
/// [`crate::engine::scenario::Positions::Learned`].
pub const POSITION_ADD_PASSES: f64 = 3.0;

/// Passes of a materialized softmax's gradient per score: read its output and the output's
/// gradient, write the input's gradient.
pub const SOFTMAX_GRAD_PASSES: f64 = 3.0;

/// Bytes moved per attention-score element in the forward pass when scores are materialized:
/// softmax reads and writes (2 elements), dropout reads, writes (2 elements) and stores a
/// 1-byte mask. In units of the element size, plus the mask byte: `4 x e + 1`.
pub const SCORE_ELEMENT_PASSES: f64 = 4.0;

/// Bytes PyTorch's log-softmax moves per logit over rows wider than 1,024 (a vocabulary): one
/// block per row reads it once for the maximum, once for the sum of exponentials and once more
/// to write the result, in fp32 (3 reads and a write of 4 bytes). What a training metric that
/// computes the cross-entropy again costs per logit ([`crate::engine::scenario::Setup::metric_losses`]):
/// Composer computes its training metrics after every micro-batch's backward pass, each with
/// `torch.nn.CrossEntropyLoss` under autocast, so in fp32 after a cast of the 16-bit logits (read
/// `e`, write 4 bytes; [`METRIC_CAST_BYTES`]). llm-foundry's language models log two,
/// `LanguageCrossEntropy` and `LanguagePerplexity`, each computing its own (Composer 0.12 to
/// 0.16, `Trainer._eval_train_metrics`; `composer/metrics/nlp.py`). Counted from the kernels,
/// not fitted.
pub const METRIC_LOG_SOFTMAX_BYTES: f64 = 16.0;

/// Bytes of a logit in fp32: what a 16-bit logit's cast writes (it reads the logit's own bytes
/// too), and what each log-probability of a training metric's log-softmax takes
/// ([`METRIC_LOG_SOFTMAX_BYTES`]). PyTorch casts bf16 logits before a log-softmax in fp32 (its
/// fused half-to-float path takes only fp16).
pub const METRIC_CAST_BYTES: f64 = 4.0;

/// Bytes Adam moves per parameter in the optimizer step: read fp32 master weight, first and
/// second moment and the fp32 gradient (16), write the three states (12) and the 16-bit weight
/// (2). Mixed-precision Adam as in Megatron-LM and DeepSpeed.
pub const ADAM_BYTES_PER_PARAM: f64 = 30.0;

/// Bytes of optimizer state per parameter: fp32 master weight and Adam's two fp32 moments
/// (the "K = 12" of the ZeRO paper, Rajbhandari et al. 2020).
pub const OPTIMIZER_BYTES_PER_PARAM: f64 = 12.0;

/// Memory every GPU spends outside the model: CUDA context, cuBLAS and NCCL workspaces, bytes.
/// PyTorch jobs typically lose 1-3 GB this way; 2 GB is used.
pub const WORKSPACE_BYTES: f64 = 2e9;

/// Share of the memory PyTorch's caching allocator reserves that no live tensor uses at the
/// peak: freed blocks split or sized so that the next requests do not fit them, kept rather
/// than returned to the driver. Guo et al. (GMLake, ASPLOS 2024) measure 15% on average (up to
/// 33%) over eight LLMs trained on A100 80GB with recomputation, ZeRO and LoRA, the
/// fragmentation their allocator removes. `nvidia-smi` shows the reserved memory, not the
/// peak of live tensors ([`super::shown_memory_bytes`]).
pub const ALLOCATOR_FRAGMENTATION: f64 = 0.15;

/// Time the GPU loses per kernel launched back to back (launch latency and the tail of the
/// previous kernel), s. CUDA kernel launches cost about 3-5 microseconds when nothing hides them
/// (no CUDA graphs); it matters only where kernels are short: decoding, small micro-batches.
pub const KERNEL_OVERHEAD_S: f64 = 4e-6;

/// What a serving engine's sampler costs per step: bytes it moves per logit (one per request
/// of the step and token of the vocabulary) and kernels it launches, counted from the operations
/// of PyTorch samplers (vLLM's `Sampler` and `apply_top_k_top_p` without FlashInfer, as in
/// vLLM 0.6 to 0.11; Hugging Face's logits warpers do the same). The sampler runs outside the
/// step's CUDA graph, each kernel launched from the host ([`KERNEL_OVERHEAD_S`]).
/// - greedy: the logits cast to FP32 (read 2 bytes, write 4) and their argmax (read 4): 10
///   bytes, 2 kernels;
/// - random: the cast (6), the division by the temperature in place (8), a softmax (two reads
///   and a write: 12), exponential noise (write 4), the probabilities divided by it (12) and the
///   argmax (4): 46 bytes, 6 kernels (vLLM's `random_sample`);
/// - top-p: random's, after a sort of every request's logits over the whole vocabulary and the
///   nucleus cut: the indices written (8 bytes each, 64-bit), a segmented radix sort of FP32 keys
///   and their indices in six passes of 6 bits (cub's policy for 4-byte keys, which
///   `torch.sort` calls), each reading and writing both (24 a pass: 144), a softmax of the
///   sorted logits (12), their cumulative sum (8), the cut's comparison (5) and fill (9), the
///   scatter back to vocabulary order (a copy and the scatter: 24): 46 + 210 = 256 bytes, 6 +
///   14 = 20 kernels. FasterTransformer's top-p also sorts the whole vocabulary (cub's segmented
///   radix sort), in kernels of its own.
///
/// A check: on 2.8 TB/s of HBM (an H100's 3.35 at [`UTIL`]'s 0.836) top-p over 131,072 logits
/// takes 0.85, 1.61 and 6.2 ms at 64, 128 and 512 requests; vLLM's PR #40376 times PyTorch's
/// top-p at 1.07, 2.32 and 6.15 ms on those shapes (its table does not name the GPU; the rates
/// they imply, 2.0-2.8 TB/s, are a Hopper's), and FlashInfer's sorting-free kernels at a
/// quarter to a third of that. vLLM's PR #11394 measured the sort costing 15% of a ShareGPT
/// benchmark's throughput (47.4 requests/s greedy, 40.2 with top-p).
pub const fn sampler_cost(s: Sampling) -> SamplerCost {
    match s {
        Sampling::Greedy => SamplerCost { bytes_per_logit: 10.0, kernels: 2.0 },
        Sampling::Random => SamplerCost { bytes_per_logit: 46.0, kernels: 6.0 },
        Sampling::TopP => SamplerCost { bytes_per_logit: 256.0, kernels: 20.0 },
    }
}

/// What a sampler moves and launches per step ([`sampler_cost`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SamplerCost {
    /// Bytes read and written per logit (per request of the step and token of the vocabulary).
    pub bytes_per_logit: f64,
    /// Kernels launched per step.
    pub kernels: f64,
}

/// GPU time of one kernel of a captured CUDA graph replayed as a whole, beyond what its bytes
/// and FLOPs take, s: the node's launch from the GPU's own queue, with no host call between
/// kernels (about 0.6 us: ocannl issue #488's launch probe of empty kernels, CUDA 13), and the
/// run of a kernel that does little work, which still waits on its first reads from HBM, a
/// reduction across its blocks and its writes. FlashInfer's maintainers timed an RMSNorm
/// replayed from a graph on an H100 at 3.05-3.17 us a call (2.7 us when the next kernel's
/// launch overlaps its tail, PDL; flashinfer issue #960); NVIDIA's "Getting Started with CUDA
/// Graphs" (2019) measured 3.4 us per 2.9 us kernel in a graph against 3.8 us launched back to
/// back; vLLM's RMSNorm benchmark (PR #36899) times a fused residual add and RMSNorm of one
/// token in a graph at 5.2-6.9 us with a cold L2. So a decode step of hundreds of small
/// kernels costs about 3 us each even from a graph, close to the 4 us of a host launch
/// ([`KERNEL_OVERHEAD_S`]), which then hides the same run. Serving engines capture their decode
/// steps (vLLM, SGLang, TensorRT-LLM). It was 0.6 us, the launch alone, until vLLM 0.11's time
/// per token on one H100 at 1 to 8 requests in flight (GPUStack) came out 21-23% short of the
/// measured, by about 1.6 ms a step whatever the batch; 2.4 us more on each of Qwen3 8B's 504
/// kernels a step (36 layers of two blocks of [`KERNELS_PER_BLOCK`]) gives 1.2 ms of it.
pub const GRAPH_KERNEL_S: f64 = 3.0e-6;

// A graph saves the host's launch; it cannot make a kernel slower than launching it would.
const _: () = assert!(GRAPH_KERNEL_S < KERNEL_OVERHEAD_S);

/// The most tokens an engine step may carry and still replay a captured CUDA graph: vLLM
/// captures steps of up to 512 tokens by default (`max_capture_size`), decode tokens and prompt
/// chunks alike (its piecewise graphs); larger steps run eagerly.
pub const GRAPH_MAX_TOKENS: f64 = 512.0;

/// The most prompt tokens one prefill micro-batch of a static batch holds on a pipeline, as
/// FasterTransformer splits a batch's prompts (`getLocalBatchSize`, also in LMDeploy's
/// TurboMind): the batch over the stages when they divide it, then halved while a micro-batch
/// holds more than this many tokens and its request count stays even.
pub const PREFILL_MICRO_TOKENS: u64 = 1024;

/// Latency of the serving engines' own all-reduce kernels (one-shot: each GPU reads every
/// peer's buffer over NVLink and sums; two-shot: a reduce-scatter then an all-gather the same
/// way): one phase over `p` GPUs takes `CUSTOM_ALL_REDUCE_BASE_S + (p - 1) x
/// CUSTOM_ALL_REDUCE_PEER_S` plus its bytes at the NVLink bandwidth after `nvlink_util`, as
/// NCCL's do, s. A line through SGLang's H100 benchmark of its custom all-reduce (PR #2904, 512
/// bytes: 3.7, 4.8 and 5.9 us on 2, 4 and 8 GPUs). Checked against another benchmark (vLLM PR
/// #24111, 4 H100s, 0.5-4 MB): the fastest of these kernels and NCCL is within 15% of the
/// fastest kernel measured there at every size.
pub const CUSTOM_ALL_REDUCE_BASE_S: f64 = 3.3e-6;

/// See [`CUSTOM_ALL_REDUCE_BASE_S`]: the latency each further peer adds to one phase (one more
/// flag to wait for and buffer to read), s.
pub const CUSTOM_ALL_REDUCE_PEER_S: f64 = 0.37e-6;

/// The largest message the engines' own all-reduce kernels take, bytes: they work in a buffer
/// every GPU registers with its peers at start-up, 8 MiB in vLLM (`CustomAllreduce`'s
/// `max_size`); larger messages go to NCCL.
pub const CUSTOM_ALL_REDUCE_MAX_BYTES: f64 = 8.0 * 1024.0 * 1024.0;

/// Host time to issue one transformer block's forward pass, or one of its gradient passes, s:
/// Python, the PyTorch dispatcher and autograd, the framework's hooks. Kernels queue
/// asynchronously, so a block whose GPU work (compute and the tensor-parallel collectives it
/// waits for) takes longer hides it; a shorter one takes this long, the GPU waiting for the
/// host. About 30-45 operations at 10-15 us each. Fitted on the odd-numbered half of vTrain's
/// single-node runs (Megatron-DeepSpeed, small GPTs on 2 to 8 A100s, `added.csv`: the best of
/// 340 to 600 us in steps of 20, median error 3.8% there) and tested on the even-numbered half:
/// median 5.2%, against 31% without it (both halves are calibration). Refitted the same way
/// when the backward pass's element-wise work came to be counted from its kernels
/// ([`crate::engine::extended::shape::Dims::backward_bytes`]; it was 460 us before). No other
/// shipped run reaches it: a constant of one source's runs.
/// Stacks that capture CUDA graphs or compile the model issue blocks faster.
pub const HOST_BLOCK_S: f64 = 440e-6;

/// Kernels of one transformer block (attention or feed-forward) in a forward pass: a norm, the
/// GEMMs (QKV and output projection, or the two or three feed-forward matrices), the fused
/// attention or activation, bias and residual adds, and the tensor-parallel collective.
pub const KERNELS_PER_BLOCK: f64 = 7.0;

/// Passes over the hidden vector per routed copy of a token (a token is copied once per expert
/// it visits) that a mixture-of-experts layer's token dispatch makes in its forward pass,
/// counted from the eager PyTorch kernels of Megatron-core's dropless dispatch (`core_v0.6.0`,
/// `MoEAllGatherTokenDispatcher`): the copies gathered from the tokens (read, write: 2) and
/// sorted by expert (2); after the experts a zeroed buffer (1), the scatter back to the copies'
/// order (2), the product by the routing probabilities (2) and the sum into the tokens, atomic
/// adds that read each copy and read and write its token (3). The whole dispatch runs on every
/// GPU of a tensor-parallel group, over the group's gathered tokens: the experts' weights are
/// split, the tokens are not. Later fused permutation kernels (Transformer Engine's) move fewer
/// bytes.
pub const MOE_DISPATCH_COPY_PASSES: f64 = 12.0;

/// The same in the backward pass: the sum's gradient gathered to the copies (2), the
/// probability product's gradients to the copies (2) and to the probabilities (reading the
/// gradient and the copies: 2), the scatter's gradient gathered (2), and each of the two
/// gathers' gradients, a zeroed buffer of the copies (1, the second's is of the tokens,
/// [`MOE_DISPATCH_TOKEN_PASSES`]) and atomic adds into it (3 each).
pub const MOE_DISPATCH_COPY_GRAD_PASSES: f64 = 15.0;

/// Passes over each token's hidden vector (once, not per copy) in the dispatch, each way: the
/// zeroed buffer of the tokens the copies are summed into (forward), and the one the first
/// gather's gradient is summed into (backward).
pub const MOE_DISPATCH_TOKEN_PASSES: f64 = 1.0;

/// Kernels a mixture-of-experts layer's router and dispatch launch besides the experts' GEMMs,
/// each way, in the same code: forward, the router's top-k, softmax and load-balancing loss
/// (8), the masks, selections, index lists, sort and histogram of the dispatch and its two
/// gathers (18), and the zeroed buffers, scatter, product and sum after the experts (5);
/// backward, the router's (6), the product's (3), and the gathers' and scatters' (6).
pub const MOE_DISPATCH_KERNELS: [f64; 2] = [31.0, 15.0];

/// What a mixture-of-experts layer's token dispatch costs, by how it runs
/// ([`crate::engine::scenario::MoeDispatch`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DispatchCost {
    /// Passes over the hidden vector as (per routed copy, per token), forward then backward.
    pub passes: [(f64, f64); 2],
    /// Kernels of the router and the dispatch besides the experts' GEMMs, forward then backward.
    pub kernels: [f64; 2],
    /// Routed copies of each token's hidden vector kept for the backward pass.
    pub kept_copies: f64,
}

/// Megatron-core 0.6's eager dispatch: [`MOE_DISPATCH_COPY_PASSES`] and
/// [`MOE_DISPATCH_COPY_GRAD_PASSES`] over each copy, [`MOE_DISPATCH_TOKEN_PASSES`] over the
/// token each way, [`MOE_DISPATCH_KERNELS`]; it keeps the copies that enter the experts (their
/// first GEMM's input, for its weight gradient) and the experts' outputs (for the gradient of
/// their product by the routing probabilities).
pub const EAGER_DISPATCH: DispatchCost = DispatchCost {
    passes: [
        (MOE_DISPATCH_COPY_PASSES, MOE_DISPATCH_TOKEN_PASSES),
        (MOE_DISPATCH_COPY_GRAD_PASSES, MOE_DISPATCH_TOKEN_PASSES),
    ],
    kernels: MOE_DISPATCH_KERNELS,
    kept_copies: 2.0,
};

/// The dispatch by Transformer Engine's fused permute and unpermute kernels (Megatron-core's
/// `--moe-permute-fusion`). Its passes, counted from the kernels (`transformer_engine/common/triton/permutation.py`): forward, the permute
/// reads each token once and writes each of its copies (1 per token, 1 per copy) and the
/// unpermute reads each copy and writes the token's sum (1 per copy, 1 per token); backward,
/// the unpermute's gradient reads the token's gradient for each copy and writes the copy's (2
/// per copy), and the permute's reads each copy's gradient and writes the token's sum (1 per
/// copy, 1 per token). Megatron-core hands the routing probabilities to the experts, whose
/// fused activation applies them without a pass of its own; so only the copies entering the
/// experts are kept, not the experts' outputs. Its kernels, in Megatron-core's all-gather
/// dispatcher: forward, the router's (8, as [`MOE_DISPATCH_KERNELS`]), the local routing map's
/// and probabilities' selections and the tokens per expert (5), the row map's three kernels,
/// the permute and the unpermute (5); backward, the router's (6), the probabilities' selection
/// (2), the unpermute's and the permute's (2).
pub const FUSED_DISPATCH: DispatchCost =
    DispatchCost { passes: [(2.0, 2.0), (3.0, 1.0)], kernels: [18.0, 10.0], kept_copies: 1.0 };

/// Bytes of row-wise Adagrad state per embedding row (one fp32 per row, TorchRec's default
/// optimizer for tables).
pub const EMB_STATE_BYTES_PER_ROW: f64 = 4.0;

/// Passes over the looked-up bytes in an embedding backward: read the gradient, read-modify-write
/// the rows and their optimizer state (fused backward and update, as TorchRec runs it).
pub const EMB_BACKWARD_PASSES: f64 = 3.0;

/// Element-wise passes over an MLP layer's activations (bias, ReLU: read and write).
pub const MLP_ELEMENTWISE_PASSES: f64 = 4.0;

/// How many times the GPU's FP64 peak a precision's peak must reach to be a tensor-core peak.
/// The SIMT units run FP32 at twice FP64 on data-centre GPUs and packed FP16 at four times (a
/// P100's 21.2 TFLOP/s against 5.3), where tensor cores run 16 times (V100's FP16, A100's TF32)
/// and more; consumer GPUs, with FP64 at 1/64 of FP32, have tensor cores from Turing on.
pub const TENSOR_CORE_OVER_FP64: f64 = 8.0;

/// Passes over a batch-normalised convolution's output in its forward pass: batch norm reads it
/// for the statistics and again to normalise, writing the result (3); ReLU reads and writes it
/// (2). Unfused PyTorch/cuDNN kernels, as ResNets train by default.
pub const CONV_NORM_FORWARD_PASSES: f64 = 5.0;

/// The same in the backward pass: ReLU's gradient reads the output and its gradient and writes
/// one (3); batch norm's reads its input and the gradient twice (the reductions, then the input
/// gradient) and writes one (5).
pub const CONV_NORM_BACKWARD_PASSES: f64 = 8.0;

/// Passes over a biased convolution's output in its forward pass (the bias is added in the
/// convolution's epilogue): ReLU in place, read and write. Caffe's GoogLeNet and NiN.
pub const CONV_BIAS_FORWARD_PASSES: f64 = 2.0;

/// The same in the backward pass: ReLU's gradient (read two, write one), and the bias gradient's
/// read of the output gradient.
pub const CONV_BIAS_BACKWARD_PASSES: f64 = 4.0;

/// Gradient bytes PyTorch DDP gathers into one all-reduce: `bucket_cap_mb` = 25 (MiB) by default
/// (`torch.nn.parallel.DistributedDataParallel`). A bucket is reduced when the backward pass has
/// filled it.
pub const DDP_BUCKET_BYTES: f64 = 25.0 * 1024.0 * 1024.0;

/// Bytes SGD with momentum moves per parameter in its step: read the fp32 weight, the gradient
/// and the fp32 momentum, write the weight and the momentum (about 20 whether the weights are
/// fp32, or 16-bit with an fp32 master copy written back to them).
pub const SGD_STEP_BYTES_PER_PARAM: f64 = 20.0;

/// Buckets of T5's relative position bias: each self-attention stack of an encoder-decoder
/// learns one scalar per bucket and head, in its first layer, shared by the layers above
/// (Raffel et al. 2020, section 2.1; `relative_attention_num_buckets` is 32 in every released
/// T5 and mT5 config). Weights only: [`super::shape::Dims::edge_params`].
pub const RELATIVE_POSITION_BUCKETS: f64 = 32.0;

/// Pixels of H.264 video one CPU core decodes per second, the default of
/// `loader_core_pixels_per_s` (`super::loader`): 199 million (96 frames of 1920 x 1080 per second).
///
/// From TorchCodec's published decoder benchmark (pytorch/torchcodec,
/// `benchmarks/decoders/benchmark_readme_data.json`, the data of its README's chart; the
/// workload `generate_readme_data.py` defines): 10 threads, each a single-threaded FFmpeg
/// decoder on a 22-CPU machine, read 10 frames 1 s apart (0 s to 9 s) from each of 50 copies of
/// a 10-second 1920 x 1080, 60 frame/s libx264 video with one keyframe (`-g 600`), and resize
/// them to 256 x 256: 28.19 s (median) for TorchCodec on the CPU. Each video decodes its frames
/// 0 to 540 in order, 541 frames: 50 x 541 / 28.19 s / 10 threads = 96 frames per second per
/// thread. The video is FFmpeg's synthetic Mandelbrot pattern; natural video at the same
/// resolution may decode at another speed, and a CPU of another generation at another rate.
pub const CORE_PIXELS_PER_S: f64 = 50.0 * 541.0 / 28.19 / 10.0 * 1920.0 * 1080.0;

/// The same benchmark decoding on the GPU (TorchCodec's CUDA device, NVDEC, an A100-class GPU:
/// board PG509-210), 10.31 s for the same 50 videos: 2,624 frames of 1920 x 1080 per second,
/// 5.4 billion pixels per second per GPU. The presets' figure for an A100's decoders.
pub const A100_NVDEC_PIXELS_PER_S: f64 = 50.0 * 541.0 / 10.31 * 1920.0 * 1080.0;

/// x264's default keyframe interval (`--keyint 250`), which FFmpeg's libx264 keeps unless
/// told otherwise (`-g`): the default of `loader_keyframe_interval` for clips.
pub const X264_KEYFRAME_INTERVAL: u64 = 250;
