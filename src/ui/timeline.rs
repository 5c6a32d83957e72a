//! The two-stream timeline as the page draws it and points into it, whatever its length: ops a
//! pixel wide or more are drawn as themselves, runs of narrower ops merge into one bar per pixel
//! (coloured by the kind that takes most of its time), so a timeline of two million ops draws a
//! few thousand bars; pointing finds the op under the pointer by binary search. Plain Rust,
//! tested natively; `charts.rs` draws the bars.

use crate::engine::critical::CriticalPath;
use crate::engine::ops::{Category, Op, Stream};
use crate::engine::report::Report;

/// A bar of the drawn timeline: one op, or a run of ops narrower than a pixel.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bar {
    pub stream: Stream,
    pub start_s: f64,
    pub end_s: f64,
    pub category: Category,
}

/// Each stream's ops in start order (a stream runs one op at a time), as indices into the
/// report's timeline; built once per evaluation.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Lanes {
    computation: Vec<u32>,
    communication: Vec<u32>,
    data_parallel: Vec<u32>,
}

impl Lanes {
    pub fn new(r: &Report) -> Lanes {
        let mut lanes = Lanes::default();
        for (i, op) in r.timeline.iter().enumerate() {
            let i = i.min(u32::MAX as usize) as u32;
            match op.name.stream() {
                Stream::Computation => lanes.computation.push(i),
                Stream::Communication => lanes.communication.push(i),
                Stream::DataParallel => lanes.data_parallel.push(i),
            }
        }
        let start = |i: &u32| r.timeline[*i as usize].start_s;
        // Streams run in order already (one op at a time); sorting only guards the binary
        // searches, and is skipped when a pass finds them in order.
        for lane in [&mut lanes.computation, &mut lanes.communication, &mut lanes.data_parallel] {
            if !lane.windows(2).all(|w| start(&w[0]) <= start(&w[1])) {
                crate::engine::order::sort_by(lane, |a, b| start(a).total_cmp(&start(b)));
            }
        }
        lanes
    }

    /// Whether `s` ran any op.
    pub fn has(&self, s: Stream) -> bool {
        !self.lane(s).is_empty()
    }

    fn lane(&self, s: Stream) -> &[u32] {
        match s {
            Stream::Computation => &self.computation,
            Stream::Communication => &self.communication,
            Stream::DataParallel => &self.data_parallel,
        }
    }

    /// The bars to draw when the iteration spans `width_px` pixels: at most about three per
    /// pixel per stream.
    pub fn bars(&self, r: &Report, width_px: f64) -> Vec<Bar> {
        let px_s = r.iteration_s.max(0.0) / width_px.max(1.0);
        let mut out = Vec::new();
        for stream in Stream::ALL {
            // A run of narrow ops not yet drawn: its span and the time of each kind in it.
            let mut run: Option<(f64, f64)> = None;
            let mut kinds = [0.0f64; Category::ALL.len()];
            let flush = |run: &mut Option<(f64, f64)>, kinds: &mut [f64; Category::ALL.len()], out: &mut Vec<Bar>| {
                if let Some((start_s, end_s)) = run.take() {
                    let k = (0..kinds.len()).max_by(|a, b| kinds[*a].total_cmp(&kinds[*b])).unwrap_or(0);
                    out.push(Bar { stream, start_s, end_s, category: Category::ALL[k] });
                    *kinds = [0.0; Category::ALL.len()];
                }
            };
            for &i in self.lane(stream) {
                let op = &r.timeline[i as usize];
                if op.duration_s <= 0.0 {
                    continue;
                }
                if op.duration_s >= px_s {
                    flush(&mut run, &mut kinds, &mut out);
                    out.push(Bar { stream, start_s: op.start_s, end_s: op.end_s(), category: op.name.category() });
                    continue;
                }
                // A narrow op joins the run unless a gap of a pixel or more lies between them.
                if run.is_some_and(|(_, end)| op.start_s - end >= px_s) {
                    flush(&mut run, &mut kinds, &mut out);
                }
                let (start, _) = run.unwrap_or((op.start_s, op.start_s));
                run = Some((start, op.end_s()));
                kinds[category_index(op.name.category())] += op.duration_s;
                if op.end_s() - start >= px_s {
                    flush(&mut run, &mut kinds, &mut out);
                }
            }
            flush(&mut run, &mut kinds, &mut out);
        }
        out
    }

