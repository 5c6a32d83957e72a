//! A burst of requests sent at once to an engine batching in flight, run step by step until the
//! last finishes: how throughput benchmarks (`vllm bench serve --num-prompts N` with no rate,
//! vLLM's `benchmark_throughput.py`, SGLang's `bench_offline_throughput`) measure an engine.
//! Unlike the steady state ([`ServingCx::steady`]) it has a ramp, where the first prompts are
//! prefilled before anything decodes, and a drain, where the last requests decode with fewer
//! and fewer others: the benchmark's output tokens over its duration.

use super::{ServingCx, PERCENTILES};
use crate::engine::report::Percentiles;
use crate::engine::scenario::PrefillSteps;

/// One request of a burst, as the simulation follows it.
#[derive(Clone, Copy, Debug)]
struct Request {
    prompt: f64,
    output: u64,
    /// Tokens generated so far (the first comes when its prompt is prefilled).
    generated: u64,
    /// Tokens whose keys and values are in the cache.
    cached: f64,
    /// Tokens still to prefill before its next token: its prompt; after a preemption, every
    /// token it has (recomputed); 0 while it decodes.
    to_prefill: f64,
    /// When its first token came, s.
    first_s: Option<f64>,
}

impl Request {
    /// KV pages of `page` tokens it holds with `tokens` cached.
    fn pages(tokens: f64, page: f64) -> f64 {
        (tokens / page).ceil()
    }

    /// The further pages it needs to cache `tokens` more.
    fn more_pages(&self, tokens: f64, page: f64) -> f64 {
        Request::pages(self.cached + tokens, page) - Request::pages(self.cached, page)
    }
}

/// A burst's figures, per replica ([`ServingCx::burst`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Burst {
    /// Requests the replica was sent, and their generated tokens.
    pub requests: u64,
    pub output_tokens: f64,
    /// From the burst's arrival to its last token, s.
    pub makespan_s: f64,
    /// Each request's time to first token, time per output token after the first (`(e2e -
    /// ttft) / (output - 1)`; requests of one token have none) and end-to-end latency, s, in
    /// the order the requests were sent.
    pub ttft_s: Vec<f64>,
    pub tpot_s: Vec<f64>,
    pub e2e_s: Vec<f64>,
    /// Engine steps the burst took.
    pub steps: u64,
    /// Tokens prefilled again after preemptions: the KV cache ran out of pages and requests
    /// lost theirs.
    pub recomputed_tokens: f64,
    /// Requests in flight, on average over the burst's duration.
    pub mean_in_flight: f64,
}

/// Which of a request's latencies ([`Burst::ttft_s`], [`Burst::tpot_s`], [`Burst::e2e_s`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Latency {
    Ttft,
    Tpot,
    E2e,
}

impl Burst {
    fn latencies(&self, f: Latency) -> &[f64] {
        match f {
            Latency::Ttft => &self.ttft_s,
            Latency::Tpot => &self.tpot_s,
            Latency::E2e => &self.e2e_s,
        }
    }
}

/// A burst over the replicas ([`ServingCx::burst_over_replicas`]): each replica's run, and how
/// many replicas ran it (the requests split evenly, the first replicas one more when they do
/// not divide).
#[derive(Clone, Debug, PartialEq)]
pub struct Bursts {
    pub runs: Vec<(Burst, u64)>,
}

impl Bursts {
    /// Requests sent, and tokens they generated, over the cluster.
    pub fn requests(&self) -> u64 {
        self.runs.iter().map(|(b, n)| b.requests * n).sum()
    }

    pub fn output_tokens(&self) -> f64 {
        self.runs.iter().map(|(b, n)| b.output_tokens * *n as f64).sum()
    }

    /// Requests in flight per replica on average over the burst: the busiest replica's.
    pub fn mean_in_flight(&self) -> f64 {
        self.runs.first().map_or(0.0, |(b, _)| b.mean_in_flight)
    }

    /// Tokens prefilled again after preemptions, over the cluster.
    pub fn recomputed_tokens(&self) -> f64 {
        self.runs.iter().map(|(b, n)| b.recomputed_tokens * *n as f64).sum()
    }

    /// From the burst's arrival to the last token on any replica, s.
    pub fn makespan_s(&self) -> f64 {
        self.runs.iter().map(|(b, _)| b.makespan_s).fold(0.0, f64::max)
    }

