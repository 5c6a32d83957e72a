//! The reference's op graph builder: ops in emission order, each dependency resolved by name
//! to the latest matching op emitted so far, MAD-Max's way (only the other stream's ops, in
//! the current phase: SPEC section 6, Q17; names outside the layers match nothing, Q18; the
//! embedding's collectives answer one pattern, Q30), each op placed on the scheduler with its
//! phase barrier (Q21). Only reference mode builds graphs this way: the default model places
//! its ops with explicit dependencies (`extended::timeline::Timeline`).

use crate::engine::ops::{Block, Deps, Op, OpKind, OpName, Phase, Stream};
use crate::engine::schedule::{later, Schedule, Scheduler};

/// The scheduler MAD-Max's timelines run on: a new phase waits for both streams (SPEC Q21).
/// Replaying a reference-mode timeline ([`crate::engine::Report::end_with`]) takes it too.
pub fn scheduler() -> Scheduler {
    Scheduler::with_phase_barrier()
}

/// A dependency as written in a model's op list: a name, the family of an embedding's
/// communication ops (the reference's loose pattern `EMB_f_c` / `EMB_b_c`, SPEC Q30), or
/// nothing (a placeholder that keeps dependency lists of fixed length).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dep {
    Op(OpName),
    EmbComm(Phase),
    Nothing,
}

/// Builds an op graph in emission order, resolving each dependency to the latest matching op
/// emitted so far (the one that ends last, since each stream runs in order), and placing each
/// op on its stream with the [`Scheduler`] as it comes.
///
/// The lookup is a table indexed by (block/kind pair, phase, layer) holding the latest op of
/// that name (its index plus one). Layers from -2 to `max_layers + 1` have
/// slots; those outside `0..max_layers` are never written, nor is slot 0 (what a pair that no
/// dependency names reads), so names that match nothing (Q18) read "none" without a test. Ops
/// that no dependency names are written to the last slot, which is never read. Everything is inlined and
/// branch-light: building the graph is the engine's hot path.
pub struct GraphBuilder {
    ops: Vec<Op>,
    scheduler: Scheduler,
    latest: Vec<Entry>,
    /// Slots per (pair, phase): `max_layers + 4` (two below, two above).
    width: usize,
}

/// The latest op of a name: its index plus one (0: none). Small and zero-initialised, so that
/// a fresh table comes straight from the allocator.
type Entry = u32;

/// Padding slots below layer 0 (dependencies name layers down to -2).
const PAD: i64 = 2;

impl GraphBuilder {
    // Forced inlining (the hot path of `make bench`) on native builds only: in the wasm site it
    // copied each call's error formatting or lookup into every caller, 13 KB gzip in all.
    /// A builder for a model whose blocks have at most `max_layers` layers, expecting about
    /// `capacity` ops.
    pub fn new(max_layers: u64, capacity: usize) -> GraphBuilder {
        let width = max_layers as usize + 2 * PAD as usize;
        GraphBuilder {
            ops: Vec::with_capacity(capacity),
            scheduler: scheduler(),
            latest: vec![0; 2 + NAMEABLE_PAIRS * 2 * width],
            width,
        }
    }

    /// Appends an op that waits for `deps` (resolved now, against the ops emitted so far) and
    /// places it on its stream.
    #[cfg_attr(not(target_arch = "wasm32"), inline(always))]
    pub fn emit(&mut self, name: OpName, duration_s: f64, deps: &[Dep]) {
        let own = name.stream() as usize;
        let mut ids = [0u32; 2];
        let mut ready_s = 0.0;
        for dep in deps {
            let (slot, stream) = match *dep {
                Dep::Op(n) => (self.slot(nameable(n.block, n.kind), n.phase, n.layer), n.stream() as usize),
                Dep::EmbComm(phase) => (self.slot(EMB_COMM, phase, 0), Stream::Communication as usize),
                Dep::Nothing => (0, own),
            };
            // MAD-Max semantics: only ops of the *other* stream, in the current phase, already
            // emitted (SPEC section 6; same-stream dependencies are inert, Q17).
            let id1 = if stream != own { self.latest[slot] } else { 0 };
            ids[stream] = ids[stream].max(id1);
            if let Some(op) = self.ops.get((id1 as usize).wrapping_sub(1)) {
                ready_s = later(ready_s, op.end_s());
            }
        }
        let deps = Deps::of_latest(ids);
        let start_s = self.scheduler.place(name, duration_s, ready_s);
        // Ops no dependency names go to the last slot, which is never read.
        let pair = nameable(name.block, name.kind);
        let own_slot = if pair == NO { self.latest.len() - 1 } else { self.slot(pair, name.phase, name.layer) };
        self.latest[own_slot] = self.ops.len() as u32 + 1;
        self.ops.push(Op { name, duration_s, deps, start_s });
    }

    /// The finished graph, in emission order, with start times; and its schedule.
    pub fn finish(self) -> (Vec<Op>, Schedule) {
        let schedule = self.scheduler.finish();
        (self.ops, schedule)
    }

