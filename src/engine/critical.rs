//! The critical path of a scheduled timeline, and every op's slack.
//!
//! The scheduler ([`super::schedule`]) starts an op when its stream is free and its
//! dependencies have ended (and, with MAD-Max's phase barrier, when the previous phase has
//! ended on both streams), so every op's start is the end of one *binding* predecessor: the
//! op before it on its stream, one of its dependencies, or the op that closed the previous
//! phase. Walking binding predecessors back from the op that ends last gives the critical
//! path: the ops whose every microsecond is a microsecond of the iteration, so its durations
//! (and any wait between them) add up to the timeline's end. An op off the path has slack: how
//! much later it could end, its stream order kept, before the iteration ends later (the
//! critical-path method's total float, Kelley and Walker 1959).

use super::ops::{Op, OpKind, Stream};
use super::schedule::{later, Scheduler};
use serde::Serialize;

/// What [`critical_path`] finds.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct CriticalPath {
    /// Indices into the timeline of the ops on the path, first to last.
    pub ops: Vec<u32>,
    /// Time on the path between ops (an op starting after its binding predecessor ended), s:
    /// 0 for the scheduler's timelines, whose ops start when something they wait for ends.
    pub wait_s: f64,
    /// When the last op ends, s.
    pub end_s: f64,
    /// For each op of the timeline, how much later it could end without moving `end_s`, s (0
    /// on the path).
    pub slack_s: Vec<f64>,
}

/// Time on a critical path by what runs, s; with its waits, the three add up to the end.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct PathTime {
    /// Computation ops (GEMMs, lookups, the optimizer step).
    pub computation_s: f64,
    /// Communication the computation waited for: exposed collectives and transfers.
    pub communication_s: f64,
    /// Idle ops of the computation stream: pipeline bubble, input wait, waiting for other GPUs.
    pub idle_s: f64,
}

impl CriticalPath {
    /// The path's time by what runs on it.
    pub fn time(&self, timeline: &[Op]) -> PathTime {
        let mut t = PathTime::default();
        for &i in &self.ops {
            let op = &timeline[i as usize];
            let part = match (op.name.kind, op.name.stream()) {
                (OpKind::Idle, _) => &mut t.idle_s,
                (_, Stream::Computation) => &mut t.computation_s,
                (_, Stream::Communication | Stream::DataParallel) => &mut t.communication_s,
            };
            *part += op.duration_s;
        }
        t
    }
}