    /// The mean of a figure over the requests, s (0 when none has it).
    pub fn mean(&self, f: Latency) -> f64 {
        let (sum, count) = self.runs.iter().fold((0.0, 0.0), |(s, c), (b, n)| {
            let of = b.latencies(f);
            (s + of.iter().sum::<f64>() * *n as f64, c + (of.len() as u64 * n) as f64)
        });
        if count > 0.0 {
            sum / count
        } else {
            0.0
        }
    }

    /// The `q`-quantile of a figure over the requests: the smallest value that at least a share
    /// `q` of them do not exceed, s (0 when none has it).
    pub fn quantile(&self, f: Latency, q: f64) -> f64 {
        let mut all: Vec<(f64, u64)> =
            self.runs.iter().flat_map(|(b, n)| b.latencies(f).iter().map(move |&x| (x, *n))).collect();
        crate::engine::order::sort_by(&mut all, |a, b| a.0.total_cmp(&b.0));
        let total: u64 = all.iter().map(|(_, n)| n).sum();
        let need = (q * total as f64).ceil().max(1.0);
        let mut seen = 0.0;
        for (x, n) in &all {
            seen += *n as f64;
            if seen >= need {
                return *x;
            }
        }
        0.0
    }

    /// The [`PERCENTILES`] of the requests' first token, time per output token and end-to-end
    /// latency, s.
    pub fn percentiles(&self) -> Percentiles {
        let of = |f: Latency| PERCENTILES.map(|q| self.quantile(f, q));
        Percentiles { ttft_s: of(Latency::Ttft), tpot_s: of(Latency::Tpot), e2e_s: of(Latency::E2e) }
    }
}

impl<'a> ServingCx<'a> {
    /// `n` requests sent at once to the cluster: split evenly over the replicas (a router's
    /// round robin), each replica running its share as [`ServingCx::burst`] does.
    pub fn burst_over_replicas(&self, n: u64) -> Bursts {
        let replicas = self.cx.lay.dense_dp.size.max(1);
        let (each, more) = (n / replicas, n % replicas);
        let mut runs = Vec::new();
        if more > 0 {
            runs.push((self.burst(each + 1), more));
        }
        if each > 0 {
            runs.push((self.burst(each), replicas - more));
        }
        Bursts { runs }
    }

    /// The kinds of request, in the order a burst of `n` sends them: each next request is of the
    /// kind furthest behind its share (so a mix is spread through the burst, not sent kind after
    /// kind), ties to the first kind.
    fn burst_order(&self, n: u64) -> Vec<usize> {
        let mut sent = vec![0.0_f64; self.classes.len()];
        (0..n)
            .map(|j| {
                let target = (j + 1) as f64;
                let behind = |k: usize| self.classes[k].share * target - sent[k];
                let k = (0..self.classes.len()).fold(0, |best, k| if behind(k) > behind(best) { k } else { best });
                sent[k] += 1.0;
                k
            })
            .collect()
    }

