//! The staged search, for a space too big to try every setting on every plan
//! ([`Space::staged`]): the settings its first pass runs each plan with ([`first_pass`]), the
//! settings pass over the most promising plans ([`settings_pass`]), and what a search says it
//! tried ([`SettingsSearched`]).

use super::settings::{overlapped, recompute_levels, sequence_parallel};
use super::*;

/// The settings a staged search's first pass ranks a plan of `shape` with ([`Space::staged`]):
/// `base` with the overlap options on ([`overlapped`]), sequence parallelism with tensor
/// parallelism, and the optimizer states sharded over plain data-parallel replicas (ZeRO-1)
/// where `base` keeps them whole. They hide communication or save memory at about no cost in
/// time (ZeRO-1 reduce-scatters the gradients and gathers the updated weights: an all-reduce's
/// bytes, and a step on a shard), as [`knob_settings`] tries first too; ranked with `base`'s
/// own, a plan of many replicas would look several times too big for its GPUs, and the
/// settings pass, which takes the most promising plans of that ranking, would pass it by.
/// A pipeline whose micro-batch `base` leaves unset runs [`pipeline_micro_batch`]'s: one
/// sample at a time (the unset default) would rank it by GEMMs of a few hundred tokens (a
/// mixture of experts' split over its experts, fewer still) and cost a timeline op per sample.
pub fn first_pass(base: &Setup, shape: PlanShape) -> Setup {
    let zero_stage = if shape.replicas > 1 && base.zero_stage == 0 { 1 } else { base.zero_stage };
    let micro_batch = base.micro_batch.or_else(|| (shape.stages > 1).then(|| pipeline_micro_batch(shape)));
    overlapped(
        &Setup { zero_stage, micro_batch, sequence_parallel: sequence_parallel(base, shape), ..base.clone() },
        shape,
    )
}

/// Micro-batches per pipeline stage past which the bubble costs little: a pipeline of `p`
/// stages idles `(p - 1) / m` of the time of its `m` micro-batches' work (1F1B), under a
/// quarter from `m = 4 p`, negligible by GPipe's measure (Huang et al. 2019, "GPipe", section
/// 2.3: "the bubble overhead ... negligible when M >= 4 x K", K partitions).
pub const MICRO_BATCHES_PER_STAGE: u64 = 4;

/// The micro-batch a staged search's first pass runs a pipeline of `shape` with
/// ([`first_pass`]): the largest power of two that divides the local batch into at least
/// [`MICRO_BATCHES_PER_STAGE`] micro-batches per stage, or 1 where the local batch holds fewer.
/// Larger micro-batches run larger GEMMs; the settings pass tries the others.
fn pipeline_micro_batch(shape: PlanShape) -> u64 {
    let enough = |m: u64| shape.local.is_multiple_of(m) && shape.local / m >= MICRO_BATCHES_PER_STAGE * shape.stages;
    powers(shape.local, enough).last().copied().unwrap_or(1)
}

/// The least share of the fastest fitting plan's throughput a plan that does not fit with the
/// first pass's settings must reach for the settings pass to try it ([`settings_pass`]).
pub const MISFIT_SHARE: f64 = 0.5;

/// The lightest recomputation of [`knob_settings`] with which the plan of `o` fits in HBM at
/// its lightest other settings (the smallest micro-batch and the highest ZeRO stage, with any
/// of its choices of the rest): memory only, without a timeline. `None` where none does (no
/// setting fits it, so the settings pass need not try it); no recomputation for a plan that
/// has no such settings (not a transformer's).
fn lightest_recompute_that_fits(base: &Scenario, o: &Outcome, dims: Option<&Dims>) -> Option<Recompute> {
    let Some(shape) = PlanShape::of_plan(&o.plan, dims) else { return Some(Recompute::None) };
    let all = knob_settings(&base.task.setup, shape);
    let (Some(micro), Some(zero)) =
        (all.iter().filter_map(|s| s.micro_batch).min(), all.iter().map(|s| s.zero_stage).max())
    else {
        return Some(Recompute::None);
    };
    all.into_iter()
        .filter(|s| s.micro_batch == Some(micro) && s.zero_stage == zero)
        .find(|setup| {
            trains_within_hbm(&with(base, &Candidate { plan: o.plan.clone(), setup: setup.clone() })) != Some(false)
        })
        .map(|s| s.recompute)
}

/// The share of its throughput a plan keeps under full recomputation, by which the settings
/// pass ranks plans that fit only so ([`settings_pass`]): the forward pass runs twice, four
/// passes' work for three (Korthikanti et al. 2022, "Reducing Activation Recomputation in Large
/// Transformer Models": full recomputation costs 30-40% more time).
pub const FULL_RECOMPUTE_SPEED: f64 = 0.75;