/// The critical path of `timeline` (ops in emission order, their start times set by the
/// scheduler) and every op's slack; `phase_barrier`: whether a new phase waited for both
/// streams (reference mode, SPEC Q21). O(ops).
pub fn critical_path(timeline: &[Op], phase_barrier: bool) -> CriticalPath {
    let n = timeline.len();
    if n == 0 {
        return CriticalPath::default();
    }
    // Each op's predecessors besides its dependencies: the op before it on its stream, and,
    // the first time a stream runs in a new phase under the barrier, the op that ended the
    // previous phase last (a few ops: kept as (op, predecessor) pairs in emission order).
    const NONE: u32 = u32::MAX;
    let mut prev_on_stream = vec![NONE; n];
    let mut after_barrier: Vec<(u32, u32)> = Vec::new();
    let mut last = [NONE; 3];
    let mut pending = [NONE; 3];
    for (i, op) in timeline.iter().enumerate() {
        if phase_barrier && i > 0 && op.name.phase != timeline[i - 1].name.phase {
            let ends = |j: u32| if j == NONE { f64::NEG_INFINITY } else { timeline[j as usize].end_s() };
            let closer = last.into_iter().fold(NONE, |a, b| if a == NONE || ends(b) > ends(a) { b } else { a });
            pending = [closer; 3];
        }
        let lane = op.name.stream() as usize;
        prev_on_stream[i] = last[lane];
        if pending[lane] != NONE {
            after_barrier.push((i as u32, std::mem::replace(&mut pending[lane], NONE)));
        }
        last[lane] = i as u32;
    }
    let barrier_pred =
        |i: usize| after_barrier.binary_search_by_key(&(i as u32), |p| p.0).map_or(NONE, |k| after_barrier[k].1);

    // The path: from the op that ends last, back through the predecessor that ends last.
    let end_s = timeline.iter().map(Op::end_s).fold(f64::NEG_INFINITY, later);
    let mut at = (0..n).rev().find(|&i| timeline[i].end_s() == end_s).unwrap_or(n - 1);
    let mut ops = Vec::new();
    let mut wait_s = 0.0;
    loop {
        ops.push(at as u32);
        let start = timeline[at].start_s;
        let binding = timeline[at]
            .deps
            .ids()
            .chain([prev_on_stream[at], barrier_pred(at)])
            .filter(|&j| j != NONE)
            .max_by(|&a, &b| timeline[a as usize].end_s().total_cmp(&timeline[b as usize].end_s()).then(a.cmp(&b)));
        match binding {
            Some(p) => {
                wait_s += (start - timeline[p as usize].end_s()).max(0.0);
                at = p as usize;
            }
            None => {
                wait_s += start.max(0.0);
                break;
            }
        }
    }
    ops.reverse();

    // Slack: the latest each op may end is the earliest latest start of the ops that wait for
    // it. Every predecessor comes earlier in emission order, so one backward pass settles it;
    // the vector then turns into the slack in place.
    let mut latest = vec![end_s; n];
    let mut barriers = after_barrier.iter().rev().peekable();
    for j in (0..n).rev() {
        let latest_start = latest[j] - timeline[j].duration_s;
        let mut bound = |p: u32| {
            if p != NONE && latest_start < latest[p as usize] {
                latest[p as usize] = latest_start;
            }
        };
        for p in timeline[j].deps.ids() {
            bound(p);
        }
        bound(prev_on_stream[j]);
        if let Some(&(_, p)) = barriers.next_if(|b| b.0 as usize == j) {
            bound(p);
        }
    }
    // Differences of sums of many durations: a slack within rounding of the end is none.
    let rounding = end_s.abs() * 1e-12;
    for (l, op) in latest.iter_mut().zip(timeline) {
        let s = *l - op.end_s();
        *l = if s > rounding { s } else { 0.0 };
    }
    for &i in &ops {
        latest[i as usize] = 0.0;
    }
    CriticalPath { ops, wait_s, end_s, slack_s: latest }
}