    /// `n` requests sent at once to one replica, served as an engine batching in flight serves
    /// them (vLLM's V1 scheduler): at most the batch in flight, admitted in the order sent
    /// while the paged KV cache has pages for their prompts (the pages left next to the
    /// weights and a full step's activations, [`ServingCx::inflight_memory`]). Each step
    /// decodes a token for every request past its prompt, in the order admitted, and fills the
    /// rest of the token budget ([`crate::engine::scenario::Setup::step_tokens`]) with prompt
    /// chunks: those under way first, then new requests. When a decoding request needs a page
    /// and none is free, the last request admitted is preempted: its pages freed, it waits at
    /// the head of the queue and later prefills every token it has again (vLLM's
    /// recomputation); no request starts in that step. A request alone in flight runs even
    /// where its pages do not fit (the report's memory says so), so every burst ends. A step
    /// takes [`ServingCx::engine_step`]'s time for its tokens; runs of steps that only decode,
    /// where nothing can change until a request finishes or runs out of pages, are taken at
    /// once (the step's context is the steady state's mean).
    ///
    /// With prompts in steps of their own ([`PrefillSteps::Separate`], as SGLang and vLLM before
    /// V1 run them) a step either prefills or decodes: between rounds of
    /// [`crate::engine::scenario::Setup::scheduler_steps`] decode steps, a step of prompts (those
    /// under way, then new ones, up to the budget) whenever one can start or go on, no request
    /// decoding in it; otherwise a round of steps that decode every request past its prompt,
    /// ended early when nothing is left to decode.
    pub fn burst(&self, n: u64) -> Burst {
        let page = self.cx.setup.kv_page_tokens.max(1) as f64;
        let budget = self.cx.setup.step_tokens as f64;
        let fixed = self.inflight_memory(0.0);
        let pages = ((fixed.capacity_bytes - fixed.total_bytes).max(0.0) / (page * self.kv_bytes_per_token())).floor();
        let cap = (self.batch.max(1.0)) as usize;
        let mut waiting: std::collections::VecDeque<Request> = self
            .burst_order(n)
            .iter()
            .map(|&k| {
                let c = &self.classes[k];
                let prompt = c.input_tokens as f64;
                Request {
                    prompt,
                    output: c.output_tokens.max(1),
                    generated: 0,
                    cached: 0.0,
                    to_prefill: prompt,
                    first_s: None,
                }
            })
            .collect();
        let mut running: Vec<Request> = Vec::with_capacity(cap.min(n as usize));
        let (mut ttft_s, mut tpot_s, mut e2e_s) = (Vec::new(), Vec::new(), Vec::new());
        let (mut t, mut steps, mut output_tokens, mut recomputed_tokens, mut in_flight_s) = (0.0, 0u64, 0.0, 0.0, 0.0);
        let separate = self.cx.setup.prefill_steps == PrefillSteps::Separate;
        let rounds = self.cx.setup.scheduler_steps.max(1);
        // Decode steps left in the round under way (prompts in steps of their own).
        let mut round_left = 0u64;
        while !(waiting.is_empty() && running.is_empty()) {
            let mut free = pages - running.iter().map(|r| Request::pages(r.cached, page)).sum::<f64>();
            let alone = running.len() == 1;
            // A round ends early when nothing is left to decode.
            if running.iter().all(|r| r.to_prefill > 0.0) {
                round_left = 0;
            }
            // Prompts in steps of their own: between rounds, a step of prompts whenever one can
            // start or go on; otherwise a round of decode steps.
            let prefill_step = separate
                && round_left == 0
                && (running.iter().any(|r| r.to_prefill > 0.0) || (!waiting.is_empty() && running.len() < cap));
            if separate && round_left == 0 && !prefill_step {
                round_left = rounds;
            }
            // Decode tokens first, in the order admitted; a page short preempts from the back.
            let mut i = if prefill_step { running.len() } else { 0 };
            let mut preempted = false;
            while i < running.len() {
                if running[i].to_prefill > 0.0 {
                    i += 1;
                    continue;
                }
                let need = running[i].more_pages(1.0, page);
                while need > free && running.len() > i + 1 {
                    let (pages, tokens) = preempt(&mut running, &mut waiting, page);
                    free += pages;
                    recomputed_tokens += tokens;
                    preempted = true;
                }
                if need > free && !alone {
                    recomputed_tokens += preempt(&mut running, &mut waiting, page).1;
                    preempted = true;
                    break;
                }
                free -= need;
                i += 1;
            }
            let decoding = if prefill_step { 0 } else { running.iter().filter(|r| r.to_prefill <= 0.0).count() };
            // Prompt chunks in the room left: those under way, then new requests in order; none
            // in a decode round.
            let mut room = if separate && !prefill_step { 0.0 } else { (budget - decoding as f64).max(0.0) };
            let mut chunks = vec![0.0; running.len()];
            for (r, chunk) in running.iter().zip(chunks.iter_mut()) {
                if r.to_prefill > 0.0 && room > 0.0 {
                    let fits =
                        if alone { f64::INFINITY } else { (Request::pages(r.cached, page) + free) * page - r.cached };
                    *chunk = r.to_prefill.min(room).min(fits.max(0.0));
                    free -= r.more_pages(*chunk, page);
                    room -= *chunk;
                }
            }
            // No request starts in a step that preempted one (vLLM's scheduler).
            while room > 0.0 && running.len() < cap && !preempted {
                let Some(next) = waiting.front() else { break };
                let chunk = next.to_prefill.min(room);
                let need = Request::pages(chunk, page);
                // Nothing else runs: the request is served even where its pages do not fit.
                if need > free && !running.is_empty() {
                    break;
                }
                if let Some(r) = waiting.pop_front() {
                    running.push(r);
                    chunks.push(chunk);
                    free -= need;
                    room -= chunk;
                }
            }
            let prefill: f64 = chunks.iter().sum();
            if prefill_step && prefill <= 0.0 && running.iter().any(|r| r.to_prefill <= 0.0) {
                // No prompt has a page: the requests decoding go on.
                round_left = rounds;
                continue;
            }
            if prefill <= 0.0 && running.iter().all(|r| r.to_prefill > 0.0) {
                // Prompts under way and not a page for any: the last admitted gives its pages
                // back (the first ones then go on).
                recomputed_tokens += preempt(&mut running, &mut waiting, page).1;
                continue;
            }
            let finishing = running.iter().zip(&chunks).filter(|(r, c)| **c > 0.0 && **c >= r.to_prefill).count();
            // A run of steps that only decode: until a request finishes or a page runs out.
            let repeat = if prefill > 0.0 || decoding == 0 {
                1
            } else {
                let mut most = running.iter().map(|r| r.output - r.generated).min().unwrap_or(1).max(1);
                // A round's end matters where a prompt could then start: a place and the pages
                // for its first step (pages only run out over the run).
                let could_start = waiting.front().is_some_and(|next| {
                    running.len() < cap && Request::pages(next.to_prefill.min(budget), page) <= free
                });
                if separate && could_start {
                    most = most.min(round_left.max(1));
                }
                // The pages the decode loop set aside for this step are the run's too. A request
                // running alone is served whether or not its pages fit, so it runs to its end
                // (or the round's) in one go: nothing else can start while it holds the cache.
                let room_pages = free + running.iter().map(|r| r.more_pages(1.0, page)).sum::<f64>();
                let fits =
                    |k: u64| alone || running.iter().map(|r| r.more_pages(k as f64, page)).sum::<f64>() <= room_pages;
                let (mut lo, mut hi) = (1, most);
                while lo < hi {
                    let mid = lo + (hi - lo).div_ceil(2);
                    if fits(mid) {
                        lo = mid;
                    } else {
                        hi = mid - 1;
                    }
                }
                lo
            };
            if separate && decoding > 0 {
                round_left = round_left.saturating_sub(repeat);
            }
            let step_s = self.engine_step(decoding as f64, prefill, finishing as f64).seconds;
            t += repeat as f64 * step_s;
            in_flight_s += running.len() as f64 * repeat as f64 * step_s;
            steps += repeat;
            for (r, chunk) in running.iter_mut().zip(&chunks) {
                if r.to_prefill <= 0.0 && !prefill_step {
                    r.cached += repeat as f64;
                    r.generated += repeat;
                } else if *chunk > 0.0 {
                    r.cached += chunk;
                    r.to_prefill -= chunk;
                    if r.to_prefill <= 0.0 {
                        r.to_prefill = 0.0;
                        r.generated += 1;
                        r.first_s.get_or_insert(t);
                    }
                }
            }
            running.retain(|r| {
                let done = r.to_prefill <= 0.0 && r.generated >= r.output;
                if done {
                    let first = r.first_s.unwrap_or(t);
                    ttft_s.push(first);
                    e2e_s.push(t);
                    if r.output > 1 {
                        tpot_s.push((t - first) / (r.output - 1) as f64);
                    }
                    output_tokens += r.output as f64;
                }
                !done
            });
        }
        let mean_in_flight = if t > 0.0 { in_flight_s / t } else { 0.0 };
        Burst {
            requests: n,
            output_tokens,
            makespan_s: t,
            ttft_s,
            tpot_s,
            e2e_s,
            steps,
            recomputed_tokens,
            mean_in_flight,
        }
    }
}