/// The most the interleaved schedule can speed up a pipeline plan of `shape` run with
/// `micro_batch` samples per micro-batch (1 without a pipeline or chunks its layers allow): it
/// idles a bubble of `b = (p - 1) / m` of its work (1F1B, `p` stages, `m` micro-batches), and
/// `v` chunks per GPU, the most [`PlanShape::chunk_choices`] allows, leave a v-th of it
/// (Narayanan et al. 2021, section 2.2.2): `(1 + b) / (1 + b / v)`. An upper bound (the chunks'
/// extra point-to-point transfers cost nothing in it, and an uneven split's largest chunk is
/// taken as a v-th), by which the settings pass ranks the pipelines that do not fit
/// ([`settings_pass`]): a deep pipeline of few micro-batches, slow in the first pass, can be
/// the fastest plan once interleaved.
fn interleaving_promise(shape: PlanShape, micro_batch: u64) -> f64 {
    // No pipeline, no chunks but one.
    let chunks = shape.chunk_choices().into_iter().max().unwrap_or(1);
    if chunks < 2 {
        return 1.0;
    }
    let micro_batches = (shape.local / micro_batch.max(1)).max(1) as f64;
    let bubble = (shape.stages - 1) as f64 / micro_batches;
    (1.0 + bubble) / (1.0 + bubble / chunks as f64)
}

/// Most parallel plans the settings pass of a staged search tries every setting on
/// ([`settings_pass`]).
pub const SETTINGS_PASS_PLANS: usize = 64;

/// Pipelines the settings pass tries past [`SETTINGS_PASS_PLANS`], after those: the most
/// promising of those that do not fit as they would run interleaved ([`interleaving_promise`]).
pub const INTERLEAVED_PLANS: usize = 4;

/// The settings pass of a staged search ([`Space::staged`]): what the first pass ranked
/// (`ranked`, best first, each plan with [`first_pass`] settings), its most promising
/// parallel plans each with every other setting [`knob_settings`] tries, at most
/// [`SETTINGS_PASS_PLANS`] of them and [`INTERLEAVED_PLANS`] more, and as many as keep the
/// whole search within [`STAGE_OPS`] (of which the first pass spent `spent_ops`, as
/// [`planned_fitted`] counted them; at least half of it for the settings, and never past
/// [`MAX_SEARCH_OPS`], to which it may go where no plan fits with the scenario's settings) and
/// [`MAX_PLANS`] (a plan whose settings would pass them is skipped, and the next tried: a
/// pipeline of many micro-batches costs tens of times what a plan without one does). Plans are
/// taken in turn from those that fit, fastest first, those that do not, fastest first (where
/// only full recomputation fits them, at [`FULL_RECOMPUTE_SPEED`] of their throughput), and
/// those that do not, lightest first (memory over capacity): recomputation or smaller
/// micro-batches can make a plan fit, and more micro-batches can shrink a pipeline's bubble,
/// so a plan that does not fit with the first pass's settings may be the best with others; and
/// where no plan fits with them (a model too big for the GPUs but with every saving), the
/// lightest are the ones the settings can bring within the memory. Then the pipelines that
/// do not fit, fastest first as they would run interleaved ([`interleaving_promise`]; with
/// full recomputation, at its speed): a deep pipeline of few micro-batches, slow with the
/// first pass's plain schedule, can be the fastest plan with chunks. Of those that do not fit,
/// only plans that fit with their lightest settings ([`lightest_recompute_that_fits`]) and
/// reach [`MISFIT_SHARE`] of the fastest fit's throughput (pipelines: interleaved) are tried;
/// of each plan's settings, only those that fit (memory is counted without a timeline; the
/// budget goes to timelines). Returns the candidates and how many parallel plans they try;
/// nothing unless the space is staged.
pub fn settings_pass(base: &Scenario, ranked: &[Outcome], space: &Space, spent_ops: u64) -> (Vec<Candidate>, usize) {
    if !(space.staged && searches_settings(base)) {
        return (Vec::new(), 0);
    }
    let dims = Dims::of(&base.model);
    let levels = recompute_levels(&base.task.setup, dims.as_ref().is_some_and(Dims::is_moe));
    let (fit, misfit): (Vec<&Outcome>, Vec<&Outcome>) = ranked.iter().partition(|o| o.fits());
    // Those that cannot fit with any setting, or run at less than a share of the fastest fit's
    // throughput even interleaved, are passed by (no setting makes up that much: recomputation
    // only slows); the others go fastest first, as they would run with the lightest
    // recomputation that fits.
    let fastest_fit = fit.first().map_or(0.0, |o| o.throughput_samples_per_s);
    let mut promised: Vec<(f64, f64, &Outcome)> = misfit
        .into_iter()
        .filter_map(|o| {
            let interleaved = PlanShape::of_plan(&o.plan, dims.as_ref())
                .map_or(1.0, |shape| interleaving_promise(shape, o.setup.micro_batch.unwrap_or(1)));
            if o.throughput_samples_per_s * interleaved < MISFIT_SHARE * fastest_fit {
                return None;
            }
            let recompute = lightest_recompute_that_fits(base, o, dims.as_ref())?;
            let speed = if recompute == Recompute::Full { FULL_RECOMPUTE_SPEED } else { 1.0 };
            Some((o.throughput_samples_per_s * speed, interleaved, o))
        })
        .collect();
    crate::engine::order::sort_by(&mut promised, |a, b| b.0.total_cmp(&a.0));
    let misfit: Vec<&Outcome> =
        promised.iter().filter(|p| p.2.throughput_samples_per_s >= MISFIT_SHARE * fastest_fit).map(|p| p.2).collect();
    // The pipelines among them, as fast as they would run interleaved.
    promised.retain(|p| p.1 > 1.0);
    crate::engine::order::sort_by(&mut promised, |a, b| (b.0 * b.1).total_cmp(&(a.0 * a.1)));
    let interleavable: Vec<&Outcome> = promised.iter().map(|p| p.2).collect();
    // The whole search about STAGE_OPS, with at least half of that for the settings, within
    // what one search may take; all that one search may take where no plan fits yet (only the
    // settings can make one fit).
    let left = MAX_SEARCH_OPS.saturating_sub(spent_ops);
    let mut budget =
        if fit.is_empty() { left } else { STAGE_OPS.saturating_sub(spent_ops).max(STAGE_OPS / 2).min(left) };
    let mut lightest = misfit.clone();
    crate::engine::order::sort_by(&mut lightest, |a, b| {
        (a.memory_bytes / a.capacity_bytes).total_cmp(&(b.memory_bytes / b.capacity_bytes))
    });
    let mut order: Vec<&Outcome> = Vec::with_capacity(SETTINGS_PASS_PLANS + INTERLEAVED_PLANS);
    for i in 0..fit.len().max(misfit.len()) {
        for o in [fit.get(i), misfit.get(i), lightest.get(i)].into_iter().flatten() {
            if order.len() < SETTINGS_PASS_PLANS && !order.iter().any(|p| p.plan == o.plan) {
                order.push(o);
            }
        }
        if order.len() == SETTINGS_PASS_PLANS {
            break;
        }
    }
    for o in interleavable {
        if order.len() < SETTINGS_PASS_PLANS + INTERLEAVED_PLANS && !order.iter().any(|p| p.plan == o.plan) {
            order.push(o);
        }
    }
    let mut out = Vec::new();
    let mut plans = 0;
    for o in order {
        let Some(shape) = PlanShape::of_plan(&o.plan, dims.as_ref()) else { continue };
        let list: Vec<Candidate> = knob_settings(&base.task.setup, shape)
            .into_iter()
            .filter(|setup| *setup != o.setup)
            .map(|setup| Candidate { plan: o.plan.clone(), setup })
            .filter(|c| {
                let s = with(base, c);
                extended::rules::check(&s).is_empty()
                    && trains_within_hbm(&s) != Some(false)
                    && !lighter_recompute_fits(&s, &levels)
            })
            .collect();
        if list.is_empty() {
            continue;
        }
        let ops = cost(base, &list);
        // A plan whose settings cost more than is left is passed by; a later one may cost less
        // (no pipeline, or fewer micro-batches).
        if ops > budget || ranked.len() + out.len() + list.len() > MAX_PLANS {
            continue;
        }
        budget -= ops;
        out.extend(list);
        plans += 1;
    }
    (out, plans)
}

