//! Sentences the CLI and the page both say, so that they say them the same way. Pure text from
//! the engine's results; the engine itself never formats.

use crate::engine::critical::CriticalPath;
use crate::engine::explore::{Outcome, SettingsSearched, MICRO_BATCHES_PER_STAGE};
use crate::engine::report::{Limit, LoaderBound, MemPart, Report, Serving};
use crate::engine::scenario::{Batching, LengthSpread, PrefillSteps, SPREAD_BINS};
use crate::paper::Gain;
use crate::units;

/// What a report's timeline spans, as a noun: an "iteration" of training, a static serving
/// "batch" (its prefill and every decode step), or one in-flight "engine step" (one that
/// carries a prompt chunk).
pub fn timeline_span(r: &Report) -> &'static str {
    match r.serving.as_ref().map(|sv| sv.batching) {
        None => "iteration",
        Some(Batching::Static) => "batch",
        Some(Batching::InFlight) => "engine step",
    }
}

/// What the critical path of a report's timeline runs through, as a clause: "computation
/// 10.2 s, communication 2.31 s (1.23 k of 5 k ops; the others could take longer without
/// delaying the iteration)". Idle time (pipeline bubble, input wait) is named only when there
/// is some.
pub fn critical_path(r: &Report, cp: &CriticalPath) -> String {
    let t = cp.time(&r.timeline);
    let idle = if t.idle_s > 0.0 { format!(", idle {}", units::duration(t.idle_s)) } else { String::new() };
    let ops = if cp.ops.len() < r.timeline.len() {
        format!(
            "{} of {} ops; the others could take longer without delaying the {}",
            units::count(cp.ops.len() as f64),
            units::count(r.timeline.len() as f64),
            timeline_span(r)
        )
    } else {
        format!("all {} ops", units::count(r.timeline.len() as f64))
    };
    format!(
        "computation {}, communication {}{idle} ({ops})",
        units::duration(t.computation_s),
        units::duration(t.communication_s)
    )
}

/// What an op's slack means, as a sentence: on the critical path, or how much later it could
/// end without delaying the iteration (or batch, or engine step).
pub fn slack(slack_s: f64, r: &Report) -> String {
    let span = timeline_span(r);
    if slack_s > 0.0 {
        format!("Slack {}: it could end that much later without delaying the {span}.", units::duration(slack_s))
    } else {
        format!("On the critical path: each microsecond it takes longer, the {span} takes longer too.")
    }
}

/// What op `i` of a report's timeline would save at twice its speed, alone and with every op
/// of its kind (the same block, op and pass: every layer's, every micro-batch's), as a sentence
/// with the iteration time each would give (replayed through the scheduler: an op with slack
/// saves nothing until its slack is used up). A collective's wait for the thread that launches
/// it stays as it is ([`Report::launch_wait_s`]). `None` when there is no such op.
pub fn twice_as_fast(r: &Report, i: usize) -> Option<String> {
    let op = r.timeline.get(i)?;
    let kind = |o: &crate::engine::ops::Op| {
        (o.name.block, o.name.kind, o.name.phase) == (op.name.block, op.name.kind, op.name.phase)
    };
    // At twice its speed an op takes half its time, less any wait for the thread that
    // launches it (which a faster op would not shorten). Replayed unchanged too, so that the
    // three ends differ only by what changed.
    let faster = |k: usize, o: &crate::engine::ops::Op| {
        let wait_s = r.launch_wait_s(k);
        wait_s + (o.duration_s - wait_s) / 2.0
    };
    let end = r.end_with(|_, o| o.duration_s);
    let alone = r.end_with(|k, o| if k == i { faster(k, o) } else { o.duration_s });
    let all = r.end_with(|k, o| if kind(o) { faster(k, o) } else { o.duration_s });
    let change = |t: f64| {
        if end - t > end * 1e-9 {
            format!("{} ({} less, {})", units::duration(t), units::duration(end - t), units::percent((t - end) / end))
        } else {
            format!("{}, no shorter", units::duration(t))
        }
    };
    let span = timeline_span(r);
    let count = r.timeline.iter().filter(|o| kind(o)).count();
    Some(if count > 1 {
        format!(
            "At twice its speed, this op alone: the {span} would take {}; with every op of its kind ({count} ops, the same block, op and pass), {}.",
            change(alone),
            change(all)
        )
    } else {
        format!("At twice its speed, this op: the {span} would take {}.", change(alone))
    })
}

