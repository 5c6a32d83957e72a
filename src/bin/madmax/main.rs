//! The `madmax` command line: a thin face over the engine. It parses arguments into a typed
//! command ([`args`]), reads files, prints reports and times the engine; it computes nothing
//! itself. One module per command ([`eval`], [`explore`], [`validate`], [`stories`],
//! [`paper`], [`bench`]); [`io`] is what they read and write.

use args::{Command, Usage};
use std::process::ExitCode;

#[macro_use]
mod io;
mod args;
mod bench;
mod eval;
mod explore;
mod paper;
mod stories;
mod validate;

const USAGE: &str = "\
madmax: performance of large ML models on GPU clusters (the MAD-Max model)

Usage:
  madmax eval FILE [--json] [--timeline] [--mode default|reference]
      FILE holds {\"model\": {...}, \"system\": {...}, \"task\": {...}} in the MAD-Max config
      format, or is a golden case file (configs under \"inputs\"). Use - for standard input.
      --json       print one JSON object (times in ms, throughput in samples/s)
      --timeline   with --json, add every op of each stream: [name, start_s, duration_s,
                   slack_s] (slack: how much later the op could end without delaying the
                   end; 0 on the critical path); computation, communication, and in the
                   default model data_parallel where the data-parallel ranks span nodes
      --mode       which model evaluates FILE: the default model, or MAD-Max paper mode
                   (reference). Without it, task.mode decides; a MAD-Max config without a
                   mode key is evaluated in reference mode, as the paper's code would (a
                   CNN or an encoder-decoder, which MAD-Max does not have, in the default
                   model)
  madmax explore FILE [--json] [--top N] [--local-batches 1,2,4,8] [--mode default|reference]
                 [--max-tpot-ms MS] [--max-ttft-ms MS] [--weight-formats L] [--kv-formats L]
      search every parallelization plan the model accepts for FILE's model on its cluster
      (MAD-Max paper mode: what the reference accepts; the default model: N-D plans of
      tensor, context, expert, data (plain, fully sharded, or, without a pipeline, hybrid:
      sharded within a node, replicated across nodes) and pipeline parallelism, each trained with
      every power-of-two micro-batch without a pipeline (the largest that fits without
      recomputation is often the fastest), or with one its four smallest (more micro-batches,
      a smaller bubble) and its largest (for sequences of few tokens), no recomputation,
      selective (of the core attention, then with the norms and a mixture of experts'
      activation too) or full (more only where less does not fit), ZeRO 0, 1 or 2 with plain data parallelism, sequence parallelism with
      tensor parallelism (for a mixture of experts, each expert split by every tensor-parallel
      rank or whole on each), 1 to 8 pipeline chunks per GPU (each count that makes the
      busiest stage's largest chunk smaller), and the overlap options on (gradients reduced during the backward pass,
      tensor-parallel communication overlapped with GEMMs, ZeRO 1/2's updated weights gathered
      during the next forward pass; in FP8 training, weights gathered in FP8), the best 16 that fit (at most two
      settings of a plan) then tried with them off, with the other collective algorithms
      (ring, tree, two-level; on more than one node), with ZeRO-1 within each node where data
      parallelism spans nodes, and with their levels placed otherwise on the nodes (tensor
      parallelism innermost, each other order that changes which groups share a node), or,
      where every setting on every plan would take more than half a search may (large
      mixtures of experts, large batches on pipelines), each plan first with the task's own
      settings and those that cost no time (overlap options, sequence parallelism, ZeRO-1; a
      pipeline at 4 micro-batches per stage or more), and the 64 most promising with every
      one (fastest, and where none fits the lightest too; only plans some setting fits, at
      least half as fast as the fastest that fits), then the 4 pipelines that do not fit
      that would run fastest interleaved;
      for recommendation models, embedding tables split over GPUs
      table-, row- or column-wise, the bottom MLP data-parallel or on one GPU; for a CNN, data
      parallelism with its gradients reduced during or after the backward pass and, across
      nodes, by each collective algorithm); for LLM serving,
      --max-tpot-ms marks plans slower than MS per output token as infeasible, and
      --max-ttft-ms plans whose first token comes after MS, and --weight-formats and
      --kv-formats (lists of fp16, bf16, fp8, int8, int4) try every plan with each pair of
      weight and KV-cache formats (one list alone: the task's other format)
      (global batch fixed at the task's own unless --local-batches is given), rank them by
      throughput, and show the best against the task's own plan (when the default model's
      rules refuse that plan, it says why and searches from data parallelism at the same
      global batch, quoting no speed-up); plans whose memory does not fit in HBM are listed,
      marked. A search takes at most 100,000 plans and 50 million
      timeline ops (exit 2 saying how to shrink it); --local-batches at most 64 values
  madmax validate [FILE.csv ...] [--json]
      predict every row of CSVs of measured runs (schema of validation/SOURCES.md; - reads
      one from standard input; no FILE: the runs that ship with madmax) with the default
      model; print predicted vs measured, the signed error and a summary (median, mean and
      max absolute error, per set where rows have a set column: calibration, runs some
      choice of the model looked at, and held out, runs no choice looked at; per source), the
      spread of measured over predicted time per kind of plan and GPU (training runs by
      their kinds of parallelism, static batches of serving launched kernel by kernel by
      their tensor- and pipeline-parallel degrees, end to end: what the calculator quotes for
      runs like these), and the floor: how close any model can come to every row
      when two rows that do the same work measured a larger micro-batch slower; blank cells
      take documented defaults and each row lists the ones it used; rows it cannot model
      are skipped with the reason. With the shipped runs, also the model's GEMM times
      against GEMMs profiled one by one on an A100 and an H100, per GPU.
      --json: {\"rows\": [{id, predicted, measured, error, ...}], \"summary\", \"bands\", \"floor\"}
      and, with the shipped runs, \"kernels\": [{gpu, label, kernels, median_error, ...}]
      A CSV holds at most 200,000 rows (256 MB); exit 2 when no row could be predicted.
  madmax stories [--json]
      the library of famous runs: for each story, what its source reported, what the model
      predicts for the same setting and the signed difference, with the citation.
      --json: [{id, title, metric, unit, reported, predicted, difference, citation}]
  madmax paper [--json] [--mode default|reference]
      the MAD-Max paper's findings, computed on its workload suite (the scenario presets taken
      from the reference's golden cases) in both models, or the one --mode names: exposed
      communication as a share of iteration time (so of GPU hours), overall, per model family
      and per GPU generation; the speed-up the explorer finds over each workload's own plan
      (the best plan that fits at the same global batch), for training and for inference,
      with the three largest gains of each and both their plans; and co-design what-ifs
      (compute, HBM bandwidth, NVLink, NIC at x0.5 to x8, each workload's own plan; HBM
      capacity: how many own plans fit); each beside what the paper reported. Seconds in
      the default model (one plan search per workload).
      --json: [{mode, workloads, exposed, speedups, codesign, capacity}], one per model (shares 0..1,
      speed-ups and co-design as ratios)
  madmax bench DIR [--min-ms N] [--explore DIR]
      time validate + evaluate on every case file in DIR and compare with the reference's own
      time (the case's ref_wall_s.median): N ms of repetitions per case (default 20), spread
      over 5 rounds through all cases; each case reports the mean of its quietest round;
      then the explorer's plans/s on the paper's flagship run in both modes
      --explore DIR: also, for each scenario file in DIR, the explorer's plans per search,
      plans/s and full-search time in the default model, and its best plan that fits
      against a brute-force sweep of every training setting
  madmax --help | --version

Exit status: 0 on success, 2 on invalid input or usage, 1 on other failures.";

fn main() -> ExitCode {
    match args::parse(std::env::args_os().skip(1)) {
        Ok(Command::Eval(a)) => eval::run(&a),
        Ok(Command::Explore(a)) => explore::run(&a),
        Ok(Command::Validate(a)) => validate::run(&a),
        Ok(Command::Stories { json }) => stories::run(json),
        Ok(Command::Paper { json, mode }) => paper::run(json, mode),
        Ok(Command::Bench(a)) => bench::run(&a),
        Ok(Command::Version) => {
            outln!("madmax {}", env!("CARGO_PKG_VERSION"));
            ExitCode::SUCCESS
        }
        Ok(Command::Help) => {
            outln!("{USAGE}");
            ExitCode::SUCCESS
        }
        Err(Usage(msg)) => {
            errln!("madmax: {msg}\n\n{USAGE}");
            ExitCode::from(2)
        }
    }
}