/// Preempts the last request admitted: frees its pages and puts it back at the head of the
/// queue, to prefill every token it has again. Returns the pages freed and the tokens it had
/// cached (to be prefilled again).
fn preempt(running: &mut Vec<Request>, waiting: &mut std::collections::VecDeque<Request>, page: f64) -> (f64, f64) {
    let Some(mut r) = running.pop() else { return (0.0, 0.0) };
    let (freed, lost) = (Request::pages(r.cached, page), r.cached);
    r.cached = 0.0;
    r.to_prefill = r.prompt + r.generated as f64;
    waiting.push_front(r);
    (freed, lost)
}

#[cfg(test)]
mod tests {
    use super::super::tests_support::{inflight, llama70};
    use super::*;
    use crate::engine::extended::rules::{self, MAX_BURST_REQUESTS};
    use serde_json::json;

    #[test]
    fn a_burst_no_larger_than_the_engine_takes_is_its_prompts_then_its_decode_steps() {
        // 8 prompts of 256 tokens fill one step of 2,048 tokens; then 255 steps decode all 8.
        let s = inflight(8, json!({"input_tokens": 256, "output_tokens": 256, "step_tokens": 2048}));
        let sv = ServingCx::new(&s).expect("serving");
        let b = sv.burst(8);
        let first = sv.engine_step(0.0, 2048.0, 8.0).seconds;
        let decode = sv.engine_step(8.0, 0.0, 0.0).seconds;
        assert_eq!(b.steps, 1 + 255, "{b:?}");
        assert!((b.makespan_s - (first + 255.0 * decode)).abs() < 1e-12 * b.makespan_s);
        assert!(b.ttft_s.iter().all(|&t| t == first), "{:?}", b.ttft_s);
        assert!(b.tpot_s.iter().all(|&t| (t - decode).abs() < 1e-12 * decode));
        assert_eq!(b.output_tokens, 8.0 * 256.0);
        // Steps of 1,024 tokens: four prompts, then three and most of the eighth beside the four
        // decoding, then its last 4 tokens beside seven: its first token comes at the third
        // step, its last 255 steps later, and the first four finish two steps before it.
        let s = inflight(8, json!({"input_tokens": 256, "output_tokens": 256, "step_tokens": 1024}));
        let sv = ServingCx::new(&s).expect("serving");
        let b = sv.burst(8);
        assert_eq!(b.steps, 3 + 255, "{b:?}");
        assert_eq!(b.ttft_s[0], sv.engine_step(0.0, 1024.0, 4.0).seconds);
        assert!(b.ttft_s[0] < b.ttft_s[4] && b.ttft_s[4] < b.ttft_s[7], "{:?}", b.ttft_s);
        let last = b.e2e_s.iter().copied().fold(0.0, f64::max);
        assert!((b.makespan_s - last).abs() < 1e-12 * last);
    }