/// Said after [`twice_as_fast`] for a collective that waits for a launch thread (its
/// explanation has the term [`LAUNCH_WAIT`](crate::engine::LAUNCH_WAIT)): the what-if keeps
/// the wait.
pub const LAUNCH_WAIT_CAVEAT: &str =
    "Only its transfer halves: its wait for the thread that launches it stays, as a faster link would not shorten it.";

/// What an in-flight engine's steps do: prompt chunks mixed into the decode steps, or prompts in
/// steps of their own (and rounds of several decode steps).
fn steps(sv: &Serving) -> String {
    match sv.prefill_steps {
        PrefillSteps::Mixed => format!(
            "each step decodes a token for every request past its prompt and prefills prompts in chunks, at most {} tokens per step",
            sv.step_tokens
        ),
        PrefillSteps::Separate if sv.scheduler_steps > 1 => format!(
            "decode steps (a token for every request past its prompt) run in rounds of {}, new prompts starting only between rounds, in steps of their own of at most {} tokens while every decoding request waits, and a round's tokens reach the client together",
            sv.scheduler_steps, sv.step_tokens
        ),
        PrefillSteps::Separate => format!(
            "prompts are prefilled in steps of their own, at most {} tokens each, while every decoding request waits; the other steps decode a token for every request past its prompt",
            sv.step_tokens
        ),
    }
}

/// How the serving figures were obtained, as a sentence: a static batch, or in-flight
/// batching's steady state with the requests the KV cache admits.
pub fn batching(sv: &Serving) -> String {
    match sv.batching {
        Batching::Static if sv.prefill_micro_batches > 1 => format!(
            "Static batching: {} requests per replica start together, prefill in {} micro-batches of {} that the pipeline's stages work on at once, and decode together until the last token.",
            sv.batch,
            sv.prefill_micro_batches,
            units::things(sv.batch / sv.prefill_micro_batches, "request")
        ),
        Batching::Static => format!(
            "Static batching: {} requests per replica start together, prefill together and decode until the last token.",
            sv.batch
        ),
        Batching::InFlight if sv.burst_requests.is_some() => format!(
            "In-flight batching, a burst: {} requests sent at once, run step by step until the last one finishes ({}). At most {} requests per replica are in flight while the KV cache has pages for their tokens ({} on average), the others waiting for a place; {}, in KV pages of {} tokens.{} The figures are the burst's: its output tokens over its duration, and means over its requests.{}",
            crate::engine::extended::rules::grouped(sv.burst_requests.unwrap_or(0)),
            units::duration(sv.makespan_s.unwrap_or(0.0)),
            sv.batch,
            units::sig3(sv.in_flight),
            steps(sv),
            sv.kv_page_tokens,
            if sv.recomputed_tokens > 0.0 {
                format!(
                    " The requests admitted for their prompts outgrew the cache as they generated: the last admitted lost their pages, and {} tokens were prefilled again.",
                    units::count(sv.recomputed_tokens)
                )
            } else {
                String::new()
            },
            request_kinds(sv).map_or(String::new(), |m| format!(" {m}"))
        ),
        Batching::InFlight => {
            let (load, in_flight, cap) = match sv.request_rate {
                Some(rate) => (
                    format!(" at {}", units::si(rate, "requests/s")),
                    format!("{} requests in flight per replica on average", units::sig3(sv.in_flight)),
                    format!(" (at most {}, the batch; the KV cache would hold {})", sv.batch, sv.max_batch),
                ),
                None if sv.in_flight < sv.batch as f64 => (
                    String::new(),
                    format!("{} requests in flight per replica", sv.in_flight),
                    format!(" (the batch asks for {}; the KV cache holds only these)", sv.batch),
                ),
                None => (
                    String::new(),
                    format!("{} requests in flight per replica", sv.in_flight),
                    format!(" (the KV cache would hold {})", sv.max_batch),
                ),
            };
            format!(
                "In-flight batching, steady state{load}: {in_flight}{cap}; {}, in KV pages of {} tokens.{}",
                steps(sv),
                sv.kv_page_tokens,
                request_kinds(sv).map_or(String::new(), |m| format!(" {m}"))
            )
        }
    }
}