    /// The op of `stream` at time `t_s`, allowing `slack_s` either side (thin ops): of those
    /// within reach, the one whose middle is nearest.
    pub fn hit(&self, r: &Report, stream: Stream, t_s: f64, slack_s: f64) -> Option<usize> {
        let lane = self.lane(stream);
        let op = |i: &u32| -> &Op { &r.timeline[*i as usize] };
        // Ends are in order too (one op at a time): the first op that ends within reach.
        let first = lane.partition_point(|i| op(i).end_s() + slack_s < t_s);
        lane[first..]
            .iter()
            .take_while(|i| op(i).start_s - slack_s <= t_s)
            .min_by(|a, b| {
                let d = |o: &Op| (o.start_s + o.duration_s / 2.0 - t_s).abs();
                d(op(a)).total_cmp(&d(op(b)))
            })
            .map(|i| *i as usize)
    }
}

/// The critical path as bars along each lane, when the iteration spans `width_px` pixels: the
/// path's ops on one stream merge into one bar while less than a pixel lies between them, so a
/// path of a million ops draws at most a few bars per pixel.
pub fn critical_bars(r: &Report, cp: &CriticalPath, width_px: f64) -> Vec<Bar> {
    let px_s = r.iteration_s.max(0.0) / width_px.max(1.0);
    let mut runs: [Option<(f64, f64)>; 3] = [None; 3];
    let mut out = Vec::new();
    for &i in &cp.ops {
        let Some(op) = r.timeline.get(i as usize) else { continue };
        if op.duration_s <= 0.0 {
            continue;
        }
        let stream = op.name.stream();
        let run = &mut runs[stream as usize];
        match run {
            Some((_, end)) if op.start_s - *end < px_s => *end = op.end_s(),
            _ => {
                if let Some((start_s, end_s)) = run.replace((op.start_s, op.end_s())) {
                    out.push(Bar { stream, start_s, end_s, category: Category::Idle });
                }
            }
        }
    }
    for (k, run) in runs.into_iter().enumerate() {
        if let Some((start_s, end_s)) = run {
            let stream = Stream::ALL[k];
            out.push(Bar { stream, start_s, end_s, category: Category::Idle });
        }
    }
    out
}

/// The longest op of each kind (block, op kind, pass), longest first (the earlier op on a tie):
/// a first answer to "what takes the time", in one pass over the timeline.
pub fn longest_of_each_kind(r: &Report) -> Vec<usize> {
    // A slot per kind: the kinds are few, the ops may be millions.
    const SLOTS: usize = 64 * 64 * 2;
    let mut best = vec![usize::MAX; SLOTS];
    for (i, op) in r.timeline.iter().enumerate() {
        let n = &op.name;
        let slot = ((n.block as usize % 64) * 64 + n.kind as usize % 64) * 2 + n.phase as usize % 2;
        let j = &mut best[slot];
        if *j == usize::MAX || r.timeline[*j].duration_s < op.duration_s {
            *j = i;
        }
    }
    let mut out: Vec<usize> = best.into_iter().filter(|j| *j != usize::MAX).collect();
    crate::engine::order::sort_by(&mut out, |a, b| {
        r.timeline[*b].duration_s.total_cmp(&r.timeline[*a].duration_s).then(a.cmp(b))
    });
    out
}