    #[test]
    fn a_burst_larger_than_the_engine_takes_waits_for_places_and_drains_at_the_end() {
        let s = inflight(64, json!({"input_tokens": 256, "output_tokens": 128}));
        let sv = ServingCx::new(&s).expect("serving");
        let steady = sv.steady(64.0);
        // Ten times what the engine takes: the requests queue, so the last first token comes
        // late, and the burst's throughput stays under the steady state's (ramp and drain).
        let b = sv.burst(640);
        assert_eq!(b.e2e_s.len(), 640);
        let per_s = b.output_tokens / b.makespan_s;
        let steady_per_s = steady.requests_per_s * 128.0;
        assert!(per_s < steady_per_s, "{per_s} vs {steady_per_s}");
        // Not by much: nine tenths of the work runs at full load.
        assert!(per_s > 0.7 * steady_per_s, "{per_s} vs {steady_per_s}");
        let set = Bursts { runs: vec![(b.clone(), 1)] };
        assert!(set.quantile(Latency::Ttft, 1.0) > 9.0 * set.quantile(Latency::Ttft, 0.05), "{:?}", &b.ttft_s[..8]);
        // A burst of one is one request alone: its prompt, then its steps.
        let one = sv.burst(1);
        assert_eq!(one.steps, 1 + 127);
        assert!((one.makespan_s - one.e2e_s[0]).abs() < 1e-15);
    }

