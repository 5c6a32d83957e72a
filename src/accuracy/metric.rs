//! What a row of measured runs measured: the `metric` cells of the schemas (SOURCES.md), their
//! names for people and which way is faster.

use serde::Serialize;

/// What a row of measured runs measured: its `metric` cell, one of the schema's (SOURCES.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    /// Seconds per training iteration.
    IterationS,
    /// TFLOP/s per GPU, on the row's FLOP basis (`flops_basis`).
    TflopsPerGpu,
    /// Model FLOPs utilisation, 0..1.
    Mfu,
    /// Hardware FLOPs utilisation (recomputation included), 0..1.
    Hfu,
    /// Serving: the prompt's prefill, ms.
    PrefillMs,
    /// Serving: time to the first token, ms.
    TtftMs,
    /// Serving: time per output token, ms.
    DecodeMsPerToken,
    /// Serving: one static batch from its prompts to its last token (the prefill, then a decode
    /// step per further token), ms.
    LatencyMs,
    /// Serving: output tokens/s of the whole deployment.
    OutputTokensPerS,
    /// Serving: output tokens/s per GPU.
    OutputTokensPerSPerGpu,
    /// Training: samples (a recommendation model's examples) per second of the whole cluster.
    SamplesPerS,
    /// Serving in flight: the median request's time to its first token, ms.
    MedianTtftMs,
    /// Serving in flight: the median over requests of each one's mean time per output token
    /// after the first, ms.
    MedianTpotMs,
    /// Serving in flight: the median time between two tokens of a request (inter-token
    /// latency), ms.
    MedianItlMs,
    /// Serving in flight: the median request's time from its arrival to its last token, ms.
    MedianE2eMs,
}

impl Metric {
    pub const ALL: [Metric; 15] = [
        Metric::IterationS,
        Metric::TflopsPerGpu,
        Metric::Mfu,
        Metric::Hfu,
        Metric::PrefillMs,
        Metric::TtftMs,
        Metric::DecodeMsPerToken,
        Metric::LatencyMs,
        Metric::OutputTokensPerS,
        Metric::OutputTokensPerSPerGpu,
        Metric::SamplesPerS,
        Metric::MedianTtftMs,
        Metric::MedianTpotMs,
        Metric::MedianItlMs,
        Metric::MedianE2eMs,
    ];

    /// The CSV cell (and JSON value) that names it.
    pub fn cell(self) -> &'static str {
        match self {
            Metric::IterationS => "iteration_s",
            Metric::TflopsPerGpu => "tflops_per_gpu",
            Metric::Mfu => "mfu",
            Metric::Hfu => "hfu",
            Metric::PrefillMs => "prefill_ms",
            Metric::TtftMs => "ttft_ms",
            Metric::DecodeMsPerToken => "decode_ms_per_token",
            Metric::LatencyMs => "latency_ms",
            Metric::OutputTokensPerS => "output_tokens_per_s",
            Metric::OutputTokensPerSPerGpu => "output_tokens_per_s_per_gpu",
            Metric::SamplesPerS => "samples_per_s",
            Metric::MedianTtftMs => "median_ttft_ms",
            Metric::MedianTpotMs => "median_tpot_ms",
            Metric::MedianItlMs => "median_itl_ms",
            Metric::MedianE2eMs => "median_e2e_ms",
        }
    }

    /// The metric a cell names; `None` for one the schema does not define.
    pub fn of_cell(cell: &str) -> Option<Metric> {
        Metric::ALL.into_iter().find(|m| m.cell() == cell)
    }

    /// Its name and unit for people.
    pub fn label(self) -> &'static str {
        match self {
            Metric::IterationS => "iteration time (s)",
            Metric::TflopsPerGpu => "TFLOP/s per GPU",
            Metric::Mfu => "MFU",
            Metric::Hfu => "HFU",
            Metric::PrefillMs => "prefill (ms)",
            Metric::TtftMs => "time to first token (ms)",
            Metric::DecodeMsPerToken => "decode (ms/token)",
            Metric::LatencyMs => "batch latency (ms)",
            Metric::OutputTokensPerS => "output tokens/s",
            Metric::OutputTokensPerSPerGpu => "output tokens/s per GPU",
            Metric::SamplesPerS => "samples/s",
            Metric::MedianTtftMs => "median time to first token (ms)",
            Metric::MedianTpotMs => "median time per output token (ms)",
            Metric::MedianItlMs => "median inter-token latency (ms)",
            Metric::MedianE2eMs => "median end-to-end latency (ms)",
        }
    }

    /// Whether it measures a training run (the others measure serving).
    pub fn is_training(self) -> bool {
        matches!(self, Metric::IterationS | Metric::TflopsPerGpu | Metric::Mfu | Metric::Hfu | Metric::SamplesPerS)
    }

    /// Whether a larger value means a faster run (a rate, a utilisation) rather than a slower
    /// one (a time).
    pub fn higher_is_faster(self) -> bool {
        matches!(
            self,
            Metric::TflopsPerGpu
                | Metric::Mfu
                | Metric::Hfu
                | Metric::OutputTokensPerS
                | Metric::OutputTokensPerSPerGpu
                | Metric::SamplesPerS
        )
    }
}
