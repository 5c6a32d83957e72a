//! In-flight (continuous) batching in the serving model: the requests the paged KV cache
//! admits, the steady state of engine steps that decode a token for every request and fill the
//! rest of their token budget with prompt chunks, latency percentiles at a request rate.
//! Sources: Yu et al. 2022 (Orca: iteration-level scheduling), Kwon et al. 2023 (vLLM: paged
//! attention), Agrawal et al. 2024 (Sarathi-Serve: chunked prefill under a token budget).

use super::super::iteration::Timeline;
use super::{how_many_fit, Pass, ServingCx, Step};
use crate::engine::report::{Memory, Percentiles};
use crate::engine::scenario::PrefillSteps;

/// The steady state of in-flight batching ([`ServingCx::steady`]), per replica.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Steady {
    /// Requests in flight.
    pub concurrency: f64,
    /// Requests decoding a token in each step, on average.
    pub decoding: f64,
    /// Prompt tokens prefilled per step, on average.
    pub prefill_tokens: f64,
    /// Requests finishing per second (and starting: the steady state).
    pub requests_per_s: f64,
    /// A step that carries a prompt chunk (every step when nothing decodes); with prompts in
    /// steps of their own, a prefill step.
    pub chunk: EngineStep,
    /// The step the report draws and explains: the step with a prompt chunk, or with prompts
    /// in steps of their own the decode step (a prefill step when nothing decodes).
    pub drawn: EngineStep,
    /// The mean step: the time between two tokens of a request, s.
    pub tpot_s: f64,
    /// Time to first token: queueing for the prefill and its chunk steps, s.
    pub ttft_s: f64,
    /// From arrival to the last token, s.
    pub e2e_s: f64,
    /// A step without a prompt chunk (with prompts in steps of their own, a decode step), s.
    pub plain_s: f64,
    /// The share of the chunk capacity (the steps' room for prompt tokens) prompts use, 0..1.
    pub prefill_load: f64,
    /// One prompt's chunk steps, s: its prefill when it need not wait (with a request mix, their
    /// mean square over their mean: what a queue's wait grows with).
    pub prompt_s: f64,
    /// A step's room for prompt tokens: the budget less the tokens decoding.
    pub room: f64,
    /// The gaps between a request's tokens as its client sees them, s: the shorter, the longer,
    /// and the share of gaps that are the longer (a step with a prompt chunk, or a prefill
    /// step between two decode steps).
    pub gap_fast_s: f64,
    pub gap_slow_s: f64,
    pub gap_slow_share: f64,
    /// With prompts in steps of their own ([`PrefillSteps::Separate`]), how long a prompt waits
    /// for the decode round under way to end; `None` for prompt chunks mixed into the decode
    /// steps, which wait in the prefill queue instead ([`Steady::mean_wait_s`]).
    pub round_wait: Option<RoundWait>,
}

/// The wait of a prompt for the decode round under way to end ([`Steady::round_wait`]), each
/// spread evenly from none to twice its mean.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RoundWait {
    /// The mean wait of a slot refilled as a request finishes, `(S - 1) / 2` decode steps, s:
    /// [`Steady::ttft_s`] holds it.
    pub slot_s: f64,
    /// The mean wait of a prompt arriving at random: what is left of the stretch of decode
    /// steps or prefill steps under way, s.
    pub arrival_s: f64,
}

/// Percentiles reported ([`Steady::percentiles`]): the median, the 90th and the 99th.
pub const PERCENTILES: [f64; 3] = [0.5, 0.9, 0.99];

impl Steady {
    /// The mean time a prompt waits for the chunk capacity when requests arrive at random
    /// (`poisson`: a Poisson stream, as `request_rate` sets; otherwise a finished request's slot
    /// is refilled at once and nothing waits), s: an M/D/1 queue (Pollaczek-Khinchine):
    /// `rho x S / (2 (1 - rho))` for load `rho` ([`Steady::prefill_load`]) and service `S`
    /// ([`Steady::prompt_s`]).
    pub fn mean_wait_s(&self, poisson: bool) -> f64 {
        let rho = self.prefill_load;
        if let Some(w) = self.round_wait {
            return if poisson { (w.arrival_s - w.slot_s).max(0.0) } else { 0.0 };
        }
        if !poisson || rho <= 0.0 {
            return 0.0;
        }
        if rho >= 1.0 {
            return f64::INFINITY;
        }
        rho * self.prompt_s / (2.0 * (1.0 - rho))
    }

    /// The `q`-quantile of that wait, s: a prompt waits with probability `rho`, and then for an
    /// exponentially distributed time of mean `S / (2 (1 - rho))` (Kingman's heavy-traffic
    /// approximation, exact in its mean): `P(W > t) = rho x exp(-t rho / mean wait)`.
    ///
    /// With prompts in steps of their own, the whole wait for the round under way to end (a
    /// random arrival's, or a refilled slot's), uniform from none to twice its mean.
    pub fn wait_quantile_s(&self, q: f64, poisson: bool) -> f64 {
        let (mean, rho) = (self.mean_wait_s(poisson), self.prefill_load);
        if let Some(w) = self.round_wait {
            return 2.0 * if poisson { w.arrival_s.max(w.slot_s) } else { w.slot_s } * q.clamp(0.0, 1.0);
        }
        if mean <= 0.0 || 1.0 - q >= rho {
            return 0.0;
        }
        mean / rho * (rho / (1.0 - q)).ln()
    }
}

/// The steps of a steady state with a given number of requests decoding ([`ServingCx::steady`]).
struct StepMix {
    /// A step that carries a prompt chunk, the mean step and a step without one (s).
    chunk: EngineStep,
    mean_s: f64,
    plain_s: f64,
    /// The share of steps that carry a chunk.
    with_chunk: f64,
    /// Prompt tokens per step, on average; the chunk steps of one prompt, on average and
    /// weighted by themselves (mean square over mean); a step's room for prompt tokens.
    prefill_tokens: f64,
    chunks: f64,
    chunks_weighted: f64,
    room: f64,
}

/// One engine step of one pipeline group (`ServingCx::engine_step`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EngineStep {
    /// One layer's tokens, and its times.
    pub pass: Pass,
    pub layer: Step,
    /// Rows of logits: the decoding requests and the prompts that finish.
    pub rows: f64,
    /// Requests in the step (decoding, or prefilling a chunk), and the host's time to run it
    /// that the GPU waits for ([`ServingCx::host_s`]), s.
    pub requests: f64,
    pub host_s: f64,
    /// The step through every stage, the host's time included, s.
    pub seconds: f64,
}

impl<'a> ServingCx<'a> {
    /// Tokens of KV cache an in-flight request holds on average in the steady state: its prompt,
    /// half of its output (requests are spread evenly over their generation), and half a page
    /// lost to rounding up to whole pages (paged attention, Kwon et al. 2023).
    pub fn held_tokens(&self) -> f64 {
        let page = self.cx.setup.kv_page_tokens as f64;
        self.in_flight_mean(|i, o| i + (o - 1.0).max(0.0) / 2.0) + (page - 1.0) / 2.0
    }