    #[test]
    fn a_burst_of_spread_lengths_sends_every_kind_in_turn_and_drains_on_its_longest_answers() {
        let task = |spread: &str| json!({"input_tokens": 256, "output_tokens": 128, "length_spread": spread});
        let (fixed_s, spread_s) = (inflight(64, task("fixed")), inflight(64, task("exponential")));
        let (fixed, spread) = (ServingCx::new(&fixed_s).expect("serving"), ServingCx::new(&spread_s).expect("serving"));
        // The kinds go out in their listed order, each once per 256 requests.
        assert_eq!(spread.burst_order(512), (0..512).map(|k| k % 256).collect::<Vec<usize>>());
        let (a, b) = (fixed.burst(640), spread.burst(640));
        let mean_answer: f64 = spread.classes.iter().map(|c| c.share * c.output_tokens as f64).sum();
        assert!((b.output_tokens - 640.0 * mean_answer).abs() < 1e-9 * b.output_tokens);
        assert!((mean_answer / 128.0 - 1.0).abs() < 0.01, "{mean_answer}");
        // The same work on average, but the longest answers (3.8 means) finish last, in steps
        // of a few requests: the burst takes longer.
        assert!(b.makespan_s > 1.1 * a.makespan_s, "{} vs {}", b.makespan_s, a.makespan_s);
        // Its slowest request ends later (the median mostly waits for a place, as long in both).
        let q = |x: &Burst, p: f64| Bursts { runs: vec![(x.clone(), 1)] }.quantile(Latency::E2e, p);
        assert!(q(&b, 1.0) > 1.1 * q(&a, 1.0), "{} vs {}", q(&b, 1.0), q(&a, 1.0));
    }

    #[test]
    fn a_mix_is_sent_spread_through_the_burst() {
        let s =
            inflight(16, json!({"request_mix": "128/64:3, 1024/512:1", "input_tokens": null, "output_tokens": null}));
        let sv = ServingCx::new(&s).expect("serving");
        assert_eq!(sv.burst_order(8), vec![0, 0, 1, 0, 0, 0, 1, 0]);
        let b = sv.burst(100);
        assert_eq!(b.output_tokens, 75.0 * 64.0 + 25.0 * 512.0);
        // The quantiles are of the requests: the median request is a short one.
        let set = Bursts { runs: vec![(b, 1)] };
        assert!(set.quantile(Latency::E2e, 0.5) < set.quantile(Latency::E2e, 0.99));
    }

    #[test]
    fn a_burst_is_reported_over_the_replicas_its_requests_split_between() {
        // Two replicas of tp 4: 101 requests are 51 on one and 50 on the other.
        let split = json!({"batching": "inflight", "transformer_parallel": ["tp", "ddp"],
            "transformer_parallel_degree": [4, 2], "output_tokens": 64, "burst_requests": 101});
        let s = llama70(8, 64, split);
        let sv = ServingCx::new(&s).expect("serving");
        let (big, small) = (sv.burst(51), sv.burst(50));
        let r = crate::engine::evaluate(&s);
        let fig = r.serving.as_ref().expect("serving");
        assert_eq!((fig.burst_requests, fig.makespan_s), (Some(101), Some(big.makespan_s)));
        let words = crate::wording::batching(fig);
        assert!(words.starts_with("In-flight batching, a burst: 101 requests sent at once"), "{words}");
        assert!(!words.contains("prefilled again"), "{words}");
        let close = |a: f64, b: f64| assert!((a - b).abs() <= 1e-12 * b.abs(), "{a} vs {b}");
        close(fig.output_tokens_per_s, 101.0 * 64.0 / big.makespan_s);
        close(fig.requests_per_s, 101.0 / big.makespan_s);
        let mean = |a: &[f64], b: &[f64]| (a.iter().sum::<f64>() + b.iter().sum::<f64>()) / 101.0;
        close(fig.ttft_s, mean(&big.ttft_s, &small.ttft_s));
        close(fig.tpot_s, mean(&big.tpot_s, &small.tpot_s));
        close(fig.e2e_s, mean(&big.e2e_s, &small.e2e_s));
        let p = fig.percentiles.as_ref().expect("a burst's percentiles");
        assert!(p.e2e_s[0] <= p.e2e_s[1] && p.e2e_s[1] <= p.e2e_s[2] && p.e2e_s[2] <= big.makespan_s, "{p:?}");
        // Without a burst the same scenario is the steady state.
        let mut steady = s.clone();
        steady.task.setup.burst_requests = None;
        let st = crate::engine::evaluate(&steady).serving.expect("serving");
        assert_eq!((st.burst_requests, st.makespan_s), (None, None));
        assert_ne!(st.output_tokens_per_s, fig.output_tokens_per_s);
    }

