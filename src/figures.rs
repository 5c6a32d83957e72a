//! The headline figures of a result, written once: each a label, a value with its unit, what it
//! is made of (words, and numbers the page marks up) and what it means. `madmax eval` prints
//! them as text and in its JSON, the calculator as its headline: one structure and a formatter
//! per face, as Numbat's markup does for its CLI and its web page. Pure text from the engine's
//! results; the engine itself never formats.

use crate::engine::report::{peak_flops_per_s, Report, Serving};
use crate::engine::scenario::{Batching, PrefillSteps, TaskKind};
use crate::engine::Scenario;
use crate::units;
use serde_json::{json, Value};

/// A piece of what a figure is made of.
#[derive(Clone, Debug, PartialEq)]
pub enum Piece {
    /// Words (with numbers in them).
    Text(String),
    /// Words about one number the page marks up with an element id and the number's raw value
    /// (base units), so that scripts and tests read it without parsing the words.
    Marked { id: &'static str, text: String, raw: f64 },
    /// Words with the exact figures behind them (the page's tooltip); `warn` when they say the
    /// result cannot run (the page shows them in the alert colour).
    Exact { text: String, exact: String, warn: bool },
}

impl Piece {
    /// The words, as plain text.
    pub fn text(&self) -> &str {
        match self {
            Piece::Text(t) | Piece::Marked { text: t, .. } | Piece::Exact { text: t, .. } => t,
        }
    }
}

/// One headline figure.
#[derive(Clone, Debug, PartialEq)]
pub struct Figure {
    /// The page's element id and the JSON's `id`.
    pub id: &'static str,
    pub label: &'static str,
    /// The value as people read it, with its unit ("913 ms").
    pub value: String,
    /// The value in base units (s, samples/s, bytes, 0..1).
    pub raw: f64,
    /// What the value is made of or compared with.
    pub detail: Vec<Piece>,
    /// What the figure means and how it is computed.
    pub help: &'static str,
}

impl Figure {
    fn new(id: &'static str, label: &'static str, value: String, raw: f64, help: &'static str) -> Figure {
        Figure { id, label, value, raw, detail: Vec::new(), help }
    }

    fn with(mut self, piece: Piece) -> Figure {
        self.detail.push(piece);
        self
    }

    /// What the value is made of, as plain text.
    pub fn detail_text(&self) -> String {
        self.detail.iter().map(Piece::text).collect()
    }

    /// The figure as a line of text: the label in a column of 21, the value, the detail in
    /// brackets.
    pub fn line(&self) -> String {
        let detail = self.detail_text();
        if detail.is_empty() {
            format!("{:<21} {}", self.label, self.value)
        } else {
            format!("{:<21} {} ({detail})", self.label, self.value)
        }
    }

