//! The two-stream scheduler (SPEC section 6): one pass over the ops in emission order.
//!
//! Each stream runs its ops in order; an op starts when its stream is free and every op it
//! depends on has ended. A new phase (backward after forward) starts both streams at the end
//! of the previous phase. O(number of ops); no names, no searching. It knows nothing about
//! models, so the default model and reference mode share it.

use super::ops::{Category, OpName, Phase, Stream};

/// Per-category busy time, s, summed in emission order (SPEC section 6, "Accumulators").
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Totals {
    pub gemm_s: f64,
    pub emb_s: f64,
    /// The optimizer step (default model).
    pub optimizer_s: f64,
    pub all2all_s: f64,
    pub allreduce_s: f64,
    pub allgather_s: f64,
    pub reducescatter_s: f64,
    /// Pipeline and ring point-to-point transfers (default model).
    pub p2p_s: f64,
    /// Computation-stream idle time that is not communication: pipeline bubble, input wait,
    /// waiting for other GPUs.
    pub idle_s: f64,
}

impl Totals {
    /// The total of one category, s.
    pub fn get(&self, c: Category) -> f64 {
        match c {
            Category::Gemm => self.gemm_s,
            Category::Emb => self.emb_s,
            Category::AllToAll => self.all2all_s,
            Category::AllReduce => self.allreduce_s,
            Category::AllGather => self.allgather_s,
            Category::ReduceScatter => self.reducescatter_s,
            Category::Optimizer => self.optimizer_s,
            Category::P2p => self.p2p_s,
            Category::Idle => self.idle_s,
        }
    }
}

/// What the scheduler found.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Schedule {
    pub totals: Totals,
    /// When the last op of the last phase ends, s.
    pub end_s: f64,
}

/// The two-stream scheduler, fed one op at a time in emission order (the graph builder places
/// each op as it is emitted, so a graph is walked once).
#[derive(Clone, Debug)]
pub struct Scheduler {
    /// When each stream is next free, s ([`Stream::ALL`]'s order).
    cursor: [f64; 3],
    phase: Phase,
    /// Busy time per [`Category`], in its declaration order.
    totals: [f64; 9],
    /// Whether a new phase waits for both streams (MAD-Max, SPEC Q21). The default model
    /// interleaves forward and backward passes of micro-batches and orders them by
    /// dependencies alone.
    barrier: bool,
}

impl Scheduler {
    /// MAD-Max's scheduler: a new phase waits for both streams to finish the last one (SPEC
    /// Q21); reference mode's graph builder uses it.
    pub fn with_phase_barrier() -> Scheduler {
        Scheduler { cursor: [0.0; 3], phase: Phase::Forward, totals: [0.0; 9], barrier: true }
    }

    /// A scheduler without the phase barrier: ops wait only for their stream and their
    /// dependencies (the default model).
    pub fn without_barrier() -> Scheduler {
        Scheduler { cursor: [0.0; 3], phase: Phase::Forward, totals: [0.0; 9], barrier: false }
    }

    /// Places an op whose dependencies all end by `ready_s` (0 when it has none) and returns
    /// its start time, s: when its stream is free, and not before `ready_s`.
    #[inline(always)]
    pub fn place(&mut self, name: OpName, duration_s: f64, ready_s: f64) -> f64 {
        if self.barrier && name.phase != self.phase {
            // Hard barrier between phases (SPEC Q21).
            let t = self.end_s();
            self.cursor = [t; 3];
            self.phase = name.phase;
        }
        let lane = name.stream() as usize;
        let start = later(self.cursor[lane], ready_s);
        self.cursor[lane] = start + duration_s;
        self.totals[name.category() as usize] += duration_s;
        start
    }

    /// When `stream` is next free, s (the end of the last op placed on it).
    pub fn free_s(&self, stream: Stream) -> f64 {
        self.cursor[stream as usize]
    }

    /// Whether a new phase waits for both streams (MAD-Max's barrier, SPEC Q21).
    pub fn has_phase_barrier(&self) -> bool {
        self.barrier
    }

    /// The totals and the end time of everything placed so far.
    pub fn finish(&self) -> Schedule {
        let t = self.totals;
        let totals = Totals {
            gemm_s: t[Category::Gemm as usize],
            emb_s: t[Category::Emb as usize],
            all2all_s: t[Category::AllToAll as usize],
            allreduce_s: t[Category::AllReduce as usize],
            allgather_s: t[Category::AllGather as usize],
            reducescatter_s: t[Category::ReduceScatter as usize],
            optimizer_s: t[Category::Optimizer as usize],
            p2p_s: t[Category::P2p as usize],
            idle_s: t[Category::Idle as usize],
        };
        Schedule { totals, end_s: self.end_s() }
    }

    /// When the last op placed so far ends, s.
    fn end_s(&self) -> f64 {
        later(later(self.cursor[0], self.cursor[1]), self.cursor[2])
    }
}

/// The later of two times (never NaN here). Written as a select so that it compiles to one
/// branch-free `maxsd`; which time wins is data-dependent, so a branch would mispredict.
#[inline(always)]
pub(crate) fn later(a: f64, b: f64) -> f64 {
    if a > b {
        a
    } else {
        b
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Schedules a whole graph anew: sets every op's start time and returns the totals and the end
    /// time. Dependencies must point at earlier ops.
    fn schedule(ops: &mut [Op]) -> Schedule {
        let mut s = Scheduler::with_phase_barrier();
        for i in 0..ops.len() {
            let (placed, rest) = ops.split_at_mut(i);
            let op = &mut rest[0];
            let ready_s = op.deps.ids().filter_map(|d| placed.get(d as usize)).map(Op::end_s).fold(0.0, later);
            op.start_s = s.place(op.name, op.duration_s, ready_s);
        }
        s.finish()
    }

    use crate::engine::ops::tests::name as n;
    use crate::engine::ops::{Block, Op, OpKind};
    use crate::engine::reference::graph::{Dep, GraphBuilder};

    #[test]
    fn overlap_dependencies_and_the_phase_barrier() {
        use Block::*;
        use OpKind::*;
        use Phase::*;
        let mut b = GraphBuilder::new(2, 8);
        let ag0 = n(Attn, 0, Forward, WeightAllGather);
        let ag1 = n(Attn, 1, Forward, WeightAllGather);
        b.emit(ag0, 2.0, &[]); // comm 0..2
        b.emit(n(Attn, 0, Forward, Compute), 3.0, &[Dep::Op(ag0)]); // comp 2..5
        b.emit(ag1, 2.0, &[]); // comm 2..4 (overlaps compute)
        b.emit(n(Attn, 1, Forward, Compute), 3.0, &[Dep::Op(ag1)]); // comp 5..8
        b.emit(n(Attn, 1, Forward, ActAllReduce), 4.0, &[Dep::Op(n(Attn, 1, Forward, Compute))]); // comm 8..12
        b.emit(n(Attn, 1, Backward, Compute), 1.0, &[]); // barrier: 12..13
        let (mut ops, built) = b.finish();
        // Placing while building and scheduling the finished graph anew agree.
        let s = schedule(&mut ops);
        assert_eq!(s, built);
        let starts: Vec<f64> = ops.iter().map(|o| o.start_s).collect();
        assert_eq!(starts, vec![0.0, 2.0, 2.0, 5.0, 8.0, 12.0]);
        assert_eq!(s.end_s, 13.0);
        assert_eq!(s.totals.gemm_s, 7.0);
        assert_eq!(s.totals.allgather_s, 4.0);
        assert_eq!(s.totals.allreduce_s, 4.0);
    }
}
