//! One job: the default model's timeline builder, on which every default-model evaluation
//! (training, serving, recommendation models, convolutional networks) emits its ops: it places
//! each op on the shared scheduler as it is pushed, on the computation or communication
//! stream, or on the data-parallel stream where the data-parallel ranks span nodes
//! ([`DataParallelStream`]), and adds the wait for a host thread that launches collectives.

use crate::engine::ops::{Block, Deps, Op, OpKind, OpName, Phase, Stream};
use crate::engine::schedule::{Schedule, Scheduler};

/// Builds the op timeline of the drawn (slowest) pipeline stage, op by op, on the shared scheduler.
pub(super) struct Timeline {
    ops: Vec<Op>,
    sched: Scheduler,
    /// How long a collective waits, after its inputs are ready, for the host thread that
    /// launches it, s: half of [`Setup::collective_cycle_s`](crate::engine::scenario::Setup).
    launch_wait_s: f64,
    /// The collectives that waited for it: (op index, the wait in their duration, s).
    launch_waits: Vec<(u32, f64)>,
    /// Whether the weight gathers, and whether the gradient reductions, run on a stream of
    /// their own ([`Stream::DataParallel`]): where their ranks span nodes.
    data_parallel_stream: DataParallelStream,
}

/// Which data-parallel collectives run on [`Stream::DataParallel`] rather than on the
/// communication stream.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(super) struct DataParallelStream {
    /// ZeRO-3/FSDP weight gathers.
    pub gathers: bool,
    /// Gradient all-reduces and reduce-scatters.
    pub reductions: bool,
}

impl Timeline {
    pub(super) fn new(capacity: usize) -> Timeline {
        Timeline {
            ops: Vec::with_capacity(capacity),
            sched: Scheduler::without_barrier(),
            launch_wait_s: 0.0,
            launch_waits: Vec::new(),
            data_parallel_stream: DataParallelStream::default(),
        }
    }

    /// The same, with the data-parallel collectives `on` a stream of their own.
    pub(super) fn with_data_parallel_stream(self, on: DataParallelStream) -> Timeline {
        Timeline { data_parallel_stream: on, ..self }
    }

    /// The same, with collectives launched by a host thread that wakes every `cycle_s` (Horovod's
    /// background thread): each starts half a cycle after its inputs are ready on average, or
    /// when its stream is free if that is later. The wait is part of the collective's time on
    /// its stream; a collective queued behind another has already waited, and pays only what is
    /// left.
    pub(super) fn with_collective_cycle(capacity: usize, cycle_s: f64) -> Timeline {
        Timeline { launch_wait_s: cycle_s / 2.0, ..Timeline::new(capacity) }
    }

    /// Appends an op after `after` (op indices, any stream) and returns its index. Zero-length
    /// ops are skipped (`None` back): there is nothing to show or wait for.
    pub(super) fn push(&mut self, name: OpName, duration_s: f64, after: &[Option<u32>]) -> Option<u32> {
        if duration_s <= 0.0 {
            return None;
        }
        let own = match name.kind {
            OpKind::WeightAllGather => self.data_parallel_stream.gathers,
            OpKind::GradAllReduce | OpKind::GradReduceScatter => self.data_parallel_stream.reductions,
            _ => false,
        };
        let name = if own { name.on_data_parallel_stream() } else { name };
        let mut deps = Deps::default();
        let mut ready_s = 0.0f64;
        for id in after.iter().flatten() {
            if let Some(op) = self.ops.get(*id as usize) {
                deps = deps.and(*id, op.name.stream());
                ready_s = ready_s.max(op.end_s());
            }
        }
        let stream = name.stream();
        let duration_s = if self.launch_wait_s > 0.0 && stream.communicates() {
            duration_s + self.wait_for_launch(stream, ready_s)
        } else {
            duration_s
        };
        let start_s = self.sched.place(name, duration_s, ready_s);
        self.ops.push(Op { name, duration_s, deps, start_s });
        Some(self.ops.len() as u32 - 1)
    }

    /// The wait of the collective about to be pushed, whose inputs are ready at `ready_s`, for
    /// the thread that launches it, s; recorded in [`Timeline::launch_waits`]. Kept out of
    /// [`Timeline::push`], the explorer's hottest code, which only scenarios with a launch
    /// cycle reach.
    #[cold]
    #[inline(never)]
    fn wait_for_launch(&mut self, stream: Stream, ready_s: f64) -> f64 {
        let start_s = ready_s.max(self.sched.free_s(stream));
        let wait_s = (ready_s + self.launch_wait_s - start_s).max(0.0);
        if wait_s > 0.0 {
            self.launch_waits.push((self.ops.len() as u32, wait_s));
        }
        wait_s
    }

    pub(super) fn end_of(&self, id: Option<u32>) -> f64 {
        id.and_then(|i| self.ops.get(i as usize)).map_or(0.0, Op::end_s)
    }

    pub(super) fn finish(self) -> (Vec<Op>, Schedule) {
        let (ops, s, _) = self.finish_with_waits();
        (ops, s)
    }

    /// The ops, their schedule, and the launch waits in their durations ([`Report::launch_waits`]).
    pub(super) fn finish_with_waits(self) -> (Vec<Op>, Schedule, Vec<(u32, f64)>) {
        let s = self.sched.finish();
        (self.ops, s, self.launch_waits)
    }
}

pub(super) fn name(block: Block, layer: u64, phase: Phase, kind: OpKind, micro: u32) -> OpName {
    OpName::new(block, layer.min(i32::MAX as u64) as i32, phase, kind).micro(micro)
}