fn category_index(c: Category) -> usize {
    Category::ALL.iter().position(|x| *x == c).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{evaluate, validate};
    use crate::ui::state::State;

    #[test]
    fn a_timeline_of_millions_of_ops_draws_a_few_bars_per_pixel() {
        // The first scenario with 1,700 micro-batches of one sequence per GPU.
        let mut doc = State::initial().doc;
        for key in ["local_transformer_bs", "local_emb_bs"] {
            doc.set(crate::doc::Config::Task, key, serde_json::json!(1700));
        }
        doc.set(crate::doc::Config::Task, "micro_batch", serde_json::json!(1));
        let s = validate(&doc.to_raw()).expect("valid");
        let r = evaluate(&s);
        assert!(r.timeline.len() >= 500_000, "{}", r.timeline.len());
        let lanes = Lanes::new(&r);
        let bars = lanes.bars(&r, 1000.0);
        assert!(bars.len() <= 2 * 3 * 1000, "{} bars", bars.len());
        // Every op with time is covered by a bar of its stream.
        for (k, op) in r.timeline.iter().enumerate().step_by(997) {
            if op.duration_s > 0.0 {
                let mid = op.start_s + op.duration_s / 2.0;
                assert!(
                    bars.iter().any(|b| b.stream == op.name.stream() && b.start_s <= mid && mid <= b.end_s),
                    "op {k} not drawn"
                );
            }
        }
    }

    #[test]
    fn the_critical_path_draws_as_few_bars_covering_its_ops() {
        let s = State::initial();
        let g = s.good.as_ref().expect("good");
        let (r, cp) = (&g.report, g.critical());
        assert!(cp.ops.len() > 10, "{}", cp.ops.len());
        // Wide enough for every op: a bar per stretch of one stream.
        let bars = critical_bars(r, cp, 1e12);
        let switches = cp
            .ops
            .windows(2)
            .filter(|w| r.timeline[w[0] as usize].name.stream() != r.timeline[w[1] as usize].name.stream());
        assert!(bars.len() <= switches.count() + 2, "{} bars", bars.len());
        // Every op of the path lies in a bar of its stream; the bars of a stream do not overlap.
        for &i in &cp.ops {
            let op = &r.timeline[i as usize];
            let mid = op.start_s + op.duration_s / 2.0;
            assert!(
                op.duration_s <= 0.0
                    || bars.iter().any(|b| b.stream == op.name.stream() && b.start_s <= mid && mid <= b.end_s),
                "{} not drawn",
                op.name
            );
        }
        // At 100 pixels, a bar or two per pixel per stream at most.
        assert!(critical_bars(r, cp, 100.0).len() <= 2 * 2 * 100);
    }

    #[test]
    fn the_longest_op_of_each_kind_comes_first() {
        let s = State::initial();
        let r = &s.good.as_ref().expect("good").report;
        let longest = longest_of_each_kind(r);
        assert!(longest.len() >= 4, "{longest:?}");
        for w in longest.windows(2) {
            assert!(r.timeline[w[0]].duration_s >= r.timeline[w[1]].duration_s);
        }
        // Each is the longest of its kind.
        for &i in &longest {
            let n = &r.timeline[i].name;
            let kind = |o: &Op| (o.name.block, o.name.kind, o.name.phase) == (n.block, n.kind, n.phase);
            assert!(r.timeline.iter().filter(|o| kind(o)).all(|o| o.duration_s <= r.timeline[i].duration_s));
        }
    }

    #[test]
    fn wide_ops_draw_as_themselves_and_pointing_finds_them() {
        let s = State::initial();
        let r = &s.good.as_ref().expect("good").report;
        let lanes = Lanes::new(r);
        let wide = lanes.bars(r, 1e12);
        let drawn = r.timeline.iter().filter(|o| o.duration_s > 0.0).count();
        assert_eq!(wide.len(), drawn);
        for (i, op) in r.timeline.iter().enumerate().filter(|(_, o)| o.duration_s > 0.0) {
            let mid = op.start_s + op.duration_s / 2.0;
            assert_eq!(lanes.hit(r, op.name.stream(), mid, 0.0), Some(i), "{}", op.name);
        }
        assert_eq!(lanes.hit(r, Stream::Computation, -1.0, 0.0), None);
    }
}