/// The kinds of request a serving report's figures are for, as a sentence; `None` without a
/// mix or a spread (every request of the same lengths).
fn request_kinds(sv: &Serving) -> Option<String> {
    if sv.length_spread == LengthSpread::Exponential {
        let at =
            |mean: u64, q: f64| crate::engine::extended::rules::grouped((-(1.0 - q).ln() * mean as f64).round() as u64);
        return Some(format!(
            "Request lengths vary: prompts and answers each spread exponentially around their means ({} and {} tokens), so half the answers are under {} tokens and one in a hundred over {} (half the prompts under {}); served as {} kinds of request of equal share.",
            sv.input_tokens,
            sv.output_tokens,
            at(sv.output_tokens, 0.5),
            at(sv.output_tokens, 0.99),
            at(sv.input_tokens, 0.5),
            SPREAD_BINS * SPREAD_BINS
        ));
    }
    if sv.request_mix.is_empty() {
        return None;
    }
    let kinds: Vec<String> = sv
        .request_mix
        .iter()
        .map(|c| {
            format!(
                "{}% of {} prompt + {} generated tokens",
                units::sig3(c.share * 100.0),
                c.input_tokens,
                c.output_tokens
            )
        })
        .collect();
    Some(format!("Requests: {}; {} + {} tokens on average.", kinds.join(", "), sv.input_tokens, sv.output_tokens))
}

/// Why an explored plan cannot run, as a clause ("it needs 83.1 GB of the GPU's 40.0 GB");
/// `None` when it can.
pub fn cannot_run(o: &Outcome) -> Option<String> {
    if o.memory_bytes > o.capacity_bytes {
        Some(format!("it needs {} of the GPU's {}", units::bytes(o.memory_bytes), units::bytes(o.capacity_bytes)))
    } else if !o.meets_limit() {
        Some(format!(
            "{}, over the limit",
            latencies_missed(o, "it takes {} per output token", "its first token comes after {}")
        ))
    } else {
        None
    }
}

/// What a staged search tried the training settings on, as a sentence; `None` when it tried
/// them on every plan or does not try them.
pub fn settings_searched(settings: SettingsSearched) -> Option<String> {
    let SettingsSearched::Best(best) = settings else { return None };
    let tried = match best {
        0 => "no plan could be tried with other settings within the search's budget".to_owned(),
        1 => "the most promising plan with every one that fits".to_owned(),
        n => {
            format!("the {n} most promising (in turn the fastest that fit, the fastest that do not and the lightest that do not, then the pipelines that do not fit but would run fastest interleaved; only plans that some setting fits and that reach half the fastest fit's throughput) with every one that fits")
        }
    };
    Some(format!(
        "Trying every micro-batch, recomputation, ZeRO stage and schedule on every plan would take more than half of what one search may: each plan ran with the task's own settings and those that cost no time (the overlap options, sequence parallelism, ZeRO-1; a pipeline at {MICRO_BATCHES_PER_STAGE} micro-batches per stage or more), and {tried}."
    ))
}

/// Where a better plan gains much, as a sentence: the speed-up, the workload and both plans
/// with their throughput (samples/s; requests/s in inference).
pub fn gain(g: &Gain) -> String {
    let unit = if g.task == "inference" { "requests/s" } else { "samples/s" };
    let p = &g.plans;
    format!(
        "{}x on {} ({}): its own plan, {}, runs {}, {} of its communication exposed; the best plan that fits, {}, runs {}, {} exposed.",
        units::sig3(g.speedup),
        g.workload,
        g.task,
        p.own,
        units::si(p.own_samples_per_s, unit),
        units::percent(p.own_exposed_share),
        p.best,
        units::si(p.best_samples_per_s, unit),
        units::percent(p.best_exposed_share)
    )
}

/// A short mark for a ranked plan that cannot run ("does not fit in HBM"); `None` when it can.
pub fn misfit_mark(o: &Outcome) -> Option<String> {
    if o.memory_bytes > o.capacity_bytes {
        Some("does not fit in HBM".to_owned())
    } else if !o.meets_limit() {
        Some(format!("over the latency limit: {}", latencies_missed(o, "{} per output token", "first token after {}")))
    } else {
        None
    }
}

/// What makes the largest part of a GPU's memory smaller: the change that acts on that part
/// (recomputation does nothing for weights, sharding the optimizer nothing for activations).
fn shrink(largest: MemPart) -> &'static str {
    match largest {
        MemPart::Activations => "Turn on activation recomputation, use a smaller micro-batch, or split each sequence with more tensor (with sequence parallelism), pipeline or context parallelism.",
        MemPart::Weights | MemPart::Transformer | MemPart::Mlp | MemPart::Emb | MemPart::Buffers => "Spread the weights over more GPUs (more tensor or pipeline parallelism; when training, FSDP or ZeRO stage 3), or keep them in fewer bytes (FP8).",
        MemPart::Gradients | MemPart::OptimizerStates => "Shard them over the data-parallel GPUs (ZeRO stage 1 shards the optimizer states, stage 2 the gradients too, stage 3 or FSDP the weights as well), or use more tensor or pipeline parallelism.",
        MemPart::KvCache => "Serve fewer requests at once or shorter ones, keep keys and values in FP8, or spread them over more GPUs with tensor parallelism.",
    }
}