    #[test]
    fn a_burst_needs_in_flight_batching_no_rate_and_a_bounded_size() {
        let burst_errors = |extra: serde_json::Value, n: u64| {
            let mut s = llama70(4, 8, extra);
            s.task.setup.burst_requests = Some(n);
            rules::check(&s)
                .into_iter()
                .filter(|e| e.field == "task.burst_requests")
                .map(|e| e.message)
                .collect::<Vec<_>>()
        };
        assert!(burst_errors(json!({"batching": "inflight"}), 1000).is_empty());
        assert!(burst_errors(json!({}), 1000)[0].contains("in-flight batching"));
        assert!(burst_errors(json!({"batching": "inflight", "request_rate": 2.0}), 1000)[0].contains("clear one"));
        assert!(burst_errors(json!({"batching": "inflight"}), MAX_BURST_REQUESTS + 1)[0].contains("at most 20,000"));
        // Bounded work: 20,000 requests, 4,096 in flight, 1,024-token prompts in steps of 16.
        let long = json!({"batching": "inflight", "local_transformer_bs": 4096, "step_tokens": 16});
        let e = burst_errors(long, MAX_BURST_REQUESTS);
        assert!(
            e[0].contains("too long to run step by step here") && e[0].contains("allow more tokens per step"),
            "{e:?}"
        );
    }

    #[test]
    fn requests_admitted_for_their_prompts_are_preempted_when_their_answers_fill_the_cache() {
        // 4,096 asked for: the KV pages hold fewer requests at their final length than at their
        // prompt's, so a burst admits too many, and as they grow the last admitted lose their
        // pages and prefill again.
        let s = inflight(4096, json!({"input_tokens": 256, "output_tokens": 1024}));
        let sv = ServingCx::new(&s).expect("serving");
        let limit = sv.inflight_limit() as f64;
        let n = (3.0 * limit) as u64;
        let b = sv.burst(n);
        assert_eq!(b.e2e_s.len() as u64, n);
        assert!(b.recomputed_tokens > 0.0, "{limit} {b:?}");
        let mut over = s.clone();
        over.task.setup.burst_requests = Some(n);
        let fig = crate::engine::evaluate(&over).serving.expect("serving");
        assert_eq!(fig.recomputed_tokens, b.recomputed_tokens);
        assert!(crate::wording::batching(&fig).contains("tokens were prefilled again"));
        // With the batch at what the pages hold at the requests' full length, none is preempted.
        let s = inflight((limit / 2.0) as u64, json!({"input_tokens": 256, "output_tokens": 1024}));
        let small = ServingCx::new(&s).expect("serving").burst(n);
        assert_eq!(small.recomputed_tokens, 0.0);
    }

    #[test]
    fn a_burst_ends_even_where_its_prompts_outgrow_the_cache() {
        // Prompts of 600,000 tokens: not one fits in the KV pages (about 430,000 tokens a GPU),
        // two contend for them. The first runs alone regardless (the memory says it does not
        // fit); the others wait, each prompt under way preempting the later ones.
        let s = inflight(4, json!({"input_tokens": 600_000, "output_tokens": 4, "step_tokens": 65_536}));
        let sv = ServingCx::new(&s).expect("serving");
        assert_eq!(sv.inflight_limit(), 0);
        let b = sv.burst(3);
        assert_eq!(b.e2e_s.len(), 3, "{b:?}");
        assert!(b.e2e_s[0] < b.e2e_s[1] && b.e2e_s[1] < b.e2e_s[2], "{:?}", b.e2e_s);
        assert!(!crate::engine::evaluate(&s).memory.fits());
    }