/// Which plans of a search were tried with every training setting ([`knob_settings`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SettingsSearched {
    /// None: the search does not try settings (reference mode, serving, recommendation models).
    NotApplicable,
    /// Every plan.
    Every,
    /// A staged search ([`settings_pass`]): this many of the most promising plans; every other
    /// plan ran with the scenario's own settings.
    Best(usize),
}

/// What a search of `space` for `base` tried the settings on, with `settings_plans` the
/// plans of its settings pass ([`settings_pass`]).
pub fn settings_searched(base: &Scenario, space: &Space, settings_plans: usize) -> SettingsSearched {
    match (searches_settings(base), space.knobs) {
        (false, _) => SettingsSearched::NotApplicable,
        (true, true) => SettingsSearched::Every,
        (true, false) => SettingsSearched::Best(settings_plans),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interleaving_promises_at_most_the_bubble_its_chunks_remove() {
        let shape = |stages, layers, local| PlanShape {
            local,
            stages,
            tp: 1,
            cp: 1,
            replicas: 1,
            sharded: 1,
            layers,
            moe: false,
        };
        // 120 layers on 16 stages (8 or 7 each): at most 4 chunks give a smaller largest chunk
        // (2 layers); 64 micro-batches idle 15/64 of the work, 4 chunks a quarter of that.
        let b = 15.0 / 64.0;
        assert_eq!(interleaving_promise(shape(16, 120, 128), 2), (1.0 + b) / (1.0 + b / 4.0));
        // Fewer micro-batches, a larger bubble, more to gain.
        assert!(interleaving_promise(shape(16, 120, 32), 2) > interleaving_promise(shape(16, 120, 128), 2));
        // No pipeline, or no chunks its layers allow: nothing.
        assert_eq!(interleaving_promise(shape(1, 120, 128), 2), 1.0);
        assert_eq!(interleaving_promise(shape(64, 96, 128), 2), 1.0);
    }
}