/// What limits or invalidates a result, as sentences that say what to change.
pub fn limit(l: &Limit) -> String {
    match l {
        Limit::DoesNotFit { need_bytes, capacity_bytes, largest, largest_bytes } => format!(
            "Does not fit: this plan needs {} per GPU and the GPU has {}. The largest part is {} ({}). {}",
            units::bytes(*need_bytes),
            units::bytes(*capacity_bytes),
            largest.label().to_lowercase(),
            units::bytes(*largest_bytes),
            shrink(*largest)
        ),
        Limit::Overloaded { asked_per_s, most_per_s } => format!(
            "Overloaded: requests arrive at {} and the engine completes at most {}, so the queue grows without end; the figures are those at full load. Lower the rate, or add replicas or GPUs.",
            units::si(*asked_per_s, "requests/s"),
            units::si(*most_per_s, "requests/s")
        ),
        Limit::InputBound { loader_samples_per_s, compute_samples_per_s, by } => format!(
            "Input-bound: the data loader delivers {}{} and the GPUs could process {}; the GPUs wait for data.",
            units::si(*loader_samples_per_s, "samples/s"),
            match by {
                LoaderBound::Given => "",
                LoaderBound::Decoding => " (as fast as its decoders go),",
                LoaderBound::Storage => " (as fast as storage reads),",
            },
            units::si(*compute_samples_per_s, "samples/s")
        ),
        Limit::HostBound { gpu_s, host_s, tp } => format!(
            "Host-bound: a layer's forward pass gives each GPU {} of work, and the host needs {} to issue it (Python, PyTorch, the framework), so the GPUs wait. A larger micro-batch or less tensor parallelism gives each block more work; CUDA graphs or a compiled model issue it faster.{}",
            units::duration(*gpu_s),
            units::duration(*host_s),
            if *tp == 8 { format!(" {}", crate::accuracy::TP8_HOST_NOTE) } else { String::new() }
        ),
        Limit::PacedBy { second_paces, second_gpu, other_iteration_s } => {
            let (slow, fast) = if *second_paces {
                (format!("{second_gpu} nodes"), "other nodes".to_string())
            } else {
                ("nodes of the first GPU type".to_string(), format!("{second_gpu} nodes"))
            };
            format!(
                "Paced by the {slow}: every synchronous step waits for its slowest GPU, so the {fast}, which alone would take {} per iteration, wait the rest of the time. Time and throughput are the {slow}'; memory is the type's closest to its HBM.",
                units::duration(*other_iteration_s)
            )
        }
    }
}

/// What limits a result, in a few words, for lists of results (the library's stories); the
/// calculator and the CLI say more ([`limit`]).
pub fn limit_brief(l: &Limit) -> String {
    match l {
        Limit::DoesNotFit { need_bytes, capacity_bytes, .. } => {
            format!("does not fit: needs {} of {}", units::bytes(*need_bytes), units::bytes(*capacity_bytes))
        }
        Limit::InputBound { compute_samples_per_s, .. } => {
            format!("input-bound: the GPUs could do {}", units::si(*compute_samples_per_s, "samples/s"))
        }
        Limit::Overloaded { most_per_s, .. } => format!("overloaded: at most {}", units::si(*most_per_s, "requests/s")),
        Limit::HostBound { host_s, .. } => format!("host-bound: {} per layer to issue", units::duration(*host_s)),
        Limit::PacedBy { second_paces: true, second_gpu, .. } => format!("paced by the {second_gpu} nodes"),
        Limit::PacedBy { .. } => "paced by the first GPU type".to_string(),
    }
}

/// The latencies of `o` that miss the search's limits, each worded by its template ("{}" is the
/// duration), joined by "and".
fn latencies_missed(o: &Outcome, tpot: &str, ttft: &str) -> String {
    let missed = [(o.over_tpot, tpot, o.tpot_s), (o.over_ttft, ttft, o.ttft_s)];
    missed
        .iter()
        .filter(|m| m.0)
        .map(|(_, words, s)| words.replace("{}", &units::duration(s.unwrap_or(0.0))))
        .collect::<Vec<_>>()
        .join(" and ")
}