    /// Memory per GPU of in-flight batching with `concurrency` requests in flight: their KV
    /// pages, and activations for a full engine step ([`Setup::step_tokens`]), as engines size
    /// their buffers.
    pub(super) fn inflight_memory(&self, concurrency: f64) -> Memory {
        let budget = self.cx.setup.step_tokens as f64;
        self.memory_of(concurrency * self.held_tokens(), budget, self.batch.min(budget))
    }

    /// Requests per replica whose KV pages fit next to the weights and a full step's
    /// activations with in-flight batching: the most the engine can keep in flight (0 when
    /// not even one fits).
    pub fn inflight_limit(&self) -> u64 {
        how_many_fit(&self.inflight_memory(0.0), self.held_tokens() * self.kv_bytes_per_token())
    }

    /// The steady state of in-flight batching (Orca, vLLM, Sarathi-Serve): `concurrency`
    /// requests in flight per replica; every step decodes one token for each request past its
    /// prompt, and steps that carry a prompt chunk fill the rest of the token budget with it.
    ///
    /// A prompt of `I` tokens takes `D = ceil(I / (budget - others decoding))` chunk steps; a request
    /// then decodes `O - 1` tokens at the mean step time. The share of the requests decoding
    /// is the share of its time a request spends decoding, and the requests that finish must be
    /// replaced: `decoding / (O - 1)` prompts per step. When those prompts exceed the budget,
    /// prefill paces the engine, every step carries a chunk and requests queue for it. Little's
    /// law gives the end-to-end latency: requests in flight over requests finished per second.
    /// With `p` pipeline stages, `p` groups of requests take turns, each step of a group going
    /// through every stage.
    pub fn steady(&self, concurrency: f64) -> Steady {
        if self.cx.setup.prefill_steps == PrefillSteps::Separate {
            return self.steady_separate(concurrency);
        }
        // A request's prompt tokens and decode steps, on average over the mix.
        let (i, od) = (self.mean(|i, _| i), self.mean(|_, o| (o - 1.0).max(0.0)));
        let budget = self.cx.setup.step_tokens as f64;
        let c = concurrency;
        // The chunk steps of a prompt with `room` tokens per step: their mean over the
        // requests, and their mean square over their mean (the queue's service time weighs long
        // prompts by their length).
        let chunk_steps = |room: f64| {
            let mean = self.mean(|i, _| (i / room).ceil());
            (mean, self.mean(|i, _| (i / room).ceil().powi(2)) / mean)
        };
        if od <= 0.0 {
            // No decoding: every step prefills prompts, a whole budget when enough are waiting.
            let tokens = budget.min(c * i);
            let step = self.engine_step(0.0, tokens, tokens / i);
            let requests_per_s = tokens / i / step.seconds;
            let e2e_s = c / requests_per_s;
            return Steady {
                concurrency: c,
                decoding: 0.0,
                prefill_tokens: tokens,
                requests_per_s,
                chunk: step,
                drawn: step,
                tpot_s: 0.0,
                ttft_s: e2e_s,
                e2e_s,
                plain_s: 0.0,
                prefill_load: tokens / budget,
                prompt_s: chunk_steps(budget).1 * step.seconds,
                room: budget,
                gap_fast_s: 0.0,
                gap_slow_s: 0.0,
                gap_slow_share: 0.0,
                round_wait: None,
            };
        }
        // The steps with `decoding` requests decoding: the step that carries a chunk, the mean
        // step, the prompt tokens per step, and the chunk steps of one prompt.
        let at = |decoding: f64| {
            // A prompt's own request is not decoding while it prefills.
            let room = (budget - decoding.min((c - 1.0).max(0.0))).max(1.0);
            let (chunks, chunks_weighted) = chunk_steps(room);
            let prefill_tokens = i * decoding / od;
            // A chunk step carries one prompt's chunk, or more when prompts arrive faster.
            let chunk_tokens = (i / chunks).max(prefill_tokens).min(room);
            let with_chunk = (prefill_tokens / chunk_tokens).min(1.0);
            let finishing = decoding / od;
            let chunk = self.engine_step(decoding, chunk_tokens, finishing / with_chunk);
            let plain_s = self.engine_step(decoding, 0.0, 0.0).seconds;
            let mean_s = with_chunk * chunk.seconds + (1.0 - with_chunk) * plain_s;
            StepMix { chunk, mean_s, plain_s, with_chunk, prefill_tokens, chunks, chunks_weighted, room }
        };
        // The share decoding is the share of its time a request decodes; the budget caps it.
        let mut decoding = c * od / (od + 1.0);
        for _ in 0..16 {
            let m = at(decoding);
            let next = c * od * m.mean_s / (m.chunks * m.chunk.seconds + od * m.mean_s);
            decoding = next.min(budget * od / (i + od));
        }
        let m = at(decoding);
        let tpot_s = m.mean_s;
        let requests_per_s = decoding / od / tpot_s;
        let e2e_s = c / requests_per_s;
        Steady {
            concurrency: c,
            decoding,
            prefill_tokens: m.prefill_tokens,
            requests_per_s,
            chunk: m.chunk,
            drawn: m.chunk,
            tpot_s,
            ttft_s: e2e_s - od * tpot_s,
            e2e_s,
            plain_s: m.plain_s,
            prefill_load: (m.prefill_tokens / m.room).min(1.0),
            prompt_s: m.chunks_weighted * m.chunk.seconds,
            room: m.room,
            gap_fast_s: m.chunk.seconds.min(m.plain_s),
            gap_slow_s: m.chunk.seconds.max(m.plain_s),
            gap_slow_share: if m.chunk.seconds >= m.plain_s { m.with_chunk } else { 1.0 - m.with_chunk },
            round_wait: None,
        }
    }