    /// The figure as JSON: `{id, label, value, raw, detail, help}`, the detail as plain text.
    pub fn json(&self) -> Value {
        json!({
            "id": self.id,
            "label": self.label,
            "value": self.value,
            "raw": self.raw,
            "detail": self.detail_text(),
            "help": self.help,
        })
    }
}

/// The headline of a result: how long a step (or a request) takes, how much the cluster does
/// per second, how much communication shows, how much of the peak the GPUs use, and the memory
/// each needs.
pub fn headline(s: &Scenario, r: &Report) -> Vec<Figure> {
    let mut out = match &r.serving {
        Some(sv) => serving_headline(sv),
        None => training_headline(s, r),
    };
    let share = r.exposed_share();
    out.push(
        Figure::new(
            "exposed-comm",
            "Exposed communication",
            units::percent(share),
            share,
            "Share of communication time no computation hides: it adds to the iteration time.",
        )
        .with(Piece::Text(if r.comm_s > 0.0 {
            format!(
                "{} of {} communication is not hidden",
                units::duration(r.exposed_comm_s.max(0.0)),
                units::duration(r.comm_s)
            )
        } else {
            "no communication".to_owned()
        })),
    );
    out.push(mfu(s, r));
    out.push(memory(r));
    out
}

/// A training (or reference-mode) result's first two figures: the iteration and the throughput.
fn training_headline(s: &Scenario, r: &Report) -> Vec<Figure> {
    let idle = if r.idle_s > 0.0 { format!(" + idle {}", units::duration(r.idle_s)) } else { String::new() };
    let iteration = Figure::new(
        "iteration-time",
        "Iteration time",
        units::duration(r.iteration_s),
        r.iteration_s,
        "One step: forward pass (and backward when training) over the global batch.",
    )
    .with(Piece::Text(format!(
        "compute {} + exposed communication {}{idle}",
        units::duration(r.compute_s),
        units::duration(r.exposed_comm_s.max(0.0))
    )));
    let mut throughput = Figure::new(
        "throughput",
        "Throughput",
        units::si(r.throughput_samples_per_s, "samples/s"),
        r.throughput_samples_per_s,
        "Samples the whole cluster processes per second: global batch / iteration time.",
    );
    if let Some(t) = r.tokens_per_s(s) {
        throughput = throughput.with(Piece::Marked { id: "tokens-per-s", text: units::si(t, "tokens/s"), raw: t });
    }
    vec![iteration, throughput]
}

/// A serving result's first two figures: how long a request takes, and how many the cluster
/// completes.
fn serving_headline(sv: &Serving) -> Vec<Figure> {
    let inflight = sv.batching == Batching::InFlight;
    let latency = Figure::new(
        "iteration-time",
        "End-to-end latency",
        units::duration(sv.e2e_s),
        sv.e2e_s,
        if inflight {
            "From a request's arrival to its last token in the steady state: its wait and prefill, then one engine step per generated token."
        } else {
            "From the batch's start to its last token: the prefill of every prompt, then one decode step per generated token."
        },
    )
    .with(Piece::Text(format!(
        "first token {} + {} tokens x {}",
        units::duration(sv.ttft_s),
        sv.output_tokens.saturating_sub(1),
        units::duration(sv.tpot_s)
    )));
    let requests = Figure::new(
        "throughput",
        "Requests",
        units::si(sv.requests_per_s, "requests/s"),
        sv.requests_per_s,
        if inflight {
            "Requests the whole cluster completes per second: requests in flight / end-to-end latency (Little's law), over every replica."
        } else {
            "Requests the whole cluster completes per second: batch x replicas / end-to-end latency (static batching)."
        },
    )
    .with(Piece::Text(format!(
        "{} in flight per replica, {}",
        units::count(sv.in_flight),
        units::things(sv.replicas, "replica")
    )));
    vec![latency, requests]
}

/// Model FLOPs utilisation, with both bases stated: sources quote TFLOP/s of model FLOPs (MFU)
/// or of what ran, recomputation included (HFU).
fn mfu(s: &Scenario, r: &Report) -> Figure {
    let mfu = r.mfu(s);
    let help = match &r.utilization {
        Some(_) if s.task().kind == TaskKind::Inference => {
            "Model FLOPs per iteration (the forward pass, attention's s^2 included) over what the GPUs could do at datasheet peak in that time."
        }
        Some(_) => {
            "Model FLOPs per iteration (forward and backward, no recomputation, attention's s^2 included) over what the GPUs could do at datasheet peak in that time. HFU also counts recomputed FLOPs."
        }
        None => {
            "Model FLOPs per iteration over what the GPUs could do at datasheet peak in that time (FLOPs as MAD-Max counts them)."
        }
    };
    let figure = Figure::new("mfu", "Model FLOPs utilisation", units::percent(mfu), mfu, help);
    match &r.utilization {
        Some(u) => {
            let model = format!(
                "{} per GPU of model FLOPs, of {} peak",
                units::si(u.model_flops_per_s_per_gpu, "FLOP/s"),
                units::si(u.peak_flops_per_s, "FLOP/s")
            );
            let hardware = if s.task().kind == TaskKind::Inference {
                " (forward passes only: nothing is recomputed, HFU = MFU)".to_owned()
            } else if u.hardware_flops == u.model_flops {
                "; nothing is recomputed, so HFU = MFU".to_owned()
            } else {
                format!(
                    "; HFU {}: {} with recomputation",
                    units::percent(u.hfu),
                    units::si(u.hfu * u.peak_flops_per_s, "FLOP/s")
                )
            };
            figure.with(Piece::Marked { id: "hfu", text: model + &hardware, raw: u.hfu })
        }
        None => figure.with(Piece::Text(format!("of {} peak per GPU", units::si(peak_flops_per_s(s), "FLOP/s")))),
    }
}

/// Memory per GPU against its HBM.
fn memory(r: &Report) -> Figure {
    let m = &r.memory;
    let help = if r.utilization.is_some() {
        "Everything one GPU of the busiest pipeline stage holds at its peak: weights, gradients, optimizer states, activations of the micro-batches in flight, buffers; a plan fits when this does. nvidia-smi shows more in training: PyTorch's caching allocator keeps freed blocks it cannot reuse, about 15% of what it reserves on average (GMLake, ASPLOS 2024)."
    } else {
        "Model weights held by each GPU under this plan. MAD-Max paper mode counts weights only."
    };
    let label = if r.utilization.is_some() { "Memory per GPU" } else { "Weights per GPU" };
    let figure = Figure::new("memory", label, units::bytes(m.total_bytes), m.total_bytes, help).with(Piece::Exact {
        text: format!(
            "of {} HBM ({}){}",
            units::bytes(m.capacity_bytes),
            units::percent(m.total_bytes / m.capacity_bytes),
            if m.fits() { "" } else { ": does not fit" }
        ),
        exact: format!("{} of {}", units::gib(m.total_bytes), units::gib(m.capacity_bytes)),
        warn: !m.fits(),
    });
    // A training job's memory as nvidia-smi shows it: PyTorch's caching allocator keeps more
    // than the live tensors (a serving engine reserves its KV cache up front instead).
    if r.utilization.is_none() || r.serving.is_some() || !m.fits() {
        return figure;
    }
    let shown = crate::engine::extended::shown_memory_bytes(m);
    figure.with(Piece::Marked {
        id: "memory-shown",
        // A non-breaking hyphen keeps the tool's name on one line.
        text: format!("; about {} in nvidia\u{2011}smi, the allocator's cache included", units::bytes(shown)),
        raw: shown,
    })
}

/// " on average" where a serving report's lengths are means (a request mix, or lengths spread
/// around them); nothing where every request has them.
fn on_average(sv: &Serving) -> &'static str {
    if sv.lengths_vary() {
        " on average"
    } else {
        ""
    }
}