/// What applying a plan changed, as a sentence: throughput, iteration time and memory per GPU
/// after and before ("Plan applied: 223 samples/s (was 133, 1.68x), iteration 9.17 s (was
/// 15.4 s), 24.1 GB per GPU (was 102 GB).").
pub fn applied(before: &Report, after: &Report) -> String {
    let ratio = if before.throughput_samples_per_s > 0.0 {
        format!(", {}x", units::sig3(after.throughput_samples_per_s / before.throughput_samples_per_s))
    } else {
        String::new()
    };
    format!(
        "Plan applied: {} (was {}{ratio}), iteration {} (was {}), {} per GPU (was {}).",
        units::si(after.throughput_samples_per_s, "samples/s"),
        units::si(before.throughput_samples_per_s, "samples/s"),
        units::duration(after.iteration_s),
        units::duration(before.iteration_s),
        units::bytes(after.memory.total_bytes),
        units::bytes(before.memory.total_bytes),
    )
}

/// `text` with its first letter upper-case.
pub fn capitalised(text: &str) -> String {
    let mut c = text.chars();
    c.next().map_or(String::new(), |f| f.to_uppercase().chain(c).collect())
}

/// Items as a sentence lists them: "a", "a and b", "a, b and c".
pub fn listed<S: AsRef<str>>(items: &[S]) -> String {
    match items {
        [] => String::new(),
        [one] => one.as_ref().to_owned(),
        [rest @ .., last] => {
            format!("{} and {}", rest.iter().map(AsRef::as_ref).collect::<Vec<_>>().join(", "), last.as_ref())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::explore::{search, Space};

    #[test]
    fn a_limit_in_brief_names_it_and_its_figure() {
        let fit = Limit::DoesNotFit {
            need_bytes: 120e9,
            capacity_bytes: 80e9,
            largest: crate::engine::report::MemPart::Weights,
            largest_bytes: 70e9,
        };
        assert_eq!(limit_brief(&fit), "does not fit: needs 120 GB of 80.0 GB");
        assert!(limit(&fit).starts_with("Does not fit: this plan needs 120 GB per GPU and the GPU has 80.0 GB."));
        let host = Limit::HostBound { gpu_s: 1e-4, host_s: 4.6e-4, tp: 8 };
        assert_eq!(limit_brief(&host), "host-bound: 460 \u{b5}s per layer to issue");
        let busy = Limit::Overloaded { asked_per_s: 20.0, most_per_s: 12.5 };
        assert_eq!(limit_brief(&busy), "overloaded: at most 12.5 requests/s");
    }

    #[test]
    fn a_gain_names_the_workload_and_both_plans() {
        let plans = crate::paper::Plans {
            own: "MLP ddp 64".into(),
            own_samples_per_s: 9310.0,
            own_exposed_share: 0.999,
            best: "MLP ddp 8 x pp 8".into(),
            best_samples_per_s: 1.56e6,
            best_exposed_share: 0.726,
        };
        let g = Gain { workload: "dlrm_x".into(), task: "training", speedup: 167.4, plans };
        assert_eq!(
            gain(&g),
            "167x on dlrm_x (training): its own plan, MLP ddp 64, runs 9.31 k samples/s, 99.9 % of its communication exposed; the best plan that fits, MLP ddp 8 x pp 8, runs 1.56 M samples/s, 72.6 % exposed."
        );
        let served = Gain { task: "inference", ..g };
        assert!(gain(&served).contains("requests/s"));
    }

    #[test]
    fn a_spread_of_lengths_says_its_median_and_tail_and_a_mix_its_kinds() {
        let serving = |task: serde_json::Value| {
            let p = crate::presets::all().expect("presets");
            let preset = p.scenario("serve__llama2_70b__h100_sxm_4__fp8").expect("a serving preset");
            let [model, system, mut configured] = p.configs(preset).expect("its configs");
            for (k, v) in task.as_object().expect("an object") {
                configured.insert(k.clone(), v.clone());
            }
            let file = serde_json::json!({ "model": model, "system": system, "task": configured });
            let raw = serde_json::from_value::<crate::engine::raw::RawFile>(file).expect("raw").into_scenario();
            let s = crate::engine::validate(&raw.expect("configs")).expect("valid");
            crate::engine::evaluate(&s).serving.expect("serving")
        };
        let base = serde_json::json!({"batching": "inflight", "input_tokens": 230, "output_tokens": 203});
        assert_eq!(request_kinds(&serving(base.clone())), None);
        let mut spread = base.clone();
        spread["length_spread"] = serde_json::json!("exponential");
        // 203 ln 2 = 140.7, 203 ln 100 = 934.8, 230 ln 2 = 159.4.
        assert_eq!(
            request_kinds(&serving(spread)).as_deref(),
            Some("Request lengths vary: prompts and answers each spread exponentially around their means (230 and 203 tokens), so half the answers are under 141 tokens and one in a hundred over 935 (half the prompts under 159); served as 256 kinds of request of equal share.")
        );
        let mix = serde_json::json!({"batching": "inflight", "input_tokens": null, "output_tokens": null, "request_mix": "256/128:3, 4096/512:1"});
        assert_eq!(
            request_kinds(&serving(mix)).as_deref(),
            Some("Requests: 75.0% of 256 prompt + 128 generated tokens, 25.0% of 4096 prompt + 512 generated tokens; 1216 + 224 tokens on average.")
        );
    }

    #[test]
    fn a_staged_search_says_how_many_plans_it_tried_every_setting_on() {
        assert_eq!(settings_searched(SettingsSearched::Every), None);
        assert_eq!(settings_searched(SettingsSearched::NotApplicable), None);
        let some = settings_searched(SettingsSearched::Best(32)).expect("a sentence");
        assert!(some.contains("those that cost no time (the overlap options, sequence parallelism, ZeRO-1; a pipeline at 4 micro-batches per stage or more), and the 32 most promising"), "{some}");
        let one = settings_searched(SettingsSearched::Best(1)).expect("a sentence");
        assert!(one.contains("and the most promising plan with every one that fits."), "{one}");
        let none = settings_searched(SettingsSearched::Best(0)).expect("a sentence");
        assert!(none.contains("no plan could be tried with other settings"), "{none}");
    }

    #[test]
    fn a_plan_that_cannot_run_says_why_and_one_that_can_says_nothing() {
        let raw = crate::presets::scenario_raw(crate::presets::PAPER_LLAMA2_70B).expect("the paper's LLaMA2-70B");
        let s = crate::engine::validate(&raw).expect("valid");
        let r = search(&s, &Space::fixed_global(&s)).expect("within budget");
        let fits = r.ranked.iter().find(|o| o.fits()).expect("a plan fits");
        assert_eq!((cannot_run(fits), misfit_mark(fits)), (None, None));
        let mut big = fits.clone();
        big.memory_bytes = 83.1e9;
        big.capacity_bytes = 40e9;
        assert_eq!(cannot_run(&big).as_deref(), Some("it needs 83.1 GB of the GPU's 40.0 GB"));
        assert_eq!(misfit_mark(&big).as_deref(), Some("does not fit in HBM"));
        let mut slow = fits.clone();
        slow.over_tpot = true;
        slow.tpot_s = Some(0.0625);
        assert_eq!(cannot_run(&slow).as_deref(), Some("it takes 62.5 ms per output token, over the limit"));
        assert_eq!(misfit_mark(&slow).as_deref(), Some("over the latency limit: 62.5 ms per output token"));
        slow.over_ttft = true;
        slow.ttft_s = Some(2.5);
        assert_eq!(
            cannot_run(&slow).as_deref(),
            Some("it takes 62.5 ms per output token and its first token comes after 2.50 s, over the limit")
        );
        slow.over_tpot = false;
        assert_eq!(misfit_mark(&slow).as_deref(), Some("over the latency limit: first token after 2.50 s"));
    }

    #[test]
    fn the_critical_path_says_what_it_runs_through_and_an_op_its_slack() {
        let raw = crate::presets::scenario_raw(crate::presets::PAPER_LLAMA2_70B).expect("the paper's LLaMA2-70B");
        let r = crate::engine::evaluate(&crate::engine::validate(&raw).expect("valid"));
        let cp = r.critical_path();
        let said = critical_path(&r, &cp);
        assert!(said.starts_with("computation ") && said.contains(", communication "), "{said}");
        assert!(said.contains(&format!(" of {} ops; the others could take longer", r.timeline.len())), "{said}");
        let t = cp.time(&r.timeline);
        assert_eq!(said.contains("idle"), t.idle_s > 0.0, "{said}");
        // A timeline whose every op waits for the one before: no others to speak of.
        let mut all = cp.clone();
        all.ops = (0..r.timeline.len() as u32).collect();
        assert!(critical_path(&r, &all).ends_with(&format!("(all {} ops)", r.timeline.len())));
        assert_eq!(
            slack(0.0, &r),
            "On the critical path: each microsecond it takes longer, the iteration takes longer too."
        );
        assert_eq!(slack(0.0125, &r), "Slack 12.5 ms: it could end that much later without delaying the iteration.");
    }

    #[test]
    fn twice_as_fast_says_what_an_op_and_its_kind_would_save() {
        let raw = crate::presets::scenario_raw(crate::presets::PAPER_LLAMA2_70B).expect("the paper's LLaMA2-70B");
        let r = crate::engine::evaluate(&crate::engine::validate(&raw).expect("valid"));
        let cp = r.critical_path();
        // An op with slack saves nothing alone; the longest op on the path saves time.
        let idle =
            (0..r.timeline.len()).find(|&i| cp.slack_s[i] > 0.0 && r.timeline[i].duration_s > 0.0).expect("slack");
        let said = twice_as_fast(&r, idle).expect("an op");
        assert!(
            said.starts_with("At twice its speed, this op") && said.contains("the iteration would take "),
            "{said}"
        );
        assert!(said.contains(", no shorter"), "{said}");
        let busy = cp
            .ops
            .iter()
            .map(|&i| i as usize)
            .max_by(|a, b| r.timeline[*a].duration_s.total_cmp(&r.timeline[*b].duration_s));
        let said = twice_as_fast(&r, busy.expect("a path")).expect("an op");
        assert!(said.contains(" less, -") && said.contains(" ops, the same block, op and pass)"), "{said}");
        assert_eq!(twice_as_fast(&r, r.timeline.len()), None);
    }

    #[test]
    fn twice_as_fast_keeps_a_collectives_wait_for_its_launch_thread() {
        // NVIDIA's TensorFlow 2 DLRM on eight A100s: Horovod launches its collectives every 1 ms.
        let row = crate::accuracy::shipped_row("nvidia-tf2-dlrm-a10080g-8gpu-large-fp16").expect("the row");
        let doc = row.scenario.expect("a scenario");
        let raw = serde_json::from_value::<crate::engine::RawFile>(doc).expect("configs").into_scenario().expect("raw");
        let s = crate::engine::validate(&raw).expect("valid");
        let r = crate::engine::evaluate(&s);
        let cp = r.critical_path();
        // A collective on the critical path that waited for the thread.
        let (i, wait_s) = r
            .launch_waits
            .iter()
            .map(|&(i, w)| (i as usize, w))
            .find(|&(i, _)| cp.slack_s[i] == 0.0)
            .expect("a waiting collective on the path");
        assert!(wait_s > 0.0 && wait_s < r.timeline[i].duration_s, "{wait_s}");
        assert_eq!((r.launch_wait_s(i), r.launch_wait_s(0)), (wait_s, 0.0));
        // Its explanation names the same wait.
        let e = crate::engine::explain(&s, &r.timeline[i].name).expect("explained");
        let term = e.terms.iter().find(|t| t.symbol == crate::engine::LAUNCH_WAIT).expect("the wait");
        assert_eq!(term.value, wait_s);
        // Twice as fast halves the transfer only: the iteration ends later than if the whole op
        // halved, as the sentence says.
        let d = r.timeline[i].duration_s;
        let kept = r.end_with(|k, o| if k == i { wait_s + (d - wait_s) / 2.0 } else { o.duration_s });
        let halved = r.end_with(|k, o| if k == i { d / 2.0 } else { o.duration_s });
        assert!(kept > halved, "{kept} {halved}");
        let said = twice_as_fast(&r, i).expect("an op");
        assert!(said.contains(&format!("would take {} (", units::duration(kept))), "{said}");
    }

    #[test]
    fn each_limit_says_what_it_is_and_what_to_change() {
        use crate::engine::report::MemPart;
        let fit = limit(&Limit::DoesNotFit {
            need_bytes: 83.1e9,
            capacity_bytes: 40e9,
            largest: MemPart::Activations,
            largest_bytes: 78.2e9,
        });
        assert!(
            fit.starts_with("Does not fit: this plan needs 83.1 GB per GPU and the GPU has 40.0 GB.")
                && fit.ends_with("Turn on activation recomputation, use a smaller micro-batch, or split each sequence with more tensor (with sequence parallelism), pipeline or context parallelism."),
            "{fit}"
        );
        // The advice acts on the largest part: weights are spread or made smaller, never
        // recomputed; optimizer states are sharded; a KV cache holds fewer requests.
        let advice = |largest| {
            limit(&Limit::DoesNotFit { need_bytes: 142e9, capacity_bytes: 85.5e9, largest, largest_bytes: 100e9 })
        };
        let weights = advice(MemPart::Weights);
        assert!(
            weights.contains("Spread the weights over more GPUs") && !weights.contains("recomputation"),
            "{weights}"
        );
        assert!(advice(MemPart::OptimizerStates).contains("ZeRO stage 1 shards the optimizer states"));
        assert!(advice(MemPart::KvCache).contains("Serve fewer requests at once"));
        let over = limit(&Limit::Overloaded { asked_per_s: 30.0, most_per_s: 12.5 });
        assert!(
            over.contains("30.0 requests/s")
                && over.contains("at most 12.5 requests/s")
                && over.ends_with("add replicas or GPUs."),
            "{over}"
        );
        let input = limit(&Limit::InputBound {
            loader_samples_per_s: 100.0,
            compute_samples_per_s: 250.0,
            by: LoaderBound::Given,
        });
        assert!(input.starts_with("Input-bound: the data loader delivers 100 samples/s"), "{input}");
        let host = |tp| limit(&Limit::HostBound { gpu_s: 0.2e-3, host_s: 0.46e-3, tp });
        assert!(host(8).ends_with(crate::accuracy::TP8_HOST_NOTE) && !host(4).contains(crate::accuracy::TP8_HOST_NOTE));
        assert!(host(4).contains("200 µs of work") && host(4).contains("CUDA graphs"), "{}", host(4));
    }

    #[test]
    fn applying_a_plan_says_what_changed() {
        let raw = crate::presets::scenario_raw(crate::presets::PAPER_LLAMA2_70B).expect("the paper's LLaMA2-70B");
        let s = crate::engine::validate(&raw).expect("valid");
        let before = crate::engine::evaluate(&s);
        let mut after = before.clone();
        after.throughput_samples_per_s *= 2.0;
        after.iteration_s /= 2.0;
        let text = applied(&before, &after);
        assert!(text.starts_with("Plan applied: ") && text.contains(", 2.00x), iteration "), "{text}");
        assert!(text.contains(&units::duration(before.iteration_s)), "{text}");
    }

    #[test]
    fn serving_figures_say_how_the_engine_batches_and_what_the_kv_cache_admits() {
        let p = crate::presets::all().expect("presets");
        let sc = p.scenarios.iter().find(|s| s.id == "serve__llama2_70b__h100_sxm_4__fp8").expect("serving preset");
        let mut doc = crate::doc::Doc::new(p.configs(sc).expect("configs"));
        let task = crate::doc::Config::Task;
        doc.set(task, "mode", serde_json::json!("default"));
        let serving = |doc: &crate::doc::Doc| {
            let s = crate::engine::validate(&doc.to_raw()).expect("valid");
            let r = crate::engine::evaluate(&s);
            (r.serving.clone().expect("serving"), timeline_span(&r))
        };
        let (sv, span) = serving(&doc);
        assert!(batching(&sv).starts_with("Static batching: 16 requests per replica"), "{}", batching(&sv));
        assert_eq!(span, "batch");
        doc.set(task, "batching", serde_json::json!("inflight"));
        doc.set(task, "local_transformer_bs", serde_json::json!(100_000));
        let (sv, span) = serving(&doc);
        let text = batching(&sv);
        assert!(
            text.starts_with(&format!("In-flight batching, steady state: {} requests in flight", sv.max_batch)),
            "{text}"
        );
        assert!(text.contains("the batch asks for 100000; the KV cache holds only these"), "{text}");
        assert_eq!(span, "engine step");
    }

    #[test]
    fn capitalised_upper_cases_the_first_letter_only() {
        assert_eq!(capitalised("iteration time (s)"), "Iteration time (s)");
        assert_eq!(capitalised("élan"), "Élan");
        assert_eq!(capitalised(""), "");
    }

    #[test]
    fn items_are_listed_with_commas_and_a_last_and() {
        assert_eq!(listed::<&str>(&[]), "");
        assert_eq!(listed(&["V100"]), "V100");
        assert_eq!(listed(&["V100", "A100"]), "V100 and A100");
        assert_eq!(listed(&["V100", "A100", "H100"]), "V100, A100 and H100");
    }
}
