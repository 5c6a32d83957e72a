//! A row of the LLM serving schema, typed: the model's shape, the cluster, the plan and how the
//! engine batched.

use super::{scenario_doc, task_config, with_keys, Cluster, Shape};
use crate::accuracy::columns::{Col, Row};
use crate::engine::raw::short;
use crate::engine::scenario::Sampling;
use serde_json::{json, Value};

/// How a serving row's engine batched.
#[derive(Clone, Copy, PartialEq)]
#[cfg_attr(test, derive(Debug))]
pub(in crate::accuracy) enum RowBatching {
    /// A static batch: the requests start together, the batch decodes to its longest output.
    Static,
    /// In flight: `batch` is the most requests the engine keeps in flight (a benchmark's
    /// concurrency, or the engine's own cap when lower), with the engine's token budget per
    /// step where the row states it, and the requests' arrival rate (requests/s) where the
    /// benchmark sent them at one, or the requests it sent at once (a burst, run until the
    /// last finishes); with neither, the engine runs at full load. `separate`: prompts in
    /// steps of their own (`prefill_steps` separate; blank or mixed: chunks in the decode
    /// steps), with `scheduler_steps` decode steps per scheduling round (blank: 1).
    /// `spread`: the requests' lengths spread exponentially around `input_len` and
    /// `output_len` (`length_spread` exponential, a dataset of real prompts such as ShareGPT;
    /// blank or fixed: every request of those lengths, a random dataset's).
    InFlight {
        step_tokens: Option<u64>,
        request_rate: Option<f64>,
        burst_requests: Option<u64>,
        separate: bool,
        scheduler_steps: Option<u64>,
        spread: bool,
    },
}

/// A row of the LLM serving schema.
#[cfg_attr(test, derive(Debug))]
pub(in crate::accuracy) struct InferenceRow<'a> {
    pub(in crate::accuracy) id: &'a str,
    pub(in crate::accuracy) model: &'a str,
    pub(in crate::accuracy) shape: Shape,
    pub(in crate::accuracy) cluster: Cluster<'a>,
    pub(in crate::accuracy) tp: u64,
    pub(in crate::accuracy) pp: u64,
    /// Weight format: `fp16`, `bf16`, `fp8`, `int8` or `int4`.
    pub(in crate::accuracy) format: &'static str,
    /// Requests served together (static) or kept in flight.
    pub(in crate::accuracy) batch: u64,
    pub(in crate::accuracy) input_len: u64,
    pub(in crate::accuracy) output_len: u64,
    pub(in crate::accuracy) batching: RowBatching,
    pub(in crate::accuracy) cuda_graphs: bool,
    pub(in crate::accuracy) custom_all_reduce: bool,
    /// The engine's host time per step that the GPU waits for, ms: a fixed part and a part per
    /// request in the step (`host_step_ms`, `host_request_ms`; blank: 0).
    pub(in crate::accuracy) host_ms: [f64; 2],
    /// How the benchmark sampled each next token: `greedy`, `random` or `top-p` (blank: greedy).
    pub(in crate::accuracy) sampling: &'a str,
    /// How the engine's prefill computes attention where the row says (`attention`: `materialized`,
    /// scores through HBM, as FasterTransformer 5.0's GPT context decoder did); blank: the
    /// model's default, a fused kernel, as today's engines run it.
    pub(in crate::accuracy) attention: Option<&'a str>,
}