    #[test]
    fn where_no_page_fits_each_request_runs_alone_from_its_prompt_to_its_last_token() {
        // LLaMA-2-70B's 140 GB of weights on one 80 GB GPU: no page is left, so each request is
        // served alone (the memory says it does not fit), its prompt in one step and its 511
        // further tokens in as many steps, the next one waiting for it to finish. The engine's
        // steps are all alike, so a run of them is simulated at once: bursts of thousands of
        // requests that do not fit (a typing slip in the FFN width) used to take seconds.
        for steps in ["mixed", "separate"] {
            let task =
                json!({"batching": "inflight", "input_tokens": 256, "output_tokens": 512, "prefill_steps": steps});
            let s = llama70(1, 8, task);
            let sv = ServingCx::new(&s).expect("serving");
            assert_eq!(sv.inflight_limit(), 0);
            let b = sv.burst(6);
            let prompt = sv.engine_step(0.0, 256.0, 1.0).seconds;
            let decode = sv.engine_step(1.0, 0.0, 0.0).seconds;
            let each = prompt + 511.0 * decode;
            assert_eq!(b.steps, 6 * 512, "{steps}: {b:?}");
            assert!((b.makespan_s - 6.0 * each).abs() < 1e-9 * b.makespan_s, "{steps}: {b:?}");
            for (k, (&ttft, &e2e)) in b.ttft_s.iter().zip(&b.e2e_s).enumerate() {
                let start = k as f64 * each;
                assert!((ttft - (start + prompt)).abs() < 1e-9 * e2e, "{steps}: request {k}: {ttft}");
                assert!((e2e - (start + each)).abs() < 1e-9 * e2e, "{steps}: request {k}: {e2e}");
            }
            assert_eq!(b.recomputed_tokens, 0.0);
        }
    }

    #[test]
    fn with_prompts_in_steps_of_their_own_a_burst_decodes_nothing_while_it_prefills() {
        // 8 prompts of 256 tokens in steps of 1,024: two steps of four prompts (the first four
        // waiting through the second), then 255 steps decode all 8; mixed steps would decode
        // the first four beside the second step's prompts (3 + 255 steps, above).
        let s = inflight(
            8,
            json!({"input_tokens": 256, "output_tokens": 256, "step_tokens": 1024, "prefill_steps": "separate"}),
        );
        let sv = ServingCx::new(&s).expect("serving");
        let b = sv.burst(8);
        let prefill = sv.engine_step(0.0, 1024.0, 4.0).seconds;
        let decode = sv.engine_step(8.0, 0.0, 0.0).seconds;
        assert_eq!(b.steps, 2 + 255, "{b:?}");
        assert!((b.makespan_s - (2.0 * prefill + 255.0 * decode)).abs() < 1e-12 * b.makespan_s);
        assert!(b.ttft_s[..4].iter().all(|&t| t == prefill) && b.ttft_s[4..].iter().all(|&t| t == 2.0 * prefill));
        assert!(b.e2e_s.iter().all(|&t| t == b.makespan_s), "{:?}", b.e2e_s);
    }

    #[test]
    fn in_rounds_of_decode_steps_a_free_place_waits_for_the_round_to_end() {
        // Two in flight at most, four requests of 16 prompt tokens generating 3 and 5 tokens
        // in turn. Scheduled every step, the third starts as soon as the first finishes (step
        // 4), and the burst takes 11 steps; in rounds of 4 it waits for the round to end (step
        // 6), with the fourth, and the burst takes 10 (a round ends early when nothing decodes).
        let run = |rounds: u64| {
            let s = inflight(
                2,
                json!({"input_tokens": null, "output_tokens": null, "request_mix": "16/3:1, 16/5:1",
                    "prefill_steps": "separate", "scheduler_steps": rounds}),
            );
            let sv = ServingCx::new(&s).expect("serving");
            let step = |decoding: f64, prompts: f64| sv.engine_step(decoding, 16.0 * prompts, prompts).seconds;
            (sv.burst(4), [step(0.0, 1.0), step(0.0, 2.0), step(1.0, 0.0), step(2.0, 0.0)])
        };
        let (each, [one, two, d1, d2]) = run(1);
        let (rounds, _) = run(4);
        assert_eq!((each.steps, rounds.steps), (11, 10), "{each:?} {rounds:?}");
        assert!(rounds.ttft_s[2] > each.ttft_s[2], "{:?} {:?}", rounds.ttft_s, each.ttft_s);
        // Every step: two prompts, 2 steps decoding both, one prompt, 2 decoding two, one
        // prompt, 4 decoding one. In rounds: two prompts, 2 steps decoding both, 2 decoding
        // one, and the same again.
        let close = |a: f64, b: f64| (a - b).abs() < 1e-12 * b;
        assert!(close(each.makespan_s, two + 2.0 * d2 + one + 2.0 * d2 + one + 4.0 * d1), "{each:?}");
        assert!(close(rounds.makespan_s, 2.0 * (two + 2.0 * d2 + 2.0 * d1)), "{rounds:?}");
    }
}