/// A serving result's further figures: its latencies, its token throughput, and the requests it
/// keeps in flight or the largest batch that fits.
pub fn serving(sv: &Serving) -> Vec<Figure> {
    let inflight = sv.batching == Batching::InFlight;
    let burst = sv.burst_requests.is_some();
    let separate = sv.prefill_steps == PrefillSteps::Separate;
    let ttft = Figure::new(
        "ttft",
        "Time to first token",
        units::duration(sv.ttft_s),
        sv.ttft_s,
        if burst {
            "Mean over the burst's requests of the wait for their first token: most of it is waiting for a place among the requests in flight, then the steps that prefill its prompt."
        } else if inflight && separate {
            "How long a request waits for its first token: for the decode step (or round of decode steps) under way to end, then for the prefill step that takes its prompt."
        } else if inflight {
            "How long a request waits for its first token: the engine steps that carry its prompt's chunks, plus the wait when prompts arrive faster than the steps' token budget takes them."
        } else {
            "How long a request waits for its first token: the prefill of every prompt in the batch."
        },
    )
    .with(Piece::Text(if let (Some(n), Some(span)) = (sv.burst_requests, sv.makespan_s) {
        format!(
            "mean of {} requests sent at once, the burst lasting {}",
            crate::engine::extended::rules::grouped(n),
            units::duration(span)
        )
    } else if inflight && separate {
        format!(
            "{} prompt tokens{} in steps of their own of at most {} tokens",
            sv.input_tokens,
            on_average(sv),
            sv.step_tokens
        )
    } else if inflight {
        format!("{} prompt tokens{} in chunks of at most {} per step", sv.input_tokens, on_average(sv), sv.step_tokens)
    } else {
        format!("prefill of {} prompt tokens x {} requests", sv.input_tokens, sv.batch)
    }));
    let tpot = Figure::new(
        "tpot",
        "Time per output token",
        units::duration(sv.tpot_s),
        sv.tpot_s,
        if burst {
            "Mean over the burst's requests of their time per output token after the first, (last token - first token) / (tokens - 1), as throughput benchmarks report it: engine steps, slowed by the other requests' prompts prefilled in them or between them."
        } else if inflight && separate {
            "Mean time between two generated tokens of a request: one decode step, which decodes a token for every request in flight, and the prefill steps of other prompts that come between two of them."
        } else if inflight {
            "Mean time between two generated tokens of a request: one engine step, which decodes a token for every request in flight and sometimes carries a prompt chunk."
        } else {
            "Mean time between two generated tokens of a request: one decode step (every weight and the KV cache read once)."
        },
    )
    .with(Piece::Text(format!(
        "{} tokens{}, end to end {}",
        sv.output_tokens,
        on_average(sv),
        units::duration(sv.e2e_s)
    )));
    let tokens = Figure::new(
        "output-tokens",
        "Output tokens/s",
        units::si(sv.output_tokens_per_s, "tokens/s"),
        sv.output_tokens_per_s,
        if burst {
            "Generated tokens per second over the whole cluster: the burst's generated tokens over its duration, from its arrival to its last token (ramp and drain included)."
        } else {
            "Generated tokens per second over the whole cluster: requests completed per second x output tokens."
        },
    )
    .with(Piece::Marked {
        id: "output-tokens-per-gpu",
        text: format!(
            "{} per GPU, {}",
            units::si(sv.output_tokens_per_s_per_gpu, "tokens/s"),
            units::si(sv.requests_per_s, "requests/s")
        ),
        raw: sv.output_tokens_per_s_per_gpu,
    });
    let batch = if inflight {
        Figure::new(
            "in-flight",
            "Requests in flight",
            // An average: "1" is a request alone (a burst that leaves no KV page to share).
            match units::count(sv.in_flight) {
                one if one == "1" => "1 request".to_owned(),
                n => format!("{n} requests"),
            },
            sv.in_flight,
            if burst {
                "Requests per replica in flight, on average over the burst: at most the batch, admitted while the KV cache has pages for their tokens; at the end fewer and fewer remain."
            } else {
                "Requests per replica the engine keeps in flight: the batch, or fewer when the KV pages left after the weights and one full step's activations hold fewer (at their average length)."
            },
        )
        .with(Piece::Text(format!(
            "{}; the KV cache holds {}{} ({} per token per GPU)",
            if burst { format!("on average over the burst, at most {}", sv.batch) } else { format!("of {} asked", sv.batch) },
            sv.max_batch,
            if burst { " at their average length" } else { "" },
            units::bytes(sv.kv_bytes_per_token)
        )))
    } else {
        Figure::new(
            "max-batch",
            "Largest batch that fits",
            units::things(sv.max_batch, "request"),
            sv.max_batch as f64,
            "Requests per replica whose KV cache (prompt + output tokens) fits in HBM next to the weights.",
        )
        .with(Piece::Text(format!("KV cache {} per token per GPU", units::bytes(sv.kv_bytes_per_token))))
    };
    vec![ttft, tpot, tokens, batch]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::scenario::Mode;
    use crate::engine::{evaluate, validate};

    /// A scenario preset in the default model, or in paper mode (`reference`), and its report.
    fn evaluated(preset: &str, reference: bool) -> (Scenario, Report) {
        let raw = crate::presets::scenario_raw(preset).expect("a preset");
        let mode = if reference { Mode::Reference } else { Mode::Default };
        let s = validate(&raw).expect("valid").with_mode(mode).expect("valid in the mode");
        let r = evaluate(&s);
        (s, r)
    }

    fn ids(figures: &[Figure]) -> Vec<&str> {
        figures.iter().map(|f| f.id).collect()
    }

    #[test]
    fn a_training_headline_states_its_figures_and_marks_the_numbers_the_page_reads() {
        let (s, r) = evaluated(crate::presets::DEFAULT_SCENARIO, false);
        let h = headline(&s, &r);
        assert_eq!(ids(&h), ["iteration-time", "throughput", "exposed-comm", "mfu", "memory"]);
        assert_eq!((h[0].raw, h[0].value.as_str()), (r.iteration_s, units::duration(r.iteration_s).as_str()));
        // Throughput in samples/s, and in tokens/s for a language model, marked for the page.
        let tokens = r.tokens_per_s(&s).expect("an LLM");
        assert_eq!(
            h[1].detail,
            [Piece::Marked { id: "tokens-per-s", text: units::si(tokens, "tokens/s"), raw: tokens }]
        );
        assert_eq!(h[1].line(), format!("Throughput            {} ({})", h[1].value, units::si(tokens, "tokens/s")));
        // MFU and HFU, each on its stated basis.
        let u = r.utilization.as_ref().expect("the default model");
        let Piece::Marked { id: "hfu", text, raw } = &h[3].detail[0] else { panic!("{:?}", h[3].detail) };
        assert_eq!(*raw, u.hfu);
        assert!(text.contains("per GPU of model FLOPs") && text.contains("with recomputation"), "{text}");
        assert!(h[3].help.contains("forward and backward"), "{}", h[3].help);
        // Memory against HBM, with the exact GiB behind it.
        let Piece::Exact { exact, warn, .. } = &h[4].detail[0] else { panic!("{:?}", h[4].detail) };
        assert_eq!(
            (*warn, exact.as_str()),
            (
                !r.memory.fits(),
                format!("{} of {}", units::gib(r.memory.total_bytes), units::gib(r.memory.capacity_bytes)).as_str()
            )
        );
        // The JSON carries the same figure, its detail as text.
        let j = h[3].json();
        assert_eq!((&j["id"], &j["raw"], &j["detail"]), (&json!("mfu"), &json!(r.mfu(&s)), &json!(h[3].detail_text())));
    }

    #[test]
    fn a_plan_that_does_not_fit_says_so_in_its_memory_figure() {
        let (s, mut r) = evaluated(crate::presets::DEFAULT_SCENARIO, false);
        r.memory.total_bytes = 2.0 * r.memory.capacity_bytes;
        let m = headline(&s, &r).pop().expect("memory");
        assert!(m.detail_text().ends_with("(200 %): does not fit"), "{}", m.detail_text());
        assert!(matches!(m.detail[0], Piece::Exact { warn: true, .. }));
    }

    #[test]
    fn a_result_without_communication_says_so_rather_than_zero_of_zero() {
        let (s, mut r) = evaluated(crate::presets::DEFAULT_SCENARIO, false);
        assert!(headline(&s, &r)[2].detail_text().ends_with(" communication is not hidden"));
        (r.comm_s, r.exposed_comm_s, r.overlapped_comm_s) = (0.0, 0.0, 0.0);
        let exposed = &headline(&s, &r)[2];
        assert_eq!((exposed.value.as_str(), exposed.detail_text().as_str()), ("0 %", "no communication"));
    }

    #[test]
    fn a_serving_headline_leads_with_a_request_and_lists_its_serving_figures() {
        let (s, r) = evaluated("current__llama2_70b__h200_sxm_128__inference", false);
        let sv = r.serving.as_ref().expect("serving");
        let h = headline(&s, &r);
        assert_eq!(
            (h[0].label, h[0].raw, h[1].label, h[1].raw),
            ("End-to-end latency", sv.e2e_s, "Requests", sv.requests_per_s)
        );
        assert!(h[3].help.contains("the forward pass"), "{}", h[3].help);
        assert!(h[3].detail_text().ends_with("nothing is recomputed, HFU = MFU)"), "{}", h[3].detail_text());
        let f = serving(sv);
        let last = if sv.batching == Batching::InFlight { "in-flight" } else { "max-batch" };
        assert_eq!(ids(&f), ["ttft", "tpot", "output-tokens", last]);
        assert!(
            matches!(f[2].detail[0], Piece::Marked { id: "output-tokens-per-gpu", raw, .. } if raw == sv.output_tokens_per_s_per_gpu)
        );
    }

    #[test]
    fn one_request_in_flight_or_in_a_batch_is_said_in_the_singular() {
        let (_, r) = evaluated("current__llama2_70b__h200_sxm_128__inference", false);
        let mut sv = r.serving.clone().expect("serving");
        let said = |sv: &crate::engine::report::Serving| serving(sv).pop().expect("batch").value;
        for (batching, n, words) in [
            (Batching::InFlight, 1.0, "1 request"),
            (Batching::InFlight, 15.8, "15.8 requests"),
            (Batching::Static, 1.0, "1 request"),
            (Batching::Static, 64.0, "64 requests"),
        ] {
            (sv.batching, sv.in_flight, sv.max_batch) = (batching, n, n as u64);
            assert_eq!(said(&sv), words, "{batching:?} {n}");
        }
    }

    #[test]
    fn paper_mode_counts_weights_and_its_mfu_on_mad_maxs_flops() {
        let (s, r) = evaluated(crate::presets::PAPER_LLAMA2_70B, true);
        let h = headline(&s, &r);
        assert_eq!(h[4].label, "Weights per GPU");
        assert_eq!(
            h[3].detail,
            [Piece::Text(format!("of {} peak per GPU", units::si(peak_flops_per_s(&s), "FLOP/s")))]
        );
        assert!(h[3].help.contains("as MAD-Max counts them"));
    }
}