/// When `timeline` would end if each op took `duration_s(index, op)` instead, s: the same ops
/// in the same order through `s`, a fresh scheduler of the kind that placed them (each op
/// starts when its stream is free and its dependencies have ended, and with MAD-Max's barrier
/// when its phase has begun). Answers "what if this op, or every op of its kind, were faster".
/// O(ops).
pub fn end_with(timeline: &[Op], mut s: Scheduler, duration_s: impl Fn(usize, &Op) -> f64) -> f64 {
    let mut ends = Vec::with_capacity(timeline.len());
    for (i, op) in timeline.iter().enumerate() {
        let ready_s = op.deps.ids().filter_map(|d| ends.get(d as usize).copied()).fold(0.0, later);
        let d = duration_s(i, op);
        ends.push(s.place(op.name, d, ready_s) + d);
    }
    s.finish().end_s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::ops::tests::name as n;
    use crate::engine::ops::{Block, OpKind, Phase};
    use crate::engine::reference::graph::{scheduler, Dep, GraphBuilder};

    /// Two attention layers' forward passes, each waiting for its weights' all-gather, the
    /// second's output all-reduced, then (after MAD-Max's barrier) one backward op. comm: ag0
    /// 0..2, ag1 2..4, ar1 8..12; comp: c0 2..5, c1 5..8, backward 12..13.
    fn two_layers() -> (Vec<Op>, crate::engine::schedule::Schedule) {
        use Block::*;
        use OpKind::*;
        use Phase::*;
        let mut b = GraphBuilder::new(2, 8);
        let ag0 = n(Attn, 0, Forward, WeightAllGather);
        let ag1 = n(Attn, 1, Forward, WeightAllGather);
        b.emit(ag0, 2.0, &[]);
        b.emit(n(Attn, 0, Forward, Compute), 3.0, &[Dep::Op(ag0)]);
        b.emit(ag1, 2.0, &[]);
        b.emit(n(Attn, 1, Forward, Compute), 3.0, &[Dep::Op(ag1)]);
        b.emit(n(Attn, 1, Forward, ActAllReduce), 4.0, &[Dep::Op(n(Attn, 1, Forward, Compute))]);
        b.emit(n(Attn, 1, Backward, Compute), 1.0, &[]);
        b.finish()
    }

    #[test]
    fn the_path_runs_through_what_binds_and_the_rest_has_slack() {
        let (ops, built) = two_layers();
        let cp = critical_path(&ops, true);
        // ag0 -> c0 -> c1 -> ar1 -> (barrier) -> backward: 2 + 3 + 3 + 4 + 1 = 13.
        assert_eq!(cp.ops, vec![0, 1, 3, 4, 5]);
        assert_eq!(cp.end_s, built.end_s);
        let on_path: f64 = cp.ops.iter().map(|&i| ops[i as usize].duration_s).sum();
        assert_eq!(on_path + cp.wait_s, 13.0);
        // ag1 (2..4) could end at 5, when c1 may start at the latest: 1 s of slack.
        assert_eq!(cp.slack_s, vec![0.0, 0.0, 1.0, 0.0, 0.0, 0.0]);
        assert_eq!(cp.time(&ops), PathTime { computation_s: 7.0, communication_s: 6.0, idle_s: 0.0 });
    }

    #[test]
    fn replaying_with_other_durations_moves_the_end_as_the_path_says() {
        let (ops, built) = two_layers();
        let same = |_: usize, o: &Op| o.duration_s;
        assert_eq!(end_with(&ops, scheduler(), same), built.end_s);
        // Half of ag1 (1 s of slack) changes nothing; half of c1 (on the path) saves 1.5 s.
        let half = |k: usize| move |i: usize, o: &Op| if i == k { o.duration_s / 2.0 } else { o.duration_s };
        assert_eq!(end_with(&ops, scheduler(), half(2)), 13.0);
        assert_eq!(end_with(&ops, scheduler(), half(3)), 11.5);
        // Slower by more than its slack, ag1 moves the end by the rest: 3 s more is 2 s later.
        assert_eq!(end_with(&ops, scheduler(), |i, o| if i == 2 { o.duration_s + 3.0 } else { o.duration_s }), 15.0);
    }

    #[test]
    fn without_the_barrier_a_stream_idles_and_its_ops_keep_their_slack() {
        use Block::*;
        use OpKind::*;
        use Phase::*;
        // comp: c0 0..5, back 5..6; comm: ar 5..7 after c0. The iteration ends with ar, and
        // the backward op may end as late as 7.
        let mut b = GraphBuilder::new(1, 1);
        let c0 = n(Attn, 0, Forward, Compute);
        b.emit(c0, 5.0, &[]);
        b.emit(n(Attn, 0, Forward, ActAllReduce), 2.0, &[Dep::Op(c0)]);
        let (mut ops, _) = b.finish();
        ops.push(Op { name: n(Attn, 0, Backward, Compute), duration_s: 1.0, deps: Default::default(), start_s: 5.0 });
        let cp = critical_path(&ops, false);
        assert_eq!(cp.ops, vec![0, 1]);
        assert_eq!(cp.slack_s, vec![0.0, 0.0, 1.0]);
        assert_eq!(cp.end_s, 7.0);
        assert!(critical_path(&[], true).ops.is_empty());
    }
}