    /// The steady state with prompts in steps of their own ([`PrefillSteps::Separate`]): the
    /// engine runs rounds of `S` decode steps ([`crate::engine::scenario::Setup::scheduler_steps`];
    /// each decodes a token for every request past its prompt) and, between rounds, prefill
    /// steps for the prompts that arrived, up to the token budget each, while every decoding
    /// request waits (SGLang's scheduler, vLLM's before its V1 engine).
    ///
    /// With `d` requests decoding, `d / (O - 1)` finish per decode step, so `m = S d / (O - 1)`
    /// prompts arrive per round; a round has prefill steps when at least one arrived, with
    /// probability `p = 1 - exp(-m)` (arrivals at random), `m / p` prompts then over
    /// `n = max(1, m I / (p x budget))` steps of time `t_p`. A round takes `T = S t_d + p n t_p`
    /// for a decode step of `t_d`, a request's tokens come `T / S` apart on average, and a prompt
    /// waits for the round under way (a finished request's slot: the `(S - 1) / 2` steps left
    /// after it, on average), then for its prefill steps (`(n + 1) / 2` on average). The share of
    /// its time a request decodes sets `d`, as for mixed steps; Little's law gives the rest.
    fn steady_separate(&self, c: f64) -> Steady {
        let (i, od) = (self.mean(|i, _| i), self.mean(|_, o| (o - 1.0).max(0.0)));
        let budget = self.cx.setup.step_tokens as f64;
        let rounds = self.cx.setup.scheduler_steps.max(1) as f64;
        // A round with `decoding` requests decoding: its prefill step, decode step and the
        // figures above.
        let at = |decoding: f64| {
            let arrivals = if od > 0.0 { rounds * decoding / od } else { c };
            let p = -(-arrivals).exp_m1();
            let tokens = if p > 0.0 { arrivals * i / p } else { i };
            let steps = (tokens / budget).max(1.0);
            let per_step = tokens / steps;
            let prefill = self.engine_step(0.0, per_step, per_step / i);
            let decode = self.engine_step(decoding, 0.0, 0.0);
            let t_d = decode.seconds;
            let round_s = rounds * t_d + p * steps * prefill.seconds;
            let first_s = (rounds - 1.0) / 2.0 * t_d + (steps + 1.0) / 2.0 * prefill.seconds;
            (prefill, decode, p, steps, round_s, first_s, arrivals)
        };
        let mut decoding = if od > 0.0 { c * od / (od + 1.0) } else { 0.0 };
        for _ in 0..32 {
            if od <= 0.0 {
                break;
            }
            let (.., round_s, first_s, _) = at(decoding);
            let tpot = round_s / rounds;
            decoding = c * od * tpot / (first_s + od * tpot);
        }
        let (prefill, decode, p, steps, round_s, _, arrivals) = at(decoding);
        let t_d = decode.seconds;
        let tpot_s = if od > 0.0 { round_s / rounds } else { 0.0 };
        // Without decoding, prompts follow one another in prefill steps.
        let requests_per_s =
            if od > 0.0 { decoding / od / tpot_s } else { prefill.pass.prefill_tokens / i / prefill.seconds };
        let e2e_s = c / requests_per_s;
        // A prompt arriving at random waits for the rest of the decode part of the round, or of
        // the prefill steps under way (the next prefill step takes it): the mean of what is left
        // of a stretch is its length squared over twice the round.
        let decode_part = rounds * t_d;
        let prefill_part = steps * prefill.seconds;
        let random_wait = if round_s > 0.0 {
            (decode_part * decode_part + p * prefill_part * prefill_part) / (2.0 * round_s)
        } else {
            0.0
        };
        let slow_share = if od > 0.0 { p } else { 0.0 };
        Steady {
            concurrency: c,
            decoding,
            prefill_tokens: arrivals * i / (rounds + p * steps),
            requests_per_s,
            chunk: prefill,
            drawn: if od > 0.0 { decode } else { prefill },
            tpot_s,
            ttft_s: e2e_s - od * tpot_s,
            e2e_s,
            plain_s: t_d,
            prefill_load: 0.0,
            prompt_s: (steps + 1.0) / 2.0 * prefill.seconds,
            room: budget,
            gap_fast_s: if od > 0.0 { decode_part } else { 0.0 },
            gap_slow_s: if od > 0.0 { decode_part + prefill_part } else { 0.0 },
            gap_slow_share: slow_share,
            round_wait: Some(RoundWait { slot_s: (rounds - 1.0) / 2.0 * t_d, arrival_s: random_wait }),
        }
    }