    /// The table slot of a name; 0 (never written) for a pair no dependency names.
    #[cfg_attr(not(target_arch = "wasm32"), inline(always))]
    fn slot(&self, pair: u8, phase: Phase, layer: i32) -> usize {
        // Layers outside the padded range clamp onto a padding slot, which is never written.
        let l = (layer as i64 + PAD).clamp(0, self.width as i64 - 1) as usize;
        let s = 1 + (pair as usize * 2 + phase as usize) * self.width + l;
        if pair == NO {
            0
        } else {
            s
        }
    }
}

/// The slot family of each block/kind pair a dependency can name, by `[block][kind]`; `NO` for
/// ops no dependency ever names (gradient collectives). The embedding's collectives share one
/// family: dependencies name them together (`EMB_*_c`, SPEC Q30).
const NO: u8 = u8::MAX;
const EMB_COMM: u8 = 15;
const NAMEABLE_PAIRS: usize = 16;
#[rustfmt::skip]
const PAIR: [[u8; 9]; 6] = [
    // Compute WgtAG GradAR GradRS ActAR EmbA2A EmbAR MoeDisp MoeComb
    [14, NO, NO, NO, NO, EMB_COMM, EMB_COMM, NO, NO], // Emb
    [0, 1, NO, NO, 2, NO, NO, NO, NO],                 // MlpBot
    [3, 4, NO, NO, 5, NO, NO, NO, NO],                 // MlpTop
    [6, 7, NO, NO, 8, NO, NO, NO, NO],                 // Attn
    [9, 10, NO, NO, 11, NO, NO, NO, NO],               // Fc
    [NO, NO, NO, NO, NO, NO, NO, 12, 13],              // Moe
];

/// The slot family of a name; the default model's blocks and kinds are never named by a
/// reference dependency.
fn nameable(block: Block, kind: OpKind) -> u8 {
    match PAIR.get(block as usize).and_then(|row| row.get(kind as usize)) {
        Some(&p) => p,
        None => NO,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::ops::tests::name;

    #[test]
    fn dependencies_resolve_to_the_latest_op_of_the_other_stream_only() {
        use Block::*;
        use OpKind::*;
        use Phase::*;
        let mut b = GraphBuilder::new(4, 8);
        let ag0 = name(Attn, 0, Forward, WeightAllGather);
        let c0 = name(Attn, 0, Forward, Compute);
        let c1 = name(Attn, 1, Forward, Compute);
        b.emit(ag0, 1.0, &[Dep::Op(name(Attn, -1, Forward, Compute))]); // index 0: matches nothing
        b.emit(c0, 1.0, &[Dep::Op(ag0)]); // 1: waits for 0
        b.emit(c1, 1.0, &[Dep::Op(c0), Dep::Op(name(Attn, 1, Forward, WeightAllGather))]); // 2
        let (ops, _) = b.finish();
        assert_eq!(ops[0].deps.to_vec(), Vec::<u32>::new());
        assert_eq!(ops[1].deps.to_vec(), vec![0]);
        // Same-stream dependency (c0) is inert; the all-gather of layer 1 was never emitted.
        assert_eq!(ops[2].deps.to_vec(), Vec::<u32>::new());
    }

    #[test]
    fn emb_comm_family_matches_both_collectives() {
        use Block::*;
        use OpKind::*;
        use Phase::*;
        let mut b = GraphBuilder::new(1, 4);
        b.emit(name(Emb, 0, Backward, EmbAllReduce), 1.0, &[]);
        b.emit(name(Emb, 0, Backward, EmbAllToAll), 1.0, &[]);
        b.emit(name(Emb, 0, Backward, Compute), 1.0, &[Dep::EmbComm(Backward)]);
        assert_eq!(b.finish().0[2].deps.to_vec(), vec![1]);
    }

    #[test]
    fn only_the_latest_dependency_per_stream_is_kept() {
        use Block::*;
        use OpKind::*;
        use Phase::*;
        let mut b = GraphBuilder::new(4, 8);
        b.emit(name(Attn, 0, Forward, Compute), 1.0, &[]); // 0
        b.emit(name(Attn, 0, Forward, ActAllReduce), 1.0, &[]); // 1
        b.emit(name(Fc, 0, Forward, Compute), 1.0, &[]); // 2
        b.emit(name(Fc, 0, Forward, ActAllReduce), 5.0, &[]); // 3
                                                              // Waits on two comm ops and nothing: only the later comm op is kept.
        let deps =
            [Dep::Op(name(Fc, 0, Forward, ActAllReduce)), Dep::Nothing, Dep::Op(name(Attn, 0, Forward, ActAllReduce))];
        b.emit(name(Attn, 1, Forward, Compute), 1.0, &deps);
        let (ops, _) = b.finish();
        assert_eq!(ops[4].deps.to_vec(), vec![3]);
        assert_eq!(ops[4].start_s, ops[3].end_s());
    }
}