impl<'a> InferenceRow<'a> {
    pub(super) fn read(r: &Row<'a>, defaults: &mut Vec<String>) -> Result<InferenceRow<'a>, String> {
        let (input_len, output_len) = (r.need(Col::InputLen)?, r.need(Col::OutputLen)?);
        let format = match r.get(Col::Dtype) {
            "" => {
                defaults.push("dtype blank: fp16".into());
                "fp16"
            }
            "fp16" => "fp16",
            "bf16" => "bf16",
            "fp8" => "fp8",
            "int8" => "int8",
            "int4" => "int4",
            other => return Err(format!("dtype \"{}\" is not fp16, bf16, fp8, int8 or int4", short(other))),
        };
        let shape = Shape::read(r, defaults, false)?;
        // Serving rows do not state the network.
        let cluster = Cluster::read(r, false)?;
        let (tp, pp) = (r.positive(Col::Tp)?, r.positive(Col::Pp)?);
        if tp.saturating_mul(pp) != cluster.n_gpus {
            return Err(format!("tp x pp = {} but n_gpus = {}", tp.saturating_mul(pp), cluster.n_gpus));
        }
        let batch = r.need(Col::Batch)?;
        let request_rate = match r.get(Col::RequestRate) {
            "" => None,
            _ => match r.number(Col::RequestRate)? {
                rate if rate > 0.0 => Some(rate),
                _ => return Err("column request_rate must be more than 0 requests/s".into()),
            },
        };
        let burst_requests = match r.count(Col::BurstRequests)? {
            Some(0) => return Err("column burst_requests must be at least 1".into()),
            Some(_) if request_rate.is_some() => {
                return Err(
                    "columns request_rate and burst_requests: a burst is sent at once, not at a rate; fill one".into()
                )
            }
            n => n,
        };
        let separate = match r.get(Col::PrefillSteps) {
            "" | "mixed" => false,
            "separate" => true,
            other => return Err(format!("prefill_steps \"{}\" is not mixed or separate", short(other))),
        };
        let scheduler_steps = match r.count(Col::SchedulerSteps)? {
            Some(0) => return Err("column scheduler_steps must be at least 1".into()),
            Some(n) if n > 1 && !separate => {
                return Err("column scheduler_steps above 1 needs prefill_steps separate (rounds of decode steps are modelled with prompts in steps of their own)".into())
            }
            n => n,
        };
        let spread = match r.get(Col::LengthSpread) {
            "" | "fixed" => false,
            "exponential" => true,
            other => return Err(format!("length_spread \"{}\" is not fixed or exponential", short(other))),
        };
        let batching = match r.get(Col::Batching) {
            "" | "static" if spread => {
                return Err("column length_spread needs batching inflight: a static batch's requests share one length".into())
            }
            "" | "static" if separate || scheduler_steps.is_some() => {
                return Err("columns prefill_steps and scheduler_steps need batching inflight: a static batch prefills its prompts together".into())
            }
            "" | "static" if request_rate.is_some() => {
                return Err("column request_rate needs batching inflight: a static batch starts together".into())
            }
            "" | "static" if burst_requests.is_some() => {
                return Err("column burst_requests needs batching inflight: a static batch is one batch".into())
            }
            "" | "static" => RowBatching::Static,
            "inflight" => RowBatching::InFlight {
                step_tokens: match r.count(Col::StepTokens)? {
                    Some(0) => return Err("column step_tokens must be at least 1".into()),
                    Some(n) => Some(n),
                    None => {
                        defaults
                            .push("step_tokens blank: 2048 tokens per engine step (vLLM's default on A100s)".into());
                        None
                    }
                },
                request_rate,
                burst_requests,
                separate,
                scheduler_steps,
                spread,
            },
            other => return Err(format!("batching \"{}\" is not static or inflight", short(other))),
        };
        // The shared set's runs (FasterTransformer) launch every kernel from the host and
        // all-reduce with NCCL: blank cells say so; the calculator's defaults are today's engines'.
        let mut engine_flag = |key: Col, blank: &str| -> Result<bool, String> {
            if r.get(key).is_empty() {
                defaults.push(format!("{key} blank: {blank}"));
            }
            r.flag(key, false)
        };
        let cuda_graphs =
            engine_flag(Col::CudaGraphs, "off (each kernel launched from the host, as FasterTransformer does)")?;
        let mut host_ms = [0.0; 2];
        for (col, ms) in [Col::HostStepMs, Col::HostRequestMs].into_iter().zip(host_ms.iter_mut()) {
            if !r.get(col).is_empty() {
                *ms = match r.number(col)? {
                    x if (0.0..=crate::engine::validate::MAX_HOST_MS).contains(&x) => x,
                    _ => {
                        return Err(format!(
                            "column {col} must be from 0 to {} ms",
                            crate::engine::validate::MAX_HOST_MS
                        ))
                    }
                };
            }
        }
        let custom_all_reduce = engine_flag(
            Col::CustomAllReduce,
            "off (NCCL all-reduces: FasterTransformer's own kernel is opt-in, --enable_custom_all_reduce)",
        )?;
        // The row's words go to the task as they are: validation names the options of a wrong one.
        let sampling = match r.get(Col::Sampling) {
            "" => {
                defaults.push(format!("{} blank: greedy (temperature 0, what serving benchmarks send)", Col::Sampling));
                Sampling::Greedy.config_name()
            }
            given => given,
        };
        let attention = match r.get(Col::Attention) {
            "" => None,
            kernel => Some(kernel),
        };
        Ok(InferenceRow {
            sampling,
            attention,
            id: r.get(Col::Id),
            model: r.get(Col::Model),
            shape,
            cluster,
            tp,
            pp,
            format,
            batch,
            input_len,
            output_len,
            batching,
            cuda_graphs,
            custom_all_reduce,
            host_ms,
        })
    }

    pub(super) fn scenario(&self) -> Value {
        let model = self.shape.config(
            self.model,
            self.input_len + self.output_len,
            self.attention.map_or(json!({}), |a| json!({ "attention": a })),
        );
        let mut levels: Vec<(&str, u64)> = [("tp", self.tp), ("pp", self.pp)].into_iter().filter(|l| l.1 > 1).collect();
        if levels.is_empty() {
            levels.push(("ddp", 1));
        }
        let task = task_config(
            self.id,
            "inference",
            &levels,
            self.cluster.n_gpus,
            self.batch,
            json!({
                "input_tokens": self.input_len,
                "output_tokens": self.output_len,
                "weight_format": self.format,
                "kv_format": if self.format == "int4" { "fp16" } else { self.format },
                "cuda_graphs": self.cuda_graphs,
                "custom_all_reduce": self.custom_all_reduce,
                "sampling": self.sampling,
            }),
        );
        let [step_ms, request_ms] = self.host_ms;
        let task = if step_ms > 0.0 || request_ms > 0.0 {
            with_keys(task, json!({ "host_step_ms": step_ms, "host_request_ms": request_ms }))
        } else {
            task
        };
        let task = match self.batching {
            RowBatching::Static => task,
            RowBatching::InFlight { step_tokens, request_rate, burst_requests, separate, scheduler_steps, spread } => {
                let mut keys = json!({ "batching": "inflight" });
                if spread {
                    keys["length_spread"] = json!("exponential");
                }
                if separate {
                    keys["prefill_steps"] = json!("separate");
                }
                if let Some(n) = scheduler_steps {
                    keys["scheduler_steps"] = json!(n);
                }
                if let Some(n) = step_tokens {
                    keys["step_tokens"] = json!(n);
                }
                if let Some(rate) = request_rate {
                    keys["request_rate"] = json!(rate);
                }
                if let Some(n) = burst_requests {
                    keys["burst_requests"] = json!(n);
                }
                with_keys(task, keys)
            }
        };
        scenario_doc(model, self.cluster.system(self.model), task)
    }
}