    /// The [`PERCENTILES`] of the time to first token, of the time between two tokens of a
    /// request, and of the end-to-end latency in the steady state `st`, s. The first token: each
    /// kind of request's prefill steps (`own_prefill_s`: its chunk steps, or with
    /// prompts in steps of their own, steps as long as its prompt makes them), and the queueing
    /// beyond them when prompts pace the engine,
    /// after the wait ([`Steady::wait_quantile_s`]; with prompts in steps of their own, the whole
    /// wait for the round under way, evenly spread), over the mix of kinds. Between tokens: the
    /// shorter or the longer gap ([`Steady::gap_slow_share`] of them). End to end: the first
    /// token, then the kind's generated tokens at the mean time per token (over many tokens the
    /// steps average out).
    pub fn percentiles(&self, st: &Steady, poisson: bool) -> Percentiles {
        let own = self.own_prefill_s(st);
        // With prompts in steps of their own, the round's wait is spread over the requests:
        // taken out of the first token here, and spread below.
        let slot = st.round_wait.map_or(0.0, |w| w.slot_s);
        let extra = (st.ttft_s - slot - self.mean(|i, _| own(i))).max(0.0);
        let first = |i: f64| own(i) + extra;
        let kinds: Vec<(f64, f64, f64)> = self
            .classes
            .iter()
            .map(|c| {
                let (i, o) = (c.input_tokens as f64, c.output_tokens as f64);
                (c.share, first(i), first(i) + (o - 1.0).max(0.0) * st.tpot_s)
            })
            .collect();
        let (mean_wait, rho) = (st.mean_wait_s(poisson), st.prefill_load);
        let spread = st.wait_quantile_s(1.0, poisson);
        // The share of requests done by `t` (`at`: their first token, or their last).
        let done_by = |t: f64, at: &dyn Fn(&(f64, f64, f64)) -> f64| -> f64 {
            kinds
                .iter()
                .map(|k| {
                    let w = t - at(k);
                    let waited = if w < 0.0 {
                        0.0
                    } else if st.round_wait.is_some() {
                        if spread > 0.0 {
                            (w / spread).min(1.0)
                        } else {
                            1.0
                        }
                    } else if mean_wait <= 0.0 {
                        1.0
                    } else {
                        1.0 - rho * (-w * rho / mean_wait).exp()
                    };
                    k.0 * waited
                })
                .sum()
        };
        let quantile = |q: f64, at: &dyn Fn(&(f64, f64, f64)) -> f64| -> f64 {
            let (mut lo, mut hi) =
                kinds.iter().map(at).fold((f64::INFINITY, 0.0_f64), |(a, b), x| (a.min(x), b.max(x)));
            lo = lo.min(hi);
            hi += st.wait_quantile_s(1.0 - 1e-9, poisson);
            for _ in 0..100 {
                let mid = 0.5 * (lo + hi);
                if done_by(mid, at) < q {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
            hi
        };
        let (slow, fast, slow_share) = (st.gap_slow_s, st.gap_fast_s, st.gap_slow_share);
        Percentiles {
            ttft_s: PERCENTILES.map(|q| quantile(q, &|k| k.1)),
            tpot_s: PERCENTILES.map(|q| {
                if st.tpot_s <= 0.0 {
                    0.0
                } else if q <= 1.0 - slow_share {
                    fast
                } else {
                    slow
                }
            }),
            e2e_s: PERCENTILES.map(|q| quantile(q, &|k| k.2)),
        }
    }

    /// The time a prompt of `i` tokens spends in the steps that prefill it, in the steady state
    /// `st`, s: with prompt chunks mixed into the decode steps, its chunk steps (each as long
    /// as the mean step that carries one: the chunk shares it with decoding and other chunks);
    /// with prompts in steps of their own, the prefill steps that carry it, which hold it and
    /// the other prompts of its round's share of a step (the mean step's tokens less the mean
    /// prompt's), so that a long prompt's step is longer. The mean over the kinds of request is
    /// about the steady state's; the percentiles take each kind's.
    fn own_prefill_s(&self, st: &Steady) -> impl Fn(f64) -> f64 {
        let mut own: Vec<(f64, f64)> = Vec::new();
        if st.round_wait.is_some() {
            let budget = self.cx.setup.step_tokens.max(1) as f64;
            let groups = self.cx.lay.pp.size.max(1) as f64;
            let mean_prompt = self.mean(|i, _| i).max(1.0);
            let others = (st.chunk.pass.prefill_tokens * groups - mean_prompt).max(0.0);
            let prompts = others / mean_prompt + 1.0;
            // One computation per prompt length (a spread has 16 of them over 256 kinds).
            let mut lengths: Vec<f64> = self.classes.iter().map(|c| c.input_tokens as f64).collect();
            crate::engine::order::sort_f64(&mut lengths);
            lengths.dedup();
            own = lengths
                .into_iter()
                .map(|i| {
                    let tokens = others + i;
                    let steps = (tokens / budget).ceil().max(1.0);
                    (i, steps * self.engine_step(0.0, tokens / steps, prompts / steps).seconds)
                })
                .collect();
        }
        let (chunk_s, room) = (st.chunk.seconds, st.room);
        move |i: f64| match own.iter().find(|(length, _)| *length == i) {
            Some((_, s)) => *s,
            None => (i / room).ceil() * chunk_s,
        }
    }

    /// One engine step with `decoding` requests decoding, `prefill_tokens` prompt tokens and
    /// `finishing` prompts completing (their first token's logits), all per replica.
    pub(super) fn engine_step(&self, decoding: f64, prefill_tokens: f64, finishing: f64) -> EngineStep {
        let groups = self.cx.lay.pp.size.max(1) as f64;
        let pass = Pass {
            prefill_tokens: prefill_tokens / groups,
            decode_tokens: decoding / groups,
            context: self.in_flight_mean(|i, o| i + o / 2.0),
        };
        let layer = self.layer(pass);
        let rows = (decoding + finishing) / groups;
        // A chunk that does not finish its prompt still has its request in the step.
        let prompts = if prefill_tokens > 0.0 { finishing.max(1.0) } else { 0.0 };
        let requests = (decoding + prompts) / groups;
        let host_s = self.host_s(requests);
        let seconds = self.cx.d.layers as f64 * (layer.attn_s + layer.ffn_s + layer.comm_s)
            + self.hops_s(pass.prefill_tokens + pass.decode_tokens)
            + self.logits_for(rows)
            + host_s;
        EngineStep { pass, layer, rows, requests, host_s, seconds }
    }

    /// The ops of one in-flight engine step of one pipeline group: a step that carries a prompt
    /// chunk.
    pub(super) fn step_timeline(
        &self,
        step: &EngineStep,
    ) -> (Vec<crate::engine::ops::Op>, crate::engine::schedule::Schedule) {
        let mut tl = Timeline::new(4 * self.cx.d.layers as usize + 8);
        let hop = self.hop_s(step.pass.prefill_tokens + step.pass.decode_tokens);
        let last = self.push_pass(&mut tl, step.layer, hop, self.logits_for(step.rows));
        self.push_host(&mut tl, step.host_s, last);
        tl.finish()
    }

    /// Requests in flight per replica with in-flight batching: the batch, or fewer when the KV
    /// cache holds fewer; the batch when not even one fits (the memory then says so).
    pub fn concurrency(&self) -> f64 {
        match self.inflight_limit() {
            0 => self.batch,
            limit => self.batch.min(limit as f64),
        }
    }

    /// The steady state of in-flight batching with requests arriving at the task's rate
    /// ([`crate::engine::scenario::Setup::request_rate`], over the cluster), and the most requests per second it can
    /// complete when it cannot keep up (`None` when it can). Requests in flight settle where
    /// the requests completed per second equal the arrivals (Little's law: in flight = rate x
    /// time in the system); they grow with the load up to what the KV cache holds. Without a
    /// rate, the batch (or what the KV cache holds) is in flight.
    pub fn steady_at_load(&self) -> (Steady, Option<f64>) {
        let full = self.steady(self.concurrency());
        let Some(rate) = self.cx.setup.request_rate else { return (full, None) };
        let replicas = self.cx.lay.dense_dp.size as f64;
        let per_replica = rate / replicas;
        if per_replica >= full.requests_per_s {
            return (full, Some(full.requests_per_s * replicas));
        }
        // Requests completed per second grow with those in flight: bisect for the arrivals.
        let (mut lo, mut hi) = (0.0, full.concurrency);
        for _ in 0..60 {
            let mid = 0.5 * (lo + hi);
            if self.steady(mid).requests_per_s < per_replica {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        (self.steady(hi), None)
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests_support::{inflight, llama70};
    use super::*;
    use crate::engine::extended::rules;
    use crate::engine::report::Limit;
    use crate::engine::scenario::{Batching, LengthSpread, RequestClass, SPREAD_BINS};
    use serde_json::json;

    #[test]
    fn the_kv_pages_left_after_weights_and_a_full_step_bound_the_requests_in_flight() {
        let s = inflight(4096, json!({}));
        let sv = ServingCx::new(&s).expect("serving");
        // A request holds its prompt, half its output on average, and half a page of rounding.
        assert_eq!(sv.held_tokens(), 1024.0 + 255.0 / 2.0 + 15.0 / 2.0);
        let fixed = sv.inflight_memory(0.0);
        let per = sv.held_tokens() * sv.kv_bytes_per_token();
        let limit = sv.inflight_limit();
        assert_eq!(limit, ((fixed.capacity_bytes - fixed.total_bytes) / per).floor() as u64);
        assert!(sv.inflight_memory(limit as f64).fits() && !sv.inflight_memory(limit as f64 + 1.0).fits());
        // Asking for 4,096 admits only what fits, and the report says both.
        let r = crate::engine::evaluate(&s);
        let figures = r.serving.as_ref().expect("serving");
        assert_eq!((figures.in_flight, figures.batch, figures.max_batch), (limit as f64, 4096, limit));
        assert!(r.memory.fits());
        // Bigger pages waste more per request: fewer fit.
        let big_pages =
            ServingCx::new(&inflight(4096, json!({"kv_page_tokens": 256}))).expect("serving").inflight_limit();
        assert!(big_pages < limit, "{big_pages} vs {limit}");
        // Below the limit the batch is what is in flight.
        assert_eq!(ServingCx::new(&inflight(8, json!({}))).expect("serving").concurrency(), 8.0);
    }

    #[test]
    fn a_prompt_longer_than_the_step_budget_is_prefilled_in_chunks() {
        // One request: its 4,096-token prompt over steps of 1,024 tokens takes 4 chunk steps.
        let s = inflight(1, json!({"input_tokens": 4096, "step_tokens": 1024}));
        let sv = ServingCx::new(&s).expect("serving");
        let st = sv.steady(1.0);
        assert_eq!(st.chunk.pass.prefill_tokens, 1024.0);
        assert!((st.ttft_s - 4.0 * st.chunk.seconds).abs() < 1e-12 * st.ttft_s, "{st:?}");
        // A budget that takes the prompt at once: one step, longer than a chunk, shorter than four.
        let s = inflight(1, json!({"input_tokens": 4096, "step_tokens": 8192}));
        let one = ServingCx::new(&s).expect("serving").steady(1.0);
        assert!((one.ttft_s - one.chunk.seconds).abs() < 1e-12 * one.ttft_s);
        assert!(one.ttft_s > st.chunk.seconds && one.ttft_s < st.ttft_s);
    }

    #[test]
    fn the_steady_state_obeys_littles_law_and_saturates_when_prefill_fills_the_steps() {
        let sv_of = |batch: u64| crate::engine::evaluate(&inflight(batch, json!({}))).serving.expect("serving");
        let mut last_tokens = 0.0;
        for batch in [1, 8, 64, 256] {
            let sv = sv_of(batch);
            // Requests in flight = requests finished per second x time in the system.
            let replica_rate = sv.requests_per_s / sv.replicas as f64;
            assert!((replica_rate * sv.e2e_s - sv.in_flight).abs() < 1e-9 * sv.in_flight, "{sv:?}");
            assert!((sv.e2e_s - (sv.ttft_s + 255.0 * sv.tpot_s)).abs() < 1e-9 * sv.e2e_s);
            // More requests in flight: more tokens per second, each token later.
            assert!(sv.output_tokens_per_s > last_tokens, "{batch}: {sv:?}");
            last_tokens = sv.output_tokens_per_s;
        }
        // With 1,024-token prompts, steps of 2,048 tokens hold at most 2,048 x 255 / 1,279 = 408
        // decoding requests: beyond that, prompts wait for the budget and the first token
        // comes late, while throughput hardly grows.
        let s = inflight(2000, json!({"kv_format": "fp8", "weight_format": "fp8"}));
        let sv = ServingCx::new(&s).expect("serving");
        let st = sv.steady(sv.concurrency());
        assert!(sv.concurrency() > 1000.0, "{}", sv.concurrency());
        assert!((st.decoding - 2048.0 * 255.0 / 1279.0).abs() < 1e-9, "{st:?}");
        let below = sv.steady(400.0);
        assert!(st.ttft_s > 2.0 * below.ttft_s, "{} vs {}", st.ttft_s, below.ttft_s);
        assert!(st.requests_per_s < 1.1 * below.requests_per_s);
    }

    #[test]
    fn at_a_request_rate_the_requests_in_flight_are_those_littles_law_keeps() {
        let at = |rate: f64| crate::engine::evaluate(&inflight(64, json!({"request_rate": rate})));
        let full = crate::engine::evaluate(&inflight(64, json!({}))).serving.expect("serving");
        // A light load: the engine completes what arrives, with fewer requests in flight and a
        // faster token than at full load.
        let light = at(0.5 * full.requests_per_s);
        let sv = light.serving.as_ref().expect("serving");
        assert!((sv.requests_per_s / (0.5 * full.requests_per_s) - 1.0).abs() < 1e-6, "{sv:?}");
        // Little's law over the time in flight; arriving at random, a request also waits for
        // the prefill first (the queue holds the rest).
        let light_s = inflight(64, json!({"request_rate": 0.5 * full.requests_per_s}));
        let lsv = ServingCx::new(&light_s).expect("serving");
        let (st, _) = lsv.steady_at_load();
        let wait_s = st.mean_wait_s(true);
        assert!(
            wait_s > 0.0
                && (sv.e2e_s - st.e2e_s - wait_s).abs() < 1e-12
                && (sv.ttft_s - st.ttft_s - wait_s).abs() < 1e-12
        );
        assert!((sv.requests_per_s * (sv.e2e_s - wait_s) - sv.in_flight).abs() < 1e-6 * sv.in_flight);
        assert!(sv.in_flight < full.in_flight && sv.tpot_s < full.tpot_s && light.limits.is_empty());
        assert_eq!(sv.request_rate, Some(0.5 * full.requests_per_s));
        // More than it can complete: full load's figures, and a limit that says so.
        let heavy = at(2.0 * full.requests_per_s);
        assert_eq!(heavy.serving.as_ref().map(|s| s.in_flight), Some(full.in_flight));
        let over = heavy.limits.iter().find_map(|l| match l {
            Limit::Overloaded { asked_per_s, most_per_s } => Some((*asked_per_s, *most_per_s)),
            _ => None,
        });
        assert_eq!(over, Some((2.0 * full.requests_per_s, full.requests_per_s)));
        // A static batch has no arrival rate: refused on the field.
        let mut s = llama70(4, 8, json!({}));
        s.task.setup.request_rate = Some(1.0);
        let errors = rules::check(&s);
        assert!(errors.iter().any(|e| e.field == "task.request_rate"), "{errors:?}");
    }

    #[test]
    fn latency_percentiles_come_from_the_steps_and_the_prefill_queue() {
        // The wait of an M/D/1 queue at load 1/2 and service 1 s: 0.5 s on average, none for
        // half the prompts, ln(50) s for the 99th percentile.
        let s = inflight(64, json!({}));
        let sv = ServingCx::new(&s).expect("serving");
        let mut st = sv.steady(sv.concurrency());
        let full = sv.percentiles(&st, false);
        // At full load nothing waits: every request's first token at the mean; between tokens,
        // a step with a prompt chunk or one without.
        // (The same sums taken in another order: equal to rounding.)
        let same = |a: f64, b: f64| (a - b).abs() <= 1e-12 * b;
        assert!(
            full.ttft_s.iter().all(|t| same(*t, st.ttft_s)) && full.e2e_s.iter().all(|t| same(*t, st.e2e_s)),
            "{full:?} {} {}",
            st.ttft_s,
            st.e2e_s
        );
        let (slow, fast) = (st.chunk.seconds.max(st.plain_s), st.chunk.seconds.min(st.plain_s));
        assert!(full.tpot_s.iter().all(|t| *t == slow || *t == fast) && full.tpot_s[2] == slow, "{full:?} {st:?}");
        assert!(full.tpot_s[0] <= st.tpot_s && st.tpot_s <= full.tpot_s[2]);
        (st.prefill_load, st.prompt_s) = (0.5, 1.0);
        assert!((st.mean_wait_s(true) - 0.5).abs() < 1e-12 && st.mean_wait_s(false) == 0.0);
        assert_eq!(st.wait_quantile_s(0.5, true), 0.0);
        assert!((st.wait_quantile_s(0.99, true) - 50f64.ln()).abs() < 1e-12);
        // The report: percentiles in flight, rising toward the engine's capacity; none for a
        // static batch or an overloaded engine.
        let most = crate::engine::evaluate(&inflight(64, json!({}))).serving.expect("serving").requests_per_s;
        let at = |share: f64| {
            let r = crate::engine::evaluate(&inflight(64, json!({"request_rate": share * most})));
            r.serving.and_then(|s| s.percentiles)
        };
        let (light, busy) = (at(0.3).expect("percentiles"), at(0.9).expect("percentiles"));
        for p in [&light, &busy] {
            assert!(p.ttft_s[0] <= p.ttft_s[1] && p.ttft_s[1] <= p.ttft_s[2] && p.e2e_s[0] <= p.e2e_s[2]);
        }
        assert!(busy.ttft_s[2] > light.ttft_s[2], "{busy:?} vs {light:?}");
        assert_eq!(at(2.0), None);
        assert_eq!(crate::engine::evaluate(&llama70(4, 8, json!({}))).serving.expect("serving").percentiles, None);
    }

    #[test]
    fn a_request_mix_is_served_at_its_mean_and_spreads_the_latencies() {
        // Three short chats for one long document: 3/4 of the requests 256/128 tokens, 1/4
        // 4,096/512.
        let mix = |extra: serde_json::Value| {
            let mut task = json!({"request_mix": "256/128:3, 4096/512:1", "input_tokens": null, "output_tokens": null});
            if let (Some(t), serde_json::Value::Object(x)) = (task.as_object_mut(), extra) {
                t.extend(x);
            }
            let mut s = inflight(64, task);
            s.task.setup.input_tokens = None;
            s.task.setup.output_tokens = None;
            s
        };
        let s = mix(json!({}));
        assert_eq!(s.task.setup.request_mix.len(), 2);
        let sv = ServingCx::new(&s).expect("serving");
        // The report's lengths are the means: (3 x 256 + 4096) / 4 = 1,216 and 224.
        assert_eq!((sv.input, sv.output), (1216, 224));
        let r = crate::engine::evaluate(&s);
        let out = r.serving.as_ref().expect("serving");
        assert!((out.output_tokens_per_s - out.requests_per_s * 224.0).abs() < 1e-9 * out.output_tokens_per_s);
        assert_eq!(r.tokens_per_s(&s), Some(r.throughput_samples_per_s * 224.0));
        // A request in flight is more often a long one: it stays longer.
        let kind = |input: f64| sv.in_flight_mean(|i, _| if i == input { 1.0 } else { 0.0 });
        let shares = [kind(256.0), kind(4096.0)];
        assert!((shares[1] - 512.0 / (3.0 * 128.0 + 512.0)).abs() < 1e-12, "{shares:?}");
        assert!((sv.held_tokens() - (shares[0] * (256.0 + 63.5) + shares[1] * (4096.0 + 255.5) + 7.5)).abs() < 1e-9);
        // The first tokens and the end-to-end latencies spread over the kinds: the chats'
        // median, the documents' 90th and 99th percentiles.
        let p = out.percentiles.as_ref().expect("percentiles");
        assert!(p.ttft_s[0] < p.ttft_s[2] && p.e2e_s[0] < 0.5 * p.e2e_s[2], "{p:?}");
        // One kind of request is the same as no mix.
        let one = mix(json!({"request_mix": "1024/256"}));
        let plain = inflight(64, json!({}));
        let (a, b) = (crate::engine::evaluate(&one).serving, crate::engine::evaluate(&plain).serving);
        let (a, b) = (a.expect("serving"), b.expect("serving"));
        assert!(
            (a.e2e_s - b.e2e_s).abs() < 1e-12 * b.e2e_s
                && (a.output_tokens_per_s - b.output_tokens_per_s).abs() < 1e-9 * b.output_tokens_per_s
        );
        assert_eq!(a.percentiles, b.percentiles);
        // Mixes that cannot be read or served are refused on the field.
        for (mix_text, words) in [
            ("256/128, 4096", "\"4096\" is not a kind of request"),
            ("256/0", "not a kind"),
            (" , ", "no kind of request"),
            ("1/1:0", "not a kind"),
        ] {
            let e = RequestClass::parse_mix(mix_text).expect_err(mix_text);
            assert!(e.contains(words), "{mix_text}: {e}");
        }
        let mut static_mix = llama70(4, 8, json!({}));
        static_mix.task.setup.request_mix = s.task.setup.request_mix.clone();
        let errors = rules::check(&static_mix);
        assert!(errors.iter().any(|e| e.field == "task.request_mix" && e.message.contains("in-flight")), "{errors:?}");
        assert!(
            errors.iter().any(|e| e.field == "task.request_mix" && e.message.contains("clear the prompt")),
            "{errors:?}"
        );
        assert_eq!(RequestClass::mix_text(&s.task.setup.request_mix), "256/128:75, 4096/512:25");
    }

    #[test]
    fn an_exponential_spread_of_lengths_keeps_the_load_and_stretches_the_latencies() {
        // LLaMA-2-70B on 4 A100s at a quarter of what it can serve: 1,024-token prompts and
        // 256-token answers on average, every request alike or spread exponentially.
        let full = crate::engine::evaluate(&inflight(64, json!({}))).serving.expect("serving");
        let rate = 0.25 * full.requests_per_s;
        let run = |spread: &str| {
            let s = inflight(64, json!({"request_rate": rate, "length_spread": spread}));
            assert!(rules::check(&s).is_empty(), "{:?}", rules::check(&s));
            let sv = ServingCx::new(&s).expect("serving");
            (sv.classes.len(), sv.in_flight_mean(|_, o| o), crate::engine::evaluate(&s).serving.expect("serving"))
        };
        let (one, _, fixed) = run("fixed");
        let (kinds, answer_in_flight, spread) = run("exponential");
        assert_eq!((one, kinds), (1, SPREAD_BINS * SPREAD_BINS));
        // The same requests per second and tokens per request on average: the same throughput.
        assert_eq!((spread.input_tokens, spread.output_tokens), (1024, 256));
        assert!((spread.output_tokens_per_s / fixed.output_tokens_per_s - 1.0).abs() < 2e-3, "{spread:?}");
        // A request in flight is likelier a long one: the length-biased mean of the answers,
        // E[o^2] / E[o] over the bins, near an exponential's twice its mean (the bins drop the
        // spread within each sixteenth).
        let bins = crate::engine::scenario::exponential_bin_means();
        let biased = 256.0 * bins.iter().map(|m| m * m).sum::<f64>() / bins.iter().sum::<f64>();
        assert!((answer_in_flight / biased - 1.0).abs() < 2e-3, "{answer_in_flight} vs {biased}");
        assert!((biased / 512.0 - 1.0).abs() < 0.05, "{biased}");
        // So the KV cache holds more per request, and each decode step reads more of it.
        assert!(spread.tpot_s > fixed.tpot_s, "{} vs {}", spread.tpot_s, fixed.tpot_s);
        // Half the answers are shorter than ln 2 of the mean: the median request ends sooner,
        // one in a hundred goes on for over 4.6 means.
        let (pf, ps) = (fixed.percentiles.expect("percentiles"), spread.percentiles.expect("percentiles"));
        let within = |t: f64, answer: f64| {
            let bounds = [0.9 * answer, 1.1 * answer].map(|o| spread.ttft_s * 0.5 + (o - 1.0) * spread.tpot_s);
            bounds[0] < t && t < bounds[1] + 2.0 * spread.ttft_s
        };
        assert!(within(ps.e2e_s[0], 256.0 * 2.0_f64.ln()), "{:?} {}", ps.e2e_s, spread.tpot_s);
        assert!(ps.e2e_s[0] < 0.8 * pf.e2e_s[0] && ps.e2e_s[2] > 3.0 * pf.e2e_s[2], "{ps:?} vs {pf:?}");
        // The mean end to end stays about the fixed one's (the same tokens on average).
        assert!((spread.e2e_s / fixed.e2e_s - 1.0).abs() < 0.05, "{} vs {}", spread.e2e_s, fixed.e2e_s);
        // A spread is of one kind's lengths: not with a mix, nor with a static batch, nor in
        // training.
        let mut mixed = inflight(64, json!({"length_spread": "exponential"}));
        mixed.task.setup.request_mix = RequestClass::parse_mix("256/128:3, 4096/512:1").expect("mix");
        let mut batch = llama70(4, 8, json!({}));
        batch.task.setup.length_spread = LengthSpread::Exponential;
        for (s, words) in [(&mixed, "a request mix lists"), (&batch, "needs in-flight batching")] {
            let errors = rules::check(s);
            assert!(errors.iter().any(|e| e.field == "task.length_spread" && e.message.contains(words)), "{errors:?}");
        }
        // Its longest answers must stay within what a request may generate.
        let mut long = inflight(64, json!({"output_tokens": 500_000}));
        long.task.setup.length_spread = LengthSpread::Exponential;
        let errors = rules::check(&long);
        assert!(
            errors.iter().any(|e| e.field == "task.length_spread"
                && e.message.contains("would generate 1,886,294 tokens: at most 1,000,000")),
            "{errors:?}"
        );
    }

    #[test]
    fn with_prompts_in_steps_of_their_own_a_long_prompt_waits_for_a_long_prefill() {
        // LLaMA-2-70B on 4 A100s, prompts in steps of their own, at a light load: a prefill step
        // holds about one prompt, so its length sets the step's.
        let at = |spread: &str| {
            let task = json!({"request_rate": 0.2, "prefill_steps": "separate", "length_spread": spread});
            crate::engine::evaluate(&inflight(64, task)).serving.expect("serving")
        };
        let (fixed, spread) = (at("fixed"), at("exponential"));
        let (pf, ps) = (fixed.percentiles.expect("percentiles"), spread.percentiles.expect("percentiles"));
        // The mean first token stays about the same; the median prompt is shorter than the mean
        // (ln 2 of it) and so is its prefill; the longest take 3.8 times the mean's.
        assert!((spread.ttft_s / fixed.ttft_s - 1.0).abs() < 0.05, "{} vs {}", spread.ttft_s, fixed.ttft_s);
        assert!(ps.ttft_s[0] < 0.9 * pf.ttft_s[0], "{:?} vs {:?}", ps.ttft_s, pf.ttft_s);
        assert!(ps.ttft_s[2] > 2.0 * pf.ttft_s[2], "{:?} vs {:?}", ps.ttft_s, pf.ttft_s);
        // Mixed into the decode steps, a prompt under one chunk takes one step whatever its
        // length: the spread of prompts moves the first token's percentiles only where they
        // take more chunks (1,024 tokens on average in steps of 2,048: the longest do).
        let mixed = |spread: &str| {
            let task = json!({"request_rate": 0.2, "length_spread": spread});
            crate::engine::evaluate(&inflight(64, task)).serving.expect("serving").percentiles.expect("percentiles")
        };
        let (mf, ms) = (mixed("fixed"), mixed("exponential"));
        assert!(ms.ttft_s[2] > 1.5 * mf.ttft_s[2], "{:?} vs {:?}", ms.ttft_s, mf.ttft_s);
    }

    #[test]
    fn in_flight_batching_hides_the_prefill_that_stalls_a_static_batch() {
        // The same 64 requests: a static batch decodes nothing while it prefills, in flight the
        // prompt chunks share the decode steps' weight reads. (Both launch every kernel: the
        // static batch's decode steps would replay CUDA graphs, the in-flight steps of 2,048
        // tokens would not.)
        let eager = || json!({"cuda_graphs": false});
        let static_batch = crate::engine::evaluate(&llama70(4, 64, eager())).serving.expect("serving");
        let in_flight = crate::engine::evaluate(&inflight(64, eager())).serving.expect("serving");
        assert_eq!(static_batch.batching, Batching::Static);
        assert!(in_flight.output_tokens_per_s > static_batch.output_tokens_per_s, "{in_flight:?} {static_batch:?}");
        // Its first token comes after one prompt's prefill, not the whole batch's.
        assert!(in_flight.ttft_s < static_batch.ttft_s / 10.0);
    }

    #[test]
    fn prompts_in_steps_of_their_own_hold_every_decoding_request_back() {
        // 64 requests of 1,024 + 256 tokens in flight on LLaMA-2-70B: the same load, prompts
        // mixed into the decode steps or prefilled in steps of their own.
        let mixed = ServingCx::new(&inflight(64, json!({}))).expect("serving").steady(64.0);
        let s = inflight(64, json!({"prefill_steps": "separate"}));
        let sv = ServingCx::new(&s).expect("serving");
        let st = sv.steady(64.0);
        // A decode step carries no prompt; a prefill step no decoding request.
        assert_eq!((st.drawn.pass.prefill_tokens, st.chunk.pass.decode_tokens), (0.0, 0.0));
        assert!(st.drawn.pass.decode_tokens > 0.0 && st.chunk.pass.prefill_tokens >= 1024.0, "{st:?}");
        // A request's tokens come a decode step apart, a prefill step longer in the share of
        // steps that prefill between two of them (`p`): the mean is the decode step plus `p`
        // prefill stretches.
        assert_eq!(st.gap_fast_s, st.plain_s);
        let stretch = st.gap_slow_s - st.gap_fast_s;
        assert!(stretch >= st.chunk.seconds * (1.0 - 1e-12), "{st:?}");
        assert!((st.tpot_s - (st.gap_fast_s + st.gap_slow_share * stretch)).abs() < 1e-12 * st.tpot_s);
        // Each prefill step reads every weight again, and decoding waits for it: tokens come
        // further apart and fewer per second than with mixed chunks, the first sooner.
        assert!(st.tpot_s > mixed.tpot_s && st.requests_per_s < mixed.requests_per_s, "{st:?} {mixed:?}");
        // At full load a finished request's slot waits for no round: its first token is its
        // prefill step's end.
        assert!((st.ttft_s - st.chunk.seconds).abs() < 1e-9 * st.ttft_s, "{st:?}");
        // A finished request's slot is refilled by the next prefill step, which takes the
        // prompts that arrived over the round: `m / p` of them on average.
        let m = 64.0_f64.min(st.decoding) / 255.0;
        assert!((st.gap_slow_share - (1.0 - (-m).exp())).abs() < 1e-12, "{st:?}");
        // Little's law, as with mixed steps.
        assert!((st.requests_per_s * st.e2e_s - 64.0).abs() < 1e-9 * 64.0);
        assert!((st.e2e_s - (st.ttft_s + 255.0 * st.tpot_s)).abs() < 1e-9 * st.e2e_s);
        // Below 64, fewer requests finish per second and tokens come sooner.
        let light = sv.steady(8.0);
        assert!(light.requests_per_s < st.requests_per_s && light.tpot_s < st.tpot_s, "{light:?}");
    }

    #[test]
    fn rounds_of_decode_steps_make_a_new_prompt_wait_for_the_round_under_way() {
        // At 0.5 requests/s a prompt arriving at random waits for what is left of the decode
        // step (or round) under way, then for its prefill step; with rounds of 10 it waits about
        // five steps, and its tokens come ten at a time.
        let at = |rounds: u64| {
            let s = inflight(64, json!({"prefill_steps": "separate", "scheduler_steps": rounds, "request_rate": 0.5}));
            let sv = ServingCx::new(&s).expect("serving");
            let (st, overloaded) = sv.steady_at_load();
            assert!(overloaded.is_none());
            let r = crate::engine::evaluate(&s);
            (st, r.serving.expect("serving"))
        };
        let (one, one_report) = at(1);
        let (ten, ten_report) = at(10);
        // A random arrival waits for what is left of the stretch under way, decode steps or
        // prefill steps: the mean is their squares over twice the round (`p` of the rounds
        // prefill). A refilled slot already waits (S - 1) / 2 steps; the rest is the arrival's.
        let random = |st: &Steady| {
            let stretch = st.gap_slow_s - st.gap_fast_s;
            let round = st.gap_fast_s + st.gap_slow_share * stretch;
            (st.gap_fast_s.powi(2) + st.gap_slow_share * stretch.powi(2)) / (2.0 * round)
        };
        let decode = one.plain_s;
        let wait = one.mean_wait_s(true);
        assert!((wait - random(&one)).abs() < 1e-12 * wait && wait > 0.5 * decode, "{wait} vs {decode}");
        assert!((one_report.ttft_s - (one.ttft_s + wait)).abs() < 1e-12 * one_report.ttft_s);
        assert!((ten.mean_wait_s(true) + 4.5 * ten.plain_s - random(&ten)).abs() < 1e-12 * random(&ten));
        assert!(random(&ten) > 4.5 * ten.plain_s, "{ten:?}");
        assert!(ten_report.ttft_s > one_report.ttft_s + 4.0 * decode, "{ten_report:?}");
        // A round's tokens reach the client together: the gaps between them are rounds.
        assert!((ten.gap_fast_s - 10.0 * ten.plain_s).abs() < 1e-12 * ten.gap_fast_s);
        let p = ten_report.percentiles.clone().expect("percentiles");
        assert!(p.tpot_s[0] >= ten.gap_fast_s * (1.0 - 1e-12), "{p:?}");
        // The wait is uniform: its median is its mean, its 90th percentile 1.8 times it.
        let median_first = p.ttft_s[0];
        assert!((median_first - ten_report.ttft_s).abs() < 1e-6 * median_first, "{p:?} {ten_report:?}");
        assert!((ten.wait_quantile_s(0.9, true) - 1.8 * random(&ten)).abs() < 1e-12 * random(&ten));
        let spread = p.ttft_s[1] - p.ttft_s[0];
        assert!((spread - 0.8 * random(&ten)).abs() < 1e-6 * spread, "{p:?}");
    }

    #[test]
    fn prefill_steps_and_rounds_are_choices_of_in_flight_batching() {
        let errors = |batching: Batching, separate: bool, rounds: u64| {
            let mut s = llama70(4, 8, json!({}));
            s.task.setup.batching = batching;
            s.task.setup.prefill_steps = if separate { PrefillSteps::Separate } else { PrefillSteps::Mixed };
            s.task.setup.scheduler_steps = rounds;
            rules::check(&s)
        };
        let e = errors(Batching::Static, true, 1);
        assert!(e.iter().any(|e| e.field == "task.prefill_steps" && e.message.contains("in-flight")), "{e:?}");
        let e = errors(Batching::InFlight, false, 8);
        assert!(e.iter().any(|e| e.field == "task.scheduler_steps" && e.message.contains("separate")), "{e:?}");
        assert!(errors(Batching::InFlight, true, 8).is_empty());
        assert!(errors(Batching::Static, false, 1).is_empty());
    }

    #[test]
    fn the_hosts_time_per_step_is_waited_for_in_every_step() {
        // 2 ms a step and 0.25 ms a request: a static batch of 8 waits 4 ms for the host before
        // its first token and in every decode step; an in-flight step of 8 decoding requests
        // the same, drawn as its own op.
        let host = json!({"host_step_ms": 2.0, "host_request_ms": 0.25});
        let with_host = |extra: serde_json::Value| {
            let mut keys = host.clone();
            if let (Some(k), Some(x)) = (keys.as_object_mut(), extra.as_object()) {
                k.extend(x.clone());
            }
            keys
        };
        let (plain, hosted) = (llama70(4, 8, json!({})), llama70(4, 8, host.clone()));
        let (a, b) = (ServingCx::new(&plain).expect("serving"), ServingCx::new(&hosted).expect("serving"));
        assert!((b.host_s(8.0) - 4e-3).abs() < 1e-15 && a.host_s(8.0) == 0.0);
        assert!((b.ttft_s() - a.ttft_s() - 4e-3).abs() < 1e-12);
        let (steps_a, steps_b) = (a.decode_steps(1, 10).0, b.decode_steps(1, 10).0);
        assert!((steps_b - steps_a - 10.0 * 4e-3).abs() < 1e-12, "{steps_a} {steps_b}");
        let (ra, rb) = (crate::engine::evaluate(&plain), crate::engine::evaluate(&hosted));
        let (sa, sb) = (ra.serving.as_ref().expect("serving"), rb.serving.as_ref().expect("serving"));
        assert!((sb.e2e_s - sa.e2e_s - 256.0 * 4e-3).abs() < 1e-9, "{} {}", sa.e2e_s, sb.e2e_s);
        let waits = |r: &crate::engine::report::Report| {
            r.timeline.iter().filter(|o| o.name.kind == crate::engine::ops::OpKind::Idle).count()
        };
        assert_eq!((waits(&ra), waits(&rb)), (0, 1));
        // In flight: each step waits for the host, for its decoding requests and the prompt it
        // prefills; the step drawn has the wait as an op of its own.
        let s = inflight(8, with_host(json!({})));
        let sv = ServingCx::new(&s).expect("serving");
        let step = sv.engine_step(8.0, 0.0, 0.0);
        let bare = ServingCx::new(&inflight(8, json!({}))).expect("serving").engine_step(8.0, 0.0, 0.0);
        assert!((step.seconds - bare.seconds - 4e-3).abs() < 1e-12 && step.requests == 8.0);
        assert_eq!(sv.engine_step(7.0, 100.0, 0.0).requests, 8.0);
        let r = crate::engine::evaluate(&s);
        assert_eq!(waits(&r), 1);
        let drawn = sv.steady_at_load().0.drawn;
        assert!((r.iteration_s - drawn.seconds).abs() < 1e-9 * drawn.seconds, "{} {}", r.iteration_s, drawn.seconds);
    }
}
